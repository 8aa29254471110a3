// SPDX-License-Identifier: MIT
/*
 * The driver every benchmark program shares: parse, connect, then the client runs one
 * round per size (START, READY, the loop, END, VERDICT) and the server serves rounds
 * until BYE. Exit status 0 only when every round ran and its data check passed.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/perf/perf.h"

#define RECV_WR_ID	(1ull << 63)

const struct perf_test_desc perf_tests[PT__MAX] = {
	[PT_WRITE_BW] = { "write_bw", "RDMA_Write BW Test", BLUE_WR_RDMA_WRITE, false, false,
			  false, 5000, 128 },
	[PT_READ_BW] = { "read_bw", "RDMA_Read BW Test", BLUE_WR_RDMA_READ, false, false,
			 false, 5000, 128 },
	[PT_SEND_BW] = { "send_bw", "Send BW Test", BLUE_WR_SEND, false, false, true, 5000,
			 128 },
	[PT_WRITE_LAT] = { "write_lat", "RDMA_Write Latency Test", BLUE_WR_RDMA_WRITE, true,
			   true, false, 1000, 1 },
	[PT_READ_LAT] = { "read_lat", "RDMA_Read Latency Test", BLUE_WR_RDMA_READ, true,
			  false, false, 1000, 1 },
	[PT_SEND_LAT] = { "send_lat", "Send Latency Test", BLUE_WR_SEND, true, true, true,
			  1000, 1 },
	[PT_ATOMIC_LAT] = { "atomic_lat", "Atomic FETCH_AND_ADD Latency Test",
			    BLUE_WR_ATOMIC_FETCH_AND_ADD, true, false, false, 1000, 1 },
};

int perf_poll(struct perf_ctx *c, struct blue_wc *wc, int n)
{
	int k = blue_poll_cq(c->cq, n, wc);

	if (k < 0) {
		fprintf(stderr, "poll_cq: %s\n", strerror(-k));
		return -1;
	}
	for (int i = 0; i < k; i++)
		if (wc[i].status != BLUE_WC_SUCCESS) {
			fprintf(stderr, "a completion on QP 0x%06x (wr_id 0x%" PRIx64 ") failed: "
				"%s\n", wc[i].qp_num, wc[i].wr_id, blue_wc_status_str(wc[i].status));
			return -1;
		}
	return k;
}

int perf_post_recv(struct perf_ctx *c, uint32_t qi, uint32_t size)
{
	struct blue_sge sge = { .addr = (uintptr_t)c->q[qi].buf, .length = size,
				.lkey = c->mr->lkey };
	struct blue_recv_wr wr = { .wr_id = RECV_WR_ID | ((uint64_t)qi << 40),
				   .sg_list = &sge, .num_sge = 1 }, *bad;
	int err = blue_post_recv(c->q[qi].qp, &wr, &bad);

	if (err) {
		fprintf(stderr, "post_recv on QP %u: %s\n", qi, strerror(err));
		return -1;
	}
	c->q[qi].rx_out++;
	return 0;
}

uint64_t perf_blind_bound_ns(const struct perf_ctx *c)
{
	return c->o->duration ? c->o->duration * 1000000000ull + 2 * c->tmo_ns :
				10 * c->tmo_ns;
}

int perf_msg_wait(struct perf_ctx *c, uint32_t want, struct perf_msg *m)
{
	uint64_t dl = tool_now_ns() + c->tmo_ns;
	struct blue_wc wc[4];
	int n;

	while (!perf_msg_pending(c)) {
		n = perf_poll(c, wc, 4);
		if (n < 0)
			return -1;
		if (!n)
			perf_idle(c);
		if (n) {
			fprintf(stderr, "a completion between rounds (wr_id 0x%" PRIx64 ")\n",
				wc[0].wr_id);
			return -1;
		}
		if (tool_now_ns() > dl) {
			fprintf(stderr, "control channel: no message from the peer within %d s\n",
				c->o->timeout_s);
			return -1;
		}
	}
	return perf_msg_recv(c, want, m);
}

static int run_server(struct perf_ctx *c)
{
	struct perf_msg m;

	for (;;) {
		if (perf_msg_wait(c, 0, &m))
			return -1;
		if (m.type == PM_BYE)
			return 0;
		if (m.type != PM_START) {
			fprintf(stderr, "control channel: message %u, expected START or BYE\n",
				m.type);
			return -1;
		}
		if (m.size < 1 || m.size > c->slot ||
		    (c->t->op >= BLUE_WR_ATOMIC_CMP_AND_SWP && m.size != 8)) {
			fprintf(stderr, "a round of %u bytes: out of bounds\n", m.size);
			return -1;
		}
		if (c->t->lat ? perf_lat_server(c, &m) : perf_bw_server(c, &m))
			return -1;
	}
}

static int run_client(struct perf_ctx *c)
{
	const struct perf_opts *o = c->o;
	uint32_t sizes[32], n = 0;
	struct perf_bw_result bw[32];
	struct perf_lat_result lat[32];
	struct perf_msg bye = { .type = PM_BYE };

	if (o->all_sizes)
		for (uint32_t s = 2; s <= PERF_MAX_SIZE; s <<= 1)
			sizes[n++] = s;
	else
		sizes[n++] = o->size;
	perf_print_header(c);
	for (uint32_t i = 0; i < n; i++) {
		if (c->t->lat) {
			if (perf_lat_client(c, sizes[i], &lat[i]))
				return -1;
			perf_print_lat(&lat[i]);
		} else {
			if (perf_bw_client(c, sizes[i], &bw[i]))
				return -1;
			perf_print_bw(c, &bw[i]);
		}
	}
	perf_print_footer();
	printf(" CPU cores used (utime+stime / wall): client %.2f, server %.2f\n",
	       c->t->lat ? lat[n - 1].cpu_client : bw[n - 1].cpu_client,
	       c->t->lat ? lat[n - 1].cpu_server : bw[n - 1].cpu_server);
	printf(" Data verified: %s\n", c->t->lat && c->t->pingpong ?
	       "last message each way (CRC-32); latency is round trip / 2" :
	       c->t->lat ? "every result; latency is the full round trip" :
	       "CRC-32 of source and destination after the last WR");
	if (perf_msg_send(c, &bye))
		return -1;
	if (o->json && perf_write_json(c, c->t->lat ? NULL : bw, c->t->lat ? lat : NULL, n))
		return -1;
	return 0;
}

/*
 * --linger-ms: the QP contexts (counters, the congestion control's state) vanish with
 * the QPs; a bench that reads them with `bluectl qp list` after the traffic gets this
 * long. Nothing is in flight any more (the last round's VERDICT came after every ACK),
 * so the engine need not run meanwhile.
 */
static void linger(const struct perf_opts *o)
{
	struct timespec ts = { o->linger_ms / 1000, (long)(o->linger_ms % 1000) * 1000000 };

	if (!o->linger_ms)
		return;
	printf(" LINGER %u ms: the QPs stay until then\n", o->linger_ms);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int perf_main(int argc, char **argv, enum perf_test test)
{
	struct perf_opts o;
	struct perf_ctx c = { .o = &o, .fd = -1 };
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	rc = perf_parse(argc, argv, test, &o);
	if (rc)
		return rc == 2 ? 0 : 1;
	rc = perf_open(&c);
	if (!rc) {
		perf_print_banner(&c);
		rc = c.server ? run_server(&c) : run_client(&c);
	}
	if (!rc)
		linger(&o);
	perf_close(&c);
	if (rc)
		fprintf(stderr, "%s: FAILED\n", perf_tests[test].name);
	return rc ? 1 : 0;
}
