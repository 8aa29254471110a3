// SPDX-License-Identifier: MIT
/*
 * blue_atomic_lat: atomic (FETCH_AND_ADD, or CMP_AND_SWAP with -A) latency, full round
 * trip (perftest's ib_atomic_lat) over libblue. See tools/perf/perf.h.
 */
#include "tools/perf/perf.h"

int main(int argc, char **argv)
{
	return perf_main(argc, argv, PT_ATOMIC_LAT);
}
