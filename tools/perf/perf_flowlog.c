// SPDX-License-Identifier: MIT
/*
 * --report-interval-us: per-QP goodput over time, for the congestion-control bench
 * (tests/bench/cc.sh). Every interval, one CSV row per QP with the bytes its completions
 * retired since that QP's last row:
 *
 *   t_us,qp,qpn,bytes
 *
 * t_us is CLOCK_MONOTONIC in microseconds, the time of the row (a late pass makes a
 * longer interval, never a lost one: the bytes are counted, not sampled). Every network
 * namespace shares that clock, and so does the switch's queue record (bpf_ktime_get_ns),
 * so rows of several processes and the queue depth line up on one time axis.
 *
 * A completion retires every WR before it (RC completes in order), so the bytes of a QP
 * come in lumps of --cq-mod WRs: a fine interval wants --cq-mod 1.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tools/perf/perf.h"

int perf_flowlog_open(struct perf_flowlog *fl, const struct perf_ctx *c, uint64_t now)
{
	const struct perf_opts *o = c->o;

	memset(fl, 0, sizeof(*fl));
	if (!o->report_us)
		return 0;
	fl->bytes = calloc(c->nqps, sizeof(*fl->bytes));
	fl->qpn = calloc(c->nqps, sizeof(*fl->qpn));
	if (!fl->bytes || !fl->qpn) {
		free(fl->bytes);
		free(fl->qpn);
		fprintf(stderr, "--report-interval-us: out of memory for %u QPs\n", c->nqps);
		return -1;
	}
	fl->f = fopen(o->report_file, "w");
	if (!fl->f) {
		fprintf(stderr, "--report-file %s: %s\n", o->report_file, strerror(errno));
		free(fl->bytes);
		free(fl->qpn);
		return -1;
	}
	for (uint32_t i = 0; i < c->nqps; i++)
		fl->qpn[i] = blue_qp_num(c->q[i].qp);
	fl->nqps = c->nqps;
	fl->interval_ns = (uint64_t)o->report_us * 1000;
	fl->next_ns = now + fl->interval_ns;
	fprintf(fl->f, "t_us,qp,qpn,bytes\n");
	/* a zero row per QP at the start: the first interval has a known beginning */
	for (uint32_t i = 0; i < fl->nqps; i++)
		fprintf(fl->f, "%llu,%u,%u,0\n", (unsigned long long)(now / 1000), i, fl->qpn[i]);
	return 0;
}

static void write_rows(struct perf_flowlog *fl, uint64_t now)
{
	for (uint32_t i = 0; i < fl->nqps; i++) {
		fprintf(fl->f, "%llu,%u,%u,%llu\n", (unsigned long long)(now / 1000), i,
			fl->qpn[i], (unsigned long long)fl->bytes[i]);
		fl->bytes[i] = 0;
	}
}

void perf_flowlog_tick(struct perf_flowlog *fl, uint64_t now)
{
	if (!fl->f || now < fl->next_ns)
		return;
	write_rows(fl, now);
	/* the next row one interval from now: after a late pass, no burst of catch-up rows */
	fl->next_ns = now + fl->interval_ns;
}

int perf_flowlog_close(struct perf_flowlog *fl, uint64_t now)
{
	int rc = 0;

	if (!fl->f)
		return 0;
	write_rows(fl, now);
	if (ferror(fl->f) | fclose(fl->f)) {
		fprintf(stderr, "--report-file: write failed\n");
		rc = -1;
	}
	free(fl->bytes);
	free(fl->qpn);
	memset(fl, 0, sizeof(*fl));
	return rc;
}
