// SPDX-License-Identifier: MIT
/*
 * Memory windows (issue 15, item 1) between two contexts over the loopback HAL: B opens a
 * window onto its MR, A reaches the MR through the window's rkey. Each refused access is
 * checked three ways: A's completion is BLUE_WC_REM_ACCESS_ERR, B's bytes are unchanged
 * (compared), and B's QP counted the NAK.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/device.h"
#include "runtime/mr.h"
#include "runtime/qp.h"
#include "tests/unit/rc_fixture.h"

#define LEN	4096u		/* B's MR */
#define WOFF	1024u		/* where the window starts in it */
#define WLEN	1024u		/* the window's length */
#define WIN_RIGHTS (BLUE_ACCESS_REMOTE_WRITE | BLUE_ACCESS_REMOTE_READ | \
		    BLUE_ACCESS_REMOTE_ATOMIC)

struct mw_fx {
	struct rc_fx fx;
	uint8_t *bmem, *amem;		/* B's window target, A's source/sink */
	uint8_t *bcopy;			/* what bmem held before A's access */
	struct blue_mr *bmr, *amr;
	struct blue_mw *mw;
	uint32_t rkey;			/* the window's key after the last bind */
};

static void mw_fx_init(struct mw_fx *f, unsigned int mr_access)
{
	rc_fx_init(&f->fx, NULL);
	f->bmem = malloc(LEN);
	f->amem = malloc(LEN);
	f->bcopy = malloc(LEN);
	cr_assert(f->bmem && f->amem && f->bcopy);
	rc_fill(f->bmem, LEN, 1);
	rc_fill(f->amem, LEN, 2);
	f->bmr = blue_reg_mr(f->fx.b.pd, f->bmem, LEN, mr_access);
	f->amr = blue_reg_mr(f->fx.a.pd, f->amem, LEN, BLUE_ACCESS_LOCAL_WRITE);
	cr_assert(f->bmr && f->amr, "reg_mr: %s", strerror(errno));
	f->mw = NULL;
}

static void mw_fx_fini(struct mw_fx *f)
{
	if (f->mw)
		cr_assert_eq(blue_dealloc_mw(f->mw), 0);
	cr_assert_eq(blue_dereg_mr(f->bmr), 0);
	cr_assert_eq(blue_dereg_mr(f->amr), 0);
	free(f->bmem);
	free(f->amem);
	free(f->bcopy);
	rc_fx_fini(&f->fx);
}

/* B posts BIND_MW of its type 2 window onto [bmem + @off, + @len) with @access. */
static struct blue_wc bind2(struct mw_fx *f, struct blue_qp *qp, uint64_t off, uint64_t len,
			    unsigned int access)
{
	struct blue_send_wr wr, *bad;
	uint32_t key;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 77;
	wr.opcode = BLUE_WR_BIND_MW;
	wr.send_flags = BLUE_SEND_SIGNALED;
	wr.wr.bind_mw.mw = f->mw;
	/* ibv_inc_rkey(): the consumer's byte moves on */
	key = (f->mw->rkey & ~0xffu) | ((f->mw->rkey + 1) & 0xffu);
	wr.wr.bind_mw.rkey = key;
	wr.wr.bind_mw.bind_info = (struct blue_mw_bind_info){
		.mr = f->bmr, .addr = (uintptr_t)f->bmem + off, .length = len,
		.mw_access_flags = access,
	};
	cr_assert_eq(blue_post_send(qp, &wr, &bad), 0, "post BIND_MW");
	f->rkey = key;
	return rc_wait1(&f->fx, f->fx.b.scq, RC_WAIT_MS);
}

static void alloc_bind2(struct mw_fx *f, uint64_t off, uint64_t len, unsigned int access)
{
	struct blue_wc wc;

	f->mw = blue_alloc_mw(f->fx.b.pd, BLUE_MW_TYPE_2);
	cr_assert_not_null(f->mw, "alloc_mw: %s", strerror(errno));
	cr_assert_eq(f->mw->type, BLUE_MW_TYPE_2);
	wc = bind2(f, f->fx.b.qp, off, len, access);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "bind: %s", blue_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, BLUE_WC_BIND_MW);
	cr_assert_eq(wc.wr_id, 77);
	cr_assert_eq(f->mw->rkey, f->rkey, "the window's key is the bind's");
}

/* A posts @op of @len bytes at @va under @rkey (8 bytes for the atomics). */
static struct blue_wc a_op(struct mw_fx *f, enum blue_wr_opcode op, uint32_t rkey, uint64_t va,
			   uint32_t len)
{
	struct blue_sge sge = { .addr = (uintptr_t)f->amem, .length = len, .lkey = f->amr->lkey };
	struct blue_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 5;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = BLUE_SEND_SIGNALED;
	if (op == BLUE_WR_ATOMIC_FETCH_AND_ADD || op == BLUE_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = va;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 5;
	} else {
		wr.wr.rdma.remote_addr = va;
		wr.wr.rdma.rkey = rkey;
	}
	memcpy(f->bcopy, f->bmem, LEN);
	rc_post_send(&f->fx.a, &wr);
	return rc_wait1(&f->fx, f->fx.a.scq, RC_WAIT_MS);
}

/* A's access is refused: remote access error, B's bytes untouched, B counted a NAK. */
static void a_refused(struct mw_fx *f, enum blue_wr_opcode op, uint32_t rkey, uint64_t va,
		      uint32_t len)
{
	uint32_t naks = f->fx.b.qp->live->naks_sent;
	struct blue_wc wc = a_op(f, op, rkey, va, len);

	cr_assert_eq(wc.status, BLUE_WC_REM_ACCESS_ERR, "op %d at 0x%llx key 0x%x: %s", op,
		     (unsigned long long)va, rkey, blue_wc_status_str(wc.status));
	cr_assert_eq(memcmp(f->bcopy, f->bmem, LEN), 0, "a refused access changed B's memory");
	cr_assert_eq(f->fx.b.qp->live->naks_sent, naks + 1, "B sent no NAK");
	cr_assert_eq(f->fx.b.qp->live->last_nak_syndrome, BLUE_NAK_REM_ACCESS_ERR);
}

static uint64_t win_va(const struct mw_fx *f, uint64_t off)
{
	return (uintptr_t)f->bmem + WOFF + off;
}

Test(mw, write_read_atomic_through_a_type2_window)
{
	struct mw_fx f;
	struct blue_wc wc;
	uint64_t word;

	mw_fx_init(&f, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_MW_BIND);
	alloc_bind2(&f, WOFF, WLEN, WIN_RIGHTS);
	/* the MR grants no remote right itself: the window does */
	wc = a_op(&f, BLUE_WR_RDMA_WRITE, f.rkey, win_va(&f, 16), 512);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "write: %s", blue_wc_status_str(wc.status));
	cr_assert_eq(memcmp(f.bmem + WOFF + 16, f.amem, 512), 0, "written bytes differ");
	cr_assert_eq(memcmp(f.bmem, f.bcopy, WOFF + 16), 0, "write landed before its range");
	memset(f.amem, 0, LEN);
	wc = a_op(&f, BLUE_WR_RDMA_READ, f.rkey, win_va(&f, 0), WLEN);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "read: %s", blue_wc_status_str(wc.status));
	cr_assert_eq(memcmp(f.amem, f.bmem + WOFF, WLEN), 0, "read bytes differ");
	memcpy(&word, f.bmem + WOFF + 8, 8);
	wc = a_op(&f, BLUE_WR_ATOMIC_FETCH_AND_ADD, f.rkey, win_va(&f, 8), 8);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "fetch-add: %s", blue_wc_status_str(wc.status));
	cr_assert_eq(memcmp(f.amem, &word, 8), 0, "fetch-add returned another original");
	word += 5;
	cr_assert_eq(memcmp(f.bmem + WOFF + 8, &word, 8), 0, "fetch-add did not add");
	/* the MR's own key still misses for remote access: it has no remote right */
	a_refused(&f, BLUE_WR_RDMA_WRITE, f.bmr->rkey, win_va(&f, 0), 8);
	mw_fx_fini(&f);
}

Test(mw, write_past_the_window_is_refused)
{
	struct mw_fx f;

	mw_fx_init(&f, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_MW_BIND);
	alloc_bind2(&f, WOFF, WLEN, WIN_RIGHTS);
	/* inside the MR, 8 bytes past the window's end */
	a_refused(&f, BLUE_WR_RDMA_WRITE, f.rkey, win_va(&f, WLEN - 8), 16);
	mw_fx_fini(&f);
}

Test(mw, write_before_the_window_is_refused)
{
	struct mw_fx f;

	mw_fx_init(&f, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_MW_BIND);
	alloc_bind2(&f, WOFF, WLEN, WIN_RIGHTS);
	a_refused(&f, BLUE_WR_RDMA_WRITE, f.rkey, win_va(&f, 0) - 8, 16);
	mw_fx_fini(&f);
}

Test(mw, write_without_the_right_is_refused)
{
	struct mw_fx f;

	mw_fx_init(&f, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_MW_BIND);
	alloc_bind2(&f, WOFF, WLEN, BLUE_ACCESS_REMOTE_READ);
	a_refused(&f, BLUE_WR_RDMA_WRITE, f.rkey, win_va(&f, 0), 64);
	mw_fx_fini(&f);
}

Test(mw, atomic_without_the_right_is_refused)
{
	struct mw_fx f;

	mw_fx_init(&f, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_MW_BIND);
	alloc_bind2(&f, WOFF, WLEN, BLUE_ACCESS_REMOTE_READ | BLUE_ACCESS_REMOTE_WRITE);
	a_refused(&f, BLUE_WR_ATOMIC_FETCH_AND_ADD, f.rkey, win_va(&f, 0), 8);
	mw_fx_fini(&f);
}

Test(mw, zero_based_window_counts_from_0)
{
	struct mw_fx f;
	struct blue_wc wc;

	mw_fx_init(&f, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_MW_BIND);
	alloc_bind2(&f, WOFF, WLEN, WIN_RIGHTS | BLUE_ACCESS_ZERO_BASED);
	wc = a_op(&f, BLUE_WR_RDMA_WRITE, f.rkey, 32, 64);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "write: %s", blue_wc_status_str(wc.status));
	cr_assert_eq(memcmp(f.bmem + WOFF + 32, f.amem, 64), 0, "va 32 is not window byte 32");
	/* the window's end, counted from 0 */
	a_refused(&f, BLUE_WR_RDMA_WRITE, f.rkey, WLEN - 8, 16);
	mw_fx_fini(&f);
}

Test(mw, local_invalidate_closes_the_window)
{
	struct mw_fx f;
	struct blue_send_wr wr, *bad;
	struct blue_wc wc;

	mw_fx_init(&f, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_MW_BIND);
	alloc_bind2(&f, WOFF, WLEN, WIN_RIGHTS);
	wc = a_op(&f, BLUE_WR_RDMA_WRITE, f.rkey, win_va(&f, 0), 64);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "write: %s", blue_wc_status_str(wc.status));
	/* a bound window keeps its MR registered (IBA 10.6.7.2.6, rxe: EINVAL) */
	cr_assert_eq(blue_dereg_mr(f.bmr), EINVAL, "dereg of an MR with a bound window");
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 9;
	wr.opcode = BLUE_WR_LOCAL_INV;
	wr.send_flags = BLUE_SEND_SIGNALED;
	wr.invalidate_rkey = f.rkey;
	cr_assert_eq(blue_post_send(f.fx.b.qp, &wr, &bad), 0);
	wc = rc_wait1(&f.fx, f.fx.b.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "local_inv: %s", blue_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, BLUE_WC_LOCAL_INV);
	cr_assert_eq(wc.wr_id, 9);
	a_refused(&f, BLUE_WR_RDMA_WRITE, f.rkey, win_va(&f, 0), 64);
	mw_fx_fini(&f);
}

Test(mw, send_with_invalidate_closes_the_window)
{
	struct mw_fx f;
	struct blue_sge sge;
	struct blue_send_wr wr;
	struct blue_wc wc;
	uint8_t *rbuf = calloc(1, LEN);
	struct blue_mr *rmr;

	mw_fx_init(&f, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_MW_BIND);
	alloc_bind2(&f, WOFF, WLEN, WIN_RIGHTS);
	rmr = blue_reg_mr(f.fx.b.pd, rbuf, LEN, BLUE_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(rmr);
	rc_post_recv(&f.fx.b, 31, rbuf, LEN, rmr->lkey);
	/* three packets at MTU 1024: FIRST, MIDDLE, LAST with the IETH (opcode 0x16) */
	sge = (struct blue_sge){ .addr = (uintptr_t)f.amem, .length = 2500, .lkey = f.amr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 30;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = BLUE_WR_SEND_WITH_INV;
	wr.send_flags = BLUE_SEND_SIGNALED;
	wr.invalidate_rkey = f.rkey;
	rc_post_send(&f.fx.a, &wr);
	wc = rc_wait1(&f.fx, f.fx.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "send_inv: %s", blue_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, BLUE_WC_SEND);
	wc = rc_wait1(&f.fx, f.fx.b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "recv: %s", blue_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, BLUE_WC_RECV);
	cr_assert_eq(wc.byte_len, 2500);
	cr_assert(wc.wc_flags & BLUE_WC_WITH_INV, "no BLUE_WC_WITH_INV");
	cr_assert_eq(wc.invalidated_rkey, f.rkey);
	cr_assert_eq(memcmp(rbuf, f.amem, 2500), 0, "received bytes differ");
	a_refused(&f, BLUE_WR_RDMA_WRITE, f.rkey, win_va(&f, 0), 64);
	cr_assert_eq(blue_dereg_mr(rmr), 0);
	free(rbuf);
	mw_fx_fini(&f);
}

/* A SEND whose IETH names no window: B's receive fails as rxe's class J, A hears it. */
Test(mw, send_with_invalidate_of_a_bad_key_fails)
{
	struct mw_fx f;
	struct blue_sge sge;
	struct blue_send_wr wr;
	struct blue_wc wc;
	uint8_t *rbuf = calloc(1, 256);
	struct blue_mr *rmr;

	mw_fx_init(&f, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_MW_BIND);
	rmr = blue_reg_mr(f.fx.b.pd, rbuf, 256, BLUE_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(rmr);
	rc_post_recv(&f.fx.b, 31, rbuf, 256, rmr->lkey);
	sge = (struct blue_sge){ .addr = (uintptr_t)f.amem, .length = 10, .lkey = f.amr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = BLUE_WR_SEND_WITH_INV;
	wr.send_flags = BLUE_SEND_SIGNALED;
	wr.invalidate_rkey = f.bmr->rkey;	/* an MR's: blue has none that can be */
	rc_post_send(&f.fx.a, &wr);
	wc = rc_wait1(&f.fx, f.fx.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_REM_INV_REQ_ERR, "sender: %s",
		     blue_wc_status_str(wc.status));
	wc = rc_wait1(&f.fx, f.fx.b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_REM_INV_REQ_ERR, "receiver: %s",
		     blue_wc_status_str(wc.status));
	cr_assert_eq(f.fx.b.qp->live->state, BLUE_QPS_ERR);
	cr_assert_eq(blue_dereg_mr(rmr), 0);
	free(rbuf);
	mw_fx_fini(&f);
}

Test(mw, rebind_with_a_new_key_retires_the_old_one)
{
	struct mw_fx f;
	struct blue_send_wr wr, *bad;
	struct blue_wc wc;
	uint32_t old;

	mw_fx_init(&f, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_MW_BIND);
	alloc_bind2(&f, WOFF, WLEN, WIN_RIGHTS);
	old = f.rkey;
	/* a bound type 2 window is not bound again (o10-37.2.30) */
	wc = bind2(&f, f.fx.b.qp, WOFF, WLEN, WIN_RIGHTS);
	cr_assert_eq(wc.status, BLUE_WC_MW_BIND_ERR, "rebind of a bound window: %s",
		     blue_wc_status_str(wc.status));
	/* that failure moved B's QP to ERROR: start over with a fresh pair */
	mw_fx_fini(&f);

	mw_fx_init(&f, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_MW_BIND);
	alloc_bind2(&f, WOFF, WLEN, WIN_RIGHTS);
	old = f.rkey;
	memset(&wr, 0, sizeof(wr));
	wr.opcode = BLUE_WR_LOCAL_INV;
	wr.invalidate_rkey = old;
	cr_assert_eq(blue_post_send(f.fx.b.qp, &wr, &bad), 0);
	wc = bind2(&f, f.fx.b.qp, 0, WLEN, WIN_RIGHTS);	/* unsignaled inv, then this */
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "rebind: %s", blue_wc_status_str(wc.status));
	cr_assert_neq(f.rkey, old);
	cr_assert_eq(f.rkey >> 8, old >> 8, "only the consumer's byte changes");
	wc = a_op(&f, BLUE_WR_RDMA_WRITE, f.rkey, (uintptr_t)f.bmem, 64);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "new key: %s", blue_wc_status_str(wc.status));
	cr_assert_eq(memcmp(f.bmem, f.amem, 64), 0);
	a_refused(&f, BLUE_WR_RDMA_WRITE, old, (uintptr_t)f.bmem, 64);
	mw_fx_fini(&f);
}

Test(mw, dealloc_closes_the_window_for_good)
{
	struct mw_fx f;
	uint32_t key;
	int i;

	mw_fx_init(&f, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_MW_BIND);
	alloc_bind2(&f, WOFF, WLEN, WIN_RIGHTS);
	key = f.rkey;
	cr_assert_eq(blue_dealloc_mw(f.mw), 0);
	f.mw = NULL;
	/* windows allocated since never take the key back, whatever their consumer byte */
	for (i = 0; i < 64; i++) {
		struct blue_mw *mw = blue_alloc_mw(f.fx.b.pd, BLUE_MW_TYPE_2);

		cr_assert_not_null(mw);
		cr_assert_neq(mw->rkey >> 8, key >> 8, "a window took the dealloc'd key");
		cr_assert_eq(blue_dealloc_mw(mw), 0);
	}
	cr_assert_eq(blue_dereg_mr(f.bmr), 0, "no window is bound any more");
	f.bmr = blue_reg_mr(f.fx.b.pd, f.bmem, LEN, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_MW_BIND);
	cr_assert_not_null(f.bmr);
	a_refused(&f, BLUE_WR_RDMA_WRITE, key, win_va(&f, 0), 64);
	mw_fx_fini(&f);
}

/* Type 2B: a window bound through one QP is not reached through another. */
Test(mw, type2b_window_refuses_another_qp)
{
	struct mw_fx f;
	struct blue_qp *qa1, *qb1, *qa2, *qb2;

	mw_fx_init(&f, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_MW_BIND);
	alloc_bind2(&f, WOFF, WLEN, WIN_RIGHTS);
	qa1 = f.fx.a.qp;
	qb1 = f.fx.b.qp;
	qa2 = rc_qp_create(&f.fx, &f.fx.a);
	qb2 = rc_qp_create(&f.fx, &f.fx.b);
	rc_qp_connect(&f.fx, &f.fx.a, &f.fx.b, 0x300, 0x400);
	rc_qp_connect(&f.fx, &f.fx.b, &f.fx.a, 0x400, 0x300);
	a_refused(&f, BLUE_WR_RDMA_WRITE, f.rkey, win_va(&f, 0), 64);
	cr_assert_eq(blue_destroy_qp(qa2), 0);
	cr_assert_eq(blue_destroy_qp(qb2), 0);
	f.fx.a.qp = qa1;
	f.fx.b.qp = qb1;
	/* through the QP it is bound to, the same key works */
	cr_assert_eq(a_op(&f, BLUE_WR_RDMA_WRITE, f.rkey, win_va(&f, 0), 64).status,
		     BLUE_WC_SUCCESS);
	cr_assert_eq(memcmp(f.bmem + WOFF, f.amem, 64), 0);
	mw_fx_fini(&f);
}

/* IBA 10.6.7 rules of a bind, each failing the bind with BLUE_WC_MW_BIND_ERR. */
static void bind_refused(unsigned int mr_access, unsigned int win_access, uint64_t off,
			 uint64_t len)
{
	struct mw_fx f;
	struct blue_wc wc;

	mw_fx_init(&f, mr_access);
	f.mw = blue_alloc_mw(f.fx.b.pd, BLUE_MW_TYPE_2);
	cr_assert_not_null(f.mw);
	wc = bind2(&f, f.fx.b.qp, off, len, win_access);
	cr_assert_eq(wc.status, BLUE_WC_MW_BIND_ERR, "bind: %s", blue_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, BLUE_WC_BIND_MW);
	cr_assert_eq(f.fx.b.qp->live->state, BLUE_QPS_ERR);
	mw_fx_fini(&f);
}

Test(mw, bind_needs_mw_bind_on_the_mr)
{
	bind_refused(BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE, WIN_RIGHTS, 0, 64);
}

Test(mw, writable_window_needs_local_write_on_the_mr)
{
	bind_refused(BLUE_ACCESS_MW_BIND, BLUE_ACCESS_REMOTE_WRITE, 0, 64);
}

Test(mw, bind_outside_the_mr_is_refused)
{
	bind_refused(BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_MW_BIND, WIN_RIGHTS, LEN - 8, 16);
}

Test(mw, type2_bind_of_zero_length_is_refused)
{
	bind_refused(BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_MW_BIND, WIN_RIGHTS, 0, 0);
}

Test(mw, type1_bind_write_and_unbind)
{
	struct mw_fx f;
	struct blue_mw_bind b;
	struct blue_wc wc;
	uint32_t k0;

	mw_fx_init(&f, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_MW_BIND);
	f.mw = blue_alloc_mw(f.fx.b.pd, BLUE_MW_TYPE_1);
	cr_assert_not_null(f.mw);
	k0 = f.mw->rkey;
	/* nothing reaches an unbound window */
	a_refused(&f, BLUE_WR_RDMA_WRITE, k0, win_va(&f, 0), 8);
	mw_fx_fini(&f);

	mw_fx_init(&f, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_MW_BIND);
	f.mw = blue_alloc_mw(f.fx.b.pd, BLUE_MW_TYPE_1);
	cr_assert_not_null(f.mw);
	k0 = f.mw->rkey;
	b = (struct blue_mw_bind){ .wr_id = 3, .send_flags = BLUE_SEND_SIGNALED,
		.bind_info = { .mr = f.bmr, .addr = win_va(&f, 0), .length = WLEN,
			       .mw_access_flags = BLUE_ACCESS_REMOTE_WRITE } };
	cr_assert_eq(blue_bind_mw(f.fx.b.qp, f.mw, &b), 0);
	cr_assert_neq(f.mw->rkey, k0, "ibv_bind_mw gives the window a new key on return");
	wc = rc_wait1(&f.fx, f.fx.b.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "bind: %s", blue_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, BLUE_WC_BIND_MW);
	wc = a_op(&f, BLUE_WR_RDMA_WRITE, f.mw->rkey, win_va(&f, 0), 128);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "write: %s", blue_wc_status_str(wc.status));
	cr_assert_eq(memcmp(f.bmem + WOFF, f.amem, 128), 0);
	/* zero-based and type 2 calls are refused at the call */
	b.bind_info.mw_access_flags |= BLUE_ACCESS_ZERO_BASED;
	cr_assert_eq(blue_bind_mw(f.fx.b.qp, f.mw, &b), EINVAL);
	/* rebind with length 0: unbound (how rdma-core's tests invalidate a type 1) */
	b.bind_info.mw_access_flags = 0;
	b.bind_info.length = 0;
	cr_assert_eq(blue_bind_mw(f.fx.b.qp, f.mw, &b), 0);
	wc = rc_wait1(&f.fx, f.fx.b.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "unbind: %s", blue_wc_status_str(wc.status));
	cr_assert_eq(blue_dereg_mr(f.bmr), 0, "an unbound window holds no MR");
	f.bmr = blue_reg_mr(f.fx.b.pd, f.bmem, LEN, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_MW_BIND);
	cr_assert_not_null(f.bmr);
	a_refused(&f, BLUE_WR_RDMA_WRITE, f.mw->rkey, win_va(&f, 0), 8);
	mw_fx_fini(&f);
}

Test(mw, type1_bind_from_another_pd_is_refused)
{
	struct mw_fx f;
	struct blue_pd *pd2;
	struct blue_mw_bind b;
	struct blue_wc wc;

	mw_fx_init(&f, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_MW_BIND);
	pd2 = blue_alloc_pd(f.fx.b.ctx);
	cr_assert_not_null(pd2);
	f.mw = blue_alloc_mw(pd2, BLUE_MW_TYPE_1);
	cr_assert_not_null(f.mw);
	b = (struct blue_mw_bind){ .send_flags = BLUE_SEND_SIGNALED,
		.bind_info = { .mr = f.bmr, .addr = win_va(&f, 0), .length = WLEN,
			       .mw_access_flags = BLUE_ACCESS_REMOTE_WRITE } };
	cr_assert_eq(blue_bind_mw(f.fx.b.qp, f.mw, &b), 0);
	wc = rc_wait1(&f.fx, f.fx.b.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_MW_BIND_ERR, "bind: %s", blue_wc_status_str(wc.status));
	cr_assert_eq(blue_dealloc_pd(pd2), EBUSY, "a PD with a window is busy");
	cr_assert_eq(blue_dealloc_mw(f.mw), 0);
	f.mw = NULL;
	cr_assert_eq(blue_dealloc_pd(pd2), 0);
	mw_fx_fini(&f);
}

Test(mw, alloc_checks_its_arguments)
{
	struct rc_fx fx;
	struct blue_device_attr da;

	rc_fx_init_noqp(&fx, NULL);
	errno = 0;
	cr_assert_null(blue_alloc_mw(fx.a.pd, 3), "type 3");
	cr_assert_eq(errno, EINVAL);
	cr_assert_null(blue_alloc_mw(NULL, BLUE_MW_TYPE_1));
	cr_assert_eq(blue_dealloc_mw(NULL), EINVAL);
	cr_assert_eq(blue_query_device(fx.a.ctx, &da), 0);
	cr_assert_eq(da.max_mw, BLUE_MAX_MW);
	rc_fx_fini(&fx);
}

/*
 * ibv_rereg_mr on an MR with a window bound (rxe allows it and keeps the window): each
 * access through the window checks the MR as it is now, so a change that takes away
 * what the window relies on (its PD, its local write, its range) refuses the access.
 */
static void rereg_under_window(unsigned int what, bool new_pd, unsigned int access,
			       uint32_t len)
{
	struct blue_pd *pd2 = NULL;
	struct mw_fx f;
	struct blue_wc wc;

	mw_fx_init(&f, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_MW_BIND);
	alloc_bind2(&f, WOFF, WLEN, WIN_RIGHTS);
	wc = a_op(&f, BLUE_WR_RDMA_WRITE, f.rkey, win_va(&f, 0), 64);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "before rereg: %s",
		     blue_wc_status_str(wc.status));
	if (new_pd) {
		pd2 = blue_alloc_pd(f.fx.b.ctx);
		cr_assert_not_null(pd2);
	}
	cr_assert_eq(blue__rereg_mr(f.bmr, what, pd2, f.bmem, len, access), 0, "rereg");
	rc_fill(f.amem, LEN, 9);
	a_refused(&f, BLUE_WR_RDMA_WRITE, f.rkey, win_va(&f, 0), 64);
	cr_assert_eq(blue_dealloc_mw(f.mw), 0);
	f.mw = NULL;
	if (new_pd) {
		cr_assert_eq(blue__rereg_mr(f.bmr, BLUE_REREG_PD, f.fx.b.pd, NULL, 0, 0), 0);
		cr_assert_eq(blue_dealloc_pd(pd2), 0);
	}
	mw_fx_fini(&f);
}

Test(mw, rereg_pd_under_a_window_refuses_it)
{
	rereg_under_window(BLUE_REREG_PD, true, 0, 0);
}

Test(mw, rereg_without_local_write_refuses_window_writes)
{
	rereg_under_window(BLUE_REREG_ACCESS, false, BLUE_ACCESS_MW_BIND, 0);
}

Test(mw, rereg_shrinking_the_mr_below_the_window_refuses_it)
{
	rereg_under_window(BLUE_REREG_TRANSLATION, false, 0, WOFF);
}

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

/*
 * A window's key without its consumer byte never repeats while a slot is reused fewer
 * than 1024 times (mr_key.h), so no stale window key names a later window whatever
 * bytes ibv_inc_rkey() gives it; and window slots never turn into MR slots.
 */
Test(mw, window_keys_never_repeat)
{
	enum { N = 20000 };
	uint32_t *keys = malloc(N * sizeof(*keys));
	struct blue_mr *mr;
	struct rc_fx fx;
	uint8_t buf[64];
	int i;

	cr_assert_not_null(keys);
	rc_fx_init_noqp(&fx, NULL);
	for (i = 0; i < N; i++) {
		struct blue_mw *mw = blue_alloc_mw(fx.a.pd, (i & 1) ? BLUE_MW_TYPE_1 :
						   BLUE_MW_TYPE_2);

		cr_assert_not_null(mw, "alloc %d", i);
		keys[i] = mw->rkey >> 8;
		cr_assert_eq(blue_dealloc_mw(mw), 0);
	}
	qsort(keys, N, sizeof(*keys), cmp_u32);
	for (i = 1; i < N; i++)
		cr_assert_neq(keys[i], keys[i - 1], "window key 0x%x..  handed out twice",
			      keys[i]);
	/* an MR now gets a slot no window ever had: its key's index is none of theirs */
	mr = blue_reg_mr(fx.a.pd, buf, sizeof(buf), BLUE_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(mr);
	for (i = 0; i < N; i++)
		cr_assert_neq(keys[i] >> 10, mr->lkey >> 18, "an MR took a window's slot");
	cr_assert_eq(blue_dereg_mr(mr), 0);
	rc_fx_fini(&fx);
	free(keys);
}
