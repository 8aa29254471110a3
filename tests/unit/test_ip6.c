// SPDX-License-Identifier: MIT
/*
 * RoCEv2 over IPv6 through the runtime, over the loopback HAL: the GID table layout
 * (0 fe80, 1 IPv4-mapped, 2.. IPv6 in order, link-local and duplicates left out), the
 * address-vector checks (one IP version, a GID that exists), an RC SEND and a WRITE
 * between IPv6 GIDs with every frame on the wire IPv6 (ACKs too) and the payload
 * compared, the QP context's peer_ip6, and UD over IPv6 with the GRH the IPv6 header
 * as received (rxe's layout) and ah_attr_from_grh's answer.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/ah.h"
#include "runtime/codec.h"
#include "runtime/device.h"
#include "runtime/qp.h"
#include "tests/unit/rc_fixture.h"

static const uint8_t A6[16] = { 0xfd, 0x00, 0xb1, 0x0e, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0, 1 };
static const uint8_t B6[16] = { 0xfd, 0x00, 0xb1, 0x0e, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0, 2 };

/* What a side put on the wire: frames counted by IP version, the last UD one kept. */
struct wire {
	int v4, v6, bad;
	uint8_t ud[4096];
	uint32_t ud_len;
};

static enum blue_lb_verdict wire_fn(void *arg, const struct blue_frame *f, uint64_t seq)
{
	struct wire *w = arg;
	struct blue_pkt p;

	(void)seq;
	if (blue_pkt_parse(f->data, f->len, &p)) {
		w->bad++;
		return BLUE_LB_PASS;
	}
	if (p.ipv6)
		w->v6++;
	else
		w->v4++;
	if (p.opcode == BLUE_OP_UD_SEND_ONLY && f->len <= sizeof(w->ud)) {
		memcpy(w->ud, f->data, f->len);
		w->ud_len = f->len;
	}
	return BLUE_LB_PASS;
}

/* Two contexts over the loopback HAL with IPv6 GIDs at index 2 and static neighbours. */
static void fx6_init(struct rc_fx *fx, struct rc_opts *o)
{
	union blue_gid g;

	rc_opts_default(o);
	o->sgid_index = 2;
	rc_fx_init_noqp(fx, o);
	cr_assert_eq(blue__gid_add6(fx->a.ctx->gid, A6), 0);
	cr_assert_eq(blue__gid_add6(fx->b.ctx->gid, B6), 0);
	memcpy(g.raw, B6, 16);
	cr_assert_eq(blue__set_neigh_gid(fx->a.ctx, &g, fx->b.mac), 0);
	memcpy(g.raw, A6, 16);
	cr_assert_eq(blue__set_neigh_gid(fx->b.ctx, &g, fx->a.mac), 0);
}

Test(ip6, gid_table_layout)
{
	static const uint8_t ll[16] = { 0xfe, 0x80, [15] = 9 };
	static const uint8_t c6[16] = { 0xfd, 0x00, [15] = 3 };
	union blue_gid t[BLUE_GID_TBL_LEN];
	const uint8_t mac[6] = { 0x02, 0xb1, 0x0e, 0, 0, 1 };
	uint8_t a[16];
	int i;

	blue__fill_gids(t, mac, htonl(0x0a000001));
	cr_expect_eq(t[0].raw[0], 0xfe);
	cr_expect_eq(t[1].raw[10], 0xff);
	cr_expect(!blue__gid_valid(t, 2), "index 2 empty before any IPv6 address");
	cr_expect_eq(blue__gid_add6(t, ll), -EEXIST, "link-local: the default GID stands for it");
	cr_expect_eq(blue__gid_add6(t, A6), 0);
	cr_expect_eq(blue__gid_add6(t, c6), 0);
	cr_expect_eq(blue__gid_add6(t, A6), -EEXIST);
	cr_expect_eq(memcmp(t[2].raw, A6, 16), 0, "the kernel's order: first at 2");
	cr_expect_eq(memcmp(t[3].raw, c6, 16), 0);
	for (i = 4; i < BLUE_GID_TBL_LEN; i++) {
		memcpy(a, A6, 16);
		a[15] = (uint8_t)(0x40 + i);
		cr_expect_eq(blue__gid_add6(t, a), 0);
	}
	a[15] = 0xee;
	cr_expect_eq(blue__gid_add6(t, a), -ENOSPC, "16 entries");
	/* an IPv6-only netdev: index 1 stays empty, the IPv6 GIDs keep their places */
	blue__fill_gids(t, mac, 0);
	cr_expect(blue__gid_valid(t, 0));
	cr_expect(!blue__gid_valid(t, 1), "no IPv4: index 1 empty");
	cr_expect_eq(blue__gid_add6(t, A6), 0);
	cr_expect_eq(memcmp(t[2].raw, A6, 16), 0);
}

Test(ip6, address_vector_checks)
{
	struct rc_fx fx;
	struct rc_opts o;
	struct blue_ah_attr at = { .port_num = 1 };

	fx6_init(&fx, &o);
	/* an IPv6 source to an IPv4 destination: refused, naming both */
	at.sgid_index = 2;
	cr_assert_eq(blue_query_gid(fx.b.ctx, 1, 1, &at.dgid), 0);
	cr_assert_null(blue_create_ah(fx.a.pd, &at));
	cr_assert_eq(errno, EINVAL);
	/* an empty index */
	at.sgid_index = 3;
	memcpy(at.dgid.raw, B6, 16);
	cr_assert_null(blue_create_ah(fx.a.pd, &at));
	cr_assert_eq(errno, EINVAL);
	/* an IPv6 peer with no neighbour entry (and no netdev to ask) */
	at.sgid_index = 2;
	at.dgid.raw[15] = 0x77;
	cr_assert_null(blue_create_ah(fx.a.pd, &at));
	cr_assert_eq(errno, ENOENT);
	rc_fx_fini(&fx);
}

Test(ip6, rc_send_and_write_over_ipv6)
{
	struct wire wa = { 0 }, wb = { 0 };
	struct blue_sge sge;
	struct blue_send_wr wr;
	struct blue_wc wc;
	struct rc_mem m;
	struct rc_fx fx;
	struct rc_opts o;

	fx6_init(&fx, &o);
	rc_qp_create(&fx, &fx.a);
	rc_qp_create(&fx, &fx.b);
	rc_qp_connect(&fx, &fx.a, &fx.b, 100, 200);
	rc_qp_connect(&fx, &fx.b, &fx.a, 200, 100);
	cr_assert_eq(fx.a.qp->live->peer_ip, 0, "no IPv4 peer");
	cr_assert_eq(memcmp(fx.a.qp->live->peer_ip6, B6, 16), 0, "peer_ip6 for bluectl");
	blue_hal_loopback_set_filter(fx.a.hal, wire_fn, &wa);
	blue_hal_loopback_set_filter(fx.b.hal, wire_fn, &wb);

	rc_mem_init(&m, &fx.a, &fx.b, 5000, 7, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE);
	/* a SEND of 5000 bytes: 5 packets at MTU 1024 */
	rc_post_recv(&fx.b, 1, m.dst, m.len, m.dmr->lkey);
	sge = (struct blue_sge){ .addr = (uintptr_t)m.src, .length = m.len, .lkey = m.smr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 11;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = BLUE_WR_SEND;
	wr.send_flags = BLUE_SEND_SIGNALED;
	rc_post_send(&fx.a, &wr);
	wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "%s", blue_wc_status_str(wc.status));
	wc = rc_wait1(&fx, fx.b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	cr_assert_eq(wc.byte_len, 5000);
	cr_assert(rc_check(m.dst, m.len, 7), "received bytes differ from the sent ones");

	/* an RDMA WRITE over the same QPs */
	memset(m.dst, 0, m.len);
	wr.wr_id = 12;
	wr.opcode = BLUE_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)m.dst;
	wr.wr.rdma.rkey = m.dmr->rkey;
	rc_post_send(&fx.a, &wr);
	wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	cr_assert(rc_check(m.dst, m.len, 7), "written bytes differ");

	cr_expect_geq(wa.v6, 10, "requests over IPv6: %d", wa.v6);
	cr_expect_gt(wb.v6, 0, "ACKs over IPv6");
	cr_expect_eq(wa.v4 + wb.v4, 0, "no IPv4 frame");
	cr_expect_eq(wa.bad + wb.bad, 0, "every frame parses (ICRC included)");
	rc_mem_fini(&m);
	rc_fx_fini(&fx);
}

static struct blue_qp *ud_qp(struct rc_side *s)
{
	struct blue_qp_init_attr ia = {
		.send_cq = s->scq, .recv_cq = s->rcq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = BLUE_QPT_UD,
	};
	struct blue_qp_attr a = { .qp_state = BLUE_QPS_INIT, .port_num = 1, .qkey = 0x1234 };
	struct blue_qp *qp = blue_create_qp(s->pd, &ia);

	cr_assert_not_null(qp);
	cr_assert_eq(blue_modify_qp(qp, &a, BLUE_QP_STATE | BLUE_QP_PKEY_INDEX | BLUE_QP_PORT |
				    BLUE_QP_QKEY), 0);
	a.qp_state = BLUE_QPS_RTR;
	cr_assert_eq(blue_modify_qp(qp, &a, BLUE_QP_STATE), 0);
	a.qp_state = BLUE_QPS_RTS;
	a.sq_psn = 5;
	cr_assert_eq(blue_modify_qp(qp, &a, BLUE_QP_STATE | BLUE_QP_SQ_PSN), 0);
	return qp;
}

Test(ip6, ud_grh_is_the_ipv6_header)
{
	struct wire wa = { 0 };
	struct blue_ah_attr at = { .sgid_index = 2, .port_num = 1 }, back;
	uint8_t *sbuf = calloc(1, 4096), *rbuf = calloc(1, 4096);
	struct blue_mr *smr, *rmr;
	struct blue_qp *qa, *qb;
	struct blue_send_wr wr;
	struct blue_sge sge;
	struct blue_ah *ah;
	struct blue_wc wc;
	struct blue_pkt p;
	struct rc_fx fx;
	struct rc_opts o;

	fx6_init(&fx, &o);
	qa = ud_qp(&fx.a);
	qb = ud_qp(&fx.b);
	memcpy(at.dgid.raw, B6, 16);
	at.traffic_class = 0x48;
	ah = blue_create_ah(fx.a.pd, &at);
	cr_assert_not_null(ah, "create_ah over IPv6: %s", strerror(errno));
	smr = blue_reg_mr(fx.a.pd, sbuf, 4096, BLUE_ACCESS_LOCAL_WRITE);
	rmr = blue_reg_mr(fx.b.pd, rbuf, 4096, BLUE_ACCESS_LOCAL_WRITE);
	cr_assert(smr && rmr);
	blue_hal_loopback_set_filter(fx.a.hal, wire_fn, &wa);
	fx.b.qp = qb;
	rc_post_recv(&fx.b, 9, rbuf, BLUE_GRH_LEN + 512, rmr->lkey);
	rc_fill(sbuf, 300, 3);
	sge = (struct blue_sge){ .addr = (uintptr_t)sbuf, .length = 300, .lkey = smr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = BLUE_WR_SEND;
	wr.send_flags = BLUE_SEND_SIGNALED;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = blue_qp_num(qb);
	wr.wr.ud.remote_qkey = 0x1234;
	fx.a.qp = qa;
	rc_post_send(&fx.a, &wr);
	wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	wc = rc_wait1(&fx, fx.b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "%s", blue_wc_status_str(wc.status));
	cr_assert_eq(wc.byte_len, BLUE_GRH_LEN + 300);
	cr_assert(wc.wc_flags & BLUE_WC_GRH);
	cr_assert(rc_check(rbuf + BLUE_GRH_LEN, 300, 3), "payload after the GRH");

	/* the GRH: the frame's IPv6 header byte for byte */
	cr_assert_gt(wa.ud_len, 0, "no UD frame seen");
	cr_assert_eq(blue_pkt_parse(wa.ud, wa.ud_len, &p), 0);
	cr_assert_eq(p.ipv6, 1);
	cr_assert_eq(memcmp(rbuf, wa.ud + p.l3_off, BLUE_GRH_LEN), 0,
		     "the GRH is not the IPv6 header as received");
	cr_expect_eq(rbuf[0] >> 4, 6);
	cr_expect_eq((rbuf[0] & 0x0f) << 4 | rbuf[1] >> 4, 0x48, "traffic class from the AH");
	cr_expect_eq(rbuf[6], 17, "next header UDP");
	cr_expect_eq(rbuf[7], 64, "hop limit 64");
	cr_expect_eq(memcmp(rbuf + 8, A6, 16), 0, "source GID");
	cr_expect_eq(memcmp(rbuf + 24, B6, 16), 0, "destination GID");
	/* the way back: the sender's GID as dgid, our IPv6 GID's index as sgid_index */
	cr_assert_eq(blue_ah_attr_from_grh(fx.b.ctx, rbuf, &back), 0);
	cr_expect_eq(memcmp(back.dgid.raw, A6, 16), 0);
	cr_expect_eq(back.sgid_index, 2);
	cr_expect_eq(back.traffic_class, 0x48);

	cr_assert_eq(blue_destroy_ah(ah), 0);
	cr_assert_eq(blue_dereg_mr(smr), 0);
	cr_assert_eq(blue_dereg_mr(rmr), 0);
	free(sbuf);
	free(rbuf);
	rc_fx_fini(&fx);
}
