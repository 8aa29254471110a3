/* SPDX-License-Identifier: MIT */
/*
 * The shared core of blue's perftest-style benchmarks (blue_write_bw, blue_read_lat, ...):
 * options (perf_opts.c), the connection and the control channel (perf_conn.c), the
 * bandwidth and latency loops (perf_bw.c, perf_lat.c) and the reports (perf_report.c).
 * Each program is one small file that names its test and calls perf_main().
 *
 * Roles, as perftest's: the server is started without a host and waits; the client gets
 * the server's address and drives every round. The client's options win: it sends them
 * to the server in PARAMS, so a server needs only -d (and -p, -x).
 */
#ifndef BLUE_TOOLS_PERF_H
#define BLUE_TOOLS_PERF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <blue/blue.h>
#include "tools/common/tool_common.h"

#define PERF_DEF_PORT	18515		/* perftest's */
#define PERF_MAX_SIZE	(1u << 23)	/* -a runs 2 .. 2^23, as perftest */
#define PERF_MAX_QPS	256
#define PERF_CQ_MOD	100		/* perftest's CQ moderation */
#define PERF_RX_DEPTH	512		/* receives posted per QP (send tests) */
#define PERF_LAT_INLINE	220		/* default inline size of the latency tests */

enum perf_test {
	PT_WRITE_BW,
	PT_READ_BW,
	PT_SEND_BW,
	PT_WRITE_LAT,
	PT_READ_LAT,
	PT_SEND_LAT,
	PT_ATOMIC_LAT,
	PT__MAX
};

struct perf_test_desc {
	const char *name;	/* "write_bw" */
	const char *title;	/* "RDMA_Write BW Test", perftest's banner */
	enum blue_wr_opcode op;
	bool lat;		/* a latency test: one WR in flight */
	bool pingpong;		/* both sides send in turn; reported figure = RTT / 2 */
	bool recv;		/* the server (and in ping-pong, both) posts receives */
	uint32_t def_iters;	/* perftest's defaults: 5000 bandwidth, 1000 latency */
	uint32_t def_depth;	/* 128 bandwidth, 1 latency */
};

extern const struct perf_test_desc perf_tests[PT__MAX];

struct perf_opts {
	enum perf_test test;
	const char *ifname;
	const char *server;	/* NULL: this is the server */
	uint16_t port;
	int gidx;
	uint32_t size;
	bool all_sizes;		/* -a */
	uint32_t iters;		/* -n */
	uint32_t duration;	/* -D seconds; 0: run -n iterations */
	uint32_t nqps;		/* -q */
	uint32_t tx_depth;	/* -t */
	uint32_t post_list;	/* -l */
	uint32_t inline_size;	/* -I */
	enum blue_mtu mtu;	/* -m; 0: the port's active MTU */
	bool gbits;		/* --report_gbits */
	bool json;		/* --out_json */
	const char *json_file;	/* --out_json_file */
	bool cas;		/* atomic_lat -A CMP_AND_SWAP (default FETCH_AND_ADD) */
	int timeout_s;		/* bound on every wait */
	bool inject;		/* test-only: corrupt the data after its CRC was taken */
	bool events;		/* -e: sleep on the completion channel when idle (own side) */
	uint32_t cq_mod;	/* --cq-mod: signal every N-th WR (0: perftest's 100) */
	uint32_t report_us;	/* --report-interval-us: per-QP bytes to a CSV; 0: off */
	const char *report_file;	/* --report-file (default flows.csv) */
	uint32_t linger_ms;	/* --linger-ms: keep the QPs this long after the run (own side) */
	bool cc_given;		/* --cc: offer only this congestion control (own side) */
	uint32_t cc_caps;
};

/* perf_opts.c: Return 0 to run, 1 on a usage error, 2 after --help. */
int perf_parse(int argc, char **argv, enum perf_test test, struct perf_opts *o);

/* ---- connection (perf_conn.c) --------------------------------------------------- */

struct perf_qp {
	struct blue_qp *qp;
	uint8_t *buf;		/* this QP's slice of the registered memory */
	uint32_t rx_out;	/* receives posted and not yet completed */
	struct blue_cm_info local, remote;
};

struct perf_ctx {
	struct perf_opts *o;	/* the server's copy takes the client's PARAMS */
	const struct perf_test_desc *t;
	bool server;
	int fd;			/* the TCP control connection */
	struct blue_context *ctx;
	struct blue_pd *pd;
	struct blue_cq *cq;
	struct blue_comp_channel *chan;	/* -e only */
	struct blue_mr *mr;
	uint8_t *mem;		/* blue_buf_alloc(slot * nqps) */
	unsigned int mem_flags;	/* which pages back it: enum blue_buf_flags */
	size_t slot;		/* bytes per QP */
	size_t half;		/* ping-pong: the source half of a slot starts here */
	uint32_t max_send, max_recv;
	struct perf_qp *q;
	uint32_t nqps;
	uint64_t tmo_ns;
};

/* Control messages after PARAMS; one fixed layout, network byte order on the wire. */
enum perf_msg_type {
	PM_PARAMS_OK = 1,	/* S->C: status, reason */
	PM_START,		/* C->S: size, count (0: until END) */
	PM_READY,		/* S->C: crc of what the client will READ (read tests) */
	PM_END,			/* C->S: count of WRs done, crc of what was sent */
	PM_VERDICT,		/* S->C: status, reason, the server's CPU use */
	PM_BYE,			/* C->S */
};

struct perf_msg {
	uint32_t type;
	uint32_t status;	/* 0: fine */
	uint32_t size;
	uint32_t crc;
	uint64_t count;
	uint64_t cpu_milli;	/* cores x 1000 over the round */
	char reason[96];
};

int perf_open(struct perf_ctx *c);	/* both: the TCP connection, PARAMS, resources, QPs */
void perf_close(struct perf_ctx *c);
int perf_msg_send(struct perf_ctx *c, const struct perf_msg *m);
/* Wait for a message of type @want (bounded). Return 0 or -1 after a message. */
int perf_msg_recv(struct perf_ctx *c, uint32_t want, struct perf_msg *m);
/*
 * The same, driving the engine meanwhile (the peer may still need an ACK from us for
 * what it sent last); a completion while waiting is an error: none is due.
 */
int perf_msg_wait(struct perf_ctx *c, uint32_t want, struct perf_msg *m);
/*
 * Client, end of a size: send @m (PM_END) and take the server's PM_VERDICT into @m and its
 * CPU use into @cpu_server. Return 0, or -1 (a message said why) if the exchange failed or
 * the server's check did.
 */
int perf_msg_end(struct perf_ctx *c, struct perf_msg *m, double *cpu_server);
/* A message is waiting on the control socket (non-blocking check). */
bool perf_msg_pending(struct perf_ctx *c);

/* ---- shared helpers (perf_report.c; clock and CPU time: tools/common) ---------- */

uint32_t perf_crc(uint32_t crc, const void *buf, size_t len);
/* Fill @buf with a pattern keyed by @key, so a stale buffer never passes for a new one. */
void perf_fill(uint8_t *buf, size_t len, uint64_t key);

struct perf_bw_result {
	uint32_t size;
	uint64_t iters;
	double bw_peak, bw_avg;	/* bytes per second */
	double msg_rate;	/* messages per second */
	double cpu_client, cpu_server;	/* cores */
};

struct perf_lat_result {
	uint32_t size;
	uint64_t iters;
	double min, max, typical, avg, stdev, p99, p999;	/* usec */
	double cpu_client, cpu_server;
};

void perf_print_banner(const struct perf_ctx *c);
void perf_print_header(const struct perf_ctx *c);
void perf_print_bw(const struct perf_ctx *c, const struct perf_bw_result *r);
void perf_print_footer(void);
/* Sort @ns (per-iteration times in ns, already halved for ping-pong) into @r. */
void perf_lat_stats(double *ns, uint64_t n, struct perf_lat_result *r);
void perf_print_lat(const struct perf_lat_result *r);
/* --out_json: every size's result in one file. Return 0 or -1. */
int perf_write_json(const struct perf_ctx *c, const struct perf_bw_result *bw,
		    const struct perf_lat_result *lat, unsigned int n);

/* ---- per-QP goodput over time (perf_flowlog.c) ------------------------------- */

struct perf_flowlog {
	FILE *f;		/* NULL: --report-interval-us is off, every call a no-op */
	uint64_t interval_ns, next_ns;
	uint64_t *bytes;	/* per QP, retired since its last row */
	uint32_t *qpn;
	uint32_t nqps;
};

/* Open o->report_file (when o->report_us) and write the header. Return 0 or -1. */
int perf_flowlog_open(struct perf_flowlog *fl, const struct perf_ctx *c, uint64_t now);
/* @bytes of QP @qi retired by a completion */
static inline void perf_flowlog_add(struct perf_flowlog *fl, uint32_t qi, uint64_t bytes)
{
	if (fl->f)
		fl->bytes[qi] += bytes;
}
/* Write a row per QP when the interval is up. */
void perf_flowlog_tick(struct perf_flowlog *fl, uint64_t now);
/* The last rows, and close. Return 0, or -1 when the file could not be written. */
int perf_flowlog_close(struct perf_flowlog *fl, uint64_t now);

/* The CQ moderation of a bandwidth round: --cq-mod, at most the TX depth. */
uint32_t perf_cq_mod(const struct perf_opts *o);

/* ---- the loops (perf_bw.c, perf_lat.c) ---------------------------------------- */

/* One round at @size: the client fills @res; both return 0, or -1 after a message. */
int perf_bw_client(struct perf_ctx *c, uint32_t size, struct perf_bw_result *res);
int perf_bw_server(struct perf_ctx *c, const struct perf_msg *start);
int perf_lat_client(struct perf_ctx *c, uint32_t size, struct perf_lat_result *res);
int perf_lat_server(struct perf_ctx *c, const struct perf_msg *start);

/* Drive one poll of the CQ and fail on an error completion. Return reaped or -1. */
int perf_poll(struct perf_ctx *c, struct blue_wc *wc, int n);
/*
 * How long a server that sees no completions of its own (WRITE, READ, atomics: only the
 * responder runs) waits for END: the run's duration plus two timeouts, or ten timeouts
 * for an -n run. The client bounds each of its own waits by the timeout, and a client
 * that dies closes the control connection, which ends the wait at once.
 */
uint64_t perf_blind_bound_ns(const struct perf_ctx *c);
/*
 * Nothing came of the last poll: with -e, sleep (at most 1 ms) until a frame arrives or
 * a transport timer fires, on the completion channel's fd; without, return at once
 * (busy-poll). Every loop calls it after a poll that reaped nothing.
 */
void perf_idle(struct perf_ctx *c);
/* Post one receive for QP @qi into its buffer (@size bytes). Return 0 or -1. */
int perf_post_recv(struct perf_ctx *c, uint32_t qi, uint32_t size);

int perf_main(int argc, char **argv, enum perf_test test);

#endif /* BLUE_TOOLS_PERF_H */
