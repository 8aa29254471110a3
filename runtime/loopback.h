/* SPDX-License-Identifier: MIT */
/*
 * Loopback: a frame for this context's own address (a QP connected to another QP of
 * the same device, in the same or another verbs context) never goes to the HAL's TX
 * ring. It is queued here and received by the next pass as if it came from the socket
 * (parsed, ICRC and all), as rxe's rxe_loopback() hands such an skb to its own receive
 * path. The queue holds frames taken from the HAL's TX pool; they go back to it once
 * received, or at close.
 */
#ifndef BLUE_RUNTIME_LOOPBACK_H
#define BLUE_RUNTIME_LOOPBACK_H

#include <stdbool.h>

#include "afxdp_hal/hal.h"
#include "runtime/codec.h"

#define BLUE_HIDDEN __attribute__((visibility("hidden")))

/*
 * Frames waiting for the next pass. A pass sends at most BLUE_TX_PASS (192) frames, and
 * the next pass takes them all before it sends any of its own, so twice that is room
 * to spare; a full queue drops the frame like a full TX ring (retransmission covers).
 */
#define BLUE_LB_QLEN	512u

struct blue_loopback {
	struct blue_frame q[BLUE_LB_QLEN];
	unsigned int head, tail;	/* free-running; tail - head frames queued */
};

struct blue_context;

/* Whether @p is addressed to @ctx itself (its IPv4 address and MAC). */
bool blue__loopback_dst(const struct blue_context *ctx, const struct blue_pkt *p) BLUE_HIDDEN;

/*
 * blue__loopback_mcast() - @p (built in @f) goes to a group: when a QP of @ctx is
 * attached to it, queue a copy of @f for the next pass too, since nothing on the wire
 * brings our own frame back (the kernel loops IP multicast back to its sender host, and
 * rxe receives its own multicast so; mcast.h). @f stays the caller's.
 */
void blue__loopback_mcast(struct blue_context *ctx, const struct blue_pkt *p,
			  const struct blue_frame *f) BLUE_HIDDEN;

/*
 * blue__loopback_push() - queue the built frame @f for the next pass.
 * Return: 0, or -ENOSPC when the queue is full (@f is then still the caller's).
 */
int blue__loopback_push(struct blue_loopback *lb, const struct blue_frame *f) BLUE_HIDDEN;

/* Frames queued. */
unsigned int blue__loopback_count(const struct blue_loopback *lb) BLUE_HIDDEN;

/*
 * blue__loopback_drain() - receive the frames queued before this call (what a receive
 * queues in turn waits for the next pass: no recursion into the responder) and give
 * them back to the HAL's pool.
 * Return: how many were received.
 */
unsigned int blue__loopback_drain(struct blue_context *ctx) BLUE_HIDDEN;

/* blue__loopback_fini() - give every queued frame back to the HAL's pool (close). */
void blue__loopback_fini(struct blue_context *ctx) BLUE_HIDDEN;

#endif /* BLUE_RUNTIME_LOOPBACK_H */
