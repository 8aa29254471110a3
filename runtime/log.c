// SPDX-License-Identifier: MIT
/* See log.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "runtime/log.h"

bool blue__env_flag(const char *name, bool def)
{
	const char *e = getenv(name);

	if (!e || !*e)
		return def;
	return !(e[0] == '0' || e[0] == 'n' || e[0] == 'N' || !strcasecmp(e, "off"));
}

/* blue__log_capture(): where this thread's lines also go (NULL: nowhere) */
static __thread char *capture;
static __thread size_t capture_len;

void blue__log_capture(char *buf, size_t len)
{
	capture = len ? buf : NULL;
	capture_len = len;
	if (capture)
		capture[0] = 0;
}

void blue__logf(const char *fmt, ...)
{
	static int quiet = -1;
	char line[512];
	va_list ap;

	if (quiet < 0) {
		const char *e = getenv("BLUE_LOG");

		quiet = e && e[0] == '0';
	}
	if (quiet && !capture)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (capture)
		snprintf(capture, capture_len, "%s", line);
	if (quiet)
		return;
	/* one write per line so lines from several threads do not interleave */
	fprintf(stderr, "libblue: %s\n", line);
}
