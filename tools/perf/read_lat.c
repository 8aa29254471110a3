// SPDX-License-Identifier: MIT
/*
 * blue_read_lat: RDMA READ latency, full round trip (perftest's ib_read_lat)
 * over libblue. See tools/perf/perf.h.
 */
#include "tools/perf/perf.h"

int main(int argc, char **argv)
{
	return perf_main(argc, argv, PT_READ_LAT);
}
