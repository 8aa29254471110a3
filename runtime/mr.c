// SPDX-License-Identifier: MIT
/*
 * Memory regions: registration into the context's key table, and the access check
 * (IBA 10.6: key, PD, bounds, rights) that both the requester and the responder use.
 * The region is the application's own memory: nothing is pinned or copied, since the
 * engine runs in the application's process (library mode).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/verbs_ops.h"
#include "runtime/device.h"
#include "runtime/log.h"
#include "runtime/mr.h"
#include "runtime/mr_key.h"
#include "runtime/mw.h"

_Static_assert(BLUE_MAX_MR < 1u << BLUE_MR_KEY_INDEX_BITS, "every MR slot fits the key");

#define BLUE_ACCESS_ALL (BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE | \
			 BLUE_ACCESS_REMOTE_READ | BLUE_ACCESS_REMOTE_ATOMIC | \
			 BLUE_ACCESS_MW_BIND)

const char *blue__mr_verdict_str(enum blue_mr_verdict v)
{
	switch (v) {
	case BLUE_MR_OK:	return "ok";
	case BLUE_MR_BAD_KEY:	return "no MR has this key";
	case BLUE_MR_BAD_PD:	return "the MR belongs to another PD";
	case BLUE_MR_BOUNDS:	return "the range is outside the MR (or the window)";
	case BLUE_MR_PERM:	return "the MR (or the window) does not grant this access";
	case BLUE_MR_BAD_QP:	return "the window is bound to another QP";
	case BLUE_MR_FAULT:	return "the application no longer maps that memory";
	}
	return "?";
}

static int table_grow(struct blue_mr_table *t)
{
	uint32_t ncap = t->cap ? t->cap * 2 : 64;
	struct blue_mr **mr;
	struct blue_mw **mw;
	uint8_t *kind;
	uint32_t *gen;

	if (ncap > BLUE_MAX_MR + 1)
		ncap = BLUE_MAX_MR + 1;
	if (ncap <= t->cap)
		return -ENOMEM;
	mr = realloc(t->mr, ncap * sizeof(*mr));
	if (!mr)
		return -ENOMEM;
	t->mr = mr;
	gen = realloc(t->gen, ncap * sizeof(*gen));
	if (!gen)
		return -ENOMEM;
	t->gen = gen;
	mw = realloc(t->mw, ncap * sizeof(*mw));
	if (!mw)
		return -ENOMEM;
	t->mw = mw;
	kind = realloc(t->kind, ncap * sizeof(*kind));
	if (!kind)
		return -ENOMEM;
	t->kind = kind;
	memset(t->mw + t->cap, 0, (ncap - t->cap) * sizeof(*mw));
	memset(t->kind + t->cap, 0, (ncap - t->cap) * sizeof(*kind));
	memset(t->mr + t->cap, 0, (ncap - t->cap) * sizeof(*mr));
	memset(t->gen + t->cap, 0, (ncap - t->cap) * sizeof(*gen));
	if (!t->cap)
		t->key_secret = blue__mr_key_secret();
	t->cap = ncap;
	return 0;
}

int blue__key_slot(struct blue_mr_table *t, enum blue_key_kind kind, uint32_t *out)
{
	uint32_t i, idx;

	for (;;) {
		for (i = 0; i < t->cap; i++) {
			idx = (t->hint + i) % t->cap;
			if (idx && !t->mr[idx] && !t->mw[idx] &&
			    (t->kind[idx] == BLUE_KEY_UNUSED || t->kind[idx] == kind)) {
				t->hint = idx + 1;
				t->kind[idx] = (uint8_t)kind;
				*out = idx;
				return 0;
			}
		}
		if (table_grow(t))
			return -ENOMEM;
	}
}

void blue__mr_table_fini(struct blue_mr_table *t)
{
	free(t->mr);
	free(t->mw);
	free(t->kind);
	free(t->gen);
	memset(t, 0, sizeof(*t));
}

/* Access and range as ibv_reg_mr(3) takes them. Return: 0, or EINVAL after a message. */
static int mr_args_check(const char *who, void *addr, size_t length, unsigned int access)
{
	/*
	 * IBA 1.5 FLUSH: GLOBAL is a memory barrier (resp_aw.c). PERSISTENT needs a
	 * persistence domain; rxe refuses it on pages that are not pmem, and blue has
	 * only host memory, so it refuses it always.
	 */
	if (access & BLUE_ACCESS_FLUSH_PERSISTENT) {
		blue__logf("%s: BLUE_ACCESS_FLUSH_PERSISTENT: this memory is not persistent "
			   "(no pmem; rxe refuses it the same way)", who);
		return EINVAL;
	}
	access &= ~(unsigned int)BLUE_ACCESS_FLUSH_GLOBAL;
	if (access & ~BLUE_ACCESS_ALL) {
		blue__logf("%s: unknown access flags 0x%x", who, access & ~BLUE_ACCESS_ALL);
		return EINVAL;
	}
	/* as ibv_reg_mr(3) requires: remote write or atomic access needs local write */
	if ((access & (BLUE_ACCESS_REMOTE_WRITE | BLUE_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & BLUE_ACCESS_LOCAL_WRITE)) {
		blue__logf("%s: remote write/atomic access needs BLUE_ACCESS_LOCAL_WRITE too", who);
		return EINVAL;
	}
	if (!length || !addr || length > BLUE_MAX_MR_SIZE ||
	    (uintptr_t)addr + length < (uintptr_t)addr) {
		blue__logf("%s: bad range %p + %zu (zero, wrapping or over %llu bytes)", who,
			   addr, length, (unsigned long long)BLUE_MAX_MR_SIZE);
		return EINVAL;
	}
	return 0;
}

struct blue_mr *blue__lib_reg_mr(struct blue_pd *pd, void *addr, size_t length, unsigned int access)
{
	return blue__reg_mr_at(pd, addr, length, access, blue_mem_here(addr));
}

struct blue_mr *blue__reg_mr_at(struct blue_pd *pd, void *addr, size_t length,
				unsigned int access, struct blue_mem_at at)
{
	struct blue_context *ctx;
	struct blue_mr_host *mh;
	struct blue_mr *mr;
	uint32_t idx;
	int err;

	if (!pd) {
		errno = EINVAL;
		return NULL;
	}
	ctx = pd->ctx;
	err = mr_args_check("reg_mr", addr, length, access);
	if (err) {
		errno = err;
		return NULL;
	}
	if (ctx->nmr >= BLUE_MAX_MR || blue__key_slot(&ctx->mrs, BLUE_KEY_MR, &idx)) {
		blue__logf("reg_mr: the device's %d MRs are in use", BLUE_MAX_MR);
		errno = ENOMEM;
		return NULL;
	}
	mh = calloc(1, sizeof(*mh));
	if (!mh) {
		errno = ENOMEM;
		return NULL;
	}
	mh->at = at;
	mr = &mh->mr;
	mr->context = ctx;
	mr->pd = pd;
	mr->addr = addr;
	mr->length = length;
	mr->access = access;
	mr->lkey = mr->rkey = blue__mr_key_make(ctx->mrs.key_secret, idx, ++ctx->mrs.gen[idx]);
	ctx->mrs.mr[idx] = mr;
	ctx->nmr++;
	pd->nmr++;
	return mr;
}

int blue__lib_dereg_mr(struct blue_mr *mr)
{
	struct blue_mr_table *t;
	uint32_t idx;

	if (!mr)
		return EINVAL;
	t = &mr->context->mrs;
	idx = blue__mr_key_index(mr->lkey);
	if (idx >= t->cap || t->mr[idx] != mr)
		return EINVAL;
	/* IBA 10.6.7.2.6, as rxe: not while windows are bound to it */
	if (blue__mw_bound_to(mr->context, mr)) {
		blue__logf("dereg_mr: MR 0x%x has memory windows bound; invalidate or "
			   "deallocate them first", mr->lkey);
		return EINVAL;
	}
	t->mr[idx] = NULL;
	mr->context->nmr--;
	mr->pd->nmr--;
	free(mr);
	return 0;
}

int blue__rereg_mr(struct blue_mr *mr, unsigned int what, struct blue_pd *pd, void *addr,
		   size_t length, unsigned int access)
{
	if (mr && blue__local_only(mr->context, "rereg_mr"))
		return EOPNOTSUPP;
	if (!mr || !what || (what & ~(unsigned int)BLUE_REREG_ALL)) {
		blue__logf("rereg_mr: %s", !mr ? "mr is NULL" : !what ? "nothing to change" :
			   "unknown change flags");
		return EINVAL;
	}
	if (!(what & BLUE_REREG_PD))
		pd = mr->pd;
	if (!pd || pd->ctx != mr->context) {
		blue__logf("rereg_mr: MR 0x%x: the new PD is %s", mr->lkey,
			   pd ? "of another device context" : "NULL");
		return EINVAL;
	}
	if (!(what & BLUE_REREG_TRANSLATION)) {
		addr = mr->addr;
		length = mr->length;
	}
	if (!(what & BLUE_REREG_ACCESS))
		access = mr->access;
	if (mr_args_check("rereg_mr", addr, length, access))
		return EINVAL;
	mr->pd->nmr--;
	pd->nmr++;
	mr->pd = pd;
	mr->addr = addr;
	blue__mr_host(mr)->at = blue_mem_here(addr);	/* library mode: blue-manager serves no rereg */
	mr->length = length;
	mr->access = access;
	return 0;
}

enum blue_mr_verdict blue__mr_check(struct blue_context *ctx, const struct blue_pd *pd,
				    uint32_t key, uint64_t va, uint64_t len,
				    unsigned int need, struct blue_mem_at *at)
{
	const struct blue_mr_table *t = &ctx->mrs;
	uint32_t idx = blue__mr_key_index(key);
	const struct blue_mr *mr;
	uint64_t start, off;

	if (idx == 0 || idx >= t->cap || !t->mr[idx] || t->mr[idx]->lkey != key)
		return BLUE_MR_BAD_KEY;
	mr = t->mr[idx];
	if (mr->pd != pd)
		return BLUE_MR_BAD_PD;
	/* the region's I/O address is its virtual address (ibv_reg_mr semantics) */
	start = (uintptr_t)mr->addr;
	if (va < start)
		return BLUE_MR_BOUNDS;
	off = va - start;
	/* off <= length and len <= length - off: no sum that could wrap */
	if (off > mr->length || len > mr->length - off)
		return BLUE_MR_BOUNDS;
	if ((mr->access & need) != need)
		return BLUE_MR_PERM;
	if (at)
		*at = blue_mem_off(blue__mr_host(mr)->at, off);
	return BLUE_MR_OK;
}
