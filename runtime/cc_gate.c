// SPDX-License-Identifier: MIT
/*
 * The pacing gate (runtime/cc_wire.h). Every frame leaves through blue__qp_tx(); a
 * request of a paced QP asks blue__cc_gate_open() first, and every caller treats its
 * -EAGAIN as "stop, nothing committed, resume next pass". The pass's timer minimum
 * then wakes the engine at next_tx_ns, so event mode and compat's progress thread
 * resume a paced QP without traffic to wake them.
 */
#include "runtime/cc_wire.h"
#include "runtime/codec.h"
#include "runtime/device.h"
#include "runtime/qp.h"

bool blue__cc_gate_open(struct blue_qp *qp)
{
	struct blue_engine *eng = &qp->ctx->eng;

	if (eng->now_ns >= qp->cc.next_tx_ns)
		return true;
	qp->cc.paced_wait = true;
	eng->st.tx_paced++;
	return false;
}

/* max(next_tx_ns, now - burst) + the packet's time on the wire at @rate_mbps */
static void pace_advance(struct blue_cc *cc, uint32_t bytes, uint32_t rate_mbps, uint64_t now)
{
	uint64_t base = cc->next_tx_ns;

	if (now > BLUE_CC_BURST_NS && base < now - BLUE_CC_BURST_NS)
		base = now - BLUE_CC_BURST_NS;
	/* bits / (rate * 10^6 / s) = bits * 1000 / rate ns */
	cc->next_tx_ns = base + (uint64_t)bytes * 8u * 1000u / rate_mbps;
	cc->paced_wait = false;
}

void blue__cc_sent(struct blue_qp *qp, const struct blue_pkt *p)
{
	struct blue_cc *cc = &qp->cc;
	uint64_t now = qp->ctx->eng.now_ns;
	uint32_t bytes = (uint32_t)blue_pkt_frame_len(p);
	uint32_t rate = qp->live->rate_mbps;

	/* below the highest PSN sent is a resend, of either retransmission policy */
	blue__cc_rtt_sent(qp, p->psn, blue_psn_diff(p->psn, qp->req.psn_hi) >= 0);
	if (rate)
		pace_advance(cc, bytes, rate, now);
	if (cc->ops->on_send)
		cc->ops->on_send(cc, bytes, now);
}

void blue__cc_run(struct blue_qp *qp, uint64_t now)
{
	struct blue_cc *cc = &qp->cc;

	if (cc->cnp_owed)
		blue__cc_send_cnp(qp, cc->cnp_psn);
	if (cc->timer_ns && now >= cc->timer_ns)
		cc->timer_ns = cc->ops->on_timer ? cc->ops->on_timer(cc, now) : 0;
}

static uint64_t earlier(uint64_t next, uint64_t t)
{
	return t && (!next || t < next) ? t : next;
}

uint64_t blue__cc_deadline(struct blue_qp *qp, uint64_t next, uint64_t now)
{
	struct blue_cc *cc = &qp->cc;

	/* held, and the moment it may go is ahead: wake then; past: the pass served it */
	if (cc->paced_wait) {
		if (cc->next_tx_ns > now)
			next = earlier(next, cc->next_tx_ns);
		else
			cc->paced_wait = false;
	}
	return earlier(next, cc->timer_ns);
}
