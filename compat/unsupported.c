// SPDX-License-Identifier: MIT
/*
 * Verbs blue has no object for: address handles (UD), multicast,
 * ECE. Each answers "not supported" the way rdma-core's callers test for: NULL with
 * errno, or the errno returned, with one line saying what was asked.
 */
#include "compat/compat.h"

#define BV_NOTSUP(what) bv_log("%s: not supported by blue (RC queue pairs only)", what)

BV_EXPORT struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	(void)pd; (void)attr;
	BV_NOTSUP("ibv_create_ah");
	return bv_null(EOPNOTSUPP);
}

BV_EXPORT int ibv_destroy_ah(struct ibv_ah *ah)
{
	(void)ah;
	return bv_ret(EOPNOTSUPP);
}

BV_EXPORT int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num,
				  struct ibv_wc *wc, struct ibv_grh *grh,
				  struct ibv_ah_attr *ah_attr)
{
	(void)context; (void)port_num; (void)wc; (void)grh; (void)ah_attr;
	BV_NOTSUP("ibv_init_ah_from_wc");
	return bv_ret(EOPNOTSUPP);
}

BV_EXPORT struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc,
					       struct ibv_grh *grh, uint8_t port_num)
{
	(void)pd; (void)wc; (void)grh; (void)port_num;
	BV_NOTSUP("ibv_create_ah_from_wc");
	return bv_null(EOPNOTSUPP);
}

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
