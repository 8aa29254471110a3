// SPDX-License-Identifier: MIT
/*
 * Retransmission policies over the loopback pair (blue_qp_set_retx, include/blue/blue.h):
 * IBA go-back-N against selective retransmission, under deterministic loss of chosen
 * packets (a middle one, several holes, the last one, an ACK, a READ response, the
 * hole NAK itself), duplication and reordering, for SEND, WRITE, READ and atomics.
 * Each case checks the bytes, exactly one completion per signaled WR, atomics executed
 * once, and counts what was sent again: selective resends the holes, go-back-N the
 * tail. Then the CM negotiation, the API's refusals, and both timeout formulas.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "runtime/codec.h"
#include "runtime/device.h"
#include "runtime/progress.h"
#include "runtime/qp.h"
#include "tests/unit/rc_fixture.h"

#define KiB 1024u
#define PSN_A 0x100u	/* rc_opts_default's sq_psn_a: A's first request PSN */
#define GBN BLUE_RETX_GO_BACK_N
#define SR BLUE_RETX_SELECTIVE

/* ---- a rule-driven loopback filter --------------------------------------------- */

/* The first rule a frame matches (and that has uses left) decides its fate. */
struct rule {
	int opcode;			/* -1: any */
	int64_t psn;			/* -1: any */
	int syndrome;			/* -1: any; else the AETH syndrome it must carry */
	enum blue_lb_verdict verdict;
	int uses;			/* frames it still applies to; -1: no limit */
	int hits;
};

struct flt {
	struct rule r[8];
	int n;
	int sr_naks;			/* hole NAKs this end sent (whatever their fate) */
};

static enum blue_lb_verdict flt_fn(void *arg, const struct blue_frame *f, uint64_t seq)
{
	struct flt *ft = arg;
	struct blue_pkt p;
	struct rule *r;

	(void)seq;
	if (blue_pkt_parse(f->data, f->len, &p))
		return BLUE_LB_PASS;
	if (p.opcode == BLUE_OP_RC_ACKNOWLEDGE && p.aeth.syndrome == BLUE_NAK_SR_HOLE)
		ft->sr_naks++;
	for (int i = 0; i < ft->n; i++) {
		r = &ft->r[i];
		if (!r->uses || (r->opcode >= 0 && p.opcode != r->opcode) ||
		    (r->psn >= 0 && p.psn != (uint32_t)r->psn) ||
		    (r->syndrome >= 0 && !(blue_opcode_flags(p.opcode) & BLUE_OPF_AETH)) ||
		    (r->syndrome >= 0 && p.aeth.syndrome != r->syndrome))
			continue;
		if (r->uses > 0)
			r->uses--;
		r->hits++;
		return r->verdict;
	}
	return BLUE_LB_PASS;
}

static void rule_add(struct flt *ft, int opcode, int64_t psn, int syndrome,
		     enum blue_lb_verdict v, int uses)
{
	cr_assert_lt(ft->n, 8);
	ft->r[ft->n++] = (struct rule){ .opcode = opcode, .psn = psn, .syndrome = syndrome,
					.verdict = v, .uses = uses };
}

/* Drop the first frame with request PSN @psn (its resend passes). */
static void drop_psn(struct flt *ft, uint32_t psn)
{
	rule_add(ft, -1, psn, -1, BLUE_LB_DROP, 1);
}

/* ---- the pair, with a policy ---------------------------------------------------- */

/* A's policy @pa, B's @pb: both differ only when one side changed it after the CM. */
static void set_policy(struct rc_fx *fx, enum blue_retx_policy pa, enum blue_retx_policy pb)
{
	struct blue_retx_attr ra = { .policy = pa }, rb = { .policy = pb };

	if (pa == SR || pb == SR) {
		/* what blue_cm_connect_qp records when both sides offered the cap */
		blue__qp_set_peer_caps(fx->a.qp, BLUE_CM_CAP_SELECTIVE_RETX);
		blue__qp_set_peer_caps(fx->b.qp, BLUE_CM_CAP_SELECTIVE_RETX);
	}
	cr_assert_eq(blue_qp_set_retx(fx->a.qp, &ra), 0);
	cr_assert_eq(blue_qp_set_retx(fx->b.qp, &rb), 0);
	cr_assert_eq(fx->a.qp->live->retx_policy, pa);
	cr_assert_eq(fx->b.qp->live->retx_policy, pb);
}

static void pair_up(struct rc_fx *fx, enum blue_retx_policy pa, enum blue_retx_policy pb,
		    struct flt *fa, struct flt *fb)
{
	rc_fx_init(fx, NULL);
	set_policy(fx, pa, pb);
	blue_hal_loopback_set_filter(fx->a.hal, flt_fn, fa);
	blue_hal_loopback_set_filter(fx->b.hal, flt_fn, fb);
}

/* What a run sent again: request packets by A, and every packet B sent. */
struct res {
	uint64_t retx;		/* A's live retx_pkts */
	uint64_t b_tx;		/* B's packets (ACKs, READ responses) */
	int sr_naks;		/* hole NAKs B sent */
};

static struct res res_of(struct rc_fx *fx, struct flt *fb)
{
	return (struct res){ .retx = fx->a.qp->live->retx_pkts,
			     .b_tx = fx->b.qp->live->tx_pkts, .sr_naks = fb->sr_naks };
}

static const char *pol_name(enum blue_retx_policy pol)
{
	return pol == SR ? "selective" : "go-back-N";
}

/* ---- one transfer A -> B (or a READ B -> A), checked --------------------------------- */

static const unsigned int ACC = BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE |
				BLUE_ACCESS_REMOTE_READ | BLUE_ACCESS_REMOTE_ATOMIC;


static void check_wc(struct blue_wc wc, uint64_t wr_id, enum blue_wc_opcode op, const char *what)
{
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "%s: %s", what, blue_wc_status_str(wc.status));
	cr_assert_eq(wc.wr_id, wr_id, "%s: wr_id %llu, %llu expected", what,
		     (unsigned long long)wc.wr_id, (unsigned long long)wr_id);
	cr_assert_eq(wc.opcode, op, "%s: opcode %d", what, wc.opcode);
}

/*
 * @op of @len bytes, A under @pol and B under @pb, with the given filters: A sends
 * (SEND, WRITE) or reads (READ) B's memory. Checks the bytes and that exactly one
 * completion came for the WR (and one receive for a SEND).
 */
static struct res xfer_mixed(enum blue_retx_policy pol, enum blue_retx_policy pb,
			     enum blue_wr_opcode op, uint32_t len, struct flt *fa, struct flt *fb)
{
	struct rc_fx fx;
	struct rc_mem m;
	struct blue_sge sge;
	struct blue_send_wr wr;
	struct blue_wc wc;
	struct res r;
	bool rd = op == BLUE_WR_RDMA_READ;

	pair_up(&fx, pol, pb, fa, fb);
	if (rd)
		rc_mem_init(&m, &fx.b, &fx.a, len, len + 11, ACC);
	else
		rc_mem_init(&m, &fx.a, &fx.b, len, len + 11, ACC);
	if (op == BLUE_WR_SEND)
		rc_post_recv(&fx.b, 9, m.dst, len, m.dmr->lkey);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = BLUE_SEND_SIGNALED;
	if (rd) {
		sge = (struct blue_sge){ .addr = (uintptr_t)m.dst, .length = len,
					 .lkey = m.dmr->lkey };
		wr.wr.rdma.remote_addr = (uintptr_t)m.src;
		wr.wr.rdma.rkey = m.smr->rkey;
	} else {
		sge = (struct blue_sge){ .addr = (uintptr_t)m.src, .length = len,
					 .lkey = m.smr->lkey };
		wr.wr.rdma.remote_addr = (uintptr_t)m.dst;
		wr.wr.rdma.rkey = m.dmr->rkey;
	}
	rc_post_send(&fx.a, &wr);
	wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
	check_wc(wc, 1, rd ? BLUE_WC_RDMA_READ : op == BLUE_WR_SEND ? BLUE_WC_SEND :
		 BLUE_WC_RDMA_WRITE, pol_name(pol));
	if (op == BLUE_WR_SEND) {
		wc = rc_wait1(&fx, fx.b.rcq, RC_WAIT_MS);
		check_wc(wc, 9, BLUE_WC_RECV, "receive");
		cr_assert_eq(wc.byte_len, len);
	}
	/* exactly one each: nothing more comes, on either side */
	rc_quiet(&fx, fx.a.scq, 3);
	rc_quiet(&fx, fx.b.rcq, 1);
	cr_assert(rc_check(m.dst, len, len + 11), "%s: the bytes differ", pol_name(pol));
	cr_assert_eq(fx.b.qp->live->sr_held, 0, "nothing left in the reorder buffer");
	r = res_of(&fx, fb);
	if (pb == GBN)
		cr_assert_eq(r.sr_naks, 0, "go-back-N never sends a hole NAK");
	rc_mem_fini(&m);
	rc_fx_fini(&fx);
	return r;
}

/* The same on both sides, as the CM sets it. */
static struct res xfer(enum blue_retx_policy pol, enum blue_wr_opcode op, uint32_t len,
		       struct flt *fa, struct flt *fb)
{
	return xfer_mixed(pol, pol, op, len, fa, fb);
}

/* ---- loss of chosen packets --------------------------------------------------------- */

/* One MIDDLE packet of a 64-packet SEND: selective resends it alone, go-back-N 44. */
Test(rc_retx, send_one_middle_hole)
{
	struct res r[2];

	for (int pol = GBN; pol <= SR; pol++) {
		struct flt fa = { 0 }, fb = { 0 };

		drop_psn(&fa, PSN_A + 20);
		r[pol] = xfer(pol, BLUE_WR_SEND, 64 * KiB, &fa, &fb);
		cr_assert_eq(fa.r[0].hits, 1);
	}
	cr_assert_eq(r[SR].retx, 1, "selective resent %llu packets for one hole",
		     (unsigned long long)r[SR].retx);
	cr_assert_geq(r[SR].sr_naks, 1, "the hole was reported");
	cr_assert_geq(r[GBN].retx, 44, "go-back-N resends the hole and the tail");
}

/* Several holes in a WRITE, two of them adjacent: selective resends exactly those. */
Test(rc_retx, write_several_holes)
{
	static const uint32_t holes[] = { 5, 20, 21, 40, 62 };
	struct res r[2];

	for (int pol = GBN; pol <= SR; pol++) {
		struct flt fa = { 0 }, fb = { 0 };

		for (unsigned int i = 0; i < 5; i++)
			drop_psn(&fa, PSN_A + holes[i]);
		r[pol] = xfer(pol, BLUE_WR_RDMA_WRITE, 64 * KiB, &fa, &fb);
	}
	cr_assert_eq(r[SR].retx, 5, "selective resent %llu packets for 5 lost",
		     (unsigned long long)r[SR].retx);
	cr_assert_gt(r[GBN].retx, 5 * 5, "go-back-N resent only %llu",
		     (unsigned long long)r[GBN].retx);
}

/*
 * The LAST packet: nothing after it reveals the hole, so the ACK timer does. Selective
 * probes with the newest unacknowledged packet, which is the lost one; go-back-N resends
 * all eight.
 */
Test(rc_retx, send_last_packet_lost)
{
	struct res r[2];

	for (int pol = GBN; pol <= SR; pol++) {
		struct flt fa = { 0 }, fb = { 0 };

		rule_add(&fa, BLUE_OP_RC_SEND_LAST, -1, -1, BLUE_LB_DROP, 1);
		r[pol] = xfer(pol, BLUE_WR_SEND, 8 * KiB, &fa, &fb);
		cr_assert_eq(fa.r[0].hits, 1);
	}
	cr_assert_eq(r[SR].retx, 1);
	cr_assert_eq(r[SR].sr_naks, 0, "no hole was ever seen");
	cr_assert_eq(r[GBN].retx, 8);
}

/* The ACK is lost: the probe is a duplicate, re-ACKed, delivered once (xfer checks). */
Test(rc_retx, ack_lost)
{
	struct res r[2];

	for (int pol = GBN; pol <= SR; pol++) {
		struct flt fa = { 0 }, fb = { 0 };

		rule_add(&fb, BLUE_OP_RC_ACKNOWLEDGE, -1, -1, BLUE_LB_DROP, 1);
		r[pol] = xfer(pol, BLUE_WR_RDMA_WRITE, 4 * KiB, &fa, &fb);
		cr_assert_eq(fb.r[0].hits, 1);
	}
	cr_assert_eq(r[SR].retx, 1);
	cr_assert_eq(r[GBN].retx, 4);
}

/*
 * A READ response in the middle: selective places the responses that come after it and
 * asks for the missing one with a READ of one MTU; go-back-N asks for all the rest.
 */
Test(rc_retx, read_response_lost)
{
	struct res r[2];

	for (int pol = GBN; pol <= SR; pol++) {
		struct flt fa = { 0 }, fb = { 0 };

		rule_add(&fb, BLUE_OP_RC_READ_RESPONSE_MIDDLE, PSN_A + 20, -1, BLUE_LB_DROP, 1);
		r[pol] = xfer(pol, BLUE_WR_RDMA_READ, 64 * KiB, &fa, &fb);
		cr_assert_eq(fb.r[0].hits, 1);
	}
	cr_assert_eq(r[SR].retx, 1, "one new READ request");
	cr_assert_eq(r[SR].b_tx, 64 + 1, "64 responses and the one asked again");
	cr_assert_geq(r[GBN].b_tx, 64 + 44, "go-back-N re-reads the tail");
}

/* The last READ response: found by the timer, asked for alone. */
Test(rc_retx, read_last_response_lost)
{
	struct res r[2];

	for (int pol = GBN; pol <= SR; pol++) {
		struct flt fa = { 0 }, fb = { 0 };

		rule_add(&fb, BLUE_OP_RC_READ_RESPONSE_LAST, -1, -1, BLUE_LB_DROP, 1);
		r[pol] = xfer(pol, BLUE_WR_RDMA_READ, 16 * KiB, &fa, &fb);
	}
	cr_assert_eq(r[SR].retx, 1);
	cr_assert_eq(r[SR].b_tx, 16 + 1);
	cr_assert_geq(r[GBN].b_tx, 16 + 1);
}

/* Several READ responses lost, the first one among them. */
Test(rc_retx, read_responses_several_lost)
{
	struct flt fa = { 0 }, fb = { 0 };
	struct res r;

	rule_add(&fb, BLUE_OP_RC_READ_RESPONSE_FIRST, -1, -1, BLUE_LB_DROP, 1);
	rule_add(&fb, -1, PSN_A + 7, -1, BLUE_LB_DROP, 1);
	rule_add(&fb, -1, PSN_A + 8, -1, BLUE_LB_DROP, 1);
	rule_add(&fb, -1, PSN_A + 30, -1, BLUE_LB_DROP, 1);
	r = xfer(SR, BLUE_WR_RDMA_READ, 32 * KiB, &fa, &fb);
	cr_assert_eq(r.b_tx, 32 + 4, "only the 4 lost responses were sent again");
}

/* The READ request itself is lost; the timer asks again for all of it. */
Test(rc_retx, read_request_lost)
{
	struct flt fa = { 0 }, fb = { 0 };
	struct res r;

	rule_add(&fa, BLUE_OP_RC_READ_REQUEST, -1, -1, BLUE_LB_DROP, 1);
	r = xfer(SR, BLUE_WR_RDMA_READ, 8 * KiB, &fa, &fb);
	cr_assert_eq(r.retx, 1);
	cr_assert_eq(r.b_tx, 8);
}

/*
 * The hole NAK itself is lost, twice. The timer's probe (the newest packet, which the
 * responder holds) brings the hole report again; the third one gets through.
 */
Test(rc_retx, hole_nak_lost)
{
	struct flt fa = { 0 }, fb = { 0 };
	struct res r;

	drop_psn(&fa, PSN_A + 20);
	rule_add(&fb, BLUE_OP_RC_ACKNOWLEDGE, -1, BLUE_NAK_SR_HOLE, BLUE_LB_DROP, 2);
	r = xfer(SR, BLUE_WR_SEND, 64 * KiB, &fa, &fb);
	cr_assert_eq(fb.r[0].hits, 2, "two hole NAKs were lost");
	cr_assert_geq(r.sr_naks, 3);
	/*
	 * two probes (the second timeout without news also resends the oldest packet not
	 * acknowledged) and the hole: nowhere near the 44 of go-back-N
	 */
	cr_assert_leq(r.retx, 4, "resent %llu", (unsigned long long)r.retx);
}

/* The hole's resend is lost too: the timer lets it be resent once more. */
Test(rc_retx, hole_resend_lost)
{
	struct flt fa = { 0 }, fb = { 0 };
	struct res r;

	rule_add(&fa, -1, PSN_A + 33, -1, BLUE_LB_DROP, 2);
	r = xfer(SR, BLUE_WR_RDMA_WRITE, 64 * KiB, &fa, &fb);
	cr_assert_eq(fa.r[0].hits, 2);
	cr_assert_leq(r.retx, 3, "resent %llu", (unsigned long long)r.retx);
}

/*
 * The requester goes back N while its peer, which negotiated selective retransmission,
 * holds what follows a hole and reports it with hole NAKs: the hole NAK is a gap to A,
 * which resends from it; B runs its held requests once the hole fills, and the resent
 * ones after them are duplicates. Delivered once, with go-back-N's resend count.
 */
Test(rc_retx, hole_nak_to_go_back_n_requester)
{
	static const enum blue_wr_opcode ops[] = { BLUE_WR_SEND, BLUE_WR_RDMA_WRITE };

	for (unsigned int i = 0; i < 2; i++) {
		struct flt fa = { 0 }, fb = { 0 };
		struct res r;

		drop_psn(&fa, PSN_A + 20);
		r = xfer_mixed(GBN, SR, ops[i], 64 * KiB, &fa, &fb);
		cr_assert_eq(fa.r[0].hits, 1);
		cr_assert_geq(r.sr_naks, 1, "B reported the hole");
		cr_assert_geq(r.retx, 44, "A went back N from the hole: %llu resent",
			      (unsigned long long)r.retx);
	}
}

/* ---- duplication and reordering --------------------------------------------------- */

/* Every frame both ways is delivered twice. */
Test(rc_retx, everything_duplicated)
{
	for (int pol = GBN; pol <= SR; pol++) {
		for (int op = 0; op < 3; op++) {
			static const enum blue_wr_opcode ops[] = {
				BLUE_WR_SEND, BLUE_WR_RDMA_WRITE, BLUE_WR_RDMA_READ };
			struct flt fa = { 0 }, fb = { 0 };

			rule_add(&fa, -1, -1, -1, BLUE_LB_DUP, -1);
			rule_add(&fb, -1, -1, -1, BLUE_LB_DUP, -1);
			xfer(pol, ops[op], 24 * KiB, &fa, &fb);
			cr_assert_geq(fa.r[0].hits + fb.r[0].hits, 24);
		}
	}
}

/* Frames overtaken by the next one, requests and responses. */
Test(rc_retx, reordered)
{
	for (int pol = GBN; pol <= SR; pol++) {
		for (int op = 0; op < 3; op++) {
			static const enum blue_wr_opcode ops[] = {
				BLUE_WR_SEND, BLUE_WR_RDMA_WRITE, BLUE_WR_RDMA_READ };
			struct flt fa = { 0 }, fb = { 0 };

			for (uint32_t k = 3; k < 40; k += 9) {
				rule_add(&fa, -1, PSN_A + k, -1, BLUE_LB_HOLD, 1);
				rule_add(&fb, -1, PSN_A + k + 1, -1, BLUE_LB_HOLD, 1);
			}
			xfer(pol, ops[op], 48 * KiB, &fa, &fb);
		}
	}
}

/* Loss, duplication and reordering at once. */
Test(rc_retx, loss_dup_reorder_mix)
{
	for (int pol = GBN; pol <= SR; pol++) {
		struct flt fa = { 0 }, fb = { 0 };

		drop_psn(&fa, PSN_A + 10);
		rule_add(&fa, -1, PSN_A + 11, -1, BLUE_LB_HOLD, 1);
		rule_add(&fa, -1, PSN_A + 30, -1, BLUE_LB_DUP, 1);
		drop_psn(&fa, PSN_A + 50);
		rule_add(&fb, BLUE_OP_RC_ACKNOWLEDGE, -1, -1, BLUE_LB_DUP, 3);
		xfer(pol, BLUE_WR_SEND, 64 * KiB, &fa, &fb);
	}
}

/* ---- many WRs of every kind, with atomics --------------------------------------------- */

/*
 * A chain of WRs: SEND, WRITE, FAA, READ, CAS, SEND, with the FAA request, a WRITE
 * packet, a READ response and the CAS's atomic ACK lost. Atomics run once (the word's
 * final value and each returned original prove it), the data is exact, and each WR
 * completes once, in order.
 */
static void chain(enum blue_retx_policy pol)
{
	struct flt fa = { 0 }, fb = { 0 };
	struct rc_fx fx;
	struct rc_mem s1, w1, r1, s2;
	uint64_t *word = aligned_alloc(64, 64), *orig = aligned_alloc(64, 64);
	struct blue_mr *wmr, *omr;
	struct blue_sge sge[6];
	struct blue_send_wr wr[6];
	struct blue_wc wc;
	uint32_t psn;

	cr_assert(word && orig);
	pair_up(&fx, pol, pol, &fa, &fb);
	rc_mem_init(&s1, &fx.a, &fx.b, 5 * KiB, 5 * KiB + 11, ACC);	/* PSN +0..+4 */
	rc_mem_init(&w1, &fx.a, &fx.b, 9 * KiB, 9 * KiB + 11, ACC);	/* +5..+13 */
	/* FAA +14 */
	rc_mem_init(&r1, &fx.b, &fx.a, 7 * KiB, 7 * KiB + 11, ACC);	/* READ +15..+21 */
	/* CAS +22 */
	rc_mem_init(&s2, &fx.a, &fx.b, 3 * KiB, 3 * KiB + 11, ACC);	/* +23..+25 */
	*word = 1000;
	orig[0] = orig[1] = 0;
	wmr = blue_reg_mr(fx.b.pd, word, 64, ACC);
	omr = blue_reg_mr(fx.a.pd, orig, 64, ACC);
	cr_assert(wmr && omr);

	drop_psn(&fa, PSN_A + 8);		/* a WRITE MIDDLE */
	drop_psn(&fa, PSN_A + 14);		/* the FAA request */
	rule_add(&fb, -1, PSN_A + 17, -1, BLUE_LB_DROP, 1);	/* a READ response */
	rule_add(&fb, BLUE_OP_RC_ATOMIC_ACKNOWLEDGE, PSN_A + 22, -1, BLUE_LB_DROP, 1);

	rc_post_recv(&fx.b, 101, s1.dst, s1.len, s1.dmr->lkey);
	rc_post_recv(&fx.b, 102, s2.dst, s2.len, s2.dmr->lkey);
	memset(wr, 0, sizeof(wr));
	sge[0] = (struct blue_sge){ (uintptr_t)s1.src, s1.len, s1.smr->lkey };
	wr[0].opcode = BLUE_WR_SEND;
	sge[1] = (struct blue_sge){ (uintptr_t)w1.src, w1.len, w1.smr->lkey };
	wr[1].opcode = BLUE_WR_RDMA_WRITE;
	wr[1].wr.rdma.remote_addr = (uintptr_t)w1.dst;
	wr[1].wr.rdma.rkey = w1.dmr->rkey;
	sge[2] = (struct blue_sge){ (uintptr_t)&orig[0], 8, omr->lkey };
	wr[2].opcode = BLUE_WR_ATOMIC_FETCH_AND_ADD;
	wr[2].wr.atomic.remote_addr = (uintptr_t)word;
	wr[2].wr.atomic.rkey = wmr->rkey;
	wr[2].wr.atomic.compare_add = 7;
	sge[3] = (struct blue_sge){ (uintptr_t)r1.dst, r1.len, r1.dmr->lkey };
	wr[3].opcode = BLUE_WR_RDMA_READ;
	wr[3].wr.rdma.remote_addr = (uintptr_t)r1.src;
	wr[3].wr.rdma.rkey = r1.smr->rkey;
	sge[4] = (struct blue_sge){ (uintptr_t)&orig[1], 8, omr->lkey };
	wr[4].opcode = BLUE_WR_ATOMIC_CMP_AND_SWP;
	wr[4].wr.atomic.remote_addr = (uintptr_t)word;
	wr[4].wr.atomic.rkey = wmr->rkey;
	wr[4].wr.atomic.compare_add = 1007;	/* the FAA ran first, once */
	wr[4].wr.atomic.swap = 5;
	sge[5] = (struct blue_sge){ (uintptr_t)s2.src, s2.len, s2.smr->lkey };
	wr[5].opcode = BLUE_WR_SEND;
	for (int i = 0; i < 6; i++) {
		wr[i].wr_id = 10 + (uint64_t)i;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].send_flags = BLUE_SEND_SIGNALED;
		wr[i].next = i < 5 ? &wr[i + 1] : NULL;
	}
	rc_post_send(&fx.a, wr);
	for (int i = 0; i < 6; i++) {
		static const enum blue_wc_opcode op[] = { BLUE_WC_SEND, BLUE_WC_RDMA_WRITE,
			BLUE_WC_FETCH_ADD, BLUE_WC_RDMA_READ, BLUE_WC_COMP_SWAP, BLUE_WC_SEND };

		wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
		check_wc(wc, 10 + (uint64_t)i, op[i], pol_name(pol));
	}
	wc = rc_wait1(&fx, fx.b.rcq, RC_WAIT_MS);
	check_wc(wc, 101, BLUE_WC_RECV, "receive 1");
	wc = rc_wait1(&fx, fx.b.rcq, RC_WAIT_MS);
	check_wc(wc, 102, BLUE_WC_RECV, "receive 2");
	rc_quiet(&fx, fx.a.scq, 3);
	rc_quiet(&fx, fx.b.rcq, 1);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(i < 2 ? fa.r[i].hits : fb.r[i - 2].hits, 1, "rule %d fired", i);
	cr_assert_eq(orig[0], 1000, "FAA saw the first value");
	cr_assert_eq(orig[1], 1007, "CAS saw the FAA's result");
	cr_assert_eq(*word, 5, "FAA once, then CAS once: %llu", (unsigned long long)*word);
	cr_assert(rc_check(s1.dst, s1.len, s1.len + 11));
	cr_assert(rc_check(w1.dst, w1.len, w1.len + 11));
	cr_assert(rc_check(r1.dst, r1.len, r1.len + 11));
	cr_assert(rc_check(s2.dst, s2.len, s2.len + 11));
	psn = fx.a.qp->live->una_psn;
	cr_assert_eq(psn, PSN_A + 26, "everything acknowledged: una 0x%x", psn);
	if (pol == SR) {
		/* the WRITE packet, the FAA, one READ response, the CAS probe */
		cr_assert_eq(fx.a.qp->live->retx_pkts, 4, "resent %llu",
			     (unsigned long long)fx.a.qp->live->retx_pkts);
	}
	cr_assert_eq(blue_dereg_mr(wmr), 0);
	cr_assert_eq(blue_dereg_mr(omr), 0);
	rc_mem_fini(&s1);
	rc_mem_fini(&w1);
	rc_mem_fini(&r1);
	rc_mem_fini(&s2);
	free(word);
	free(orig);
	rc_fx_fini(&fx);
}

Test(rc_retx, chain_of_every_op_go_back_n)
{
	chain(GBN);
}

Test(rc_retx, chain_of_every_op_selective)
{
	chain(SR);
}

/*
 * An atomic request lost while the SEND after it arrives: the responder holds the SEND,
 * reports the atomic's PSN, and runs the SEND only after the atomic (order kept).
 */
Test(rc_retx, atomic_hole_runs_before_what_was_held)
{
	struct flt fa = { 0 }, fb = { 0 };
	struct rc_fx fx;
	uint64_t *word = aligned_alloc(64, 64), *orig = aligned_alloc(64, 64);
	struct blue_mr *wmr, *omr;
	struct rc_mem s;
	struct blue_sge sge[2];
	struct blue_send_wr wr[2];
	struct blue_wc wc;

	pair_up(&fx, SR, SR, &fa, &fb);
	rc_mem_init(&s, &fx.a, &fx.b, 4 * KiB, 4 * KiB + 11, ACC);
	*word = 1;
	*orig = 0;
	wmr = blue_reg_mr(fx.b.pd, word, 64, ACC);
	omr = blue_reg_mr(fx.a.pd, orig, 64, ACC);
	drop_psn(&fa, PSN_A);
	rc_post_recv(&fx.b, 3, s.dst, s.len, s.dmr->lkey);
	memset(wr, 0, sizeof(wr));
	sge[0] = (struct blue_sge){ (uintptr_t)orig, 8, omr->lkey };
	wr[0] = (struct blue_send_wr){ .wr_id = 1, .sg_list = &sge[0], .num_sge = 1,
		.opcode = BLUE_WR_ATOMIC_CMP_AND_SWP, .send_flags = BLUE_SEND_SIGNALED,
		.next = &wr[1] };
	wr[0].wr.atomic.remote_addr = (uintptr_t)word;
	wr[0].wr.atomic.rkey = wmr->rkey;
	wr[0].wr.atomic.compare_add = 1;
	wr[0].wr.atomic.swap = 77;
	sge[1] = (struct blue_sge){ (uintptr_t)s.src, s.len, s.smr->lkey };
	wr[1] = (struct blue_send_wr){ .wr_id = 2, .sg_list = &sge[1], .num_sge = 1,
		.opcode = BLUE_WR_SEND, .send_flags = BLUE_SEND_SIGNALED };
	rc_post_send(&fx.a, wr);
	wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
	check_wc(wc, 1, BLUE_WC_COMP_SWAP, "CAS");
	wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
	check_wc(wc, 2, BLUE_WC_SEND, "SEND");
	wc = rc_wait1(&fx, fx.b.rcq, RC_WAIT_MS);
	check_wc(wc, 3, BLUE_WC_RECV, "receive");
	rc_quiet(&fx, fx.a.scq, 3);
	cr_assert_eq(*orig, 1);
	cr_assert_eq(*word, 77);
	cr_assert(rc_check(s.dst, s.len, s.len + 11));
	cr_assert_geq(fb.sr_naks, 1, "the held SEND revealed the hole");
	cr_assert_eq(fx.a.qp->live->retx_pkts, 1, "only the CAS went again");
	cr_assert_eq(blue_dereg_mr(wmr), 0);
	cr_assert_eq(blue_dereg_mr(omr), 0);
	rc_mem_fini(&s);
	free(word);
	free(orig);
	rc_fx_fini(&fx);
}

/* ---- the CM negotiates ---------------------------------------------------------------- */

struct xchg {
	int fd;
	struct blue_cm_info local, remote;
	int rc;
};

static void *xchg_main(void *arg)
{
	struct xchg *x = arg;

	x->rc = blue_cm_exchange(x->fd, &x->local, &x->remote, 5000);
	return NULL;
}

/* Connect A and B through blue_cm_exchange() with these offers; return the policies. */
static void cm_connect(struct rc_fx *fx, uint32_t caps_a, uint32_t caps_b,
		       enum blue_retx_policy *pa, enum blue_retx_policy *pb)
{
	struct xchg xa = { 0 }, xb = { 0 };
	struct blue_cm_qp_attr qa, qb;
	struct blue_retx_attr ra;
	pthread_t th;
	int sv[2];

	rc_fx_init_noqp(fx, NULL);
	rc_qp_create(fx, &fx->a);
	rc_qp_create(fx, &fx->b);
	cr_assert_eq(blue_cm_info_from_qp(fx->a.ctx, fx->a.qp, 1, &xa.local), 0);
	cr_assert_eq(blue_cm_info_from_qp(fx->b.ctx, fx->b.qp, 1, &xb.local), 0);
	xa.local.caps = caps_a;
	xb.local.caps = caps_b;
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	xa.fd = sv[0];
	xb.fd = sv[1];
	cr_assert_eq(pthread_create(&th, NULL, xchg_main, &xb), 0);
	xchg_main(&xa);
	pthread_join(th, NULL);
	close(sv[0]);
	close(sv[1]);
	cr_assert_eq(xa.rc, 0, "%s", blue_cm_last_error());
	cr_assert_eq(xb.rc, 0);
	cr_assert_eq(xa.remote.caps, caps_b, "the caps travel");
	blue_cm_qp_attr_default(&qa);
	qa.access = ACC;
	qa.max_rd_atomic = qa.max_dest_rd_atomic = 4;
	qa.timeout = 12;
	qb = qa;
	qa.caps = caps_a;
	qb.caps = caps_b;
	cr_assert_eq(blue_cm_connect_qp(fx->a.ctx, fx->a.qp, xa.local.psn, &xa.remote, &qa), 0,
		     "%s", blue_cm_last_error());
	cr_assert_eq(blue_cm_connect_qp(fx->b.ctx, fx->b.qp, xb.local.psn, &xb.remote, &qb), 0);
	cr_assert_eq(blue_qp_query_retx(fx->a.qp, &ra), 0);
	*pa = ra.policy;
	cr_assert_eq(blue_qp_query_retx(fx->b.qp, &ra), 0);
	*pb = ra.policy;
}

Test(rc_retx, cm_negotiation)
{
	static const struct {
		uint32_t a, b;
		enum blue_retx_policy want;
	} cases[] = {
		{ BLUE_CM_CAP_SELECTIVE_RETX, BLUE_CM_CAP_SELECTIVE_RETX, SR },
		{ BLUE_CM_CAP_SELECTIVE_RETX, 0, GBN },
		{ 0, BLUE_CM_CAP_SELECTIVE_RETX | BLUE_CM_CAP_DCQCN, GBN },
		{ BLUE_CM_CAP_DCQCN, BLUE_CM_CAP_DCQCN, GBN },
		{ 0, 0, GBN },
	};

	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rc_fx fx;
		enum blue_retx_policy pa, pb;
		struct rc_drop d = { .opcode = -1, .max_drops = 1 };
		struct rc_mem m;
		struct blue_sge sge;
		struct blue_send_wr wr;
		uint64_t retx;

		cm_connect(&fx, cases[i].a, cases[i].b, &pa, &pb);
		cr_assert_eq(pa, cases[i].want, "case %u: A uses %s", i, pol_name(pa));
		cr_assert_eq(pb, cases[i].want, "case %u: B uses %s", i, pol_name(pb));
		/* and it works: a WRITE with one hole */
		rc_mem_init(&m, &fx.a, &fx.b, 32 * KiB, 32 * KiB + 11, ACC);
		d.psn = blue_psn_add(fx.a.qp->live->sq_psn, 9);
		rc_drop_install(fx.a.hal, &d);
		sge = (struct blue_sge){ (uintptr_t)m.src, m.len, m.smr->lkey };
		wr = (struct blue_send_wr){ .wr_id = 5, .sg_list = &sge, .num_sge = 1,
			.opcode = BLUE_WR_RDMA_WRITE, .send_flags = BLUE_SEND_SIGNALED };
		wr.wr.rdma.remote_addr = (uintptr_t)m.dst;
		wr.wr.rdma.rkey = m.dmr->rkey;
		rc_post_send(&fx.a, &wr);
		check_wc(rc_wait1(&fx, fx.a.scq, RC_WAIT_MS), 5, BLUE_WC_RDMA_WRITE, "write");
		cr_assert(rc_check(m.dst, m.len, m.len + 11));
		cr_assert_eq(d.dropped, 1);
		retx = fx.a.qp->live->retx_pkts;
		if (pa == SR)
			cr_assert_eq(retx, 1, "case %u: %llu", i, (unsigned long long)retx);
		else
			cr_assert_eq(retx, 32 - 9, "case %u: %llu", i, (unsigned long long)retx);
		rc_mem_fini(&m);
		rc_fx_fini(&fx);
	}
}

/* ---- the API ------------------------------------------------------------------------- */

Test(rc_retx, set_retx_refuses_bad_values)
{
	struct rc_fx fx;
	struct blue_retx_attr ra;
	struct blue_sge sge;
	struct blue_send_wr wr;
	uint8_t buf[64];
	struct blue_mr *mr;

	rc_fx_init(&fx, NULL);
	cr_assert_eq(blue_qp_query_retx(fx.a.qp, &ra), 0);
	cr_assert_eq(ra.policy, GBN, "go-back-N is the default");
	cr_assert_eq(ra.timer, BLUE_RETX_TIMER_IBA_EXP);
	cr_assert_eq(blue_qp_set_retx(NULL, &ra), EINVAL);
	cr_assert_eq(blue_qp_set_retx(fx.a.qp, NULL), EINVAL);
	ra = (struct blue_retx_attr){ .policy = 7 };
	cr_assert_eq(blue_qp_set_retx(fx.a.qp, &ra), EINVAL);
	ra = (struct blue_retx_attr){ .timer = 9 };
	cr_assert_eq(blue_qp_set_retx(fx.a.qp, &ra), EINVAL);
	ra = (struct blue_retx_attr){ .timer = BLUE_RETX_TIMER_LINEAR };
	cr_assert_eq(blue_qp_set_retx(fx.a.qp, &ra), EINVAL, "a timer of 0");
	ra = (struct blue_retx_attr){ .timer = BLUE_RETX_TIMER_LINEAR,
				      .base_us = BLUE_RETX_MAX_BASE_US + 1 };
	cr_assert_eq(blue_qp_set_retx(fx.a.qp, &ra), EINVAL);
	ra = (struct blue_retx_attr){ .timer = BLUE_RETX_TIMER_LINEAR, .base_us = 1,
				      .k_us = BLUE_RETX_MAX_K_US + 1 };
	cr_assert_eq(blue_qp_set_retx(fx.a.qp, &ra), EINVAL);
	ra = (struct blue_retx_attr){ .base_us = 100 };
	cr_assert_eq(blue_qp_set_retx(fx.a.qp, &ra), EINVAL, "base_us is LINEAR's");
	ra = (struct blue_retx_attr){ .policy = SR };
	cr_assert_eq(blue_qp_set_retx(fx.a.qp, &ra), EOPNOTSUPP, "not negotiated");
	cr_assert_eq(blue_qp_query_retx(fx.a.qp, &ra), 0);
	cr_assert_eq(ra.policy, GBN, "a refusal changes nothing");

	/* the timer changes any time; the policy not with a WR in flight */
	blue__qp_set_peer_caps(fx.a.qp, BLUE_CM_CAP_SELECTIVE_RETX);
	mr = blue_reg_mr(fx.a.pd, buf, sizeof(buf), ACC);
	sge = (struct blue_sge){ (uintptr_t)buf, sizeof(buf), mr->lkey };
	wr = (struct blue_send_wr){ .wr_id = 1, .sg_list = &sge, .num_sge = 1,
		.opcode = BLUE_WR_RDMA_WRITE, .send_flags = BLUE_SEND_SIGNALED };
	wr.wr.rdma.remote_addr = (uintptr_t)buf;	/* never reaches B: not polled */
	rc_post_send(&fx.a, &wr);
	ra = (struct blue_retx_attr){ .policy = SR };
	cr_assert_eq(blue_qp_set_retx(fx.a.qp, &ra), EBUSY);
	ra = (struct blue_retx_attr){ .timer = BLUE_RETX_TIMER_LINEAR, .base_us = 500,
				      .k_us = 20 };
	cr_assert_eq(blue_qp_set_retx(fx.a.qp, &ra), 0);
	cr_assert_eq(blue_qp_query_retx(fx.a.qp, &ra), 0);
	cr_assert_eq(ra.timer, BLUE_RETX_TIMER_LINEAR);
	cr_assert_eq(ra.base_us, 500);
	cr_assert_eq(ra.k_us, 20);
	cr_assert_eq(fx.a.qp->live->retx_timer, BLUE_RETX_TIMER_LINEAR, "visible in the map");
	/* RESET forgets it all */
	cr_assert_eq(blue_modify_qp(fx.a.qp, &(struct blue_qp_attr){ .qp_state = BLUE_QPS_RESET },
				    BLUE_QP_STATE), 0);
	cr_assert_eq(blue_qp_query_retx(fx.a.qp, &ra), 0);
	cr_assert_eq(ra.timer, BLUE_RETX_TIMER_IBA_EXP);
	ra = (struct blue_retx_attr){ .policy = SR };
	cr_assert_eq(blue_qp_set_retx(fx.a.qp, &ra), EOPNOTSUPP);
	cr_assert_eq(blue_dereg_mr(mr), 0);
	rc_fx_fini(&fx);
}

/* The codec carries the hole NAK as it is: syndrome 0x78, the length in the MSN field. */
Test(rc_retx, hole_nak_codec_round_trip)
{
	struct blue_pkt p, q;
	uint8_t frame[256];
	int len;

	blue_pkt_init(&p, BLUE_OP_RC_ACKNOWLEDGE);
	p.saddr = 0x0100c90a;
	p.daddr = 0x0200c90a;
	p.dqpn = 0x1234;
	p.psn = 0xabcdef;
	p.aeth.syndrome = BLUE_NAK_SR_HOLE;
	p.aeth.msn = 77;
	len = blue_pkt_build(&p, frame, sizeof(frame));
	cr_assert_gt(len, 0);
	cr_assert_eq(blue_pkt_parse(frame, (size_t)len, &q), 0);
	cr_assert_eq(q.aeth.syndrome, BLUE_NAK_SR_HOLE);
	cr_assert_eq(q.aeth.msn, 77);
	cr_assert_eq(q.psn, 0xabcdef);
	/* IBA table 42: a NAK (011) with a code IBA reserves (5..31) */
	cr_assert_eq(BLUE_NAK_SR_HOLE & BLUE_AETH_TYPE_MASK, BLUE_AETH_NAK);
	cr_assert_geq(BLUE_NAK_SR_HOLE & 0x1f, 5);
}

/* ---- the timeout formulas ----------------------------------------------------------- */

/*
 * A 64-packet WRITE whose LAST packet is lost. The timer is armed at the first packet
 * (1 PSN in flight), and re-armed when the ACK asked for at packet 31 arrives (32 in
 * flight); the deadline in the live context is checked against the engine's clock each
 * time. Then the timeout resends the lost packet.
 */
static void timer_case(const struct blue_retx_attr *ra, uint64_t at1_ns, uint64_t at32_ns)
{
	struct flt fa = { 0 }, fb = { 0 };
	struct rc_fx fx;
	struct rc_mem m;
	struct blue_sge sge;
	struct blue_send_wr wr;
	struct blue_qp_ctx *live;
	uint64_t armed, t0;

	pair_up(&fx, GBN, GBN, &fa, &fb);
	live = fx.a.qp->live;
	cr_assert_eq(blue_qp_set_retx(fx.a.qp, ra), 0);
	rc_mem_init(&m, &fx.a, &fx.b, 64 * KiB, 64 * KiB + 11, ACC);
	rule_add(&fa, BLUE_OP_RC_WRITE_LAST, -1, -1, BLUE_LB_DROP, 1);
	sge = (struct blue_sge){ (uintptr_t)m.src, m.len, m.smr->lkey };
	wr = (struct blue_send_wr){ .wr_id = 1, .sg_list = &sge, .num_sge = 1,
		.opcode = BLUE_WR_RDMA_WRITE, .send_flags = BLUE_SEND_SIGNALED };
	wr.wr.rdma.remote_addr = (uintptr_t)m.dst;
	wr.wr.rdma.rkey = m.dmr->rkey;
	rc_post_send(&fx.a, &wr);

	cr_assert_gt(blue__progress(fx.a.ctx), 0);
	cr_assert_eq(live->sq_psn, PSN_A + 64, "the whole WRITE went in one pass");
	cr_assert_eq(live->timer_inflight, 1, "armed at the first packet");
	cr_assert_eq(live->timer_deadline_ns - fx.a.ctx->eng.now_ns, at1_ns,
		     "deadline %llu ns ahead, %llu expected",
		     (unsigned long long)(live->timer_deadline_ns - fx.a.ctx->eng.now_ns),
		     (unsigned long long)at1_ns);
	blue__progress(fx.b.ctx);		/* 63 packets: ACK of packet 31 */
	blue__progress(fx.a.ctx);		/* that ACK re-arms */
	cr_assert_eq(live->una_psn, PSN_A + 32);
	cr_assert_eq(live->timer_inflight, 32);
	cr_assert_eq(live->timer_deadline_ns - fx.a.ctx->eng.now_ns, at32_ns,
		     "deadline %llu ns ahead, %llu expected",
		     (unsigned long long)(live->timer_deadline_ns - fx.a.ctx->eng.now_ns),
		     (unsigned long long)at32_ns);
	armed = live->timer_deadline_ns;
	t0 = live->retransmits;
	check_wc(rc_wait1(&fx, fx.a.scq, RC_WAIT_MS), 1, BLUE_WC_RDMA_WRITE, "write");
	cr_assert_geq(blue__now_ns(), armed, "completed only after the timer fired");
	cr_assert_eq(live->retransmits, t0 + 1, "one timeout");
	cr_assert(rc_check(m.dst, m.len, m.len + 11));
	rc_mem_fini(&m);
	rc_fx_fini(&fx);
}

Test(rc_retx, timer_iba_exponential)
{
	struct blue_retx_attr ra = { .timer = BLUE_RETX_TIMER_IBA_EXP };

	/* rc_opts_default's timeout 12: 4.096 us * 2^12, whatever is in flight */
	timer_case(&ra, 4096ull << 12, 4096ull << 12);
}

Test(rc_retx, timer_linear_base_plus_k_cwnd)
{
	struct blue_retx_attr ra = { .timer = BLUE_RETX_TIMER_LINEAR, .base_us = 3000,
				     .k_us = 50 };

	timer_case(&ra, (3000 + 50 * 1) * 1000ull, (3000 + 50 * 32) * 1000ull);
}

/* ---- seeded random loss, RNR, retry exhaustion ----------------------------------------- */

/* Drops about @pct in 100 frames, chosen by a hash of the seed and the frame's number. */
struct rnd_loss {
	uint32_t seed, pct;
	int dropped;
};

static enum blue_lb_verdict rnd_fn(void *arg, const struct blue_frame *f, uint64_t seq)
{
	struct rnd_loss *l = arg;
	uint64_t x = seq + (uint64_t)l->seed * 0x9e3779b97f4a7c15ull;

	(void)f;
	/* splitmix64's finalizer: consecutive frame numbers give unrelated values */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	if (x % 100 < l->pct) {
		l->dropped++;
		return BLUE_LB_DROP;
	}
	return BLUE_LB_PASS;
}

/*
 * Rounds of SEND, WRITE, READ and FAA, each 8 deep, with @pct % of the frames lost both
 * ways: every byte, every completion in order, every atomic once.
 */
static void random_loss(enum blue_retx_policy pol, uint32_t pct, uint32_t seed)
{
	struct rnd_loss la = { .seed = seed, .pct = pct }, lb = { .seed = ~seed, .pct = pct };
	struct rc_opts o;
	struct rc_fx fx;
	enum { N = 8, LEN = 20 * 1024 + 100 };
	uint8_t *src = malloc(N * LEN), *dst = calloc(N, LEN), *rbuf = calloc(N, LEN);
	uint64_t *word = aligned_alloc(64, 64), *orig = aligned_alloc(64, 8 * N);
	struct blue_mr *smr, *dmr, *rmr, *wmr, *omr;
	struct blue_sge sge[N];
	struct blue_send_wr wr[N];
	struct blue_wc wc;
	uint64_t expect = 3;

	rc_opts_default(&o);
	o.timeout = 10;		/* 4 ms: many timeouts in a bounded time */
	rc_fx_init(&fx, &o);
	set_policy(&fx, pol, pol);
	cr_assert(src && dst && rbuf && word && orig);
	*word = 3;
	smr = blue_reg_mr(fx.a.pd, src, N * LEN, ACC);
	rmr = blue_reg_mr(fx.a.pd, rbuf, N * LEN, ACC);
	omr = blue_reg_mr(fx.a.pd, orig, 8 * N, ACC);
	dmr = blue_reg_mr(fx.b.pd, dst, N * LEN, ACC);
	wmr = blue_reg_mr(fx.b.pd, word, 64, ACC);
	cr_assert(smr && rmr && omr && dmr && wmr);
	blue_hal_loopback_set_filter(fx.a.hal, rnd_fn, &la);
	blue_hal_loopback_set_filter(fx.b.hal, rnd_fn, &lb);
	for (int round = 0; round < 4; round++) {
		enum blue_wr_opcode op = round == 0 ? BLUE_WR_SEND : round == 1 ?
			BLUE_WR_RDMA_WRITE : round == 2 ? BLUE_WR_RDMA_READ :
			BLUE_WR_ATOMIC_FETCH_AND_ADD;

		memset(wr, 0, sizeof(wr));
		for (int i = 0; i < N; i++) {
			rc_fill(src + i * LEN, LEN, 100 * (unsigned int)round + (unsigned int)i);
			if (op == BLUE_WR_RDMA_READ)
				rc_fill(dst + i * LEN, LEN, 500 + (unsigned int)i);
			if (op == BLUE_WR_SEND)
				rc_post_recv(&fx.b, 50 + (uint64_t)i, dst + i * LEN, LEN, dmr->lkey);
			sge[i] = (struct blue_sge){ (uintptr_t)src + i * LEN, LEN, smr->lkey };
			wr[i].wr.rdma.remote_addr = (uintptr_t)dst + i * LEN;
			wr[i].wr.rdma.rkey = dmr->rkey;
			if (op == BLUE_WR_RDMA_READ)
				sge[i] = (struct blue_sge){ (uintptr_t)rbuf + i * LEN, LEN, rmr->lkey };
			if (op == BLUE_WR_ATOMIC_FETCH_AND_ADD) {
				sge[i] = (struct blue_sge){ (uintptr_t)&orig[i], 8, omr->lkey };
				wr[i].wr.atomic.remote_addr = (uintptr_t)word;
				wr[i].wr.atomic.rkey = wmr->rkey;
				wr[i].wr.atomic.compare_add = 10 + (uint64_t)i;
			}
			wr[i].wr_id = 1000 * (uint64_t)round + (uint64_t)i;
			wr[i].sg_list = &sge[i];
			wr[i].num_sge = 1;
			wr[i].opcode = op;
			wr[i].send_flags = BLUE_SEND_SIGNALED;
			wr[i].next = i + 1 < N ? &wr[i + 1] : NULL;
		}
		rc_post_send(&fx.a, wr);
		for (int i = 0; i < N; i++) {
			wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
			cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "%s, %u%%, round %d, WR %d: %s",
				     pol_name(pol), pct, round, i, blue_wc_status_str(wc.status));
			cr_assert_eq(wc.wr_id, 1000 * (uint64_t)round + (uint64_t)i,
				     "in order");
			if (op == BLUE_WR_SEND) {
				wc = rc_wait1(&fx, fx.b.rcq, RC_WAIT_MS);
				cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
				cr_assert_eq(wc.wr_id, 50 + (uint64_t)i);
			}
		}
		rc_quiet(&fx, fx.a.scq, 2);
		rc_quiet(&fx, fx.b.rcq, 1);
		for (int i = 0; i < N; i++) {
			if (op == BLUE_WR_SEND || op == BLUE_WR_RDMA_WRITE)
				cr_assert(rc_check(dst + i * LEN, LEN, 100 * (unsigned int)round +
						   (unsigned int)i), "round %d, WR %d", round, i);
			if (op == BLUE_WR_RDMA_READ)
				cr_assert(rc_check(rbuf + i * LEN, LEN, 500 + (unsigned int)i),
					  "READ %d", i);
			if (op == BLUE_WR_ATOMIC_FETCH_AND_ADD) {
				cr_assert_eq(orig[i], expect, "FAA %d saw %llu", i,
					     (unsigned long long)orig[i]);
				expect += 10 + (uint64_t)i;
			}
		}
	}
	cr_assert_eq(*word, expect, "every FAA ran exactly once");
	cr_assert_gt(la.dropped + lb.dropped, 0);
	cr_assert_eq(fx.b.qp->live->sr_held, 0);
	blue_hal_loopback_set_filter(fx.a.hal, NULL, NULL);
	blue_hal_loopback_set_filter(fx.b.hal, NULL, NULL);
	cr_assert_eq(blue_dereg_mr(smr), 0);
	cr_assert_eq(blue_dereg_mr(rmr), 0);
	cr_assert_eq(blue_dereg_mr(omr), 0);
	cr_assert_eq(blue_dereg_mr(dmr), 0);
	cr_assert_eq(blue_dereg_mr(wmr), 0);
	free(src);
	free(dst);
	free(rbuf);
	free(word);
	free(orig);
	rc_fx_fini(&fx);
}

Test(rc_retx, random_loss_5pct, .timeout = 60)
{
	for (uint32_t seed = 1; seed <= 3; seed++) {
		random_loss(GBN, 5, seed);
		random_loss(SR, 5, seed);
	}
}

Test(rc_retx, random_loss_20pct, .timeout = 60)
{
	random_loss(GBN, 20, 7);
	random_loss(SR, 20, 7);
}

/*
 * No receive posted under selective retransmission: the RNR NAK makes the requester
 * wait and go back N, as IBA says; a hole in the same message is still mended, and the
 * message arrives once, whole.
 */
Test(rc_retx, rnr_under_selective)
{
	struct flt fa = { 0 }, fb = { 0 };
	struct rc_fx fx;
	struct rc_mem m;
	struct blue_sge sge;
	struct blue_send_wr wr;
	struct blue_wc wc;

	pair_up(&fx, SR, SR, &fa, &fb);
	rc_mem_init(&m, &fx.a, &fx.b, 16 * KiB, 16 * KiB + 11, ACC);
	drop_psn(&fa, PSN_A + 5);
	sge = (struct blue_sge){ (uintptr_t)m.src, m.len, m.smr->lkey };
	wr = (struct blue_send_wr){ .wr_id = 1, .sg_list = &sge, .num_sge = 1,
		.opcode = BLUE_WR_SEND, .send_flags = BLUE_SEND_SIGNALED };
	rc_post_send(&fx.a, &wr);
	/* no completion while the RNR NAK comes: wait for it by event, bounded (a fixed
	 * 5 ms window was too short under ASan on a loaded machine) */
	for (int i = 0; i < RC_WAIT_MS && !fx.a.qp->live->rnr_events; i++)
		rc_quiet(&fx, fx.a.scq, 1);
	cr_assert_gt(fx.a.qp->live->rnr_events, 0, "RNR NAK'd");
	rc_post_recv(&fx.b, 2, m.dst, m.len, m.dmr->lkey);
	check_wc(rc_wait1(&fx, fx.a.scq, RC_WAIT_MS), 1, BLUE_WC_SEND, "send");
	wc = rc_wait1(&fx, fx.b.rcq, RC_WAIT_MS);
	check_wc(wc, 2, BLUE_WC_RECV, "receive");
	cr_assert_eq(wc.byte_len, m.len);
	rc_quiet(&fx, fx.b.rcq, 2);
	cr_assert(rc_check(m.dst, m.len, m.len + 11));
	cr_assert_eq(fx.b.qp->live->sr_held, 0);
	rc_mem_fini(&m);
	rc_fx_fini(&fx);
}

/* A peer that went away: timeouts run out, RETRY_EXC_ERR, the rest flushed. */
Test(rc_retx, dead_peer_retry_exceeded_under_selective)
{
	struct flt fa = { 0 }, fb = { 0 };
	struct rc_opts o;
	struct rc_fx fx;
	struct rc_mem m;
	struct blue_sge sge;
	struct blue_send_wr wr[3];
	struct blue_wc wc;

	rc_opts_default(&o);
	o.timeout = 8;		/* 1 ms */
	o.retry_cnt = 2;
	rc_fx_init(&fx, &o);
	set_policy(&fx, SR, SR);
	blue_hal_loopback_set_filter(fx.a.hal, flt_fn, &fa);
	blue_hal_loopback_set_filter(fx.b.hal, flt_fn, &fb);
	rc_mem_init(&m, &fx.a, &fx.b, 8 * KiB, 8 * KiB + 11, ACC);
	drop_psn(&fa, PSN_A + 2);			/* a hole first ... */
	rule_add(&fb, -1, -1, -1, BLUE_LB_DROP, -1);	/* ... then B is mute */
	memset(wr, 0, sizeof(wr));
	for (int i = 0; i < 3; i++) {
		sge = (struct blue_sge){ (uintptr_t)m.src, m.len, m.smr->lkey };
		wr[i] = (struct blue_send_wr){ .wr_id = 1 + (uint64_t)i, .sg_list = &sge,
			.num_sge = 1, .opcode = BLUE_WR_RDMA_WRITE,
			.send_flags = BLUE_SEND_SIGNALED, .next = i < 2 ? &wr[i + 1] : NULL };
		wr[i].wr.rdma.remote_addr = (uintptr_t)m.dst;
		wr[i].wr.rdma.rkey = m.dmr->rkey;
	}
	rc_post_send(&fx.a, wr);
	wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.wr_id, 1);
	cr_assert_eq(wc.status, BLUE_WC_RETRY_EXC_ERR, "%s", blue_wc_status_str(wc.status));
	for (int i = 2; i <= 3; i++) {
		wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
		cr_assert_eq(wc.wr_id, (uint64_t)i);
		cr_assert_eq(wc.status, BLUE_WC_WR_FLUSH_ERR);
	}
	cr_assert_eq(fx.a.qp->live->state, BLUE_QPS_ERR);
	cr_assert_eq(fx.a.qp->live->retransmits, 2, "retry_cnt 2: two probes, then the end");
	blue_hal_loopback_set_filter(fx.a.hal, NULL, NULL);
	blue_hal_loopback_set_filter(fx.b.hal, NULL, NULL);
	rc_mem_fini(&m);
	rc_fx_fini(&fx);
}
