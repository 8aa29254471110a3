// SPDX-License-Identifier: MIT
/*
 * hal_rate: raw frame rate through the AF_XDP HAL, and a plain UDP socket baseline.
 * One binary, four roles; tests/bench/run.sh runs them in pairs across a veth link.
 *
 *   hal_rate xsk-recv IFNAME --qpn Q [--duration S]
 *   hal_rate xsk-send IFNAME --qpn Q --size BYTES --src-mac M --dst-mac M
 *                     --src-ip A --dst-ip A [--duration S]
 *   hal_rate udp-recv --bind A --port P [--duration S]
 *   hal_rate udp-send --dst-ip A --port P --size BYTES [--duration S]
 *   hal_rate xsk-pong IFNAME --qpn Q --peer-qpn P --size BYTES --src-mac M --dst-mac M
 *                     --src-ip A --dst-ip A [--duration S]
 *   hal_rate xsk-ping IFNAME (the same) --iters N
 *
 * xsk-ping/xsk-pong: the raw AF_XDP round trip, the floor under any RDMA latency over
 * this HAL: blue attached on both ends, each side's socket steered by its own QPN, one
 * frame in flight, both sides busy-polling. The pinger sends a frame to the peer's QPN
 * and spins until the answer arrives; the ponger answers every frame with one of the
 * same size. The pinger reports "RESULT iters N rtt_p50_us ... rtt_p99_us ... rtt_avg_us
 * ... rtt_min_us ..." (round trips); both report "cpu_cores C" (utime + stime over wall
 * time, /proc/self/stat).
 *
 * --size is the Ethernet frame length (without FCS), up to the HAL's frame size (4096;
 * beyond 1514 the link MTU must carry it). RoCE frames are rounded down to
 * 58 + a multiple of 4 bytes (Eth+IPv4+UDP+BTH+ICRC plus 4-byte aligned payload); the
 * UDP sender is given the same frame length. Senders run for the duration; receivers
 * print READY, then count from their first frame until 500 ms pass without one (or
 * duration + 5 s), and report "RESULT frames N seconds T rate R" on stdout.
 */
#include <getopt.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "afxdp_hal/hal.h"
#include "runtime/codec.h"
#include "runtime/device.h"
#include "tests/netns/xsk_common.h"
#include "tools/common/tool_common.h"

#define BURST		64
#define IDLE_NS		(500ull * 1000000ull)
#define ROCE_OVERHEAD	(14 + 20 + 8 + 12 + 4)
#define UDP_OVERHEAD	(14 + 20 + 8)
#define MAX_FRAME	4096	/* the HAL's default frame size, no headroom */
#define PONG_IDLE_NS	(1000ull * 1000000ull)

struct opts {
	const char *role;
	const char *ifname;
	uint32_t qpn, peer_qpn, size, duration, port, iters;
	uint32_t src_ip, dst_ip, bind_ip;
	uint8_t src_mac[6], dst_mac[6];
};

static void usage(void)
{
	fprintf(stderr,
		"usage: hal_rate xsk-recv IFNAME --qpn Q [--duration S]\n"
		"       hal_rate xsk-send IFNAME --qpn Q --size B --src-mac M --dst-mac M "
		"--src-ip A --dst-ip A [--duration S]\n"
		"       hal_rate udp-recv --bind A --port P [--duration S]\n"
		"       hal_rate udp-send --dst-ip A --port P --size B [--duration S]\n"
		"       hal_rate xsk-pong IFNAME --qpn Q --peer-qpn P --size B --src-mac M "
		"--dst-mac M --src-ip A --dst-ip A [--duration S]\n"
		"       hal_rate xsk-ping IFNAME (as xsk-pong) --iters N\n");
	exit(2);
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "qpn", required_argument, NULL, 'q' },
		{ "size", required_argument, NULL, 'z' },
		{ "duration", required_argument, NULL, 't' },
		{ "port", required_argument, NULL, 'p' },
		{ "src-mac", required_argument, NULL, 'S' },
		{ "dst-mac", required_argument, NULL, 'D' },
		{ "src-ip", required_argument, NULL, 's' },
		{ "dst-ip", required_argument, NULL, 'd' },
		{ "bind", required_argument, NULL, 'b' },
		{ "peer-qpn", required_argument, NULL, 'P' },
		{ "iters", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	int c, bad = 0;

	memset(o, 0, sizeof(*o));
	o->duration = 3;
	if (argc < 2)
		usage();
	o->role = argv[1];
	optind = 2;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'q': bad |= xt_parse_u32(optarg, &o->qpn); break;
		case 'z': bad |= xt_parse_u32(optarg, &o->size); break;
		case 't': bad |= xt_parse_u32(optarg, &o->duration); break;
		case 'p': bad |= xt_parse_u32(optarg, &o->port); break;
		case 'S': bad |= xt_parse_mac(optarg, o->src_mac); break;
		case 'D': bad |= xt_parse_mac(optarg, o->dst_mac); break;
		case 's': bad |= xt_parse_ip(optarg, &o->src_ip); break;
		case 'd': bad |= xt_parse_ip(optarg, &o->dst_ip); break;
		case 'b': bad |= xt_parse_ip(optarg, &o->bind_ip); break;
		case 'P': bad |= xt_parse_u32(optarg, &o->peer_qpn); break;
		case 'n': bad |= xt_parse_u32(optarg, &o->iters); break;
		default: usage();
		}
	}
	if (optind < argc)
		o->ifname = argv[optind++];
	if (bad || optind != argc || !o->duration || o->duration > 60 || o->port > 65535)
		usage();
}

static void report(uint64_t frames, uint64_t t0, uint64_t t1)
{
	double secs = frames > 1 ? (double)(t1 - t0) / 1e9 : 0;

	printf("RESULT frames %llu seconds %.3f rate %.0f\n", (unsigned long long)frames, secs,
	       secs > 0 ? (double)(frames - 1) / secs : 0.0);
}

/* --- AF_XDP ------------------------------------------------------------------- */

/*
 * The frames @ifname's MTU lets through, when an IB MTU past what one UMEM chunk holds
 * fits the link: the HAL then takes them as AF_XDP multi-buffer, by the rule
 * blue_open_device follows (runtime/netdev.c), else 0 (one chunk per frame).
 */
static uint32_t link_max_pkt(const char *ifname)
{
	uint32_t mtu = 0;
	uint8_t mac[6];

	if (blue__netdev_l2(ifname, mac, &mtu))
		return 0;
	return blue__mtu_for(2 * 4096, mtu) > blue__mtu_for(4096, mtu) ? mtu + BLUE_ETH_HLEN : 0;
}

/*
 * The HAL on o->ifname with one socket bound to o->qpn, its QP context in RTS (the state
 * the XDP program steers by), or NULL after a message.
 */
static struct blue_hal *open_bound(const struct opts *o, struct blue_hal_sock **s,
				   struct blue_qp_ctx **tbl)
{
	struct blue_afxdp_config cfg = { .ifname = o->ifname,
					  .max_pkt = link_max_pkt(o->ifname) };
	struct blue_hal *h = blue_hal_afxdp_open(&cfg);
	int err;

	if (!h)
		return NULL;
	err = blue_hal_sock_open(h, s);
	if (!err)
		err = blue_hal_flow_bind(*s, o->qpn);
	if (err) {
		fprintf(stderr, "hal_rate: socket/bind: %s\n", strerror(-err));
		blue_hal_destroy(h);
		return NULL;
	}
	*tbl = blue_hal_qp_ctx_table(h);
	(*tbl)[blue_qpn_slot(o->qpn)].pkey = BLUE_DEFAULT_PKEY;	/* the runtime's pkey_index 0 */
	__atomic_store_n(&(*tbl)[blue_qpn_slot(o->qpn)].state, BLUE_QPS_RTS, __ATOMIC_RELEASE);
	return h;
}

static int xsk_recv(const struct opts *o)
{
	struct blue_frame f[BURST];
	struct blue_hal_stats st;
	struct blue_hal_sock *s;
	struct blue_qp_ctx *tbl;
	uint64_t frames = 0, wrong = 0, t0 = 0, t_last = 0, now, deadline, t_c0;
	struct blue_hal *h;
	double c0;
	int n, i;

	if (!o->ifname || !o->qpn)
		usage();
	h = open_bound(o, &s, &tbl);
	if (!h)
		return 1;
	printf("hal_rate: %s mode\nREADY\n", blue_hal_afxdp_zerocopy(h) ? "zero-copy" : "copy");
	fflush(stdout);

	c0 = tool_cpu_s();
	t_c0 = tool_now_ns();
	deadline = t_c0 + (uint64_t)(o->duration + 5) * 1000000000ull;
	/* Busy-poll: the point is the HAL's best rate, one core per side. */
	for (;;) {
		n = blue_hal_rx_burst(s, f, BURST, 0);
		now = tool_now_ns();
		if (n > 0) {
			if (!frames)
				t0 = now;
			t_last = now;
			frames += (uint64_t)n;
			/* A cheap sanity check: the BTH dest QPN (fixed offsets, IHL 5). */
			for (i = 0; i < n; i++)
				if (f[i].len < ROCE_OVERHEAD || (((uint32_t)f[i].data[42 + 5] << 16 |
				    (uint32_t)f[i].data[42 + 6] << 8 | f[i].data[42 + 7]) != o->qpn))
					wrong++;
			blue_hal_rx_release(h, f, (unsigned int)n);
		} else if (n < 0) {
			fprintf(stderr, "hal_rate: rx_burst: %s\n", strerror(-n));
			break;
		}
		if (now > deadline || (frames && now - t_last > IDLE_NS))
			break;
	}
	report(frames, t0, t_last);
	printf("cpu_cores %.3f\n", tool_cpu_cores(c0, t_c0));
	blue_hal_get_stats(h, &st);
	printf("DROPS socket %llu\n", (unsigned long long)st.rx_dropped);
	if (wrong)
		fprintf(stderr, "hal_rate: %llu frames for another QPN\n", (unsigned long long)wrong);
	tbl[blue_qpn_slot(o->qpn)].state = BLUE_QPS_RESET;
	blue_hal_flow_unbind(h, o->qpn);
	blue_hal_destroy(h);
	return wrong ? 1 : 0;
}

/* A SEND Only frame of --size bytes to @dqpn, built once; returns its length or -1. */
static int build_template(const struct opts *o, uint32_t dqpn, uint8_t tmpl[MAX_FRAME])
{
	static uint8_t payload[MAX_FRAME];
	struct blue_pkt p;
	int len;

	if (o->size < ROCE_OVERHEAD || o->size > MAX_FRAME) {
		fprintf(stderr, "hal_rate: --size %u: %d..%d bytes\n", o->size, ROCE_OVERHEAD,
			MAX_FRAME);
		return -1;
	}
	blue_pkt_init(&p, BLUE_OP_RC_SEND_ONLY);
	memcpy(p.dst_mac, o->dst_mac, 6);
	memcpy(p.src_mac, o->src_mac, 6);
	p.saddr = o->src_ip;
	p.daddr = o->dst_ip;
	p.sport = blue_udp_sport(XT_SRC_QPN, dqpn);
	p.dqpn = dqpn;
	p.payload_len = (o->size - ROCE_OVERHEAD) & ~3u;
	xt_pattern_fill(payload, p.payload_len, dqpn, 0);
	p.payload = payload;
	len = blue_pkt_build(&p, tmpl, MAX_FRAME);
	if (len < 0)
		fprintf(stderr, "hal_rate: build: %s\n", strerror(-len));
	return len < 0 ? -1 : len;
}

static int xsk_send(const struct opts *o)
{
	struct blue_afxdp_config cfg = { .ifname = o->ifname, .tx_only = true,
					  .max_pkt = link_max_pkt(o->ifname) };
	static uint8_t tmpl[MAX_FRAME];
	struct blue_frame f[BURST];
	struct blue_hal_stats st;
	struct blue_hal_sock *s;
	struct blue_hal *h;
	uint64_t sent = 0, t0, t_end, now;
	double c0;
	int len, n, k, i, err;

	if (!o->ifname || !o->qpn)
		usage();
	len = build_template(o, o->qpn, tmpl);
	if (len < 0)
		return 1;
	h = blue_hal_afxdp_open(&cfg);
	if (!h)
		return 1;
	err = blue_hal_sock_open(h, &s);
	if (err) {
		fprintf(stderr, "hal_rate: socket: %s\n", strerror(-err));
		blue_hal_destroy(h);
		return 1;
	}
	printf("hal_rate: sending %d-byte frames\n", len);
	c0 = tool_cpu_s();
	t0 = tool_now_ns();
	now = t0;
	t_end = t0 + (uint64_t)o->duration * 1000000000ull;
	do {
		n = blue_hal_tx_alloc(h, f, BURST);
		for (i = 0; i < n; i++) {
			memcpy(f[i].data, tmpl, (size_t)len);
			f[i].len = (uint32_t)len;
		}
		k = n > 0 ? blue_hal_tx_submit(s, f, (unsigned int)n) : 0;
		if (k < 0)
			k = 0;
		if (k < n)
			blue_hal_tx_free(h, f + k, (unsigned int)(n - k));
		sent += (uint64_t)k;
		err = blue_hal_tx_flush(s);
		if (err && err != -EAGAIN) {
			fprintf(stderr, "hal_rate: tx_flush: %s\n", strerror(-err));
			break;
		}
		now = tool_now_ns();
	} while (now < t_end);
	/* Hand the last frames to the kernel too, so "sent" means sent (bounded). */
	t_end = now + 1000000000ull;
	while (blue_hal_tx_flush(s) == -EAGAIN && tool_now_ns() < t_end)
		;
	blue_hal_get_stats(h, &st);
	printf("SENT frames %llu seconds %.3f rate %.0f kicks %llu\n", (unsigned long long)sent,
	       (double)(now - t0) / 1e9, (double)sent * 1e9 / (double)(now - t0),
	       (unsigned long long)st.tx_kicks);
	printf("cpu_cores %.3f\n", tool_cpu_cores(c0, t0));
	blue_hal_destroy(h);
	return 0;
}

/* --- AF_XDP ping-pong ---------------------------------------------------------- */

/* Queue one copy of @tmpl and ring the doorbell. Return 0 or -1. */
static int send_one(struct blue_hal *h, struct blue_hal_sock *s, const uint8_t *tmpl,
		    int len)
{
	uint64_t dl = tool_now_ns() + 1000000000ull;
	struct blue_frame f;
	int err;

	while (blue_hal_tx_alloc(h, &f, 1) != 1) {
		blue_hal_tx_flush(s);	/* reaps completed frames back to the pool */
		if (tool_now_ns() > dl) {
			fprintf(stderr, "hal_rate: no TX frame for 1 s\n");
			return -1;
		}
	}
	memcpy(f.data, tmpl, (size_t)len);
	f.len = (uint32_t)len;
	if (blue_hal_tx_submit(s, &f, 1) != 1) {
		blue_hal_tx_free(h, &f, 1);
		fprintf(stderr, "hal_rate: TX ring full\n");
		return -1;
	}
	err = blue_hal_tx_flush(s);
	if (err && err != -EAGAIN) {
		fprintf(stderr, "hal_rate: tx_flush: %s\n", strerror(-err));
		return -1;
	}
	return 0;
}

static int xsk_pingpong(const struct opts *o, bool ping)
{
	static uint8_t tmpl[MAX_FRAME];
	struct blue_frame f[BURST];
	struct blue_hal_sock *s;
	struct blue_qp_ctx *tbl;
	struct blue_hal *h;
	uint64_t *rtt = NULL, t, t0, now, last, deadline, answered = 0;
	double c0;
	int len, n, rc = 1;

	if (!o->ifname || !o->qpn || !o->peer_qpn || (ping && !o->iters))
		usage();
	len = build_template(o, o->peer_qpn, tmpl);
	if (len < 0)
		return 1;
	if (ping && !(rtt = calloc(o->iters, sizeof(*rtt))))
		return 1;
	h = open_bound(o, &s, &tbl);
	if (!h) {
		free(rtt);
		return 1;
	}
	printf("READY\n");
	fflush(stdout);
	c0 = tool_cpu_s();
	t0 = last = tool_now_ns();
	deadline = t0 + (uint64_t)(o->duration + 5) * 1000000000ull;
	if (ping) {
		for (uint32_t i = 0; i < o->iters; i++) {
			t = tool_now_ns();
			if (send_one(h, s, tmpl, len))
				goto out;
			/* spin for the answer; 1 s without one means it was lost */
			while ((n = blue_hal_rx_burst(s, f, BURST, 0)) == 0)
				if (tool_now_ns() - t > 1000000000ull) {
					fprintf(stderr, "hal_rate: ping %u: no answer in 1 s\n", i);
					goto out;
				}
			now = tool_now_ns();
			if (n < 0) {
				fprintf(stderr, "hal_rate: rx_burst: %s\n", strerror(-n));
				goto out;
			}
			blue_hal_rx_release(h, f, (unsigned int)n);
			rtt[i] = now - t;
		}
		tool_print_rtt(rtt, o->iters);
		rc = 0;
	} else {
		/* answer until the pinger has been quiet for a second (or the bound) */
		for (;;) {
			n = blue_hal_rx_burst(s, f, BURST, 0);
			now = tool_now_ns();
			if (n < 0) {
				fprintf(stderr, "hal_rate: rx_burst: %s\n", strerror(-n));
				goto out;
			}
			if (n > 0) {
				blue_hal_rx_release(h, f, (unsigned int)n);
				for (int k = 0; k < n; k++)
					if (send_one(h, s, tmpl, len))
						goto out;
				answered += (uint64_t)n;
				last = now;
			}
			if (now > deadline || (answered && now - last > PONG_IDLE_NS))
				break;
		}
		printf("ANSWERED frames %llu\n", (unsigned long long)answered);
		rc = answered ? 0 : 1;
	}
	printf("cpu_cores %.3f\n", tool_cpu_cores(c0, t0));
out:
	tbl[blue_qpn_slot(o->qpn)].state = BLUE_QPS_RESET;
	blue_hal_flow_unbind(h, o->qpn);
	blue_hal_destroy(h);
	free(rtt);
	return rc;
}

/* --- UDP baseline ------------------------------------------------------------- */

static int udp_recv(const struct opts *o)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = o->bind_ip,
				 .sin_port = htons((uint16_t)o->port) };
	static uint8_t bufs[BURST][2048];
	struct mmsghdr m[BURST];
	struct iovec iov[BURST];
	uint64_t frames = 0, t0 = 0, t_last = 0, now, deadline;
	int fd, n, i, big = 32 << 20;

	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		perror("hal_rate: udp socket");
		return 1;
	}
	/* As deep a queue as the AF_XDP side has frames, so neither side loses for want of
	 * buffer while the other does not (SO_RCVBUFFORCE: we are root). */
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	for (i = 0; i < BURST; i++) {
		iov[i] = (struct iovec){ .iov_base = bufs[i], .iov_len = sizeof(bufs[i]) };
		m[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[i], .msg_iovlen = 1 } };
	}
	printf("READY\n");
	fflush(stdout);
	deadline = tool_now_ns() + (uint64_t)(o->duration + 5) * 1000000000ull;
	for (;;) {
		n = recvmmsg(fd, m, BURST, MSG_DONTWAIT, NULL);
		now = tool_now_ns();
		if (n > 0) {
			if (!frames)
				t0 = now;
			t_last = now;
			frames += (uint64_t)n;
		}
		if (now > deadline || (frames && now - t_last > IDLE_NS))
			break;
	}
	report(frames, t0, t_last);
	close(fd);
	return 0;
}

static int udp_send(const struct opts *o)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = o->dst_ip,
				 .sin_port = htons((uint16_t)o->port) };
	static uint8_t buf[2048];
	struct mmsghdr m[BURST];
	struct iovec iov;
	uint64_t sent = 0, t0, t_end, now;
	uint32_t roce_len, plen;
	int fd, n, i;

	if (o->size < ROCE_OVERHEAD || o->size > 1514)
		usage();
	/* The same frame length as the RoCE sender's. */
	roce_len = ROCE_OVERHEAD + ((o->size - ROCE_OVERHEAD) & ~3u);
	plen = roce_len - UDP_OVERHEAD;
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		perror("hal_rate: udp socket");
		return 1;
	}
	xt_pattern_fill(buf, plen, 0, 0);
	iov = (struct iovec){ .iov_base = buf, .iov_len = plen };
	for (i = 0; i < BURST; i++)
		m[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov, .msg_iovlen = 1 } };
	printf("hal_rate: sending %u-byte frames\n", roce_len);
	t0 = tool_now_ns();
	now = t0;
	t_end = t0 + (uint64_t)o->duration * 1000000000ull;
	do {
		n = sendmmsg(fd, m, BURST, 0);
		if (n > 0)
			sent += (uint64_t)n;
		else if (errno != ENOBUFS && errno != EAGAIN) {
			perror("hal_rate: sendmmsg");
			break;
		}
		now = tool_now_ns();
	} while (now < t_end);
	printf("SENT frames %llu seconds %.3f rate %.0f\n", (unsigned long long)sent,
	       (double)(now - t0) / 1e9, (double)sent * 1e9 / (double)(now - t0));
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;

	parse(argc, argv, &o);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(o.role, "xsk-recv"))
		return xsk_recv(&o);
	if (!strcmp(o.role, "xsk-send"))
		return xsk_send(&o);
	if (!strcmp(o.role, "xsk-ping"))
		return xsk_pingpong(&o, true);
	if (!strcmp(o.role, "xsk-pong"))
		return xsk_pingpong(&o, false);
	if (!strcmp(o.role, "udp-recv"))
		return udp_recv(&o);
	if (!strcmp(o.role, "udp-send"))
		return udp_send(&o);
	usage();
	return 2;
}
