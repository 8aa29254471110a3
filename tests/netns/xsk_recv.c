// SPDX-License-Identifier: MIT
/*
 * xsk_recv: receive steered RoCEv2 frames through the AF_XDP HAL and check them.
 * Stands in for the runtime: opens one socket per QPN, binds each QPN to its socket and
 * moves it to RTS itself (the HAL never writes state).
 *
 *   xsk_recv IFNAME --qpns Q1,Q2,.. --count N [--payload BYTES] [--timeout-ms T]
 *
 * Prints "READY" once every QPN is bound, then receives until each socket has N frames
 * or T ms (default 5000) pass, plus a short grace period to catch extra frames. Every
 * frame must parse with a valid ICRC (runtime codec), carry its socket's QPN, a PSN in
 * 0..N-1 not seen before, and the xt_pattern payload. Prints one line per QPN; exit 0
 * only if each socket got exactly its N frames and nothing else.
 */
#include <getopt.h>
#include <signal.h>
#include <unistd.h>

#include "afxdp_hal/hal.h"
#include "runtime/codec.h"
#include "tests/netns/xsk_common.h"

#define MAX_QPNS	BLUE_MAX_XSK
#define BURST		64
#define GRACE_MS	300

struct qp_rx {
	uint32_t qpn;
	struct blue_hal_sock *s;
	uint8_t *seen;		/* per PSN */
	uint64_t good, dup, wrong_qpn, bad_psn, bad_parse, bad_payload;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(void)
{
	fprintf(stderr, "usage: xsk_recv IFNAME --qpns Q1,Q2,.. --count N [--payload BYTES] "
		"[--timeout-ms T]\n");
	exit(2);
}

static void check_frame(struct qp_rx *q, const struct blue_frame *f, uint32_t count,
			uint32_t payload)
{
	struct blue_pkt p;
	long off;

	if (blue_pkt_parse(f->data, f->len, &p) || p.opcode != BLUE_OP_RC_SEND_ONLY) {
		if (q->bad_parse++ < 3)
			fprintf(stderr, "xsk_recv: QPN %#x: frame of %u bytes does not parse: %s\n",
				q->qpn, f->len, blue_parse_err_name(p.parse_err));
		return;
	}
	if (p.dqpn != q->qpn) {
		if (q->wrong_qpn++ < 3)
			fprintf(stderr, "xsk_recv: socket of QPN %#x got a frame for QPN %#x\n",
				q->qpn, p.dqpn);
		return;
	}
	if (p.psn >= count) {
		q->bad_psn++;
		return;
	}
	off = p.payload_len == payload ? xt_pattern_check(p.payload, payload, p.dqpn, p.psn) : 0;
	if (off >= 0) {
		if (q->bad_payload++ < 3)
			fprintf(stderr, "xsk_recv: QPN %#x PSN %u: payload (%u bytes) differs at "
				"byte %ld\n", q->qpn, p.psn, p.payload_len, off);
		return;
	}
	if (q->seen[p.psn]) {
		q->dup++;
		return;
	}
	q->seen[p.psn] = 1;
	q->good++;
}

static bool all_done(const struct qp_rx *q, int n, uint32_t count)
{
	int i;

	for (i = 0; i < n; i++)
		if (q[i].good < count)
			return false;
	return true;
}

/*
 * One pass over every socket without waiting. When all were empty, sleep in the HAL's
 * own rx_burst (poll() on one socket, taking turns) for up to @sleep_ms: the way an
 * idle runtime waits, so that path is exercised too.
 */
static void receive_pass(struct blue_hal *h, struct qp_rx *q, int n, uint32_t count,
			 uint32_t payload, int sleep_ms)
{
	static unsigned int turn;
	struct blue_frame f[BURST];
	int i, j, got, total = 0;

	for (i = 0; i < n; i++) {
		got = blue_hal_rx_burst(q[i].s, f, BURST, 0);
		for (j = 0; j < got; j++)
			check_frame(&q[i], &f[j], count, payload);
		if (got > 0) {
			blue_hal_rx_release(h, f, (unsigned int)got);
			total += got;
		}
	}
	if (total || !sleep_ms)
		return;
	i = (int)(turn++ % (unsigned int)n);
	got = blue_hal_rx_burst(q[i].s, f, BURST, sleep_ms);
	for (j = 0; j < got; j++)
		check_frame(&q[i], &f[j], count, payload);
	if (got > 0)
		blue_hal_rx_release(h, f, (unsigned int)got);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "qpns", required_argument, NULL, 'q' },
		{ "count", required_argument, NULL, 'n' },
		{ "payload", required_argument, NULL, 'p' },
		{ "timeout-ms", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	struct blue_afxdp_config cfg = { 0 };
	uint32_t qpns[MAX_QPNS], count = 0, payload = 256, timeout_ms = 5000;
	struct qp_rx q[MAX_QPNS];
	struct blue_hal_stats st;
	struct blue_qp_ctx *tbl;
	struct blue_hal *h;
	uint64_t t_end;
	int c, i, n = 0, err, bad = 0, rc = 0;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'q': n = xt_parse_qpns(optarg, qpns, MAX_QPNS); bad |= n < 0; break;
		case 'n': bad |= xt_parse_u32(optarg, &count); break;
		case 'p': bad |= xt_parse_u32(optarg, &payload); break;
		case 't': bad |= xt_parse_u32(optarg, &timeout_ms); break;
		default: usage();
		}
	}
	if (bad || n <= 0 || !count || count > 1000000 || optind != argc - 1)
		usage();
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);

	cfg.ifname = argv[optind];
	h = blue_hal_afxdp_open(&cfg);
	if (!h)
		return 1;
	tbl = blue_hal_qp_ctx_table(h);
	memset(q, 0, sizeof(q));
	for (i = 0; i < n; i++) {
		q[i].qpn = qpns[i];
		q[i].seen = calloc(count, 1);
		if (!q[i].seen) {
			rc = 1;
			goto out;
		}
		err = blue_hal_sock_open(h, &q[i].s);
		if (!err)
			err = blue_hal_flow_bind(q[i].s, qpns[i]);
		if (err) {
			fprintf(stderr, "xsk_recv: QPN %#x: socket/bind: %s\n", qpns[i],
				strerror(-err));
			rc = 1;
			goto out;
		}
		/* The runtime's job, done here by hand: make the QP accept packets. */
		tbl[blue_qpn_slot(qpns[i])].type = BLUE_QPT_RC;
		tbl[blue_qpn_slot(qpns[i])].pkey = BLUE_DEFAULT_PKEY;
		__atomic_store_n(&tbl[blue_qpn_slot(qpns[i])].state, BLUE_QPS_RTS,
				 __ATOMIC_RELEASE);
	}
	printf("xsk_recv: %s, %s mode, %d sockets\nREADY\n", cfg.ifname,
	       blue_hal_afxdp_zerocopy(h) ? "zero-copy" : "copy", n);
	fflush(stdout);

	t_end = xt_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	while (!stop && !all_done(q, n, count) && xt_now_ns() < t_end)
		receive_pass(h, q, n, count, payload, 5);
	/* Anything more would be a duplicate or a stray: look for it a little longer. */
	t_end = xt_now_ns() + GRACE_MS * 1000000ull;
	while (!stop && xt_now_ns() < t_end)
		receive_pass(h, q, n, count, payload, 5);

	for (i = 0; i < n; i++) {
		bool ok = q[i].good == count && !q[i].dup && !q[i].wrong_qpn && !q[i].bad_psn &&
			  !q[i].bad_parse && !q[i].bad_payload;

		printf("qpn %#x socket %u: received %llu expected %u dup %llu wrong_qpn %llu "
		       "bad_psn %llu bad_parse %llu bad_payload %llu xdp_rx_pkts %llu %s\n",
		       q[i].qpn, q[i].s->slot, (unsigned long long)q[i].good, count,
		       (unsigned long long)q[i].dup, (unsigned long long)q[i].wrong_qpn,
		       (unsigned long long)q[i].bad_psn, (unsigned long long)q[i].bad_parse,
		       (unsigned long long)q[i].bad_payload,
		       (unsigned long long)tbl[blue_qpn_slot(q[i].qpn)].xdp_rx_pkts,
		       ok ? "OK" : "FAIL");
		if (!ok)
			rc = 1;
	}
	blue_hal_get_stats(h, &st);
	printf("xsk_recv: rx %llu frames, %llu poll sleeps, %llu dropped at the sockets\n",
	       (unsigned long long)st.rx_frames, (unsigned long long)st.rx_wakeups,
	       (unsigned long long)st.rx_dropped);
out:
	for (i = 0; i < n; i++) {
		if (q[i].s) {
			tbl[blue_qpn_slot(q[i].qpn)].state = BLUE_QPS_RESET;
			blue_hal_flow_unbind(h, q[i].qpn);
		}
		free(q[i].seen);
	}
	blue_hal_destroy(h);
	return rc;
}
