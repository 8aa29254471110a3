// SPDX-License-Identifier: MIT
/*
 * The requester's side of ATOMIC WRITE and FLUSH (IBA 1.5; aw.h has the wire format):
 * what post_send accepts, what the WQE keeps, the FLUSH headers, and the completer's
 * reading of their response. Everything else (PSNs, the responder-resource limit
 * max_rd_atomic, go-back-N, the ACK timer) is the READ path's: each is one request
 * packet that consumes one PSN and waits for its response like a READ with no data.
 */
#include <errno.h>
#include <stdio.h>

#include "runtime/aw.h"
#include "runtime/codec.h"
#include "runtime/log.h"
#include "runtime/qp.h"

/*
 * The WQE has no FLUSH fields of its own; a FLUSH has no atomic operands, so their
 * slots carry its range length (compare_add) and type | level << 8 (swap).
 */
#define FLUSH_LEVEL_SHIFT 8

static int atomic_write_check(const struct blue_qp *qp, const struct blue_send_wr *wr)
{
	uint64_t len = 0;
	uint32_t room;
	int i;

	/* IBA 1.5 (and rxe's responder) take an ATOMIC WRITE on an aligned 64-bit word only */
	if (wr->wr.rdma.remote_addr & 7) {
		blue__logf("post_send: QP 0x%x: ATOMIC_WRITE to 0x%llx: remote_addr must be "
			   "8-byte aligned", qp->qpn,
			   (unsigned long long)wr->wr.rdma.remote_addr);
		return EINVAL;
	}
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->sq.max_sge ||
	    (wr->num_sge && !wr->sg_list)) {
		blue__logf("post_send: QP 0x%x: ATOMIC_WRITE with %d SGEs, the QP was created "
			   "for %u", qp->qpn, wr->num_sge, qp->sq.max_sge);
		return EINVAL;
	}
	for (i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	if (len != 8) {
		blue__logf("post_send: QP 0x%x: ATOMIC_WRITE carries exactly 8 bytes, the SGE "
			   "list has %llu", qp->qpn, (unsigned long long)len);
		return EINVAL;
	}
	/* inline: the 8 bytes go in the WQE's tail, which holds the larger of the two */
	room = qp->sq.max_sge * (uint32_t)sizeof(struct blue_sge);
	if (room < qp->sq.max_inline)
		room = qp->sq.max_inline;
	if ((wr->send_flags & BLUE_SEND_INLINE) && room < 8) {
		blue__logf("post_send: QP 0x%x: an inline ATOMIC_WRITE needs max_inline_data "
			   ">= 8 or max_send_sge >= 1", qp->qpn);
		return EINVAL;
	}
	return 0;
}

static int flush_check(const struct blue_qp *qp, const struct blue_send_wr *wr)
{
	unsigned int type = wr->wr.flush.type, level = wr->wr.flush.level;

	if (!type || (type & ~(unsigned int)(BLUE_FLUSH_GLOBAL | BLUE_FLUSH_PERSISTENT))) {
		blue__logf("post_send: QP 0x%x: FLUSH type 0x%x: it is BLUE_FLUSH_GLOBAL and/or "
			   "BLUE_FLUSH_PERSISTENT", qp->qpn, type);
		return EINVAL;
	}
	if (level != BLUE_FLUSH_RANGE && level != BLUE_FLUSH_MR) {
		blue__logf("post_send: QP 0x%x: FLUSH level %u: it is BLUE_FLUSH_RANGE (0) or "
			   "BLUE_FLUSH_MR (1)", qp->qpn, level);
		return EINVAL;
	}
	if (wr->num_sge || (wr->send_flags & BLUE_SEND_INLINE)) {
		blue__logf("post_send: QP 0x%x: a FLUSH carries no data (num_sge %d)", qp->qpn,
			   wr->num_sge);
		return EINVAL;
	}
	return 0;
}

int blue__aw_wr_check(const struct blue_qp *qp, const struct blue_send_wr *wr,
		      uint64_t *total)
{
	int err;

	if (qp->type != BLUE_QPT_RC) {
		blue__logf("post_send: QP 0x%x: %s is an RC operation (IBA 1.5)", qp->qpn,
			   wr->opcode == BLUE_WR_FLUSH ? "FLUSH" : "ATOMIC_WRITE");
		return EINVAL;
	}
	if (wr->opcode == BLUE_WR_ATOMIC_WRITE) {
		err = atomic_write_check(qp, wr);
		*total = 8;
	} else {
		err = flush_check(qp, wr);
		*total = 0;
	}
	return err;
}

void blue__aw_wqe_fill(struct blue_send_wqe *w, const struct blue_send_wr *wr)
{
	if (wr->opcode == BLUE_WR_ATOMIC_WRITE) {
		w->remote_addr = wr->wr.rdma.remote_addr;
		w->rkey = wr->wr.rdma.rkey;
		return;
	}
	w->remote_addr = wr->wr.flush.remote_addr;
	w->rkey = wr->wr.flush.rkey;
	w->compare_add = wr->wr.flush.length;
	w->swap = (uint64_t)wr->wr.flush.type | (uint64_t)wr->wr.flush.level << FLUSH_LEVEL_SHIFT;
}

void blue__aw_flush_hdrs(const struct blue_send_wqe *w, struct blue_pkt *p)
{
	uint32_t type = (uint32_t)(w->swap & 0xff);
	uint32_t level = (uint32_t)(w->swap >> FLUSH_LEVEL_SHIFT) & 0xff;

	p->feth = (type & BLUE_FETH_PLT_MASK) |
		  ((level << BLUE_FETH_SEL_SHIFT) & BLUE_FETH_SEL_MASK);
	p->reth.len = (uint32_t)w->compare_add;
}

enum blue_comp_state blue__comp_aw_resp(struct blue_qp *qp, const struct blue_swqe_eng *e,
					const struct blue_pkt *p, char *why, size_t whylen,
					enum blue_wc_status *status)
{
	if (p->psn != qp->live->una_psn) {
		snprintf(why, whylen, "response 0x%x came, 0x%x expected", p->psn,
			 qp->live->una_psn);
		return BLUE_COMP_RETRY;
	}
	/* IBA 1.5: the answer is one zero-length READ RESPONSE Only (rxe's read_response_ack) */
	if (p->opcode != BLUE_OP_RC_READ_RESPONSE_ONLY || p->payload_len ||
	    p->psn != e->first_psn ||
	    (p->aeth.syndrome & BLUE_AETH_TYPE_MASK) != BLUE_AETH_ACK) {
		*status = BLUE_WC_BAD_RESP_ERR;
		snprintf(why, whylen, "ATOMIC_WRITE/FLUSH at PSN 0x%x answered by opcode 0x%02x "
			 "with %u bytes, syndrome 0x%02x", e->first_psn, p->opcode,
			 p->payload_len, p->aeth.syndrome);
		return BLUE_COMP_ERROR;
	}
	blue__comp_una_advance(qp, blue_psn_add(p->psn, 1));
	return BLUE_COMP_COMPLETE;
}
