// SPDX-License-Identifier: MIT
/*
 * The requester (IBA 9.7, the requester side): turns send-queue WQEs into request
 * packets. A SEND or WRITE of n bytes becomes ceil(n / path MTU) packets (at least one),
 * FIRST/MIDDLE.../LAST or ONLY, each with the next PSN; a READ is one request that
 * consumes a PSN for every response packet it asks for; an atomic is one packet. The
 * last packet of a message asks for an ACK. Go-back-N moves it back to una_psn.
 *
 * Modelled on the shape of rxe_req.c (a state loop per run), written from the spec.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "runtime/aw.h"
#include "runtime/cc_wire.h"
#include "runtime/log.h"
#include "runtime/mr_copy.h"
#include "runtime/mw.h"
#include "runtime/probes.h"
#include "runtime/progress.h"
#include "runtime/qp.h"
#include "runtime/tenant.h"

const char *const blue__req_state_name[BLUE_REQ__MAX] = {
	[BLUE_REQ_NEXT_WQE] = "next_wqe",
	[BLUE_REQ_CHECK_WQE] = "check_wqe",
	[BLUE_REQ_SEND_PKT] = "send_pkt",
	[BLUE_REQ_WAIT] = "wait",
	[BLUE_REQ_LOCAL_ERR] = "local_err",
	[BLUE_REQ_DONE] = "done",
};

/*
 * PSNs in flight at most. IBA 9.7.1 allows up to 2^23; fewer keep a sender from
 * overrunning the peer's receive ring between two of its passes, and keep go-back-N
 * cheap. A READ that needs more response PSNs than this goes out alone.
 */
#define BLUE_REQ_WINDOW		256
/* Ask for an ACK this often inside a long message, so the window keeps moving. */
#define BLUE_ACKREQ_EVERY	32

/* PSNs the WQE consumes from @offset on (responses included for a READ). */
static uint32_t wqe_npkts(const struct blue_send_wqe *w, uint32_t offset, uint32_t mtu)
{
	uint32_t left = w->length - offset;

	if (blue_op_is_atomic(w->opcode))
		return 1;
	return left ? (left + mtu - 1) / mtu : 1;
}

/* READ and atomic WQEs issued and not completed: they hold responder resources. */
static uint32_t rd_atomic_inflight(const struct blue_qp *qp)
{
	uint32_t i, n = 0;

	for (i = blue_ring_cons_own(&qp->sq.ring); i != qp->req.idx; i++) {
		uint32_t op = blue__sq_wqe(qp, i)->opcode;

		if (blue_op_wants_resp(op))
			n++;
	}
	return n;
}

/*
 * The PSNs the requester may have in flight: congestion control's window, and in
 * blue-manager the cap a lower class runs under while a higher one holds QPs
 * (tenant_sched.c): what keeps the queues short that a real-time packet waits in.
 */
static uint32_t req_window(const struct blue_qp *qp)
{
	uint32_t win = blue__cc_window(qp->live, BLUE_REQ_WINDOW);

	return qp->tenant ? blue__sched_window(qp, win) : win;
}

/* The fence indicator (IBV_SEND_FENCE): wait until earlier READs and atomics complete. */
static bool fence_blocks(const struct blue_qp *qp, const struct blue_send_wqe *w)
{
	return (w->send_flags & BLUE_SEND_FENCE) && rd_atomic_inflight(qp) > 0;
}

/* Every SGE the WQE names must be ours, in range, and writable if we will write it. */
bool blue__req_keys_ok(struct blue_qp *qp, const struct blue_send_wqe *w)
{
	unsigned int need = (blue_op_is_read(w->opcode) || blue_op_is_atomic(w->opcode)) ?
			    BLUE_ACCESS_LOCAL_WRITE : 0;
	const struct blue_sge *sge = blue_wqe_sges(w);
	enum blue_mr_verdict v;
	uint32_t i;

	if (blue_wqe_is_inline(w))
		return true;
	for (i = 0; i < w->num_sge; i++) {
		if (!sge[i].length)
			continue;
		v = blue__mr_check(qp->ctx, qp->pd, sge[i].lkey, sge[i].addr, sge[i].length,
				   need, NULL);
		if (v != BLUE_MR_OK) {
			blue__logf("QP 0x%x: WQE wr_id %llu, SGE %u (lkey 0x%x): %s", qp->qpn,
				   (unsigned long long)w->wr_id, i, sge[i].lkey,
				   blue__mr_verdict_str(v));
			return false;
		}
	}
	return true;
}

/*
 * The payload bytes [@off, @off + @len) of @w, each SGE translated through its MR now
 * (the MR may have been deregistered since the WQE was checked): straight from the
 * registered memory when one SGE holds them all, else gathered into the engine's buffer.
 * Return: where the bytes are, or NULL (logged) if an SGE's key no longer covers them.
 */
const uint8_t *blue__req_gather(struct blue_qp *qp, const struct blue_send_wqe *w,
				uint32_t off, uint32_t len)
{
	const struct blue_sge *sge = blue_wqe_sges(w);
	enum blue_mr_verdict v;
	const void *at;
	uint32_t bad = 0;

	if (blue_wqe_is_inline(w))
		return w->data + off;
	v = blue__copy_data(qp->ctx, qp->pd, sge, w->num_sge, off, qp->ctx->eng.gather, len,
			    0, BLUE_COPY_FROM_MEM, &at, &bad);
	if (v != BLUE_MR_OK) {
		blue__logf("QP 0x%x: WQE wr_id %llu, SGE %u (lkey 0x%x): %s", qp->qpn,
			   (unsigned long long)w->wr_id, bad,
			   bad < w->num_sge ? sge[bad].lkey : 0, blue__mr_verdict_str(v));
		return NULL;
	}
	return at;
}

/* The opcode of the packet of @w that starts at @offset, and its payload length. */
static uint8_t pkt_opcode(const struct blue_send_wqe *w, uint32_t offset, uint32_t mtu,
			  uint32_t *paylen)
{
	uint32_t left = w->length - offset;
	bool first = offset == 0, last = left <= mtu;

	*paylen = last ? left : mtu;
	switch (w->opcode) {
	case BLUE_WR_SEND:
		return first ? (last ? BLUE_OP_RC_SEND_ONLY : BLUE_OP_RC_SEND_FIRST) :
			       (last ? BLUE_OP_RC_SEND_LAST : BLUE_OP_RC_SEND_MIDDLE);
	case BLUE_WR_SEND_WITH_IMM:
		return first ? (last ? BLUE_OP_RC_SEND_ONLY_IMM : BLUE_OP_RC_SEND_FIRST) :
			       (last ? BLUE_OP_RC_SEND_LAST_IMM : BLUE_OP_RC_SEND_MIDDLE);
	case BLUE_WR_SEND_WITH_INV:	/* the IETH rides on the last packet (IBA 9.3.8) */
		return first ? (last ? BLUE_OP_RC_SEND_ONLY_INV : BLUE_OP_RC_SEND_FIRST) :
			       (last ? BLUE_OP_RC_SEND_LAST_INV : BLUE_OP_RC_SEND_MIDDLE);
	case BLUE_WR_RDMA_WRITE:
		return first ? (last ? BLUE_OP_RC_WRITE_ONLY : BLUE_OP_RC_WRITE_FIRST) :
			       (last ? BLUE_OP_RC_WRITE_LAST : BLUE_OP_RC_WRITE_MIDDLE);
	case BLUE_WR_RDMA_WRITE_WITH_IMM:
		return first ? (last ? BLUE_OP_RC_WRITE_ONLY_IMM : BLUE_OP_RC_WRITE_FIRST) :
			       (last ? BLUE_OP_RC_WRITE_LAST_IMM : BLUE_OP_RC_WRITE_MIDDLE);
	case BLUE_WR_RDMA_READ:
		*paylen = 0;
		return BLUE_OP_RC_READ_REQUEST;
	case BLUE_WR_ATOMIC_CMP_AND_SWP:
		*paylen = 0;
		return BLUE_OP_RC_COMPARE_SWAP;
	case BLUE_WR_ATOMIC_WRITE:
		return BLUE_OP_RC_ATOMIC_WRITE;	/* its 8 bytes: *paylen as for a WRITE */
	case BLUE_WR_FLUSH:
		*paylen = 0;
		return BLUE_OP_RC_FLUSH;
	default:
		*paylen = 0;
		return BLUE_OP_RC_FETCH_ADD;
	}
}

/*
 * The packet of @w that starts at byte @off, with @psn; *@flp gets its BTH flags.
 * Return: 0, or -EACCES if its payload is no longer in registered memory.
 */
static int build_pkt(struct blue_qp *qp, const struct blue_send_wqe *w, uint32_t off,
		     uint32_t psn, struct blue_pkt *p, uint32_t *flp)
{
	uint32_t mtu = blue__qp_mtu(qp), paylen, fl;
	uint8_t op;

	op = pkt_opcode(w, off, mtu, &paylen);
	if (qp->type == BLUE_QPT_UC)	/* IBA table 36: UC's SEND/WRITE are RC's + 0x20 */
		op |= BLUE_OP_UC_SEND_FIRST;
	fl = blue_opcode_flags(op);
	blue__qp_pkt(qp, p, op, psn);
	if (fl & BLUE_OPF_RETH) {
		p->reth.va = w->remote_addr + off;
		p->reth.rkey = w->rkey;
		/* a WRITE announces the whole message; a resumed READ asks for the rest */
		p->reth.len = w->length - off;
	}
	if (fl & BLUE_OPF_FETH)
		blue__aw_flush_hdrs(w, p);
	if (fl & BLUE_OPF_ATMETH) {
		p->atmeth.va = w->remote_addr;
		p->atmeth.rkey = w->rkey;
		if (w->opcode == BLUE_WR_ATOMIC_CMP_AND_SWP) {
			p->atmeth.swap_add = w->swap;
			p->atmeth.compare = w->compare_add;
		} else {
			p->atmeth.swap_add = w->compare_add;
		}
	}
	if (fl & BLUE_OPF_IMMDT)
		p->imm = be32toh(w->imm_data);
	if (fl & BLUE_OPF_IETH)
		p->ieth_rkey = w->imm_data;	/* invalidate_rkey, host order */
	if (paylen) {
		p->payload = blue__req_gather(qp, w, off, paylen);
		if (!p->payload)
			return -EACCES;
		p->payload_len = paylen;
	}
	if (fl & BLUE_OPF_LAST) {
		/* IBA 9.7: the last packet of a message asks for an ACK; UC has no ACKs */
		p->ackreq = qp->type != BLUE_QPT_UC;
		if (w->send_flags & BLUE_SEND_SOLICITED)
			p->se = 1;
	}
	*flp = fl;
	return 0;
}

/* A WQE whose memory went away under it fails with a local protection error (rxe). */
static void wqe_prot_err(struct blue_swqe_eng *e)
{
	e->state = BLUE_SWQE_ERROR;
	e->status = BLUE_WC_LOC_PROT_ERR;
}

/*
 * The local operation @w (BIND_MW, LOCAL_INV) executes now, when the requester reaches
 * it: after every WQE before it went out, before any after it (rxe's do_local_ops). It
 * sends nothing; its PSN range is the empty one at the end of the previous WQE's
 * (first = last = sq_psn - 1), so the completer retires it, in order, once everything
 * before it is acknowledged, and a rewind never sends it. Return: the next state.
 */
static enum blue_req_state local_op(struct blue_qp *qp, const struct blue_send_wqe *w,
				    struct blue_swqe_eng *e)
{
	enum blue_wc_status st = blue__mw_exec(qp, w);

	if (st != BLUE_WC_SUCCESS) {
		e->state = BLUE_SWQE_ERROR;
		e->status = (uint8_t)st;
		return BLUE_REQ_LOCAL_ERR;
	}
	e->first_psn = e->last_psn = blue_psn_add(qp->live->sq_psn, BLUE_PSN_MASK);
	e->state = BLUE_SWQE_SENT;
	qp->req.idx++;
	qp->req.offset = 0;
	return BLUE_REQ_NEXT_WQE;
}

/*
 * Build and queue the packet of the current WQE at req.offset. Nothing is committed
 * unless the frame was queued. Return: 0, -EAGAIN, or -EACCES (the WQE failed).
 */
static int send_pkt(struct blue_qp *qp, const struct blue_send_wqe *w, struct blue_swqe_eng *e)
{
	struct blue_qp_ctx *live = qp->live;
	uint32_t mtu = blue__qp_mtu(qp), psn = live->sq_psn, npkts;
	uint32_t off = qp->req.offset, every = blue__cc_window(live, BLUE_ACKREQ_EVERY);
	uint32_t fl;
	struct blue_pkt p;
	int err;

	err = build_pkt(qp, w, off, psn, &p, &fl);
	if (err) {
		wqe_prot_err(e);
		return err;
	}
	npkts = wqe_npkts(w, off, mtu);
	/* a congestion window under BLUE_ACKREQ_EVERY asks at least when it fills */
	if (!(fl & BLUE_OPF_LAST) &&
	    blue_psn_diff(psn, live->una_psn) % every == every - 1)
		p.ackreq = 1;
	err = blue__qp_tx(qp, &p);
	if (err)
		return err;
	/* below the highest PSN sent: go-back-N is sending it again */
	if (blue_psn_diff(psn, qp->req.psn_hi) < 0)
		live->retx_pkts++;

	if (off == 0 || e->state == BLUE_SWQE_POSTED) {
		e->first_psn = psn;
		e->last_psn = blue_psn_add(psn, npkts - 1);
		e->state = BLUE_SWQE_SENDING;
	}
	if (blue_op_is_read(w->opcode) || blue_op_is_atomic(w->opcode)) {
		live->sq_psn = blue_psn_add(psn, npkts);
		qp->req.offset = w->length;
	} else {
		live->sq_psn = blue_psn_add(psn, 1);
		qp->req.offset = off + p.payload_len;
	}
	if (blue_psn_diff(live->sq_psn, qp->req.psn_hi) > 0)
		qp->req.psn_hi = live->sq_psn;
	blue__comp_sent(qp, qp->ctx->eng.now_ns);
	return 0;
}

int blue__req_resend(struct blue_qp *qp, uint32_t idx, uint32_t psn, uint32_t npsn)
{
	const struct blue_send_wqe *w = blue__sq_wqe(qp, idx);
	struct blue_swqe_eng *e = blue__sq_eng(qp, idx);
	uint32_t mtu = blue__qp_mtu(qp), off = 0, room, fl;
	struct blue_pkt p;
	int err;

	if (!blue_op_is_atomic(w->opcode)) {
		off = (uint32_t)blue_psn_diff(psn, e->first_psn) * mtu;
		if (off > w->length)
			off = w->length;
	}
	err = build_pkt(qp, w, off, psn, &p, &fl);
	if (err) {
		wqe_prot_err(e);	/* retired in order by the completer */
		return err;
	}
	if (blue_op_is_read(w->opcode)) {
		/* a new READ for the missing responses only (as rxe re-requests the rest) */
		room = w->length - off;
		if (npsn && (uint64_t)npsn * mtu < room)
			p.reth.len = npsn * mtu;
	}
	p.ackreq = 1;	/* what the responder has now decides what comes next */
	err = blue__qp_tx(qp, &p);
	if (err)
		return err;
	qp->live->retx_pkts++;
	BLUE_PROBE_RETX(qp->qpn, psn, BLUE_RETX_NAK,
			blue_psn_add(psn, blue_op_is_read(w->opcode) && npsn ? npsn : 1));
	blue__comp_sent(qp, qp->ctx->eng.now_ns);
	return 0;
}

int blue__req_run(struct blue_qp *qp)
{
	struct blue_qp_ctx *live = qp->live;
	enum blue_req_state st = BLUE_REQ_NEXT_WQE;
	const struct blue_send_wqe *w = NULL;
	struct blue_swqe_eng *e = NULL;
	uint32_t mtu = blue__qp_mtu(qp), limit, win, sent = 0;
	int err;

	/* the policy's resends first (selective: the holes), then new packets */
	if (qp->retx.ops->req_resend)
		sent += (uint32_t)qp->retx.ops->req_resend(qp);

	for (;;) {
		switch (st) {
		case BLUE_REQ_NEXT_WQE:
			/* IBA 10.3.1: RTS sends; SQD only finishes the message under way */
			if (live->state != BLUE_QPS_RTS &&
			    !(live->state == BLUE_QPS_SQD && qp->req.offset)) {
				st = BLUE_REQ_DONE;
				break;
			}
			if (qp->comp.rnr_wait) {
				st = BLUE_REQ_WAIT;
				break;
			}
			if (qp->req.idx == blue__sq_take(qp)) {
				st = BLUE_REQ_DONE;
				break;
			}
			w = blue__sq_wqe(qp, qp->req.idx);
			e = blue__sq_eng(qp, qp->req.idx);
			if (e->state == BLUE_SWQE_ERROR) {
				st = BLUE_REQ_LOCAL_ERR;
			} else if (blue__wr_is_local(w->opcode) && e->state == BLUE_SWQE_SENT) {
				qp->req.idx++;	/* executed before a rewind: never twice */
				st = BLUE_REQ_NEXT_WQE;
			} else
				st = qp->req.offset ? BLUE_REQ_SEND_PKT : BLUE_REQ_CHECK_WQE;
			break;

		case BLUE_REQ_CHECK_WQE:
			if (fence_blocks(qp, w)) {
				st = BLUE_REQ_WAIT;
				break;
			}
			if (blue__wr_is_local(w->opcode)) {
				st = local_op(qp, w, e);
				break;
			}
			if (blue_op_wants_resp(w->opcode)) {
				/* max_rd_atomic 0 would never send: treat it as 1, as rc_pingpong
				 * users expect their READ to go */
				limit = qp->max_rd_atomic ? qp->max_rd_atomic : 1;
				if (rd_atomic_inflight(qp) >= limit) {
					st = BLUE_REQ_WAIT;
					break;
				}
			}
			if (!blue__req_keys_ok(qp, w)) {
				/* a local protection error completes the WQE in error; the
				 * completer reports it in order and moves the QP to ERROR (rxe) */
				wqe_prot_err(e);
				st = BLUE_REQ_LOCAL_ERR;
				break;
			}
			/* a message that needs more PSNs than the window goes alone */
			win = req_window(qp);
			if (live->sq_psn != live->una_psn &&
			    blue_psn_diff(live->sq_psn, live->una_psn) +
			    (int32_t)wqe_npkts(w, 0, mtu) > (int32_t)win &&
			    blue_op_wants_resp(w->opcode)) {
				st = BLUE_REQ_WAIT;
				break;
			}
			st = BLUE_REQ_SEND_PKT;
			break;

		case BLUE_REQ_SEND_PKT:
			if (blue_psn_diff(live->sq_psn, live->una_psn) >=
			    (int32_t)req_window(qp)) {
				st = BLUE_REQ_WAIT;
				break;
			}
			err = send_pkt(qp, w, e);
			if (err) {
				st = err == -EACCES ? BLUE_REQ_LOCAL_ERR : BLUE_REQ_WAIT;
				break;
			}
			sent++;
			if (qp->req.offset >= w->length) {
				e->state = BLUE_SWQE_SENT;
				qp->req.idx++;
				qp->req.offset = 0;
				st = BLUE_REQ_NEXT_WQE;
			}
			break;

		case BLUE_REQ_WAIT:
		case BLUE_REQ_LOCAL_ERR:
		case BLUE_REQ_DONE:
		default:
			qp->req.state = st;
			return (int)sent;
		}
	}
}

void blue__req_rewind(struct blue_qp *qp)
{
	struct blue_qp_ctx *live = qp->live;
	uint32_t una = live->una_psn, mtu = blue__qp_mtu(qp);
	uint32_t idx = blue_ring_cons_own(&qp->sq.ring);
	uint32_t end = blue__sq_end(qp);

	/*
	 * The WQE that holds una_psn: the requester resumes there. Every WQE that ever went
	 * out is looked at, not only those before req.idx: after an earlier rewind, an ACK
	 * can cover WQEs sent before it and not resent since.
	 */
	for (; idx != end; idx++) {
		const struct blue_send_wqe *w = blue__sq_wqe(qp, idx);
		struct blue_swqe_eng *e = blue__sq_eng(qp, idx);
		int32_t into;

		if (e->state != BLUE_SWQE_SENDING && e->state != BLUE_SWQE_SENT)
			break;
		into = blue_psn_diff(una, e->first_psn);
		if (blue_psn_diff(una, e->last_psn) > 0) {
			/*
			 * Acknowledged whole, however far a resend of it had got: an ACK for
			 * the first transmission can arrive after a timeout rewound into this
			 * WQE. Left SENDING, the completer would never retire it (a paced
			 * resend under load stalled a WRITE for good this way).
			 */
			if (into >= 0)
				e->state = BLUE_SWQE_SENT;
			continue;
		}
		if (into < 0)
			continue;
		qp->req.idx = idx;
		qp->req.offset = blue_op_is_atomic(w->opcode) ? 0 : (uint32_t)into * mtu;
		if (qp->req.offset > w->length)
			qp->req.offset = w->length;
		live->sq_psn = una;
		return;
	}
	/* una_psn is past every WQE sent: resume at the first one not fully sent */
	qp->req.idx = idx;
	qp->req.offset = 0;
	live->sq_psn = una;
}

int blue__req_build(struct blue_qp *qp, const struct blue_send_wqe *w, uint32_t off,
		    uint32_t psn, struct blue_pkt *p)
{
	uint32_t fl;

	return build_pkt(qp, w, off, psn, p, &fl);
}

void blue__req_reset(struct blue_qp *qp)
{
	memset(&qp->req, 0, sizeof(qp->req));
}
