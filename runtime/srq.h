/* SPDX-License-Identifier: MIT */
/*
 * Shared receive queues (IBA 10.2.9). An SRQ is a ring of receive WQEs (wq.h layout)
 * that the QPs created on it take from, in posting order, whichever QP a message
 * arrives on. A QP takes a WQE when a message begins and holds a copy of it until the
 * message ends (rq.c), so that a multi-packet SEND keeps its buffer while other QPs take
 * the next WQEs.
 *
 * Producer: blue_post_srq_recv() (the API side). Consumer: the engine, for every QP of
 * the SRQ; they all run on the engine of the SRQ's context, one at a time.
 */
#ifndef BLUE_RUNTIME_SRQ_H
#define BLUE_RUNTIME_SRQ_H

#include <stdint.h>
#include <blue/blue.h>

#include "runtime/device.h"
#include "runtime/wq.h"

#define BLUE_MAX_SRQ		1024
#define BLUE_MAX_SRQ_WR		BLUE_MAX_QP_WR
#define BLUE_MAX_SRQ_SGE	BLUE_MAX_SGE

struct blue_srq {
	struct blue_context *ctx;
	struct blue_pd *pd;
	void *srq_context;
	uint32_t srqn;		/* for messages (and ibv_srq's srq_num) */
	struct blue_wq wq;
	uint32_t limit;		/* 0: disarmed; else SRQ_LIMIT_REACHED below it */
	unsigned int nqp;	/* QPs created on it: destroy refuses while any */
};

/*
 * blue__srq_take() - move the head WQE of @srq into @copy (room for the SRQ's max_sge),
 * and raise SRQ_LIMIT_REACHED once if that left fewer than an armed limit.
 * Return: @copy, or NULL when the SRQ is empty.
 */
const struct blue_recv_wqe *blue__srq_take(struct blue_srq *srq, struct blue_recv_wqe *copy)
	__attribute__((visibility("hidden")));

/* The bytes a held copy of one of @srq's WQEs needs. */
static inline size_t blue__srq_wqe_size(const struct blue_srq *srq)
{
	return sizeof(struct blue_recv_wqe) + srq->wq.max_sge * sizeof(struct blue_sge);
}

#endif /* BLUE_RUNTIME_SRQ_H */
