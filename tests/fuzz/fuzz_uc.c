// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for the UC receive path (runtime/resp_uc.c behind progress.c): two
 * contexts over a loopback pair, a UC QP on B in RTS whose peer is A. Each input posts
 * 0..3 receive WQEs on B (one or two SGEs, inside an arena fenced by canary bytes) and
 * injects 1..8 frames at B's QP from A's address, built from its bytes: any UC opcode
 * (or an RC one), PSNs in order or jumping, payloads of exactly one MTU or anything up
 * to past it, RETHs inside, across or outside B's writable region, a good or a bad
 * R_Key.
 *
 * What must hold (a failure aborts):
 *  - no crash, and nothing ASan/UBSan object to;
 *  - nothing outside the posted receive buffers and the writable region is written
 *    (canaries);
 *  - every completion names a posted WR, in order, once, successfully (UC drops what it
 *    cannot take; nothing here is a local error), with byte_len within its buffers;
 *  - B never sends a frame: UC answers nothing;
 *  - the QP is still in RTS after each input (it is reset between inputs).
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/codec.h"
#include "runtime/device.h"
#include "runtime/progress.h"
#include "runtime/qp.h"

#define CHECK(c)							\
	do {								\
		if (!(c)) {						\
			fprintf(stderr, "fuzz_uc: %s:%d: %s\n", __FILE__, __LINE__, #c); \
			abort();					\
		}							\
	} while (0)

#define ARENA		(16 * 1024)	/* receive buffers, canaries between them */
#define WAREA		(16 * 1024)	/* WRITE target: the MR covers [WLO, WHI) */
#define WLO		4096u
#define WHI		(WLO + 8192u)
#define CANARY		0xc5
#define NRECV		3
#define MTU		1024u
#define PSN0		0x500u

struct side {
	struct blue_hal *hal;
	struct blue_context *ctx;
	struct blue_pd *pd;
	struct blue_cq *cq;
	struct blue_qp *qp;
	uint8_t mac[6];
	uint32_t ip;
};

static struct side g_a, g_b;
static uint8_t *g_arena, *g_warea;
static struct blue_mr *g_mr, *g_wmr;
static uint64_t g_b_frames;	/* every frame B ever sent */

struct in {
	const uint8_t *p;
	size_t n;
};

static uint8_t take(struct in *in)
{
	uint8_t v = 0;

	if (in->n) {
		v = *in->p++;
		in->n--;
	}
	return v;
}

static uint16_t take16(struct in *in)
{
	return (uint16_t)(take(in) | take(in) << 8);
}

static enum blue_lb_verdict count_b(void *arg, const struct blue_frame *f, uint64_t seq)
{
	(void)arg;
	(void)f;
	(void)seq;
	g_b_frames++;
	return BLUE_LB_PASS;
}

static void side_open(struct side *s, struct blue_hal *hal, uint8_t last)
{
	const uint8_t mac[6] = { 0x02, 0xb1, 0x0c, 0, 0, last };

	s->hal = hal;
	memcpy(s->mac, mac, 6);
	s->ip = htonl(0x0ac90c00u | last);
	s->ctx = blue_open_device_hal(hal, s->mac, s->ip);
	CHECK(s->ctx);
	s->pd = blue_alloc_pd(s->ctx);
	s->cq = blue_create_cq(s->ctx, 64, NULL, NULL, 0);
	CHECK(s->pd && s->cq);
}

/* B's UC QP to RTS against A (any QPN above 1 names A's end: A has no QP). */
static void qp_up(struct blue_qp *qp)
{
	struct blue_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = BLUE_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE;
	CHECK(!blue_modify_qp(qp, &a, BLUE_QP_STATE | BLUE_QP_PKEY_INDEX | BLUE_QP_PORT |
			      BLUE_QP_ACCESS_FLAGS));
	memset(&a, 0, sizeof(a));
	a.qp_state = BLUE_QPS_RTR;
	a.path_mtu = BLUE_MTU_1024;
	a.dest_qp_num = 0x1234;
	a.rq_psn = PSN0;
	a.ah_attr.sgid_index = 1;
	a.ah_attr.port_num = 1;
	CHECK(!blue_query_gid(g_a.ctx, 1, 1, &a.ah_attr.dgid));
	CHECK(!blue_modify_qp(qp, &a, BLUE_QP_STATE | BLUE_QP_AV | BLUE_QP_PATH_MTU |
			      BLUE_QP_DEST_QPN | BLUE_QP_RQ_PSN));
	memset(&a, 0, sizeof(a));
	a.qp_state = BLUE_QPS_RTS;
	a.sq_psn = 1;
	CHECK(!blue_modify_qp(qp, &a, BLUE_QP_STATE | BLUE_QP_SQ_PSN));
}

static void world_open(void)
{
	struct blue_qp_init_attr ia = { .cap = { .max_send_wr = 4, .max_recv_wr = 4,
						 .max_send_sge = 1, .max_recv_sge = 2 },
					.qp_type = BLUE_QPT_UC };
	struct blue_hal *ha, *hb;

	setenv("BLUE_LOG", "0", 1);
	CHECK(!blue_hal_loopback_pair(&ha, &hb));
	side_open(&g_a, ha, 1);
	side_open(&g_b, hb, 2);
	CHECK(!blue__set_neigh(g_b.ctx, g_a.ip, g_a.mac));
	ia.send_cq = ia.recv_cq = g_b.cq;
	g_b.qp = blue_create_qp(g_b.pd, &ia);
	CHECK(g_b.qp);
	qp_up(g_b.qp);
	g_arena = malloc(ARENA);
	g_warea = malloc(WAREA);
	CHECK(g_arena && g_warea);
	g_mr = blue_reg_mr(g_b.pd, g_arena, ARENA, BLUE_ACCESS_LOCAL_WRITE);
	g_wmr = blue_reg_mr(g_b.pd, g_warea + WLO, WHI - WLO,
			    BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE);
	CHECK(g_mr && g_wmr);
	blue_hal_loopback_set_filter(g_b.hal, count_b, NULL);
}

/* Hand @len bytes to A's socket: the loopback delivers them to B. */
static void inject(const uint8_t *buf, uint32_t len)
{
	struct blue_frame f;

	if (!len || len > g_a.hal->frame_size - g_a.hal->headroom)
		return;
	if (blue_hal_tx_alloc(g_a.hal, &f, 1) != 1)
		return;
	memcpy(f.data, buf, len);
	f.len = len;
	if (blue_hal_tx_submit(g_a.ctx->sock, &f, 1) != 1)
		blue_hal_tx_free(g_a.hal, &f, 1);
	blue_hal_tx_flush(g_a.ctx->sock);
}

struct posted {
	uint64_t wr_id;
	uint32_t off[2], len[2];
	int nsge;
};

/* One frame at B's QP from the input's bytes; *@psn is the running PSN. */
static void one_frame(struct in *in, uint32_t *psn)
{
	static const uint8_t ops[] = {
		BLUE_OP_UC_SEND_FIRST, BLUE_OP_UC_SEND_MIDDLE, BLUE_OP_UC_SEND_LAST,
		BLUE_OP_UC_SEND_LAST_IMM, BLUE_OP_UC_SEND_ONLY, BLUE_OP_UC_SEND_ONLY_IMM,
		BLUE_OP_UC_WRITE_FIRST, BLUE_OP_UC_WRITE_MIDDLE, BLUE_OP_UC_WRITE_LAST,
		BLUE_OP_UC_WRITE_LAST_IMM, BLUE_OP_UC_WRITE_ONLY, BLUE_OP_UC_WRITE_ONLY_IMM,
		BLUE_OP_RC_SEND_ONLY, BLUE_OP_RC_WRITE_ONLY, BLUE_OP_UC_SEND_MIDDLE,
		BLUE_OP_UC_WRITE_MIDDLE,
	};
	uint8_t frame[2048], payload[1200];
	uint8_t sel = take(in), how = take(in);
	struct blue_pkt p;
	uint32_t plen;
	int len;

	blue_pkt_init(&p, ops[sel & 15]);
	memcpy(p.dst_mac, g_b.mac, 6);
	memcpy(p.src_mac, g_a.mac, 6);
	p.saddr = g_a.ip;
	p.daddr = g_b.ip;
	p.sport = 0xc000;
	p.dqpn = blue_qp_num(g_b.qp);
	if (how & 0x80)		/* a jump (a gap or a step back) */
		*psn = blue_psn_add(*psn, (uint32_t)(take(in) & 7) + BLUE_PSN_MASK - 3);
	p.psn = *psn;
	*psn = blue_psn_add(*psn, 1);
	p.se = (sel >> 4) & 1;
	p.imm = take16(in);
	plen = (how & 0x40) ? MTU : take16(in) % 1100;
	if (blue_opcode_flags(p.opcode) & BLUE_OPF_RETH) {
		p.reth.va = (uintptr_t)g_warea + take16(in) % (WAREA - 1024);
		p.reth.len = (how & 0x20) ? plen + (uint32_t)(take(in) & 3) * MTU : take16(in);
		p.reth.rkey = (how & 0x10) ? g_wmr->rkey ^ take(in) : g_wmr->rkey;
	}
	for (uint32_t i = 0; i < plen; i++)
		payload[i] = (uint8_t)(i * 7 + sel);
	p.payload = payload;
	p.payload_len = plen;
	len = blue_pkt_build(&p, frame, sizeof(frame));
	if (len > 0)
		inject(frame, (uint32_t)len);
}

static void check_canaries(const struct posted *w, int n)
{
	for (uint32_t b = 0; b < ARENA; b++) {
		bool in_buf = false;

		for (int i = 0; i < n && !in_buf; i++)
			for (int k = 0; k < w[i].nsge; k++)
				if (b >= w[i].off[k] && b < w[i].off[k] + w[i].len[k])
					in_buf = true;
		if (!in_buf)
			CHECK(g_arena[b] == CANARY);
	}
	for (uint32_t b = 0; b < WAREA; b++)
		if (b < WLO || b >= WHI)
			CHECK(g_warea[b] == CANARY);
}

static void reset_qp(void)
{
	struct blue_qp_attr a = { .qp_state = BLUE_QPS_ERR };
	struct blue_wc wc[8];

	CHECK(!blue_modify_qp(g_b.qp, &a, BLUE_QP_STATE));
	for (int i = 0; i < 8; i++) {	/* the flush of what is left */
		blue__progress(g_b.ctx);
		while (blue_poll_cq(g_b.cq, 8, wc) > 0)
			;
	}
	a.qp_state = BLUE_QPS_RESET;
	CHECK(!blue_modify_qp(g_b.qp, &a, BLUE_QP_STATE));
	qp_up(g_b.qp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	struct posted w[NRECV];
	uint32_t off = 64, psn = PSN0;
	int nrecv, nframes, i, k;
	struct blue_wc wc[8];

	if (!g_a.ctx)
		world_open();
	memset(g_arena, CANARY, ARENA);
	memset(g_warea, CANARY, WAREA);
	nrecv = take(&in) % (NRECV + 1);
	memset(w, 0, sizeof(w));
	for (i = 0; i < nrecv; i++) {
		struct blue_sge sge[2];
		struct blue_recv_wr wr = { .wr_id = 100 + (uint64_t)i, .sg_list = sge }, *bad;

		w[i].wr_id = wr.wr_id;
		w[i].nsge = 1 + (take(&in) & 1);
		for (k = 0; k < w[i].nsge; k++) {
			w[i].len[k] = take16(&in) % 2600;
			w[i].off[k] = off;
			off += w[i].len[k] + 64;	/* canary bytes between buffers */
			sge[k] = (struct blue_sge){ .addr = (uintptr_t)(g_arena + w[i].off[k]),
						    .length = w[i].len[k], .lkey = g_mr->lkey };
		}
		wr.num_sge = w[i].nsge;
		CHECK(!blue_post_recv(g_b.qp, &wr, &bad));
	}
	nframes = 1 + take(&in) % 8;
	for (i = 0; i < nframes; i++)
		one_frame(&in, &psn);
	for (int pass = 0; pass < 4; pass++)
		blue__progress(g_b.ctx);
	/* what completed: posted WRs, in order, once, successfully, within their buffers */
	int got = blue_poll_cq(g_b.cq, 8, wc);

	CHECK(got >= 0 && got <= nrecv);
	for (i = 0; i < got; i++) {
		CHECK(wc[i].wr_id == w[i].wr_id);
		CHECK(wc[i].status == BLUE_WC_SUCCESS);
		if (wc[i].opcode == BLUE_WC_RECV)
			CHECK(wc[i].byte_len <= w[i].len[0] + w[i].len[1]);
		else
			CHECK(wc[i].opcode == BLUE_WC_RECV_RDMA_WITH_IMM);
	}
	check_canaries(w, nrecv);
	CHECK(g_b_frames == 0);
	CHECK(g_b.qp->live->state == BLUE_QPS_RTS);
	reset_qp();
	return 0;
}
