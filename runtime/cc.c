// SPDX-License-Identifier: MIT
/*
 * Congestion control, per QP (runtime/cc.h): the algorithm tables, the documented
 * defaults of every parameter, and blue_qp_set_cc()/blue_qp_query_cc().
 */
#include <errno.h>
#include <string.h>

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
};

const struct blue_cc_ops *blue__cc_ops(uint32_t algo)
{
	return algo < BLUE_CC__MAX ? cc_tables[algo] : NULL;
}

void blue__cc_defaults(struct blue_cc_params *p, uint32_t algo)
{
	memset(p, 0, sizeof(*p));
	p->algo = algo;
	p->ecn = algo == BLUE_CC_DCQCN;
	/* DCQCN: the paper's (Zhu et al. 2015, section 6) and mlx5 firmware's defaults */
	p->dcqcn.line_rate_mbps = 0;		/* the netdev's speed */
	p->dcqcn.min_rate_mbps = 10;
	p->dcqcn.rai_mbps = 40;			/* paper: R_AI 40 Mbit/s */
	p->dcqcn.rhai_mbps = 100;
	p->dcqcn.g = 4;				/* paper: g = 1/256 (4/1024) */
	p->dcqcn.alpha_init = 1024;		/* mlx5 initial_alpha_value: 1.0 */
	p->dcqcn.alpha_timer_us = 55;		/* paper: K = 55 us */
	p->dcqcn.rate_timer_us = 55;		/* paper: T = 55 us */
	p->dcqcn.byte_counter_kb = 10240;	/* paper: B = 10 MB */
	p->dcqcn.fast_recovery_steps = 5;	/* paper: F = 5 */
	p->dcqcn.min_dec_pct = 50;		/* mlx5 rpg_min_dec_fac */
	p->dcqcn.cnp_interval_us = 50;		/* min_time_between_cnps */
	/* the window (Swift-like, Kumar et al. 2020) */
	p->window.target_delay_us = 100;
	p->window.ai_pkts = 1;
	p->window.beta = 819;			/* 0.8 */
	p->window.max_mdf = 512;		/* at most halve per RTT */
	p->window.min_cwnd = 1;
	p->window.max_cwnd = 256;
	p->window.init_cwnd = 16;
	p->window.rtt_gain = 128;		/* 1/8, as TCP's srtt */
}

void blue__cc_reset(struct blue_qp *qp)
{
	struct blue_cc *cc = &qp->cc;

	memset(cc, 0, sizeof(*cc));
	cc->live = qp->live;
	blue__cc_defaults(&cc->params, BLUE_CC_NONE);
	cc->ops = &blue__cc_none_ops;
	cc->ops->init(cc, 0);
	qp->live->cc_algo = BLUE_CC_NONE;
	qp->live->ecn = 0;
}

int blue_qp_set_cc(struct blue_qp *qp, const struct blue_cc_params *p)
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
	qp->cc.params = *p;
	qp->cc.ops = ops;
	qp->live->cc_algo = (uint8_t)p->algo;
	qp->live->ecn = (uint8_t)p->ecn;
	ops->init(&qp->cc, qp->ctx->eng.now_ns);
	blue__tune_publish(qp);	/* `bluectl get IFNAME qp QPN` shows what it runs */
	return 0;
}

int blue_qp_query_cc(struct blue_qp *qp, struct blue_cc_params *p)
{
	if (!qp || !p)
		return EINVAL;
	*p = qp->cc.params;
	return 0;
}
