/* SPDX-License-Identifier: MIT */
/*
 * The requester: send-queue WQEs -> request packets (IBA 9.7, the requester side).
 * It segments by path MTU, assigns PSNs (24-bit, wrapping), and goes back N when the
 * completer tells it to.
 */
#ifndef BLUE_RUNTIME_REQ_H
#define BLUE_RUNTIME_REQ_H

#include <stdbool.h>
#include <stdint.h>

struct blue_qp;

/* The requester's states; one run of blue__req_run() steps them until DONE or WAIT. */
enum blue_req_state {
	BLUE_REQ_NEXT_WQE,	/* look at the WQE at req.idx, if one is posted */
	BLUE_REQ_CHECK_WQE,	/* first packet of a WQE: keys, fence, READ/atomic credits */
	BLUE_REQ_SEND_PKT,	/* build and queue one packet of the WQE */
	BLUE_REQ_WAIT,		/* window, credits or frames are short: resume next pass */
	BLUE_REQ_LOCAL_ERR,	/* the WQE failed locally; the completer reports it */
	BLUE_REQ_DONE,		/* nothing (more) to send */
	BLUE_REQ__MAX,
};

extern const char *const blue__req_state_name[BLUE_REQ__MAX]
	__attribute__((visibility("hidden")));

/* Where a send WQE is, as far as the engine is concerned (engine-private). */
enum blue_swqe_state {
	BLUE_SWQE_POSTED = 0,	/* not looked at yet */
	BLUE_SWQE_SENDING,	/* some packets sent; first_psn/last_psn are valid */
	BLUE_SWQE_SENT,		/* every request packet sent; waiting for the responses */
	BLUE_SWQE_ERROR,	/* failed before it went out; status says why */
};

/*
 * The engine's state of one send WQE, in an array parallel to the send ring. It is not
 * in the ring entry, so that what the application writes is only ever read.
 */
struct blue_swqe_eng {
	uint32_t first_psn;	/* PSN of its first request packet */
	uint32_t last_psn;	/* PSN of its last packet: for a READ, the last response's */
	uint8_t state;		/* enum blue_swqe_state */
	uint8_t status;		/* enum blue_wc_status for BLUE_SWQE_ERROR */
};

struct blue_req {
	enum blue_req_state state;	/* where the last run stopped (for debugging) */
	uint32_t idx;			/* send-ring index of the WQE being sent */
	uint32_t offset;		/* bytes of that WQE already sent */
	uint32_t psn_hi;		/* one past the highest PSN ever sent: a response
					 * beyond it answers nothing we sent */
};

/*
 * blue__req_run() - send what the send queue holds, within the PSN window, the
 * READ/atomic credits (max_rd_atomic) and this pass's frame budget.
 * Return: packets queued.
 */
int blue__req_run(struct blue_qp *qp) __attribute__((visibility("hidden")));

/*
 * blue__req_rewind() - go back N (IBA 9.7): resend from the oldest unacknowledged
 * PSN (una_psn), in the middle of a WQE if need be. The completer also calls it when an
 * ACK moved una_psn past what was resent after an earlier rewind (a skip forward).
 */
void blue__req_rewind(struct blue_qp *qp) __attribute__((visibility("hidden")));

/*
 * blue__req_resend() - selective retransmission: send again the packet at @psn of the
 * send WQE at ring index @idx, asking for an ACK; for a READ, a request for @npsn
 * responses from @psn on. The requester's own position does not move.
 * Return: 0 or -EAGAIN (no frame or budget left in this pass).
 */
int blue__req_resend(struct blue_qp *qp, uint32_t idx, uint32_t psn, uint32_t npsn)
	__attribute__((visibility("hidden")));

struct blue_send_wqe;

/*
 * Shared with the UD requester (req_ud.c):
 *  blue__req_keys_ok() - every SGE of @w is in an MR of the QP's PD, in range, with the
 *                        rights the operation needs (logged when not);
 *  blue__req_gather()  - the payload bytes [@off, @off + @len) of @w, translated through
 *                        their MRs now, or NULL (logged).
 */
bool blue__req_keys_ok(struct blue_qp *qp, const struct blue_send_wqe *w)
	__attribute__((visibility("hidden")));
const uint8_t *blue__req_gather(struct blue_qp *qp, const struct blue_send_wqe *w,
				uint32_t off, uint32_t len) __attribute__((visibility("hidden")));

struct blue_pkt;

/*
 * blue__req_build() - the packet of @w that starts at byte @off, with @psn: opcode by
 * the QP's transport, headers, payload gathered through the MRs (for the UC requester,
 * req_uc.c). Return: 0, or -EACCES when the payload is no longer in registered memory.
 */
int blue__req_build(struct blue_qp *qp, const struct blue_send_wqe *w, uint32_t off,
		    uint32_t psn, struct blue_pkt *p) __attribute__((visibility("hidden")));

/* blue__req_reset() - forget all requester state (QP to RESET). */
void blue__req_reset(struct blue_qp *qp) __attribute__((visibility("hidden")));

#endif /* BLUE_RUNTIME_REQ_H */
