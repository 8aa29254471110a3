// SPDX-License-Identifier: MIT
/*
 * rc_smoke: libblue's RC transport end to end over a real netdev (blue_open_device on
 * a netdev where `bluectl attach` has run), between two processes, normally in two
 * network namespaces joined by a veth pair.
 *
 *   rc_smoke server IFNAME [options]
 *   rc_smoke client IFNAME SERVER_IP [options]
 *   rc_smoke probe IFNAME [--peer IP]
 *     --port N        the connection manager's TCP port (default 18601)
 *     --timeout-ms N  bound on every wait (default 10000)
 *     --hold-file F   after the run, keep the QP up (still polling) until F exists
 *                     or --hold-ms passes, so a test can look at it
 *     --hold-ms N     (default 10000)
 *     --bench         also measure a 64 B SEND/RECV round trip and 1 MiB WRITEs
 *     --no-cm-mac     ignore the MAC the peer sent, so the kernel neighbour table (and
 *                     ARP, when it has no entry) must supply it
 *
 * probe opens the device and prints what it found (port MTU, GIDs), and with --peer
 * moves a QP to RTR toward IP (IPv4 from GID 1, IPv6 from GID 2), which needs the peer's
 * MAC; then it closes everything.
 *
 * The exchange (QPN, PSN, GID, MAC, MTU and the server's MR) is blue's own CM. Then the
 * client does, at several sizes each: SEND (the server compares every received byte and
 * byte_len), RDMA WRITE (the server compares its memory, and that the bytes between the
 * written ranges are untouched), WRITE with immediate, RDMA READ (the client compares,
 * and that nothing past the end was written), Fetch&Add and Compare&Swap (hit and miss:
 * the returned original values, then the final word read back and checked by the
 * server too). Control messages are SENDs with immediate data naming what they are.
 *
 * Output: one line per checked step ("ok ..."), "FAIL ..." lines, "BENCH ..." figures,
 * "HOLD qpn 0x.." when it holds, and "RESULT PASS" / "RESULT FAIL" last.
 * Exit 0 only when every check passed on this side (and, for the client, the server
 * reported that its own checks passed).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/stat.h>

#include <blue/blue.h>
#include "tests/lib/rc_end.h"
#include "tools/common/tool_common.h"

/* The server's MR: the WRITE target, the READ source and the atomic word. */
#define W_OFF		0u
#define W_LEN		(2u << 20)
#define R_OFF		W_LEN
#define R_LEN		(2u << 20)
#define ATOM_OFF	(R_OFF + R_LEN)
#define SRV_MEM		(ATOM_OFF + 4096u)

#define SLOT		65536u		/* one receive buffer */
#define NRECV		32u		/* receive WQEs kept posted */
#define CLI_MEM		(4u << 20)	/* the client's send/read buffer */
#define CQ_DEPTH	1024
#define SQ_DEPTH	256

/* SEND-with-immediate tags of the control messages. */
enum {
	IMM_CHECK_WRITES = 0xb1000001,	/* client -> server: verify the WRITE ranges */
	IMM_DONE = 0xb1000002,		/* client -> server: verify the atomic word, finish */
	IMM_PING = 0xb1000003,		/* client -> server: echo this back */
	IMM_PONG = 0xb1000004,
	IMM_RESULT = 0xb1000005,	/* server -> client: "ok" or what failed */
	IMM_WRITE_IMM = 0xb1000006,	/* the immediate of the WRITE with immediate */
};

static const uint32_t send_sizes[] = { 0, 1, 64, 1023, 1024, 1025, 4096, 65536 };
static const uint32_t write_sizes[] = { 1, 64, 1024, 1025, 4097, 65536, 1u << 20 };
static const uint32_t read_sizes[] = { 1, 64, 1024, 1025, 4097, 65536, 1u << 20 };
#define NSEND	(sizeof(send_sizes) / sizeof(send_sizes[0]))
#define NWRITE	(sizeof(write_sizes) / sizeof(write_sizes[0]))
#define NREAD	(sizeof(read_sizes) / sizeof(read_sizes[0]))
#define WIMM_LEN	4096u
#define GAP		7u	/* bytes left untouched between WRITE/READ ranges */

#define ATOM_INIT	0x0123456789abcdefull
#define ATOM_ADD1	0x1111ull
#define ATOM_SWAP	0xfeedface00c0ffeeull
#define ATOM_FINAL	(ATOM_SWAP + 1)

#define SEED_SEND	0x10
#define SEED_WRITE	0x40
#define SEED_WIMM	0x70
#define SEED_READ	0x90

struct opts {
	bool server;
	const char *ifname;
	const char *host;
	unsigned int port;
	int timeout_ms;
	const char *hold_file;
	int hold_ms;
	bool bench;
	bool no_cm_mac;
	bool probe;
	const char *peer;
};

struct side {
	const struct opts *o;
	struct rc_end e;	/* device, MRs, the QP and its CM exchange */
};

/* ---- setup and teardown ------------------------------------------------------------ */

static int setup(struct side *s)
{
	struct rc_end *e = &s->e;

	e->ifname = s->o->ifname;
	e->server = s->o->server;
	e->host = s->o->host;
	e->port = s->o->port;
	e->timeout_ms = s->o->timeout_ms;
	e->no_cm_mac = s->o->no_cm_mac;
	e->queue = -1;	/* BLUE_QUEUE, or queue 0 */
	e->slot = SLOT;
	e->nrecv = NRECV;
	e->sq_depth = SQ_DEPTH;
	e->cq_depth = CQ_DEPTH;
	e->mem_len = s->o->server ? SRV_MEM : CLI_MEM;
	e->mem = aligned_alloc(4096, e->mem_len);
	if (e->mem)
		memset(e->mem, 0, e->mem_len);
	if (rc_end_open(e))
		return -1;
	if (s->o->server) {
		rc_fill(e->mem + R_OFF, 0, R_LEN, SEED_READ);
		memcpy(e->mem + ATOM_OFF, &(uint64_t){ ATOM_INIT }, 8);
	}
	return 0;
}

/* Everything in reverse; every call must succeed, so `qp list` is empty after. */
static void teardown(struct side *s)
{
	rc_end_close(&s->e);
	free(s->e.mem);
}

/* ---- server ----------------------------------------------------------------------- */

/* Offsets of the WRITE (or READ) ranges: GAP bytes apart, the first one odd. */
static uint32_t range_off(const uint32_t *sizes, unsigned int i)
{
	uint32_t off = 1;

	for (unsigned int k = 0; k < i; k++)
		off += sizes[k] + GAP;
	return off;
}

static const char *check_writes(struct side *s, char *why, size_t len)
{
	const uint8_t *w = s->e.mem + W_OFF;
	uint32_t off, end_all = range_off(write_sizes, NWRITE);
	int64_t bad;

	for (unsigned int i = 0; i < NWRITE; i++) {
		off = range_off(write_sizes, i);
		bad = rc_mismatch(w + off, off, write_sizes[i], SEED_WRITE + i);
		if (bad >= 0) {
			snprintf(why, len, "WRITE of %u bytes: byte %" PRId64 " differs",
				 write_sizes[i], bad);
			return why;
		}
		for (uint32_t g = 0; g < GAP; g++)
			if (w[off + write_sizes[i] + g]) {
				snprintf(why, len, "WRITE of %u bytes wrote past its end",
					 write_sizes[i]);
				return why;
			}
	}
	if (w[0]) {
		snprintf(why, len, "byte 0 before the first WRITE was written");
		return why;
	}
	/* the WRITE with immediate went after the others */
	bad = rc_mismatch(w + end_all, end_all, WIMM_LEN, SEED_WIMM);
	if (bad >= 0) {
		snprintf(why, len, "WRITE with immediate: byte %" PRId64 " differs", bad);
		return why;
	}
	return NULL;
}

static int reply(struct side *s, uint32_t imm, const char *text, uint64_t wr_id)
{
	size_t n = strlen(text) + 1;

	memcpy(s->e.mem + ATOM_OFF + 64, text, n);	/* a spare corner of the MR */
	return rc_post(&s->e, BLUE_WR_SEND_WITH_IMM, wr_id, s->e.mem + ATOM_OFF + 64, (uint32_t)n, imm,
		    0, 0, 0, 0);
}

static bool hold_released(const struct opts *o)
{
	struct stat st;

	return o->hold_file && stat(o->hold_file, &st) == 0;
}

static int run_server(struct side *s)
{
	unsigned int nsend = 0, npong = 0;
	uint64_t reply_id = 1000;
	bool done = false;
	char why[160];

	while (!done) {
		struct blue_wc wc;
		const uint8_t *buf;
		uint32_t imm;
		const char *bad;

		if (rc_wait_wc(&s->e, true, 0, &wc, "server: receive"))
			return -1;
		buf = s->e.rbuf + (size_t)wc.wr_id * SLOT;
		imm = ntohl(wc.imm_data);
		if (wc.opcode == BLUE_WC_RECV_RDMA_WITH_IMM) {
			uint32_t off = range_off(write_sizes, NWRITE);

			if (!(wc.wc_flags & BLUE_WC_WITH_IMM) || imm != IMM_WRITE_IMM ||
			    wc.byte_len != WIMM_LEN)
				rc_failf(&s->e, "WRITE with immediate: flags %#x imm %#x byte_len %u",
				      wc.wc_flags, imm, wc.byte_len);
			else if (rc_mismatch(s->e.mem + W_OFF + off, off, WIMM_LEN, SEED_WIMM) >= 0)
				rc_failf(&s->e, "WRITE with immediate: data not there at its completion");
			else
				printf("ok write_imm %u bytes, imm 0x%08x\n", wc.byte_len, imm);
		} else if (!(wc.wc_flags & BLUE_WC_WITH_IMM)) {
			/* a data SEND: the client sends send_sizes[] in order */
			uint32_t size = nsend < NSEND ? send_sizes[nsend] : 0;
			int64_t m;

			if (nsend >= NSEND) {
				rc_failf(&s->e, "unexpected SEND of %u bytes", wc.byte_len);
			} else if (wc.byte_len != size) {
				rc_failf(&s->e, "SEND #%u: byte_len %u, want %u", nsend, wc.byte_len, size);
			} else if ((m = rc_mismatch(buf, 0, size, SEED_SEND + nsend)) >= 0) {
				rc_failf(&s->e, "SEND of %u bytes: byte %" PRId64 " differs", size, m);
			} else if (size < SLOT && buf[size] != 0xdd) {
				rc_failf(&s->e, "SEND of %u bytes wrote past its end", size);
			} else {
				printf("ok send %u bytes\n", size);
			}
			nsend++;
		} else if (imm == IMM_CHECK_WRITES) {
			bad = check_writes(s, why, sizeof(why));
			if (bad)
				rc_failf(&s->e, "%s", bad);
			else
				printf("ok write ranges verified (%zu sizes, gaps untouched)\n",
				       NWRITE);
			if (reply(s, IMM_RESULT, bad ? bad : "ok", reply_id) ||
			    rc_wait_send(&s->e, reply_id++, "server: result"))
				return -1;
		} else if (imm == IMM_PING) {
			/* echo the 64 bytes back from the receive slot */
			memcpy(s->e.mem + ATOM_OFF + 256, buf, 64);
			if (rc_post(&s->e, BLUE_WR_SEND_WITH_IMM, reply_id, s->e.mem + ATOM_OFF + 256,
				 wc.byte_len, IMM_PONG, 0, 0, 0, 0) ||
			    rc_wait_send(&s->e, reply_id++, "server: pong"))
				return -1;
			npong++;
		} else if (imm == IMM_DONE) {
			uint64_t v;

			memcpy(&v, s->e.mem + ATOM_OFF, 8);
			if (nsend != NSEND)
				rc_failf(&s->e, "%u SENDs arrived, want %zu", nsend, NSEND);
			if (v != ATOM_FINAL) {
				snprintf(why, sizeof(why), "atomic word 0x%016" PRIx64 ", want "
					 "0x%016llx", v, ATOM_FINAL);
				rc_failf(&s->e, "%s", why);
			} else {
				printf("ok atomic word 0x%016" PRIx64 " after FA, CAS hit, CAS miss, "
				       "FA\n", v);
			}
			snprintf(why, sizeof(why), "%s", s->e.failures ? "server checks failed" : "ok");
			if (reply(s, IMM_RESULT, why, reply_id) ||
			    rc_wait_send(&s->e, reply_id++, "server: final result"))
				return -1;
			done = true;
		} else {
			rc_failf(&s->e, "unknown control message 0x%08x", imm);
		}
		if (rc_post_recv(&s->e, (unsigned int)wc.wr_id)) {
			rc_failf(&s->e, "post_recv");
			return -1;
		}
	}
	if (npong)
		printf("ok echoed %u pings\n", npong);
	return 0;
}

/* Keep the QP live (and answering) until the hold file appears, bounded. */
static void hold(struct side *s)
{
	uint64_t end = tool_now_ns() / 1000u + (uint64_t)s->o->hold_ms * 1000u;
	struct blue_wc wc;

	printf("HOLD qpn 0x%06x\n", blue_qp_num(s->e.qp));
	fflush(stdout);
	while (s->o->hold_file && !hold_released(s->o) && tool_now_ns() / 1000u < end) {
		if (blue_poll_cq(s->e.cq, 1, &wc) < 0)
			break;
		usleep(1000);
	}
}

/* ---- client ----------------------------------------------------------------------- */

/* The server's answer to a control message: "ok" or its reason. */
static int server_result(struct side *s, const char *what)
{
	struct blue_wc wc;
	const char *text;

	if (rc_wait_wc(&s->e, true, 0, &wc, what))
		return -1;
	text = (const char *)s->e.rbuf + (size_t)wc.wr_id * SLOT;
	if (!(wc.wc_flags & BLUE_WC_WITH_IMM) || ntohl(wc.imm_data) != IMM_RESULT ||
	    !wc.byte_len || text[wc.byte_len - 1]) {
		rc_failf(&s->e, "%s: not a result message", what);
		return -1;
	}
	if (strcmp(text, "ok")) {
		rc_failf(&s->e, "%s: the server says: %s", what, text);
		rc_post_recv(&s->e, (unsigned int)wc.wr_id);
		return -1;
	}
	return rc_post_recv(&s->e, (unsigned int)wc.wr_id);
}

static int client_sends(struct side *s)
{
	uint64_t off = 0;
	unsigned int i;

	/* all posted at once, each from its own range, then every completion */
	for (i = 0; i < NSEND; i++) {
		rc_fill(s->e.mem + off, 0, send_sizes[i], SEED_SEND + i);
		if (rc_post(&s->e, BLUE_WR_SEND, 100 + i, s->e.mem + off, send_sizes[i], 0, 0, 0, 0, 0)) {
			rc_failf(&s->e, "post SEND of %u bytes", send_sizes[i]);
			return -1;
		}
		off += send_sizes[i] + 64;
	}
	for (i = 0; i < NSEND; i++) {
		if (rc_wait_send(&s->e, 100 + i, "SEND"))
			return -1;
		printf("ok send %u bytes completed\n", send_sizes[i]);
	}
	return 0;
}

static int client_writes(struct side *s)
{
	uint64_t raddr = s->e.remote.mr.addr + W_OFF;
	uint32_t rkey = s->e.remote.mr.rkey, off, src = 0;
	unsigned int i;

	for (i = 0; i < NWRITE; i++) {
		off = range_off(write_sizes, i);
		rc_fill(s->e.mem + src, off, write_sizes[i], SEED_WRITE + i);
		if (rc_post(&s->e, BLUE_WR_RDMA_WRITE, 200 + i, s->e.mem + src, write_sizes[i], 0,
			 raddr + off, rkey, 0, 0)) {
			rc_failf(&s->e, "post WRITE of %u bytes", write_sizes[i]);
			return -1;
		}
		src += write_sizes[i];
	}
	off = range_off(write_sizes, NWRITE);
	rc_fill(s->e.mem + src, off, WIMM_LEN, SEED_WIMM);
	if (rc_post(&s->e, BLUE_WR_RDMA_WRITE_WITH_IMM, 299, s->e.mem + src, WIMM_LEN, IMM_WRITE_IMM,
		 raddr + off, rkey, 0, 0)) {
		rc_failf(&s->e, "post WRITE with immediate");
		return -1;
	}
	for (i = 0; i < NWRITE; i++) {
		if (rc_wait_send(&s->e, 200 + i, "WRITE"))
			return -1;
		printf("ok write %u bytes completed\n", write_sizes[i]);
	}
	if (rc_wait_send(&s->e, 299, "WRITE with immediate"))
		return -1;
	/* RC delivers in order: the server sees this after every WRITE landed */
	if (rc_post(&s->e, BLUE_WR_SEND_WITH_IMM, 300, s->e.mem, 0, IMM_CHECK_WRITES, 0, 0, 0, 0) ||
	    rc_wait_send(&s->e, 300, "check-writes message") ||
	    server_result(s, "server's check of the WRITEs"))
		return -1;
	printf("ok write verified by the server\n");
	return 0;
}

static int client_reads(struct side *s)
{
	uint64_t raddr = s->e.remote.mr.addr + R_OFF;
	uint32_t rkey = s->e.remote.mr.rkey, off, dst = 0;
	unsigned int i;
	int64_t bad;

	/* destinations back to back with a guard byte after each */
	memset(s->e.mem, 0xee, CLI_MEM);
	for (i = 0; i < NREAD; i++) {
		off = range_off(read_sizes, i);
		if (rc_post(&s->e, BLUE_WR_RDMA_READ, 400 + i, s->e.mem + dst, read_sizes[i], 0,
			 raddr + off, rkey, 0, 0)) {
			rc_failf(&s->e, "post READ of %u bytes", read_sizes[i]);
			return -1;
		}
		dst += read_sizes[i] + 1;
	}
	dst = 0;
	for (i = 0; i < NREAD; i++) {
		if (rc_wait_send(&s->e, 400 + i, "READ"))
			return -1;
		off = range_off(read_sizes, i);
		bad = rc_mismatch(s->e.mem + dst, off, read_sizes[i], SEED_READ);
		if (bad >= 0)
			rc_failf(&s->e, "READ of %u bytes: byte %" PRId64 " differs", read_sizes[i], bad);
		else if (s->e.mem[dst + read_sizes[i]] != 0xee)
			rc_failf(&s->e, "READ of %u bytes wrote past its end", read_sizes[i]);
		else
			printf("ok read %u bytes\n", read_sizes[i]);
		dst += read_sizes[i] + 1;
	}
	return 0;
}

static int atomic_step(struct side *s, enum blue_wr_opcode op, uint64_t cmp_add,
		       uint64_t swap, uint64_t want, const char *what)
{
	uint64_t got, *res = (uint64_t *)(s->e.mem + 8192);

	*res = 0x5a5a5a5a5a5a5a5aull;
	if (rc_post(&s->e, op, 500, res, 8, 0, s->e.remote.mr.addr + ATOM_OFF, s->e.remote.mr.rkey,
		 cmp_add, swap) || rc_wait_send(&s->e, 500, what))
		return -1;
	got = *res;
	if (got != want) {
		rc_failf(&s->e, "%s: returned 0x%016" PRIx64 ", want 0x%016" PRIx64, what, got, want);
		return -1;
	}
	printf("ok %s returned 0x%016" PRIx64 "\n", what, got);
	return 0;
}

static int client_atomics(struct side *s)
{
	uint64_t *word = (uint64_t *)(s->e.mem + 16384);

	if (atomic_step(s, BLUE_WR_ATOMIC_FETCH_AND_ADD, ATOM_ADD1, 0, ATOM_INIT,
			"fetch_add") ||
	    atomic_step(s, BLUE_WR_ATOMIC_CMP_AND_SWP, ATOM_INIT + ATOM_ADD1, ATOM_SWAP,
			ATOM_INIT + ATOM_ADD1, "cmp_swap (equal: swaps)") ||
	    atomic_step(s, BLUE_WR_ATOMIC_CMP_AND_SWP, 42, 1, ATOM_SWAP,
			"cmp_swap (differs: no swap)") ||
	    atomic_step(s, BLUE_WR_ATOMIC_FETCH_AND_ADD, 1, 0, ATOM_SWAP, "fetch_add 1"))
		return -1;
	*word = 0;
	if (rc_post(&s->e, BLUE_WR_RDMA_READ, 501, word, 8, 0, s->e.remote.mr.addr + ATOM_OFF,
		 s->e.remote.mr.rkey, 0, 0) || rc_wait_send(&s->e, 501, "READ of the atomic word"))
		return -1;
	if (*word != ATOM_FINAL) {
		rc_failf(&s->e, "atomic word reads 0x%016" PRIx64 ", want 0x%016llx", *word, ATOM_FINAL);
		return -1;
	}
	printf("ok atomic word reads 0x%016" PRIx64 "\n", *word);
	return 0;
}

/* 64 B SEND/RECV round trips, and 1 MiB WRITEs with 4 in flight. */
static int client_bench(struct side *s)
{
	const unsigned int iters = 2000, nwrites = 256, depth = 4;
	uint64_t t0, t1, bytes;
	unsigned int i, posted = 0, done = 0;
	struct blue_wc wc;

	rc_fill(s->e.mem, 0, 64, 1);
	t0 = tool_now_ns() / 1000u;
	for (i = 0; i < iters; i++) {
		if (rc_post(&s->e, BLUE_WR_SEND_WITH_IMM, 600, s->e.mem, 64, IMM_PING, 0, 0, 0, 0) ||
		    rc_wait_send(&s->e, 600, "ping") || rc_wait_wc(&s->e, true, 0, &wc, "pong"))
			return -1;
		if (ntohl(wc.imm_data) != IMM_PONG || wc.byte_len != 64 ||
		    memcmp(s->e.rbuf + (size_t)wc.wr_id * SLOT, s->e.mem, 64)) {
			rc_failf(&s->e, "pong %u: not the ping echoed", i);
			return -1;
		}
		if (rc_post_recv(&s->e, (unsigned int)wc.wr_id))
			return -1;
	}
	t1 = tool_now_ns() / 1000u;
	printf("BENCH send_recv_64B_rtt_us %.2f (%u round trips)\n",
	       (double)(t1 - t0) / iters, iters);

	t0 = tool_now_ns() / 1000u;
	while (done < nwrites) {
		while (posted < nwrites && posted - done < depth) {
			if (rc_post(&s->e, BLUE_WR_RDMA_WRITE, 700 + posted, s->e.mem, 1u << 20, 0,
				 s->e.remote.mr.addr + W_OFF, s->e.remote.mr.rkey, 0, 0))
				return -1;
			posted++;
		}
		if (rc_wait_send(&s->e, 700 + done, "bench WRITE"))
			return -1;
		done++;
	}
	t1 = tool_now_ns() / 1000u;
	bytes = (uint64_t)nwrites << 20;
	printf("BENCH write_1MiB_gbit_s %.2f (%u x 1 MiB in %.3f s)\n",
	       (double)bytes * 8 / (double)(t1 - t0) / 1000.0, nwrites,
	       (double)(t1 - t0) / 1e6);
	return 0;
}

static int run_client(struct side *s)
{
	if (client_sends(s) || client_writes(s) || client_reads(s) || client_atomics(s))
		return -1;
	if (s->o->bench && client_bench(s))
		return -1;
	if (rc_post(&s->e, BLUE_WR_SEND_WITH_IMM, 800, s->e.mem, 0, IMM_DONE, 0, 0, 0, 0) ||
	    rc_wait_send(&s->e, 800, "done message") || server_result(s, "server's final checks"))
		return -1;
	printf("ok server's final checks passed\n");
	return 0;
}

/* ---- probe ------------------------------------------------------------------------ */

static void print_gid(const char *what, const union blue_gid *g)
{
	char buf[INET6_ADDRSTRLEN];

	printf(" %s %s", what, inet_ntop(AF_INET6, g->raw, buf, sizeof(buf)));
}

static int run_probe(struct side *s)
{
	struct blue_port_attr port;
	union blue_gid g0, g1;
	struct blue_qp_attr a = { 0 };
	struct in_addr ip;
	int err;

	if (blue_query_port(s->e.ctx, 1, &port) || blue_query_gid(s->e.ctx, 1, 0, &g0) ||
	    blue_query_gid(s->e.ctx, 1, 1, &g1)) {
		rc_failf(&s->e, "query_port/query_gid");
		return -1;
	}
	printf("device %s active_mtu %d max_mtu %d gid_tbl_len %d", s->o->ifname,
	       blue_mtu_bytes(port.active_mtu), blue_mtu_bytes(port.max_mtu), port.gid_tbl_len);
	print_gid("gid0", &g0);
	print_gid("gid1", &g1);
	/* the netdev's IPv6 addresses, from index 2 (empty entries read as zeros) */
	for (int i = 2; i < port.gid_tbl_len; i++) {
		union blue_gid g;
		static const uint8_t zero[16];
		char what[16];

		if (blue_query_gid(s->e.ctx, 1, i, &g) || !memcmp(g.raw, zero, 16))
			continue;
		snprintf(what, sizeof(what), "gid%d", i);
		print_gid(what, &g);
	}
	printf("\n");
	if (!s->o->peer)
		return 0;
	if (inet_pton(AF_INET6, s->o->peer, a.ah_attr.dgid.raw) == 1) {
		a.ah_attr.sgid_index = 2;	/* the netdev's first IPv6 address */
	} else if (inet_pton(AF_INET, s->o->peer, &ip) == 1) {
		a.ah_attr.dgid.raw[10] = 0xff;
		a.ah_attr.dgid.raw[11] = 0xff;
		memcpy(a.ah_attr.dgid.raw + 12, &ip, 4);
		a.ah_attr.sgid_index = 1;
	} else {
		rc_failf(&s->e, "--peer %s is not an IPv4 or IPv6 address", s->o->peer);
		return -1;
	}
	a.qp_state = BLUE_QPS_RTR;
	a.path_mtu = port.active_mtu;
	a.dest_qp_num = 0x123456;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.port_num = 1;
	err = blue_modify_qp(s->e.qp, &a, BLUE_QP_STATE | BLUE_QP_AV | BLUE_QP_PATH_MTU |
			     BLUE_QP_DEST_QPN | BLUE_QP_RQ_PSN | BLUE_QP_MAX_DEST_RD_ATOMIC |
			     BLUE_QP_MIN_RNR_TIMER);
	if (err) {
		rc_failf(&s->e, "INIT -> RTR toward %s: %s", s->o->peer, strerror(err));
		return -1;
	}
	printf("ok rtr toward %s\n", s->o->peer);
	return 0;
}

/* ---- main ------------------------------------------------------------------------- */

static int usage(void)
{
	fprintf(stderr, "usage: rc_smoke server IFNAME [--port N] [--timeout-ms N] "
		"[--hold-file F] [--hold-ms N] [--bench]\n"
		"       rc_smoke client IFNAME SERVER_IP [--port N] [--timeout-ms N] [--bench]\n"
		"                       [--no-cm-mac] [--hold-file F] [--hold-ms N]\n"
		"       rc_smoke probe IFNAME [--peer IP]\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct opts o = { .port = 18601, .timeout_ms = 10000, .hold_ms = 10000 };
	struct side s = { .o = &o };
	int i, rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3)
		return usage();
	if (!strcmp(argv[1], "server"))
		o.server = true;
	else if (!strcmp(argv[1], "probe"))
		o.probe = true;
	else if (strcmp(argv[1], "client"))
		return usage();
	o.ifname = argv[2];
	i = 3;
	if (!o.server && !o.probe) {
		if (argc < 4)
			return usage();
		o.host = argv[i++];
	}
	for (; i < argc; i++) {
		if (!strcmp(argv[i], "--bench"))
			o.bench = true;
		else if (!strcmp(argv[i], "--no-cm-mac"))
			o.no_cm_mac = true;
		else if (i + 1 >= argc)
			return usage();
		else if (!strcmp(argv[i], "--port"))
			o.port = (unsigned int)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--timeout-ms"))
			o.timeout_ms = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--hold-file"))
			o.hold_file = argv[++i];
		else if (!strcmp(argv[i], "--peer"))
			o.peer = argv[++i];
		else if (!strcmp(argv[i], "--hold-ms"))
			o.hold_ms = atoi(argv[++i]);
		else
			return usage();
	}
	if (!o.port || o.port > 65535 || o.timeout_ms <= 0 || o.hold_ms < 0)
		return usage();

	rc = setup(&s);
	if (!rc && o.probe)
		rc = run_probe(&s);
	else if (!rc)
		rc = rc_end_connect(&s.e);
	if (!rc && !o.probe)
		rc = o.server ? run_server(&s) : run_client(&s);
	if (!rc && !o.probe && (o.server || o.hold_file))
		hold(&s);
	teardown(&s);
	rc = rc || s.e.failures ? 1 : 0;
	printf("RESULT %s\n", rc ? "FAIL" : "PASS");
	return rc;
}
