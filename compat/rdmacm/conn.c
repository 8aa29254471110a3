// SPDX-License-Identifier: MIT
/*
 * Connected (RC) ids over the IB CM (cma.h): listen, connect, accept, reject,
 * disconnect, establish, notify, and the IB CM's events turned into rdma_cm events as
 * the kernel's cma.c does for RoCE: the IP CM service header ahead of the REQ's private
 * data (56 bytes left to the user for PS_TCP), the QP moved to RTR and RTS on the REP
 * before the RTU (active) or before the REP (passive), to ERROR on a disconnect.
 * UD ids go to ud.c (SIDR).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/random.h>

#include "compat/rdmacm/agent.h"
#include "compat/rdmacm/cma.h"

#define CMA_TCP_PRIV_MAX	(BLUE_IBCM_REQ_PRIV - BLUE_IBCM_IP_HDR_LEN)	/* 56 */

static struct blue_ibcm *id_cm(struct cma_id *id)
{
	return id->dev && id->dev->agent ? cma_agent_ibcm(id->dev->agent) : NULL;
}

/* log, set errno, -1: the API's failure return */
#define fail(err, fmt, what) (cma_log(fmt, what), errno = (err), -1)

/* ---- listen -------------------------------------------------------------------- */
static uint16_t ps_of(const struct cma_id *id)
{
	return (uint16_t)(0x0100 | (id->id.ps & 0xff));
}

static int listen_on(struct cma_id *id, int i)
{
	int err = cma_id_hold_agent(id, i);

	if (err)
		return err;
	/* another listener of this process (one on INADDR_ANY and one on the device's
	 * address) holds the service already: 0, and which id serves a REQ is
	 * cma_find_listener's call; -EADDRINUSE is another process's (daemon mode) */
	return cma_agent_listen(cma_dev_list[i]->agent, id->service_id, true);
}

/* w-scale: @id, a listener being destroyed (no longer CMA_LISTEN), gives its service
 * back to the IB CM of each device no other listener serves it on, so that a REQ for it
 * gets REJ 8 there (the kernel's cm_destroy_id of a listen id). Under the lock. */
void cma_unlisten(struct cma_id *id)
{
	for (int i = 0; i < cma_ndevs; i++) {
		struct cma_dev *d = cma_dev_list[i];

		if (!(id->agents & (1u << i)) || !d->agent || (!id->any_dev && d != id->dev))
			continue;
		if (!cma_find_listener(d, id->service_id))
			(void)cma_agent_listen(d->agent, id->service_id, false);
	}
}

CMA_EXPORT int rdma_listen(struct rdma_cm_id *uid, int backlog)
{
	struct cma_id *id = cma_id_of(uid);
	int err = 0;

	if (!id)
		return fail(EINVAL, "rdma_listen: %s is NULL (EINVAL)", "id");
	cma_lock();
	if (id->state == CMA_LISTEN) {
		id->backlog = backlog;
		cma_unlock();
		return 0;
	}
	if (id->state != CMA_ADDR_BOUND) {
		cma_unlock();
		return fail(EINVAL, "rdma_listen: %s is not bound (call rdma_bind_addr first) (EINVAL)",
			    "the id");
	}
	id->service_id = blue__ibcm_ip_service_id(ps_of(id), cma_sa_port(&uid->route.addr.src_addr));
	if (id->any_dev) {
		for (int i = 0; i < cma_ndevs && !err; i++)
			err = listen_on(id, i);
	} else {
		err = listen_on(id, cma_dev_index(id->dev));
	}
	if (err) {
		cma_log("rdma_listen: service 0x%llx: %s", (unsigned long long)id->service_id,
			strerror(-err));
		cma_unlock();
		errno = -err;
		return -1;
	}
	id->backlog = backlog;
	id->state = CMA_LISTEN;
	cma_unlock();
	return 0;
}

struct cma_id *cma_find_listener(struct cma_dev *dev, uint64_t service_id)
{
	for (struct cma_id *l = cma_ids; l; l = l->next)
		if (l->state == CMA_LISTEN && l->service_id == service_id &&
		    (l->dev == dev || l->any_dev))
			return l;
	return NULL;
}

/* ---- connect ------------------------------------------------------------------- */
static uint8_t clamp_rd(uint8_t want, int max)
{
	return max > 0 && want > max ? (uint8_t)max : want;
}

static uint32_t random_psn(void)
{
	uint32_t r = 0;

	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		r = (uint32_t)cma_now_ns();
	return r & 0xffffff;
}

static void ip_hdr_of(const struct cma_id *id, struct blue_ibcm_ip_hdr *h)
{
	const struct rdma_addr *a = &id->id.route.addr;

	memset(h, 0, sizeof(*h));
	h->src_port = cma_sa_port(&a->src_addr);
	if (a->src_addr.sa_family == AF_INET) {
		h->ip_version = 4;
		h->src.v4 = a->src_sin.sin_addr;
		h->dst.v4 = a->dst_sin.sin_addr;
	} else {
		h->ip_version = 6;
		h->src.v6 = a->src_sin6.sin6_addr;
		h->dst.v6 = a->dst_sin6.sin6_addr;
	}
}

static int send_req(struct cma_id *id, const struct rdma_conn_param *param)
{
	struct blue_ibcm_conn_param p;
	struct blue_ibcm_ip_hdr h;
	uint8_t priv[BLUE_IBCM_REQ_PRIV];
	struct blue_ibcm *cm = id_cm(id);
	struct blue_ibcm_conn *c;

	memset(&p, 0, sizeof(p));
	memset(priv, 0, sizeof(priv));
	ip_hdr_of(id, &h);
	blue__ibcm_ip_hdr_encode(&h, priv, sizeof(priv));
	if (param->private_data_len > CMA_TCP_PRIV_MAX) {
		cma_log("rdma_connect: private data of %u bytes: at most %d after the IP CM header (EINVAL)",
			param->private_data_len, CMA_TCP_PRIV_MAX);
		return -EINVAL;
	}
	if (param->private_data_len && param->private_data)
		memcpy(priv + BLUE_IBCM_IP_HDR_LEN, param->private_data, param->private_data_len);
	memcpy(p.peer.gid, id->id.route.addr.addr.ibaddr.dgid.raw, 16);
	memcpy(p.local_gid, id->id.route.addr.addr.ibaddr.sgid.raw, 16);
	p.peer.qpn = BLUE_IBCM_GSI_QPN;
	p.service_id = id->service_id;
	p.local_qpn = id->id.qp ? id->id.qp->qp_num : (param->qp_num & 0xffffff);
	p.starting_psn = id->local_psn;
	p.responder_resources = id->responder_resources;
	p.initiator_depth = id->initiator_depth;
	p.path_mtu = (uint8_t)id->dev->active_mtu;
	p.retry_count = id->retry_count;
	p.rnr_retry_count = id->rnr_retry_count;
	p.private_data = priv;
	p.private_data_len = sizeof(priv);
	p.user = id;
	c = blue__ibcm_connect(cm, &p, cma_now_ns());
	if (!c) {
		int e = errno;

		cma_log("rdma_connect: the REQ was not sent: %s", strerror(e));
		return -e;
	}
	c->user = id;
	id->conn = c;
	cma_agent_kick(id->dev->agent);
	return 0;
}

CMA_EXPORT int rdma_connect(struct rdma_cm_id *uid, struct rdma_conn_param *param)
{
	struct cma_id *id = cma_id_of(uid);
	struct rdma_conn_param none;
	int err;

	if (!id)
		return fail(EINVAL, "rdma_connect: %s is NULL (EINVAL)", "id");
	if (!param) {
		memset(&none, 0, sizeof(none));
		param = &none;
	}
	cma_lock();
	if (id->state != CMA_ROUTE_RESOLVED || !id_cm(id)) {
		cma_unlock();
		return fail(EINVAL, "rdma_connect: %s (call rdma_resolve_route first) (EINVAL)",
			    "the id's route is not resolved");
	}
	id->service_id = blue__ibcm_ip_service_id(ps_of(id),
						  cma_sa_port(&uid->route.addr.dst_addr));
	if (uid->qp_type == IBV_QPT_UD) {
		err = cma_sidr_connect(id, param);
		if (!err)
			id->state = CMA_CONNECT;
	} else {
		id->responder_resources = clamp_rd(param->responder_resources,
						   id->dev->max_qp_rd_atom);
		id->initiator_depth = clamp_rd(param->initiator_depth,
					       id->dev->max_qp_init_rd_atom);
		id->retry_count = param->retry_count > 7 ? 7 : param->retry_count;
		id->rnr_retry_count = param->rnr_retry_count > 7 ? 7 : param->rnr_retry_count;
		id->local_psn = random_psn();
		err = send_req(id, param);
		if (!err)
			id->state = CMA_CONNECT;
	}
	if (err) {
		cma_unlock();
		errno = -err;
		return -1;
	}
	err = cma_sync_complete(id);
	cma_unlock();
	return err;
}

/* ---- accept / reject ---------------------------------------------------------- */
CMA_EXPORT int rdma_accept(struct rdma_cm_id *uid, struct rdma_conn_param *param)
{
	struct cma_id *id = cma_id_of(uid);
	struct blue_ibcm_rep_param rp;
	int err;

	if (!id)
		return fail(EINVAL, "rdma_accept: %s is NULL (EINVAL)", "id");
	cma_lock();
	if (uid->qp_type == IBV_QPT_UD) {
		err = cma_sidr_accept(id, param);
		cma_unlock();
		if (err) {
			errno = -err;
			return -1;
		}
		return 0;
	}
	if (!id->conn || (id->conn->state != BLUE_IBCM_REQ_RCVD &&
			  id->conn->state != BLUE_IBCM_MRA_REQ_SENT)) {
		cma_unlock();
		return fail(EINVAL, "rdma_accept: %s (EINVAL)",
			    "the id has no connect request to answer");
	}
	if (param) {
		id->responder_resources = clamp_rd(param->responder_resources,
						   id->dev->max_qp_rd_atom);
		id->initiator_depth = clamp_rd(param->initiator_depth,
					       id->dev->max_qp_init_rd_atom);
		id->rnr_retry_count = param->rnr_retry_count > 7 ? 7 : param->rnr_retry_count;
	}
	if (uid->qp) {
		err = cma_qp_to_rts(id);
		if (err) {
			cma_log("rdma_accept: QP %u to RTR/RTS: %s", uid->qp->qp_num, strerror(-err));
			cma_unlock();
			errno = -err;
			return -1;
		}
	}
	memset(&rp, 0, sizeof(rp));
	rp.local_qpn = uid->qp ? uid->qp->qp_num : (param ? param->qp_num & 0xffffff : 0);
	rp.starting_psn = id->local_psn;
	rp.responder_resources = id->responder_resources;
	rp.initiator_depth = id->initiator_depth;
	rp.rnr_retry_count = id->rnr_retry_count;
	if (param && param->private_data_len) {
		rp.private_data = param->private_data;
		rp.private_data_len = param->private_data_len;
	}
	err = blue__ibcm_accept(id_cm(id), id->conn, &rp, cma_now_ns());
	if (err) {
		cma_log("rdma_accept: the REP was not sent: %s", strerror(-err));
		cma_unlock();
		errno = -err;
		return -1;
	}
	cma_agent_kick(id->dev->agent);
	err = cma_sync_complete(id);
	cma_unlock();
	return err;
}

int cma_reject(struct rdma_cm_id *uid, uint16_t reason, const void *data, uint8_t len,
	       const char *who)
{
	struct cma_id *id = cma_id_of(uid);
	int err;

	if (!id)
		return fail(EINVAL, "%s: id is NULL (EINVAL)", who);
	cma_lock();
	if (uid->qp_type == IBV_QPT_UD) {
		err = cma_sidr_reject(id, data, len);
	} else if (!id->conn || !id->dev || !id->dev->agent) {
		cma_log("%s: the id has no connection request to reject (EINVAL)", who);
		err = -EINVAL;
	} else {
		err = blue__ibcm_reject(id_cm(id), id->conn, reason, data, len);
		if (err)
			cma_log("%s: the REJ was not sent: %s", who, strerror(-err));
		else
			id->conn = NULL;
	}
	cma_unlock();
	if (err) {
		errno = -err;
		return -1;
	}
	return 0;
}

CMA_EXPORT int rdma_reject(struct rdma_cm_id *uid, const void *data, uint8_t len)
{
	return cma_reject(uid, BLUE_IBCM_REJ_CONSUMER_DEFINED, data, len, "rdma_reject");
}

/* ---- established / disconnect ------------------------------------------------- */
CMA_EXPORT int rdma_establish(struct rdma_cm_id *uid)
{
	struct cma_id *id = cma_id_of(uid);
	int err;

	if (!id)
		return fail(EINVAL, "rdma_establish: %s is NULL (EINVAL)", "id");
	cma_lock();
	if (!id->conn || (id->conn->state != BLUE_IBCM_REP_RCVD &&
			  id->conn->state != BLUE_IBCM_MRA_REP_SENT)) {
		cma_unlock();
		return fail(EINVAL, "rdma_establish: %s (EINVAL)",
			    "no CONNECT_RESPONSE to complete on this id");
	}
	err = uid->qp ? cma_qp_to_rts(id) : 0;
	if (!err)
		err = blue__ibcm_send_rtu(id_cm(id), id->conn);
	if (!err)
		id->state = CMA_ESTABLISHED;
	cma_unlock();
	if (err) {
		cma_log("rdma_establish: %s", strerror(-err));
		errno = -err;
		return -1;
	}
	return 0;
}

CMA_EXPORT int rdma_notify(struct rdma_cm_id *uid, enum ibv_event_type event)
{
	struct cma_id *id = cma_id_of(uid);

	if (!id)
		return fail(EINVAL, "rdma_notify: %s is NULL (EINVAL)", "id");
	cma_lock();
	if (event == IBV_EVENT_COMM_EST && id->conn &&
	    (id->conn->state == BLUE_IBCM_REP_SENT || id->conn->state == BLUE_IBCM_MRA_REP_RCVD))
		blue__ibcm_established(id_cm(id), id->conn);
	cma_unlock();
	return 0;
}

CMA_EXPORT int rdma_disconnect(struct rdma_cm_id *uid)
{
	struct cma_id *id = cma_id_of(uid);
	struct blue_ibcm *cm;
	bool wait = false;
	int err = 0;

	if (!id)
		return fail(EINVAL, "rdma_disconnect: %s is NULL (EINVAL)", "id");
	cma_lock();
	if (uid->qp)
		cma_qp_to_err(id);
	cm = id_cm(id);
	if (id->conn && cm) {
		struct blue_ibcm_conn *c = id->conn;

		if (c->state == BLUE_IBCM_REP_SENT || c->state == BLUE_IBCM_MRA_REP_RCVD)
			blue__ibcm_established(cm, c);
		if (c->state == BLUE_IBCM_ESTABLISHED) {
			err = blue__ibcm_disconnect(cm, c, cma_now_ns());
			wait = !err;
			cma_agent_kick(id->dev->agent);
		}
		/* DREQ_RCVD, DREQ_SENT, TIMEWAIT: the DREP went or is awaited already */
	} else if (id->state != CMA_DISCONNECT && id->state != CMA_ESTABLISHED) {
		cma_unlock();
		return fail(EINVAL, "rdma_disconnect: %s (EINVAL)", "the id is not connected");
	}
	id->state = CMA_DISCONNECT;
	if (err) {
		cma_unlock();
		errno = -err;
		return -1;
	}
	/* a synchronous id waits for its DISCONNECTED (the DREP, or the peer's DREQ) */
	if (id->chan->sync && (wait || id->chan->head))
		err = cma_sync_complete(id);	/* 0, or -1 with errno set */
	cma_unlock();
	return err;
}

/* ---- the IB CM's events ------------------------------------------------------- */
static void conn_param_of(struct rdma_conn_param *cp, const struct blue_ibcm_conn *c)
{
	cp->responder_resources = c->responder_resources;
	cp->initiator_depth = c->initiator_depth;
	cp->flow_control = 1;
	cp->retry_count = c->retry_count;
	cp->rnr_retry_count = c->rnr_retry_count;
	cp->srq = 0;
	cp->qp_num = c->remote_qpn;
}

static void set_sa(struct sockaddr_storage *ss, int ver, const void *ip, uint16_t port)
{
	memset(ss, 0, sizeof(*ss));
	if (ver == 4) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;

		s->sin_family = AF_INET;
		memcpy(&s->sin_addr, ip, 4);
		s->sin_port = htons(port);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;

		s->sin6_family = AF_INET6;
		memcpy(&s->sin6_addr, ip, 16);
		s->sin6_port = htons(port);
	}
}

/* the new id's route, from the REQ: what it sent from is our destination */
static void route_from_req(struct cma_id *n, const struct blue_ibcm_req *r,
			   const struct blue_ibcm_ip_hdr *h, uint16_t port)
{
	struct rdma_route *rt = &n->id.route;
	struct ibv_sa_path_rec *p = &n->path;

	set_sa(&rt->addr.src_storage, h->ip_version, &h->dst, port);
	set_sa(&rt->addr.dst_storage, h->ip_version, &h->src, h->src_port);
	memcpy(rt->addr.addr.ibaddr.sgid.raw, r->primary.remote_gid, 16);
	memcpy(rt->addr.addr.ibaddr.dgid.raw, r->primary.local_gid, 16);
	rt->addr.addr.ibaddr.pkey = htons(r->pkey);
	memset(p, 0, sizeof(*p));
	p->sgid = rt->addr.addr.ibaddr.sgid;
	p->dgid = rt->addr.addr.ibaddr.dgid;
	p->dlid = htons(0xffff);
	p->slid = htons(0xffff);
	p->pkey = htons(r->pkey);
	p->flow_label = htonl(r->primary.flow_label);
	p->hop_limit = r->primary.hop_limit;
	p->traffic_class = r->primary.traffic_class;
	p->reversible = 1;
	p->numb_path = 1;
	p->sl = r->primary.sl;
	p->mtu_selector = 2;
	p->mtu = r->path_mtu;
	p->rate_selector = 2;
	p->rate = r->primary.packet_rate;
	p->packet_life_time_selector = 2;
	p->packet_life_time = r->primary.local_ack_timeout ?
			      (uint8_t)(r->primary.local_ack_timeout - 1) : 0;
	rt->path_rec = p;
	rt->num_paths = 1;
}

/*
 * w-scale: the listen backlog as the kernel's ucma keeps it: at most @backlog
 * CONNECT_REQUESTs queued and not yet read (rdma_get_cm_event / rdma_get_request clear
 * their ->listener); 0 or more than the kernel's net.rdma_ucm.max_backlog default means
 * that default. A REQ beyond it is dropped unanswered (the kernel's cm_destroy_id of a
 * REQ_RCVD id with -ENOMEM: "do not reject to allow future retries"): the peer's
 * retransmission comes back as a new REQ once the user has read some.
 */
#define CMA_MAX_BACKLOG	1024
/* the kernel's CMA_CM_MRA_SETTING service timeout: 4.096 us * 2^24, about 69 s */
#define CMA_MRA_SERVICE_TIMEOUT	24

static bool backlog_full(const struct cma_id *l)
{
	int max = l->backlog > 0 && l->backlog < CMA_MAX_BACKLOG ? l->backlog : CMA_MAX_BACKLOG;
	int n = 0;

	for (const struct cma_id *o = cma_ids; o; o = o->next)
		n += o->listener == l;
	return n >= max;
}

static void on_req(struct cma_dev *dev, struct blue_ibcm_conn *c,
		   const struct blue_ibcm_msg *msg)
{
	struct blue_ibcm *cm = cma_agent_ibcm(dev->agent);
	struct cma_id *l = cma_find_listener(dev, c->service_id);
	struct blue_ibcm_ip_hdr h;
	struct cma_id *n;
	struct cma_event *e;
	enum blue_ibcm_err de;

	if (!l) {
		blue__ibcm_reject(cm, c, BLUE_IBCM_REJ_INVALID_SERVICE_ID, NULL, 0);
		return;
	}
	if (backlog_full(l)) {
		if (!l->backlog_drops++)
			cma_log("REQ for service 0x%llx: the listener's backlog (%d) is full: "
				"dropped unanswered, the peer retransmits (logged once per listener)",
				(unsigned long long)c->service_id, l->backlog);
		blue__ibcm_drop_req(cm, c);
		return;
	}
	de = blue__ibcm_ip_hdr_decode(msg->req.private_data, BLUE_IBCM_REQ_PRIV, &h);
	if (de != BLUE_IBCM_OK) {
		cma_log("REQ for service 0x%llx: IP CM header refused (%s): rejected",
			(unsigned long long)c->service_id, blue__ibcm_err_str(de));
		blue__ibcm_reject(cm, c, BLUE_IBCM_REJ_CONSUMER_DEFINED, NULL, 0);
		return;
	}
	n = cma_id_new_request(dev, l);
	if (!n) {
		blue__ibcm_reject(cm, c, BLUE_IBCM_REJ_NO_RESOURCES, NULL, 0);
		return;
	}
	n->conn = c;
	c->user = n;
	n->service_id = c->service_id;
	/* librdmacm's ucma_process_conn_req: what the id keeps is at most the device's, so
	 * that rdma_accept(id, NULL) (rdma_server) answers with what the QP can take. A
	 * kernel client asks rxe's 128 (rdma_connect(id, NULL): the device's maximum); the
	 * event still reports what the peer asked */
	n->responder_resources = clamp_rd(c->responder_resources, dev->max_qp_rd_atom);
	n->initiator_depth = clamp_rd(c->initiator_depth, dev->max_qp_init_rd_atom);
	n->retry_count = c->retry_count;
	n->rnr_retry_count = c->rnr_retry_count;
	n->remote_qpn = c->remote_qpn;
	/* chosen now: a program that moves its own QP (rdma_init_qp_attr) before
	 * rdma_accept (rping -q) must get the PSN the REP will carry */
	n->local_psn = random_psn();
	n->tos = msg->req.primary.traffic_class;
	n->ack_timeout = msg->req.primary.local_ack_timeout;
	route_from_req(n, &msg->req, &h, cma_sa_port(&l->id.route.addr.src_addr));
	e = cma_post_event(n, l, RDMA_CM_EVENT_CONNECT_REQUEST, 0,
			   msg->req.private_data + BLUE_IBCM_IP_HDR_LEN, CMA_TCP_PRIV_MAX);
	if (e)
		conn_param_of(&e->ev.param.conn, c);
	/* as the kernel's cma_ib_req_handler (CMA_CM_MRA_SETTING): a delayed MRA, sent if
	 * the peer repeats its REQ before the user accepts, so a slow accept does not run
	 * the peer's REQ out of retries */
	(void)blue__ibcm_send_mra(cm, c, BLUE_IBCM_MRA_DELAY | CMA_MRA_SERVICE_TIMEOUT);
}

static void on_rep(struct cma_id *id, struct blue_ibcm_conn *c,
		   const struct blue_ibcm_msg *msg)
{
	struct blue_ibcm *cm = id_cm(id);
	struct cma_event *e;
	int err;

	id->remote_qpn = c->remote_qpn;
	/* what the peer granted, swapped to ours by the IB CM; never more than the device's */
	id->responder_resources = clamp_rd(c->responder_resources, id->dev->max_qp_rd_atom);
	id->initiator_depth = clamp_rd(c->initiator_depth, id->dev->max_qp_init_rd_atom);
	if (!id->id.qp) {
		e = cma_post_event(id, NULL, RDMA_CM_EVENT_CONNECT_RESPONSE, 0,
				   msg ? msg->rep.private_data : NULL, msg ? BLUE_IBCM_REP_PRIV : 0);
		if (e)
			conn_param_of(&e->ev.param.conn, c);
		return;
	}
	err = cma_qp_to_rts(id);
	if (!err)
		err = blue__ibcm_send_rtu(cm, c);
	if (err) {
		cma_log("REP: QP %u to RTR/RTS: %s: rejected", id->id.qp->qp_num, strerror(-err));
		blue__ibcm_reject(cm, c, BLUE_IBCM_REJ_CONSUMER_DEFINED, NULL, 0);
		id->conn = NULL;
		cma_post_event(id, NULL, RDMA_CM_EVENT_CONNECT_ERROR, err, NULL, 0);
		return;
	}
	id->state = CMA_ESTABLISHED;
	e = cma_post_event(id, NULL, RDMA_CM_EVENT_ESTABLISHED, 0,
			   msg ? msg->rep.private_data : NULL, msg ? BLUE_IBCM_REP_PRIV : 0);
	if (e)
		conn_param_of(&e->ev.param.conn, c);
}

static void on_established(struct cma_id *id, struct blue_ibcm_conn *c)
{
	struct cma_event *e;

	id->state = CMA_ESTABLISHED;
	e = cma_post_event(id, NULL, RDMA_CM_EVENT_ESTABLISHED, 0, NULL, 0);
	if (e)
		conn_param_of(&e->ev.param.conn, c);
}

static void on_rejected(struct cma_id *id, const struct blue_ibcm_msg *msg)
{
	uint16_t reason = msg ? msg->rej.reason : BLUE_IBCM_REJ_TIMEOUT;

	id->conn = NULL;
	id->state = CMA_DISCONNECT;
	if (id->id.qp)
		cma_qp_to_err(id);
	cma_post_event(id, NULL, RDMA_CM_EVENT_REJECTED, reason,
		       msg ? msg->rej.private_data : NULL, msg ? BLUE_IBCM_REJ_PRIV : 0);
}

static void on_timeout(struct cma_id *id)
{
	id->conn = NULL;
	id->state = CMA_DISCONNECT;
	if (id->id.qp)
		cma_qp_to_err(id);
	cma_post_event(id, NULL, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL, 0);
}

static void on_disconnected(struct cma_id *id)
{
	/* the peer's DREQ: the QP to ERROR. After our own rdma_disconnect (which moved it)
	 * the QP may be gone already: rping destroys it before the DREP comes. */
	if (id->id.qp && id->state != CMA_DISCONNECT)
		cma_qp_to_err(id);
	id->state = CMA_DISCONNECT;
	cma_post_event(id, NULL, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, 0);
}

static void on_timewait_exit(struct cma_id *id)
{
	id->conn = NULL;
	/* a synchronous id's calls wait for their own result only */
	if (!id->chan->sync)
		cma_post_event(id, NULL, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0, NULL, 0);
}

void cma_ibcm_event(struct cma_dev *dev, struct blue_ibcm_conn *conn,
		    enum blue_ibcm_event type, const struct blue_ibcm_msg *msg)
{
	struct cma_id *id = conn ? conn->user : NULL;

	/* SIDR (ud.c): its two events, and the TIMEOUT of a SIDR_REQ (w-ud) */
	if (type == BLUE_IBCM_EV_SIDR_REQ_RECEIVED || type == BLUE_IBCM_EV_SIDR_REP_RECEIVED ||
	    (type == BLUE_IBCM_EV_TIMEOUT && conn && conn->state == BLUE_IBCM_SIDR_REQ_SENT)) {
		cma_sidr_event(dev, conn, type, msg);
		return;
	}
	if (type == BLUE_IBCM_EV_REQ_RECEIVED) {
		on_req(dev, conn, msg);
		return;
	}
	if (!id) {
		/* its id was destroyed: a REP still in flight gets a REJ */
		if (type == BLUE_IBCM_EV_REP_RECEIVED)
			blue__ibcm_reject(cma_agent_ibcm(dev->agent), conn,
					  BLUE_IBCM_REJ_CONSUMER_DEFINED, NULL, 0);
		return;
	}
	switch (type) {
	case BLUE_IBCM_EV_REP_RECEIVED:
		on_rep(id, conn, msg);
		break;
	case BLUE_IBCM_EV_ESTABLISHED:
		on_established(id, conn);
		break;
	case BLUE_IBCM_EV_REJECTED:
		on_rejected(id, msg);
		break;
	case BLUE_IBCM_EV_TIMEOUT:
		on_timeout(id);
		break;
	case BLUE_IBCM_EV_DISCONNECTED:
		on_disconnected(id);
		break;
	case BLUE_IBCM_EV_TIMEWAIT_EXIT:
		on_timewait_exit(id);
		break;
	default:
		break;
	}
}
