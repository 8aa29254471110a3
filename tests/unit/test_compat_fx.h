/* SPDX-License-Identifier: MIT */
/*
 * Two verbs contexts in one process (STYLE.md 10), made by the compatibility layer
 * (compat/) over two libblue contexts on the loopback HAL, so tests drive the very
 * ibv_* entry points and inline dispatch that unmodified programs use.
 */
#ifndef BLUE_TESTS_COMPAT_FX_H
#define BLUE_TESTS_COMPAT_FX_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include "compat/compat.h"

#define CX_BUF		8192
#define CX_WAIT_MS	5000

struct cx_side {
	struct blue_hal *hal;
	struct bv_device dev;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq_ex *cq;		/* send and receive */
	struct ibv_qp *qp;
	uint8_t *buf;
	struct ibv_mr *mr;
	uint8_t mac[6];
	uint32_t ip;			/* network order */
};

struct cx_fx {
	struct cx_side a, b;
	uint8_t init_depth;		/* max_rd_atomic cx_connect asks for (0: 4) */
	uint8_t dest_depth;		/* max_dest_rd_atomic it gives (0: 4) */
	bool shared;			/* cx_init_shared: b is a's device opened again */
};

/* Contexts, PDs, a CQ each (ibv_create_cq_ex), buffers with MRs; no QPs. */
void cx_init_noqp(struct cx_fx *fx);
/*
 * As cx_init_noqp, but b is a second verbs context of a's device (its core shared, as
 * a second ibv_open_device() makes it): one libblue context, QPs connected through
 * loopback. b's HAL is the unused end of the pair.
 */
void cx_init_shared_noqp(struct cx_fx *fx);
/* ... and an RC QP each (ibv_create_qp_ex with @send_ops, 0: plain ibv_create_qp), RTS. */
void cx_init(struct cx_fx *fx, uint64_t send_ops);
/* An RC QP on @s (ibv_create_qp_ex with @send_ops; 0: plain ibv_create_qp), RESET. */
struct ibv_qp *cx_qp_create(struct cx_side *s, uint64_t send_ops);
/* @s's QP (in INIT) to RTR against @peer's, GID index 1, with @dest responder
 * resources. Return: ibv_modify_qp's. */
int cx_qp_rtr(struct cx_side *s, struct cx_side *peer, uint8_t dest);
/* Both QPs (made by the caller) to RTS against each other, GID index 1. */
void cx_connect(struct cx_fx *fx);
/* Everything destroyed through the verbs API, asserting success. */
void cx_fini(struct cx_fx *fx);

/*
 * One completion from @s's CQ through start_poll/end_poll, driving the other side too
 * (a zero-entry ibv_poll_cq), within CX_WAIT_MS (asserts). Fills @wc from the read_*
 * accessors.
 */
void cx_wait(struct cx_fx *fx, struct cx_side *s, struct ibv_wc *wc);

#endif /* BLUE_TESTS_COMPAT_FX_H */
