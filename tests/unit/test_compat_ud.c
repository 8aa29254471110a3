// SPDX-License-Identifier: MIT
/*
 * UD through the verbs layer, as ibv_ud_pingpong and perftest -c UD drive it: UD QPs
 * (plain and extended create), the Q_Key in modify/query, ibv_create_ah, a UD send WR
 * (wr.ud) and ibv_wr_set_ud_addr, the completion's src_qp / wc_flags (IBV_WC_GRH) / sl
 * in ibv_poll_cq and in the extended CQ's read_* ops, and ibv_create_ah_from_wc /
 * ibv_init_ah_from_wc answering the sender.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <time.h>

#include "tests/unit/test_compat_fx.h"

#define QKEY	0x11111111u
#define GRH	40
#define RECV_OFF 4096

static void quiet(void)
{
	setenv("BLUE_LOG", "0", 1);
}

static struct ibv_qp *ud_create(struct cx_side *s, bool ex)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = ibv_cq_ex_to_cq(s->cq),
		.recv_cq = ibv_cq_ex_to_cq(s->cq),
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_UD,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = s->pd,
	};
	struct ibv_qp *qp;

	if (ex) {
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
	}
	qp = ibv_create_qp_ex(s->ctx, &a);
	cr_assert_not_null(qp, "ibv_create_qp_ex UD: %s", strerror(errno));
	cr_assert_eq(qp->qp_type, IBV_QPT_UD);
	return qp;
}

/* As ibv_ud_pingpong: INIT with P_Key index, port and Q_Key; RTR; RTS with SQ_PSN. */
static void ud_up(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = QKEY;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				   IBV_QP_QKEY), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x77;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
}

static struct ibv_ah *ah_to(struct cx_side *from, struct cx_side *to)
{
	struct ibv_ah_attr a = { .is_global = 1, .port_num = 1 };
	struct ibv_ah *ah;

	cr_assert_eq(ibv_query_gid(to->ctx, 1, 1, &a.grh.dgid), 0);
	a.grh.sgid_index = 1;
	a.grh.hop_limit = 64;
	ah = ibv_create_ah(from->pd, &a);
	cr_assert_not_null(ah, "ibv_create_ah: %s", strerror(errno));
	return ah;
}

static void post_recv(struct cx_side *s, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(s->buf + RECV_OFF), .length = len,
			       .lkey = s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 55, .sg_list = &sge, .num_sge = 1 }, *bad;

	cr_assert_eq(ibv_post_recv(s->qp, &wr, &bad), 0);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The next completion of @opcode on @s through ibv_poll_cq, driving the other side too;
 * other completions on the way must be successes. */
static struct ibv_wc poll_for(struct cx_fx *fx, struct cx_side *s, enum ibv_wc_opcode opcode)
{
	struct cx_side *other = s == &fx->a ? &fx->b : &fx->a;
	uint64_t end = now_ms() + CX_WAIT_MS;
	struct ibv_wc wc;

	for (;;) {
		int n = ibv_poll_cq(ibv_cq_ex_to_cq(s->cq), 1, &wc);

		cr_assert_geq(n, 0);
		if (n) {
			cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
			if (wc.opcode == opcode)
				return wc;
			continue;
		}
		cr_assert_eq(ibv_poll_cq(ibv_cq_ex_to_cq(other->cq), 0, NULL), 0);
		cr_assert_lt(now_ms(), end, "no completion within %d ms", CX_WAIT_MS);
	}
}

Test(compat_ud, pingpong_and_answer_from_wc, .init = quiet)
{
	struct cx_fx fx;
	struct ibv_ah *ah, *back;
	struct ibv_ah_attr aa;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	struct ibv_sge sge;
	struct ibv_send_wr wr, *bad;
	struct ibv_qp_ex *x;
	struct ibv_wc wc;
	union ibv_gid ga;

	cx_init_noqp(&fx);
	fx.a.qp = ud_create(&fx.a, false);
	fx.b.qp = ud_create(&fx.b, true);
	ud_up(fx.a.qp);
	ud_up(fx.b.qp);
	cr_assert_eq(ibv_query_qp(fx.a.qp, &qa, IBV_QP_QKEY, &qi), 0);
	cr_assert_eq(qa.qkey, QKEY);
	cr_assert_eq(qi.qp_type, IBV_QPT_UD);

	/* A -> B: plain ibv_post_send with wr.ud, polled with ibv_poll_cq */
	ah = ah_to(&fx.a, &fx.b);
	post_recv(&fx.b, GRH + 512);
	memset(fx.a.buf, 0x5a, 300);
	sge = (struct ibv_sge){ .addr = (uintptr_t)fx.a.buf, .length = 300, .lkey = fx.a.mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = fx.b.qp->qp_num;
	wr.wr.ud.remote_qkey = QKEY;
	cr_assert_eq(ibv_post_send(fx.a.qp, &wr, &bad), 0);
	wc = poll_for(&fx, &fx.b, IBV_WC_RECV);
	cr_assert_eq(wc.byte_len, GRH + 300);
	cr_assert_eq(wc.src_qp, fx.a.qp->qp_num);
	cr_assert_eq(wc.wc_flags & IBV_WC_GRH, IBV_WC_GRH, "wc_flags 0x%x", wc.wc_flags);
	cr_assert_eq(wc.sl, 0);
	cr_assert_eq(wc.pkey_index, 0);
	for (int i = 0; i < 300; i++)
		cr_assert_eq(fx.b.buf[RECV_OFF + GRH + i], 0x5a, "byte %d", i);

	/* the way back from the GRH */
	cr_assert_eq(ibv_init_ah_from_wc(fx.b.ctx, 1, &wc,
					 (struct ibv_grh *)(fx.b.buf + RECV_OFF), &aa), 0);
	cr_assert_eq(ibv_query_gid(fx.a.ctx, 1, 1, &ga), 0);
	cr_assert_eq(memcmp(aa.grh.dgid.raw, ga.raw, 16), 0);
	cr_assert_eq(aa.grh.sgid_index, 1);
	cr_assert_eq(aa.is_global, 1);
	back = ibv_create_ah_from_wc(fx.b.pd, &wc, (struct ibv_grh *)(fx.b.buf + RECV_OFF), 1);
	cr_assert_not_null(back, "ibv_create_ah_from_wc: %s", strerror(errno));

	/* B -> A: the extended API with ibv_wr_set_ud_addr; A reads it with read_* ops */
	post_recv(&fx.a, GRH + 512);
	memset(fx.b.buf, 0xa5, 100);
	x = ibv_qp_to_qp_ex(fx.b.qp);
	cr_assert_not_null(x);
	ibv_wr_start(x);
	x->wr_id = 2;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_imm(x, htonl(0x01020304));
	ibv_wr_set_ud_addr(x, back, wc.src_qp, QKEY);
	ibv_wr_set_sge(x, fx.b.mr->lkey, (uintptr_t)fx.b.buf, 100);
	cr_assert_eq(ibv_wr_complete(x), 0);
	cx_wait(&fx, &fx.a, &wc);
	if (wc.opcode == IBV_WC_SEND)	/* A's own send completion of the first message */
		cx_wait(&fx, &fx.a, &wc);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_RECV);
	cr_assert_eq(wc.byte_len, GRH + 100);
	cr_assert_eq(wc.src_qp, fx.b.qp->qp_num);
	cr_assert_eq(wc.wc_flags, IBV_WC_GRH | IBV_WC_WITH_IMM, "wc_flags 0x%x", wc.wc_flags);
	cr_assert_eq(wc.imm_data, htonl(0x01020304));
	cr_assert_eq(fx.a.buf[RECV_OFF + GRH + 99], 0xa5);

	cr_assert_eq(ibv_destroy_ah(back), 0);
	cr_assert_eq(ibv_destroy_ah(ah), 0);
	/* drain B's send completion so nothing is left behind */
	(void)poll_for(&fx, &fx.b, IBV_WC_SEND);
	cx_fini(&fx);
}

Test(compat_ud, ah_without_grh_is_refused, .init = quiet)
{
	struct cx_fx fx;
	struct ibv_ah_attr a = { .is_global = 0, .port_num = 1 };

	cx_init_noqp(&fx);
	errno = 0;
	cr_assert_null(ibv_create_ah(fx.a.pd, &a));
	cr_assert_eq(errno, EINVAL);
	cx_fini(&fx);
}
