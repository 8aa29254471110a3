// SPDX-License-Identifier: MIT
/*
 * Congestion control, per QP (runtime/cc.h): the algorithm tables, the documented
 * defaults of every parameter, and blue_qp_set_cc()/blue_qp_query_cc().
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "runtime/verbs_ops.h"
#include "runtime/cc.h"
#include "runtime/log.h"
#include "runtime/probes.h"
#include "runtime/qp.h"
#include "runtime/tune.h"

/*
 * The algorithms change the rate and the window only through these, so each change is
 * one USDT probe (blue:cc_rate, blue:cc_window; tools/trace/cc.bt) and the algorithms
 * stay free of tracing. The QPN is in the live context they already point to.
 */
void blue__cc_set_rate(struct blue_cc *cc, uint32_t mbps)
{
	uint32_t old = cc->live->rate_mbps;

	cc->live->rate_mbps = mbps;
	if (old != mbps)
		BLUE_PROBE4(cc_rate, cc->live->qpn, old, mbps, cc->live->target_rate_mbps);
}

void blue__cc_set_cwnd(struct blue_cc *cc, uint32_t pkts)
{
	uint32_t old = cc->live->cwnd;

	cc->live->cwnd = pkts;
	if (old != pkts)
		BLUE_PROBE4(cc_window, cc->live->qpn, old, pkts, cc->live->srtt_ns);
}

static void none_init(struct blue_cc *cc, uint64_t now)
{
	(void)now;
	blue__cc_set_rate(cc, 0);
	blue__cc_set_cwnd(cc, 0);
	cc->live->alpha = 0;
	cc->live->target_rate_mbps = 0;
	cc->next_tx_ns = 0;
	cc->timer_ns = 0;
}

/* none: IBA as it is; only the hooks that must exist do anything */
const struct blue_cc_ops blue__cc_none_ops = {
	.name = "none",
	.init = none_init,
};

static const struct blue_cc_ops *const cc_tables[BLUE_CC__MAX] = {
	[BLUE_CC_NONE] = &blue__cc_none_ops,
	[BLUE_CC_DCQCN] = &blue__cc_dcqcn_ops,
	[BLUE_CC_WINDOW] = &blue__cc_window_ops,
};

const struct blue_cc_ops *blue__cc_ops(uint32_t algo)
{
	return algo < BLUE_CC__MAX ? cc_tables[algo] : NULL;
}

int blue__cc_check_ranges(const char *section, const struct blue_cc_range *rows,
			  unsigned int n, char *why, unsigned int len)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		const struct blue_cc_range *r = &rows[i];

		if (r->val >= r->lo && r->val <= r->hi)
			continue;
		snprintf(why, len, "%s.%s %llu: use %llu..%llu%s%s", section, r->name,
			 (unsigned long long)r->val, (unsigned long long)r->lo,
			 (unsigned long long)r->hi, r->hint ? " " : "", r->hint ? r->hint : "");
		return -EINVAL;
	}
	return 0;
}

/*
 * The sources: [Z15] Zhu et al., SIGCOMM 2015 (DCQCN), section 3 and its table of the
 * parameters used in production; [MLX] NVIDIA's "DCQCN CC Parameters" for ConnectX-4
 * and later (the mlx5 firmware's rpg_* / dce_tcp_* / min_time_between_cnps); [K20]
 * Kumar et al., SIGCOMM 2020 (Swift). Where the two DCQCN sources differ, [Z15] is
 * taken for the dynamics (its timers fit a software engine; mlx5's 1 us alpha period
 * is hardware's) and [MLX] for the limits, and the other value is named.
 */
void blue__cc_defaults(struct blue_cc_params *p, uint32_t algo)
{
	memset(p, 0, sizeof(*p));
	p->algo = algo;
	p->ecn = algo == BLUE_CC_DCQCN;
	p->dcqcn.line_rate_mbps = 0;		/* the netdev's speed ([MLX] rpg_max_rate 0) */
	/* [MLX] rpg_min_rate is 1; 10 here: at 1 Mbit/s one 1 KiB packet takes 8 ms,
	 * half the default ACK timeout (4.096 us * 2^12), and a paced QP would time out */
	p->dcqcn.min_rate_mbps = 10;
	p->dcqcn.rai_mbps = 40;			/* [Z15] R_AI 40 Mbit/s ([MLX] rpg_ai_rate 5) */
	/* [MLX] rpg_hai_rate 50 = 10 x rpg_ai_rate; [Z15] names no value: 10 x R_AI */
	p->dcqcn.rhai_mbps = 400;
	p->dcqcn.g = 4;				/* [Z15] g = 1/256 ([MLX] dce_tcp_g 1019: 5/1024) */
	p->dcqcn.alpha_init = 1024;		/* [Z15] alpha = 1 ([MLX] initial_alpha 1023) */
	p->dcqcn.alpha_timer_us = 55;		/* [Z15] K = 55 us ([MLX] dce_tcp_rtt 1 us) */
	p->dcqcn.rate_timer_us = 55;		/* [Z15] T = 55 us ([MLX] rpg_time_reset 300) */
	p->dcqcn.byte_counter_kb = 10240;	/* [Z15] B = 10 MB ([MLX] rpg_byte_reset) */
	p->dcqcn.fast_recovery_steps = 5;	/* [Z15] F = 5 ([MLX] rpg_threshold 1) */
	p->dcqcn.min_dec_pct = 50;		/* [MLX] rpg_min_dec_fac 50 */
	/* [Z15] N = 50 us, below K as it must be ([MLX] min_time_between_cnps 4) */
	p->dcqcn.cnp_interval_us = 50;
	/* the window: [K20] section 3 */
	p->window.target_delay_us = 100;	/* a guess for veth: see runtime/cc_window.c */
	p->window.ai_pkts = 1;			/* [K20] ai = 1 packet per RTT */
	p->window.beta = 819;			/* [K20] beta 0.8 */
	p->window.max_mdf = 512;		/* [K20] max_mdf 0.5 */
	p->window.min_cwnd = 1;			/* one packet: no sub-packet pacing here */
	p->window.max_cwnd = 256;		/* the requester's fixed window */
	p->window.init_cwnd = 16;		/* ours: a BDP's worth at ~10 Gbit/s, 15 us */
	p->window.rtt_gain = 128;		/* 1/8, TCP's srtt gain (RFC 6298) */
}

void blue__cc_reset(struct blue_qp *qp)
{
	struct blue_cc *cc = &qp->cc;

	memset(cc, 0, sizeof(*cc));
	cc->live = qp->live;
	cc->link_mbps = qp->ctx ? qp->ctx->link_mbps : 0;
	blue__cc_defaults(&cc->params, BLUE_CC_NONE);
	cc->ops = &blue__cc_none_ops;
	cc->ops->init(cc, 0);
	qp->live->cc_algo = BLUE_CC_NONE;
	qp->live->ecn = 0;
}

int blue__lib_qp_set_cc(struct blue_qp *qp, const struct blue_cc_params *p)
{
	const struct blue_cc_ops *ops;

	if (!qp || !p)
		return EINVAL;
	ops = blue__cc_ops(p->algo);
	if (!ops) {
		blue__logf("qp_set_cc: QP 0x%x: algorithm %u; use BLUE_CC_NONE (0), "
			   "BLUE_CC_DCQCN (1) or BLUE_CC_WINDOW (2)", qp->qpn, p->algo);
		return p->algo < BLUE_CC__MAX ? EOPNOTSUPP : EINVAL;
	}
	if (p->ecn > 1) {
		blue__logf("qp_set_cc: QP 0x%x: ecn %u; use 0 or 1", qp->qpn, p->ecn);
		return EINVAL;
	}
	/* only the chosen algorithm's section: the others may hold anything, zeros too */
	if (ops->check) {
		char why[160];

		if (ops->check(p, qp->cc.link_mbps, why, sizeof(why)) < 0) {
			blue__logf("qp_set_cc: QP 0x%x: %s", qp->qpn, why);
			return EINVAL;
		}
	}
	qp->cc.params = *p;
	qp->cc.ops = ops;
	qp->live->cc_algo = (uint8_t)p->algo;
	qp->live->ecn = (uint8_t)p->ecn;
	ops->init(&qp->cc, qp->ctx->eng.now_ns);
	blue__tune_publish(qp);	/* `bluectl get IFNAME qp QPN` shows what it runs */
	return 0;
}

int blue__lib_qp_query_cc(struct blue_qp *qp, struct blue_cc_params *p)
{
	if (!qp || !p)
		return EINVAL;
	*p = qp->cc.params;
	return 0;
}
