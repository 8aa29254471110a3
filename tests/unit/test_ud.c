// SPDX-License-Identifier: MIT
/*
 * UD queue pairs and address handles between two contexts over the loopback HAL: SEND
 * and SEND with immediate both ways with the bytes and the 40-byte GRH compared against
 * the frame that carried them; the Q_Key rules (a mismatch is dropped and counted, the
 * controlled Q_Key takes the QP's own); no receive WQE (dropped and counted, no RNR);
 * longer than the MTU on both sides; an AH made from the received GRH answers back; the
 * UD state table; wrong-transport drops in both directions.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/ah.h"
#include "runtime/codec.h"
#include "runtime/device.h"
#include "runtime/progress.h"
#include "runtime/qp.h"
#include "tests/unit/rc_fixture.h"

#define QKEY	0x11111111u
#define BUFLEN	(BLUE_GRH_LEN + 2048)

/* The last UD frame a side sent, as it went on the wire. */
struct capture {
	uint8_t frame[4096];
	uint32_t len;
	int n;
};

static enum blue_lb_verdict capture_fn(void *arg, const struct blue_frame *f, uint64_t seq)
{
	struct capture *c = arg;
	struct blue_pkt p;

	(void)seq;
	if (blue_pkt_parse(f->data, f->len, &p) == 0 &&
	    (p.opcode == BLUE_OP_UD_SEND_ONLY || p.opcode == BLUE_OP_UD_SEND_ONLY_IMM) &&
	    f->len <= sizeof(c->frame)) {
		memcpy(c->frame, f->data, f->len);
		c->len = f->len;
		c->n++;
	}
	return BLUE_LB_PASS;
}

struct ud_side {
	uint8_t *buf;		/* a send area, then receive areas */
	struct blue_mr *mr;
	struct blue_ah *ah;	/* to the other side */
};

struct ud_fx {
	struct rc_fx rc;
	struct ud_side a, b;
	struct capture cap_a, cap_b;
};

static struct blue_qp *ud_qp_create(struct rc_side *s)
{
	struct blue_qp_init_attr ia = {
		.send_cq = s->scq,
		.recv_cq = s->rcq,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32, .max_send_sge = 2,
			 .max_recv_sge = 2, .max_inline_data = 64 },
		.qp_type = BLUE_QPT_UD,
	};

	s->qp = blue_create_qp(s->pd, &ia);
	cr_assert_not_null(s->qp, "create_qp UD: %s", strerror(errno));
	return s->qp;
}

static void ud_qp_up(struct blue_qp *qp, uint32_t qkey, uint32_t sq_psn)
{
	struct blue_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = BLUE_QPS_INIT;
	a.port_num = 1;
	a.qkey = qkey;
	cr_assert_eq(blue_modify_qp(qp, &a, BLUE_QP_STATE | BLUE_QP_PKEY_INDEX | BLUE_QP_PORT |
				    BLUE_QP_QKEY), 0, "UD to INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = BLUE_QPS_RTR;
	cr_assert_eq(blue_modify_qp(qp, &a, BLUE_QP_STATE), 0, "UD to RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = BLUE_QPS_RTS;
	a.sq_psn = sq_psn;
	cr_assert_eq(blue_modify_qp(qp, &a, BLUE_QP_STATE | BLUE_QP_SQ_PSN), 0, "UD to RTS");
}

static struct blue_ah *ah_to(struct rc_side *from, struct rc_side *to)
{
	struct blue_ah_attr at = { .sgid_index = 1, .port_num = 1 };
	struct blue_ah *ah;

	cr_assert_eq(blue_query_gid(to->ctx, 1, 1, &at.dgid), 0);
	ah = blue_create_ah(from->pd, &at);
	cr_assert_not_null(ah, "create_ah: %s", strerror(errno));
	return ah;
}

static void side_init(struct rc_side *s, struct ud_side *u)
{
	u->buf = calloc(1, 8 * BUFLEN);
	cr_assert_not_null(u->buf);
	u->mr = blue_reg_mr(s->pd, u->buf, 8 * BUFLEN, BLUE_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(u->mr);
}

/* Two UD QPs in RTS with Q_Keys @qa and @qb, each with an AH to the other. */
static void ud_fx_init(struct ud_fx *fx, uint32_t qa, uint32_t qb)
{
	memset(fx, 0, sizeof(*fx));
	rc_fx_init_noqp(&fx->rc, NULL);
	ud_qp_create(&fx->rc.a);
	ud_qp_create(&fx->rc.b);
	ud_qp_up(fx->rc.a.qp, qa, 0x10);
	ud_qp_up(fx->rc.b.qp, qb, 0xfffffe);	/* wraps after two sends */
	side_init(&fx->rc.a, &fx->a);
	side_init(&fx->rc.b, &fx->b);
	fx->a.ah = ah_to(&fx->rc.a, &fx->rc.b);
	fx->b.ah = ah_to(&fx->rc.b, &fx->rc.a);
	blue_hal_loopback_set_filter(fx->rc.a.hal, capture_fn, &fx->cap_a);
	blue_hal_loopback_set_filter(fx->rc.b.hal, capture_fn, &fx->cap_b);
}

static void ud_fx_fini(struct ud_fx *fx)
{
	cr_assert_eq(blue_destroy_ah(fx->a.ah), 0);
	cr_assert_eq(blue_destroy_ah(fx->b.ah), 0);
	cr_assert_eq(blue_dereg_mr(fx->a.mr), 0);
	cr_assert_eq(blue_dereg_mr(fx->b.mr), 0);
	free(fx->a.buf);
	free(fx->b.buf);
	rc_fx_fini(&fx->rc);
}

/* Receive area @i of a side (area 0 is the send buffer). */
static uint8_t *area(struct ud_side *u, int i)
{
	return u->buf + (size_t)i * BUFLEN;
}

static void ud_post_recv(struct rc_side *s, struct ud_side *u, int i, uint32_t len)
{
	rc_post_recv(s, (uint64_t)(100 + i), area(u, i), len, u->mr->lkey);
}

/* A UD SEND of @len bytes of area 0 (filled with @seed) from @s via @ah. */
static void ud_send(struct rc_side *s, struct ud_side *u, struct blue_ah *ah, uint32_t dqpn,
		    uint32_t qkey, uint32_t len, unsigned int seed, bool imm, uint64_t wr_id)
{
	struct blue_sge sge = { .addr = (uintptr_t)area(u, 0), .length = len,
				.lkey = u->mr->lkey };
	struct blue_send_wr wr;

	rc_fill(area(u, 0), len, seed);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = imm ? BLUE_WR_SEND_WITH_IMM : BLUE_WR_SEND;
	wr.imm_data = htonl(0xa1b2c3d4);
	wr.send_flags = BLUE_SEND_SIGNALED;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = dqpn;
	wr.wr.ud.remote_qkey = qkey;
	rc_post_send(s, &wr);
}

/* The send completion of @wr_id: success, a SEND. */
static void expect_sent(struct ud_fx *fx, struct rc_side *s, uint64_t wr_id)
{
	struct blue_wc wc = rc_wait1(&fx->rc, s->scq, RC_WAIT_MS);

	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "send status %s", blue_wc_status_str(wc.status));
	cr_assert_eq(wc.wr_id, wr_id);
	cr_assert_eq(wc.opcode, BLUE_WC_SEND);
}

/* The frame's IPv4 header is what the GRH's last 20 bytes hold; the first 20 are zero. */
static void expect_grh(const uint8_t *buf, const struct capture *cap)
{
	static const uint8_t zero[20];
	struct blue_pkt p;

	cr_assert_gt(cap->n, 0, "no UD frame captured");
	cr_assert_eq(blue_pkt_parse(cap->frame, cap->len, &p), 0);
	cr_assert_eq(memcmp(buf, zero, 20), 0, "GRH bytes 0..19 are not zero");
	cr_assert_eq(memcmp(buf + 20, cap->frame + p.l3_off, 20), 0,
		     "GRH bytes 20..39 are not the frame's IPv4 header");
}

static void one_way(struct ud_fx *fx, struct rc_side *s, struct ud_side *su, struct rc_side *d,
		    struct ud_side *du, struct capture *cap, uint32_t len, bool imm,
		    unsigned int seed)
{
	struct blue_wc wc;

	ud_post_recv(d, du, 1, BUFLEN);
	ud_send(s, su, su->ah, blue_qp_num(d->qp), QKEY, len, seed, imm, 7);
	expect_sent(fx, s, 7);
	wc = rc_wait1(&fx->rc, d->rcq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "recv status %s", blue_wc_status_str(wc.status));
	cr_assert_eq(wc.wr_id, 101);
	cr_assert_eq(wc.opcode, BLUE_WC_RECV);
	cr_assert_eq(wc.byte_len, BLUE_GRH_LEN + len, "byte_len %u counts the GRH", wc.byte_len);
	cr_assert_eq(wc.src_qp, blue_qp_num(s->qp));
	cr_assert_eq(wc.qp_num, blue_qp_num(d->qp));
	cr_assert_eq(wc.wc_flags, BLUE_WC_GRH | (imm ? BLUE_WC_WITH_IMM : 0));
	if (imm)
		cr_assert_eq(wc.imm_data, htonl(0xa1b2c3d4));
	cr_assert_eq(wc.sl, 0, "rxe leaves sl 0");
	cr_assert_eq(wc.pkey_index, 0);
	cr_assert(rc_check(area(du, 1) + BLUE_GRH_LEN, len, seed), "payload differs");
	expect_grh(area(du, 1), cap);
}

Test(ud, send_recv_both_ways)
{
	struct ud_fx fx;

	ud_fx_init(&fx, QKEY, QKEY);
	one_way(&fx, &fx.rc.a, &fx.a, &fx.rc.b, &fx.b, &fx.cap_a, 200, false, 1);
	one_way(&fx, &fx.rc.b, &fx.b, &fx.rc.a, &fx.a, &fx.cap_b, 1024, false, 2);
	one_way(&fx, &fx.rc.b, &fx.b, &fx.rc.a, &fx.a, &fx.cap_b, 0, false, 3);
	/* B started at PSN 0xfffffe: its two sends took 0xfffffe and 0xffffff (24 bits) */
	cr_assert_eq(fx.rc.b.qp->live->sq_psn, 0);
	ud_fx_fini(&fx);
}

Test(ud, send_with_imm)
{
	struct ud_fx fx;

	ud_fx_init(&fx, QKEY, QKEY);
	one_way(&fx, &fx.rc.a, &fx.a, &fx.rc.b, &fx.b, &fx.cap_a, 64, true, 4);
	ud_fx_fini(&fx);
}

Test(ud, qkey_mismatch_dropped_counted)
{
	struct ud_fx fx;
	struct blue_wc wc;

	ud_fx_init(&fx, QKEY, QKEY);
	ud_post_recv(&fx.rc.b, &fx.b, 1, BUFLEN);
	ud_send(&fx.rc.a, &fx.a, fx.a.ah, blue_qp_num(fx.rc.b.qp), 0x2222, 100, 5, false, 7);
	expect_sent(&fx, &fx.rc.a, 7);	/* nothing acknowledges a datagram */
	rc_quiet(&fx.rc, fx.rc.b.rcq, 50);
	cr_assert_eq(blue__engine_stats(fx.rc.b.ctx)->rx_bad_qkey, 1);
	cr_assert_eq(fx.rc.b.qp->live->ud_bad_qkey, 1);
	blue__obs_publish(fx.rc.b.ctx);	/* what bluectl stats reads */
	cr_assert_eq(fx.rc.b.ctx->obs.ds->eng.rx_bad_qkey, 1);
	/* the WQE was not used: the right key lands in it */
	ud_send(&fx.rc.a, &fx.a, fx.a.ah, blue_qp_num(fx.rc.b.qp), QKEY, 100, 6, false, 8);
	expect_sent(&fx, &fx.rc.a, 8);
	wc = rc_wait1(&fx.rc, fx.rc.b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	cr_assert(rc_check(area(&fx.b, 1) + BLUE_GRH_LEN, 100, 6));
	ud_fx_fini(&fx);
}

Test(ud, controlled_qkey_uses_the_qps_own)
{
	struct ud_fx fx;
	struct blue_wc wc;
	struct blue_pkt p;

	ud_fx_init(&fx, QKEY, QKEY);
	ud_post_recv(&fx.rc.b, &fx.b, 1, BUFLEN);
	/* high bit set: IBA 10.2.5 sends the QP's Q_Key instead */
	ud_send(&fx.rc.a, &fx.a, fx.a.ah, blue_qp_num(fx.rc.b.qp), 0x80000000u, 32, 9, false, 7);
	expect_sent(&fx, &fx.rc.a, 7);
	wc = rc_wait1(&fx.rc, fx.rc.b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	cr_assert_eq(blue_pkt_parse(fx.cap_a.frame, fx.cap_a.len, &p), 0);
	cr_assert_eq(p.deth.qkey, QKEY, "DETH Q_Key 0x%x", p.deth.qkey);
	cr_assert_eq(p.deth.sqpn, blue_qp_num(fx.rc.a.qp));
	ud_fx_fini(&fx);
}

Test(ud, no_wqe_dropped_counted_no_rnr)
{
	struct ud_fx fx;
	struct blue_wc wc;

	ud_fx_init(&fx, QKEY, QKEY);
	ud_send(&fx.rc.a, &fx.a, fx.a.ah, blue_qp_num(fx.rc.b.qp), QKEY, 100, 5, false, 7);
	expect_sent(&fx, &fx.rc.a, 7);
	rc_progress(&fx.rc);
	rc_progress(&fx.rc);
	cr_assert_eq(blue__engine_stats(fx.rc.b.ctx)->rx_ud_no_wqe, 1);
	cr_assert_eq(fx.rc.b.qp->live->ud_no_wqe, 1);
	blue__obs_publish(fx.rc.b.ctx);
	cr_assert_eq(fx.rc.b.ctx->obs.ds->eng.rx_ud_no_wqe, 1);
	cr_assert_eq(fx.rc.b.qp->live->naks_sent, 0, "UD answers nothing");
	/* posted later, the WQE does not get the dropped message */
	ud_post_recv(&fx.rc.b, &fx.b, 1, BUFLEN);
	rc_quiet(&fx.rc, fx.rc.b.rcq, 50);
	ud_send(&fx.rc.a, &fx.a, fx.a.ah, blue_qp_num(fx.rc.b.qp), QKEY, 100, 6, false, 8);
	expect_sent(&fx, &fx.rc.a, 8);
	wc = rc_wait1(&fx.rc, fx.rc.b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	cr_assert(rc_check(area(&fx.b, 1) + BLUE_GRH_LEN, 100, 6));
	ud_fx_fini(&fx);
}

Test(ud, send_longer_than_mtu_completes_unsent)
{
	struct ud_fx fx;
	struct blue_wc wc;

	ud_fx_init(&fx, QKEY, QKEY);
	ud_post_recv(&fx.rc.b, &fx.b, 1, BUFLEN);
	/* the port's MTU over the loopback HAL; one byte more is not sent (C10-93.1.1) */
	ud_send(&fx.rc.a, &fx.a, fx.a.ah, blue_qp_num(fx.rc.b.qp), QKEY,
		(uint32_t)blue_mtu_bytes(fx.rc.a.ctx->active_mtu) + 1, 5, false, 7);
	expect_sent(&fx, &fx.rc.a, 7);	/* rxe completes it with success */
	cr_assert_eq(blue__engine_stats(fx.rc.a.ctx)->tx_ud_too_long, 1);
	blue__obs_publish(fx.rc.a.ctx);
	cr_assert_eq(fx.rc.a.ctx->obs.ds->eng.tx_ud_too_long, 1);
	rc_quiet(&fx.rc, fx.rc.b.rcq, 50);
	cr_assert_eq(fx.cap_a.n, 0, "a frame left for a message over the MTU");
	ud_send(&fx.rc.a, &fx.a, fx.a.ah, blue_qp_num(fx.rc.b.qp), QKEY, 10, 6, false, 8);
	expect_sent(&fx, &fx.rc.a, 8);
	wc = rc_wait1(&fx.rc, fx.rc.b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.byte_len, BLUE_GRH_LEN + 10);
	ud_fx_fini(&fx);
}

Test(ud, recv_buffer_too_short_is_loc_len_err)
{
	struct ud_fx fx;
	struct blue_wc wc;

	ud_fx_init(&fx, QKEY, QKEY);
	ud_post_recv(&fx.rc.b, &fx.b, 1, BLUE_GRH_LEN + 10);
	ud_send(&fx.rc.a, &fx.a, fx.a.ah, blue_qp_num(fx.rc.b.qp), QKEY, 11, 5, false, 7);
	expect_sent(&fx, &fx.rc.a, 7);
	wc = rc_wait1(&fx.rc, fx.rc.b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_LOC_LEN_ERR, "status %s", blue_wc_status_str(wc.status));
	cr_assert_eq(wc.wr_id, 101);
	ud_fx_fini(&fx);
}

Test(ud, ah_from_received_grh_answers_back)
{
	struct ud_fx fx;
	struct blue_ah_attr at;
	union blue_gid ga;
	struct blue_ah *back;
	struct blue_wc wc;

	ud_fx_init(&fx, QKEY, QKEY);
	ud_post_recv(&fx.rc.b, &fx.b, 1, BUFLEN);
	ud_post_recv(&fx.rc.a, &fx.a, 1, BUFLEN);
	ud_send(&fx.rc.a, &fx.a, fx.a.ah, blue_qp_num(fx.rc.b.qp), QKEY, 48, 5, false, 7);
	expect_sent(&fx, &fx.rc.a, 7);
	wc = rc_wait1(&fx.rc, fx.rc.b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	cr_assert_eq(blue_ah_attr_from_grh(fx.rc.b.ctx, area(&fx.b, 1), &at), 0);
	cr_assert_eq(blue_query_gid(fx.rc.a.ctx, 1, 1, &ga), 0);
	cr_assert_eq(memcmp(at.dgid.raw, ga.raw, 16), 0, "dgid is not the sender's GID");
	cr_assert_eq(at.sgid_index, 1);
	cr_assert_eq(at.port_num, 1);
	back = blue_create_ah(fx.rc.b.pd, &at);
	cr_assert_not_null(back);
	ud_send(&fx.rc.b, &fx.b, back, wc.src_qp, QKEY, 77, 8, false, 9);
	expect_sent(&fx, &fx.rc.b, 9);
	wc = rc_wait1(&fx.rc, fx.rc.a.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	cr_assert_eq(wc.src_qp, blue_qp_num(fx.rc.b.qp));
	cr_assert(rc_check(area(&fx.a, 1) + BLUE_GRH_LEN, 77, 8));
	cr_assert_eq(blue_destroy_ah(back), 0);
	/* 40 bytes that are no header at all */
	memset(area(&fx.b, 2), 0x11, BLUE_GRH_LEN);
	cr_assert_eq(blue_ah_attr_from_grh(fx.rc.b.ctx, area(&fx.b, 2), &at), EINVAL);
	ud_fx_fini(&fx);
}

/*
 * rxe sends every IPv4 RoCE frame with the route's TTL (64), whatever hop_limit the AH
 * asks: the kernel's RoCE AH resolution (ib_resolve_eth_dmac) replaces it. Seen against
 * rxe in tests/compat/test_compat_rxe.sh (ud_layout.py: rxe's ibv_ud_pingpong frames, AH
 * hop_limit 1, carry TTL 64; an AH from ibv_create_ah_from_wc, hop_limit 0xff, too) and in
 * tests/vectors/rxe (ibv_rc_pingpong's hop_limit 1, TTL 64). The GRH the receiver gets
 * says the same.
 */
Test(ud, ttl_is_the_routes_not_the_ah_hop_limit)
{
	static const uint8_t hops[] = { 1, 0xff };
	struct ud_fx fx;
	struct blue_pkt p;

	ud_fx_init(&fx, QKEY, QKEY);
	for (size_t i = 0; i < sizeof(hops); i++) {
		struct blue_ah_attr at = { .sgid_index = 1, .port_num = 1, .hop_limit = hops[i] };
		struct blue_ah *ah;
		struct blue_wc wc;

		cr_assert_eq(blue_query_gid(fx.rc.b.ctx, 1, 1, &at.dgid), 0);
		ah = blue_create_ah(fx.rc.a.pd, &at);
		cr_assert_not_null(ah, "create_ah: %s", strerror(errno));
		ud_post_recv(&fx.rc.b, &fx.b, 1, BUFLEN);
		ud_send(&fx.rc.a, &fx.a, ah, blue_qp_num(fx.rc.b.qp), QKEY, 32, 6, false, 7);
		expect_sent(&fx, &fx.rc.a, 7);
		wc = rc_wait1(&fx.rc, fx.rc.b.rcq, RC_WAIT_MS);
		cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
		cr_assert_eq(blue_pkt_parse(fx.cap_a.frame, fx.cap_a.len, &p), 0);
		cr_expect_eq(p.ttl, 64, "AH hop_limit %u: TTL %u on the wire, rxe sends 64",
			     hops[i], p.ttl);
		cr_expect_eq(area(&fx.b, 1)[20 + 8], 64, "AH hop_limit %u: GRH TTL %u", hops[i],
			     area(&fx.b, 1)[20 + 8]);
		cr_assert_eq(blue_destroy_ah(ah), 0);
	}
	ud_fx_fini(&fx);
}

Test(ud, post_refuses_other_opcodes)
{
	struct ud_fx fx;
	struct blue_send_wr wr, *bad;

	ud_fx_init(&fx, QKEY, QKEY);
	memset(&wr, 0, sizeof(wr));
	wr.opcode = BLUE_WR_RDMA_WRITE;
	wr.wr.ud.ah = fx.a.ah;
	wr.wr.ud.remote_qpn = blue_qp_num(fx.rc.b.qp);
	cr_assert_eq(blue_post_send(fx.rc.a.qp, &wr, &bad), EINVAL);
	cr_assert_eq(bad, &wr);
	wr.opcode = BLUE_WR_SEND;
	wr.wr.ud.ah = NULL;
	cr_assert_eq(blue_post_send(fx.rc.a.qp, &wr, &bad), EINVAL, "a UD send without an AH");
	ud_fx_fini(&fx);
}

Test(ud, state_table_and_query)
{
	struct rc_fx fx;
	struct blue_qp_attr a, q;
	struct blue_qp_init_attr ia;
	struct blue_qp *qp;

	rc_fx_init_noqp(&fx, NULL);
	qp = ud_qp_create(&fx.a);
	memset(&a, 0, sizeof(a));
	a.qp_state = BLUE_QPS_INIT;
	a.port_num = 1;
	a.qkey = 0x1234;
	cr_assert_eq(blue_modify_qp(qp, &a, BLUE_QP_STATE | BLUE_QP_PKEY_INDEX | BLUE_QP_PORT),
		     EINVAL, "RESET->INIT of a UD QP needs the Q_Key");
	cr_assert_eq(blue_modify_qp(qp, &a, BLUE_QP_STATE | BLUE_QP_PKEY_INDEX | BLUE_QP_PORT |
				    BLUE_QP_QKEY | BLUE_QP_ACCESS_FLAGS), EINVAL,
		     "a UD QP takes no access flags");
	cr_assert_eq(blue_modify_qp(qp, &a, BLUE_QP_STATE | BLUE_QP_PKEY_INDEX | BLUE_QP_PORT |
				    BLUE_QP_QKEY), 0);
	a.qp_state = BLUE_QPS_RTR;
	a.path_mtu = BLUE_MTU_1024;
	cr_assert_eq(blue_modify_qp(qp, &a, BLUE_QP_STATE | BLUE_QP_PATH_MTU), EINVAL,
		     "a UD QP has no path");
	cr_assert_eq(blue_modify_qp(qp, &a, BLUE_QP_STATE), 0);
	a.qp_state = BLUE_QPS_RTS;
	cr_assert_eq(blue_modify_qp(qp, &a, BLUE_QP_STATE), EINVAL, "RTR->RTS needs SQ_PSN");
	a.sq_psn = 0x42;
	a.qkey = 0x5678;
	cr_assert_eq(blue_modify_qp(qp, &a, BLUE_QP_STATE | BLUE_QP_SQ_PSN | BLUE_QP_QKEY), 0);
	cr_assert_eq(blue_query_qp(qp, &q, 0, &ia), 0);
	cr_assert_eq(q.qp_state, BLUE_QPS_RTS);
	cr_assert_eq(q.qkey, 0x5678);
	cr_assert_eq(q.sq_psn, 0x42);
	cr_assert_eq(ia.qp_type, BLUE_QPT_UD);
	/* RESET keeps it a UD QP */
	a.qp_state = BLUE_QPS_RESET;
	cr_assert_eq(blue_modify_qp(qp, &a, BLUE_QP_STATE), 0);
	cr_assert_eq(qp->live->type, BLUE_QPT_UD);
	cr_assert_eq(blue_query_qp(qp, &q, 0, &ia), 0);
	cr_assert_eq(ia.qp_type, BLUE_QPT_UD);
	cr_assert_eq(q.qkey, 0);
	rc_fx_fini(&fx);
}

Test(ud, wrong_transport_both_ways)
{
	struct ud_fx fx;
	struct blue_send_wr wr;
	struct blue_qp *ud_b;

	ud_fx_init(&fx, QKEY, QKEY);
	/* B gets an RC QP besides its UD one, "connected" to A's UD QP */
	ud_b = fx.rc.b.qp;
	rc_qp_create(&fx.rc, &fx.rc.b);
	rc_qp_connect(&fx.rc, &fx.rc.b, &fx.rc.a, 0x300, 0x400);
	/* a UD SEND to the RC QP */
	ud_send(&fx.rc.a, &fx.a, fx.a.ah, blue_qp_num(fx.rc.b.qp), QKEY, 10, 5, false, 7);
	expect_sent(&fx, &fx.rc.a, 7);
	rc_progress(&fx.rc);
	rc_progress(&fx.rc);
	cr_assert_eq(blue__engine_stats(fx.rc.b.ctx)->rx_wrong_transport, 1);
	/* an RC SEND to the UD QP */
	memset(&wr, 0, sizeof(wr));
	wr.opcode = BLUE_WR_SEND;
	wr.wr_id = 1;
	rc_post_send(&fx.rc.b, &wr);
	rc_progress(&fx.rc);
	rc_progress(&fx.rc);
	cr_assert_eq(blue__engine_stats(fx.rc.a.ctx)->rx_wrong_transport, 1);
	cr_assert_eq(blue_destroy_qp(fx.rc.b.qp), 0);
	fx.rc.b.qp = ud_b;
	ud_fx_fini(&fx);
}

Test(ud, ah_checks_and_own_gid)
{
	struct rc_fx fx;
	struct blue_ah_attr at = { .sgid_index = 1, .port_num = 1 };
	struct blue_ah *ah;

	rc_fx_init_noqp(&fx, NULL);
	/* a GID of this device: frames go to its own MAC (loopback, as rxe) */
	cr_assert_eq(blue_query_gid(fx.a.ctx, 1, 1, &at.dgid), 0);
	ah = blue_create_ah(fx.a.pd, &at);
	cr_assert_not_null(ah);
	cr_assert_eq(memcmp(ah->dmac, fx.a.mac, 6), 0);
	cr_assert_eq(blue_dealloc_pd(fx.a.pd), EBUSY, "the PD still has an AH");
	cr_assert_eq(blue_destroy_ah(ah), 0);
	/* the IPv6 link-local GID index, a non-IPv4 GID, a port that is not there */
	at.sgid_index = 0;
	cr_assert_null(blue_create_ah(fx.a.pd, &at));
	cr_assert_eq(errno, EINVAL);
	at.sgid_index = 1;
	at.port_num = 2;
	cr_assert_null(blue_create_ah(fx.a.pd, &at));
	cr_assert_eq(errno, EINVAL);
	at.port_num = 1;
	cr_assert_eq(blue_query_gid(fx.a.ctx, 1, 0, &at.dgid), 0);
	cr_assert_null(blue_create_ah(fx.a.pd, &at));
	cr_assert_eq(errno, EINVAL);
	/* an IPv4 peer nobody knows: no MAC over the loopback HAL */
	memcpy(at.dgid.raw, (const uint8_t[16]){ [10] = 0xff, [11] = 0xff, 10, 9, 9, 9 }, 16);
	cr_assert_null(blue_create_ah(fx.a.pd, &at));
	cr_assert_eq(errno, ENOENT);
	rc_fx_fini(&fx);
}

/* The GRH in its own 40-byte SGE and the payload in a second one (IBA 11.4.1.1 allows any
 * split; the bytes land as if the SGEs were one buffer). */
Test(ud, grh_and_payload_across_two_sges)
{
	struct ud_fx fx;
	struct blue_sge sge[2];
	struct blue_recv_wr wr = { .wr_id = 5, .sg_list = sge, .num_sge = 2 }, *bad;
	struct blue_wc wc;

	ud_fx_init(&fx, QKEY, QKEY);
	sge[0] = (struct blue_sge){ .addr = (uintptr_t)area(&fx.b, 2), .length = 30,
				    .lkey = fx.b.mr->lkey };
	sge[1] = (struct blue_sge){ .addr = (uintptr_t)area(&fx.b, 3), .length = 500,
				    .lkey = fx.b.mr->lkey };
	cr_assert_eq(blue_post_recv(fx.rc.b.qp, &wr, &bad), 0);
	ud_send(&fx.rc.a, &fx.a, fx.a.ah, blue_qp_num(fx.rc.b.qp), QKEY, 300, 11, false, 7);
	expect_sent(&fx, &fx.rc.a, 7);
	wc = rc_wait1(&fx.rc, fx.rc.b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	cr_assert_eq(wc.byte_len, BLUE_GRH_LEN + 300);
	/* 30 GRH bytes in the first SGE, its last 10 and the payload in the second */
	memcpy(area(&fx.b, 4), area(&fx.b, 2), 30);
	memcpy(area(&fx.b, 4) + 30, area(&fx.b, 3), 10 + 300);
	expect_grh(area(&fx.b, 4), &fx.cap_a);
	cr_assert(rc_check(area(&fx.b, 3) + 10, 300, 11), "payload differs");
	ud_fx_fini(&fx);
}

/* A UD QP created on an SRQ takes its receive from it: GRH then payload, bytes compared. */
Test(ud, receive_from_an_srq)
{
	struct blue_srq_attr sa = { .max_wr = 8, .max_sge = 1 };
	struct blue_sge sge;
	struct blue_recv_wr rwr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1 }, *bad;
	struct blue_qp_init_attr ia;
	struct blue_srq *srq;
	struct blue_qp *qp;
	struct blue_wc wc;
	struct ud_fx fx;

	ud_fx_init(&fx, 0x11, 0x22);
	srq = blue_create_srq(fx.rc.b.pd, &sa, NULL);
	cr_assert_not_null(srq);
	ia = (struct blue_qp_init_attr){
		.send_cq = fx.rc.b.scq, .recv_cq = fx.rc.b.rcq, .srq = srq,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 }, .qp_type = BLUE_QPT_UD,
	};
	qp = blue_create_qp(fx.rc.b.pd, &ia);
	cr_assert_not_null(qp, "UD QP on an SRQ: %s", strerror(errno));
	ud_qp_up(qp, 0x22, 0x30);
	sge = (struct blue_sge){ .addr = (uintptr_t)area(&fx.b, 1), .length = BUFLEN,
				 .lkey = fx.b.mr->lkey };
	cr_assert_eq(blue_post_srq_recv(srq, &rwr, &bad), 0);
	ud_send(&fx.rc.a, &fx.a, fx.a.ah, blue_qp_num(qp), 0x22, 300, 5, false, 1);
	expect_sent(&fx, &fx.rc.a, 1);
	wc = rc_wait1(&fx.rc, fx.rc.b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "%s", blue_wc_status_str(wc.status));
	cr_assert_eq(wc.wr_id, 7);
	cr_assert_eq(wc.qp_num, blue_qp_num(qp));
	cr_assert_eq(wc.byte_len, BLUE_GRH_LEN + 300);
	cr_assert(rc_check(area(&fx.b, 1) + BLUE_GRH_LEN, 300, 5));
	cr_assert_eq(blue_destroy_qp(qp), 0);
	cr_assert_eq(blue_destroy_srq(srq), 0);
	ud_fx_fini(&fx);
}

/* QP1, the GSI (blue__create_gsi_qp): QPN exactly 1, one per device while it lives. */
#define GSI_QKEY 0x80010000u

static struct blue_qp *gsi_create(struct rc_side *s)
{
	struct blue_qp_init_attr ia = {
		.send_cq = s->scq,
		.recv_cq = s->rcq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = BLUE_QPT_UD,
	};

	return blue__create_gsi_qp(s->pd, &ia);
}

Test(ud, gsi_qp1_mads_both_ways)
{
	struct blue_qp *rc_attempt, *again;
	struct blue_qp_init_attr ia;
	struct ud_fx fx;
	struct blue_wc wc;
	struct blue_pkt p;

	memset(&fx, 0, sizeof(fx));
	rc_fx_init_noqp(&fx.rc, NULL);
	fx.rc.a.qp = gsi_create(&fx.rc.a);
	fx.rc.b.qp = gsi_create(&fx.rc.b);
	cr_assert_not_null(fx.rc.a.qp, "GSI: %s", strerror(errno));
	cr_assert_not_null(fx.rc.b.qp, "GSI: %s", strerror(errno));
	cr_assert_eq(blue_qp_num(fx.rc.a.qp), 1);
	cr_assert_eq(fx.rc.a.ctx->qp_tbl[1].qpn, 1, "slot 1, generation 0");
	cr_assert_eq(fx.rc.a.ctx->qp_tbl[1].owner_pid, (uint32_t)getpid());
	/* a second QP1 on the device while the first lives: EADDRINUSE; not UD: EINVAL */
	errno = 0;
	cr_assert_null(gsi_create(&fx.rc.a));
	cr_assert_eq(errno, EADDRINUSE);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = ia.recv_cq = fx.rc.a.scq;
	ia.cap.max_send_wr = 1;
	ia.qp_type = BLUE_QPT_RC;
	errno = 0;
	rc_attempt = blue__create_gsi_qp(fx.rc.a.pd, &ia);
	cr_assert_null(rc_attempt);
	cr_assert_eq(errno, EINVAL);
	ud_qp_up(fx.rc.a.qp, GSI_QKEY, 0);
	ud_qp_up(fx.rc.b.qp, GSI_QKEY, 0);
	side_init(&fx.rc.a, &fx.a);
	side_init(&fx.rc.b, &fx.b);
	fx.a.ah = ah_to(&fx.rc.a, &fx.rc.b);
	fx.b.ah = ah_to(&fx.rc.b, &fx.rc.a);
	blue_hal_loopback_set_filter(fx.rc.a.hal, capture_fn, &fx.cap_a);
	/* a 256-byte MAD to dqpn 1 with the WR Q_Key 0x80010000: its high bit says "the
	 * QP's own" (IBA 10.2.5), which is the same well-known key; DETH source QP 1 */
	ud_post_recv(&fx.rc.b, &fx.b, 1, BLUE_GRH_LEN + 256);
	ud_send(&fx.rc.a, &fx.a, fx.a.ah, 1, GSI_QKEY, 256, 11, false, 7);
	expect_sent(&fx, &fx.rc.a, 7);
	wc = rc_wait1(&fx.rc, fx.rc.b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "recv %s", blue_wc_status_str(wc.status));
	cr_assert_eq(wc.src_qp, 1);
	cr_assert_eq(wc.qp_num, 1);
	cr_assert_eq(wc.byte_len, BLUE_GRH_LEN + 256);
	cr_assert(rc_check(area(&fx.b, 1) + BLUE_GRH_LEN, 256, 11), "MAD differs");
	cr_assert_eq(blue_pkt_parse(fx.cap_a.frame, fx.cap_a.len, &p), 0);
	cr_assert_eq(p.dqpn, 1);
	cr_assert_eq(p.pkey, 0xffff);
	cr_assert_eq(p.deth.qkey, GSI_QKEY);
	cr_assert_eq(p.deth.sqpn, 1);
	/* gone, and made again: the slot is free for the next QP1 */
	cr_assert_eq(blue_destroy_ah(fx.a.ah), 0);
	cr_assert_eq(blue_destroy_ah(fx.b.ah), 0);
	cr_assert_eq(blue_dereg_mr(fx.a.mr), 0);
	cr_assert_eq(blue_dereg_mr(fx.b.mr), 0);
	free(fx.a.buf);
	free(fx.b.buf);
	cr_assert_eq(blue_destroy_qp(fx.rc.a.qp), 0);
	cr_assert_eq(fx.rc.a.ctx->qp_tbl[1].qpn, 0);
	again = gsi_create(&fx.rc.a);
	cr_assert_not_null(again, "QP1 again: %s", strerror(errno));
	cr_assert_eq(blue_qp_num(again), 1);
	fx.rc.a.qp = again;
	rc_fx_fini(&fx.rc);
}
