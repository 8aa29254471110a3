// SPDX-License-Identifier: MIT
/*
 * Which congestion control a QP runs (runtime/cc_wire.h). Between two libblue peers
 * the CM negotiates it: each side offers the algorithms it has (BLUE_CM_CAP_DCQCN,
 * BLUE_CM_CAP_WINDOW_CC), and both compute the same choice from the two offers. A
 * standard peer (rxe, an RNIC) offers nothing, and gets IBA as it is, unless this side
 * chose the window alone, which needs nothing from the peer.
 *
 * BLUE_CC=none|dcqcn|window, read once per process, narrows the default offer to that
 * algorithm (none: nothing), and a QP that reaches RTS without the CM (compat,
 * perftest, a hand-made connection) runs it as an explicit choice.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cc_wire.h"
#include "runtime/device.h"
#include "runtime/log.h"
#include "runtime/qp.h"

static const char *const cc_names[BLUE_CC__MAX] = {
	[BLUE_CC_NONE] = "none",
	[BLUE_CC_DCQCN] = "dcqcn",
	[BLUE_CC_WINDOW] = "window",
};

static const uint32_t cc_cap[BLUE_CC__MAX] = {
	[BLUE_CC_NONE] = 0,
	[BLUE_CC_DCQCN] = BLUE_CM_CAP_DCQCN,
	[BLUE_CC_WINDOW] = BLUE_CM_CAP_WINDOW_CC,
};

#define CC_CAPS	(BLUE_CM_CAP_DCQCN | BLUE_CM_CAP_WINDOW_CC)

uint32_t blue__cc_caps_built(void)
{
	uint32_t caps = 0, a;

	for (a = BLUE_CC_NONE + 1; a < BLUE_CC__MAX; a++)
		if (blue__cc_ops(a))
			caps |= cc_cap[a];
	return caps;
}

static int env_algo = -1;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static void env_read(void)
{
	const char *e = getenv("BLUE_CC");
	uint32_t a;

	if (!e || !*e)
		return;
	for (a = 0; a < BLUE_CC__MAX; a++)
		if (!strcmp(e, cc_names[a]))
			break;
	if (a == BLUE_CC__MAX) {
		blue__logf("BLUE_CC=%s: no such congestion control; use none, dcqcn or window", e);
		env_algo = -2;
	} else if (!blue__cc_ops(a)) {
		blue__logf("BLUE_CC=%s: this libblue is built without it", e);
		env_algo = -2;
	} else {
		env_algo = (int)a;
	}
}

int blue__cc_env(void)
{
	pthread_once(&env_once, env_read);
	return env_algo;
}

uint32_t blue__cc_caps_offer(void)
{
	int e = blue__cc_env();

	return e >= 0 ? cc_cap[e] : blue__cc_caps_built();
}

uint32_t blue__cc_choose(uint32_t local, uint32_t remote)
{
	uint32_t both = local & remote & blue__cc_caps_built() & CC_CAPS;

	if (both == CC_CAPS)
		return BLUE_CC_DEFAULT;
	if (both & BLUE_CM_CAP_DCQCN)
		return BLUE_CC_DCQCN;
	if (both & BLUE_CM_CAP_WINDOW_CC)
		return BLUE_CC_WINDOW;
	if ((local & CC_CAPS) == BLUE_CM_CAP_WINDOW_CC && blue__cc_ops(BLUE_CC_WINDOW))
		return BLUE_CC_WINDOW;
	return BLUE_CC_NONE;
}

int blue__cc_use(struct blue_qp *qp, uint32_t algo)
{
	struct blue_cc_params p;

	if (qp->cc.params.algo == algo && qp->cc.ops == blue__cc_ops(algo))
		return 0;	/* already: keep parameters someone set */
	/*
	 * Every algorithm's parameters are kept (the interface's defaults that `bluectl set
	 * IFNAME dcqcn.x=...` gave this QP while it ran none); the pick brings only the
	 * algorithm and its ECN default (blue__cc_defaults: on for DCQCN).
	 */
	blue__cc_defaults(&p, algo);
	p.dcqcn = qp->cc.params.dcqcn;
	p.window = qp->cc.params.window;
	return blue_qp_set_cc(qp, &p);
}

void blue__cc_at_rts(struct blue_qp *qp)
{
	int e = blue__cc_env();

	if (e >= 0 && (uint32_t)e != qp->cc.params.algo && !blue__cc_use(qp, (uint32_t)e))
		return;	/* set_cc started it */
	/* runtime/cc.h: an algorithm (re)starts at RTS */
	qp->cc.ops->init(&qp->cc, qp->ctx->eng.now_ns);
}
