// SPDX-License-Identifier: MIT
/* The receive-WQE source of a QP (rq.h). */
#include <errno.h>
#include <string.h>

#include "runtime/probes.h"
#include "runtime/qp.h"
#include "runtime/rq.h"

const struct blue_recv_wqe *blue__rq_begin(struct blue_qp *qp)
{
	struct blue_ring *rq = &qp->rq.ring;

	if (!blue_ring_count(rq))
		return NULL;
	qp->rq_held = true;
	return blue_rq_wqe(&qp->rq, blue_ring_cons_own(rq));
}

const struct blue_recv_wqe *blue__rq_cur(const struct blue_qp *qp)
{
	const struct blue_ring *rq = &qp->rq.ring;

	if (!qp->rq_held || !blue_ring_count(rq))
		return NULL;
	return blue_rq_wqe(&qp->rq, blue_ring_cons_own(rq));
}

void blue__rq_end(struct blue_qp *qp)
{
	if (!qp->rq_held)
		return;
	blue_ring_consume(&qp->rq.ring, 1);
	qp->rq_held = false;
}

int blue__rq_flush(struct blue_qp *qp)
{
	struct blue_ring *rq = &qp->rq.ring;
	struct blue_wc wc;

	while (blue_ring_count(rq)) {
		const struct blue_recv_wqe *w = blue_rq_wqe(&qp->rq, blue_ring_cons_own(rq));

		memset(&wc, 0, sizeof(wc));
		wc.wr_id = w->wr_id;
		wc.status = BLUE_WC_WR_FLUSH_ERR;
		wc.opcode = BLUE_WC_RECV;
		wc.qp_num = qp->qpn;
		if (blue__cq_push(qp->recv_cq, &wc, false))
			return -ENOSPC;
		BLUE_PROBE5(completion, qp->qpn, wc.wr_id, wc.status, wc.opcode, wc.byte_len);
		blue_ring_consume(rq, 1);
		qp->rq_held = false;
	}
	return 0;
}
