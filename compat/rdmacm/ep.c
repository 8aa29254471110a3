// SPDX-License-Identifier: MIT
/*
 * Endpoints (cma.h): rdma_create_ep over a synchronous id (resolve address and route
 * and make the QP, or bind for RAI_PASSIVE and keep the QP attributes for the requests),
 * rdma_get_request (a synchronous listener's next CONNECT_REQUEST id, its QP made from
 * those attributes), rdma_destroy_ep.
 */
#include <errno.h>
#include <string.h>
#include <rdma/rdma_verbs.h>

#include "compat/rdmacm/cma.h"

CMA_EXPORT int rdma_create_ep(struct rdma_cm_id **out, struct rdma_addrinfo *res,
			      struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *uid;
	struct cma_id *id;

	if (!out || !res) {
		cma_log("rdma_create_ep: %s is NULL (EINVAL)", out ? "res" : "id");
		errno = EINVAL;
		return -1;
	}
	if (rdma_create_id(NULL, &uid, NULL, (enum rdma_port_space)res->ai_port_space))
		return -1;
	id = cma_id_of(uid);
	if (res->ai_qp_type)
		uid->qp_type = (enum ibv_qp_type)res->ai_qp_type;
	if (res->ai_flags & RAI_PASSIVE) {
		if (!res->ai_src_addr) {
			cma_log("rdma_create_ep: RAI_PASSIVE without a source address (EINVAL)");
			errno = EINVAL;
			goto err;
		}
		if (rdma_bind_addr(uid, res->ai_src_addr))
			goto err;
		if (qp_init_attr) {
			cma_lock();
			id->ep_qp = true;
			id->ep_init = *qp_init_attr;
			id->ep_pd = pd;
			cma_unlock();
		}
		*out = uid;
		return 0;
	}
	if (rdma_resolve_addr(uid, res->ai_src_addr, res->ai_dst_addr, 2000) ||
	    rdma_resolve_route(uid, 2000))
		goto err;
	if (qp_init_attr && rdma_create_qp(uid, pd, qp_init_attr))
		goto err;
	*out = uid;
	return 0;
err: {
		int e = errno;

		rdma_destroy_ep(uid);
		errno = e;
		return -1;
	}
}

CMA_EXPORT void rdma_destroy_ep(struct rdma_cm_id *uid)
{
	if (!uid)
		return;
	rdma_destroy_qp(uid);
	rdma_destroy_srq(uid);
	rdma_destroy_id(uid);
}

CMA_EXPORT int rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **out)
{
	struct cma_id *l = cma_id_of(listen);
	struct cma_event *e;
	struct cma_id *n;
	int err;

	if (!l || !out) {
		cma_log("rdma_get_request: %s is NULL (EINVAL)", l ? "id" : "listen");
		errno = EINVAL;
		return -1;
	}
	cma_lock();
	if (!l->chan->sync || l->state != CMA_LISTEN) {
		cma_unlock();
		cma_log("rdma_get_request: the id is not a listening synchronous id (EINVAL)");
		errno = EINVAL;
		return -1;
	}
	for (;;) {
		cma_sync_wait(l, &e);
		if (e->ev.event == RDMA_CM_EVENT_CONNECT_REQUEST && !e->ev.status)
			break;
		cma_event_free(e);
	}
	n = e->owner;
	n->listener = NULL;
	if (n->sync_ev)
		cma_event_free(n->sync_ev);
	n->sync_ev = e;
	n->id.event = &e->ev;
	if (l->ep_qp) {
		struct ibv_qp_init_attr_ex a;

		memset(&a, 0, sizeof(a));
		memcpy(&a, &l->ep_init, sizeof(l->ep_init));
		a.qp_type = n->id.qp_type;
		a.pd = l->ep_pd;
		a.comp_mask = a.pd ? IBV_QP_INIT_ATTR_PD : 0;
		err = cma_qp_create(n, &a);
		if (err) {
			cma_unlock();
			rdma_reject(&n->id, NULL, 0);
			rdma_destroy_id(&n->id);
			errno = -err;
			return -1;
		}
	}
	cma_unlock();
	*out = &n->id;
	return 0;
}
