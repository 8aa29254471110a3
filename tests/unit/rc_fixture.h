/* SPDX-License-Identifier: MIT */
/*
 * Two players in one process (STYLE.md 10): two libblue contexts over an in-process
 * loopback HAL pair, each with a PD, a send and a receive CQ and one RC QP, connected
 * to each other. Helpers post, drive both engines and wait for completions with a
 * bounded time, and check buffers.
 */
#ifndef BLUE_TESTS_RC_FIXTURE_H
#define BLUE_TESTS_RC_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include <blue/blue.h>
#include "afxdp_hal/hal.h"

struct rc_side {
	struct blue_context *ctx;
	struct blue_pd *pd;
	struct blue_cq *scq;
	struct blue_cq *rcq;
	struct blue_qp *qp;
	struct blue_hal *hal;
	uint8_t mac[6];
	uint32_t ip;		/* network order */
};

struct rc_opts {
	uint32_t sq_psn_a, sq_psn_b;	/* A's and B's first PSN */
	uint8_t timeout;		/* local ACK timeout exponent */
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t min_rnr_timer;
	uint32_t access;		/* QP access flags, both sides */
	uint32_t max_send_wr, max_recv_wr;
	uint32_t max_sge;
	uint32_t max_inline;
	enum blue_mtu mtu;
	uint8_t hop_limit;		/* the address vector's; 0 = not given */
	uint8_t sgid_index;		/* the address vector's; 0 = 1, the IPv4 GID */
	int sq_sig_all;
	int cqe;
};

struct rc_fx {
	struct rc_side a, b;
	struct rc_opts o;
	bool self;		/* rc_fx_init_self: b is a second QP of a's context */
};

/* Defaults: PSNs 0x100/0x200, timeout 12 (~17 ms), retry 7, rnr 7, MTU 1024, all rights. */
void rc_opts_default(struct rc_opts *o);

/* Both contexts, PDs and CQs, and two QPs in RTS connected to each other. */
void rc_fx_init(struct rc_fx *fx, const struct rc_opts *o);
/* Everything destroyed; asserts each destroy succeeds. */
void rc_fx_fini(struct rc_fx *fx);

/*
 * One context, two QPs connected to each other (loopback, as rxe_loopback): b has its
 * own PD, CQs and QP on a's context (b.ctx == a.ctx, b's MAC and IP are a's); the
 * loopback HAL's other end is unused. Fini as above.
 */
void rc_fx_init_self(struct rc_fx *fx, const struct rc_opts *o);
/* The same without the QPs. */
void rc_fx_init_self_noqp(struct rc_fx *fx, const struct rc_opts *o);

/* Only the contexts, PDs and CQs (for QP state-machine tests); fini as above. */
void rc_fx_init_noqp(struct rc_fx *fx, const struct rc_opts *o);
/* Create @s's QP and leave it in RESET. */
struct blue_qp *rc_qp_create(struct rc_fx *fx, struct rc_side *s);
/* Drive @s's QP RESET -> INIT -> RTR -> RTS against @peer's QP. */
void rc_qp_connect(struct rc_fx *fx, struct rc_side *s, struct rc_side *peer, uint32_t sq_psn,
		   uint32_t rq_psn);

/* The same against the QPN @dqpn on @peer's context (a QPN that may not exist there). */
void rc_qp_connect_qpn(struct rc_fx *fx, struct rc_side *s, struct rc_side *peer,
		       uint32_t dqpn, uint32_t sq_psn, uint32_t rq_psn);

/* One engine pass on each side. */
void rc_progress(struct rc_fx *fx);

/*
 * Poll @cq (which drives its own context) and drive the other context too, until @n
 * completions are in @wc or @timeout_ms passes. Return: how many were reaped.
 */
int rc_poll(struct rc_fx *fx, struct blue_cq *cq, struct blue_wc *wc, int n, int timeout_ms);

/* Exactly one completion on @cq within @timeout_ms (asserts), returned. */
struct blue_wc rc_wait1(struct rc_fx *fx, struct blue_cq *cq, int timeout_ms);

/* Run both engines for @ms milliseconds, asserting @cq yields nothing meanwhile. */
void rc_quiet(struct rc_fx *fx, struct blue_cq *cq, int ms);

/* Post helpers; they assert the post succeeds. */
void rc_post_recv(struct rc_side *s, uint64_t wr_id, void *buf, uint32_t len, uint32_t lkey);
void rc_post_send(struct rc_side *s, struct blue_send_wr *wr);

/* A buffer of @len bytes filled with a pattern depending on @seed. */
void rc_fill(void *buf, size_t len, unsigned int seed);
/* Whether @buf still holds rc_fill's pattern for @seed. */
bool rc_check(const void *buf, size_t len, unsigned int seed);

/*
 * A loopback filter that drops frames A (or B) sends which match: opcode (-1 for any),
 * a PSN (-1 for any), at most @max_drops times (-1: no limit). @dropped counts.
 */
struct rc_drop {
	int opcode;
	int64_t psn;
	int max_drops;
	int dropped;
	int seen;	/* frames offered */
};

void rc_drop_install(struct blue_hal *hal, struct rc_drop *d);

/* A source buffer on one side and a zeroed sink on the other, each registered. */
struct rc_mem {
	uint8_t *src, *dst;
	struct blue_mr *smr, *dmr;
	uint32_t len;
};

/* @len bytes each, @src filled with rc_fill(@seed), both MRs with @access. */
void rc_mem_init(struct rc_mem *m, struct rc_side *from, struct rc_side *to, uint32_t len,
		 unsigned int seed, unsigned int access);
/* Both MRs deregistered (asserted) and both buffers freed. */
void rc_mem_fini(struct rc_mem *m);

/* The bound on any wait for a completion; a passing test needs a few ms of it. */
#define RC_WAIT_MS 5000

#endif /* BLUE_TESTS_RC_FIXTURE_H */
