// SPDX-License-Identifier: MIT
/* Time, CPU use and round-trip statistics, as every benchmark measures them. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tools/common/tool_common.h"

uint64_t tool_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Fields 14 and 15 of /proc/self/stat: utime and stime in clock ticks. */
double tool_cpu_s(void)
{
	unsigned long long ut = 0, st = 0;
	char buf[1024], *p;
	FILE *f = fopen("/proc/self/stat", "r");
	size_t n;

	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');	/* the command name may hold spaces */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
			 &ut, &st) != 2)
		return 0;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

double tool_cpu_cores(double cpu0, uint64_t t0)
{
	return (tool_cpu_s() - cpu0) * 1e9 / (double)(tool_now_ns() - t0);
}

int tool_poll_wait(int fd, short ev, uint64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = ev };
	uint64_t now;
	int n;

	for (;;) {
		now = tool_now_ns();
		if (now >= deadline)
			return -ETIMEDOUT;
		n = poll(&p, 1, (int)((deadline - now) / 1000000u) + 1);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

int tool_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int tool_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void tool_print_rtt(uint64_t *rtt, uint32_t n)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < n; i++)
		sum += rtt[i];
	qsort(rtt, n, sizeof(*rtt), tool_cmp_u64);
	printf("RESULT iters %u rtt_p50_us %.3f rtt_p99_us %.3f rtt_avg_us %.3f rtt_min_us %.3f\n",
	       n, rtt[n / 2] / 1e3, rtt[(uint64_t)n * 99 / 100] / 1e3, (double)sum / n / 1e3,
	       rtt[0] / 1e3);
}
