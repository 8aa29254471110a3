// SPDX-License-Identifier: MIT
/*
 * Selective retransmission, the requester's side: what comes back (ACKs, hole NAKs,
 * READ responses, atomic ACKs) marks PSNs in three bitmaps (struct blue_sr_req), and
 * the requester resends only the PSNs marked wanted (IRN, Mittal et al., SIGCOMM 2018,
 * adapted to RC's PSN rules).
 *
 * The one fact everything rests on: the responder executes requests in PSN order (its
 * reorder buffer only delays them). So any response that shows the responder executed
 * the request at PSN x also shows it executed every request before x. For a SEND or a
 * WRITE that is the whole job; a READ or an atomic before x whose response has not come
 * lost it, and is asked again (a READ for its missing responses only: a new READ
 * request for that range, as rxe re-requests the rest of a READ under go-back-N; an
 * atomic is answered from the responder's cache, never run twice).
 *
 *  ACK x            executed up to x;
 *  hole NAK (p, n)  executed before p; [p, p+n) lacking: resend it; p+n is held;
 *  READ response x  executed before the READ; x arrived (placed now, in any order);
 *                   the READ's earlier responses not here are lost: ask for them;
 *  atomic ACK x     executed before x; x done.
 *
 * una_psn moves over the PSNs the responder has, and WQEs complete in order as before.
 * A hole is resent once per report, and again only after a local ACK timeout; the
 * timeout resends only the newest PSN not known to have arrived (a tail-loss probe):
 * if it was the lost one, that ends it, and if it was not, the responder answers with
 * the hole (or an ACK), which starts the selective resend. RNR NAKs and errors are
 * handled by the IBA completer as ever (an RNR wait ends in go-back-N).
 */
#include <stdio.h>
#include <string.h>

#include "runtime/cc_wire.h"
#include "runtime/log.h"
#include "runtime/mw.h"
#include "runtime/probes.h"
#include "runtime/progress.h"
#include "runtime/qp.h"

#define WMASK	(BLUE_SR_WIN - 1)

static bool bit_get(const uint64_t *m, uint32_t psn)
{
	uint32_t i = psn & WMASK;

	return (m[i >> 6] >> (i & 63)) & 1;
}

static void bit_set(uint64_t *m, uint32_t psn)
{
	uint32_t i = psn & WMASK;

	m[i >> 6] |= 1ull << (i & 63);
}

static void bit_clr(uint64_t *m, uint32_t psn)
{
	uint32_t i = psn & WMASK;

	m[i >> 6] &= ~(1ull << (i & 63));
}

/* Is @psn in [una_psn, una_psn + window) and below the highest PSN sent? */
static bool tracked(const struct blue_qp *qp, uint32_t psn)
{
	int32_t d = blue_psn_diff(psn, qp->live->una_psn);

	return d >= 0 && (uint32_t)d < BLUE_SR_WIN && blue_psn_diff(psn, qp->req.psn_hi) < 0;
}

/*
 * The bitmaps are indexed by PSN modulo the window; the bits of PSNs una_psn has passed
 * (also when the IBA completer moved it, after an RNR NAK) are cleared before any use.
 */
static void sync_base(struct blue_qp *qp)
{
	struct blue_sr_req *s = &qp->retx.req;
	uint32_t una = qp->live->una_psn, psn;
	int32_t d = blue_psn_diff(una, s->base);

	if (d <= 0) {
		s->base = una;
		return;
	}
	if ((uint32_t)d >= BLUE_SR_WIN) {
		memset(s->rcvd, 0, sizeof(s->rcvd));
		memset(s->want, 0, sizeof(s->want));
		memset(s->resent, 0, sizeof(s->resent));
	} else {
		for (psn = s->base; psn != una; psn = blue_psn_add(psn, 1)) {
			bit_clr(s->rcvd, psn);
			bit_clr(s->want, psn);
			bit_clr(s->resent, psn);
		}
	}
	s->base = una;
}

/* The send-ring index of the WQE whose PSNs hold @psn; false if none went out. */
static bool wqe_at(const struct blue_qp *qp, uint32_t psn, uint32_t *out)
{
	uint32_t idx = blue_ring_cons_own(&qp->sq.ring);
	uint32_t end = blue__sq_end(qp);

	for (; idx != end; idx++) {
		const struct blue_swqe_eng *e = blue__sq_eng(qp, idx);

		if (e->state != BLUE_SWQE_SENDING && e->state != BLUE_SWQE_SENT)
			return false;
		if (blue_psn_diff(psn, e->first_psn) >= 0 && blue_psn_diff(psn, e->last_psn) <= 0) {
			*out = idx;
			return true;
		}
	}
	return false;
}

static bool wants_response(const struct blue_send_wqe *w)
{
	return blue_op_wants_resp(w->opcode);
}

/*
 * The responder has @psn. News of that is progress even when una_psn cannot move yet
 * (a hole below it): retry_cnt counts timeouts that bring no news, as IBA counts those
 * without forward progress.
 */
static void mark_rcvd(struct blue_qp *qp, uint32_t psn)
{
	if (bit_get(qp->retx.req.rcvd, psn))
		return;
	bit_set(qp->retx.req.rcvd, psn);
	blue__comp_progress(qp);
}

/* Ask for @psn again, unless it arrived or was resent since the last timeout. */
static void want(struct blue_qp *qp, uint32_t psn)
{
	struct blue_sr_req *s = &qp->retx.req;

	if (!tracked(qp, psn) || bit_get(s->rcvd, psn) || bit_get(s->resent, psn))
		return;
	bit_set(s->want, psn);
	s->pending = true;
}

/*
 * The responder executed every request before @end: SEND and WRITE packets are done;
 * READ and atomic PSNs without their response lost it.
 */
static void executed_before(struct blue_qp *qp, uint32_t end)
{
	uint32_t idx = blue_ring_cons_own(&qp->sq.ring);
	uint32_t prod = blue__sq_end(qp), psn, lo;

	for (; idx != prod; idx++) {
		const struct blue_send_wqe *w = blue__sq_wqe(qp, idx);
		const struct blue_swqe_eng *e = blue__sq_eng(qp, idx);

		if (e->state != BLUE_SWQE_SENDING && e->state != BLUE_SWQE_SENT)
			return;
		if (blue__wr_is_local(w->opcode))
			continue;	/* it sent nothing (req.c local_op) */
		if (blue_psn_diff(e->first_psn, end) >= 0)
			return;
		lo = blue_psn_diff(e->first_psn, qp->live->una_psn) < 0 ? qp->live->una_psn :
		     e->first_psn;
		for (psn = lo; blue_psn_diff(psn, e->last_psn) <= 0 &&
		     blue_psn_diff(psn, end) < 0; psn = blue_psn_add(psn, 1)) {
			if (!tracked(qp, psn))
				return;
			if (wants_response(w))
				want(qp, psn);
			else
				mark_rcvd(qp, psn);
		}
	}
}

/* Move una_psn over what the responder has; complete what that finished. */
static void advance(struct blue_qp *qp)
{
	struct blue_sr_req *s = &qp->retx.req;
	uint32_t una = qp->live->una_psn, hi = qp->req.psn_hi;

	while (una != hi && bit_get(s->rcvd, una)) {
		bit_clr(s->rcvd, una);
		bit_clr(s->want, una);
		bit_clr(s->resent, una);
		una = blue_psn_add(una, 1);
	}
	if (una == qp->live->una_psn)
		return;
	blue__comp_una_advance(qp, una);
	s->base = una;
	blue__comp_retire(qp);
}

static void hole_nak(struct blue_qp *qp, uint32_t psn, uint32_t n)
{
	struct blue_sr_req *s = &qp->retx.req;
	uint32_t held = blue_psn_add(psn, n), i, idx;
	bool had = s->pending;

	executed_before(qp, psn);
	if (tracked(qp, held) && wqe_at(qp, held, &idx) &&
	    !wants_response(blue__sq_wqe(qp, idx)))
		mark_rcvd(qp, held);
	for (i = 0; i < n && i < BLUE_SR_WIN; i++)
		want(qp, blue_psn_add(psn, i));
	if (s->pending && !had) {
		qp->live->retransmits++;
		blue__cc_loss(qp);	/* a hole is a loss, as a sequence NAK is */
		BLUE_PROBE_RETX(qp->qpn, psn, BLUE_RETX_NAK, blue_psn_add(psn, n));
	}
	advance(qp);
}

/* A READ response at @psn of the READ WQE at @idx. Return: false on a bad response. */
static bool read_resp(struct blue_qp *qp, const struct blue_pkt *p, uint32_t idx)
{
	const struct blue_send_wqe *w = blue__sq_wqe(qp, idx);
	const struct blue_swqe_eng *e = blue__sq_eng(qp, idx);
	uint32_t mtu = blue__qp_mtu(qp), off, len, psn;
	char why[96];

	off = (uint32_t)blue_psn_diff(p->psn, e->first_psn) * mtu;
	len = w->length - off < mtu ? w->length - off : mtu;
	if (off > w->length || p->payload_len != len) {
		snprintf(why, sizeof(why), "READ response 0x%x carries %u bytes, %u expected",
			 p->psn, p->payload_len, len);
		blue__comp_fail_wqe(qp, BLUE_WC_BAD_RESP_ERR, why);
		return false;
	}
	if (!bit_get(qp->retx.req.rcvd, p->psn)) {
		if (!blue__comp_place(qp, w, off, p->payload, p->payload_len, why, sizeof(why))) {
			blue__comp_fail_wqe(qp, BLUE_WC_LOC_PROT_ERR, why);
			return false;
		}
		mark_rcvd(qp, p->psn);
	}
	executed_before(qp, e->first_psn);
	/* responses leave in order: the READ's earlier ones not here were lost */
	for (psn = e->first_psn; psn != p->psn; psn = blue_psn_add(psn, 1))
		want(qp, psn);
	return true;
}

bool blue__sr_comp_rx(struct blue_qp *qp, const struct blue_pkt *p)
{
	struct blue_qp_ctx *live = qp->live;
	uint8_t syn = p->aeth.syndrome;
	uint32_t idx, n;
	uint64_t orig;
	char why[96];

	sync_base(qp);
	switch (p->opcode) {
	case BLUE_OP_RC_ACKNOWLEDGE:
		if ((syn & BLUE_AETH_TYPE_MASK) == BLUE_AETH_ACK) {
			/* ACK of x: everything up to x; late or foreign ones say nothing new */
			if (blue_psn_diff(p->psn, live->una_psn) >= 0 &&
			    blue_psn_diff(p->psn, qp->req.psn_hi) < 0) {
				executed_before(qp, blue_psn_add(p->psn, 1));
				advance(qp);
			}
			return true;
		}
		if (syn != BLUE_NAK_SR_HOLE)
			return false;	/* RNR, sequence error, errors: IBA's completer */
		live->naks_rcvd++;
		BLUE_PROBE3(nak_rcvd, qp->qpn, p->psn, syn);
		n = p->aeth.msn;
		/* an RNR wait ends in go-back-N anyway; an old or bogus report is ignored */
		if (blue__comp_rnr_waiting(qp) || !n || blue_psn_diff(p->psn, live->una_psn) < 0 ||
		    blue_psn_diff(blue_psn_add(p->psn, n), qp->req.psn_hi) >= 0)
			return true;
		hole_nak(qp, p->psn, n);
		return true;

	case BLUE_OP_RC_READ_RESPONSE_FIRST:
	case BLUE_OP_RC_READ_RESPONSE_MIDDLE:
	case BLUE_OP_RC_READ_RESPONSE_LAST:
	case BLUE_OP_RC_READ_RESPONSE_ONLY:
		/* duplicates, late ones, and those too far ahead to track are dropped */
		if (!tracked(qp, p->psn) || !wqe_at(qp, p->psn, &idx))
			return true;
		if (blue_op_is_aw(blue__sq_wqe(qp, idx)->opcode)) {
			/* ATOMIC WRITE/FLUSH: a zero-length READ RESPONSE Only is their ACK */
			if (p->opcode != BLUE_OP_RC_READ_RESPONSE_ONLY || p->payload_len)
				return true;
			if (!bit_get(qp->retx.req.rcvd, p->psn))
				mark_rcvd(qp, p->psn);
			executed_before(qp, p->psn);
			advance(qp);
			return true;
		}
		if (!blue_op_is_read(blue__sq_wqe(qp, idx)->opcode))
			return true;
		if (read_resp(qp, p, idx))
			advance(qp);
		return true;

	case BLUE_OP_RC_ATOMIC_ACKNOWLEDGE:
		if (!tracked(qp, p->psn) || !wqe_at(qp, p->psn, &idx) ||
		    !blue_op_is_atomic(blue__sq_wqe(qp, idx)->opcode))
			return true;
		if (!bit_get(qp->retx.req.rcvd, p->psn)) {
			/* the original value lands in host order, as ibverbs returns it */
			orig = p->atmack.orig;
			if (!blue__comp_place(qp, blue__sq_wqe(qp, idx), 0, &orig,
					      sizeof(orig), why, sizeof(why))) {
				blue__comp_fail_wqe(qp, BLUE_WC_LOC_PROT_ERR, why);
				return true;
			}
			mark_rcvd(qp, p->psn);
		}
		executed_before(qp, p->psn);
		advance(qp);
		return true;

	default:
		return true;
	}
}

/*
 * Ask again for what @idx's WQE lacks from @psn on: the one packet of a SEND or WRITE,
 * every missing response of a READ, an atomic.
 */
static void want_wqe_from(struct blue_qp *qp, uint32_t idx, uint32_t psn)
{
	const struct blue_swqe_eng *e = blue__sq_eng(qp, idx);

	if (!wants_response(blue__sq_wqe(qp, idx))) {
		want(qp, psn);
		return;
	}
	for (psn = e->first_psn; blue_psn_diff(psn, e->last_psn) <= 0;
	     psn = blue_psn_add(psn, 1))
		want(qp, psn);
}

bool blue__sr_timeout(struct blue_qp *qp)
{
	struct blue_qp_ctx *live = qp->live;
	struct blue_sr_req *s = &qp->retx.req;
	uint32_t psn, idx;
	bool again;

	sync_base(qp);
	if (live->sq_psn != qp->req.psn_hi)
		return false;	/* a go-back-N resend (after an RNR wait) is under way */
	/* a second timeout without news: the oldest missing packet goes too */
	again = live->retry_left < qp->retry_cnt;
	if (!blue__comp_retry_take(qp, BLUE_RETX_TIMEOUT,
				   "local ACK timeout: retry count exhausted"))
		return true;
	/* a resend may have been lost too: every hole may be resent once more */
	memset(s->resent, 0, sizeof(s->resent));
	/* the tail-loss probe: the newest PSN not known to have arrived */
	psn = qp->req.psn_hi;
	do {
		psn = blue_psn_add(psn, BLUE_PSN_MASK);
	} while (psn != live->una_psn && (!tracked(qp, psn) || bit_get(s->rcvd, psn)));
	if (wqe_at(qp, psn, &idx))
		want_wqe_from(qp, idx, psn);
	if (again && psn != live->una_psn && wqe_at(qp, live->una_psn, &idx))
		want_wqe_from(qp, idx, live->una_psn);
	blue__comp_timer_restart(qp);
	return true;
}

/* Send what is wanted, within this pass's budget. Return: packets. */
static int sr_resend(struct blue_qp *qp)
{
	struct blue_sr_req *s = &qp->retx.req;
	struct blue_qp_ctx *live = qp->live;
	uint32_t idx = blue_ring_cons_own(&qp->sq.ring);
	uint32_t prod = blue__sq_end(qp), psn, run, i;
	int sent = 0;

	sync_base(qp);
	for (; idx != prod; idx++) {
		const struct blue_send_wqe *w = blue__sq_wqe(qp, idx);
		const struct blue_swqe_eng *e = blue__sq_eng(qp, idx);

		if (e->state != BLUE_SWQE_SENDING && e->state != BLUE_SWQE_SENT)
			break;
		if (blue__wr_is_local(w->opcode))
			continue;	/* it sent nothing (req.c local_op) */
		psn = blue_psn_diff(e->first_psn, live->una_psn) < 0 ? live->una_psn :
		      e->first_psn;
		for (; blue_psn_diff(psn, e->last_psn) <= 0 && tracked(qp, psn);
		     psn = blue_psn_add(psn, run)) {
			run = 1;
			if (!bit_get(s->want, psn))
				continue;
			/* not sent yet by a go-back-N resend under way: that sends it */
			if (blue_psn_diff(psn, live->sq_psn) >= 0) {
				bit_clr(s->want, psn);
				continue;
			}
			/* a READ asks for a run of missing responses at once */
			if (blue_op_is_read(w->opcode))
				while (blue_psn_diff(blue_psn_add(psn, run), e->last_psn) <= 0 &&
				       tracked(qp, blue_psn_add(psn, run)) &&
				       bit_get(s->want, blue_psn_add(psn, run)))
					run++;
			if (blue__req_resend(qp, idx, psn, run))
				return sent;	/* no budget left: the rest next pass */
			for (i = 0; i < run; i++) {
				bit_clr(s->want, blue_psn_add(psn, i));
				bit_set(s->resent, blue_psn_add(psn, i));
			}
			sent++;
		}
	}
	s->pending = false;
	return sent;
}

void blue__sr_req_reset(struct blue_qp *qp)
{
	memset(&qp->retx.req, 0, sizeof(qp->retx.req));
	qp->retx.req.base = qp->live->una_psn;
}

/* The holes go first in a pass; not while the QP may not send, nor in an RNR wait. */
int blue__sr_req_resend(struct blue_qp *qp)
{
	uint8_t st = qp->live->state;

	if (!qp->retx.req.pending || blue__comp_rnr_waiting(qp) ||
	    (st != BLUE_QPS_RTS && st != BLUE_QPS_SQD))
		return 0;
	return sr_resend(qp);
}
