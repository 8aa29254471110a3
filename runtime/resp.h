/* SPDX-License-Identifier: MIT */
/*
 * The responder: request packets -> execution, ACKs, NAKs, READ responses and atomic
 * ACKs (IBA 9.7, the responder side). Its outgoing packets wait in a small ordered
 * queue, so that a long READ response goes out over several passes and an ACK for a
 * later request never overtakes it.
 */
#ifndef BLUE_RUNTIME_RESP_H
#define BLUE_RUNTIME_RESP_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/device.h"

struct blue_qp;
struct blue_pkt;

enum blue_resp_state {
	BLUE_RESP_CHECK_PSN,	/* in order, duplicate, or ahead (a gap)? */
	BLUE_RESP_DUPLICATE,	/* re-ACK, or replay a READ/atomic from its resource */
	BLUE_RESP_SEQ_ERR,	/* a gap: NAK once, drop */
	BLUE_RESP_CHECK_OP_SEQ,	/* FIRST/MIDDLE/LAST in the right order */
	BLUE_RESP_CHECK_OP_VALID, /* the QP allows this operation */
	BLUE_RESP_CHECK_RESOURCE, /* a receive WQE for a SEND (or WRITE with imm) */
	BLUE_RESP_CHECK_RKEY,	/* RETH/AtomicETH against the MR table */
	BLUE_RESP_EXECUTE,	/* move the data, run the atomic, queue the READ */
	BLUE_RESP_COMPLETE,	/* end of a message: receive completion, MSN */
	BLUE_RESP_ACK,		/* queue a (coalesced) ACK if the packet asked for one */
	BLUE_RESP_RNR,		/* no receive WQE: RNR NAK */
	BLUE_RESP_NAK,		/* a class C/D error: NAK, and the QP goes to ERROR */
	BLUE_RESP_DONE,
	BLUE_RESP__MAX,
};

extern const char *const blue__resp_state_name[BLUE_RESP__MAX]
	__attribute__((visibility("hidden")));

enum blue_resp_out_kind {
	BLUE_OUT_NONE = 0,	/* superseded (a READ a duplicate replaced): skipped */
	BLUE_OUT_ACK = 1,	/* ACK or NAK: AETH syndrome, PSN, MSN */
	BLUE_OUT_READ,		/* READ response packets from memory */
	BLUE_OUT_ATOMIC,	/* atomic ACK with the original value */
};

/* One queued response. READ entries go out over as many passes as they need. */
struct blue_resp_out {
	uint8_t kind;		/* enum blue_resp_out_kind */
	uint8_t syndrome;	/* AETH syndrome (ACK/NAK/RNR NAK) */
	uint32_t psn;		/* ACK: the PSN acknowledged; READ: first response PSN */
	uint32_t msn;
	uint32_t rkey;		/* READ: the R_Key, translated again for every packet */
	uint64_t va;		/* READ: where the data starts */
	uint32_t len;		/* READ: bytes in all */
	uint32_t off;		/* READ: bytes sent so far */
	uint64_t orig;		/* ATOMIC: the value before the operation */
	bool replay;		/* READ/ATOMIC: answers a duplicate, holds no resource */
};

#define BLUE_RESP_OUTQ		64	/* power of two */

enum blue_res_type {
	BLUE_RES_NONE = 0,
	BLUE_RES_READ,
	BLUE_RES_ATOMIC,
	BLUE_RES_AW,		/* an ATOMIC WRITE or FLUSH (IBA 1.5, resp_aw.c) */
};

/*
 * A READ or atomic that executed, kept so that its duplicate is answered as the first
 * was and nothing else is (rxe's struct resp_res). The ring holds the last
 * max_dest_rd_atomic of them: a requester never has more outstanding (IBA 9.4.3), so
 * any request it may resend is here.
 */
struct blue_resp_res {
	uint8_t type;		/* enum blue_res_type */
	uint32_t first_psn;	/* the request's PSN */
	uint32_t last_psn;	/* READ: the PSN of its last response packet; atomic: first */
	uint32_t rkey;		/* READ: what it read */
	uint64_t va;
	uint32_t len;
	uint64_t orig;		/* atomic: the value before the operation */
};

/* A message in progress across packets (IBA 9.7: FIRST ... LAST order). */
enum blue_resp_msg {
	BLUE_MSG_NONE = 0,
	BLUE_MSG_SEND,
	BLUE_MSG_WRITE,
};

struct blue_resp {
	enum blue_resp_state state;	/* where the last packet stopped (for debugging) */
	uint8_t in_msg;			/* enum blue_resp_msg */
	/* an open SEND fills the receive WQE at the head of the receive queue */
	uint32_t recv_off;		/* bytes placed so far */
	/* an open WRITE: each packet is checked and placed through the MR (rxe) */
	uint32_t wr_rkey;		/* the RETH's R_Key */
	uint64_t wr_va;			/* where the next payload byte goes */
	uint32_t wr_resid;		/* bytes the RETH announced and not yet received */
	uint32_t wr_len;		/* the RETH length (byte_len of a WRITE with imm) */
	/* outgoing, in PSN order */
	struct blue_resp_out out[BLUE_RESP_OUTQ];
	uint32_t out_prod, out_cons;
	/* READs and atomics that executed (resp_res.c), the oldest replaced first */
	struct blue_resp_res res[BLUE_MAX_RD_ATOMIC];
	uint32_t res_head;		/* the slot the next one takes */
};

/*
 * Responder resources (resp_res.c):
 *  blue__resp_res_new()  - the slot for a READ/atomic that executes now (the oldest
 *                          one's, which is forgotten), cleared;
 *  blue__resp_res_find() - the executed READ whose responses include @psn, or the
 *                          atomic at @psn (@type), or NULL: never ran, or too old;
 *  blue__resp_res_busy() - READ/atomic requests whose responses are still queued.
 */
struct blue_resp_res *blue__resp_res_new(struct blue_qp *qp) __attribute__((visibility("hidden")));
const struct blue_resp_res *blue__resp_res_find(const struct blue_qp *qp, uint32_t psn,
						enum blue_res_type type)
	__attribute__((visibility("hidden")));
uint32_t blue__resp_res_busy(const struct blue_qp *qp) __attribute__((visibility("hidden")));

/* blue__resp_rx() - one request packet for this QP. */
void blue__resp_rx(struct blue_qp *qp, const struct blue_pkt *p)
	__attribute__((visibility("hidden")));

struct blue_recv_wqe;

/*
 * The RC responder's receive steps, shared with the UC responder (resp_uc.c):
 *  blue__resp_recv_place()    - @len bytes to @off of the receive WQE @w through its
 *                               SGEs' L_Keys: BLUE_WC_SUCCESS, BLUE_WC_LOC_LEN_ERR (longer
 *                               than the buffers) or BLUE_WC_LOC_PROT_ERR (a bad SGE);
 *  blue__resp_recv_complete() - complete and retire the held receive WQE (immediate data
 *                               and solicited event from the last packet @p).
 * blue__resp_uc_rx() - one request packet for a UC QP (resp_uc.c): never answered.
 */
enum blue_wc_status blue__resp_recv_place(struct blue_qp *qp, const struct blue_recv_wqe *w,
					  uint32_t off, const uint8_t *data, uint32_t len)
	__attribute__((visibility("hidden")));
void blue__resp_recv_complete(struct blue_qp *qp, enum blue_wc_status status,
			      enum blue_wc_opcode opcode, uint32_t byte_len,
			      const struct blue_pkt *p) __attribute__((visibility("hidden")));
void blue__resp_uc_rx(struct blue_qp *qp, const struct blue_pkt *p)
	__attribute__((visibility("hidden")));

/*
 * For selective retransmission (resp_sr.c): run a request the reorder buffer held
 * (counted when it arrived), queue a plain ACK of @psn, and queue a hole NAK
 * (BLUE_NAK_SR_HOLE: @len PSNs missing from @psn on).
 */
void blue__resp_replay(struct blue_qp *qp, const struct blue_pkt *p)
	__attribute__((visibility("hidden")));
void blue__resp_queue_ack(struct blue_qp *qp, uint32_t psn) __attribute__((visibility("hidden")));
void blue__resp_queue_hole(struct blue_qp *qp, uint32_t psn, uint32_t len)
	__attribute__((visibility("hidden")));

/*
 * blue__resp_queue_aw() - queue the answer to the ATOMIC WRITE or FLUSH at @psn: a
 * zero-length READ RESPONSE Only with an ACK AETH carrying @msn (IBA 1.5, as rxe's
 * send_read_response_ack); @replay: it answers a duplicate. Return: false if full.
 */
bool blue__resp_queue_aw(struct blue_qp *qp, uint32_t psn, uint32_t msn, bool replay)
	__attribute__((visibility("hidden")));

/* blue__resp_tx() - send queued responses within this pass's budget. Return: packets. */
int blue__resp_tx(struct blue_qp *qp) __attribute__((visibility("hidden")));

/* blue__resp_reset() - forget all responder state (QP to RESET). */
void blue__resp_reset(struct blue_qp *qp) __attribute__((visibility("hidden")));

#endif /* BLUE_RUNTIME_RESP_H */
