// SPDX-License-Identifier: MIT
/*
 * Memory windows over libblue's (runtime/mw.c): ibv_alloc_mw, ibv_dealloc_mw and
 * ibv_bind_mw are verbs.h inlines that call the context's ops set here; the work
 * requests (IBV_WR_BIND_MW, LOCAL_INV, SEND_WITH_INV) are translated by qp.c and
 * qp_ex.c through bv_mw_bind_info().
 */
#include <stdlib.h>
#include <string.h>

#include "compat/compat.h"

_Static_assert((int)IBV_MW_TYPE_1 == (int)BLUE_MW_TYPE_1 &&
	       (int)IBV_MW_TYPE_2 == (int)BLUE_MW_TYPE_2, "window types");
_Static_assert((int)IBV_ACCESS_MW_BIND == (int)BLUE_ACCESS_MW_BIND &&
	       (int)IBV_ACCESS_ZERO_BASED == (int)BLUE_ACCESS_ZERO_BASED, "window access");
_Static_assert((int)IBV_WC_BIND_MW == (int)BLUE_WC_BIND_MW &&
	       (int)IBV_WC_LOCAL_INV == (int)BLUE_WC_LOCAL_INV &&
	       (int)IBV_WC_MW_BIND_ERR == (int)BLUE_WC_MW_BIND_ERR &&
	       (int)IBV_WC_WITH_INV == (int)BLUE_WC_WITH_INV, "window completions");
_Static_assert((int)IBV_WR_LOCAL_INV == (int)BLUE_WR_LOCAL_INV &&
	       (int)IBV_WR_BIND_MW == (int)BLUE_WR_BIND_MW &&
	       (int)IBV_WR_SEND_WITH_INV == (int)BLUE_WR_SEND_WITH_INV, "window opcodes");

struct bv_mw {
	struct ibv_mw mw;	/* first: the program holds &mw */
	struct bv_link link;	/* in bv_context.mws */
	struct blue_mw *bmw;
};

struct blue_mw *bv_bmw(struct ibv_mw *mw)
{
	return mw ? ((struct bv_mw *)mw)->bmw : NULL;
}

void bv_mw_bind_info(const struct ibv_mw_bind_info *in, struct blue_mw_bind_info *out)
{
	out->mr = in->mr ? ((struct bv_mr *)in->mr)->bmr : NULL;
	out->addr = in->addr;
	out->length = in->length;
	out->mw_access_flags = in->mw_access_flags;	/* the same bits (asserted above) */
}

static struct ibv_mw *bv_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct bv_context *c = bv_ctx(pd->context);
	struct bv_mw *m;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		bv_log("ibv_alloc_mw: type %d: blue has type 1 and type 2 (2B) windows", type);
		return bv_null(EINVAL);
	}
	m = bv_obj_new(sizeof(*m));
	if (!m)
		return NULL;
	bv_lock(c);
	m->bmw = blue_alloc_mw(bv_pd(pd)->bpd, (enum blue_mw_type)type);
	if (m->bmw)
		bv_list_add(&c->mws, &m->link);
	bv_unlock(c);
	if (!m->bmw)
		return bv_obj_fail(m);
	m->mw.context = pd->context;
	m->mw.pd = pd;
	m->mw.rkey = m->bmw->rkey;
	m->mw.type = type;
	return &m->mw;
}

static int bv_dealloc_mw(struct ibv_mw *mw)
{
	struct bv_context *c = bv_ctx(mw->context);
	struct bv_mw *m = (struct bv_mw *)mw;
	int err;

	bv_lock(c);
	err = blue_dealloc_mw(m->bmw);
	if (!err)
		bv_list_del(&m->link);
	bv_unlock(c);
	if (err)
		return bv_ret(err);
	free(m);
	return 0;
}

/* Type 1 (verbs.h checked the type, the range without an MR and the PDs). */
static int bv_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind)
{
	struct bv_context *c = bv_ctx(qp->context);
	struct blue_mw_bind b = {
		.wr_id = mw_bind->wr_id,
		.send_flags = mw_bind->send_flags,
	};
	int err;

	bv_mw_bind_info(&mw_bind->bind_info, &b.bind_info);
	bv_lock(c);
	err = blue_bind_mw(bv_qp(qp)->bqp, bv_bmw(mw), &b);
	if (!err)	/* the new key is the window's on return (ibv_bind_mw(3)) */
		mw->rkey = bv_bmw(mw)->rkey;
	bv_unlock(c);
	return err;
}

void bv_mw_init_ops(struct bv_context *c)
{
	c->vctx.context.ops.alloc_mw = bv_alloc_mw;
	c->vctx.context.ops.dealloc_mw = bv_dealloc_mw;
	c->vctx.context.ops.bind_mw = bv_bind_mw;
}

void bv_mw_leftovers(struct bv_context *c)
{
	while (c->mws.next != &c->mws) {
		struct bv_mw *m = (struct bv_mw *)((char *)c->mws.next -
						   __builtin_offsetof(struct bv_mw, link));

		if (bv_dealloc_mw(&m->mw))
			break;
	}
}
