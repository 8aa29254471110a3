/* SPDX-License-Identifier: MIT */
/*
 * The progress engine of one context: one pass drains the HAL's RX ring, parses each
 * frame and hands requests to the responder and responses to the completer, fires the
 * timers that are due, lets the responder and requester of every QP send, and rings
 * the TX doorbell once (a pass that only ACKs may leave that to the next pass:
 * progress.c ack_hold). The application's blue_poll_cq() (and blue_get_cq_event())
 * run it; nothing else does, and no signal ever does (ARCHITECTURE.md "Progress").
 */
#ifndef BLUE_RUNTIME_PROGRESS_H
#define BLUE_RUNTIME_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "afxdp_hal/hal.h"
#include "runtime/codec.h"

#define BLUE_HIDDEN __attribute__((visibility("hidden")))

#define BLUE_TX_BATCH	64	/* frames per tx_submit */
#define BLUE_TX_STASH_MIN 4	/* frames a pass's first tx_alloc takes */
#define BLUE_RX_BURST	64	/* frames per rx_burst */
#define BLUE_RX_PASS	256	/* frames one pass takes from RX at most */
/*
 * Frames one pass may send. The peer drains its RX ring once per pass, and the
 * loopback HAL's default ring holds 256: staying under it keeps a fast sender from
 * overrunning a receiver that runs at the same pace.
 */
#define BLUE_TX_PASS	192
#define BLUE_MAX_PAYLOAD 4096	/* largest IB MTU: the gather buffer */

struct blue_engine_stats {
	uint64_t passes;
	uint64_t rx_frames;
	uint64_t rx_batches;	/* RX bursts that returned frames */
	uint64_t rx_cnp;	/* RoCEv2 CNPs, counted on their QP (annex A17.9) */
	uint64_t rx_bad_icrc;	/* dropped: ICRC mismatch (annex A17.3.3) */
	uint64_t rx_malformed;	/* dropped: any other parse error */
	uint64_t rx_no_qp;	/* dropped: no QP of this context owns the QPN */
	uint64_t rx_bad_src;	/* dropped: not from the QP's connected peer */
	uint64_t rx_wrong_transport; /* dropped: an opcode of another transport than the QP's */
	uint64_t rx_bad_qkey;	/* UD, dropped: the DETH Q_Key is not the QP's (IBA 10.2.5) */
	uint64_t rx_ud_no_wqe;	/* UD, dropped: no receive WQE posted (UD has no RNR) */
	uint64_t tx_ud_too_long; /* UD sends over the MTU: completed unsent (C10-93.1.1) */
	uint64_t rx_uc_dropped;	/* UC, dropped unanswered: per reason in the QP (resp_uc.c) */
	uint64_t rx_mcast_copies; /* multicast: copies handed to attached QPs (mcast.h) */
	uint64_t rx_mcast_no_group; /* multicast, dropped: no QP attached to the group */
	uint64_t rx_mcast_bad_pkey; /* multicast copies dropped: the QP's P_Key differs */
	uint64_t tx_mcast_loop;	/* multicast sent to a group of our own: looped back too */
	/* requests the responder refused, by reason (IBA 9.7.5: none is executed) */
	uint64_t rx_dup;	/* behind the expected PSN: re-ACKed, replayed or dropped, not re-run */
	uint64_t rx_seq_err;	/* ahead of the expected PSN (outside the window): NAK'd once */
	uint64_t rx_inv_req;	/* NAK invalid request: opcode sequence, lengths, alignment */
	uint64_t rx_access_err;	/* NAK remote access: R_Key, bounds, MR or QP rights */
	uint64_t rx_op_err;	/* NAK remote operational error */
	uint64_t tx_frames;
	uint64_t tx_no_frame;	/* a send waited: frame pool or pass budget empty */
	uint64_t tx_dropped;	/* built but refused by a full TX ring (or loopback queue) */
	uint64_t tx_loopback;	/* sent to this device itself: looped back (loopback.h) */
	uint64_t ack_deferred;	/* ACK-only doorbells held over to the next pass */
	/* congestion control on the wire (runtime/cc_wire.h) */
	uint64_t tx_paced;	/* a request the pacing gate held for a later pass */
	uint64_t tx_cnp;	/* RoCEv2 CNPs sent, answering CE-marked requests */
	uint64_t rx_ce;		/* frames received with ECN CE (IPv4 TOS & 3 == 3) */
	uint64_t parse_err[BLUE_PARSE_ERR_MAX];
};

struct blue_engine {
	struct blue_frame stash[BLUE_TX_BATCH];	/* allocated, not built yet */
	unsigned int nstash;
	unsigned int stash_want;		/* frames the next tx_alloc asks for */
	struct blue_frame batch[BLUE_TX_BATCH];	/* built, not submitted yet */
	unsigned int nbatch;
	struct blue_frame dack[BLUE_TX_BATCH];	/* built ACKs held for the next doorbell */
	unsigned int ndack;
	unsigned int pass_other;		/* frames this pass that are not plain ACKs */
	bool pass_released;			/* this pass queued the held ACKs */
	bool defer_acks;			/* BLUE_ACK_DEFER (default on), read at open */
	uint64_t posts;				/* post_send calls that posted (atomic) */
	uint64_t posts_seen;			/* posts at the last ACK-only pass */
	unsigned int budget;			/* frames this pass may still send */
	unsigned int rotor;			/* which QP the next pass serves first */
	bool submitted;				/* a flush is owed */
	bool running;				/* re-entrancy guard */
	bool share_lifted;	/* tenants: the pass's second round (tenant_sched.c) */
	bool share_held;	/* tenants: a share held a QP back this round */
	uint32_t top_class;	/* tenants: the highest class holding QPs this pass */
	uint64_t now_ns;			/* CLOCK_MONOTONIC at the start of the pass */
	uint64_t next_ns;			/* the last pass's timer minimum (0: none): when a
						 * sleeping thread must run the engine again */
	struct blue_engine_stats st;
	uint8_t gather[BLUE_MAX_PAYLOAD];	/* multi-SGE payloads are gathered here */
};

struct blue_context;

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t blue__now_ns(void) BLUE_HIDDEN;

/*
 * blue__progress() - run one pass of @ctx's engine.
 * Locking: the context's thread only.
 * Return: how many frames were received plus sent (0: nothing happened).
 */
int blue__progress(struct blue_context *ctx) BLUE_HIDDEN;

/*
 * blue__rx_frame() - parse one received frame and hand it to its QP's responder or
 * completer; a bad frame is dropped and counted. @f stays the caller's.
 * Locking: the context's thread only.
 */
void blue__rx_frame(struct blue_context *ctx, const struct blue_frame *f) BLUE_HIDDEN;

/*
 * blue__tx_room() - whether one more frame may be sent in this pass (budget, frames).
 * A sender checks this before it commits state for a packet.
 */
bool blue__tx_room(struct blue_context *ctx) BLUE_HIDDEN;

/*
 * blue__tx_pkt() - build @p into a frame and queue it for this pass's doorbell; a frame
 * for this context's own IP and MAC goes to the loopback queue instead, for the next
 * pass's receive (loopback.h). Every frame the engine sends passes here.
 * Return: 0, -EAGAIN when no frame or budget is left this pass (nothing was consumed),
 * or another -errno when @p does not build (a bug: logged).
 */
int blue__tx_pkt(struct blue_context *ctx, const struct blue_pkt *p) BLUE_HIDDEN;

/*
 * Give back stashed frames and ring the doorbell for everything queued, ACKs held over
 * from the last pass included (after this pass's frames).
 */
void blue__tx_flush(struct blue_context *ctx) BLUE_HIDDEN;

/* The engine counters of @ctx (for tests and bluectl). */
const struct blue_engine_stats *blue__engine_stats(struct blue_context *ctx) BLUE_HIDDEN;

#endif /* BLUE_RUNTIME_PROGRESS_H */
