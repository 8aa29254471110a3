// SPDX-License-Identifier: MIT
/*
 * The UC responder (IBA 9.7.5.1 and 9.8.1, the unreliable-connection rules; rxe_resp.c's
 * IB_QPT_UC paths were read for what a reference implementation does). UC carries SEND
 * and RDMA WRITE, with and without immediate, and nothing ever answers them: no ACK, no
 * NAK, no RNR NAK. Whatever the QP cannot take is dropped and counted in the live
 * context (uc_drop_seq, uc_no_wqe, uc_drop_access, uc_drop_len) and in the engine
 * (rx_uc_dropped).
 *
 *  - A FIRST or ONLY packet begins a new message whatever its PSN (IBA 9.7.5.1: the
 *    responder resynchronises on it), abandoning a message still in progress.
 *  - A MIDDLE or LAST must carry the expected PSN and continue the message in progress;
 *    otherwise that message is dropped, and the rest of it is discarded until the next
 *    FIRST/ONLY. (rxe also drops the FIRST that follows a broken message, as a class D1
 *    error; IBA lets that FIRST begin the next message, which is what happens here, so a
 *    lost packet costs one message, not two.)
 *  - The receive WQE a dropped SEND was filling is not completed: it stays held and the
 *    next SEND fills it from its start (rxe's class D1 "reset the recv wr").
 *  - No receive WQE, a WRITE the QP's rights or the R_Key refuse, a length that does not
 *    fit: the message is dropped (class D / E); memory is never touched by a refused one.
 *  - An SGE of the receive WQE that is no longer registered is a local error: the WQE
 *    completes with BLUE_WC_LOC_PROT_ERR and the QP goes to ERROR, as on RC.
 *
 * Steps, each a named function returning the next: uc_check_psn, uc_check_op_valid,
 * uc_check_resource, uc_check_rkey, uc_execute, uc_complete; uc_drop ends any of them.
 */
#include <stdio.h>
#include <string.h>

#include "runtime/events.h"
#include "runtime/log.h"
#include "runtime/mr_copy.h"
#include "runtime/mw.h"
#include "runtime/progress.h"
#include "runtime/qp.h"
#include "runtime/rq.h"

enum uc_resp_state {
	UCR_CHECK_PSN,
	UCR_CHECK_OP_VALID,
	UCR_CHECK_RESOURCE,
	UCR_CHECK_RKEY,
	UCR_EXECUTE,
	UCR_COMPLETE,
	UCR_DROP,	/* the packet, and the message in progress with it */
	UCR_DONE,
};

/* Why a packet was dropped: which live-context counter it goes to. */
enum uc_drop {
	UC_DROP_SEQ,
	UC_DROP_NO_WQE,
	UC_DROP_ACCESS,
	UC_DROP_LEN,
};

/* One received UC packet on its way through the steps. */
struct uc_rx {
	const struct blue_pkt *p;
	bool first, last, is_send, is_write, imm;
	enum uc_drop why;
};

static enum uc_resp_state uc_drop_for(struct uc_rx *rx, enum uc_drop why)
{
	rx->why = why;
	return UCR_DROP;
}

/*
 * IBA 9.7.5.1 for UC: FIRST/ONLY starts over at its own PSN; MIDDLE/LAST only at the
 * expected PSN, inside a message of their kind (SEND or WRITE).
 */
static enum uc_resp_state uc_check_psn(struct blue_qp *qp, struct uc_rx *rx)
{
	struct blue_resp *r = &qp->resp;

	if (rx->first) {
		if (r->in_msg != BLUE_MSG_NONE) {
			/* its LAST never came: the message is dropped, counted as a gap */
			qp->live->uc_drop_seq++;
			qp->ctx->eng.st.rx_uc_dropped++;
		}
		r->in_msg = BLUE_MSG_NONE;
		r->recv_off = 0;
		qp->live->rq_psn = rx->p->psn;
		return UCR_CHECK_OP_VALID;
	}
	if (r->in_msg == BLUE_MSG_NONE ||
	    blue_psn_diff(rx->p->psn, qp->live->rq_psn) != 0 ||
	    (r->in_msg == BLUE_MSG_SEND) != rx->is_send)
		return uc_drop_for(rx, UC_DROP_SEQ);
	return UCR_CHECK_OP_VALID;
}

/* The QP's rights (rxe: a UC WRITE without REMOTE_WRITE is dropped), packet sizes. */
static enum uc_resp_state uc_check_op_valid(struct blue_qp *qp, struct uc_rx *rx)
{
	uint32_t mtu = blue__qp_mtu(qp), len = rx->p->payload_len;

	if (rx->is_write && !(qp->access_flags & BLUE_ACCESS_REMOTE_WRITE))
		return uc_drop_for(rx, UC_DROP_ACCESS);
	/* FIRST and MIDDLE carry exactly one path MTU, LAST and ONLY at most one */
	if (rx->last ? len > mtu : len != mtu)
		return uc_drop_for(rx, UC_DROP_LEN);
	return UCR_CHECK_RESOURCE;
}

/* A receive WQE for a SEND's first packet and for a WRITE with immediate; CQ room. */
static enum uc_resp_state uc_check_resource(struct blue_qp *qp, struct uc_rx *rx)
{
	bool wants = (rx->is_send && rx->first) || (rx->is_write && rx->imm);
	bool completes = (rx->is_send && rx->last) || (rx->is_write && rx->imm);

	if (completes && !blue__cq_room(qp->recv_cq))
		return uc_drop_for(rx, UC_DROP_NO_WQE);
	if (wants && !blue__rq_begin(qp))
		return uc_drop_for(rx, UC_DROP_NO_WQE);	/* UC has no RNR (IBA 9.7.5.2.8 is RC) */
	return rx->is_write ? UCR_CHECK_RKEY : UCR_EXECUTE;
}

/* A WRITE's RETH at its first packet; the lengths of the rest against it. */
static enum uc_resp_state uc_check_rkey(struct blue_qp *qp, struct uc_rx *rx)
{
	const struct blue_pkt *p = rx->p;
	struct blue_resp *r = &qp->resp;
	uint32_t len;

	if (!rx->first)
		return (rx->last ? p->payload_len != r->wr_resid :
				   p->payload_len >= r->wr_resid) ?
		       uc_drop_for(rx, UC_DROP_LEN) : UCR_EXECUTE;
	len = p->reth.len;
	if (len > BLUE_MAX_MSG || (rx->last ? p->payload_len != len : len <= p->payload_len))
		return uc_drop_for(rx, UC_DROP_LEN);
	/* a zero-length WRITE names no memory: no R_Key check (rxe) */
	if (len && blue__rkey_check(qp, p->reth.rkey, p->reth.va, len, BLUE_ACCESS_REMOTE_WRITE,
				    NULL) != BLUE_MR_OK)
		return uc_drop_for(rx, UC_DROP_ACCESS);
	r->wr_rkey = p->reth.rkey;
	r->wr_va = p->reth.va;
	r->wr_resid = len;
	r->wr_len = len;
	return UCR_EXECUTE;
}

/* Move the payload: into the held receive WQE, or through the WRITE's R_Key. */
static enum uc_resp_state uc_execute(struct blue_qp *qp, struct uc_rx *rx)
{
	const struct blue_pkt *p = rx->p;
	struct blue_resp *r = &qp->resp;
	enum blue_wc_status st;
	char why[96];

	if (rx->is_send) {
		st = blue__resp_recv_place(qp, blue__rq_cur(qp), r->recv_off, p->payload,
					   p->payload_len);
		if (st == BLUE_WC_LOC_LEN_ERR)
			return uc_drop_for(rx, UC_DROP_LEN);	/* class D: the WQE is reused */
		if (st != BLUE_WC_SUCCESS) {
			blue__resp_recv_complete(qp, st, BLUE_WC_RECV, r->recv_off, p);
			snprintf(why, sizeof(why), "UC receive: %s", blue_wc_status_str(st));
			r->in_msg = BLUE_MSG_NONE;
			blue__qp_error(qp, why);
			return UCR_DONE;
		}
		r->recv_off += p->payload_len;
		return UCR_COMPLETE;
	}
	if (p->payload_len) {
		/* MIDDLE/LAST: translated again, the MR may be gone since FIRST (rxe) */
		if (blue__copy_rkey(qp, r->wr_rkey, r->wr_va, (void *)p->payload, p->payload_len,
				    BLUE_ACCESS_REMOTE_WRITE, BLUE_COPY_TO_MEM, NULL) != BLUE_MR_OK)
			return uc_drop_for(rx, UC_DROP_ACCESS);
		r->wr_va += p->payload_len;
		r->wr_resid -= p->payload_len;
	}
	return UCR_COMPLETE;
}

/* The packet is taken: the next PSN, and at a LAST the receive completion. */
static enum uc_resp_state uc_complete(struct blue_qp *qp, struct uc_rx *rx)
{
	struct blue_resp *r = &qp->resp;

	qp->live->rq_psn = blue_psn_add(rx->p->psn, 1);
	if (!rx->last) {
		r->in_msg = rx->is_send ? BLUE_MSG_SEND : BLUE_MSG_WRITE;
		return UCR_DONE;
	}
	r->in_msg = BLUE_MSG_NONE;
	qp->live->msn = (qp->live->msn + 1) & BLUE_PSN_MASK;	/* messages received */
	if (rx->is_send) {
		blue__resp_recv_complete(qp, BLUE_WC_SUCCESS, BLUE_WC_RECV, r->recv_off, rx->p);
		r->recv_off = 0;
	} else if (rx->imm) {
		blue__resp_recv_complete(qp, BLUE_WC_SUCCESS, BLUE_WC_RECV_RDMA_WITH_IMM,
					 r->wr_len, rx->p);
	}
	return UCR_DONE;
}

/*
 * Drop the packet and the message in progress: MIDDLE/LAST are discarded until the next
 * FIRST/ONLY. A receive WQE the message held stays held, to be filled again from its
 * start (not completed in error).
 */
static enum uc_resp_state uc_drop(struct blue_qp *qp, struct uc_rx *rx)
{
	struct blue_qp_ctx *live = qp->live;

	qp->resp.in_msg = BLUE_MSG_NONE;
	qp->resp.recv_off = 0;
	qp->ctx->eng.st.rx_uc_dropped++;
	switch (rx->why) {
	case UC_DROP_SEQ:	live->uc_drop_seq++; break;
	case UC_DROP_NO_WQE:	live->uc_no_wqe++; break;
	case UC_DROP_ACCESS:	live->uc_drop_access++; break;
	case UC_DROP_LEN:	live->uc_drop_len++; break;
	}
	return UCR_DONE;
}

void blue__resp_uc_rx(struct blue_qp *qp, const struct blue_pkt *p)
{
	struct blue_qp_ctx *live = qp->live;
	uint32_t fl = blue_opcode_flags(p->opcode);
	struct uc_rx rx = {
		.p = p,
		.first = fl & BLUE_OPF_FIRST,
		.last = fl & BLUE_OPF_LAST,
		.is_send = p->opcode <= BLUE_OP_UC_SEND_ONLY_IMM,
		.is_write = p->opcode >= BLUE_OP_UC_WRITE_FIRST,
		.imm = fl & BLUE_OPF_IMMDT,
	};
	enum uc_resp_state st = UCR_CHECK_PSN;

	/* IBA 10.3.1: RTR and later receive; INIT and ERROR drop what they get */
	if (live->state != BLUE_QPS_RTR && live->state != BLUE_QPS_RTS &&
	    live->state != BLUE_QPS_SQD && live->state != BLUE_QPS_SQE)
		return;
	live->rx_pkts++;
	live->rx_bytes += p->payload_len;
	/* IBA 11.6.3.1 (as RC): the first request in RTR establishes the connection */
	if (live->state == BLUE_QPS_RTR && !qp->comm_est_raised) {
		qp->comm_est_raised = true;
		blue__event_qp(qp, BLUE_EVENT_COMM_EST);
	}
	while (st != UCR_DONE) {
		switch (st) {
		case UCR_CHECK_PSN:	 st = uc_check_psn(qp, &rx); break;
		case UCR_CHECK_OP_VALID: st = uc_check_op_valid(qp, &rx); break;
		case UCR_CHECK_RESOURCE: st = uc_check_resource(qp, &rx); break;
		case UCR_CHECK_RKEY:	 st = uc_check_rkey(qp, &rx); break;
		case UCR_EXECUTE:	 st = uc_execute(qp, &rx); break;
		case UCR_COMPLETE:	 st = uc_complete(qp, &rx); break;
		case UCR_DROP:		 st = uc_drop(qp, &rx); break;
		case UCR_DONE:
		default:		 st = UCR_DONE; break;
		}
	}
}
