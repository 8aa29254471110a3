// SPDX-License-Identifier: MIT
/*
 * Tuning while it runs (include/blue/tune.h, runtime/tune*.c): the key table covers
 * every parameter struct member once, under the member's name; the parser's answers
 * to good and bad input; and, over the loopback pair, the engine's half of the
 * protocol: a request written as bluectl writes it lands at the next pass, through
 * blue_qp_set_cc/set_retx, refusals are recorded, interface defaults reach existing
 * and new QPs, and a per-QP override wins over them.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <blue/tune.h>

#include "runtime/cc_wire.h"
#include "runtime/device.h"
#include "runtime/qp.h"
#include "runtime/tune.h"
#include "tests/unit/rc_fixture.h"

/* ---- the key table ---------------------------------------------------------------- */

/* Every byte of struct blue_tune_vals but padding and reserved room is one key's. */
Test(tune_keys, every_member_is_one_key)
{
	unsigned char owner[sizeof(struct blue_tune_vals)];
	size_t i, covered = 0, spare;
	int k;

	memset(owner, 0xff, sizeof(owner));
	for (k = 0; k < BLUE_TUNE__MAX; k++) {
		for (i = 0; i < 4; i++) {
			cr_assert_eq(owner[blue_tune_keys[k].off + i], 0xff,
				     "%s overlaps another key", blue_tune_keys[k].name);
			owner[blue_tune_keys[k].off + i] = (unsigned char)k;
		}
		covered += 4;
		cr_assert_eq(blue_tune_key_find(blue_tune_keys[k].name), k);
		cr_assert_leq(blue_tune_keys[k].lo, blue_tune_keys[k].hi);
	}
	spare = sizeof(((struct blue_cc_dcqcn *)0)->reserved) +
		sizeof(((struct blue_cc_window *)0)->reserved) +
		sizeof(((struct blue_tune_vals *)0)->pad);
	cr_assert_eq(covered + spare, sizeof(struct blue_tune_vals),
		     "%zu bytes have no key: a new parameter needs a BLUE_TUNE_KEYS line",
		     sizeof(struct blue_tune_vals) - covered - spare);
}

Test(tune_keys, names_are_the_struct_members)
{
	cr_assert_eq(blue_tune_keys[blue_tune_key_find("dcqcn.rai_mbps")].off,
		     offsetof(struct blue_tune_vals, cc.dcqcn.rai_mbps));
	cr_assert_eq(blue_tune_keys[blue_tune_key_find("window.target_delay_us")].off,
		     offsetof(struct blue_tune_vals, cc.window.target_delay_us));
	cr_assert_eq(blue_tune_keys[blue_tune_key_find("cc.algo")].off,
		     offsetof(struct blue_tune_vals, cc.algo));
	cr_assert_eq(blue_tune_keys[blue_tune_key_find("retx.k_us")].off,
		     offsetof(struct blue_tune_vals, retx.k_us));
	cr_assert_eq(blue_tune_key_find("diag"), BLUE_TUNE_DIAG);
	cr_assert_eq(blue_tune_key_find("cc.dcqcn.rai_mbps"), -1);
	cr_assert_eq(blue_tune_key_find("rai_mbps"), -1);
}

static uint32_t parse_ok(const char *kv, int key)
{
	struct blue_tune_vals v;
	uint64_t mask = 0;
	char err[2048];

	memset(&v, 0, sizeof(v));
	cr_assert_eq(blue_tune_parse(kv, &v, &mask, err, sizeof(err)), 0, "%s: %s", kv, err);
	cr_assert_eq(mask, BLUE_TUNE_BIT(key), "%s set mask 0x%llx", kv,
		     (unsigned long long)mask);
	return blue_tune_get(&v, key);
}

Test(tune_keys, parses_numbers_and_names)
{
	cr_assert_eq(parse_ok("dcqcn.rai_mbps=80", BLUE_TUNE_DCQCN_RAI), 80);
	cr_assert_eq(parse_ok("dcqcn.line_rate_mbps=0x100", BLUE_TUNE_DCQCN_LINE_RATE), 256);
	cr_assert_eq(parse_ok("cc.algo=window", BLUE_TUNE_CC_ALGO), BLUE_CC_WINDOW);
	cr_assert_eq(parse_ok("cc.algo=dcqcn", BLUE_TUNE_CC_ALGO), BLUE_CC_DCQCN);
	cr_assert_eq(parse_ok("cc.algo=0", BLUE_TUNE_CC_ALGO), BLUE_CC_NONE);
	cr_assert_eq(parse_ok("cc.ecn=on", BLUE_TUNE_CC_ECN), 1);
	cr_assert_eq(parse_ok("retx.policy=selective", BLUE_TUNE_RETX_POLICY), 1);
	cr_assert_eq(parse_ok("retx.policy=go-back-n", BLUE_TUNE_RETX_POLICY), 0);
	cr_assert_eq(parse_ok("retx.timer=linear", BLUE_TUNE_RETX_TIMER), 1);
	cr_assert_eq(parse_ok("diag=drops,lat", BLUE_TUNE_DIAG), 3);
	cr_assert_eq(parse_ok("diag=lat", BLUE_TUNE_DIAG), 2);
	cr_assert_eq(parse_ok("diag=off", BLUE_TUNE_DIAG), 0);
	cr_assert_eq(parse_ok("window.max_cwnd=256", BLUE_TUNE_WINDOW_MAX_CWND), 256);
}

/* @kv is refused, and the message has each of the NULL-terminated @needles. */
static void parse_bad(const char *kv, const char *const *needles)
{
	struct blue_tune_vals v;
	uint64_t mask = 0;
	char err[2048] = "";

	memset(&v, 0, sizeof(v));
	cr_assert_eq(blue_tune_parse(kv, &v, &mask, err, sizeof(err)), -EINVAL, "%s taken", kv);
	cr_assert_eq(mask, 0, "%s set a bit though refused", kv);
	for (; *needles; needles++)
		cr_assert(strstr(err, *needles), "%s: '%s' lacks '%s'", kv, err, *needles);
}

Test(tune_keys, bad_input_names_what_is_wrong)
{
	parse_bad("dcqcn.bogus=1", (const char *const[]){ "unknown key 'dcqcn.bogus'",
		  "dcqcn.rai_mbps", "window.target_delay_us", "retx.policy", "diag", NULL });
	parse_bad("dcqcn.g=2000", (const char *const[]){ "dcqcn.g", "1 to 1024", NULL });
	parse_bad("dcqcn.g=0", (const char *const[]){ "dcqcn.g", "1 to 1024", NULL });
	parse_bad("dcqcn.rai_mbps=-1", (const char *const[]){ "dcqcn.rai_mbps", NULL });
	parse_bad("dcqcn.rai_mbps=12abc", (const char *const[]){ "whole number", NULL });
	parse_bad("dcqcn.rai_mbps=", (const char *const[]){ "dcqcn.rai_mbps", NULL });
	parse_bad("cc.algo=cubic", (const char *const[]){ "cc.algo", "none, dcqcn or window",
		  NULL });
	parse_bad("cc.algo=3", (const char *const[]){ "cc.algo", NULL });
	parse_bad("retx.policy=fast", (const char *const[]){ "go-back-n or selective", NULL });
	parse_bad("diag=drops,cpu", (const char *const[]){ "drops,lat", NULL });
	parse_bad("dcqcn.rai_mbps", (const char *const[]){ "key=value", NULL });
	parse_bad("=5", (const char *const[]){ "key=value", NULL });
}

/* What `bluectl get` prints, `bluectl set` takes back: every key, at its default. */
Test(tune_keys, format_parses_back)
{
	struct blue_tune_vals d, v;
	char kv[128], val[64], err[2048];
	uint64_t mask;
	int k;

	blue_tune_defaults(&d);
	cr_assert_eq(d.cc.dcqcn.rai_mbps, 40);
	cr_assert_eq(d.cc.window.init_cwnd, 16);
	for (k = 0; k < BLUE_TUNE__MAX; k++) {
		blue_tune_format(k, &d, val, sizeof(val));
		snprintf(kv, sizeof(kv), "%s=%s", blue_tune_keys[k].name, val);
		memset(&v, 0xa5, sizeof(v));
		mask = 0;
		cr_assert_eq(blue_tune_parse(kv, &v, &mask, err, sizeof(err)), 0, "%s: %s", kv,
			     err);
		cr_assert_eq(blue_tune_get(&v, k), blue_tune_get(&d, k), "%s", kv);
	}
}

/* ---- the engine's half, over the loopback pair ------------------------------------ */

static struct blue_tune_entry *qp_entry(struct rc_side *s, struct blue_qp *qp)
{
	return &blue__tune_map(s->ctx)[1 + blue_qpn_slot(blue_qp_num(qp))];
}

/* Write @kvs (NULL-terminated) as `bluectl set` does into entry @idx for @qpn. */
static uint64_t request(struct rc_side *s, unsigned int idx, uint32_t qpn, const char **kvs)
{
	struct blue_tune_vals v;
	uint64_t mask = 0;
	char err[2048];

	memset(&v, 0, sizeof(v));
	for (; *kvs; kvs++)
		cr_assert_eq(blue_tune_parse(*kvs, &v, &mask, err, sizeof(err)), 0, "%s", err);
	return blue_tune_request(blue__tune_map(s->ctx), idx, qpn, &v, mask);
}

Test(tune_engine, qp_request_lands_at_the_next_pass)
{
	struct blue_cc_params p;
	struct blue_retx_attr r;
	struct blue_tune_entry *e;
	struct rc_opts o;
	struct rc_fx fx;
	uint64_t gen;
	uint32_t qpn;

	rc_opts_default(&o);
	rc_fx_init(&fx, &o);
	qpn = blue_qp_num(fx.a.qp);
	e = qp_entry(&fx.a, fx.a.qp);
	/* created: the entry already says what the QP runs */
	cr_assert_eq(e->qpn, qpn);
	cr_assert_eq(e->eff.cc.dcqcn.rai_mbps, 40);
	cr_assert_eq(e->changes, 0);
	gen = request(&fx.a, 1 + blue_qpn_slot(qpn), qpn,
		      (const char *[]){ "dcqcn.rai_mbps=80", "window.target_delay_us=250",
					"retx.timer=linear", "retx.base_us=1000", "retx.k_us=10",
					NULL });
	cr_assert_neq(e->applied_gen, gen, "applied before any pass");
	rc_progress(&fx);
	cr_assert_eq(__atomic_load_n(&e->applied_gen, __ATOMIC_ACQUIRE), gen,
		     "one pass later the request is not acknowledged");
	cr_assert_eq(e->refused, 0, "refused 0x%llx (errno %d)", (unsigned long long)e->refused,
		     e->err);
	cr_assert_eq(e->err, 0);
	cr_assert_eq(e->changes, 1);
	blue_qp_query_cc(fx.a.qp, &p);
	cr_assert_eq(p.dcqcn.rai_mbps, 80);
	cr_assert_eq(p.window.target_delay_us, 250);
	cr_assert_eq(p.dcqcn.g, 4, "a key not asked for changed");
	blue_qp_query_retx(fx.a.qp, &r);
	cr_assert_eq(r.timer, BLUE_RETX_TIMER_LINEAR);
	cr_assert_eq(r.base_us, 1000);
	cr_assert_eq(r.k_us, 10);
	cr_assert_eq(fx.a.qp->live->retx_timer, BLUE_RETX_TIMER_LINEAR);
	/* what `bluectl get IFNAME qp QPN` prints */
	cr_assert_eq(e->eff.cc.dcqcn.rai_mbps, 80);
	cr_assert_eq(e->eff.retx.timer, BLUE_RETX_TIMER_LINEAR);
	cr_assert_eq(e->eff.retx.k_us, 10);
	/* B was not asked anything */
	blue_qp_query_cc(fx.b.qp, &p);
	cr_assert_eq(p.dcqcn.rai_mbps, 40);
	/* and the QP still moves data */
	{
		static char src[4096], dst[4096];
		struct blue_mr *smr = blue_reg_mr(fx.a.pd, src, sizeof(src), 0);
		struct blue_mr *dmr = blue_reg_mr(fx.b.pd, dst, sizeof(dst),
						  BLUE_ACCESS_LOCAL_WRITE);
		struct blue_sge sge = { (uintptr_t)src, sizeof(src), smr->lkey };
		struct blue_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
					   .opcode = BLUE_WR_SEND,
					   .send_flags = BLUE_SEND_SIGNALED };
		struct blue_wc wc;

		rc_fill(src, sizeof(src), 7);
		rc_post_recv(&fx.b, 2, dst, sizeof(dst), dmr->lkey);
		rc_post_send(&fx.a, &wr);
		wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
		cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
		wc = rc_wait1(&fx, fx.b.rcq, RC_WAIT_MS);
		cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
		cr_assert(rc_check(dst, sizeof(dst), 7));
		blue_dereg_mr(smr);
		blue_dereg_mr(dmr);
	}
	rc_fx_fini(&fx);
}

/* base_us belongs to the LINEAR timer: blue_qp_set_retx refuses it on the IBA one. */
Test(tune_engine, refusal_is_recorded_and_nothing_changes)
{
	struct blue_retx_attr r;
	struct blue_tune_entry *e;
	struct blue_cc_params p;
	struct rc_opts o;
	struct rc_fx fx;
	uint64_t gen;
	uint32_t qpn;

	rc_opts_default(&o);
	rc_fx_init(&fx, &o);
	qpn = blue_qp_num(fx.a.qp);
	e = qp_entry(&fx.a, fx.a.qp);
	gen = request(&fx.a, 1 + blue_qpn_slot(qpn), qpn,
		      (const char *[]){ "retx.base_us=500", "dcqcn.g=16", NULL });
	rc_progress(&fx);
	cr_assert_eq(e->applied_gen, gen);
	cr_assert_eq(e->refused, BLUE_TUNE_BIT(BLUE_TUNE_RETX_BASE_US),
		     "refused 0x%llx", (unsigned long long)e->refused);
	cr_assert_eq(e->err, EINVAL);
	blue_qp_query_retx(fx.a.qp, &r);
	cr_assert_eq(r.timer, BLUE_RETX_TIMER_IBA_EXP);
	cr_assert_eq(r.base_us, 0);
	cr_assert_eq(e->eff.retx.base_us, 0, "eff shows a value the QP does not run");
	/* the congestion-control key of the same request was fine, and is applied */
	blue_qp_query_cc(fx.a.qp, &p);
	cr_assert_eq(p.dcqcn.g, 16);
	/* the next request does not ask for the refused key again */
	gen = request(&fx.a, 1 + blue_qpn_slot(qpn), qpn, (const char *[]){ "dcqcn.g=32", NULL });
	rc_progress(&fx);
	cr_assert_eq(e->applied_gen, gen);
	cr_assert_eq(e->refused, 0, "a refused key was asked again: refused 0x%llx",
		     (unsigned long long)e->refused);
	blue_qp_query_cc(fx.a.qp, &p);
	cr_assert_eq(p.dcqcn.g, 32);
	rc_fx_fini(&fx);
}

Test(tune_engine, defaults_reach_old_and_new_qps_and_an_override_wins)
{
	struct blue_tune_entry *e0;
	struct blue_cc_params p;
	struct blue_qp *qp1, *qp2;
	struct rc_opts o;
	struct rc_fx fx;
	uint64_t g0;
	uint32_t qpn;

	rc_opts_default(&o);
	rc_fx_init(&fx, &o);
	qpn = blue_qp_num(fx.a.qp);
	e0 = &blue__tune_map(fx.a.ctx)[0];
	request(&fx.a, 1 + blue_qpn_slot(qpn), qpn, (const char *[]){ "dcqcn.rai_mbps=80", NULL });
	rc_progress(&fx);
	g0 = request(&fx.a, 0, 0, (const char *[]){ "dcqcn.rai_mbps=60", "dcqcn.g=8", NULL });
	rc_progress(&fx);
	cr_assert_eq(e0->applied_gen, g0, "the interface's defaults were not acknowledged");
	cr_assert_eq(e0->refused, 0);
	cr_assert_geq(e0->changes, 1);
	blue_qp_query_cc(fx.a.qp, &p);
	cr_assert_eq(p.dcqcn.rai_mbps, 80, "the QP's own setting lost to the default");
	cr_assert_eq(p.dcqcn.g, 8, "the default did not reach an existing QP");
	/* a QP created from now on starts with the defaults */
	qp1 = fx.a.qp;
	qp2 = rc_qp_create(&fx, &fx.a);
	fx.a.qp = qp1;	/* rc_qp_create made qp2 the side's QP */
	blue_qp_query_cc(qp2, &p);
	cr_assert_eq(p.dcqcn.rai_mbps, 60);
	cr_assert_eq(p.dcqcn.g, 8);
	cr_assert_eq(qp_entry(&fx.a, qp2)->eff.cc.dcqcn.rai_mbps, 60);
	cr_assert_eq(blue_destroy_qp(qp2), 0);
	rc_fx_fini(&fx);
}

Test(tune_engine, a_request_for_another_qpn_is_answered_not_applied)
{
	struct blue_tune_entry *e;
	struct blue_cc_params p;
	struct rc_opts o;
	struct rc_fx fx;
	uint64_t gen;
	uint32_t qpn;

	rc_opts_default(&o);
	rc_fx_init(&fx, &o);
	qpn = blue_qp_num(fx.a.qp);
	e = qp_entry(&fx.a, fx.a.qp);
	/* the slot's QPN of an earlier generation: its owner is gone */
	gen = request(&fx.a, 1 + blue_qpn_slot(qpn), qpn + BLUE_MAX_QP,
		      (const char *[]){ "dcqcn.rai_mbps=80", NULL });
	rc_progress(&fx);
	cr_assert_eq(e->applied_gen, gen);
	cr_assert_eq(e->err, ESRCH);
	blue_qp_query_cc(fx.a.qp, &p);
	cr_assert_eq(p.dcqcn.rai_mbps, 40);
	rc_fx_fini(&fx);
}

/* The engine looks at one word per pass: a request whose writer did not bump entry 0's
 * seq is not seen, and is once the seq moves. */
Test(tune_engine, only_the_sequence_word_is_polled)
{
	struct blue_tune_entry *map, *e;
	struct blue_cc_params p;
	struct rc_opts o;
	struct rc_fx fx;
	uint32_t qpn;

	rc_opts_default(&o);
	rc_fx_init(&fx, &o);
	qpn = blue_qp_num(fx.a.qp);
	map = blue__tune_map(fx.a.ctx);
	e = qp_entry(&fx.a, fx.a.qp);
	e->req_qpn = qpn;
	e->req.cc.dcqcn.rai_mbps = 90;
	e->mask = BLUE_TUNE_BIT(BLUE_TUNE_DCQCN_RAI);
	e->gen++;
	rc_progress(&fx);
	blue_qp_query_cc(fx.a.qp, &p);
	cr_assert_eq(p.dcqcn.rai_mbps, 40);
	cr_assert_eq(e->applied_gen, 0);
	map[0].seq++;
	rc_progress(&fx);
	blue_qp_query_cc(fx.a.qp, &p);
	cr_assert_eq(p.dcqcn.rai_mbps, 90);
	cr_assert_eq(e->applied_gen, e->gen);
	rc_fx_fini(&fx);
}

/* The algorithms switched and tuned through the map, as `bluectl set` does mid-run. */
Test(tune_engine, switching_algorithms_moves_rate_and_window)
{
	struct blue_tune_entry *e;
	struct rc_opts o;
	struct rc_fx fx;
	uint64_t gen;
	uint32_t qpn;

	rc_opts_default(&o);
	rc_fx_init(&fx, &o);
	qpn = blue_qp_num(fx.a.qp);
	e = qp_entry(&fx.a, fx.a.qp);
	gen = request(&fx.a, 1 + blue_qpn_slot(qpn), qpn,
		      (const char *[]){ "cc.algo=dcqcn", "dcqcn.line_rate_mbps=200",
					"dcqcn.rhai_mbps=100", NULL });
	rc_progress(&fx);
	cr_assert_eq(e->applied_gen, gen);
	cr_assert_eq(e->refused, 0, "refused 0x%llx: errno %d", (unsigned long long)e->refused,
		     e->err);
	cr_assert_eq(fx.a.qp->live->cc_algo, BLUE_CC_DCQCN);
	cr_assert_eq(fx.a.qp->live->rate_mbps, 200);
	cr_assert_eq(fx.a.qp->live->cwnd, 0);
	gen = request(&fx.a, 1 + blue_qpn_slot(qpn), qpn,
		      (const char *[]){ "cc.algo=window", "window.init_cwnd=24", NULL });
	rc_progress(&fx);
	cr_assert_eq(e->applied_gen, gen);
	cr_assert_eq(e->refused, 0);
	cr_assert_eq(fx.a.qp->live->cc_algo, BLUE_CC_WINDOW);
	cr_assert_eq(fx.a.qp->live->rate_mbps, 0);
	cr_assert_eq(fx.a.qp->live->cwnd, 24);
	cr_assert_eq(e->eff.cc.algo, BLUE_CC_WINDOW);
	/* a value only the algorithm's own check knows is wrong comes back as a refusal */
	gen = request(&fx.a, 1 + blue_qpn_slot(qpn), qpn,
		      (const char *[]){ "window.min_cwnd=64", "window.max_cwnd=32", NULL });
	rc_progress(&fx);
	cr_assert_eq(e->applied_gen, gen);
	cr_assert_neq(e->refused, 0);
	cr_assert_eq(e->err, EINVAL);
	cr_assert_eq(fx.a.qp->live->cwnd, 24, "a refused change moved the window");
	cr_assert_eq(e->changes, 3);
	rc_fx_fini(&fx);
}

/* The CM's choice of algorithm (blue__cc_use at connect) keeps the parameters the
 * interface's defaults gave the QP: only the algorithm, and ECN with it, change. */
Test(tune_engine, cm_choice_keeps_tuned_parameters)
{
	struct blue_cc_params p;
	struct blue_qp *qp1, *qp2;
	struct rc_opts o;
	struct rc_fx fx;

	rc_opts_default(&o);
	rc_fx_init(&fx, &o);
	request(&fx.a, 0, 0, (const char *[]){ "dcqcn.g=8", "window.init_cwnd=24", NULL });
	rc_progress(&fx);
	qp1 = fx.a.qp;
	qp2 = rc_qp_create(&fx, &fx.a);
	fx.a.qp = qp1;
	cr_assert_eq(blue__cc_use(qp2, BLUE_CC_DCQCN), 0);
	blue_qp_query_cc(qp2, &p);
	cr_assert_eq(p.algo, BLUE_CC_DCQCN);
	cr_assert_eq(p.ecn, 1, "DCQCN chosen without ECN");
	cr_assert_eq(p.dcqcn.g, 8, "the CM's choice reset the tuned dcqcn.g to %u", p.dcqcn.g);
	cr_assert_eq(p.window.init_cwnd, 24);
	cr_assert_eq(qp_entry(&fx.a, qp2)->eff.cc.algo, BLUE_CC_DCQCN);
	cr_assert_eq(blue__cc_use(qp2, BLUE_CC_NONE), 0);
	blue_qp_query_cc(qp2, &p);
	cr_assert_eq(p.ecn, 0);
	cr_assert_eq(p.dcqcn.g, 8);
	cr_assert_eq(blue_destroy_qp(qp2), 0);
	rc_fx_fini(&fx);
}
