// SPDX-License-Identifier: MIT
/*
 * rc_smoke: libblue's RC transport end to end over a real netdev (blue_open_device on
 * a netdev where `bluectl attach` has run), between two processes, normally in two
 * network namespaces joined by a veth pair.
 *
 *   rc_smoke server IFNAME [options]
 *   rc_smoke client IFNAME SERVER_IP [options]
 *   rc_smoke probe IFNAME [--peer IP]
 *     --port N        the connection manager's TCP port (default 18601)
 *     --timeout-ms N  bound on every wait (default 10000)
 *     --hold-file F   after the run, keep the QP up (still polling) until F exists
 *                     or --hold-ms passes, so a test can look at it
 *     --hold-ms N     (default 10000)
 *     --bench         also measure a 64 B SEND/RECV round trip and 1 MiB WRITEs
 *     --no-cm-mac     ignore the MAC the peer sent, so the kernel neighbour table (and
 *                     ARP, when it has no entry) must supply it
 *
 * probe opens the device and prints what it found (port MTU, GIDs), and with --peer
 * moves a QP to RTR toward IP, which needs the peer's MAC; then it closes everything.
 *
 * The exchange (QPN, PSN, GID, MAC, MTU and the server's MR) is blue's own CM. Then the
 * client does, at several sizes each: SEND (the server compares every received byte and
 * byte_len), RDMA WRITE (the server compares its memory, and that the bytes between the
 * written ranges are untouched), WRITE with immediate, RDMA READ (the client compares,
 * and that nothing past the end was written), Fetch&Add and Compare&Swap (hit and miss:
 * the returned original values, then the final word read back and checked by the
 * server too). Control messages are SENDs with immediate data naming what they are.
 *
 * Output: one line per checked step ("ok ..."), "FAIL ..." lines, "BENCH ..." figures,
 * "HOLD qpn 0x.." when it holds, and "RESULT PASS" / "RESULT FAIL" last.
 * Exit 0 only when every check passed on this side (and, for the client, the server
 * reported that its own checks passed).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/stat.h>

#include <blue/blue.h>

/* The server's MR: the WRITE target, the READ source and the atomic word. */
#define W_OFF		0u
#define W_LEN		(2u << 20)
#define R_OFF		W_LEN
#define R_LEN		(2u << 20)
#define ATOM_OFF	(R_OFF + R_LEN)
#define SRV_MEM		(ATOM_OFF + 4096u)

#define SLOT		65536u		/* one receive buffer */
#define NRECV		32u		/* receive WQEs kept posted */
#define CLI_MEM		(4u << 20)	/* the client's send/read buffer */
#define CQ_DEPTH	1024
#define ACCESS_ALL	(BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE | \
			 BLUE_ACCESS_REMOTE_READ | BLUE_ACCESS_REMOTE_ATOMIC)
#define SQ_DEPTH	256

/* SEND-with-immediate tags of the control messages. */
enum {
	IMM_CHECK_WRITES = 0xb1000001,	/* client -> server: verify the WRITE ranges */
	IMM_DONE = 0xb1000002,		/* client -> server: verify the atomic word, finish */
	IMM_PING = 0xb1000003,		/* client -> server: echo this back */
	IMM_PONG = 0xb1000004,
	IMM_RESULT = 0xb1000005,	/* server -> client: "ok" or what failed */
	IMM_WRITE_IMM = 0xb1000006,	/* the immediate of the WRITE with immediate */
};

static const uint32_t send_sizes[] = { 0, 1, 64, 1023, 1024, 1025, 4096, 65536 };
static const uint32_t write_sizes[] = { 1, 64, 1024, 1025, 4097, 65536, 1u << 20 };
static const uint32_t read_sizes[] = { 1, 64, 1024, 1025, 4097, 65536, 1u << 20 };
#define NSEND	(sizeof(send_sizes) / sizeof(send_sizes[0]))
#define NWRITE	(sizeof(write_sizes) / sizeof(write_sizes[0]))
#define NREAD	(sizeof(read_sizes) / sizeof(read_sizes[0]))
#define WIMM_LEN	4096u
#define GAP		7u	/* bytes left untouched between WRITE/READ ranges */

#define ATOM_INIT	0x0123456789abcdefull
#define ATOM_ADD1	0x1111ull
#define ATOM_SWAP	0xfeedface00c0ffeeull
#define ATOM_FINAL	(ATOM_SWAP + 1)

#define SEED_SEND	0x10
#define SEED_WRITE	0x40
#define SEED_WIMM	0x70
#define SEED_READ	0x90

struct opts {
	bool server;
	const char *ifname;
	const char *host;
	unsigned int port;
	int timeout_ms;
	const char *hold_file;
	int hold_ms;
	bool bench;
	bool no_cm_mac;
	bool probe;
	const char *peer;
};

struct side {
	const struct opts *o;
	struct blue_context *ctx;
	struct blue_pd *pd;
	struct blue_cq *cq;
	struct blue_qp *qp;
	uint8_t *mem;		/* server: SRV_MEM; client: CLI_MEM */
	size_t mem_len;
	struct blue_mr *mr;
	uint8_t *rbuf;		/* NRECV receive slots */
	struct blue_mr *rmr;
	struct blue_cm_info local, remote;
	unsigned int failures;
	/* completions taken off the CQ but not yet wanted */
	struct blue_wc pending[64];
	unsigned int npending;
};

/* A byte pattern that depends on the absolute offset and a seed, not periodic in 256. */
static uint8_t pat(uint64_t k, unsigned int seed)
{
	return (uint8_t)((k * 131u + seed * 17u + (k >> 8)) ^ (k >> 16) ^ seed);
}

static void fill(uint8_t *p, uint64_t base, uint32_t len, unsigned int seed)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = pat(base + i, seed);
}

/* First offset where @p differs from the pattern, or -1. */
static int64_t mismatch(const uint8_t *p, uint64_t base, uint32_t len, unsigned int seed)
{
	for (uint32_t i = 0; i < len; i++)
		if (p[i] != pat(base + i, seed))
			return i;
	return -1;
}

static void failf(struct side *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void failf(struct side *s, const char *fmt, ...)
{
	va_list ap;

	s->failures++;
	printf("FAIL ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* ---- posting and waiting ----------------------------------------------------------- */

static int post_recv_slot(struct side *s, unsigned int slot)
{
	struct blue_sge sge = {
		.addr = (uintptr_t)(s->rbuf + (size_t)slot * SLOT),
		.length = SLOT,
		.lkey = s->rmr->lkey,
	};
	struct blue_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	/* a fill byte after the data shows a receive that wrote too far */
	memset(s->rbuf + (size_t)slot * SLOT, 0xdd, SLOT);
	return blue_post_recv(s->qp, &wr, &bad);
}

static int post(struct side *s, enum blue_wr_opcode op, uint64_t wr_id, void *addr,
		uint32_t len, uint32_t imm, uint64_t raddr, uint32_t rkey, uint64_t cmp_add,
		uint64_t swap)
{
	struct blue_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = s->mr->lkey };
	struct blue_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = len ? 1 : 0,
		.opcode = op,
		.send_flags = BLUE_SEND_SIGNALED,
		.imm_data = htonl(imm),
	}, *bad;

	if (op == BLUE_WR_ATOMIC_CMP_AND_SWP || op == BLUE_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = cmp_add;
		wr.wr.atomic.swap = swap;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return blue_post_send(s->qp, &wr, &bad);
}

/*
 * The next completion that @want accepts (send completions: wr_id match; receive: any
 * receive), within the timeout; others seen meanwhile are kept for later calls.
 * Return: 0, or -1 after a FAIL line.
 */
static int wait_wc(struct side *s, bool recv, uint64_t wr_id, struct blue_wc *out,
		   const char *what)
{
	uint64_t deadline = now_us() + (uint64_t)s->o->timeout_ms * 1000u;
	struct blue_wc wc[16];
	unsigned int i;
	int n;

	for (;;) {
		for (i = 0; i < s->npending; i++) {
			struct blue_wc *w = &s->pending[i];
			bool is_recv = w->opcode & BLUE_WC_RECV;

			if (is_recv == recv && (recv || w->wr_id == wr_id)) {
				*out = *w;
				memmove(w, w + 1, (s->npending - i - 1) * sizeof(*w));
				s->npending--;
				if (out->status != BLUE_WC_SUCCESS) {
					failf(s, "%s: completion status %s (%d)", what,
					      blue_wc_status_str(out->status), out->status);
					return -1;
				}
				return 0;
			}
		}
		n = blue_poll_cq(s->cq, 16, wc);
		if (n < 0) {
			failf(s, "%s: poll_cq: %s", what, strerror(-n));
			return -1;
		}
		for (i = 0; i < (unsigned int)n; i++) {
			if (s->npending == sizeof(s->pending) / sizeof(s->pending[0])) {
				failf(s, "%s: more than %zu unexpected completions", what,
				      sizeof(s->pending) / sizeof(s->pending[0]));
				return -1;
			}
			s->pending[s->npending++] = wc[i];
		}
		if (!n && now_us() > deadline) {
			failf(s, "%s: no completion within %d ms", what, s->o->timeout_ms);
			return -1;
		}
	}
}

static int wait_send(struct side *s, uint64_t wr_id, const char *what)
{
	struct blue_wc wc;

	return wait_wc(s, false, wr_id, &wc, what);
}

/* ---- setup and teardown ------------------------------------------------------------ */

static int setup(struct side *s)
{
	struct blue_qp_init_attr qa = { 0 };
	struct blue_qp_attr ia = { 0 };
	unsigned int i;

	s->ctx = blue_open_device(s->o->ifname);
	if (!s->ctx) {
		printf("FAIL open_device %s: %s\n", s->o->ifname, strerror(errno));
		return -1;
	}
	s->pd = blue_alloc_pd(s->ctx);
	s->cq = s->pd ? blue_create_cq(s->ctx, CQ_DEPTH, NULL, NULL, 0) : NULL;
	s->mem_len = s->o->server ? SRV_MEM : CLI_MEM;
	s->mem = aligned_alloc(4096, s->mem_len);
	s->rbuf = aligned_alloc(4096, (size_t)NRECV * SLOT);
	if (!s->cq || !s->mem || !s->rbuf) {
		printf("FAIL setup: PD, CQ or buffers: %s\n", strerror(errno));
		return -1;
	}
	memset(s->mem, 0, s->mem_len);
	s->mr = blue_reg_mr(s->pd, s->mem, s->mem_len, ACCESS_ALL);
	s->rmr = blue_reg_mr(s->pd, s->rbuf, (size_t)NRECV * SLOT, BLUE_ACCESS_LOCAL_WRITE);
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	qa.qp_type = BLUE_QPT_RC;
	qa.cap.max_send_wr = SQ_DEPTH;
	qa.cap.max_recv_wr = NRECV;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	s->qp = (s->mr && s->rmr) ? blue_create_qp(s->pd, &qa) : NULL;
	if (!s->qp) {
		printf("FAIL setup: MR or QP: %s\n", strerror(errno));
		return -1;
	}
	/* INIT now, so the receives are posted before the peer can send (IBA 10.3.1) */
	ia.qp_state = BLUE_QPS_INIT;
	ia.port_num = 1;
	ia.qp_access_flags = ACCESS_ALL;
	if (blue_modify_qp(s->qp, &ia, BLUE_QP_STATE | BLUE_QP_PKEY_INDEX | BLUE_QP_PORT |
			   BLUE_QP_ACCESS_FLAGS)) {
		printf("FAIL modify_qp RESET -> INIT\n");
		return -1;
	}
	for (i = 0; i < NRECV; i++)
		if (post_recv_slot(s, i)) {
			printf("FAIL post_recv\n");
			return -1;
		}
	if (s->o->server) {
		fill(s->mem + R_OFF, 0, R_LEN, SEED_READ);
		memcpy(s->mem + ATOM_OFF, &(uint64_t){ ATOM_INIT }, 8);
	}
	return 0;
}

/* Everything in reverse; every call must succeed, so `qp list` is empty after. */
static void teardown(struct side *s)
{
	int err;

	if (s->qp && (err = blue_destroy_qp(s->qp)))
		failf(s, "destroy_qp: %s", strerror(err));
	if (s->mr && (err = blue_dereg_mr(s->mr)))
		failf(s, "dereg_mr: %s", strerror(err));
	if (s->rmr && (err = blue_dereg_mr(s->rmr)))
		failf(s, "dereg_mr: %s", strerror(err));
	if (s->cq && (err = blue_destroy_cq(s->cq)))
		failf(s, "destroy_cq: %s", strerror(err));
	if (s->pd && (err = blue_dealloc_pd(s->pd)))
		failf(s, "dealloc_pd: %s", strerror(err));
	if (s->ctx && (err = blue_close_device(s->ctx)))
		failf(s, "close_device: %s", strerror(err));
	free(s->mem);
	free(s->rbuf);
}

/* The CM: blue's own exchange over TCP, then both QPs to RTS. */
static int connect_peer(struct side *s)
{
	struct blue_cm_qp_attr qa;
	int fd, lfd, err;

	if (blue_cm_info_from_qp(s->ctx, s->qp, 1, &s->local)) {
		printf("FAIL cm info: %s\n", blue_cm_last_error());
		return -1;
	}
	if (s->o->server)
		blue_cm_info_set_mr(&s->local, s->mr);
	if (s->o->server) {
		lfd = blue_cm_listen(NULL, (uint16_t)s->o->port);
		if (lfd < 0) {
			printf("FAIL cm listen on port %u: %s\n", s->o->port, blue_cm_last_error());
			return -1;
		}
		printf("READY qpn 0x%06x port %u\n", blue_qp_num(s->qp), s->o->port);
		fflush(stdout);
		fd = blue_cm_accept(lfd, s->o->timeout_ms);
		close(lfd);
	} else {
		fd = blue_cm_connect(s->o->host, (uint16_t)s->o->port, s->o->timeout_ms);
	}
	if (fd < 0) {
		printf("FAIL cm connect/accept: %s\n", blue_cm_last_error());
		return -1;
	}
	err = blue_cm_exchange(fd, &s->local, &s->remote, s->o->timeout_ms);
	close(fd);
	if (err) {
		printf("FAIL cm exchange: %s\n", blue_cm_last_error());
		return -1;
	}
	if (s->o->no_cm_mac)
		memset(s->remote.mac, 0, sizeof(s->remote.mac));
	if (!s->o->server && !s->remote.has_mr) {
		printf("FAIL cm exchange: the server sent no MR\n");
		return -1;
	}
	blue_cm_qp_attr_default(&qa);
	qa.access = ACCESS_ALL;	/* only used from RESET: the QP is in INIT already */
	qa.max_rd_atomic = 4;
	qa.max_dest_rd_atomic = 4;
	if (blue_cm_connect_qp(s->ctx, s->qp, s->local.psn, &s->remote, &qa)) {
		printf("FAIL connect_qp: %s\n", blue_cm_last_error());
		return -1;
	}
	printf("ok connected: local qpn 0x%06x psn 0x%06x, peer qpn 0x%06x psn 0x%06x, "
	       "mtu %d\n", s->local.qpn, s->local.psn, s->remote.qpn, s->remote.psn,
	       blue_mtu_bytes(s->remote.mtu));
	fflush(stdout);
	return 0;
}

/* ---- server ----------------------------------------------------------------------- */

/* Offsets of the WRITE (or READ) ranges: GAP bytes apart, the first one odd. */
static uint32_t range_off(const uint32_t *sizes, unsigned int i)
{
	uint32_t off = 1;

	for (unsigned int k = 0; k < i; k++)
		off += sizes[k] + GAP;
	return off;
}

static const char *check_writes(struct side *s, char *why, size_t len)
{
	const uint8_t *w = s->mem + W_OFF;
	uint32_t off, end_all = range_off(write_sizes, NWRITE);
	int64_t bad;

	for (unsigned int i = 0; i < NWRITE; i++) {
		off = range_off(write_sizes, i);
		bad = mismatch(w + off, off, write_sizes[i], SEED_WRITE + i);
		if (bad >= 0) {
			snprintf(why, len, "WRITE of %u bytes: byte %" PRId64 " differs",
				 write_sizes[i], bad);
			return why;
		}
		for (uint32_t g = 0; g < GAP; g++)
			if (w[off + write_sizes[i] + g]) {
				snprintf(why, len, "WRITE of %u bytes wrote past its end",
					 write_sizes[i]);
				return why;
			}
	}
	if (w[0]) {
		snprintf(why, len, "byte 0 before the first WRITE was written");
		return why;
	}
	/* the WRITE with immediate went after the others */
	bad = mismatch(w + end_all, end_all, WIMM_LEN, SEED_WIMM);
	if (bad >= 0) {
		snprintf(why, len, "WRITE with immediate: byte %" PRId64 " differs", bad);
		return why;
	}
	return NULL;
}

static int reply(struct side *s, uint32_t imm, const char *text, uint64_t wr_id)
{
	size_t n = strlen(text) + 1;

	memcpy(s->mem + ATOM_OFF + 64, text, n);	/* a spare corner of the MR */
	return post(s, BLUE_WR_SEND_WITH_IMM, wr_id, s->mem + ATOM_OFF + 64, (uint32_t)n, imm,
		    0, 0, 0, 0);
}

static bool hold_released(const struct opts *o)
{
	struct stat st;

	return o->hold_file && stat(o->hold_file, &st) == 0;
}

static int run_server(struct side *s)
{
	unsigned int nsend = 0, npong = 0;
	uint64_t reply_id = 1000;
	bool done = false;
	char why[160];

	while (!done) {
		struct blue_wc wc;
		const uint8_t *buf;
		uint32_t imm;
		const char *bad;

		if (wait_wc(s, true, 0, &wc, "server: receive"))
			return -1;
		buf = s->rbuf + (size_t)wc.wr_id * SLOT;
		imm = ntohl(wc.imm_data);
		if (wc.opcode == BLUE_WC_RECV_RDMA_WITH_IMM) {
			uint32_t off = range_off(write_sizes, NWRITE);

			if (!(wc.wc_flags & BLUE_WC_WITH_IMM) || imm != IMM_WRITE_IMM ||
			    wc.byte_len != WIMM_LEN)
				failf(s, "WRITE with immediate: flags %#x imm %#x byte_len %u",
				      wc.wc_flags, imm, wc.byte_len);
			else if (mismatch(s->mem + W_OFF + off, off, WIMM_LEN, SEED_WIMM) >= 0)
				failf(s, "WRITE with immediate: data not there at its completion");
			else
				printf("ok write_imm %u bytes, imm 0x%08x\n", wc.byte_len, imm);
		} else if (!(wc.wc_flags & BLUE_WC_WITH_IMM)) {
			/* a data SEND: the client sends send_sizes[] in order */
			uint32_t size = nsend < NSEND ? send_sizes[nsend] : 0;
			int64_t m;

			if (nsend >= NSEND) {
				failf(s, "unexpected SEND of %u bytes", wc.byte_len);
			} else if (wc.byte_len != size) {
				failf(s, "SEND #%u: byte_len %u, want %u", nsend, wc.byte_len, size);
			} else if ((m = mismatch(buf, 0, size, SEED_SEND + nsend)) >= 0) {
				failf(s, "SEND of %u bytes: byte %" PRId64 " differs", size, m);
			} else if (size < SLOT && buf[size] != 0xdd) {
				failf(s, "SEND of %u bytes wrote past its end", size);
			} else {
				printf("ok send %u bytes\n", size);
			}
			nsend++;
		} else if (imm == IMM_CHECK_WRITES) {
			bad = check_writes(s, why, sizeof(why));
			if (bad)
				failf(s, "%s", bad);
			else
				printf("ok write ranges verified (%zu sizes, gaps untouched)\n",
				       NWRITE);
			if (reply(s, IMM_RESULT, bad ? bad : "ok", reply_id) ||
			    wait_send(s, reply_id++, "server: result"))
				return -1;
		} else if (imm == IMM_PING) {
			/* echo the 64 bytes back from the receive slot */
			memcpy(s->mem + ATOM_OFF + 256, buf, 64);
			if (post(s, BLUE_WR_SEND_WITH_IMM, reply_id, s->mem + ATOM_OFF + 256,
				 wc.byte_len, IMM_PONG, 0, 0, 0, 0) ||
			    wait_send(s, reply_id++, "server: pong"))
				return -1;
			npong++;
		} else if (imm == IMM_DONE) {
			uint64_t v;

			memcpy(&v, s->mem + ATOM_OFF, 8);
			if (nsend != NSEND)
				failf(s, "%u SENDs arrived, want %zu", nsend, NSEND);
			if (v != ATOM_FINAL) {
				snprintf(why, sizeof(why), "atomic word 0x%016" PRIx64 ", want "
					 "0x%016llx", v, ATOM_FINAL);
				failf(s, "%s", why);
			} else {
				printf("ok atomic word 0x%016" PRIx64 " after FA, CAS hit, CAS miss, "
				       "FA\n", v);
			}
			snprintf(why, sizeof(why), "%s", s->failures ? "server checks failed" : "ok");
			if (reply(s, IMM_RESULT, why, reply_id) ||
			    wait_send(s, reply_id++, "server: final result"))
				return -1;
			done = true;
		} else {
			failf(s, "unknown control message 0x%08x", imm);
		}
		if (post_recv_slot(s, (unsigned int)wc.wr_id)) {
			failf(s, "post_recv");
			return -1;
		}
	}
	if (npong)
		printf("ok echoed %u pings\n", npong);
	return 0;
}

/* Keep the QP live (and answering) until the hold file appears, bounded. */
static void hold(struct side *s)
{
	uint64_t end = now_us() + (uint64_t)s->o->hold_ms * 1000u;
	struct blue_wc wc;

	printf("HOLD qpn 0x%06x\n", blue_qp_num(s->qp));
	fflush(stdout);
	while (s->o->hold_file && !hold_released(s->o) && now_us() < end) {
		if (blue_poll_cq(s->cq, 1, &wc) < 0)
			break;
		usleep(1000);
	}
}

/* ---- client ----------------------------------------------------------------------- */

/* The server's answer to a control message: "ok" or its reason. */
static int server_result(struct side *s, const char *what)
{
	struct blue_wc wc;
	const char *text;

	if (wait_wc(s, true, 0, &wc, what))
		return -1;
	text = (const char *)s->rbuf + (size_t)wc.wr_id * SLOT;
	if (!(wc.wc_flags & BLUE_WC_WITH_IMM) || ntohl(wc.imm_data) != IMM_RESULT ||
	    !wc.byte_len || text[wc.byte_len - 1]) {
		failf(s, "%s: not a result message", what);
		return -1;
	}
	if (strcmp(text, "ok")) {
		failf(s, "%s: the server says: %s", what, text);
		post_recv_slot(s, (unsigned int)wc.wr_id);
		return -1;
	}
	return post_recv_slot(s, (unsigned int)wc.wr_id);
}

static int client_sends(struct side *s)
{
	uint64_t off = 0;
	unsigned int i;

	/* all posted at once, each from its own range, then every completion */
	for (i = 0; i < NSEND; i++) {
		fill(s->mem + off, 0, send_sizes[i], SEED_SEND + i);
		if (post(s, BLUE_WR_SEND, 100 + i, s->mem + off, send_sizes[i], 0, 0, 0, 0, 0)) {
			failf(s, "post SEND of %u bytes", send_sizes[i]);
			return -1;
		}
		off += send_sizes[i] + 64;
	}
	for (i = 0; i < NSEND; i++) {
		if (wait_send(s, 100 + i, "SEND"))
			return -1;
		printf("ok send %u bytes completed\n", send_sizes[i]);
	}
	return 0;
}

static int client_writes(struct side *s)
{
	uint64_t raddr = s->remote.mr.addr + W_OFF;
	uint32_t rkey = s->remote.mr.rkey, off, src = 0;
	unsigned int i;

	for (i = 0; i < NWRITE; i++) {
		off = range_off(write_sizes, i);
		fill(s->mem + src, off, write_sizes[i], SEED_WRITE + i);
		if (post(s, BLUE_WR_RDMA_WRITE, 200 + i, s->mem + src, write_sizes[i], 0,
			 raddr + off, rkey, 0, 0)) {
			failf(s, "post WRITE of %u bytes", write_sizes[i]);
			return -1;
		}
		src += write_sizes[i];
	}
	off = range_off(write_sizes, NWRITE);
	fill(s->mem + src, off, WIMM_LEN, SEED_WIMM);
	if (post(s, BLUE_WR_RDMA_WRITE_WITH_IMM, 299, s->mem + src, WIMM_LEN, IMM_WRITE_IMM,
		 raddr + off, rkey, 0, 0)) {
		failf(s, "post WRITE with immediate");
		return -1;
	}
	for (i = 0; i < NWRITE; i++) {
		if (wait_send(s, 200 + i, "WRITE"))
			return -1;
		printf("ok write %u bytes completed\n", write_sizes[i]);
	}
	if (wait_send(s, 299, "WRITE with immediate"))
		return -1;
	/* RC delivers in order: the server sees this after every WRITE landed */
	if (post(s, BLUE_WR_SEND_WITH_IMM, 300, s->mem, 0, IMM_CHECK_WRITES, 0, 0, 0, 0) ||
	    wait_send(s, 300, "check-writes message") ||
	    server_result(s, "server's check of the WRITEs"))
		return -1;
	printf("ok write verified by the server\n");
	return 0;
}

static int client_reads(struct side *s)
{
	uint64_t raddr = s->remote.mr.addr + R_OFF;
	uint32_t rkey = s->remote.mr.rkey, off, dst = 0;
	unsigned int i;
	int64_t bad;

	/* destinations back to back with a guard byte after each */
	memset(s->mem, 0xee, CLI_MEM);
	for (i = 0; i < NREAD; i++) {
		off = range_off(read_sizes, i);
		if (post(s, BLUE_WR_RDMA_READ, 400 + i, s->mem + dst, read_sizes[i], 0,
			 raddr + off, rkey, 0, 0)) {
			failf(s, "post READ of %u bytes", read_sizes[i]);
			return -1;
		}
		dst += read_sizes[i] + 1;
	}
	dst = 0;
	for (i = 0; i < NREAD; i++) {
		if (wait_send(s, 400 + i, "READ"))
			return -1;
		off = range_off(read_sizes, i);
		bad = mismatch(s->mem + dst, off, read_sizes[i], SEED_READ);
		if (bad >= 0)
			failf(s, "READ of %u bytes: byte %" PRId64 " differs", read_sizes[i], bad);
		else if (s->mem[dst + read_sizes[i]] != 0xee)
			failf(s, "READ of %u bytes wrote past its end", read_sizes[i]);
		else
			printf("ok read %u bytes\n", read_sizes[i]);
		dst += read_sizes[i] + 1;
	}
	return 0;
}

static int atomic_step(struct side *s, enum blue_wr_opcode op, uint64_t cmp_add,
		       uint64_t swap, uint64_t want, const char *what)
{
	uint64_t got, *res = (uint64_t *)(s->mem + 8192);

	*res = 0x5a5a5a5a5a5a5a5aull;
	if (post(s, op, 500, res, 8, 0, s->remote.mr.addr + ATOM_OFF, s->remote.mr.rkey,
		 cmp_add, swap) || wait_send(s, 500, what))
		return -1;
	got = *res;
	if (got != want) {
		failf(s, "%s: returned 0x%016" PRIx64 ", want 0x%016" PRIx64, what, got, want);
		return -1;
	}
	printf("ok %s returned 0x%016" PRIx64 "\n", what, got);
	return 0;
}

static int client_atomics(struct side *s)
{
	uint64_t *word = (uint64_t *)(s->mem + 16384);

	if (atomic_step(s, BLUE_WR_ATOMIC_FETCH_AND_ADD, ATOM_ADD1, 0, ATOM_INIT,
			"fetch_add") ||
	    atomic_step(s, BLUE_WR_ATOMIC_CMP_AND_SWP, ATOM_INIT + ATOM_ADD1, ATOM_SWAP,
			ATOM_INIT + ATOM_ADD1, "cmp_swap (equal: swaps)") ||
	    atomic_step(s, BLUE_WR_ATOMIC_CMP_AND_SWP, 42, 1, ATOM_SWAP,
			"cmp_swap (differs: no swap)") ||
	    atomic_step(s, BLUE_WR_ATOMIC_FETCH_AND_ADD, 1, 0, ATOM_SWAP, "fetch_add 1"))
		return -1;
	*word = 0;
	if (post(s, BLUE_WR_RDMA_READ, 501, word, 8, 0, s->remote.mr.addr + ATOM_OFF,
		 s->remote.mr.rkey, 0, 0) || wait_send(s, 501, "READ of the atomic word"))
		return -1;
	if (*word != ATOM_FINAL) {
		failf(s, "atomic word reads 0x%016" PRIx64 ", want 0x%016llx", *word, ATOM_FINAL);
		return -1;
	}
	printf("ok atomic word reads 0x%016" PRIx64 "\n", *word);
	return 0;
}

/* 64 B SEND/RECV round trips, and 1 MiB WRITEs with 4 in flight. */
static int client_bench(struct side *s)
{
	const unsigned int iters = 2000, nwrites = 256, depth = 4;
	uint64_t t0, t1, bytes;
	unsigned int i, posted = 0, done = 0;
	struct blue_wc wc;

	fill(s->mem, 0, 64, 1);
	t0 = now_us();
	for (i = 0; i < iters; i++) {
		if (post(s, BLUE_WR_SEND_WITH_IMM, 600, s->mem, 64, IMM_PING, 0, 0, 0, 0) ||
		    wait_send(s, 600, "ping") || wait_wc(s, true, 0, &wc, "pong"))
			return -1;
		if (ntohl(wc.imm_data) != IMM_PONG || wc.byte_len != 64 ||
		    memcmp(s->rbuf + (size_t)wc.wr_id * SLOT, s->mem, 64)) {
			failf(s, "pong %u: not the ping echoed", i);
			return -1;
		}
		if (post_recv_slot(s, (unsigned int)wc.wr_id))
			return -1;
	}
	t1 = now_us();
	printf("BENCH send_recv_64B_rtt_us %.2f (%u round trips)\n",
	       (double)(t1 - t0) / iters, iters);

	t0 = now_us();
	while (done < nwrites) {
		while (posted < nwrites && posted - done < depth) {
			if (post(s, BLUE_WR_RDMA_WRITE, 700 + posted, s->mem, 1u << 20, 0,
				 s->remote.mr.addr + W_OFF, s->remote.mr.rkey, 0, 0))
				return -1;
			posted++;
		}
		if (wait_send(s, 700 + done, "bench WRITE"))
			return -1;
		done++;
	}
	t1 = now_us();
	bytes = (uint64_t)nwrites << 20;
	printf("BENCH write_1MiB_gbit_s %.2f (%u x 1 MiB in %.3f s)\n",
	       (double)bytes * 8 / (double)(t1 - t0) / 1000.0, nwrites,
	       (double)(t1 - t0) / 1e6);
	return 0;
}

static int run_client(struct side *s)
{
	if (client_sends(s) || client_writes(s) || client_reads(s) || client_atomics(s))
		return -1;
	if (s->o->bench && client_bench(s))
		return -1;
	if (post(s, BLUE_WR_SEND_WITH_IMM, 800, s->mem, 0, IMM_DONE, 0, 0, 0, 0) ||
	    wait_send(s, 800, "done message") || server_result(s, "server's final checks"))
		return -1;
	printf("ok server's final checks passed\n");
	return 0;
}

/* ---- probe ------------------------------------------------------------------------ */

static void print_gid(const char *what, const union blue_gid *g)
{
	char buf[INET6_ADDRSTRLEN];

	printf(" %s %s", what, inet_ntop(AF_INET6, g->raw, buf, sizeof(buf)));
}

static int run_probe(struct side *s)
{
	struct blue_port_attr port;
	union blue_gid g0, g1;
	struct blue_qp_attr a = { 0 };
	struct in_addr ip;
	int err;

	if (blue_query_port(s->ctx, 1, &port) || blue_query_gid(s->ctx, 1, 0, &g0) ||
	    blue_query_gid(s->ctx, 1, 1, &g1)) {
		failf(s, "query_port/query_gid");
		return -1;
	}
	printf("device %s active_mtu %d max_mtu %d gid_tbl_len %d", s->o->ifname,
	       blue_mtu_bytes(port.active_mtu), blue_mtu_bytes(port.max_mtu), port.gid_tbl_len);
	print_gid("gid0", &g0);
	print_gid("gid1", &g1);
	printf("\n");
	if (!s->o->peer)
		return 0;
	if (inet_pton(AF_INET, s->o->peer, &ip) != 1) {
		failf(s, "--peer %s is not an IPv4 address", s->o->peer);
		return -1;
	}
	a.qp_state = BLUE_QPS_RTR;
	a.path_mtu = port.active_mtu;
	a.dest_qp_num = 0x123456;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.dgid.raw[10] = 0xff;
	a.ah_attr.dgid.raw[11] = 0xff;
	memcpy(a.ah_attr.dgid.raw + 12, &ip, 4);
	a.ah_attr.sgid_index = 1;
	a.ah_attr.port_num = 1;
	err = blue_modify_qp(s->qp, &a, BLUE_QP_STATE | BLUE_QP_AV | BLUE_QP_PATH_MTU |
			     BLUE_QP_DEST_QPN | BLUE_QP_RQ_PSN | BLUE_QP_MAX_DEST_RD_ATOMIC |
			     BLUE_QP_MIN_RNR_TIMER);
	if (err) {
		failf(s, "INIT -> RTR toward %s: %s", s->o->peer, strerror(err));
		return -1;
	}
	printf("ok rtr toward %s\n", s->o->peer);
	return 0;
}

/* ---- main ------------------------------------------------------------------------- */

static int usage(void)
{
	fprintf(stderr, "usage: rc_smoke server IFNAME [--port N] [--timeout-ms N] "
		"[--hold-file F] [--hold-ms N] [--bench]\n"
		"       rc_smoke client IFNAME SERVER_IP [--port N] [--timeout-ms N] [--bench]\n"
		"                       [--no-cm-mac] [--hold-file F] [--hold-ms N]\n"
		"       rc_smoke probe IFNAME [--peer IP]\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct opts o = { .port = 18601, .timeout_ms = 10000, .hold_ms = 10000 };
	struct side s = { .o = &o };
	int i, rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3)
		return usage();
	if (!strcmp(argv[1], "server"))
		o.server = true;
	else if (!strcmp(argv[1], "probe"))
		o.probe = true;
	else if (strcmp(argv[1], "client"))
		return usage();
	o.ifname = argv[2];
	i = 3;
	if (!o.server && !o.probe) {
		if (argc < 4)
			return usage();
		o.host = argv[i++];
	}
	for (; i < argc; i++) {
		if (!strcmp(argv[i], "--bench"))
			o.bench = true;
		else if (!strcmp(argv[i], "--no-cm-mac"))
			o.no_cm_mac = true;
		else if (i + 1 >= argc)
			return usage();
		else if (!strcmp(argv[i], "--port"))
			o.port = (unsigned int)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--timeout-ms"))
			o.timeout_ms = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--hold-file"))
			o.hold_file = argv[++i];
		else if (!strcmp(argv[i], "--peer"))
			o.peer = argv[++i];
		else if (!strcmp(argv[i], "--hold-ms"))
			o.hold_ms = atoi(argv[++i]);
		else
			return usage();
	}
	if (!o.port || o.port > 65535 || o.timeout_ms <= 0 || o.hold_ms < 0)
		return usage();

	rc = setup(&s);
	if (!rc && o.probe)
		rc = run_probe(&s);
	else if (!rc)
		rc = connect_peer(&s);
	if (!rc && !o.probe)
		rc = o.server ? run_server(&s) : run_client(&s);
	if (!rc && !o.probe && (o.server || o.hold_file))
		hold(&s);
	teardown(&s);
	rc = rc || s.failures ? 1 : 0;
	printf("RESULT %s\n", rc ? "FAIL" : "PASS");
	return rc;
}
