// SPDX-License-Identifier: MIT
/*
 * UC QPs through the verbs layer, the way ibv_uc_pingpong and perftest -c UC drive
 * them: ibv_create_qp / ibv_create_qp_ex with IBV_QPT_UC, the modify masks those
 * programs pass (and RC's extra bits refused), ibv_query_qp's type, SEND with
 * immediate and RDMA WRITE (plain and through ibv_wr_*) with the bytes compared, and
 * READ refused at post time.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "tests/unit/test_compat_fx.h"

static struct ibv_qp *uc_create(struct cx_side *s, bool ex)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = ibv_cq_ex_to_cq(s->cq),
		.recv_cq = ibv_cq_ex_to_cq(s->cq),
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_UC,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = s->pd,
	};
	struct ibv_qp *qp;

	if (ex) {
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE |
				   IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
		qp = ibv_create_qp_ex(s->ctx, &a);
	} else {
		qp = ibv_create_qp(s->pd, (struct ibv_qp_init_attr *)&a);
	}
	cr_assert_not_null(qp, "UC QP: %s", strerror(errno));
	cr_assert_eq(qp->qp_type, IBV_QPT_UC);
	return qp;
}

/* ibv_uc_pingpong's modify calls (INIT with the access flags, RTR, RTS). */
static void uc_connect(struct cx_side *s, struct cx_side *peer)
{
	struct ibv_qp_attr a;
	union ibv_gid dgid;
	const int rtr = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	cr_assert_eq(ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				   IBV_QP_ACCESS_FLAGS), 0);
	cr_assert_eq(ibv_query_gid(peer->ctx, 1, 1, &dgid), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = 0x100;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = dgid;
	a.ah_attr.grh.sgid_index = 1;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	/* RC's RTR bits are not UC's (IBA 11.2.4): a clear EINVAL, as rxe answers */
	errno = 0;
	cr_assert_eq(ibv_modify_qp(s->qp, &a, rtr | IBV_QP_MAX_DEST_RD_ATOMIC |
				   IBV_QP_MIN_RNR_TIMER), EINVAL);
	cr_assert_eq(ibv_modify_qp(s->qp, &a, rtr), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x100;
	a.timeout = 14;
	cr_assert_eq(ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT),
		     EINVAL);
	cr_assert_eq(ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
	cr_assert_eq(s->qp->state, IBV_QPS_RTS);
}

static void uc_init(struct cx_fx *fx, bool ex)
{
	cx_init_noqp(fx);
	fx->a.qp = uc_create(&fx->a, ex);
	fx->b.qp = uc_create(&fx->b, ex);
	uc_connect(&fx->a, &fx->b);
	uc_connect(&fx->b, &fx->a);
}

static void post_recv(struct cx_side *s, uint64_t wr_id, uint32_t off, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)s->buf + off, .length = len,
			       .lkey = s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	cr_assert_eq(ibv_post_recv(s->qp, &wr, &bad), 0);
}

Test(compat_uc, send_imm_and_write_with_pingpong_masks)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr qa;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct cx_fx fx;

	uc_init(&fx, false);
	cr_assert_eq(ibv_query_qp(fx.a.qp, &qa, IBV_QP_STATE, &ia), 0);
	cr_assert_eq(ia.qp_type, IBV_QPT_UC);
	cr_assert_eq(qa.qp_state, IBV_QPS_RTS);
	for (int i = 0; i < 3000; i++)
		fx.a.buf[i] = (uint8_t)(i * 7 + 1);
	post_recv(&fx.b, 9, 4096, 4000);
	/* a 3-packet SEND with immediate */
	sge = (struct ibv_sge){ .addr = (uintptr_t)fx.a.buf, .length = 3000,
				.lkey = fx.a.mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.imm_data = htonl(0x1234);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	cr_assert_eq(ibv_post_send(fx.a.qp, &wr, &bad), 0);
	cx_wait(&fx, &fx.a, &wc);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_SEND);
	cx_wait(&fx, &fx.b, &wc);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_RECV);
	cr_assert_eq(wc.wr_id, 9);
	cr_assert_eq(wc.byte_len, 3000);
	cr_assert(wc.wc_flags & IBV_WC_WITH_IMM);
	cr_assert_eq(ntohl(wc.imm_data), 0x1234);
	cr_assert_eq(memcmp(fx.b.buf + 4096, fx.a.buf, 3000), 0);
	/* an RDMA WRITE of 2 KiB: A's completion, B's bytes */
	wr.wr_id = 2;
	wr.opcode = IBV_WR_RDMA_WRITE;
	sge.length = 2048;
	wr.wr.rdma.remote_addr = (uintptr_t)fx.b.buf;
	wr.wr.rdma.rkey = fx.b.mr->rkey;
	cr_assert_eq(ibv_post_send(fx.a.qp, &wr, &bad), 0);
	cx_wait(&fx, &fx.a, &wc);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_RDMA_WRITE);
	for (int n = 0; n < 1000 && memcmp(fx.b.buf, fx.a.buf, 2048); n++)
		cr_assert_eq(ibv_poll_cq(ibv_cq_ex_to_cq(fx.b.cq), 0, NULL), 0);
	cr_assert_eq(memcmp(fx.b.buf, fx.a.buf, 2048), 0);
	/* READ has no place on UC */
	wr.wr_id = 3;
	wr.opcode = IBV_WR_RDMA_READ;
	bad = NULL;
	cr_assert_eq(ibv_post_send(fx.a.qp, &wr, &bad), EINVAL);
	cr_assert_eq(bad, &wr);
	cx_fini(&fx);
}

Test(compat_uc, write_with_imm_through_wr_api)
{
	struct ibv_qp_ex *x;
	struct ibv_wc wc;
	struct cx_fx fx;

	uc_init(&fx, true);
	for (int i = 0; i < 1500; i++)
		fx.a.buf[i] = (uint8_t)(i * 3 + 5);
	post_recv(&fx.b, 4, 0, 0);
	x = ibv_qp_to_qp_ex(fx.a.qp);
	cr_assert_not_null(x);
	ibv_wr_start(x);
	x->wr_id = 11;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write_imm(x, fx.b.mr->rkey, (uintptr_t)fx.b.buf + 100, htonl(77));
	ibv_wr_set_sge(x, fx.a.mr->lkey, (uintptr_t)fx.a.buf, 1500);
	cr_assert_eq(ibv_wr_complete(x), 0);
	cx_wait(&fx, &fx.a, &wc);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 11);
	cx_wait(&fx, &fx.b, &wc);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	cr_assert_eq(wc.byte_len, 1500);
	cr_assert_eq(ntohl(wc.imm_data), 77);
	cr_assert_eq(memcmp(fx.b.buf + 100, fx.a.buf, 1500), 0);
	cx_fini(&fx);
}
