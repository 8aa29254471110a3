// SPDX-License-Identifier: MIT
/*
 * Held ACKs (runtime/progress.c ack_hold): a pass that queued nothing but plain ACKs
 * keeps them for the next pass's doorbell when the application answers (a ping-pong);
 * the answer then leaves first and the ACK right behind it. A side that only receives
 * never holds. The frames each side puts on the loopback wire are recorded in order.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/codec.h"
#include "runtime/progress.h"
#include "runtime/qp.h"
#include "tests/unit/rc_fixture.h"

#define NREC 64

struct rec {
	int n;
	uint8_t op[NREC];
};

static enum blue_lb_verdict record(void *arg, const struct blue_frame *f, uint64_t seq)
{
	struct rec *r = arg;
	struct blue_pkt p;

	(void)seq;
	if (!blue_pkt_parse(f->data, f->len, &p) && r->n < NREC)
		r->op[r->n++] = p.opcode;
	return BLUE_LB_PASS;
}

struct mem {
	uint8_t a[64], b[64];	/* each side's source (first half) and target (second) */
	struct blue_mr *amr, *bmr;
};

static void mem_init(struct rc_fx *fx, struct mem *m)
{
	unsigned int rw = BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE;

	memset(m->a, 0, sizeof(m->a));
	memset(m->b, 0, sizeof(m->b));
	m->amr = blue_reg_mr(fx->a.pd, m->a, sizeof(m->a), rw);
	m->bmr = blue_reg_mr(fx->b.pd, m->b, sizeof(m->b), rw);
	cr_assert(m->amr && m->bmr);
}

static void mem_fini(struct mem *m)
{
	cr_assert_eq(blue_dereg_mr(m->amr), 0);
	cr_assert_eq(blue_dereg_mr(m->bmr), 0);
}

/* An 8-byte signaled WRITE of @seed's pattern from @s's source to @peer's target. */
static void write8(struct rc_side *s, uint8_t *src, const struct blue_mr *lmr, uint8_t *dst,
		   const struct blue_mr *rmr, uint64_t id)
{
	struct blue_sge sge = { .addr = (uintptr_t)src, .length = 8, .lkey = lmr->lkey };
	struct blue_send_wr wr;

	rc_fill(src, 8, (unsigned int)id);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = BLUE_WR_RDMA_WRITE;
	wr.send_flags = BLUE_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)dst;
	wr.wr.rdma.rkey = rmr->rkey;
	rc_post_send(s, &wr);
}

static void a_to_b(struct rc_fx *fx, struct mem *m, uint64_t id)
{
	write8(&fx->a, m->a, m->amr, m->b + 32, m->bmr, id);
}

static void b_to_a(struct rc_fx *fx, struct mem *m, uint64_t id)
{
	write8(&fx->b, m->b, m->bmr, m->a + 32, m->amr, id);
}

static void reap(struct rc_fx *fx, struct blue_cq *cq, uint64_t id0, uint64_t id1)
{
	struct blue_wc wc[2];

	cr_assert_eq(rc_poll(fx, cq, wc, 2, RC_WAIT_MS), 2, "both WRITEs complete");
	cr_assert_eq(wc[0].status, BLUE_WC_SUCCESS, "%s", blue_wc_status_str(wc[0].status));
	cr_assert_eq(wc[1].status, BLUE_WC_SUCCESS, "%s", blue_wc_status_str(wc[1].status));
	cr_assert_eq(wc[0].wr_id, id0);
	cr_assert_eq(wc[1].wr_id, id1);
}

Test(ack_hold, sink_acks_at_once)
{
	struct rc_fx fx;
	struct mem m;
	struct rec rb = { 0 };
	struct blue_wc wc;

	rc_fx_init(&fx, NULL);
	mem_init(&fx, &m);
	blue_hal_loopback_set_filter(fx.b.hal, record, &rb);
	a_to_b(&fx, &m, 1);
	cr_assert_gt(blue__progress(fx.a.ctx), 0);
	cr_assert_gt(blue__progress(fx.b.ctx), 0);
	/* B never posted and has nothing outstanding: its application may stop polling now */
	cr_assert_eq(rb.n, 1, "B's ACK left in the pass that received the WRITE");
	cr_assert_eq(rb.op[0], BLUE_OP_RC_ACKNOWLEDGE);
	cr_assert_eq(blue__engine_stats(fx.b.ctx)->ack_deferred, 0);
	cr_assert(rc_check(m.b + 32, 8, 1), "the WRITE landed");
	wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	cr_assert_eq(rb.n, 1, "one ACK, nothing else");
	mem_fini(&m);
	rc_fx_fini(&fx);
}

Test(ack_hold, pingpong_answer_goes_first)
{
	struct rc_fx fx;
	struct mem m;
	struct rec ra = { 0 }, rb = { 0 };

	rc_fx_init(&fx, NULL);
	mem_init(&fx, &m);
	blue_hal_loopback_set_filter(fx.a.hal, record, &ra);
	blue_hal_loopback_set_filter(fx.b.hal, record, &rb);

	/* round 1: B has not answered anything yet, so it ACKs W1 at once */
	a_to_b(&fx, &m, 1);
	blue__progress(fx.a.ctx);
	blue__progress(fx.b.ctx);
	cr_assert_eq(rb.n, 1);
	cr_assert_eq(rb.op[0], BLUE_OP_RC_ACKNOWLEDGE);
	b_to_a(&fx, &m, 2);
	blue__progress(fx.b.ctx);
	cr_assert_eq(rb.n, 2);
	cr_assert_eq(rb.op[1], BLUE_OP_RC_WRITE_ONLY);

	/* A posted (W1) since it last ACKed: it answers, so its ACK of W2 waits */
	cr_assert_gt(blue__progress(fx.a.ctx), 0, "a held ACK is work still to do");
	cr_assert_eq(ra.n, 1, "only W1 so far: the ACK of W2 is held");
	cr_assert_eq(blue__engine_stats(fx.a.ctx)->ack_deferred, 1);
	cr_assert(rc_check(m.a + 32, 8, 2), "W2 landed before its ACK left");

	/* A's answer W3 leaves first, the held ACK of W2 behind it, one doorbell */
	a_to_b(&fx, &m, 3);
	blue__progress(fx.a.ctx);
	cr_assert_eq(ra.n, 3);
	cr_assert_eq(ra.op[1], BLUE_OP_RC_WRITE_ONLY);
	cr_assert_eq(ra.op[2], BLUE_OP_RC_ACKNOWLEDGE);

	/* now B answers too: it holds its ACK of W3 until W4 goes */
	blue__progress(fx.b.ctx);
	cr_assert_eq(rb.n, 2, "B's ACK of W3 is held");
	cr_assert_eq(blue__engine_stats(fx.b.ctx)->ack_deferred, 1);
	b_to_a(&fx, &m, 4);
	blue__progress(fx.b.ctx);
	cr_assert_eq(rb.n, 4);
	cr_assert_eq(rb.op[2], BLUE_OP_RC_WRITE_ONLY);
	cr_assert_eq(rb.op[3], BLUE_OP_RC_ACKNOWLEDGE);

	/* A holds its ACK of W4 for one pass; the next pass rings without a new post */
	blue__progress(fx.a.ctx);
	cr_assert_eq(ra.n, 3, "A's ACK of W4 is held");
	blue__progress(fx.a.ctx);
	cr_assert_eq(ra.n, 4, "held for one pass only");
	cr_assert_eq(ra.op[3], BLUE_OP_RC_ACKNOWLEDGE);

	reap(&fx, fx.a.scq, 1, 3);
	reap(&fx, fx.b.scq, 2, 4);
	cr_assert(rc_check(m.b + 32, 8, 3), "B holds W3's bytes");
	cr_assert(rc_check(m.a + 32, 8, 4), "A holds W4's bytes");
	cr_assert_eq(fx.a.qp->live->retransmits, 0, "no ACK timer fired");
	cr_assert_eq(fx.b.qp->live->retransmits, 0, "no ACK timer fired");
	mem_fini(&m);
	rc_fx_fini(&fx);
}

Test(ack_hold, off_by_env)
{
	struct rc_fx fx;
	struct mem m;
	struct rec ra = { 0 };

	setenv("BLUE_ACK_DEFER", "0", 1);
	rc_fx_init(&fx, NULL);
	mem_init(&fx, &m);
	blue_hal_loopback_set_filter(fx.a.hal, record, &ra);
	a_to_b(&fx, &m, 1);
	blue__progress(fx.a.ctx);
	blue__progress(fx.b.ctx);
	b_to_a(&fx, &m, 2);
	blue__progress(fx.b.ctx);
	blue__progress(fx.a.ctx);
	cr_assert_eq(ra.n, 2, "W1, then the ACK of W2 at once");
	cr_assert_eq(ra.op[1], BLUE_OP_RC_ACKNOWLEDGE);
	cr_assert_eq(blue__engine_stats(fx.a.ctx)->ack_deferred, 0);
	cr_assert_eq(rc_wait1(&fx, fx.a.scq, RC_WAIT_MS).status, BLUE_WC_SUCCESS);
	cr_assert_eq(rc_wait1(&fx, fx.b.scq, RC_WAIT_MS).status, BLUE_WC_SUCCESS);
	mem_fini(&m);
	rc_fx_fini(&fx);
	unsetenv("BLUE_ACK_DEFER");
}
