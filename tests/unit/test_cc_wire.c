// SPDX-License-Identifier: MIT
/*
 * Congestion control on the wire and in the transport's paths (runtime/cc_wire.h), over
 * the loopback HAL: ECT(0) on a QP's requests; CE -> one CNP per interval, counted on
 * both sides, on_cnp; the pacing gate (the gate holds, and next_tx_ns moves by exactly
 * the frame's bits at the rate); the window (never more PSNs in flight than cwnd); RTT
 * samples from first transmissions only; a paced transfer in event mode; the CM's
 * choice. The algorithm under test is a small table here that fixes the rate or the
 * window and counts the calls: the ops struct is the seam.
 */
#include <criterion/criterion.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compat/compat.h"
#include "runtime/cc_wire.h"
#include "runtime/codec.h"
#include "runtime/cq.h"
#include "runtime/device.h"
#include "runtime/progress.h"
#include "runtime/qp.h"
#include "tests/unit/rc_fixture.h"

#define KiB 1024u
#define ACC (BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE | BLUE_ACCESS_REMOTE_READ)
#define NSEND 512

/* ---- the test algorithm ------------------------------------------------------------- */

static struct {
	uint32_t rate_mbps, cwnd;	/* what init sets */
	int inits, cnps, losses, acks, rtt_samples, timers;
	uint64_t timer_at;		/* when on_timer last ran */
	uint32_t acked_pkts;
	int nsend;
	struct {
		uint64_t now, next_after;
		uint32_t bytes;
	} send[NSEND];
} T;

static void t_init(struct blue_cc *cc, uint64_t now)
{
	(void)now;
	cc->live->rate_mbps = T.rate_mbps;
	cc->live->cwnd = T.cwnd;
	cc->next_tx_ns = 0;
	T.inits++;
}

static void t_send(struct blue_cc *cc, uint32_t bytes, uint64_t now)
{
	if (T.nsend < NSEND) {
		T.send[T.nsend].now = now;
		T.send[T.nsend].next_after = cc->next_tx_ns;
		T.send[T.nsend].bytes = bytes;
	}
	T.nsend++;
}

static void t_ack(struct blue_cc *cc, uint32_t pkts, uint64_t rtt, uint64_t now)
{
	(void)cc;
	(void)now;
	T.acks++;
	T.acked_pkts += pkts;
	if (rtt)
		T.rtt_samples++;
}

static void t_cnp(struct blue_cc *cc, uint64_t now)
{
	(void)cc;
	(void)now;
	T.cnps++;
}

static void t_loss(struct blue_cc *cc, uint64_t now)
{
	(void)cc;
	(void)now;
	T.losses++;
}

static uint64_t t_timer(struct blue_cc *cc, uint64_t now)
{
	(void)cc;
	T.timers++;
	T.timer_at = now;
	return 0;	/* one-shot */
}

static const struct blue_cc_ops test_ops = {
	.name = "test",
	.init = t_init,
	.on_send = t_send,
	.on_ack = t_ack,
	.on_cnp = t_cnp,
	.on_loss = t_loss,
	.on_timer = t_timer,
};

static void use_test_ops(struct blue_qp *qp, uint32_t rate_mbps, uint32_t cwnd)
{
	memset(&T, 0, sizeof(T));
	T.rate_mbps = rate_mbps;
	T.cwnd = cwnd;
	qp->cc.ops = &test_ops;
	qp->cc.ops->init(&qp->cc, 0);
}

/* ---- memory and posting ------------------------------------------------------------- */


static void post_write(struct rc_side *s, struct rc_mem *m, uint64_t id, uint32_t len)
{
	struct blue_sge sge = { (uintptr_t)m->src, len, m->smr->lkey };
	struct blue_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				   .opcode = BLUE_WR_RDMA_WRITE,
				   .send_flags = BLUE_SEND_SIGNALED };

	wr.wr.rdma.remote_addr = (uintptr_t)m->dst;
	wr.wr.rdma.rkey = m->dmr->rkey;
	rc_post_send(s, &wr);
}

static void write_ok(struct rc_fx *fx, struct rc_mem *m, uint64_t id, uint32_t len)
{
	struct blue_wc wc;

	memset(m->dst, 0, m->len);
	post_write(&fx->a, m, id, len);
	wc = rc_wait1(fx, fx->a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "%s", blue_wc_status_str(wc.status));
	cr_assert_eq(wc.wr_id, id);
	cr_assert_eq(memcmp(m->src, m->dst, len), 0, "the WRITE's bytes arrived");
}

/* ---- frames on the loopback wire ----------------------------------------------------- */

#define NREC 256

struct rec {
	int n;
	struct {
		uint8_t op, tos;
		uint32_t psn;
	} f[NREC];
	bool mark_ce;		/* set CE on every request this end sends */
};

/* RFC 1071 over the 20-byte IPv4 header, its checksum field zeroed first */
static void ip_csum_fix(uint8_t *ip)
{
	uint32_t sum = 0;

	ip[10] = ip[11] = 0;
	for (int i = 0; i < 20; i += 2)
		sum += (uint32_t)ip[i] << 8 | ip[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	ip[10] = (uint8_t)(~sum >> 8);
	ip[11] = (uint8_t)~sum;
}

/*
 * Records every frame; with mark_ce, turns ECT into CE on requests as a congested
 * switch does (the TOS is outside the ICRC; the IPv4 checksum is fixed).
 */
static enum blue_lb_verdict record(void *arg, const struct blue_frame *f, uint64_t seq)
{
	struct rec *r = arg;
	struct blue_pkt p;

	(void)seq;
	if (blue_pkt_parse(f->data, f->len, &p))
		return BLUE_LB_PASS;
	if (r->mark_ce && (blue_opcode_flags(p.opcode) & BLUE_OPF_REQUEST)) {
		f->data[BLUE_ETH_HLEN + 1] |= BLUE_ECN_CE;
		ip_csum_fix(f->data + BLUE_ETH_HLEN);
		p.tos |= BLUE_ECN_CE;
	}
	if (r->n < NREC) {
		r->f[r->n].op = p.opcode;
		r->f[r->n].tos = p.tos;
		r->f[r->n].psn = p.psn;
		r->n++;
	}
	return BLUE_LB_PASS;
}

static int count_op(const struct rec *r, uint8_t op)
{
	int n = 0;

	for (int i = 0; i < r->n; i++)
		n += r->f[i].op == op;
	return n;
}

static void set_ecn(struct blue_qp *qp, uint32_t on)
{
	struct blue_cc_params p;

	blue__cc_defaults(&p, BLUE_CC_NONE);
	p.ecn = on;
	cr_assert_eq(blue_qp_set_cc(qp, &p), 0);
}

/* ---- ECN ------------------------------------------------------------------------------ */

Test(cc_wire, ect0_on_requests_only_when_ecn_on)
{
	struct rc_fx fx;
	struct rc_mem m;
	struct rec ra = { 0 }, rb = { 0 };

	rc_fx_init(&fx, NULL);
	rc_mem_init(&m, &fx.a, &fx.b, 3 * KiB, 3 * KiB + 3, ACC);
	blue_hal_loopback_set_filter(fx.a.hal, record, &ra);
	blue_hal_loopback_set_filter(fx.b.hal, record, &rb);

	write_ok(&fx, &m, 1, 3 * KiB);
	cr_assert_eq(ra.n, 3, "three WRITE packets");
	for (int i = 0; i < ra.n; i++)
		cr_assert_eq(ra.f[i].tos & BLUE_ECN_MASK, 0, "ecn off: not ECT (frame %d)", i);

	set_ecn(fx.a.qp, 1);
	ra.n = rb.n = 0;
	write_ok(&fx, &m, 2, 3 * KiB);
	cr_assert_eq(ra.n, 3);
	for (int i = 0; i < ra.n; i++)
		cr_assert_eq(ra.f[i].tos & BLUE_ECN_MASK, BLUE_ECN_ECT0,
			     "ecn on: request %d (opcode 0x%02x) carries ECT(0), TOS 0x%02x", i,
			     ra.f[i].op, ra.f[i].tos);
	cr_assert_geq(rb.n, 1);
	for (int i = 0; i < rb.n; i++)
		cr_assert_eq(rb.f[i].tos & BLUE_ECN_MASK, 0, "B's ACKs are not marked");
	rc_mem_fini(&m);
	rc_fx_fini(&fx);
}

/* Spin (bounded) until @ctx's clock is @ns past @t0: a wait, not a timing assertion. */
static void wait_past(uint64_t t0, uint64_t ns)
{
	uint64_t end = blue__now_ns() + 1000000000ull;

	while (blue__now_ns() < t0 + ns)
		cr_assert_lt(blue__now_ns(), end, "the clock did not move");
}

Test(cc_wire, ce_request_gets_one_cnp_per_interval)
{
	const struct blue_engine_stats *sa, *sb;
	struct rc_fx fx;
	struct rc_mem m;
	struct rec ra = { .mark_ce = true }, rb = { 0 };
	struct blue_qp_ctx *la, *lb;

	rc_fx_init(&fx, NULL);
	rc_mem_init(&m, &fx.a, &fx.b, 8 * KiB, 8 * KiB + 3, ACC);
	la = fx.a.qp->live;
	lb = fx.b.qp->live;
	sa = blue__engine_stats(fx.a.ctx);
	sb = blue__engine_stats(fx.b.ctx);
	set_ecn(fx.a.qp, 1);
	set_ecn(fx.b.qp, 1);
	use_test_ops(fx.a.qp, 0, 0);	/* counts on_cnp; no pacing, no window */
	fx.a.qp->live->ecn = 1;
	blue_hal_loopback_set_filter(fx.a.hal, record, &ra);
	blue_hal_loopback_set_filter(fx.b.hal, record, &rb);

	/* eight CE-marked requests reach B in one pass: one CNP */
	write_ok(&fx, &m, 1, 8 * KiB);
	cr_assert_eq(ra.n, 8);
	cr_assert_eq(lb->ecn_ce_rcvd, 8, "B counted %llu CE packets",
		     (unsigned long long)lb->ecn_ce_rcvd);
	cr_assert_eq(sb->rx_ce, 8);
	cr_assert_eq(lb->cnp_sent, 1, "B sent %llu CNPs", (unsigned long long)lb->cnp_sent);
	cr_assert_eq(sb->tx_cnp, 1);
	cr_assert_eq(count_op(&rb, BLUE_OP_CNP), 1, "one CNP on the wire");
	cr_assert_eq(la->cnp_rcvd, 1, "A received it");
	cr_assert_eq(sa->rx_cnp, 1);
	cr_assert_eq(T.cnps, 1, "on_cnp ran once");
	for (int i = 0; i < rb.n; i++)
		if (rb.f[i].op == BLUE_OP_CNP)
			cr_assert_eq(rb.f[i].tos & BLUE_ECN_MASK, 0, "a CNP is not ECT");

	/* the next interval: one more */
	wait_past(fx.b.qp->cc.last_cnp_tx_ns, fx.b.qp->cc.params.dcqcn.cnp_interval_us * 1000ull);
	write_ok(&fx, &m, 2, 1 * KiB);
	cr_assert_eq(lb->ecn_ce_rcvd, 9);
	cr_assert_eq(lb->cnp_sent, 2);
	rc_progress(&fx);	/* A takes in the CNP B's pass queued */
	cr_assert_eq(la->cnp_rcvd, 2);
	cr_assert_eq(T.cnps, 2);
	rc_mem_fini(&m);
	rc_fx_fini(&fx);
}

Test(cc_wire, ce_without_ecn_is_counted_not_answered)
{
	struct rc_fx fx;
	struct rc_mem m;
	struct rec ra = { .mark_ce = true }, rb = { 0 };

	rc_fx_init(&fx, NULL);
	rc_mem_init(&m, &fx.a, &fx.b, 2 * KiB, 2 * KiB + 3, ACC);
	blue_hal_loopback_set_filter(fx.a.hal, record, &ra);
	blue_hal_loopback_set_filter(fx.b.hal, record, &rb);
	write_ok(&fx, &m, 1, 2 * KiB);
	cr_assert_eq(fx.b.qp->live->ecn_ce_rcvd, 2);
	cr_assert_eq(fx.b.qp->live->cnp_sent, 0, "B did not negotiate CC: no CNP");
	cr_assert_eq(count_op(&rb, BLUE_OP_CNP), 0);
	rc_mem_fini(&m);
	rc_fx_fini(&fx);
}

/* ---- pacing ---------------------------------------------------------------------------- */

/* Every request left at or after its departure time, and moved it by exactly its bits. */
static void check_pacing(uint32_t rate_mbps, int npkts)
{
	uint64_t next = 0, base;

	cr_assert_eq(T.nsend, npkts, "on_send ran %d times, %d packets", T.nsend, npkts);
	for (int i = 0; i < T.nsend && i < NSEND; i++) {
		uint64_t now = T.send[i].now;

		cr_assert_geq(now, next, "packet %d left at %llu, before its time %llu", i,
			      (unsigned long long)now, (unsigned long long)next);
		base = next > now - BLUE_CC_BURST_NS ? next : now - BLUE_CC_BURST_NS;
		next = base + (uint64_t)T.send[i].bytes * 8000u / rate_mbps;
		cr_assert_eq(T.send[i].next_after, next, "packet %d: next_tx_ns %llu, %llu wanted",
			     i, (unsigned long long)T.send[i].next_after,
			     (unsigned long long)next);
		cr_assert_eq(T.send[i].bytes, 14 + 20 + 8 + 12 + (i ? 0 : 16) + 1024 + 4,
			     "packet %d: charged %u bytes", i, T.send[i].bytes);
	}
}

Test(cc_wire, pacing_gate_holds_and_moves_by_the_bits)
{
	const struct blue_engine_stats *sa;
	struct rc_fx fx;
	struct rc_mem m;
	uint64_t paced0;

	rc_fx_init(&fx, NULL);
	rc_mem_init(&m, &fx.a, &fx.b, 32 * KiB, 32 * KiB + 3, ACC);
	sa = blue__engine_stats(fx.a.ctx);
	use_test_ops(fx.a.qp, 200, 0);	/* 200 Mbit/s: 43 us per 1 KiB packet */
	paced0 = sa->tx_paced;
	write_ok(&fx, &m, 1, 32 * KiB);
	cr_assert_gt(sa->tx_paced, paced0, "the gate held requests (tx_paced)");
	check_pacing(200, 32);
	/* B's ACKs were never held: B is unpaced, and ACKs are never gated */
	cr_assert_eq(blue__engine_stats(fx.b.ctx)->tx_paced, 0);
	rc_mem_fini(&m);
	rc_fx_fini(&fx);
}

Test(cc_wire, unpaced_qp_is_never_held)
{
	struct rc_fx fx;
	struct rc_mem m;

	rc_fx_init(&fx, NULL);
	rc_mem_init(&m, &fx.a, &fx.b, 32 * KiB, 32 * KiB + 3, ACC);
	use_test_ops(fx.a.qp, 0, 0);
	write_ok(&fx, &m, 1, 32 * KiB);
	cr_assert_eq(blue__engine_stats(fx.a.ctx)->tx_paced, 0);
	cr_assert_eq(T.nsend, 32, "on_send still runs per request");
	cr_assert_eq(fx.a.qp->cc.next_tx_ns, 0, "no pacing clock without a rate");
	rc_mem_fini(&m);
	rc_fx_fini(&fx);
}

/* ---- the window ------------------------------------------------------------------------ */

struct inflight {
	uint32_t hi;		/* one past the highest request PSN A sent */
	uint32_t acked;		/* one past the highest PSN B acknowledged */
	bool started;
	int32_t max;
};

static enum blue_lb_verdict win_a(void *arg, const struct blue_frame *f, uint64_t seq)
{
	struct inflight *w = arg;
	struct blue_pkt p;
	int32_t d;

	(void)seq;
	if (blue_pkt_parse(f->data, f->len, &p) ||
	    !(blue_opcode_flags(p.opcode) & BLUE_OPF_REQUEST))
		return BLUE_LB_PASS;
	if (!w->started) {
		w->started = true;
		w->acked = p.psn;
	}
	w->hi = blue_psn_add(p.psn, 1);
	d = blue_psn_diff(w->hi, w->acked);
	if (d > w->max)
		w->max = d;
	return BLUE_LB_PASS;
}

static enum blue_lb_verdict win_b(void *arg, const struct blue_frame *f, uint64_t seq)
{
	struct inflight *w = arg;
	struct blue_pkt p;

	(void)seq;
	if (!blue_pkt_parse(f->data, f->len, &p) && p.opcode == BLUE_OP_RC_ACKNOWLEDGE)
		w->acked = blue_psn_add(p.psn, 1);
	return BLUE_LB_PASS;
}

Test(cc_wire, window_bounds_psns_in_flight)
{
	struct rc_fx fx;
	struct rc_mem m;
	struct inflight w = { 0 };
	struct blue_wc wc;
	uint64_t end;
	int got = 0;

	rc_fx_init(&fx, NULL);
	rc_mem_init(&m, &fx.a, &fx.b, 32 * KiB, 32 * KiB + 3, ACC);
	use_test_ops(fx.a.qp, 0, 4);
	blue_hal_loopback_set_filter(fx.a.hal, win_a, &w);
	blue_hal_loopback_set_filter(fx.b.hal, win_b, &w);
	post_write(&fx.a, &m, 1, 32 * KiB);
	end = blue__now_ns() + RC_WAIT_MS * 1000000ull;
	while (!got && blue__now_ns() < end) {
		got = blue_poll_cq(fx.a.scq, 1, &wc);
		cr_assert_leq(blue_psn_diff(fx.a.qp->live->sq_psn, fx.a.qp->live->una_psn), 4,
			      "A has more than cwnd PSNs in flight");
		blue__progress(fx.b.ctx);
	}
	cr_assert_eq(got, 1, "the WRITE completed");
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "%s", blue_wc_status_str(wc.status));
	cr_assert_eq(memcmp(m.src, m.dst, m.len), 0);
	cr_assert_leq(w.max, 4, "%d PSNs were in flight on the wire", w.max);
	cr_assert_eq(w.max, 4, "the window was used");
	cr_assert_eq(fx.a.qp->live->retx_pkts, 0, "no ACK timeout stalled it");
	rc_mem_fini(&m);
	rc_fx_fini(&fx);
}

/* ---- RTT ------------------------------------------------------------------------------- */

Test(cc_wire, rtt_samples_from_first_transmissions_only)
{
	struct rc_fx fx;
	struct rc_mem m;
	struct rc_drop d = { .opcode = -1, .max_drops = 1 };
	struct blue_qp_ctx *la;

	rc_fx_init(&fx, NULL);
	rc_mem_init(&m, &fx.a, &fx.b, 4 * KiB, 4 * KiB + 3, ACC);
	la = fx.a.qp->live;
	use_test_ops(fx.a.qp, 0, 0);

	/* the only packet is lost once: the ACK answers the resend, so no sample (Karn) */
	d.psn = la->sq_psn;
	rc_drop_install(fx.a.hal, &d);
	write_ok(&fx, &m, 1, 1 * KiB);
	cr_assert_eq(d.dropped, 1);
	cr_assert_geq(la->retx_pkts, 1);
	cr_assert_eq(fx.a.qp->cc.rtt_samples, 0, "a sample from a retransmitted packet");
	cr_assert_eq(la->rtt_ns, 0);
	cr_assert_eq(T.rtt_samples, 0);
	cr_assert_eq(T.losses, 1, "on_loss ran for the timeout");
	cr_assert_eq(T.acked_pkts, 1);

	/* no loss: one sample, srtt starts at it */
	blue_hal_loopback_set_filter(fx.a.hal, NULL, NULL);
	write_ok(&fx, &m, 2, 4 * KiB);
	cr_assert_eq(fx.a.qp->cc.rtt_samples, 1);
	cr_assert_gt(la->rtt_ns, 0);
	cr_assert_eq(la->srtt_ns, la->rtt_ns, "srtt starts at the first sample");
	cr_assert_eq(T.rtt_samples, 1, "on_ack got the sample");
	cr_assert_eq(T.acked_pkts, 5, "on_ack counted every PSN once");

	/* a second: srtt moves by 1/8 of the difference */
	{
		uint32_t s0 = la->srtt_ns;

		write_ok(&fx, &m, 3, 1 * KiB);
		cr_assert_eq(fx.a.qp->cc.rtt_samples, 2);
		cr_assert_eq(la->srtt_ns,
			     (uint32_t)((int64_t)s0 + ((int64_t)la->rtt_ns - s0) * 128 / 1024));
	}
	rc_mem_fini(&m);
	rc_fx_fini(&fx);
}

/* Selective retransmission reports its losses too: a hole NAK, and the tail-loss probe. */
Test(cc_wire, selective_retx_losses_reach_on_loss)
{
	struct blue_retx_attr ra = { .policy = BLUE_RETX_SELECTIVE };
	struct rc_fx fx;
	struct rc_mem m;
	struct rc_drop d = { .opcode = -1, .max_drops = 1 };
	int losses;

	rc_fx_init(&fx, NULL);
	blue__qp_set_peer_caps(fx.a.qp, BLUE_CM_CAP_SELECTIVE_RETX);
	blue__qp_set_peer_caps(fx.b.qp, BLUE_CM_CAP_SELECTIVE_RETX);
	cr_assert_eq(blue_qp_set_retx(fx.a.qp, &ra), 0);
	cr_assert_eq(blue_qp_set_retx(fx.b.qp, &ra), 0);
	rc_mem_init(&m, &fx.a, &fx.b, 32 * KiB, 32 * KiB + 3, ACC);
	use_test_ops(fx.a.qp, 0, 0);

	/* a hole in the middle: B's hole NAK */
	d.psn = blue_psn_add(fx.a.qp->live->sq_psn, 9);
	rc_drop_install(fx.a.hal, &d);
	write_ok(&fx, &m, 1, 32 * KiB);
	cr_assert_eq(d.dropped, 1);
	cr_assert_eq(fx.a.qp->live->retx_pkts, 1, "selective: one resend");
	cr_assert_geq(T.losses, 1, "the hole NAK reached on_loss");
	losses = T.losses;

	/* the last packet lost: only the ACK timer's tail-loss probe finds it */
	d.psn = blue_psn_add(fx.a.qp->live->sq_psn, 3);
	rc_drop_install(fx.a.hal, &d);
	write_ok(&fx, &m, 2, 4 * KiB);
	cr_assert_eq(d.dropped, 1);
	cr_assert_gt(T.losses, losses, "the timeout reached on_loss");
	rc_mem_fini(&m);
	rc_fx_fini(&fx);
}

/* ---- event mode ------------------------------------------------------------------------- */

Test(cc_wire, paced_transfer_completes_in_event_mode)
{
	struct blue_comp_channel *ch;
	struct rc_fx fx;
	struct rc_mem m;
	struct blue_cq *cq;
	struct blue_wc wc;
	void *cqctx;
	uint64_t end;
	int got = 0, timeouts = 0, wakes = 0;
	struct pollfd pfd;

	rc_fx_init_noqp(&fx, NULL);
	ch = blue_create_comp_channel(fx.a.ctx);
	cr_assert_not_null(ch);
	cr_assert_eq(blue_destroy_cq(fx.a.scq), 0);
	fx.a.scq = blue_create_cq(fx.a.ctx, 64, NULL, ch, 0);
	cr_assert_not_null(fx.a.scq);
	rc_qp_create(&fx, &fx.a);
	rc_qp_create(&fx, &fx.b);
	rc_qp_connect(&fx, &fx.a, &fx.b, fx.o.sq_psn_a, fx.o.sq_psn_b);
	rc_qp_connect(&fx, &fx.b, &fx.a, fx.o.sq_psn_b, fx.o.sq_psn_a);
	rc_mem_init(&m, &fx.a, &fx.b, 16 * KiB, 16 * KiB + 3, ACC);
	use_test_ops(fx.a.qp, 100, 0);	/* 86 us per packet: most passes are held */

	cr_assert_eq(blue_req_notify_cq(fx.a.scq, 0), 0);
	post_write(&fx.a, &m, 7, 16 * KiB);
	pfd.fd = blue_comp_channel_fd(ch);
	pfd.events = POLLIN;
	end = blue__now_ns() + RC_WAIT_MS * 1000000ull;
	/*
	 * What blue_get_cq_event() does, with B's engine run between: take an event or run
	 * A's engine, then sleep on the channel's fd. Only A's timer can wake A while it is
	 * held by the gate (B has nothing to send then), so a sleep that times out means the
	 * pacing deadline was not in the engine's timer.
	 */
	while (!got && blue__now_ns() < end) {
		if (blue__get_cq_event_try(ch, &cq, &cqctx) == 0) {
			cr_assert_eq(cq, fx.a.scq);
			got = blue_poll_cq(cq, 1, &wc);
			break;
		}
		while (blue__progress(fx.b.ctx) > 0)
			;
		if (blue__get_cq_event_try(ch, &cq, &cqctx) == 0) {
			got = blue_poll_cq(cq, 1, &wc);
			break;
		}
		if (poll(&pfd, 1, 1000) == 0)
			timeouts++;
		else
			wakes++;
		if (fx.a.ctx->timer_fd >= 0) {
			uint64_t v;

			if (read(fx.a.ctx->timer_fd, &v, sizeof(v)) < 0)
				v = 0;	/* not fired: nothing to drain */
		}
	}
	cr_assert_eq(got, 1, "the paced WRITE completed (%d wakes, %d sleeps timed out)", wakes,
		     timeouts);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 7);
	cr_assert_eq(memcmp(m.src, m.dst, m.len), 0);
	cr_assert_gt(blue__engine_stats(fx.a.ctx)->tx_paced, 0, "it was paced");
	cr_assert_eq(timeouts, 0, "%d sleeps were not woken by the pacing deadline", timeouts);
	blue_ack_cq_events(fx.a.scq, 1);
	rc_mem_fini(&m);
	cr_assert_eq(blue_destroy_qp(fx.a.qp), 0);
	fx.a.qp = NULL;
	cr_assert_eq(blue_destroy_cq(fx.a.scq), 0);
	fx.a.scq = blue_create_cq(fx.a.ctx, 64, NULL, NULL, 0);
	cr_assert_eq(blue_destroy_comp_channel(ch), 0);
	rc_fx_fini(&fx);
}

/*
 * compat's progress thread sleeps until the engine's next deadline: a pass that held a
 * paced request publishes next_tx_ns as that deadline, and the thread's sleep ends then
 * (not BV_IDLE_MS later).
 */
Test(cc_wire, progress_thread_sleeps_until_the_pacing_deadline)
{
	struct rc_fx fx;
	struct rc_mem m;
	struct blue_engine *eng;
	uint64_t end, paced0;

	rc_fx_init(&fx, NULL);
	rc_mem_init(&m, &fx.a, &fx.b, 16 * KiB, 16 * KiB + 3, ACC);
	eng = &fx.a.ctx->eng;
	use_test_ops(fx.a.qp, 100, 0);	/* 86 us per packet */
	paced0 = eng->st.tx_paced;
	post_write(&fx.a, &m, 1, 16 * KiB);
	end = blue__now_ns() + RC_WAIT_MS * 1000000ull;
	while (eng->st.tx_paced == paced0 && blue__now_ns() < end)
		rc_progress(&fx);
	cr_assert_gt(eng->st.tx_paced, paced0, "the gate held a request");
	cr_assert_eq(eng->next_ns, fx.a.qp->cc.next_tx_ns,
		     "the pass's deadline is the held QP's departure (%llu, %llu)",
		     (unsigned long long)eng->next_ns,
		     (unsigned long long)fx.a.qp->cc.next_tx_ns);
	cr_assert_gt(eng->next_ns, eng->now_ns);
	cr_assert_eq(bv_idle_ns(eng->now_ns, eng->next_ns), eng->next_ns - eng->now_ns,
		     "the thread sleeps until the departure");
	cr_assert_eq(bv_idle_ns(1000, 0), 1000000, "no deadline: BV_IDLE_MS");
	cr_assert_eq(bv_idle_ns(1000, 999), 0, "a deadline passed: no sleep");
	cr_assert_eq(bv_idle_ns(1000, 1000 + 5000000), 1000000, "far: BV_IDLE_MS");
	{
		struct blue_wc wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);

		cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	}
	rc_mem_fini(&m);
	rc_fx_fini(&fx);
}

/*
 * The algorithm's own timer (cc->timer_ns) is in the engine's timer minimum: an idle
 * context in event mode is woken for it, and on_timer runs once it is due.
 */
Test(cc_wire, cc_timer_wakes_an_idle_engine)
{
	struct blue_comp_channel *ch;
	struct rc_fx fx;
	struct blue_cq *cq;
	struct pollfd pfd;
	void *cqctx;
	uint64_t due, end;
	int r;

	rc_fx_init(&fx, NULL);
	ch = blue_create_comp_channel(fx.a.ctx);	/* the context's timerfd comes with it */
	cr_assert_not_null(ch);
	use_test_ops(fx.a.qp, 0, 0);
	due = blue__now_ns() + 300000;			/* 300 us */
	fx.a.qp->cc.timer_ns = due;
	cr_assert_neq(blue__get_cq_event_try(ch, &cq, &cqctx), 0, "no event: nothing ran");
	cr_assert_eq(T.timers, 0, "not due yet");
	pfd = (struct pollfd){ .fd = blue_comp_channel_fd(ch), .events = POLLIN };
	end = blue__now_ns() + RC_WAIT_MS * 1000000ull;
	while (!T.timers && blue__now_ns() < end) {
		r = poll(&pfd, 1, 1000);
		cr_assert_gt(r, 0, "the channel's fd slept through the cc timer");
		if (read(fx.a.ctx->timer_fd, &due, sizeof(due)) < 0)
			due = 0;	/* woken by something else: nothing to drain */
		(void)blue__get_cq_event_try(ch, &cq, &cqctx);
	}
	cr_assert_eq(T.timers, 1, "on_timer ran once");
	cr_assert_eq(fx.a.qp->cc.timer_ns, 0, "its return value is the next deadline");
	cr_assert_eq(blue_destroy_comp_channel(ch), 0);
	rc_fx_fini(&fx);
}

/* ---- the CM's choice ---------------------------------------------------------------------- */

Test(cc_wire, cm_choice_table)
{
	const uint32_t D = BLUE_CM_CAP_DCQCN, W = BLUE_CM_CAP_WINDOW_CC;
	const uint32_t built = blue__cc_caps_built();
	static const struct {
		uint32_t local, remote;
		uint32_t want;	/* when both algorithms are built */
	} cases[] = {
		{ BLUE_CM_CAP_DCQCN | BLUE_CM_CAP_WINDOW_CC,
		  BLUE_CM_CAP_DCQCN | BLUE_CM_CAP_WINDOW_CC, BLUE_CC_DEFAULT },
		{ BLUE_CM_CAP_DCQCN | BLUE_CM_CAP_WINDOW_CC, BLUE_CM_CAP_DCQCN, BLUE_CC_DCQCN },
		{ BLUE_CM_CAP_DCQCN | BLUE_CM_CAP_WINDOW_CC, BLUE_CM_CAP_WINDOW_CC, BLUE_CC_WINDOW },
		{ BLUE_CM_CAP_DCQCN | BLUE_CM_CAP_WINDOW_CC, 0, BLUE_CC_NONE },
		{ BLUE_CM_CAP_DCQCN, 0, BLUE_CC_NONE },
		{ BLUE_CM_CAP_WINDOW_CC, 0, BLUE_CC_WINDOW },	/* chosen alone */
		{ 0, BLUE_CM_CAP_DCQCN | BLUE_CM_CAP_WINDOW_CC, BLUE_CC_NONE },
		{ BLUE_CM_CAP_SELECTIVE_RETX, BLUE_CM_CAP_SELECTIVE_RETX, BLUE_CC_NONE },
	};

	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t want = cases[i].want, got;

		/* an algorithm this build lacks is never chosen */
		if ((want == BLUE_CC_DCQCN && !(built & D)) ||
		    (want == BLUE_CC_WINDOW && !(built & W)) ||
		    (want == BLUE_CC_DEFAULT && (built & (D | W)) != (D | W)))
			want = blue__cc_choose(cases[i].local & built, cases[i].remote & built);
		got = blue__cc_choose(cases[i].local, cases[i].remote);
		cr_assert_eq(got, want, "case %u: %u, %u wanted", i, got, want);
		cr_assert(got == BLUE_CC_NONE || blue__cc_ops(got), "case %u: not built", i);
	}
}

static void cm_connect(struct rc_fx *fx, uint32_t caps_a, uint32_t caps_b)
{
	struct blue_cm_info ia, ib;
	struct blue_cm_qp_attr qa, qb;

	rc_fx_init_noqp(fx, NULL);
	rc_qp_create(fx, &fx->a);
	rc_qp_create(fx, &fx->b);
	cr_assert_eq(blue_cm_info_from_qp(fx->a.ctx, fx->a.qp, 1, &ia), 0);
	cr_assert_eq(blue_cm_info_from_qp(fx->b.ctx, fx->b.qp, 1, &ib), 0);
	blue_cm_qp_attr_default(&qa);
	blue_cm_qp_attr_default(&qb);
	cr_assert_eq(ia.caps, qa.caps, "info and attr offer the same by default");
	cr_assert_eq(ia.caps, blue__cc_caps_built(), "CC is offered by default");
	ia.caps = qa.caps = caps_a;
	ib.caps = qb.caps = caps_b;
	qa.access = qb.access = ACC;
	cr_assert_eq(blue_cm_connect_qp(fx->a.ctx, fx->a.qp, ia.psn, &ib, &qa), 0, "%s",
		     blue_cm_last_error());
	cr_assert_eq(blue_cm_connect_qp(fx->b.ctx, fx->b.qp, ib.psn, &ia, &qb), 0, "%s",
		     blue_cm_last_error());
}

Test(cc_wire, cm_negotiates_cc)
{
	const uint32_t all = blue__cc_caps_built();
	struct {
		uint32_t a, b;
	} cases[] = {
		{ all, all },	/* both offer: BLUE_CC_DEFAULT where built */
		{ all, 0 },	/* one side none: none */
	};

	for (unsigned int i = 0; i < 2; i++) {
		struct rc_fx fx;
		struct rc_mem m;
		uint32_t want = blue__cc_choose(cases[i].a, cases[i].b);

		cm_connect(&fx, cases[i].a, cases[i].b);
		cr_assert_eq(fx.a.qp->live->cc_algo, want, "case %u: A runs %u", i,
			     fx.a.qp->live->cc_algo);
		cr_assert_eq(fx.b.qp->live->cc_algo, want, "case %u: B runs %u", i,
			     fx.b.qp->live->cc_algo);
		cr_assert_eq(fx.a.qp->live->ecn, want == BLUE_CC_DCQCN, "case %u: ECN", i);
		if (i == 1)
			cr_assert_eq(want, BLUE_CC_NONE);
		else if (all & BLUE_CM_CAP_DCQCN)
			cr_assert_eq(want, BLUE_CC_DEFAULT);
		rc_mem_init(&m, &fx.a, &fx.b, 8 * KiB, 8 * KiB + 3, ACC);
		write_ok(&fx, &m, 1, 8 * KiB);
		rc_mem_fini(&m);
		rc_fx_fini(&fx);
	}
}

/* ---- end to end with the real algorithms ------------------------------------------------ */

Test(cc_wire, dcqcn_end_to_end_cuts_on_ce)
{
	const uint32_t all = BLUE_CM_CAP_DCQCN | BLUE_CM_CAP_WINDOW_CC;
	struct rc_fx fx;
	struct rc_mem m;
	struct rec ra = { .mark_ce = true }, rb = { 0 };

	cr_assert_eq(blue__cc_caps_built() & all, all, "both algorithms are built");
	cm_connect(&fx, all, all);
	cr_assert_eq(fx.a.qp->live->cc_algo, BLUE_CC_DCQCN);
	cr_assert_eq(fx.b.qp->live->cc_algo, BLUE_CC_DCQCN);
	rc_mem_init(&m, &fx.a, &fx.b, 64 * KiB, 64 * KiB + 3, ACC);
	blue_hal_loopback_set_filter(fx.a.hal, record, &ra);
	blue_hal_loopback_set_filter(fx.b.hal, record, &rb);
	write_ok(&fx, &m, 1, 64 * KiB);
	cr_assert_gt(fx.b.qp->live->cnp_sent, 0, "B answered the CE marks");
	cr_assert_eq(fx.a.qp->live->cnp_rcvd, fx.b.qp->live->cnp_sent);
	cr_assert_gt(fx.a.qp->live->cc_cuts, 0, "DCQCN cut A's rate on the CNPs");
	cr_assert_eq(fx.a.qp->live->ecn, 1);
	for (int i = 0; i < ra.n; i++)
		cr_assert_eq(ra.f[i].tos & BLUE_ECN_MASK, BLUE_ECN_CE, "every request was ECT");
	rc_mem_fini(&m);
	rc_fx_fini(&fx);
}

Test(cc_wire, window_alone_against_a_peer_that_offers_nothing)
{
	struct rc_fx fx;
	struct rc_mem m;

	cm_connect(&fx, BLUE_CM_CAP_WINDOW_CC, 0);
	cr_assert_eq(fx.a.qp->live->cc_algo, BLUE_CC_WINDOW, "A chose the window alone");
	cr_assert_eq(fx.b.qp->live->cc_algo, BLUE_CC_NONE);
	cr_assert_gt(fx.a.qp->live->cwnd, 0, "the window is in force");
	rc_mem_init(&m, &fx.a, &fx.b, 64 * KiB, 64 * KiB + 3, ACC);
	write_ok(&fx, &m, 1, 64 * KiB);
	cr_assert_gt(fx.a.qp->cc.rtt_samples, 0, "the window got RTT samples");
	cr_assert_gt(fx.a.qp->live->srtt_ns, 0);
	rc_mem_fini(&m);
	rc_fx_fini(&fx);
}

/*
 * What was set on a QP before the CM picked its algorithm stays: `bluectl set IFNAME
 * dcqcn.line_rate_mbps=...` (the interface's defaults) lands on a new QP while it still
 * runs none, and the pick must not put the documented defaults back over it (seen
 * through the switch: the line rate stayed the netdev's 10 Gbit/s).
 */
Test(cc_wire, cm_pick_keeps_parameters_set_before)
{
	struct blue_cc_params p;
	struct rc_fx fx;

	if (!blue__cc_ops(BLUE_CC_DCQCN))
		cr_skip_test("DCQCN is not built");
	rc_fx_init_noqp(&fx, NULL);
	rc_qp_create(&fx, &fx.a);
	cr_assert_eq(blue_qp_query_cc(fx.a.qp, &p), 0);
	cr_assert_eq(p.algo, BLUE_CC_NONE);
	p.dcqcn.line_rate_mbps = 500;
	p.dcqcn.rai_mbps = 7;
	p.window.target_delay_us = 321;
	cr_assert_eq(blue_qp_set_cc(fx.a.qp, &p), 0);
	cr_assert_eq(blue__cc_use(fx.a.qp, BLUE_CC_DCQCN), 0);
	cr_assert_eq(blue_qp_query_cc(fx.a.qp, &p), 0);
	cr_assert_eq(p.algo, BLUE_CC_DCQCN);
	cr_assert_eq(p.ecn, 1, "DCQCN's ECN default comes with the pick");
	cr_assert_eq(p.dcqcn.line_rate_mbps, 500, "line rate %u: the set value was lost",
		     p.dcqcn.line_rate_mbps);
	cr_assert_eq(p.dcqcn.rai_mbps, 7);
	cr_assert_eq(p.window.target_delay_us, 321);
	rc_fx_fini(&fx);
}

/*
 * An ACK for the first transmission of a whole WRITE arrives after a timeout rewound
 * into it and a window let only part of the resend out: una_psn jumps past sq_psn, the
 * requester skips the WQE, and the completer must still retire it (it did not: the WQE
 * stayed SENDING and the WRITE never completed; a paced resend under load hit this).
 */
Test(cc_wire, ack_past_a_partial_resend_completes_the_wqe)
{
	struct rc_opts o;
	struct rc_fx fx;
	struct rc_mem m;
	struct blue_wc wc;
	uint32_t psn0;

	rc_opts_default(&o);
	o.timeout = 1;		/* 8.2 us: the next pass of A times out */
	o.retry_cnt = 1;	/* a second timeout fails the WRITE instead of hiding a stall */
	rc_fx_init(&fx, &o);
	rc_mem_init(&m, &fx.a, &fx.b, 4 * KiB, 4 * KiB + 3, ACC);
	psn0 = fx.a.qp->live->sq_psn;
	post_write(&fx.a, &m, 9, 4 * KiB);
	blue__progress(fx.a.ctx);
	cr_assert_eq(blue_psn_diff(fx.a.qp->live->sq_psn, psn0), 4, "4 packets first");
	fx.a.qp->live->cwnd = 1;	/* the resend goes one PSN at a time */
	usleep(1000);
	blue__progress(fx.a.ctx);	/* timeout: back to psn0, one packet resent */
	cr_assert_eq(blue_psn_diff(fx.a.qp->live->sq_psn, psn0), 1, "rewound, one resent");
	while (blue__progress(fx.b.ctx) > 0)
		;			/* B: 4 packets and a duplicate, ACKed to psn0 + 3 */
	fx.a.qp->live->cwnd = 0;
	wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "WRITE: %s", blue_wc_status_str(wc.status));
	cr_assert_eq(wc.wr_id, 9);
	cr_assert(rc_check(m.dst, 4 * KiB, 4 * KiB + 3), "the bytes arrived");
	rc_mem_fini(&m);
	rc_fx_fini(&fx);
}
