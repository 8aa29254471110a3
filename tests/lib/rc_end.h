/* SPDX-License-Identifier: MIT */
/*
 * rc_end: one end of an RC connection over a real netdev, for the test programs that run
 * in two namespaces (tests/netns/rc_smoke.c, tests/netns/hostile_peer.c): open the
 * device, register the caller's memory, create and connect one QP through blue's CM,
 * post and wait with bounded waits. Every failure prints one "FAIL ..." line on stdout,
 * which the scripts read, and counts in @failures.
 */
#ifndef BLUE_TESTS_RC_END_H
#define BLUE_TESTS_RC_END_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <blue/blue.h>

#define RC_ACCESS_ALL	(BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE | \
			 BLUE_ACCESS_REMOTE_READ | BLUE_ACCESS_REMOTE_ATOMIC)
#define RC_PENDING_MAX	64

struct rc_end {
	/* set by the caller before rc_end_open() */
	const char *ifname;
	bool server;
	const char *host;	/* client: the server's address */
	unsigned int port;	/* the CM's TCP port */
	int timeout_ms;		/* bound on every wait */
	uint8_t *mem;		/* registered with RC_ACCESS_ALL; owned by the caller */
	size_t mem_len;
	uint32_t slot, nrecv;	/* receive slots of @slot bytes, all kept posted */
	uint32_t sq_depth;
	int cq_depth;
	bool no_cm_mac;		/* forget the peer's MAC: the neighbour table must supply it */
	int queue;		/* >= 0: blue_open_device_queue(); < 0: blue_open_device() */

	struct blue_context *ctx;
	struct blue_pd *pd;
	struct blue_cq *cq;
	struct blue_qp *qp;
	struct blue_mr *mr;
	uint8_t *rbuf;		/* @nrecv receive slots */
	struct blue_mr *rmr;
	struct blue_cm_info local, remote;
	unsigned int failures;
	/* completions taken off the CQ but not yet wanted */
	struct blue_wc pending[RC_PENDING_MAX];
	unsigned int npending;
};

/* A byte pattern of the absolute offset and a seed, not periodic in 256. */
uint8_t rc_pat(uint64_t k, unsigned int seed);
void rc_fill(uint8_t *p, uint64_t base, uint32_t len, unsigned int seed);
/* First offset where @p differs from the pattern, or -1. */
int64_t rc_mismatch(const uint8_t *p, uint64_t base, uint32_t len, unsigned int seed);

void rc_failf(struct rc_end *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Device, PD, CQ, both MRs, the QP in INIT and every receive posted; 0 or -1. */
int rc_end_open(struct rc_end *e);
/* Everything rc_end_open() made, in reverse; each step must succeed (counted if not). */
void rc_end_close(struct rc_end *e);
/* blue's CM over TCP (the server prints "READY qpn Q port P" before it accepts), then the
 * QP to RTS. The server offers its MR; a client without one fails. 0 or -1. */
int rc_end_connect(struct rc_end *e);

/* Receive slot @slot posted again (filled with 0xdd first: a receive that wrote too far
 * shows). */
int rc_post_recv(struct rc_end *e, unsigned int slot);
/* One signaled WR from @addr (in the MR) of @len bytes; atomics take @cmp_add/@swap. */
int rc_post(struct rc_end *e, enum blue_wr_opcode op, uint64_t wr_id, void *addr, uint32_t len,
	    uint32_t imm, uint64_t raddr, uint32_t rkey, uint64_t cmp_add, uint64_t swap);
/* The next receive completion (@recv) or the send completion of @wr_id, within the timeout;
 * others seen meanwhile are kept for later calls. 0, or -1 after a FAIL line (also for a
 * completion in error). */
int rc_wait_wc(struct rc_end *e, bool recv, uint64_t wr_id, struct blue_wc *out,
	       const char *what);
int rc_wait_send(struct rc_end *e, uint64_t wr_id, const char *what);

#endif
