// SPDX-License-Identifier: MIT
/*
 * Shared receive queues: ibv_create_srq (and the create_srq_ex op, basic SRQs only),
 * modify (the limit; no resize), query, destroy and the post_srq_recv op, over
 * libblue's SRQs (runtime/srq.h). XRC and tag-matching SRQs answer EOPNOTSUPP.
 */
#include <stddef.h>
#include <string.h>

#include "compat/compat.h"

_Static_assert(sizeof(struct ibv_srq_attr) == sizeof(struct blue_srq_attr), "srq attr");
_Static_assert(offsetof(struct ibv_srq_attr, srq_limit) ==
	       offsetof(struct blue_srq_attr, srq_limit), "srq attr limit");
_Static_assert((int)IBV_SRQ_MAX_WR == (int)BLUE_SRQ_MAX_WR &&
	       (int)IBV_SRQ_LIMIT == (int)BLUE_SRQ_LIMIT, "srq attr mask");

static struct bv_srq *bv_srq(struct ibv_srq *s)
{
	return (struct bv_srq *)s;
}

static struct ibv_srq *srq_create(struct ibv_pd *pd, void *srq_context,
				  struct ibv_srq_attr *attr)
{
	struct bv_context *c = bv_ctx(pd->context);
	struct blue_srq_attr ba;
	struct bv_srq *s;

	s = bv_obj_new(sizeof(*s));
	if (!s)
		return NULL;
	ba = (struct blue_srq_attr){ .max_wr = attr->max_wr, .max_sge = attr->max_sge };
	bv_lock(c);
	/* srq_context = our object: async.c finds the verbs SRQ of an event by it */
	s->bsrq = blue_create_srq(bv_pd(pd)->bpd, &ba, s);
	if (s->bsrq)
		bv_list_add(&c->srqs, &s->link);
	bv_unlock(c);
	if (!s->bsrq)
		return bv_obj_fail(s);
	attr->max_wr = ba.max_wr;	/* what it got, as rdma-core returns */
	attr->max_sge = ba.max_sge;
	s->srq.context = pd->context;
	s->srq.srq_context = srq_context;
	s->srq.pd = pd;
	pthread_mutex_init(&s->srq.mutex, NULL);
	pthread_cond_init(&s->srq.cond, NULL);
	return &s->srq;
}

BV_EXPORT struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	if (!pd || !attr) {
		bv_log("ibv_create_srq: %s is NULL", pd ? "srq_init_attr" : "pd");
		return bv_null(EINVAL);
	}
	return srq_create(pd, attr->srq_context, &attr->attr);
}

static struct ibv_srq *bv_create_srq_ex(struct ibv_context *context,
					struct ibv_srq_init_attr_ex *a)
{
	uint32_t known = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ;

	(void)context;
	if (!a) {
		bv_log("ibv_create_srq_ex: srq_init_attr_ex is NULL");
		return bv_null(EINVAL);
	}
	if ((a->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && a->srq_type != IBV_SRQT_BASIC) {
		bv_log("ibv_create_srq_ex: srq_type %d is not supported; blue has basic SRQs "
		       "only (no XRC, no tag matching)", a->srq_type);
		return bv_null(EOPNOTSUPP);
	}
	if (a->comp_mask & ~known) {
		bv_log("ibv_create_srq_ex: comp_mask 0x%x is not supported (XRC domain, tag "
		       "matching)", a->comp_mask & ~known);
		return bv_null(EOPNOTSUPP);
	}
	if (!(a->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !a->pd) {
		bv_log("ibv_create_srq_ex: pd is missing (IBV_SRQ_INIT_ATTR_PD)");
		return bv_null(EINVAL);
	}
	/* a CQ matters to XRC SRQs only; a basic SRQ's QPs have their own */
	return srq_create(a->pd, a->srq_context, &a->attr);
}

BV_EXPORT int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask)
{
	struct bv_context *c;
	int err;

	if (!srq || !attr) {
		bv_log("ibv_modify_srq: %s is NULL", srq ? "srq_attr" : "srq");
		return bv_ret(EINVAL);
	}
	c = bv_ctx(srq->context);
	bv_lock(c);
	err = blue_modify_srq(bv_srq(srq)->bsrq, (struct blue_srq_attr *)attr, mask);
	bv_unlock(c);
	return bv_ret(err);
}

BV_EXPORT int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct bv_context *c;
	int err;

	if (!srq || !attr) {
		bv_log("ibv_query_srq: %s is NULL", srq ? "srq_attr" : "srq");
		return bv_ret(EINVAL);
	}
	c = bv_ctx(srq->context);
	bv_lock(c);
	err = blue_query_srq(bv_srq(srq)->bsrq, (struct blue_srq_attr *)attr);
	bv_unlock(c);
	return bv_ret(err);
}

BV_EXPORT int ibv_destroy_srq(struct ibv_srq *srq)
{
	struct bv_srq *s = bv_srq(srq);
	struct bv_context *c;
	int err;

	if (!srq) {
		bv_log("ibv_destroy_srq: srq is NULL");
		return bv_ret(EINVAL);
	}
	c = bv_ctx(srq->context);
	bv_lock(c);
	err = blue_destroy_srq(s->bsrq);	/* EBUSY while QPs use it, said why */
	if (!err) {
		bv_list_del(&s->link);
		bv_async_forget(c, NULL, srq);
	}
	bv_unlock(c);
	if (err)
		return bv_ret(err);
	pthread_mutex_destroy(&s->srq.mutex);
	pthread_cond_destroy(&s->srq.cond);
	free(s);
	return 0;
}

static int bv_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			    struct ibv_recv_wr **bad_wr)
{
	struct bv_context *c = bv_ctx(srq->context);
	struct blue_recv_wr *bad = NULL;
	int err;

	bv_lock(c);
	/* the receive WR layouts are the same (qp.c asserts it) */
	err = blue_post_srq_recv(bv_srq(srq)->bsrq, (struct blue_recv_wr *)wr, &bad);
	bv_unlock(c);
	if (err && bad_wr)
		*bad_wr = (struct ibv_recv_wr *)bad;
	return err;
}

/* ibv_get_srq_num() is for XRC SRQs, which blue has not. */
static int bv_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num)
{
	(void)srq;
	(void)srq_num;
	return EOPNOTSUPP;
}

void bv_srq_init_ops(struct bv_context *c)
{
	c->vctx.context.ops.post_srq_recv = bv_post_srq_recv;
	c->vctx.create_srq_ex = bv_create_srq_ex;
	c->vctx.get_srq_num = bv_get_srq_num;
}
