// SPDX-License-Identifier: MIT
/*
 * The loopback HAL (afxdp_hal/loopback.c): frames go A -> B through B's flow table with
 * the XDP program's steering rules, every frame comes back to its pool, and the fault
 * filter drops, duplicates and reorders deterministically.
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <blue/wire.h>
#include "afxdp_hal/hal.h"

#define PAYLOAD_LEN	64u

/* --- frame builder: plain Eth/IPv4/UDP/BTH, no codec, so the HAL is tested alone --- */

static uint8_t payload_byte(uint32_t qpn, uint32_t psn, uint32_t i)
{
	return (uint8_t)(qpn * 31u + psn * 7u + i);
}

static uint32_t build(uint8_t *b, uint32_t qpn, uint32_t psn, uint16_t dport)
{
	static const uint8_t dmac[6] = { 0x02, 0, 0, 0, 0, 0xb }, smac[6] = { 0x02, 0, 0, 0, 0, 0xa };
	uint32_t ip = 14, udp = ip + 20, bth = udp + 8, pl = bth + 12, i, v;
	uint16_t s;

	memcpy(b, dmac, 6);
	memcpy(b + 6, smac, 6);
	b[12] = 0x08;
	b[13] = 0x00;
	memset(b + ip, 0, 20);
	b[ip] = 0x45;
	s = htons((uint16_t)(20 + 8 + 12 + PAYLOAD_LEN + 4));
	memcpy(b + ip + 2, &s, 2);
	b[ip + 8] = 64;
	b[ip + 9] = 17;
	s = htons(0xc000);
	memcpy(b + udp, &s, 2);
	s = htons(dport);
	memcpy(b + udp + 2, &s, 2);
	s = htons((uint16_t)(8 + 12 + PAYLOAD_LEN + 4));
	memcpy(b + udp + 4, &s, 2);
	b[udp + 6] = b[udp + 7] = 0;
	b[bth] = BLUE_OP_RC_SEND_ONLY;
	b[bth + 1] = 0;
	b[bth + 2] = b[bth + 3] = 0xff;
	v = htonl(qpn & BLUE_QPN_MASK);
	memcpy(b + bth + 4, &v, 4);
	v = htonl(psn & BLUE_PSN_MASK);
	memcpy(b + bth + 8, &v, 4);
	for (i = 0; i < PAYLOAD_LEN; i++)
		b[pl + i] = payload_byte(qpn, psn, i);
	memset(b + pl + PAYLOAD_LEN, 0, 4);	/* ICRC: not the HAL's business */
	return pl + PAYLOAD_LEN + 4;
}

static uint32_t frame_qpn(const struct blue_frame *f)
{
	uint32_t v;

	memcpy(&v, f->data + 14 + 20 + 8 + 4, 4);
	return ntohl(v) & BLUE_QPN_MASK;
}

static uint32_t frame_psn(const struct blue_frame *f)
{
	uint32_t v;

	memcpy(&v, f->data + 14 + 20 + 8 + 8, 4);
	return ntohl(v) & BLUE_PSN_MASK;
}

/* The whole frame must be what build() made for (qpn, psn). */
static void expect_frame(const struct blue_frame *f, uint32_t qpn, uint32_t psn)
{
	uint8_t want[256];
	uint32_t len = build(want, qpn, psn, BLUE_ROCEV2_UDP_PORT);

	cr_assert_eq(f->len, len, "frame length %u, want %u", f->len, len);
	cr_assert_eq(frame_qpn(f), qpn, "QPN %#x, want %#x", frame_qpn(f), qpn);
	cr_assert_eq(frame_psn(f), psn, "PSN %u, want %u", frame_psn(f), psn);
	cr_assert_arr_eq(f->data, want, len, "bytes of QPN %#x PSN %u differ", qpn, psn);
}

/* Send one frame per (qpns[i], psns[i]) from @s in one submit and one flush. */
static void send_frames(struct blue_hal *h, struct blue_hal_sock *s, const uint32_t *qpns,
			const uint32_t *psns, unsigned int n, uint16_t dport)
{
	struct blue_frame f[64];
	unsigned int i;

	cr_assert_leq(n, 64);
	cr_assert_eq(blue_hal_tx_alloc(h, f, n), (int)n, "tx_alloc of %u frames", n);
	for (i = 0; i < n; i++)
		f[i].len = build(f[i].data, qpns[i], psns[i], dport);
	cr_assert_eq(blue_hal_tx_submit(s, f, n), (int)n);
	cr_assert_eq(blue_hal_tx_flush(s), 0);
}

static void send_one(struct blue_hal *h, struct blue_hal_sock *s, uint32_t qpn, uint32_t psn)
{
	send_frames(h, s, &qpn, &psn, 1, BLUE_ROCEV2_UDP_PORT);
}

/* As the runtime does: the QP's P_Key (pkey_index 0) is written on the way out of RESET. */
static void set_state(struct blue_hal *h, uint32_t qpn, uint8_t state)
{
	struct blue_qp_ctx *c = &blue_hal_qp_ctx_table(h)[blue_qpn_slot(qpn)];

	if (state != BLUE_QPS_RESET)
		c->pkey = BLUE_DEFAULT_PKEY;
	c->state = state;
}

/* Bind @qpn to @s on @h and make it accept packets, as the runtime would. */
static void bind_rts(struct blue_hal *h, struct blue_hal_sock *s, uint32_t qpn)
{
	cr_assert_eq(blue_hal_flow_bind(s, qpn), 0, "bind QPN %#x", qpn);
	set_state(h, qpn, BLUE_QPS_RTS);
}

/* Receive everything now on @s (no wait), check the PSN sequence, release. */
static void expect_rx(struct blue_hal *h, struct blue_hal_sock *s, uint32_t qpn,
		      const uint32_t *psns, unsigned int n)
{
	struct blue_frame f[128];
	int got = blue_hal_rx_burst(s, f, 128, 0);
	unsigned int i;

	cr_assert_eq(got, (int)n, "socket %u received %d frames, want %u", s->slot, got, n);
	for (i = 0; i < n; i++)
		expect_frame(&f[i], qpn, psns[i]);
	blue_hal_rx_release(h, f, n);
}

static void expect_all_free(struct blue_hal *h)
{
	struct blue_hal_stats st;

	blue_hal_get_stats(h, &st);
	cr_assert_eq(st.frames_free, st.frames_total, "%s end leaks %llu of %llu frames",
		     h->ops->name, (unsigned long long)(st.frames_total - st.frames_free),
		     (unsigned long long)st.frames_total);
	cr_assert_eq(st.frame_errors, 0);
}

struct pair {
	struct blue_hal *a, *b;
	struct blue_hal_sock *sa, *sb;
};

static void pair_open(struct pair *p, const struct blue_loopback_config *cfg)
{
	cr_assert_eq(blue_hal_loopback_pair_cfg(&p->a, &p->b, cfg), 0);
	cr_assert_eq(blue_hal_sock_open(p->a, &p->sa), 0);
	cr_assert_eq(blue_hal_sock_open(p->b, &p->sb), 0);
}

static void pair_close(struct pair *p)
{
	blue_hal_sock_close(p->sa);
	blue_hal_sock_close(p->sb);
	expect_all_free(p->a);
	expect_all_free(p->b);
	blue_hal_destroy(p->a);
	blue_hal_destroy(p->b);
}

/* --- tests -------------------------------------------------------------------- */

Test(hal_loopback, alloc_submit_flush_rx_release)
{
	struct blue_hal_stats sa, sb;
	struct blue_frame f, r;
	struct pair p;

	pair_open(&p, NULL);
	cr_assert_str_eq(p.a->ops->name, "loopback");
	bind_rts(p.b, p.sb, 0x123);

	cr_assert_eq(blue_hal_tx_alloc(p.a, &f, 1), 1);
	cr_assert_not_null(f.data);
	cr_assert_eq(f.len, 0);
	f.len = build(f.data, 0x123, 7, BLUE_ROCEV2_UDP_PORT);
	cr_assert_eq(blue_hal_tx_submit(p.sa, &f, 1), 1);

	/* Nothing moves before the doorbell. */
	cr_assert_eq(blue_hal_rx_burst(p.sb, &r, 1, 0), 0, "frame arrived before tx_flush");
	cr_assert_eq(blue_hal_tx_flush(p.sa), 0);
	cr_assert_eq(blue_hal_rx_burst(p.sb, &r, 1, 0), 1);
	expect_frame(&r, 0x123, 7);
	cr_assert_neq(r.data, f.data, "the receiver must get its own copy");

	blue_hal_get_stats(p.a, &sa);
	cr_assert_eq(sa.tx_frames, 1);
	cr_assert_eq(sa.tx_kicks, 1);
	cr_assert_eq(sa.frames_free, sa.frames_total, "sent frame not completed");
	blue_hal_get_stats(p.b, &sb);
	cr_assert_eq(sb.rx_frames, 1);
	cr_assert_eq(sb.frames_free, sb.frames_total - 1, "received frame is the user's");
	cr_assert_eq(blue_hal_loopback_stat(p.b, BLUE_STAT_REDIRECT), 1);
	cr_assert_eq(blue_hal_qp_ctx_table(p.b)[blue_qpn_slot(0x123)].xdp_rx_pkts, 1);

	blue_hal_rx_release(p.b, &r, 1);
	/* An empty flush rings no doorbell. */
	cr_assert_eq(blue_hal_tx_flush(p.sa), 0);
	blue_hal_get_stats(p.a, &sa);
	cr_assert_eq(sa.tx_kicks, 1);
	pair_close(&p);
}

Test(hal_loopback, both_directions)
{
	uint32_t psn0 = 0;
	struct pair p;

	pair_open(&p, NULL);
	bind_rts(p.a, p.sa, 0x200);
	bind_rts(p.b, p.sb, 0x300);
	send_one(p.a, p.sa, 0x300, 1);
	send_one(p.b, p.sb, 0x200, 0);
	expect_rx(p.a, p.sa, 0x200, &psn0, 1);
	psn0 = 1;
	expect_rx(p.b, p.sb, 0x300, &psn0, 1);
	pair_close(&p);
}

Test(hal_loopback, demux_by_qpn)
{
	/* Slots are qpn & 4095: 0x11 -> 0x11, 0x1012 -> 0x12, 0x2ff3 -> 0xff3. */
	static const uint32_t qpns[3] = { 0x11, 0x1012, 0x2ff3 };
	struct blue_hal_sock *s[3];
	uint32_t q[30], ps[30], want[10];
	unsigned int i, k;
	struct pair p;

	pair_open(&p, NULL);
	s[0] = p.sb;
	cr_assert_eq(blue_hal_sock_open(p.b, &s[1]), 0);
	cr_assert_eq(blue_hal_sock_open(p.b, &s[2]), 0);
	cr_assert_eq(s[1]->slot, 1, "slots are handed out lowest first");
	cr_assert_eq(s[2]->slot, 2);
	for (i = 0; i < 3; i++)
		bind_rts(p.b, s[i], qpns[i]);
	cr_assert_eq(blue_hal_qp_ctx_table(p.b)[0xff3].xsk_slot, 2);
	cr_assert_eq(blue_hal_qp_ctx_table(p.b)[0xff3].qpn, 0x2ff3);

	/* Interleaved: q0 q1 q2 q0 q1 q2 ..., PSN 100 + round. */
	for (k = 0; k < 30; k++) {
		q[k] = qpns[k % 3];
		ps[k] = 100 + k / 3;
	}
	send_frames(p.a, p.sa, q, ps, 30, BLUE_ROCEV2_UDP_PORT);
	for (k = 0; k < 10; k++)
		want[k] = 100 + k;
	for (i = 0; i < 3; i++) {
		expect_rx(p.b, s[i], qpns[i], want, 10);
		cr_assert_eq(blue_hal_qp_ctx_table(p.b)[blue_qpn_slot(qpns[i])].xdp_rx_pkts, 10);
	}
	cr_assert_eq(blue_hal_loopback_stat(p.b, BLUE_STAT_REDIRECT), 30);
	blue_hal_sock_close(s[1]);
	blue_hal_sock_close(s[2]);
	pair_close(&p);
}

Test(hal_loopback, unknown_qpn_dropped_and_counted)
{
	uint32_t q[4] = { 0x99, 0x1011, 0x11, 0 }, ps[4] = { 1, 2, 3, 4 };
	struct blue_hal_stats st;
	struct blue_frame f;
	uint32_t psn3 = 3;
	struct pair p;

	pair_open(&p, NULL);
	bind_rts(p.b, p.sb, 0x11);
	/* 0x99 owns nothing; 0x1011 lands in 0x11's slot but is not its owner; QPN 0 is
	 * never a steering target even though free slots hold qpn 0. */
	send_frames(p.a, p.sa, q, ps, 4, BLUE_ROCEV2_UDP_PORT);
	expect_rx(p.b, p.sb, 0x11, &psn3, 1);
	cr_assert_eq(blue_hal_rx_burst(p.sb, &f, 1, 0), 0);
	cr_assert_eq(blue_hal_loopback_stat(p.b, BLUE_STAT_DROP_UNKNOWN_QPN), 3);
	cr_assert_eq(blue_hal_loopback_stat(p.b, BLUE_STAT_REDIRECT), 1);
	blue_hal_get_stats(p.a, &st);
	cr_assert_eq(st.frames_free, st.frames_total, "dropped frames must be recycled");
	pair_close(&p);
}

Test(hal_loopback, not_roce_not_delivered)
{
	uint32_t q = 0x11, ps = 0;
	struct blue_frame f;
	struct pair p;

	pair_open(&p, NULL);
	bind_rts(p.b, p.sb, 0x11);
	send_frames(p.a, p.sa, &q, &ps, 1, 4792);
	cr_assert_eq(blue_hal_loopback_stat(p.b, BLUE_STAT_PASS_NON_ROCE), 1);

	/* A frame cut inside the BTH. */
	cr_assert_eq(blue_hal_tx_alloc(p.a, &f, 1), 1);
	build(f.data, 0x11, 1, BLUE_ROCEV2_UDP_PORT);
	f.len = 14 + 20 + 8 + 6;
	cr_assert_eq(blue_hal_tx_submit(p.sa, &f, 1), 1);
	cr_assert_eq(blue_hal_tx_flush(p.sa), 0);
	cr_assert_eq(blue_hal_loopback_stat(p.b, BLUE_STAT_DROP_TRUNC_BTH), 1);

	/* ARP-like ethertype */
	cr_assert_eq(blue_hal_tx_alloc(p.a, &f, 1), 1);
	f.len = build(f.data, 0x11, 2, BLUE_ROCEV2_UDP_PORT);
	f.data[12] = 0x08;
	f.data[13] = 0x06;
	cr_assert_eq(blue_hal_tx_submit(p.sa, &f, 1), 1);
	cr_assert_eq(blue_hal_tx_flush(p.sa), 0);
	cr_assert_eq(blue_hal_loopback_stat(p.b, BLUE_STAT_PASS_NON_IP), 1);

	cr_assert_eq(blue_hal_rx_burst(p.sb, &f, 1, 0), 0);
	cr_assert_eq(blue_hal_loopback_stat(p.b, BLUE_STAT_REDIRECT), 0);
	pair_close(&p);
}

Test(hal_loopback, reset_and_error_dropped)
{
	static const uint8_t accepts[] = { BLUE_QPS_INIT, BLUE_QPS_RTR, BLUE_QPS_RTS,
					   BLUE_QPS_SQD, BLUE_QPS_SQE };
	struct blue_frame f;
	unsigned int i;
	uint32_t psn;
	struct pair p;

	pair_open(&p, NULL);
	cr_assert_eq(blue_hal_flow_bind(p.sb, 0x42), 0);
	/* A fresh binding is RESET (the HAL never touches state): dropped. */
	cr_assert_eq(blue_hal_qp_ctx_table(p.b)[0x42].state, BLUE_QPS_RESET);
	send_one(p.a, p.sa, 0x42, 1);
	set_state(p.b, 0x42, BLUE_QPS_ERR);
	send_one(p.a, p.sa, 0x42, 2);
	cr_assert_eq(blue_hal_rx_burst(p.sb, &f, 1, 0), 0);
	cr_assert_eq(blue_hal_loopback_stat(p.b, BLUE_STAT_DROP_QP_STATE), 2);

	for (i = 0; i < sizeof(accepts); i++) {
		set_state(p.b, 0x42, accepts[i]);
		psn = 10 + i;
		send_one(p.a, p.sa, 0x42, psn);
		expect_rx(p.b, p.sb, 0x42, &psn, 1);
	}
	cr_assert_eq(blue_hal_loopback_stat(p.b, BLUE_STAT_DROP_QP_STATE), 2);
	pair_close(&p);
}

Test(hal_loopback, bind_rules)
{
	struct blue_hal_sock *s2;
	struct blue_qp_ctx *t;
	struct blue_frame f;
	uint32_t psn = 5;
	struct pair p;

	pair_open(&p, NULL);
	t = blue_hal_qp_ctx_table(p.b);
	cr_assert_eq(blue_hal_sock_open(p.b, &s2), 0);
	cr_assert_eq(blue_hal_flow_bind(p.sb, 0x11), 0);
	cr_assert_eq(blue_hal_flow_bind(s2, 0x1011), -EBUSY, "slot 0x11 belongs to QPN 0x11");
	cr_assert_eq(blue_hal_flow_bind(p.sb, 0x1011), -EBUSY);
	cr_assert_eq(t[0x11].qpn, 0x11, "a refused bind must not change the slot");
	cr_assert_eq(t[0x11].xsk_slot, p.sb->slot);
	cr_assert_eq(blue_hal_flow_bind(p.sb, 0x11), 0, "binding again is allowed");

	cr_assert_eq(blue_hal_flow_bind(p.sb, 0), -EINVAL);
	/* QPN 1, the GSI, is steered like any QP (its owner is the CM agent) */
	cr_assert_eq(blue_hal_flow_bind(p.sb, 1), 0, "QP1 (the GSI) is steerable");
	cr_assert_eq(t[1].qpn, 1);
	cr_assert_eq(blue_hal_flow_unbind(p.b, 1), 0);
	cr_assert_eq(t[1].qpn, 0);
	cr_assert_eq(blue_hal_flow_bind(p.sb, 0x1000000), -EINVAL);

	/* Re-binding moves the QPN to another socket. */
	set_state(p.b, 0x11, BLUE_QPS_RTS);
	cr_assert_eq(blue_hal_flow_bind(s2, 0x11), 0);
	cr_assert_eq(t[0x11].xsk_slot, s2->slot);
	send_one(p.a, p.sa, 0x11, psn);
	cr_assert_eq(blue_hal_rx_burst(p.sb, &f, 1, 0), 0);
	expect_rx(p.b, s2, 0x11, &psn, 1);

	cr_assert_eq(blue_hal_flow_unbind(p.b, 0x1011), -ENOENT);
	cr_assert_eq(blue_hal_flow_unbind(p.b, 0x11), 0);
	cr_assert_eq(t[0x11].qpn, 0);
	cr_assert_eq(blue_hal_flow_unbind(p.b, 0x11), -ENOENT);
	cr_assert_eq(blue_hal_flow_bind(p.sb, 0x1011), 0, "slot free again");

	/* Closing a socket unbinds what is steered to it. */
	cr_assert_eq(blue_hal_flow_bind(s2, 0x77), 0);
	blue_hal_sock_close(s2);
	cr_assert_eq(t[0x77].qpn, 0, "closed socket's QPN still bound");
	cr_assert_eq(t[0x11].qpn, 0x1011, "other sockets' QPNs stay bound");
	pair_close(&p);
}

Test(hal_loopback, no_socket_dropped)
{
	struct blue_hal_sock *s2;
	struct pair p;

	pair_open(&p, NULL);
	cr_assert_eq(blue_hal_sock_open(p.b, &s2), 0);
	bind_rts(p.b, s2, 0x55);
	/* What a stale steering entry does: points at a slot whose socket is gone. */
	blue_hal_sock_close(s2);
	blue_hal_qp_ctx_table(p.b)[0x55].qpn = 0x55;
	blue_hal_qp_ctx_table(p.b)[0x55].xsk_slot = 1;
	send_one(p.a, p.sa, 0x55, 0);
	cr_assert_eq(blue_hal_loopback_stat(p.b, BLUE_STAT_DROP_NO_SOCKET), 1);
	pair_close(&p);
}

Test(hal_loopback, other_queue_dropped)
{
	struct pair p;

	pair_open(&p, NULL);
	bind_rts(p.b, p.sb, 0x56);
	/* steered to a socket of queue 1, while everything arrives on queue 0 */
	blue_hal_qp_ctx_table(p.b)[0x56].xsk_slot = BLUE_XSK_PER_QUEUE;
	send_one(p.a, p.sa, 0x56, 0);
	cr_assert_eq(blue_hal_loopback_stat(p.b, BLUE_STAT_DROP_WRONG_QUEUE), 1);
	cr_assert_eq(blue_hal_loopback_stat(p.b, BLUE_STAT_REDIRECT), 0);
	/* and back on queue 0's socket it arrives */
	blue_hal_qp_ctx_table(p.b)[0x56].xsk_slot = p.sb->slot;
	send_one(p.a, p.sa, 0x56, 0);
	cr_assert_eq(blue_hal_loopback_stat(p.b, BLUE_STAT_REDIRECT), 1);
	pair_close(&p);
}

/* One frame to @qpn whose BTH carries P_Key @pkey. */
static void send_pkey(struct blue_hal *h, struct blue_hal_sock *s, uint32_t qpn,
		      uint16_t pkey)
{
	struct blue_frame f;
	uint16_t v = htons(pkey);

	cr_assert_eq(blue_hal_tx_alloc(h, &f, 1), 1);
	f.len = build(f.data, qpn, 0, BLUE_ROCEV2_UDP_PORT);
	memcpy(f.data + 14 + 20 + 8 + 2, &v, 2);
	cr_assert_eq(blue_hal_tx_submit(s, &f, 1), 1);
	cr_assert_eq(blue_hal_tx_flush(s), 0);
}

/* The XDP program's P_Key check, mirrored (tests/xdp/test_verdicts.c has the full table). */
Test(hal_loopback, wrong_pkey_dropped)
{
	struct blue_frame f[4];
	uint16_t pk;
	struct pair p;
	int got;

	pair_open(&p, NULL);
	bind_rts(p.b, p.sb, 0x57);
	send_pkey(p.a, p.sa, 0x57, 0x9234);	/* a full member of partition 0x1234 */
	send_pkey(p.a, p.sa, 0x57, 0x0000);	/* the invalid P_Key */
	cr_assert_eq(blue_hal_loopback_stat(p.b, BLUE_STAT_DROP_BAD_PKEY), 2);
	cr_assert_eq(blue_hal_loopback_stat(p.b, BLUE_STAT_REDIRECT), 0);
	cr_assert_eq(blue_hal_rx_burst(p.sb, f, 4, 0), 0, "a dropped frame arrived");
	/* a limited member of the default partition may talk to the full-member QP */
	send_pkey(p.a, p.sa, 0x57, 0x7fff);
	cr_assert_eq(blue_hal_loopback_stat(p.b, BLUE_STAT_REDIRECT), 1);
	got = blue_hal_rx_burst(p.sb, f, 4, 0);
	cr_assert_eq(got, 1);
	memcpy(&pk, f[0].data + 14 + 20 + 8 + 2, 2);
	cr_assert_eq(ntohs(pk), 0x7fff);
	cr_assert_eq(frame_qpn(&f[0]), 0x57);
	blue_hal_rx_release(p.b, f, 1);
	/* a limited-member QP refuses another limited member */
	blue_hal_qp_ctx_table(p.b)[0x57].pkey = 0x7fff;
	send_pkey(p.a, p.sa, 0x57, 0x7fff);
	cr_assert_eq(blue_hal_loopback_stat(p.b, BLUE_STAT_DROP_BAD_PKEY), 3);
	cr_assert_eq(blue_hal_rx_burst(p.sb, f, 4, 0), 0, "a dropped frame arrived");
	pair_close(&p);
}

Test(hal_loopback, pool_exhaustion_and_recovery)
{
	struct blue_loopback_config cfg = { .frame_count = 64, .ring_size = 128 };
	struct blue_frame f[100], r[128];
	struct blue_hal_stats st;
	uint32_t psns[64];
	unsigned int i;
	struct pair p;

	pair_open(&p, &cfg);
	bind_rts(p.b, p.sb, 0x21);

	/* A asks for more than exists, gets everything, then nothing. */
	cr_assert_eq(blue_hal_tx_alloc(p.a, f, 100), 64);
	cr_assert_eq(blue_hal_tx_alloc(p.a, f + 64, 1), 0, "empty pool must give 0 frames");
	blue_hal_tx_free(p.a, f + 54, 10);
	cr_assert_eq(blue_hal_tx_alloc(p.a, f + 54, 10), 10, "freed frames are reusable");

	/* All 64 to B: B's 64 frames end up on its RX ring, owned by nobody but it. */
	for (i = 0; i < 64; i++) {
		f[i].len = build(f[i].data, 0x21, i, BLUE_ROCEV2_UDP_PORT);
		psns[i] = i;
	}
	cr_assert_eq(blue_hal_tx_submit(p.sa, f, 64), 64);
	cr_assert_eq(blue_hal_tx_flush(p.sa), 0);
	blue_hal_get_stats(p.a, &st);
	cr_assert_eq(st.frames_free, 64, "completions return every sent frame");

	/* B is out of frames: the next ones are lost and counted, not queued. */
	for (i = 0; i < 3; i++)
		send_one(p.a, p.sa, 0x21, 100 + i);
	blue_hal_get_stats(p.b, &st);
	cr_assert_eq(st.frames_free, 0);
	cr_assert_eq(st.rx_dropped, 3);
	cr_assert_eq(st.fill_empty, 3);

	cr_assert_eq(blue_hal_rx_burst(p.sb, r, 128, 0), 64);
	for (i = 0; i < 64; i++)
		expect_frame(&r[i], 0x21, psns[i]);
	blue_hal_rx_release(p.b, r, 64);

	/* Recovered. */
	send_one(p.a, p.sa, 0x21, 200);
	psns[0] = 200;
	expect_rx(p.b, p.sb, 0x21, psns, 1);
	pair_close(&p);
}

Test(hal_loopback, rings_full)
{
	struct blue_loopback_config cfg = { .frame_count = 64, .ring_size = 16 };
	struct blue_frame f[64], r[16];
	struct blue_hal_stats st;
	unsigned int i;
	struct pair p;

	pair_open(&p, &cfg);
	bind_rts(p.b, p.sb, 0x21);
	cr_assert_eq(blue_hal_tx_alloc(p.a, f, 64), 64);
	for (i = 0; i < 64; i++)
		f[i].len = build(f[i].data, 0x21, i, BLUE_ROCEV2_UDP_PORT);
	cr_assert_eq(blue_hal_tx_submit(p.sa, f, 64), 16, "TX ring holds 16");
	blue_hal_get_stats(p.a, &st);
	cr_assert_eq(st.tx_ring_full, 1);
	cr_assert_eq(blue_hal_tx_flush(p.sa), 0);
	cr_assert_eq(blue_hal_tx_submit(p.sa, f + 16, 48), 16);
	cr_assert_eq(blue_hal_tx_flush(p.sa), 0);
	blue_hal_tx_free(p.a, f + 32, 32);

	/* B's RX ring held the first 16; the next 16 found it full. */
	blue_hal_get_stats(p.b, &st);
	cr_assert_eq(st.rx_dropped, 16);
	cr_assert_eq(blue_hal_rx_burst(p.sb, r, 16, 0), 16);
	for (i = 0; i < 16; i++)
		expect_frame(&r[i], 0x21, i);
	blue_hal_rx_release(p.b, r, 16);
	pair_close(&p);
}

Test(hal_loopback, bad_descriptors_refused)
{
	struct blue_frame f[2];
	struct blue_hal_stats st;
	struct pair p;

	pair_open(&p, NULL);
	cr_assert_eq(blue_hal_tx_alloc(p.a, f, 2), 2);
	f[0].len = 60;
	f[1].len = 0;
	cr_assert_eq(blue_hal_tx_submit(p.sa, f, 2), -EINVAL, "zero length");
	f[1].len = p.a->frame_size + 1;
	cr_assert_eq(blue_hal_tx_submit(p.sa, f, 2), -EINVAL, "longer than a frame");
	blue_hal_get_stats(p.a, &st);
	cr_assert_eq(st.tx_frames, 0, "nothing queued from a refused batch");
	blue_hal_tx_free(p.a, f, 2);

	/* A double free is refused and counted, and the pool stays sane. */
	blue_hal_tx_free(p.a, f, 1);
	blue_hal_get_stats(p.a, &st);
	cr_assert_eq(st.frame_errors, 1);
	cr_assert_eq(st.frames_free, st.frames_total);
	blue_hal_sock_close(p.sa);
	blue_hal_sock_close(p.sb);
	blue_hal_destroy(p.a);
	blue_hal_destroy(p.b);
}

/* --- fault filter ------------------------------------------------------------- */

struct rule {
	uint64_t seq;
	enum blue_lb_verdict v;
};

struct script {
	const struct rule *rules;
	unsigned int n;
	uint64_t seen;
};

static enum blue_lb_verdict scripted(void *arg, const struct blue_frame *f, uint64_t seq)
{
	struct script *s = arg;
	unsigned int i;

	cr_assert_eq(seq, s->seen, "filter sequence numbers skip");
	cr_assert_eq(frame_psn(f), seq, "the filter sees frames in send order");
	s->seen++;
	for (i = 0; i < s->n; i++)
		if (s->rules[i].seq == seq)
			return s->rules[i].v;
	return BLUE_LB_PASS;
}

/* Send PSNs 0..n-1 to QPN 0x31 with @rules; expect @want on B. */
static void run_script(const struct rule *rules, unsigned int nrules, unsigned int n,
		       const uint32_t *want, unsigned int nwant, uint64_t drops)
{
	struct script sc = { .rules = rules, .n = nrules };
	uint32_t q[16], ps[16];
	unsigned int i;
	struct pair p;

	pair_open(&p, NULL);
	bind_rts(p.b, p.sb, 0x31);
	blue_hal_loopback_set_filter(p.a, scripted, &sc);
	for (i = 0; i < n; i++) {
		q[i] = 0x31;
		ps[i] = i;
	}
	send_frames(p.a, p.sa, q, ps, n, BLUE_ROCEV2_UDP_PORT);
	cr_assert_eq(sc.seen, n);
	expect_rx(p.b, p.sb, 0x31, want, nwant);
	cr_assert_eq(blue_hal_loopback_stat(p.a, BLUE_STAT__MAX), drops);
	cr_assert_eq(blue_hal_loopback_stat(p.b, BLUE_STAT_REDIRECT), nwant);
	pair_close(&p);
}

Test(hal_loopback, filter_drop)
{
	static const struct rule r[] = { { 1, BLUE_LB_DROP }, { 4, BLUE_LB_DROP } };
	static const uint32_t want[] = { 0, 2, 3, 5 };

	run_script(r, 2, 6, want, 4, 2);
}

Test(hal_loopback, filter_duplicate)
{
	static const struct rule r[] = { { 2, BLUE_LB_DUP } };
	static const uint32_t want[] = { 0, 1, 2, 2, 3 };

	run_script(r, 1, 4, want, 5, 0);
}

Test(hal_loopback, filter_hold_reorders)
{
	/* Held frames follow the next delivered frame: 1 after 2; 3 and 4 after 5. */
	static const struct rule r[] = { { 1, BLUE_LB_HOLD }, { 3, BLUE_LB_HOLD },
					 { 4, BLUE_LB_HOLD } };
	static const uint32_t want[] = { 0, 2, 1, 5, 3, 4 };

	run_script(r, 3, 6, want, 6, 0);
}

Test(hal_loopback, filter_hold_until_released)
{
	static const struct rule r[] = { { 2, BLUE_LB_HOLD } };
	struct script sc = { .rules = r, .n = 1 };
	uint32_t q[3] = { 0x31, 0x31, 0x31 }, ps[3] = { 0, 1, 2 }, two = 2;
	struct blue_hal_stats st;
	struct pair p;

	pair_open(&p, NULL);
	bind_rts(p.b, p.sb, 0x31);
	blue_hal_loopback_set_filter(p.a, scripted, &sc);
	send_frames(p.a, p.sa, q, ps, 3, BLUE_ROCEV2_UDP_PORT);
	expect_rx(p.b, p.sb, 0x31, ps, 2);
	blue_hal_get_stats(p.a, &st);
	cr_assert_eq(st.frames_free, st.frames_total - 1, "the held frame is still in flight");
	cr_assert_eq(blue_hal_loopback_release_held(p.a), 1);
	expect_rx(p.b, p.sb, 0x31, &two, 1);
	cr_assert_eq(blue_hal_loopback_release_held(p.a), 0);

	/* Removing the filter: everything passes again. */
	blue_hal_loopback_set_filter(p.a, NULL, NULL);
	send_one(p.a, p.sa, 0x31, 9);
	two = 9;
	expect_rx(p.b, p.sb, 0x31, &two, 1);
	pair_close(&p);
}

Test(hal_loopback, destroy_with_held_and_unread_frames)
{
	static const struct rule r[] = { { 0, BLUE_LB_HOLD } };
	struct script sc = { .rules = r, .n = 1 };
	struct blue_frame f;
	struct pair p;

	/* A ends with a frame held by its filter, one queued but never flushed, and one
	 * received but never read: destroy must free them all (ASan checks the heap). */
	pair_open(&p, NULL);
	bind_rts(p.a, p.sa, 0x32);
	bind_rts(p.b, p.sb, 0x31);
	send_one(p.b, p.sb, 0x32, 0);
	blue_hal_loopback_set_filter(p.a, scripted, &sc);
	send_one(p.a, p.sa, 0x31, 0);
	cr_assert_eq(blue_hal_tx_alloc(p.a, &f, 1), 1);
	f.len = build(f.data, 0x31, 1, BLUE_ROCEV2_UDP_PORT);
	cr_assert_eq(blue_hal_tx_submit(p.sa, &f, 1), 1);
	cr_assert_eq(blue_hal_rx_burst(p.sb, &f, 1, 0), 0, "the held frame arrived");
	blue_hal_destroy(p.a);

	/* The wire is cut: B's flush must still recycle its frame. */
	send_one(p.b, p.sb, 0x32, 1);
	blue_hal_sock_close(p.sb);
	expect_all_free(p.b);
	blue_hal_destroy(p.b);
}

/* --- waiting ------------------------------------------------------------------ */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

Test(hal_loopback, rx_timeout_expires)
{
	struct blue_frame f;
	struct blue_hal_stats st;
	struct pair p;
	double t0;
	int n;

	pair_open(&p, NULL);
	t0 = now_ms();
	n = blue_hal_rx_burst(p.sb, &f, 1, 50);
	cr_assert_eq(n, 0);
	cr_assert_geq(now_ms() - t0, 45.0, "rx_burst returned before its timeout");
	blue_hal_get_stats(p.b, &st);
	cr_assert_eq(st.rx_wakeups, 1);
	pair_close(&p);
}

struct sender_arg {
	struct pair *p;
	int rc;
};

/* No Criterion asserts off the main thread: report through @rc instead. */
static void *late_sender(void *arg)
{
	struct sender_arg *sa = arg;
	struct pair *p = sa->p;
	struct blue_frame f;

	usleep(30 * 1000);
	sa->rc = -1;
	if (blue_hal_tx_alloc(p->a, &f, 1) != 1)
		return NULL;
	f.len = build(f.data, 0x66, 3, BLUE_ROCEV2_UDP_PORT);
	if (blue_hal_tx_submit(p->sa, &f, 1) != 1)
		return NULL;
	sa->rc = blue_hal_tx_flush(p->sa);
	return NULL;
}

Test(hal_loopback, rx_sleeps_until_frame_from_other_thread)
{
	struct sender_arg sa;
	struct pollfd pfd;
	struct blue_frame f;
	pthread_t th;
	struct pair p;
	double t0, dt;

	pair_open(&p, NULL);
	bind_rts(p.b, p.sb, 0x66);
	pfd = (struct pollfd){ .fd = blue_hal_sock_fd(p.sb), .events = POLLIN };
	cr_assert_eq(poll(&pfd, 1, 0), 0, "event fd readable with nothing queued");

	sa.p = &p;
	cr_assert_eq(pthread_create(&th, NULL, late_sender, &sa), 0);
	t0 = now_ms();
	cr_assert_eq(blue_hal_rx_burst(p.sb, &f, 1, 5000), 1);
	dt = now_ms() - t0;
	pthread_join(th, NULL);
	cr_assert_eq(sa.rc, 0, "sender thread failed");
	cr_assert_lt(dt, 2000.0, "woke %.0f ms after the frame, not at once", dt);
	expect_frame(&f, 0x66, 3);
	blue_hal_rx_release(p.b, &f, 1);
	cr_assert_eq(poll(&pfd, 1, 0), 0, "event fd still readable after draining");

	send_one(p.a, p.sa, 0x66, 4);
	cr_assert_eq(poll(&pfd, 1, 0), 1, "event fd not readable with a frame queued");
	cr_assert_eq(blue_hal_rx_burst(p.sb, &f, 1, 0), 1);
	blue_hal_rx_release(p.b, &f, 1);
	pair_close(&p);
}
