// SPDX-License-Identifier: MIT
/* Shared receive queues: create, modify (the limit), query, post, destroy (srq.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/verbs_ops.h"
#include "runtime/device.h"
#include "runtime/events.h"
#include "runtime/log.h"
#include "runtime/mr.h"
#include "runtime/rq.h"
#include "runtime/srq.h"

static uint32_t srqn_counter;

static int srq_attr_check(const struct blue_srq_attr *a)
{
	if (a->max_wr < 1 || a->max_wr > BLUE_MAX_SRQ_WR) {
		blue__logf("create_srq: max_wr %u; the device takes 1..%d", a->max_wr,
			   BLUE_MAX_SRQ_WR);
		return EINVAL;
	}
	if (a->max_sge > BLUE_MAX_SRQ_SGE) {
		blue__logf("create_srq: max_sge %u; the device takes at most %d", a->max_sge,
			   BLUE_MAX_SRQ_SGE);
		return EINVAL;
	}
	return 0;
}

struct blue_srq *blue__lib_create_srq(struct blue_pd *pd, struct blue_srq_attr *attr,
				      void *srq_context)
{
	struct blue_context *ctx = pd->ctx;
	struct blue_srq *srq;
	int err;

	err = srq_attr_check(attr);
	if (err) {
		errno = err;
		return NULL;
	}
	if (ctx->nsrq >= BLUE_MAX_SRQ) {
		blue__logf("create_srq: the device's %d SRQs are in use", BLUE_MAX_SRQ);
		errno = ENOMEM;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (!srq) {
		errno = ENOMEM;
		return NULL;
	}
	srq->wq.shm_fd = -1;
	err = blue__wq_init(&srq->wq, 0, attr->max_wr, attr->max_sge ? attr->max_sge : 1, 0,
			    ctx->shared_rings);
	if (err) {
		free(srq);
		errno = -err;
		return NULL;
	}
	srq->ctx = ctx;
	srq->pd = pd;
	srq->srq_context = srq_context;
	srq->srqn = __atomic_add_fetch(&srqn_counter, 1, __ATOMIC_RELAXED);
	/* created disarmed: srq_limit is "irrelevant for ibv_create_srq" (its man page) */
	srq->limit = 0;
	attr->max_wr = srq->wq.max_wr;
	attr->max_sge = srq->wq.max_sge;
	attr->srq_limit = 0;
	ctx->nsrq++;
	pd->nsrq++;
	return srq;
}

int blue__lib_modify_srq(struct blue_srq *srq, struct blue_srq_attr *attr, int attr_mask)
{
	if (attr_mask & ~(BLUE_SRQ_MAX_WR | BLUE_SRQ_LIMIT)) {
		blue__logf("modify_srq: SRQ 0x%x: unknown attr_mask bits 0x%x", srq->srqn,
			   attr_mask & ~(BLUE_SRQ_MAX_WR | BLUE_SRQ_LIMIT));
		return EINVAL;
	}
	if (attr_mask & BLUE_SRQ_MAX_WR) {
		blue__logf("modify_srq: SRQ 0x%x: resizing (BLUE_SRQ_MAX_WR) is not supported; "
			   "create it with the max_wr it needs", srq->srqn);
		return EINVAL;
	}
	if (attr_mask & BLUE_SRQ_LIMIT) {
		if (attr->srq_limit > srq->wq.max_wr) {
			blue__logf("modify_srq: SRQ 0x%x: srq_limit %u is above its max_wr %u",
				   srq->srqn, attr->srq_limit, srq->wq.max_wr);
			return EINVAL;
		}
		/* the engine reads it after taking a WQE (blue__srq_take) */
		__atomic_store_n(&srq->limit, attr->srq_limit, __ATOMIC_RELEASE);
	}
	return 0;
}

int blue__lib_query_srq(struct blue_srq *srq, struct blue_srq_attr *attr)
{
	attr->max_wr = srq->wq.max_wr;
	attr->max_sge = srq->wq.max_sge;
	attr->srq_limit = __atomic_load_n(&srq->limit, __ATOMIC_ACQUIRE);
	return 0;
}

int blue_post_srq_recv(struct blue_srq *srq, struct blue_recv_wr *wr,
		       struct blue_recv_wr **bad_wr)
{
	int err;

	if (!srq || !wr) {
		if (bad_wr)
			*bad_wr = wr;
		return EINVAL;
	}
	err = blue__wq_post_recv(&srq->wq, "post_srq_recv: SRQ", srq->srqn, wr, bad_wr);
	srq->ctx->ops->kick(srq->ctx);	/* daemon mode: wake an engine that sleeps */
	return err;
}

int blue__lib_destroy_srq(struct blue_srq *srq)
{
	if (srq->nqp) {
		blue__logf("destroy_srq: SRQ 0x%x: %u QPs still take receives from it; destroy "
			   "them first", srq->srqn, srq->nqp);
		return EBUSY;
	}
	srq->ctx->nsrq--;
	srq->pd->nsrq--;
	blue__wq_fini(&srq->wq);
	free(srq);
	return 0;
}

const struct blue_recv_wqe *blue__srq_take(struct blue_srq *srq, struct blue_recv_wqe *copy)
{
	struct blue_ring *r = &srq->wq.ring;
	const struct blue_recv_wqe *w;
	uint32_t left, limit;

	if (!blue_ring_count(r))
		return NULL;
	/* the SGEs it uses, not the max_sge room every slot has: one copy per message */
	w = blue_rq_wqe(&srq->wq, blue_ring_cons_own(r));
	if (srq->ctx->shared_rings)	/* another process writes the ring (wqe_admit.c) */
		(void)blue__rwqe_take("SRQ", srq->srqn, &srq->wq, w, copy);
	else
		memcpy(copy, w, sizeof(*w) + w->num_sge * sizeof(w->sge[0]));
	blue_ring_consume(r, 1);
	/*
	 * IBA 10.2.9.1 (as rxe_srq.c): an armed limit fires once when the WQEs left drop
	 * below it, and disarms until the application arms it again.
	 */
	limit = __atomic_load_n(&srq->limit, __ATOMIC_ACQUIRE);
	left = blue_ring_count(r);
	if (limit && left < limit &&
	    __atomic_compare_exchange_n(&srq->limit, &limit, 0, false, __ATOMIC_ACQ_REL,
					__ATOMIC_RELAXED))
		blue__event_srq(srq, BLUE_EVENT_SRQ_LIMIT_REACHED);
	return copy;
}
