// SPDX-License-Identifier: MIT
/*
 * Send and receive queues, and the API side that fills them: blue_post_send() and
 * blue_post_recv() check each work request, copy it into a WQE, and publish the batch
 * with one release store (the doorbell the engine reads). They never touch the engine.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "runtime/ah.h"
#include "runtime/aw.h"
#include "runtime/log.h"
#include "runtime/mw.h"
#include "runtime/probes.h"
#include "runtime/qp.h"
#include "runtime/verbs_ops.h"
#include "runtime/wq.h"

int blue__wq_init(struct blue_wq *wq, int is_send, uint32_t max_wr, uint32_t max_sge,
		  uint32_t max_inline, bool shared)
{
	uint32_t size, tail;
	int err;

	if (is_send) {
		tail = max_sge * (uint32_t)sizeof(struct blue_sge);
		if (max_inline > tail)
			tail = max_inline;
		size = (uint32_t)sizeof(struct blue_send_wqe) + tail;
	} else {
		size = (uint32_t)sizeof(struct blue_recv_wqe) +
		       max_sge * (uint32_t)sizeof(struct blue_sge);
	}
	/* a queue asked for 0 WRs (a receive-only QP, a QP on an SRQ) holds none, as the
	 * kernel's drivers make it: the ring of one only keeps the code paths uniform */
	err = blue_ring_init_as(&wq->ring, max_wr ? max_wr : 1, size, shared, &wq->shm_fd);
	if (err)
		return err;
	wq->max_wr = max_wr ? blue_ring_size(&wq->ring) : 0;
	wq->max_sge = max_sge;
	wq->max_inline = is_send ? max_inline : 0;
	return 0;
}

void blue__wq_fini(struct blue_wq *wq)
{
	if (wq->shm_fd >= 0)
		close(wq->shm_fd);
	wq->shm_fd = -1;
	blue_ring_fini(&wq->ring);
}

/* A UD send (IBA 10.2.5 / 11.4.1.1): SEND or SEND with immediate, to an AH of this device. */
static int ud_wr_check(const struct blue_qp *qp, const struct blue_send_wr *wr)
{
	const struct blue_ah *ah = wr->wr.ud.ah;

	if (wr->opcode != BLUE_WR_SEND && wr->opcode != BLUE_WR_SEND_WITH_IMM) {
		blue__logf("post_send: QP 0x%x is UD: opcode %d is not SEND (%d) or SEND with "
			   "immediate (%d), the only operations UD has", qp->qpn, wr->opcode,
			   BLUE_WR_SEND, BLUE_WR_SEND_WITH_IMM);
		return EINVAL;
	}
	if (!ah || ah->pd->ctx != qp->ctx) {
		blue__logf("post_send: QP 0x%x is UD: wr.ud.ah is %s", qp->qpn,
			   ah ? "an address handle of another device context" : "NULL");
		return EINVAL;
	}
	if (wr->wr.ud.remote_qpn > BLUE_QPN_MASK) {
		blue__logf("post_send: QP 0x%x: remote_qpn 0x%x is not a 24-bit QPN", qp->qpn,
			   wr->wr.ud.remote_qpn);
		return EINVAL;
	}
	return 0;
}

/*
 * A UC send (IBA 9.8.1 / 10.2.2, table 37 in 9.8.2): UC has SEND and RDMA WRITE (with
 * immediate too) but no operation that needs a response: no RDMA READ, no atomics, no
 * ATOMIC_WRITE or FLUSH (rxe's opcode table refuses them for IB_QPT_UC the same way),
 * and no SEND with invalidate. Its local operations (BIND_MW, LOCAL_INV) are taken.
 */
static int uc_wr_check(const struct blue_qp *qp, const struct blue_send_wr *wr)
{
	switch (wr->opcode) {
	case BLUE_WR_RDMA_READ:
	case BLUE_WR_ATOMIC_CMP_AND_SWP:
	case BLUE_WR_ATOMIC_FETCH_AND_ADD:
	case BLUE_WR_ATOMIC_WRITE:
	case BLUE_WR_FLUSH:
		blue__logf("post_send: QP 0x%x is UC: opcode %d needs a response, and UC has "
			   "SEND and RDMA WRITE only (IBA 9.8.1); use an RC QP", qp->qpn,
			   wr->opcode);
		return EINVAL;
	case BLUE_WR_SEND_WITH_INV:
		blue__logf("post_send: QP 0x%x is UC: UC has no SEND with invalidate (IBA 9.8.1, "
			   "table 37 has no UC opcode for it); use an RC QP", qp->qpn);
		return EINVAL;
	default:
		return 0;
	}
}

static int send_wr_check(const struct blue_qp *qp, const struct blue_send_wr *wr,
			 uint64_t *total)
{
	uint64_t len = 0;
	int i;

	if (blue_op_is_aw((uint32_t)wr->opcode))
		return blue__aw_wr_check(qp, wr, total);
	if ((unsigned int)wr->opcode > BLUE_WR_ATOMIC_FETCH_AND_ADD &&
	    !blue__mw_wr_ok(qp, wr)) {
		/* a window operation refused said why (mw.c) */
		if (!blue__mw_wr_opcode(wr->opcode))
			blue__logf("post_send: QP 0x%x: unknown opcode %d", qp->qpn, wr->opcode);
		return EINVAL;
	}
	if (qp->type == BLUE_QPT_UD && ud_wr_check(qp, wr))
		return EINVAL;
	if (qp->type == BLUE_QPT_UC && uc_wr_check(qp, wr))
		return EINVAL;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->sq.max_sge ||
	    (wr->num_sge && !wr->sg_list)) {
		blue__logf("post_send: QP 0x%x: %d SGEs, the QP was created for %u",
			   qp->qpn, wr->num_sge, qp->sq.max_sge);
		return EINVAL;
	}
	for (i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	if (len > BLUE_MAX_MSG) {
		blue__logf("post_send: QP 0x%x: %llu bytes, messages are at most 2^31",
			   qp->qpn, (unsigned long long)len);
		return EINVAL;
	}
	if (wr->send_flags & BLUE_SEND_INLINE) {
		if (wr->opcode != BLUE_WR_SEND && wr->opcode != BLUE_WR_SEND_WITH_IMM &&
		    wr->opcode != BLUE_WR_RDMA_WRITE && wr->opcode != BLUE_WR_RDMA_WRITE_WITH_IMM) {
			blue__logf("post_send: QP 0x%x: inline data is for SEND and WRITE only",
				   qp->qpn);
			return EINVAL;
		}
		if (len > qp->sq.max_inline) {
			blue__logf("post_send: QP 0x%x: %llu inline bytes, max_inline_data is %u",
				   qp->qpn, (unsigned long long)len, qp->sq.max_inline);
			return EINVAL;
		}
	}
	if (wr->opcode == BLUE_WR_ATOMIC_CMP_AND_SWP || wr->opcode == BLUE_WR_ATOMIC_FETCH_AND_ADD) {
		/* the original value comes back into one 8-byte buffer (IBA 9.4.5) */
		if (wr->num_sge != 1 || wr->sg_list[0].length < 8) {
			blue__logf("post_send: QP 0x%x: an atomic needs one SGE of 8 bytes",
				   qp->qpn);
			return EINVAL;
		}
	}
	*total = len;
	return 0;
}

static void send_wqe_fill(const struct blue_qp *qp, struct blue_send_wqe *w,
			  const struct blue_send_wr *wr, uint32_t len)
{
	int i;

	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	w->send_flags = wr->send_flags;
	if (qp->sq_sig_all)
		w->send_flags |= BLUE_SEND_SIGNALED;
	w->imm_data = wr->imm_data;
	w->length = len;
	w->rkey = 0;
	w->remote_addr = w->compare_add = w->swap = 0;
	switch (wr->opcode) {
	case BLUE_WR_RDMA_WRITE:
	case BLUE_WR_RDMA_WRITE_WITH_IMM:
	case BLUE_WR_RDMA_READ:
		w->remote_addr = wr->wr.rdma.remote_addr;
		w->rkey = wr->wr.rdma.rkey;
		break;
	case BLUE_WR_ATOMIC_CMP_AND_SWP:
	case BLUE_WR_ATOMIC_FETCH_AND_ADD:
		w->remote_addr = wr->wr.atomic.remote_addr;
		w->rkey = wr->wr.atomic.rkey;
		w->compare_add = wr->wr.atomic.compare_add;
		w->swap = wr->wr.atomic.swap;
		w->length = 8;
		break;
	case BLUE_WR_BIND_MW:
		w->remote_addr = wr->wr.bind_mw.bind_info.addr;
		w->rkey = wr->wr.bind_mw.rkey;
		w->bind.mw = wr->wr.bind_mw.mw;
		w->bind.mr = wr->wr.bind_mw.bind_info.mr;
		w->bind.length = wr->wr.bind_mw.bind_info.length;
		w->bind.access = wr->wr.bind_mw.bind_info.mw_access_flags;
		break;
	case BLUE_WR_ATOMIC_WRITE:
	case BLUE_WR_FLUSH:
		blue__aw_wqe_fill(w, wr);
		break;
	default:
		break;
	}
	if (blue__wr_is_local(wr->opcode))
		w->length = 0;	/* no message: SGEs mean nothing to a local operation */
	if (qp->type == BLUE_QPT_UD) {
		const struct blue_ah *ah = wr->wr.ud.ah;

		memcpy(w->ud.dgid, ah->attr.dgid.raw, 16);
		w->ud.sgid_index = ah->attr.sgid_index;
		memcpy(w->ud.dmac, ah->dmac, 6);
		w->ud.tclass = ah->attr.traffic_class;
		w->ud.dqpn = wr->wr.ud.remote_qpn;
		w->ud.qkey = wr->wr.ud.remote_qkey;
	}
	if (wr->send_flags & BLUE_SEND_INLINE) {
		/* the data is copied now: the application may reuse its buffer on return */
		uint8_t *d = w->data;

		w->num_sge = 0;
		for (i = 0; i < wr->num_sge; i++) {
			if (!wr->sg_list[i].length)
				continue;
			memcpy(d, (const void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			d += wr->sg_list[i].length;
		}
	} else {
		w->num_sge = (uint32_t)wr->num_sge;
		if (wr->num_sge)	/* sg_list may be NULL for a zero-length WR */
			memcpy(w->data, wr->sg_list,
			       (size_t)wr->num_sge * sizeof(struct blue_sge));
	}
}

int blue_post_send(struct blue_qp *qp, struct blue_send_wr *wr, struct blue_send_wr **bad_wr)
{
	uint32_t n = 0, room, prod;
	uint64_t len, post_ns = 0;
	struct blue_send_wqe *w;
	uint8_t state;
	int err = 0;

	if (!qp || !wr) {
		if (bad_wr)
			*bad_wr = wr;
		return EINVAL;
	}
	/* latency diagnostics: one timestamp per call, only when switched on */
	if (blue__obs_diag(&qp->ctx->obs, BLUE_DIAG_LAT))
		post_ns = blue__now_ns();
	state = __atomic_load_n(&qp->live->state, __ATOMIC_ACQUIRE);
	/* IBA 10.3.1: sends are posted in RTS, SQD, SQE and ERROR (where they flush) */
	if (state == BLUE_QPS_RESET || state == BLUE_QPS_INIT || state == BLUE_QPS_RTR) {
		blue__logf("post_send: QP 0x%x is in %s; sends need RTS", qp->qpn,
			   blue__qp_state_str(state));
		err = EINVAL;
		goto out;
	}
	room = blue__wq_room(&qp->sq);
	prod = blue_ring_prod_own(&qp->sq.ring);
	for (; wr; wr = wr->next) {
		err = send_wr_check(qp, wr, &len);
		if (err)
			break;
		if (n == room) {
			err = ENOMEM;	/* as ibv_post_send: the queue is full */
			break;
		}
		w = blue_sq_wqe(&qp->sq, prod + n);
		send_wqe_fill(qp, w, wr, (uint32_t)len);
		w->post_ns = post_ns;
		BLUE_PROBE5(post_send, qp->qpn, wr->wr_id, wr->opcode, w->length, w->send_flags);
		n++;
	}
	if (n) {
		blue_ring_produce(&qp->sq.ring, n);
		/* the engine's hint that this application answers (progress.c ack_hold) */
		__atomic_fetch_add(&qp->ctx->eng.posts, 1, __ATOMIC_RELAXED);
		qp->ctx->ops->kick(qp->ctx);
	}
out:
	if (bad_wr)
		*bad_wr = err ? wr : NULL;
	return err;
}

int blue__wq_post_recv(struct blue_wq *wq, const char *who, uint32_t id,
		       struct blue_recv_wr *wr, struct blue_recv_wr **bad_wr)
{
	uint32_t n = 0, room, prod;
	struct blue_recv_wqe *w;
	uint64_t len;
	int err = 0, i;

	room = blue__wq_room(wq);
	prod = blue_ring_prod_own(&wq->ring);
	for (; wr; wr = wr->next) {
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > wq->max_sge ||
		    (wr->num_sge && !wr->sg_list)) {
			blue__logf("%s 0x%x: %d SGEs, it was created for %u", who, id,
				   wr->num_sge, wq->max_sge);
			err = EINVAL;
			break;
		}
		if (n == room) {
			err = ENOMEM;
			break;
		}
		len = 0;
		for (i = 0; i < wr->num_sge; i++)
			len += wr->sg_list[i].length;
		w = blue_rq_wqe(wq, prod + n);
		w->wr_id = wr->wr_id;
		w->num_sge = (uint32_t)wr->num_sge;
		w->length = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
		if (wr->num_sge)
			memcpy(w->sge, wr->sg_list,
			       (size_t)wr->num_sge * sizeof(struct blue_sge));
		BLUE_PROBE3(post_recv, id, wr->wr_id, w->length);
		n++;
	}
	if (n)
		blue_ring_produce(&wq->ring, n);
	if (bad_wr)
		*bad_wr = err ? wr : NULL;
	return err;
}

int blue_post_recv(struct blue_qp *qp, struct blue_recv_wr *wr, struct blue_recv_wr **bad_wr)
{
	uint8_t state;
	int err;

	if (!qp || !wr) {
		if (bad_wr)
			*bad_wr = wr;
		return EINVAL;
	}
	state = __atomic_load_n(&qp->live->state, __ATOMIC_ACQUIRE);
	if (state == BLUE_QPS_RESET || qp->srq) {
		if (qp->srq)
			blue__logf("post_recv: QP 0x%x takes its receives from an SRQ; post "
				   "them there (blue_post_srq_recv)", qp->qpn);
		else
			blue__logf("post_recv: QP 0x%x is in RESET; receives need INIT or "
				   "later", qp->qpn);
		if (bad_wr)
			*bad_wr = wr;
		return EINVAL;
	}
	err = blue__wq_post_recv(&qp->rq, "post_recv: QP", qp->qpn, wr, bad_wr);
	qp->ctx->ops->kick(qp->ctx);
	return err;
}
