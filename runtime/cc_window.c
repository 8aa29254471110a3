// SPDX-License-Identifier: MIT
/*
 * A delay-based congestion window, after Swift (Kumar et al., "Swift: Delay is Simple
 * and Effective for Congestion Control in the Datacenter", SIGCOMM 2020, section 3),
 * over struct blue_cc only. The requester's own RTT samples (send to ACK, from on_ack)
 * are the delay; no help from the peer or the switch. The smoothed RTT is the
 * transport's (live->srtt_ns, the rtt_gain EWMA the RTT sampler keeps and updates
 * before it calls on_ack), not a second copy kept here.
 *
 *  on an ACK of n packets, delay = its sample (the srtt when it has none):
 *    delay < target:  cwnd += ai_pkts * n / cwnd          (ai_pkts per RTT)
 *    otherwise:       cwnd *= max(1 - beta * (delay - target) / delay, 1 - max_mdf)
 *                     at most once per srtt
 *  on a loss (ACK timeout, sequence NAK):
 *                     cwnd *= 1 - max_mdf, at most once per srtt
 *  cwnd stays in [min_cwnd, max_cwnd]; live->cwnd is its whole packets (>= 1).
 *
 * Swift's target is a base plus a per-hop and a flow-count term; here it is one
 * parameter, target_delay_us. On veth the RTT includes the peer's software pass (tens
 * of microseconds) as well as the queue, so the target must sit above that floor:
 * measure srtt_ns unloaded and set the target a queue's worth above it. Swift's pacing
 * below one packet of window is left out: min_cwnd is at least 1.
 */
#include <stddef.h>

#include "runtime/cc.h"

#define MILLI	1000ull

static void export(struct blue_cc *cc)
{
	const struct blue_cc_window_state *s = &cc->s.window;

	blue__cc_set_cwnd(cc, (uint32_t)(s->cwnd_milli / MILLI));
}

static void clamp(struct blue_cc *cc)
{
	const struct blue_cc_window *p = &cc->params.window;
	struct blue_cc_window_state *s = &cc->s.window;

	if (s->cwnd_milli < p->min_cwnd * MILLI)
		s->cwnd_milli = p->min_cwnd * MILLI;
	if (s->cwnd_milli > p->max_cwnd * MILLI)
		s->cwnd_milli = p->max_cwnd * MILLI;
}

static void window_init(struct blue_cc *cc, uint64_t now)
{
	struct blue_cc_window_state *s = &cc->s.window;

	(void)now;
	s->cwnd_milli = cc->params.window.init_cwnd * MILLI;
	s->last_cut_ns = 0;
	s->cut_seen = false;
	clamp(cc);
	cc->live->alpha = 0;
	cc->live->target_rate_mbps = 0;
	blue__cc_set_rate(cc, 0);	/* after the target: the probe reports both */
	cc->next_tx_ns = 0;
	cc->timer_ns = 0;
	export(cc);
}

/* Swift's can_decrease: one cut per RTT, so that one queue build-up is one cut. */
static bool may_cut(const struct blue_cc *cc, uint64_t now)
{
	const struct blue_cc_window_state *s = &cc->s.window;

	return !s->cut_seen || now - s->last_cut_ns >= cc->live->srtt_ns;
}

/* cwnd *= @keep/1024, counted as one cut */
static void cut(struct blue_cc *cc, uint64_t keep, uint64_t now)
{
	struct blue_cc_window_state *s = &cc->s.window;

	s->cwnd_milli = s->cwnd_milli * keep / 1024;
	s->last_cut_ns = now;
	s->cut_seen = true;
	cc->live->cc_cuts++;
	clamp(cc);
}

static void window_on_ack(struct blue_cc *cc, uint32_t pkts, uint64_t rtt_ns, uint64_t now)
{
	const struct blue_cc_window *p = &cc->params.window;
	struct blue_cc_window_state *s = &cc->s.window;
	uint64_t target = p->target_delay_us * 1000ull, delay;

	delay = rtt_ns ? rtt_ns : cc->live->srtt_ns;
	if (!delay)
		return;		/* nothing measured yet: no basis to move */
	if (delay < target) {
		/* ai per RTT: a window's worth of ACKs adds ai packets */
		s->cwnd_milli += p->ai_pkts * MILLI * MILLI * pkts / s->cwnd_milli;
		clamp(cc);
	} else if (may_cut(cc, now)) {
		uint64_t by_delay = p->beta * (delay - target) / delay;
		uint64_t keep = 1024 - (by_delay < p->max_mdf ? by_delay : p->max_mdf);

		cut(cc, keep, now);
	}
	export(cc);
}

static void window_on_loss(struct blue_cc *cc, uint64_t now)
{
	if (may_cut(cc, now))
		cut(cc, 1024 - cc->params.window.max_mdf, now);
	export(cc);
}

static int window_check(const struct blue_cc_params *p, uint64_t link_mbps, char *why,
			unsigned int len)
{
	const struct blue_cc_window *w = &p->window;
	/* the bounds of the others, when those are in range themselves */
	uint64_t max = w->max_cwnd >= 1 && w->max_cwnd <= 256 ? w->max_cwnd : 256;
	uint64_t min = w->min_cwnd >= 1 && w->min_cwnd <= max ? w->min_cwnd : 1;
	/* max_cwnd: the requester's fixed window (req.c), which this one only narrows */
	const struct blue_cc_range rows[] = {
		{ "max_cwnd", w->max_cwnd, 1, 256, NULL },
		{ "min_cwnd", w->min_cwnd, 1, max, max < 256 ? "(at most max_cwnd)" : NULL },
		{ "init_cwnd", w->init_cwnd, min, max, "(min_cwnd..max_cwnd)" },
		{ "target_delay_us", w->target_delay_us, 1, 1000000, NULL },
		{ "ai_pkts", w->ai_pkts, 1, 256, NULL },
		{ "beta", w->beta, 0, 1024, NULL },
		{ "max_mdf", w->max_mdf, 0, 1024, NULL },
		{ "rtt_gain", w->rtt_gain, 1, 1024, NULL },
	};

	(void)link_mbps;
	return blue__cc_check_ranges("window", rows, sizeof(rows) / sizeof(rows[0]), why, len);
}

const struct blue_cc_ops blue__cc_window_ops = {
	.name = "window",
	.init = window_init,
	.on_ack = window_on_ack,
	.on_loss = window_on_loss,
	.check = window_check,
};
