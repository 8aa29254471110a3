// SPDX-License-Identifier: MIT
/*
 * The engine's half of the tune map (runtime/tune.h, include/blue/tune.h): find the
 * entries whose gen moved, merge their keys over what each QP runs, apply them through
 * the public setters (so a tuned value passes the same checks as an API call), record
 * refusals and acknowledge.
 */
#include <errno.h>
#include <string.h>
#include <blue/blue.h>

#include "runtime/device.h"
#include "runtime/log.h"
#include "runtime/probes.h"
#include "runtime/qp.h"
#include "runtime/tune.h"

/* The engine never applies diag: it is the diag map's switch, written by bluectl. */
#define ENGINE_KEYS	(BLUE_TUNE_CC_KEYS | BLUE_TUNE_RETX_KEYS)

struct blue_tune_entry *blue__tune_map(struct blue_context *ctx)
{
	return ctx->obs.tune;
}

static struct blue_tune_entry *qp_entry(struct blue_qp *qp)
{
	struct blue_obs *o = &qp->ctx->obs;

	return o->tune_entries > 1 ? &o->tune[1 + blue_qpn_slot(qp->qpn)] : NULL;
}

/* What @qp runs now, as tune values (diag: the interface's switch). */
static void qp_current(struct blue_qp *qp, struct blue_tune_vals *v)
{
	struct blue_retx_attr r;

	memset(v, 0, sizeof(*v));
	blue_qp_query_cc(qp, &v->cc);
	blue_qp_query_retx(qp, &r);
	v->retx.policy = (uint32_t)r.policy;
	v->retx.timer = (uint32_t)r.timer;
	v->retx.base_us = r.base_us;
	v->retx.k_us = r.k_us;
	v->diag = __atomic_load_n(&qp->ctx->obs.diag->flags, __ATOMIC_RELAXED);
}

void blue__tune_publish(struct blue_qp *qp)
{
	struct blue_tune_entry *e;

	if (!qp->ctx || !(e = qp_entry(qp)))
		return;
	qp_current(qp, &e->eff);
	__atomic_store_n(&e->qpn, qp->qpn, __ATOMIC_RELEASE);
}

/* The keys of @mask whose values differ between @a and @b. */
static uint64_t differing(const struct blue_tune_vals *a, const struct blue_tune_vals *b,
			  uint64_t mask)
{
	uint64_t d = 0;
	int k;

	for (k = 0; k < BLUE_TUNE__MAX; k++)
		if ((mask & BLUE_TUNE_BIT(k)) && blue_tune_get(a, k) != blue_tune_get(b, k))
			d |= BLUE_TUNE_BIT(k);
	return d;
}

static void log_refused(struct blue_qp *qp, const struct blue_tune_vals *want, uint64_t keys,
			int err)
{
	char val[32];
	int k;

	for (k = 0; k < BLUE_TUNE__MAX; k++) {
		if (!(keys & BLUE_TUNE_BIT(k)))
			continue;
		blue_tune_format(k, want, val, sizeof(val));
		blue__logf("tune: QP 0x%x: refused %s=%s: %s", qp->qpn, blue_tune_keys[k].name,
			   val, strerror(err));
	}
}

/* Set @want's congestion control and retransmission parts where they differ from @cur.
 * Return: the keys refused; *@err the errno of the first refusal. */
static uint64_t qp_set(struct blue_qp *qp, const struct blue_tune_vals *cur,
		       const struct blue_tune_vals *want, int *err)
{
	uint64_t cc = differing(cur, want, BLUE_TUNE_CC_KEYS);
	uint64_t rx = differing(cur, want, BLUE_TUNE_RETX_KEYS);
	uint64_t refused = 0;
	int rc;

	if (cc && (rc = blue_qp_set_cc(qp, &want->cc))) {
		log_refused(qp, want, cc, rc);
		refused |= cc;
		*err = rc;
	}
	if (rx) {
		struct blue_retx_attr a = {
			.policy = (enum blue_retx_policy)want->retx.policy,
			.timer = (enum blue_retx_timer)want->retx.timer,
			.base_us = want->retx.base_us,
			.k_us = want->retx.k_us,
		};

		rc = blue_qp_set_retx(qp, &a);
		if (rc) {
			log_refused(qp, want, rx, rc);
			refused |= rx;
			if (!*err)
				*err = rc;
		}
	}
	return refused;
}

/*
 * Give @qp the interface's defaults (entry 0) and, over them, its own override if the
 * override is for this QPN. Return: the keys refused.
 */
static uint64_t qp_apply(struct blue_qp *qp, struct blue_tune_entry *e, int *err)
{
	struct blue_tune_entry *e0 = &qp->ctx->obs.tune[0];
	struct blue_tune_vals cur, want;

	qp_current(qp, &cur);
	want = cur;
	blue_tune_merge(&want, &e0->req, e0->mask & ENGINE_KEYS);
	if (e && e->req_qpn == qp->qpn)
		blue_tune_merge(&want, &e->req, e->mask & ENGINE_KEYS);
	return qp_set(qp, &cur, &want, err);
}

/* Write the engine's answer to a request of @gen into @e. */
static void ack(struct blue_tune_entry *e, uint64_t gen, uint64_t refused, int err,
		uint64_t now)
{
	e->refused = refused;
	e->err = err;
	__atomic_fetch_add(&e->changes, 1, __ATOMIC_RELAXED);
	e->applied_ns = now;
	__atomic_store_n(&e->applied_gen, gen, __ATOMIC_RELEASE);
}

void blue__tune_apply(struct blue_context *ctx, uint64_t seq)
{
	struct blue_obs *o = &ctx->obs;
	struct blue_tune_entry *e0 = &o->tune[0];
	uint64_t g0 = __atomic_load_n(&e0->gen, __ATOMIC_ACQUIRE), refused0 = 0;
	bool defaults = g0 != o->tune_if_gen;
	int err0 = 0;
	struct blue_qp *qp;

	o->tune_seq = seq;
	for (qp = ctx->qps; qp; qp = qp->next) {
		struct blue_tune_entry *e = qp_entry(qp);
		uint64_t g = e ? __atomic_load_n(&e->gen, __ATOMIC_ACQUIRE) : 0;
		uint64_t refused;
		int err = 0;

		if (!defaults && g == qp->tune_gen)
			continue;
		refused = qp_apply(qp, e, &err);
		blue__tune_publish(qp);
		if (g != qp->tune_gen) {
			/* a request for a former owner of the slot is answered, not applied */
			uint64_t mine = e->req_qpn == qp->qpn ? e->mask & ENGINE_KEYS : 0;

			qp->tune_gen = g;
			BLUE_PROBE4(tune, qp->qpn, mine, refused & mine, g);
			ack(e, g, refused & mine, e->req_qpn == qp->qpn ? err : ESRCH,
			    ctx->eng.now_ns);
		}
		if (defaults && (refused & e0->mask)) {
			refused0 |= refused & e0->mask;
			if (!err0)
				err0 = err;
		}
	}
	if (defaults) {
		o->tune_if_gen = g0;
		BLUE_PROBE4(tune, 0, e0->mask & ENGINE_KEYS, refused0, g0);
		ack(e0, g0, refused0, err0, ctx->eng.now_ns);
	}
}

void blue__tune_qp_init(struct blue_qp *qp)
{
	struct blue_tune_entry *e = qp_entry(qp);
	int err = 0;

	if (e) {
		/* whatever was asked of the slot's previous QP is not this one's */
		qp->tune_gen = __atomic_load_n(&e->gen, __ATOMIC_ACQUIRE);
		if (__atomic_load_n(&e->qpn, __ATOMIC_ACQUIRE) != qp->qpn)
			e->changes = 0;	/* a new QP in the slot; a reset keeps its count */
	}
	(void)qp_apply(qp, e, &err);
	blue__tune_publish(qp);
}

void blue__tune_qp_gone(struct blue_qp *qp)
{
	struct blue_tune_entry *e = qp_entry(qp);

	if (e)
		__atomic_store_n(&e->qpn, 0, __ATOMIC_RELEASE);
}
