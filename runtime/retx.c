// SPDX-License-Identifier: MIT
/*
 * The per-QP retransmission settings (blue_qp_set_retx() in blue.h): which policy (its
 * ops table: go-back-N's is here, selective's in retx_sr.c), and which formula arms the
 * local ACK timer.
 *
 * IBA's timer is 4.096 us * 2^timeout (9.7.6.1.3): a fixed value per QP, chosen for the
 * worst path. The linear form, base + k * (PSNs in flight), follows
 * IRN: a short timeout while little is outstanding, so a lost tail is found soon, and
 * a longer one while a long queue of packets still has to drain before the ACK.
 */
#include <errno.h>
#include <string.h>

#include "runtime/verbs_ops.h"
#include "runtime/log.h"
#include "runtime/qp.h"
#include "runtime/tune.h"

uint64_t blue__retx_timeout_ns(struct blue_qp *qp)
{
	struct blue_qp_ctx *live = qp->live;
	int32_t inflight = blue_psn_diff(qp->req.psn_hi, live->una_psn);

	live->timer_inflight = inflight > 0 ? (uint32_t)inflight : 0;
	if (qp->retx.timer == BLUE_RETX_TIMER_LINEAR)
		return ((uint64_t)qp->retx.base_us + (uint64_t)qp->retx.k_us * live->timer_inflight) *
		       1000ull;
	return qp->timeout ? 4096ull << qp->timeout : 0;	/* 0: no timer (IBA) */
}

/*
 * Go-back-N, IBA 9.7: the completer goes back to una_psn on a sequence NAK or a local ACK
 * timeout, the responder NAKs a gap once and drops what follows it. That is what the
 * IBA paths do by themselves, so no hook adds anything.
 */
const struct blue_retx_ops blue__retx_gbn_ops = {
	.name = "go-back-n",
	.resp_dup_read_supersedes = true,
};

static const struct blue_retx_ops *const retx_tables[] = {
	[BLUE_RETX_GO_BACK_N] = &blue__retx_gbn_ops,
	[BLUE_RETX_SELECTIVE] = &blue__retx_sr_ops,
};

const struct blue_retx_ops *blue__retx_ops(uint32_t policy)
{
	return policy < sizeof(retx_tables) / sizeof(retx_tables[0]) ? retx_tables[policy] :
									 NULL;
}

/* Leave the current policy (its state forgotten and freed) for @ops, started clean. */
static void retx_switch(struct blue_qp *qp, const struct blue_retx_ops *ops)
{
	blue__retx_fini(qp);
	qp->retx.ops = ops;
	if (ops->init)
		ops->init(qp);
}

void blue__qp_set_peer_caps(struct blue_qp *qp, uint32_t caps)
{
	qp->retx.peer_caps = caps;
}

/* Is anything in flight either way, so that the policy must not change under it? */
static bool retx_busy(const struct blue_qp *qp)
{
	uint8_t st = qp->live->state;

	if (st != BLUE_QPS_RTS && st != BLUE_QPS_SQD && st != BLUE_QPS_SQE)
		return false;
	return blue__sq_count(qp) ||
	       (qp->retx.ops->resp_holds && qp->retx.ops->resp_holds(qp)) ||
	       qp->live->una_psn != qp->req.psn_hi;
}

int blue__lib_qp_set_retx(struct blue_qp *qp, const struct blue_retx_attr *a)
{
	const struct blue_retx_ops *ops;

	if (!qp || !a)
		return EINVAL;
	ops = blue__retx_ops((uint32_t)a->policy);
	if (!ops) {
		blue__logf("qp_set_retx: QP 0x%x: policy %d; use BLUE_RETX_GO_BACK_N (0) or "
			   "BLUE_RETX_SELECTIVE (1)", qp->qpn, (int)a->policy);
		return EINVAL;
	}
	if (a->timer == BLUE_RETX_TIMER_IBA_EXP) {
		if (a->base_us || a->k_us) {
			blue__logf("qp_set_retx: QP 0x%x: base_us %u / k_us %u belong to the "
				   "LINEAR timer; the IBA timer takes blue_qp_attr.timeout",
				   qp->qpn, a->base_us, a->k_us);
			return EINVAL;
		}
	} else if (a->timer == BLUE_RETX_TIMER_LINEAR) {
		if (!a->base_us && !a->k_us) {
			blue__logf("qp_set_retx: QP 0x%x: a LINEAR timer of 0 us (base_us and "
				   "k_us both 0) would fire at once", qp->qpn);
			return EINVAL;
		}
		if (a->base_us > BLUE_RETX_MAX_BASE_US || a->k_us > BLUE_RETX_MAX_K_US) {
			blue__logf("qp_set_retx: QP 0x%x: base_us %u / k_us %u; at most %u / %u",
				   qp->qpn, a->base_us, a->k_us, BLUE_RETX_MAX_BASE_US,
				   BLUE_RETX_MAX_K_US);
			return EINVAL;
		}
	} else {
		blue__logf("qp_set_retx: QP 0x%x: timer %d; use BLUE_RETX_TIMER_IBA_EXP (0) or "
			   "BLUE_RETX_TIMER_LINEAR (1)", qp->qpn, (int)a->timer);
		return EINVAL;
	}
	if (a->policy == BLUE_RETX_SELECTIVE &&
	    !(qp->retx.peer_caps & BLUE_CM_CAP_SELECTIVE_RETX)) {
		blue__logf("qp_set_retx: QP 0x%x: selective retransmission needs a libblue "
			   "peer that negotiated it: offer BLUE_CM_CAP_SELECTIVE_RETX on both "
			   "sides (blue_cm_info.caps and blue_cm_qp_attr.caps)", qp->qpn);
		return EOPNOTSUPP;
	}
	if (a->policy != qp->retx.policy && retx_busy(qp)) {
		blue__logf("qp_set_retx: QP 0x%x: cannot change the policy with traffic in "
			   "flight; change it before posting, or when everything completed",
			   qp->qpn);
		return EBUSY;
	}
	if (a->policy != qp->retx.policy)
		retx_switch(qp, ops);
	qp->retx.policy = (uint8_t)a->policy;
	qp->retx.timer = (uint8_t)a->timer;
	qp->retx.base_us = a->base_us;
	qp->retx.k_us = a->k_us;
	qp->live->retx_policy = qp->retx.policy;
	qp->live->retx_timer = qp->retx.timer;
	blue__tune_publish(qp);	/* `bluectl get IFNAME qp QPN` shows what it runs */
	return 0;
}

int blue__lib_qp_query_retx(struct blue_qp *qp, struct blue_retx_attr *a)
{
	if (!qp || !a)
		return EINVAL;
	memset(a, 0, sizeof(*a));
	a->policy = (enum blue_retx_policy)qp->retx.policy;
	a->timer = (enum blue_retx_timer)qp->retx.timer;
	a->base_us = qp->retx.base_us;
	a->k_us = qp->retx.k_us;
	return 0;
}

void blue__retx_fini(struct blue_qp *qp)
{
	/* NULL only before the first reset, when create_qp fails early */
	if (qp->retx.ops && qp->retx.ops->fini)
		qp->retx.ops->fini(qp);
}

void blue__retx_reset(struct blue_qp *qp)
{
	blue__retx_fini(qp);
	memset(&qp->retx, 0, sizeof(qp->retx));
	qp->live->retx_policy = 0;
	qp->live->retx_timer = 0;
	retx_switch(qp, &blue__retx_gbn_ops);
}
