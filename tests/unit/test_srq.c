// SPDX-License-Identifier: MIT
/*
 * Shared receive queues over the loopback HAL: RC QPs of one SRQ take its WQEs in
 * posting order, an empty SRQ makes RNR NAKs, the limit event fires once and disarms,
 * destroy refuses while QPs use it, and LAST_WQE_REACHED comes once after the held WQE
 * is flushed. The async-event tests (QP_FATAL, overflow, ports) are test_events.c.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/events.h"
#include "runtime/progress.h"
#include "runtime/qp.h"
#include "runtime/srq.h"
#include "tests/unit/rc_fixture.h"

#define NQ 2		/* QP pairs on B's SRQ */
#define SLOT 4096	/* bytes per receive buffer */

struct srq_fx {
	struct rc_fx fx;
	struct blue_srq *srq;
	struct blue_pd *srq_pd;		/* the SRQ's PD: B's, or one of its own */
	struct rc_side a[NQ], b[NQ];	/* copies of fx.a/fx.b, each with its own QP */
	int tag[NQ];			/* qp_context of b[i] */
	uint8_t *rbuf, *sbuf;
	struct blue_mr *rmr, *smr;
	unsigned int nbuf;
};

static struct blue_qp *qp_on_srq(struct rc_fx *fx, struct rc_side *s, struct blue_srq *srq,
				 void *ctx)
{
	struct blue_qp_init_attr ia = {
		.qp_context = ctx,
		.send_cq = s->scq,
		.recv_cq = s->rcq,
		.srq = srq,
		.cap = { .max_send_wr = fx->o.max_send_wr, .max_recv_wr = 7,
			 .max_send_sge = fx->o.max_sge, .max_recv_sge = 3 },
		.qp_type = BLUE_QPT_RC,
	};

	s->qp = blue_create_qp(s->pd, &ia);
	cr_assert_not_null(s->qp, "create_qp on an SRQ");
	/* IBA 10.2.9: the QP's own receive sizes mean nothing with an SRQ */
	cr_assert_eq(ia.cap.max_recv_wr, 0);
	cr_assert_eq(ia.cap.max_recv_sge, 0);
	return s->qp;
}

/*
 * B's NQ QPs on one SRQ of @max_wr WQEs, each connected to one of A's QPs. With
 * @own_pd the SRQ and B's receive buffers are in a PD of their own, not the QPs'.
 */
static void srq_fx_init_pd(struct srq_fx *f, const struct rc_opts *o, uint32_t max_wr,
			   bool own_pd)
{
	struct blue_srq_attr sa = { .max_wr = max_wr, .max_sge = 2 };
	unsigned int acc = BLUE_ACCESS_LOCAL_WRITE;
	int i;

	memset(f, 0, sizeof(*f));
	rc_fx_init_noqp(&f->fx, o);
	f->srq_pd = own_pd ? blue_alloc_pd(f->fx.b.ctx) : f->fx.b.pd;
	cr_assert_not_null(f->srq_pd);
	f->srq = blue_create_srq(f->srq_pd, &sa, f);
	cr_assert_not_null(f->srq, "create_srq");
	cr_assert_geq(sa.max_wr, max_wr);
	for (i = 0; i < NQ; i++) {
		f->a[i] = f->fx.a;
		f->b[i] = f->fx.b;
		rc_qp_create(&f->fx, &f->a[i]);
		qp_on_srq(&f->fx, &f->b[i], f->srq, &f->tag[i]);
	}
	for (i = 0; i < NQ; i++) {
		rc_qp_connect(&f->fx, &f->a[i], &f->b[i], 0x100 + i * 0x1000, 0x800 + i * 0x1000);
		rc_qp_connect(&f->fx, &f->b[i], &f->a[i], 0x800 + i * 0x1000, 0x100 + i * 0x1000);
	}
	f->nbuf = 16;
	f->rbuf = calloc(f->nbuf, SLOT);
	f->sbuf = calloc(f->nbuf, SLOT);
	cr_assert(f->rbuf && f->sbuf);
	f->rmr = blue_reg_mr(f->srq_pd, f->rbuf, f->nbuf * SLOT, acc);
	f->smr = blue_reg_mr(f->fx.a.pd, f->sbuf, f->nbuf * SLOT, acc);
	cr_assert(f->rmr && f->smr);
}

static void srq_fx_init(struct srq_fx *f, const struct rc_opts *o, uint32_t max_wr)
{
	srq_fx_init_pd(f, o, max_wr, false);
}

static void srq_fx_fini(struct srq_fx *f)
{
	int i;

	blue_hal_loopback_set_filter(f->fx.a.hal, NULL, NULL);
	for (i = 0; i < NQ; i++) {
		cr_assert_eq(blue_destroy_qp(f->a[i].qp), 0);
		cr_assert_eq(blue_destroy_qp(f->b[i].qp), 0);
	}
	cr_assert_eq(blue_destroy_srq(f->srq), 0);
	cr_assert_eq(blue_dereg_mr(f->rmr), 0);
	cr_assert_eq(blue_dereg_mr(f->smr), 0);
	if (f->srq_pd != f->fx.b.pd)
		cr_assert_eq(blue_dealloc_pd(f->srq_pd), 0);
	free(f->rbuf);
	free(f->sbuf);
	rc_fx_fini(&f->fx);
}

/* Receive buffer @i (wr_id 100 + @i) onto the SRQ. */
static void srq_post(struct srq_fx *f, unsigned int i)
{
	struct blue_sge sge = { .addr = (uintptr_t)(f->rbuf + i * SLOT), .length = SLOT,
				.lkey = f->rmr->lkey };
	struct blue_recv_wr wr = { .wr_id = 100 + i, .sg_list = &sge, .num_sge = 1 };
	struct blue_recv_wr *bad;

	cr_assert_eq(blue_post_srq_recv(f->srq, &wr, &bad), 0, "post_srq_recv");
}

/* A SEND of @len bytes (pattern @seed, from send slot @slot) on A's QP @q. */
static void send_on(struct srq_fx *f, int q, unsigned int slot, uint32_t len, unsigned int seed)
{
	uint8_t *src = f->sbuf + slot * SLOT;
	struct blue_sge sge = { .addr = (uintptr_t)src, .length = len, .lkey = f->smr->lkey };
	struct blue_send_wr wr = { .wr_id = seed, .sg_list = &sge, .num_sge = 1,
				   .opcode = BLUE_WR_SEND, .send_flags = BLUE_SEND_SIGNALED };

	rc_fill(src, len, seed);
	rc_post_send(&f->a[q], &wr);
}

static void sends_done(struct srq_fx *f, int n)
{
	struct blue_wc wc[8];
	int i;

	cr_assert_leq(n, 8);
	cr_assert_eq(rc_poll(&f->fx, f->fx.a.scq, wc, n, RC_WAIT_MS), n, "send completions");
	for (i = 0; i < n; i++)
		cr_assert_eq(wc[i].status, BLUE_WC_SUCCESS, "send %llu: %s",
			     (unsigned long long)wc[i].wr_id, blue_wc_status_str(wc[i].status));
}

static bool no_event(struct blue_context *ctx)
{
	struct blue_async_event e;
	struct pollfd pfd = { .fd = blue_async_fd(ctx), .events = POLLIN };

	return poll(&pfd, 1, 0) == 0 && blue_get_async_event(ctx, &e) == EAGAIN;
}

/* SENDs on alternating QPs land in the SRQ's WQEs in posting order, bytes compared. */
Test(srq, two_qps_take_wqes_in_posting_order)
{
	struct srq_fx f;
	struct blue_wc wc;
	unsigned int i;

	srq_fx_init(&f, NULL, 16);
	for (i = 0; i < 6; i++)
		srq_post(&f, i);
	for (i = 0; i < 6; i++) {
		send_on(&f, (int)(i % NQ), i, 200 + i, 40 + i);
		sends_done(&f, 1);
		wc = rc_wait1(&f.fx, f.fx.b.rcq, RC_WAIT_MS);
		cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "recv %u: %s", i,
			     blue_wc_status_str(wc.status));
		cr_assert_eq(wc.wr_id, 100 + i, "message %u landed in WQE %llu", i,
			     (unsigned long long)wc.wr_id);
		cr_assert_eq(wc.qp_num, blue_qp_num(f.b[i % NQ].qp));
		cr_assert_eq(wc.byte_len, 200 + i);
		cr_assert(rc_check(f.rbuf + i * SLOT, 200 + i, 40 + i), "bytes of message %u", i);
	}
	srq_fx_fini(&f);
}

/*
 * Multi-packet SENDs (3 KiB at MTU 1024) on both QPs at once: each holds the WQE it
 * took at its first packet while the other QP takes the next; every buffer holds one
 * whole message.
 */
Test(srq, multi_packet_sends_hold_their_wqe)
{
	struct srq_fx f;
	struct blue_wc wc[4];
	unsigned int i, got[4] = { 0 };
	int n, k;

	srq_fx_init(&f, NULL, 16);
	for (i = 0; i < 4; i++)
		srq_post(&f, i);
	for (i = 0; i < 4; i++)
		send_on(&f, (int)(i % NQ), i, 3000, 70 + i);
	sends_done(&f, 4);
	n = rc_poll(&f.fx, f.fx.b.rcq, wc, 4, RC_WAIT_MS);
	cr_assert_eq(n, 4);
	for (k = 0; k < n; k++) {
		unsigned int slot = (unsigned int)(wc[k].wr_id - 100), seed;
		bool ok = false;

		cr_assert_eq(wc[k].status, BLUE_WC_SUCCESS);
		cr_assert_lt(slot, 4);
		cr_assert_eq(wc[k].byte_len, 3000);
		for (seed = 70; seed < 74; seed++) {
			if (rc_check(f.rbuf + slot * SLOT, 3000, seed)) {
				ok = true;
				got[seed - 70]++;
			}
		}
		cr_assert(ok, "WQE %u holds no whole message", slot);
	}
	for (i = 0; i < 4; i++)
		cr_assert_eq(got[i], 1, "message %u landed %u times", i, got[i]);
	srq_fx_fini(&f);
}

/* An RC QP on an empty SRQ answers RNR NAK; the SEND lands once a WQE is posted. */
Test(srq, empty_srq_rnr_then_success)
{
	struct srq_fx f;
	struct blue_wc wc;

	srq_fx_init(&f, NULL, 8);	/* rnr_retry 7: infinite */
	send_on(&f, 1, 0, 3000, 9);
	rc_quiet(&f.fx, f.fx.a.scq, 20);
	cr_assert_geq(f.a[1].qp->live->rnr_events, 2, "RNR NAKs seen: %llu",
		      (unsigned long long)f.a[1].qp->live->rnr_events);
	cr_assert_eq(f.b[1].qp->live->last_nak_syndrome & BLUE_AETH_TYPE_MASK,
		     BLUE_AETH_RNR_NAK);
	srq_post(&f, 3);
	sends_done(&f, 1);
	wc = rc_wait1(&f.fx, f.fx.b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 103);
	cr_assert_eq(wc.byte_len, 3000);
	cr_assert(rc_check(f.rbuf + 3 * SLOT, 3000, 9));
	srq_fx_fini(&f);
}

/* Armed at 4 with 8 posted: the 5th WQE taken leaves 3 and raises the event, once. */
Test(srq, limit_event_fires_once_and_disarms)
{
	struct srq_fx f;
	struct blue_srq_attr sa = { .srq_limit = 4 };
	struct blue_async_event e;
	struct pollfd pfd;
	unsigned int i;

	srq_fx_init(&f, NULL, 8);
	for (i = 0; i < 8; i++)
		srq_post(&f, i);
	cr_assert_eq(blue_modify_srq(f.srq, &sa, BLUE_SRQ_LIMIT), 0);
	cr_assert_eq(blue_query_srq(f.srq, &sa), 0);
	cr_assert_eq(sa.srq_limit, 4);
	for (i = 0; i < 4; i++) {
		send_on(&f, (int)(i % NQ), i, 64, i);
		sends_done(&f, 1);
	}
	cr_assert(no_event(f.fx.b.ctx), "4 WQEs left is not below the limit of 4");
	send_on(&f, 0, 4, 64, 4);
	sends_done(&f, 1);
	pfd = (struct pollfd){ .fd = blue_async_fd(f.fx.b.ctx), .events = POLLIN };
	cr_assert_eq(poll(&pfd, 1, 0), 1, "the async fd is readable");
	cr_assert_eq(blue_get_async_event(f.fx.b.ctx, &e), 0);
	cr_assert_eq(e.type, BLUE_EVENT_SRQ_LIMIT_REACHED);
	cr_assert_eq(e.srq, f.srq);
	cr_assert_eq(e.context, &f);
	cr_assert_null(e.qp);
	cr_assert(no_event(f.fx.b.ctx), "one event, and the fd is quiet again");
	cr_assert_eq(blue_query_srq(f.srq, &sa), 0);
	cr_assert_eq(sa.srq_limit, 0, "disarmed");
	send_on(&f, 1, 5, 64, 5);
	sends_done(&f, 1);
	cr_assert(no_event(f.fx.b.ctx), "disarmed: no second event");
	/* armed again: the next take below the limit fires again */
	sa.srq_limit = 3;
	cr_assert_eq(blue_modify_srq(f.srq, &sa, BLUE_SRQ_LIMIT), 0);
	send_on(&f, 0, 6, 64, 6);
	sends_done(&f, 1);
	cr_assert_eq(blue_get_async_event(f.fx.b.ctx, &e), 0);
	cr_assert_eq(e.type, BLUE_EVENT_SRQ_LIMIT_REACHED);
	srq_fx_fini(&f);
}

Test(srq, modify_checks)
{
	struct srq_fx f;
	struct blue_srq_attr sa;

	srq_fx_init(&f, NULL, 8);
	sa = (struct blue_srq_attr){ .srq_limit = 9 };
	cr_assert_eq(blue_modify_srq(f.srq, &sa, BLUE_SRQ_LIMIT), EINVAL, "above max_wr 8");
	sa = (struct blue_srq_attr){ .max_wr = 32 };
	cr_assert_eq(blue_modify_srq(f.srq, &sa, BLUE_SRQ_MAX_WR), EINVAL, "no resize");
	cr_assert_eq(blue_query_srq(f.srq, &sa), 0);
	cr_assert_eq(sa.max_wr, 8);
	cr_assert_eq(sa.max_sge, 2);
	cr_assert_eq(sa.srq_limit, 0);
	srq_fx_fini(&f);
}

/* Destroy is EBUSY while a QP uses the SRQ; the QP's own receive queue is closed. */
Test(srq, destroy_busy_and_post_recv_refused)
{
	struct srq_fx f;
	struct blue_qp_attr qa;
	struct blue_qp_init_attr ia;
	struct blue_sge sge = { .addr = 1, .length = 1, .lkey = 0 };
	struct blue_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad = NULL;
	struct blue_recv_wr big = { .wr_id = 2, .sg_list = &sge, .num_sge = 3 };

	srq_fx_init(&f, NULL, 8);
	cr_assert_eq(blue_destroy_srq(f.srq), EBUSY);
	cr_assert_eq(blue_dealloc_pd(f.fx.b.pd), EBUSY);
	cr_assert_eq(blue_post_recv(f.b[0].qp, &wr, &bad), EINVAL);
	cr_assert_eq(bad, &wr);
	cr_assert_eq(blue_post_srq_recv(f.srq, &big, &bad), EINVAL, "3 SGEs, max_sge 2");
	cr_assert_eq(bad, &big);
	cr_assert_eq(blue_query_qp(f.b[0].qp, &qa, 0, &ia), 0);
	cr_assert_eq(qa.cap.max_recv_wr, 0);
	cr_assert_eq(qa.cap.max_recv_sge, 0);
	cr_assert_eq(ia.srq, f.srq);
	srq_fx_fini(&f);
}

/*
 * B's QP 0 takes a WQE for a multi-packet SEND whose later packets are lost, then is
 * moved to ERROR: the held WQE completes FLUSH_ERR, the SRQ's other WQEs stay (QP 1
 * uses the next), and QP_LAST_WQE_REACHED arrives once with the QP and its context.
 * The application moved the QP: no QP_FATAL.
 */
Test(srq, last_wqe_reached_after_held_wqe_flushed)
{
	struct srq_fx f;
	struct rc_drop drop = { .opcode = BLUE_OP_RC_SEND_MIDDLE, .psn = -1, .max_drops = -1 };
	struct blue_qp_attr qa = { .qp_state = BLUE_QPS_ERR };
	struct blue_async_event e;
	struct blue_wc wc;
	int i;

	srq_fx_init(&f, NULL, 8);
	srq_post(&f, 0);
	srq_post(&f, 1);
	rc_drop_install(f.fx.a.hal, &drop);
	send_on(&f, 0, 0, 3000, 1);
	for (i = 0; i < 200 && !f.b[0].qp->rq_held; i++)
		rc_progress(&f.fx);
	cr_assert(f.b[0].qp->rq_held, "the first packet took a WQE");
	cr_assert_gt(drop.dropped, 0);
	cr_assert(no_event(f.fx.b.ctx));
	cr_assert_eq(blue_modify_qp(f.b[0].qp, &qa, BLUE_QP_STATE), 0);
	wc = rc_wait1(&f.fx, f.fx.b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_WR_FLUSH_ERR);
	cr_assert_eq(wc.wr_id, 100, "the held WQE");
	cr_assert_eq(wc.qp_num, blue_qp_num(f.b[0].qp));
	cr_assert_eq(blue_get_async_event(f.fx.b.ctx, &e), 0);
	cr_assert_eq(e.type, BLUE_EVENT_QP_LAST_WQE_REACHED);
	cr_assert_eq(e.qp, f.b[0].qp);
	cr_assert_eq(e.context, &f.tag[0]);
	for (i = 0; i < 20; i++)
		rc_progress(&f.fx);
	cr_assert(no_event(f.fx.b.ctx), "once, and no QP_FATAL for the application's move");
	/* the SRQ kept its other WQE: QP 1 receives into it */
	blue_hal_loopback_set_filter(f.fx.a.hal, NULL, NULL);
	send_on(&f, 1, 1, 100, 2);
	wc = rc_wait1(&f.fx, f.fx.b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 101);
	cr_assert(rc_check(f.rbuf + SLOT, 100, 2));
	srq_fx_fini(&f);
}

/*
 * The SRQ's WQEs name memory of the SRQ's PD (IBA 10.2.9), which need not be the QP's:
 * a receive lands in a buffer registered in the SRQ's PD only.
 */
Test(srq, receive_checked_against_the_srq_pd)
{
	struct srq_fx f;
	struct blue_wc wc;

	srq_fx_init_pd(&f, NULL, 8, true);
	srq_post(&f, 0);
	send_on(&f, 0, 0, 500, 3);
	sends_done(&f, 1);
	wc = rc_wait1(&f.fx, f.fx.b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "%s", blue_wc_status_str(wc.status));
	cr_assert_eq(wc.wr_id, 100);
	cr_assert(rc_check(f.rbuf, 500, 3));
	srq_fx_fini(&f);
}
