// SPDX-License-Identifier: MIT
/*
 * librdmacm.so.1 stand-in, part 2 (see stubs_rdmacm.c): the calls that hang verbs
 * objects on an rdma_cm_id (QPs, SRQs, endpoints), the device list, ports, multicast
 * and ECE. No id can be made, so each fails cleanly, and a release does nothing.
 */
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "compat/stub_log.h"

#define NS() STUB_NOTSUP("librdmacm", "no RDMA CM yet; use ibv_get_device_list")

STUB_EXPORT int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd,
			       struct ibv_qp_init_attr *attr)
{ (void)id; (void)pd; (void)attr; NS(); return -1; }
STUB_EXPORT int rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *attr)
{ (void)id; (void)attr; NS(); return -1; }
STUB_EXPORT void rdma_destroy_qp(struct rdma_cm_id *id) { (void)id; }

STUB_EXPORT int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd,
				struct ibv_srq_init_attr *attr)
{ (void)id; (void)pd; (void)attr; NS(); return -1; }
STUB_EXPORT int rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{ (void)id; (void)attr; NS(); return -1; }
STUB_EXPORT void rdma_destroy_srq(struct rdma_cm_id *id) { (void)id; }

STUB_EXPORT int rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res,
			       struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{ (void)id; (void)res; (void)pd; (void)attr; NS(); return -1; }
STUB_EXPORT void rdma_destroy_ep(struct rdma_cm_id *id) { (void)id; }

/* NULL and no devices: librdmacm's list is of contexts it opened for its ids */
STUB_EXPORT struct ibv_context **rdma_get_devices(int *num_devices)
{
	if (num_devices)
		*num_devices = 0;
	NS();
	return NULL;
}
STUB_EXPORT void rdma_free_devices(struct ibv_context **list) { (void)list; }

/* a port of an id that cannot exist: 0, as librdmacm answers for an unbound id */
STUB_EXPORT __be16 rdma_get_src_port(struct rdma_cm_id *id) { (void)id; NS(); return 0; }
STUB_EXPORT __be16 rdma_get_dst_port(struct rdma_cm_id *id) { (void)id; NS(); return 0; }

STUB_EXPORT int rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *ctx)
{ (void)id; (void)addr; (void)ctx; NS(); return -1; }
STUB_EXPORT int rdma_join_multicast_ex(struct rdma_cm_id *id,
				       struct rdma_cm_join_mc_attr_ex *attr, void *ctx)
{ (void)id; (void)attr; (void)ctx; NS(); return -1; }
STUB_EXPORT int rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{ (void)id; (void)addr; NS(); return -1; }

STUB_EXPORT int rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{ (void)id; (void)ece; NS(); return -1; }
STUB_EXPORT int rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{ (void)id; (void)ece; NS(); return -1; }
STUB_EXPORT int rdma_reject_ece(struct rdma_cm_id *id, const void *data, uint8_t len)
{ (void)id; (void)data; (void)len; NS(); return -1; }
