// SPDX-License-Identifier: MIT
/*
 * blue-manager's transmit scheduler (tenant.h): strict priority between the classes
 * (blue__progress() walks the real-time tenants' QPs first, then priority, then
 * normal, each walk with the pass's frames left), weighted fairness within a class (a
 * tenant gets its weight's share of a pass's frames on the first round; what is left
 * goes round again with the shares lifted, so no frame of a pass is wasted), and each
 * tenant's rate (a token bucket) on the requests its QPs send.
 */
#include <errno.h>

#include "runtime/codec.h"
#include "runtime/device.h"
#include "runtime/progress.h"
#include "runtime/qp.h"
#include "runtime/tenant.h"

void blue__sched_begin(struct blue_context *ctx)
{
	struct blue_tenant_table *tt = ctx->tenants;
	uint32_t sum[BLUE_CLASS_COUNT] = { 0 };
	unsigned int i;

	ctx->eng.share_lifted = false;
	ctx->eng.top_class = BLUE_CLASS_NORMAL;
	for (i = 0; i < tt->n; i++) {
		if (!tt->t[i].use.qps)
			continue;
		sum[tt->t[i].lim.klass] += tt->t[i].lim.weight;
		if (tt->t[i].lim.klass < ctx->eng.top_class)
			ctx->eng.top_class = tt->t[i].lim.klass;
	}
	for (i = 0; i < tt->n; i++) {
		struct blue_tenant *t = &tt->t[i];
		uint32_t w = sum[t->lim.klass];

		t->pass_sent = 0;
		t->pass_share = w ? (uint32_t)((uint64_t)BLUE_TX_PASS * t->lim.weight / w) : 0;
		if (!t->pass_share)
			t->pass_share = 1;
	}
}

int blue__sched_tx(struct blue_qp *qp, const struct blue_pkt *p)
{
	struct blue_tenant *t = qp->tenant;
	struct blue_engine *eng = &qp->ctx->eng;
	uint64_t wait;

	if (!eng->share_lifted && t->pass_sent >= t->pass_share) {
		eng->share_held = true;
		return -EAGAIN;
	}
	wait = blue__tenant_send_wait(t, (uint32_t)blue_pkt_frame_len(p), eng->now_ns);
	if (wait) {
		/* the pacing deadline wakes the QP when the bucket holds the frame */
		qp->cc.paced_wait = true;
		if (qp->cc.next_tx_ns < eng->now_ns + wait)
			qp->cc.next_tx_ns = eng->now_ns + wait;
		return -EAGAIN;
	}
	return 0;
}

uint32_t blue__sched_window(const struct blue_qp *qp, uint32_t win)
{
	if (qp->tenant->lim.klass > qp->ctx->eng.top_class && win > BLUE_SCHED_WIN_LOW)
		return BLUE_SCHED_WIN_LOW;
	return win;
}

void blue__sched_sent(struct blue_qp *qp, const struct blue_pkt *p)
{
	struct blue_tenant *t = qp->tenant;

	t->pass_sent++;
	t->use.tx_pkts++;
	t->use.tx_bytes += p->payload_len;
}
