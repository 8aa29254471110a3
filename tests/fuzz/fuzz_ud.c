// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for the UD receive path (runtime/resp_ud.c behind progress.c's
 * rx_ud): one world, two contexts over a loopback pair, a UD QP on B in RTS. Each input
 * posts 0..3 receive WQEs on B (one or two SGEs, sizes from the input, inside an arena
 * fenced by canary bytes) and injects frames at B's QP built from its bytes: UD or RC
 * opcodes, the right or a wrong Q_Key and QPN, any payload up to past the MTU, and
 * sometimes raw header bytes with the ICRC fixed up, so that the frames get past the
 * parser and into the UD steps.
 *
 * What must hold (a failure aborts):
 *  - no crash, and nothing ASan/UBSan object to;
 *  - nothing outside the posted buffers is written (canaries);
 *  - every completion names a posted WR, once; a successful one has byte_len = GRH + the
 *    payload of a frame that was sent, within its buffers, src_qp the frame's DETH, and
 *    wc_flags GRH (+ WITH_IMM for opcode 0x65);
 *  - the QP is back in RTS with an empty queue after each input (reset between inputs).
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
			fprintf(stderr, "fuzz_ud: %s:%d: %s\n", __FILE__, __LINE__, #c); \
			abort();					\
		}							\
	} while (0)

#define QKEY		0x1234abcdu
#define ARENA		(16 * 1024)
#define CANARY		0xc5
#define NRECV		3

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
static uint8_t *g_arena;
static struct blue_mr *g_mr;

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

static void side_open(struct side *s, struct blue_hal *hal, uint8_t last)
{
	const uint8_t mac[6] = { 0x02, 0xb1, 0x0f, 0, 0, last };
	struct blue_qp_init_attr ia = { .cap = { .max_send_wr = 4, .max_recv_wr = 4,
						 .max_send_sge = 1, .max_recv_sge = 2 },
					.qp_type = BLUE_QPT_UD };

	s->hal = hal;
	memcpy(s->mac, mac, 6);
	s->ip = htonl(0x0ac90f00u | last);
	s->ctx = blue_open_device_hal(hal, s->mac, s->ip);
	CHECK(s->ctx);
	s->pd = blue_alloc_pd(s->ctx);
	s->cq = blue_create_cq(s->ctx, 64, NULL, NULL, 0);
	CHECK(s->pd && s->cq);
	ia.send_cq = ia.recv_cq = s->cq;
	s->qp = blue_create_qp(s->pd, &ia);
	CHECK(s->qp);
}

static void qp_up(struct blue_qp *qp)
{
	struct blue_qp_attr a = { .qp_state = BLUE_QPS_INIT, .port_num = 1, .qkey = QKEY };

	CHECK(!blue_modify_qp(qp, &a, BLUE_QP_STATE | BLUE_QP_PKEY_INDEX | BLUE_QP_PORT |
			      BLUE_QP_QKEY));
	a.qp_state = BLUE_QPS_RTR;
	CHECK(!blue_modify_qp(qp, &a, BLUE_QP_STATE));
	a.qp_state = BLUE_QPS_RTS;
	a.sq_psn = 1;
	CHECK(!blue_modify_qp(qp, &a, BLUE_QP_STATE | BLUE_QP_SQ_PSN));
}

static void world_open(void)
{
	struct blue_hal *ha, *hb;

	setenv("BLUE_LOG", "0", 1);
	CHECK(!blue_hal_loopback_pair(&ha, &hb));
	side_open(&g_a, ha, 1);
	side_open(&g_b, hb, 2);
	qp_up(g_b.qp);
	g_arena = malloc(ARENA);
	CHECK(g_arena);
	g_mr = blue_reg_mr(g_b.pd, g_arena, ARENA, BLUE_ACCESS_LOCAL_WRITE);
	CHECK(g_mr);
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
	bool done;
};

/* A frame at B's QP from the input's bytes. Return: the payload length, or -1 if none. */
static int one_frame(struct in *in, uint32_t *sqpn, uint8_t *opcode)
{
	static const uint8_t ops[] = { BLUE_OP_UD_SEND_ONLY, BLUE_OP_UD_SEND_ONLY_IMM,
				       BLUE_OP_RC_SEND_ONLY, BLUE_OP_CNP };
	uint8_t frame[2048], payload[1500];
	uint8_t sel = take(in);
	struct blue_pkt p;
	uint32_t plen;
	int len;

	blue_pkt_init(&p, ops[sel & 3]);
	if (p.opcode == BLUE_OP_CNP)
		p.becn = 1;
	memcpy(p.dst_mac, g_b.mac, 6);
	memcpy(p.src_mac, g_a.mac, 6);
	p.saddr = (sel & 0x40) ? htonl(0x0a0a0a0a) : g_a.ip;	/* UD takes any source */
	p.daddr = g_b.ip;
	p.sport = 0xc000;
	p.dqpn = (sel & 0x10) ? (take16(in) & BLUE_QPN_MASK) : blue_qp_num(g_b.qp);
	p.psn = take16(in);
	p.se = (sel >> 5) & 1;
	p.deth.qkey = (sel & 0x08) ? QKEY ^ take(in) : QKEY;
	p.deth.sqpn = take16(in) & BLUE_QPN_MASK;
	p.imm = take16(in);
	plen = take16(in) % 1200;
	if (!(blue_opcode_flags(p.opcode) & BLUE_OPF_PAYLOAD))
		plen = 0;
	for (uint32_t i = 0; i < plen; i++)
		payload[i] = (uint8_t)(i * 7 + sel);
	p.payload = payload;
	p.payload_len = plen;
	len = blue_pkt_build(&p, frame, sizeof(frame));
	if (len < 0)
		return -1;
	if (sel & 0x80) {	/* damage a header byte past the IP header, then fix the ICRC */
		uint32_t at = 14 + 20 + (take(in) % 40);

		if (at < (uint32_t)len)
			frame[at] ^= (uint8_t)(take(in) | 1);
		(void)blue_pkt_fix_icrc(frame, (size_t)len);
	}
	inject(frame, (uint32_t)len);
	/* what the frame says now, damaged or not: what a completion must match */
	if (blue_pkt_parse(frame, (size_t)len, &p))
		return -1;
	*sqpn = p.deth.sqpn;
	*opcode = p.opcode;
	return (int)p.payload_len;
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
	uint32_t sqpn[4] = { 0 }, off = 64;
	uint8_t opc[4] = { 0 };
	int plen[4], nrecv, nframes, i, k;
	struct blue_wc wc[8];

	if (!g_a.ctx)
		world_open();
	memset(g_arena, CANARY, ARENA);
	nrecv = take(&in) % (NRECV + 1);
	memset(w, 0, sizeof(w));
	for (i = 0; i < nrecv; i++) {
		struct blue_sge sge[2];
		struct blue_recv_wr wr = { .wr_id = 100 + (uint64_t)i, .sg_list = sge }, *bad;

		w[i].wr_id = wr.wr_id;
		w[i].nsge = 1 + (take(&in) & 1);
		for (k = 0; k < w[i].nsge; k++) {
			w[i].len[k] = take16(&in) % 1400;
			w[i].off[k] = off;
			off += w[i].len[k] + 64;	/* canary bytes between buffers */
			sge[k] = (struct blue_sge){ .addr = (uintptr_t)(g_arena + w[i].off[k]),
						    .length = w[i].len[k], .lkey = g_mr->lkey };
		}
		wr.num_sge = w[i].nsge;
		CHECK(!blue_post_recv(g_b.qp, &wr, &bad));
	}
	nframes = 1 + take(&in) % 4;
	for (i = 0; i < nframes; i++)
		plen[i] = one_frame(&in, &sqpn[i], &opc[i]);
	for (int pass = 0; pass < 4; pass++)
		blue__progress(g_b.ctx);
	/* what completed: posted WRs, in order, once; byte_len a sent frame's + the GRH */
	int got = blue_poll_cq(g_b.cq, 8, wc);

	CHECK(got >= 0 && got <= nrecv);
	for (i = 0; i < got; i++) {
		CHECK(wc[i].wr_id == w[i].wr_id && !w[i].done);
		w[i].done = true;
		if (wc[i].status != BLUE_WC_SUCCESS)
			continue;
		CHECK(wc[i].byte_len <= w[i].len[0] + w[i].len[1]);
		CHECK(wc[i].wc_flags & BLUE_WC_GRH);
		bool match = false;

		for (k = 0; k < nframes; k++)
			if (plen[k] >= 0 && wc[i].byte_len == BLUE_GRH_LEN + (uint32_t)plen[k] &&
			    wc[i].src_qp == sqpn[k] &&
			    !!(wc[i].wc_flags & BLUE_WC_WITH_IMM) ==
			    (opc[k] == BLUE_OP_UD_SEND_ONLY_IMM))
				match = true;
		CHECK(match);
	}
	check_canaries(w, nrecv);
	reset_qp();
	CHECK(g_b.qp->live->state == BLUE_QPS_RTS);
	return 0;
}
