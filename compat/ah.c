// SPDX-License-Identifier: MIT
/*
 * Address handles for UD: ibv_create_ah / ibv_destroy_ah over blue_create_ah, and the
 * way back to a sender, ibv_init_ah_from_wc / ibv_create_ah_from_wc, from the GRH the
 * receive buffer starts with (blue_ah_attr_from_grh reads it as rxe lays it out).
 */
#include <string.h>

#include "compat/compat.h"

/* ibv_ah_attr -> blue's. RoCE addresses by GID: an attribute without a GRH is refused. */
static int ah_attr_to_blue(const struct ibv_ah_attr *a, struct blue_ah_attr *b)
{
	if (!a->is_global) {
		bv_log("ibv_create_ah: ah_attr.is_global is 0, but RoCE addresses a peer by "
		       "GID (give a GID index, e.g. ibv_ud_pingpong -g 1)");
		return EINVAL;
	}
	memset(b, 0, sizeof(*b));
	memcpy(b->dgid.raw, a->grh.dgid.raw, 16);
	b->sgid_index = a->grh.sgid_index;
	b->hop_limit = a->grh.hop_limit;
	b->traffic_class = a->grh.traffic_class;
	b->port_num = a->port_num;
	return 0;
}

BV_EXPORT struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct blue_ah_attr b;
	struct bv_context *c;
	struct bv_ah *ah;
	int err;

	if (!pd || !attr) {
		bv_log("ibv_create_ah: %s is NULL", pd ? "attr" : "pd");
		return bv_null(EINVAL);
	}
	err = ah_attr_to_blue(attr, &b);
	if (err)
		return bv_null(err);
	ah = bv_obj_new(sizeof(*ah));
	if (!ah)
		return NULL;
	c = bv_ctx(pd->context);
	bv_lock(c);
	ah->bah = blue_create_ah(bv_pd(pd)->bpd, &b);
	bv_unlock(c);
	if (!ah->bah)
		return bv_obj_fail(ah);
	ah->ah.context = pd->context;
	ah->ah.pd = pd;
	return &ah->ah;
}

BV_EXPORT int ibv_destroy_ah(struct ibv_ah *ah)
{
	struct bv_context *c;
	int err;

	if (!ah) {
		bv_log("ibv_destroy_ah: ah is NULL");
		return bv_ret(EINVAL);
	}
	c = bv_ctx(ah->context);
	bv_lock(c);
	err = blue_destroy_ah(bv_bah(ah));
	bv_unlock(c);
	if (err)
		return bv_ret(err);
	free(ah);
	return 0;
}

BV_EXPORT int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num,
				  struct ibv_wc *wc, struct ibv_grh *grh,
				  struct ibv_ah_attr *ah_attr)
{
	struct blue_ah_attr b;
	struct bv_context *c;
	int err;

	if (!context || !wc || !grh || !ah_attr) {
		bv_log("ibv_init_ah_from_wc: %s is NULL", !context ? "context" : !wc ? "wc" :
		       !grh ? "grh" : "ah_attr");
		return bv_ret(EINVAL);
	}
	if (!(wc->wc_flags & IBV_WC_GRH)) {
		bv_log("ibv_init_ah_from_wc: the completion has no GRH (IBV_WC_GRH), and RoCE "
		       "needs one to answer");
		return bv_ret(EINVAL);
	}
	c = bv_ctx(context);
	bv_lock(c);
	err = bv_ctx_open(c);
	if (!err)
		err = blue_ah_attr_from_grh(c->bctx, grh, &b);
	bv_unlock(c);
	if (err)
		return bv_ret(err);
	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->is_global = 1;
	memcpy(ah_attr->grh.dgid.raw, b.dgid.raw, 16);
	ah_attr->grh.sgid_index = b.sgid_index;
	ah_attr->grh.hop_limit = b.hop_limit;
	ah_attr->grh.traffic_class = b.traffic_class;
	ah_attr->dlid = wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	ah_attr->port_num = port_num;
	return 0;
}

BV_EXPORT struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc,
					       struct ibv_grh *grh, uint8_t port_num)
{
	struct ibv_ah_attr attr;

	if (!pd) {
		bv_log("ibv_create_ah_from_wc: pd is NULL");
		return bv_null(EINVAL);
	}
	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr))
		return NULL;
	return ibv_create_ah(pd, &attr);
}
