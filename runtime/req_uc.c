// SPDX-License-Identifier: MIT
/*
 * The UC requester (IBA 9.7 with the unreliable rules of 9.8.1, 10.2.2): a SEND or
 * WRITE of n bytes becomes ceil(n / path MTU) packets (at least one) with the UC
 * opcodes (table 36, 0x20-0x2b), built by the RC requester's own packet builder. Nothing
 * acknowledges them: no AckReq, no PSN window waiting for ACKs, no retransmit timer, no
 * completer. A WQE completes, successfully, when its last packet has been queued for the
 * wire (as rxe completes a UC send once its last packet is out); its PSNs only count up.
 *
 * Steps, as named functions: uc_next (state and queue), uc_check (keys, at the first
 * packet), uc_send (one packet, and the WQE's completion after its last), uc_local (a
 * BIND_MW or LOCAL_INV: executed in order, no packet, completed at once, as rxe runs its
 * local operations on UC too), uc_fail; READ, atomics and SEND with invalidate never get
 * here (refused at post time, wq.c).
 */
#include <errno.h>

#include "runtime/log.h"
#include "runtime/mw.h"
#include "runtime/progress.h"
#include "runtime/qp.h"

enum uc_step {
	UC_NEXT,	/* the WQE at req.idx, if one may go */
	UC_CHECK,	/* first packet of a WQE: its SGEs */
	UC_LOCAL,	/* a local operation (BIND_MW, LOCAL_INV) */
	UC_SEND,	/* one packet */
	UC_FAIL,	/* a local error: the WQE fails, the QP goes to ERROR */
	UC_STOP,	/* nothing more this pass */
};

/* IBA 10.3.1: RTS sends; SQD only finishes the message under way. */
static enum uc_step uc_next(struct blue_qp *qp)
{
	uint8_t st = qp->live->state;

	if (st != BLUE_QPS_RTS && !(st == BLUE_QPS_SQD && qp->req.offset))
		return UC_STOP;
	if (qp->req.idx == blue__sq_take(qp))
		return UC_STOP;
	return qp->req.offset ? UC_SEND : UC_CHECK;
}

static enum uc_step uc_check(struct blue_qp *qp, const struct blue_send_wqe *w,
			     const struct blue_swqe_eng *e)
{
	if (e->state == BLUE_SWQE_ERROR)	/* refused when taken in (wqe_admit.c) */
		return UC_FAIL;
	if (blue__wr_is_local(w->opcode))
		return UC_LOCAL;
	return blue__req_keys_ok(qp, w) ? UC_SEND : UC_FAIL;
}

/*
 * The local operation @w, once its completion has room; nothing is acknowledged on UC,
 * so it completes as it executes. A failure fails the WQE with its status (bind: MW_BIND_ERR).
 */
static enum uc_step uc_local(struct blue_qp *qp, const struct blue_send_wqe *w,
			     struct blue_swqe_eng *e)
{
	enum blue_wc_status st;

	if (!blue__cq_room(qp->send_cq))
		return UC_STOP;
	st = blue__mw_exec(qp, w);
	if (st != BLUE_WC_SUCCESS) {
		e->status = (uint8_t)st;
		return UC_FAIL;
	}
	e->state = BLUE_SWQE_SENT;
	qp->req.idx++;
	(void)blue__sq_complete(qp, BLUE_WC_SUCCESS);	/* room checked above */
	return UC_NEXT;
}

/*
 * The packet at req.offset. The last one is sent only with room for the completion it
 * brings, so that a WQE is never sent and then left uncompleted.
 * Return: the next step; *@sent is incremented for a packet queued.
 */
static enum uc_step uc_send(struct blue_qp *qp, const struct blue_send_wqe *w,
			    struct blue_swqe_eng *e, int *sent)
{
	struct blue_qp_ctx *live = qp->live;
	uint32_t off = qp->req.offset, mtu = blue__qp_mtu(qp);
	bool last = w->length - off <= mtu;
	struct blue_pkt p;

	if (last && !blue__cq_room(qp->send_cq))
		return UC_STOP;
	if (blue__req_build(qp, w, off, live->sq_psn, &p))
		return UC_FAIL;
	if (blue__qp_tx(qp, &p))
		return UC_STOP;	/* no frame or budget: the next pass */
	(*sent)++;
	if (off == 0) {
		e->first_psn = live->sq_psn;
		e->last_psn = blue_psn_add(live->sq_psn, w->length ? (w->length - 1) / mtu : 0);
		e->state = BLUE_SWQE_SENDING;
	}
	live->sq_psn = blue_psn_add(live->sq_psn, 1);
	live->una_psn = live->sq_psn;	/* nothing is ever outstanding */
	qp->req.psn_hi = live->sq_psn;
	qp->req.offset = off + p.payload_len;
	if (!last)
		return UC_SEND;
	e->state = BLUE_SWQE_SENT;
	qp->req.idx++;
	qp->req.offset = 0;
	(void)blue__sq_complete(qp, BLUE_WC_SUCCESS);	/* room checked above */
	return UC_NEXT;
}

/*
 * The WQE failed before its last packet left, or its local operation failed: report it
 * in order with its status (LOC_PROT_ERR unless uc_local set one) and stop (as UD).
 */
static void uc_fail(struct blue_qp *qp, struct blue_swqe_eng *e)
{
	e->state = BLUE_SWQE_ERROR;
	if (!e->status)
		e->status = BLUE_WC_LOC_PROT_ERR;
	blue__qp_error(qp, "a UC work request failed locally");
}

int blue__req_uc_run(struct blue_qp *qp)
{
	enum uc_step st = UC_NEXT;
	const struct blue_send_wqe *w = NULL;
	struct blue_swqe_eng *e = NULL;
	int sent = 0;

	for (;;) {
		switch (st) {
		case UC_NEXT:
			st = uc_next(qp);
			if (st != UC_STOP) {
				w = blue__sq_wqe(qp, qp->req.idx);
				e = blue__sq_eng(qp, qp->req.idx);
			}
			break;
		case UC_CHECK:
			st = uc_check(qp, w, e);
			break;
		case UC_LOCAL:
			st = uc_local(qp, w, e);
			break;
		case UC_SEND:
			st = uc_send(qp, w, e, &sent);
			break;
		case UC_FAIL:
			uc_fail(qp, e);
			qp->req.state = BLUE_REQ_LOCAL_ERR;
			return sent;
		case UC_STOP:
		default:
			qp->req.state = BLUE_REQ_DONE;
			return sent;
		}
	}
}
