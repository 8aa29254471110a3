// SPDX-License-Identifier: MIT
/*
 * hostile_peer: the two ends of a live RC transfer for the hostile-input test (issue 4,
 * "Hostile input against a live QP"; tests/netns/test_hostile.sh). While it runs,
 * hostile_tx sends crafted frames at the server.
 *
 *   hostile_peer server IFNAME [--victims N] [--port P] [--timeout-ms N]
 *                              [--hold-file F] [--hold-ms N]
 *   hostile_peer client IFNAME SERVER_IP [--port P] [--timeout-ms N]
 *                              [--until-file F] [--min-rounds N] [--max-ms N]
 *
 * The server's MR sits between two canary pages, each behind a PROT_NONE guard page:
 *   guard | canary | MR (512 KiB) | canary | guard
 * so that a stray write shows in a canary and any access beyond them faults.
 *
 * The client loops until --until-file exists (and --min-rounds are done): each round
 * WRITEs 256 KiB of a pattern for that round into the MR, READs it back and compares
 * every byte, SENDs 4 KiB that the server compares, and does a Fetch&Add whose
 * returned value must be the round number. At the end it SENDs "done" with the round
 * count, and the server checks the count, the atomic word and the canaries and answers.
 *
 * Besides the main QP, the server creates --victims QPs connected to a QPN nobody owns
 * at the client's address: targets for hostile frames that a responder must answer with
 * a NAK and (but for PSN errors) by going to ERROR (IBA 9.7.5, as rxe does), which would
 * end the main transfer. Their NAKs go to the client's netdev and die there in XDP.
 *
 * The server prints, for hostile_tx and the test:
 *   INFO main_qpn Q main_psn P rkey K mr ADDR mr_len N canary ADDR mtu M victims Q:P,...
 * (mtu: the path MTU, in bytes, that the main QP and the victims run at)
 * and after the client's "done": ENGINE <counter> <value> lines (the engine's drop and
 * refusal counters, which only this process can read), then HOLD, then RESULT.
 * Exit 0 only when every check passed on this side.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <blue/blue.h>
#include "tests/lib/rc_end.h"
#include "tools/common/tool_common.h"
#include "runtime/codec.h"
#include "runtime/progress.h"

#define PG		4096u
#define MR_LEN		(512u << 10)
#define XFER_LEN	(256u << 10)	/* WRITE target and READ source, at MR offset 0 */
#define ATOM_OFF	XFER_LEN	/* the Fetch&Add word */
#define REPLY_OFF	(ATOM_OFF + 64)
#define SEND_LEN	4096u
#define SLOT		8192u
#define NRECV		16u
#define CQ_DEPTH	256
#define MAX_VICTIMS	16u
#define VICTIM_PEER	0xbad000u	/* + i: a QPN nobody owns, at the client's address */
#define VICTIM_PSN	0x100000u	/* * (i + 1): each victim's expected receive PSN */
#define CANARY		0xca
#define TAIL_LEN	(2 * PG)	/* the MR's end, beyond anything the transfer writes */

enum {
	IMM_DATA = 0xb2000000,		/* client -> server: | round (low 16 bits) */
	IMM_DONE = 0xb2ff0001,		/* client -> server: "rounds N" */
	IMM_RESULT = 0xb2ff0002,	/* server -> client: "ok" or what failed */
};

struct opts {
	bool server;
	const char *ifname, *host;
	unsigned int port, victims, min_rounds;
	int timeout_ms, hold_ms, max_ms;
	const char *hold_file, *until_file;
};

struct side {
	const struct opts *o;
	struct rc_end e;	/* device, MR, the main QP and its CM exchange */
	struct blue_qp *victim[MAX_VICTIMS];
	uint8_t *area;		/* server: guard | canary | MR | canary | guard */
	size_t area_len;
};

static bool file_exists(const char *f)
{
	struct stat st;

	return f && stat(f, &st) == 0;
}

/* ---- setup and teardown ------------------------------------------------------------- */

/* The server's MR between canary pages and guard pages; the client's plain. */
static int alloc_mem(struct side *s)
{
	if (!s->o->server) {
		s->e.mem_len = 2 * XFER_LEN;
		s->e.mem = aligned_alloc(PG, s->e.mem_len);
		if (s->e.mem)
			memset(s->e.mem, 0, s->e.mem_len);
		return s->e.mem ? 0 : -1;
	}
	s->area_len = 4 * PG + MR_LEN;
	s->area = mmap(NULL, s->area_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	if (s->area == MAP_FAILED) {
		s->area = NULL;
		return -1;
	}
	if (mprotect(s->area, PG, PROT_NONE) ||
	    mprotect(s->area + s->area_len - PG, PG, PROT_NONE))
		return -1;
	memset(s->area + PG, CANARY, PG);
	memset(s->area + 2 * PG + MR_LEN, CANARY, PG);
	s->e.mem = s->area + 2 * PG;
	s->e.mem_len = MR_LEN;
	memset(s->e.mem, 0, s->e.mem_len);
	return 0;
}

/*
 * Both canary pages still hold nothing but the canary byte, and the MR's last two pages,
 * which the transfer never writes, are still zero: hostile WRITEs aimed across the MR's
 * end are refused whole (IBA C9-88: no byte of a request that fails its R_Key checks).
 */
static int canaries_ok(struct side *s, const char *when)
{
	const uint8_t *c[2] = { s->area + PG, s->area + 2 * PG + MR_LEN };
	const uint8_t *tail = s->e.mem + MR_LEN - TAIL_LEN;

	for (uint32_t i = 0; i < TAIL_LEN; i++)
		if (tail[i]) {
			rc_failf(&s->e, "%s: the MR's untouched tail was written at MR offset %u",
				 when, MR_LEN - TAIL_LEN + i);
			return -1;
		}

	for (unsigned int k = 0; k < 2; k++)
		for (uint32_t i = 0; i < PG; i++)
			if (c[k][i] != CANARY) {
				rc_failf(&s->e, "%s: the canary page %s the MR was written at byte %u",
				      when, k ? "after" : "before", i);
				return -1;
			}
	printf("ok canaries intact %s (2 pages around the %u-byte MR, its last %u bytes "
	       "zero)\n", when, MR_LEN, TAIL_LEN);
	return 0;
}

static int setup(struct side *s)
{
	struct rc_end *e = &s->e;

	e->ifname = s->o->ifname;
	e->queue = -1;	/* BLUE_QUEUE, or queue 0 */
	e->server = s->o->server;
	e->host = s->o->host;
	e->port = s->o->port;
	e->timeout_ms = s->o->timeout_ms;
	e->slot = SLOT;
	e->nrecv = NRECV;
	e->sq_depth = 64;
	e->cq_depth = CQ_DEPTH;
	if (alloc_mem(s)) {
		printf("FAIL setup: memory: %s\n", strerror(errno));
		return -1;
	}
	return rc_end_open(e);
}

static void teardown(struct side *s)
{
	unsigned int i;
	int err;

	for (i = 0; i < MAX_VICTIMS; i++)
		if (s->victim[i] && (err = blue_destroy_qp(s->victim[i])))
			rc_failf(&s->e, "destroy_qp (victim %u): %s", i, strerror(err));
	rc_end_close(&s->e);
	if (s->area)
		munmap(s->area, s->area_len);
	else
		free(s->e.mem);
}

/* Victim QPs: connected to a QPN nobody owns at the client's address, each in RTS. */
static int make_victims(struct side *s)
{
	struct blue_qp_init_attr qa = { 0 };
	struct blue_cm_qp_attr ca;
	struct blue_cm_info fake;
	unsigned int i;

	blue_cm_qp_attr_default(&ca);
	ca.access = RC_ACCESS_ALL;
	ca.max_rd_atomic = 4;
	ca.max_dest_rd_atomic = 4;
	qa.send_cq = s->e.cq;
	qa.recv_cq = s->e.cq;
	qa.qp_type = BLUE_QPT_RC;
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	for (i = 0; i < s->o->victims; i++) {
		s->victim[i] = blue_create_qp(s->e.pd, &qa);
		fake = s->e.remote;
		fake.qpn = VICTIM_PEER + i;
		fake.psn = VICTIM_PSN * (i + 1);
		if (!s->victim[i] || blue_cm_connect_qp(s->e.ctx, s->victim[i], 0, &fake, &ca)) {
			printf("FAIL victim QP %u: %s\n", i, blue_cm_last_error());
			return -1;
		}
	}
	return 0;
}

static void print_info(struct side *s)
{
	unsigned int i;

	printf("INFO main_qpn 0x%06x main_psn 0x%06x rkey 0x%08x mr 0x%" PRIxPTR " mr_len %u "
	       "canary 0x%" PRIxPTR " mtu %d victims ", blue_qp_num(s->e.qp), s->e.remote.psn,
	       s->e.mr->rkey, (uintptr_t)s->e.mem, MR_LEN, (uintptr_t)(s->area + PG),
	       blue_mtu_bytes(s->e.remote.mtu));
	for (i = 0; i < s->o->victims; i++)
		printf("%s0x%06x:0x%06x", i ? "," : "", blue_qp_num(s->victim[i]),
		       VICTIM_PSN * (i + 1));
	printf("%s\n", s->o->victims ? "" : "-");
}

/* The counters only this process can read: the engine's drops and refusals. */
static void print_engine(struct side *s)
{
	const struct blue_engine_stats *st = blue__engine_stats(s->e.ctx);
	unsigned int i;

	printf("ENGINE rx_frames %" PRIu64 "\n", st->rx_frames);
	printf("ENGINE rx_bad_icrc %" PRIu64 "\n", st->rx_bad_icrc);
	printf("ENGINE rx_malformed %" PRIu64 "\n", st->rx_malformed);
	printf("ENGINE rx_no_qp %" PRIu64 "\n", st->rx_no_qp);
	printf("ENGINE rx_bad_src %" PRIu64 "\n", st->rx_bad_src);
	printf("ENGINE rx_wrong_transport %" PRIu64 "\n", st->rx_wrong_transport);
	printf("ENGINE rx_dup %" PRIu64 "\n", st->rx_dup);
	printf("ENGINE rx_seq_err %" PRIu64 "\n", st->rx_seq_err);
	printf("ENGINE rx_inv_req %" PRIu64 "\n", st->rx_inv_req);
	printf("ENGINE rx_access_err %" PRIu64 "\n", st->rx_access_err);
	printf("ENGINE rx_op_err %" PRIu64 "\n", st->rx_op_err);
	for (i = 1; i < BLUE_PARSE_ERR_MAX; i++)
		printf("ENGINE parse_%s %" PRIu64 "\n", blue_parse_err_name(i), st->parse_err[i]);
}

/* ---- server -------------------------------------------------------------------------- */

static int reply(struct side *s, const char *text)
{
	size_t n = strlen(text) + 1;

	memcpy(s->e.mem + REPLY_OFF, text, n);
	return rc_post(&s->e, BLUE_WR_SEND_WITH_IMM, 9000, s->e.mem + REPLY_OFF, (uint32_t)n, IMM_RESULT,
		    0, 0, 0, 0) || rc_wait_send(&s->e, 9000, "server: result");
}

static int run_server(struct side *s)
{
	unsigned int rounds = 0, want = 0;
	char why[160];

	for (;;) {
		struct blue_wc wc;
		const uint8_t *buf;
		uint32_t imm;
		int64_t bad;

		if (rc_wait_wc(&s->e, true, 0, &wc, "server: receive"))
			return -1;
		buf = s->e.rbuf + (size_t)wc.wr_id * SLOT;
		imm = ntohl(wc.imm_data);
		if (!(wc.wc_flags & BLUE_WC_WITH_IMM)) {
			rc_failf(&s->e, "a SEND without immediate data");
		} else if ((imm & 0xffff0000u) == IMM_DATA) {
			if ((imm & 0xffff) != (rounds & 0xffff) || wc.byte_len != SEND_LEN)
				rc_failf(&s->e, "SEND of round %u: imm 0x%08x, %u bytes", rounds, imm,
				      wc.byte_len);
			else if ((bad = rc_mismatch(buf, 0, SEND_LEN, 1000 + rounds)) >= 0)
				rc_failf(&s->e, "SEND of round %u: byte %" PRId64 " differs", rounds, bad);
			rounds++;
		} else if (imm == IMM_DONE) {
			uint64_t word;

			if (sscanf((const char *)buf, "rounds %u", &want) != 1 || want != rounds)
				rc_failf(&s->e, "done: the client did %u rounds, %u SENDs arrived", want,
				      rounds);
			memcpy(&word, s->e.mem + ATOM_OFF, 8);
			if (word != rounds)
				rc_failf(&s->e, "the atomic word is %" PRIu64 " after %u Fetch&Adds", word,
				      rounds);
			canaries_ok(s, "after the transfer");
			if (!s->e.failures)
				printf("ok %u rounds: every SEND intact, atomic word %" PRIu64 "\n",
				       rounds, word);
			snprintf(why, sizeof(why), "%s", s->e.failures ? "server checks failed" : "ok");
			return reply(s, why);
		} else {
			rc_failf(&s->e, "unknown control message 0x%08x", imm);
		}
		if (rc_post_recv(&s->e, (unsigned int)wc.wr_id)) {
			rc_failf(&s->e, "post_recv");
			return -1;
		}
	}
}

static void hold(struct side *s)
{
	uint64_t end = tool_now_ns() / 1000000u + (uint64_t)s->o->hold_ms;
	struct blue_wc wc;

	printf("HOLD qpn 0x%06x\n", blue_qp_num(s->e.qp));
	fflush(stdout);
	while (s->o->hold_file && !file_exists(s->o->hold_file) && tool_now_ns() / 1000000u < end) {
		if (blue_poll_cq(s->e.cq, 1, &wc) < 0)
			break;
		usleep(1000);
	}
}

/* ---- client -------------------------------------------------------------------------- */

static int round_trip(struct side *s, unsigned int k)
{
	uint64_t raddr = s->e.remote.mr.addr, got;
	uint32_t rkey = s->e.remote.mr.rkey;
	uint8_t *wsrc = s->e.mem, *rdst = s->e.mem + XFER_LEN, *res = s->e.mem + XFER_LEN - 8;
	int64_t bad;

	rc_fill(wsrc, 0, XFER_LEN, k);
	memset(rdst, 0xee, XFER_LEN);
	if (rc_post(&s->e, BLUE_WR_RDMA_WRITE, 1, wsrc, XFER_LEN, 0, raddr, rkey, 0, 0) ||
	    rc_post(&s->e, BLUE_WR_RDMA_READ, 2, rdst, XFER_LEN, 0, raddr, rkey, 0, 0) ||
	    rc_wait_send(&s->e, 1, "WRITE") || rc_wait_send(&s->e, 2, "READ"))
		return -1;
	if ((bad = rc_mismatch(rdst, 0, XFER_LEN, k)) >= 0) {
		rc_failf(&s->e, "round %u: READ back byte %" PRId64 " differs", k, bad);
		return -1;
	}
	/* the SEND source: the start of the WRITE source is free again */
	rc_fill(wsrc, 0, SEND_LEN, 1000 + k);
	memset(res, 0, 8);
	if (rc_post(&s->e, BLUE_WR_SEND_WITH_IMM, 3, wsrc, SEND_LEN, IMM_DATA | (k & 0xffff), 0, 0, 0, 0) ||
	    rc_post(&s->e, BLUE_WR_ATOMIC_FETCH_AND_ADD, 4, res, 8, 0, raddr + ATOM_OFF, rkey, 1, 0) ||
	    rc_wait_send(&s->e, 3, "SEND") || rc_wait_send(&s->e, 4, "Fetch&Add"))
		return -1;
	memcpy(&got, res, 8);
	if (got != k) {
		rc_failf(&s->e, "round %u: Fetch&Add returned %" PRIu64, k, got);
		return -1;
	}
	return 0;
}

static int run_client(struct side *s)
{
	uint64_t end = tool_now_ns() / 1000000u + (uint64_t)s->o->max_ms;
	unsigned int k = 0;
	struct blue_wc wc;
	char *text;

	for (;;) {
		if (round_trip(s, k))
			return -1;
		k++;
		if (k == 1) {
			printf("RUNNING\n");
			fflush(stdout);
		}
		if (k >= s->o->min_rounds &&
		    (!s->o->until_file || file_exists(s->o->until_file)))
			break;
		if (tool_now_ns() / 1000000u > end) {
			rc_failf(&s->e, "--until-file did not appear within %d ms", s->o->max_ms);
			return -1;
		}
	}
	printf("ok %u rounds: %u KiB written and read back intact, SEND and Fetch&Add each\n",
	       k, XFER_LEN >> 10);
	text = (char *)s->e.mem;
	snprintf(text, 64, "rounds %u", k);
	if (rc_post(&s->e, BLUE_WR_SEND_WITH_IMM, 5, text, (uint32_t)strlen(text) + 1, IMM_DONE, 0, 0,
		 0, 0) || rc_wait_send(&s->e, 5, "done") || rc_wait_wc(&s->e, true, 0, &wc, "server's result"))
		return -1;
	text = (char *)s->e.rbuf + (size_t)wc.wr_id * SLOT;
	if (ntohl(wc.imm_data) != IMM_RESULT || !wc.byte_len || text[wc.byte_len - 1] ||
	    strcmp(text, "ok")) {
		rc_failf(&s->e, "the server says: %.*s", (int)wc.byte_len, text);
		return -1;
	}
	printf("ok the server's checks passed\n");
	return 0;
}

/* ---- main ---------------------------------------------------------------------------- */

static int usage(void)
{
	fprintf(stderr, "usage: hostile_peer server IFNAME [--victims N] [--port P] "
		"[--timeout-ms N] [--hold-file F] [--hold-ms N]\n"
		"       hostile_peer client IFNAME SERVER_IP [--port P] [--timeout-ms N] "
		"[--until-file F] [--min-rounds N] [--max-ms N]\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct opts o = { .port = 18611, .timeout_ms = 10000, .hold_ms = 10000,
			  .max_ms = 30000, .min_rounds = 3, .victims = 6 };
	struct side s = { .o = &o };
	int i, rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3)
		return usage();
	if (!strcmp(argv[1], "server"))
		o.server = true;
	else if (strcmp(argv[1], "client"))
		return usage();
	o.ifname = argv[2];
	i = 3;
	if (!o.server) {
		if (argc < 4)
			return usage();
		o.host = argv[i++];
	}
	for (; i + 1 < argc; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];

		if (!strcmp(k, "--port"))
			o.port = (unsigned int)atoi(v);
		else if (!strcmp(k, "--timeout-ms"))
			o.timeout_ms = atoi(v);
		else if (!strcmp(k, "--hold-file"))
			o.hold_file = v;
		else if (!strcmp(k, "--hold-ms"))
			o.hold_ms = atoi(v);
		else if (!strcmp(k, "--victims"))
			o.victims = (unsigned int)atoi(v);
		else if (!strcmp(k, "--until-file"))
			o.until_file = v;
		else if (!strcmp(k, "--min-rounds"))
			o.min_rounds = (unsigned int)atoi(v);
		else if (!strcmp(k, "--max-ms"))
			o.max_ms = atoi(v);
		else
			return usage();
	}
	if (i != argc || !o.port || o.port > 65535 || o.timeout_ms <= 0 ||
	    o.victims > MAX_VICTIMS || o.max_ms <= 0)
		return usage();

	rc = setup(&s);
	if (!rc)
		rc = rc_end_connect(&s.e);
	if (!rc && o.server) {
		rc = make_victims(&s);
		if (!rc)
			print_info(&s);
	}
	if (!rc)
		rc = o.server ? run_server(&s) : run_client(&s);
	if (o.server && s.e.ctx) {
		print_engine(&s);
		if (!rc && o.hold_file)
			hold(&s);
		if (s.area)
			canaries_ok(&s, "at exit");
	}
	teardown(&s);
	rc = rc || s.e.failures ? 1 : 0;
	printf("RESULT %s\n", rc ? "FAIL" : "PASS");
	return rc;
}
