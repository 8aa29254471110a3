// SPDX-License-Identifier: MIT
/*
 * The verbs objects an id carries (cma.h): its QP (with CQs made for it when the caller
 * gives none, as librdmacm does), its SRQ, the QP attributes of each state step
 * (rdma_init_qp_attr, the kernel's cma_ib_init_qp_attr for RoCE). The endpoint calls
 * over synchronous ids are ep.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <rdma/rdma_verbs.h>

#include "compat/rdmacm/cma.h"

#define CMA_IBOE_ACK_TIMEOUT	19	/* the kernel: CMA_IBOE_PACKET_LIFETIME 18 + 1 */
#define CMA_MIN_RNR_TIMER	12	/* 0.64 ms */

static int init_attr(struct cma_id *id, struct ibv_qp_attr *a, int *mask)
{
	a->pkey_index = 0;
	a->port_num = id->id.port_num ? id->id.port_num : 1;
	*mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	if (id->id.qp_type == IBV_QPT_UD) {
		a->qkey = CMA_UDP_QKEY;
		*mask |= IBV_QP_QKEY;
	} else {
		a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		if (id->responder_resources || !id->conn)
			a->qp_access_flags |= IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
		*mask |= IBV_QP_ACCESS_FLAGS;
	}
	return 0;
}

static int rtr_attr(struct cma_id *id, struct ibv_qp_attr *a, int *mask)
{
	const struct blue_ibcm_conn *c = id->conn;
	const struct ibv_sa_path_rec *p = &id->path;
	int sgid;

	if (id->id.qp_type == IBV_QPT_UD) {
		*mask = IBV_QP_STATE;
		return 0;
	}
	if (!c) {
		cma_log("rdma_init_qp_attr: RTR: the id has no connection (EINVAL)");
		return -EINVAL;
	}
	sgid = cma_dev_gid_index(id->dev, p->sgid.raw);
	if (sgid < 0) {
		cma_log("rdma_init_qp_attr: RTR: the source GID is not in the device's table (EINVAL)");
		return -EINVAL;
	}
	a->path_mtu = (enum ibv_mtu)(c->path_mtu && c->path_mtu < id->dev->active_mtu ?
				     c->path_mtu : id->dev->active_mtu);
	a->dest_qp_num = c->remote_qpn;
	/* the kernel's IB CM (cm_req_handler, cm_rep_handler, ib_send_cm_req/rep): the
	 * starting PSN in a REQ or REP is the one its sender's receive queue expects, and
	 * the peer's send queue starts there. Ours (id->local_psn, as announced) is our RQ's;
	 * theirs (remote_psn) our SQ's. The other reading (SQ = ours) works blue to blue
	 * only: rxe NAKs the first SEND (PSN sequence error) or takes it for a duplicate.
	 * (blue__ibcm_rq_psn once the REQ/REP is sent; the RTR step comes before a REP) */
	a->rq_psn = id->local_psn;
	a->max_dest_rd_atomic = id->responder_resources;
	a->min_rnr_timer = CMA_MIN_RNR_TIMER;
	memset(&a->ah_attr, 0, sizeof(a->ah_attr));
	a->ah_attr.is_global = 1;
	a->ah_attr.grh.dgid = p->dgid;
	a->ah_attr.grh.sgid_index = (uint8_t)sgid;
	a->ah_attr.grh.hop_limit = p->hop_limit ? p->hop_limit : 64;
	a->ah_attr.grh.traffic_class = id->tos_set ? id->tos : p->traffic_class;
	a->ah_attr.grh.flow_label = ntohl(p->flow_label);
	a->ah_attr.dlid = 0;
	a->ah_attr.sl = p->sl;
	a->ah_attr.port_num = id->id.port_num ? id->id.port_num : 1;
	*mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	return 0;
}

static int rts_attr(struct cma_id *id, struct ibv_qp_attr *a, int *mask)
{
	/* see rtr_attr; the passive side moves its QP before blue__ibcm_accept records
	 * the REP's PSN, hence id->local_psn there */
	a->sq_psn = id->conn ? blue__ibcm_sq_psn(id->conn) : id->local_psn;
	*mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (id->id.qp_type == IBV_QPT_UD)
		return 0;
	a->timeout = id->ack_timeout ? id->ack_timeout : CMA_IBOE_ACK_TIMEOUT;
	a->retry_cnt = id->retry_count;
	a->rnr_retry = id->rnr_retry_count;
	a->max_rd_atomic = id->initiator_depth;
	*mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	return 0;
}

static int qp_attr_of(struct cma_id *id, struct ibv_qp_attr *a, int *mask)
{
	switch (a->qp_state) {
	case IBV_QPS_INIT:
		return init_attr(id, a, mask);
	case IBV_QPS_RTR:
		return rtr_attr(id, a, mask);
	case IBV_QPS_RTS:
		return rts_attr(id, a, mask);
	default:
		cma_log("rdma_init_qp_attr: QP state %d: only INIT, RTR and RTS (EINVAL)",
			a->qp_state);
		return -EINVAL;
	}
}

CMA_EXPORT int rdma_init_qp_attr(struct rdma_cm_id *uid, struct ibv_qp_attr *attr, int *mask)
{
	int err;

	if (!uid || !attr || !mask) {
		cma_log("rdma_init_qp_attr: %s is NULL (EINVAL)", !uid ? "id" : !attr ? "attr" : "mask");
		errno = EINVAL;
		return -1;
	}
	cma_lock();
	err = qp_attr_of(cma_id_of(uid), attr, mask);
	cma_unlock();
	if (err) {
		errno = -err;
		return -1;
	}
	return 0;
}

static int qp_step(struct cma_id *id, enum ibv_qp_state s)
{
	struct ibv_qp_attr a;
	int mask, err;

	memset(&a, 0, sizeof(a));
	a.qp_state = s;
	err = qp_attr_of(id, &a, &mask);
	if (err)
		return err;
	err = ibv_modify_qp(id->id.qp, &a, mask);
	return err ? -(errno ? errno : err) : 0;
}

int cma_qp_to_rts(struct cma_id *id)
{
	int err = qp_step(id, IBV_QPS_RTR);

	return err ? err : qp_step(id, IBV_QPS_RTS);
}

int cma_qp_to_err(struct cma_id *id)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_ERR;
	return ibv_modify_qp(id->id.qp, &a, IBV_QP_STATE) ? -errno : 0;
}

/* ---- QPs --------------------------------------------------------------------- */
static struct ibv_pd *dev_pd(struct cma_dev *dev)
{
	if (!dev->pd) {
		dev->pd = ibv_alloc_pd(dev->verbs);
		if (!dev->pd)
			cma_log("rdma_create_qp: no PD on %s: %s",
				ibv_get_device_name(dev->verbs->device), strerror(errno));
	}
	return dev->pd;
}

static void free_cqs(struct cma_id *id)
{
	if (!id->ep_owns_cqs)
		return;
	if (id->id.send_cq && id->id.send_cq != id->id.recv_cq)
		ibv_destroy_cq(id->id.send_cq);
	if (id->id.recv_cq)
		ibv_destroy_cq(id->id.recv_cq);
	if (id->id.send_cq_channel && id->id.send_cq_channel != id->id.recv_cq_channel)
		ibv_destroy_comp_channel(id->id.send_cq_channel);
	if (id->id.recv_cq_channel)
		ibv_destroy_comp_channel(id->id.recv_cq_channel);
	id->id.send_cq = id->id.recv_cq = NULL;
	id->id.send_cq_channel = id->id.recv_cq_channel = NULL;
	id->ep_owns_cqs = false;
}

static struct ibv_cq *new_cq(struct cma_id *id, struct ibv_comp_channel **chp, uint32_t n)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(id->id.verbs);
	struct ibv_cq *cq;

	if (!ch)
		return NULL;
	cq = ibv_create_cq(id->id.verbs, (int)(n ? n : 1), id, ch, 0);
	if (!cq) {
		ibv_destroy_comp_channel(ch);
		return NULL;
	}
	*chp = ch;
	return cq;
}

/* librdmacm's ucma_create_cqs: a CQ and completion channel for each side not given */
static int make_cqs(struct cma_id *id, struct ibv_qp_init_attr_ex *a)
{
	if (!a->recv_cq) {
		id->id.recv_cq = new_cq(id, &id->id.recv_cq_channel, a->cap.max_recv_wr);
		if (!id->id.recv_cq)
			goto err;
		id->ep_owns_cqs = true;
		a->recv_cq = id->id.recv_cq;
	}
	if (!a->send_cq) {
		id->id.send_cq = new_cq(id, &id->id.send_cq_channel, a->cap.max_send_wr);
		if (!id->id.send_cq)
			goto err;
		id->ep_owns_cqs = true;
		a->send_cq = id->id.send_cq;
	}
	return 0;
err:
	cma_log("rdma_create_qp: no CQ: %s", strerror(errno));
	free_cqs(id);
	return -(errno ? errno : ENOMEM);
}

static int qp_to_init(struct cma_id *id)
{
	int err = qp_step(id, IBV_QPS_INIT);

	if (!err && id->id.qp_type == IBV_QPT_UD) {
		err = qp_step(id, IBV_QPS_RTR);
		if (!err)
			err = qp_step(id, IBV_QPS_RTS);
	}
	return err;
}

int cma_qp_create(struct cma_id *id, struct ibv_qp_init_attr_ex *a)
{
	struct ibv_pd *pd;
	struct ibv_qp *qp;
	int err;

	if (!id->dev) {
		cma_log("rdma_create_qp: the id has no device (bind or resolve first) (EINVAL)");
		return -EINVAL;
	}
	if (id->id.qp) {
		cma_log("rdma_create_qp: the id has a QP already (EINVAL)");
		return -EINVAL;
	}
	pd = (a->comp_mask & IBV_QP_INIT_ATTR_PD) && a->pd ? a->pd : dev_pd(id->dev);
	if (!pd)
		return -ENOMEM;
	if (pd->context != id->id.verbs) {
		cma_log("rdma_create_qp: the PD is of another device than the id's (EINVAL)");
		return -EINVAL;
	}
	a->pd = pd;
	a->comp_mask |= IBV_QP_INIT_ATTR_PD;
	if (!a->srq && id->id.srq)
		a->srq = id->id.srq;
	err = make_cqs(id, a);
	if (err)
		return err;
	qp = ibv_create_qp_ex(id->id.verbs, a);
	if (!qp) {
		err = -(errno ? errno : ENOMEM);
		cma_log("rdma_create_qp: ibv_create_qp: %s", strerror(-err));
		free_cqs(id);
		return err;
	}
	id->id.qp = qp;
	id->id.pd = pd;
	err = qp_to_init(id);
	if (err) {
		cma_log("rdma_create_qp: QP %u to INIT: %s", qp->qp_num, strerror(-err));
		ibv_destroy_qp(qp);
		id->id.qp = NULL;
		free_cqs(id);
		return err;
	}
	return 0;
}

CMA_EXPORT int rdma_create_qp_ex(struct rdma_cm_id *uid, struct ibv_qp_init_attr_ex *attr)
{
	int err;

	if (!uid || !attr) {
		cma_log("rdma_create_qp_ex: %s is NULL (EINVAL)", uid ? "attr" : "id");
		errno = EINVAL;
		return -1;
	}
	cma_lock();
	err = cma_qp_create(cma_id_of(uid), attr);
	cma_unlock();
	if (err) {
		errno = -err;
		return -1;
	}
	return 0;
}

CMA_EXPORT int rdma_create_qp(struct rdma_cm_id *uid, struct ibv_pd *pd,
			      struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex a;
	int ret;

	if (!uid || !qp_init_attr) {
		cma_log("rdma_create_qp: %s is NULL (EINVAL)", uid ? "qp_init_attr" : "id");
		errno = EINVAL;
		return -1;
	}
	memset(&a, 0, sizeof(a));
	memcpy(&a, qp_init_attr, sizeof(*qp_init_attr));
	a.qp_type = uid->qp_type;
	a.pd = pd;
	a.comp_mask = pd ? IBV_QP_INIT_ATTR_PD : 0;
	if (!pd && uid->pd) {
		a.pd = uid->pd;
		a.comp_mask = IBV_QP_INIT_ATTR_PD;
	}
	ret = rdma_create_qp_ex(uid, &a);
	if (!ret) {
		qp_init_attr->send_cq = a.send_cq;
		qp_init_attr->recv_cq = a.recv_cq;
		qp_init_attr->srq = a.srq;
		qp_init_attr->cap = a.cap;
	}
	return ret;
}

CMA_EXPORT void rdma_destroy_qp(struct rdma_cm_id *uid)
{
	struct cma_id *id = cma_id_of(uid);

	if (!id)
		return;
	cma_lock();
	if (uid->qp) {
		if (ibv_destroy_qp(uid->qp))
			cma_log("rdma_destroy_qp: QP %u: %s", uid->qp->qp_num, strerror(errno));
		uid->qp = NULL;
	}
	free_cqs(id);
	cma_unlock();
}

/* ---- SRQs -------------------------------------------------------------------- */
CMA_EXPORT int rdma_create_srq_ex(struct rdma_cm_id *uid, struct ibv_srq_init_attr_ex *attr)
{
	struct cma_id *id = cma_id_of(uid);
	struct ibv_pd *pd;
	int err = 0;

	if (!id || !attr) {
		cma_log("rdma_create_srq_ex: %s is NULL (EINVAL)", id ? "attr" : "id");
		errno = EINVAL;
		return -1;
	}
	cma_lock();
	if (!id->dev) {
		cma_log("rdma_create_srq: the id has no device (EINVAL)");
		err = EINVAL;
		goto out;
	}
	pd = (attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) && attr->pd ? attr->pd : dev_pd(id->dev);
	if (!pd) {
		err = ENOMEM;
		goto out;
	}
	attr->pd = pd;
	attr->comp_mask |= IBV_SRQ_INIT_ATTR_PD;
	uid->srq = ibv_create_srq_ex(uid->verbs, attr);
	if (!uid->srq) {
		err = errno ? errno : ENOMEM;
		cma_log("rdma_create_srq: ibv_create_srq: %s", strerror(err));
	}
out:
	cma_unlock();
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

CMA_EXPORT int rdma_create_srq(struct rdma_cm_id *uid, struct ibv_pd *pd,
			       struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex a;
	int ret;

	if (!attr) {
		cma_log("rdma_create_srq: attr is NULL (EINVAL)");
		errno = EINVAL;
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.srq_context = attr->srq_context;
	a.attr = attr->attr;
	a.srq_type = IBV_SRQT_BASIC;
	a.pd = pd;
	a.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | (pd ? IBV_SRQ_INIT_ATTR_PD : 0);
	ret = rdma_create_srq_ex(uid, &a);
	if (!ret)
		attr->attr = a.attr;
	return ret;
}

CMA_EXPORT void rdma_destroy_srq(struct rdma_cm_id *uid)
{
	if (!uid || !uid->srq)
		return;
	cma_lock();
	if (ibv_destroy_srq(uid->srq))
		cma_log("rdma_destroy_srq: %s", strerror(errno));
	uid->srq = NULL;
	cma_unlock();
}
