// SPDX-License-Identifier: MIT
/*
 * The completer (IBA 9.7, the requester side: what comes back). Responses are matched
 * against the oldest send WQE not yet completed; ACKs are cumulative, and a response
 * for a later PSN implicitly acknowledges every SEND and WRITE before it (a READ or an
 * atomic cannot be acknowledged that way: its data is missing, so that is a retry).
 * Completions leave in send-queue order.
 *
 * Timers (one per QP, timer_deadline_ns in the live context): the local ACK timeout,
 * 4.096 us * 2^timeout, restarted whenever una_psn moves; and the RNR wait. Both fire
 * from blue__comp_run() on the progress path.
 *
 * Retry counting as rxe does it: a timeout and a sequence-error NAK each use one of
 * retry_cnt, but a NAK for a retry already under way uses none; an RNR NAK uses one of
 * rnr_retry (7 = infinite); progress (una_psn moving) refills both.
 */
#include <stdio.h>
#include <string.h>

#include "runtime/aw.h"
#include "runtime/cc_wire.h"
#include "runtime/log.h"
#include "runtime/mr_copy.h"
#include "runtime/probes.h"
#include "runtime/progress.h"
#include "runtime/qp.h"

const char *const blue__comp_state_name[BLUE_COMP__MAX] = {
	[BLUE_COMP_GET_WQE] = "get_wqe",
	[BLUE_COMP_CHECK_PSN] = "check_psn",
	[BLUE_COMP_CHECK_ACK] = "check_ack",
	[BLUE_COMP_READ] = "read",
	[BLUE_COMP_ATOMIC] = "atomic",
	[BLUE_COMP_WRITE_SEND] = "write_send",
	[BLUE_COMP_COMPLETE] = "complete",
	[BLUE_COMP_RETRY] = "retry",
	[BLUE_COMP_RNR] = "rnr",
	[BLUE_COMP_ERROR] = "error",
	[BLUE_COMP_DONE] = "done",
};

/* IBA table 45: the RNR NAK timer field, in units of 10 us. Code 0 is the longest. */
static const uint32_t rnr_timer_10us[32] = {
	65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
	256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288,
	16384, 24576, 32768, 49152,
};

uint64_t blue__rnr_timer_ns(unsigned int code)
{
	return (uint64_t)rnr_timer_10us[code & 31] * 10000ull;
}

static void timer_set(struct blue_qp *qp, enum blue_timer_kind kind, uint64_t deadline)
{
	qp->comp.timer = (uint8_t)kind;
	qp->live->timer_deadline_ns = kind == BLUE_TIMER_NONE ? 0 : deadline;
}

/*
 * The ACK timer runs while something is unacknowledged; IBA timeout 0 means never. Its
 * length is 4.096 us * 2^timeout, or base + k * (PSNs in flight) (blue__retx_timeout_ns()).
 */
static void ack_timer_restart(struct blue_qp *qp, uint64_t now)
{
	struct blue_qp_ctx *live = qp->live;
	uint64_t t;

	if (qp->comp.timer == BLUE_TIMER_RNR)
		return;
	t = blue__retx_timeout_ns(qp);
	if (live->una_psn == qp->req.psn_hi || !t)
		timer_set(qp, BLUE_TIMER_NONE, 0);
	else
		timer_set(qp, BLUE_TIMER_ACK, now + t);
}

void blue__comp_timer_restart(struct blue_qp *qp)
{
	ack_timer_restart(qp, qp->ctx->eng.now_ns);
}

void blue__comp_sent(struct blue_qp *qp, uint64_t now)
{
	uint64_t t;

	if (qp->comp.timer != BLUE_TIMER_NONE)
		return;
	t = blue__retx_timeout_ns(qp);
	if (t)
		timer_set(qp, BLUE_TIMER_ACK, now + t);
}

void blue__comp_progress(struct blue_qp *qp)
{
	qp->live->retry_left = qp->retry_cnt;
}

bool blue__comp_rnr_waiting(const struct blue_qp *qp)
{
	return qp->comp.rnr_wait;
}

bool blue__comp_retry_take(struct blue_qp *qp, enum blue_retx_reason reason, const char *why)
{
	struct blue_qp_ctx *live = qp->live;

	if (!live->retry_left) {
		blue__comp_fail_wqe(qp, BLUE_WC_RETRY_EXC_ERR, why);
		return false;
	}
	live->retry_left--;
	live->retransmits++;
	blue__cc_loss(qp);	/* on_loss (cc_rtt.c), under either retransmission policy */
	BLUE_PROBE_RETX(qp->qpn, live->una_psn, reason, qp->req.psn_hi);
	return true;
}

/* una_psn moves to @psn: forward progress refills the retry counts. */
void blue__comp_una_advance(struct blue_qp *qp, uint32_t psn)
{
	struct blue_qp_ctx *live = qp->live;
	uint32_t old = live->una_psn;

	if (blue_psn_diff(psn, old) <= 0)
		return;
	live->una_psn = psn;
	blue__cc_acked(qp, old, psn);	/* RTT sample, on_ack (cc_rtt.c) */
	blue__comp_progress(qp);
	live->rnr_left = qp->rnr_retry;
	qp->comp.in_retry = false;
	/* an ACK can cover packets sent before a rewind and not resent yet: skip them */
	if (blue_psn_diff(psn, live->sq_psn) > 0)
		blue__req_rewind(qp);
	ack_timer_restart(qp, qp->ctx->eng.now_ns);
}

/* Fail the oldest WQE with @status and move the QP to ERROR; the flush reports it. */
void blue__comp_fail_wqe(struct blue_qp *qp, enum blue_wc_status status, const char *why)
{
	struct blue_swqe_eng *e = blue__sq_eng(qp, blue_ring_cons_own(&qp->sq.ring));

	e->state = BLUE_SWQE_ERROR;
	e->status = (uint8_t)status;
	blue__qp_error(qp, why);
}

/*
 * Go back N from una_psn, if the retry count allows. Once a retry from una_psn is under
 * way, whatever was in flight before it (responses, and further NAKs for the same gap:
 * the responder NAKs a gap once, but copies and late ones arrive) starts no other, as
 * in rxe's completer (comp.started_retry); otherwise retry_cnt + 1 copies of one NAK
 * would move the QP to ERROR. Only forward progress (una_psn moving) or the local ACK
 * timeout ends that retry.
 */
static void retry(struct blue_qp *qp, enum blue_retx_reason reason, const char *why)
{
	struct blue_qp_ctx *live = qp->live;

	if (qp->comp.in_retry && qp->comp.retry_psn == live->una_psn)
		return;
	if (!blue__comp_retry_take(qp, reason, why))
		return;
	qp->comp.in_retry = true;
	qp->comp.retry_psn = live->una_psn;
	blue__req_rewind(qp);
	timer_set(qp, BLUE_TIMER_NONE, 0);
	ack_timer_restart(qp, qp->ctx->eng.now_ns);
}

bool blue__comp_place(struct blue_qp *qp, const struct blue_send_wqe *w, uint32_t off,
		      const void *data, uint32_t len, char *why, size_t whylen)
{
	enum blue_mr_verdict v;
	uint32_t bad = 0;

	v = blue__copy_data(qp->ctx, qp->pd, blue_wqe_sges(w), w->num_sge, off, (void *)data,
			    len, BLUE_ACCESS_LOCAL_WRITE, BLUE_COPY_TO_MEM, NULL, &bad);
	if (v == BLUE_MR_OK)
		return true;
	snprintf(why, whylen, "WQE wr_id %llu, SGE %u: %s", (unsigned long long)w->wr_id, bad,
		 blue__mr_verdict_str(v));
	return false;
}

/*
 * Whether @op may carry the READ response at @psn of a READ WQE. A READ resumed after a
 * retry is a new request for the rest, answered FIRST (or ONLY) from wherever it
 * starts; so FIRST may come in the middle, but LAST and ONLY only at the end.
 */
static bool read_resp_fits(const struct blue_swqe_eng *e, uint32_t psn, uint8_t op)
{
	bool at_end = psn == e->last_psn;

	switch (op) {
	case BLUE_OP_RC_READ_RESPONSE_ONLY:
	case BLUE_OP_RC_READ_RESPONSE_LAST:
		return at_end && (op == BLUE_OP_RC_READ_RESPONSE_ONLY || psn != e->first_psn);
	case BLUE_OP_RC_READ_RESPONSE_FIRST:
		return !at_end;
	case BLUE_OP_RC_READ_RESPONSE_MIDDLE:
		return !at_end && psn != e->first_psn;
	default:
		return false;
	}
}

/*
 * Whether a NAK reports a gap, to go back N from: a sequence error, or a hole NAK from
 * a peer that negotiated selective retransmission while this QP's policy left the NAK
 * to IBA's completer (it goes back N: blue_qp_set_retx() on one side only, or a hole
 * report that came after a switch).
 */
static bool nak_is_gap(const struct blue_qp *qp, uint8_t syndrome)
{
	return syndrome == BLUE_NAK_PSN_SEQ_ERR ||
	       (syndrome == BLUE_NAK_SR_HOLE &&
		(qp->retx.peer_caps & BLUE_CM_CAP_SELECTIVE_RETX));
}

static enum blue_wc_status nak_status(uint8_t syndrome)
{
	switch (syndrome) {
	case BLUE_NAK_INVALID_REQ:	return BLUE_WC_REM_INV_REQ_ERR;
	case BLUE_NAK_REM_ACCESS_ERR:	return BLUE_WC_REM_ACCESS_ERR;
	case BLUE_NAK_REM_OP_ERR:	return BLUE_WC_REM_OP_ERR;
	case BLUE_NAK_INVALID_RD_REQ:	return BLUE_WC_REM_INV_RD_REQ_ERR;
	default:			return BLUE_WC_BAD_RESP_ERR;
	}
}

void blue__comp_rx(struct blue_qp *qp, const struct blue_pkt *p)
{
	struct blue_qp_ctx *live = qp->live;
	const struct blue_retx_ops *rx = qp->retx.ops;
	enum blue_comp_state st = BLUE_COMP_GET_WQE;
	enum blue_wc_status err_status = BLUE_WC_SUCCESS;
	const struct blue_send_wqe *w = NULL;
	struct blue_swqe_eng *e = NULL;
	uint32_t psn = p->psn, mtu = blue__qp_mtu(qp), off, want;
	uint8_t syn = p->aeth.syndrome;
	bool is_ack = p->opcode == BLUE_OP_RC_ACKNOWLEDGE;
	uint64_t orig;
	char why[96];

	if (live->state != BLUE_QPS_RTS && live->state != BLUE_QPS_SQD &&
	    live->state != BLUE_QPS_SQE)
		return;
	live->rx_pkts++;
	live->rx_bytes += p->payload_len;
	/* the policy may keep its own books (selective); what it leaves is IBA's */
	if (rx->comp_rx && rx->comp_rx(qp, p))
		return;

	for (;;) {
		switch (st) {
		case BLUE_COMP_GET_WQE:
			if (!blue__sq_count(qp)) {
				st = BLUE_COMP_DONE;
				break;
			}
			w = blue__sq_wqe(qp, blue_ring_cons_own(&qp->sq.ring));
			e = blue__sq_eng(qp, blue_ring_cons_own(&qp->sq.ring));
			st = (e->state == BLUE_SWQE_SENDING || e->state == BLUE_SWQE_SENT) ?
			     BLUE_COMP_CHECK_PSN : BLUE_COMP_DONE;
			break;

		case BLUE_COMP_CHECK_PSN:
			/* older than una_psn: a duplicate or a late response, already used */
			if (blue_psn_diff(psn, live->una_psn) < 0 ||
			    blue_psn_diff(psn, qp->req.psn_hi) >= 0) {
				st = BLUE_COMP_DONE;
				break;
			}
			if (blue_psn_diff(psn, e->last_psn) > 0) {
				/* about a later WQE: this one is implicitly acknowledged, unless
				 * it is a READ or an atomic whose response has not come */
				if (blue_op_wants_resp(w->opcode)) {
					snprintf(why, sizeof(why), "responses to the READ/atomic at "
						 "PSN 0x%x never came", e->first_psn);
					st = BLUE_COMP_RETRY;
				} else if (e->state != BLUE_SWQE_SENT) {
					st = BLUE_COMP_DONE;
				} else {
					blue__comp_una_advance(qp, blue_psn_add(e->last_psn, 1));
					st = BLUE_COMP_COMPLETE;
				}
				break;
			}
			st = BLUE_COMP_CHECK_ACK;
			break;

		case BLUE_COMP_CHECK_ACK:
			st = BLUE_COMP_DONE;
			if (p->opcode >= BLUE_OP_RC_READ_RESPONSE_FIRST &&
			    p->opcode <= BLUE_OP_RC_READ_RESPONSE_ONLY) {
				if (blue_op_is_aw(w->opcode)) {
					st = blue__comp_aw_resp(qp, e, p, why, sizeof(why),
								&err_status);
					break;
				}
				if (!blue_op_is_read(w->opcode))
					break;
				if (psn != live->una_psn) {
					snprintf(why, sizeof(why), "READ response 0x%x came, 0x%x "
						 "expected", psn, live->una_psn);
					st = BLUE_COMP_RETRY;
					break;
				}
				if (!read_resp_fits(e, psn, p->opcode)) {
					err_status = BLUE_WC_BAD_RESP_ERR;
					snprintf(why, sizeof(why), "READ response opcode 0x%x out "
						 "of order", p->opcode);
					st = BLUE_COMP_ERROR;
					break;
				}
				st = BLUE_COMP_READ;
			} else if (p->opcode == BLUE_OP_RC_ATOMIC_ACKNOWLEDGE) {
				if (blue_op_is_atomic(w->opcode))
					st = BLUE_COMP_ATOMIC;
			} else if (is_ack) {
				switch (syn & BLUE_AETH_TYPE_MASK) {
				case BLUE_AETH_ACK:
					if (blue_op_wants_resp(w->opcode)) {
						/* the responder is past it, its response is lost */
						snprintf(why, sizeof(why), "ACK 0x%x inside an "
							 "unanswered READ/atomic", psn);
						st = BLUE_COMP_RETRY;
					} else {
						st = BLUE_COMP_WRITE_SEND;
					}
					break;
				case BLUE_AETH_RNR_NAK:
					BLUE_PROBE3(nak_rcvd, qp->qpn, psn, syn);
					st = BLUE_COMP_RNR;
					break;
				case BLUE_AETH_NAK:
					live->naks_rcvd++;
					BLUE_PROBE3(nak_rcvd, qp->qpn, psn, syn);
					if (nak_is_gap(qp, syn)) {
						/* IBA 9.7: a NAK acknowledges every PSN before it */
						if (qp->comp.rnr_wait)
							break;	/* the RNR wait rewinds anyway */
						blue__comp_una_advance(qp, psn);
						snprintf(why, sizeof(why), "sequence-error NAK at "
							 "0x%x", psn);
						st = BLUE_COMP_RETRY;
					} else {
						blue__comp_una_advance(qp, psn);
						err_status = nak_status(syn);
						snprintf(why, sizeof(why), "NAK 0x%02x (%s) at PSN "
							 "0x%x", syn, blue_wc_status_str(err_status),
							 psn);
						st = BLUE_COMP_ERROR;
					}
					break;
				default:
					break;	/* reserved syndromes are ignored */
				}
			}
			break;

		case BLUE_COMP_READ:
			off = (uint32_t)blue_psn_diff(psn, e->first_psn) * mtu;
			want = w->length - off < mtu ? w->length - off : mtu;
			if (off > w->length || p->payload_len != want) {
				err_status = BLUE_WC_BAD_RESP_ERR;
				snprintf(why, sizeof(why), "READ response 0x%x carries %u bytes, "
					 "%u expected", psn, p->payload_len, want);
				st = BLUE_COMP_ERROR;
				break;
			}
			if (!blue__comp_place(qp, w, off, p->payload, p->payload_len, why,
					      sizeof(why))) {
				err_status = BLUE_WC_LOC_PROT_ERR;
				st = BLUE_COMP_ERROR;
				break;
			}
			blue__comp_una_advance(qp, blue_psn_add(psn, 1));
			st = psn == e->last_psn ? BLUE_COMP_COMPLETE : BLUE_COMP_DONE;
			break;

		case BLUE_COMP_ATOMIC:
			/* the original value lands in host order, as ibverbs returns it */
			orig = p->atmack.orig;
			if (!blue__comp_place(qp, w, 0, &orig, sizeof(orig), why, sizeof(why))) {
				err_status = BLUE_WC_LOC_PROT_ERR;
				st = BLUE_COMP_ERROR;
				break;
			}
			blue__comp_una_advance(qp, blue_psn_add(psn, 1));
			st = BLUE_COMP_COMPLETE;
			break;

		case BLUE_COMP_WRITE_SEND:
			blue__comp_una_advance(qp, blue_psn_add(psn, 1));
			st = (psn == e->last_psn && e->state == BLUE_SWQE_SENT) ?
			     BLUE_COMP_COMPLETE : BLUE_COMP_DONE;
			break;

		case BLUE_COMP_COMPLETE:
			/* a full CQ: blue__comp_run() completes it once there is room */
			if (blue__sq_complete(qp, BLUE_WC_SUCCESS))
				st = BLUE_COMP_DONE;
			else
				st = BLUE_COMP_GET_WQE;	/* one ACK may cover more WQEs */
			break;

		case BLUE_COMP_RETRY:
			retry(qp, BLUE_RETX_NAK, why);
			st = BLUE_COMP_DONE;
			break;

		case BLUE_COMP_RNR:
			/* the NAK'd PSN is where to resume; all before it is acknowledged */
			blue__comp_una_advance(qp, psn);
			live->rnr_events++;
			if (qp->rnr_retry != 7) {	/* 7 = retry forever (IBA 9.7) */
				if (!live->rnr_left) {
					blue__comp_fail_wqe(qp, BLUE_WC_RNR_RETRY_EXC_ERR,
						 "RNR retry count exhausted: the peer posts no receive");
					st = BLUE_COMP_DONE;
					break;
				}
				live->rnr_left--;
			}
			qp->comp.rnr_wait = true;
			timer_set(qp, BLUE_TIMER_RNR, qp->ctx->eng.now_ns +
				  blue__rnr_timer_ns(syn & 0x1f));
			BLUE_PROBE4(rnr, qp->qpn, psn, blue__rnr_timer_ns(syn & 0x1f),
				    live->rnr_left);
			st = BLUE_COMP_DONE;
			break;

		case BLUE_COMP_ERROR:
			blue__comp_fail_wqe(qp, err_status, why);
			st = BLUE_COMP_DONE;
			break;

		case BLUE_COMP_DONE:
		default:
			qp->comp.state = st;
			return;
		}
	}
}

bool blue__comp_retire(struct blue_qp *qp)
{
	struct blue_qp_ctx *live = qp->live;
	struct blue_swqe_eng *e;

	while (blue__sq_count(qp)) {
		e = blue__sq_eng(qp, blue_ring_cons_own(&qp->sq.ring));
		if (e->state == BLUE_SWQE_ERROR) {
			blue__qp_error(qp, "a WQE failed locally (see the line above)");
			return false;
		}
		if (e->state != BLUE_SWQE_SENT || blue_psn_diff(live->una_psn, e->last_psn) <= 0)
			break;
		if (blue__sq_complete(qp, BLUE_WC_SUCCESS))
			break;
	}
	return true;
}

void blue__comp_run(struct blue_qp *qp, uint64_t now)
{
	struct blue_qp_ctx *live = qp->live;

	if (live->state != BLUE_QPS_RTS && live->state != BLUE_QPS_SQD &&
	    live->state != BLUE_QPS_SQE)
		return;
	/* complete what is acknowledged but found the CQ full, and local failures */
	if (!blue__comp_retire(qp))
		return;
	if (!live->timer_deadline_ns || now < live->timer_deadline_ns)
		return;
	BLUE_PROBE4(timer, qp->qpn, qp->comp.timer, live->timer_deadline_ns, live->una_psn);
	switch (qp->comp.timer) {
	case BLUE_TIMER_RNR:
		/* the RNR wait is over: resend from the NAK'd PSN */
		timer_set(qp, BLUE_TIMER_NONE, 0);
		qp->comp.rnr_wait = false;
		live->retransmits++;
		BLUE_PROBE_RETX(qp->qpn, live->una_psn, BLUE_RETX_RNR, qp->req.psn_hi);
		blue__req_rewind(qp);
		break;
	case BLUE_TIMER_ACK:
		if (live->una_psn == qp->req.psn_hi) {
			timer_set(qp, BLUE_TIMER_NONE, 0);
			break;
		}
		/* the policy may answer it (selective: probe with the newest packet) */
		if (qp->retx.ops->comp_timeout && qp->retx.ops->comp_timeout(qp))
			break;
		/* the local ACK timeout: a retry even when a rewind is under way */
		qp->comp.in_retry = false;
		retry(qp, BLUE_RETX_TIMEOUT, "local ACK timeout: retry count exhausted");
		break;
	default:
		timer_set(qp, BLUE_TIMER_NONE, 0);
		break;
	}
}

void blue__comp_reset(struct blue_qp *qp)
{
	memset(&qp->comp, 0, sizeof(qp->comp));
}
