// SPDX-License-Identifier: MIT
/*
 * libefa.so.1 stand-in (EFA_1.0..1.2, <infiniband/efadv.h>). blue's devices are not EFA
 * devices: efadv_query_device() answers EOPNOTSUPP (libfabric's efa provider and
 * perftest then leave them alone), an int call EOPNOTSUPP, a pointer NULL with errno.
 * The stubs read no argument.
 */
#include <infiniband/efadv.h>

#include "compat/stub_log.h"

#pragma GCC diagnostic ignored "-Wunused-parameter"

#define NS() STUB_NOTSUP("libefa", "not an EFA device; use plain verbs")

STUB_EXPORT int efadv_query_device(struct ibv_context *ibvctx, struct efadv_device_attr *attr,
		uint32_t inlen)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int efadv_query_ah(struct ibv_ah *ibvah, struct efadv_ah_attr *attr, uint32_t inlen)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT struct ibv_qp *efadv_create_driver_qp(struct ibv_pd *ibvpd,
		struct ibv_qp_init_attr *attr, uint32_t driver_qp_type)
{ NS(); return NULL; }
STUB_EXPORT struct ibv_qp *efadv_create_qp_ex(struct ibv_context *ibvctx,
		struct ibv_qp_init_attr_ex *attr_ex, struct efadv_qp_init_attr *efa_attr,
		uint32_t inlen)
{ NS(); return NULL; }
STUB_EXPORT struct ibv_cq_ex *efadv_create_cq(struct ibv_context *ibvctx,
		struct ibv_cq_init_attr_ex *attr_ex, struct efadv_cq_init_attr *efa_attr,
		uint32_t inlen)
{ NS(); return NULL; }
STUB_EXPORT struct efadv_cq *efadv_cq_from_ibv_cq_ex(struct ibv_cq_ex *ibvcqx)
{ NS(); return NULL; }
