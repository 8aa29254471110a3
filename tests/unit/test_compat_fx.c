// SPDX-License-Identifier: MIT
/* The compat fixture (test_compat_fx.h). */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "afxdp_hal/hal.h"
#include "runtime/device.h"
#include "tests/unit/test_compat_fx.h"

/* @s's PD, CQ and registered buffer on its context. */
static void side_objects(struct cx_side *s)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = 256, .wc_flags = IBV_WC_STANDARD_FLAGS };

	s->pd = ibv_alloc_pd(s->ctx);
	cr_assert_not_null(s->pd);
	s->cq = ibv_create_cq_ex(s->ctx, &ca);	/* the inline verbs_get_ctx_op dispatch */
	cr_assert_not_null(s->cq, "ibv_create_cq_ex: %s", strerror(errno));
	s->buf = calloc(1, CX_BUF);
	cr_assert_not_null(s->buf);
	s->mr = ibv_reg_mr(s->pd, s->buf, CX_BUF, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_RELAXED_ORDERING);
	cr_assert_not_null(s->mr, "ibv_reg_mr: %s", strerror(errno));
}

static void side_open(struct cx_side *s, struct blue_hal *hal, uint8_t last)
{
	const uint8_t mac[6] = { 0x02, 0xb1, 0x0c, 0, 0, last };
	struct blue_context *bctx;

	memset(s, 0, sizeof(*s));
	s->hal = hal;
	memcpy(s->mac, mac, 6);
	s->ip = htonl(0x0ac90c00u | last);	/* 10.201.12.x: never leaves the process */
	bctx = blue_open_device_hal(hal, s->mac, s->ip);
	cr_assert_not_null(bctx);
	s->dev.used = true;
	snprintf(s->dev.ifname, sizeof(s->dev.ifname), "lb%u", last);
	snprintf(s->dev.dev.name, sizeof(s->dev.dev.name), "lb%u", last);
	s->ctx = bv_context_wrap(bctx, &s->dev);
	cr_assert_not_null(s->ctx);
	side_objects(s);
}

void cx_init_shared_noqp(struct cx_fx *fx)
{
	struct blue_hal *ha, *hb;

	memset(fx, 0, sizeof(*fx));
	fx->shared = true;
	cr_assert_eq(blue_hal_loopback_pair(&ha, &hb), 0);
	side_open(&fx->a, ha, 1);
	fx->b.hal = hb;
	memcpy(fx->b.mac, fx->a.mac, 6);
	fx->b.ip = fx->a.ip;
	/* b.dev stays unused: b is a's device */
	fx->b.ctx = bv_context_wrap(bv_ctx(fx->a.ctx)->bctx, &fx->a.dev);
	cr_assert_not_null(fx->b.ctx, "second context: %s", strerror(errno));
	side_objects(&fx->b);
}

void cx_init_noqp(struct cx_fx *fx)
{
	struct blue_hal *ha, *hb;

	memset(fx, 0, sizeof(*fx));
	cr_assert_eq(blue_hal_loopback_pair(&ha, &hb), 0);
	side_open(&fx->a, ha, 1);
	side_open(&fx->b, hb, 2);
	/* the loopback HAL has no kernel neighbour table */
	cr_assert_eq(blue__set_neigh(bv_ctx(fx->a.ctx)->bctx, fx->b.ip, fx->b.mac), 0);
	cr_assert_eq(blue__set_neigh(bv_ctx(fx->b.ctx)->bctx, fx->a.ip, fx->a.mac), 0);
}

struct ibv_qp *cx_qp_create(struct cx_side *s, uint64_t send_ops)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = ibv_cq_ex_to_cq(s->cq),
		.recv_cq = ibv_cq_ex_to_cq(s->cq),
		.cap = { .max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 4,
			 .max_recv_sge = 4, .max_inline_data = 128 },
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = s->pd,
	};
	struct ibv_qp *qp;

	if (send_ops) {
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = send_ops;
	}
	qp = ibv_create_qp_ex(s->ctx, &a);
	cr_assert_not_null(qp, "ibv_create_qp_ex: %s", strerror(errno));
	cr_assert_geq(a.cap.max_inline_data, 128);
	return qp;
}

int cx_qp_rtr(struct cx_side *s, struct cx_side *peer, uint8_t dest)
{
	struct ibv_qp_attr a;
	union ibv_gid dgid;

	cr_assert_eq(ibv_query_gid(peer->ctx, 1, 1, &dgid), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = 0x100;
	a.max_dest_rd_atomic = dest;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = dgid;
	a.ah_attr.grh.sgid_index = 1;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	return ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			     IBV_QP_MIN_RNR_TIMER);
}

/* RESET -> INIT -> RTR -> RTS, as ibv_rc_pingpong does it (GID index 1). */
static void qp_connect(struct cx_side *s, struct cx_side *peer, uint8_t depth, uint8_t dest)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	cr_assert_eq(ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				   IBV_QP_ACCESS_FLAGS), 0);
	cr_assert_eq(cx_qp_rtr(s, peer, dest ? dest : 4), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x100;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = depth ? depth : 4;
	cr_assert_eq(ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				   IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				   IBV_QP_MAX_QP_RD_ATOMIC), 0);
	cr_assert_eq(s->qp->state, IBV_QPS_RTS);
}

void cx_connect(struct cx_fx *fx)
{
	qp_connect(&fx->a, &fx->b, fx->init_depth, fx->dest_depth);
	qp_connect(&fx->b, &fx->a, fx->init_depth, fx->dest_depth);
}

void cx_init(struct cx_fx *fx, uint64_t send_ops)
{
	cx_init_noqp(fx);
	fx->a.qp = cx_qp_create(&fx->a, send_ops);
	fx->b.qp = cx_qp_create(&fx->b, send_ops);
	cx_connect(fx);
}

static void side_close(struct cx_side *s)
{
	if (s->qp)
		cr_assert_eq(ibv_destroy_qp(s->qp), 0);
	cr_assert_eq(ibv_dereg_mr(s->mr), 0);
	cr_assert_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(s->cq)), 0);
	cr_assert_eq(ibv_dealloc_pd(s->pd), 0);
	cr_assert_eq(ibv_close_device(s->ctx), 0);
	blue_hal_destroy(s->hal);
	free(s->buf);
}

void cx_fini(struct cx_fx *fx)
{
	if (fx->shared) {
		/* b's context first: the libblue context closes with the device's last */
		side_close(&fx->b);
		side_close(&fx->a);
		return;
	}
	side_close(&fx->a);
	side_close(&fx->b);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void cx_wait(struct cx_fx *fx, struct cx_side *s, struct ibv_wc *wc)
{
	struct cx_side *other = s == &fx->a ? &fx->b : &fx->a;
	uint64_t end = now_ms() + CX_WAIT_MS;
	struct ibv_poll_cq_attr pa = { 0 };
	int r;

	for (;;) {
		r = ibv_start_poll(s->cq, &pa);
		if (r == 0)
			break;
		cr_assert_eq(r, ENOENT, "start_poll: %d", r);
		cr_assert_eq(ibv_poll_cq(ibv_cq_ex_to_cq(other->cq), 0, NULL), 0);
		cr_assert_lt(now_ms(), end, "no completion within %d ms", CX_WAIT_MS);
	}
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = s->cq->wr_id;
	wc->status = s->cq->status;
	wc->opcode = ibv_wc_read_opcode(s->cq);
	wc->byte_len = ibv_wc_read_byte_len(s->cq);
	wc->imm_data = ibv_wc_read_imm_data(s->cq);
	wc->wc_flags = ibv_wc_read_wc_flags(s->cq);
	wc->qp_num = ibv_wc_read_qp_num(s->cq);
	wc->src_qp = ibv_wc_read_src_qp(s->cq);
	wc->sl = ibv_wc_read_sl(s->cq);
	ibv_end_poll(s->cq);
}
