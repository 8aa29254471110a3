/* SPDX-License-Identifier: MIT */
/*
 * Small helpers shared by the tools (blue_xfer, the perftest-style benchmarks) and the
 * benchmark programs under tests/bench: option numbers, the monotonic clock, this
 * process's CPU time, bounded waits and whole-buffer I/O on a socket, and sorting for percentiles. Linked in
 * as $(B)/lib/libbluetoolcommon.a (the Makefile's TCOMMON_A).
 */
#ifndef BLUE_TOOL_COMMON_H
#define BLUE_TOOL_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A whole number in [lo, hi], with an optional K, M or G (binary) suffix when @suffix,
 * else -1 after a message on stderr naming @what.
 */
long long tool_num_arg(const char *what, const char *s, long long lo, long long hi,
		       bool suffix);

/*
 * A path MTU in bytes (256, 512, 1024, 2048 or 4096): its enum blue_mtu, else -1 after a
 * message on stderr.
 */
int tool_mtu_arg(const char *s);

/*
 * --cc none|dcqcn|window: the congestion-control caps this side offers (0,
 * BLUE_CM_CAP_DCQCN, BLUE_CM_CAP_WINDOW_CC), else -1 after a message on stderr.
 */
int tool_cc_arg(const char *s, uint32_t *caps);
/* @caps (blue_cm_qp_attr_default()'s offer) with its CC bits replaced by @cc_caps when
 * --cc was @given; the window alone runs even against a peer that offers nothing. */
uint32_t tool_cc_caps(uint32_t caps, bool given, uint32_t cc_caps);
/* "none", "dcqcn", "window" for an enum blue_cc_algo. */
const char *tool_cc_name(uint32_t algo);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t tool_now_ns(void);
/* utime + stime of this process from /proc/self/stat, in seconds (0 if unreadable). */
double tool_cpu_s(void);
/* CPU cores used since @cpu0 (a tool_cpu_s()) and @t0 (a tool_now_ns()). */
double tool_cpu_cores(double cpu0, uint64_t t0);

/*
 * Wait until @fd is ready for @ev (POLLIN, POLLOUT) or @deadline (tool_now_ns()) passes.
 * Return: 0, -ETIMEDOUT, or -errno.
 */
int tool_poll_wait(int fd, short ev, uint64_t deadline);
/*
 * All @len bytes to / from the stream socket @fd by @deadline (tool_now_ns()).
 * Return: 0, -ETIMEDOUT, -ECONNRESET when the peer closed (receive), or -errno.
 */
int tool_send_all(int fd, const void *buf, size_t len, uint64_t deadline);
int tool_recv_all(int fd, void *buf, size_t len, uint64_t deadline);

/* qsort comparators, ascending. */
int tool_cmp_u64(const void *a, const void *b);
int tool_cmp_double(const void *a, const void *b);

/*
 * Sort @n (> 0) round-trip times in ns and print the benchmark scripts' line:
 * "RESULT iters N rtt_p50_us .. rtt_p99_us .. rtt_avg_us .. rtt_min_us ..".
 */
void tool_print_rtt(uint64_t *rtt, uint32_t n);

#endif
