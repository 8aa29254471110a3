// SPDX-License-Identifier: MIT
/*
 * The engine trusts only its own copy of a WQE when another process writes the rings
 * (daemon mode, runtime/wqe_admit.c). Both loopback contexts are made with shared rings,
 * as blue-manager makes its own, so the engine copies and checks every WQE; the test
 * plays the other process by writing the ring slots after post_* filled them, as a
 * hostile application could: more SGEs than the slot holds, an inline length past it, a
 * memory-window bind naming pointers, a receive WQE with a lying SGE count, a producer
 * index 2^31 ahead. Each is refused on that QP alone (logged with the WQE's wr_id), and
 * no byte of the peer's memory changes. A WQE changed after the engine took it in goes
 * out as it was taken.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/qp.h"
#include "runtime/srq.h"
#include "runtime/wq.h"
#include "tests/unit/rc_fixture.h"

#define WAIT_MS 3000

struct mem {
	uint8_t *buf;
	struct blue_mr *mr;
};

static void mem_reg(struct mem *m, struct rc_side *s, size_t len, int fill)
{
	m->buf = calloc(1, len);
	cr_assert_not_null(m->buf);
	if (fill >= 0)
		rc_fill(m->buf, len, (unsigned int)fill);
	m->mr = blue_reg_mr(s->pd, m->buf, len, BLUE_ACCESS_LOCAL_WRITE |
			    BLUE_ACCESS_REMOTE_WRITE | BLUE_ACCESS_REMOTE_READ);
	cr_assert_not_null(m->mr);
}

static void mem_unreg(struct mem *m)
{
	cr_assert_eq(blue_dereg_mr(m->mr), 0);
	free(m->buf);
}

static bool all_zero(const uint8_t *b, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (b[i])
			return false;
	return true;
}

/* Both sides' QPs made on contexts whose rings are shared, as blue-manager's are. */
static void fx_shared(struct rc_fx *fx)
{
	rc_fx_init_noqp(fx, NULL);
	fx->a.ctx->shared_rings = fx->b.ctx->shared_rings = true;
	rc_qp_create(fx, &fx->a);
	rc_qp_create(fx, &fx->b);
	cr_assert_not_null(fx->a.qp->sq_copy, "a shared-ring QP has the engine's copies");
	rc_qp_connect(fx, &fx->a, &fx->b, fx->o.sq_psn_a, fx->o.sq_psn_b);
	rc_qp_connect(fx, &fx->b, &fx->a, fx->o.sq_psn_b, fx->o.sq_psn_a);
}

static void post_write(struct rc_side *s, uint64_t id, struct mem *src, uint32_t len,
		       struct mem *dst, uint32_t flags)
{
	struct blue_sge sge = { .addr = (uintptr_t)src->buf, .length = len,
				.lkey = src->mr->lkey };
	struct blue_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = BLUE_WR_RDMA_WRITE,
		.send_flags = BLUE_SEND_SIGNALED | flags,
	};

	wr.wr.rdma.remote_addr = (uintptr_t)dst->buf;
	wr.wr.rdma.rkey = dst->mr->rkey;
	rc_post_send(s, &wr);
}

/* The WQE post_send just wrote, as the other process sees it in the ring. */
static struct blue_send_wqe *last_posted(struct rc_side *s)
{
	return blue_sq_wqe(&s->qp->sq, blue_ring_prod_own(&s->qp->sq.ring) - 1);
}

Test(wqe_admit, checked_copies_carry_traffic)
{
	struct mem src, dst;
	struct rc_fx fx;
	struct blue_wc wc;
	int i;

	fx_shared(&fx);
	mem_reg(&src, &fx.a, 65536, 7);
	mem_reg(&dst, &fx.b, 65536, -1);
	for (i = 0; i < 40; i++) {
		post_write(&fx.a, (uint64_t)i, &src, 1u << (i % 17), &dst, 0);
		wc = rc_wait1(&fx, fx.a.scq, WAIT_MS);
		cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "WRITE %d: status %d", i, wc.status);
		cr_assert_eq(wc.wr_id, (uint64_t)i);
	}
	cr_assert(rc_check(dst.buf, 65536, 7), "the bytes written are the source's");
	cr_assert_eq(fx.a.qp->sq_admit, 40u, "each WQE taken in once");
	mem_unreg(&src);
	mem_unreg(&dst);
	rc_fx_fini(&fx);
}

static void refused_case(void (*spoil)(struct blue_send_wqe *w), bool inline_data)
{
	struct mem src, dst;
	struct rc_fx fx;
	struct blue_wc wc;

	fx_shared(&fx);
	mem_reg(&src, &fx.a, 4096, 3);
	mem_reg(&dst, &fx.b, 4096, -1);
	post_write(&fx.a, 77, &src, 64, &dst, inline_data ? BLUE_SEND_INLINE : 0);
	spoil(last_posted(&fx.a));
	wc = rc_wait1(&fx, fx.a.scq, WAIT_MS);
	cr_assert_eq(wc.wr_id, 77);
	cr_assert_eq(wc.status, BLUE_WC_LOC_QP_OP_ERR, "status %d", wc.status);
	cr_assert_eq(fx.a.qp->live->state, BLUE_QPS_ERR);
	cr_assert(all_zero(dst.buf, 4096), "a refused WQE changed the peer's memory");
	mem_unreg(&src);
	mem_unreg(&dst);
	rc_fx_fini(&fx);
}

static void too_many_sges(struct blue_send_wqe *w)
{
	w->num_sge = 100000;
}

static void inline_past_slot(struct blue_send_wqe *w)
{
	w->length = 1u << 20;
}

static void bind_from_ring(struct blue_send_wqe *w)
{
	w->opcode = BLUE_WR_BIND_MW;
	w->bind.mw = (struct blue_mw *)(uintptr_t)0x1000;
	w->bind.mr = (struct blue_mr *)(uintptr_t)0x2000;
}

static void length_not_sum(struct blue_send_wqe *w)
{
	w->length = 4096;
}

Test(wqe_admit, sge_count_past_the_slot_refused)
{
	refused_case(too_many_sges, false);
}

Test(wqe_admit, inline_length_past_the_slot_refused)
{
	refused_case(inline_past_slot, true);
}

Test(wqe_admit, window_bind_from_a_ring_refused)
{
	refused_case(bind_from_ring, false);
}

Test(wqe_admit, length_not_the_sge_sum_refused)
{
	refused_case(length_not_sum, false);
}

Test(wqe_admit, changed_after_taken_in_goes_as_taken)
{
	struct mem src, dst, other;
	struct blue_send_wqe *w;
	struct rc_fx fx;
	struct blue_wc wc;

	fx_shared(&fx);
	mem_reg(&src, &fx.a, 4096, 5);
	mem_reg(&dst, &fx.b, 4096, -1);
	mem_reg(&other, &fx.b, 4096, -1);
	post_write(&fx.a, 1, &src, 4096, &dst, 0);
	cr_assert_eq(blue__sq_admit(fx.a.qp), 1u);
	/* the other process now points the WQE elsewhere and makes it longer */
	w = last_posted(&fx.a);
	w->remote_addr = (uintptr_t)other.buf;
	w->rkey = other.mr->rkey;
	w->num_sge = 100000;
	wc = rc_wait1(&fx, fx.a.scq, WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "status %d", wc.status);
	cr_assert(rc_check(dst.buf, 4096, 5), "the WRITE went where it was posted to");
	cr_assert(all_zero(other.buf, 4096), "a WQE changed after it was taken in was used");
	mem_unreg(&src);
	mem_unreg(&dst);
	mem_unreg(&other);
	rc_fx_fini(&fx);
}

Test(wqe_admit, receive_wqe_sge_lie_fails_that_message_only)
{
	struct mem src, dst;
	struct blue_recv_wqe *rw;
	struct rc_fx fx;
	struct blue_sge sge;
	struct blue_send_wr wr = { 0 };
	struct blue_wc wc;

	fx_shared(&fx);
	mem_reg(&src, &fx.a, 4096, 9);
	mem_reg(&dst, &fx.b, 4096, -1);
	rc_post_recv(&fx.b, 5, dst.buf, 4096, dst.mr->lkey);
	rw = blue_rq_wqe(&fx.b.qp->rq, blue_ring_prod_own(&fx.b.qp->rq.ring) - 1);
	rw->num_sge = 100000;
	sge = (struct blue_sge){ .addr = (uintptr_t)src.buf, .length = 256, .lkey = src.mr->lkey };
	wr.wr_id = 6;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = BLUE_WR_SEND;
	wr.send_flags = BLUE_SEND_SIGNALED;
	rc_post_send(&fx.a, &wr);
	wc = rc_wait1(&fx, fx.b.rcq, WAIT_MS);
	cr_assert_eq(wc.wr_id, 5);
	cr_assert_neq(wc.status, BLUE_WC_SUCCESS, "a receive WQE that lied took the message");
	wc = rc_wait1(&fx, fx.a.scq, WAIT_MS);
	cr_assert_eq(wc.wr_id, 6);
	cr_assert_neq(wc.status, BLUE_WC_SUCCESS);
	cr_assert(all_zero(dst.buf, 4096), "a refused receive WQE was written");
	mem_unreg(&src);
	mem_unreg(&dst);
	rc_fx_fini(&fx);
}

Test(wqe_admit, producer_index_lie_walks_one_ring_at_most)
{
	struct rc_fx fx;
	struct blue_wc wc[64];
	uint32_t size;
	int n = 0, got;

	fx_shared(&fx);
	size = blue_ring_size(&fx.a.qp->sq.ring);
	/* the other process claims 2^31 WQEs; the slots hold zeros (opcode 0: a WRITE of 0) */
	__atomic_store_n(&fx.a.qp->sq.ring.hdr->prod, 1u << 31, __ATOMIC_RELEASE);
	cr_assert_leq(blue__sq_admit(fx.a.qp), size, "taken in past one ring");
	for (int i = 0; i < 200 && n < (int)size; i++) {
		got = rc_poll(&fx, fx.a.scq, wc, 64, 20);
		n += got;
		if (!got && fx.a.qp->live->state == BLUE_QPS_ERR)
			break;
	}
	cr_assert_leq(n, (int)size, "more completions than the ring holds: %d", n);
	rc_fx_fini(&fx);
}

Test(wqe_admit, srq_wqe_sge_lie_fails_that_message_only)
{
	struct mem src, dst;
	struct blue_srq_attr sa = { .max_wr = 8, .max_sge = 2 };
	struct blue_recv_wr rwr = { 0 };
	struct blue_recv_wqe *rw;
	struct blue_qp_init_attr ia = { 0 };
	struct blue_srq *srq;
	struct blue_sge sge, rsge;
	struct blue_send_wr wr = { 0 };
	struct rc_fx fx;
	struct blue_wc wc;

	/* b's QP takes its receives from an SRQ whose ring another process writes */
	rc_fx_init_noqp(&fx, NULL);
	fx.a.ctx->shared_rings = fx.b.ctx->shared_rings = true;
	rc_qp_create(&fx, &fx.a);
	srq = blue_create_srq(fx.b.pd, &sa, NULL);
	cr_assert_not_null(srq);
	ia.send_cq = fx.b.scq;
	ia.recv_cq = fx.b.rcq;
	ia.srq = srq;
	ia.qp_type = BLUE_QPT_RC;
	ia.cap.max_send_wr = 8;
	ia.cap.max_send_sge = 1;
	fx.b.qp = blue_create_qp(fx.b.pd, &ia);
	cr_assert_not_null(fx.b.qp);
	rc_qp_connect(&fx, &fx.a, &fx.b, fx.o.sq_psn_a, fx.o.sq_psn_b);
	rc_qp_connect(&fx, &fx.b, &fx.a, fx.o.sq_psn_b, fx.o.sq_psn_a);
	mem_reg(&src, &fx.a, 4096, 9);
	mem_reg(&dst, &fx.b, 4096, -1);
	rsge = (struct blue_sge){ .addr = (uintptr_t)dst.buf, .length = 4096, .lkey = dst.mr->lkey };
	rwr.wr_id = 5;
	rwr.sg_list = &rsge;
	rwr.num_sge = 1;
	cr_assert_eq(blue_post_srq_recv(srq, &rwr, NULL), 0);
	rw = blue_rq_wqe(&srq->wq, blue_ring_prod_own(&srq->wq.ring) - 1);
	rw->num_sge = 100000;
	sge = (struct blue_sge){ .addr = (uintptr_t)src.buf, .length = 256, .lkey = src.mr->lkey };
	wr.wr_id = 6;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = BLUE_WR_SEND;
	wr.send_flags = BLUE_SEND_SIGNALED;
	rc_post_send(&fx.a, &wr);
	wc = rc_wait1(&fx, fx.b.rcq, WAIT_MS);
	cr_assert_eq(wc.wr_id, 5);
	cr_assert_neq(wc.status, BLUE_WC_SUCCESS, "an SRQ WQE that lied took the message");
	cr_assert(all_zero(dst.buf, 4096), "a refused SRQ WQE was written");
	cr_assert_eq(blue_destroy_qp(fx.b.qp), 0);
	fx.b.qp = NULL;
	cr_assert_eq(blue_destroy_srq(srq), 0);
	mem_unreg(&src);
	mem_unreg(&dst);
	rc_fx_fini(&fx);
}

Test(wqe_admit, ud_source_gid_index_lie_refused)
{
	struct blue_qp_init_attr ia = { 0 };
	struct blue_ah_attr aa = { 0 };
	struct blue_send_wqe *w;
	struct blue_qp_attr qa;
	struct blue_send_wr wr = { 0 };
	struct mem src;
	struct blue_ah *ah;
	struct blue_sge sge;
	struct rc_fx fx;
	struct blue_wc wc;

	rc_fx_init_noqp(&fx, NULL);
	fx.a.ctx->shared_rings = true;
	ia.send_cq = fx.a.scq;
	ia.recv_cq = fx.a.rcq;
	ia.qp_type = BLUE_QPT_UD;
	ia.cap.max_send_wr = 8;
	ia.cap.max_recv_wr = 8;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	fx.a.qp = blue_create_qp(fx.a.pd, &ia);
	cr_assert_not_null(fx.a.qp);
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = BLUE_QPS_INIT;
	qa.qkey = 0x11111111;
	qa.port_num = 1;
	cr_assert_eq(blue_modify_qp(fx.a.qp, &qa, BLUE_QP_STATE | BLUE_QP_PKEY_INDEX |
				    BLUE_QP_PORT | BLUE_QP_QKEY), 0);
	qa.qp_state = BLUE_QPS_RTR;
	cr_assert_eq(blue_modify_qp(fx.a.qp, &qa, BLUE_QP_STATE), 0);
	qa.qp_state = BLUE_QPS_RTS;
	qa.sq_psn = 1;
	cr_assert_eq(blue_modify_qp(fx.a.qp, &qa, BLUE_QP_STATE | BLUE_QP_SQ_PSN), 0);
	aa.sgid_index = 1;
	aa.dgid.raw[10] = aa.dgid.raw[11] = 0xff;
	memcpy(aa.dgid.raw + 12, &fx.b.ip, 4);
	aa.port_num = 1;
	ah = blue_create_ah(fx.a.pd, &aa);
	cr_assert_not_null(ah);
	mem_reg(&src, &fx.a, 4096, 1);
	sge = (struct blue_sge){ .addr = (uintptr_t)src.buf, .length = 64, .lkey = src.mr->lkey };
	wr.wr_id = 9;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = BLUE_WR_SEND;
	wr.send_flags = BLUE_SEND_SIGNALED;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = 0x123;
	wr.wr.ud.remote_qkey = 0x11111111;
	rc_post_send(&fx.a, &wr);
	/* the other process points the source at a GID slot far past the table */
	w = blue_sq_wqe(&fx.a.qp->sq, blue_ring_prod_own(&fx.a.qp->sq.ring) - 1);
	w->ud.sgid_index = 200;
	wc = rc_wait1(&fx, fx.a.scq, WAIT_MS);
	cr_assert_eq(wc.wr_id, 9);
	cr_assert_eq(wc.status, BLUE_WC_LOC_QP_OP_ERR, "status %d", wc.status);
	cr_assert_eq(blue_destroy_ah(ah), 0);
	mem_unreg(&src);
	rc_fx_fini(&fx);
}
