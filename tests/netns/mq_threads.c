// SPDX-License-Identifier: MIT
/*
 * mq_threads: one process, one context per netdev queue, each driven by its own thread
 * (blue_open_device_queue), as README "Several queues" tells applications to spread
 * work over cores. Thread q opens queue q, connects one RC QP through blue's CM on TCP
 * port PORT+q, and (client) writes ROUNDS chunks of a pattern seeded by q into the
 * server's MR with RDMA WRITE, then a SEND with immediate; the server thread checks every
 * byte of its MR against the pattern and answers with a SEND whose immediate says
 * whether it matched. The threads run at the same time and share nothing but the
 * process.
 *
 *   mq_threads server IFNAME PORT NQUEUES
 *   mq_threads client IFNAME HOST PORT NQUEUES
 *
 * Output: "READY ..." per server thread (rc_end), "ok queue Q: N bytes verified" per
 * thread, FAIL lines; exit 0 only when every thread passed.
 */
#include <pthread.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/rc_end.h"

#define MAX_Q		8
#define CHUNK		(64u << 10)
#define ROUNDS		32u
#define MEM_LEN		((size_t)CHUNK * ROUNDS)
#define IMM_DONE	0xd0e0u
#define IMM_OK		0x600du
#define IMM_BAD		0xbadu
#define TIMEOUT_MS	15000

struct worker {
	pthread_t tid;
	struct rc_end e;
	int rc;
};

static unsigned int seed_of(int q)
{
	return 0x51u + (unsigned int)q;
}

static int run_client(struct rc_end *e, int q)
{
	struct blue_wc wc;
	uint32_t i;

	for (i = 0; i < ROUNDS; i++) {
		uint64_t off = (uint64_t)i * CHUNK;

		rc_fill(e->mem + off, off, CHUNK, seed_of(q));
		if (rc_post(e, BLUE_WR_RDMA_WRITE, 100 + i, e->mem + off, CHUNK, 0,
			    e->remote.mr.addr + off, e->remote.mr.rkey, 0, 0) ||
		    rc_wait_send(e, 100 + i, "RDMA WRITE"))
			return -1;
	}
	if (rc_post(e, BLUE_WR_SEND_WITH_IMM, 200, e->mem, 0, IMM_DONE, 0, 0, 0, 0) ||
	    rc_wait_send(e, 200, "SEND done") ||
	    rc_wait_wc(e, true, 0, &wc, "the server's verdict"))
		return -1;
	if (!(wc.wc_flags & BLUE_WC_WITH_IMM) || ntohl(wc.imm_data) != IMM_OK) {
		rc_failf(e, "queue %d: the server's verdict is %#x, want %#x", q, ntohl(wc.imm_data),
			 IMM_OK);
		return -1;
	}
	printf("ok queue %d: %zu bytes written and verified by the server\n", q, MEM_LEN);
	return 0;
}

static int run_server(struct rc_end *e, int q)
{
	struct blue_wc wc;
	int64_t bad;

	if (rc_wait_wc(e, true, 0, &wc, "the client's SEND done"))
		return -1;
	if (!(wc.wc_flags & BLUE_WC_WITH_IMM) || ntohl(wc.imm_data) != IMM_DONE) {
		rc_failf(e, "queue %d: a SEND with immediate %#x, want %#x", q, ntohl(wc.imm_data),
			 IMM_DONE);
		return -1;
	}
	/* IBA 9.5: the WRITEs before the SEND are in memory when its completion is seen */
	bad = rc_mismatch(e->mem, 0, (uint32_t)MEM_LEN, seed_of(q));
	if (bad >= 0)
		rc_failf(e, "queue %d: byte %lld of the MR differs from the pattern", q,
			 (long long)bad);
	if (rc_post(e, BLUE_WR_SEND_WITH_IMM, 300, e->mem, 0, bad >= 0 ? IMM_BAD : IMM_OK,
		    0, 0, 0, 0) || rc_wait_send(e, 300, "SEND verdict"))
		return -1;
	if (bad >= 0)
		return -1;
	printf("ok queue %d: %zu bytes verified\n", q, MEM_LEN);
	return 0;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct rc_end *e = &w->e;
	int q = e->queue;

	w->rc = -1;
	e->mem = blue_buf_alloc(MEM_LEN, NULL);	/* zeroed */
	if (!e->mem) {
		rc_failf(e, "queue %d: out of memory", q);
		return NULL;
	}
	if (!rc_end_open(e) && !rc_end_connect(e))
		w->rc = e->server ? run_server(e, q) : run_client(e, q);
	rc_end_close(e);
	if (e->failures)
		w->rc = -1;
	blue_buf_free(e->mem, MEM_LEN);
	return NULL;
}

static int usage(void)
{
	fprintf(stderr, "usage: mq_threads server IFNAME PORT NQUEUES\n"
			"       mq_threads client IFNAME HOST PORT NQUEUES\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct worker w[MAX_Q];
	const char *host = NULL;
	bool server;
	int port, nq, q, rc = 0;

	if (argc < 2)
		return usage();
	server = !strcmp(argv[1], "server");
	if (!(server && argc == 5) && !(!strcmp(argv[1], "client") && argc == 6))
		return usage();
	if (!server)
		host = argv[3];
	port = atoi(argv[server ? 3 : 4]);
	nq = atoi(argv[server ? 4 : 5]);
	if (port <= 0 || port > 65535 - MAX_Q || nq < 1 || nq > MAX_Q)
		return usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(w, 0, sizeof(w));
	for (q = 0; q < nq; q++) {
		struct rc_end *e = &w[q].e;

		e->ifname = argv[2];
		e->server = server;
		e->host = host;
		e->port = (unsigned int)(port + q);
		e->queue = q;
		e->timeout_ms = TIMEOUT_MS;
		e->mem_len = MEM_LEN;
		e->slot = 64;
		e->nrecv = 4;
		e->sq_depth = 64;
		e->cq_depth = 128;
		if (pthread_create(&w[q].tid, NULL, worker_main, &w[q])) {
			fprintf(stderr, "FAIL cannot start thread %d\n", q);
			return 1;
		}
	}
	for (q = 0; q < nq; q++) {
		pthread_join(w[q].tid, NULL);
		if (w[q].rc)
			rc = 1;
	}
	printf("RESULT %s\n", rc ? "FAIL" : "PASS");
	return rc;
}
