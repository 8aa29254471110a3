/* SPDX-License-Identifier: MIT */
/*
 * The engine's half of the tune map (include/blue/tune.h): one word checked per pass,
 * requests applied through blue_qp_set_cc()/blue_qp_set_retx(), what each QP runs
 * published into its entry.
 *
 * Pick-up latency: a pass sees a request at its start, so while traffic runs (passes
 * back to back) a change lands within one pass, microseconds. An engine asleep in event
 * mode (blue_get_cq_event, compat's progress thread) sees it at its next wake-up: the
 * next packet, completion or timer; bluectl's bounded wait then reports that no engine
 * acknowledged, and the change stays stored and lands at that wake-up.
 */
#ifndef BLUE_RUNTIME_TUNE_H
#define BLUE_RUNTIME_TUNE_H

#include <stdint.h>
#include <blue/tune.h>

#include "runtime/obs.h"

#define BLUE_TUNE_HIDDEN __attribute__((visibility("hidden")))

struct blue_context;
struct blue_qp;

/* Apply what changed since the engine last looked (@seq: entry 0's seq now). */
void blue__tune_apply(struct blue_context *ctx, uint64_t seq) BLUE_TUNE_HIDDEN;

/* Once per pass: one acquire load of entry 0's seq, one predictable branch. */
static inline void blue__tune_check(struct blue_context *ctx, struct blue_obs *o)
{
	uint64_t seq = __atomic_load_n(&o->tune[0].seq, __ATOMIC_ACQUIRE);

	if (__builtin_expect(seq != o->tune_seq, 0))
		blue__tune_apply(ctx, seq);
}

/* A QP was created or reset: give it the interface's defaults, claim its entry. */
void blue__tune_qp_init(struct blue_qp *qp) BLUE_TUNE_HIDDEN;

/* Write what @qp runs now into its entry (after any set_cc/set_retx). */
void blue__tune_publish(struct blue_qp *qp) BLUE_TUNE_HIDDEN;

/* @qp is going away: its entry describes nothing any more. */
void blue__tune_qp_gone(struct blue_qp *qp) BLUE_TUNE_HIDDEN;

/* The map the context's engine reads (the pinned one, or the context's own). */
struct blue_tune_entry *blue__tune_map(struct blue_context *ctx) BLUE_TUNE_HIDDEN;

#endif /* BLUE_RUNTIME_TUNE_H */
