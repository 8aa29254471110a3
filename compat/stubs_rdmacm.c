// SPDX-License-Identifier: MIT
/*
 * librdmacm.so.1 stand-in, part 1: event channels, ids, address and route resolution,
 * connection setup and events (RDMACM_1.0..1.3, <rdma/rdma_cma.h>). The RDMA connection
 * manager is not provided yet (blue connects over TCP exchanges, as perftest does
 * without -R): librdmacm's calls return -1 or NULL with errno EOPNOTSUPP, and a release
 * of something that cannot have been made does nothing. rdma_event_str() answers.
 * Part 2 (QPs, SRQs, endpoints, devices, multicast, ECE) is stubs_rdmacm_qp.c, the
 * rsocket calls stubs_rdmacm_rsocket.c.
 */
#include <rdma/rdma_cma.h>

#include "compat/stub_log.h"

#define NS() STUB_NOTSUP("librdmacm", "no RDMA CM yet; perftest: run without -R")

STUB_EXPORT struct rdma_event_channel *rdma_create_event_channel(void) { NS(); return NULL; }
STUB_EXPORT void rdma_destroy_event_channel(struct rdma_event_channel *ch) { (void)ch; }

STUB_EXPORT int rdma_create_id(struct rdma_event_channel *ch, struct rdma_cm_id **id,
			       void *ctx, enum rdma_port_space ps)
{ (void)ch; (void)id; (void)ctx; (void)ps; NS(); return -1; }
STUB_EXPORT int rdma_destroy_id(struct rdma_cm_id *id) { (void)id; NS(); return -1; }
STUB_EXPORT int rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *ch)
{ (void)id; (void)ch; NS(); return -1; }

STUB_EXPORT int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{ (void)id; (void)addr; NS(); return -1; }
STUB_EXPORT int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src,
				  struct sockaddr *dst, int timeout_ms)
{ (void)id; (void)src; (void)dst; (void)timeout_ms; NS(); return -1; }
STUB_EXPORT int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{ (void)id; (void)timeout_ms; NS(); return -1; }
STUB_EXPORT int rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *attr, int *mask)
{ (void)id; (void)attr; (void)mask; NS(); return -1; }

STUB_EXPORT int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *param)
{ (void)id; (void)param; NS(); return -1; }
STUB_EXPORT int rdma_establish(struct rdma_cm_id *id) { (void)id; NS(); return -1; }
STUB_EXPORT int rdma_listen(struct rdma_cm_id *id, int backlog)
{ (void)id; (void)backlog; NS(); return -1; }
STUB_EXPORT int rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{ (void)listen; (void)id; NS(); return -1; }
STUB_EXPORT int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *param)
{ (void)id; (void)param; NS(); return -1; }
STUB_EXPORT int rdma_reject(struct rdma_cm_id *id, const void *data, uint8_t len)
{ (void)id; (void)data; (void)len; NS(); return -1; }
STUB_EXPORT int rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{ (void)id; (void)event; NS(); return -1; }
STUB_EXPORT int rdma_disconnect(struct rdma_cm_id *id) { (void)id; NS(); return -1; }

STUB_EXPORT int rdma_get_cm_event(struct rdma_event_channel *ch, struct rdma_cm_event **ev)
{ (void)ch; (void)ev; NS(); return -1; }
STUB_EXPORT int rdma_ack_cm_event(struct rdma_cm_event *ev) { (void)ev; NS(); return -1; }
STUB_EXPORT int rdma_set_option(struct rdma_cm_id *id, int level, int name, void *val,
				size_t len)
{ (void)id; (void)level; (void)name; (void)val; (void)len; NS(); return -1; }

STUB_EXPORT int rdma_getaddrinfo(const char *node, const char *svc,
				 const struct rdma_addrinfo *hints, struct rdma_addrinfo **res)
{ (void)node; (void)svc; (void)hints; if (res) *res = NULL; NS(); return -1; }
STUB_EXPORT void rdma_freeaddrinfo(struct rdma_addrinfo *res) { (void)res; }

/* The names of enum rdma_cm_event_type, as librdmacm prints them. */
STUB_EXPORT const char *rdma_event_str(enum rdma_cm_event_type event)
{
	static const char *const names[] = {
		[RDMA_CM_EVENT_ADDR_RESOLVED] = "RDMA_CM_EVENT_ADDR_RESOLVED",
		[RDMA_CM_EVENT_ADDR_ERROR] = "RDMA_CM_EVENT_ADDR_ERROR",
		[RDMA_CM_EVENT_ROUTE_RESOLVED] = "RDMA_CM_EVENT_ROUTE_RESOLVED",
		[RDMA_CM_EVENT_ROUTE_ERROR] = "RDMA_CM_EVENT_ROUTE_ERROR",
		[RDMA_CM_EVENT_CONNECT_REQUEST] = "RDMA_CM_EVENT_CONNECT_REQUEST",
		[RDMA_CM_EVENT_CONNECT_RESPONSE] = "RDMA_CM_EVENT_CONNECT_RESPONSE",
		[RDMA_CM_EVENT_CONNECT_ERROR] = "RDMA_CM_EVENT_CONNECT_ERROR",
		[RDMA_CM_EVENT_UNREACHABLE] = "RDMA_CM_EVENT_UNREACHABLE",
		[RDMA_CM_EVENT_REJECTED] = "RDMA_CM_EVENT_REJECTED",
		[RDMA_CM_EVENT_ESTABLISHED] = "RDMA_CM_EVENT_ESTABLISHED",
		[RDMA_CM_EVENT_DISCONNECTED] = "RDMA_CM_EVENT_DISCONNECTED",
		[RDMA_CM_EVENT_DEVICE_REMOVAL] = "RDMA_CM_EVENT_DEVICE_REMOVAL",
		[RDMA_CM_EVENT_MULTICAST_JOIN] = "RDMA_CM_EVENT_MULTICAST_JOIN",
		[RDMA_CM_EVENT_MULTICAST_ERROR] = "RDMA_CM_EVENT_MULTICAST_ERROR",
		[RDMA_CM_EVENT_ADDR_CHANGE] = "RDMA_CM_EVENT_ADDR_CHANGE",
		[RDMA_CM_EVENT_TIMEWAIT_EXIT] = "RDMA_CM_EVENT_TIMEWAIT_EXIT",
	};

	if ((unsigned)event < sizeof(names) / sizeof(names[0]) && names[event])
		return names[event];
	return "UNKNOWN EVENT";
}
