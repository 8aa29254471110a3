// SPDX-License-Identifier: MIT
/*
 * The responder (IBA 9.7, the responder side). Each request packet is checked in the
 * order IBA and rxe check it: PSN (in order / duplicate / ahead), opcode sequence, QP
 * rights, receive resources, R_Key; only then is memory touched. So a remote access
 * violation is answered with a NAK and never writes or reads a byte.
 *
 *  - ahead of the expected PSN: a sequence-error NAK, once per gap (last_nak_psn in
 *    the live context remembers which gap was NAK'd);
 *  - a duplicate SEND/WRITE: re-ACK the latest PSN (as rxe does);
 *  - a duplicate READ: replayed from the responder resource of the READ that executed
 *    at that PSN, within its bytes (or dropped); a duplicate atomic: answered from its
 *    resource, never executed twice (resp_res.c);
 *  - a SEND with no receive WQE posted: an RNR NAK carrying min_rnr_timer.
 *
 * Outgoing ACKs, NAKs and READ responses go through an ordered queue (resp.out); a
 * plain ACK queued behind a plain ACK replaces it (coalescing: the latest PSN and MSN
 * acknowledge everything before them).
 */
#include <endian.h>
#include <stdio.h>
#include <string.h>

#include "runtime/aw.h"
#include "runtime/events.h"
#include "runtime/log.h"
#include "runtime/mr_copy.h"
#include "runtime/mw.h"
#include "runtime/probes.h"
#include "runtime/progress.h"
#include "runtime/qp.h"
#include "runtime/rq.h"

const char *const blue__resp_state_name[BLUE_RESP__MAX] = {
	[BLUE_RESP_CHECK_PSN] = "check_psn",
	[BLUE_RESP_DUPLICATE] = "duplicate",
	[BLUE_RESP_SEQ_ERR] = "seq_err",
	[BLUE_RESP_CHECK_OP_SEQ] = "check_op_seq",
	[BLUE_RESP_CHECK_OP_VALID] = "check_op_valid",
	[BLUE_RESP_CHECK_RESOURCE] = "check_resource",
	[BLUE_RESP_CHECK_RKEY] = "check_rkey",
	[BLUE_RESP_EXECUTE] = "execute",
	[BLUE_RESP_COMPLETE] = "complete",
	[BLUE_RESP_ACK] = "ack",
	[BLUE_RESP_RNR] = "rnr",
	[BLUE_RESP_NAK] = "nak",
	[BLUE_RESP_DONE] = "done",
};

/* An ACK with the credit field "invalid": no end-to-end credits (what rxe sends). */
#define AETH_ACK_NO_CREDIT	(BLUE_AETH_ACK | 0x1f)

_Static_assert((BLUE_RESP_OUTQ & (BLUE_RESP_OUTQ - 1)) == 0, "out queue is a power of two");

static bool op_is_send(uint8_t op)
{
	return op <= BLUE_OP_RC_SEND_ONLY_IMM || op == BLUE_OP_RC_SEND_LAST_INV ||
	       op == BLUE_OP_RC_SEND_ONLY_INV;
}

static bool op_is_write(uint8_t op)
{
	return op >= BLUE_OP_RC_WRITE_FIRST && op <= BLUE_OP_RC_WRITE_ONLY_IMM;
}

static bool op_is_atomic(uint8_t op)
{
	return op == BLUE_OP_RC_COMPARE_SWAP || op == BLUE_OP_RC_FETCH_ADD;
}

/* ---- the ordered out queue ------------------------------------------------------- */

static uint32_t out_room(const struct blue_qp *qp)
{
	return BLUE_RESP_OUTQ - (qp->resp.out_prod - qp->resp.out_cons);
}

static struct blue_resp_out *out_push(struct blue_qp *qp, uint8_t kind)
{
	struct blue_resp_out *o;

	if (!out_room(qp))
		return NULL;
	o = &qp->resp.out[qp->resp.out_prod++ & (BLUE_RESP_OUTQ - 1)];
	memset(o, 0, sizeof(*o));
	o->kind = kind;
	o->msn = qp->live->msn;
	return o;
}

/*
 * A duplicate READ at @psn: the requester went back N to @psn (IBA 9.7) and takes READ
 * responses only in PSN order from there, asking again for all that follows. Queued
 * READ responses with packets left at or past @psn answer its earlier transmission:
 * sent first, they reach it as a gap it drops, while the response it asks for now waits
 * behind them; with 16 MiB READs that wait outlasts its ACK timer, and each expiry
 * queued one more copy, until the retry count ran out. So they stop here; the
 * duplicate's own response carries the same bytes from @psn. Responses wholly before
 * @psn stay: they may answer requests resent just before this one. Not under selective
 * retransmission: its requester takes responses out of order and asks for a hole alone.
 */
static void read_supersede(struct blue_qp *qp, uint32_t psn)
{
	struct blue_resp *r = &qp->resp;
	uint32_t mtu = blue__qp_mtu(qp), i;
	struct blue_resp_out *o;

	for (i = r->out_cons; i != r->out_prod; i++) {
		o = &r->out[i & (BLUE_RESP_OUTQ - 1)];
		if (o->kind == BLUE_OUT_READ &&
		    blue_psn_diff(blue_psn_add(o->psn, blue__read_npkts(o->len, mtu)), psn) > 0)
			o->kind = BLUE_OUT_NONE;
	}
}

/* The PSN before which an ACK (@psn itself too) or a hole NAK (@psn not) acknowledges. */
static uint32_t cum_psn(uint8_t syndrome, uint32_t psn)
{
	return syndrome == BLUE_NAK_SR_HOLE ? psn : blue_psn_add(psn, 1);
}

/*
 * Queue an ACK/NAK with @msn in its AETH; a plain ACK behind a plain ACK replaces it.
 * Under selective retransmission a hole NAK and a plain ACK replace each other the same
 * way when the newer acknowledges at least as much: both are cumulative, and the newer
 * says where the responder is now. Return: false if full.
 */
static bool queue_aeth(struct blue_qp *qp, uint8_t syndrome, uint32_t psn, uint32_t msn)
{
	struct blue_resp *r = &qp->resp;
	struct blue_resp_out *o = NULL;
	bool replace = false;
	int32_t ahead;

	if (r->out_prod != r->out_cons)
		o = &r->out[(r->out_prod - 1) & (BLUE_RESP_OUTQ - 1)];
	if (o && o->kind == BLUE_OUT_ACK) {
		ahead = blue_psn_diff(cum_psn(syndrome, psn), cum_psn(o->syndrome, o->psn));
		if (syndrome == AETH_ACK_NO_CREDIT && o->syndrome == AETH_ACK_NO_CREDIT)
			replace = true;		/* IBA coalescing, as ever */
		else if (syndrome == BLUE_NAK_SR_HOLE)
			replace = (o->syndrome == AETH_ACK_NO_CREDIT ||
				   o->syndrome == BLUE_NAK_SR_HOLE) && ahead >= 0;
		else if (syndrome == AETH_ACK_NO_CREDIT && o->syndrome == BLUE_NAK_SR_HOLE)
			replace = ahead > 0;	/* the hole it reported is filled */
	}
	if (replace) {
		o->syndrome = syndrome;
		o->psn = psn;
		o->msn = msn;
		return true;
	}
	o = out_push(qp, BLUE_OUT_ACK);
	if (!o)
		return false;
	o->syndrome = syndrome;
	o->psn = psn;
	o->msn = msn;
	return true;
}

static bool queue_ack(struct blue_qp *qp, uint8_t syndrome, uint32_t psn)
{
	return queue_aeth(qp, syndrome, psn, qp->live->msn);
}

void blue__resp_queue_ack(struct blue_qp *qp, uint32_t psn)
{
	queue_ack(qp, AETH_ACK_NO_CREDIT, psn);
}

void blue__resp_queue_hole(struct blue_qp *qp, uint32_t psn, uint32_t len)
{
	struct blue_qp_ctx *live = qp->live;

	if (queue_aeth(qp, BLUE_NAK_SR_HOLE, psn, len & BLUE_PSN_MASK)) {
		live->naks_sent++;
		BLUE_PROBE3(nak_sent, qp->qpn, psn, BLUE_NAK_SR_HOLE);
		live->last_nak_psn = psn;
		live->last_nak_syndrome = BLUE_NAK_SR_HOLE;
	}
}

/* A NAK, remembered in the live context (IBA 9.7: NAK a gap once). */
static void queue_nak(struct blue_qp *qp, uint8_t syndrome, uint32_t psn)
{
	struct blue_qp_ctx *live = qp->live;

	if (queue_ack(qp, syndrome, psn)) {
		live->naks_sent++;
		BLUE_PROBE3(nak_sent, qp->qpn, psn, syndrome);
		live->last_nak_psn = psn;
		live->last_nak_syndrome = syndrome;
	}
}

bool blue__resp_queue_aw(struct blue_qp *qp, uint32_t psn, uint32_t msn, bool replay)
{
	struct blue_resp_out *o = out_push(qp, BLUE_OUT_READ);

	if (!o)
		return false;
	o->psn = psn;
	o->msn = msn;
	o->replay = replay;	/* len 0: one READ RESPONSE Only, no memory read */
	return true;
}

/* ---- receive WQEs ----------------------------------------------------------------- */

/*
 * Place @len bytes at @off of the receive WQE @w, each SGE translated through its L_Key
 * as it is used. Return: BLUE_WC_SUCCESS, BLUE_WC_LOC_LEN_ERR (the message is longer
 * than the buffers) or BLUE_WC_LOC_PROT_ERR (an SGE's key or range is bad).
 */
static enum blue_wc_status recv_place(struct blue_qp *qp, const struct blue_recv_wqe *w,
				      uint32_t off, const uint8_t *data, uint32_t len)
{
	enum blue_mr_verdict v;
	uint32_t bad = 0;

	if (len > w->length || off > w->length - len)
		return BLUE_WC_LOC_LEN_ERR;
	v = blue__copy_data(qp->ctx, blue__rq_pd(qp), w->sge, w->num_sge, off, (void *)data, len,
			    BLUE_ACCESS_LOCAL_WRITE, BLUE_COPY_TO_MEM, NULL, &bad);
	if (v != BLUE_MR_OK) {
		blue__logf("QP 0x%x: receive wr_id %llu, SGE %u (lkey 0x%x): %s", qp->qpn,
			   (unsigned long long)w->wr_id, bad,
			   bad < w->num_sge ? w->sge[bad].lkey : 0, blue__mr_verdict_str(v));
		return BLUE_WC_LOC_PROT_ERR;
	}
	return BLUE_WC_SUCCESS;
}

/* Complete the receive WQE at the head of the receive queue. */
static void recv_complete(struct blue_qp *qp, enum blue_wc_status status,
			  enum blue_wc_opcode opcode, uint32_t byte_len,
			  const struct blue_pkt *p)
{
	const struct blue_recv_wqe *w = blue__rq_cur(qp);
	struct blue_wc wc = {
		.wr_id = w->wr_id,
		.status = status,
		.opcode = opcode,
		.byte_len = byte_len,
		.qp_num = qp->qpn,
		.src_qp = qp->live->peer_qpn,
	};

	if (status == BLUE_WC_SUCCESS && (blue_opcode_flags(p->opcode) & BLUE_OPF_IMMDT)) {
		wc.wc_flags = BLUE_WC_WITH_IMM;
		wc.imm_data = htobe32(p->imm);	/* network order, as ibverbs */
	}
	if (status == BLUE_WC_SUCCESS && (blue_opcode_flags(p->opcode) & BLUE_OPF_IETH)) {
		wc.wc_flags = BLUE_WC_WITH_INV;
		wc.invalidated_rkey = p->ieth_rkey;	/* host order, as ibverbs */
	}
	/*
	 * The WQE is given back before its completion is published: a process that reposts
	 * as soon as it polls (daemon mode: at once, from another process) must find its
	 * receive queue with the room the completion says it has.
	 */
	blue__rq_end(qp);
	/* the CQ had room (checked before executing), unless this is an error */
	if (blue__cq_push(qp->recv_cq, &wc, p->se) == 0)
		BLUE_PROBE5(completion, qp->qpn, wc.wr_id, wc.status, wc.opcode, wc.byte_len);
}

/* The two receive steps above, for the UC responder (resp_uc.c): one way to fill a WQE. */
enum blue_wc_status blue__resp_recv_place(struct blue_qp *qp, const struct blue_recv_wqe *w,
					  uint32_t off, const uint8_t *data, uint32_t len)
{
	return recv_place(qp, w, off, data, len);
}

void blue__resp_recv_complete(struct blue_qp *qp, enum blue_wc_status status,
			      enum blue_wc_opcode opcode, uint32_t byte_len,
			      const struct blue_pkt *p)
{
	recv_complete(qp, status, opcode, byte_len, p);
}

/* ---- duplicates and responder resources ------------------------------------------------ */

/*
 * A duplicate READ (IBA 9.7.5.1.4): replayed only from the resource of a READ that
 * executed here, and only inside the bytes that READ covered, starting where the
 * request's PSN falls in it (a requester going back N resumes part way). A READ that
 * never ran, one too old to be held, and one asking for more or other bytes than the
 * original are dropped (rxe does the same): "behind rq_psn" is half the PSN space, and
 * executing whatever arrives there would let a few forged requests make this side
 * send gigabytes. Each packet is checked against the MR again when it goes out.
 */
static void dup_read(struct blue_qp *qp, const struct blue_pkt *p)
{
	const struct blue_resp_res *res = blue__resp_res_find(qp, p->psn, BLUE_RES_READ);
	struct blue_resp_out *o;
	uint64_t off;

	/* the QP's rights as for a new READ: they may have been taken away since */
	if (!res || p->reth.len > BLUE_MAX_MSG || !(qp->access_flags & BLUE_ACCESS_REMOTE_READ))
		return;
	off = (uint64_t)blue_psn_diff(p->psn, res->first_psn) * blue__qp_mtu(qp);
	if (off > res->len || p->reth.rkey != res->rkey || p->reth.va != res->va + off ||
	    p->reth.len > res->len - off)
		return;
	if (qp->retx.ops->resp_dup_read_supersedes)
		read_supersede(qp, p->psn);
	o = out_push(qp, BLUE_OUT_READ);
	if (o) {
		o->psn = p->psn;
		o->rkey = res->rkey;
		o->va = res->va + off;
		o->len = p->reth.len;
		o->replay = true;
	}
}

/* A duplicate atomic: answered from its resource, never executed again (IBA 9.4.5). */
static void dup_atomic(struct blue_qp *qp, const struct blue_pkt *p)
{
	const struct blue_resp_res *res = blue__resp_res_find(qp, p->psn, BLUE_RES_ATOMIC);
	struct blue_resp_out *o;

	if (!res)
		return;
	o = out_push(qp, BLUE_OUT_ATOMIC);
	if (o) {
		o->psn = p->psn;
		o->orig = res->orig;
		o->replay = true;
	}
}

/* Keep what a READ or atomic that executes now did, for its duplicates. */
static void res_record(struct blue_qp *qp, const struct blue_pkt *p, uint32_t npkts,
		       uint64_t orig)
{
	struct blue_resp_res *res = blue__resp_res_new(qp);

	res->first_psn = p->psn;
	res->last_psn = blue_psn_add(p->psn, npkts - 1);
	if (p->opcode == BLUE_OP_RC_READ_REQUEST) {
		res->type = BLUE_RES_READ;
		res->rkey = p->reth.rkey;
		res->va = p->reth.va;
		res->len = p->reth.len;
	} else {
		res->type = BLUE_RES_ATOMIC;
		res->orig = orig;
	}
}

/* ---- the request path ---------------------------------------------------------------- */

/* One request; @replay: a request the reorder buffer held, already counted on arrival. */
static void resp_one(struct blue_qp *qp, const struct blue_pkt *p, bool replay)
{
	struct blue_qp_ctx *live = qp->live;
	struct blue_resp *r = &qp->resp;
	enum blue_resp_state st = BLUE_RESP_CHECK_PSN;
	uint8_t op = p->opcode, nak = 0;
	uint32_t fl = blue_opcode_flags(op), mtu = blue__qp_mtu(qp), len = 0;
	bool first = fl & BLUE_OPF_FIRST, last = fl & BLUE_OPF_LAST;
	bool is_send = op_is_send(op), is_write = op_is_write(op);
	bool is_read = op == BLUE_OP_RC_READ_REQUEST, is_atomic = op_is_atomic(op);
	bool is_aw = op == BLUE_OP_RC_ATOMIC_WRITE || op == BLUE_OP_RC_FLUSH;	/* resp_aw.c */
	bool wants_rwqe = (is_send && first) || (is_write && (fl & BLUE_OPF_IMMDT));
	bool completes_rwqe = (is_send && last) || (is_write && (fl & BLUE_OPF_IMMDT));
	enum blue_wc_status rst = BLUE_WC_SUCCESS;
	struct blue_resp_out *o;
	enum blue_mr_verdict v;
	struct blue_mem_at mem = { 0 };
	uint64_t orig = 0;
	char why[128] = "";

	if (live->state != BLUE_QPS_RTR && live->state != BLUE_QPS_RTS &&
	    live->state != BLUE_QPS_SQD && live->state != BLUE_QPS_SQE)
		return;	/* IBA 10.3.1: INIT and ERROR drop what they receive */
	if (!replay) {
		live->rx_pkts++;
		live->rx_bytes += p->payload_len;
	}
	/* IBA 11.6.3.1 (as rxe): the first request in RTR establishes the connection */
	if (live->state == BLUE_QPS_RTR && !qp->comm_est_raised) {
		qp->comm_est_raised = true;
		blue__event_qp(qp, BLUE_EVENT_COMM_EST);
	}

	for (;;) {
		switch (st) {
		case BLUE_RESP_CHECK_PSN: {
			int32_t d = blue_psn_diff(p->psn, live->rq_psn);

			st = d > 0 ? BLUE_RESP_SEQ_ERR : d < 0 ? BLUE_RESP_DUPLICATE :
			     BLUE_RESP_CHECK_OP_SEQ;
			if (d > 0)
				qp->ctx->eng.st.rx_seq_err++;
			else if (d < 0)
				qp->ctx->eng.st.rx_dup++;
			break;
		}

		case BLUE_RESP_SEQ_ERR:
			st = BLUE_RESP_DONE;
			/* the policy may take it (selective: kept for when the hole fills) */
			if (qp->retx.ops->resp_ahead && qp->retx.ops->resp_ahead(qp, p))
				break;
			/* one NAK per gap: the requester goes back N on the first */
			if (live->last_nak_psn != live->rq_psn ||
			    (live->last_nak_syndrome != BLUE_NAK_PSN_SEQ_ERR &&
			     (live->last_nak_syndrome & BLUE_AETH_TYPE_MASK) != BLUE_AETH_RNR_NAK))
				queue_nak(qp, BLUE_NAK_PSN_SEQ_ERR, live->rq_psn);
			break;

		case BLUE_RESP_DUPLICATE:
			st = BLUE_RESP_DONE;
			if (is_send || is_write) {
				/*
				 * Its ACK was lost, or is coming: say how far we got; unless
				 * the policy answers (selective: where its hole is).
				 */
				if (!(qp->retx.ops->resp_duplicate &&
				      qp->retx.ops->resp_duplicate(qp, p)))
					queue_ack(qp, AETH_ACK_NO_CREDIT,
						  blue_psn_add(live->rq_psn, BLUE_PSN_MASK));
			} else if (is_read) {
				dup_read(qp, p);
			} else if (is_atomic) {
				dup_atomic(qp, p);
			} else if (is_aw) {
				blue__resp_aw_dup(qp, p);
			}
			break;

		case BLUE_RESP_CHECK_OP_SEQ:
			/* IBA 9.7: FIRST, MIDDLE..., LAST of one message, nothing between */
			st = BLUE_RESP_CHECK_OP_VALID;
			if ((r->in_msg == BLUE_MSG_SEND && !(is_send && !first)) ||
			    (r->in_msg == BLUE_MSG_WRITE && !(is_write && !first)) ||
			    (r->in_msg == BLUE_MSG_NONE && !first)) {
				snprintf(why, sizeof(why), "opcode 0x%02x out of sequence", op);
				nak = BLUE_NAK_INVALID_REQ;
				st = BLUE_RESP_NAK;
			}
			break;

		case BLUE_RESP_CHECK_OP_VALID:
			st = BLUE_RESP_CHECK_RESOURCE;
			nak = BLUE_NAK_INVALID_REQ;
			if ((is_write && !(qp->access_flags & BLUE_ACCESS_REMOTE_WRITE)) ||
			    (is_read && !(qp->access_flags & BLUE_ACCESS_REMOTE_READ)) ||
			    (is_atomic && !(qp->access_flags & BLUE_ACCESS_REMOTE_ATOMIC)) ||
			    (is_aw && !blue__resp_aw_qp_allows(qp, p))) {
				/* the QP's own rights, before any MR (rxe: invalid request) */
				snprintf(why, sizeof(why), "opcode 0x%02x not allowed by the QP's "
					 "access flags 0x%x", op, qp->access_flags);
				st = BLUE_RESP_NAK;
			} else if ((fl & BLUE_OPF_PAYLOAD) &&
				   (last ? p->payload_len > mtu : p->payload_len != mtu)) {
				/* FIRST and MIDDLE carry exactly one path MTU */
				snprintf(why, sizeof(why), "a %u-byte packet (opcode 0x%02x) with "
					 "path MTU %u", p->payload_len, op, mtu);
				st = BLUE_RESP_NAK;
			}
			break;

		case BLUE_RESP_CHECK_RESOURCE:
			/* no room to answer: drop it unseen; the requester will resend */
			if (!out_room(qp) ||
			    (completes_rwqe && !blue__cq_room(qp->recv_cq))) {
				st = BLUE_RESP_DONE;
				break;
			}
			if (wants_rwqe && !blue__rq_begin(qp)) {
				st = BLUE_RESP_RNR;
				break;
			}
			/*
			 * IBA 9.4.3: no more READs and atomics in progress than the responder
			 * resources the requester was given; one more is an invalid request
			 * (rxe's ERR_TOO_MANY_RDMA_ATM_REQ). A requester within its
			 * max_rd_atomic never gets here: it counts a READ outstanding until its
			 * last response arrives, and that leaves the queue first.
			 */
			if ((is_read || is_atomic || is_aw) &&
			    blue__resp_res_busy(qp) >= qp->max_dest_rd_atomic) {
				snprintf(why, sizeof(why), "a READ/atomic beyond the %u responder "
					 "resources (max_dest_rd_atomic)", qp->max_dest_rd_atomic);
				nak = BLUE_NAK_INVALID_REQ;
				st = BLUE_RESP_NAK;
				break;
			}
			st = BLUE_RESP_CHECK_RKEY;
			break;

		case BLUE_RESP_CHECK_RKEY:
			st = BLUE_RESP_EXECUTE;
			v = BLUE_MR_OK;
			if (is_write && first) {
				len = p->reth.len;
				if (len > BLUE_MAX_MSG || (last ? p->payload_len != len :
							   len <= p->payload_len)) {
					snprintf(why, sizeof(why), "RETH length %u does not match "
						 "the packets", len);
					nak = BLUE_NAK_INVALID_REQ;
					st = BLUE_RESP_NAK;
					break;
				}
				/* a zero-length WRITE names no memory: no R_Key check (rxe) */
				if (len)
					v = blue__rkey_check(qp, p->reth.rkey, p->reth.va, len,
							     BLUE_ACCESS_REMOTE_WRITE, NULL);
				r->wr_rkey = p->reth.rkey;
				r->wr_va = p->reth.va;
				r->wr_resid = len;
				r->wr_len = len;
			} else if (is_write) {
				if (last ? p->payload_len != r->wr_resid :
					   p->payload_len >= r->wr_resid) {
					snprintf(why, sizeof(why), "WRITE packets carry more or less "
						 "than the RETH announced");
					nak = BLUE_NAK_INVALID_REQ;
					st = BLUE_RESP_NAK;
					break;
				}
				/*
				 * The MR may be gone since FIRST: this packet's range is checked
				 * again (rxe), by the copy in EXECUTE, which translates before it
				 * touches a byte; a second lookup here would be the same one.
				 */
			} else if (is_read) {
				len = p->reth.len;
				if (len > BLUE_MAX_MSG) {
					snprintf(why, sizeof(why), "READ of %u bytes", len);
					nak = BLUE_NAK_INVALID_REQ;
					st = BLUE_RESP_NAK;
					break;
				}
				if (len)
					v = blue__rkey_check(qp, p->reth.rkey, p->reth.va, len,
							     BLUE_ACCESS_REMOTE_READ, NULL);
			} else if (is_atomic) {
				if (p->atmeth.va & 7) {
					/* atomics work on aligned 64-bit words (IBA 9.4.5) */
					snprintf(why, sizeof(why), "atomic at unaligned 0x%llx",
						 (unsigned long long)p->atmeth.va);
					nak = BLUE_NAK_INVALID_REQ;
					st = BLUE_RESP_NAK;
					break;
				}
				v = blue__rkey_check(qp, p->atmeth.rkey, p->atmeth.va, 8,
						     BLUE_ACCESS_REMOTE_ATOMIC, &mem);
			} else if (is_aw) {
				nak = blue__resp_aw_check(qp, p, &mem, why, sizeof(why));
				if (nak) {
					st = BLUE_RESP_NAK;
					break;
				}
			}
			if (v != BLUE_MR_OK) {
				snprintf(why, sizeof(why), "remote access at PSN 0x%x refused: %s",
					 p->psn, blue__mr_verdict_str(v));
				nak = BLUE_NAK_REM_ACCESS_ERR;
				st = BLUE_RESP_NAK;
			}
			break;

		case BLUE_RESP_EXECUTE:
			st = BLUE_RESP_COMPLETE;
			if (is_send) {
				const struct blue_recv_wqe *w = blue__rq_cur(qp);

				if (first)
					r->recv_off = 0;
				rst = recv_place(qp, w, r->recv_off, p->payload, p->payload_len);
				if (rst != BLUE_WC_SUCCESS) {
					/* the receive fails locally; the sender hears why */
					recv_complete(qp, rst, BLUE_WC_RECV, r->recv_off, p);
					snprintf(why, sizeof(why), "receive wr_id %llu: %s",
						 (unsigned long long)w->wr_id, blue_wc_status_str(rst));
					nak = rst == BLUE_WC_LOC_LEN_ERR ? BLUE_NAK_INVALID_REQ :
					      BLUE_NAK_REM_OP_ERR;
					st = BLUE_RESP_NAK;
					break;
				}
				r->recv_off += p->payload_len;
				r->in_msg = last ? BLUE_MSG_NONE : BLUE_MSG_SEND;
				/*
				 * The IETH's key is invalidated once the message is placed (rxe,
				 * before it completes). A key that cannot be is rxe's class J:
				 * the receive completes in error and the QP moves to ERROR; the
				 * sender hears it as an invalid request.
				 */
				if ((fl & BLUE_OPF_IETH) &&
				    blue__mw_remote_inv(qp, p->ieth_rkey)) {
					recv_complete(qp, BLUE_WC_REM_INV_REQ_ERR, BLUE_WC_RECV,
						      r->recv_off, p);
					snprintf(why, sizeof(why), "SEND with invalidate: key "
						 "0x%x cannot be invalidated", p->ieth_rkey);
					nak = BLUE_NAK_INVALID_REQ;
					st = BLUE_RESP_NAK;
					break;
				}
			} else if (is_write) {
				if (p->payload_len) {
					v = blue__copy_rkey(qp, r->wr_rkey, r->wr_va,
							    (void *)p->payload, p->payload_len,
							    BLUE_ACCESS_REMOTE_WRITE, BLUE_COPY_TO_MEM,
							    NULL);
					if (v != BLUE_MR_OK) {	/* MIDDLE/LAST: deregistered since */
						snprintf(why, sizeof(why), "remote access at PSN 0x%x "
							 "refused: %s", p->psn,
							 blue__mr_verdict_str(v));
						nak = BLUE_NAK_REM_ACCESS_ERR;
						st = BLUE_RESP_NAK;
						break;
					}
					r->wr_va += p->payload_len;
					r->wr_resid -= p->payload_len;
				}
				r->in_msg = last ? BLUE_MSG_NONE : BLUE_MSG_WRITE;
			} else if (is_read) {
				o = out_push(qp, BLUE_OUT_READ);
				o->psn = p->psn;
				o->rkey = p->reth.rkey;
				o->va = p->reth.va;
				o->len = len;
				o->msn = (live->msn + 1) & BLUE_PSN_MASK;
				res_record(qp, p, blue__read_npkts(len, mtu), 0);
			} else if (is_atomic) {
				if ((op == BLUE_OP_RC_COMPARE_SWAP ?
				     blue__mem_cas(mem, p->atmeth.compare, p->atmeth.swap_add,
						   &orig) :
				     blue__mem_fetch_add(mem, p->atmeth.swap_add, &orig))) {
					/* checked a moment ago; the application unmapped it since */
					blue__logf("QP 0x%x: atomic at PSN 0x%x: the application no "
						   "longer maps 0x%llx; nothing was changed", qp->qpn,
						   p->psn, (unsigned long long)p->atmeth.va);
					orig = 0;
				}
				res_record(qp, p, 1, orig);
				o = out_push(qp, BLUE_OUT_ATOMIC);
				o->psn = p->psn;
				o->orig = orig;
				o->msn = (live->msn + 1) & BLUE_PSN_MASK;
			} else if (is_aw) {
				blue__resp_aw_execute(qp, p, mem);
			}
			break;

		case BLUE_RESP_COMPLETE:
			/* IBA 9.7: a READ consumes one PSN per response packet */
			live->rq_psn = blue_psn_add(live->rq_psn,
						    is_read ? blue__read_npkts(len, mtu) : 1);
			if (last)	/* MSN counts completed messages */
				live->msn = (live->msn + 1) & BLUE_PSN_MASK;
			if (is_send && last) {
				recv_complete(qp, BLUE_WC_SUCCESS, BLUE_WC_RECV, r->recv_off, p);
				r->recv_off = 0;
			} else if (completes_rwqe) {
				recv_complete(qp, BLUE_WC_SUCCESS, BLUE_WC_RECV_RDMA_WITH_IMM,
					      r->wr_len, p);
			}
			st = BLUE_RESP_ACK;
			break;

		case BLUE_RESP_ACK:
			if ((is_send || is_write) && p->ackreq)
				queue_ack(qp, AETH_ACK_NO_CREDIT, p->psn);
			st = BLUE_RESP_DONE;
			break;

		case BLUE_RESP_RNR:
			/* IBA 9.7: no receive WQE: RNR NAK; the requester waits and resends */
			queue_nak(qp, BLUE_AETH_RNR_NAK | (qp->min_rnr_timer & 0x1f), p->psn);
			st = BLUE_RESP_DONE;
			break;

		case BLUE_RESP_NAK:
			/*
			 * Invalid request, remote access and remote operational errors: NAK
			 * and move to ERROR, as rxe does; nothing was executed.
			 */
			queue_nak(qp, nak, p->psn);
			if (nak == BLUE_NAK_REM_ACCESS_ERR)
				qp->ctx->eng.st.rx_access_err++;
			else if (nak == BLUE_NAK_REM_OP_ERR)
				qp->ctx->eng.st.rx_op_err++;
			else
				qp->ctx->eng.st.rx_inv_req++;
			blue__qp_error(qp, why);
			st = BLUE_RESP_DONE;
			break;

		case BLUE_RESP_DONE:
		default:
			r->state = st;
			return;
		}
	}
}

void blue__resp_rx(struct blue_qp *qp, const struct blue_pkt *p)
{
	resp_one(qp, p, false);
	/* the policy's next step (selective: an in-order request may have filled a hole) */
	if (qp->retx.ops->resp_after_rx)
		qp->retx.ops->resp_after_rx(qp);
}

void blue__resp_replay(struct blue_qp *qp, const struct blue_pkt *p)
{
	resp_one(qp, p, true);
}

/* ---- the response path --------------------------------------------------------------- */

static uint8_t read_resp_opcode(uint32_t idx, uint32_t npkts)
{
	if (npkts == 1)
		return BLUE_OP_RC_READ_RESPONSE_ONLY;
	if (idx == 0)
		return BLUE_OP_RC_READ_RESPONSE_FIRST;
	return idx == npkts - 1 ? BLUE_OP_RC_READ_RESPONSE_LAST :
				  BLUE_OP_RC_READ_RESPONSE_MIDDLE;
}

/*
 * The @chunk bytes of the READ response @o from o->off on, translated through its MR
 * for this packet: the region may have been deregistered (and unmapped) since the
 * request was checked. Return: false if the R_Key no longer covers them.
 */
static bool read_chunk(struct blue_qp *qp, const struct blue_resp_out *o, uint32_t chunk,
		       const void **at)
{
	return blue__copy_rkey(qp, o->rkey, o->va + o->off, qp->ctx->eng.gather, chunk,
			       BLUE_ACCESS_REMOTE_READ, BLUE_COPY_FROM_MEM, at) == BLUE_MR_OK;
}

/*
 * The READ response @o lost its memory part way: it ends with a remote access NAK at
 * @psn, the first response packet it cannot send, and the QP moves to ERROR (the same
 * class of error as a bad R_Key in the request, IBA 9.7.5.2.4). The requester has
 * taken every response before @psn, so the NAK lands inside its READ.
 */
static void read_abort(struct blue_qp *qp, struct blue_resp_out *o, uint32_t psn)
{
	struct blue_qp_ctx *live = qp->live;
	char why[96];

	o->kind = BLUE_OUT_ACK;
	o->syndrome = BLUE_NAK_REM_ACCESS_ERR;
	o->psn = psn;
	live->naks_sent++;
	BLUE_PROBE3(nak_sent, qp->qpn, psn, BLUE_NAK_REM_ACCESS_ERR);
	live->last_nak_psn = psn;
	live->last_nak_syndrome = BLUE_NAK_REM_ACCESS_ERR;
	qp->ctx->eng.st.rx_access_err++;
	snprintf(why, sizeof(why), "READ response at PSN 0x%x: R_Key 0x%x no longer "
		 "covers 0x%llx (MR deregistered?)", psn, o->rkey,
		 (unsigned long long)(o->va + o->off));
	blue__qp_error(qp, why);
}

int blue__resp_tx(struct blue_qp *qp)
{
	struct blue_resp *r = &qp->resp;
	bool in_err = qp->live->state == BLUE_QPS_ERR;
	uint32_t mtu = blue__qp_mtu(qp), npkts, idx, chunk;
	struct blue_resp_out *o;
	const void *at;
	struct blue_pkt p;
	int sent = 0;

	/* the policy's unfinished work (selective: a drain that found no room) goes on */
	if (qp->retx.ops->resp_tx_resume)
		qp->retx.ops->resp_tx_resume(qp);
	while (r->out_cons != r->out_prod) {
		o = &r->out[r->out_cons & (BLUE_RESP_OUTQ - 1)];
		/* in ERROR only the NAK that put us there still goes out */
		if (in_err && o->kind != BLUE_OUT_ACK) {
			r->out_cons++;
			continue;
		}
		switch (o->kind) {
		case BLUE_OUT_ACK:
			blue__qp_pkt(qp, &p, BLUE_OP_RC_ACKNOWLEDGE, o->psn);
			p.aeth.syndrome = o->syndrome;
			p.aeth.msn = o->msn;
			if (blue__qp_tx(qp, &p))
				return sent;
			r->out_cons++;
			break;
		case BLUE_OUT_ATOMIC:
			blue__qp_pkt(qp, &p, BLUE_OP_RC_ATOMIC_ACKNOWLEDGE, o->psn);
			p.aeth.syndrome = AETH_ACK_NO_CREDIT;
			p.aeth.msn = o->msn;
			p.atmack.orig = o->orig;
			if (blue__qp_tx(qp, &p))
				return sent;
			r->out_cons++;
			break;
		case BLUE_OUT_READ:
			npkts = blue__read_npkts(o->len, mtu);
			idx = o->off / mtu;
			chunk = o->len - o->off < mtu ? o->len - o->off : mtu;
			blue__qp_pkt(qp, &p, read_resp_opcode(idx, npkts),
				     blue_psn_add(o->psn, idx));
			p.aeth.syndrome = AETH_ACK_NO_CREDIT;
			p.aeth.msn = o->msn;
			at = NULL;
			if (chunk && !read_chunk(qp, o, chunk, &at)) {
				read_abort(qp, o, blue_psn_add(o->psn, idx));
				in_err = true;
				continue;	/* the entry is now that NAK */
			}
			p.payload = at;
			p.payload_len = chunk;
			if (blue__qp_tx(qp, &p))
				return sent;
			o->off += chunk;
			if (idx + 1 >= npkts)
				r->out_cons++;
			break;
		default:
			r->out_cons++;
			continue;
		}
		sent++;
	}
	return sent;
}

void blue__resp_reset(struct blue_qp *qp)
{
	memset(&qp->resp, 0, sizeof(qp->resp));
}
