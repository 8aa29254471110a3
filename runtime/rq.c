// SPDX-License-Identifier: MIT
/* The receive-WQE source of a QP (rq.h): its own queue, or its SRQ through a held copy. */
#include <errno.h>
#include <string.h>

#include "runtime/events.h"
#include "runtime/probes.h"
#include "runtime/qp.h"
#include "runtime/rq.h"
#include "runtime/srq.h"

const struct blue_recv_wqe *blue__rq_begin(struct blue_qp *qp)
{
	struct blue_ring *rq = &qp->rq.ring;

	if (qp->srq) {
		if (qp->rq_held)
			return qp->rq_copy;
		if (!blue__srq_take(qp->srq, qp->rq_copy))
			return NULL;
		qp->rq_held = true;
		return qp->rq_copy;
	}
	if (!blue_ring_count(rq))
		return NULL;
	qp->rq_held = true;
	if (qp->sq_copy) {	/* another process writes the ring (wqe_admit.c) */
		(void)blue__rwqe_take("QP", qp->qpn, &qp->rq,
				      blue_rq_wqe(&qp->rq, blue_ring_cons_own(rq)), qp->rq_copy);
		return qp->rq_copy;
	}
	return blue_rq_wqe(&qp->rq, blue_ring_cons_own(rq));
}

const struct blue_recv_wqe *blue__rq_cur(const struct blue_qp *qp)
{
	const struct blue_ring *rq = &qp->rq.ring;

	if (!qp->rq_held)
		return NULL;
	if (qp->srq || qp->sq_copy)
		return qp->rq_copy;
	if (!blue_ring_count(rq))
		return NULL;
	return blue_rq_wqe(&qp->rq, blue_ring_cons_own(rq));
}

void blue__rq_end(struct blue_qp *qp)
{
	if (!qp->rq_held)
		return;
	if (!qp->srq)
		blue_ring_consume(&qp->rq.ring, 1);
	qp->rq_held = false;
}

struct blue_pd *blue__rq_pd(const struct blue_qp *qp)
{
	return qp->srq ? qp->srq->pd : qp->pd;
}

/* A receive WQE that will not be filled: a FLUSH_ERR completion. Return: 0 or -ENOSPC. */
static int rwqe_flush(struct blue_qp *qp, const struct blue_recv_wqe *w)
{
	struct blue_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.wr_id = w->wr_id;
	wc.status = BLUE_WC_WR_FLUSH_ERR;
	wc.opcode = BLUE_WC_RECV;
	wc.qp_num = blue__qp_wire_qpn(qp);
	if (blue__cq_push(qp->recv_cq, &wc, false))
		return -ENOSPC;
	BLUE_PROBE5(completion, qp->qpn, wc.wr_id, wc.status, wc.opcode, wc.byte_len);
	return 0;
}

/*
 * A QP of an SRQ in ERROR whose held WQE is retired takes no more from the SRQ: IBA
 * 11.5.2.8 (and rxe_resp.c) tell the application once, so that it may destroy the QP
 * knowing no receive of it is left in flight.
 */
static void srq_last_wqe(struct blue_qp *qp)
{
	if (qp->last_wqe_raised)
		return;
	qp->last_wqe_raised = true;
	blue__event_qp(qp, BLUE_EVENT_QP_LAST_WQE_REACHED);
}

int blue__rq_flush(struct blue_qp *qp)
{
	struct blue_ring *rq = &qp->rq.ring;

	if (qp->srq) {
		/* the SRQ's queued WQEs stay: other QPs take them */
		if (qp->rq_held) {
			if (rwqe_flush(qp, qp->rq_copy))
				return -ENOSPC;
			qp->rq_held = false;
		}
		srq_last_wqe(qp);
		return 0;
	}
	while (blue_ring_count(rq)) {
		if (rwqe_flush(qp, blue_rq_wqe(&qp->rq, blue_ring_cons_own(rq))))
			return -ENOSPC;
		blue_ring_consume(rq, 1);
		qp->rq_held = false;
	}
	return 0;
}
