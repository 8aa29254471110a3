// SPDX-License-Identifier: MIT
/*
 * The responder's reorder buffer, for selective retransmission (IRN-style; see
 * BLUE_NAK_SR_HOLE in include/blue/wire.h for the wire side).
 *
 * Under go-back-N a request ahead of the expected PSN is dropped and NAK'd once (IBA
 * 9.7.5.1.2), so everything after a loss is sent twice. Here it is copied into a slot
 * of a per-QP buffer instead (BLUE_SR_SLOTS requests ahead of the expected PSN at most;
 * one further ahead is dropped and comes again), and the hole is reported. When the
 * request at the expected PSN arrives, it runs, and then every held request that is
 * next in PSN order runs through the same checks as if it had just arrived: nothing is
 * executed out of order, so memory, receive completions and atomics see exactly the
 * order go-back-N gives.
 *
 * The hole [expected PSN, first held PSN) is reported the first time it is seen, again
 * for every request that asks for an ACK while it is open (the requester's resends and
 * tail probes always ask), and for every duplicate SEND/WRITE; then the next hole once
 * the first is filled.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/log.h"
#include "runtime/qp.h"

#define SLOT_MASK	(BLUE_SR_SLOTS - 1)

static struct blue_sr_slot *slot_of(struct blue_qp *qp, uint32_t psn)
{
	struct blue_sr_slot *s = &qp->retx.resp.slot[psn & SLOT_MASK];

	return s->valid && s->pkt.psn == psn ? s : NULL;
}

/* The buffer is allocated at the first hold, sized for the path MTU. */
static bool sr_alloc(struct blue_qp *qp)
{
	struct blue_sr_resp *r = &qp->retx.resp;

	if (r->slot)
		return true;
	r->buf_len = blue__qp_mtu(qp);
	r->slot = calloc(BLUE_SR_SLOTS, sizeof(*r->slot));
	r->buf = malloc((size_t)BLUE_SR_SLOTS * r->buf_len);
	if (!r->slot || !r->buf) {
		blue__logf("QP 0x%x: no memory for the reorder buffer: out-of-order requests "
			   "are dropped and resent", qp->qpn);
		blue__sr_resp_fini(qp);
		return false;
	}
	return true;
}

/* Report the first hole: from the expected PSN to the first held request. */
static void sr_resp_nak(struct blue_qp *qp)
{
	uint32_t rq = qp->live->rq_psn, i;

	if (!qp->retx.resp.nheld)
		return;
	for (i = 1; i < BLUE_SR_SLOTS; i++) {
		if (slot_of(qp, blue_psn_add(rq, i))) {
			blue__resp_queue_hole(qp, rq, i);
			return;
		}
	}
}

/* Beyond the window, or larger than a slot: dropped, the requester resends it. */
bool blue__sr_resp_ahead(struct blue_qp *qp, const struct blue_pkt *p)
{
	struct blue_qp_ctx *live = qp->live;
	struct blue_sr_resp *r = &qp->retx.resp;
	int32_t d = blue_psn_diff(p->psn, live->rq_psn);
	bool reported = live->last_nak_psn == live->rq_psn &&
			(live->last_nak_syndrome == BLUE_NAK_SR_HOLE ||
			 (live->last_nak_syndrome & BLUE_AETH_TYPE_MASK) == BLUE_AETH_RNR_NAK);
	struct blue_sr_slot *s;
	uint32_t i;

	if (d <= 0 || (uint32_t)d >= BLUE_SR_SLOTS || !sr_alloc(qp))
		return true;	/* beyond the window: dropped, the requester resends it */
	if (p->payload_len > r->buf_len)
		return true;	/* no request carries more than the path MTU */
	if (!slot_of(qp, p->psn)) {
		i = p->psn & SLOT_MASK;
		s = &r->slot[i];
		s->pkt = *p;
		if (p->payload_len) {
			memcpy(r->buf + (size_t)i * r->buf_len, p->payload, p->payload_len);
			s->pkt.payload = r->buf + (size_t)i * r->buf_len;
		}
		s->valid = true;
		r->nheld++;
		live->sr_held = r->nheld;
	}
	/*
	 * After an RNR NAK for the expected PSN the requester waits and goes back N: a hole
	 * report would only be ignored.
	 */
	if (!reported || (p->ackreq && (live->last_nak_syndrome & BLUE_AETH_TYPE_MASK) !=
			  BLUE_AETH_RNR_NAK))
		sr_resp_nak(qp);
	return true;
}

/* While nothing is held the duplicate gets IBA's ACK: there is no hole to report. */
bool blue__sr_resp_duplicate(struct blue_qp *qp, const struct blue_pkt *p)
{
	(void)p;
	if (!qp->retx.resp.nheld)
		return false;
	sr_resp_nak(qp);
	return true;
}

/*
 * Forget held copies the expected PSN has passed: a request that was held and then ran
 * when its resend arrived in order (a drain stopped at it for want of room), or a bogus
 * request inside a READ's PSNs. Keeps nheld exact.
 */
static void purge_behind(struct blue_qp *qp)
{
	struct blue_sr_resp *r = &qp->retx.resp;
	uint32_t rq = qp->live->rq_psn, i, n = 0;
	struct blue_sr_slot *s;
	int32_t d;

	qp->live->sr_held = r->nheld;
	if (!r->nheld)
		return;
	for (i = 0; i < BLUE_SR_SLOTS; i++) {
		s = &r->slot[i];
		if (!s->valid)
			continue;
		d = blue_psn_diff(s->pkt.psn, rq);
		if (d < 0 || (uint32_t)d >= BLUE_SR_SLOTS)
			s->valid = false;
		else
			n++;
	}
	r->nheld = n;
	qp->live->sr_held = n;
}

void blue__sr_resp_drain(struct blue_qp *qp)
{
	struct blue_qp_ctx *live = qp->live;
	struct blue_sr_resp *r = &qp->retx.resp;
	struct blue_sr_slot *s;
	uint32_t before, ran = 0;

	if (!r->nheld || r->draining)
		return;
	r->draining = true;
	r->stalled = false;
	while ((s = slot_of(qp, live->rq_psn)) != NULL) {
		before = live->rq_psn;
		blue__resp_replay(qp, &s->pkt);
		if (live->state == BLUE_QPS_ERR)
			break;
		if (live->rq_psn == before) {
			/*
			 * Not run: no room to answer (resume next pass), or an RNR NAK (the
			 * requester resends it after its wait, and the drain goes on then).
			 */
			r->stalled = !(live->last_nak_psn == before &&
				       (live->last_nak_syndrome & BLUE_AETH_TYPE_MASK) ==
				       BLUE_AETH_RNR_NAK);
			break;
		}
		s->valid = false;
		r->nheld--;
		ran++;
	}
	r->draining = false;
	purge_behind(qp);
	if (live->state == BLUE_QPS_ERR) {
		blue__sr_resp_drop(qp);
		return;
	}
	if (!ran)
		return;
	/* say how far the responder got: the next hole, or all of it */
	if (r->nheld)
		sr_resp_nak(qp);
	else
		blue__resp_queue_ack(qp, blue_psn_add(live->rq_psn, BLUE_PSN_MASK));
}

void blue__sr_resp_resume(struct blue_qp *qp)
{
	if (qp->retx.resp.stalled)
		blue__sr_resp_drain(qp);
}

void blue__sr_resp_drop(struct blue_qp *qp)
{
	struct blue_sr_resp *r = &qp->retx.resp;

	if (r->slot)
		memset(r->slot, 0, BLUE_SR_SLOTS * sizeof(*r->slot));
	r->nheld = 0;
	r->stalled = false;
	qp->live->sr_held = 0;
}

void blue__sr_resp_fini(struct blue_qp *qp)
{
	struct blue_sr_resp *r = &qp->retx.resp;

	blue__sr_resp_drop(qp);
	free(r->slot);
	free(r->buf);
	r->slot = NULL;
	r->buf = NULL;
}
