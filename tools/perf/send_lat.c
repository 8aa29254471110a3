// SPDX-License-Identifier: MIT
/*
 * blue_send_lat: SEND/RECV ping-pong latency, round trip / 2 (perftest's ib_send_lat)
 * over libblue. See tools/perf/perf.h.
 */
#include "tools/perf/perf.h"

int main(int argc, char **argv)
{
	return perf_main(argc, argv, PT_SEND_LAT);
}
