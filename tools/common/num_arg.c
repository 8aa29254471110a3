// SPDX-License-Identifier: MIT
/* Numeric command-line arguments, checked against their range. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "tools/common/tool_common.h"

long long tool_num_arg(const char *what, const char *s, long long lo, long long hi,
		       bool suffix)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (suffix && end != s) {
		switch (*end) {
		case 'k': case 'K': v <<= 10; end++; break;
		case 'm': case 'M': v <<= 20; end++; break;
		case 'g': case 'G': v <<= 30; end++; break;
		}
	}
	/* strtoull takes "-1" as a huge number: refuse any sign outright */
	if (errno || end == s || *end || s[0] == '-' || v < (unsigned long long)lo ||
	    v > (unsigned long long)hi) {
		fprintf(stderr, "invalid %s '%s': expected %lld..%lld\n", what, s, lo, hi);
		return -1;
	}
	return (long long)v;
}
