// SPDX-License-Identifier: MIT
/*
 * Loopback: two QPs of one context connected to each other (the destination is the
 * device's own IP and MAC), as rxe loops such packets back in the kernel
 * (rxe_net.c rxe_loopback). Every frame stays in the engine (runtime/loopback.c): none
 * reaches the HAL's TX ring (a filter on it counts what it is offered), and each is
 * parsed, ICRC included, as one from the wire. SEND, WRITE, READ and the atomics with
 * the bytes compared; a close with frames still queued; a QPN this device lacks.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/device.h"
#include "runtime/loopback.h"
#include "runtime/progress.h"
#include "runtime/qp.h"
#include "tests/unit/rc_fixture.h"

#define LEN (64u * 1024)

/* The HAL filter that sees every frame that would leave: it must see none. */
static struct rc_drop wire;

static void self_init(struct rc_fx *fx, const struct rc_opts *o)
{
	rc_fx_init_self(fx, o);
	wire = (struct rc_drop){ .opcode = -1, .psn = -1, .max_drops = 0 };
	rc_drop_install(fx->a.hal, &wire);
}

/* No frame went to the HAL; every frame sent was looped back and parsed clean. */
static void assert_all_looped(struct rc_fx *fx)
{
	const struct blue_engine_stats *st = blue__engine_stats(fx->a.ctx);

	cr_assert_eq(wire.seen, 0, "%d frames reached the HAL's TX ring", wire.seen);
	cr_assert_gt(st->tx_loopback, 0, "no frame was looped back");
	cr_assert_eq(st->tx_loopback, st->tx_frames, "looped %llu of %llu frames sent",
		     (unsigned long long)st->tx_loopback, (unsigned long long)st->tx_frames);
	cr_assert_eq(st->rx_bad_icrc + st->rx_malformed + st->rx_no_qp + st->rx_bad_src, 0,
		     "a looped frame was dropped");
}

static void send_one(struct rc_fx *fx, struct rc_side *from, struct rc_side *to,
		     unsigned int seed, uint32_t len)
{
	struct rc_mem m;
	struct blue_sge sge;
	struct blue_send_wr wr;
	struct blue_wc wc;

	rc_mem_init(&m, from, to, len, seed, BLUE_ACCESS_LOCAL_WRITE);
	rc_post_recv(to, 7, m.dst, len, m.dmr->lkey);
	sge = (struct blue_sge){ .addr = (uintptr_t)m.src, .length = len, .lkey = m.smr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 8;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = BLUE_WR_SEND_WITH_IMM;
	wr.imm_data = 0x11223344;
	wr.send_flags = BLUE_SEND_SIGNALED;
	rc_post_send(from, &wr);
	wc = rc_wait1(fx, from->scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "send: %s", blue_wc_status_str(wc.status));
	wc = rc_wait1(fx, to->rcq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "recv: %s", blue_wc_status_str(wc.status));
	cr_assert_eq(wc.wr_id, 7);
	cr_assert_eq(wc.byte_len, len);
	cr_assert_eq(wc.imm_data, 0x11223344);
	cr_assert_eq(wc.qp_num, blue_qp_num(to->qp));
	cr_assert_eq(wc.src_qp, blue_qp_num(from->qp));
	cr_assert(rc_check(m.dst, len, seed), "received bytes differ");
	rc_mem_fini(&m);
}

Test(loopback, send_both_ways)
{
	struct rc_fx fx;

	self_init(&fx, NULL);
	send_one(&fx, &fx.a, &fx.b, 1, LEN);	/* 64 packets at MTU 1024 */
	send_one(&fx, &fx.b, &fx.a, 2, 100);
	assert_all_looped(&fx);
	cr_assert_eq(fx.a.qp->live->retransmits + fx.b.qp->live->retransmits, 0);
	rc_fx_fini(&fx);
}

/* A's @op of LEN bytes on B's buffer: WRITE from A's source, or READ into A's sink. */
static void rdma_one(enum blue_wr_opcode op)
{
	unsigned int access = BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE |
			      BLUE_ACCESS_REMOTE_READ;
	struct rc_fx fx;
	struct rc_mem m;
	struct blue_sge sge;
	struct blue_send_wr wr;
	struct blue_wc wc;
	uint8_t *local;

	self_init(&fx, NULL);
	/* WRITE: a.src -> b.dst; READ: b's buffer (m.src, filled) -> a's (m.dst) */
	if (op == BLUE_WR_RDMA_WRITE)
		rc_mem_init(&m, &fx.a, &fx.b, LEN, 3, access);
	else
		rc_mem_init(&m, &fx.b, &fx.a, LEN, 4, access);
	local = op == BLUE_WR_RDMA_WRITE ? m.src : m.dst;
	sge = (struct blue_sge){ .addr = (uintptr_t)local, .length = LEN,
				 .lkey = op == BLUE_WR_RDMA_WRITE ? m.smr->lkey : m.dmr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 9;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = BLUE_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)(op == BLUE_WR_RDMA_WRITE ? m.dst : m.src);
	wr.wr.rdma.rkey = op == BLUE_WR_RDMA_WRITE ? m.dmr->rkey : m.smr->rkey;
	rc_post_send(&fx.a, &wr);
	wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "%s", blue_wc_status_str(wc.status));
	cr_assert(rc_check(m.dst, LEN, op == BLUE_WR_RDMA_WRITE ? 3 : 4), "bytes differ");
	assert_all_looped(&fx);
	rc_mem_fini(&m);
	rc_fx_fini(&fx);
}

Test(loopback, write) { rdma_one(BLUE_WR_RDMA_WRITE); }
Test(loopback, read) { rdma_one(BLUE_WR_RDMA_READ); }

/* One atomic from A's QP on B's word; returns the original value A got back. */
static uint64_t atomic_one(struct rc_fx *fx, struct blue_mr *rmr, struct blue_mr *lmr,
			   uint64_t *res, enum blue_wr_opcode op, uint64_t add, uint64_t swap)
{
	struct blue_sge sge = { .addr = (uintptr_t)res, .length = 8, .lkey = lmr->lkey };
	struct blue_send_wr wr;
	struct blue_wc wc;

	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = BLUE_SEND_SIGNALED;
	wr.wr.atomic.remote_addr = (uintptr_t)rmr->addr;
	wr.wr.atomic.rkey = rmr->rkey;
	wr.wr.atomic.compare_add = add;
	wr.wr.atomic.swap = swap;
	rc_post_send(&fx->a, &wr);
	wc = rc_wait1(fx, fx->a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "atomic: %s", blue_wc_status_str(wc.status));
	return *res;
}

Test(loopback, atomics)
{
	uint64_t *word = aligned_alloc(8, 8), *res = aligned_alloc(8, 8);
	struct blue_mr *rmr, *lmr;
	struct rc_fx fx;

	cr_assert(word && res);
	*word = 1000;
	self_init(&fx, NULL);
	rmr = blue_reg_mr(fx.b.pd, word, 8, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_ATOMIC);
	lmr = blue_reg_mr(fx.a.pd, res, 8, BLUE_ACCESS_LOCAL_WRITE);
	cr_assert(rmr && lmr);
	cr_assert_eq(atomic_one(&fx, rmr, lmr, res, BLUE_WR_ATOMIC_FETCH_AND_ADD, 5, 0), 1000);
	cr_assert_eq(*word, 1005);
	cr_assert_eq(atomic_one(&fx, rmr, lmr, res, BLUE_WR_ATOMIC_CMP_AND_SWP, 1005, 0x77),
		     1005);
	cr_assert_eq(*word, 0x77);
	cr_assert_eq(atomic_one(&fx, rmr, lmr, res, BLUE_WR_ATOMIC_CMP_AND_SWP, 1, 0x99), 0x77);
	cr_assert_eq(*word, 0x77, "a failed compare swapped");
	assert_all_looped(&fx);
	cr_assert_eq(blue_dereg_mr(rmr), 0);
	cr_assert_eq(blue_dereg_mr(lmr), 0);
	rc_fx_fini(&fx);
	free(word);
	free(res);
}

/*
 * The close with frames in the loopback queue: one pass queues a SEND's packets for the
 * next pass, then everything is destroyed and the context closed; every frame is back in
 * the HAL's pool (as many free as before the context opened).
 */
Test(loopback, close_with_frames_queued)
{
	struct blue_hal_stats before, after;
	struct rc_fx fx;
	struct rc_mem m;
	struct blue_sge sge;
	struct blue_send_wr wr;

	self_init(&fx, NULL);
	rc_mem_init(&m, &fx.a, &fx.b, 8192, 5, BLUE_ACCESS_LOCAL_WRITE);
	rc_post_recv(&fx.b, 1, m.dst, 8192, m.dmr->lkey);
	sge = (struct blue_sge){ .addr = (uintptr_t)m.src, .length = 8192, .lkey = m.smr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = BLUE_WR_SEND;
	rc_post_send(&fx.a, &wr);
	blue__progress(fx.a.ctx);
	cr_assert_eq(blue__loopback_count(&fx.a.ctx->lb), 8, "the SEND's 8 packets queued");
	rc_mem_fini(&m);
	/* a fresh pair's end: what the pool holds with no context on it */
	{
		struct blue_hal *ra, *rb;

		cr_assert_eq(blue_hal_loopback_pair(&ra, &rb), 0);
		blue_hal_get_stats(ra, &before);
		blue_hal_destroy(ra);
		blue_hal_destroy(rb);
	}
	cr_assert_eq(blue_destroy_qp(fx.b.qp), 0);
	cr_assert_eq(blue_destroy_qp(fx.a.qp), 0);
	fx.a.qp = fx.b.qp = NULL;
	blue_hal_loopback_set_filter(fx.a.hal, NULL, NULL);
	cr_assert_eq(blue_destroy_cq(fx.b.scq), 0);
	cr_assert_eq(blue_destroy_cq(fx.b.rcq), 0);
	cr_assert_eq(blue_dealloc_pd(fx.b.pd), 0);
	cr_assert_eq(blue_destroy_cq(fx.a.scq), 0);
	cr_assert_eq(blue_destroy_cq(fx.a.rcq), 0);
	cr_assert_eq(blue_dealloc_pd(fx.a.pd), 0);
	cr_assert_eq(blue_close_device(fx.a.ctx), 0);
	blue_hal_get_stats(fx.a.hal, &after);
	cr_assert_eq(after.frames_free, before.frames_free, "%llu frames free, %llu before",
		     (unsigned long long)after.frames_free,
		     (unsigned long long)before.frames_free);
	cr_assert_eq(after.frame_errors, 0);
	blue_hal_destroy(fx.a.hal);
	blue_hal_destroy(fx.b.hal);
}

/*
 * A QP connected to a QPN this device does not have: its requests are looped back and
 * dropped as no-QP, so the requester retries and then fails with RETRY_EXC_ERR (no
 * hang, no frame on the HAL).
 */
Test(loopback, absent_qpn_retry_exceeded)
{
	struct rc_opts o;
	struct rc_fx fx;
	struct blue_send_wr wr;
	struct blue_wc wc;
	const struct blue_engine_stats *st;

	rc_opts_default(&o);
	o.timeout = 8;		/* 4.096 us * 2^8 = 1 ms */
	o.retry_cnt = 2;
	rc_fx_init_self_noqp(&fx, &o);
	wire = (struct rc_drop){ .opcode = -1, .psn = -1, .max_drops = 0 };
	rc_drop_install(fx.a.hal, &wire);
	rc_qp_create(&fx, &fx.a);
	rc_qp_create(&fx, &fx.b);
	/* b's slot with another key: no QP of this context has that QPN */
	rc_qp_connect_qpn(&fx, &fx.a, &fx.b, blue_qp_num(fx.b.qp) ^ 0x800000u,
			  o.sq_psn_a, o.sq_psn_b);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 77;
	wr.opcode = BLUE_WR_SEND;
	wr.send_flags = BLUE_SEND_SIGNALED;
	rc_post_send(&fx.a, &wr);
	wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.wr_id, 77);
	cr_assert_eq(wc.status, BLUE_WC_RETRY_EXC_ERR, "%s", blue_wc_status_str(wc.status));
	st = blue__engine_stats(fx.a.ctx);
	/* the first try and retry_cnt retries */
	cr_assert_geq(st->rx_no_qp, 3, "%llu frames dropped as no-QP",
		      (unsigned long long)st->rx_no_qp);
	cr_assert_eq(wire.seen, 0, "%d frames reached the HAL", wire.seen);
	rc_fx_fini(&fx);
}
