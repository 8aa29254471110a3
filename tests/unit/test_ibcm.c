// SPDX-License-Identifier: MIT
/*
 * The IB CM state machine (runtime/ibcm.c): two endpoints, A (active) and B (passive),
 * in one process, wired by a fake QP1 (a FIFO of MADs) and a fake clock that the tests
 * advance; a loss hook drops chosen MADs. The consumers act from the event callback as
 * rdma_cm would: B accepts or rejects the REQ, A sends the RTU on the REP.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "runtime/ibcm.h"

#define QMAX	64
#define EVMAX	32
#define SID	blue__ibcm_ip_service_id(BLUE_IBCM_PS_TCP, 18515)
#define T20	blue__ibcm_wait_ns(20)	/* 4.096 us * 2^20 = 4294967296 ns */
#define TW	(3 * T20)		/* both endpoints' TIMEWAIT */
#define SID_UDP	blue__ibcm_ip_service_id(BLUE_IBCM_PS_UDP, 7471)

struct ev {
	enum blue_ibcm_event	type;
	struct blue_ibcm_conn	*conn;
	int			has_msg;
	struct blue_ibcm_msg	msg;
	struct blue_ibcm_conn	snap;	/* the record as the callback saw it */
};

enum b_policy { B_ACCEPT, B_REJECT, B_MRA_THEN_HOLD, B_MRA_DELAYED, B_HOLD };

struct side {
	struct blue_ibcm	*cm;
	struct blue_ibcm_addr	addr;
	struct ev		ev[EVMAX];
	unsigned int		nev;
	unsigned int		sent[0x20];	/* per attribute ID */
	struct blue_ibcm_conn	*held;		/* B's record under B_HOLD / MRA */
};

struct mad_q {
	int		to;	/* 0 = A, 1 = B */
	uint8_t		mad[BLUE_IBCM_MAD_SIZE];
};

static struct world {
	struct side	s[2];
	struct mad_q	q[QMAX];
	unsigned int	qh, qt;
	uint64_t	now;
	/* loss hook: drop the next @drop_n sends of attribute @drop_attr from side @drop_from */
	int		drop_from;
	uint16_t	drop_attr;
	unsigned int	drop_n;
	unsigned int	dropped;
	enum b_policy	b_policy;
	int		a_auto_rtu;
	int		b_sidr_hold;	/* B keeps SIDR_REQs unanswered in side.held */
} w;

static const uint8_t priv_req[] = "hello from A: REQ private data";
static const uint8_t priv_rep[] = "B's REP private data, a bit longer than the REQ's";
static const uint8_t priv_rej[] = { 0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03 };

static uint16_t mad_attr(const uint8_t *mad)
{
	return (uint16_t)(mad[16] << 8 | mad[17]);
}

static int fake_send(void *ctx, const uint8_t mad[BLUE_IBCM_MAD_SIZE],
		     const struct blue_ibcm_addr *to)
{
	struct side *s = ctx;
	int from = s == &w.s[0] ? 0 : 1;
	uint16_t attr = mad_attr(mad);

	cr_assert_eq(to->qpn, BLUE_IBCM_GSI_QPN);
	cr_assert(!memcmp(to->gid, w.s[!from].addr.gid, 16), "sent to the wrong GID");
	if (attr < 0x20)
		s->sent[attr]++;
	if (w.drop_n && from == w.drop_from && attr == w.drop_attr) {
		w.drop_n--;
		w.dropped++;
		return 0;
	}
	cr_assert_lt(w.qt - w.qh, QMAX);
	w.q[w.qt % QMAX].to = !from;
	memcpy(w.q[w.qt % QMAX].mad, mad, BLUE_IBCM_MAD_SIZE);
	w.qt++;
	return 0;
}

static void b_on_req(struct side *s, struct blue_ibcm_conn *c)
{
	struct blue_ibcm_rep_param rp = {
		.local_qpn = 0x00bb01, .starting_psn = 0xb0b0b0,
		.responder_resources = 7, .initiator_depth = 5, .rnr_retry_count = 6,
		.private_data = priv_rep, .private_data_len = sizeof(priv_rep),
	};

	switch (w.b_policy) {
	case B_ACCEPT:
		cr_assert_eq(blue__ibcm_accept(s->cm, c, &rp, w.now), 0);
		break;
	case B_REJECT:
		cr_assert_eq(blue__ibcm_reject(s->cm, c, BLUE_IBCM_REJ_CONSUMER_DEFINED,
					       priv_rej, sizeof(priv_rej)), 0);
		break;
	case B_MRA_THEN_HOLD:
		cr_assert_eq(blue__ibcm_send_mra(s->cm, c, 24), 0);
		s->held = c;
		break;
	case B_MRA_DELAYED:	/* what rdma_cm arms for every CONNECT_REQUEST */
		cr_assert_eq(blue__ibcm_send_mra(s->cm, c, BLUE_IBCM_MRA_DELAY | 24), 0);
		s->held = c;
		break;
	case B_HOLD:
		s->held = c;
		break;
	}
}

static void fake_event(void *ctx, struct blue_ibcm_conn *conn, enum blue_ibcm_event type,
		       const struct blue_ibcm_msg *msg)
{
	struct side *s = ctx;
	struct ev *e;

	cr_assert_lt(s->nev, EVMAX);
	e = &s->ev[s->nev++];
	e->type = type;
	e->conn = conn;
	e->has_msg = msg != NULL;
	if (msg)
		e->msg = *msg;
	e->snap = *conn;
	if (s == &w.s[1] && type == BLUE_IBCM_EV_REQ_RECEIVED)
		b_on_req(s, conn);
	if (s == &w.s[1] && type == BLUE_IBCM_EV_SIDR_REQ_RECEIVED) {
		if (w.b_sidr_hold)
			s->held = conn;
		else
			cr_assert_eq(blue__ibcm_sidr_reply(s->cm, conn, BLUE_IBCM_SIDR_OK,
							   0x00bb77, 0x11223344, priv_rep,
							   sizeof(priv_rep)), 0);
	}
	if (s == &w.s[0] && type == BLUE_IBCM_EV_REP_RECEIVED && w.a_auto_rtu)
		cr_assert_eq(blue__ibcm_send_rtu(s->cm, conn), 0);
}

static void gid4(uint8_t gid[16], uint8_t last)
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	gid[12] = 10;
	gid[13] = 0;
	gid[14] = 0;
	gid[15] = last;
}

/* Endpoint @i with CM response timeout @timeout (0: the default, 20). */
static void make_side(int i, uint8_t timeout)
{
	struct blue_ibcm_cfg cfg = {
		.ops = { .send = fake_send, .event = fake_event },
		.ctx = &w.s[i],
		.local_ca_guid = 0x0002c90300a0b0c0ull + (uint64_t)i,
		.seed = 0x1234u * (uint32_t)(i + 1),
		.timewait_ns = TW,
		.cm_response_timeout = timeout,
	};

	gid4(cfg.local_gid, (uint8_t)(1 + i));
	gid4(w.s[i].addr.gid, (uint8_t)(1 + i));
	w.s[i].addr.qpn = BLUE_IBCM_GSI_QPN;
	w.s[i].cm = blue__ibcm_create(&cfg);
	cr_assert_not_null(w.s[i].cm);
}

static void setup(void)
{
	memset(&w, 0, sizeof(w));
	w.now = 1000000;
	w.a_auto_rtu = 1;
	make_side(0, 0);
	make_side(1, 0);
	cr_assert_eq(blue__ibcm_listen(w.s[1].cm, SID), 0);
}

static void teardown(void)
{
	blue__ibcm_destroy(w.s[0].cm);
	blue__ibcm_destroy(w.s[1].cm);
}

/* Deliver every queued MAD (zero latency), including those sent while delivering. */
static void pump(void)
{
	while (w.qh != w.qt) {
		struct mad_q *m = &w.q[w.qh++ % QMAX];
		struct side *to = &w.s[m->to];

		cr_assert_eq(blue__ibcm_rx(to->cm, m->mad, BLUE_IBCM_MAD_SIZE,
					   &w.s[!m->to].addr, w.now), BLUE_IBCM_OK);
	}
}

/*
 * Follow the deadlines @s's tick() returns from fake time @t0, delivering after each: each
 * must be exactly @step after the last; at most 32 (a timer that never gives up fails
 * here rather than hanging the suite). Return: how many there were.
 */
static unsigned int follow_deadlines(struct side *s, uint64_t t0, uint64_t step)
{
	uint64_t next = blue__ibcm_tick(s->cm, w.now);
	unsigned int i;

	for (i = 1; next; i++) {
		cr_assert_leq(i, 32, "still a deadline after 32 response timeouts");
		cr_assert_eq(next, t0 + i * step, "deadline %u", i);
		w.now = next;
		next = blue__ibcm_tick(s->cm, w.now);
		pump();
	}
	return i - 1;
}

/* Advance the fake clock to @t and run only A's timers, then deliver. */
static void advance_a(uint64_t t)
{
	w.now = t;
	blue__ibcm_tick(w.s[0].cm, w.now);
	pump();
}

/* Advance the fake clock to @t and run both endpoints' timers, then deliver. */
static void advance_to(uint64_t t)
{
	w.now = t;
	blue__ibcm_tick(w.s[0].cm, w.now);
	blue__ibcm_tick(w.s[1].cm, w.now);
	pump();
}

static struct blue_ibcm_conn *a_connect_qpn(uint64_t sid, uint32_t qpn)
{
	struct blue_ibcm_conn_param p = {
		.peer = w.s[1].addr, .service_id = sid,
		.local_qpn = qpn, .starting_psn = 0xa0a0a0,
		.responder_resources = 4, .initiator_depth = 2,
		.path_mtu = 3, .retry_count = 7, .rnr_retry_count = 7,
		.private_data = priv_req, .private_data_len = sizeof(priv_req),
	};
	struct blue_ibcm_conn *c = blue__ibcm_connect(w.s[0].cm, &p, w.now);

	cr_assert_not_null(c);
	cr_assert_eq(c->state, BLUE_IBCM_REQ_SENT);
	return c;
}

/* A connects its QP 0x00aa01 */
static struct blue_ibcm_conn *a_connect(uint64_t sid)
{
	return a_connect_qpn(sid, 0x00aa01);
}

static void expect_events(const struct side *s, const enum blue_ibcm_event *want, unsigned n)
{
	cr_assert_eq(s->nev, n, "%u events, want %u", s->nev, n);
	for (unsigned int i = 0; i < n; i++)
		cr_assert_eq(s->ev[i].type, want[i], "event %u is %s, want %s", i,
			     blue__ibcm_event_str(s->ev[i].type), blue__ibcm_event_str(want[i]));
}

/* Runs the full handshake; returns A's record (ESTABLISHED). */
static struct blue_ibcm_conn *handshake(void)
{
	struct blue_ibcm_conn *a = a_connect(SID);

	pump();
	cr_assert_eq(a->state, BLUE_IBCM_ESTABLISHED);
	return a;
}

TestSuite(ibcm, .init = setup, .fini = teardown);

Test(ibcm, handshake_values_and_events)
{
	struct blue_ibcm_conn *a = handshake();
	struct side *A = &w.s[0], *B = &w.s[1];
	const enum blue_ibcm_event wa[] = { BLUE_IBCM_EV_REP_RECEIVED };
	const enum blue_ibcm_event wb[] = { BLUE_IBCM_EV_REQ_RECEIVED, BLUE_IBCM_EV_ESTABLISHED };
	struct blue_ibcm_conn *b;
	const struct blue_ibcm_req *req;
	const struct blue_ibcm_rep *rep;

	expect_events(A, wa, 1);
	expect_events(B, wb, 2);
	cr_assert_eq(A->sent[BLUE_IBCM_ATTR_REQ], 1);
	cr_assert_eq(B->sent[BLUE_IBCM_ATTR_REP], 1);
	cr_assert_eq(A->sent[BLUE_IBCM_ATTR_RTU], 1);
	b = B->ev[1].conn;
	cr_assert_eq(b, B->ev[0].conn);
	cr_assert_eq(b->state, BLUE_IBCM_ESTABLISHED);
	cr_assert_eq(B->ev[0].snap.state, BLUE_IBCM_REQ_RCVD);
	cr_assert_eq(A->ev[0].snap.state, BLUE_IBCM_REP_RCVD);

	/* the REQ as B saw it: A's values and the RoCE path fields */
	cr_assert(B->ev[0].has_msg);
	req = &B->ev[0].msg.req;
	cr_assert_eq(req->service_id, SID);
	cr_assert_eq(req->local_qpn, 0x00aa01);
	cr_assert_eq(req->starting_psn, 0xa0a0a0);
	cr_assert_eq(req->local_comm_id, a->local_comm_id);
	cr_assert_eq(req->primary.local_lid, 0xffff);
	cr_assert_eq(req->primary.remote_lid, 0xffff);
	cr_assert_eq(req->primary.subnet_local, 0);
	cr_assert(!memcmp(req->primary.local_gid, A->addr.gid, 16));
	cr_assert(!memcmp(req->primary.remote_gid, B->addr.gid, 16));
	cr_assert_eq(req->remote_cm_response_timeout, 20);
	cr_assert_eq(req->max_cm_retries, 15);
	cr_assert_eq(req->pkey, 0xffff);
	cr_assert(!memcmp(req->private_data, priv_req, sizeof(priv_req)));
	cr_assert_eq(req->private_data[sizeof(priv_req)], 0);

	/* B's record: A's QPN/PSN, resources swapped (A: rr 4, id 2) */
	cr_assert_eq(b->remote_qpn, 0x00aa01);
	cr_assert_eq(b->remote_psn, 0xa0a0a0);
	cr_assert_eq(b->responder_resources, 2);
	cr_assert_eq(b->initiator_depth, 4);
	cr_assert_eq(b->path_mtu, 3);
	cr_assert_eq(b->remote_comm_id, a->local_comm_id);
	cr_assert_neq(b->local_comm_id, 0);

	/* the REP as A saw it, and A's record (B: rr 7, id 5) */
	cr_assert(A->ev[0].has_msg);
	rep = &A->ev[0].msg.rep;
	cr_assert_eq(rep->local_qpn, 0x00bb01);
	cr_assert_eq(rep->starting_psn, 0xb0b0b0);
	cr_assert(!memcmp(rep->private_data, priv_rep, sizeof(priv_rep)));
	cr_assert_eq(A->ev[0].msg.hdr.tid, B->ev[0].msg.hdr.tid, "REP carries the REQ's TID");
	cr_assert_eq(a->remote_qpn, 0x00bb01);
	cr_assert_eq(a->remote_psn, 0xb0b0b0);
	cr_assert_eq(a->responder_resources, 5);
	cr_assert_eq(a->initiator_depth, 7);
	cr_assert_eq(a->rnr_retry_count, 6);
	cr_assert_eq(a->remote_comm_id, b->local_comm_id);
	cr_assert_eq(B->ev[1].msg.hdr.attr_id, BLUE_IBCM_ATTR_RTU);
	cr_assert_eq(B->ev[1].msg.hdr.tid, B->ev[0].msg.hdr.tid, "RTU carries the REQ's TID");
	cr_assert_eq(blue__ibcm_tick(A->cm, w.now), 0, "no timer left on A");
	cr_assert_eq(blue__ibcm_tick(B->cm, w.now), 0, "no timer left on B");
}

/* A connection made from another GID than the endpoint's (an IPv6 one): the REQ's
 * primary path names it, since the passive side addresses its QP to that GID */
Test(ibcm, req_path_names_the_connections_own_gid)
{
	static const uint8_t v6[16] = { 0xfd, 0x00, 0xb1, 0x0e, [15] = 0x01 };
	struct blue_ibcm_conn_param p = {
		.peer = w.s[1].addr, .service_id = SID,
		.local_qpn = 0x00aa01, .starting_psn = 0xa0a0a0,
		.path_mtu = 3, .retry_count = 7, .rnr_retry_count = 7,
	};
	const struct blue_ibcm_req *req;

	memcpy(p.local_gid, v6, 16);
	cr_assert_not_null(blue__ibcm_connect(w.s[0].cm, &p, w.now));
	pump();
	cr_assert(w.s[1].nev >= 1 && w.s[1].ev[0].has_msg);
	req = &w.s[1].ev[0].msg.req;
	cr_assert(!memcmp(req->primary.local_gid, v6, 16), "the REQ's path names the IPv6 GID");
	cr_assert(memcmp(req->primary.local_gid, w.s[0].addr.gid, 16));
	cr_assert(!memcmp(req->primary.remote_gid, w.s[1].addr.gid, 16));
}

/* A's REQ as it goes out (kept back from B), and B's answer to it decoded */
static void a_req_mad(uint64_t sid, uint8_t mad[BLUE_IBCM_MAD_SIZE])
{
	a_connect(sid);
	cr_assert_eq(w.qt - w.qh, 1);
	memcpy(mad, w.q[w.qh % QMAX].mad, BLUE_IBCM_MAD_SIZE);
}

static struct blue_ibcm_msg b_answer_to(const uint8_t mad[BLUE_IBCM_MAD_SIZE])
{
	struct blue_ibcm_msg m;
	unsigned int qt = w.qt;

	cr_assert_eq(blue__ibcm_rx(w.s[1].cm, mad, BLUE_IBCM_MAD_SIZE, &w.s[0].addr, w.now),
		     BLUE_IBCM_OK);
	cr_assert_eq(w.qt, qt + 1, "B answered nothing");
	cr_assert_eq(blue__ibcm_decode(w.q[qt % QMAX].mad, BLUE_IBCM_MAD_SIZE, &m), BLUE_IBCM_OK);
	return m;
}

/* The REQ of a connection B holds in TIMEWAIT, repeated (a late retransmission): REJ 10,
 * stale connection, as the kernel's cm_dup_req_handler; no new record */
Test(ibcm, req_in_timewait_rej_10)
{
	uint8_t req[BLUE_IBCM_MAD_SIZE];
	struct blue_ibcm_conn *a;
	struct blue_ibcm_msg m;

	a_req_mad(SID, req);
	pump();
	a = w.s[0].ev[0].conn;
	cr_assert_eq(a->state, BLUE_IBCM_ESTABLISHED);
	cr_assert_eq(blue__ibcm_disconnect(w.s[0].cm, a, w.now), 0);
	pump();
	cr_assert_eq(w.s[1].ev[1].conn->state, BLUE_IBCM_TIMEWAIT);
	m = b_answer_to(req);
	cr_assert_eq(m.hdr.attr_id, BLUE_IBCM_ATTR_REJ);
	cr_assert_eq(m.rej.reason, BLUE_IBCM_REJ_STALE_CONN);
	cr_assert_eq(m.rej.remote_comm_id, a->local_comm_id);
	cr_assert_eq(blue__ibcm_stats(w.s[1].cm)->stale_conn, 1);
	cr_assert_eq(blue__ibcm_stats(w.s[1].cm)->dup_req, 0);
	cr_assert_eq(blue__ibcm_conn_count(w.s[1].cm), 1, "only the TIMEWAIT record");
}

/* A new REQ (another comm ID) from a QP that B's live connection already names: REJ 10
 * (the kernel's cm_insert_remote_qpn); the live connection stays ESTABLISHED */
Test(ibcm, req_from_a_connected_qpn_rej_10)
{
	struct blue_ibcm_conn *a = handshake(), *b = w.s[1].ev[0].conn;
	uint8_t req[BLUE_IBCM_MAD_SIZE];
	struct blue_ibcm_msg m;

	a_req_mad(SID, req);	/* a second connection of the same QPN 0x00aa01 */
	w.qh = w.qt;		/* kept back from B: delivered below */
	m = b_answer_to(req);
	cr_assert_eq(m.hdr.attr_id, BLUE_IBCM_ATTR_REJ);
	cr_assert_eq(m.rej.reason, BLUE_IBCM_REJ_STALE_CONN);
	cr_assert_neq(m.rej.remote_comm_id, a->local_comm_id, "the new REQ's comm ID");
	cr_assert_eq(blue__ibcm_stats(w.s[1].cm)->stale_conn, 1);
	cr_assert_eq(b->state, BLUE_IBCM_ESTABLISHED);
	cr_assert_eq(w.s[1].nev, 2, "no REQ_RECEIVED for it");
}

/* The starting PSN of a REQ or REP is its sender's receive PSN (the kernel IB CM's
 * reading: ib_send_cm_req/rep set rq_psn from their own message, cm_req_handler and
 * cm_rep_handler sq_psn from the peer's). rxe NAKed (PSN sequence error) the first SEND
 * of a QP that started its send queue at its own announced PSN. */
Test(ibcm, qp_psns_as_the_kernel_reads_them)
{
	struct blue_ibcm_conn *a = handshake();
	struct blue_ibcm_conn *b = w.s[1].ev[0].conn;

	/* A announced 0xa0a0a0 in its REQ, B 0xb0b0b0 in its REP */
	cr_assert_eq(blue__ibcm_rq_psn(a), 0xa0a0a0, "A's RQ starts at its REQ's PSN");
	cr_assert_eq(blue__ibcm_sq_psn(a), 0xb0b0b0, "A's SQ starts at the REP's PSN");
	cr_assert_eq(blue__ibcm_rq_psn(b), 0xb0b0b0, "B's RQ starts at its REP's PSN");
	cr_assert_eq(blue__ibcm_sq_psn(b), 0xa0a0a0, "B's SQ starts at the REQ's PSN");
	/* so each side sends what the other expects */
	cr_assert_eq(blue__ibcm_sq_psn(a), blue__ibcm_rq_psn(b));
	cr_assert_eq(blue__ibcm_sq_psn(b), blue__ibcm_rq_psn(a));
}

Test(ibcm, consumer_reject_private_data)
{
	struct side *A = &w.s[0], *B = &w.s[1];
	const enum blue_ibcm_event wa[] = { BLUE_IBCM_EV_REJECTED };

	w.b_policy = B_REJECT;
	a_connect(SID);
	pump();
	expect_events(A, wa, 1);
	cr_assert_eq(A->ev[0].msg.rej.reason, BLUE_IBCM_REJ_CONSUMER_DEFINED);
	cr_assert_eq(A->ev[0].msg.rej.msg_rejected, BLUE_IBCM_MSG_REQ);
	cr_assert(!memcmp(A->ev[0].msg.rej.private_data, priv_rej, sizeof(priv_rej)));
	cr_assert_eq(A->ev[0].msg.rej.private_data[sizeof(priv_rej)], 0);
	cr_assert_eq(blue__ibcm_conn_count(A->cm), 0);
	cr_assert_eq(blue__ibcm_conn_count(B->cm), 0);
	cr_assert_eq(B->sent[BLUE_IBCM_ATTR_REJ], 1);
	advance_to(w.now + 20 * T20);
	cr_assert_eq(A->sent[BLUE_IBCM_ATTR_REQ], 1, "no REQ retransmitted after REJ");
}

Test(ibcm, no_listener_rej_8)
{
	struct side *A = &w.s[0], *B = &w.s[1];
	const enum blue_ibcm_event wa[] = { BLUE_IBCM_EV_REJECTED };
	struct blue_ibcm_conn *a = a_connect(SID + 1);
	uint32_t id = a->local_comm_id;

	pump();
	expect_events(A, wa, 1);
	cr_assert_eq(B->nev, 0);
	cr_assert_eq(A->ev[0].msg.rej.reason, BLUE_IBCM_REJ_INVALID_SERVICE_ID);
	cr_assert_eq(A->ev[0].msg.rej.remote_comm_id, id);
	cr_assert_eq(A->ev[0].snap.local_comm_id, id);
	cr_assert_eq(blue__ibcm_stats(B->cm)->no_listener, 1);
	cr_assert_eq(blue__ibcm_conn_count(A->cm), 0);
	cr_assert_eq(blue__ibcm_conn_count(B->cm), 0);
}

Test(ibcm, lost_req_retransmitted)
{
	struct side *A = &w.s[0], *B = &w.s[1];
	struct blue_ibcm_conn *a;
	uint64_t t0 = w.now;

	w.drop_from = 0;
	w.drop_attr = BLUE_IBCM_ATTR_REQ;
	w.drop_n = 2;
	a = a_connect(SID);
	pump();
	cr_assert_eq(B->nev, 0);
	advance_to(t0 + T20 - 1);
	cr_assert_eq(A->sent[BLUE_IBCM_ATTR_REQ], 1, "not before the response timeout");
	advance_to(t0 + T20);
	cr_assert_eq(A->sent[BLUE_IBCM_ATTR_REQ], 2);
	cr_assert_eq(B->nev, 0);
	advance_to(t0 + 2 * T20);
	cr_assert_eq(A->sent[BLUE_IBCM_ATTR_REQ], 3);
	cr_assert_eq(w.dropped, 2);
	cr_assert_eq(a->state, BLUE_IBCM_ESTABLISHED);
	cr_assert_eq(B->nev, 2);
	cr_assert_eq(B->ev[1].type, BLUE_IBCM_EV_ESTABLISHED);
	cr_assert_eq(blue__ibcm_stats(A->cm)->retransmits, 2);
}

Test(ibcm, all_reqs_lost_timeout)
{
	struct side *A = &w.s[0], *B = &w.s[1];
	uint64_t t0 = w.now, fired = 0;

	w.drop_from = 0;
	w.drop_attr = BLUE_IBCM_ATTR_REQ;
	w.drop_n = 1000;
	a_connect(SID);
	/* step the clock in 1 ms ticks until the TIMEOUT arrives or 100 s pass */
	while (w.now < t0 + 100000000000ull && !A->nev) {
		advance_to(w.now + 1000000);
		if (A->nev)
			fired = w.now;
	}
	cr_assert_eq(A->nev, 1);
	cr_assert_eq(A->ev[0].type, BLUE_IBCM_EV_TIMEOUT);
	cr_assert_eq(A->sent[BLUE_IBCM_ATTR_REQ], 1 + 15, "the REQ and 15 retries");
	/* 16 waits of 4.096 us * 2^20, each re-armed at the 1 ms tick that ran it */
	uint64_t due = t0 + 16 * T20;
	cr_assert_geq(fired, due);
	cr_assert_lt(fired, due + 16 * 1000000);
	cr_assert_eq(blue__ibcm_conn_count(A->cm), 0);
	cr_assert_eq(blue__ibcm_stats(A->cm)->timeouts, 1);
	cr_assert_eq(B->nev, 0);
}

Test(ibcm, all_reqs_lost_exact_time)
{
	struct side *A = &w.s[0];
	uint64_t t0 = w.now;

	w.drop_from = 0;
	w.drop_attr = BLUE_IBCM_ATTR_REQ;
	w.drop_n = 1000;
	a_connect(SID);
	/* follow the deadlines tick() returns: each exactly one response timeout apart */
	follow_deadlines(A, t0, T20);
	cr_assert_eq(A->nev, 1);
	cr_assert_eq(A->ev[0].type, BLUE_IBCM_EV_TIMEOUT);
	cr_assert_eq(w.now, t0 + 16 * T20);
	cr_assert_eq(A->sent[BLUE_IBCM_ATTR_REQ], 16);
}

Test(ibcm, duplicate_req_resends_rep)
{
	struct side *A = &w.s[0], *B = &w.s[1];
	uint64_t t0 = w.now;
	struct blue_ibcm_conn *a;

	/* B's REP is lost once: A re-sends the REQ, B (in REP_SENT) answers with the REP */
	w.drop_from = 1;
	w.drop_attr = BLUE_IBCM_ATTR_REP;
	w.drop_n = 1;
	a = a_connect(SID);
	pump();
	cr_assert_eq(B->nev, 1);
	cr_assert_eq(B->ev[0].conn->state, BLUE_IBCM_REP_SENT);
	advance_a(t0 + T20);	/* B's own REP timer is due too: keep it out */
	cr_assert_eq(A->sent[BLUE_IBCM_ATTR_REQ], 2);
	cr_assert_eq(B->sent[BLUE_IBCM_ATTR_REP], 2, "REP re-sent for the duplicate REQ");
	cr_assert_eq(blue__ibcm_stats(B->cm)->dup_req, 1);
	cr_assert_eq(B->nev, 2, "no second REQ_RECEIVED");
	cr_assert_eq(B->ev[1].type, BLUE_IBCM_EV_ESTABLISHED);
	cr_assert_eq(a->state, BLUE_IBCM_ESTABLISHED);
	cr_assert_eq(blue__ibcm_conn_count(B->cm), 1);
}

Test(ibcm, mra_extends_wait)
{
	struct side *A = &w.s[0], *B = &w.s[1];
	struct blue_ibcm_rep_param rp = { .local_qpn = 0x00bb02, .starting_psn = 0x123456 };
	struct blue_ibcm_conn *a;
	uint64_t t0 = w.now;

	w.b_policy = B_MRA_THEN_HOLD;
	a = a_connect(SID);
	pump();
	cr_assert_eq(a->state, BLUE_IBCM_MRA_REQ_RCVD);
	cr_assert_eq(B->held->state, BLUE_IBCM_MRA_REQ_SENT);
	/* MRA service timeout 24: 16x A's own 20; 10 response timeouts pass quietly */
	advance_to(t0 + 10 * T20);
	cr_assert_eq(A->sent[BLUE_IBCM_ATTR_REQ], 1, "no retransmission during the MRA");
	cr_assert_eq(A->nev, 0);
	cr_assert_eq(blue__ibcm_accept(B->cm, B->held, &rp, w.now), 0);
	pump();
	cr_assert_eq(a->state, BLUE_IBCM_ESTABLISHED);
	cr_assert_eq(a->remote_qpn, 0x00bb02);
	cr_assert_eq(B->held->state, BLUE_IBCM_ESTABLISHED);
	cr_assert_eq(A->sent[BLUE_IBCM_ATTR_REQ], 1);
	cr_assert_eq(B->sent[BLUE_IBCM_ATTR_MRA], 1);
}

Test(ibcm, delayed_mra_goes_out_on_the_duplicate_req)
{
	struct side *A = &w.s[0], *B = &w.s[1];
	struct blue_ibcm_rep_param rp = { .local_qpn = 0x00bb03, .starting_psn = 0x654321 };
	struct blue_ibcm_conn *a;
	uint64_t t0 = w.now;

	w.b_policy = B_MRA_DELAYED;
	a = a_connect(SID);
	pump();
	cr_assert_eq(B->held->state, BLUE_IBCM_MRA_REQ_SENT);
	cr_assert_eq(B->sent[BLUE_IBCM_ATTR_MRA], 0, "a delayed MRA waits for a duplicate");
	cr_assert_eq(a->state, BLUE_IBCM_REQ_SENT);
	/* A's response timeout: its REQ again, and now B's MRA answers the duplicate */
	advance_to(t0 + T20);
	cr_assert_eq(A->sent[BLUE_IBCM_ATTR_REQ], 2);
	cr_assert_eq(B->sent[BLUE_IBCM_ATTR_MRA], 1);
	cr_assert_eq(a->state, BLUE_IBCM_MRA_REQ_RCVD);
	/* the MRA's 24 holds A quiet; the consumer accepts in MRA_REQ_SENT */
	advance_to(t0 + 10 * T20);
	cr_assert_eq(A->sent[BLUE_IBCM_ATTR_REQ], 2, "no retransmission during the MRA");
	cr_assert_eq(blue__ibcm_accept(B->cm, B->held, &rp, w.now), 0);
	pump();
	cr_assert_eq(a->state, BLUE_IBCM_ESTABLISHED);
	cr_assert_eq(B->held->state, BLUE_IBCM_ESTABLISHED);
	cr_assert_eq(B->sent[BLUE_IBCM_ATTR_MRA], 1);
	cr_assert_eq(B->sent[BLUE_IBCM_ATTR_REP], 1);
}

Test(ibcm, mra_then_silence_retransmits_after_service_timeout)
{
	struct side *A = &w.s[0], *B = &w.s[1];
	uint64_t t0 = w.now;

	w.b_policy = B_MRA_THEN_HOLD;
	a_connect(SID);
	pump();
	advance_to(t0 + blue__ibcm_wait_ns(24) - 1);
	cr_assert_eq(A->sent[BLUE_IBCM_ATTR_REQ], 1);
	advance_to(t0 + blue__ibcm_wait_ns(24));
	cr_assert_eq(A->sent[BLUE_IBCM_ATTR_REQ], 2, "REQ again once the MRA's wait ends");
	cr_assert_eq(B->sent[BLUE_IBCM_ATTR_MRA], 2, "B repeats its MRA for the duplicate");
	cr_assert_eq(B->nev, 1);
}

static void disconnect_flow(int lose_drep)
{
	struct side *A = &w.s[0], *B = &w.s[1];
	struct blue_ibcm_conn *a = handshake(), *b = B->ev[0].conn;
	uint64_t t0 = w.now, a_tw;

	if (lose_drep) {
		w.drop_from = 1;
		w.drop_attr = BLUE_IBCM_ATTR_DREP;
		w.drop_n = 1;
	}
	cr_assert_eq(blue__ibcm_disconnect(A->cm, a, w.now), 0);
	cr_assert_eq(a->state, BLUE_IBCM_DREQ_SENT);
	pump();
	cr_assert_eq(B->nev, 3);
	cr_assert_eq(B->ev[2].type, BLUE_IBCM_EV_DISCONNECTED);
	cr_assert_eq(B->ev[2].msg.dreq.remote_qpn_eecn, 0x00bb01);
	cr_assert_neq(B->ev[2].msg.hdr.tid, B->ev[0].msg.hdr.tid, "a DREQ has a new TID");
	cr_assert_eq(b->state, BLUE_IBCM_TIMEWAIT);
	if (lose_drep) {
		cr_assert_eq(a->state, BLUE_IBCM_DREQ_SENT);
		cr_assert_eq(A->nev, 1);
		advance_to(t0 + T20 - 1);
		cr_assert_eq(A->sent[BLUE_IBCM_ATTR_DREQ], 1);
		advance_to(t0 + T20);
		cr_assert_eq(A->sent[BLUE_IBCM_ATTR_DREQ], 2, "DREQ retransmitted");
		cr_assert_eq(B->sent[BLUE_IBCM_ATTR_DREP], 2, "DREP repeated from TIMEWAIT");
		cr_assert_eq(B->nev, 3, "no second DISCONNECTED on B");
	}
	cr_assert_eq(A->nev, 2);
	cr_assert_eq(A->ev[1].type, BLUE_IBCM_EV_DISCONNECTED);
	cr_assert_eq(A->ev[1].msg.hdr.attr_id, BLUE_IBCM_ATTR_DREP);
	cr_assert_eq(a->state, BLUE_IBCM_TIMEWAIT);
	a_tw = w.now;

	/* B entered TIMEWAIT at t0, A at a_tw (t0, or t0 + T20 if the DREP was lost) */
	advance_to(t0 + TW - 1);
	cr_assert_eq(B->nev, 3);
	advance_to(t0 + TW);
	cr_assert_eq(B->nev, 4);
	cr_assert_eq(B->ev[3].type, BLUE_IBCM_EV_TIMEWAIT_EXIT);
	cr_assert_eq(blue__ibcm_conn_count(B->cm), 0);
	if (lose_drep) {
		cr_assert_eq(A->nev, 2);
		advance_to(a_tw + TW - 1);
		cr_assert_eq(A->nev, 2);
		advance_to(a_tw + TW);
	}
	cr_assert_eq(A->nev, 3);
	cr_assert_eq(A->ev[2].type, BLUE_IBCM_EV_TIMEWAIT_EXIT);
	cr_assert_eq(blue__ibcm_conn_count(A->cm), 0);
	cr_assert_eq(blue__ibcm_tick(A->cm, w.now + TW), 0);
}

Test(ibcm, disconnect_dreq_drep_timewait)
{
	disconnect_flow(0);
	cr_assert_eq(w.s[0].sent[BLUE_IBCM_ATTR_DREQ], 1);
	cr_assert_eq(w.s[1].sent[BLUE_IBCM_ATTR_DREP], 1);
}

Test(ibcm, disconnect_lost_drep)
{
	disconnect_flow(1);
	cr_assert_eq(w.dropped, 1);
}

Test(ibcm, malformed_dropped_and_counted)
{
	struct side *B = &w.s[1];
	const struct blue_ibcm_stats *st = blue__ibcm_stats(B->cm);
	struct blue_ibcm_msg m;
	uint8_t mad[BLUE_IBCM_MAD_SIZE];

	blue__ibcm_init(&m, BLUE_IBCM_ATTR_REP, 77);
	m.rep.local_comm_id = 0x1111;
	m.rep.remote_comm_id = 0x2222;		/* no such record on B */
	cr_assert_eq(blue__ibcm_encode(&m, mad, NULL), 0);

	cr_assert_eq(blue__ibcm_rx(B->cm, mad, 100, &w.s[0].addr, w.now), BLUE_IBCM_ERR_SHORT);
	mad[1] = 0x04;				/* class: not the CM's */
	cr_assert_eq(blue__ibcm_rx(B->cm, mad, sizeof(mad), &w.s[0].addr, w.now),
		     BLUE_IBCM_ERR_MGMT_CLASS);
	cr_assert_eq(blue__ibcm_rx(B->cm, mad, sizeof(mad), &w.s[0].addr, w.now),
		     BLUE_IBCM_ERR_MGMT_CLASS);
	mad[1] = BLUE_IBCM_MGMT_CLASS;
	cr_assert_eq(blue__ibcm_rx(B->cm, mad, sizeof(mad), &w.s[0].addr, w.now), BLUE_IBCM_OK);

	cr_assert_eq(st->rx, 4);
	cr_assert_eq(st->decode[BLUE_IBCM_ERR_SHORT], 1);
	cr_assert_eq(st->decode[BLUE_IBCM_ERR_MGMT_CLASS], 2);
	cr_assert_eq(st->no_conn, 1, "REP for an unknown comm ID");
	cr_assert_eq(st->wrong_state, 0);
	cr_assert_eq(st->tx, 0, "nothing answered");
	cr_assert_eq(B->nev, 0);
	cr_assert_eq(blue__ibcm_conn_count(B->cm), 0);
}

Test(ibcm, rtu_in_wrong_state_counted)
{
	struct side *A = &w.s[0], *B = &w.s[1];
	const struct blue_ibcm_stats *st = blue__ibcm_stats(B->cm);

	handshake();
	/* replay A's RTU (A->last) into B, which is already ESTABLISHED */
	struct blue_ibcm_conn *a = A->ev[0].conn;

	cr_assert_eq(blue__ibcm_rx(B->cm, a->last, sizeof(a->last), &A->addr, w.now),
		     BLUE_IBCM_OK);
	cr_assert_eq(st->wrong_state, 1);
	cr_assert_eq(B->nev, 2);
}

Test(ibcm, established_before_rtu)
{
	struct side *B = &w.s[1];
	struct blue_ibcm_conn *b;

	w.a_auto_rtu = 0;
	a_connect(SID);
	pump();
	b = B->ev[0].conn;
	cr_assert_eq(b->state, BLUE_IBCM_REP_SENT);
	cr_assert_eq(blue__ibcm_established(B->cm, b), 0);
	cr_assert_eq(b->state, BLUE_IBCM_ESTABLISHED);
	cr_assert_eq(B->nev, 2);
	cr_assert_eq(B->ev[1].type, BLUE_IBCM_EV_ESTABLISHED);
	cr_assert_not(B->ev[1].has_msg);
	cr_assert_eq(blue__ibcm_established(B->cm, b), -EINVAL);
}

Test(ibcm, rep_unanswered_times_out_on_the_reqs_timeout)
{
	struct side *A = &w.s[0], *B = &w.s[1];
	struct blue_ibcm_conn *b;
	uint64_t t0, t18 = blue__ibcm_wait_ns(18);

	/* A asks for replies within 4.096 us * 2^18: B's REP timer must use that */
	blue__ibcm_destroy(A->cm);
	make_side(0, 18);
	w.a_auto_rtu = 0;
	a_connect(SID);
	pump();
	b = B->ev[0].conn;
	cr_assert_eq(B->ev[0].msg.req.local_cm_response_timeout, 18);
	cr_assert_eq(b->state, BLUE_IBCM_REP_SENT);
	t0 = w.now;
	/* A, in REP_RCVD without RTU, drops the repeats */
	follow_deadlines(B, t0, t18);
	cr_assert_eq(B->sent[BLUE_IBCM_ATTR_REP], 16);
	cr_assert_eq(B->nev, 2);
	cr_assert_eq(B->ev[1].type, BLUE_IBCM_EV_TIMEOUT);
	cr_assert_eq(w.now, t0 + 16 * t18);
	cr_assert_eq(blue__ibcm_conn_count(B->cm), 0);
	cr_assert_eq(blue__ibcm_stats(A->cm)->wrong_state, 15);
	cr_assert_eq(A->nev, 1, "A saw one REP_RECEIVED only");
}

Test(ibcm, lost_rtu_rep_repeated_rtu_repeated)
{
	struct side *A = &w.s[0], *B = &w.s[1];
	struct blue_ibcm_conn *a;
	uint64_t t0 = w.now;

	w.drop_from = 0;
	w.drop_attr = BLUE_IBCM_ATTR_RTU;
	w.drop_n = 1;
	a = a_connect(SID);
	pump();
	cr_assert_eq(a->state, BLUE_IBCM_ESTABLISHED);
	cr_assert_eq(B->ev[0].conn->state, BLUE_IBCM_REP_SENT);
	advance_to(t0 + T20);
	cr_assert_eq(B->sent[BLUE_IBCM_ATTR_REP], 2, "REP retransmitted");
	cr_assert_eq(A->sent[BLUE_IBCM_ATTR_RTU], 2, "RTU repeated for the duplicate REP");
	cr_assert_eq(B->nev, 2);
	cr_assert_eq(B->ev[1].type, BLUE_IBCM_EV_ESTABLISHED);
	cr_assert_eq(A->nev, 1, "no second REP_RECEIVED");
}

Test(ibcm, active_rejects_rep)
{
	struct side *A = &w.s[0], *B = &w.s[1];
	struct blue_ibcm_conn *a;

	w.a_auto_rtu = 0;
	a = a_connect(SID);
	pump();
	cr_assert_eq(a->state, BLUE_IBCM_REP_RCVD);
	cr_assert_eq(blue__ibcm_reject(A->cm, a, BLUE_IBCM_REJ_INVALID_MTU, NULL, 0), 0);
	pump();
	cr_assert_eq(B->nev, 2);
	cr_assert_eq(B->ev[1].type, BLUE_IBCM_EV_REJECTED);
	cr_assert_eq(B->ev[1].msg.rej.reason, BLUE_IBCM_REJ_INVALID_MTU);
	cr_assert_eq(B->ev[1].msg.rej.msg_rejected, BLUE_IBCM_MSG_REP);
	cr_assert_eq(blue__ibcm_conn_count(A->cm), 0);
	cr_assert_eq(blue__ibcm_conn_count(B->cm), 0);
	cr_assert_eq(blue__ibcm_stats(B->cm)->no_conn, 0);
}

static struct blue_ibcm_conn *a_sidr(uint64_t sid)
{
	struct blue_ibcm_conn *c = blue__ibcm_sidr_request(w.s[0].cm, &w.s[1].addr, sid,
							   priv_req, sizeof(priv_req), w.now);

	cr_assert_not_null(c);
	cr_assert_eq(c->state, BLUE_IBCM_SIDR_REQ_SENT);
	return c;
}

Test(ibcm, sidr_request_reply)
{
	struct side *A = &w.s[0], *B = &w.s[1];
	const struct blue_ibcm_sidr_rep *rep;
	uint32_t id;

	cr_assert_eq(blue__ibcm_listen(B->cm, SID_UDP), 0);
	id = a_sidr(SID_UDP)->local_comm_id;
	pump();
	cr_assert_eq(B->nev, 1);
	cr_assert_eq(B->ev[0].type, BLUE_IBCM_EV_SIDR_REQ_RECEIVED);
	cr_assert_eq(B->ev[0].msg.sidr_req.service_id, SID_UDP);
	cr_assert_eq(B->ev[0].msg.sidr_req.request_id, id);
	cr_assert(!memcmp(B->ev[0].msg.sidr_req.private_data, priv_req, sizeof(priv_req)));
	cr_assert_eq(A->nev, 1);
	cr_assert_eq(A->ev[0].type, BLUE_IBCM_EV_SIDR_REP_RECEIVED);
	rep = &A->ev[0].msg.sidr_rep;
	cr_assert_eq(rep->status, BLUE_IBCM_SIDR_OK);
	cr_assert_eq(rep->request_id, id);
	cr_assert_eq(rep->qpn, 0x00bb77);
	cr_assert_eq(rep->qkey, 0x11223344);
	cr_assert_eq(rep->service_id, SID_UDP);
	cr_assert(!memcmp(rep->private_data, priv_rep, sizeof(priv_rep)));
	cr_assert_eq(A->ev[0].msg.hdr.tid, B->ev[0].msg.hdr.tid);
	cr_assert_eq(blue__ibcm_conn_count(A->cm), 0);
	cr_assert_eq(blue__ibcm_conn_count(B->cm), 0);
	cr_assert_eq(blue__ibcm_tick(A->cm, w.now + 100 * T20), 0);
}

Test(ibcm, sidr_no_listener_status_1)
{
	struct side *A = &w.s[0], *B = &w.s[1];

	a_sidr(SID_UDP);
	pump();
	cr_assert_eq(B->nev, 0);
	cr_assert_eq(A->nev, 1);
	cr_assert_eq(A->ev[0].type, BLUE_IBCM_EV_SIDR_REP_RECEIVED);
	cr_assert_eq(A->ev[0].msg.sidr_rep.status, BLUE_IBCM_SIDR_UNSUPPORTED);
	cr_assert_eq(blue__ibcm_stats(B->cm)->no_listener, 1);
	cr_assert_eq(blue__ibcm_conn_count(A->cm), 0);
}

Test(ibcm, sidr_lost_and_duplicate)
{
	struct side *A = &w.s[0], *B = &w.s[1];
	uint64_t t0 = w.now;

	cr_assert_eq(blue__ibcm_listen(B->cm, SID_UDP), 0);
	w.b_sidr_hold = 1;
	w.drop_from = 0;
	w.drop_attr = BLUE_IBCM_ATTR_SIDR_REQ;
	w.drop_n = 1;
	a_sidr(SID_UDP);
	pump();
	cr_assert_eq(B->nev, 0);
	advance_to(t0 + T20);
	cr_assert_eq(A->sent[BLUE_IBCM_ATTR_SIDR_REQ], 2, "SIDR_REQ retransmitted");
	cr_assert_eq(B->nev, 1);
	advance_to(t0 + 2 * T20);
	cr_assert_eq(A->sent[BLUE_IBCM_ATTR_SIDR_REQ], 3);
	cr_assert_eq(B->nev, 1, "the duplicate raises no event");
	cr_assert_eq(blue__ibcm_stats(B->cm)->dup_req, 1);
	cr_assert_eq(blue__ibcm_conn_count(B->cm), 1);
	cr_assert_eq(blue__ibcm_sidr_reply(B->cm, B->held, BLUE_IBCM_SIDR_REJECT, 0, 0, NULL,
					   0), 0);
	pump();
	cr_assert_eq(A->nev, 1);
	cr_assert_eq(A->ev[0].msg.sidr_rep.status, BLUE_IBCM_SIDR_REJECT);
	cr_assert_eq(blue__ibcm_conn_count(A->cm), 0);
}

Test(ibcm, sidr_all_lost_timeout)
{
	struct side *A = &w.s[0];
	uint64_t t0 = w.now;

	w.drop_from = 0;
	w.drop_attr = BLUE_IBCM_ATTR_SIDR_REQ;
	w.drop_n = 1000;
	a_sidr(SID_UDP);
	follow_deadlines(A, t0, T20);
	cr_assert_eq(A->nev, 1);
	cr_assert_eq(A->ev[0].type, BLUE_IBCM_EV_TIMEOUT);
	cr_assert_eq(A->ev[0].snap.state, BLUE_IBCM_SIDR_REQ_SENT);
	cr_assert_eq(A->sent[BLUE_IBCM_ATTR_SIDR_REQ], 16);
	cr_assert_eq(w.now, t0 + 16 * T20);
	cr_assert_eq(blue__ibcm_conn_count(A->cm), 0);
}

Test(ibcm, comm_ids_unique_table_full)
{
	struct blue_ibcm_conn *c[64];

	/* nobody delivers: 64 records in REQ_SENT, the default table size */
	for (int i = 0; i < 64; i++) {
		c[i] = a_connect(SID);
		cr_assert_neq(c[i]->local_comm_id, 0);
		for (int j = 0; j < i; j++)
			cr_assert_neq(c[i]->local_comm_id, c[j]->local_comm_id, "%d vs %d", i, j);
	}
	struct blue_ibcm_conn_param p = { .peer = w.s[1].addr, .service_id = SID };

	errno = 0;
	cr_assert_null(blue__ibcm_connect(w.s[0].cm, &p, w.now));
	cr_assert_eq(errno, ENOSPC);
	cr_assert_eq(blue__ibcm_conn_count(w.s[0].cm), 64);
	p.local_qpn = 1u << 24;		/* wider than the REQ's 24 bits */
	p.private_data = priv_req;
	p.private_data_len = BLUE_IBCM_REQ_PRIV + 1;
	blue__ibcm_destroy(w.s[0].cm);
	make_side(0, 0);
	errno = 0;
	cr_assert_null(blue__ibcm_connect(w.s[0].cm, &p, w.now));
	cr_assert_eq(errno, EMSGSIZE, "private data over 92 bytes");
	p.private_data_len = 0;
	cr_assert_null(blue__ibcm_connect(w.s[0].cm, &p, w.now));
	cr_assert_eq(errno, EINVAL, "QPN over 24 bits");
	cr_assert_eq(blue__ibcm_conn_count(w.s[0].cm), 0);
	cr_assert_eq(w.s[0].sent[BLUE_IBCM_ATTR_REQ], 64);
}

Test(ibcm, state_names)
{
	cr_assert_str_eq(blue__ibcm_state_str(BLUE_IBCM_MRA_REQ_RCVD), "MRA_REQ_RCVD");
	cr_assert_str_eq(blue__ibcm_state_str(BLUE_IBCM_TIMEWAIT), "TIMEWAIT");
	cr_assert_str_eq(blue__ibcm_state_str(BLUE_IBCM_STATE_MAX), "unknown");
	for (int s = 0; s < BLUE_IBCM_STATE_MAX; s++)
		cr_assert_str_neq(blue__ibcm_state_str(s), "unknown");
	for (int e = 0; e < BLUE_IBCM_EV_MAX; e++)
		cr_assert_str_neq(blue__ibcm_event_str(e), "unknown");
}

/* w-scale: unlisten. A connection made before it lives on; a REQ and a SIDR_REQ after it
 * are answered as for a service never listened (REJ 8, SIDR status 1); listening again
 * accepts again. */
Test(ibcm, unlisten_rej_8_then_listen_again)
{
	struct side *A = &w.s[0], *B = &w.s[1];
	struct blue_ibcm_conn *a = handshake();
	struct blue_ibcm_conn *r, *s;
	uint32_t rid;

	cr_assert_eq(blue__ibcm_unlisten(B->cm, SID), 0);
	cr_assert_eq(blue__ibcm_unlisten(B->cm, SID), -ENOENT);
	cr_assert_eq(blue__ibcm_unlisten(B->cm, SID_UDP), -ENOENT);
	cr_assert_eq(a->state, BLUE_IBCM_ESTABLISHED);
	cr_assert_eq(blue__ibcm_conn_count(B->cm), 1, "the live connection's record stays");

	A->nev = B->nev = 0;
	r = a_connect_qpn(SID, 0x00aa02);	/* another QP: 0x00aa01 is still connected */
	rid = r->local_comm_id;
	pump();
	cr_assert_eq(A->nev, 1);
	cr_assert_eq(A->ev[0].type, BLUE_IBCM_EV_REJECTED);
	cr_assert_eq(A->ev[0].msg.rej.reason, BLUE_IBCM_REJ_INVALID_SERVICE_ID);
	cr_assert_eq(A->ev[0].snap.local_comm_id, rid);
	cr_assert_eq(B->nev, 0);
	cr_assert_eq(blue__ibcm_stats(B->cm)->no_listener, 1);

	/* the old connection still disconnects cleanly */
	A->nev = B->nev = 0;
	cr_assert_eq(blue__ibcm_disconnect(A->cm, a, w.now), 0);
	pump();
	cr_assert_eq(A->nev, 1);
	cr_assert_eq(A->ev[0].type, BLUE_IBCM_EV_DISCONNECTED);
	cr_assert_eq(B->nev, 1);
	cr_assert_eq(B->ev[0].type, BLUE_IBCM_EV_DISCONNECTED);

	/* listened again: a new REQ is accepted */
	cr_assert_eq(blue__ibcm_listen(B->cm, SID), 0);
	A->nev = B->nev = 0;
	s = a_connect(SID);
	pump();
	cr_assert_eq(s->state, BLUE_IBCM_ESTABLISHED);
	cr_assert_eq(B->nev, 2);
	cr_assert_eq(B->ev[0].type, BLUE_IBCM_EV_REQ_RECEIVED);
	cr_assert_eq(B->ev[1].type, BLUE_IBCM_EV_ESTABLISHED);
}

/* w-scale: the listen table's slots come back after unlisten (16 listens, unlisten one,
 * a 17th fits) */
Test(ibcm, unlisten_frees_a_slot)
{
	struct blue_ibcm *cm = w.s[1].cm;
	uint64_t base = blue__ibcm_ip_service_id(BLUE_IBCM_PS_TCP, 20000);
	int i, err = 0;

	/* SID is listened already (setup): fill the rest */
	for (i = 0; !err; i++)
		err = blue__ibcm_listen(cm, base + (uint64_t)i);
	cr_assert_eq(err, -ENOSPC);
	cr_assert_eq(blue__ibcm_unlisten(cm, base + 3), 0);
	cr_assert_eq(blue__ibcm_listen(cm, base + 1000), 0);
	cr_assert_eq(blue__ibcm_listen(cm, base + 1001), -ENOSPC);
	cr_assert_eq(blue__ibcm_listen(cm, base + 4), -EADDRINUSE, "the moved entry is kept");
}

/* w-scale: a REQ dropped (rdma_cm's backlog full) is not answered; A's retransmission
 * after its response timeout is a new REQ to B, accepted this time */
Test(ibcm, drop_req_then_retransmission_accepted)
{
	struct side *A = &w.s[0], *B = &w.s[1];
	struct blue_ibcm_conn *a;
	uint64_t t0 = w.now;

	w.b_policy = B_HOLD;
	a = a_connect(SID);
	pump();
	cr_assert_eq(B->nev, 1);
	cr_assert_eq(B->ev[0].type, BLUE_IBCM_EV_REQ_RECEIVED);
	cr_assert_not_null(B->held);
	unsigned int before = B->sent[BLUE_IBCM_ATTR_REJ] + B->sent[BLUE_IBCM_ATTR_MRA] +
			      B->sent[BLUE_IBCM_ATTR_REP];

	cr_assert_eq(blue__ibcm_drop_req(B->cm, B->held), 0);
	cr_assert_eq(blue__ibcm_drop_req(B->cm, B->held), -EINVAL, "already IDLE");
	B->held = NULL;
	pump();
	cr_assert_eq(B->sent[BLUE_IBCM_ATTR_REJ] + B->sent[BLUE_IBCM_ATTR_MRA] +
		     B->sent[BLUE_IBCM_ATTR_REP], before, "nothing sent for a dropped REQ");
	cr_assert_eq(blue__ibcm_conn_count(B->cm), 0);
	cr_assert_eq(blue__ibcm_stats(B->cm)->req_dropped, 1);
	cr_assert_eq(A->nev, 0);
	cr_assert_eq(a->state, BLUE_IBCM_REQ_SENT);

	w.b_policy = B_ACCEPT;
	advance_to(t0 + T20);		/* A's REQ again: new to B */
	cr_assert_eq(B->nev, 3, "REQ_RECEIVED again, then ESTABLISHED");
	cr_assert_eq(B->ev[1].type, BLUE_IBCM_EV_REQ_RECEIVED);
	cr_assert_eq(B->ev[2].type, BLUE_IBCM_EV_ESTABLISHED);
	cr_assert_eq(a->state, BLUE_IBCM_ESTABLISHED);
	cr_assert_eq(blue__ibcm_stats(B->cm)->dup_req, 0);
}
