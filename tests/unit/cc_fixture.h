/* SPDX-License-Identifier: MIT */
/*
 * Helpers for the congestion-control tests: an algorithm run on its own over a synthetic
 * clock (no QP, no engine: struct blue_cc and a live context in memory), and the
 * parameter checks of blue_qp_set_cc() on a real QP with the log line they print.
 */
#ifndef BLUE_TESTS_CC_FIXTURE_H
#define BLUE_TESTS_CC_FIXTURE_H

#include <stdint.h>

#include "runtime/cc.h"

/* The synthetic clock starts here (any nonzero time: 0 must not be special). */
#define CC_T0	1000000000ull
#define CC_US	1000ull

/* |x|, without libm (the unit binary does not link it) */
static inline double cc_abs(double x) { return x < 0 ? -x : x; }

/* One algorithm alone: its state, the live context it exports to, and its table. */
struct cc_alone {
	struct blue_cc cc;
	struct blue_qp_ctx live;
	const struct blue_cc_ops *ops;
};

/*
 * cc_alone_init() - @algo's table (asserts it is registered) with its defaults, a
 * 10000 Mbit/s link, then @tweak(params) if not NULL, then init at CC_T0.
 */
void cc_alone_init(struct cc_alone *a, uint32_t algo,
		   void (*tweak)(struct blue_cc_params *p));

/*
 * cc_expect_rejected() - blue_qp_set_cc(@p) on a connected QP returns EINVAL, logs a
 * line containing @want, and leaves the QP's congestion control as it was.
 */
void cc_expect_rejected(const struct blue_cc_params *p, const char *want);

/* cc_expect_accepted() - blue_qp_set_cc(@p) on a connected QP returns 0, logs nothing. */
void cc_expect_accepted(const struct blue_cc_params *p);

#endif /* BLUE_TESTS_CC_FIXTURE_H */
