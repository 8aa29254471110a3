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
 *   INFO main_qpn Q main_psn P rkey K mr ADDR mr_len N canary ADDR victims Q:P,Q:P,...
 * and after the client's "done": ENGINE <counter> <value> lines (the engine's drop and
 * refusal counters, which only this process can read), then HOLD, then RESULT.
 * Exit 0 only when every check passed on this side.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <blue/blue.h>
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
#define ACCESS_ALL	(BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE | \
			 BLUE_ACCESS_REMOTE_READ | BLUE_ACCESS_REMOTE_ATOMIC)
#define CANARY		0xca

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
	struct blue_context *ctx;
	struct blue_pd *pd;
	struct blue_cq *cq;
	struct blue_qp *qp;
	struct blue_qp *victim[MAX_VICTIMS];
	uint8_t *area;		/* server: guard | canary | MR | canary | guard */
	size_t area_len;
	uint8_t *mem;		/* the MR */
	size_t mem_len;
	struct blue_mr *mr;
	uint8_t *rbuf;
	struct blue_mr *rmr;
	struct blue_cm_info local, remote;
	unsigned int failures;
	struct blue_wc pending[64];
	unsigned int npending;
};

static uint8_t pat(uint64_t k, unsigned int seed)
{
	return (uint8_t)((k * 151u + seed * 29u + (k >> 8)) ^ (k >> 16) ^ (seed >> 3));
}

static void fill(uint8_t *p, uint32_t len, unsigned int seed)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = pat(i, seed);
}

static int64_t mismatch(const uint8_t *p, uint32_t len, unsigned int seed)
{
	for (uint32_t i = 0; i < len; i++)
		if (p[i] != pat(i, seed))
			return i;
	return -1;
}

static void failf(struct side *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void failf(struct side *s, const char *fmt, ...)
{
	va_list ap;

	s->failures++;
	printf("FAIL ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static bool file_exists(const char *f)
{
	struct stat st;

	return f && stat(f, &st) == 0;
}

/* ---- posting and waiting ------------------------------------------------------------ */

static int post_recv_slot(struct side *s, unsigned int slot)
{
	struct blue_sge sge = {
		.addr = (uintptr_t)(s->rbuf + (size_t)slot * SLOT),
		.length = SLOT,
		.lkey = s->rmr->lkey,
	};
	struct blue_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	return blue_post_recv(s->qp, &wr, &bad);
}

static int post(struct side *s, enum blue_wr_opcode op, uint64_t wr_id, void *addr,
		uint32_t len, uint32_t imm, uint64_t raddr, uint32_t rkey, uint64_t add)
{
	struct blue_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = s->mr->lkey };
	struct blue_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = len ? 1 : 0,
		.opcode = op,
		.send_flags = BLUE_SEND_SIGNALED,
		.imm_data = htonl(imm),
	}, *bad;

	if (op == BLUE_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = add;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return blue_post_send(s->qp, &wr, &bad);
}

/* The next completion @recv (any receive) or for @wr_id, within the timeout. */
static int wait_wc(struct side *s, bool recv, uint64_t wr_id, struct blue_wc *out,
		   const char *what)
{
	uint64_t deadline = now_ms() + (uint64_t)s->o->timeout_ms;
	struct blue_wc wc[16];
	unsigned int i;
	int n;

	for (;;) {
		for (i = 0; i < s->npending; i++) {
			struct blue_wc *w = &s->pending[i];

			if (!!(w->opcode & BLUE_WC_RECV) == recv && (recv || w->wr_id == wr_id)) {
				*out = *w;
				memmove(w, w + 1, (s->npending - i - 1) * sizeof(*w));
				s->npending--;
				if (out->status != BLUE_WC_SUCCESS) {
					failf(s, "%s: completion status %s", what,
					      blue_wc_status_str(out->status));
					return -1;
				}
				return 0;
			}
		}
		n = blue_poll_cq(s->cq, 16, wc);
		if (n < 0) {
			failf(s, "%s: poll_cq: %s", what, strerror(-n));
			return -1;
		}
		for (i = 0; i < (unsigned int)n; i++) {
			if (s->npending == sizeof(s->pending) / sizeof(s->pending[0])) {
				failf(s, "%s: too many unexpected completions", what);
				return -1;
			}
			s->pending[s->npending++] = wc[i];
		}
		if (!n && now_ms() > deadline) {
			failf(s, "%s: no completion within %d ms", what, s->o->timeout_ms);
			return -1;
		}
	}
}

static int wait_send(struct side *s, uint64_t wr_id, const char *what)
{
	struct blue_wc wc;

	return wait_wc(s, false, wr_id, &wc, what);
}

/* ---- setup and teardown ------------------------------------------------------------- */

/* The server's MR between canary pages and guard pages; the client's plain. */
static int alloc_mem(struct side *s)
{
	if (!s->o->server) {
		s->mem_len = 2 * XFER_LEN;
		s->mem = aligned_alloc(PG, s->mem_len);
		if (s->mem)
			memset(s->mem, 0, s->mem_len);
		return s->mem ? 0 : -1;
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
	s->mem = s->area + 2 * PG;
	s->mem_len = MR_LEN;
	memset(s->mem, 0, s->mem_len);
	return 0;
}

/* Both canary pages still hold nothing but the canary byte. */
static int canaries_ok(struct side *s, const char *when)
{
	const uint8_t *c[2] = { s->area + PG, s->area + 2 * PG + MR_LEN };

	for (unsigned int k = 0; k < 2; k++)
		for (uint32_t i = 0; i < PG; i++)
			if (c[k][i] != CANARY) {
				failf(s, "%s: the canary page %s the MR was written at byte %u",
				      when, k ? "after" : "before", i);
				return -1;
			}
	printf("ok canaries intact %s (2 pages around the %u-byte MR)\n", when, MR_LEN);
	return 0;
}

static int setup(struct side *s)
{
	struct blue_qp_init_attr qa = { 0 };
	struct blue_qp_attr ia = { 0 };
	unsigned int i;

	s->ctx = blue_open_device(s->o->ifname);
	if (!s->ctx) {
		printf("FAIL open_device %s: %s\n", s->o->ifname, strerror(errno));
		return -1;
	}
	s->pd = blue_alloc_pd(s->ctx);
	s->cq = s->pd ? blue_create_cq(s->ctx, CQ_DEPTH, NULL, NULL, 0) : NULL;
	s->rbuf = aligned_alloc(PG, (size_t)NRECV * SLOT);
	if (!s->cq || !s->rbuf || alloc_mem(s)) {
		printf("FAIL setup: PD, CQ or buffers: %s\n", strerror(errno));
		return -1;
	}
	s->mr = blue_reg_mr(s->pd, s->mem, s->mem_len, ACCESS_ALL);
	s->rmr = blue_reg_mr(s->pd, s->rbuf, (size_t)NRECV * SLOT, BLUE_ACCESS_LOCAL_WRITE);
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	qa.qp_type = BLUE_QPT_RC;
	qa.cap.max_send_wr = 64;
	qa.cap.max_recv_wr = NRECV;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	s->qp = (s->mr && s->rmr) ? blue_create_qp(s->pd, &qa) : NULL;
	if (!s->qp) {
		printf("FAIL setup: MR or QP: %s\n", strerror(errno));
		return -1;
	}
	ia.qp_state = BLUE_QPS_INIT;
	ia.port_num = 1;
	ia.qp_access_flags = ACCESS_ALL;
	if (blue_modify_qp(s->qp, &ia, BLUE_QP_STATE | BLUE_QP_PKEY_INDEX | BLUE_QP_PORT |
			   BLUE_QP_ACCESS_FLAGS)) {
		printf("FAIL modify_qp RESET -> INIT\n");
		return -1;
	}
	for (i = 0; i < NRECV; i++)
		if (post_recv_slot(s, i)) {
			printf("FAIL post_recv\n");
			return -1;
		}
	return 0;
}

static void teardown(struct side *s)
{
	unsigned int i;
	int err;

	for (i = 0; i < MAX_VICTIMS; i++)
		if (s->victim[i] && (err = blue_destroy_qp(s->victim[i])))
			failf(s, "destroy_qp (victim %u): %s", i, strerror(err));
	if (s->qp && (err = blue_destroy_qp(s->qp)))
		failf(s, "destroy_qp: %s", strerror(err));
	if (s->mr && (err = blue_dereg_mr(s->mr)))
		failf(s, "dereg_mr: %s", strerror(err));
	if (s->rmr && (err = blue_dereg_mr(s->rmr)))
		failf(s, "dereg_mr: %s", strerror(err));
	if (s->cq && (err = blue_destroy_cq(s->cq)))
		failf(s, "destroy_cq: %s", strerror(err));
	if (s->pd && (err = blue_dealloc_pd(s->pd)))
		failf(s, "dealloc_pd: %s", strerror(err));
	if (s->ctx && (err = blue_close_device(s->ctx)))
		failf(s, "close_device: %s", strerror(err));
	if (s->area)
		munmap(s->area, s->area_len);
	else
		free(s->mem);
	free(s->rbuf);
}

static int connect_peer(struct side *s)
{
	struct blue_cm_qp_attr qa;
	int fd, lfd, err;

	if (blue_cm_info_from_qp(s->ctx, s->qp, 1, &s->local)) {
		printf("FAIL cm info: %s\n", blue_cm_last_error());
		return -1;
	}
	if (s->o->server) {
		blue_cm_info_set_mr(&s->local, s->mr);
		lfd = blue_cm_listen(NULL, (uint16_t)s->o->port);
		if (lfd < 0) {
			printf("FAIL cm listen on port %u: %s\n", s->o->port, blue_cm_last_error());
			return -1;
		}
		printf("READY qpn 0x%06x port %u\n", blue_qp_num(s->qp), s->o->port);
		fflush(stdout);
		fd = blue_cm_accept(lfd, s->o->timeout_ms);
		close(lfd);
	} else {
		fd = blue_cm_connect(s->o->host, (uint16_t)s->o->port, s->o->timeout_ms);
	}
	if (fd < 0) {
		printf("FAIL cm connect/accept: %s\n", blue_cm_last_error());
		return -1;
	}
	err = blue_cm_exchange(fd, &s->local, &s->remote, s->o->timeout_ms);
	close(fd);
	if (err || (!s->o->server && !s->remote.has_mr)) {
		printf("FAIL cm exchange: %s\n", err ? blue_cm_last_error() : "no MR");
		return -1;
	}
	blue_cm_qp_attr_default(&qa);
	qa.access = ACCESS_ALL;
	qa.max_rd_atomic = 4;
	qa.max_dest_rd_atomic = 4;
	if (blue_cm_connect_qp(s->ctx, s->qp, s->local.psn, &s->remote, &qa)) {
		printf("FAIL connect_qp: %s\n", blue_cm_last_error());
		return -1;
	}
	printf("ok connected: local qpn 0x%06x psn 0x%06x, peer qpn 0x%06x psn 0x%06x\n",
	       s->local.qpn, s->local.psn, s->remote.qpn, s->remote.psn);
	return 0;
}

/* Victim QPs: connected to a QPN nobody owns at the client's address, each in RTS. */
static int make_victims(struct side *s)
{
	struct blue_qp_init_attr qa = { 0 };
	struct blue_cm_qp_attr ca;
	struct blue_cm_info fake;
	unsigned int i;

	blue_cm_qp_attr_default(&ca);
	ca.access = ACCESS_ALL;
	ca.max_rd_atomic = 4;
	ca.max_dest_rd_atomic = 4;
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	qa.qp_type = BLUE_QPT_RC;
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	for (i = 0; i < s->o->victims; i++) {
		s->victim[i] = blue_create_qp(s->pd, &qa);
		fake = s->remote;
		fake.qpn = VICTIM_PEER + i;
		fake.psn = VICTIM_PSN * (i + 1);
		if (!s->victim[i] || blue_cm_connect_qp(s->ctx, s->victim[i], 0, &fake, &ca)) {
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
	       "canary 0x%" PRIxPTR " victims ", blue_qp_num(s->qp), s->remote.psn,
	       s->mr->rkey, (uintptr_t)s->mem, MR_LEN, (uintptr_t)(s->area + PG));
	for (i = 0; i < s->o->victims; i++)
		printf("%s0x%06x:0x%06x", i ? "," : "", blue_qp_num(s->victim[i]),
		       VICTIM_PSN * (i + 1));
	printf("%s\n", s->o->victims ? "" : "-");
}

/* The counters only this process can read: the engine's drops and refusals. */
static void print_engine(struct side *s)
{
	const struct blue_engine_stats *st = blue__engine_stats(s->ctx);
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

	memcpy(s->mem + REPLY_OFF, text, n);
	return post(s, BLUE_WR_SEND_WITH_IMM, 9000, s->mem + REPLY_OFF, (uint32_t)n, IMM_RESULT,
		    0, 0, 0) || wait_send(s, 9000, "server: result");
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

		if (wait_wc(s, true, 0, &wc, "server: receive"))
			return -1;
		buf = s->rbuf + (size_t)wc.wr_id * SLOT;
		imm = ntohl(wc.imm_data);
		if (!(wc.wc_flags & BLUE_WC_WITH_IMM)) {
			failf(s, "a SEND without immediate data");
		} else if ((imm & 0xffff0000u) == IMM_DATA) {
			if ((imm & 0xffff) != (rounds & 0xffff) || wc.byte_len != SEND_LEN)
				failf(s, "SEND of round %u: imm 0x%08x, %u bytes", rounds, imm,
				      wc.byte_len);
			else if ((bad = mismatch(buf, SEND_LEN, 1000 + rounds)) >= 0)
				failf(s, "SEND of round %u: byte %" PRId64 " differs", rounds, bad);
			rounds++;
		} else if (imm == IMM_DONE) {
			uint64_t word;

			if (sscanf((const char *)buf, "rounds %u", &want) != 1 || want != rounds)
				failf(s, "done: the client did %u rounds, %u SENDs arrived", want,
				      rounds);
			memcpy(&word, s->mem + ATOM_OFF, 8);
			if (word != rounds)
				failf(s, "the atomic word is %" PRIu64 " after %u Fetch&Adds", word,
				      rounds);
			canaries_ok(s, "after the transfer");
			if (!s->failures)
				printf("ok %u rounds: every SEND intact, atomic word %" PRIu64 "\n",
				       rounds, word);
			snprintf(why, sizeof(why), "%s", s->failures ? "server checks failed" : "ok");
			return reply(s, why);
		} else {
			failf(s, "unknown control message 0x%08x", imm);
		}
		if (post_recv_slot(s, (unsigned int)wc.wr_id)) {
			failf(s, "post_recv");
			return -1;
		}
	}
}

static void hold(struct side *s)
{
	uint64_t end = now_ms() + (uint64_t)s->o->hold_ms;
	struct blue_wc wc;

	printf("HOLD qpn 0x%06x\n", blue_qp_num(s->qp));
	fflush(stdout);
	while (s->o->hold_file && !file_exists(s->o->hold_file) && now_ms() < end) {
		if (blue_poll_cq(s->cq, 1, &wc) < 0)
			break;
		usleep(1000);
	}
}

/* ---- client -------------------------------------------------------------------------- */

static int round_trip(struct side *s, unsigned int k)
{
	uint64_t raddr = s->remote.mr.addr, got;
	uint32_t rkey = s->remote.mr.rkey;
	uint8_t *wsrc = s->mem, *rdst = s->mem + XFER_LEN, *res = s->mem + XFER_LEN - 8;
	int64_t bad;

	fill(wsrc, XFER_LEN, k);
	memset(rdst, 0xee, XFER_LEN);
	if (post(s, BLUE_WR_RDMA_WRITE, 1, wsrc, XFER_LEN, 0, raddr, rkey, 0) ||
	    post(s, BLUE_WR_RDMA_READ, 2, rdst, XFER_LEN, 0, raddr, rkey, 0) ||
	    wait_send(s, 1, "WRITE") || wait_send(s, 2, "READ"))
		return -1;
	if ((bad = mismatch(rdst, XFER_LEN, k)) >= 0) {
		failf(s, "round %u: READ back byte %" PRId64 " differs", k, bad);
		return -1;
	}
	/* the SEND source: the start of the WRITE source is free again */
	fill(wsrc, SEND_LEN, 1000 + k);
	memset(res, 0, 8);
	if (post(s, BLUE_WR_SEND_WITH_IMM, 3, wsrc, SEND_LEN, IMM_DATA | (k & 0xffff), 0, 0, 0) ||
	    post(s, BLUE_WR_ATOMIC_FETCH_AND_ADD, 4, res, 8, 0, raddr + ATOM_OFF, rkey, 1) ||
	    wait_send(s, 3, "SEND") || wait_send(s, 4, "Fetch&Add"))
		return -1;
	memcpy(&got, res, 8);
	if (got != k) {
		failf(s, "round %u: Fetch&Add returned %" PRIu64, k, got);
		return -1;
	}
	return 0;
}

static int run_client(struct side *s)
{
	uint64_t end = now_ms() + (uint64_t)s->o->max_ms;
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
		if (now_ms() > end) {
			failf(s, "--until-file did not appear within %d ms", s->o->max_ms);
			return -1;
		}
	}
	printf("ok %u rounds: %u KiB written and read back intact, SEND and Fetch&Add each\n",
	       k, XFER_LEN >> 10);
	text = (char *)s->mem;
	snprintf(text, 64, "rounds %u", k);
	if (post(s, BLUE_WR_SEND_WITH_IMM, 5, text, (uint32_t)strlen(text) + 1, IMM_DONE, 0, 0,
		 0) || wait_send(s, 5, "done") || wait_wc(s, true, 0, &wc, "server's result"))
		return -1;
	text = (char *)s->rbuf + (size_t)wc.wr_id * SLOT;
	if (ntohl(wc.imm_data) != IMM_RESULT || !wc.byte_len || text[wc.byte_len - 1] ||
	    strcmp(text, "ok")) {
		failf(s, "the server says: %.*s", (int)wc.byte_len, text);
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
		rc = connect_peer(&s);
	if (!rc && o.server) {
		rc = make_victims(&s);
		if (!rc)
			print_info(&s);
	}
	if (!rc)
		rc = o.server ? run_server(&s) : run_client(&s);
	if (o.server && s.ctx) {
		print_engine(&s);
		if (!rc && o.hold_file)
			hold(&s);
		if (s.area)
			canaries_ok(&s, "at exit");
	}
	teardown(&s);
	rc = rc || s.failures ? 1 : 0;
	printf("RESULT %s\n", rc ? "FAIL" : "PASS");
	return rc;
}
