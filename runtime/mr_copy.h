/* SPDX-License-Identifier: MIT */
/*
 * The one way the engine touches registered memory (rxe's copy_data()): every byte it
 * reads from or writes to an application buffer goes through an MR translation made
 * at that moment, so a region deregistered a moment ago is never touched again.
 */
#ifndef BLUE_RUNTIME_MR_COPY_H
#define BLUE_RUNTIME_MR_COPY_H

#include <stdint.h>
#include <blue/blue.h>

#include "runtime/mr.h"

enum blue_copy_dir {
	BLUE_COPY_FROM_MEM,	/* registered memory -> the caller's buffer (gather) */
	BLUE_COPY_TO_MEM,	/* the caller's buffer -> registered memory (scatter) */
};

/*
 * blue__copy_data() - move @len bytes between @buf and the bytes [@off, @off + @len)
 * of the list @sge[0..@nsge), each SGE translated through the MR its key names, for
 * @pd's QP, with the rights @need.
 * @direct: only with BLUE_COPY_FROM_MEM, may be NULL. On success it points at the bytes:
 *          at the translated address when one SGE holds them all and they are in
 *          this process (nothing is copied: the caller consumes them within this
 *          engine step), else at @buf.
 * @bad:    on failure, the index of the SGE refused (may be NULL).
 *
 * Zero-length SGEs name no memory and are skipped unchecked (rxe does the same). A
 * range past the list's end is BLUE_MR_BOUNDS.
 * Locking: the context's thread (as blue__mr_check()).
 * Return: BLUE_MR_OK (every byte moved) or the verdict of the SGE refused; bytes of the
 * SGEs before it may have moved.
 */
enum blue_mr_verdict blue__copy_data(struct blue_context *ctx, const struct blue_pd *pd,
				     const struct blue_sge *sge, uint32_t nsge, uint32_t off,
				     void *buf, uint32_t len, unsigned int need,
				     enum blue_copy_dir dir, const void **direct, uint32_t *bad)
	__attribute__((visibility("hidden")));

/*
 * blue__copy_mr() - blue__copy_data() on the single range [@va, @va + @len) under @key:
 * the responder's side of a WRITE or READ (an R_Key and a RETH address).
 */
enum blue_mr_verdict blue__copy_mr(struct blue_context *ctx, const struct blue_pd *pd,
				   uint32_t key, uint64_t va, void *buf, uint32_t len,
				   unsigned int need, enum blue_copy_dir dir, const void **direct)
	__attribute__((visibility("hidden")));

#endif /* BLUE_RUNTIME_MR_COPY_H */
