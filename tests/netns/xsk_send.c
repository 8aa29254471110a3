// SPDX-License-Identifier: MIT
/*
 * xsk_send: send RoCEv2 SEND-Only frames through the AF_XDP HAL in TX-only mode (the
 * sending netdev has no blue program and no pins).
 *
 *   xsk_send IFNAME --src-mac M --dst-mac M --src-ip A --dst-ip A --qpns Q1,Q2,..
 *            --count N [--unknown QPN --unknown-count K] [--payload BYTES]
 *            [--sockets S]
 *
 * Sends N frames to each listed QPN with PSN 0..N-1, interleaved (Q1 psn0, Q2 psn0,
 * ..., Q1 psn1, ...), and K frames to the unknown QPN among them. Each payload is
 * xt_pattern(qpn, psn), so the receiver can check every byte. Exit 0 when every frame
 * was handed to the kernel and completed, 1 otherwise. With S > 1 the batches go out
 * round-robin over S sockets sharing the UMEM (XDP_SHARED_UMEM): their TX rings all
 * complete into the one completion ring.
 */
#include <getopt.h>
#include <unistd.h>

#include "afxdp_hal/hal.h"
#include "runtime/codec.h"
#include "tests/netns/xsk_common.h"

#define MAX_QPNS	64
#define MAX_SOCKS	8
#define BATCH		64
#define DEADLINE_NS	(10ull * 1000000000ull)

struct send_opts {
	const char *ifname;
	uint8_t src_mac[6], dst_mac[6];
	uint32_t src_ip, dst_ip;
	uint32_t qpns[MAX_QPNS];
	int nqpns;
	uint32_t count;
	uint32_t unknown_qpn;
	uint32_t unknown_count;
	uint32_t payload;
	uint32_t sockets;
};

static void usage(void)
{
	fprintf(stderr, "usage: xsk_send IFNAME --src-mac M --dst-mac M --src-ip A --dst-ip A "
		"--qpns Q1,Q2,.. --count N [--unknown QPN --unknown-count K] [--payload BYTES] "
		"[--sockets S]\n");
	exit(2);
}

static void parse_args(int argc, char **argv, struct send_opts *o)
{
	static const struct option lo[] = {
		{ "src-mac", required_argument, NULL, 'S' },
		{ "dst-mac", required_argument, NULL, 'D' },
		{ "src-ip", required_argument, NULL, 's' },
		{ "dst-ip", required_argument, NULL, 'd' },
		{ "qpns", required_argument, NULL, 'q' },
		{ "count", required_argument, NULL, 'n' },
		{ "unknown", required_argument, NULL, 'u' },
		{ "unknown-count", required_argument, NULL, 'k' },
		{ "payload", required_argument, NULL, 'p' },
		{ "sockets", required_argument, NULL, 'x' },
		{ NULL, 0, NULL, 0 },
	};
	bool have[5] = { false };
	int c, bad = 0;

	memset(o, 0, sizeof(*o));
	o->payload = 256;
	o->sockets = 1;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'S': bad |= xt_parse_mac(optarg, o->src_mac); have[0] = true; break;
		case 'D': bad |= xt_parse_mac(optarg, o->dst_mac); have[1] = true; break;
		case 's': bad |= xt_parse_ip(optarg, &o->src_ip); have[2] = true; break;
		case 'd': bad |= xt_parse_ip(optarg, &o->dst_ip); have[3] = true; break;
		case 'q':
			o->nqpns = xt_parse_qpns(optarg, o->qpns, MAX_QPNS);
			bad |= o->nqpns < 0;
			have[4] = true;
			break;
		case 'n': bad |= xt_parse_u32(optarg, &o->count); break;
		case 'u': bad |= xt_parse_u32(optarg, &o->unknown_qpn); break;
		case 'k': bad |= xt_parse_u32(optarg, &o->unknown_count); break;
		case 'p': bad |= xt_parse_u32(optarg, &o->payload); break;
		case 'x': bad |= xt_parse_u32(optarg, &o->sockets); break;
		default: usage();
		}
	}
	if (bad || optind != argc - 1 || !have[0] || !have[1] || !have[2] || !have[3] ||
	    !have[4] || o->payload > 1024 || (o->payload & 3) ||
	    o->unknown_qpn > BLUE_QPN_MASK || !o->sockets || o->sockets > MAX_SOCKS)
		usage();
	o->ifname = argv[optind];
}

/* The @i-th frame of the schedule: its QPN and PSN. */
static void schedule(const struct send_opts *o, uint64_t i, uint32_t *qpn, uint32_t *psn)
{
	uint64_t per_round = (uint64_t)o->nqpns + 1;	/* one slot for the unknown QPN */
	uint64_t round, pos, known = (uint64_t)o->nqpns * o->count;

	/* Interleave while both kinds remain, then finish whichever is left. */
	if (i < per_round * (o->count < o->unknown_count ? o->count : o->unknown_count)) {
		round = i / per_round;
		pos = i % per_round;
		*psn = (uint32_t)round;
		*qpn = pos == (uint64_t)o->nqpns ? o->unknown_qpn : o->qpns[pos];
		return;
	}
	if (o->count >= o->unknown_count) {
		uint64_t j = i - (uint64_t)o->unknown_count;	/* known frames before i */

		*qpn = o->qpns[j % o->nqpns];
		*psn = (uint32_t)(j / o->nqpns);
	} else {
		*qpn = o->unknown_qpn;
		*psn = (uint32_t)(i - known);
	}
}

static int build_frame(const struct send_opts *o, uint8_t *buf, size_t cap, uint32_t qpn,
		       uint32_t psn)
{
	uint8_t payload[1024];
	struct blue_pkt p;

	blue_pkt_init(&p, BLUE_OP_RC_SEND_ONLY);
	memcpy(p.dst_mac, o->dst_mac, 6);
	memcpy(p.src_mac, o->src_mac, 6);
	p.saddr = o->src_ip;
	p.daddr = o->dst_ip;
	p.sport = blue_udp_sport(XT_SRC_QPN, qpn);
	p.dqpn = qpn;
	p.psn = psn;
	xt_pattern_fill(payload, o->payload, qpn, psn);
	p.payload = payload;
	p.payload_len = o->payload;
	return blue_pkt_build(&p, buf, cap);
}

/* Flush until @s's ring is empty and all frames completed, or the deadline. */
static bool drain(struct blue_hal *h, struct blue_hal_sock **s, uint32_t ns, uint64_t t_end)
{
	struct blue_hal_stats st;
	uint32_t i;
	int busy;

	do {
		busy = 0;
		for (i = 0; i < ns; i++)
			busy |= blue_hal_tx_flush(s[i]) != 0;
		blue_hal_get_stats(h, &st);
		if (!busy && st.frames_free == st.frames_total)
			return true;
		usleep(1000);
	} while (xt_now_ns() < t_end);
	return false;
}

int main(int argc, char **argv)
{
	struct blue_afxdp_config cfg = { .tx_only = true };
	struct blue_hal_sock *s[MAX_SOCKS] = { NULL };
	struct blue_frame f[BATCH];
	struct blue_hal_stats st;
	struct send_opts o;
	struct blue_hal *h;
	uint64_t total, next = 0, t_end, batch = 0;
	int err, n, k, i, rc = 1;
	uint32_t j;
	bool drained;

	parse_args(argc, argv, &o);
	total = (uint64_t)o.nqpns * o.count + o.unknown_count;
	cfg.ifname = o.ifname;
	h = blue_hal_afxdp_open(&cfg);
	if (!h)
		return 1;
	for (j = 0; j < o.sockets; j++) {
		err = blue_hal_sock_open(h, &s[j]);
		if (err) {
			fprintf(stderr, "xsk_send: socket %u: %s\n", j, strerror(-err));
			goto out;
		}
	}
	printf("xsk_send: %s, %s mode, %u sockets, %llu frames\n", o.ifname,
	       blue_hal_afxdp_zerocopy(h) ? "zero-copy" : "copy", o.sockets,
	       (unsigned long long)total);

	t_end = xt_now_ns() + DEADLINE_NS;
	while (next < total && xt_now_ns() < t_end) {
		uint64_t want = total - next < BATCH ? total - next : BATCH;
		struct blue_hal_sock *sk = s[batch++ % o.sockets];

		n = blue_hal_tx_alloc(h, f, (unsigned int)want);
		if (n < 0) {
			fprintf(stderr, "xsk_send: tx_alloc: %s\n", strerror(-n));
			goto out;
		}
		for (i = 0; i < n; i++) {
			uint32_t qpn, psn;
			int len;

			schedule(&o, next + (uint64_t)i, &qpn, &psn);
			len = build_frame(&o, f[i].data, h->frame_size - h->headroom, qpn, psn);
			if (len < 0) {
				fprintf(stderr, "xsk_send: build: %s\n", strerror(-len));
				blue_hal_tx_free(h, f, (unsigned int)n);
				goto out;
			}
			f[i].len = (uint32_t)len;
		}
		k = n ? blue_hal_tx_submit(sk, f, (unsigned int)n) : 0;
		if (k < 0) {
			fprintf(stderr, "xsk_send: tx_submit: %s\n", strerror(-k));
			blue_hal_tx_free(h, f, (unsigned int)n);
			goto out;
		}
		if (k < n)	/* ring full: those are rebuilt next time round */
			blue_hal_tx_free(h, f + k, (unsigned int)(n - k));
		next += (uint64_t)k;
		err = blue_hal_tx_flush(sk);
		if (err && err != -EAGAIN) {
			fprintf(stderr, "xsk_send: tx_flush: %s\n", strerror(-err));
			goto out;
		}
	}
	/* Every frame must leave its ring and complete. */
	drained = drain(h, s, o.sockets, t_end);
	blue_hal_get_stats(h, &st);
	printf("xsk_send: queued %llu of %llu frames, %llu doorbells, %llu in flight\n",
	       (unsigned long long)next, (unsigned long long)total,
	       (unsigned long long)st.tx_kicks,
	       (unsigned long long)(st.frames_total - st.frames_free));
	rc = next == total && drained ? 0 : 1;
out:
	for (j = 0; j < o.sockets; j++)
		if (s[j])
			blue_hal_sock_close(s[j]);
	blue_hal_destroy(h);
	return rc;
}
