// SPDX-License-Identifier: MIT
/*
 * UD multicast between two contexts over the loopback HAL: a datagram to a group is
 * copied to every attached QP of the receiving device (bytes and GRH compared), a QP
 * with another Q_Key drops its copy and counts it, one with no receive posted drops
 * and counts it, a detached QP gets nothing and the last detach makes the group's
 * frames drop at steering (drop_mcast_unjoined); the sending device gets its own copy
 * when one of its QPs is attached; the frame on the wire goes to the group's MAC with
 * DestQP 0xFFFFFF; the attach/detach answers (the kernel's) and the device's limits.
 * The engine's multicast counters are published in dev_stats (what bluectl stats reads).
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <blue/mcast.h>
#include "runtime/codec.h"
#include "runtime/device.h"
#include "runtime/progress.h"
#include "runtime/qp.h"
#include "tests/unit/rc_fixture.h"

#define QKEY	0x01234567u	/* rdma_cm's RDMA_UDP_QKEY, what mckey's groups use */
#define BUFLEN	(BLUE_GRH_LEN + 1024)
#define NAREA	8
#define MAXQ	(BLUE_MAX_MCAST_QP_ATTACH + 1)

/* The last UD frame a side sent, as it went on the wire. */
struct capture {
	uint8_t frame[2048];
	uint32_t len;
	int n;
};

static enum blue_lb_verdict capture_fn(void *arg, const struct blue_frame *f, uint64_t seq)
{
	struct capture *c = arg;

	(void)seq;
	if (f->len <= sizeof(c->frame)) {
		memcpy(c->frame, f->data, f->len);
		c->len = f->len;
		c->n++;
	}
	return BLUE_LB_PASS;
}

struct mc_fx {
	struct rc_fx rc;
	struct blue_qp *qa[MAXQ], *qb[MAXQ];	/* UD QPs of A and of B */
	int na, nb;
	uint8_t *buf_a, *buf_b;
	struct blue_mr *mr_a, *mr_b;
	struct blue_ah *ah;			/* A's, to the group */
	union blue_gid grp;
	struct capture cap;
};

static struct blue_qp *ud_qp(struct rc_side *s, uint32_t qkey)
{
	struct blue_qp_init_attr ia = {
		.send_cq = s->scq,
		.recv_cq = s->rcq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = BLUE_QPT_UD,
	};
	struct blue_qp_attr a;
	struct blue_qp *qp = blue_create_qp(s->pd, &ia);

	cr_assert_not_null(qp, "create_qp UD: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = BLUE_QPS_INIT;
	a.port_num = 1;
	a.qkey = qkey;
	cr_assert_eq(blue_modify_qp(qp, &a, BLUE_QP_STATE | BLUE_QP_PKEY_INDEX | BLUE_QP_PORT |
				    BLUE_QP_QKEY), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = BLUE_QPS_RTR;
	cr_assert_eq(blue_modify_qp(qp, &a, BLUE_QP_STATE), 0);
	a.qp_state = BLUE_QPS_RTS;
	cr_assert_eq(blue_modify_qp(qp, &a, BLUE_QP_STATE | BLUE_QP_SQ_PSN), 0);
	return qp;
}

static void group_gid(union blue_gid *g, const char *ip)
{
	uint32_t a;

	cr_assert_eq(inet_pton(AF_INET, ip, &a), 1);
	blue__gid_from_ipv4(g, a);
}

/* A with one UD QP and an AH to 239.1.2.3, B with @nb UD QPs of Q_Key QKEY. */
static void mc_fx_init(struct mc_fx *fx, int nb)
{
	struct blue_ah_attr at = { .sgid_index = 1, .port_num = 1 };
	int i;

	memset(fx, 0, sizeof(*fx));
	rc_fx_init_noqp(&fx->rc, NULL);
	fx->qa[fx->na++] = ud_qp(&fx->rc.a, QKEY);
	for (i = 0; i < nb; i++)
		fx->qb[fx->nb++] = ud_qp(&fx->rc.b, QKEY);
	fx->buf_a = calloc(NAREA, BUFLEN);
	fx->buf_b = calloc(NAREA * MAXQ, BUFLEN);
	cr_assert(fx->buf_a && fx->buf_b);
	fx->mr_a = blue_reg_mr(fx->rc.a.pd, fx->buf_a, NAREA * BUFLEN, BLUE_ACCESS_LOCAL_WRITE);
	fx->mr_b = blue_reg_mr(fx->rc.b.pd, fx->buf_b, (size_t)NAREA * MAXQ * BUFLEN,
			       BLUE_ACCESS_LOCAL_WRITE);
	cr_assert(fx->mr_a && fx->mr_b);
	group_gid(&fx->grp, "239.1.2.3");
	at.dgid = fx->grp;
	fx->ah = blue_create_ah(fx->rc.a.pd, &at);
	cr_assert_not_null(fx->ah, "create_ah to a group: %s", strerror(errno));
	blue_hal_loopback_set_filter(fx->rc.a.hal, capture_fn, &fx->cap);
}

static void mc_fx_fini(struct mc_fx *fx)
{
	int i;

	cr_assert_eq(blue_destroy_ah(fx->ah), 0);
	for (i = 0; i < fx->na; i++)
		cr_assert_eq(blue_destroy_qp(fx->qa[i]), 0);
	for (i = 0; i < fx->nb; i++)
		cr_assert_eq(blue_destroy_qp(fx->qb[i]), 0);
	cr_assert_eq(blue_dereg_mr(fx->mr_a), 0);
	cr_assert_eq(blue_dereg_mr(fx->mr_b), 0);
	free(fx->buf_a);
	free(fx->buf_b);
	rc_fx_fini(&fx->rc);
}

static uint8_t *area_b(struct mc_fx *fx, int qi)
{
	return fx->buf_b + (size_t)qi * NAREA * BUFLEN;
}

/* One receive on B's QP @qi (wr_id 100 + qi) into its own area. */
static void post_recv_b(struct mc_fx *fx, int qi)
{
	struct blue_sge sge = { .addr = (uintptr_t)area_b(fx, qi), .length = BUFLEN,
				.lkey = fx->mr_b->lkey };
	struct blue_recv_wr wr = { .wr_id = 100 + (uint64_t)qi, .sg_list = &sge, .num_sge = 1 };
	struct blue_recv_wr *bad;

	cr_assert_eq(blue_post_recv(fx->qb[qi], &wr, &bad), 0);
}

/* A's QP @qi sends @len bytes (pattern @seed) to the group, DestQP 0xFFFFFF. */
static void send_group(struct mc_fx *fx, struct blue_qp *qp, uint32_t len, unsigned int seed)
{
	struct blue_sge sge = { .addr = (uintptr_t)fx->buf_a, .length = len,
				.lkey = fx->mr_a->lkey };
	struct blue_send_wr wr, *bad;
	struct blue_wc wc;

	rc_fill(fx->buf_a, len, seed);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 9;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = BLUE_WR_SEND;
	wr.send_flags = BLUE_SEND_SIGNALED;
	wr.wr.ud.ah = fx->ah;
	wr.wr.ud.remote_qpn = BLUE_MCAST_QPN;
	wr.wr.ud.remote_qkey = QKEY;
	cr_assert_eq(blue_post_send(qp, &wr, &bad), 0);
	wc = rc_wait1(&fx->rc, fx->rc.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
}

/* Exactly the receives of B's QPs @want (a bit per QP index), each the message. */
static void expect_copies(struct mc_fx *fx, unsigned int want, uint32_t len, unsigned int seed)
{
	struct blue_wc wc[MAXQ];
	unsigned int got = 0;
	int n = __builtin_popcount(want), i, qi;

	cr_assert_eq(rc_poll(&fx->rc, fx->rc.b.rcq, wc, n, RC_WAIT_MS), n, "copies");
	for (i = 0; i < n; i++) {
		cr_assert_eq(wc[i].status, BLUE_WC_SUCCESS, "%s", blue_wc_status_str(wc[i].status));
		qi = (int)wc[i].wr_id - 100;
		cr_assert(qi >= 0 && qi < fx->nb && wc[i].qp_num == blue_qp_num(fx->qb[qi]));
		cr_assert_eq(wc[i].byte_len, BLUE_GRH_LEN + len);
		cr_assert_eq(wc[i].src_qp, blue_qp_num(fx->qa[0]));
		cr_assert(rc_check(area_b(fx, qi) + BLUE_GRH_LEN, len, seed), "QP %d's bytes", qi);
		/* the GRH's IPv4 header names the group as its destination */
		cr_assert_eq(memcmp(area_b(fx, qi) + 20 + 16, fx->grp.raw + 12, 4), 0);
		got |= 1u << qi;
	}
	cr_assert_eq(got, want, "copies went to QPs %#x, not %#x", got, want);
	rc_quiet(&fx->rc, fx->rc.b.rcq, 20);	/* and no more */
}

Test(mcast, fanout_to_two_qps_and_the_wire_frame)
{
	const uint8_t mac[6] = { 0x01, 0x00, 0x5e, 0x01, 0x02, 0x03 };
	struct blue_pkt p;
	struct mc_fx fx;

	mc_fx_init(&fx, 2);
	cr_assert_eq(blue_attach_mcast(fx.qb[0], &fx.grp, 0), 0);
	cr_assert_eq(blue_attach_mcast(fx.qb[1], &fx.grp, 0), 0);
	post_recv_b(&fx, 0);
	post_recv_b(&fx, 1);
	send_group(&fx, fx.qa[0], 300, 1);
	expect_copies(&fx, 0x3, 300, 1);
	cr_assert_eq(blue__engine_stats(fx.rc.b.ctx)->rx_mcast_copies, 2);
	blue__obs_publish(fx.rc.b.ctx);	/* what bluectl stats reads */
	cr_assert_eq(fx.rc.b.ctx->obs.ds->eng.rx_mcast_copies, 2);
	cr_assert_eq(fx.rc.b.ctx->obs.ds->eng.rx_mcast_no_group, 0);
	cr_assert_eq(blue_hal_loopback_stat(fx.rc.b.hal, BLUE_STAT_REDIRECT), 1, "one frame");
	/* on the wire: the group's MAC and address, DestQP 0xFFFFFF */
	cr_assert_eq(fx.cap.n, 1);
	cr_assert_eq(blue_pkt_parse(fx.cap.frame, fx.cap.len, &p), 0);
	cr_assert_eq(memcmp(p.dst_mac, mac, 6), 0, "dst MAC of 239.1.2.3");
	cr_assert_eq(p.dqpn, BLUE_MCAST_QPN);
	cr_assert_eq(memcmp(&p.daddr, fx.grp.raw + 12, 4), 0);
	cr_assert_eq(p.ttl, 64, "the TTL unicast UD sends with");
	cr_assert_eq(blue_detach_mcast(fx.qb[0], &fx.grp, 0), 0);
	cr_assert_eq(blue_detach_mcast(fx.qb[1], &fx.grp, 0), 0);
	mc_fx_fini(&fx);
}

Test(mcast, qkey_mismatch_and_no_wqe_dropped_counted)
{
	struct blue_qp_attr a = { .qkey = 0x2222 };
	struct mc_fx fx;

	mc_fx_init(&fx, 3);
	cr_assert_eq(blue_modify_qp(fx.qb[2], &a, BLUE_QP_QKEY), 0);
	cr_assert_eq(blue_attach_mcast(fx.qb[0], &fx.grp, 0), 0);
	cr_assert_eq(blue_attach_mcast(fx.qb[1], &fx.grp, 0), 0);	/* no receive posted */
	cr_assert_eq(blue_attach_mcast(fx.qb[2], &fx.grp, 0), 0);	/* another Q_Key */
	post_recv_b(&fx, 0);
	post_recv_b(&fx, 2);
	send_group(&fx, fx.qa[0], 100, 2);
	expect_copies(&fx, 0x1, 100, 2);
	cr_assert_eq(fx.qb[2]->live->ud_bad_qkey, 1);
	cr_assert_eq(blue__engine_stats(fx.rc.b.ctx)->rx_bad_qkey, 1);
	cr_assert_eq(fx.qb[1]->live->ud_no_wqe, 1);
	cr_assert_eq(blue__engine_stats(fx.rc.b.ctx)->rx_ud_no_wqe, 1);
	/* qb[2]'s receive is still there: its Q_Key right, the next copy lands */
	a.qkey = QKEY;
	cr_assert_eq(blue_modify_qp(fx.qb[2], &a, BLUE_QP_QKEY), 0);
	post_recv_b(&fx, 0);
	send_group(&fx, fx.qa[0], 100, 3);
	expect_copies(&fx, 0x5, 100, 3);
	cr_assert_eq(blue_detach_mcast(fx.qb[0], &fx.grp, 0), 0);
	cr_assert_eq(blue_detach_mcast(fx.qb[1], &fx.grp, 0), 0);
	cr_assert_eq(blue_detach_mcast(fx.qb[2], &fx.grp, 0), 0);
	mc_fx_fini(&fx);
}

Test(mcast, detach_stops_delivery_last_one_stops_steering)
{
	struct mc_fx fx;

	mc_fx_init(&fx, 2);
	cr_assert_eq(blue_attach_mcast(fx.qb[0], &fx.grp, 0), 0);
	cr_assert_eq(blue_attach_mcast(fx.qb[1], &fx.grp, 0), 0);
	post_recv_b(&fx, 0);
	post_recv_b(&fx, 1);
	cr_assert_eq(blue_detach_mcast(fx.qb[0], &fx.grp, 0), 0);
	send_group(&fx, fx.qa[0], 64, 4);
	expect_copies(&fx, 0x2, 64, 4);
	cr_assert_eq(blue_detach_mcast(fx.qb[1], &fx.grp, 0), 0);
	cr_assert_null(blue__mcast_find(fx.rc.b.ctx, fx.grp.raw));
	post_recv_b(&fx, 1);
	send_group(&fx, fx.qa[0], 64, 5);
	rc_quiet(&fx.rc, fx.rc.b.rcq, 50);
	cr_assert_eq(blue_hal_loopback_stat(fx.rc.b.hal, BLUE_STAT_DROP_MCAST_UNJOINED), 1,
		     "the group's frame is dropped at steering once nobody holds it");
	mc_fx_fini(&fx);
}

Test(mcast, sender_device_gets_its_own_copy)
{
	struct blue_sge sge;
	struct blue_recv_wr wr = { .wr_id = 55, .sg_list = &sge, .num_sge = 1 }, *bad;
	struct blue_wc wc;
	struct mc_fx fx;

	mc_fx_init(&fx, 1);
	fx.qa[fx.na++] = ud_qp(&fx.rc.a, QKEY);
	cr_assert_eq(blue_attach_mcast(fx.qa[1], &fx.grp, 0), 0);
	cr_assert_eq(blue_attach_mcast(fx.qb[0], &fx.grp, 0), 0);
	sge = (struct blue_sge){ .addr = (uintptr_t)fx.buf_a + BUFLEN, .length = BUFLEN,
				 .lkey = fx.mr_a->lkey };
	cr_assert_eq(blue_post_recv(fx.qa[1], &wr, &bad), 0);
	post_recv_b(&fx, 0);
	send_group(&fx, fx.qa[0], 200, 6);
	expect_copies(&fx, 0x1, 200, 6);
	wc = rc_wait1(&fx.rc, fx.rc.a.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	cr_assert_eq(wc.qp_num, blue_qp_num(fx.qa[1]));
	cr_assert_eq(wc.src_qp, blue_qp_num(fx.qa[0]));
	cr_assert(rc_check(fx.buf_a + BUFLEN + BLUE_GRH_LEN, 200, 6));
	cr_assert_eq(blue__engine_stats(fx.rc.a.ctx)->tx_mcast_loop, 1);
	blue__obs_publish(fx.rc.a.ctx);
	cr_assert_eq(fx.rc.a.ctx->obs.ds->eng.tx_mcast_loop, 1);
	cr_assert_eq(blue_detach_mcast(fx.qa[1], &fx.grp, 0), 0);
	cr_assert_eq(blue_detach_mcast(fx.qb[0], &fx.grp, 0), 0);
	mc_fx_fini(&fx);
}

Test(mcast, attach_detach_answers)
{
	union blue_gid uni, v6 = { .raw = { 0xff, 0x0e, [15] = 0x42 } };
	struct mc_fx fx;
	struct blue_qp *rc;

	mc_fx_init(&fx, 1);
	fx.rc.b.qp = rc_qp_create(&fx.rc, &fx.rc.b);	/* an RC QP: fini destroys it */
	rc = fx.rc.b.qp;
	cr_assert_eq(blue_attach_mcast(rc, &fx.grp, 0), EINVAL, "RC QPs join nothing");
	group_gid(&uni, "10.1.2.3");
	cr_assert_eq(blue_attach_mcast(fx.qb[0], &uni, 0), EINVAL, "a unicast GID");
	cr_assert_eq(blue_attach_mcast(NULL, &fx.grp, 0), EINVAL);
	cr_assert_eq(blue_detach_mcast(fx.qb[0], &fx.grp, 0), EINVAL, "not attached");
	cr_assert_eq(blue_attach_mcast(fx.qb[0], &fx.grp, 0), 0);
	cr_assert_eq(blue_attach_mcast(fx.qb[0], &fx.grp, 0), 0, "twice: 0, as the kernel");
	cr_assert_eq(fx.qb[0]->nmcast, 1, "and attached once");
	cr_assert_eq(blue_attach_mcast(fx.qb[0], &v6, 0), 0, "an IPv6 group");
	cr_assert_eq(blue_destroy_qp(fx.qb[0]), EBUSY, "attached: the kernel refuses too");
	cr_assert_eq(blue_detach_mcast(fx.qb[0], &fx.grp, 0), 0);
	cr_assert_eq(blue_detach_mcast(fx.qb[0], &fx.grp, 0), EINVAL, "detached already");
	cr_assert_eq(blue_detach_mcast(fx.qb[0], &v6, 0), 0);
	cr_assert_eq(fx.rc.b.ctx->mcast.ngrp, 0);
	mc_fx_fini(&fx);
}

Test(mcast, limits_reported_and_enforced)
{
	struct blue_device_attr da;
	union blue_gid g;
	struct mc_fx fx;
	char ip[32];
	int i;

	mc_fx_init(&fx, MAXQ);
	cr_assert_eq(blue_query_device(fx.rc.b.ctx, &da), 0);
	cr_assert_eq(da.max_mcast_grp, BLUE_MAX_MCAST_GRP);
	cr_assert_eq(da.max_mcast_qp_attach, BLUE_MAX_MCAST_QP_ATTACH);
	cr_assert_eq(da.max_total_mcast_qp_attach, BLUE_MAX_MCAST_TOTAL_ATTACH);
	for (i = 0; i < (int)BLUE_MAX_MCAST_QP_ATTACH; i++)
		cr_assert_eq(blue_attach_mcast(fx.qb[i], &fx.grp, 0), 0, "QP %d", i);
	cr_assert_eq(blue_attach_mcast(fx.qb[MAXQ - 1], &fx.grp, 0), ENOMEM,
		     "one QP past max_mcast_qp_attach");
	for (i = 0; i < (int)BLUE_MAX_MCAST_QP_ATTACH; i++)
		cr_assert_eq(blue_detach_mcast(fx.qb[i], &fx.grp, 0), 0);
	for (i = 0; i < (int)BLUE_MAX_MCAST_GRP; i++) {
		snprintf(ip, sizeof(ip), "239.2.0.%d", i + 1);
		group_gid(&g, ip);
		cr_assert_eq(blue_attach_mcast(fx.qb[0], &g, 0), 0, "group %d", i);
	}
	group_gid(&g, "239.3.0.1");
	cr_assert_eq(blue_attach_mcast(fx.qb[1], &g, 0), ENOMEM, "one past max_mcast_grp");
	cr_assert_eq(fx.rc.b.ctx->mcast.ngrp, BLUE_MAX_MCAST_GRP);
	/* the total: more QPs in the groups there are, until max_total_mcast_qp_attach;
	 * attachment i is QP 1 + i % 16 in group 239.2.0.(1 + i / 16) */
	for (i = 0; fx.rc.b.ctx->mcast.nattach < BLUE_MAX_MCAST_TOTAL_ATTACH; i++) {
		snprintf(ip, sizeof(ip), "239.2.0.%d", i / (MAXQ - 2) + 1);
		group_gid(&g, ip);
		cr_assert_eq(blue_attach_mcast(fx.qb[1 + i % (MAXQ - 2)], &g, 0), 0);
	}
	cr_assert_eq(blue_attach_mcast(fx.qb[MAXQ - 1], &fx.grp, 0), ENOMEM,
		     "one past max_total_mcast_qp_attach");
	while (i--) {
		snprintf(ip, sizeof(ip), "239.2.0.%d", i / (MAXQ - 2) + 1);
		group_gid(&g, ip);
		cr_assert_eq(blue_detach_mcast(fx.qb[1 + i % (MAXQ - 2)], &g, 0), 0);
	}
	for (i = 0; i < (int)BLUE_MAX_MCAST_GRP; i++) {
		snprintf(ip, sizeof(ip), "239.2.0.%d", i + 1);
		group_gid(&g, ip);
		cr_assert_eq(blue_detach_mcast(fx.qb[0], &g, 0), 0);
	}
	cr_assert_eq(fx.rc.b.ctx->mcast.nattach, 0);
	cr_assert_eq(fx.rc.b.ctx->mcast.ngrp, 0);
	mc_fx_fini(&fx);
}
