// SPDX-License-Identifier: MIT
/*
 * The --cc option of the tools: which congestion control this side offers the peer in
 * the CM exchange (runtime/cc_neg.c decides from both offers).
 */
#include <stdio.h>
#include <string.h>

#include <blue/blue.h>
#include "tools/common/tool_common.h"

int tool_cc_arg(const char *s, uint32_t *caps)
{
	if (!strcmp(s, "none"))
		*caps = 0;
	else if (!strcmp(s, "dcqcn"))
		*caps = BLUE_CM_CAP_DCQCN;
	else if (!strcmp(s, "window"))
		*caps = BLUE_CM_CAP_WINDOW_CC;
	else {
		fprintf(stderr, "invalid --cc '%s': use none, dcqcn or window\n", s);
		return -1;
	}
	return 0;
}

uint32_t tool_cc_caps(uint32_t caps, bool given, uint32_t cc_caps)
{
	const uint32_t cc = BLUE_CM_CAP_DCQCN | BLUE_CM_CAP_WINDOW_CC;

	return given ? (caps & ~cc) | cc_caps : caps;
}

const char *tool_cc_name(uint32_t algo)
{
	switch (algo) {
	case BLUE_CC_NONE:	return "none";
	case BLUE_CC_DCQCN:	return "dcqcn";
	case BLUE_CC_WINDOW:	return "window";
	default:		return "?";
	}
}
