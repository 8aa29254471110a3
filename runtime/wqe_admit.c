// SPDX-License-Identifier: MIT
/*
 * The engine's own copy of the work queues another process writes (daemon mode: the
 * rings are in memory the application maps read-write). A process can change a WQE
 * after post_send checked it, or write one post_send would never have written: more
 * SGEs than the slot holds, an inline length past it, a BIND_MW naming pointers. So the
 * engine copies each new send WQE once, when it first sees it, checks the copy against
 * the QP's limits, and reads only the copy from then on (the send queue's end for the
 * engine is what it has admitted). A receive WQE is copied the same way when the
 * responder takes it (rq.c), into the held copy an SRQ's WQEs already use.
 *
 * In library mode the application and the engine are one process: nothing is copied.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/device.h"
#include "runtime/log.h"
#include "runtime/qp.h"
#include "runtime/rq.h"

/* The bytes after the WQE's fixed part: room for max_sge SGEs or the inline data. */
static uint32_t wqe_tail(const struct blue_qp *qp)
{
	return qp->sq.ring.elem_size - (uint32_t)sizeof(struct blue_send_wqe);
}

static bool opcode_ok(const struct blue_qp *qp, uint32_t op)
{
	if (qp->type == BLUE_QPT_UD)
		return op == BLUE_WR_SEND || op == BLUE_WR_SEND_WITH_IMM;
	switch (op) {
	case BLUE_WR_SEND:
	case BLUE_WR_SEND_WITH_IMM:
	case BLUE_WR_RDMA_WRITE:
	case BLUE_WR_RDMA_WRITE_WITH_IMM:
		return true;
	case BLUE_WR_SEND_WITH_INV:
	case BLUE_WR_RDMA_READ:
	case BLUE_WR_ATOMIC_CMP_AND_SWP:
	case BLUE_WR_ATOMIC_FETCH_AND_ADD:
	case BLUE_WR_ATOMIC_WRITE:
	case BLUE_WR_FLUSH:
		return qp->type == BLUE_QPT_RC;
	default:	/* BIND_MW and LOCAL_INV among them: no windows in daemon mode */
		return false;
	}
}

/* What is wrong with a WQE post_send would not have written, or NULL. */
static const char *wqe_fault(const struct blue_qp *qp, const struct blue_send_wqe *w)
{
	const struct blue_sge *sge = blue_wqe_sges(w);
	uint64_t sum = 0;
	uint32_t i;

	if (!opcode_ok(qp, w->opcode))
		return "an opcode this QP does not take from another process";
	if (qp->type == BLUE_QPT_UD) {
		union blue_gid dgid;
		uint32_t ip;

		memcpy(dgid.raw, w->ud.dgid, 16);
		/* the source is one of this device's GIDs, of the destination's IP version */
		if (!blue__gid_valid(qp->ctx->gid, w->ud.sgid_index) ||
		    blue__gid_ipv4(&qp->ctx->gid[w->ud.sgid_index], &ip) !=
		    blue__gid_ipv4(&dgid, &ip))
			return "a UD source GID index this device does not have for that peer";
		if (w->ud.dqpn > BLUE_QPN_MASK)
			return "a UD destination QPN past 24 bits";
	}
	if (blue_wqe_is_inline(w)) {
		if (w->num_sge || w->length > wqe_tail(qp))
			return "inline data longer than its slot";
		return NULL;
	}
	if (w->num_sge > qp->sq.max_sge)
		return "more SGEs than the QP was created for";
	for (i = 0; i < w->num_sge; i++)
		sum += sge[i].length;
	if (sum != w->length || sum > BLUE_MAX_MSG)
		return "a length that is not its SGEs' sum";
	if (blue_op_is_atomic(w->opcode) && (w->num_sge != 1 || w->length != 8))
		return "an atomic that is not one 8-byte SGE";
	if (w->opcode == BLUE_WR_ATOMIC_WRITE && w->length != 8)
		return "an ATOMIC_WRITE that is not 8 bytes";
	if (w->opcode == BLUE_WR_FLUSH && w->num_sge)
		return "a FLUSH with data";
	return NULL;
}

int blue__wq_copies_init(struct blue_qp *qp, bool shared)
{
	qp->sq_admit = 0;
	if (!shared)
		return 0;
	qp->sq_copy = calloc(blue_ring_size(&qp->sq.ring), qp->sq.ring.elem_size);
	if (!qp->rq_copy)
		qp->rq_copy = malloc(qp->rq.ring.elem_size);
	return qp->sq_copy && qp->rq_copy ? 0 : -1;
}

bool blue__rwqe_take(const char *who, uint32_t id, const struct blue_wq *wq,
		     const struct blue_recv_wqe *w, struct blue_recv_wqe *copy)
{
	uint64_t sum = 0;
	uint32_t i;

	memcpy(copy, w, wq->ring.elem_size);
	if (copy->num_sge <= wq->max_sge) {
		for (i = 0; i < copy->num_sge; i++)
			sum += copy->sge[i].length;
		if (sum == copy->length)
			return true;
	}
	blue__logf("%s 0x%x: receive WQE wr_id %llu refused: %u SGEs (the queue takes %u) "
		   "for %u bytes; it takes no message (a length error)", who, id,
		   (unsigned long long)copy->wr_id, copy->num_sge, wq->max_sge, copy->length);
	copy->num_sge = copy->length = 0;
	return false;
}

uint32_t blue__sq_admit(struct blue_qp *qp)
{
	const struct blue_ring *r = &qp->sq.ring;
	uint32_t cons = blue_ring_cons_own(r), n = blue_ring_count(r);
	struct blue_send_wqe *w;
	const char *why;

	/* a producer index moved back is a lie too: nothing new, nothing taken back */
	while (qp->sq_admit - cons < n) {
		w = (struct blue_send_wqe *)blue__sq_wqe(qp, qp->sq_admit);
		memcpy(w, blue_ring_elem(r, qp->sq_admit), r->elem_size);
		why = wqe_fault(qp, w);
		if (why) {
			struct blue_swqe_eng *e = blue__sq_eng(qp, qp->sq_admit);

			blue__logf("QP 0x%x: WQE wr_id %llu (opcode %u) refused: %s; it completes "
				   "with a local QP operation error", qp->qpn,
				   (unsigned long long)w->wr_id, w->opcode, why);
			/* nothing of it is read again but wr_id: the completion's */
			w->opcode = BLUE_WR_SEND;
			w->num_sge = w->length = 0;
			w->send_flags &= ~(uint32_t)BLUE_SEND_INLINE;
			e->state = BLUE_SWQE_ERROR;
			e->status = BLUE_WC_LOC_QP_OP_ERR;
		}
		qp->sq_admit++;
	}
	return qp->sq_admit;
}
