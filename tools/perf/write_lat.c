// SPDX-License-Identifier: MIT
/*
 * blue_write_lat: RDMA WRITE ping-pong latency, round trip / 2 (perftest's ib_write_lat)
 * over libblue. See tools/perf/perf.h.
 */
#include "tools/perf/perf.h"

int main(int argc, char **argv)
{
	return perf_main(argc, argv, PT_WRITE_LAT);
}
