/* SPDX-License-Identifier: MIT */
/*
 * "Not supported" for the libibverbs calls blue has no object behind (the IBVERBS_1.0
 * ABI, the provider-facing IBVERBS_PRIVATE_34 calls, cross-process import): each says
 * so once per process, naming the call, through libblue's logger, and fails the way
 * its return type fails in rdma-core: an errno int, -1 with errno, or NULL with errno.
 * Once, because callers probe in loops (a capability check per device, per port).
 */
#ifndef BLUE_COMPAT_UNSUP_H
#define BLUE_COMPAT_UNSUP_H

#include <stdatomic.h>

#include "compat/compat.h"

/* BV_SAY_ONCE(fmt, ...): bv_log the first time this line runs in the process */
#define BV_SAY_ONCE(...) do {							\
	static atomic_flag said_ = ATOMIC_FLAG_INIT;				\
	if (!atomic_flag_test_and_set(&said_))					\
		bv_log(__VA_ARGS__);						\
} while (0)

/* the ways to fail, each after the message naming @who, with errno EOPNOTSUPP */
#define BV_UNSUP_SAY(who, why) BV_SAY_ONCE("%s: not supported by blue (%s)", who, why)
#define BV_UNSUP_INT(who, why)  ({ BV_UNSUP_SAY(who, why); bv_ret(EOPNOTSUPP); })
#define BV_UNSUP_M1(who, why)   ({ BV_UNSUP_SAY(who, why); errno = EOPNOTSUPP; -1; })
#define BV_UNSUP_NULL(who, why) ({ BV_UNSUP_SAY(who, why); bv_null(EOPNOTSUPP); })
#define BV_UNSUP_VOID(who, why) do { BV_UNSUP_SAY(who, why); errno = EOPNOTSUPP; } while (0)

#endif /* BLUE_COMPAT_UNSUP_H */
