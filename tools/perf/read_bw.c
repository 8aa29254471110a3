// SPDX-License-Identifier: MIT
/* blue_read_bw: RDMA READ bandwidth (perftest's ib_read_bw) over libblue. See tools/perf/perf.h. */
#include "tools/perf/perf.h"

int main(int argc, char **argv)
{
	return perf_main(argc, argv, PT_READ_BW);
}
