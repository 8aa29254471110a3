// SPDX-License-Identifier: MIT
/*
 * RTT samples from the requester's own clock (runtime/cc_wire.h): no peer support, no
 * timestamps on the wire. One PSN at a time is timed, from the pass that sent it to the
 * pass in which una_psn moved past it, as TCP timed one segment per RTT before
 * timestamps (RFC 6298); Karn's rule: a timing ends unsampled when anything is sent
 * again, since an ACK after a resend cannot say which copy it answers.
 */
#include "runtime/cc_wire.h"
#include "runtime/device.h"
#include "runtime/qp.h"

/* srtt's EWMA gain in 1/1024 (params.window.rtt_gain; TCP's 1/8 when 0) */
#define RTT_GAIN_DEFAULT	128u

void blue__cc_rtt_sent(struct blue_qp *qp, uint32_t psn, bool first)
{
	struct blue_cc *cc = &qp->cc;

	if (!first) {
		cc->rtt_armed = false;
		return;
	}
	if (cc->rtt_armed)
		return;
	cc->rtt_armed = true;
	cc->rtt_psn = psn;
	cc->rtt_sent_ns = qp->ctx->eng.now_ns;
}

static void rtt_sample(struct blue_cc *cc, uint64_t rtt)
{
	struct blue_qp_ctx *live = cc->live;
	uint32_t gain = cc->params.window.rtt_gain ? cc->params.window.rtt_gain :
			RTT_GAIN_DEFAULT;
	int64_t d;

	if (rtt > UINT32_MAX)
		rtt = UINT32_MAX;
	live->rtt_ns = (uint32_t)rtt;
	if (!live->srtt_ns) {
		live->srtt_ns = (uint32_t)rtt;
	} else {
		d = (int64_t)rtt - live->srtt_ns;
		live->srtt_ns = (uint32_t)((int64_t)live->srtt_ns + d * (int64_t)gain / 1024);
	}
	cc->rtt_samples++;
}

void blue__cc_acked(struct blue_qp *qp, uint32_t old_una, uint32_t new_una)
{
	struct blue_cc *cc = &qp->cc;
	uint64_t now = qp->ctx->eng.now_ns, rtt = 0;

	if (cc->rtt_armed && blue_psn_diff(new_una, cc->rtt_psn) > 0) {
		cc->rtt_armed = false;
		/* a response in the pass that sent the request: under the pass's clock */
		rtt = now > cc->rtt_sent_ns ? now - cc->rtt_sent_ns : 1;
		rtt_sample(cc, rtt);
	}
	if (cc->ops->on_ack)
		cc->ops->on_ack(cc, (uint32_t)blue_psn_diff(new_una, old_una), rtt, now);
}

void blue__cc_loss(struct blue_qp *qp)
{
	struct blue_cc *cc = &qp->cc;

	cc->rtt_armed = false;
	if (cc->ops->on_loss)
		cc->ops->on_loss(cc, qp->ctx->eng.now_ns);
}
