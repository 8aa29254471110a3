/* SPDX-License-Identifier: MIT */
/*
 * The provider stand-ins (librdmacm, libmlx5, libefa) stand in for libraries blue has no
 * use for yet, so that programs linked against them load. A call blue does not serve
 * answers "not supported" (errno EOPNOTSUPP, and the return its type calls for) and
 * says so on stderr, once per call per process, naming it (BLUE_LOG=0 silences it, as
 * libblue's log). Once, because programs probe such calls in loops.
 * These libraries carry no libblue, so the message is printed here, in its format.
 */
#ifndef BLUE_COMPAT_STUB_LOG_H
#define BLUE_COMPAT_STUB_LOG_H

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STUB_EXPORT __attribute__((visibility("default")))

/* stub_notsup(said, lib, fn, hint): errno EOPNOTSUPP; the line, if *said was clear */
static inline void stub_notsup(atomic_flag *said, const char *lib, const char *fn,
			       const char *hint)
{
	const char *e = getenv("BLUE_LOG");

	if (!atomic_flag_test_and_set(said) && !(e && !strcmp(e, "0")))
		fprintf(stderr, "libblue: %s() is not supported: blue's %s is a stand-in (%s)\n",
			fn, lib, hint);
	errno = EOPNOTSUPP;
}

/* STUB_NOTSUP_AS(lib, fn, hint): stub_notsup() for call @fn, once per call site */
#define STUB_NOTSUP_AS(lib, fn, hint) do {					\
	static atomic_flag said_ = ATOMIC_FLAG_INIT;				\
	stub_notsup(&said_, lib, fn, hint);					\
} while (0)
/* STUB_NOTSUP(lib, hint): the same for the calling function */
#define STUB_NOTSUP(lib, hint) STUB_NOTSUP_AS(lib, __func__, hint)

#endif /* BLUE_COMPAT_STUB_LOG_H */
