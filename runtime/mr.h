/* SPDX-License-Identifier: MIT */
/*
 * Protection domains and memory regions: the key tables and the access check that the
 * requester (lkeys of local SGEs) and the responder (rkeys in RETH/AtomicETH) call.
 */
#ifndef BLUE_RUNTIME_MR_H
#define BLUE_RUNTIME_MR_H

#include <stdint.h>
#include <blue/blue.h>

#include "runtime/mem_at.h"

struct blue_pd {
	struct blue_context *ctx;
	unsigned int nmr;	/* MRs registered in it */
	unsigned int nqp;	/* QPs created in it */
	unsigned int nsrq;	/* SRQs created in it */
	unsigned int nah;	/* address handles created in it */
	unsigned int nmw;	/* memory windows allocated in it */
};

/*
 * The key table, indexed by the key's slot (runtime/mr_key.h has the key layout and why).
 * gen counts each slot's registrations; the key is a keyed permutation of it, so a stale
 * key from a deregistered MR misses. lkey == rkey, as in rxe.
 */
struct blue_mr_table {
	struct blue_mr **mr;	/* [0] is never used: key 0 is invalid */
	struct blue_mw **mw;	/* windows share the slots (mw.h); a slot holds one or none */
	uint8_t *kind;		/* enum blue_key_kind: what a slot has ever held */
	uint32_t *gen;
	uint32_t cap;
	uint32_t hint;		/* where the next free-index search starts */
	uint64_t key_secret;	/* drawn when the table is first allocated */
};

/* A slot's kind sticks once used, so a key of one kind never names the other (mr_key.h). */
enum blue_key_kind {
	BLUE_KEY_UNUSED = 0,
	BLUE_KEY_MR,
	BLUE_KEY_MW,
};

/*
 * blue__key_slot() - a free slot of @kind (never 0) in @t, growing it when full.
 * Return: 0, or -ENOMEM when every slot of the device is taken.
 */
int blue__key_slot(struct blue_mr_table *t, enum blue_key_kind kind, uint32_t *out)
	__attribute__((visibility("hidden")));

/*
 * An MR as the engine holds it: the public part, whose addr is the I/O address the
 * application and its peer use, and where those bytes are (mem_at.h): addr itself in
 * this process; in blue-manager, the daemon's mapping of the application's memfd, or
 * addr in the application's process for memory from its heap.
 */
struct blue_mr_host {
	struct blue_mr mr;
	struct blue_mem_at at;
};

static inline struct blue_mr_host *blue__mr_host(const struct blue_mr *mr)
{
	return (struct blue_mr_host *)mr;
}

/*
 * blue__reg_mr_at() - blue_reg_mr() of [@addr, @addr + @length) whose bytes are at @at.
 * Return: the MR, or NULL with errno (after a message).
 */
struct blue_mr *blue__reg_mr_at(struct blue_pd *pd, void *addr, size_t length,
				unsigned int access, struct blue_mem_at at)
	__attribute__((visibility("hidden")));

/* Why an access check failed; also the text of the log line. */
enum blue_mr_verdict {
	BLUE_MR_OK = 0,
	BLUE_MR_BAD_KEY,	/* no MR with this key (never registered, or deregistered) */
	BLUE_MR_BAD_PD,		/* the MR is in another PD than the QP */
	BLUE_MR_BOUNDS,		/* [va, va+len) is not inside the MR, or wraps */
	BLUE_MR_PERM,		/* the MR lacks the access right the operation needs */
	BLUE_MR_BAD_QP,		/* a type 2B window bound to another QP (mw.c) */
	BLUE_MR_FAULT,		/* the application's process no longer maps the range */
};

const char *blue__mr_verdict_str(enum blue_mr_verdict v) __attribute__((visibility("hidden")));

/*
 * blue__mr_check() - may @pd's QP access [@va, @va + @len) through @key with @need?
 * @need: BLUE_ACCESS_* bits the operation requires (0 for a local read).
 * @at:   on success (may be NULL), where the byte at @va is (mem_at.h).
 *
 * The checks of IBA 10.6 (R_Key/L_Key, PD, bounds, rights) in that order; the bounds
 * test cannot overflow however large @va and @len are. A zero @len passes the bounds
 * test; whether a zero-length operation is checked at all is the caller's rule
 * (rxe skips the R_Key check for a zero-length RDMA).
 *
 * Locking: the context's thread (the tables are not shared across threads).
 * Return: BLUE_MR_OK or the reason.
 */
enum blue_mr_verdict blue__mr_check(struct blue_context *ctx, const struct blue_pd *pd,
				    uint32_t key, uint64_t va, uint64_t len,
				    unsigned int need, struct blue_mem_at *at)
	__attribute__((visibility("hidden")));

/* What blue__rereg_mr() changes (the values of ibv_rereg_mr's IBV_REREG_MR_CHANGE_*). */
enum blue_rereg {
	BLUE_REREG_TRANSLATION = 1,	/* @addr and @length */
	BLUE_REREG_PD = 2,
	BLUE_REREG_ACCESS = 4,
	BLUE_REREG_ALL = 7,
};

/*
 * blue__rereg_mr() - change what @what says of @mr in place: its range, its PD (of the
 * same context) and its access rights, checked as blue_reg_mr() checks them. The keys stay
 * (as rxe keeps them), so a peer that holds the rkey reaches the new range with the new
 * rights; a check that now fails (PD, bounds, rights) fails the next access to it.
 * Locking: the context's thread.
 * Return: 0, or EINVAL after a message (nothing changed).
 */
int blue__rereg_mr(struct blue_mr *mr, unsigned int what, struct blue_pd *pd, void *addr,
		   size_t length, unsigned int access) __attribute__((visibility("hidden")));

void blue__mr_table_fini(struct blue_mr_table *t) __attribute__((visibility("hidden")));

#endif /* BLUE_RUNTIME_MR_H */
