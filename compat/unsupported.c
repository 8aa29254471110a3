// SPDX-License-Identifier: MIT
/*
 * Verbs blue has no object for: ECE, and the L2 address of a GID. Each answers "not
 * supported" the way rdma-core's callers test for: the errno returned.
 */
#include "compat/compat.h"

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
