// SPDX-License-Identifier: MIT
/*
 * UD ids (RDMA_PS_UDP, RDMA_PS_IB with IBV_QPT_UD): service ID resolution, SIDR (IBA
 * 12.11), as the kernel's rdma_cm runs it over the IB CM on RoCEv2.
 *
 *   active:  rdma_connect -> cma_sidr_connect: a SIDR_REQ for the peer's service ID
 *            (ps << 16 | destination port), its private data the IP CM header (36 bytes)
 *            and the caller's private data after it (at most 216 - 36 = 180 bytes).
 *            The SIDR_REP raises, on the id's channel:
 *              status 0  ESTABLISHED, param.ud: ah_attr to reach the peer (global, its
 *                        GID, our GID's index, hop limit), its QPN and Q_Key, the REP's
 *                        136 bytes of private data;
 *              other     UNREACHABLE, event status = the SIDR status (the kernel's
 *                        cma_sidr_rep_handler: 1 no such service, 2 rejected, 3 no QP);
 *            no answer after the IB CM's retries: UNREACHABLE, status -ETIMEDOUT.
 *   passive: a SIDR_REQ for a listened service -> a new id (cma_id_new_request) with
 *            CONNECT_REQUEST on the listener's channel, param.ud.private_data = what
 *            follows the IP CM header (180 bytes, as the kernel hands it: IB carries no
 *            length); rdma_accept -> cma_sidr_accept: SIDR_REP status 0 with the id's
 *            QPN and Q_Key RDMA_UDP_QKEY; rdma_reject -> cma_sidr_reject: status 2.
 *            A SIDR_REQ whose IP CM header does not decode, or whose destination is not
 *            the listener's bound address, is answered "service ID not supported"
 *            (status 1, so the peer fails at once instead of timing out) and counted.
 *
 * Everything here runs with the cma lock held: the API calls come through conn.c, the IB
 * CM's events through the agent's thread and cma_ibcm_event.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat/rdmacm/agent.h"
#include "compat/rdmacm/cma.h"

/* The SIDR_REQ private data after the IP CM header (IB_CM_SIDR_REQ_PRIVATE_DATA_SIZE - 36). */
#define UD_REQ_USER_PRIV	(BLUE_IBCM_SIDR_REQ_PRIV - BLUE_IBCM_IP_HDR_LEN)
/* RoCE's hop limit when the route gave none (the IPv4 default TTL). */
#define UD_DEFAULT_HOP_LIMIT	64

/* SIDR at this process's rdma_cm: requests taken and answered, and the SIDR_REQs
 * refused here, per reason; printed at exit with BLUE_RDMACM_STATS=1 (one line,
 * "librdmacm: sidr: ...", after the agents' own). Under the lock. */
static struct {
	unsigned long	requests;	/* CONNECT_REQUEST raised for a SIDR_REQ */
	unsigned long	accepted;	/* SIDR_REP status 0 sent */
	unsigned long	rejected;	/* SIDR_REP status 2 sent (rdma_reject) */
	unsigned long	replies;	/* SIDR_REP received, status 0 */
	unsigned long	unreachable;	/* SIDR_REP received, another status */
	unsigned long	timeouts;	/* no SIDR_REP after the retries */
	unsigned long	bad_ip_hdr;	/* refused: the IP CM header did not decode */
	unsigned long	wrong_addr;	/* refused: not for the listener's bound address */
	unsigned long	no_listener;	/* refused: the IB CM listens, no rdma_cm listener */
	unsigned long	no_id;		/* refused: no memory for the request's id */
} ud_stats;

__attribute__((destructor)) static void ud_stats_print(void)
{
	const char *v = getenv("BLUE_RDMACM_STATS");

	if (!v || strcmp(v, "1"))
		return;
	fprintf(stderr, "librdmacm: sidr: requests=%lu accepted=%lu rejected=%lu replies=%lu "
		"unreachable=%lu timeouts=%lu bad_ip_hdr=%lu wrong_addr=%lu no_listener=%lu "
		"no_id=%lu\n", ud_stats.requests, ud_stats.accepted, ud_stats.rejected,
		ud_stats.replies, ud_stats.unreachable, ud_stats.timeouts, ud_stats.bad_ip_hdr,
		ud_stats.wrong_addr, ud_stats.no_listener, ud_stats.no_id);
}

/* @dev's IB CM endpoint; NULL with a line if the device has no agent. */
static struct blue_ibcm *ud_ibcm(struct cma_dev *dev, const char *who)
{
	if (!dev || !dev->agent) {
		cma_log("%s: the id's device has no CM agent (address not resolved?)", who);
		return NULL;
	}
	return cma_agent_ibcm(dev->agent);
}

static uint16_t ud_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)sa)->sin_port);
	if (sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	return 0;
}

/* The IP CM header for @id's SIDR_REQ: its source and destination; 0 or -EAFNOSUPPORT. */
static int ud_ip_hdr(const struct cma_id *c, struct blue_ibcm_ip_hdr *h)
{
	const struct rdma_addr *a = &c->id.route.addr;

	memset(h, 0, sizeof(*h));
	h->src_port = ud_port(&a->src_addr);
	if (a->src_addr.sa_family == AF_INET && a->dst_addr.sa_family == AF_INET) {
		h->ip_version = 4;
		h->src.v4 = a->src_sin.sin_addr;
		h->dst.v4 = a->dst_sin.sin_addr;
		return 0;
	}
	if (a->src_addr.sa_family == AF_INET6 && a->dst_addr.sa_family == AF_INET6) {
		h->ip_version = 6;
		h->src.v6 = a->src_sin6.sin6_addr;
		h->dst.v6 = a->dst_sin6.sin6_addr;
		return 0;
	}
	return -EAFNOSUPPORT;
}

int cma_sidr_connect(struct cma_id *c, const struct rdma_conn_param *param)
{
	uint8_t priv[BLUE_IBCM_SIDR_REQ_PRIV];
	struct blue_ibcm_addr peer = { .qpn = CMA_GSI_QPN };
	struct blue_ibcm_ip_hdr h;
	struct blue_ibcm_conn *conn;
	struct blue_ibcm *cm;
	size_t ulen = param ? param->private_data_len : 0;
	uint64_t sid;
	int ret;

	if (c->state != CMA_ROUTE_RESOLVED) {
		cma_log("rdma_connect: UD id: the route is not resolved (rdma_resolve_route first)");
		return -EINVAL;
	}
	if (ulen > UD_REQ_USER_PRIV) {
		cma_log("rdma_connect: UD id: private_data_len %zu is over the %d bytes a SIDR_REQ "
			"carries after the IP CM header", ulen, UD_REQ_USER_PRIV);
		return -EINVAL;
	}
	cm = ud_ibcm(c->dev, "rdma_connect");
	if (!cm)
		return -ENODEV;
	ret = ud_ip_hdr(c, &h);
	if (ret) {
		cma_log("rdma_connect: UD id: source and destination are not both IPv4 or IPv6");
		return ret;
	}
	memset(priv, 0, sizeof(priv));
	ret = blue__ibcm_ip_hdr_encode(&h, priv, sizeof(priv));
	if (ret < 0)
		return ret;
	if (ulen)
		memcpy(priv + BLUE_IBCM_IP_HDR_LEN, param->private_data, ulen);

	sid = blue__ibcm_ip_service_id((uint16_t)c->id.ps, ud_port(&c->id.route.addr.dst_addr));
	cma_addr_gid(&c->id.route.addr.dst_addr, peer.gid);
	conn = blue__ibcm_sidr_request(cm, &peer, sid, priv, BLUE_IBCM_IP_HDR_LEN + ulen,
				       cma_now_ns());
	if (!conn) {
		ret = -errno;
		cma_log("rdma_connect: UD id: SIDR_REQ for service 0x%016llx not sent (%s)",
			(unsigned long long)sid, strerror(errno));
		return ret;
	}
	conn->user = c;
	c->conn = conn;
	c->service_id = sid;
	c->state = CMA_CONNECT;
	cma_agent_kick(c->dev->agent);
	return 0;
}

int cma_sidr_accept(struct cma_id *c, const struct rdma_conn_param *param)
{
	struct blue_ibcm *cm = ud_ibcm(c->dev, "rdma_accept");
	const void *priv = param ? param->private_data : NULL;
	size_t len = param ? param->private_data_len : 0;
	uint32_t qpn;
	int ret;

	if (!cm)
		return -ENODEV;
	if (!c->conn || c->conn->state != BLUE_IBCM_SIDR_REQ_RCVD) {
		cma_log("rdma_accept: UD id: no SIDR_REQ to answer (not a CONNECT_REQUEST id, or "
			"answered already)");
		return -EINVAL;
	}
	if (len > BLUE_IBCM_SIDR_REP_PRIV) {
		cma_log("rdma_accept: UD id: private_data_len %zu is over the %d bytes of a "
			"SIDR_REP", len, BLUE_IBCM_SIDR_REP_PRIV);
		return -EINVAL;
	}
	qpn = c->id.qp ? c->id.qp->qp_num : (param ? param->qp_num : 0);
	if (!qpn) {
		cma_log("rdma_accept: UD id: no QP (rdma_create_qp, or conn_param.qp_num)");
		return -EINVAL;
	}
	ret = blue__ibcm_sidr_reply(cm, c->conn, BLUE_IBCM_SIDR_OK, qpn, CMA_UDP_QKEY, priv, len);
	if (ret) {
		cma_log("rdma_accept: UD id: SIDR_REP not sent (%s)", strerror(-ret));
		return ret;
	}
	c->conn = NULL;		/* the IB CM freed its record with the reply */
	ud_stats.accepted++;
	return 0;
}

int cma_sidr_reject(struct cma_id *c, const void *priv, uint8_t len)
{
	struct blue_ibcm *cm = ud_ibcm(c->dev, "rdma_reject");
	int ret;

	if (!cm)
		return -ENODEV;
	if (!c->conn || c->conn->state != BLUE_IBCM_SIDR_REQ_RCVD) {
		cma_log("rdma_reject: UD id: no SIDR_REQ to answer");
		return -EINVAL;
	}
	if (len > BLUE_IBCM_SIDR_REP_PRIV) {
		cma_log("rdma_reject: UD id: private_data_len %u is over the %d bytes of a "
			"SIDR_REP", len, BLUE_IBCM_SIDR_REP_PRIV);
		return -EINVAL;
	}
	ret = blue__ibcm_sidr_reply(cm, c->conn, BLUE_IBCM_SIDR_REJECT, 0, 0, priv, len);
	if (ret)
		return ret;
	c->conn = NULL;
	ud_stats.rejected++;
	return 0;
}

/* ---- the IB CM's SIDR events ------------------------------------------------ */

/* Answer a SIDR_REQ we do not take with status "service ID not supported". */
static void ud_refuse(struct cma_dev *dev, struct blue_ibcm_conn *conn)
{
	struct blue_ibcm *cm = cma_agent_ibcm(dev->agent);

	(void)blue__ibcm_sidr_reply(cm, conn, BLUE_IBCM_SIDR_UNSUPPORTED, 0, 0, NULL, 0);
}

/* Whether the header's destination is an address @l listens on, as the kernel's
 * cma_match_private_data decides: a wildcard listener of either family takes IPv4 and
 * IPv6 requests (an AF_INET6 one with AFONLY set IPv6 only); a bound one its address. */
static bool ud_listener_takes(const struct cma_id *l, const struct blue_ibcm_ip_hdr *h)
{
	const struct sockaddr *sa = &l->id.route.addr.src_addr;

	if (sa->sa_family == AF_INET) {
		in_addr_t a = l->id.route.addr.src_sin.sin_addr.s_addr;

		if (a == htonl(INADDR_ANY) || cma_is_loopback(sa))
			return true;
		return h->ip_version == 4 && a == h->dst.v4.s_addr;
	}
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &l->id.route.addr.src_sin6.sin6_addr;

		if (IN6_IS_ADDR_UNSPECIFIED(a) || cma_is_loopback(sa))
			return h->ip_version == 6 || !l->afonly;
		return h->ip_version == 6 && !memcmp(a, &h->dst.v6, sizeof(*a));
	}
	return false;
}

/* The request's addresses on its new id: ours = the header's destination at the
 * listener's port, the peer's = the header's source and port (cma_save_ip_info). */
static void ud_request_addrs(struct cma_id *n, const struct cma_id *l,
			     const struct blue_ibcm_ip_hdr *h)
{
	struct rdma_addr *a = &n->id.route.addr;
	uint16_t lport = ud_port(&l->id.route.addr.src_addr);

	memset(&a->src_storage, 0, sizeof(a->src_storage));
	memset(&a->dst_storage, 0, sizeof(a->dst_storage));
	if (h->ip_version == 4) {
		a->src_sin.sin_family = AF_INET;
		a->src_sin.sin_addr = h->dst.v4;
		a->src_sin.sin_port = htons(lport);
		a->dst_sin.sin_family = AF_INET;
		a->dst_sin.sin_addr = h->src.v4;
		a->dst_sin.sin_port = htons(h->src_port);
	} else {
		a->src_sin6.sin6_family = AF_INET6;
		a->src_sin6.sin6_addr = h->dst.v6;
		a->src_sin6.sin6_port = htons(lport);
		a->dst_sin6.sin6_family = AF_INET6;
		a->dst_sin6.sin6_addr = h->src.v6;
		a->dst_sin6.sin6_port = htons(h->src_port);
	}
}

static void ud_on_request(struct cma_dev *dev, struct blue_ibcm_conn *conn,
			  const struct blue_ibcm_msg *msg)
{
	const uint8_t *priv = msg->sidr_req.private_data;
	struct blue_ibcm_ip_hdr h;
	struct cma_id *l, *n;
	struct cma_event *e;
	enum blue_ibcm_err err;

	l = cma_find_listener(dev, conn->service_id);
	if (!l) {
		ud_stats.no_listener++;
		ud_refuse(dev, conn);
		return;
	}
	err = blue__ibcm_ip_hdr_decode(priv, BLUE_IBCM_SIDR_REQ_PRIV, &h);
	if (err != BLUE_IBCM_OK) {
		ud_stats.bad_ip_hdr++;
		cma_log("SIDR_REQ for service 0x%016llx: IP CM header refused (%s): answered "
			"status 1", (unsigned long long)conn->service_id, blue__ibcm_err_str(err));
		ud_refuse(dev, conn);
		return;
	}
	if (!ud_listener_takes(l, &h)) {
		ud_stats.wrong_addr++;
		ud_refuse(dev, conn);
		return;
	}
	n = cma_id_new_request(dev, l);
	if (!n) {
		ud_stats.no_id++;
		cma_log("SIDR_REQ for service 0x%016llx: no memory for its id: answered status 3",
			(unsigned long long)conn->service_id);
		(void)blue__ibcm_sidr_reply(cma_agent_ibcm(dev->agent), conn, BLUE_IBCM_SIDR_NO_QP,
					    0, 0, NULL, 0);
		return;
	}
	ud_request_addrs(n, l, &h);
	n->service_id = conn->service_id;
	n->conn = conn;
	conn->user = n;
	ud_stats.requests++;
	e = cma_post_event(n, l, RDMA_CM_EVENT_CONNECT_REQUEST, 0, priv + BLUE_IBCM_IP_HDR_LEN,
			   UD_REQ_USER_PRIV);
	if (e) {
		e->ev.param.ud.private_data = e->priv;
		e->ev.param.ud.private_data_len = UD_REQ_USER_PRIV;
	}
}

/* ah_attr for the peer of @c's SIDR_REP: RoCEv2 needs the GRH (our GID, its GID). */
static void ud_peer_ah(const struct cma_id *c, const struct blue_ibcm_conn *conn,
		       struct ibv_ah_attr *ah)
{
	uint8_t sgid[16];
	int idx;

	cma_addr_gid(&c->id.route.addr.src_addr, sgid);
	idx = cma_dev_gid_index(c->dev, sgid);
	if (idx < 0)
		idx = c->dev->gid_cm >= 0 ? c->dev->gid_cm : 0;
	memset(ah, 0, sizeof(*ah));
	ah->is_global = 1;
	memcpy(ah->grh.dgid.raw, conn->peer.gid, 16);
	ah->grh.sgid_index = (uint8_t)idx;
	ah->grh.hop_limit = c->path.hop_limit ? c->path.hop_limit : UD_DEFAULT_HOP_LIMIT;
	ah->grh.traffic_class = c->tos_set ? c->tos : 0;
	ah->port_num = c->dev->port_num ? c->dev->port_num : 1;
}

static void ud_on_reply(struct cma_id *c, struct blue_ibcm_conn *conn,
			const struct blue_ibcm_msg *msg)
{
	const struct blue_ibcm_sidr_rep *r = &msg->sidr_rep;
	struct cma_event *e;

	c->conn = NULL;		/* the record ends after this event */
	if (r->status != BLUE_IBCM_SIDR_OK) {
		ud_stats.unreachable++;
		e = cma_post_event(c, NULL, RDMA_CM_EVENT_UNREACHABLE, r->status,
				   r->private_data, BLUE_IBCM_SIDR_REP_PRIV);
	} else {
		ud_stats.replies++;
		c->remote_qpn = r->qpn;
		c->remote_qkey = r->qkey;
		c->state = CMA_ESTABLISHED;
		e = cma_post_event(c, NULL, RDMA_CM_EVENT_ESTABLISHED, 0, r->private_data,
				   BLUE_IBCM_SIDR_REP_PRIV);
		if (e) {
			ud_peer_ah(c, conn, &e->ev.param.ud.ah_attr);
			e->ev.param.ud.qp_num = r->qpn;
			e->ev.param.ud.qkey = r->qkey;
		}
	}
	if (e) {
		e->ev.param.ud.private_data = e->priv;
		e->ev.param.ud.private_data_len = BLUE_IBCM_SIDR_REP_PRIV;
	}
}

void cma_sidr_event(struct cma_dev *dev, struct blue_ibcm_conn *conn,
		    enum blue_ibcm_event type, const struct blue_ibcm_msg *msg)
{
	struct cma_id *c = conn->user;

	switch (type) {
	case BLUE_IBCM_EV_SIDR_REQ_RECEIVED:
		ud_on_request(dev, conn, msg);
		break;
	case BLUE_IBCM_EV_SIDR_REP_RECEIVED:
		if (c)
			ud_on_reply(c, conn, msg);
		break;
	case BLUE_IBCM_EV_TIMEOUT:
		/* the SIDR_REQ went unanswered through every retry (IB_CM_SIDR_REQ_ERROR) */
		if (c) {
			c->conn = NULL;
			ud_stats.timeouts++;
			(void)cma_post_event(c, NULL, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT,
					     NULL, 0);
		}
		break;
	default:
		break;
	}
}
