/* SPDX-License-Identifier: MIT */
/*
 * The completer: ACKs, NAKs, READ responses and atomic ACKs -> completions, in send-queue
 * order (IBA 9.7, the requester side: its receive half). It owns the retransmit and RNR
 * timers and the retry counters, and moves the QP to ERROR when they run out.
 */
#ifndef BLUE_RUNTIME_COMP_H
#define BLUE_RUNTIME_COMP_H

#include <stdbool.h>
#include <stdint.h>

#include <blue/blue.h>

#include "runtime/probes.h"

struct blue_qp;
struct blue_pkt;

enum blue_comp_state {
	BLUE_COMP_GET_WQE,	/* the oldest WQE not completed yet */
	BLUE_COMP_CHECK_PSN,	/* where the response's PSN falls against that WQE */
	BLUE_COMP_CHECK_ACK,	/* what kind of response it is */
	BLUE_COMP_READ,		/* place READ response data */
	BLUE_COMP_ATOMIC,	/* place the atomic's original value */
	BLUE_COMP_WRITE_SEND,	/* an ACK covering (part of) a SEND/WRITE */
	BLUE_COMP_COMPLETE,	/* the WQE is done: CQE (if signaled), retire it */
	BLUE_COMP_RETRY,	/* go back N, if the retry count allows */
	BLUE_COMP_RNR,		/* RNR NAK: wait, then go back N */
	BLUE_COMP_ERROR,	/* complete the WQE in error and move the QP to ERROR */
	BLUE_COMP_DONE,		/* the packet is used up */
	BLUE_COMP__MAX,
};

extern const char *const blue__comp_state_name[BLUE_COMP__MAX]
	__attribute__((visibility("hidden")));

/* What the QP's one timer_deadline_ns (in the live context) is counting down to. */
enum blue_timer_kind {
	BLUE_TIMER_NONE = 0,
	BLUE_TIMER_ACK,		/* local ACK timeout: 4.096 us * 2^timeout (IBA 9.7) */
	BLUE_TIMER_RNR,		/* an RNR NAK's wait (IBA table 45) */
};

struct blue_comp {
	enum blue_comp_state state;	/* where the last packet stopped (for debugging) */
	uint8_t timer;			/* enum blue_timer_kind */
	bool rnr_wait;			/* the requester holds off until the RNR timer fires */
	bool in_retry;			/* went back N at retry_psn, nothing newer acked yet */
	uint32_t retry_psn;
};

/* blue__comp_rx() - one response packet for this QP. */
void blue__comp_rx(struct blue_qp *qp, const struct blue_pkt *p)
	__attribute__((visibility("hidden")));

/*
 * blue__comp_run() - per pass: fire a due timer, and report WQEs that the requester
 * failed locally once everything before them is complete.
 */
void blue__comp_run(struct blue_qp *qp, uint64_t now_ns) __attribute__((visibility("hidden")));

/* blue__comp_sent() - the requester sent a packet: arm the ACK timer if it is idle. */
void blue__comp_sent(struct blue_qp *qp, uint64_t now_ns) __attribute__((visibility("hidden")));

/*
 * The completer's interface for retransmission policies (the selective table's
 * req_sr.c): what a policy that keeps its own books does to the send queue, una_psn,
 * the ACK timer and the retry count, so that it never touches struct blue_comp.
 *  blue__comp_una_advance() - una_psn moves to @psn: retry counts refilled, ACK timer
 *                             restarted (nothing if @psn is not ahead);
 *  blue__comp_retire()      - complete the send WQEs una_psn has passed, in order
 *                             (false: the QP went to ERROR on a local failure);
 *  blue__comp_fail_wqe()    - fail the oldest WQE with @status, QP to ERROR;
 *  blue__comp_place()       - READ response bytes (or an atomic's original value) into
 *                             the WQE's buffers at @off, through their MRs (false:
 *                             an SGE no longer covers them, @why says which);
 *  blue__comp_timer_restart() - re-arm the ACK timer for what is in flight now;
 *  blue__comp_progress()    - news that the responder has more, though una_psn cannot
 *                             move yet: retry_cnt is full again (it counts retries
 *                             without news);
 *  blue__comp_retry_take()  - one of retry_cnt for a retransmission of @reason,
 *                             counted and probed (false: none was left, the oldest
 *                             WQE failed with a retry-exceeded status for @why);
 *  blue__comp_rnr_waiting() - an RNR NAK's wait holds the requester (it goes back N
 *                             when the wait ends).
 */
void blue__comp_una_advance(struct blue_qp *qp, uint32_t psn) __attribute__((visibility("hidden")));
bool blue__comp_retire(struct blue_qp *qp) __attribute__((visibility("hidden")));
void blue__comp_fail_wqe(struct blue_qp *qp, enum blue_wc_status status, const char *why)
	__attribute__((visibility("hidden")));
struct blue_send_wqe;
bool blue__comp_place(struct blue_qp *qp, const struct blue_send_wqe *w, uint32_t off,
		      const void *data, uint32_t len, char *why, size_t whylen)
	__attribute__((visibility("hidden")));
void blue__comp_timer_restart(struct blue_qp *qp) __attribute__((visibility("hidden")));
void blue__comp_progress(struct blue_qp *qp) __attribute__((visibility("hidden")));
bool blue__comp_retry_take(struct blue_qp *qp, enum blue_retx_reason reason, const char *why)
	__attribute__((visibility("hidden")));
bool blue__comp_rnr_waiting(const struct blue_qp *qp) __attribute__((visibility("hidden")));

/* blue__comp_reset() - forget all completer state (QP to RESET). */
void blue__comp_reset(struct blue_qp *qp) __attribute__((visibility("hidden")));

/* The RNR NAK timer value @code (IBA table 45) in nanoseconds. */
uint64_t blue__rnr_timer_ns(unsigned int code) __attribute__((visibility("hidden")));

#endif /* BLUE_RUNTIME_COMP_H */
