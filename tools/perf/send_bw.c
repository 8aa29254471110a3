// SPDX-License-Identifier: MIT
/* blue_send_bw: SEND/RECV bandwidth (perftest's ib_send_bw) over libblue. See tools/perf/perf.h. */
#include "tools/perf/perf.h"

int main(int argc, char **argv)
{
	return perf_main(argc, argv, PT_SEND_BW);
}
