// SPDX-License-Identifier: MIT
/*
 * blue_xfer: a perftest-flavoured client/server that runs every RC operation over
 * libblue, through the public verbs and the connection manager, and checks the data
 * end to end.
 *
 *   server: blue_xfer -d IF [-p PORT] [--hold SEC]
 *   client: blue_xfer -d IF [-p PORT] [--qps N] [--op LIST] [--size LIST] [--iters N]
 *                     [--depth N] [--verify] [--progress] [--expect-peer-death] SERVER_IP
 *
 * One TCP connection carries everything besides the data: a HELLO (how many QPs, how
 * much memory each needs), one blue_cm_exchange_qp() per QP (QPN, PSN, GID, MAC and the
 * MR descriptor of that QP's region), then one ROUND per operation and size. Each side
 * registers one MR per QP. The client is always the requester, the server the
 * responder, and the client drives the rounds:
 *
 *   C: ROUND (op, size, iters, depth, QPs, slots, seed) -> S prepares: posts receives,
 *      zeroes the WRITE target, fills the READ source, sets the atomic targets
 *   S: READY (READ: CRC-32 of each source slot; atomics: each target's first value)
 *   C: runs the WRs on every QP at once, checking each completion
 *   C: DONE (what the server must find)  ->  S: VERDICT (what it found)
 *
 * What is checked (with --verify; atomics and completion status, order, opcode and
 * length are checked always):
 *  - SEND, SEND_IMM: every message is stamped per (round, QP, iteration) every 256 bytes
 *    and its CRC-32 folded into a per-QP chain, in order; the server computes the same
 *    chain over what it received (each receive buffer is poisoned before reuse), and
 *    the immediate of each message must be its index;
 *  - WRITE, WRITE_IMM: the CRC-32 of the last message written to each remote slot is
 *    announced; the server compares its memory; WRITE_IMM's immediates as for SEND;
 *  - READ: the server announces each source slot's CRC-32, the client poisons each
 *    destination before the READ and checks what arrived; the server checks its source
 *    is unchanged;
 *  - CAS, FAA: a chain of compare-and-swaps (each expects the previous one's swap) and
 *    fetch-and-adds of random addends: every returned original must be the exact value
 *    that single execution in order gives, and both sides check the final value, so an
 *    atomic executed twice or not at all fails;
 *  - completions: exactly one per signaled WR, in send-queue order, from the round that
 *    posted it (wr_id carries the round); after the last round the client drives the
 *    engine 200 ms more for late ones and prints "COMPLETIONS: N ... exactly one each".
 * The CRC is ISA-L's crc32_gzip_refl, which is zlib's crc32.
 *
 * Rounds at sizes up to --lat-max are followed by a latency round: one WR at a time on
 * the first QP; the figure is the time from post to completion (a round trip, since
 * every RC operation completes on its ACK or response).
 *
 * --expect-peer-death (client): the test kills the server mid-transfer. The client then
 * exits 0 only if, within --timeout, every QP reached ERROR with its oldest WR completed
 * as RETRY_EXC_ERR and every other WR (and one posted afterwards) as WR_FLUSH_ERR.
 *
 * --cc none|dcqcn|window offers only that congestion control to the peer (by default
 * every one built is offered and the CM picks DCQCN when both have it; the window runs
 * even against a peer that offers none).
 *
 * --retx sr offers selective retransmission to the peer (BLUE_CM_CAP_SELECTIVE_RETX); it
 * is used when both sides offer it, go-back-N otherwise. --timeout-us BASE,K arms this
 * side's ACK timer at BASE + K * (PSNs in flight) microseconds (blue_qp_set_retx()).
 *
 * --hold SEC: after the run, keep the QPs as they are (RTS; ERROR after a peer death)
 * until SIGUSR1, SIGINT or SIGTERM, at most SEC seconds, for `bluectl qp list`.
 *
 * --inject-mismatch (client, for tests): corrupt the first WR of QP 0 in each round
 * after its checksum or expected value was taken, so that every round must fail. It
 * proves the checks above can fail.
 *
 * Exit status: 0 when every check passed, 1 otherwise, 2 for a usage error. Every wait
 * is bounded by --timeout (default 30 s).
 */
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <isa-l/crc.h>

#include <blue/blue.h>
#include "tools/common/tool_common.h"

#define XFER_VERSION	1
#define XFER_MAGIC	0x42584631u	/* "BXF1" */
#define XFER_PORT	18516		/* next to rc_pingpong's 18515 */
#define MAX_SIZES	16
#define MAX_ROUNDS	256
#define MAX_MSG_LEN	(64u << 20)	/* control-message sanity bound */
#define SLOT_TABLE	4096		/* QPN low 12 bits name the slot: unique per device */
/* Data slots per side, shared by the QPs: keeps 256 QPs x 16 MiB in bounds. */
#define MEM_CAP		(64ull << 20)
/* The hard bound per side: one slot of the largest size per QP may exceed MEM_CAP. */
#define MEM_TOTAL	(4ull << 30)
#define STAMP_EVERY	256		/* bytes; every packet at any IB MTU gets stamps */
#define RD_ATOMIC	16		/* READs/atomics outstanding per QP (device max) */
#define CQ_MAX		65536
#define POLL_BATCH	64
#define PROGRESS_NS	250000000ull
#define EXIT_USAGE	2

/* ---- operations ------------------------------------------------------------- */

enum xop {
	XOP_SEND,
	XOP_SEND_IMM,
	XOP_WRITE,
	XOP_WRITE_IMM,
	XOP_READ,
	XOP_CAS,
	XOP_FAA,
	XOP__MAX
};

static const struct op_desc {
	const char *name;
	enum blue_wr_opcode wr;
	enum blue_wc_opcode wc;		/* the requester's completion opcode */
	enum blue_wc_opcode rwc;	/* the responder's, when it consumes a receive */
	bool recv;			/* consumes a receive WQE at the server */
	bool imm;
	bool atomic;
	bool rd;			/* bounded by max_rd_atomic (IBA 9.5) */
} ops[XOP__MAX] = {
	[XOP_SEND] = { "send", BLUE_WR_SEND, BLUE_WC_SEND, BLUE_WC_RECV, true, false,
		       false, false },
	[XOP_SEND_IMM] = { "send_imm", BLUE_WR_SEND_WITH_IMM, BLUE_WC_SEND, BLUE_WC_RECV,
			   true, true, false, false },
	[XOP_WRITE] = { "write", BLUE_WR_RDMA_WRITE, BLUE_WC_RDMA_WRITE, 0, false, false,
			false, false },
	[XOP_WRITE_IMM] = { "write_imm", BLUE_WR_RDMA_WRITE_WITH_IMM, BLUE_WC_RDMA_WRITE,
			    BLUE_WC_RECV_RDMA_WITH_IMM, true, true, false, false },
	[XOP_READ] = { "read", BLUE_WR_RDMA_READ, BLUE_WC_RDMA_READ, 0, false, false,
		       false, true },
	[XOP_CAS] = { "cas", BLUE_WR_ATOMIC_CMP_AND_SWP, BLUE_WC_COMP_SWAP, 0, false, false,
		      true, true },
	[XOP_FAA] = { "faa", BLUE_WR_ATOMIC_FETCH_AND_ADD, BLUE_WC_FETCH_ADD, 0, false,
		      false, true, true },
};

/* ---- options ------------------------------------------------------------------ */

struct opts {
	const char *ifname;
	const char *server;
	uint16_t port;
	uint32_t nqps;
	uint32_t op_mask;
	uint32_t sizes[MAX_SIZES];
	unsigned int nsizes;
	uint32_t iters;		/* 0: by size */
	uint32_t depth;
	uint32_t lat_iters;
	uint32_t lat_max;
	bool verify;
	bool progress;
	bool expect_death;
	bool inject;		/* test-only: corrupt one WR per round on purpose */
	int timeout_s;
	int hold_s;
	enum blue_mtu mtu;	/* 0: the port's active MTU */
	int gidx;
	uint8_t ack_timeout;
	uint8_t retry_cnt;
	bool sr;		/* offer selective retransmission (--retx sr) */
	bool cc_given;		/* --cc: offer only this congestion control */
	uint32_t cc_caps;
	bool lin_timer;		/* --timeout-us: base + k * cwnd */
	uint32_t tmo_base_us, tmo_k_us;
};

static void usage(FILE *f, const char *argv0)
{
	fprintf(f,
		"Usage:\n"
		"  %s -d IF [options]            server: wait for one client\n"
		"  %s -d IF [options] SERVER_IP  client: run the operations against it\n"
		"\n"
		"  -d, --ib-dev=IF        netdev blue is attached to (`bluectl attach IF`)\n"
		"  -p, --port=PORT        TCP control port (default %d)\n"
		"  -q, --qps=N            QPs, all moving data at once (client; default 1)\n"
		"  -o, --op=LIST          send,send_imm,write,write_imm,read,cas,faa or all\n"
		"                         (client; default all)\n"
		"  -s, --size=LIST        message sizes, K/M suffixes allowed (client; default\n"
		"                         1,4K,1M); atomics always move 8 bytes\n"
		"  -n, --iters=N          WRs per QP per size (default: 1000, fewer for large\n"
		"                         sizes so a round moves about 64 MiB, at least 8)\n"
		"  -t, --depth=N          WRs outstanding per QP (default 16)\n"
		"      --verify           check every payload end to end (CRC-32)\n"
		"      --progress         print a progress line every 250 ms\n"
		"      --lat-iters=N      WRs in the latency round (default 200; 0 = none)\n"
		"      --lat-max=BYTES    latency rounds for sizes up to this (default 4096)\n"
		"  -T, --timeout=SEC      bound on every wait (default 30)\n"
		"  -m, --mtu=BYTES        path MTU (default: the port's active MTU)\n"
		"  -g, --gid-idx=N        local GID index (default 1, the IPv4 GID)\n"
		"      --ack-timeout=EXP  local ACK timeout 4.096 us * 2^EXP (default 14)\n"
		"      --retry-cnt=N      transport retries (default 7)\n"
		"      --retx=gbn|sr      retransmission: gbn, IBA go-back-N (the default), or sr,\n"
		"                         selective, offered to the peer; used only when both\n"
		"                         sides offer it, else go-back-N on both\n"
		"      --cc=none|dcqcn|window  congestion control to offer (default: every one\n"
		"                         built, DCQCN chosen when the peer offers it too; the\n"
		"                         window runs alone; BLUE_CC sets the default)\n"
		"      --timeout-us=BASE,K  local ACK timeout BASE + K * (PSNs in flight) us\n"
		"                         instead of 4.096 us * 2^EXP (this side's requester)\n"
		"      --expect-peer-death  (client) succeed only if the server dies mid-run and\n"
		"                         every QP ends in ERROR: RETRY_EXC_ERR, the rest flushed\n"
		"      --hold=SEC         keep the QPs (in RTS, or ERROR after a peer death) after\n"
		"                         the run until SIGUSR1 or SIGTERM, at most SEC seconds\n"
		"      --inject-mismatch  (client, for tests of the checks) corrupt the first WR\n"
		"                         of QP 0 in each round: every round must then fail\n"
		"  -h, --help             this text\n",
		argv0, argv0, XFER_PORT);
}

static int parse_ops(const char *s, uint32_t *mask)
{
	char *dup = strdup(s), *tok, *save = NULL;
	int err = 0;

	*mask = 0;
	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int i;

		if (!strcmp(tok, "all")) {
			*mask |= (1u << XOP__MAX) - 1;
			continue;
		}
		for (i = 0; i < XOP__MAX && strcmp(tok, ops[i].name); i++)
			;
		if (i == XOP__MAX) {
			fprintf(stderr, "unknown operation '%s': use send, send_imm, write, "
				"write_imm, read, cas, faa or all\n", tok);
			err = -1;
			break;
		}
		*mask |= 1u << i;
	}
	free(dup);
	return err || !*mask ? -1 : 0;
}

static int parse_sizes(const char *s, struct opts *o)
{
	char *dup = strdup(s), *tok, *save = NULL;
	long long v;
	int err = 0;

	o->nsizes = 0;
	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (o->nsizes == MAX_SIZES) {
			fprintf(stderr, "at most %d sizes\n", MAX_SIZES);
			err = -1;
			break;
		}
		/* a message is at most 2^31 bytes (IBA); 1 GiB keeps memory sane */
		v = tool_num_arg("size", tok, 1, 1ll << 30, true);
		if (v < 0) {
			err = -1;
			break;
		}
		o->sizes[o->nsizes++] = (uint32_t)v;
	}
	free(dup);
	return err || !o->nsizes ? -1 : 0;
}

/* "BASE,K" in microseconds for the linear ACK timeout, as blue_qp_set_retx() bounds it. */
static int parse_tmo_us(const char *s, struct opts *o)
{
	char *dup = strdup(s), *k = dup ? strchr(dup, ',') : NULL;
	long long base, kk;
	int err = -1;

	if (!k) {
		fprintf(stderr, "invalid --timeout-us '%s': expected BASE,K (microseconds)\n", s);
		free(dup);
		return -1;
	}
	*k++ = 0;
	base = tool_num_arg("timeout base (us)", dup, 0, BLUE_RETX_MAX_BASE_US, false);
	kk = base < 0 ? -1 : tool_num_arg("timeout k (us)", k, 0, BLUE_RETX_MAX_K_US, false);
	if (base >= 0 && kk >= 0) {
		if (!base && !kk) {
			fprintf(stderr, "invalid --timeout-us '%s': a timeout of 0 us\n", s);
		} else {
			o->lin_timer = true;
			o->tmo_base_us = (uint32_t)base;
			o->tmo_k_us = (uint32_t)kk;
			err = 0;
		}
	}
	free(dup);
	return err;
}

/* Return: 0 to run, 1 on a usage error, 2 after --help. */
static int parse_args(int argc, char **argv, struct opts *o)
{
	enum {
		O_VERIFY = 256, O_PROGRESS, O_LAT_ITERS, O_LAT_MAX, O_ACK_TMO, O_RETRY,
		O_DEATH, O_HOLD, O_INJECT, O_RETX, O_TMO_US, O_CC,
	};
	static const struct option lopts[] = {
		{ "ib-dev", 1, NULL, 'd' }, { "port", 1, NULL, 'p' },
		{ "qps", 1, NULL, 'q' }, { "op", 1, NULL, 'o' }, { "size", 1, NULL, 's' },
		{ "iters", 1, NULL, 'n' }, { "depth", 1, NULL, 't' },
		{ "timeout", 1, NULL, 'T' }, { "mtu", 1, NULL, 'm' },
		{ "gid-idx", 1, NULL, 'g' }, { "verify", 0, NULL, O_VERIFY },
		{ "progress", 0, NULL, O_PROGRESS }, { "lat-iters", 1, NULL, O_LAT_ITERS },
		{ "lat-max", 1, NULL, O_LAT_MAX }, { "ack-timeout", 1, NULL, O_ACK_TMO },
		{ "retry-cnt", 1, NULL, O_RETRY }, { "expect-peer-death", 0, NULL, O_DEATH },
		{ "hold", 1, NULL, O_HOLD }, { "inject-mismatch", 0, NULL, O_INJECT },
		{ "retx", 1, NULL, O_RETX }, { "timeout-us", 1, NULL, O_TMO_US },
		{ "cc", 1, NULL, O_CC },
		{ "help", 0, NULL, 'h' }, { NULL, 0, NULL, 0 }
	};
	long long v;
	int c;

	memset(o, 0, sizeof(*o));
	o->port = XFER_PORT;
	o->nqps = 1;
	o->op_mask = (1u << XOP__MAX) - 1;
	o->sizes[0] = 1;
	o->sizes[1] = 4096;
	o->sizes[2] = 1u << 20;
	o->nsizes = 3;
	o->depth = 16;
	o->lat_iters = 200;
	o->lat_max = 4096;
	o->timeout_s = 30;
	o->gidx = 1;
	o->ack_timeout = 14;
	o->retry_cnt = 7;
	while ((c = getopt_long(argc, argv, "d:p:q:o:s:n:t:T:m:g:h", lopts, NULL)) != -1) {
		v = 0;
		switch (c) {
		case 'd':
			o->ifname = optarg;
			break;
		case 'p':
			v = tool_num_arg("port", optarg, 1, 65535, false);
			o->port = (uint16_t)v;
			break;
		case 'q':
			/* the device has 4094 QPs (two of 4096 slots are QPN 0 and 1) */
			v = tool_num_arg("QP count", optarg, 1, 4094, false);
			o->nqps = (uint32_t)v;
			break;
		case 'o':
			if (parse_ops(optarg, &o->op_mask))
				v = -1;
			break;
		case 's':
			if (parse_sizes(optarg, o))
				v = -1;
			break;
		case 'n':
			v = tool_num_arg("iterations", optarg, 1, UINT32_MAX >> 1, true);
			o->iters = (uint32_t)v;
			break;
		case 't':
			v = tool_num_arg("depth", optarg, 1, 8192, false);
			o->depth = (uint32_t)v;
			break;
		case 'T':
			v = tool_num_arg("timeout", optarg, 1, 3600, false);
			o->timeout_s = (int)v;
			break;
		case 'm':
			v = tool_mtu_arg(optarg);
			if (v > 0)
				o->mtu = (enum blue_mtu)v;
			break;
		case 'g':
			v = tool_num_arg("GID index", optarg, 0, 255, false);
			o->gidx = (int)v;
			break;
		case O_VERIFY:
			o->verify = true;
			break;
		case O_PROGRESS:
			o->progress = true;
			break;
		case O_LAT_ITERS:
			v = tool_num_arg("latency iterations", optarg, 0, 1000000, false);
			o->lat_iters = (uint32_t)v;
			break;
		case O_LAT_MAX:
			v = tool_num_arg("latency size bound", optarg, 0, 1ll << 30, true);
			o->lat_max = (uint32_t)v;
			break;
		case O_ACK_TMO:
			v = tool_num_arg("ACK timeout exponent", optarg, 1, 31, false);
			o->ack_timeout = (uint8_t)v;
			break;
		case O_RETRY:
			v = tool_num_arg("retry count", optarg, 0, 7, false);
			o->retry_cnt = (uint8_t)v;
			break;
		case O_DEATH:
			o->expect_death = true;
			break;
		case O_HOLD:
			v = tool_num_arg("hold time", optarg, 1, 3600, false);
			o->hold_s = (int)v;
			break;
		case O_INJECT:
			o->inject = true;
			break;
		case O_RETX:
			if (!strcmp(optarg, "sr") || !strcmp(optarg, "selective")) {
				o->sr = true;
			} else if (!strcmp(optarg, "gbn") || !strcmp(optarg, "go-back-n")) {
				o->sr = false;
			} else {
				fprintf(stderr, "invalid --retx '%s': use gbn or sr\n", optarg);
				v = -1;
			}
			break;
		case O_CC:
			o->cc_given = true;
			v = tool_cc_arg(optarg, &o->cc_caps);
			break;
		case O_TMO_US:
			if (parse_tmo_us(optarg, o))
				v = -1;
			break;
		case 'h':
			usage(stdout, argv[0]);
			return 2;
		default:
			usage(stderr, argv[0]);
			return 1;
		}
		if (v < 0)
			return 1;
	}
	if (optind == argc - 1)
		o->server = argv[optind];
	else if (optind < argc) {
		usage(stderr, argv[0]);
		return 1;
	}
	if (!o->ifname) {
		fprintf(stderr, "-d IF is required: the netdev blue is attached to\n");
		return 1;
	}
	if (!o->server && o->inject) {
		fprintf(stderr, "--inject-mismatch is a client option\n");
		return 1;
	}
	if (!o->server && o->expect_death) {
		fprintf(stderr, "--expect-peer-death is a client option: only the requester "
			"sees its peer die (as retry-exceeded)\n");
		return 1;
	}
	return 0;
}

/* ---- small helpers ---------------------------------------------------------------- */

/* splitmix64's finaliser: a well-mixed 64-bit value of any key. */
static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t key3(uint64_t seed, uint64_t a, uint64_t b)
{
	return mix64(seed ^ mix64(a << 1 ^ mix64(b)));
}

/* Pseudo-random bytes from @key: the base content of a data slot. */
static void fill_pattern(uint8_t *buf, size_t len, uint64_t key)
{
	uint64_t s = key, v;
	size_t off;

	for (off = 0; off + 8 <= len; off += 8) {
		v = mix64(s++);
		memcpy(buf + off, &v, 8);
	}
	if (off < len) {
		v = mix64(s);
		memcpy(buf + off, &v, len - off);
	}
}

/*
 * Make a message unique to @key (round, QP, iteration) cheaply: 8 bytes every
 * STAMP_EVERY. A stale buffer or a packet placed twice then fails the CRC.
 */
static void stamp(uint8_t *buf, uint32_t len, uint64_t key)
{
	for (uint32_t off = 0; off < len; off += STAMP_EVERY) {
		uint64_t v = mix64(key + off);

		memcpy(buf + off, &v, len - off < 8 ? len - off : 8);
	}
}

static uint32_t crc(const void *buf, size_t len)
{
	return crc32_gzip_refl(0, buf, len);	/* == zlib crc32(0, buf, len) */
}

/* Fold one message's CRC into an order-sensitive chain. */
static uint32_t chain_add(uint32_t chain, uint32_t c)
{
	uint8_t le[4] = { (uint8_t)c, (uint8_t)(c >> 8), (uint8_t)(c >> 16),
			  (uint8_t)(c >> 24) };

	return crc32_gzip_refl(chain, le, 4);
}

static uint64_t random_seed(void)
{
	uint64_t s;

	if (getrandom(&s, sizeof(s), GRND_NONBLOCK) != (ssize_t)sizeof(s))
		s = tool_now_ns() ^ (uint64_t)getpid() << 32;
	return s;
}

static volatile sig_atomic_t release_flag;

static void on_release(int sig)
{
	(void)sig;
	release_flag = 1;
}

/* ---- the control channel: framed messages over TCP, each wait bounded -------------- */

enum msg_type {
	MSG_HELLO = 1,
	MSG_HELLO_OK,
	MSG_ROUND,
	MSG_READY,
	MSG_DONE,
	MSG_VERDICT,
	MSG_BYE,
};

static const char *msg_name(uint32_t t)
{
	static const char *const n[] = { "?", "HELLO", "HELLO_OK", "ROUND", "READY", "DONE",
					 "VERDICT", "BYE" };

	return t < sizeof(n) / sizeof(n[0]) ? n[t] : "?";
}

/* A payload being built: big-endian fields appended. */
struct wbuf {
	uint8_t *p;
	size_t len, cap;
	bool oom;
};

static void put(struct wbuf *w, const void *v, size_t n)
{
	if (w->oom)
		return;
	if (w->len + n > w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 256;
		uint8_t *p;

		while (cap < w->len + n)
			cap *= 2;
		p = realloc(w->p, cap);
		if (!p) {
			w->oom = true;
			return;
		}
		w->p = p;
		w->cap = cap;
	}
	memcpy(w->p + w->len, v, n);
	w->len += n;
}

static void put32(struct wbuf *w, uint32_t v)
{
	v = htobe32(v);
	put(w, &v, 4);
}

static void put64(struct wbuf *w, uint64_t v)
{
	v = htobe64(v);
	put(w, &v, 8);
}

/* A payload being read; a short payload sets @err and reads zeros. */
struct rbuf {
	uint8_t *p;
	size_t len, off;
	bool err;
};

static uint32_t get32(struct rbuf *r)
{
	uint32_t v = 0;

	if (r->off + 4 > r->len) {
		r->err = true;
		return 0;
	}
	memcpy(&v, r->p + r->off, 4);
	r->off += 4;
	return be32toh(v);
}

static uint64_t get64(struct rbuf *r)
{
	uint64_t v = 0;

	if (r->off + 8 > r->len) {
		r->err = true;
		return 0;
	}
	memcpy(&v, r->p + r->off, 8);
	r->off += 8;
	return be64toh(v);
}

static int msg_send(int fd, uint32_t type, const struct wbuf *w, uint64_t deadline)
{
	uint32_t hdr[3] = { htobe32(XFER_MAGIC), htobe32(type),
			    htobe32(w ? (uint32_t)w->len : 0) };
	int err;

	if (w && w->oom)
		return -ENOMEM;
	err = tool_send_all(fd, hdr, sizeof(hdr), deadline);
	if (!err && w && w->len)
		err = tool_send_all(fd, w->p, w->len, deadline);
	return err;
}

/* Read one message; @r->p is malloc'd (free it). */
static int msg_recv(int fd, uint32_t *type, struct rbuf *r, uint64_t deadline)
{
	uint32_t hdr[3], len;
	int err;

	memset(r, 0, sizeof(*r));
	err = tool_recv_all(fd, hdr, sizeof(hdr), deadline);
	if (err)
		return err;
	len = be32toh(hdr[2]);
	if (be32toh(hdr[0]) != XFER_MAGIC || len > MAX_MSG_LEN)
		return -EBADMSG;
	*type = be32toh(hdr[1]);
	r->len = len;
	if (!len)
		return 0;
	r->p = malloc(len);
	if (!r->p)
		return -ENOMEM;
	err = tool_recv_all(fd, r->p, len, deadline);
	if (err) {
		free(r->p);
		r->p = NULL;
	}
	return err;
}

/* Read a message that must be of @want. */
static int msg_expect(int fd, uint32_t want, struct rbuf *r, uint64_t deadline)
{
	uint32_t type = 0;
	int err = msg_recv(fd, &type, r, deadline);

	if (err) {
		fprintf(stderr, "control channel: waiting for %s: %s\n", msg_name(want),
			err == -ECONNRESET ? "the peer closed the connection" :
			strerror(-err));
		return err;
	}
	if (type != want) {
		fprintf(stderr, "control channel: got %s, expected %s\n", msg_name(type),
			msg_name(want));
		free(r->p);
		r->p = NULL;
		return -EPROTO;
	}
	return 0;
}

/* ---- verbs resources ------------------------------------------------------------------ */

struct xqp {
	struct blue_qp *qp;
	struct blue_mr *mr;
	uint8_t *buf;
	size_t len;
	struct blue_cm_info local, remote;
};

struct xfer {
	const struct opts *o;
	bool is_server;
	struct blue_context *ctx;
	struct blue_pd *pd;
	struct blue_cq *cq;
	struct xqp *q;
	uint32_t nqps;
	int32_t slot_q[SLOT_TABLE];	/* QPN & 4095 -> index in q[] */
	int fd;
	uint64_t tmo_ns;
	size_t peer_len;		/* client: the region it asked the server for */
	/* client: signaled WRs posted and completions reaped, over the whole run */
	uint64_t wrs_posted, wcs_reaped;
};

static uint64_t deadline(const struct xfer *x)
{
	return tool_now_ns() + x->tmo_ns;
}

static int xfer_open(struct xfer *x)
{
	x->ctx = blue_open_device(x->o->ifname);
	if (!x->ctx) {
		fprintf(stderr, "cannot open blue on %s: %s\n", x->o->ifname, strerror(errno));
		return -1;
	}
	x->pd = blue_alloc_pd(x->ctx);
	if (!x->pd) {
		fprintf(stderr, "cannot allocate a PD: %s\n", strerror(errno));
		return -1;
	}
	for (int i = 0; i < SLOT_TABLE; i++)
		x->slot_q[i] = -1;
	return 0;
}

/*
 * @nqps QPs on one CQ, each with its own region of @len bytes registered with @access.
 * The server's regions are the peer's targets, so they get the remote rights.
 */
static int xfer_create(struct xfer *x, uint32_t nqps, size_t len, unsigned int access,
		       uint32_t max_send, uint32_t max_recv, int cqe)
{
	x->cq = blue_create_cq(x->ctx, cqe, NULL, NULL, 0);
	if (!x->cq) {
		fprintf(stderr, "cannot create a CQ of %d entries: %s\n", cqe, strerror(errno));
		return -1;
	}
	x->q = calloc(nqps, sizeof(*x->q));
	if (!x->q)
		return -1;
	x->nqps = nqps;
	for (uint32_t i = 0; i < nqps; i++) {
		struct xqp *q = &x->q[i];
		struct blue_qp_init_attr init = {
			.send_cq = x->cq,
			.recv_cq = x->cq,
			.cap = { .max_send_wr = max_send, .max_recv_wr = max_recv,
				 .max_send_sge = 1, .max_recv_sge = 1 },
			.qp_type = BLUE_QPT_RC,
		};

		/* zeroed and faulted in now, not in the timed loop; 2 MiB pages if any */
		q->buf = blue_buf_alloc(len, NULL);
		if (!q->buf) {
			fprintf(stderr, "cannot allocate %zu bytes for QP %u: %s\n", len, i,
				strerror(errno));
			return -1;
		}
		q->len = len;
		q->mr = blue_reg_mr(x->pd, q->buf, len, access);
		if (!q->mr) {
			fprintf(stderr, "cannot register %zu bytes for QP %u: %s\n", len, i,
				strerror(errno));
			return -1;
		}
		q->qp = blue_create_qp(x->pd, &init);
		if (!q->qp) {
			fprintf(stderr, "cannot create QP %u of %u: %s\n", i + 1, nqps,
				strerror(errno));
			return -1;
		}
		x->slot_q[blue_qp_num(q->qp) & (SLOT_TABLE - 1)] = (int32_t)i;
	}
	return 0;
}

static int xfer_close(struct xfer *x)
{
	int bad = 0;

	for (uint32_t i = 0; x->q && i < x->nqps; i++) {
		struct xqp *q = &x->q[i];

		if (q->qp && blue_destroy_qp(q->qp))
			bad = 1;
		if (q->mr && blue_dereg_mr(q->mr))
			bad = 1;
		blue_buf_free(q->buf, q->len);
	}
	free(x->q);
	x->q = NULL;
	if (x->cq && blue_destroy_cq(x->cq))
		bad = 1;
	if (x->pd && blue_dealloc_pd(x->pd))
		bad = 1;
	if (x->ctx && blue_close_device(x->ctx))
		bad = 1;
	if (x->fd >= 0)
		close(x->fd);
	x->fd = -1;
	if (bad)
		fprintf(stderr, "teardown: a verbs object would not go away\n");
	return bad;
}

/* Which of our QPs a completion is for (-1: none). */
static int wc_qp(const struct xfer *x, const struct blue_wc *wc)
{
	int32_t i = x->slot_q[wc->qp_num & (SLOT_TABLE - 1)];

	if (i < 0 || blue_qp_num(x->q[i].qp) != wc->qp_num)
		return -1;
	return i;
}

/*
 * After blue_cm_connect_qp() chose the policy: the linear timer if asked for, and, when
 * --retx or --timeout-us was given, one line saying what is in use (for the first QP).
 */
static int set_retx(struct xfer *x, struct xqp *q, uint32_t i)
{
	const struct opts *o = x->o;
	struct blue_retx_attr ra;
	int err;

	err = blue_qp_query_retx(q->qp, &ra);
	if (!err && o->lin_timer) {
		ra.timer = BLUE_RETX_TIMER_LINEAR;
		ra.base_us = o->tmo_base_us;
		ra.k_us = o->tmo_k_us;
		err = blue_qp_set_retx(q->qp, &ra);
	}
	if (err) {
		fprintf(stderr, "QP %u: cannot set the retransmission timer: %s\n", i,
			strerror(err));
		return -1;
	}
	if (i == 0 && (o->sr || o->lin_timer)) {	/* the default run prints as before */
		printf("  retransmission: %s", ra.policy == BLUE_RETX_SELECTIVE ?
		       "selective (both sides offered it)" : o->sr ?
		       "go-back-N (the peer did not offer selective)" : "go-back-N");
		if (ra.timer == BLUE_RETX_TIMER_LINEAR)
			printf(", ACK timeout %u + %u * cwnd us\n", ra.base_us, ra.k_us);
		else
			printf(", ACK timeout 4.096 us * 2^%u\n", o->ack_timeout);
	}
	return 0;
}

/* With --cc or BLUE_CC, one line saying what the first QP runs (the CM's choice). */
static void print_cc(const struct opts *o, struct xqp *q, uint32_t i)
{
	struct blue_cc_params p;

	if (i == 0 && (o->cc_given || getenv("BLUE_CC")) && blue_qp_query_cc(q->qp, &p) == 0)
		printf("  congestion control: %s\n", tool_cc_name(p.algo));
}

/*
 * Both sides: one blue_cm_exchange_qp per QP, in QP order, on the one TCP connection, then
 * every QP to RTS. The server's QPs grant the remote rights its regions carry.
 */
static int xfer_connect(struct xfer *x)
{
	const struct opts *o = x->o;
	struct blue_cm_qp_attr qa;
	int tmo = o->timeout_s * 1000, err;

	blue_cm_qp_attr_default(&qa);
	qa.sgid_index = (uint8_t)o->gidx;
	qa.timeout = o->ack_timeout;
	qa.retry_cnt = o->retry_cnt;
	qa.max_rd_atomic = RD_ATOMIC;
	qa.max_dest_rd_atomic = RD_ATOMIC;
	qa.caps = tool_cc_caps(qa.caps, o->cc_given, o->cc_caps) |
		  (o->sr ? BLUE_CM_CAP_SELECTIVE_RETX : 0);
	if (x->is_server)
		qa.access = BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE |
			    BLUE_ACCESS_REMOTE_READ | BLUE_ACCESS_REMOTE_ATOMIC;
	for (uint32_t i = 0; i < x->nqps; i++) {
		struct xqp *q = &x->q[i];

		err = blue_cm_info_from_qp(x->ctx, q->qp, o->gidx, &q->local);
		if (err) {
			fprintf(stderr, "QP %u: %s\n", i, blue_cm_last_error());
			return -1;
		}
		if (o->mtu && o->mtu < q->local.mtu)
			q->local.mtu = o->mtu;
		blue_cm_info_set_mr(&q->local, q->mr);
		q->local.caps = qa.caps;
		err = blue_cm_exchange_qp(x->ctx, x->fd, &q->local, &q->remote, tmo);
		if (err) {
			fprintf(stderr, "exchange for QP %u failed: %s\n", i,
				blue_cm_last_error());
			return -1;
		}
		if (!x->is_server && (!q->remote.has_mr || q->remote.mr.length < x->peer_len)) {
			fprintf(stderr, "QP %u: the server's region is missing or smaller than "
				"the %zu bytes asked for\n", i, x->peer_len);
			return -1;
		}
		err = blue_cm_connect_qp(x->ctx, q->qp, q->local.psn, &q->remote, &qa);
		if (err) {
			fprintf(stderr, "QP %u: %s\n", i, blue_cm_last_error());
			return -1;
		}
		print_cc(o, q, i);
		if (set_retx(x, q, i))
			return -1;
		if (i < 4 || i == x->nqps - 1) {
			char gid[INET6_ADDRSTRLEN];

			inet_ntop(AF_INET6, q->remote.gid.raw, gid, sizeof(gid));
			printf("  QP %u: local QPN 0x%06x PSN 0x%06x <-> remote QPN 0x%06x PSN "
			       "0x%06x GID %s, MR 0x%" PRIx64 "+%" PRIu64 " rkey 0x%x, MTU %d\n",
			       i, q->local.qpn, q->local.psn, q->remote.qpn, q->remote.psn, gid,
			       q->remote.mr.addr, q->remote.mr.length, q->remote.mr.rkey,
			       blue_mtu_bytes(q->remote.mtu));
		} else if (i == 4) {
			printf("  ...\n");
		}
	}
	printf("%s: %u QP%s connected (RTS)\n", x->is_server ? "server" : "client", x->nqps,
	       x->nqps > 1 ? "s" : "");
	return 0;
}

/* --hold: keep the QPs as they are, driving the engine, until told or the bound. */
static void xfer_hold(struct xfer *x)
{
	struct sigaction sa = { .sa_handler = on_release };
	uint64_t dl = tool_now_ns() + (uint64_t)x->o->hold_s * 1000000000ull;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	printf("HOLDING: %u QP%s on %s; release with kill -USR1 %d (at most %d s)\n",
	       x->nqps, x->nqps > 1 ? "s" : "", x->o->ifname, (int)getpid(), x->o->hold_s);
	while (!release_flag && tool_now_ns() < dl) {
		blue_poll_cq(x->cq, 0, NULL);
		usleep(10000);
	}
	printf("%s: %s\n", x->is_server ? "server" : "client",
	       release_flag ? "released" : "hold time over");
}

/* ---- rounds ---------------------------------------------------------------------------- */

struct round {
	uint32_t idx;
	enum xop op;
	uint32_t size;		/* bytes per WR (8 for atomics) */
	uint32_t iters;		/* WRs per QP */
	uint32_t depth;		/* outstanding per QP; also the client's slots */
	uint32_t nqps;		/* the first nqps QPs take part */
	uint32_t rslots;	/* server data slots per QP */
	uint32_t rxq;		/* receives the server keeps posted per QP */
	bool verify;
	bool lat;
	uint64_t seed;
};

struct result {
	enum xop op;
	uint32_t size, iters, nqps;
	double secs, gbps, mops;
	bool lat;
	double lat_avg, lat_min, lat_p50, lat_p99;	/* microseconds */
	uint64_t bad;		/* checks that failed */
};

static uint64_t per_qp_cap(uint32_t nqps)
{
	uint64_t c = MEM_CAP / nqps;

	return c < 4096 ? 4096 : c;
}

static uint32_t clamp32(uint64_t v, uint32_t lo, uint32_t hi)
{
	return v < lo ? lo : v > hi ? hi : (uint32_t)v;
}

/* The client's plan: every op at every size, a latency round after each small one. */
static unsigned int plan_rounds(const struct opts *o, struct round *r, size_t *local_len,
				size_t *remote_len, uint32_t *max_recv, uint32_t *max_send)
{
	uint64_t cap = per_qp_cap(o->nqps), l = 4096, rm = 4096;
	uint32_t depth = o->depth, mr = 1, ms = 1;
	unsigned int n = 0;

	/* the CQs hold every outstanding WR (plus one probe each after a peer dies) */
	depth = clamp32(depth, 1, CQ_MAX / o->nqps - 2);
	for (int op = 0; op < XOP__MAX; op++) {
		if (!(o->op_mask & (1u << op)))
			continue;
		for (unsigned int s = 0; s < o->nsizes; s++) {
			const struct op_desc *d = &ops[op];
			uint32_t size = d->atomic ? 8 : o->sizes[s];
			struct round b = { .op = (enum xop)op, .size = size, .nqps = o->nqps,
					   .verify = o->verify };

			if (d->atomic && s > 0)
				break;	/* atomics: one round of 8 bytes */
			b.iters = o->iters ? o->iters :
				  clamp32(MEM_CAP / ((uint64_t)size * o->nqps), 8, 1000);
			b.depth = clamp32(cap / size, 1, depth);
			if (d->rd && b.depth > RD_ATOMIC)
				b.depth = RD_ATOMIC;
			if (d->recv)
				b.rxq = clamp32(2ull * b.depth, 1, CQ_MAX / o->nqps - 1);
			if (op == XOP_SEND || op == XOP_SEND_IMM)
				b.rslots = clamp32(cap / size, 1, b.rxq);
			else if (d->atomic)
				b.rslots = 1;
			else
				b.rslots = clamp32(cap / size, 1, b.iters);
			if (op == XOP_SEND || op == XOP_SEND_IMM)
				b.rxq = b.rslots;	/* one slot per receive */
			for (int lat = 0; lat < 2 && n < MAX_ROUNDS; lat++) {
				struct round rr = b;

				if (lat) {
					if (!o->lat_iters || size > o->lat_max)
						break;
					rr.lat = true;
					rr.iters = o->lat_iters;
					rr.depth = 1;
					rr.nqps = 1;
					if (d->recv)
						rr.rxq = op == XOP_WRITE_IMM ? 2 : rr.rxq;
					if (!d->atomic && !(op == XOP_SEND || op == XOP_SEND_IMM))
						rr.rslots = clamp32(cap / size, 1, rr.iters);
				}
				rr.idx = n;
				r[n++] = rr;
				if ((uint64_t)rr.depth * size > l)
					l = (uint64_t)rr.depth * size;
				if ((uint64_t)rr.rslots * size > rm)
					rm = (uint64_t)rr.rslots * size;
				if (rr.rxq > mr)
					mr = rr.rxq;
				if (rr.depth + 1 > ms)
					ms = rr.depth + 1;
			}
		}
	}
	*local_len = (size_t)((l + 4095) & ~4095ull);
	*remote_len = (size_t)((rm + 4095) & ~4095ull);
	*max_recv = mr;
	*max_send = ms;
	return n;
}

static const char *round_str(const struct round *r, char *buf, size_t len)
{
	snprintf(buf, len, "%s %u B x %u x %u QP%s%s", ops[r->op].name, r->size, r->iters,
		 r->nqps, r->nqps > 1 ? "s" : "", r->lat ? " (latency)" : "");
	return buf;
}

/* The atomic target's first value, and the value after CAS number @i. */
static uint64_t atomic_init(uint64_t seed, uint32_t qi)
{
	return key3(seed, 0xa7, qi);
}

static uint64_t cas_value(uint64_t seed, uint32_t qi, uint32_t i)
{
	return i ? key3(seed, (uint64_t)qi << 32 | 0xca5, i) : atomic_init(seed, qi);
}

static uint64_t faa_add(uint64_t seed, uint32_t qi, uint32_t i)
{
	return key3(seed, (uint64_t)qi << 32 | 0xfaa, i);
}

static uint64_t msg_key(const struct round *r, uint32_t qi, uint32_t i)
{
	return key3(r->seed, (uint64_t)qi << 32 | 0xda7a, i);
}

/* ---- the client ------------------------------------------------------------------------ */

/* How a round ended: checks failed is not fatal; a broken transport or channel is. */
enum {
	ROUND_OK = 0,
	ROUND_FAIL,		/* a check failed; the next round can run */
	ROUND_ABORT,		/* a WR failed, a wait timed out, the channel broke */
	ROUND_DEATH_OK,		/* --expect-peer-death: it died, as it should */
	ROUND_DEATH_FAIL,
};

struct crun {
	uint32_t posted, done;
	uint32_t chain;		/* SEND: CRC chain of what was posted */
	uint64_t acc;		/* CAS: the value the next CAS expects; FAA: running sum */
	bool erred;		/* peer death: got its first error */
	uint32_t retry_exc, flushed, other, late_ok;
};

struct cround {
	const struct round *r;
	struct crun *run;
	uint32_t *slot_crc;	/* WRITE: [qi * rslots + slot], CRC of the last message */
	const uint32_t *rd_crc;	/* READ: the server's, same layout */
	uint64_t *expect;	/* atomics: [qi * depth + slot], the original to come back */
	uint64_t *t_post;	/* [qi * depth + slot] */
	double *lat;		/* latency round: microseconds per WR */
	uint32_t nlat;
	uint64_t bad;
	uint32_t shown;		/* mismatch lines printed */
	bool probing;		/* peer death: WRs posted only to see them flushed */
};

static void mismatch(struct cround *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void mismatch(struct cround *c, const char *fmt, ...)
{
	va_list ap;

	c->bad++;
	if (c->shown++ >= 10)
		return;
	va_start(ap, fmt);
	fputs("CHECK FAILED: ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
}

/* Post WR number run->posted of QP @qi. Return: 0 or an errno. */
static int post_one(struct xfer *x, struct cround *c, uint32_t qi)
{
	const struct round *r = c->r;
	struct crun *run = &c->run[qi];
	struct xqp *q = &x->q[qi];
	uint32_t i = run->posted, ls = i % r->depth, rs = i % r->rslots;
	uint8_t *lbuf = q->buf + (size_t)ls * r->size;
	uint64_t raddr = q->remote.mr.addr + (uint64_t)rs * r->size;
	struct blue_sge sge = { (uintptr_t)lbuf, r->size, q->mr->lkey };
	struct blue_send_wr wr, *bad;
	uint64_t *want = &c->expect[(size_t)qi * r->depth + ls];
	bool inject = x->o->inject && !r->lat && qi == 0 && i == 0 && !c->probing;
	int err;

	memset(&wr, 0, sizeof(wr));
	/* the round (+1) in the top bits: a completion from an earlier round shows */
	wr.wr_id = (uint64_t)(r->idx + 1) << 48 | (uint64_t)qi << 32 | i;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = ops[r->op].wr;
	wr.send_flags = BLUE_SEND_SIGNALED;
	wr.imm_data = htobe32(i);
	switch (r->op) {
	case XOP_SEND:
	case XOP_SEND_IMM:
	case XOP_WRITE:
	case XOP_WRITE_IMM:
		if (r->verify) {
			uint32_t mc;

			stamp(lbuf, r->size, msg_key(r, qi, i));
			mc = crc(lbuf, r->size);
			if (r->op == XOP_SEND || r->op == XOP_SEND_IMM)
				run->chain = chain_add(run->chain, mc);
			else
				c->slot_crc[(size_t)qi * r->rslots + rs] = mc;
			if (inject)
				lbuf[r->size / 2] ^= 0x01;	/* one bit the CRC did not see */
		}
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = q->remote.mr.rkey;
		break;
	case XOP_READ:
		if (r->verify)
			memset(lbuf, 0x5a, r->size);	/* what did not arrive shows */
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = q->remote.mr.rkey;
		break;
	case XOP_CAS:
		*want = run->acc;
		wr.wr.atomic.compare_add = run->acc + inject;	/* injected: it fails */
		wr.wr.atomic.swap = cas_value(r->seed, qi, i + 1);
		run->acc = wr.wr.atomic.swap;
		goto atomic;
	case XOP_FAA:
		*want = run->acc;
		wr.wr.atomic.compare_add = faa_add(r->seed, qi, i);
		run->acc += wr.wr.atomic.compare_add;
		wr.wr.atomic.compare_add += inject;	/* injected: one more than counted */
atomic:
		memcpy(lbuf, &(uint64_t){ ~*want }, 8);
		wr.wr.atomic.remote_addr = q->remote.mr.addr;
		wr.wr.atomic.rkey = q->remote.mr.rkey;
		break;
	default:
		break;
	}
	if (r->lat)
		c->t_post[(size_t)qi * r->depth + ls] = tool_now_ns();
	err = blue_post_send(q->qp, &wr, &bad);
	if (err) {
		fprintf(stderr, "post_send on QP %u (%s, WR %u) failed: %s\n", qi,
			ops[r->op].name, i, strerror(err));
		return err;
	}
	run->posted++;
	x->wrs_posted++;
	return 0;
}

/* One successful completion of the client. Mismatches are counted, not fatal. */
static void client_wc_ok(struct xfer *x, struct cround *c, uint32_t qi, const struct blue_wc *wc,
			 uint64_t t)
{
	const struct round *r = c->r;
	struct crun *run = &c->run[qi];
	uint32_t i = (uint32_t)wc->wr_id, ls = i % r->depth;
	uint8_t *lbuf = x->q[qi].buf + (size_t)ls * r->size;
	uint64_t got, want;

	if (i != run->done) {
		mismatch(c, "QP %u: completion for WR %u, expected WR %u (send-queue order)", qi,
			 i, run->done);
	}
	if (wc->opcode != ops[r->op].wc)
		mismatch(c, "QP %u WR %u: completion opcode %d, expected %d", qi, i, wc->opcode,
			 ops[r->op].wc);
	if (r->op == XOP_READ) {
		if (wc->byte_len != r->size)
			mismatch(c, "QP %u READ %u: byte_len %u, expected %u", qi, i,
				 wc->byte_len, r->size);
		if (r->verify) {
			uint32_t want_crc = c->rd_crc[(size_t)qi * r->rslots + i % r->rslots];
			uint32_t got_crc;

			if (x->o->inject && !r->lat && qi == 0 && i == 0)
				lbuf[r->size / 2] ^= 0x01;	/* as if it arrived damaged */
			got_crc = crc(lbuf, r->size);

			if (got_crc != want_crc)
				mismatch(c, "QP %u READ %u of slot %u: CRC-32 0x%08x, the server "
					 "announced 0x%08x", qi, i, i % r->rslots, got_crc,
					 want_crc);
		}
	} else if (ops[r->op].atomic) {
		memcpy(&got, lbuf, 8);
		want = c->expect[(size_t)qi * r->depth + ls];
		if (got != want)
			mismatch(c, "QP %u %s %u returned 0x%016" PRIx64 ", expected 0x%016"
				 PRIx64 " (executed twice, or not in order?)", qi,
				 ops[r->op].name, i, got, want);
	}
	if (r->lat && c->nlat < r->iters)
		c->lat[c->nlat++] = (double)(t - c->t_post[(size_t)qi * r->depth + ls]) / 1e3;
	run->done++;
}

/*
 * The peer died (a WC error, or the control connection closed): account for every WR.
 * Each QP must end in ERROR with exactly one RETRY_EXC_ERR (its oldest WR) and every
 * later WR flushed, including one more posted after the error (IBA 10.3.1, 11.2.4.3).
 * @pending: completions already reaped and not yet looked at (the first is the error
 * that started it), or NULL when the control connection closed first.
 * Return: 0 if all of that held within the timeout.
 */
static int peer_death(struct xfer *x, struct cround *c, const struct blue_wc *pending,
		      int npending, uint64_t t_last_ok)
{
	const struct round *r = c->r;
	struct blue_wc wc[POLL_BATCH];
	uint64_t t0 = tool_now_ns(), dl = t0 + x->tmo_ns, t_end;
	uint32_t nerr = 0, nflushed = 0, nbad = 0, nprobe = 0;
	bool *probed = calloc(r->nqps, sizeof(bool));
	int n, k, ok = 1;

	if (!probed)
		return -1;
	c->probing = true;
	printf("peer death: %s; accounting for every WR\n",
	       npending ? blue_wc_status_str(pending[0].status) :
	       "the control connection closed");
	for (;;) {
		bool all = true;

		for (uint32_t qi = 0; qi < r->nqps; qi++) {
			struct crun *run = &c->run[qi];

			/*
			 * Probe each QP once: after its error (the post must be flushed), or
			 * now if it has nothing outstanding (it must fail like the rest).
			 */
			if (!probed[qi] && (run->erred || run->done == run->posted)) {
				probed[qi] = true;
				if (post_one(x, c, qi) == 0)
					nprobe++;
			}
			if (!run->erred || run->done != run->posted)
				all = false;
		}
		if (all)
			break;
		if (tool_now_ns() > dl) {
			printf("PEER-DEATH FAILED: not every WR completed within %d s\n",
			       x->o->timeout_s);
			ok = 0;
			break;
		}
		if (npending) {
			n = npending < POLL_BATCH ? npending : POLL_BATCH;
			memcpy(wc, pending, (size_t)n * sizeof(*wc));
			pending += n;
			npending -= n;
		} else {
			n = blue_poll_cq(x->cq, POLL_BATCH, wc);
			if (n < 0) {
				fprintf(stderr, "poll_cq: %s\n", strerror(-n));
				ok = 0;
				break;
			}
		}
		for (k = 0; k < n; k++) {
			int qi = wc_qp(x, &wc[k]);
			struct crun *run;

			if (qi < 0 || (uint32_t)qi >= r->nqps) {
				printf("completion for an unknown QP 0x%x\n", wc[k].qp_num);
				nbad++;
				continue;
			}
			run = &c->run[qi];
			run->done++;
			if (wc[k].status == BLUE_WC_SUCCESS) {
				if (run->erred) {
					printf("QP %d: WR %u succeeded after the QP failed\n", qi,
					       (uint32_t)wc[k].wr_id);
					nbad++;
				}
				run->late_ok++;
				t_last_ok = tool_now_ns();
			} else if (!run->erred) {
				run->erred = true;
				nerr++;
				if (wc[k].status == BLUE_WC_RETRY_EXC_ERR)
					run->retry_exc++;
				else
					run->other++;
				if ((uint32_t)qi < 4)
					printf("  QP %d (0x%06x): WR %u completed with %s (%d)\n", qi,
					       wc[k].qp_num, (uint32_t)wc[k].wr_id,
					       blue_wc_status_str(wc[k].status), wc[k].status);
			} else if (wc[k].status == BLUE_WC_WR_FLUSH_ERR) {
				run->flushed++;
				nflushed++;
			} else {
				run->other++;
			}
		}
	}
	t_end = tool_now_ns();
	for (uint32_t qi = 0; qi < r->nqps && ok; qi++) {
		struct crun *run = &c->run[qi];
		struct blue_qp_attr a;
		struct blue_qp_init_attr ia;

		if (blue_query_qp(x->q[qi].qp, &a, BLUE_QP_STATE, &ia) || a.qp_state != BLUE_QPS_ERR) {
			printf("QP %u is in state %d, not ERROR\n", qi, (int)a.qp_state);
			nbad++;
		}
		if (run->retry_exc != 1 || run->other || !run->flushed) {
			printf("QP %u: %u RETRY_EXC_ERR, %u flushed, %u other errors (want 1, "
			       ">= 1, 0)\n", qi, run->retry_exc, run->flushed, run->other);
			nbad++;
		}
		if (qi < 4 && !nbad)
			printf("  QP %u (0x%06x): state ERROR, 1 RETRY_EXC_ERR, %u WRs flushed, "
			       "%u posted = %u completed\n", qi, blue_qp_num(x->q[qi].qp),
			       run->flushed, run->posted, run->done);
	}
	free(probed);
	if (!ok || nbad) {
		printf("PEER-DEATH FAILED: %u problems\n", nbad);
		return -1;
	}
	printf("PEER-DEATH OK: %u of %u QPs in ERROR with RETRY_EXC_ERR, %u WRs flushed "
	       "(%u posted after the error), none lost; %.2f s after the last ACK, "
	       "%.2f s to account for all\n", nerr, r->nqps, nflushed, nprobe,
	       t_last_ok ? (double)(t0 - t_last_ok) / 1e9 : 0.0, (double)(t_end - t0) / 1e9);
	return 0;
}


/* Everything the server must find, after the client's run. */
static void done_payload(const struct cround *c, bool ok, struct wbuf *w)
{
	const struct round *r = c->r;

	put32(w, ok);
	for (uint32_t qi = 0; qi < r->nqps; qi++) {
		const struct crun *run = &c->run[qi];

		switch (r->op) {
		case XOP_SEND:
		case XOP_SEND_IMM:
			put32(w, run->posted);
			put32(w, run->chain);
			break;
		case XOP_WRITE:
		case XOP_WRITE_IMM:
			put32(w, run->posted);
			for (uint32_t s = 0; s < r->rslots; s++)
				put32(w, r->verify ? c->slot_crc[(size_t)qi * r->rslots + s] : 0);
			break;
		case XOP_CAS:
		case XOP_FAA:
			put64(w, run->acc);
			break;
		default:
			break;
		}
	}
}

static int client_round(struct xfer *x, const struct round *r, struct result *res)
{
	const struct opts *o = x->o;
	struct cround c = { .r = r };
	struct blue_wc wc[POLL_BATCH];
	uint64_t t0, t_end = 0, t_prog, t_last_ok = 0, dl, total = (uint64_t)r->iters * r->nqps;
	uint64_t done = 0;
	uint32_t *rd = NULL, type;
	struct rbuf rb;
	struct wbuf w = { 0 };
	char name[96];
	int rc = ROUND_ABORT, n, k, err;

	round_str(r, name, sizeof(name));
	memset(res, 0, sizeof(*res));
	res->op = r->op;
	res->size = r->size;
	res->iters = r->iters;
	res->nqps = r->nqps;
	res->lat = r->lat;
	c.run = calloc(r->nqps, sizeof(*c.run));
	c.slot_crc = calloc((size_t)r->nqps * r->rslots, sizeof(uint32_t));
	c.expect = calloc((size_t)r->nqps * r->depth, sizeof(uint64_t));
	c.t_post = calloc((size_t)r->nqps * r->depth, sizeof(uint64_t));
	c.lat = r->lat ? calloc(r->iters, sizeof(double)) : NULL;
	rd = calloc((size_t)r->nqps * r->rslots, sizeof(uint32_t));
	if (!c.run || !c.slot_crc || !c.expect || !c.t_post || (r->lat && !c.lat) || !rd) {
		fprintf(stderr, "out of memory for %s\n", name);
		goto out;
	}
	c.rd_crc = rd;

	/* ROUND -> READY */
	put32(&w, r->idx);
	put32(&w, r->op);
	put32(&w, r->size);
	put32(&w, r->iters);
	put32(&w, r->depth);
	put32(&w, r->nqps);
	put32(&w, r->rslots);
	put32(&w, r->rxq);
	put32(&w, r->verify);
	put64(&w, r->seed);
	err = msg_send(x->fd, MSG_ROUND, &w, deadline(x));
	w.len = 0;
	if (!err)
		err = msg_recv(x->fd, &type, &rb, deadline(x));
	if (err || type != MSG_READY) {
		if (o->expect_death && (err == -ECONNRESET || err == -EPIPE)) {
			/* the server died between rounds: make the QPs find out */
			rc = peer_death(x, &c, NULL, 0, 0) ? ROUND_DEATH_FAIL : ROUND_DEATH_OK;
			goto out;
		}
		fprintf(stderr, "%s: no READY from the server: %s\n", name,
			err ? strerror(-err) : msg_name(type));
		free(rb.p);
		goto out;
	}
	if (get32(&rb)) {
		fprintf(stderr, "%s: the server could not prepare the round\n", name);
		free(rb.p);
		goto out;
	}
	for (uint32_t qi = 0; qi < r->nqps; qi++) {
		if (r->op == XOP_READ && r->verify)
			for (uint32_t s = 0; s < r->rslots; s++)
				rd[(size_t)qi * r->rslots + s] = get32(&rb);
		if (ops[r->op].atomic) {
			c.run[qi].acc = get64(&rb);
			if (c.run[qi].acc != atomic_init(r->seed, qi))
				mismatch(&c, "QP %u: the server's atomic target starts at 0x%016"
					 PRIx64 ", expected 0x%016" PRIx64, qi, c.run[qi].acc,
					 atomic_init(r->seed, qi));
		}
	}
	if (rb.err) {
		fprintf(stderr, "%s: READY is too short\n", name);
		free(rb.p);
		goto out;
	}
	free(rb.p);

	/* the base content of the local slots, before the clock starts */
	if (r->verify && !ops[r->op].atomic && r->op != XOP_READ)
		for (uint32_t qi = 0; qi < r->nqps; qi++)
			fill_pattern(x->q[qi].buf, (size_t)r->depth * r->size,
				     key3(r->seed, qi, 0xba5e));

	t0 = t_prog = tool_now_ns();
	dl = t0 + x->tmo_ns;
	while (done < total) {
		for (uint32_t qi = 0; qi < r->nqps; qi++) {
			struct crun *run = &c.run[qi];

			while (run->posted < r->iters && run->posted - run->done < r->depth)
				if (post_one(x, &c, qi))
					goto out;
		}
		n = blue_poll_cq(x->cq, POLL_BATCH, wc);
		if (n < 0) {
			fprintf(stderr, "poll_cq: %s\n", strerror(-n));
			goto out;
		}
		if (n) {
			uint64_t t = tool_now_ns();

			x->wcs_reaped += (uint64_t)n;
			for (k = 0; k < n; k++) {
				int qi = wc_qp(x, &wc[k]);

				if (qi < 0 || (uint32_t)qi >= r->nqps ||
				    wc[k].wr_id >> 32 != ((uint64_t)(r->idx + 1) << 16 | (uint32_t)qi)) {
					mismatch(&c, "completion for QP 0x%x wr_id 0x%" PRIx64
						 " that this round did not post", wc[k].qp_num,
						 wc[k].wr_id);
					continue;
				}
				if (wc[k].status != BLUE_WC_SUCCESS) {
					printf("%s: QP %d (0x%06x) WR %u failed: %s (%d)\n", name,
					       qi, wc[k].qp_num, (uint32_t)wc[k].wr_id,
					       blue_wc_status_str(wc[k].status), wc[k].status);
					if (o->expect_death) {
						/* this one and the rest of the batch first */
						rc = peer_death(x, &c, &wc[k], n - k, t_last_ok) ?
						     ROUND_DEATH_FAIL : ROUND_DEATH_OK;
						goto out;
					}
					goto out;
				}
				client_wc_ok(x, &c, (uint32_t)qi, &wc[k], t);
				t_last_ok = t;
				done++;
			}
			t_end = t;
			dl = t + x->tmo_ns;	/* bounded by the time without progress */
		} else if (tool_now_ns() > dl) {
			fprintf(stderr, "%s: no completion for %d s (%" PRIu64 " of %" PRIu64
				" done): is the server alive?\n", name, o->timeout_s, done, total);
			if (o->expect_death) {
				rc = peer_death(x, &c, NULL, 0, t_last_ok) ? ROUND_DEATH_FAIL :
				     ROUND_DEATH_OK;
			}
			goto out;
		}
		if (o->progress && tool_now_ns() - t_prog >= PROGRESS_NS) {
			double s = (double)(tool_now_ns() - t0) / 1e9;

			t_prog = tool_now_ns();
			printf("[progress] %s: %" PRIu64 "/%" PRIu64 " WRs (%.0f%%), %.3f Gbit/s, "
			       "%.1f s\n", name, done, total, 100.0 * (double)done / (double)total,
			       (double)done * r->size * 8 / s / 1e9, s);
		}
	}
	res->secs = (double)(t_end - t0) / 1e9;
	if (res->secs <= 0)
		res->secs = 1e-9;
	res->gbps = (double)total * r->size * 8 / res->secs / 1e9;
	res->mops = (double)total / res->secs / 1e6;
	if (r->lat && c.nlat) {
		double sum = 0;

		qsort(c.lat, c.nlat, sizeof(double), tool_cmp_double);
		for (uint32_t i = 0; i < c.nlat; i++)
			sum += c.lat[i];
		res->lat_avg = sum / c.nlat;
		res->lat_min = c.lat[0];
		res->lat_p50 = c.lat[c.nlat / 2];
		res->lat_p99 = c.lat[(size_t)((c.nlat - 1) * 0.99)];
	}

	/* DONE -> VERDICT */
	done_payload(&c, c.bad == 0, &w);
	err = msg_send(x->fd, MSG_DONE, &w, deadline(x));
	if (!err)
		err = msg_expect(x->fd, MSG_VERDICT, &rb, deadline(x));
	if (err) {
		if (o->expect_death && (err == -ECONNRESET || err == -EPIPE)) {
			rc = peer_death(x, &c, NULL, 0, t_last_ok) ? ROUND_DEATH_FAIL :
			     ROUND_DEATH_OK;
			goto out;
		}
		goto out;
	}
	{
		uint32_t sok = get32(&rb), sbad = get32(&rb);

		if (!sok || sbad) {
			c.bad += sbad ? sbad : 1;
			printf("CHECK FAILED: %s: the server found %u problems (see its log)\n",
			       name, sbad);
		}
		for (uint32_t qi = 0; ops[r->op].atomic && qi < r->nqps; qi++) {
			uint64_t got = get64(&rb);

			if (got != c.run[qi].acc)
				mismatch(&c, "QP %u: the server's %s target ends at 0x%016" PRIx64
					 ", expected 0x%016" PRIx64, qi, ops[r->op].name, got,
					 c.run[qi].acc);
		}
		if (rb.err)
			mismatch(&c, "%s: VERDICT is too short", name);
		free(rb.p);
	}
	res->bad = c.bad;
	rc = c.bad ? ROUND_FAIL : ROUND_OK;
	if (r->lat)
		printf("%-10s %8u B  latency (1 WR in flight, post to completion): avg %.2f us, "
		       "min %.2f, p50 %.2f, p99 %.2f (%u WRs)  %s\n", ops[r->op].name, r->size,
		       res->lat_avg, res->lat_min, res->lat_p50, res->lat_p99, c.nlat,
		       c.bad ? "CHECK FAILED" : r->verify || ops[r->op].atomic ?
		       "verified" : "ok");
	else
		printf("%-10s %8u B x %6u x %4u QP: %12" PRIu64 " B in %8.4f s = %8.3f Gbit/s, "
		       "%8.4f Mop/s  %s\n", ops[r->op].name, r->size, r->iters, r->nqps,
		       total * r->size, res->secs, res->gbps, res->mops,
		       c.bad ? "CHECK FAILED" : r->verify || ops[r->op].atomic ?
		       "verified" : "ok");
out:
	if (rc != ROUND_OK && !res->bad)
		res->bad = c.bad ? c.bad : 1;
	free(w.p);
	free(c.run);
	free(c.slot_crc);
	free(c.expect);
	free(c.t_post);
	free(c.lat);
	free(rd);
	return rc;
}

/*
 * After the last round: every signaled WR must have completed exactly once. The rounds
 * saw one completion per WR in send-queue order (a duplicate breaks the order, a stray
 * from an earlier round carries its round in wr_id); what is left is a late duplicate
 * of the last round's WRs, so drive the engine a little longer (the server still
 * answers) and count anything that comes. Return: 0 if posted == reaped and none came.
 */
static int completions_check(struct xfer *x)
{
	struct blue_wc wc[POLL_BATCH];
	uint64_t dl = tool_now_ns() + 200000000ull, late = 0;
	int n;

	while (tool_now_ns() < dl) {
		n = blue_poll_cq(x->cq, POLL_BATCH, wc);
		if (n < 0) {
			fprintf(stderr, "poll_cq: %s\n", strerror(-n));
			return -1;
		}
		for (int k = 0; k < n; k++)
			printf("CHECK FAILED: a completion after the last round: QP 0x%x wr_id "
			       "0x%" PRIx64 ", status %s\n", wc[k].qp_num, wc[k].wr_id,
			       blue_wc_status_str(wc[k].status));
		late += (uint64_t)n;
		x->wcs_reaped += (uint64_t)n;
		if (!n)
			usleep(1000);
	}
	if (late || x->wcs_reaped != x->wrs_posted) {
		printf("CHECK FAILED: COMPLETIONS: %" PRIu64 " signaled WRs posted, %" PRIu64
		       " completions (%" PRIu64 " after the last round)\n", x->wrs_posted,
		       x->wcs_reaped, late);
		return -1;
	}
	printf("COMPLETIONS: %" PRIu64 " signaled WRs posted, %" PRIu64 " completions: "
	       "exactly one each\n", x->wrs_posted, x->wcs_reaped);
	return 0;
}

static void print_table(const struct result *res, unsigned int n)
{
	printf("\n%-10s %9s %7s %5s %10s %10s %10s %10s %10s  %s\n", "#op", "bytes", "iters",
	       "qps", "Gbit/s", "Mop/s", "lat_avg_us", "lat_p50_us", "lat_p99_us", "check");
	for (unsigned int i = 0; i < n; i++) {
		const struct result *r = &res[i];
		/* the latency round of the same op and size, if there was one */
		const struct result *l = i + 1 < n && res[i + 1].lat && res[i + 1].op == r->op &&
					 res[i + 1].size == r->size ? &res[i + 1] : NULL;

		if (r->lat)
			continue;
		printf("%-10s %9u %7u %5u %10.3f %10.4f", ops[r->op].name, r->size, r->iters,
		       r->nqps, r->gbps, r->mops);
		if (l)
			printf(" %10.2f %10.2f %10.2f", l->lat_avg, l->lat_p50, l->lat_p99);
		else
			printf(" %10s %10s %10s", "-", "-", "-");
		printf("  %s\n", r->bad || (l && l->bad) ? "FAIL" : "OK");
	}
}

static int run_client(const struct opts *o)
{
	struct xfer x = { .o = o, .fd = -1, .tmo_ns = (uint64_t)o->timeout_s * 1000000000ull };
	static struct round rounds[MAX_ROUNDS];
	static struct result res[MAX_ROUNDS];
	size_t local_len, remote_len;
	uint32_t max_recv, max_send;
	unsigned int nr, nres = 0, failed = 0;
	uint64_t seed = random_seed();
	struct rbuf rb;
	struct wbuf w = { 0 };
	int rc = 1, death = 0, err;
	bool aborted = false;

	nr = plan_rounds(o, rounds, &local_len, &remote_len, &max_recv, &max_send);
	for (unsigned int i = 0; i < nr; i++)
		rounds[i].seed = mix64(seed + i);
	printf("client: %u QP%s on %s, %u rounds, %s, region %zu B here and %zu B at the "
	       "server per QP\n", o->nqps, o->nqps > 1 ? "s" : "", o->ifname, nr,
	       o->verify ? "payloads verified end to end (CRC-32)" : "payloads not verified",
	       local_len, remote_len);
	x.peer_len = remote_len;
	if ((uint64_t)o->nqps * (local_len > remote_len ? local_len : remote_len) > MEM_TOTAL) {
		fprintf(stderr, "%u QPs x %zu bytes is more memory than blue_xfer uses (%llu); "
			"use fewer QPs or smaller sizes\n", o->nqps,
			local_len > remote_len ? local_len : remote_len, MEM_TOTAL);
		goto out;
	}
	if (xfer_open(&x))
		goto out;
	if (xfer_create(&x, o->nqps, local_len, BLUE_ACCESS_LOCAL_WRITE, max_send, 0,
			(int)(o->nqps * (max_send + 1) + 16)))
		goto out;
	x.fd = blue_cm_connect(o->server, o->port, o->timeout_s * 1000);
	if (x.fd < 0) {
		fprintf(stderr, "cannot connect to %s:%u: %s\n", o->server, o->port,
			blue_cm_last_error());
		goto out;
	}
	put32(&w, XFER_VERSION);
	put32(&w, o->nqps);
	put64(&w, remote_len);
	put32(&w, max_recv);
	err = msg_send(x.fd, MSG_HELLO, &w, deadline(&x));
	if (!err)
		err = msg_expect(x.fd, MSG_HELLO_OK, &rb, deadline(&x));
	if (err)
		goto out;
	err = (int)get32(&rb);
	free(rb.p);
	if (err) {
		fprintf(stderr, "the server refused: %s\n", strerror(err));
		goto out;
	}
	if (xfer_connect(&x))
		goto out;
	for (unsigned int i = 0; i < nr; i++) {
		int r = client_round(&x, &rounds[i], &res[nres++]);

		if (r == ROUND_DEATH_OK || r == ROUND_DEATH_FAIL) {
			death = r;
			break;
		}
		if (r != ROUND_OK)
			failed++;
		if (r == ROUND_ABORT) {
			aborted = true;
			break;	/* a QP in ERROR or a broken channel: no further round */
		}
	}
	/* after an abort, WRs completed in error or not at all: nothing to count */
	if (!death && !aborted && completions_check(&x))
		failed++;
	if (!death) {
		w.len = 0;
		put32(&w, failed == 0);
		msg_send(x.fd, MSG_BYE, &w, deadline(&x));
		print_table(res, nres);
	}
	if (o->hold_s)
		xfer_hold(&x);
	if (o->expect_death) {
		if (!death)
			printf("PEER-DEATH FAILED: the run ended and the peer never died\n");
		rc = death == ROUND_DEATH_OK ? 0 : 1;
	} else {
		rc = failed || nres < nr ? 1 : 0;
		printf("RESULT: %s (%u of %u rounds passed)\n", rc ? "FAIL" : "PASS",
		       nres - failed, nr);
	}
out:
	free(w.p);
	if (xfer_close(&x))
		rc = 1;
	return rc;
}

/* ---- the server ------------------------------------------------------------------------- */

struct srun {
	uint32_t rx_posted, rx_done, chain;
};

struct sround {
	struct round r;
	struct srun *run;
	uint32_t *rd_crc;	/* READ: what was announced, to check the source is intact */
	uint64_t bad;
	uint64_t stray;		/* completions outside a round: kept across rounds */
	uint32_t shown;
	bool active, done_rcvd, client_ok;
	struct rbuf done;	/* the DONE payload, checked once every receive is in */
	uint64_t dl;		/* the round fails if the responder stalls until then */
	uint64_t psn_sum;	/* of the QPs' expected PSNs: moves while requests come in */
	uint64_t t_check;
};

static void sbad(struct sround *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sbad(struct sround *s, const char *fmt, ...)
{
	va_list ap;

	s->bad++;
	if (s->shown++ >= 10)
		return;
	va_start(ap, fmt);
	fputs("server: CHECK FAILED: ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
}

static int server_post_recv(struct xfer *x, struct sround *s, uint32_t qi)
{
	const struct round *r = &s->r;
	struct srun *run = &s->run[qi];
	struct xqp *q = &x->q[qi];
	uint32_t k = run->rx_posted;
	struct blue_sge sge = {
		.addr = (uintptr_t)(q->buf + (size_t)(k % r->rxq) * r->size),
		.length = r->size,
		.lkey = q->mr->lkey,
	};
	struct blue_recv_wr wr = {
		.wr_id = (uint64_t)qi << 32 | k,
		.sg_list = &sge,
		/* WRITE with immediate consumes a receive but places nothing in it */
		.num_sge = r->op == XOP_WRITE_IMM ? 0 : 1,
	};
	struct blue_recv_wr *bad;
	int err = blue_post_recv(q->qp, &wr, &bad);

	if (err) {
		fprintf(stderr, "server: post_recv on QP %u failed: %s\n", qi, strerror(err));
		return err;
	}
	run->rx_posted++;
	return 0;
}

/* ROUND: get ready and answer READY (with the READ CRCs or the atomic first values). */
static int server_round_start(struct xfer *x, struct sround *s, struct rbuf *rb)
{
	struct round *r = &s->r;
	struct wbuf w = { 0 };
	uint32_t status = 0;
	char name[96];
	int err;

	memset(r, 0, sizeof(*r));
	r->idx = get32(rb);
	r->op = (enum xop)get32(rb);
	r->size = get32(rb);
	r->iters = get32(rb);
	r->depth = get32(rb);
	r->nqps = get32(rb);
	r->rslots = get32(rb);
	r->rxq = get32(rb);
	r->verify = get32(rb);
	r->seed = get64(rb);
	free(s->run);
	free(s->rd_crc);
	s->run = NULL;
	s->rd_crc = NULL;
	s->bad = 0;
	s->shown = 0;
	s->done_rcvd = false;
	if (rb->err || r->op >= XOP__MAX || !r->size || !r->nqps || r->nqps > x->nqps ||
	    !r->rslots || (uint64_t)r->rslots * r->size > x->q[0].len ||
	    (ops[r->op].recv && !r->rxq)) {
		fprintf(stderr, "server: a ROUND it cannot run (op %u, %u B x %u slots, %u QPs)\n",
			r->op, r->size, r->rslots, r->nqps);
		status = EINVAL;
	}
	if (!status) {
		s->run = calloc(r->nqps, sizeof(*s->run));
		s->rd_crc = calloc((size_t)r->nqps * r->rslots, sizeof(uint32_t));
		if (!s->run || !s->rd_crc)
			status = ENOMEM;
	}
	put32(&w, status);
	for (uint32_t qi = 0; !status && qi < r->nqps; qi++) {
		struct xqp *q = &x->q[qi];
		size_t span = (size_t)r->rslots * r->size;

		switch (r->op) {
		case XOP_SEND:
		case XOP_SEND_IMM:
		case XOP_WRITE:
		case XOP_WRITE_IMM:
			memset(q->buf, 0, span);
			break;
		case XOP_READ:
			if (!r->verify)
				break;
			for (uint32_t sl = 0; sl < r->rslots; sl++) {
				uint8_t *p = q->buf + (size_t)sl * r->size;

				fill_pattern(p, r->size, key3(r->seed, qi, 0x5eed0000ull + sl));
				stamp(p, r->size, key3(r->seed, qi, 0x57a0000ull + sl));
				s->rd_crc[(size_t)qi * r->rslots + sl] = crc(p, r->size);
				put32(&w, s->rd_crc[(size_t)qi * r->rslots + sl]);
			}
			break;
		case XOP_CAS:
		case XOP_FAA: {
			uint64_t v = atomic_init(r->seed, qi);

			memcpy(q->buf, &v, 8);
			put64(&w, v);
			break;
		}
		default:
			break;
		}
		if (ops[r->op].recv) {
			uint32_t first = r->rxq < r->iters ? r->rxq : r->iters;

			for (uint32_t k = 0; k < first; k++)
				if (server_post_recv(x, s, qi)) {
					status = EIO;
					break;
				}
		}
	}
	if (status) {
		/* start over: a status alone */
		w.len = 0;
		put32(&w, status);
	}
	err = msg_send(x->fd, MSG_READY, &w, deadline(x));
	free(w.p);
	s->active = !status && !err;
	s->dl = deadline(x);
	if (s->active && x->o->progress)
		printf("server: round %u: %s\n", r->idx, round_str(r, name, sizeof(name)));
	return err ? err : status ? -EINVAL : 0;
}

static void server_wc(struct xfer *x, struct sround *s, const struct blue_wc *wc)
{
	const struct round *r = &s->r;
	int qi = wc_qp(x, wc);
	struct srun *run;
	uint32_t k;

	if (!s->active || qi < 0 || (uint32_t)qi >= r->nqps || !ops[r->op].recv) {
		sbad(s, "completion (status %s, opcode %d) for QP 0x%x outside a receiving "
		     "round", blue_wc_status_str(wc->status), wc->opcode, wc->qp_num);
		s->stray++;	/* s->bad restarts with the next round: count it apart */
		return;
	}
	run = &s->run[qi];
	k = (uint32_t)wc->wr_id;
	if (wc->status != BLUE_WC_SUCCESS) {
		sbad(s, "QP %d receive %u: %s (%d)", qi, k, blue_wc_status_str(wc->status),
		     wc->status);
		run->rx_done++;
		return;
	}
	if (k != run->rx_done)
		sbad(s, "QP %d: receive %u completed, expected %u (receive-queue order)", qi, k,
		     run->rx_done);
	if (wc->opcode != ops[r->op].rwc)
		sbad(s, "QP %d receive %u: opcode %d, expected %d", qi, k, wc->opcode,
		     ops[r->op].rwc);
	if (wc->byte_len != r->size)
		sbad(s, "QP %d receive %u: byte_len %u, expected %u", qi, k, wc->byte_len,
		     r->size);
	if (ops[r->op].imm && (!(wc->wc_flags & BLUE_WC_WITH_IMM) || be32toh(wc->imm_data) != k))
		sbad(s, "QP %d receive %u: immediate %s0x%x, expected 0x%x", qi, k,
		     wc->wc_flags & BLUE_WC_WITH_IMM ? "" : "missing, ", be32toh(wc->imm_data),
		     k);
	if (r->verify && (r->op == XOP_SEND || r->op == XOP_SEND_IMM)) {
		uint8_t *p = x->q[qi].buf + (size_t)(k % r->rxq) * r->size;

		run->chain = chain_add(run->chain, crc(p, r->size));
		memset(p, 0xa5, r->size);	/* a stale buffer must not pass next time */
	}
	run->rx_done++;
	if (run->rx_posted < r->iters && server_post_recv(x, s, (uint32_t)qi))
		sbad(s, "QP %d: could not repost a receive", qi);
}

/*
 * A WRITE or READ round gives the server no completion, so its bound is on the
 * responder's own progress: the expected PSNs (rq_psn) of its QPs moving.
 */
static void server_watch(struct xfer *x, struct sround *s, uint64_t now)
{
	struct blue_qp_attr a;
	uint64_t sum = 0;

	if (now - s->t_check < 100000000ull)
		return;
	s->t_check = now;
	for (uint32_t qi = 0; qi < s->r.nqps; qi++)
		if (blue_query_qp(x->q[qi].qp, &a, BLUE_QP_RQ_PSN, NULL) == 0)
			sum += a.rq_psn;
	if (sum != s->psn_sum) {
		s->psn_sum = sum;
		s->dl = now + x->tmo_ns;
	}
}

static bool server_receives_in(const struct sround *s)
{
	if (!ops[s->r.op].recv)
		return true;
	for (uint32_t qi = 0; qi < s->r.nqps; qi++)
		if (s->run[qi].rx_done < s->r.iters)
			return false;
	return true;
}

/* DONE is in and so is every receive: compare, and answer VERDICT. */
static int server_round_finish(struct xfer *x, struct sround *s)
{
	const struct round *r = &s->r;
	struct rbuf *d = &s->done;
	struct wbuf w = { 0 };
	char name[96];
	int err;

	s->client_ok = get32(d);
	if (!s->client_ok)
		sbad(s, "the client reported failed checks");
	for (uint32_t qi = 0; qi < r->nqps; qi++) {
		const struct srun *run = &s->run[qi];
		const uint8_t *buf = x->q[qi].buf;

		switch (r->op) {
		case XOP_SEND:
		case XOP_SEND_IMM: {
			uint32_t n = get32(d), chain = get32(d);

			if (n != run->rx_done)
				sbad(s, "QP %u: %u messages received, the client sent %u", qi,
				     run->rx_done, n);
			if (r->verify && chain != run->chain)
				sbad(s, "QP %u: CRC-32 chain of the received messages 0x%08x, "
				     "the client announced 0x%08x", qi, run->chain, chain);
			break;
		}
		case XOP_WRITE:
		case XOP_WRITE_IMM: {
			uint32_t n = get32(d);

			if (r->op == XOP_WRITE_IMM && n != run->rx_done)
				sbad(s, "QP %u: %u WRITE_IMM completions, the client wrote %u",
				     qi, run->rx_done, n);
			for (uint32_t sl = 0; sl < r->rslots; sl++) {
				uint32_t want = get32(d), got;

				if (!r->verify)
					continue;
				got = crc(buf + (size_t)sl * r->size, r->size);
				if (got != want)
					sbad(s, "QP %u slot %u: CRC-32 0x%08x, the client wrote "
					     "0x%08x", qi, sl, got, want);
			}
			break;
		}
		case XOP_READ:
			for (uint32_t sl = 0; r->verify && sl < r->rslots; sl++)
				if (crc(buf + (size_t)sl * r->size, r->size) !=
				    s->rd_crc[(size_t)qi * r->rslots + sl])
					sbad(s, "QP %u slot %u: a READ source changed", qi, sl);
			break;
		case XOP_CAS:
		case XOP_FAA: {
			uint64_t want = get64(d), got;

			memcpy(&got, buf, 8);
			if (got != want)
				sbad(s, "QP %u: %s target is 0x%016" PRIx64 ", expected 0x%016"
				     PRIx64 " after %u operations each executed once", qi,
				     ops[r->op].name, got, want, r->iters);
			break;
		}
		default:
			break;
		}
	}
	if (d->err)
		sbad(s, "DONE is too short");
	put32(&w, s->bad == 0);
	put32(&w, (uint32_t)s->bad);
	for (uint32_t qi = 0; ops[r->op].atomic && qi < r->nqps; qi++) {
		uint64_t v;

		memcpy(&v, x->q[qi].buf, 8);
		put64(&w, v);
	}
	err = msg_send(x->fd, MSG_VERDICT, &w, deadline(x));
	free(w.p);
	printf("server: round %u: %s: %s\n", r->idx, round_str(r, name, sizeof(name)),
	       s->bad ? "CHECK FAILED" : r->verify || ops[r->op].atomic ? "verified" : "ok");
	free(d->p);
	memset(d, 0, sizeof(*d));
	s->active = false;
	return err;
}

/*
 * The server's loop: drive the engine (the responder runs only when we poll), reap
 * receive completions, and serve the control channel between polls.
 */
static int server_serve(struct xfer *x, uint64_t *nbad, bool *client_ok)
{
	struct sround s = { 0 };
	struct blue_wc wc[POLL_BATCH];
	uint64_t idle_dl = deadline(x);
	unsigned int spin = 0;
	int rc = -1, n, err;

	for (;;) {
		struct pollfd p = { .fd = x->fd, .events = POLLIN };
		bool check;

		n = blue_poll_cq(x->cq, POLL_BATCH, wc);
		if (n < 0) {
			fprintf(stderr, "server: poll_cq: %s\n", strerror(-n));
			break;
		}
		for (int k = 0; k < n; k++)
			server_wc(x, &s, &wc[k]);
		/* busy while a round runs; between rounds, sleep on the socket */
		check = !s.active || n == 0 || ++spin % 64 == 0;
		if (check && poll(&p, 1, s.active ? 0 : 1) > 0) {
			uint32_t type = 0;
			struct rbuf rb;

			err = msg_recv(x->fd, &type, &rb, deadline(x));
			if (err) {
				fprintf(stderr, "server: control channel: %s\n",
					err == -ECONNRESET ? "the client went away without BYE" :
					strerror(-err));
				break;
			}
			idle_dl = deadline(x);
			if (type == MSG_ROUND && !s.active) {
				err = server_round_start(x, &s, &rb);
				free(rb.p);
				if (err == -EINVAL) {
					(*nbad)++;
					continue;
				}
				if (err)
					break;
			} else if (type == MSG_DONE && s.active && !s.done_rcvd) {
				s.done = rb;
				s.done_rcvd = true;
				/* a client that failed may never send the rest: don't wait */
				if (rb.len >= 4 && !be32toh(*(uint32_t *)rb.p))
					for (uint32_t qi = 0; ops[s.r.op].recv && qi < s.r.nqps; qi++)
						s.run[qi].rx_done = s.r.iters;
			} else if (type == MSG_BYE) {
				*client_ok = rb.len >= 4 && be32toh(*(uint32_t *)rb.p);
				free(rb.p);
				rc = 0;
				break;
			} else {
				fprintf(stderr, "server: unexpected %s\n", msg_name(type));
				free(rb.p);
				break;
			}
		}
		if (s.active && s.done_rcvd && server_receives_in(&s)) {
			if (server_round_finish(x, &s))
				break;
			*nbad += s.bad;
		}
		if (s.active)
			server_watch(x, &s, tool_now_ns());
		if (s.active && tool_now_ns() > s.dl) {
			printf("server: CHECK FAILED: round %u stalled for %d s (%s)\n",
			       s.r.idx, x->o->timeout_s, s.done_rcvd ? "receives missing" :
			       "no DONE from the client");
			break;
		}
		if (!s.active && tool_now_ns() > idle_dl) {
			fprintf(stderr, "server: the client said nothing for %d s\n",
				x->o->timeout_s);
			break;
		}
	}
	free(s.run);
	free(s.rd_crc);
	free(s.done.p);
	*nbad += s.stray;
	if (rc)
		(*nbad)++;
	return rc;
}

static int run_server(const struct opts *o)
{
	struct xfer x = { .o = o, .is_server = true, .fd = -1,
			  .tmo_ns = (uint64_t)o->timeout_s * 1000000000ull };
	struct wbuf w = { 0 };
	struct rbuf rb;
	uint32_t version, nqps, max_recv, status = 0;
	uint64_t region, nbad = 0;
	bool client_ok = false;
	int lfd, rc = 1, err;

	if (xfer_open(&x))
		return 1;
	lfd = blue_cm_listen(NULL, o->port);
	if (lfd < 0) {
		fprintf(stderr, "cannot listen on port %u: %s\n", o->port, blue_cm_last_error());
		goto out;
	}
	printf("server: listening on TCP port %u, blue on %s\n", o->port, o->ifname);
	x.fd = blue_cm_accept(lfd, o->timeout_s * 1000);
	close(lfd);
	if (x.fd < 0) {
		fprintf(stderr, "no client within %d s: %s\n", o->timeout_s,
			blue_cm_last_error());
		goto out;
	}
	if (msg_expect(x.fd, MSG_HELLO, &rb, deadline(&x)))
		goto out;
	version = get32(&rb);
	nqps = get32(&rb);
	region = get64(&rb);
	max_recv = get32(&rb);
	free(rb.p);
	if (rb.err || version != XFER_VERSION) {
		fprintf(stderr, "server: HELLO of version %u, this is version %d\n", version,
			XFER_VERSION);
		status = EPROTONOSUPPORT;
	} else if (!nqps || nqps > 4094 || !region || (uint64_t)nqps * region > MEM_TOTAL ||
		   !max_recv ||
		   (uint64_t)nqps * max_recv > CQ_MAX - 16) {
		fprintf(stderr, "server: cannot serve %u QPs with %" PRIu64 " B and %u "
			"receives each\n", nqps, region, max_recv);
		status = EINVAL;
	} else if (xfer_create(&x, nqps, region, BLUE_ACCESS_LOCAL_WRITE |
			       BLUE_ACCESS_REMOTE_WRITE | BLUE_ACCESS_REMOTE_READ |
			       BLUE_ACCESS_REMOTE_ATOMIC, 1, max_recv,
			       (int)(nqps * max_recv + 16))) {
		status = ENOMEM;
	}
	put32(&w, status);
	err = msg_send(x.fd, MSG_HELLO_OK, &w, deadline(&x));
	free(w.p);
	if (err || status)
		goto out;
	printf("server: %u QP%s, %" PRIu64 " B registered per QP\n", nqps, nqps > 1 ? "s" : "",
	       region);
	if (xfer_connect(&x))
		goto out;
	if (server_serve(&x, &nbad, &client_ok) == 0 && o->hold_s)
		xfer_hold(&x);
	rc = nbad || !client_ok;
	printf("server: %s\n", rc ? (nbad ? "FAIL" : "FAIL (the client reported failures)") :
	       "PASS (every check on this side passed)");
out:
	if (xfer_close(&x))
		rc = 1;
	return rc;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_release };
	struct opts o;
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	rc = parse_args(argc, argv, &o);
	if (rc)
		return rc == 2 ? 0 : EXIT_USAGE;
	return o.server ? run_client(&o) : run_server(&o);
}
