// SPDX-License-Identifier: MIT
/*
 * Memory windows (IBA 10.6.7): allocation into the MR key table, the bind and invalidate
 * steps the requester and responder execute, and the resolution of a window's rkey to
 * its MR. The rules are IBA's as rxe applies them (rxe_mw.c); where IBA says more than
 * rxe checks (the range of a zero-based window, the PD of a type 1 bind), IBA's rule is
 * the one here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/verbs_ops.h"
#include "runtime/device.h"
#include "runtime/log.h"
#include "runtime/mr_copy.h"
#include "runtime/mr_key.h"
#include "runtime/mw.h"
#include "runtime/qp.h"

/* Rights a bind may give a window. LOCAL_WRITE means nothing for a window; rdma-core's
 * tests pass it, and rxe takes it. */
#define MW_BIND_ACCESS (BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE | \
			BLUE_ACCESS_REMOTE_READ | BLUE_ACCESS_REMOTE_ATOMIC | \
			BLUE_ACCESS_ZERO_BASED)

static struct blue__mw *mw_priv(struct blue_mw *mw)
{
	return (struct blue__mw *)mw;	/* pub is the first member */
}

/* The window in the slot @key names, if the slot holds one (whatever its key now). */
static struct blue__mw *mw_slot(const struct blue_context *ctx, uint32_t key)
{
	const struct blue_mr_table *t = &ctx->mrs;
	uint32_t idx = blue__mr_key_index(key);

	if (idx == 0 || idx >= t->cap || t->kind[idx] != BLUE_KEY_MW)
		return NULL;
	return (struct blue__mw *)t->mw[idx];
}

/* Is @mr (a pointer from the application) registered in @ctx now? */
static bool mr_live(const struct blue_context *ctx, const struct blue_mr *mr)
{
	const struct blue_mr_table *t = &ctx->mrs;
	uint32_t idx = blue__mr_key_index(mr->lkey);

	return idx && idx < t->cap && t->mr[idx] == mr;
}

static void mw_unbind(struct blue__mw *m)
{
	m->bound = false;
	m->mr = NULL;
	m->qp = NULL;
	m->addr = m->length = 0;
	m->access = 0;
}

struct blue_mw *blue_alloc_mw(struct blue_pd *pd, enum blue_mw_type type)
{
	struct blue_context *ctx;
	struct blue__mw *m;
	uint32_t idx;

	if (!pd || (type != BLUE_MW_TYPE_1 && type != BLUE_MW_TYPE_2)) {
		blue__logf("alloc_mw: %s", !pd ? "pd is NULL" :
			   "the type is neither BLUE_MW_TYPE_1 nor BLUE_MW_TYPE_2");
		errno = EINVAL;
		return NULL;
	}
	ctx = pd->ctx;
	if (blue__local_only(ctx, "alloc_mw")) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (ctx->nmw >= BLUE_MAX_MW || blue__key_slot(&ctx->mrs, BLUE_KEY_MW, &idx)) {
		blue__logf("alloc_mw: the device's %d windows (or its key table) are in use",
			   BLUE_MAX_MW);
		errno = ENOMEM;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	m->pub.context = ctx;
	m->pub.pd = pd;
	m->pub.type = type;
	m->key = m->pub.rkey = blue__mw_key_make(ctx->mrs.key_secret, idx, ++ctx->mrs.gen[idx]);
	ctx->mrs.mw[idx] = &m->pub;
	ctx->nmw++;
	pd->nmw++;
	return &m->pub;
}

int blue_dealloc_mw(struct blue_mw *mw)
{
	struct blue__mw *m;
	uint32_t idx;

	if (!mw)
		return EINVAL;
	m = mw_priv(mw);
	idx = blue__mr_key_index(m->key);
	if (mw_slot(mw->context, m->key) != m) {
		blue__logf("dealloc_mw: %p is not a window of this context", (void *)mw);
		return EINVAL;
	}
	/* its key misses from now on: the slot's next window has another generation */
	mw->context->mrs.mw[idx] = NULL;
	mw->context->nmw--;
	mw->pd->nmw--;
	free(m);
	return 0;
}

/* ibv_inc_rkey(): the next consumer byte, the rest of the key kept. */
static uint32_t inc_rkey(uint32_t rkey)
{
	return (rkey & ~BLUE_MW_KEY_CONSUMER_MASK) | ((rkey + 1) & BLUE_MW_KEY_CONSUMER_MASK);
}

int blue_bind_mw(struct blue_qp *qp, struct blue_mw *mw, const struct blue_mw_bind *bind)
{
	const struct blue_mw_bind_info *bi;
	struct blue_send_wr wr, *bad;
	int err;

	if (!qp || !mw || !bind) {
		blue__logf("bind_mw: %s is NULL", !qp ? "qp" : !mw ? "mw" : "bind");
		return EINVAL;
	}
	bi = &bind->bind_info;
	if (mw->type != BLUE_MW_TYPE_1) {
		blue__logf("bind_mw: window 0x%x is type 2: bind it with a BLUE_WR_BIND_MW "
			   "work request", mw->rkey);
		return EINVAL;
	}
	if ((!bi->mr && (bi->addr || bi->length)) || (bi->mw_access_flags & BLUE_ACCESS_ZERO_BASED) ||
	    (bi->mr && !(bi->mr->access & BLUE_ACCESS_MW_BIND))) {
		blue__logf("bind_mw: window 0x%x: %s", mw->rkey,
			   !bi->mr ? "a range with no MR" :
			   (bi->mw_access_flags & BLUE_ACCESS_ZERO_BASED) ?
			   "type 1 windows are not zero-based (IBA o10-36.2.2)" :
			   "the MR was registered without BLUE_ACCESS_MW_BIND");
		return EINVAL;
	}
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = bind->wr_id;
	wr.opcode = BLUE_WR_BIND_MW;
	wr.send_flags = bind->send_flags;
	wr.wr.bind_mw.mw = mw;
	wr.wr.bind_mw.rkey = inc_rkey(mw->rkey);
	wr.wr.bind_mw.bind_info = *bi;
	err = blue_post_send(qp, &wr, &bad);
	if (!err)	/* as ibv_bind_mw: the new key is the window's on return */
		mw->rkey = wr.wr.bind_mw.rkey;
	return err;
}

bool blue__mw_wr_ok(const struct blue_qp *qp, const struct blue_send_wr *wr)
{
	const struct blue_mw *mw = wr->wr.bind_mw.mw;
	const struct blue_mr *mr = wr->wr.bind_mw.bind_info.mr;

	if (!blue__mw_wr_opcode(wr->opcode))
		return false;
	if (qp->type == BLUE_QPT_UD) {
		blue__logf("post_send: QP 0x%x is UD: opcode %d is for connected QPs", qp->qpn,
			   wr->opcode);
		return false;
	}
	if (wr->opcode == BLUE_WR_BIND_MW &&
	    (!mw || mw->context != qp->ctx || (mr && mr->context != qp->ctx))) {
		blue__logf("post_send: QP 0x%x: BIND_MW wr_id %llu: %s", qp->qpn,
			   (unsigned long long)wr->wr_id, !mw ? "wr.bind_mw.mw is NULL" :
			   "the window or the MR is of another device context");
		return false;
	}
	return true;
}

/* ---- the requester's local operations ------------------------------------------------ */

/* The checks of a bind (IBA 10.6.7.2, rxe_check_bind_mw). Return: NULL or why not. */
static const char *bind_refusal(const struct blue_qp *qp, const struct blue__mw *m,
				const struct blue_send_wqe *w)
{
	const struct blue_mr *mr = w->bind.mr;
	unsigned int access = w->bind.access;
	uint64_t addr = w->remote_addr, len = w->bind.length;

	if ((w->rkey & ~BLUE_MW_KEY_CONSUMER_MASK) != (m->key & ~BLUE_MW_KEY_CONSUMER_MASK))
		return "the new key changes more than its low 8 bits";
	if (m->pub.pd != qp->pd)
		return "the window is in another PD than the QP (IBA C10-72)";
	if (access & ~MW_BIND_ACCESS)
		return "unknown window access flags";
	if (m->pub.type == BLUE_MW_TYPE_1 && (access & BLUE_ACCESS_ZERO_BASED))
		return "type 1 windows are not zero-based (IBA o10-36.2.2)";
	if (m->pub.type == BLUE_MW_TYPE_2) {
		if (m->bound)
			return "the type 2 window is bound: invalidate it first (IBA o10-37.2.30)";
		if (!mr || !len)
			return "a type 2 window needs an MR and a length (IBA o10-37.2.40)";
	}
	if (!mr || !len)
		return NULL;	/* a type 1 unbind */
	if (!mr_live(qp->ctx, mr))
		return "the MR is not registered";
	if (mr->pd != m->pub.pd)
		return "the MR is in another PD than the window";
	if (!(mr->access & BLUE_ACCESS_MW_BIND))
		return "the MR was registered without BLUE_ACCESS_MW_BIND (IBA C10-73)";
	if ((access & (BLUE_ACCESS_REMOTE_WRITE | BLUE_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & BLUE_ACCESS_LOCAL_WRITE))
		return "a writable window on an MR without local write (IBA C10-74)";
	/* no sum that could wrap (C10-75: inside the MR, zero-based or not) */
	if (addr < (uintptr_t)mr->addr || addr - (uintptr_t)mr->addr > mr->length ||
	    len > mr->length - (addr - (uintptr_t)mr->addr))
		return "the range is outside the MR (IBA C10-75)";
	return NULL;
}

static enum blue_wc_status mw_bind(struct blue_qp *qp, const struct blue_send_wqe *w)
{
	struct blue__mw *m = w->bind.mw ? mw_priv(w->bind.mw) : NULL;
	const char *why;

	if (!m || mw_slot(qp->ctx, m->key) != m)
		why = "the window is not allocated";
	else
		why = bind_refusal(qp, m, w);
	if (why) {
		blue__logf("QP 0x%x: BIND_MW wr_id %llu, key 0x%x: %s", qp->qpn,
			   (unsigned long long)w->wr_id, w->rkey, why);
		return BLUE_WC_MW_BIND_ERR;
	}
	mw_unbind(m);
	m->key = m->pub.rkey = w->rkey;
	if (w->bind.mr && w->bind.length) {
		m->bound = true;
		m->mr = w->bind.mr;
		m->addr = w->remote_addr;
		m->length = w->bind.length;
		m->access = w->bind.access;
		if (m->pub.type == BLUE_MW_TYPE_2)
			m->qp = qp;	/* type 2B: this QP only */
	}
	return BLUE_WC_SUCCESS;
}

/*
 * Invalidate the type 2 window @rkey names for @qp; @remote: by a SEND with invalidate,
 * which only the QP a 2B window is bound to may send to it. Return: NULL or why not.
 */
static const char *mw_invalidate(struct blue_qp *qp, uint32_t rkey, bool remote)
{
	struct blue__mw *m = mw_slot(qp->ctx, rkey);

	if (!m)
		return "no window has this key (blue has no MR that can be invalidated)";
	if (m->key != rkey || !m->bound)
		return "the window has another key, or is not bound";
	if (m->pub.type != BLUE_MW_TYPE_2)
		return "type 1 windows are not invalidated (IBA o10-37.2.26)";
	if (m->pub.pd != qp->pd)
		return "the window is in another PD than the QP";
	if (remote && m->qp != qp)
		return "the window is bound to another QP";
	mw_unbind(m);
	return NULL;
}

enum blue_wc_status blue__mw_exec(struct blue_qp *qp, const struct blue_send_wqe *w)
{
	const char *why;

	if (w->opcode == BLUE_WR_BIND_MW)
		return mw_bind(qp, w);
	/* LOCAL_INV: the WQE carries the key in imm_data's place (host order) */
	why = mw_invalidate(qp, w->imm_data, false);
	if (why) {
		blue__logf("QP 0x%x: LOCAL_INV wr_id %llu, key 0x%x: %s", qp->qpn,
			   (unsigned long long)w->wr_id, w->imm_data, why);
		return BLUE_WC_LOC_QP_OP_ERR;
	}
	return BLUE_WC_SUCCESS;
}

int blue__mw_remote_inv(struct blue_qp *qp, uint32_t rkey)
{
	const char *why = mw_invalidate(qp, rkey, true);

	if (why) {
		blue__logf("QP 0x%x: SEND with invalidate of key 0x%x: %s", qp->qpn, rkey, why);
		return -EINVAL;
	}
	return 0;
}

/* ---- the responder's key resolution ---------------------------------------------------- */

/*
 * If @rkey names a window: check it for [*@va, *@va + @len) with @need and turn the
 * request into the MR's terms (*@key, *@va, *@need). Other keys are left alone.
 */
static enum blue_mr_verdict mw_resolve(const struct blue_qp *qp, uint32_t *key, uint64_t *va,
				       uint64_t len, unsigned int *need)
{
	const struct blue__mw *m = mw_slot(qp->ctx, *key);
	uint64_t base, off;

	if (blue__mr_key_index(*key) < qp->ctx->mrs.cap &&
	    qp->ctx->mrs.kind[blue__mr_key_index(*key)] != BLUE_KEY_MW)
		return BLUE_MR_OK;	/* an MR's key (or none): blue__mr_check() decides */
	if (!m || m->key != *key || !m->bound)
		return BLUE_MR_BAD_KEY;	/* deallocated, invalidated, rebound or never bound */
	if (m->pub.pd != qp->pd)
		return BLUE_MR_BAD_PD;
	if (m->pub.type == BLUE_MW_TYPE_2 && m->qp != qp)
		return BLUE_MR_BAD_QP;
	/* a zero-based window's va counts from its start (IBA 10.6.3.4) */
	base = (m->access & BLUE_ACCESS_ZERO_BASED) ? 0 : m->addr;
	if (*va < base)
		return BLUE_MR_BOUNDS;
	off = *va - base;
	if (off > m->length || len > m->length - off)
		return BLUE_MR_BOUNDS;
	if ((m->access & *need) != *need)
		return BLUE_MR_PERM;
	*key = m->mr->lkey;
	*va = m->addr + off;
	/* the MR's own rights: remote writes land through its local write (C10-74) */
	*need = (*need & (BLUE_ACCESS_REMOTE_WRITE | BLUE_ACCESS_REMOTE_ATOMIC)) ?
		BLUE_ACCESS_LOCAL_WRITE : 0;
	return BLUE_MR_OK;
}

enum blue_mr_verdict blue__rkey_check(const struct blue_qp *qp, uint32_t rkey, uint64_t va,
				      uint64_t len, unsigned int need,
				      struct blue_mem_at *at)
{
	enum blue_mr_verdict v = mw_resolve(qp, &rkey, &va, len, &need);

	if (v != BLUE_MR_OK)
		return v;
	return blue__mr_check(qp->ctx, qp->pd, rkey, va, len, need, at);
}

enum blue_mr_verdict blue__copy_rkey(const struct blue_qp *qp, uint32_t rkey, uint64_t va,
				     void *buf, uint32_t len, unsigned int need,
				     enum blue_copy_dir dir, const void **direct)
{
	enum blue_mr_verdict v = mw_resolve(qp, &rkey, &va, len, &need);

	if (v != BLUE_MR_OK)
		return v;
	return blue__copy_mr(qp->ctx, qp->pd, rkey, va, buf, len, need, dir, direct);
}

unsigned int blue__mw_bound_to(const struct blue_context *ctx, const struct blue_mr *mr)
{
	const struct blue_mr_table *t = &ctx->mrs;
	unsigned int n = 0;
	uint32_t i;

	for (i = 1; i < t->cap; i++)
		if (t->mw[i] && ((const struct blue__mw *)t->mw[i])->mr == mr)
			n++;
	return n;
}

void blue__mw_qp_gone(const struct blue_qp *qp)
{
	const struct blue_mr_table *t = &qp->ctx->mrs;
	struct blue__mw *m;
	uint32_t i;

	for (i = 1; i < t->cap; i++) {
		m = (struct blue__mw *)t->mw[i];
		if (m && m->bound && m->qp == qp)
			mw_unbind(m);
	}
}
