/* SPDX-License-Identifier: MIT */
/*
 * The provider stubs (librdmacm, libmlx5, libefa) stand in for libraries blue has no
 * use for, so that programs linked against them load. Every call answers "not
 * supported"; the first says so on stderr (BLUE_LOG=0 silences it, as libblue's log).
 */
#ifndef BLUE_COMPAT_STUB_LOG_H
#define BLUE_COMPAT_STUB_LOG_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STUB_EXPORT __attribute__((visibility("default")))

static inline void stub_notsup(const char *lib, const char *fn)
{
	static int said;
	const char *e = getenv("BLUE_LOG");

	errno = EOPNOTSUPP;
	if (said || (e && !strcmp(e, "0")))
		return;
	said = 1;
	fprintf(stderr, "libblue: %s() is not supported: blue's %s is a stub (use plain "
		"verbs; for perftest, run without -R and with the RC transport)\n", fn, lib);
	errno = EOPNOTSUPP;
}

#endif /* BLUE_COMPAT_STUB_LOG_H */
