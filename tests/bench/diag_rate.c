// SPDX-License-Identifier: MIT
/*
 * diag_rate: what `bluectl diag on` costs the data path, without the scheduler in the
 * way. Two libblue contexts over the in-process loopback HAL, one thread, one RC QP
 * each; A keeps DEPTH 64-byte RDMA WRITEs outstanding to B and counts completions per
 * second. Runs alternate diagnostics off and on (the latency switch, BLUE_DIAG_LAT,
 * which is what a WRITE stream pays for: a clock read at post and at completion and a
 * histogram update), and the median of each is reported.
 *
 * Usage: diag_rate [OPS_PER_RUN [PAIRS]]   (defaults 200000, 5)
 * Prints one line per run and a summary; exits 1 if the transfer fails.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <blue/blue.h>
#include "runtime/device.h"
#include "runtime/obs.h"
#include "tools/common/tool_common.h"

#define DEPTH	16
#define MSG	64

struct side {
	struct blue_hal *hal;
	struct blue_context *ctx;
	struct blue_pd *pd;
	struct blue_cq *cq;
	struct blue_qp *qp;
	struct blue_mr *mr;
	uint8_t *buf;
	struct blue_cm_info info;
};

static int side_open(struct side *s, struct blue_hal *hal, uint8_t last)
{
	const uint8_t mac[6] = { 0x02, 0xb1, 0x0e, 0, 0, last };
	struct blue_qp_init_attr ia = { .qp_type = BLUE_QPT_RC,
					.cap = { .max_send_wr = 64, .max_recv_wr = 64,
						 .max_send_sge = 1, .max_recv_sge = 1 } };

	s->hal = hal;
	s->ctx = blue_open_device_hal(hal, mac, htonl(0x0ac90000u | last));
	if (!s->ctx)
		return -1;
	s->pd = blue_alloc_pd(s->ctx);
	s->cq = blue_create_cq(s->ctx, 256, NULL, NULL, 0);
	s->buf = calloc(1, MSG);
	if (!s->pd || !s->cq || !s->buf)
		return -1;
	s->mr = blue_reg_mr(s->pd, s->buf, MSG, BLUE_ACCESS_LOCAL_WRITE |
			    BLUE_ACCESS_REMOTE_WRITE);
	ia.send_cq = ia.recv_cq = s->cq;
	s->qp = blue_create_qp(s->pd, &ia);
	if (!s->mr || !s->qp)
		return -1;
	if (blue_cm_info_from_qp(s->ctx, s->qp, 1, &s->info))
		return -1;
	blue_cm_info_set_mr(&s->info, s->mr);
	return 0;
}

static int connect_pair(struct side *a, struct side *b)
{
	struct blue_cm_qp_attr attr;

	blue_cm_qp_attr_default(&attr);
	attr.access = BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE;
	return blue_cm_connect_qp(a->ctx, a->qp, a->info.psn, &b->info, &attr) ||
	       blue_cm_connect_qp(b->ctx, b->qp, b->info.psn, &a->info, &attr);
}

/* @ops WRITEs from A to B, DEPTH outstanding. Return Mop/s, or -1 on a failed WR. */
static double run(struct side *a, struct side *b, unsigned int ops)
{
	struct blue_sge sge = { .addr = (uintptr_t)a->buf, .length = MSG, .lkey = a->mr->lkey };
	struct blue_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = BLUE_WR_RDMA_WRITE,
				   .send_flags = BLUE_SEND_SIGNALED };
	struct blue_send_wr *bad;
	struct blue_wc wc[DEPTH];
	unsigned int posted = 0, done = 0;
	uint64_t t0;
	int n, i;

	wr.wr.rdma.remote_addr = b->info.mr.addr;
	wr.wr.rdma.rkey = b->info.mr.rkey;
	t0 = tool_now_ns();
	while (done < ops) {
		while (posted < ops && posted - done < DEPTH) {
			wr.wr_id = posted++;
			if (blue_post_send(a->qp, &wr, &bad))
				return -1;
		}
		blue_poll_cq(b->cq, 0, NULL);	/* drives B's engine: it ACKs */
		n = blue_poll_cq(a->cq, DEPTH, wc);
		for (i = 0; i < n; i++)
			if (wc[i].status != BLUE_WC_SUCCESS)
				return -1;
		if (n > 0)
			done += (unsigned int)n;
	}
	return (double)ops / ((double)(tool_now_ns() - t0) / 1e9) / 1e6;
}

int main(int argc, char **argv)
{
	unsigned int ops = argc > 1 ? (unsigned int)strtoul(argv[1], NULL, 0) : 200000;
	unsigned int pairs = argc > 2 ? (unsigned int)strtoul(argv[2], NULL, 0) : 5, i;
	struct blue_hal *ha, *hb;
	struct side a = { 0 }, b = { 0 };
	double off[64], on[64], mo, mn;
	uint64_t before;

	if (!ops || !pairs || pairs > 64) {
		fprintf(stderr, "usage: %s [OPS_PER_RUN [PAIRS (1..64)]]\n", argv[0]);
		return 2;
	}
	if (blue_hal_loopback_pair(&ha, &hb) || side_open(&a, ha, 1) || side_open(&b, hb, 2) ||
	    connect_pair(&a, &b)) {
		fprintf(stderr, "diag_rate: setting up the loopback pair failed\n");
		return 1;
	}
	run(&a, &b, ops / 10);	/* warm up: caches, page faults */
	for (i = 0; i < pairs; i++) {
		blue__obs_set_diag(a.ctx, 0);
		off[i] = run(&a, &b, ops);
		before = a.ctx->obs.ds->lat[BLUE_WR_RDMA_WRITE].count;
		blue__obs_set_diag(a.ctx, BLUE_DIAG_ALL);
		on[i] = run(&a, &b, ops);
		if (off[i] < 0 || on[i] < 0) {
			fprintf(stderr, "diag_rate: a WRITE failed\n");
			return 1;
		}
		printf("pair %u: diag off %.4f Mop/s, diag on %.4f Mop/s (%llu latencies "
		       "recorded)\n", i + 1, off[i], on[i], (unsigned long long)
		       (a.ctx->obs.ds->lat[BLUE_WR_RDMA_WRITE].count - before));
	}
	qsort(off, pairs, sizeof(off[0]), tool_cmp_double);
	qsort(on, pairs, sizeof(on[0]), tool_cmp_double);
	mo = off[pairs / 2];
	mn = on[pairs / 2];
	printf("\n64 B RDMA WRITE, loopback HAL, 1 QP, depth %d, one thread (median of %u):\n",
	       DEPTH, pairs);
	printf("  diagnostics off  %.4f Mop/s\n  diagnostics on   %.4f Mop/s\n"
	       "  cost of diag on  %.1f%%\n", mo, mn, (mo - mn) / mo * 100);
	return 0;
}
