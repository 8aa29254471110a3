// SPDX-License-Identifier: MIT
/*
 * Verbs blue has no object for: multicast, ECE. Each answers "not supported" the way
 * rdma-core's callers test for: NULL with errno, or the errno returned, with one line
 * saying what was asked.
 */
#include "compat/compat.h"

#define BV_NOTSUP(what) bv_log("%s: not supported by blue (no multicast, no ECE)", what)

BV_EXPORT int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)qp; (void)gid; (void)lid;
	BV_NOTSUP("ibv_attach_mcast");
	return bv_ret(EOPNOTSUPP);
}

BV_EXPORT int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)qp; (void)gid; (void)lid;
	return bv_ret(EOPNOTSUPP);
}

BV_EXPORT int ibv_resolve_eth_l2_from_gid(struct ibv_context *context,
					  struct ibv_ah_attr *attr, uint8_t eth_mac[6],
					  uint16_t *vid)
{
	(void)context; (void)attr; (void)eth_mac; (void)vid;
	return bv_ret(EOPNOTSUPP);
}

BV_EXPORT int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp; (void)ece;
	return bv_ret(EOPNOTSUPP);
}

BV_EXPORT int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp; (void)ece;
	return bv_ret(EOPNOTSUPP);
}
