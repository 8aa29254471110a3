// SPDX-License-Identifier: MIT
/*
 * What the benchmarks print: perftest's banner and column layout (so scripts written for
 * ib_write_bw read ours), the latency statistics, --out_json, and small helpers (CRC,
 * data pattern).
 *
 * Units, as perftest's: MB/sec is 2^20 bytes per second; --report_gbits gives 10^9 bits
 * per second; MsgRate is 10^6 messages per second; latencies are microseconds.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <isa-l/crc.h>

#include "tools/perf/perf.h"

#define DASHES \
	"---------------------------------------------------------------------------------------\n"

/* ISA-L's crc32_gzip_refl is zlib's crc32, chainable the same way. */
uint32_t perf_crc(uint32_t crc, const void *buf, size_t len)
{
	return crc32_gzip_refl(crc, buf, len);
}

void perf_fill(uint8_t *buf, size_t len, uint64_t key)
{
	uint64_t x = key * 0x9e3779b97f4a7c15ull + 1;

	for (size_t i = 0; i < len; i++) {
		if (!(i & 7)) {	/* xorshift64: cheap, and every byte depends on the key */
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
		buf[i] = (uint8_t)(x >> ((i & 7) * 8));
	}
}

uint32_t perf_cq_mod(const struct perf_opts *o)
{
	uint32_t m = o->cq_mod ? o->cq_mod : PERF_CQ_MOD;

	return m < o->tx_depth ? m : o->tx_depth;
}

void perf_print_banner(const struct perf_ctx *c)
{
	const struct perf_opts *o = c->o;
	const struct perf_qp *q = &c->q[0];
	char lg[64], rg[64];

	printf(DASHES);
	printf("                    %s\n", c->t->title);
	printf(" Device         : %s (blue, AF_XDP)\n", o->ifname);
	printf(" Number of qps   : %u\t\tTransport type : IB\n", c->nqps);
	printf(" Connection type : RC\t\tUsing SRQ      : OFF\n");
	if (!c->t->lat)
		printf(" TX depth        : %u\n CQ Moderation   : %u\n Post List       : %u\n",
		       o->tx_depth, perf_cq_mod(o),
		       o->post_list);
	if (c->t->recv)
		printf(" RX depth        : %u\n", PERF_RX_DEPTH);
	printf(" Mtu             : %d[B]\n", blue_mtu_bytes(q->remote.mtu));
	printf(" Link type       : Ethernet\n GID index       : %d\n", o->gidx);
	printf(" Max inline data : %u[B]\n", o->inline_size);
	printf(" Data ex. method : Ethernet (blue CM)\n");
	printf(" Buffer pages    : %s\n", c->mem_flags & BLUE_BUF_HUGETLB ? "2 MiB (hugetlb)" :
	       c->mem_flags & BLUE_BUF_THP ? "2 MiB (THP, best effort)" : "4 KiB");
	if (o->duration)
		printf(" Duration        : %u[sec]\n", o->duration);
	printf(DASHES);
	for (int side = 0; side < 2; side++) {
		const struct blue_cm_info *i = side ? &q->remote : &q->local;
		char *g = side ? rg : lg;

		snprintf(g, 64, "%u.%u.%u.%u", i->gid.raw[12], i->gid.raw[13], i->gid.raw[14],
			 i->gid.raw[15]);
		printf(" %s address: LID 0000 QPN 0x%04x PSN 0x%06x RKey 0x%08x VAddr 0x%016"
		       PRIx64 "\n GID: ::ffff:%s\n", side ? "remote" : "local", i->qpn, i->psn,
		       i->mr.rkey, i->mr.addr, g);
	}
	printf(DASHES);
}

void perf_print_header(const struct perf_ctx *c)
{
	if (c->t->lat)
		printf(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    "
		       "t_avg[usec]    t_stdev[usec]   99%% percentile[usec]   99.9%% "
		       "percentile[usec] \n");
	else if (c->o->gbits)
		printf(" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   "
		       "MsgRate[Mpps]\n");
	else
		printf(" #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   "
		       "MsgRate[Mpps]\n");
}

static double bw_unit(const struct perf_opts *o, double bytes_per_s)
{
	return o->gbits ? bytes_per_s * 8 / 1e9 : bytes_per_s / 1048576.0;
}

void perf_print_bw(const struct perf_ctx *c, const struct perf_bw_result *r)
{
	printf(" %-7u    %-7" PRIu64 "          %-7.2f            %-7.2f\t\t   %-7.6f\n",
	       r->size, r->iters, bw_unit(c->o, r->bw_peak), bw_unit(c->o, r->bw_avg),
	       r->msg_rate / 1e6);
}

void perf_print_footer(void)
{
	printf(DASHES);
}

void perf_lat_stats(double *ns, uint64_t n, struct perf_lat_result *r)
{
	double sum = 0, var = 0, avg;

	qsort(ns, n, sizeof(*ns), tool_cmp_double);
	for (uint64_t i = 0; i < n; i++)
		sum += ns[i];
	avg = sum / (double)n;
	for (uint64_t i = 0; i < n; i++)
		var += (ns[i] - avg) * (ns[i] - avg);
	r->iters = n;
	r->min = ns[0] / 1e3;
	r->max = ns[n - 1] / 1e3;
	r->typical = ns[n / 2] / 1e3;	/* perftest's t_typical is the median */
	r->avg = avg / 1e3;
	r->stdev = sqrt(var / (double)n) / 1e3;
	r->p99 = ns[(uint64_t)((double)n * 0.99) < n ? (uint64_t)((double)n * 0.99) : n - 1] / 1e3;
	r->p999 = ns[(uint64_t)((double)n * 0.999) < n ? (uint64_t)((double)n * 0.999) : n - 1] /
		  1e3;
}

void perf_print_lat(const struct perf_lat_result *r)
{
	printf(" %-7u %-7" PRIu64 "          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f"
	       "     \t%-7.2f\t\t%-7.2f  \t\t%-7.2f\n", r->size, r->iters, r->min, r->max,
	       r->typical, r->avg, r->stdev, r->p99, r->p999);
}

int perf_write_json(const struct perf_ctx *c, const struct perf_bw_result *bw,
		    const struct perf_lat_result *lat, unsigned int n)
{
	const struct perf_opts *o = c->o;
	FILE *f = fopen(o->json_file, "w");

	if (!f) {
		perror(o->json_file);
		return -1;
	}
	fprintf(f, "{\n  \"test\": \"%s\",\n  \"title\": \"%s\",\n  \"device\": \"%s\",\n"
		"  \"qps\": %u,\n  \"mtu\": %d,\n  \"tx_depth\": %u,\n  \"post_list\": %u,\n"
		"  \"inline_size\": %u,\n  \"verified\": true,\n", c->t->name, c->t->title,
		o->ifname, c->nqps, blue_mtu_bytes(c->q[0].remote.mtu), o->tx_depth,
		o->post_list, o->inline_size);
	if (lat)
		fprintf(f, "  \"lat_unit\": \"usec\",\n  \"lat_kind\": \"%s\",\n",
			c->t->pingpong ? "half_round_trip" : "round_trip");
	else
		fprintf(f, "  \"bw_unit\": \"%s\",\n", o->gbits ? "Gb/sec" : "MB/sec");
	fprintf(f, "  \"results\": [");
	for (unsigned int i = 0; i < n; i++) {
		fprintf(f, "%s\n    {", i ? "," : "");
		if (lat) {
			const struct perf_lat_result *r = &lat[i];

			fprintf(f, "\"MsgSize\": %u, \"n_iterations\": %" PRIu64 ", \"t_min\": %.3f, "
				"\"t_max\": %.3f, \"t_typical\": %.3f, \"t_avg\": %.3f, "
				"\"t_stdev\": %.3f, \"percentile_99\": %.3f, "
				"\"percentile_99_9\": %.3f, \"cpu_cores_client\": %.3f, "
				"\"cpu_cores_server\": %.3f}", r->size, r->iters, r->min, r->max,
				r->typical, r->avg, r->stdev, r->p99, r->p999, r->cpu_client,
				r->cpu_server);
		} else {
			const struct perf_bw_result *r = &bw[i];

			fprintf(f, "\"MsgSize\": %u, \"n_iterations\": %" PRIu64 ", \"BW_peak\": %.3f, "
				"\"BW_average\": %.3f, \"MsgRate\": %.6f, \"bytes_per_sec\": %.0f, "
				"\"cpu_cores_client\": %.3f, \"cpu_cores_server\": %.3f}",
				r->size, r->iters, bw_unit(o, r->bw_peak), bw_unit(o, r->bw_avg),
				r->msg_rate / 1e6, r->bw_avg, r->cpu_client, r->cpu_server);
		}
	}
	fprintf(f, "\n  ]\n}\n");
	if (fclose(f)) {
		perror(o->json_file);
		return -1;
	}
	return 0;
}
