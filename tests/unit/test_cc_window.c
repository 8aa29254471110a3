// SPDX-License-Identifier: MIT
/*
 * The delay-based window (runtime/cc_window.c, Swift-like: Kumar et al., SIGCOMM 2020)
 * on synthetic ACK and loss sequences: additive increase of ai packets per RTT below
 * the target delay, a cut in proportion to the excess above it (at most max_mdf, at most
 * once per RTT), the loss cut, the clamps and what it exports; then its parameter checks
 * through blue_qp_set_cc() on a real QP. The smoothed RTT is the transport's
 * (live->srtt_ns, kept by the RTT sampler before on_ack): the tests set it as that would.
 */
#include <criterion/criterion.h>
#include <stddef.h>
#include <string.h>

#include "tests/unit/cc_fixture.h"

static double cwnd_of(const struct cc_alone *a)
{
	return a->cc.s.window.cwnd_milli / 1000.0;
}

/* One RTT's worth of ACKs: a window of single-packet ACKs, each with @rtt_ns. */
static uint64_t ack_round(struct cc_alone *a, uint64_t t, uint64_t rtt_ns, double *model)
{
	uint32_t n = a->live.cwnd, k;

	for (k = 0; k < n; k++) {
		a->ops->on_ack(&a->cc, 1, rtt_ns, t + k);
		if (model)
			*model += a->cc.params.window.ai_pkts / *model;
	}
	return t + rtt_ns;
}

Test(cc_window, starts_at_init_cwnd)
{
	struct cc_alone a;

	cc_alone_init(&a, BLUE_CC_WINDOW, NULL);
	cr_assert_eq(a.live.cwnd, a.cc.params.window.init_cwnd);
	cr_assert_eq(a.live.cwnd, 16);
	cr_assert_eq(a.live.rate_mbps, 0, "the window does not pace");
	cr_assert_eq(a.cc.timer_ns, 0);
	cr_assert_eq(a.live.cc_cuts, 0);
}

Test(cc_window, grows_by_ai_per_rtt_below_target)
{
	struct cc_alone a;
	double model = 16;
	uint64_t t = CC_T0;
	int r;

	cc_alone_init(&a, BLUE_CC_WINDOW, NULL);
	for (r = 1; r <= 10; r++) {
		t = ack_round(&a, t, 50 * CC_US, &model);
		cr_assert(cc_abs(cwnd_of(&a) - model) < 0.02 * r, "RTT %d: cwnd %.3f, want %.3f",
			  r, cwnd_of(&a), model);
		cr_assert_eq(a.live.cwnd, (uint32_t)cwnd_of(&a));
	}
	/* about one packet per RTT (a round acks the whole packets of the window) */
	cr_assert(cwnd_of(&a) > 16 + 9 && cwnd_of(&a) <= 16 + 10,
		  "cwnd %.3f after 10 RTTs from 16", cwnd_of(&a));
	cr_assert_eq(a.live.cwnd, (uint32_t)model);
	cr_assert_eq(a.live.cc_cuts, 0);
}

Test(cc_window, cuts_in_proportion_above_target)
{
	struct cc_alone a;

	/* 200 us against 100: 1 - beta * (200 - 100) / 200 = 1 - 0.8 * 0.5 = 0.6 */
	cc_alone_init(&a, BLUE_CC_WINDOW, NULL);
	a.ops->on_ack(&a.cc, 1, 200 * CC_US, CC_T0);
	cr_assert(cc_abs(cwnd_of(&a) - 16 * (1 - 819 / 1024.0 * 0.5)) < 0.01,
		  "cwnd %.3f", cwnd_of(&a));
	cr_assert_eq(a.live.cwnd, 9);
	cr_assert_eq(a.live.cc_cuts, 1);
	/* 1000 us: 1 - 0.8 * 0.9 = 0.28, but at most max_mdf (1/2) per cut */
	cc_alone_init(&a, BLUE_CC_WINDOW, NULL);
	a.ops->on_ack(&a.cc, 1, 1000 * CC_US, CC_T0);
	cr_assert(cc_abs(cwnd_of(&a) - 8) < 0.01, "cwnd %.3f", cwnd_of(&a));
}

Test(cc_window, at_most_one_cut_per_rtt)
{
	struct cc_alone a;

	cc_alone_init(&a, BLUE_CC_WINDOW, NULL);
	a.live.srtt_ns = 1000 * CC_US;
	a.ops->on_ack(&a.cc, 1, 1000 * CC_US, CC_T0);
	cr_assert_eq(a.live.cc_cuts, 1);
	/* within the srtt of the cut: no second cut, and no growth either above target */
	a.ops->on_ack(&a.cc, 1, 1000 * CC_US, CC_T0 + 500 * CC_US);
	a.ops->on_loss(&a.cc, CC_T0 + 600 * CC_US);
	cr_assert_eq(a.live.cc_cuts, 1);
	cr_assert(cc_abs(cwnd_of(&a) - 8) < 0.01, "cwnd %.3f", cwnd_of(&a));
	/* an srtt later: the next cut */
	a.ops->on_ack(&a.cc, 1, 1000 * CC_US, CC_T0 + 1000 * CC_US);
	cr_assert_eq(a.live.cc_cuts, 2);
	cr_assert(cc_abs(cwnd_of(&a) - 4) < 0.01, "cwnd %.3f", cwnd_of(&a));
}

Test(cc_window, loss_cuts_by_max_mdf)
{
	struct cc_alone a;

	cc_alone_init(&a, BLUE_CC_WINDOW, NULL);
	a.live.srtt_ns = 40 * CC_US;
	a.ops->on_ack(&a.cc, 1, 40 * CC_US, CC_T0);	/* below target: grows 1/16 */
	a.ops->on_loss(&a.cc, CC_T0 + CC_US);
	cr_assert(cc_abs(cwnd_of(&a) - (16 + 1 / 16.0) / 2) < 0.01, "cwnd %.3f", cwnd_of(&a));
	cr_assert_eq(a.live.cwnd, 8);
	a.ops->on_loss(&a.cc, CC_T0 + 2 * CC_US);
	cr_assert_eq(a.live.cc_cuts, 1, "a second loss in the same RTT is the same event");
	a.ops->on_loss(&a.cc, CC_T0 + 42 * CC_US);
	cr_assert_eq(a.live.cc_cuts, 2);
	cr_assert_eq(a.live.cwnd, 4);
}

static void min_4(struct blue_cc_params *p) { p->window.min_cwnd = 4; }

Test(cc_window, clamped_to_min_and_max)
{
	struct cc_alone a;
	uint64_t t = CC_T0;
	int k;

	cc_alone_init(&a, BLUE_CC_WINDOW, NULL);
	a.live.srtt_ns = 10 * CC_US;
	a.ops->on_ack(&a.cc, 1, 10 * CC_US, t);
	for (k = 0; k < 20; k++) {
		t += 20 * CC_US;
		a.ops->on_loss(&a.cc, t);
	}
	cr_assert_eq(a.live.cwnd, 1, "cwnd %u: the floor is min_cwnd 1", a.live.cwnd);
	cr_assert_eq(a.cc.s.window.cwnd_milli, 1000);
	cc_alone_init(&a, BLUE_CC_WINDOW, min_4);
	a.live.srtt_ns = 10 * CC_US;
	a.ops->on_ack(&a.cc, 1, 10 * CC_US, t);
	for (k = 0; k < 20; k++) {
		t += 20 * CC_US;
		a.ops->on_loss(&a.cc, t);
	}
	cr_assert_eq(a.live.cwnd, 4);
	/* growth stops at max_cwnd, 256 */
	cc_alone_init(&a, BLUE_CC_WINDOW, NULL);
	for (k = 0; k < 400; k++)
		t = ack_round(&a, t, 10 * CC_US, NULL);
	cr_assert_eq(a.live.cwnd, 256);
	cr_assert_eq(a.cc.s.window.cwnd_milli, 256000);
}

/* An ACK without a sample (a resend's, Karn) is judged by the srtt; none at all: no move */
Test(cc_window, ack_without_sample_uses_srtt)
{
	struct cc_alone a;

	cc_alone_init(&a, BLUE_CC_WINDOW, NULL);
	a.ops->on_ack(&a.cc, 4, 0, CC_T0);
	cr_assert_eq(a.cc.s.window.cwnd_milli, 16000, "no sample, no srtt: nothing known");
	a.live.srtt_ns = 150 * CC_US;
	a.ops->on_ack(&a.cc, 1, 0, CC_T0 + 1);
	/* 1 - 0.8 * (150 - 100) / 150 */
	cr_assert(cc_abs(cwnd_of(&a) - 16 * (1 - 819 / 1024.0 / 3)) < 0.01, "cwnd %.3f",
		  cwnd_of(&a));
	cr_assert_eq(a.live.cc_cuts, 1);
	cr_assert_eq(a.live.srtt_ns, 150 * CC_US, "the srtt is the transport's to keep");
}

static struct blue_cc_params window_defaults(void)
{
	struct blue_cc_params p;

	blue__cc_defaults(&p, BLUE_CC_WINDOW);
	return p;
}

Test(cc_window, params_rejected_with_their_range)
{
	static const struct {
		size_t off;
		uint32_t val;
		const char *want;
	} bad[] = {
#define W(f) offsetof(struct blue_cc_params, window.f)
		{ W(min_cwnd), 0, "window.min_cwnd 0: use 1..256" },
		{ W(max_cwnd), 257, "window.max_cwnd 257: use 1..256" },
		{ W(max_cwnd), 0, "window.max_cwnd 0: use 1..256" },
		{ W(init_cwnd), 0, "window.init_cwnd 0: use 1..256 (min_cwnd..max_cwnd)" },
		{ W(init_cwnd), 300, "window.init_cwnd 300: use 1..256 (min_cwnd..max_cwnd)" },
		{ W(target_delay_us), 0, "window.target_delay_us 0: use 1..1000000" },
		{ W(ai_pkts), 0, "window.ai_pkts 0: use 1..256" },
		{ W(beta), 1025, "window.beta 1025: use 0..1024" },
		{ W(max_mdf), 1025, "window.max_mdf 1025: use 0..1024" },
		{ W(rtt_gain), 0, "window.rtt_gain 0: use 1..1024" },
#undef W
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct blue_cc_params p = window_defaults();

		memcpy((char *)&p + bad[i].off, &bad[i].val, sizeof(uint32_t));
		cc_expect_rejected(&p, bad[i].want);
	}
}

Test(cc_window, params_min_not_above_max)
{
	struct blue_cc_params p = window_defaults();

	p.window.min_cwnd = 32;
	p.window.max_cwnd = 16;
	cc_expect_rejected(&p, "window.min_cwnd 32: use 1..16 (at most max_cwnd)");
	p.window.min_cwnd = 8;
	p.window.init_cwnd = 4;
	cc_expect_rejected(&p, "window.init_cwnd 4: use 8..16 (min_cwnd..max_cwnd)");
	p.window.init_cwnd = 8;
	cc_expect_accepted(&p);
}

Test(cc_window, defaults_accepted)
{
	struct blue_cc_params p = window_defaults();

	cc_expect_accepted(&p);
	memset(&p.dcqcn, 0, sizeof(p.dcqcn));
	cc_expect_accepted(&p);
}
