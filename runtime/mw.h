/* SPDX-License-Identifier: MIT */
/*
 * Memory windows (IBA 10.6.7): type 1 and type 2 (2B) windows onto an MR, in the MR key
 * table's slots (mr_key.h), bound by a BIND_MW work request and invalidated by LOCAL_INV
 * or a SEND with invalidate. A window holds no memory of its own: the responder resolves
 * a window's rkey to its MR and an address in it here, and blue__mr_check() stays the one
 * check of the MR itself (key, PD, bounds, rights).
 */
#ifndef BLUE_RUNTIME_MW_H
#define BLUE_RUNTIME_MW_H

#include <stdbool.h>
#include <stdint.h>
#include <blue/blue.h>

#include "runtime/mr.h"
#include "runtime/mr_copy.h"

struct blue_qp;
struct blue_send_wqe;

/* The engine's side of a window: what it is bound to now. */
struct blue__mw {
	struct blue_mw pub;
	uint32_t key;		/* the rkey that reaches it now (pub.rkey is the application's) */
	bool bound;
	struct blue_mr *mr;	/* bound: the MR the window opens */
	const struct blue_qp *qp;	/* bound type 2: the only QP that may use it (2B) */
	uint64_t addr;		/* bound: where the window starts in the MR (an MR va) */
	uint64_t length;
	unsigned int access;	/* bound: BLUE_ACCESS_REMOTE_*, ZERO_BASED */
};

/* BLUE_WR_BIND_MW and BLUE_WR_LOCAL_INV: executed by the requester, no packet. */
static inline bool blue__wr_is_local(uint32_t op)
{
	return op == BLUE_WR_BIND_MW || op == BLUE_WR_LOCAL_INV;
}

/* The work requests of this file: LOCAL_INV, BIND_MW, SEND_WITH_INV. */
static inline bool blue__mw_wr_opcode(uint32_t op)
{
	return op == BLUE_WR_LOCAL_INV || op == BLUE_WR_BIND_MW || op == BLUE_WR_SEND_WITH_INV;
}

/*
 * blue__mw_wr_ok() - is @wr one of this file's work requests (LOCAL_INV, BIND_MW,
 * SEND_WITH_INV), well formed for @qp? The bind's rules are checked when it executes, in
 * the send queue's order (a bind may depend on an invalidate posted before it).
 * Return: false (logged when it is one of them) for any other.
 */
bool blue__mw_wr_ok(const struct blue_qp *qp, const struct blue_send_wr *wr)
	__attribute__((visibility("hidden")));

/*
 * blue__mw_exec() - execute the local operation @w (BIND_MW or LOCAL_INV) of @qp, in its
 * send queue's order.
 * Return: BLUE_WC_SUCCESS, or the completion status of the failure (rxe's:
 * BLUE_WC_MW_BIND_ERR for a bind, BLUE_WC_LOC_QP_OP_ERR for an invalidate), logged.
 */
enum blue_wc_status blue__mw_exec(struct blue_qp *qp, const struct blue_send_wqe *w)
	__attribute__((visibility("hidden")));

/*
 * blue__mw_remote_inv() - the IETH of a SEND with invalidate that @qp received names
 * @rkey: invalidate that type 2 window (an MR cannot be invalidated: blue has no
 * fast-register MRs, and rxe refuses the others).
 * Return: 0, or -EINVAL after a log line.
 */
int blue__mw_remote_inv(struct blue_qp *qp, uint32_t rkey)
	__attribute__((visibility("hidden")));

/*
 * blue__rkey_check() - blue__mr_check() for an R_Key that arrived at @qp: a window's key
 * is checked against the window (bound, its key, PD, 2B QP, range, rights) and then its
 * MR is checked for the translated range; any other key is an MR's.
 * Locking: the context's thread.
 */
enum blue_mr_verdict blue__rkey_check(const struct blue_qp *qp, uint32_t rkey, uint64_t va,
				      uint64_t len, unsigned int need,
				      struct blue_mem_at *at)
	__attribute__((visibility("hidden")));

/* blue__copy_mr() through blue__rkey_check()'s resolution: the responder's copies. */
enum blue_mr_verdict blue__copy_rkey(const struct blue_qp *qp, uint32_t rkey, uint64_t va,
				     void *buf, uint32_t len, unsigned int need,
				     enum blue_copy_dir dir, const void **direct)
	__attribute__((visibility("hidden")));

/* Windows bound to @mr now (dereg refuses while there are any). */
unsigned int blue__mw_bound_to(const struct blue_context *ctx, const struct blue_mr *mr)
	__attribute__((visibility("hidden")));

/* @qp is being destroyed: the type 2B windows bound to it are invalidated. */
void blue__mw_qp_gone(const struct blue_qp *qp) __attribute__((visibility("hidden")));

#endif /* BLUE_RUNTIME_MW_H */
