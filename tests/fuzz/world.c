// SPDX-License-Identifier: MIT
/*
 * The receive-path fuzzers' world (world.h): building it, resetting it between inputs,
 * running one input's config and records against it, and the invariants checked after
 * every record and every input. The input format is fuzz_rx.h's. Frames are built from
 * templates that carry the live QPN and the expected PSN with a correct ICRC before the
 * damage the input asks for, or raw; between them both engines run.
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "afxdp_hal/hal.h"
#include "runtime/codec.h"
#include "runtime/cq.h"
#include "runtime/device.h"
#include "runtime/progress.h"
#include "runtime/qp.h"
#include "tests/fuzz/fuzz_rx.h"
#include "tests/fuzz/world.h"

#define PG		4096u
#define ARENA_PAGES	7u	/* guard | RW MR (2 pages) | canary | RO MR (2 pages) | guard */
#define RW_LEN		(2 * PG - 40)	/* 40 canary bytes after it; the guard before it */
#define RO_SKEW		24u		/* canary bytes before the RO MR; the guard after */
#define RO_LEN		(2 * PG - RO_SKEW)
#define DEAD_OFF	256u		/* in the canary page: an MR registered, then freed */
#define DEAD_LEN	1024u
#define MAX_WR		64
#define CQ_DEPTH	128
#define FRAME_MAX	2048u
#define PASSES_END	8

#define FZ_CHECK(cond, ...) do {						\
		if (!(cond)) {							\
			fprintf(stderr, "fuzz: invariant failed: %s: ", #cond);	\
			fprintf(stderr, __VA_ARGS__);				\
			fprintf(stderr, "\n");					\
			abort();						\
		}								\
	} while (0)

struct wr_rec {
	uint64_t id;
	uint32_t len;	/* receives: the buffer bytes */
	bool done;
};

struct side {
	const char *name;
	struct blue_hal *hal;
	struct blue_context *ctx;
	struct blue_pd *pd;
	struct blue_cq *scq, *rcq;
	struct blue_qp *qp;
	uint8_t mac[6];
	uint32_t ip;		/* network order */
	uint8_t *arena;		/* ARENA_PAGES pages, mmapped */
	uint8_t *rw, *ro;	/* the two MRs inside it */
	struct blue_mr *mr_rw, *mr_ro;
	uint32_t dead_key;
	struct wr_rec sends[MAX_WR], recvs[MAX_WR];
	unsigned int nsends, nrecvs;
	int64_t last_send_done;	/* index in sends[] of the latest send completion */
	bool drop_own;		/* the filter loses this side's own frames */
	struct blue_qp_ctx fresh;	/* the QP's live context as blue_create_qp() left it */
};


static struct side g_a, g_b;
static bool g_injecting;	/* the filter passes what the harness sends */
static bool g_trace;		/* FUZZ_RX_TRACE=1: say what each input did (replaying) */

static uint8_t u8(struct fz_in *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

static uint16_t u16(struct fz_in *in)
{
	uint16_t v = u8(in);

	return (uint16_t)(v | u8(in) << 8);
}

static uint32_t u32(struct fz_in *in)
{
	uint32_t v = u16(in);

	return v | (uint32_t)u16(in) << 16;
}

static uint64_t u64(struct fz_in *in)
{
	uint64_t v = u32(in);

	return v | (uint64_t)u32(in) << 32;
}

/* ---- memory: guard pages, canaries ------------------------------------------------ */

/* The patterns, computed once: the harness's own loops would be coverage-instrumented. */
static uint8_t g_canary[ARENA_PAGES * PG], g_ro[RO_LEN], g_rw[RW_LEN];

static void patterns_init(void)
{
	size_t i;

	for (i = 0; i < sizeof(g_canary); i++)
		g_canary[i] = (uint8_t)(0xc5 ^ (i * 7) ^ (i >> 8));
	for (i = 0; i < RO_LEN; i++)
		g_ro[i] = (uint8_t)(0x3b + i * 13 + (i >> 9));
	for (i = 0; i < RW_LEN; i++)
		g_rw[i] = (uint8_t)(i * 31 + 7);
}

static void arena_init(struct side *s)
{
	s->arena = mmap(NULL, ARENA_PAGES * PG, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	FZ_CHECK(s->arena != MAP_FAILED, "mmap");
	FZ_CHECK(!mprotect(s->arena, PG, PROT_NONE), "guard");
	FZ_CHECK(!mprotect(s->arena + (ARENA_PAGES - 1) * PG, PG, PROT_NONE), "guard");
	memcpy(s->arena + PG, g_canary + PG, (ARENA_PAGES - 2) * PG);
	s->rw = s->arena + PG;
	s->ro = s->arena + 4 * PG + RO_SKEW;
	memcpy(s->rw, g_rw, RW_LEN);
	memcpy(s->ro, g_ro, RO_LEN);
}

static size_t first_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
	size_t i;

	for (i = 0; i < n && a[i] == b[i]; i++)
		;
	return i;
}

/* Bytes outside both MRs, and the RO MR (nobody may write it), as they were. */
static void arena_check(const struct side *s)
{
	size_t from = PG + RW_LEN, to = 4 * PG + RO_SKEW;

	FZ_CHECK(!memcmp(s->arena + from, g_canary + from, to - from),
		 "%s: canary byte at arena offset %zu (the RW MR ends at %u, the RO MR starts "
		 "at %u) was written", s->name,
		 from + first_diff(s->arena + from, g_canary + from, to - from),
		 PG + RW_LEN, 4 * PG + RO_SKEW);
	FZ_CHECK(!memcmp(s->ro, g_ro, RO_LEN), "%s: byte %zu of the MR without write "
		 "rights was written", s->name, first_diff(s->ro, g_ro, RO_LEN));
}

/* ---- the world -------------------------------------------------------------------- */

static enum blue_lb_verdict filter(void *arg, const struct blue_frame *f, uint64_t seq)
{
	const struct side *s = arg;

	(void)f;
	(void)seq;
	if (g_injecting)
		return BLUE_LB_PASS;
	return s->drop_own ? BLUE_LB_DROP : BLUE_LB_PASS;
}

static void side_open(struct side *s, const char *name, struct blue_hal *hal, uint8_t last)
{
	const uint8_t mac[6] = { 0x02, 0xf2, 0x22, 0, 0, last };
	struct blue_mr *dead;

	s->name = name;
	s->hal = hal;
	memcpy(s->mac, mac, 6);
	s->ip = htonl(0x0ac9f000u | last);	/* 10.201.240.x: never leaves the process */
	s->ctx = blue_open_device_hal(hal, s->mac, s->ip);
	FZ_CHECK(s->ctx, "open_device_hal");
	s->pd = blue_alloc_pd(s->ctx);
	s->scq = blue_create_cq(s->ctx, CQ_DEPTH, NULL, NULL, 0);
	s->rcq = blue_create_cq(s->ctx, CQ_DEPTH, NULL, NULL, 0);
	FZ_CHECK(s->pd && s->scq && s->rcq, "pd/cq");
	arena_init(s);
	dead = blue_reg_mr(s->pd, s->arena + 3 * PG + DEAD_OFF, DEAD_LEN,
			   BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE |
			   BLUE_ACCESS_REMOTE_READ | BLUE_ACCESS_REMOTE_ATOMIC);
	FZ_CHECK(dead, "reg dead MR");
	s->dead_key = dead->rkey;
	FZ_CHECK(!blue_dereg_mr(dead), "dereg");
	s->mr_rw = blue_reg_mr(s->pd, s->rw, RW_LEN, BLUE_ACCESS_LOCAL_WRITE |
			       BLUE_ACCESS_REMOTE_WRITE | BLUE_ACCESS_REMOTE_READ |
			       BLUE_ACCESS_REMOTE_ATOMIC);
	s->mr_ro = blue_reg_mr(s->pd, s->ro, RO_LEN, BLUE_ACCESS_REMOTE_READ);
	FZ_CHECK(s->mr_rw && s->mr_ro, "reg MRs");
	s->last_send_done = -1;
}

static void qp_create(struct side *s)
{
	struct blue_qp_init_attr ia = {
		.send_cq = s->scq,
		.recv_cq = s->rcq,
		.cap = { .max_send_wr = MAX_WR / 2, .max_recv_wr = MAX_WR / 2,
			 .max_send_sge = 2, .max_recv_sge = 2, .max_inline_data = 64 },
		.qp_type = BLUE_QPT_RC,
	};

	s->qp = blue_create_qp(s->pd, &ia);
	FZ_CHECK(s->qp, "create_qp");
}

static void qp_connect(struct side *s, const struct side *peer, uint8_t mtu, uint32_t sq_psn,
		       uint32_t rq_psn, uint8_t c2, uint32_t access)
{
	struct blue_qp_attr a;
	static const uint8_t timeouts[4] = { 0, 0, 1, 3 };

	memset(&a, 0, sizeof(a));
	a.qp_state = BLUE_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = access;
	FZ_CHECK(!blue_modify_qp(s->qp, &a, BLUE_QP_STATE | BLUE_QP_PKEY_INDEX | BLUE_QP_PORT |
				 BLUE_QP_ACCESS_FLAGS), "INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = BLUE_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = blue_qp_num(peer->qp);
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	a.ah_attr.sgid_index = 1;
	a.ah_attr.port_num = 1;
	FZ_CHECK(!blue_query_gid(peer->ctx, 1, 1, &a.ah_attr.dgid), "gid");
	FZ_CHECK(!blue_modify_qp(s->qp, &a, BLUE_QP_STATE | BLUE_QP_AV | BLUE_QP_PATH_MTU |
				 BLUE_QP_DEST_QPN | BLUE_QP_RQ_PSN |
				 BLUE_QP_MAX_DEST_RD_ATOMIC | BLUE_QP_MIN_RNR_TIMER), "RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = BLUE_QPS_RTS;
	a.sq_psn = sq_psn;
	a.timeout = timeouts[c2 & 3];
	a.retry_cnt = (c2 >> 2) & 7;
	a.rnr_retry = (c2 >> 5) & 7;
	a.max_rd_atomic = 4;
	FZ_CHECK(!blue_modify_qp(s->qp, &a, BLUE_QP_STATE | BLUE_QP_SQ_PSN | BLUE_QP_TIMEOUT |
				 BLUE_QP_RETRY_CNT | BLUE_QP_RNR_RETRY |
				 BLUE_QP_MAX_QP_RD_ATOMIC), "RTS");
}

static void side_close(struct side *s)
{
	struct blue_hal_stats st;

	FZ_CHECK(!blue_destroy_qp(s->qp), "destroy_qp");
	FZ_CHECK(!blue_dereg_mr(s->mr_rw) && !blue_dereg_mr(s->mr_ro), "dereg");
	FZ_CHECK(!blue_destroy_cq(s->scq) && !blue_destroy_cq(s->rcq), "destroy_cq");
	FZ_CHECK(!blue_dealloc_pd(s->pd), "dealloc_pd");
	FZ_CHECK(!blue_close_device(s->ctx), "close_device");
	/* every frame is back: none leaked by the engine, none freed twice */
	blue_hal_get_stats(s->hal, &st);
	FZ_CHECK(st.frame_errors == 0, "%s: %llu bad frame frees", s->name,
		 (unsigned long long)st.frame_errors);
	FZ_CHECK(st.frames_free == st.frames_total, "%s: %llu of %llu frames not returned",
		 s->name, (unsigned long long)(st.frames_total - st.frames_free),
		 (unsigned long long)st.frames_total);
	FZ_CHECK(!munmap(s->arena, ARENA_PAGES * PG), "munmap");
}

/* ---- legit work requests ------------------------------------------------------------ */

static void post_send(struct side *s, enum blue_wr_opcode op, struct blue_sge *sge, int nsge,
		      uint64_t raddr, uint32_t rkey)
{
	struct blue_send_wr wr = {
		.wr_id = 0x1000u + s->nsends,
		.sg_list = sge,
		.num_sge = nsge,
		.opcode = op,
		.send_flags = BLUE_SEND_SIGNALED,
		.imm_data = htonl(0xfeed0000u + s->nsends),
	}, *bad;

	if (s->nsends == MAX_WR)
		return;
	if (op == BLUE_WR_ATOMIC_CMP_AND_SWP || op == BLUE_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 0x0706050403020100ull;
		wr.wr.atomic.swap = 0x1122334455667788ull;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	/* refused (a full queue, or the QP in a state that takes none): not posted */
	if (blue_post_send(s->qp, &wr, &bad))
		return;
	s->sends[s->nsends++] = (struct wr_rec){ .id = wr.wr_id };
}

/* The layout of the RW MR, on both sides: sources, destinations, receive buffers. */
#define OFF_SEND	0u	/* 1500 B, as two SGEs */
#define OFF_WSRC	1536u	/* 3000 B */
#define OFF_RDST	4608u	/* 2500 B */
#define OFF_ATOM_RES	7168u	/* 2 x 8 B */
#define OFF_WIMM_SRC	7184u	/* 100 B */
#define OFF_ATOM_WORD	0u	/* the target's atomic word */
#define OFF_WDST	64u	/* the target's WRITE destination */
#define OFF_RECV	3200u	/* receive buffers, 1600 B in two SGEs, overlapping */

static void post_legit(struct side *s, const struct side *t, unsigned int what)
{
	struct blue_sge sge[2];
	uint64_t rw = (uintptr_t)t->rw;

	switch (what) {
	case FZ_POST_SEND:
		sge[0] = (struct blue_sge){ (uintptr_t)s->rw + OFF_SEND, 700, s->mr_rw->lkey };
		sge[1] = (struct blue_sge){ (uintptr_t)s->rw + OFF_SEND + 700, 800, s->mr_rw->lkey };
		post_send(s, BLUE_WR_SEND, sge, 2, 0, 0);
		break;
	case FZ_POST_WRITE:
		sge[0] = (struct blue_sge){ (uintptr_t)s->rw + OFF_WSRC, 3000, s->mr_rw->lkey };
		post_send(s, BLUE_WR_RDMA_WRITE, sge, 1, rw + OFF_WDST, t->mr_rw->rkey);
		break;
	case FZ_POST_READ:
		sge[0] = (struct blue_sge){ (uintptr_t)s->rw + OFF_RDST, 2500, s->mr_rw->lkey };
		post_send(s, BLUE_WR_RDMA_READ, sge, 1, (uintptr_t)t->ro + 100, t->mr_ro->rkey);
		break;
	case FZ_POST_FADD:
	case FZ_POST_CAS:
		sge[0] = (struct blue_sge){ (uintptr_t)s->rw + OFF_ATOM_RES +
					    (what == FZ_POST_CAS ? 8 : 0), 8, s->mr_rw->lkey };
		post_send(s, what == FZ_POST_CAS ? BLUE_WR_ATOMIC_CMP_AND_SWP :
			  BLUE_WR_ATOMIC_FETCH_AND_ADD, sge, 1, rw + OFF_ATOM_WORD,
			  t->mr_rw->rkey);
		break;
	case FZ_POST_RECV_A:
	case FZ_POST_RECV_B: {
		struct side *r = what == FZ_POST_RECV_A ? &g_a : &g_b;
		unsigned int k = r->nrecvs;
		struct blue_recv_wr wr = { .wr_id = 0x2000u + k, .sg_list = sge, .num_sge = 2 };
		struct blue_recv_wr *bad;

		if (k == MAX_WR)
			break;
		sge[0] = (struct blue_sge){ (uintptr_t)r->rw + OFF_RECV + (k % 3) * 1000, 1000,
					    r->mr_rw->lkey };
		sge[1] = (struct blue_sge){ (uintptr_t)r->rw + OFF_RECV + 3000 + (k % 2) * 600,
					    600, r->mr_rw->lkey };
		if (!blue_post_recv(r->qp, &wr, &bad))
			r->recvs[r->nrecvs++] = (struct wr_rec){ .id = wr.wr_id, .len = 1600 };
		break;
	}
	default:
		break;
	}
}

static void post_initial(uint8_t c0, uint8_t c1)
{
	struct blue_sge sge;
	unsigned int i, nrecv = (c0 >> 4) & 7;

	for (i = 0; i < nrecv && i < 6; i++)
		post_legit(&g_a, &g_b, FZ_POST_RECV_B);
	if (c1 & 0x80)
		post_legit(&g_a, &g_b, FZ_POST_RECV_A);
	if (c1 & 0x01)
		post_legit(&g_a, &g_b, FZ_POST_SEND);
	if (c1 & 0x02)
		post_legit(&g_a, &g_b, FZ_POST_WRITE);
	if (c1 & 0x04)
		post_legit(&g_a, &g_b, FZ_POST_READ);
	if (c1 & 0x08)
		post_legit(&g_a, &g_b, FZ_POST_FADD);
	if (c1 & 0x10)
		post_legit(&g_a, &g_b, FZ_POST_CAS);
	if (c1 & 0x20) {
		sge = (struct blue_sge){ (uintptr_t)g_a.rw + OFF_WIMM_SRC, 100, g_a.mr_rw->lkey };
		post_send(&g_a, BLUE_WR_RDMA_WRITE_WITH_IMM, &sge, 1,
			  (uintptr_t)g_b.rw + 3072, g_b.mr_rw->rkey);
	}
	if (c1 & 0x40)
		post_send(&g_a, BLUE_WR_RDMA_READ, NULL, 0, (uintptr_t)g_b.rw, g_b.mr_rw->rkey);
	if (c1 & 0x80)
		post_legit(&g_b, &g_a, FZ_POST_SEND);
}

/* ---- running and checking ------------------------------------------------------------ */

static void passes(unsigned int n)
{
	while (n--) {
		blue__progress(g_b.ctx);
		blue__progress(g_a.ctx);
	}
}

static struct wr_rec *find_wr(struct wr_rec *v, unsigned int n, uint64_t id, unsigned int *idx)
{
	for (unsigned int i = 0; i < n; i++)
		if (v[i].id == id) {
			*idx = i;
			return &v[i];
		}
	return NULL;
}

/* Every completion names a posted WR, once; sends complete in posting order. */
static void drain_cqs(struct side *s)
{
	struct blue_wc wc[16];
	struct wr_rec *w;
	unsigned int idx;
	int n, i;

	while ((n = blue_poll_cq(s->scq, 16, wc)) > 0) {
		for (i = 0; i < n; i++) {
			w = find_wr(s->sends, s->nsends, wc[i].wr_id, &idx);
			FZ_CHECK(w, "%s: send completion for wr_id 0x%llx never posted", s->name,
				 (unsigned long long)wc[i].wr_id);
			FZ_CHECK(!w->done, "%s: wr_id 0x%llx completed twice", s->name,
				 (unsigned long long)wc[i].wr_id);
			FZ_CHECK((int64_t)idx > s->last_send_done, "%s: send wr_id 0x%llx "
				 "completed after a later one", s->name,
				 (unsigned long long)wc[i].wr_id);
			FZ_CHECK(wc[i].qp_num == s->qp->qpn, "%s: completion on QP 0x%x",
				 s->name, wc[i].qp_num);
			w->done = true;
			s->last_send_done = idx;
			if (g_trace)
				fprintf(stderr, "%s: send wr_id 0x%llx: %s\n", s->name,
					(unsigned long long)wc[i].wr_id,
					blue_wc_status_str(wc[i].status));
		}
	}
	FZ_CHECK(n == 0, "poll_cq: %d", n);
	while ((n = blue_poll_cq(s->rcq, 16, wc)) > 0) {
		for (i = 0; i < n; i++) {
			w = find_wr(s->recvs, s->nrecvs, wc[i].wr_id, &idx);
			FZ_CHECK(w, "%s: receive completion for wr_id 0x%llx never posted",
				 s->name, (unsigned long long)wc[i].wr_id);
			FZ_CHECK(!w->done, "%s: receive wr_id 0x%llx completed twice", s->name,
				 (unsigned long long)wc[i].wr_id);
			FZ_CHECK(wc[i].status != BLUE_WC_SUCCESS || wc[i].byte_len <= w->len ||
				 wc[i].opcode == BLUE_WC_RECV_RDMA_WITH_IMM,
				 "%s: receive of %u bytes into %u", s->name, wc[i].byte_len,
				 w->len);
			w->done = true;
			if (g_trace)
				fprintf(stderr, "%s: receive wr_id 0x%llx: %s, %u bytes\n",
					s->name, (unsigned long long)wc[i].wr_id,
					blue_wc_status_str(wc[i].status), wc[i].byte_len);
		}
	}
	FZ_CHECK(n == 0, "poll_cq: %d", n);
}

static void trace_side(const struct side *s)
{
	const struct blue_qp_ctx *l = s->qp->live;
	const struct blue_engine_stats *st = blue__engine_stats(s->ctx);
	unsigned int i;

	fprintf(stderr, "%s: QP 0x%x %s rq_psn 0x%x sq_psn 0x%x una 0x%x msn %u naks sent %llu "
		"rcvd %llu retransmits %llu | rx %llu bad_icrc %llu malformed %llu no_qp %llu "
		"bad_src %llu wrong_transport %llu", s->name, s->qp->qpn,
		blue__qp_state_str(l->state), l->rq_psn, l->sq_psn, l->una_psn, l->msn,
		(unsigned long long)l->naks_sent, (unsigned long long)l->naks_rcvd,
		(unsigned long long)l->retransmits, (unsigned long long)st->rx_frames,
		(unsigned long long)st->rx_bad_icrc, (unsigned long long)st->rx_malformed,
		(unsigned long long)st->rx_no_qp, (unsigned long long)st->rx_bad_src,
		(unsigned long long)st->rx_wrong_transport);
	for (i = 1; i < BLUE_PARSE_ERR_MAX; i++)
		if (st->parse_err[i])
			fprintf(stderr, " %s %llu", blue_parse_err_name(i),
				(unsigned long long)st->parse_err[i]);
	fprintf(stderr, "\n");
}

static void live_check(const struct side *s)
{
	const struct blue_qp_ctx *l = s->qp->live;
	const struct blue_engine_stats *st = blue__engine_stats(s->ctx);
	uint64_t perr = 0;
	unsigned int i;

	FZ_CHECK(l->state <= BLUE_QPS_ERR, "%s: state %u", s->name, l->state);
	FZ_CHECK(!((l->rq_psn | l->sq_psn | l->una_psn | l->msn) & ~BLUE_PSN_MASK),
		 "%s: a PSN or MSN beyond 24 bits", s->name);
	FZ_CHECK(s->qp->resp.out_prod - s->qp->resp.out_cons <= BLUE_RESP_OUTQ,
		 "%s: responder queue overrun", s->name);
	for (i = 1; i < BLUE_PARSE_ERR_MAX; i++)
		perr += st->parse_err[i];
	FZ_CHECK(perr == st->rx_bad_icrc + st->rx_malformed, "%s: parse errors %llu, "
		 "counted %llu", s->name, (unsigned long long)perr,
		 (unsigned long long)(st->rx_bad_icrc + st->rx_malformed));
}

/* ---- frames ---------------------------------------------------------------------------- */

static uint16_t ip_csum(const uint8_t *h)
{
	uint32_t sum = 0;

	for (unsigned int i = 0; i < 20; i += 2)
		if (i != 10)
			sum += (uint32_t)h[i] << 8 | h[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* Offset of the IPv4 header (after an optional 802.1Q tag), or 0 if there is none. */
static uint32_t l3_off(const uint8_t *f, uint32_t len)
{
	uint32_t off = BLUE_ETH_HLEN;

	if (len < BLUE_ETH_HLEN + 20)
		return 0;
	if (f[12] == 0x81 && f[13] == 0x00)
		off += BLUE_VLAN_HLEN;
	return len >= off + 20 ? off : 0;
}

static void fix_ipcsum(uint8_t *f, uint32_t len)
{
	uint32_t l3 = l3_off(f, len);
	uint16_t c;

	if (!l3)
		return;
	c = ip_csum(f + l3);
	f[l3 + 10] = (uint8_t)(c >> 8);
	f[l3 + 11] = (uint8_t)c;
}

/* Hand @len bytes to @from's socket: the loopback steers them to the other side. */
static void inject(struct side *from, const uint8_t *buf, uint32_t len)
{
	struct blue_frame f;

	if (!len || len > from->hal->frame_size - from->hal->headroom)
		return;
	if (blue_hal_tx_alloc(from->hal, &f, 1) != 1)
		return;
	memcpy(f.data, buf, len);
	f.len = len;
	g_injecting = true;
	if (blue_hal_tx_submit(from->ctx->sock, &f, 1) != 1)
		blue_hal_tx_free(from->hal, &f, 1);
	blue_hal_tx_flush(from->ctx->sock);
	g_injecting = false;
}

static bool pkt_same(const struct blue_pkt *a, const struct blue_pkt *b)
{
	return a->opcode == b->opcode && a->se == b->se && a->mig == b->mig &&
	       a->pad == b->pad && a->tver == b->tver && a->pkey == b->pkey &&
	       a->fecn == b->fecn && a->becn == b->becn && a->dqpn == b->dqpn &&
	       a->ackreq == b->ackreq && a->psn == b->psn &&
	       !memcmp(&a->reth, &b->reth, sizeof(a->reth)) &&
	       a->aeth.syndrome == b->aeth.syndrome && a->aeth.msn == b->aeth.msn &&
	       a->atmeth.va == b->atmeth.va && a->atmeth.rkey == b->atmeth.rkey &&
	       a->atmeth.swap_add == b->atmeth.swap_add &&
	       a->atmeth.compare == b->atmeth.compare && a->atmack.orig == b->atmack.orig &&
	       a->imm == b->imm && a->ieth_rkey == b->ieth_rkey &&
	       a->deth.qkey == b->deth.qkey && a->deth.sqpn == b->deth.sqpn &&
	       a->saddr == b->saddr && a->daddr == b->daddr && a->tos == b->tos &&
	       a->ttl == b->ttl && a->ip_id == b->ip_id && a->ip_df == b->ip_df &&
	       a->sport == b->sport && a->has_vlan == b->has_vlan &&
	       a->vlan_tci == b->vlan_tci && !memcmp(a->dst_mac, b->dst_mac, 6) &&
	       !memcmp(a->src_mac, b->src_mac, 6) && a->payload_len == b->payload_len &&
	       !memcmp(a->payload, b->payload, a->payload_len);
}

/* The parser on its own: what it accepts lies in the buffer and survives a rebuild. */
static void parser_check(const uint8_t *buf, uint32_t len)
{
	static uint8_t copy[FRAME_MAX + 64], out[FRAME_MAX + 64];
	struct blue_pkt p, q;
	int err, n;

	err = blue_pkt_parse(buf, len, &p);
	FZ_CHECK((err == 0) == (p.parse_err == BLUE_PARSE_OK), "parse %d vs parse_err %d",
		 err, p.parse_err);
	FZ_CHECK(blue_parse_err_name(p.parse_err) != NULL, "no name");
	memcpy(copy, buf, len);
	if (!blue_pkt_fix_icrc(copy, len))
		FZ_CHECK(!blue_pkt_verify_icrc(copy, len), "fixed ICRC does not verify");
	if (err)
		return;
	FZ_CHECK(p.frame_len <= len, "frame_len %u > %u", p.frame_len, len);
	FZ_CHECK(p.payload >= buf && p.payload + p.payload_len <= buf + p.frame_len,
		 "payload outside the frame");
	FZ_CHECK(!blue_pkt_verify_icrc(buf, len), "accepted with a bad ICRC");
	n = blue_pkt_build(&p, out, sizeof(out));
	FZ_CHECK(n > 0 && (uint32_t)n == p.frame_len, "rebuild: %d, frame_len %u", n,
		 p.frame_len);
	FZ_CHECK(!blue_pkt_parse(out, (size_t)n, &q), "the rebuilt frame does not parse: %s",
		 blue_parse_err_name(q.parse_err));
	FZ_CHECK(pkt_same(&p, &q), "the rebuilt frame parses differently");
}

/* The PSN the target side expects for @op: its responder's, or its completer's. */
static uint32_t expected_psn(const struct side *t, uint32_t fl)
{
	return (fl & BLUE_OPF_RESPONSE) ? t->qp->live->una_psn : t->qp->live->rq_psn;
}

static uint64_t pick_base(const struct side *t, unsigned int b, uint64_t rnd)
{
	switch (b) {
	case FZ_BASE_RW:	return (uintptr_t)t->rw;
	case FZ_BASE_RO:	return (uintptr_t)t->ro;
	case FZ_BASE_CANARY:	return (uintptr_t)t->arena + 3 * PG;
	case FZ_BASE_GUARD:	return (uintptr_t)t->arena;
	case FZ_BASE_NULL:	return 0;
	case FZ_BASE_RANDOM:	return rnd;
	case FZ_BASE_RW_END:	return (uintptr_t)t->rw + RW_LEN;
	default:		return (uintptr_t)t->ro + RO_LEN;
	}
}

/* One past the end of the MR that @base is at or near. */
static uint64_t mr_end(const struct side *t, unsigned int base)
{
	if (base == FZ_BASE_RO || base == FZ_BASE_RO_END)
		return (uintptr_t)t->ro + RO_LEN;
	return (uintptr_t)t->rw + RW_LEN;
}

static uint32_t pick_key(const struct side *t, const struct side *from, unsigned int k,
			 uint32_t rnd)
{
	switch (k) {
	case FZ_KEY_RW:
	case FZ_KEY_RW2:	return t->mr_rw->rkey;
	case FZ_KEY_RO:		return t->mr_ro->rkey;
	case FZ_KEY_DEAD:	return t->dead_key;
	case FZ_KEY_ZERO:	return 0;
	case FZ_KEY_OTHER:	return from->mr_rw->rkey ^ 0x100;
	case FZ_KEY_RW_TAG:	return t->mr_rw->rkey ^ 0x5a;
	default:		return rnd;
	}
}

/* A template record's fields (fuzz_rx.h), read at fixed widths. */
struct tmpl_in {
	uint8_t opbyte, flags, keysel, plsel, syndrome, swap, cmp, nmut, misaddr;
	int8_t msnd, adj;
	uint16_t off, plen;
	uint32_t psn, len, rkey, imm, qpn;
	uint64_t base;
	struct {
		uint16_t off;
		uint8_t x;
	} mut[FZ_MUT_MAX];
};

static void tmpl_read(struct fz_in *in, unsigned int mode, struct tmpl_in *r)
{
	unsigned int i, nmut = mode == FZ_MODE_MUTATE ? FZ_MUT_MAX : FZ_MUT_SLOTS;

	memset(r, 0, sizeof(*r));
	r->opbyte = u8(in);
	r->flags = u8(in);
	r->psn = u32(in);
	r->keysel = u8(in);
	r->off = u16(in);
	r->len = u32(in);
	r->rkey = u32(in);
	r->base = u64(in);
	r->plsel = u8(in);
	r->plen = u16(in);
	r->syndrome = u8(in);
	r->msnd = (int8_t)u8(in);
	r->imm = u32(in);
	r->swap = u8(in);
	r->cmp = u8(in);
	r->nmut = u8(in);
	r->adj = (int8_t)u8(in);
	r->misaddr = u8(in);
	r->qpn = u32(in);
	for (i = 0; i < nmut; i++) {
		r->mut[i].off = u16(in);
		r->mut[i].x = u8(in);
	}
	r->nmut = (uint8_t)(r->nmut % (nmut + 1));
}

/* The RETH length the record asks for: its kind applied to the u32 it carries. */
static uint32_t tmpl_len(const struct side *t, const struct tmpl_in *r, uint64_t va)
{
	switch (r->keysel >> 6) {
	case FZ_LEN_U8:		return r->len & 0xff;
	case FZ_LEN_U16:	return r->len & 0xffff;
	case FZ_LEN_U32:	return r->len;
	default:
		/* up to the end of the MR the base names, -3 to +4 bytes, so that every
		 * bounds check meets its off-by-one */
		return (uint32_t)(mr_end(t, (r->keysel >> 3) & 7) - va) +
		       (uint32_t)((int32_t)(r->len & 7) - 3);
	}
}

/* One template record: build, damage, deliver. */
static void record_template(struct fz_in *in, uint8_t sel, unsigned int mode)
{
	static uint8_t frame[FRAME_MAX + 256], payload[4096];
	uint8_t op = fz_opcodes[sel & 31];
	uint32_t fl, mtu, len, i;
	bool resp, rev = mode == FZ_MODE_REVERSE;
	struct side *t, *from;
	struct tmpl_in r;
	struct blue_pkt p;
	unsigned int base;
	uint64_t va;
	int n;

	tmpl_read(in, mode, &r);
	if (op == 0x1f || op == 0xff)
		op = r.opbyte;	/* the last two slots: any opcode byte at all */
	fl = blue_opcode_flags(op);
	resp = fl & BLUE_OPF_RESPONSE;
	t = (resp != rev) ? &g_a : &g_b;
	from = t == &g_a ? &g_b : &g_a;
	mtu = blue__qp_mtu(t->qp);
	blue_pkt_init(&p, op);
	memcpy(p.dst_mac, t->mac, 6);
	memcpy(p.src_mac, from->mac, 6);
	p.saddr = from->ip;
	p.daddr = t->ip;
	p.dqpn = t->qp->qpn;
	p.sport = blue_udp_sport(from->qp->qpn, t->qp->qpn);
	p.ackreq = !!(r.flags & FZ_F_ACKREQ);
	p.se = !!(r.flags & FZ_F_SE);
	p.has_vlan = !!(r.flags & FZ_F_VLAN);
	p.fecn = p.becn = !!(r.flags & FZ_F_ECN);
	p.psn = blue_psn_add(expected_psn(t, fl), (r.flags & FZ_F_FAR_PSN) ? r.psn :
			     (uint32_t)(int32_t)(int8_t)r.psn);

	base = (r.keysel >> 3) & 7;
	va = pick_base(t, base, r.base) + (uint64_t)(int64_t)(int16_t)r.off;
	p.reth.va = p.atmeth.va = va;
	p.reth.rkey = p.atmeth.rkey = p.ieth_rkey = pick_key(t, from, r.keysel & 7, r.rkey);
	p.reth.len = tmpl_len(t, &r, va);
	switch (r.plsel & 3) {
	case 0:  p.payload_len = mtu; break;
	case 1:  p.payload_len = r.plsel >> 2; break;
	case 2:  p.payload_len = r.plen % (mtu + 64); break;
	default: p.payload_len = p.reth.len < mtu ? p.reth.len : mtu; break;
	}
	p.aeth.syndrome = r.syndrome;
	p.aeth.msn = blue_psn_add(t->qp->live->msn, (uint32_t)(int32_t)r.msnd);
	p.imm = r.imm;
	p.atmeth.swap_add = 0x0101010101010101ull * r.swap;
	p.atmeth.compare = 0x0101010101010101ull * r.cmp;
	p.atmack.orig = p.atmeth.compare ^ 0xa5a5a5a5a5a5a5a5ull;
	p.deth.qkey = p.imm;
	p.deth.sqpn = from->qp->qpn;
	for (i = 0; i < p.payload_len && i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i ^ sel ^ (i >> 8));
	p.payload = payload;
	if (!(fl & BLUE_OPF_PAYLOAD))
		p.payload_len = 0;

	n = blue_pkt_build(&p, frame, FRAME_MAX);
	if (n < 0)
		return;
	len = (uint32_t)n;

	for (i = 0; i < r.nmut; i++)
		frame[r.mut[i].off % len] ^= r.mut[i].x;
	if (r.flags & FZ_F_PAD_LIE) {
		uint32_t bth = l3_off(frame, len) + 28;

		if (bth > 28 && bth + 1 < len)
			frame[bth + 1] = (uint8_t)((frame[bth + 1] & ~BLUE_BTH_PAD_MASK) |
						   ((r.adj & 3) << BLUE_BTH_PAD_SHIFT));
	} else if (r.adj < 0) {
		/* truncated: the headers still say the old length */
		len = (uint32_t)-r.adj >= len ? 1 : len - (uint32_t)-r.adj;
	} else if (r.adj > 0 && mode == FZ_MODE_MUTATE) {
		/* trailing bytes past the IP length, as Ethernet padding would be */
		for (i = 0; i < (uint32_t)r.adj && len < FRAME_MAX; i++)
			frame[len++] = (uint8_t)(r.adj * i);
	}
	if (r.flags & FZ_F_FIX_IPCSUM)
		fix_ipcsum(frame, len);
	if (r.flags & FZ_F_FIX_ICRC)
		blue_pkt_fix_icrc(frame, len);

	if (mode == FZ_MODE_MISADDR) {
		uint32_t l3 = l3_off(frame, len), bth = l3 + 28, q = 0;
		uint8_t v = r.misaddr % 4;

		if (!l3 || bth + 8 > len)
			return;
		switch (v) {
		case FZ_MIS_QPN_RANDOM: q = r.qpn & BLUE_QPN_MASK; break;
		case FZ_MIS_QPN_GEN:	q = (t->qp->qpn + 0x1000) & BLUE_QPN_MASK; break;
		case FZ_MIS_OWN_QPN:	q = from->qp->qpn; break;
		default:
			/* a spoofed source: right QPN and PSN, not the connected peer */
			frame[l3 + 15] ^= (uint8_t)(r.qpn | 1);
			fix_ipcsum(frame, len);
			break;
		}
		if (v != FZ_MIS_SRC_IP) {
			frame[bth + 5] = (uint8_t)(q >> 16);
			frame[bth + 6] = (uint8_t)(q >> 8);
			frame[bth + 7] = (uint8_t)q;
		}
		blue_pkt_fix_icrc(frame, len);
	}
	parser_check(frame, len);
	inject(from, frame, len);
}

/* One raw record: bytes from the input, optionally readdressed for the live QPs. */
static void record_raw(struct fz_in *in)
{
	static uint8_t frame[FRAME_MAX];
	uint8_t rf = u8(in);
	uint32_t len = u16(in) % FRAME_MAX, l3, bth, q, psn, i;
	struct side *t = (rf & FZ_R_TO_A) ? &g_a : &g_b, *from = t == &g_a ? &g_b : &g_a;

	if (len > in->n)
		len = (uint32_t)in->n;
	for (i = 0; i < len; i++)
		frame[i] = u8(in);
	if (!len)
		return;
	parser_check(frame, len);
	l3 = l3_off(frame, len);
	bth = l3 + 28;
	if (l3 && bth + 12 <= len) {
		if (rf & FZ_R_ADDR) {
			memcpy(frame, t->mac, 6);
			memcpy(frame + 6, from->mac, 6);
			memcpy(frame + l3 + 12, &from->ip, 4);
			memcpy(frame + l3 + 16, &t->ip, 4);
			fix_ipcsum(frame, len);
			q = t->qp->qpn;
			frame[bth + 5] = (uint8_t)(q >> 16);
			frame[bth + 6] = (uint8_t)(q >> 8);
			frame[bth + 7] = (uint8_t)q;
		}
		if (rf & FZ_R_PSN) {
			psn = expected_psn(t, blue_opcode_flags(frame[bth]));
			frame[bth + 9] = (uint8_t)(psn >> 16);
			frame[bth + 10] = (uint8_t)(psn >> 8);
			frame[bth + 11] = (uint8_t)psn;
		}
		if (rf & FZ_R_FIX_ICRC)
			blue_pkt_fix_icrc(frame, len);
		if (rf & (FZ_R_ADDR | FZ_R_PSN | FZ_R_FIX_ICRC))
			parser_check(frame, len);
	}
	inject(from, frame, len);
}


/* ---- the world's lifetime --------------------------------------------------------------- */

#define QUIESCE_PASSES	64	/* bound on the passes that drain the frames in flight */

void fz_init(void)
{
	/* the engine logs every NAK and QP error it is made to produce: keep stderr quiet */
	g_trace = getenv("FUZZ_RX_TRACE") && getenv("FUZZ_RX_TRACE")[0] == '1';
	setenv("BLUE_LOG", g_trace ? "1" : "0", 0);
	patterns_init();
}

void fz_world_open(void)
{
	const struct blue_loopback_config lcfg = { .frame_count = 256, .frame_size = 2048,
						 .ring_size = 128 };
	struct blue_hal *ha, *hb;

	memset(&g_a, 0, sizeof(g_a));
	memset(&g_b, 0, sizeof(g_b));
	FZ_CHECK(!blue_hal_loopback_pair_cfg(&ha, &hb, &lcfg), "loopback pair");
	side_open(&g_a, "A", ha, 1);
	side_open(&g_b, "B", hb, 2);
	FZ_CHECK(!blue__set_neigh(g_a.ctx, g_b.ip, g_b.mac) &&
		 !blue__set_neigh(g_b.ctx, g_a.ip, g_a.mac), "neigh");
	qp_create(&g_a);
	qp_create(&g_b);
	g_a.fresh = *g_a.qp->live;
	g_b.fresh = *g_b.qp->live;
	blue_hal_loopback_set_filter(ha, filter, &g_a);
	blue_hal_loopback_set_filter(hb, filter, &g_b);
}

void fz_world_close(void)
{
	struct blue_hal *ha = g_a.hal, *hb = g_b.hal;

	/* what the input's last drain left behind (blue_poll_cq's own pass completed it) */
	drain_cqs(&g_a);
	drain_cqs(&g_b);
	blue_hal_loopback_set_filter(ha, NULL, NULL);
	blue_hal_loopback_set_filter(hb, NULL, NULL);
	side_close(&g_a);
	side_close(&g_b);
	blue_hal_destroy(ha);
	blue_hal_destroy(hb);
}

/* To RESET, which must leave the QP as it was created: the next input starts there. */
static bool qp_to_reset(struct side *s)
{
	struct blue_qp_attr a = { .qp_state = BLUE_QPS_RESET };
	const struct blue_qp *qp = s->qp;
	static const struct blue_comp comp0;
	static const struct blue_resp resp0;
	static const struct blue_req req0;

	if (blue_modify_qp(s->qp, &a, BLUE_QP_STATE))
		return false;
	FZ_CHECK(!memcmp(qp->live, &s->fresh, sizeof(s->fresh)), "%s: the live context after "
		 "RESET differs from a new QP's at byte %zu", s->name,
		 first_diff((const uint8_t *)qp->live, (const uint8_t *)&s->fresh,
			    sizeof(s->fresh)));
	FZ_CHECK(!memcmp(&qp->req, &req0, sizeof(req0)) &&
		 !memcmp(&qp->resp, &resp0, sizeof(resp0)) &&
		 !memcmp(&qp->comp, &comp0, sizeof(comp0)) &&
		 !blue_ring_count(&qp->sq.ring) && !blue_ring_count(&qp->rq.ring),
		 "%s: requester, responder, completer or a work queue not empty after RESET",
		 s->name);
	return true;
}

static bool pool_whole(const struct side *s)
{
	struct blue_hal_stats st;

	blue_hal_get_stats(s->hal, &st);
	FZ_CHECK(st.frame_errors == 0, "%s: %llu bad frame frees", s->name,
		 (unsigned long long)st.frame_errors);
	return st.frames_free == st.frames_total;
}

/* RESET completes nothing (IBA 10.3.1): the CQs stay empty while both QPs are in it. */
static void cqs_empty(const struct side *s)
{
	struct blue_wc wc;
	int n;

	n = blue_poll_cq(s->scq, 1, &wc);
	FZ_CHECK(n == 0, "%s: send CQ after RESET: %d (wr_id 0x%llx, %s, opcode %d)", s->name,
		 n, (unsigned long long)wc.wr_id, blue_wc_status_str(wc.status), wc.opcode);
	n = blue_poll_cq(s->rcq, 1, &wc);
	FZ_CHECK(n == 0, "%s: receive CQ after RESET: %d (wr_id 0x%llx)", s->name, n,
		 (unsigned long long)wc.wr_id);
}

/* The MRs and canaries as fz_world_open() wrote them; no WR posted. */
static void side_rewind(struct side *s)
{
	memcpy(s->arena + PG, g_canary + PG, (ARENA_PAGES - 2) * PG);
	memcpy(s->rw, g_rw, RW_LEN);
	memcpy(s->ro, g_ro, RO_LEN);
	s->nsends = s->nrecvs = 0;
	s->last_send_done = -1;
	s->drop_own = false;
}

bool fz_world_reset(void)
{
	unsigned int i;

	g_a.drop_own = g_b.drop_own = false;
	if (!qp_to_reset(&g_a) || !qp_to_reset(&g_b))
		return false;
	/* what the last pass of the input's own drain completed (blue_poll_cq runs a pass
	 * before it reads the CQ, so one of them can leave a completion behind) */
	drain_cqs(&g_a);
	drain_cqs(&g_b);
	/* what is still on the rings arrives at a QP in RESET and is dropped there */
	for (i = 0; i < QUIESCE_PASSES && !(pool_whole(&g_a) && pool_whole(&g_b)); i++)
		passes(1);
	FZ_CHECK(pool_whole(&g_a) && pool_whole(&g_b), "frames still out after %u passes "
		 "with both QPs in RESET: lost by the engine", QUIESCE_PASSES);
	cqs_empty(&g_a);
	cqs_empty(&g_b);
	side_rewind(&g_a);
	side_rewind(&g_b);
	return true;
}

/* ---- one input ------------------------------------------------------------------------------ */

/* The config bytes (fuzz_rx.h): connect both QPs from RESET, post the first WRs. */
static void input_config(struct fz_in *in)
{
	static const uint8_t mtus[4] = { BLUE_MTU_256, BLUE_MTU_512, BLUE_MTU_1024, BLUE_MTU_1024 };
	uint8_t c0 = u8(in), c1 = u8(in), c2 = u8(in), c3 = u8(in);
	uint32_t psn_a = 0x100, psn_b = 0x200, access_b;

	if (c0 & 0x80) {	/* across the 24-bit wrap */
		psn_a = 0xfffff0;
		psn_b = 0xfffffe;
	}
	access_b = BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE | BLUE_ACCESS_REMOTE_READ |
		   BLUE_ACCESS_REMOTE_ATOMIC;
	if (c3 & 1)
		access_b &= ~(uint32_t)BLUE_ACCESS_REMOTE_READ;
	if (c3 & 2)
		access_b &= ~(uint32_t)BLUE_ACCESS_REMOTE_WRITE;
	if (c3 & 4)
		access_b &= ~(uint32_t)BLUE_ACCESS_REMOTE_ATOMIC;
	qp_connect(&g_a, &g_b, mtus[c0 & 3], psn_a, psn_b, c2,
		   BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE | BLUE_ACCESS_REMOTE_READ |
		   BLUE_ACCESS_REMOTE_ATOMIC);
	qp_connect(&g_b, &g_a, mtus[c0 & 3], psn_b, psn_a, c2, access_b);
	if (c3 & 8) {
		/* selective retransmission on both QPs, as the CM sets it up when both
		 * sides offer it: the responder then holds requests past a hole */
		const struct blue_retx_attr sr = { .policy = BLUE_RETX_SELECTIVE };

		blue__qp_set_peer_caps(g_a.qp, BLUE_CM_CAP_SELECTIVE_RETX);
		blue__qp_set_peer_caps(g_b.qp, BLUE_CM_CAP_SELECTIVE_RETX);
		FZ_CHECK(!blue_qp_set_retx(g_a.qp, &sr) && !blue_qp_set_retx(g_b.qp, &sr),
			 "selective retransmission");
	}
	g_a.drop_own = c0 & 0x04;
	g_b.drop_own = c0 & 0x08;
	post_initial(c0, c1);
	passes(c3 >> 4);
}

/* The records (fuzz_rx.h enum fz_mode), with both engines run and checked after each. */
static void input_records(struct fz_in *in)
{
	unsigned int r;

	for (r = 0; r < FZ_MAX_RECORDS && in->n; r++) {
		uint8_t sel = u8(in);
		unsigned int mode = sel >> 5;

		switch (mode) {
		case FZ_MODE_RAW:
			record_raw(in);
			break;
		case FZ_MODE_PASSES: {
			uint8_t k = u8(in), what = u8(in);

			passes(k & 15);
			post_legit(&g_a, &g_b, what % FZ_POST__MAX);
			break;
		}
		default:
			record_template(in, sel, mode);
			break;
		}
		passes(1);
		live_check(&g_a);
		live_check(&g_b);
	}
}

void fz_input_run(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };

	input_config(&in);
	input_records(&in);
	passes(PASSES_END);
	drain_cqs(&g_a);
	drain_cqs(&g_b);
	if (g_trace) {
		trace_side(&g_a);
		trace_side(&g_b);
	}
	live_check(&g_a);
	live_check(&g_b);
	arena_check(&g_a);
	arena_check(&g_b);
}
