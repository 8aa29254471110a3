/* SPDX-License-Identifier: MIT */
/*
 * Where a QP's receive WQEs come from: its own receive queue, or the shared receive
 * queue it was created on. The responder (RC and UD alike) asks for the WQE a message
 * lands in when the message begins, uses it while the message's packets arrive, and
 * retires it when the message completes or fails. With its own queue that WQE is the
 * head of the ring; from an SRQ it is taken at the beginning (other QPs take the next
 * ones) and held by the QP until the end.
 */
#ifndef BLUE_RUNTIME_RQ_H
#define BLUE_RUNTIME_RQ_H

#include <stdbool.h>

#include "runtime/wq.h"

struct blue_qp;

/*
 * blue__rq_begin() - the receive WQE a new message lands in, now held by @qp until
 * blue__rq_end(); the same one again while it is held. From an SRQ it is the SRQ's head
 * WQE, copied into the QP (and the SRQ's limit event may fire: srq.h).
 * Return: the WQE, or NULL when none is posted (the responder answers RNR).
 */
const struct blue_recv_wqe *blue__rq_begin(struct blue_qp *qp) __attribute__((visibility("hidden")));

/* blue__rq_cur() - the WQE blue__rq_begin() gave, while it is held (else NULL). */
const struct blue_recv_wqe *blue__rq_cur(const struct blue_qp *qp)
	__attribute__((visibility("hidden")));

/* blue__rq_end() - the held WQE's message completed (its CQE is written): retire it. */
void blue__rq_end(struct blue_qp *qp) __attribute__((visibility("hidden")));

/*
 * blue__rwqe_take() - copy the receive WQE @w of @wq (a ring another process writes)
 * into @copy and check it: SGEs within the queue's max_sge and summing to its length. A
 * WQE that fails is logged (naming @who @id: "QP", "SRQ") and left with no SGEs, so the
 * message it meets fails with a length error on that QP alone (wqe_admit.c).
 * Return: whether it passed.
 */
bool blue__rwqe_take(const char *who, uint32_t id, const struct blue_wq *wq,
		     const struct blue_recv_wqe *w, struct blue_recv_wqe *copy)
	__attribute__((visibility("hidden")));

/*
 * blue__rq_pd() - the PD a receive WQE's memory is checked against: the SRQ's for a QP
 * on an SRQ (IBA 10.2.9: its WQEs were posted there), else the QP's.
 */
struct blue_pd *blue__rq_pd(const struct blue_qp *qp) __attribute__((visibility("hidden")));

/*
 * blue__rq_flush() - in ERROR: complete the held WQE and every WQE of the QP's own
 * queue with BLUE_WC_WR_FLUSH_ERR (an SRQ's other WQEs stay: other QPs may use them);
 * on an SRQ, then raise QP_LAST_WQE_REACHED, once (IBA 11.5.2.8).
 * Stops early when the receive CQ is full; the next pass resumes.
 * Return: 0 when nothing is left to flush, -ENOSPC when the CQ stopped it.
 */
int blue__rq_flush(struct blue_qp *qp) __attribute__((visibility("hidden")));

#endif /* BLUE_RUNTIME_RQ_H */
