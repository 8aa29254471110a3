// SPDX-License-Identifier: MIT
/*
 * blue_write_bw: RDMA WRITE bandwidth (perftest's ib_write_bw)
 * over libblue. See tools/perf/perf.h.
 */
#include "tools/perf/perf.h"

int main(int argc, char **argv)
{
	return perf_main(argc, argv, PT_WRITE_BW);
}
