// SPDX-License-Identifier: MIT
/* A path MTU option: one of the five IBA MTUs (IBA 9.7.2.2, 256..4096 bytes). */
#include <stdio.h>

#include <blue/blue.h>
#include "tools/common/tool_common.h"

int tool_mtu_arg(const char *s)
{
	long long v = tool_num_arg("MTU", s, 256, 4096, false);

	if (v < 0)
		return -1;
	for (int m = BLUE_MTU_256; m <= BLUE_MTU_4096; m++)
		if (blue_mtu_bytes((enum blue_mtu)m) == v)
			return m;
	fprintf(stderr, "invalid MTU %lld: use 256, 512, 1024, 2048 or 4096\n", v);
	return -1;
}
