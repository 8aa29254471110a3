// SPDX-License-Identifier: MIT
/*
 * Every completion status an RC QP can reach over the loopback HAL, and what each error
 * leaves behind: remote access errors that never touch memory, RNR and transport retry
 * exhaustion, flushes, a receive that is too small, a bad local key.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/mr_key.h"
#include "runtime/progress.h"
#include "runtime/qp.h"
#include "tests/unit/rc_fixture.h"

struct mem {
	uint8_t *buf;
	struct blue_mr *mr;
	size_t len;
};

static void mem_reg(struct mem *m, struct rc_side *s, size_t len, unsigned int access, int fill)
{
	m->len = len;
	m->buf = malloc(len);
	cr_assert_not_null(m->buf);
	if (fill >= 0)
		rc_fill(m->buf, len, (unsigned int)fill);
	else
		memset(m->buf, 0, len);
	m->mr = blue_reg_mr(s->pd, m->buf, len, access);
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

static void wr_rdma(struct blue_send_wr *wr, struct blue_sge *sge, uint64_t id,
		    enum blue_wr_opcode op, uint64_t raddr, uint32_t rkey)
{
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = id;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->opcode = op;
	wr->send_flags = BLUE_SEND_SIGNALED;
	wr->wr.rdma.remote_addr = raddr;
	wr->wr.rdma.rkey = rkey;
}

/*
 * A's first WR gets @want; A's second WR (a SEND queued behind it) is flushed; both
 * QPs end in ERROR, and B's posted receive is flushed too.
 */
static void expect_fail_then_flush(struct rc_fx *fx, enum blue_wc_status want,
				   struct blue_sge *ssge)
{
	struct blue_send_wr wr;
	struct blue_wc wc;
	struct blue_qp_attr attr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 2;
	wr.sg_list = ssge;
	wr.num_sge = 1;
	wr.opcode = BLUE_WR_SEND;	/* unsignaled: a flush still completes it */
	rc_post_send(&fx->a, &wr);
	wc = rc_wait1(fx, fx->a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.wr_id, 1);
	cr_assert_eq(wc.status, want, "got %s, want %s", blue_wc_status_str(wc.status),
		     blue_wc_status_str(want));
	wc = rc_wait1(fx, fx->a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.wr_id, 2);
	cr_assert_eq(wc.status, BLUE_WC_WR_FLUSH_ERR);
	cr_assert_eq(blue_query_qp(fx->a.qp, &attr, 0, NULL), 0);
	cr_assert_eq(attr.qp_state, BLUE_QPS_ERR, "the requester QP is in ERROR");
}

/* ---- remote access errors: NAK, and memory untouched -------------------------- */

static void write_rem_access(uint32_t rkey_xor, size_t target_len, unsigned int access,
			     size_t off)
{
	struct rc_fx fx;
	struct mem src, dst, rb;
	struct blue_sge sge;
	struct blue_send_wr wr;
	struct blue_wc wc;

	rc_fx_init(&fx, NULL);
	mem_reg(&src, &fx.a, 4096, 0, 1);
	mem_reg(&dst, &fx.b, target_len, access, -1);
	mem_reg(&rb, &fx.b, 64, BLUE_ACCESS_LOCAL_WRITE, -1);
	rc_post_recv(&fx.b, 9, rb.buf, 64, rb.mr->lkey);
	sge = (struct blue_sge){ .addr = (uintptr_t)src.buf, .length = 4096,
				 .lkey = src.mr->lkey };
	wr_rdma(&wr, &sge, 1, BLUE_WR_RDMA_WRITE, (uintptr_t)dst.buf + off,
		dst.mr->rkey ^ rkey_xor);
	rc_post_send(&fx.a, &wr);
	sge.length = 8;
	expect_fail_then_flush(&fx, BLUE_WC_REM_ACCESS_ERR, &sge);
	cr_assert(all_zero(dst.buf, target_len), "a refused WRITE changed remote memory");
	cr_assert_eq(fx.b.qp->live->naks_sent, 1);
	cr_assert_eq(fx.b.qp->live->last_nak_syndrome, BLUE_NAK_REM_ACCESS_ERR);
	/* the responder went to ERROR too, and flushed its receive */
	wc = rc_wait1(&fx, fx.b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.wr_id, 9);
	cr_assert_eq(wc.status, BLUE_WC_WR_FLUSH_ERR);
	cr_assert_eq(fx.b.qp->live->state, BLUE_QPS_ERR);
	mem_unreg(&src);
	mem_unreg(&dst);
	mem_unreg(&rb);
	rc_fx_fini(&fx);
}

Test(rc_errors, rem_access_bad_rkey)
{
	/* another slot's index (the stale tag is the next test) */
	write_rem_access(1u << BLUE_MR_KEY_TAG_BITS, 8192,
			 BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE, 0);
}

Test(rc_errors, rem_access_stale_rkey_tag)
{
	write_rem_access(0x01, 8192, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE, 0);
}

Test(rc_errors, rem_access_out_of_bounds)
{
	/* 4096 bytes written at 10 bytes before the end: the first 10 fit, none may land */
	write_rem_access(0, 4106 + 4096, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE,
			 4096 + 4096);
}

Test(rc_errors, rem_access_no_remote_write_permission)
{
	write_rem_access(0, 8192, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_READ, 0);
}

/* A READ beyond the region, and an atomic without the atomic right, are refused too. */
Test(rc_errors, rem_access_read_out_of_bounds)
{
	struct rc_fx fx;
	struct mem remote, local;
	struct blue_sge sge;
	struct blue_send_wr wr;

	rc_fx_init(&fx, NULL);
	mem_reg(&remote, &fx.b, 4096, BLUE_ACCESS_REMOTE_READ, 3);
	mem_reg(&local, &fx.a, 8192, BLUE_ACCESS_LOCAL_WRITE, -1);
	sge = (struct blue_sge){ .addr = (uintptr_t)local.buf, .length = 4097,
				 .lkey = local.mr->lkey };
	wr_rdma(&wr, &sge, 1, BLUE_WR_RDMA_READ, (uintptr_t)remote.buf, remote.mr->rkey);
	rc_post_send(&fx.a, &wr);
	sge.length = 8;
	expect_fail_then_flush(&fx, BLUE_WC_REM_ACCESS_ERR, &sge);
	cr_assert(all_zero(local.buf, 8192), "no READ data may arrive");
	cr_assert_eq(fx.b.qp->live->tx_pkts, 1, "only the NAK went back");
	mem_unreg(&remote);
	mem_unreg(&local);
	rc_fx_fini(&fx);
}

Test(rc_errors, rem_access_atomic_without_permission)
{
	struct rc_fx fx;
	struct mem remote, local;
	struct blue_sge sge;
	struct blue_send_wr wr;

	rc_fx_init(&fx, NULL);
	mem_reg(&remote, &fx.b, 64, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE, -1);
	mem_reg(&local, &fx.a, 8, BLUE_ACCESS_LOCAL_WRITE, -1);
	sge = (struct blue_sge){ .addr = (uintptr_t)local.buf, .length = 8,
				 .lkey = local.mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = BLUE_WR_ATOMIC_FETCH_AND_ADD;
	wr.send_flags = BLUE_SEND_SIGNALED;
	wr.wr.atomic.remote_addr = (uintptr_t)remote.buf;
	wr.wr.atomic.rkey = remote.mr->rkey;
	wr.wr.atomic.compare_add = 1;
	rc_post_send(&fx.a, &wr);
	expect_fail_then_flush(&fx, BLUE_WC_REM_ACCESS_ERR, &sge);
	cr_assert(all_zero(remote.buf, 64), "a refused atomic changed remote memory");
	mem_unreg(&remote);
	mem_unreg(&local);
	rc_fx_fini(&fx);
}

/* An atomic on an address that is not 8-byte aligned is an invalid request. */
Test(rc_errors, misaligned_atomic_is_invalid_request)
{
	struct rc_fx fx;
	struct mem remote, local;
	struct blue_sge sge;
	struct blue_send_wr wr;

	rc_fx_init(&fx, NULL);
	mem_reg(&remote, &fx.b, 64, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_ATOMIC, -1);
	mem_reg(&local, &fx.a, 8, BLUE_ACCESS_LOCAL_WRITE, -1);
	sge = (struct blue_sge){ .addr = (uintptr_t)local.buf, .length = 8,
				 .lkey = local.mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = BLUE_WR_ATOMIC_CMP_AND_SWP;
	wr.send_flags = BLUE_SEND_SIGNALED;
	wr.wr.atomic.remote_addr = (uintptr_t)remote.buf + 4;
	wr.wr.atomic.rkey = remote.mr->rkey;
	rc_post_send(&fx.a, &wr);
	expect_fail_then_flush(&fx, BLUE_WC_REM_INV_REQ_ERR, &sge);
	cr_assert(all_zero(remote.buf, 64));
	mem_unreg(&remote);
	mem_unreg(&local);
	rc_fx_fini(&fx);
}

/* ---- RNR ------------------------------------------------------------------------ */

/* No receive posted and rnr_retry 2: three RNR NAKs, then RNR_RETRY_EXC_ERR. */
Test(rc_errors, rnr_retry_exceeded)
{
	struct rc_opts o;
	struct rc_fx fx;
	struct mem src;
	struct blue_sge sge;
	struct blue_send_wr wr;
	uint32_t rq_psn;

	rc_opts_default(&o);
	o.rnr_retry = 2;
	o.min_rnr_timer = 1;	/* 10 us */
	rc_fx_init(&fx, &o);
	mem_reg(&src, &fx.a, 64, 0, 1);
	rq_psn = fx.b.qp->live->rq_psn;
	sge = (struct blue_sge){ .addr = (uintptr_t)src.buf, .length = 64, .lkey = src.mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = BLUE_WR_SEND;
	wr.send_flags = BLUE_SEND_SIGNALED;
	rc_post_send(&fx.a, &wr);
	expect_fail_then_flush(&fx, BLUE_WC_RNR_RETRY_EXC_ERR, &sge);
	cr_assert_eq(fx.a.qp->live->rnr_events, 3, "the first try and two retries");
	cr_assert_eq(fx.b.qp->live->naks_sent, 3);
	cr_assert_eq(fx.b.qp->live->rq_psn, rq_psn, "nothing was accepted");
	cr_assert_eq(fx.b.qp->live->state, BLUE_QPS_RTS, "RNR leaves the responder alone");
	mem_unreg(&src);
	rc_fx_fini(&fx);
}

/* With rnr_retry 7 (infinite), the SEND waits until a receive is posted. */
Test(rc_errors, rnr_infinite_waits_for_a_receive)
{
	struct rc_fx fx;
	struct mem src, dst;
	struct blue_sge sge;
	struct blue_send_wr wr;
	struct blue_wc wc;

	rc_fx_init(&fx, NULL);	/* rnr_retry 7 */
	mem_reg(&src, &fx.a, 3000, 0, 6);
	mem_reg(&dst, &fx.b, 3000, BLUE_ACCESS_LOCAL_WRITE, -1);
	sge = (struct blue_sge){ .addr = (uintptr_t)src.buf, .length = 3000,
				 .lkey = src.mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = BLUE_WR_SEND;
	wr.send_flags = BLUE_SEND_SIGNALED;
	rc_post_send(&fx.a, &wr);
	rc_quiet(&fx, fx.a.scq, 20);
	cr_assert_geq(fx.a.qp->live->rnr_events, 8, "it kept retrying (%llu RNR NAKs)",
		      (unsigned long long)fx.a.qp->live->rnr_events);
	rc_post_recv(&fx.b, 5, dst.buf, 3000, dst.mr->lkey);
	wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "%s", blue_wc_status_str(wc.status));
	wc = rc_wait1(&fx, fx.b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.byte_len, 3000);
	cr_assert(rc_check(dst.buf, 3000, 6));
	mem_unreg(&src);
	mem_unreg(&dst);
	rc_fx_fini(&fx);
}

/* ---- transport retries ------------------------------------------------------------- */

/* Everything A sends is lost: retry_cnt 2 retransmissions, then RETRY_EXC_ERR. */
Test(rc_errors, retry_exceeded)
{
	struct rc_opts o;
	struct rc_fx fx;
	struct mem src;
	struct blue_sge sge;
	struct blue_send_wr wr;
	struct rc_drop drop = { .opcode = -1, .psn = -1, .max_drops = -1 };
	uint64_t t0, dt;

	rc_opts_default(&o);
	o.retry_cnt = 2;
	o.timeout = 5;	/* 4.096 us * 32 = 131 us */
	rc_fx_init(&fx, &o);
	mem_reg(&src, &fx.a, 64, 0, 1);
	rc_drop_install(fx.a.hal, &drop);
	sge = (struct blue_sge){ .addr = (uintptr_t)src.buf, .length = 64, .lkey = src.mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = BLUE_WR_SEND;
	wr.send_flags = BLUE_SEND_SIGNALED;
	t0 = blue__now_ns();
	rc_post_send(&fx.a, &wr);
	expect_fail_then_flush(&fx, BLUE_WC_RETRY_EXC_ERR, &sge);
	dt = blue__now_ns() - t0;
	cr_assert_eq(fx.a.qp->live->retransmits, 2);
	/* both SENDs went out three times: the first try and two retransmissions */
	cr_assert_eq(drop.dropped, 6, "dropped %d", drop.dropped);
	/* three ACK timeouts of 131 us each had to pass */
	cr_assert_geq(dt, 3 * 131000ull, "gave up after %llu ns", (unsigned long long)dt);
	cr_assert_eq(fx.b.qp->live->rx_pkts, 0);
	mem_unreg(&src);
	rc_fx_fini(&fx);
}

/* Moving a QP to ERROR flushes every send and receive WQE, in order. */
Test(rc_errors, modify_to_error_flushes_everything)
{
	struct rc_fx fx;
	struct mem src, dst;
	struct blue_sge sge;
	struct blue_send_wr wr[3];
	struct blue_qp_attr attr = { .qp_state = BLUE_QPS_ERR };
	struct blue_wc wc[4];
	int i;

	rc_fx_init(&fx, NULL);
	mem_reg(&src, &fx.a, 64, 0, 1);
	mem_reg(&dst, &fx.a, 64, BLUE_ACCESS_LOCAL_WRITE, -1);
	sge = (struct blue_sge){ .addr = (uintptr_t)src.buf, .length = 64, .lkey = src.mr->lkey };
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 3; i++) {
		wr[i].wr_id = (uint64_t)i;
		wr[i].sg_list = &sge;
		wr[i].num_sge = 1;
		wr[i].opcode = BLUE_WR_RDMA_WRITE;
		wr[i].send_flags = i == 1 ? 0 : BLUE_SEND_SIGNALED;
		wr[i].wr.rdma.remote_addr = 0x1000;
		wr[i].wr.rdma.rkey = 0x1234;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	for (i = 0; i < 4; i++)
		rc_post_recv(&fx.a, 100 + (uint64_t)i, dst.buf, 64, dst.mr->lkey);
	rc_post_send(&fx.a, wr);
	cr_assert_eq(blue_modify_qp(fx.a.qp, &attr, BLUE_QP_STATE), 0);
	cr_assert_eq(rc_poll(&fx, fx.a.scq, wc, 3, RC_WAIT_MS), 3);
	for (i = 0; i < 3; i++) {
		cr_assert_eq(wc[i].wr_id, (uint64_t)i);
		cr_assert_eq(wc[i].status, BLUE_WC_WR_FLUSH_ERR, "flush of an unsignaled WR too");
		cr_assert_eq(wc[i].qp_num, blue_qp_num(fx.a.qp));
	}
	cr_assert_eq(rc_poll(&fx, fx.a.rcq, wc, 4, RC_WAIT_MS), 4);
	for (i = 0; i < 4; i++) {
		cr_assert_eq(wc[i].wr_id, 100 + (uint64_t)i);
		cr_assert_eq(wc[i].status, BLUE_WC_WR_FLUSH_ERR);
	}
	cr_assert_eq(fx.b.qp->live->rx_pkts, 0, "nothing was sent");
	/* posting in ERROR is allowed and flushes at once (as rxe) */
	wr[0].next = NULL;
	rc_post_send(&fx.a, &wr[0]);
	wc[0] = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc[0].status, BLUE_WC_WR_FLUSH_ERR);
	mem_unreg(&src);
	mem_unreg(&dst);
	rc_fx_fini(&fx);
}

/* ---- local errors -------------------------------------------------------------------- */

/* A receive buffer smaller than the SEND: LOC_LEN_ERR there, REM_INV_REQ_ERR here. */
Test(rc_errors, receive_too_small)
{
	struct rc_fx fx;
	struct mem src, dst;
	struct blue_sge sge;
	struct blue_send_wr wr;
	struct blue_wc wc;

	rc_fx_init(&fx, NULL);
	mem_reg(&src, &fx.a, 4096, 0, 2);
	mem_reg(&dst, &fx.b, 4096, BLUE_ACCESS_LOCAL_WRITE, -1);
	rc_post_recv(&fx.b, 7, dst.buf, 100, dst.mr->lkey);
	rc_post_recv(&fx.b, 8, dst.buf, 4096, dst.mr->lkey);
	sge = (struct blue_sge){ .addr = (uintptr_t)src.buf, .length = 101,
				 .lkey = src.mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = BLUE_WR_SEND;
	wr.send_flags = BLUE_SEND_SIGNALED;
	rc_post_send(&fx.a, &wr);
	expect_fail_then_flush(&fx, BLUE_WC_REM_INV_REQ_ERR, &sge);
	wc = rc_wait1(&fx, fx.b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.wr_id, 7);
	cr_assert_eq(wc.status, BLUE_WC_LOC_LEN_ERR, "%s", blue_wc_status_str(wc.status));
	wc = rc_wait1(&fx, fx.b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.wr_id, 8);
	cr_assert_eq(wc.status, BLUE_WC_WR_FLUSH_ERR);
	mem_unreg(&src);
	mem_unreg(&dst);
	rc_fx_fini(&fx);
}

/* A bad local key fails the WR before a packet leaves. */
Test(rc_errors, bad_lkey_is_local_protection_error)
{
	struct rc_fx fx;
	struct mem src;
	struct blue_sge sge;
	struct blue_send_wr wr;

	rc_fx_init(&fx, NULL);
	mem_reg(&src, &fx.a, 64, 0, 1);
	sge = (struct blue_sge){ .addr = (uintptr_t)src.buf, .length = 64,
				 .lkey = src.mr->lkey ^ 1u << BLUE_MR_KEY_TAG_BITS };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = BLUE_WR_SEND;
	wr.send_flags = BLUE_SEND_SIGNALED;
	rc_post_send(&fx.a, &wr);
	expect_fail_then_flush(&fx, BLUE_WC_LOC_PROT_ERR, &sge);
	cr_assert_eq(fx.b.qp->live->rx_pkts, 0, "no packet left");
	mem_unreg(&src);
	rc_fx_fini(&fx);
}

/* A READ into memory registered without local write is a local protection error. */
Test(rc_errors, read_into_readonly_mr_is_local_protection_error)
{
	struct rc_fx fx;
	struct mem remote, local;
	struct blue_sge sge;
	struct blue_send_wr wr;

	rc_fx_init(&fx, NULL);
	mem_reg(&remote, &fx.b, 64, BLUE_ACCESS_REMOTE_READ, 3);
	mem_reg(&local, &fx.a, 64, 0, -1);
	sge = (struct blue_sge){ .addr = (uintptr_t)local.buf, .length = 64,
				 .lkey = local.mr->lkey };
	wr_rdma(&wr, &sge, 1, BLUE_WR_RDMA_READ, (uintptr_t)remote.buf, remote.mr->rkey);
	rc_post_send(&fx.a, &wr);
	expect_fail_then_flush(&fx, BLUE_WC_LOC_PROT_ERR, &sge);
	cr_assert(all_zero(local.buf, 64));
	mem_unreg(&remote);
	mem_unreg(&local);
	rc_fx_fini(&fx);
}

/* A WR completed before the failing one keeps its success: completions stay in order. */
Test(rc_errors, success_before_a_local_error)
{
	struct rc_fx fx;
	struct mem src, dst;
	struct blue_sge good, bad;
	struct blue_send_wr wr[2];
	struct blue_wc wc[2];

	rc_fx_init(&fx, NULL);
	mem_reg(&src, &fx.a, 64, 0, 1);
	mem_reg(&dst, &fx.b, 64, BLUE_ACCESS_LOCAL_WRITE, -1);
	rc_post_recv(&fx.b, 1, dst.buf, 64, dst.mr->lkey);
	good = (struct blue_sge){ .addr = (uintptr_t)src.buf, .length = 64, .lkey = src.mr->lkey };
	bad = good;
	bad.length = 65;	/* one byte past the MR */
	memset(wr, 0, sizeof(wr));
	wr[0].wr_id = 1;
	wr[0].sg_list = &good;
	wr[0].num_sge = 1;
	wr[0].opcode = BLUE_WR_SEND;
	wr[0].send_flags = BLUE_SEND_SIGNALED;
	wr[0].next = &wr[1];
	wr[1] = wr[0];
	wr[1].wr_id = 2;
	wr[1].sg_list = &bad;
	wr[1].next = NULL;
	rc_post_send(&fx.a, wr);
	cr_assert_eq(rc_poll(&fx, fx.a.scq, wc, 2, RC_WAIT_MS), 2);
	cr_assert_eq(wc[0].wr_id, 1);
	cr_assert_eq(wc[0].status, BLUE_WC_SUCCESS);
	cr_assert_eq(wc[1].wr_id, 2);
	cr_assert_eq(wc[1].status, BLUE_WC_LOC_PROT_ERR);
	mem_unreg(&src);
	mem_unreg(&dst);
	rc_fx_fini(&fx);
}
