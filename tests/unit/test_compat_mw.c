// SPDX-License-Identifier: MIT
/*
 * Memory windows through the verbs API (compat/mw.c, qp.c, qp_ex.c, cq.c): the inline
 * ibv_alloc_mw/ibv_bind_mw dispatch, IBV_WR_BIND_MW / SEND_WITH_INV / LOCAL_INV in
 * ibv_post_send and the qp_ex builders, and the receive's IBV_WC_WITH_INV with its
 * invalidated rkey read both by ibv_poll_cq and by ibv_wc_read_invalidated_rkey().
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <time.h>

#include "tests/unit/test_compat_fx.h"

#define MW_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_BIND_MW | \
		IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_SEND_WITH_INV)

static uint64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* One completion of @s through ibv_poll_cq, driving the other side, bounded. */
static struct ibv_wc poll1(struct cx_fx *fx, struct cx_side *s)
{
	struct cx_side *o = s == &fx->a ? &fx->b : &fx->a;
	uint64_t end = ms_now() + CX_WAIT_MS;
	struct ibv_wc wc;
	int n;

	for (;;) {
		n = ibv_poll_cq(ibv_cq_ex_to_cq(s->cq), 1, &wc);
		cr_assert_geq(n, 0);
		if (n == 1)
			return wc;
		cr_assert_eq(ibv_poll_cq(ibv_cq_ex_to_cq(o->cq), 0, NULL), 0);
		cr_assert_lt(ms_now(), end, "no completion within %d ms", CX_WAIT_MS);
	}
}

/* A WRITEs 64 bytes of its buffer to @va under @rkey. */
static struct ibv_wc a_write(struct cx_fx *fx, uint32_t rkey, uint64_t va)
{
	struct ibv_sge sge = { (uintptr_t)fx->a.buf, 64, fx->a.mr->lkey };
	struct ibv_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 11;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = va;
	wr.wr.rdma.rkey = rkey;
	cr_assert_eq(ibv_post_send(fx->a.qp, &wr, &bad), 0);
	return poll1(fx, &fx->a);
}

Test(compat_mw, type2_bind_write_send_with_invalidate)
{
	static uint8_t win[4096], copy[4096];
	struct ibv_send_wr wr, *bad;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_sge rsge;
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_qp_ex *x;
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct ibv_wc wc;
	struct cx_fx fx;
	uint32_t key;
	uint64_t end;
	int r;

	cx_init(&fx, MW_OPS);
	memset(win, 0x5a, sizeof(win));
	mr = ibv_reg_mr(fx.b.pd, win, sizeof(win), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	cr_assert_not_null(mr, "reg_mr with MW_BIND: %s", strerror(errno));
	mw = ibv_alloc_mw(fx.b.pd, IBV_MW_TYPE_2);
	cr_assert_not_null(mw, "ibv_alloc_mw: %s", strerror(errno));
	cr_assert_eq(mw->type, IBV_MW_TYPE_2);
	cr_assert_eq(mw->pd, fx.b.pd);
	key = ibv_inc_rkey(mw->rkey);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 21;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = key;
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){
		.mr = mr, .addr = (uintptr_t)win + 512, .length = 1024,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	cr_assert_eq(ibv_post_send(fx.b.qp, &wr, &bad), 0);
	wc = poll1(&fx, &fx.b);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "bind: %s", ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, IBV_WC_BIND_MW);
	cr_assert_eq(wc.wr_id, 21);

	wc = a_write(&fx, key, (uintptr_t)win + 512);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "write: %s", ibv_wc_status_str(wc.status));
	cr_assert_eq(memcmp(win + 512, fx.a.buf, 64), 0, "written bytes differ");

	/* B's receive, A's SEND with invalidate through the qp_ex builders */
	rsge = (struct ibv_sge){ (uintptr_t)fx.b.buf, 256, fx.b.mr->lkey };
	memset(&rwr, 0, sizeof(rwr));
	rwr.wr_id = 22;
	rwr.sg_list = &rsge;
	rwr.num_sge = 1;
	cr_assert_eq(ibv_post_recv(fx.b.qp, &rwr, &rbad), 0);
	x = ibv_qp_to_qp_ex(fx.a.qp);
	ibv_wr_start(x);
	x->wr_id = 23;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_inv(x, key);
	ibv_wr_set_sge(x, fx.a.mr->lkey, (uintptr_t)fx.a.buf, 40);
	cr_assert_eq(ibv_wr_complete(x), 0);
	/* the receive through the extended CQ's accessors */
	end = ms_now() + CX_WAIT_MS;
	while ((r = ibv_start_poll(fx.b.cq, &pa)) == ENOENT) {
		cr_assert_eq(ibv_poll_cq(ibv_cq_ex_to_cq(fx.a.cq), 0, NULL), 0);
		cr_assert_lt(ms_now(), end, "no receive completion");
	}
	cr_assert_eq(r, 0);
	cr_assert_eq(fx.b.cq->status, IBV_WC_SUCCESS, "recv: %s",
		     ibv_wc_status_str(fx.b.cq->status));
	cr_assert_eq(fx.b.cq->wr_id, 22);
	cr_assert_eq(ibv_wc_read_opcode(fx.b.cq), IBV_WC_RECV);
	cr_assert_eq(ibv_wc_read_byte_len(fx.b.cq), 40);
	cr_assert(ibv_wc_read_wc_flags(fx.b.cq) & IBV_WC_WITH_INV, "no IBV_WC_WITH_INV");
	cr_assert_eq(ibv_wc_read_invalidated_rkey(fx.b.cq), key);
	ibv_end_poll(fx.b.cq);
	wc = poll1(&fx, &fx.a);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "send_inv: %s", ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.wr_id, 23);
	cr_assert_eq(wc.opcode, IBV_WC_SEND);

	/* the window is closed: the WRITE is refused and touches nothing */
	memcpy(copy, win, sizeof(win));
	memset(fx.a.buf, 0xee, 64);
	wc = a_write(&fx, key, (uintptr_t)win + 512);
	cr_assert_eq(wc.status, IBV_WC_REM_ACCESS_ERR, "after invalidate: %s",
		     ibv_wc_status_str(wc.status));
	cr_assert_eq(memcmp(copy, win, sizeof(win)), 0, "a refused WRITE changed memory");
	cr_assert_eq(ibv_dealloc_mw(mw), 0);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	cx_fini(&fx);
}

/* Type 1 by ibv_bind_mw; the invalidation of a type 2 by wr_local_inv; the poll's fields. */
Test(compat_mw, type1_bind_and_local_invalidate)
{
	static uint8_t win[4096];
	struct ibv_mw_bind b;
	struct ibv_mw_bind_info bi;
	struct ibv_qp_ex *x;
	struct ibv_mr *mr;
	struct ibv_mw *mw1, *mw2;
	struct ibv_wc wc;
	struct cx_fx fx;
	uint32_t k0, key2;

	cx_init(&fx, MW_OPS);
	mr = ibv_reg_mr(fx.b.pd, win, sizeof(win), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	cr_assert_not_null(mr);
	mw1 = ibv_alloc_mw(fx.b.pd, IBV_MW_TYPE_1);
	cr_assert_not_null(mw1);
	k0 = mw1->rkey;
	b = (struct ibv_mw_bind){ .wr_id = 31, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = mr, .addr = (uintptr_t)win, .length = sizeof(win),
			       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE } };
	cr_assert_eq(ibv_bind_mw(fx.b.qp, mw1, &b), 0);
	cr_assert_eq(mw1->rkey, ibv_inc_rkey(k0), "ibv_bind_mw's new key is mw->rkey");
	wc = poll1(&fx, &fx.b);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "bind: %s", ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, IBV_WC_BIND_MW);
	cr_assert_eq(wc.wr_id, 31);
	wc = a_write(&fx, mw1->rkey, (uintptr_t)win + 100);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "write: %s", ibv_wc_status_str(wc.status));
	cr_assert_eq(memcmp(win + 100, fx.a.buf, 64), 0);
	cr_assert_eq(ibv_dereg_mr(mr), EINVAL, "a bound window keeps its MR (rxe)");

	/* a type 2 through wr_bind_mw, then wr_local_inv, each completing in order */
	mw2 = ibv_alloc_mw(fx.b.pd, IBV_MW_TYPE_2);
	cr_assert_not_null(mw2);
	key2 = ibv_inc_rkey(mw2->rkey);
	bi = (struct ibv_mw_bind_info){ .mr = mr, .addr = (uintptr_t)win, .length = 64,
					.mw_access_flags = IBV_ACCESS_REMOTE_READ };
	x = ibv_qp_to_qp_ex(fx.b.qp);
	ibv_wr_start(x);
	x->wr_id = 32;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(x, mw2, key2, &bi);
	x->wr_id = 33;
	ibv_wr_local_inv(x, key2);
	cr_assert_eq(ibv_wr_complete(x), 0);
	wc = poll1(&fx, &fx.b);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "wr_bind_mw: %s", ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, IBV_WC_BIND_MW);
	cr_assert_eq(wc.wr_id, 32);
	wc = poll1(&fx, &fx.b);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "local_inv: %s", ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, IBV_WC_LOCAL_INV);
	cr_assert_eq(wc.wr_id, 33);
	cr_assert_eq(ibv_dealloc_mw(mw2), 0);
	cr_assert_eq(ibv_dealloc_mw(mw1), 0);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	cx_fini(&fx);
}

Test(compat_mw, device_says_windows)
{
	struct ibv_device_attr_ex ax;
	struct ibv_device_attr a;
	struct cx_fx fx;

	cx_init_noqp(&fx);
	cr_assert_eq(ibv_query_device(fx.a.ctx, &a), 0);
	cr_assert(a.device_cap_flags & IBV_DEVICE_MEM_WINDOW, "IBV_DEVICE_MEM_WINDOW");
	cr_assert(a.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B, "TYPE_2B");
	cr_assert_gt(a.max_mw, 0);
	cr_assert_eq(ibv_query_device_ex(fx.a.ctx, NULL, &ax), 0);
	cr_assert(ax.orig_attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B);
	cr_assert_eq(ax.orig_attr.max_mw, a.max_mw);
	cx_fini(&fx);
}
