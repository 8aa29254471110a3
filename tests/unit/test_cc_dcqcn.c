// SPDX-License-Identifier: MIT
/*
 * DCQCN's reaction point (runtime/cc_dcqcn.c) on synthetic event sequences and a
 * synthetic clock: the cut by alpha/2 per CNP, alpha's rise per CNP and decay per quiet
 * period, fast recovery, additive and hyper increase by timer and byte counter, the
 * floor and the ceiling, and what it exports; then its parameter checks through
 * blue_qp_set_cc() on a real QP. The expected values are computed here from the
 * paper's formulas (Zhu et al., SIGCOMM 2015, section 3.1), not taken from the code.
 */
#include <criterion/criterion.h>
#include <stddef.h>
#include <string.h>

#include "tests/unit/cc_fixture.h"

#define LINE_KBPS	10000000ull	/* the fixture's 10000 Mbit/s link */

static uint64_t rc_of(const struct cc_alone *a) { return a->cc.s.dcqcn.rate_cur_kbps; }
static uint64_t rt_of(const struct cc_alone *a) { return a->cc.s.dcqcn.rate_target_kbps; }

/* alpha as a fraction, from the exported 1/1024 */
static void assert_alpha(const struct cc_alone *a, double want, const char *when)
{
	long w = (long)(want * 1024.0 + 0.5);

	cr_assert(labs((long)a->live.alpha - w) <= 1, "%s: alpha %u/1024, want %ld/1024",
		  when, a->live.alpha, w);
}

/* Run the algorithm's timer at its own deadline; Return: that deadline. */
static uint64_t fire(struct cc_alone *a)
{
	uint64_t t = a->cc.timer_ns;

	cr_assert_neq(t, 0, "no timer armed");
	cr_assert_eq(a->ops->on_timer(&a->cc, t), a->cc.timer_ns,
		     "on_timer's return and cc->timer_ns differ");
	return t;
}

/* The increase rule, written from the paper: ceil((RT+RC)/2) so RC reaches RT. */
static uint64_t toward(uint64_t rt, uint64_t rc) { return (rt + rc + 1) / 2; }

Test(cc_dcqcn, starts_at_line_rate_unpaced)
{
	struct cc_alone a;

	cc_alone_init(&a, BLUE_CC_DCQCN, NULL);
	cr_assert_eq(rc_of(&a), LINE_KBPS);
	cr_assert_eq(rt_of(&a), LINE_KBPS);
	cr_assert_eq(a.live.rate_mbps, 0, "at the link's own rate pacing is left off");
	cr_assert_eq(a.live.target_rate_mbps, 10000);
	cr_assert_eq(a.live.alpha, a.cc.params.dcqcn.alpha_init);
	cr_assert_eq(a.live.cwnd, 0, "DCQCN has no window");
	cr_assert_eq(a.cc.timer_ns, 0, "nothing to time before a CNP");
}

static void line_2000(struct blue_cc_params *p) { p->dcqcn.line_rate_mbps = 2000; }

Test(cc_dcqcn, configured_line_rate_is_paced)
{
	struct cc_alone a;

	cc_alone_init(&a, BLUE_CC_DCQCN, line_2000);
	cr_assert_eq(rc_of(&a), 2000000);
	cr_assert_eq(a.live.rate_mbps, 2000, "a line rate below the link's is a pace");
	/* no link speed known: the 10000 Mbit/s fallback */
	cc_alone_init(&a, BLUE_CC_DCQCN, NULL);
	a.cc.link_mbps = 0;
	a.ops->init(&a.cc, CC_T0);
	cr_assert_eq(rc_of(&a), LINE_KBPS);
}

Test(cc_dcqcn, first_cnp_halves_the_rate)
{
	struct cc_alone a;
	uint64_t t = CC_T0 + 10 * CC_US;

	cc_alone_init(&a, BLUE_CC_DCQCN, NULL);
	cr_assert_eq(a.cc.params.dcqcn.alpha_init, 1024, "alpha starts at 1");
	a.ops->on_cnp(&a.cc, t);
	cr_assert_eq(rc_of(&a), LINE_KBPS / 2);
	cr_assert_eq(rt_of(&a), LINE_KBPS, "RT keeps the rate before the cut");
	cr_assert_eq(a.live.rate_mbps, 5000);
	cr_assert_eq(a.live.target_rate_mbps, 10000);
	cr_assert_eq(a.live.cc_cuts, 1);
	assert_alpha(&a, 1.0, "(1-g)*1 + g");
	cr_assert_eq(a.cc.timer_ns, t + a.cc.params.dcqcn.rate_timer_us * CC_US,
		     "the rate timer restarts at the CNP");
}

static void alpha_from_zero(struct blue_cc_params *p)
{
	p->dcqcn.alpha_init = 0;
	p->dcqcn.g = 64;	/* 1/16: a visible rise in a few CNPs */
}

/* CNPs closer than the alpha period: each raises alpha, and each cut uses alpha before it */
Test(cc_dcqcn, repeated_cnps_drive_alpha_up)
{
	struct cc_alone a;
	double g = 64 / 1024.0, alpha = 0, rc = (double)LINE_KBPS;
	uint64_t t = CC_T0;
	int k;

	cc_alone_init(&a, BLUE_CC_DCQCN, alpha_from_zero);
	cr_assert_lt(50, a.cc.params.dcqcn.alpha_timer_us);
	for (k = 1; k <= 12; k++) {
		t += 50 * CC_US;
		a.ops->on_cnp(&a.cc, t);
		rc *= 1 - alpha / 2;
		alpha = (1 - g) * alpha + g;
		assert_alpha(&a, alpha, "after a CNP");
		cr_assert(cc_abs((double)rc_of(&a) - rc) <= rc * 1e-4 + k,
			  "CNP %d: RC %llu kbit/s, want %.0f", k,
			  (unsigned long long)rc_of(&a), rc);
	}
	cr_assert_eq(a.live.cc_cuts, 12);
	cr_assert_gt(a.live.alpha, 500, "12 CNPs at g=1/16 bring alpha past 0.5");
}

static void slow_rate_timer(struct blue_cc_params *p)
{
	p->dcqcn.rate_timer_us = 1000000;	/* no increase moves RC in this test */
}

/* No CNP for k alpha periods: alpha = (1-g)^k alpha, whether timers ran or not */
Test(cc_dcqcn, quiet_periods_decay_alpha)
{
	struct cc_alone a, lazy;
	double g, alpha = 1.0, rc_before;
	uint64_t t0 = CC_T0 + CC_US, k_ns;
	int k;

	cc_alone_init(&a, BLUE_CC_DCQCN, NULL);
	g = a.cc.params.dcqcn.g / 1024.0;
	k_ns = a.cc.params.dcqcn.alpha_timer_us * CC_US;
	a.ops->on_cnp(&a.cc, t0);
	for (k = 1; k <= 40; k++) {
		a.ops->on_timer(&a.cc, t0 + k * k_ns);
		alpha *= 1 - g;
		assert_alpha(&a, alpha, "after a quiet period");
	}
	/* the same 40 periods with no event in between: the next CNP sees the decay */
	cc_alone_init(&lazy, BLUE_CC_DCQCN, slow_rate_timer);
	lazy.ops->on_cnp(&lazy.cc, t0);
	rc_before = (double)rc_of(&lazy);
	lazy.ops->on_cnp(&lazy.cc, t0 + 40 * k_ns + 1);
	cr_assert(cc_abs((double)rc_of(&lazy) - rc_before * (1 - alpha / 2)) <= 2,
		  "the cut used alpha %u/1024, not the decayed %.4f",
		  lazy.cc.s.dcqcn.alpha >> 10, alpha);
	assert_alpha(&lazy, (1 - g) * alpha + g, "decay, then the CNP's rise");
}

/* After a cut, F timer expiries each halve the distance to RT */
Test(cc_dcqcn, fast_recovery_halves_the_distance)
{
	struct cc_alone a;
	uint64_t d, f;
	unsigned int k;

	cc_alone_init(&a, BLUE_CC_DCQCN, NULL);
	f = a.cc.params.dcqcn.fast_recovery_steps;
	a.ops->on_cnp(&a.cc, CC_T0);
	d = rt_of(&a) - rc_of(&a);
	cr_assert_eq(d, LINE_KBPS / 2);
	for (k = 1; k <= f; k++) {
		fire(&a);
		d /= 2;
		cr_assert_eq(rt_of(&a), LINE_KBPS, "RT stays in fast recovery");
		cr_assert_eq(rt_of(&a) - rc_of(&a), d, "step %u: distance %llu, want %llu", k,
			     (unsigned long long)(rt_of(&a) - rc_of(&a)),
			     (unsigned long long)d);
		cr_assert_eq(a.cc.s.dcqcn.timer_steps, k);
	}
	cr_assert_eq(a.live.rate_mbps, (uint32_t)(rc_of(&a) / 1000));
	cr_assert_eq(a.live.cc_cuts, 1, "an increase is not a cut");
}

static void small_byte_counter(struct blue_cc_params *p)
{
	p->dcqcn.byte_counter_kb = 64;
}

/*
 * The phase of each increase event, from T and BC after counting it: fast recovery while
 * both are at most F, additive while one is, hyper (the i-th step adds i*R_HAI) after.
 */
static void expect_step(struct cc_alone *a, uint64_t *rt, uint64_t *rc)
{
	const struct blue_cc_dcqcn *p = &a->cc.params.dcqcn;
	uint32_t t = a->cc.s.dcqcn.timer_steps, bc = a->cc.s.dcqcn.byte_steps;
	uint32_t f = p->fast_recovery_steps, lo = t < bc ? t : bc, hi = t < bc ? bc : t;

	if (hi > f && lo <= f)
		*rt += p->rai_mbps * 1000ull;
	else if (lo > f)
		*rt += (lo - f) * p->rhai_mbps * 1000ull;
	*rc = toward(*rt, *rc);
	cr_assert_eq(rt_of(a), *rt, "T %u BC %u: RT %llu, want %llu", t, bc,
		     (unsigned long long)rt_of(a), (unsigned long long)*rt);
	cr_assert_eq(rc_of(a), *rc, "T %u BC %u: RC %llu, want %llu", t, bc,
		     (unsigned long long)rc_of(a), (unsigned long long)*rc);
}

Test(cc_dcqcn, additive_then_hyper_increase)
{
	struct cc_alone a;
	uint64_t rt, rc, t = CC_T0;
	const uint32_t chunk = 64 * 1024;
	int k;

	cc_alone_init(&a, BLUE_CC_DCQCN, small_byte_counter);
	/* two CNPs at once: RT = 5000 Mbit/s, RC = 2500, far below the line */
	a.ops->on_cnp(&a.cc, t);
	a.ops->on_cnp(&a.cc, t);
	rt = rt_of(&a);
	rc = rc_of(&a);
	cr_assert_eq(rt, LINE_KBPS / 2);
	cr_assert_eq(rc, LINE_KBPS / 4);
	/* six byte-counter expiries: BC 1..5 fast recovery, BC 6 additive */
	for (k = 1; k <= 6; k++) {
		a.ops->on_send(&a.cc, chunk, t);
		cr_assert_eq(a.cc.s.dcqcn.byte_steps, (uint32_t)k);
		expect_step(&a, &rt, &rc);
	}
	cr_assert_eq(rt, LINE_KBPS / 2 + a.cc.params.dcqcn.rai_mbps * 1000ull);
	/* timer expiries T 1..5: additive, since BC is past F already; T 6, 7: hyper, i = 1 */
	for (k = 1; k <= 7; k++) {
		fire(&a);
		expect_step(&a, &rt, &rc);
	}
	/* BC 7: min(T, BC) = 7, the second hyper step, 2*R_HAI */
	a.ops->on_send(&a.cc, chunk, a.cc.timer_ns - 1);
	expect_step(&a, &rt, &rc);
	cr_assert_eq(rt, LINE_KBPS / 2 + 6 * a.cc.params.dcqcn.rai_mbps * 1000ull +
			 4 * a.cc.params.dcqcn.rhai_mbps * 1000ull);
	cr_assert_eq(a.live.target_rate_mbps, (uint32_t)(rt / 1000));
}

static void bytes_only(struct blue_cc_params *p)
{
	p->dcqcn.byte_counter_kb = 64;
	p->dcqcn.rate_timer_us = 1000000;	/* 1 s: no timer expiry in this test */
}

Test(cc_dcqcn, byte_counter_triggers_increase)
{
	struct cc_alone a;
	uint64_t rc, t = CC_T0;
	int k;

	cc_alone_init(&a, BLUE_CC_DCQCN, bytes_only);
	a.ops->on_cnp(&a.cc, t);
	rc = rc_of(&a);
	/* 63 KiB of 1 KiB packets, then 1023 bytes: one byte short of an expiry */
	for (k = 0; k < 63; k++)
		a.ops->on_send(&a.cc, 1024, t + k);
	a.ops->on_send(&a.cc, 1023, t + 63);
	cr_assert_eq(rc_of(&a), rc, "no increase before 64 KiB");
	cr_assert_eq(a.cc.s.dcqcn.byte_steps, 0);
	a.ops->on_send(&a.cc, 1, t + 64);
	cr_assert_eq(a.cc.s.dcqcn.byte_steps, 1);
	cr_assert_eq(rc_of(&a), toward(LINE_KBPS, rc), "fast recovery by bytes");
	cr_assert_eq(a.cc.s.dcqcn.timer_steps, 0);
	/* a CNP resets the byte counter: 64 KiB - 1 after it is no expiry */
	a.ops->on_send(&a.cc, 32 * 1024, t + 65);
	a.ops->on_cnp(&a.cc, t + 66);
	rc = rc_of(&a);
	a.ops->on_send(&a.cc, 64 * 1024 - 1, t + 67);
	cr_assert_eq(rc_of(&a), rc);
	cr_assert_eq(a.cc.s.dcqcn.byte_steps, 0);
}

static void floor_100(struct blue_cc_params *p)
{
	p->dcqcn.min_rate_mbps = 100;
	p->dcqcn.min_dec_pct = 0;
}

Test(cc_dcqcn, never_below_min_rate)
{
	struct cc_alone a;
	uint64_t t = CC_T0;
	int k;

	cc_alone_init(&a, BLUE_CC_DCQCN, floor_100);
	for (k = 0; k < 60; k++) {
		t += 50 * CC_US;
		a.ops->on_cnp(&a.cc, t);
		cr_assert_geq(rc_of(&a), 100000, "CNP %d: RC %llu below the floor", k,
			      (unsigned long long)rc_of(&a));
	}
	cr_assert_eq(rc_of(&a), 100000, "60 halvings end on the floor");
	cr_assert_eq(a.live.rate_mbps, 100);
	cr_assert_eq(a.live.cc_cuts, 60);
}

static void keep_80(struct blue_cc_params *p) { p->dcqcn.min_dec_pct = 80; }

Test(cc_dcqcn, a_cut_keeps_min_dec_pct)
{
	struct cc_alone a;

	cc_alone_init(&a, BLUE_CC_DCQCN, keep_80);
	a.ops->on_cnp(&a.cc, CC_T0);
	cr_assert_eq(rc_of(&a), LINE_KBPS * 80 / 100, "alpha/2 = 0.5 would cut to 50%%");
}

/* Recovery ends at the line rate, never above; then the timer stops and pacing is off */
static void check_recovery(uint32_t line_mbps, uint32_t paced_at_line)
{
	struct cc_alone a;
	uint64_t line = line_mbps * 1000ull;
	int k;

	cc_alone_init(&a, BLUE_CC_DCQCN, small_byte_counter);
	if (line_mbps != 10000) {
		a.cc.params.dcqcn.line_rate_mbps = line_mbps;
		a.ops->init(&a.cc, CC_T0);
	}
	a.ops->on_cnp(&a.cc, CC_T0);
	a.ops->on_cnp(&a.cc, CC_T0 + 50 * CC_US);
	for (k = 0; k < 100000 && a.cc.timer_ns; k++) {
		uint64_t t = fire(&a);

		a.ops->on_send(&a.cc, 16 * 1024, t);
		cr_assert_leq(rc_of(&a), line, "RC above the line rate");
		cr_assert_leq(rt_of(&a), line, "RT above the line rate");
	}
	cr_assert_eq(a.cc.timer_ns, 0, "the timer stops once recovered");
	cr_assert_eq(rc_of(&a), line);
	cr_assert_eq(rt_of(&a), line);
	cr_assert_eq(a.live.rate_mbps, paced_at_line);
	cr_assert_eq(a.live.target_rate_mbps, line_mbps);
}

Test(cc_dcqcn, never_above_line_rate)
{
	check_recovery(10000, 0);	/* the link's rate: unpaced */
	check_recovery(2000, 2000);	/* a configured ceiling stays a pace */
}

/*
 * A fluid bottleneck: N DCQCN senders at 10 Gbit/s into one 10 Gbit/s queue that marks
 * with RED (Kmin 5 KB, Kmax 200 KB, Pmax 1%: the paper's switch settings), a receiver
 * that sends at most one CNP per flow every cnp_interval_us, and a fixed feedback
 * delay. Flows start 5 ms apart; over the last half of the run they must share the
 * link fairly (Jain's index >= 0.9), keep it busy, and keep the queue bounded.
 */
#define SIM_N		4
#define SIM_STEP_NS	100ull		/* 100 ns: 125 bytes at 10 Gbit/s */
#define SIM_END_NS	(200ull * 1000 * 1000)
#define SIM_PKT		1024u
#define SIM_DELAY_NS	(10 * CC_US)	/* mark to CNP at the sender */

struct sim_flow {
	struct cc_alone a;
	uint64_t start_ns;
	double credit;			/* bytes the flow's rate allows, not yet sent */
	uint64_t cnp_at;		/* a CNP on its way arrives then; 0 none */
	uint64_t last_cnp_ns;		/* the receiver's per-flow CNP spacing */
	uint64_t sent_late;		/* bytes sent in the measured half */
};

static uint64_t sim_rng = 0x9e3779b97f4a7c15ull;

static double sim_uniform(void)
{
	sim_rng ^= sim_rng << 13;
	sim_rng ^= sim_rng >> 7;
	sim_rng ^= sim_rng << 17;
	return (double)(sim_rng >> 11) / (double)(1ull << 53);
}

static bool red_marks(double queue)
{
	const double kmin = 5e3, kmax = 200e3, pmax = 0.01;

	if (queue <= kmin)
		return false;
	if (queue >= kmax)
		return true;
	return sim_uniform() < pmax * (queue - kmin) / (kmax - kmin);
}

/* One step of flow @f at @rel ns into the run (its clock reads CC_T0 + @rel). */
static void sim_flow_step(struct sim_flow *f, uint64_t rel, double *queue)
{
	struct blue_cc *cc = &f->a.cc;
	uint64_t now = CC_T0 + rel;
	double mbps = cc->live->rate_mbps ? cc->live->rate_mbps : 10000;

	if (f->cnp_at && now >= f->cnp_at) {
		f->cnp_at = 0;
		f->a.ops->on_cnp(cc, now);
	}
	if (cc->timer_ns && now >= cc->timer_ns)
		f->a.ops->on_timer(cc, now);
	f->credit += mbps * 1e6 / 8 * SIM_STEP_NS / 1e9;
	while (f->credit >= SIM_PKT) {
		f->credit -= SIM_PKT;
		f->a.ops->on_send(cc, SIM_PKT, now);
		*queue += SIM_PKT;
		if (rel >= SIM_END_NS / 2)
			f->sent_late += SIM_PKT;
		if (red_marks(*queue) && !f->cnp_at &&
		    now - f->last_cnp_ns >= cc->params.dcqcn.cnp_interval_us * CC_US) {
			f->last_cnp_ns = now;
			f->cnp_at = now + SIM_DELAY_NS;
		}
	}
}

Test(cc_dcqcn_sim, flows_converge_to_a_fair_share)
{
	struct sim_flow fl[SIM_N];
	const double drain = 10000e6 / 8 * SIM_STEP_NS / 1e9;
	double queue = 0, qmax_late = 0, sum = 0, sq = 0, jain, util, out, delivered = 0;
	uint64_t now;
	int i;

	memset(fl, 0, sizeof(fl));
	for (i = 0; i < SIM_N; i++) {
		cc_alone_init(&fl[i].a, BLUE_CC_DCQCN, NULL);
		fl[i].start_ns = (uint64_t)i * 5 * 1000 * 1000;
	}
	for (now = SIM_STEP_NS; now <= SIM_END_NS; now += SIM_STEP_NS) {
		for (i = 0; i < SIM_N; i++)
			if (now >= fl[i].start_ns)
				sim_flow_step(&fl[i], now, &queue);
		out = queue > drain ? drain : queue;
		queue -= out;
		if (now >= SIM_END_NS / 2) {
			delivered += out;
			if (queue > qmax_late)
				qmax_late = queue;
		}
	}
	for (i = 0; i < SIM_N; i++) {
		double x = (double)fl[i].sent_late;

		sum += x;
		sq += x * x;
		cr_log_info("flow %d: %.0f Mbit/s, %llu cuts", i,
			    x * 8 / (SIM_END_NS / 2 / 1e9) / 1e6,
			    (unsigned long long)fl[i].a.live.cc_cuts);
	}
	jain = sum * sum / (SIM_N * sq);
	util = delivered * 8 / (SIM_END_NS / 2 / 1e9) / 10000e6;
	cr_log_info("Jain %.3f, utilisation %.3f, max queue %.0f bytes", jain, util, qmax_late);
	cr_assert_geq(jain, 0.9, "Jain's fairness index %.3f", jain);
	cr_assert_geq(util, 0.9, "the link is used %.0f%%", util * 100);
	/* RED marks every packet past Kmax: the queue stays near it, never runs away */
	cr_assert_leq(qmax_late, 400e3, "the queue grew to %.0f bytes", qmax_late);
}

/* Parameter checks through blue_qp_set_cc(): each bad value names itself and its range */
static struct blue_cc_params dcqcn_defaults(void)
{
	struct blue_cc_params p;

	blue__cc_defaults(&p, BLUE_CC_DCQCN);
	return p;
}

Test(cc_dcqcn, params_rejected_with_their_range)
{
	static const struct {
		size_t off;
		uint32_t val;
		const char *want;
	} bad[] = {
#define DQ(f) offsetof(struct blue_cc_params, dcqcn.f)
		{ DQ(g), 0, "dcqcn.g 0: use 1..1024" },
		{ DQ(g), 1025, "dcqcn.g 1025: use 1..1024" },
		{ DQ(alpha_init), 1025, "dcqcn.alpha_init 1025: use 0..1024" },
		{ DQ(min_rate_mbps), 0, "dcqcn.min_rate_mbps 0: use 1..10000" },
		{ DQ(min_rate_mbps), 10001, "dcqcn.min_rate_mbps 10001: use 1..10000" },
		{ DQ(rai_mbps), 0, "dcqcn.rai_mbps 0: use 1..10000" },
		{ DQ(rhai_mbps), 20000, "dcqcn.rhai_mbps 20000: use 1..10000" },
		{ DQ(alpha_timer_us), 0, "dcqcn.alpha_timer_us 0: use 1..1000000" },
		{ DQ(rate_timer_us), 0, "dcqcn.rate_timer_us 0: use 1..1000000" },
		{ DQ(fast_recovery_steps), 0, "dcqcn.fast_recovery_steps 0: use 1..31" },
		{ DQ(min_dec_pct), 101, "dcqcn.min_dec_pct 101: use 0..100" },
		{ DQ(cnp_interval_us), 1000001, "dcqcn.cnp_interval_us 1000001: use 0..1000000" },
		{ DQ(line_rate_mbps), 2000000, "dcqcn.line_rate_mbps 2000000: use 1..1000000 (0: the link's speed)" },
		{ DQ(byte_counter_kb), 4194305, "dcqcn.byte_counter_kb 4194305: use 0..4194304 (0: off)" },
#undef DQ
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct blue_cc_params p = dcqcn_defaults();

		/* ranges tied to the line rate need a known one, whatever the link says */
		if (bad[i].off != offsetof(struct blue_cc_params, dcqcn.line_rate_mbps))
			p.dcqcn.line_rate_mbps = 10000;
		memcpy((char *)&p + bad[i].off, &bad[i].val, sizeof(uint32_t));
		cc_expect_rejected(&p, bad[i].want);
	}
}

Test(cc_dcqcn, params_checked_against_the_line_rate)
{
	struct blue_cc_params p = dcqcn_defaults();

	/* min_rate above a configured line rate */
	p.dcqcn.line_rate_mbps = 1000;
	p.dcqcn.min_rate_mbps = 1001;
	cc_expect_rejected(&p, "dcqcn.min_rate_mbps 1001: use 1..1000");
	p.dcqcn.min_rate_mbps = 1000;
	cc_expect_accepted(&p);
}

Test(cc_dcqcn, defaults_accepted_and_running)
{
	struct blue_cc_params p = dcqcn_defaults();

	cc_expect_accepted(&p);
	/* the other algorithm's section is not checked: zeros there are fine */
	memset(&p.window, 0, sizeof(p.window));
	cc_expect_accepted(&p);
}
