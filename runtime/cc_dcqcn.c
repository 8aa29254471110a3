// SPDX-License-Identifier: MIT
/*
 * DCQCN's reaction point (Zhu et al., "Congestion Control for Large-Scale RDMA
 * Deployments", SIGCOMM 2015, section 3.1 and Algorithm 1), over struct blue_cc only.
 *
 *  cut, on a CNP:   RT = RC
 *                   RC = max(RC * (1 - alpha/2), RC * min_dec_pct/100, min_rate)
 *                   alpha = (1 - g) * alpha + g
 *                   T = BC = 0, byte counter = 0, both timers restart
 *  alpha timer:     every alpha_timer_us without a CNP, alpha = (1 - g) * alpha
 *  increase event:  the rate timer (every rate_timer_us) or the byte counter (every
 *                   byte_counter_kb KiB sent) expires; T or BC counts it, then
 *                     max(T, BC) <= F:  fast recovery   RC = (RT + RC) / 2
 *                     min(T, BC) <= F:  additive        RT += R_AI,      RC = (RT+RC)/2
 *                     otherwise:        hyper           RT += i * R_HAI, RC = (RT+RC)/2
 *                   with i = min(T, BC) - F (1, 2, ... : QCN's hyper-active increase),
 *                   RT and RC capped at the line rate, and (RT+RC)/2 rounded up so
 *                   that RC reaches RT.
 *
 * Choices beyond the paper, and why:
 *  - alpha_init is used by the first CNP, however long the flow ran before it: mlx5's
 *    initial_alpha_value is "the value of alpha to use when receiving the first CNP
 *    for a flow". The alpha timer starts at the first CNP.
 *  - The alpha timer costs no wake-up: its decays are applied when the next event (a
 *    send, a CNP, the rate timer) comes, by (1 - g)^periods. Nothing reads alpha between
 *    events but the exported live->alpha, which is thus as old as the last event.
 *  - Recovered (RC = RT = line rate): the rate timer stops, so an idle QP has no timer,
 *    and when the line rate is the link's own (line_rate_mbps 0), pacing goes off
 *    (live->rate_mbps 0): the link paces at its speed already, and the gate then costs
 *    nothing per packet. A configured line_rate_mbps is a ceiling the user asked for,
 *    so it stays a pace.
 */
#include <stddef.h>

#include "runtime/cc.h"

#define ALPHA_SHIFT	10			/* state alpha is 1/2^20; params 1/1024 */
#define ALPHA_ONE	(1024u << ALPHA_SHIFT)
#define FALLBACK_MBPS	10000u			/* no line rate configured, link unknown */
#define MAX_CATCH_UP	1024u			/* rate-timer expiries handled per event */
#define POW_SHIFT	30

static uint64_t line_kbps(const struct blue_cc *cc)
{
	uint64_t mbps = cc->params.dcqcn.line_rate_mbps;

	if (!mbps)
		mbps = cc->link_mbps ? cc->link_mbps : FALLBACK_MBPS;
	return mbps * 1000;
}

/* (1 - g)^n in 1/2^30, by squaring: n may be thousands of periods after an idle time */
static uint64_t keep_pow(uint32_t g, uint64_t n)
{
	uint64_t r = 1ull << POW_SHIFT, b = (uint64_t)(1024 - g) << (POW_SHIFT - 10);

	while (n && r) {
		if (n & 1)
			r = (r * b) >> POW_SHIFT;
		b = (b * b) >> POW_SHIFT;
		n >>= 1;
	}
	return r;
}

static void export(struct blue_cc *cc)
{
	const struct blue_cc_dcqcn_state *s = &cc->s.dcqcn;
	struct blue_qp_ctx *live = cc->live;
	bool recovered = !s->rate_deadline_ns;

	/* the target first: blue:cc_rate reports it with the new rate */
	live->target_rate_mbps = (uint32_t)(s->rate_target_kbps / 1000);
	live->alpha = (s->alpha + (1u << (ALPHA_SHIFT - 1))) >> ALPHA_SHIFT;
	blue__cc_set_rate(cc, recovered && !cc->params.dcqcn.line_rate_mbps ? 0 :
			  (uint32_t)(s->rate_cur_kbps / 1000));
	blue__cc_set_cwnd(cc, 0);
	cc->timer_ns = s->rate_deadline_ns;
}

/* The alpha periods that ended by @now, each without a CNP (a CNP restarts the timer). */
static bool alpha_catch_up(struct blue_cc *cc, uint64_t now)
{
	struct blue_cc_dcqcn_state *s = &cc->s.dcqcn;
	uint64_t period = cc->params.dcqcn.alpha_timer_us * 1000ull, n;

	if (!s->alpha_deadline_ns || now < s->alpha_deadline_ns)
		return false;
	n = 1 + (now - s->alpha_deadline_ns) / period;
	s->alpha = (uint32_t)((s->alpha * keep_pow(cc->params.dcqcn.g, n)) >> POW_SHIFT);
	s->alpha_deadline_ns = s->alpha ? s->alpha_deadline_ns + n * period : 0;
	return true;
}

/* RT and RC for one increase event, T and BC already counting it */
static void increase(struct blue_cc *cc)
{
	const struct blue_cc_dcqcn *p = &cc->params.dcqcn;
	struct blue_cc_dcqcn_state *s = &cc->s.dcqcn;
	uint32_t t = s->timer_steps, bc = s->byte_steps;
	uint32_t lo = t < bc ? t : bc, hi = t < bc ? bc : t;
	uint64_t line = line_kbps(cc);

	if (hi > p->fast_recovery_steps && lo <= p->fast_recovery_steps)
		s->rate_target_kbps += p->rai_mbps * 1000ull;
	else if (lo > p->fast_recovery_steps)
		s->rate_target_kbps += (uint64_t)(lo - p->fast_recovery_steps) *
				       p->rhai_mbps * 1000ull;
	if (s->rate_target_kbps > line)
		s->rate_target_kbps = line;
	s->rate_cur_kbps = (s->rate_target_kbps + s->rate_cur_kbps + 1) / 2;
	if (s->rate_cur_kbps >= line && s->rate_target_kbps >= line) {
		s->rate_cur_kbps = line;
		s->rate_deadline_ns = 0;	/* recovered: nothing left to increase */
	}
}

/* The rate-timer expiries due by @now, in order; a late engine gets them all (bounded). */
static void rate_catch_up(struct blue_cc *cc, uint64_t now)
{
	struct blue_cc_dcqcn_state *s = &cc->s.dcqcn;
	uint64_t period = cc->params.dcqcn.rate_timer_us * 1000ull;
	unsigned int k;

	for (k = 0; s->rate_deadline_ns && now >= s->rate_deadline_ns; k++) {
		if (k == MAX_CATCH_UP) {
			s->rate_deadline_ns = now + period;
			break;
		}
		s->rate_deadline_ns += period;
		s->timer_steps++;
		increase(cc);
	}
}

static void dcqcn_init(struct blue_cc *cc, uint64_t now)
{
	struct blue_cc_dcqcn_state *s = &cc->s.dcqcn;

	(void)now;
	s->rate_cur_kbps = s->rate_target_kbps = line_kbps(cc);
	s->alpha = cc->params.dcqcn.alpha_init << ALPHA_SHIFT;
	s->timer_steps = s->byte_steps = 0;
	s->bytes = 0;
	s->alpha_deadline_ns = s->rate_deadline_ns = 0;
	cc->next_tx_ns = 0;
	export(cc);
}

static void dcqcn_cut(struct blue_cc *cc, uint64_t now)
{
	const struct blue_cc_dcqcn *p = &cc->params.dcqcn;
	struct blue_cc_dcqcn_state *s = &cc->s.dcqcn;
	uint64_t rc, cut, keep, floor = p->min_rate_mbps * 1000ull;

	alpha_catch_up(cc, now);
	rate_catch_up(cc, now);
	rc = s->rate_cur_kbps;
	s->rate_target_kbps = rc;
	cut = rc - ((rc * s->alpha) >> (ALPHA_SHIFT + 11));	/* rc * (1 - alpha/2) */
	keep = rc * p->min_dec_pct / 100;
	if (cut < keep)
		cut = keep;
	if (cut < floor)
		cut = floor;
	s->rate_cur_kbps = cut;
	s->alpha = (uint32_t)(((uint64_t)s->alpha * (1024 - p->g)) >> 10) +
		   (p->g << ALPHA_SHIFT);
	if (s->alpha > ALPHA_ONE)
		s->alpha = ALPHA_ONE;
	s->alpha_deadline_ns = now + p->alpha_timer_us * 1000ull;
	s->timer_steps = s->byte_steps = 0;
	s->bytes = 0;
	s->rate_deadline_ns = now + p->rate_timer_us * 1000ull;
	cc->live->cc_cuts++;
	export(cc);
}

static void dcqcn_on_send(struct blue_cc *cc, uint32_t bytes, uint64_t now)
{
	struct blue_cc_dcqcn_state *s = &cc->s.dcqcn;
	uint64_t b = cc->params.dcqcn.byte_counter_kb * 1024ull;

	/* recovered: only alpha can change, and mostly nothing does (the fast path) */
	if (!s->rate_deadline_ns) {
		if (alpha_catch_up(cc, now))
			export(cc);
		return;
	}
	alpha_catch_up(cc, now);
	rate_catch_up(cc, now);
	if (b) {
		s->bytes += bytes;
		while (s->bytes >= b && s->rate_deadline_ns) {
			s->bytes -= b;
			s->byte_steps++;
			increase(cc);
		}
	}
	export(cc);
}

static uint64_t dcqcn_on_timer(struct blue_cc *cc, uint64_t now)
{
	alpha_catch_up(cc, now);
	rate_catch_up(cc, now);
	export(cc);
	return cc->timer_ns;
}

static int dcqcn_check(const struct blue_cc_params *p, uint64_t link_mbps, char *why,
		       unsigned int len)
{
	const struct blue_cc_dcqcn *d = &p->dcqcn;
	uint64_t line = d->line_rate_mbps ? d->line_rate_mbps :
			link_mbps ? link_mbps : FALLBACK_MBPS;
	const struct blue_cc_range rows[] = {
		/* 1 Tbit/s keeps the kbit/s arithmetic far from overflow */
		{ "line_rate_mbps", d->line_rate_mbps, d->line_rate_mbps ? 1 : 0, 1000000,
		  "(0: the link's speed)" },
		{ "min_rate_mbps", d->min_rate_mbps, 1, line, NULL },
		{ "rai_mbps", d->rai_mbps, 1, line, NULL },
		{ "rhai_mbps", d->rhai_mbps, 1, line, NULL },
		{ "g", d->g, 1, 1024, NULL },
		{ "alpha_init", d->alpha_init, 0, 1024, NULL },
		{ "alpha_timer_us", d->alpha_timer_us, 1, 1000000, NULL },
		{ "rate_timer_us", d->rate_timer_us, 1, 1000000, NULL },
		{ "byte_counter_kb", d->byte_counter_kb, 0, 4194304, "(0: off)" },
		{ "fast_recovery_steps", d->fast_recovery_steps, 1, 31, NULL },
		{ "min_dec_pct", d->min_dec_pct, 0, 100, NULL },
		{ "cnp_interval_us", d->cnp_interval_us, 0, 1000000, NULL },
	};

	return blue__cc_check_ranges("dcqcn", rows, sizeof(rows) / sizeof(rows[0]), why, len);
}

const struct blue_cc_ops blue__cc_dcqcn_ops = {
	.name = "dcqcn",
	.init = dcqcn_init,
	.on_send = dcqcn_on_send,
	.on_cnp = dcqcn_cut,
	.on_timer = dcqcn_on_timer,
	.check = dcqcn_check,
};
