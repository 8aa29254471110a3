// SPDX-License-Identifier: MIT
/*
 * Queue pairs: create (plain and extended), modify, query, destroy, and the post_send /
 * post_recv ops the program's inline ibv_post_*() call. RC and UD (a UD send WR names its
 * address handle, remote QPN and Q_Key); receives may come from an SRQ (srq.c).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "compat/compat.h"
#include "runtime/qp.h"

/* The SGE and receive WR layouts are the same, so chains pass through uncopied. */
_Static_assert(sizeof(struct ibv_sge) == sizeof(struct blue_sge), "sge layout");
_Static_assert(offsetof(struct ibv_sge, lkey) == offsetof(struct blue_sge, lkey), "sge lkey");
_Static_assert(offsetof(struct ibv_sge, length) == offsetof(struct blue_sge, length), "sge len");
_Static_assert(offsetof(struct ibv_recv_wr, next) == offsetof(struct blue_recv_wr, next),
	       "recv wr next");
_Static_assert(offsetof(struct ibv_recv_wr, sg_list) ==
	       offsetof(struct blue_recv_wr, sg_list), "recv wr sg_list");
_Static_assert(offsetof(struct ibv_recv_wr, num_sge) ==
	       offsetof(struct blue_recv_wr, num_sge), "recv wr num_sge");

#define BV_SEND_OPS (IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
		     IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
		     IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
		     IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | \
		     IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV | \
		     IBV_QP_EX_WITH_SEND_WITH_INV | \
		     IBV_QP_EX_WITH_ATOMIC_WRITE | BV_QP_EX_WITH_FLUSH)

/* a program built against rdma-core 45 finds wr_flush right after wr_atomic_write */
_Static_assert(offsetof(struct bv_qp, wr_flush) ==
	       offsetof(struct ibv_qp_ex, wr_atomic_write) + sizeof(void (*)(void)),
	       "wr_flush at rdma-core 45's offset");

/* The attribute bits blue_modify_qp() knows (enum blue_qp_attr_mask: the same values). */
#define BV_QP_MASK (IBV_QP_STATE | IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | \
		    IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_AV | IBV_QP_PATH_MTU | \
		    IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_RQ_PSN | \
		    IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER | IBV_QP_SQ_PSN | \
		    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_CAP | IBV_QP_DEST_QPN | IBV_QP_QKEY)

static void cap_from_blue(const struct blue_qp_cap *b, struct ibv_qp_cap *c)
{
	c->max_send_wr = b->max_send_wr;
	c->max_recv_wr = b->max_recv_wr;
	c->max_send_sge = b->max_send_sge;
	c->max_recv_sge = b->max_recv_sge;
	c->max_inline_data = b->max_inline_data;
}

struct ibv_qp *bv_qp_create(struct ibv_context *context, struct ibv_qp_init_attr_ex *a,
			    bool gsi)
{
	struct bv_context *c = bv_ctx(context);
	struct blue_qp_init_attr bi;
	struct blue_qp_attr qa;
	struct blue_qp_init_attr qi;
	uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
			 IBV_QP_INIT_ATTR_CREATE_FLAGS;
	struct bv_qp *q;

	if (!a) {
		bv_log("ibv_create_qp_ex: qp_init_attr is NULL");
		return bv_null(EINVAL);
	}
	if (a->comp_mask & ~known) {
		bv_log("ibv_create_qp_ex: comp_mask 0x%x is not supported (TSO, RSS, XRC, "
		       "source QPN)", a->comp_mask & ~known);
		return bv_null(EOPNOTSUPP);
	}
	/* the mask may say "create flags" with none set (rdma-core's tests do) */
	if ((a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && a->create_flags) {
		bv_log("ibv_create_qp_ex: create_flags 0x%x are not supported (blue takes none)",
		       a->create_flags);
		return bv_null(EOPNOTSUPP);
	}
	if (!(a->comp_mask & IBV_QP_INIT_ATTR_PD) || !a->pd) {
		bv_log("ibv_create_qp_ex: pd is missing (IBV_QP_INIT_ATTR_PD)");
		return bv_null(EINVAL);
	}
	if ((a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (a->send_ops_flags & ~(uint64_t)BV_SEND_OPS)) {
		bv_log("ibv_create_qp_ex: send_ops_flags 0x%llx are not supported (TSO, "
		       "atomic write)",
		       (unsigned long long)(a->send_ops_flags & ~(uint64_t)BV_SEND_OPS));
		return bv_null(EOPNOTSUPP);
	}
	if (a->qp_type != IBV_QPT_RC && a->qp_type != IBV_QPT_UC && a->qp_type != IBV_QPT_UD) {
		bv_log("ibv_create_qp: qp_type %d is not supported; blue has RC (%d), UC (%d) and "
		       "UD (%d)", a->qp_type, IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD);
		return bv_null(EOPNOTSUPP);
	}
	if (!a->send_cq || !a->recv_cq) {
		bv_log("ibv_create_qp: %s is NULL", a->send_cq ? "recv_cq" : "send_cq");
		return bv_null(EINVAL);
	}
	if (bv_mixed(context, a->pd->context, "ibv_create_qp", "the PD") ||
	    bv_mixed(context, a->send_cq->context, "ibv_create_qp", "send_cq") ||
	    bv_mixed(context, a->recv_cq->context, "ibv_create_qp", "recv_cq"))
		return NULL;
	q = bv_obj_new(sizeof(*q));
	if (!q)
		return NULL;
	memset(&bi, 0, sizeof(bi));
	bi.qp_context = q;
	bi.send_cq = bv_cq(a->send_cq)->bcq;
	bi.recv_cq = bv_cq(a->recv_cq)->bcq;
	bi.srq = a->srq ? ((struct bv_srq *)a->srq)->bsrq : NULL;
	bi.cap.max_send_wr = a->cap.max_send_wr;
	bi.cap.max_recv_wr = a->cap.max_recv_wr;
	bi.cap.max_send_sge = a->cap.max_send_sge;
	bi.cap.max_recv_sge = a->cap.max_recv_sge;
	bi.cap.max_inline_data = a->cap.max_inline_data;
	bi.qp_type = (enum blue_qp_type)a->qp_type;	/* same numbers (qp_ctx.h) */
	bi.sq_sig_all = a->sq_sig_all;
	bv_lock(c);
	q->bqp = gsi ? blue__create_gsi_qp(bv_pd(a->pd)->bpd, &bi) :
		       blue_create_qp(bv_pd(a->pd)->bpd, &bi);
	if (q->bqp && blue_query_qp(q->bqp, &qa, IBV_QP_CAP, &qi) == 0)
		cap_from_blue(&qi.cap, &a->cap);	/* rdma-core returns the real caps */
	if (q->bqp) {
		bv_list_add(&c->qps, &q->link);
		/*
		 * a verbs program need not poll while its peer talks to it: run the engine.
		 * bv_progress_start() does not take the lock; the thread it starts only
		 * trylocks it, and it touches libblue, never this QP's verbs fields.
		 */
		(void)bv_progress_start(c->core);
	}
	bv_unlock(c);
	if (!q->bqp)
		return bv_obj_fail(q);
	q->qpx.qp_base.context = context;
	q->qpx.qp_base.qp_context = a->qp_context;
	q->qpx.qp_base.pd = a->pd;
	q->qpx.qp_base.send_cq = a->send_cq;
	q->qpx.qp_base.recv_cq = a->recv_cq;
	q->qpx.qp_base.srq = a->srq;
	q->qpx.qp_base.qp_num = blue_qp_num(q->bqp);
	q->qpx.qp_base.state = IBV_QPS_RESET;
	q->qpx.qp_base.qp_type = a->qp_type;
	pthread_mutex_init(&q->qpx.qp_base.mutex, NULL);
	pthread_cond_init(&q->qpx.qp_base.cond, NULL);
	q->ex = (a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) != 0;
	bv_qp_ex_init(q);
	return &q->qpx.qp_base;
}

static struct ibv_qp *bv_create_qp_ex(struct ibv_context *context,
				      struct ibv_qp_init_attr_ex *a)
{
	return bv_qp_create(context, a, false);
}

BV_EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ex;
	struct ibv_qp *qp;

	if (!pd || !attr) {
		bv_log("ibv_create_qp: %s is NULL", pd ? "qp_init_attr" : "pd");
		return bv_null(EINVAL);
	}
	memset(&ex, 0, sizeof(ex));
	memcpy(&ex, attr, sizeof(*attr));
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd;
	qp = bv_create_qp_ex(pd->context, &ex);
	if (qp)
		attr->cap = ex.cap;
	return qp;
}

BV_EXPORT struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	struct bv_qp *q = bv_qp(qp);

	if (!q || !q->ex)
		return bv_null(EOPNOTSUPP);
	return &q->qpx;
}

/*
 * The initiator depth (max_rd_atomic, at RTS): how many RDMA READ and atomic requests
 * this QP keeps outstanding. It must not exceed the responder's resources at the peer
 * (max_dest_rd_atomic there), and fewer is always safe: the requester just waits for a
 * response sooner (IBA 9.4.3, 9.4.4: the responder holds that many; the requester limits
 * itself). perftest asks for the PEER's max_qp_rd_atom (128 on rxe), which is more than
 * blue's requester tracks, so asking for more than the device allows is clamped with a
 * notice, as ibv_query_qp then reports. The responder resources (max_dest_rd_atomic,
 * at RTR) are not clamped: the peer may send as many as it was told.
 * Return: the depth to use.
 */
static uint8_t clamp_rd_atomic(struct bv_context *c, uint32_t qpn, uint8_t asked)
{
	int max = c->attrs.dev.max_qp_init_rd_atom;

	if (asked <= max)
		return asked;
	bv_log("ibv_modify_qp: QP 0x%x: max_rd_atomic %u is more than the device allows; "
	       "using %d (fewer outstanding READ/atomic requests than the peer can take)",
	       qpn, asked, max);
	return (uint8_t)max;
}

BV_EXPORT int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	struct blue_qp_attr b;
	struct bv_context *c;
	int err;

	if (!qp || !attr) {
		bv_log("ibv_modify_qp: %s is NULL", qp ? "attr" : "qp");
		return bv_ret(EINVAL);
	}
	if (attr_mask & ~BV_QP_MASK) {
		bv_log("ibv_modify_qp: QP 0x%x: attr_mask bits 0x%x are not supported ("
		       "alternate path, path migration, SQD notify, rate limit)", qp->qp_num,
		       attr_mask & ~BV_QP_MASK);
		return bv_ret(EINVAL);
	}
	if ((attr_mask & IBV_QP_AV) && !attr->ah_attr.is_global) {
		bv_log("ibv_modify_qp: QP 0x%x: ah_attr.is_global is 0, but RoCE addresses a "
		       "peer by GID (give a GID index, e.g. ibv_rc_pingpong -g 1)", qp->qp_num);
		return bv_ret(EINVAL);
	}
	memset(&b, 0, sizeof(b));
	b.qp_state = (enum blue_qp_state)attr->qp_state;
	b.cur_qp_state = (enum blue_qp_state)attr->cur_qp_state;
	b.path_mtu = (enum blue_mtu)attr->path_mtu;
	if (attr_mask & IBV_QP_ACCESS_FLAGS) {
		int a = bv_access((int)attr->qp_access_flags, "ibv_modify_qp");

		if (a < 0)
			return bv_ret(-a);
		b.qp_access_flags = (uint32_t)a;
	}
	b.rq_psn = attr->rq_psn;
	b.sq_psn = attr->sq_psn;
	b.dest_qp_num = attr->dest_qp_num;
	b.qkey = attr->qkey;
	b.cap.max_send_wr = attr->cap.max_send_wr;
	b.cap.max_recv_wr = attr->cap.max_recv_wr;
	b.cap.max_send_sge = attr->cap.max_send_sge;
	b.cap.max_recv_sge = attr->cap.max_recv_sge;
	b.cap.max_inline_data = attr->cap.max_inline_data;
	memcpy(b.ah_attr.dgid.raw, attr->ah_attr.grh.dgid.raw, 16);
	b.ah_attr.sgid_index = attr->ah_attr.grh.sgid_index;
	b.ah_attr.hop_limit = attr->ah_attr.grh.hop_limit;
	b.ah_attr.traffic_class = attr->ah_attr.grh.traffic_class;
	b.ah_attr.port_num = attr->ah_attr.port_num;
	b.pkey_index = attr->pkey_index;
	b.port_num = attr->port_num;
	b.max_rd_atomic = attr->max_rd_atomic;
	b.max_dest_rd_atomic = attr->max_dest_rd_atomic;
	b.min_rnr_timer = attr->min_rnr_timer;
	b.timeout = attr->timeout;
	b.retry_cnt = attr->retry_cnt;
	b.rnr_retry = attr->rnr_retry;
	c = bv_ctx(qp->context);
	bv_lock(c);
	if (attr_mask & IBV_QP_MAX_QP_RD_ATOMIC)
		b.max_rd_atomic = clamp_rd_atomic(c, qp->qp_num, attr->max_rd_atomic);
	err = blue_modify_qp(bv_qp(qp)->bqp, &b, attr_mask);
	if (!err && (attr_mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET) {
		/* as libblue did in its rings (blue__cq_clean) */
		bv_cq_clean(bv_cq(qp->send_cq), qp->qp_num);
		bv_cq_clean(bv_cq(qp->recv_cq), qp->qp_num);
	}
	bv_unlock(c);
	if (err)
		return bv_ret(err);
	if (attr_mask & IBV_QP_STATE)
		qp->state = attr->qp_state;
	return 0;
}

BV_EXPORT int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
			   struct ibv_qp_init_attr *init_attr)
{
	struct blue_qp_init_attr bi;
	struct blue_qp_attr b;
	struct bv_context *c;
	int err;

	if (!qp || !attr || !init_attr) {
		bv_log("ibv_query_qp: %s is NULL", !qp ? "qp" : !attr ? "attr" : "init_attr");
		return bv_ret(EINVAL);
	}
	c = bv_ctx(qp->context);
	bv_lock(c);
	err = blue_query_qp(bv_qp(qp)->bqp, &b, attr_mask & BV_QP_MASK, &bi);
	bv_unlock(c);
	if (err)
		return bv_ret(err);
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = (enum ibv_qp_state)b.qp_state;
	attr->cur_qp_state = (enum ibv_qp_state)b.cur_qp_state;
	attr->path_mtu = (enum ibv_mtu)b.path_mtu;
	attr->path_mig_state = IBV_MIG_MIGRATED;
	attr->qp_access_flags = b.qp_access_flags;
	attr->rq_psn = b.rq_psn;
	attr->sq_psn = b.sq_psn;
	attr->dest_qp_num = b.dest_qp_num;
	attr->qkey = b.qkey;
	cap_from_blue(&b.cap, &attr->cap);
	memcpy(attr->ah_attr.grh.dgid.raw, b.ah_attr.dgid.raw, 16);
	attr->ah_attr.grh.sgid_index = b.ah_attr.sgid_index;
	attr->ah_attr.grh.hop_limit = b.ah_attr.hop_limit;
	attr->ah_attr.grh.traffic_class = b.ah_attr.traffic_class;
	attr->ah_attr.is_global = 1;
	attr->ah_attr.port_num = b.ah_attr.port_num;
	attr->pkey_index = b.pkey_index;
	attr->port_num = b.port_num;
	attr->max_rd_atomic = b.max_rd_atomic;
	attr->max_dest_rd_atomic = b.max_dest_rd_atomic;
	attr->min_rnr_timer = b.min_rnr_timer;
	attr->timeout = b.timeout;
	attr->retry_cnt = b.retry_cnt;
	attr->rnr_retry = b.rnr_retry;
	memset(init_attr, 0, sizeof(*init_attr));
	init_attr->qp_context = qp->qp_context;
	init_attr->send_cq = qp->send_cq;
	init_attr->recv_cq = qp->recv_cq;
	init_attr->srq = qp->srq;
	cap_from_blue(&bi.cap, &init_attr->cap);
	init_attr->qp_type = (enum ibv_qp_type)bi.qp_type;
	init_attr->sq_sig_all = bi.sq_sig_all;
	return 0;
}

BV_EXPORT int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op,
					 uint32_t flags)
{
	(void)qp; (void)op; (void)flags;
	return 0;	/* no in-order placement guarantee is promised */
}

BV_EXPORT int ibv_destroy_qp(struct ibv_qp *qp)
{
	struct bv_qp *q = bv_qp(qp);
	struct bv_context *c;
	int err;

	if (!qp) {
		bv_log("ibv_destroy_qp: qp is NULL");
		return bv_ret(EINVAL);
	}
	c = bv_ctx(qp->context);
	bv_lock(c);
	err = blue_destroy_qp(q->bqp);
	if (!err) {
		bv_list_del(&q->link);
		bv_async_forget(c, qp, NULL);	/* no queued event names a freed QP */
	}
	bv_unlock(c);
	if (err)
		return bv_ret(err);
	free(q->wrs);
	free(q->sges);
	free(q->inl);
	free(q);
	return 0;
}

/* ---- posting --------------------------------------------------------------------- */

#define BV_POST_CHUNK 32

/* One ibv_send_wr as blue's. Return: 0, or an errno after a message. */
static int send_wr_to_blue(const struct ibv_qp *qp, const struct ibv_send_wr *w,
			   struct blue_send_wr *b)
{
	uint32_t qpn = qp->qp_num;
	unsigned int known = IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED |
			     IBV_SEND_INLINE;

	if (w->opcode > IBV_WR_ATOMIC_FETCH_AND_ADD && w->opcode != IBV_WR_LOCAL_INV &&
	    w->opcode != IBV_WR_BIND_MW && w->opcode != IBV_WR_SEND_WITH_INV &&
	    w->opcode != IBV_WR_ATOMIC_WRITE) {
		bv_log("ibv_post_send: QP 0x%x: opcode %d is not supported (TSO)", qpn, w->opcode);
		return EOPNOTSUPP;
	}
	if (w->send_flags & ~known) {
		bv_log("ibv_post_send: QP 0x%x: send_flags 0x%x are not supported", qpn,
		       w->send_flags & ~known);
		return EINVAL;
	}
	memset(b, 0, sizeof(*b));
	b->wr_id = w->wr_id;
	b->sg_list = (struct blue_sge *)w->sg_list;
	b->num_sge = w->num_sge;
	b->opcode = (enum blue_wr_opcode)w->opcode;	/* same numbers (blue.h) */
	b->send_flags = w->send_flags;
	b->imm_data = w->imm_data;
	if (qp->qp_type == IBV_QPT_UD) {
		/* the AH's libblue object; libblue names a missing one */
		b->wr.ud.ah = bv_bah(w->wr.ud.ah);
		b->wr.ud.remote_qpn = w->wr.ud.remote_qpn;
		b->wr.ud.remote_qkey = w->wr.ud.remote_qkey;
	} else if (w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
		   w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		b->wr.atomic.remote_addr = w->wr.atomic.remote_addr;
		b->wr.atomic.compare_add = w->wr.atomic.compare_add;
		b->wr.atomic.swap = w->wr.atomic.swap;
		b->wr.atomic.rkey = w->wr.atomic.rkey;
	} else if (w->opcode == IBV_WR_BIND_MW) {
		b->wr.bind_mw.mw = bv_bmw(w->bind_mw.mw);
		b->wr.bind_mw.rkey = w->bind_mw.rkey;
		bv_mw_bind_info(&w->bind_mw.bind_info, &b->wr.bind_mw.bind_info);
	} else {
		b->wr.rdma.remote_addr = w->wr.rdma.remote_addr;
		b->wr.rdma.rkey = w->wr.rdma.rkey;
	}
	return 0;
}

static int bv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	struct blue_send_wr b[BV_POST_CHUNK], *bad;
	struct ibv_send_wr *src[BV_POST_CHUNK];
	struct bv_context *c = bv_ctx(qp->context);
	int err = 0, n, i;

	bv_lock(c);
	while (wr && !err) {
		for (n = 0; wr && n < BV_POST_CHUNK; n++, wr = wr->next) {
			err = send_wr_to_blue(qp, wr, &b[n]);
			if (err)
				break;
			src[n] = wr;
			if (n)
				b[n - 1].next = &b[n];
		}
		if (n) {
			int perr = blue_post_send(bv_qp(qp)->bqp, b, &bad);

			if (perr) {
				for (i = 0; i < n && &b[i] != bad; i++)
					;
				if (bad_wr)
					*bad_wr = i < n ? src[i] : src[0];
				err = perr;
				break;
			}
		}
		if (err && bad_wr)
			*bad_wr = wr;	/* the one that did not convert */
	}
	bv_doorbell(c);
	bv_unlock(c);
	return err;
}

static int bv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct bv_context *c = bv_ctx(qp->context);
	struct blue_recv_wr *bad = NULL;
	int err;

	bv_lock(c);
	err = blue_post_recv(bv_qp(qp)->bqp, (struct blue_recv_wr *)wr, &bad);
	bv_unlock(c);
	if (err && bad_wr)
		*bad_wr = (struct ibv_recv_wr *)bad;
	return err;
}

void bv_qp_init_ops(struct bv_context *c)
{
	c->vctx.context.ops.post_send = bv_post_send;
	c->vctx.context.ops.post_recv = bv_post_recv;
	c->vctx.create_qp_ex = bv_create_qp_ex;
}
