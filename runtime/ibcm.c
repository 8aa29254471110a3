// SPDX-License-Identifier: MIT
/*
 * The IB CM state machine (IBA vol. 1 ch. 12.9), see runtime/ibcm.h. Each received
 * message has one handler that finds the record and checks its state; each state change
 * is a named step (STYLE.md 13) that sends what the spec asks and sets the timer.
 *
 * Timers (IBA 12.9): a REQ, REP or DREQ waits 4.096 us * 2^t for its answer, t
 * the peer's CM response timeout (for a REQ our configured one, which we also send as
 * "remote CM response timeout"; for a REP the REQ's "local CM response timeout"), and is
 * re-sent up to max CM retries times; then the REQ/REP fails with TIMEOUT and a DREQ
 * ends in DISCONNECTED anyway (12.9.5: the DREQ sender enters TimeWait). An MRA replaces
 * the current wait with its service timeout (12.6.6), the retries go on after it.
 *
 * Stale connections (IBA 12.9.8.3.1, as the kernel's cm_dup_req_handler and
 * cm_insert_remote_qpn): a REQ again for a record in TIMEWAIT, or a new REQ from a QPN
 * (and CA) that a live passive record already holds, gets REJ 10 and no record.
 *
 * Left for later: LAP/APR (counted as unhandled), REJ with ARI, the kernel's "duplicate
 * REQ in REP_SENT is dropped and the REP's own retransmission covers it": here the REP
 * is re-sent at once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/ibcm.h"
#include "runtime/log.h"

#define IBCM_DEFAULT_CONNS	64
#define IBCM_DEFAULT_TIMEOUT	20
#define IBCM_DEFAULT_RETRIES	15
#define IBCM_MAX_LISTEN		16
/* CMA_IBOE_PACKET_LIFETIME 18, sent as the local ACK timeout 18 + 1 (cm_mad.h) */
#define IBCM_ROCE_ACK_TIMEOUT	19
#define IBCM_ROCE_HOP_LIMIT	64

struct blue_ibcm {
	struct blue_ibcm_cfg	cfg;
	struct blue_ibcm_stats	stats;
	struct blue_ibcm_conn	*conns;
	unsigned int		nconns;
	uint64_t		listen[IBCM_MAX_LISTEN];
	unsigned int		nlisten;
	uint32_t		id_counter;
	uint32_t		tid_counter;
	bool			trace;		/* BLUE_IBCM_TRACE */
};

static const char *const state_names[BLUE_IBCM_STATE_MAX] = {
	[BLUE_IBCM_IDLE] = "IDLE",
	[BLUE_IBCM_REQ_SENT] = "REQ_SENT",
	[BLUE_IBCM_REQ_RCVD] = "REQ_RCVD",
	[BLUE_IBCM_MRA_REQ_SENT] = "MRA_REQ_SENT",
	[BLUE_IBCM_MRA_REQ_RCVD] = "MRA_REQ_RCVD",
	[BLUE_IBCM_REP_SENT] = "REP_SENT",
	[BLUE_IBCM_REP_RCVD] = "REP_RCVD",
	[BLUE_IBCM_MRA_REP_SENT] = "MRA_REP_SENT",
	[BLUE_IBCM_MRA_REP_RCVD] = "MRA_REP_RCVD",
	[BLUE_IBCM_ESTABLISHED] = "ESTABLISHED",
	[BLUE_IBCM_DREQ_SENT] = "DREQ_SENT",
	[BLUE_IBCM_DREQ_RCVD] = "DREQ_RCVD",
	[BLUE_IBCM_TIMEWAIT] = "TIMEWAIT",
	[BLUE_IBCM_SIDR_REQ_SENT] = "SIDR_REQ_SENT",
	[BLUE_IBCM_SIDR_REQ_RCVD] = "SIDR_REQ_RCVD",
};

static const char *const event_names[BLUE_IBCM_EV_MAX] = {
	[BLUE_IBCM_EV_REQ_RECEIVED] = "REQ_RECEIVED",
	[BLUE_IBCM_EV_REP_RECEIVED] = "REP_RECEIVED",
	[BLUE_IBCM_EV_ESTABLISHED] = "ESTABLISHED",
	[BLUE_IBCM_EV_REJECTED] = "REJECTED",
	[BLUE_IBCM_EV_TIMEOUT] = "TIMEOUT",
	[BLUE_IBCM_EV_DISCONNECTED] = "DISCONNECTED",
	[BLUE_IBCM_EV_TIMEWAIT_EXIT] = "TIMEWAIT_EXIT",
	[BLUE_IBCM_EV_SIDR_REQ_RECEIVED] = "SIDR_REQ_RECEIVED",
	[BLUE_IBCM_EV_SIDR_REP_RECEIVED] = "SIDR_REP_RECEIVED",
};

const char *blue__ibcm_state_str(enum blue_ibcm_state s)
{
	return (unsigned int)s < BLUE_IBCM_STATE_MAX ? state_names[s] : "unknown";
}

const char *blue__ibcm_event_str(enum blue_ibcm_event e)
{
	return (unsigned int)e < BLUE_IBCM_EV_MAX ? event_names[e] : "unknown";
}

/* ---- records ---- */

static struct blue_ibcm_conn *by_local_id(struct blue_ibcm *cm, uint32_t id)
{
	for (unsigned int i = 0; i < cm->nconns; i++)
		if (cm->conns[i].state != BLUE_IBCM_IDLE && cm->conns[i].local_comm_id == id)
			return &cm->conns[i];
	return NULL;
}

/* The live record a reply names: our comm ID @ours, whose peer's comm ID is @theirs. */
static struct blue_ibcm_conn *by_pair(struct blue_ibcm *cm, uint32_t ours, uint32_t theirs)
{
	struct blue_ibcm_conn *c = by_local_id(cm, ours);

	return c && c->remote_comm_id == theirs ? c : NULL;
}

/* A passive record for the same REQ: same remote comm ID from the same peer (IBA
 * 12.9.8.3: the pair {remote comm ID, remote CA GUID} names the REQ). */
static struct blue_ibcm_conn *by_remote(struct blue_ibcm *cm, uint32_t remote_id,
					uint64_t guid, const struct blue_ibcm_addr *from)
{
	for (unsigned int i = 0; i < cm->nconns; i++) {
		struct blue_ibcm_conn *c = &cm->conns[i];

		if (c->state != BLUE_IBCM_IDLE && c->passive && c->remote_comm_id == remote_id &&
		    c->remote_ca_guid == guid && !memcmp(c->peer.gid, from->gid, 16))
			return c;
	}
	return NULL;
}

/* The live passive record of the peer's QP @qpn (its CA @guid, at @from), if any. */
static struct blue_ibcm_conn *by_remote_qpn(struct blue_ibcm *cm, uint32_t qpn,
					    uint64_t guid, const struct blue_ibcm_addr *from)
{
	for (unsigned int i = 0; i < cm->nconns; i++) {
		struct blue_ibcm_conn *c = &cm->conns[i];

		if (c->state != BLUE_IBCM_IDLE && c->state != BLUE_IBCM_TIMEWAIT &&
		    c->passive && c->remote_qpn == qpn && c->remote_ca_guid == guid &&
		    !memcmp(c->peer.gid, from->gid, 16))
			return c;
	}
	return NULL;
}

/*
 * A local comm ID: a counter through a 32-bit mixer (murmur3's finaliser) keyed by the
 * seed, so IDs are unique while the counter runs and hard to guess across restarts (the
 * kernel XORs a random operand into a cyclic ID); never 0, never one in use.
 */
static uint32_t new_comm_id(struct blue_ibcm *cm)
{
	for (;;) {
		uint32_t x = ++cm->id_counter ^ cm->cfg.seed;

		x ^= x >> 16;
		x *= 0x85ebca6bu;
		x ^= x >> 13;
		x *= 0xc2b2ae35u;
		x ^= x >> 16;
		if (cm->cfg.id_prefix)
			x = (uint32_t)cm->cfg.id_prefix << 24 | (x & 0xffffffu);
		if ((x & 0xffffffu) && !by_local_id(cm, x))
			return x;
	}
}

static struct blue_ibcm_conn *conn_alloc(struct blue_ibcm *cm)
{
	for (unsigned int i = 0; i < cm->nconns; i++) {
		struct blue_ibcm_conn *c = &cm->conns[i];

		if (c->state == BLUE_IBCM_IDLE) {
			memset(c, 0, sizeof(*c));
			c->local_comm_id = new_comm_id(cm);
			return c;
		}
	}
	return NULL;
}

static void conn_free(struct blue_ibcm_conn *c)
{
	memset(c, 0, sizeof(*c));
	c->state = BLUE_IBCM_IDLE;
}

/* Raise @ev; if @end, the record is freed after the callback (its last use). */
static void emit(struct blue_ibcm *cm, struct blue_ibcm_conn *c, enum blue_ibcm_event ev,
		 const struct blue_ibcm_msg *m, int end)
{
	if (cm->cfg.ops.event)
		cm->cfg.ops.event(cm->cfg.ctx, c, ev, m);
	if (end)
		conn_free(c);
}

/* ---- sending ---- */

static uint64_t new_tid(struct blue_ibcm *cm, const struct blue_ibcm_conn *c)
{
	/* like cm_form_tid: the local comm ID high, a counter low */
	return ((uint64_t)c->local_comm_id << 32) | ++cm->tid_counter;
}

static void xmit(struct blue_ibcm *cm, const uint8_t *mad, const struct blue_ibcm_addr *to)
{
	cm->stats.tx++;
	if (cm->cfg.ops.send(cm->cfg.ctx, mad, to))
		cm->stats.tx_err++;
}

/* Encode @m into c->last (kept for re-sending) and send it. */
static int send_kept(struct blue_ibcm *cm, struct blue_ibcm_conn *c,
		     const struct blue_ibcm_msg *m)
{
	int err = blue__ibcm_encode(m, c->last, NULL);

	if (err)
		return err;
	c->last_attr = m->hdr.attr_id;
	xmit(cm, c->last, &c->peer);
	return 0;
}

static void arm(struct blue_ibcm_conn *c, uint64_t now_ns, uint64_t wait_ns)
{
	c->wait_ns = wait_ns;
	c->deadline_ns = now_ns + wait_ns;
	c->retries = 0;
}

/* Every state change goes through here; BLUE_IBCM_TRACE=1 logs each by name. */
static void set_state(struct blue_ibcm *cm, struct blue_ibcm_conn *c, enum blue_ibcm_state s)
{
	if (cm->trace)
		blue__logf("ibcm: conn 0x%08x (peer 0x%08x, service 0x%016llx): %s -> %s",
			   c->local_comm_id, c->remote_comm_id, (unsigned long long)c->service_id,
			   blue__ibcm_state_str(c->state), blue__ibcm_state_str(s));
	c->state = s;
}

/* A REJ that answers @rcv without a record (IBA 12.6.7; the kernel's cm_issue_rej). */
static void issue_rej(struct blue_ibcm *cm, const struct blue_ibcm_msg *rcv,
		      uint32_t rcv_local_id, uint32_t rcv_remote_id, uint8_t msg_rejected,
		      uint16_t reason, const struct blue_ibcm_addr *to)
{
	struct blue_ibcm_msg m;
	uint8_t mad[BLUE_IBCM_MAD_SIZE];

	blue__ibcm_init(&m, BLUE_IBCM_ATTR_REJ, rcv->hdr.tid);
	m.rej.local_comm_id = rcv_remote_id;
	m.rej.remote_comm_id = rcv_local_id;
	m.rej.msg_rejected = msg_rejected;
	m.rej.reason = reason;
	if (!blue__ibcm_encode(&m, mad, NULL))
		xmit(cm, mad, to);
}

/* ---- API ---- */

struct blue_ibcm *blue__ibcm_create(const struct blue_ibcm_cfg *cfg)
{
	struct blue_ibcm *cm;

	if (!cfg || !cfg->ops.send) {
		errno = EINVAL;
		return NULL;
	}
	cm = calloc(1, sizeof(*cm));
	if (!cm)
		return NULL;
	cm->cfg = *cfg;
	cm->trace = blue__env_flag("BLUE_IBCM_TRACE", false);
	if (!cm->cfg.max_conns)
		cm->cfg.max_conns = IBCM_DEFAULT_CONNS;
	if (!cm->cfg.cm_response_timeout)
		cm->cfg.cm_response_timeout = IBCM_DEFAULT_TIMEOUT;
	if (!cm->cfg.max_cm_retries)
		cm->cfg.max_cm_retries = IBCM_DEFAULT_RETRIES;
	cm->cfg.cm_response_timeout &= 31;
	cm->cfg.max_cm_retries &= 15;
	if (!cm->cfg.timewait_ns)
		cm->cfg.timewait_ns = blue__ibcm_wait_ns(cm->cfg.cm_response_timeout);
	cm->nconns = cm->cfg.max_conns;
	cm->conns = calloc(cm->nconns, sizeof(*cm->conns));
	if (!cm->conns) {
		free(cm);
		return NULL;
	}
	return cm;
}

void blue__ibcm_destroy(struct blue_ibcm *cm)
{
	if (!cm)
		return;
	free(cm->conns);
	free(cm);
}

const struct blue_ibcm_stats *blue__ibcm_stats(const struct blue_ibcm *cm)
{
	return &cm->stats;
}

unsigned int blue__ibcm_conn_count(const struct blue_ibcm *cm)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < cm->nconns; i++)
		n += cm->conns[i].state != BLUE_IBCM_IDLE;
	return n;
}

static int listening(const struct blue_ibcm *cm, uint64_t sid)
{
	for (unsigned int i = 0; i < cm->nlisten; i++)
		if (cm->listen[i] == sid)
			return 1;
	return 0;
}

int blue__ibcm_listen(struct blue_ibcm *cm, uint64_t service_id)
{
	if (listening(cm, service_id))
		return -EADDRINUSE;
	if (cm->nlisten == IBCM_MAX_LISTEN)
		return -ENOSPC;
	cm->listen[cm->nlisten++] = service_id;
	return 0;
}

int blue__ibcm_unlisten(struct blue_ibcm *cm, uint64_t service_id)
{
	for (unsigned int i = 0; i < cm->nlisten; i++) {
		if (cm->listen[i] != service_id)
			continue;
		/* order does not matter: move the last entry into the hole */
		cm->listen[i] = cm->listen[--cm->nlisten];
		cm->listen[cm->nlisten] = 0;
		return 0;
	}
	return -ENOENT;
}

/*
 * The RoCEv2 primary path of a REQ, as cm_format_req writes it for a routed path. The
 * passive side takes its QP's destination GID from the path's local GID, so it is the
 * GID the connection is made from: an IPv6 connection names the IPv6 one.
 */
static void roce_path(const struct blue_ibcm *cm, const struct blue_ibcm_conn_param *cp,
		      struct blue_ibcm_path *p)
{
	static const uint8_t zero[16];

	p->local_lid = BLUE_IBCM_LID_PERMISSIVE;
	p->remote_lid = BLUE_IBCM_LID_PERMISSIVE;
	memcpy(p->local_gid, memcmp(cp->local_gid, zero, 16) ? cp->local_gid :
			     cm->cfg.local_gid, 16);
	memcpy(p->remote_gid, cp->peer.gid, 16);
	p->hop_limit = IBCM_ROCE_HOP_LIMIT;
	p->subnet_local = 0;
	p->local_ack_timeout = IBCM_ROCE_ACK_TIMEOUT;
}

/* IDLE -> REQ_SENT (IBA 12.9): send the REQ, wait the peer's response timeout. */
static int idle_send_req(struct blue_ibcm *cm, struct blue_ibcm_conn *c,
			 const struct blue_ibcm_conn_param *p, uint64_t now_ns)
{
	struct blue_ibcm_msg m;
	struct blue_ibcm_req *r = &m.req;
	int err;

	c->tid = new_tid(cm, c);
	blue__ibcm_init(&m, BLUE_IBCM_ATTR_REQ, c->tid);
	r->local_comm_id = c->local_comm_id;
	r->service_id = p->service_id;
	r->local_ca_guid = cm->cfg.local_ca_guid;
	r->local_qpn = p->local_qpn;
	r->responder_resources = p->responder_resources;
	r->initiator_depth = p->initiator_depth;
	r->remote_cm_response_timeout = cm->cfg.cm_response_timeout;
	r->local_cm_response_timeout = cm->cfg.cm_response_timeout;
	r->transport_type = BLUE_IBCM_TRANSPORT_RC;
	r->starting_psn = p->starting_psn;
	r->retry_count = p->retry_count;
	r->pkey = BLUE_IBCM_PKEY_DEFAULT;
	r->path_mtu = p->path_mtu;
	r->rnr_retry_count = p->rnr_retry_count;
	r->max_cm_retries = cm->cfg.max_cm_retries;
	roce_path(cm, p, &r->primary);
	err = blue__ibcm_set_private_data(&m, p->private_data, p->private_data_len);
	if (err)
		return err;
	err = send_kept(cm, c, &m);
	if (err)
		return -EINVAL;
	arm(c, now_ns, blue__ibcm_wait_ns(cm->cfg.cm_response_timeout));
	set_state(cm, c, BLUE_IBCM_REQ_SENT);
	return 0;
}

struct blue_ibcm_conn *blue__ibcm_connect(struct blue_ibcm *cm,
					  const struct blue_ibcm_conn_param *p, uint64_t now_ns)
{
	struct blue_ibcm_conn *c = conn_alloc(cm);
	int err;

	if (!c) {
		errno = ENOSPC;
		return NULL;
	}
	c->peer = p->peer;
	c->service_id = p->service_id;
	c->local_qpn = p->local_qpn;
	c->local_psn = p->starting_psn;
	c->path_mtu = p->path_mtu;
	c->retry_count = p->retry_count;
	c->rnr_retry_count = p->rnr_retry_count;
	c->user = p->user;
	err = idle_send_req(cm, c, p, now_ns);
	if (err) {
		conn_free(c);
		errno = -err;
		return NULL;
	}
	return c;
}

/* REQ_RCVD / MRA_REQ_SENT -> REP_SENT (IBA 12.9): send the REP, wait for the RTU. */
static int req_rcvd_send_rep(struct blue_ibcm *cm, struct blue_ibcm_conn *c,
			     const struct blue_ibcm_rep_param *p, uint64_t now_ns)
{
	struct blue_ibcm_msg m;
	struct blue_ibcm_rep *r = &m.rep;

	blue__ibcm_init(&m, BLUE_IBCM_ATTR_REP, c->tid);
	r->local_comm_id = c->local_comm_id;
	r->remote_comm_id = c->remote_comm_id;
	r->local_qpn = p->local_qpn;
	r->starting_psn = p->starting_psn;
	r->responder_resources = p->responder_resources;
	r->initiator_depth = p->initiator_depth;
	r->rnr_retry_count = p->rnr_retry_count;
	r->local_ca_guid = cm->cfg.local_ca_guid;
	if (blue__ibcm_set_private_data(&m, p->private_data, p->private_data_len) ||
	    send_kept(cm, c, &m))
		return -EINVAL;
	c->local_qpn = p->local_qpn;
	c->local_psn = p->starting_psn;
	/* c->wait_ns holds the REQ's local CM response timeout (req_handler) */
	arm(c, now_ns, c->wait_ns);
	set_state(cm, c, BLUE_IBCM_REP_SENT);
	return 0;
}

int blue__ibcm_accept(struct blue_ibcm *cm, struct blue_ibcm_conn *c,
		      const struct blue_ibcm_rep_param *p, uint64_t now_ns)
{
	if (c->state != BLUE_IBCM_REQ_RCVD && c->state != BLUE_IBCM_MRA_REQ_SENT)
		return -EINVAL;
	return req_rcvd_send_rep(cm, c, p, now_ns);
}

int blue__ibcm_reject(struct blue_ibcm *cm, struct blue_ibcm_conn *c, uint16_t reason,
		      const void *private_data, size_t len)
{
	struct blue_ibcm_msg m;
	uint8_t what;

	switch (c->state) {
	case BLUE_IBCM_REQ_RCVD:
	case BLUE_IBCM_MRA_REQ_SENT:
		what = BLUE_IBCM_MSG_REQ;
		break;
	case BLUE_IBCM_REP_RCVD:
	case BLUE_IBCM_MRA_REP_SENT:
		what = BLUE_IBCM_MSG_REP;
		break;
	default:
		return -EINVAL;
	}
	blue__ibcm_init(&m, BLUE_IBCM_ATTR_REJ, c->tid);
	m.rej.local_comm_id = c->local_comm_id;
	m.rej.remote_comm_id = c->remote_comm_id;
	m.rej.msg_rejected = what;
	m.rej.reason = reason;
	if (blue__ibcm_set_private_data(&m, private_data, len) || send_kept(cm, c, &m))
		return -EINVAL;
	/* IBA 12.9: a REJ sent returns the record to Idle (cm_reset_to_idle) */
	conn_free(c);
	return 0;
}

int blue__ibcm_drop_req(struct blue_ibcm *cm, struct blue_ibcm_conn *c)
{
	if (c->state != BLUE_IBCM_REQ_RCVD)
		return -EINVAL;
	cm->stats.req_dropped++;
	if (cm->trace)
		blue__logf("ibcm: conn 0x%08x (peer 0x%08x): REQ dropped, no answer",
			   c->local_comm_id, c->remote_comm_id);
	conn_free(c);
	return 0;
}

int blue__ibcm_send_mra(struct blue_ibcm *cm, struct blue_ibcm_conn *c,
			uint8_t service_timeout)
{
	struct blue_ibcm_msg m;
	enum blue_ibcm_state next;
	uint8_t what;

	if (c->state == BLUE_IBCM_REQ_RCVD) {
		what = BLUE_IBCM_MSG_REQ;
		next = BLUE_IBCM_MRA_REQ_SENT;
	} else if (c->state == BLUE_IBCM_REP_RCVD) {
		what = BLUE_IBCM_MSG_REP;
		next = BLUE_IBCM_MRA_REP_SENT;
	} else {
		return -EINVAL;
	}
	blue__ibcm_init(&m, BLUE_IBCM_ATTR_MRA, c->tid);
	m.mra.local_comm_id = c->local_comm_id;
	m.mra.remote_comm_id = c->remote_comm_id;
	m.mra.msg_mraed = what;
	m.mra.service_timeout = service_timeout & 31;
	if (service_timeout & BLUE_IBCM_MRA_DELAY) {
		/* kept in c->last: rx_req's duplicate path sends it in MRA_REQ_SENT */
		if (blue__ibcm_encode(&m, c->last, NULL))
			return -EINVAL;
		c->last_attr = m.hdr.attr_id;
	} else if (send_kept(cm, c, &m)) {
		return -EINVAL;
	}
	set_state(cm, c, next);
	return 0;
}

/* REP_RCVD / MRA_REP_SENT -> ESTABLISHED (IBA 12.9): send the RTU; no timer. */
static int rep_rcvd_send_rtu(struct blue_ibcm *cm, struct blue_ibcm_conn *c)
{
	struct blue_ibcm_msg m;

	blue__ibcm_init(&m, BLUE_IBCM_ATTR_RTU, c->tid);
	m.rtu.local_comm_id = c->local_comm_id;
	m.rtu.remote_comm_id = c->remote_comm_id;
	if (send_kept(cm, c, &m))
		return -EINVAL;
	c->deadline_ns = 0;
	set_state(cm, c, BLUE_IBCM_ESTABLISHED);
	return 0;
}

int blue__ibcm_send_rtu(struct blue_ibcm *cm, struct blue_ibcm_conn *c)
{
	if (c->state != BLUE_IBCM_REP_RCVD && c->state != BLUE_IBCM_MRA_REP_SENT)
		return -EINVAL;
	return rep_rcvd_send_rtu(cm, c);
}

/* REP_SENT / MRA_REP_RCVD -> ESTABLISHED (passive, IBA 12.9): stop the REP's timer. */
static void rep_sent_establish(struct blue_ibcm *cm, struct blue_ibcm_conn *c,
			       const struct blue_ibcm_msg *m)
{
	c->deadline_ns = 0;
	set_state(cm, c, BLUE_IBCM_ESTABLISHED);
	emit(cm, c, BLUE_IBCM_EV_ESTABLISHED, m, 0);
}

int blue__ibcm_established(struct blue_ibcm *cm, struct blue_ibcm_conn *c)
{
	if (c->state != BLUE_IBCM_REP_SENT && c->state != BLUE_IBCM_MRA_REP_RCVD)
		return -EINVAL;
	rep_sent_establish(cm, c, NULL);
	return 0;
}

/* ESTABLISHED -> DREQ_SENT (IBA 12.9): a DREQ with a new TID, timed like a REQ. */
static int established_send_dreq(struct blue_ibcm *cm, struct blue_ibcm_conn *c,
				 uint64_t now_ns)
{
	struct blue_ibcm_msg m;

	c->tid = new_tid(cm, c);
	blue__ibcm_init(&m, BLUE_IBCM_ATTR_DREQ, c->tid);
	m.dreq.local_comm_id = c->local_comm_id;
	m.dreq.remote_comm_id = c->remote_comm_id;
	m.dreq.remote_qpn_eecn = c->remote_qpn;
	if (send_kept(cm, c, &m))
		return -EINVAL;
	arm(c, now_ns, blue__ibcm_wait_ns(cm->cfg.cm_response_timeout));
	set_state(cm, c, BLUE_IBCM_DREQ_SENT);
	return 0;
}

int blue__ibcm_disconnect(struct blue_ibcm *cm, struct blue_ibcm_conn *c, uint64_t now_ns)
{
	if (c->state != BLUE_IBCM_ESTABLISHED)
		return -EINVAL;
	return established_send_dreq(cm, c, now_ns);
}

/* Any -> TIMEWAIT (IBA 12.9): the QP may still see stray packets; hold the IDs. */
static void enter_timewait(struct blue_ibcm *cm, struct blue_ibcm_conn *c, uint64_t now_ns)
{
	arm(c, now_ns, cm->cfg.timewait_ns);
	set_state(cm, c, BLUE_IBCM_TIMEWAIT);
}

/* ---- receive ---- */

/* A REQ: new passive record, duplicate, or no listener (IBA 12.9). */
static void rx_req(struct blue_ibcm *cm, const struct blue_ibcm_msg *m,
		   const struct blue_ibcm_addr *from, uint64_t now_ns)
{
	const struct blue_ibcm_req *r = &m->req;
	struct blue_ibcm_conn *c = by_remote(cm, r->local_comm_id, r->local_ca_guid, from);

	if (c && c->state == BLUE_IBCM_TIMEWAIT) {
		/* cm_dup_req_handler: the REQ of a connection that ended */
		cm->stats.stale_conn++;
		issue_rej(cm, m, r->local_comm_id, c->local_comm_id, BLUE_IBCM_MSG_REQ,
			  BLUE_IBCM_REJ_STALE_CONN, from);
		return;
	}
	if (c) {
		cm->stats.dup_req++;
		/* cm_dup_req_handler: an MRA is repeated; here the REP as well (ibcm.h) */
		if (c->state == BLUE_IBCM_MRA_REQ_SENT || c->state == BLUE_IBCM_REP_SENT)
			xmit(cm, c->last, &c->peer);
		return;
	}
	if (r->local_qpn && by_remote_qpn(cm, r->local_qpn, r->local_ca_guid, from)) {
		/* cm_insert_remote_qpn: that QP is still connected here (QPN 0: an id that
		 * connects with no QP, as the tests' probes do, names none) */
		cm->stats.stale_conn++;
		issue_rej(cm, m, r->local_comm_id, 0, BLUE_IBCM_MSG_REQ,
			  BLUE_IBCM_REJ_STALE_CONN, from);
		return;
	}
	if (!listening(cm, r->service_id)) {
		cm->stats.no_listener++;
		issue_rej(cm, m, r->local_comm_id, 0, BLUE_IBCM_MSG_REQ,
			  BLUE_IBCM_REJ_INVALID_SERVICE_ID, from);
		return;
	}
	c = conn_alloc(cm);
	if (!c) {
		cm->stats.table_full++;
		issue_rej(cm, m, r->local_comm_id, 0, BLUE_IBCM_MSG_REQ,
			  BLUE_IBCM_REJ_NO_RESOURCES, from);
		return;
	}
	c->passive = 1;
	c->peer = *from;
	c->tid = m->hdr.tid;
	c->service_id = r->service_id;
	c->remote_comm_id = r->local_comm_id;
	c->remote_ca_guid = r->local_ca_guid;
	c->remote_qpn = r->local_qpn;
	c->remote_psn = r->starting_psn;
	/* IBA 12.6.5, 12.6.8: the peer's responder resources are our initiator depth */
	c->responder_resources = r->initiator_depth;
	c->initiator_depth = r->responder_resources;
	c->path_mtu = r->path_mtu;
	c->retry_count = r->retry_count;
	c->rnr_retry_count = r->rnr_retry_count;
	/* our REP waits the active side's own response timeout (IBA 12.6.5) */
	c->wait_ns = blue__ibcm_wait_ns(r->local_cm_response_timeout);
	(void)now_ns;
	set_state(cm, c, BLUE_IBCM_REQ_RCVD);
	emit(cm, c, BLUE_IBCM_EV_REQ_RECEIVED, m, 0);
}

/* REQ_SENT / MRA_REQ_RCVD -> REP_RCVD (IBA 12.9). */
static void req_sent_on_rep(struct blue_ibcm *cm, struct blue_ibcm_conn *c,
			    const struct blue_ibcm_msg *m)
{
	const struct blue_ibcm_rep *r = &m->rep;

	c->remote_comm_id = r->local_comm_id;
	c->remote_ca_guid = r->local_ca_guid;
	c->remote_qpn = r->local_qpn;
	c->remote_psn = r->starting_psn;
	c->responder_resources = r->initiator_depth;
	c->initiator_depth = r->responder_resources;
	c->rnr_retry_count = r->rnr_retry_count;
	c->deadline_ns = 0;
	set_state(cm, c, BLUE_IBCM_REP_RCVD);
	emit(cm, c, BLUE_IBCM_EV_REP_RECEIVED, m, 0);
}

static void rx_rep(struct blue_ibcm *cm, const struct blue_ibcm_msg *m)
{
	struct blue_ibcm_conn *c = by_local_id(cm, m->rep.remote_comm_id);

	if (!c || c->passive) {
		cm->stats.no_conn++;
		return;
	}
	switch (c->state) {
	case BLUE_IBCM_REQ_SENT:
	case BLUE_IBCM_MRA_REQ_RCVD:
		req_sent_on_rep(cm, c, m);
		return;
	case BLUE_IBCM_ESTABLISHED:
	case BLUE_IBCM_MRA_REP_SENT:
		/* cm_dup_rep_handler: our RTU (or MRA) was lost; repeat it */
		if (c->remote_comm_id == m->rep.local_comm_id &&
		    (c->last_attr == BLUE_IBCM_ATTR_RTU || c->last_attr == BLUE_IBCM_ATTR_MRA)) {
			xmit(cm, c->last, &c->peer);
			return;
		}
		break;
	default:
		break;
	}
	cm->stats.wrong_state++;
}

static void rx_rtu(struct blue_ibcm *cm, const struct blue_ibcm_msg *m)
{
	struct blue_ibcm_conn *c = by_pair(cm, m->rtu.remote_comm_id, m->rtu.local_comm_id);

	if (!c) {
		cm->stats.no_conn++;
		return;
	}
	if (c->state != BLUE_IBCM_REP_SENT && c->state != BLUE_IBCM_MRA_REP_RCVD) {
		cm->stats.wrong_state++;
		return;
	}
	rep_sent_establish(cm, c, m);
}

/* IBA 12.6.7: a REJ of our REQ has no remote comm ID for us to check yet. */
static void rx_rej(struct blue_ibcm *cm, const struct blue_ibcm_msg *m)
{
	struct blue_ibcm_conn *c = by_local_id(cm, m->rej.remote_comm_id);

	if (!c || (m->rej.msg_rejected != BLUE_IBCM_MSG_REQ &&
		   c->remote_comm_id != m->rej.local_comm_id)) {
		cm->stats.no_conn++;
		return;
	}
	switch (c->state) {
	case BLUE_IBCM_REQ_SENT:
	case BLUE_IBCM_MRA_REQ_RCVD:
	case BLUE_IBCM_REP_SENT:
	case BLUE_IBCM_MRA_REP_RCVD:
	case BLUE_IBCM_ESTABLISHED:
		/* IBA 12.9: REJ received -> Idle (the kernel's cm_reset_to_idle) */
		emit(cm, c, BLUE_IBCM_EV_REJECTED, m, 1);
		return;
	default:
		cm->stats.wrong_state++;
	}
}

/* MRA: the peer needs longer; wait its service timeout instead (IBA 12.6.6). */
static void rx_mra(struct blue_ibcm *cm, const struct blue_ibcm_msg *m, uint64_t now_ns)
{
	struct blue_ibcm_conn *c = by_local_id(cm, m->mra.remote_comm_id);
	enum blue_ibcm_state next;

	if (!c) {
		cm->stats.no_conn++;
		return;
	}
	/* a repeated MRA (answering our retransmission) extends the wait again; the
	 * kernel drops it as a duplicate and lets its retries run out */
	if ((c->state == BLUE_IBCM_REQ_SENT || c->state == BLUE_IBCM_MRA_REQ_RCVD) &&
	    m->mra.msg_mraed == BLUE_IBCM_MSG_REQ)
		next = BLUE_IBCM_MRA_REQ_RCVD;
	else if ((c->state == BLUE_IBCM_REP_SENT || c->state == BLUE_IBCM_MRA_REP_RCVD) &&
		 m->mra.msg_mraed == BLUE_IBCM_MSG_REP)
		next = BLUE_IBCM_MRA_REP_RCVD;
	else {
		cm->stats.wrong_state++;
		return;
	}
	c->remote_comm_id = m->mra.local_comm_id;
	c->deadline_ns = now_ns + blue__ibcm_wait_ns(m->mra.service_timeout);
	set_state(cm, c, next);
}

/* DREQ_RCVD -> TIMEWAIT (IBA 12.9): the DREP goes out at once (ibcm.h). */
static void dreq_rcvd_send_drep(struct blue_ibcm *cm, struct blue_ibcm_conn *c,
				uint64_t now_ns)
{
	struct blue_ibcm_msg m;

	blue__ibcm_init(&m, BLUE_IBCM_ATTR_DREP, c->tid);
	m.drep.local_comm_id = c->local_comm_id;
	m.drep.remote_comm_id = c->remote_comm_id;
	(void)send_kept(cm, c, &m);
	enter_timewait(cm, c, now_ns);
}

static void rx_dreq(struct blue_ibcm *cm, const struct blue_ibcm_msg *m, uint64_t now_ns)
{
	struct blue_ibcm_conn *c = by_pair(cm, m->dreq.remote_comm_id, m->dreq.local_comm_id);

	if (!c) {
		cm->stats.no_conn++;
		return;
	}
	switch (c->state) {
	case BLUE_IBCM_REP_SENT:
	case BLUE_IBCM_MRA_REP_RCVD:
		/* the RTU was lost but the peer is established (cm_dreq_handler) */
	case BLUE_IBCM_ESTABLISHED:
	case BLUE_IBCM_DREQ_SENT:	/* both sides disconnect: answer, then TimeWait */
		c->tid = m->hdr.tid;
		set_state(cm, c, BLUE_IBCM_DREQ_RCVD);
		dreq_rcvd_send_drep(cm, c, now_ns);
		emit(cm, c, BLUE_IBCM_EV_DISCONNECTED, m, 0);
		return;
	case BLUE_IBCM_TIMEWAIT:
		/* our DREP was lost: repeat it (cm_dreq_handler, IB_CM_TIMEWAIT) */
		if (c->last_attr == BLUE_IBCM_ATTR_DREP) {
			xmit(cm, c->last, &c->peer);
			return;
		}
		break;
	default:
		break;
	}
	cm->stats.wrong_state++;
}

/* DREQ_SENT -> TIMEWAIT on the DREP (IBA 12.9). */
static void dreq_sent_on_drep(struct blue_ibcm *cm, struct blue_ibcm_conn *c,
			      const struct blue_ibcm_msg *m, uint64_t now_ns)
{
	enter_timewait(cm, c, now_ns);
	emit(cm, c, BLUE_IBCM_EV_DISCONNECTED, m, 0);
}

static void rx_drep(struct blue_ibcm *cm, const struct blue_ibcm_msg *m, uint64_t now_ns)
{
	struct blue_ibcm_conn *c = by_pair(cm, m->drep.remote_comm_id, m->drep.local_comm_id);

	if (!c) {
		cm->stats.no_conn++;
		return;
	}
	if (c->state != BLUE_IBCM_DREQ_SENT) {
		cm->stats.wrong_state++;
		return;
	}
	dreq_sent_on_drep(cm, c, m, now_ns);
}

/* ---- SIDR (IBA 12.11) ---- */

struct blue_ibcm_conn *blue__ibcm_sidr_request(struct blue_ibcm *cm,
					       const struct blue_ibcm_addr *peer,
					       uint64_t service_id, const void *private_data,
					       size_t len, uint64_t now_ns)
{
	struct blue_ibcm_conn *c = conn_alloc(cm);
	struct blue_ibcm_msg m;

	if (!c) {
		errno = ENOSPC;
		return NULL;
	}
	c->peer = *peer;
	c->service_id = service_id;
	c->tid = new_tid(cm, c);
	blue__ibcm_init(&m, BLUE_IBCM_ATTR_SIDR_REQ, c->tid);
	/* the kernel's request ID is its local comm ID (cm_format_sidr_req) */
	m.sidr_req.request_id = c->local_comm_id;
	m.sidr_req.pkey = BLUE_IBCM_PKEY_DEFAULT;
	m.sidr_req.service_id = service_id;
	if (blue__ibcm_set_private_data(&m, private_data, len) || send_kept(cm, c, &m)) {
		conn_free(c);
		errno = EINVAL;
		return NULL;
	}
	arm(c, now_ns, blue__ibcm_wait_ns(cm->cfg.cm_response_timeout));
	set_state(cm, c, BLUE_IBCM_SIDR_REQ_SENT);
	return c;
}

/* A SIDR_REP (IBA 12.11.2) for request @request_id, with or without a record. */
static int send_sidr_rep(struct blue_ibcm *cm, uint64_t tid, uint32_t request_id,
			 uint64_t sid, uint8_t status, uint32_t qpn, uint32_t qkey,
			 const void *priv, size_t len, const struct blue_ibcm_addr *to)
{
	struct blue_ibcm_msg m;
	uint8_t mad[BLUE_IBCM_MAD_SIZE];

	blue__ibcm_init(&m, BLUE_IBCM_ATTR_SIDR_REP, tid);
	m.sidr_rep.request_id = request_id;
	m.sidr_rep.status = status;
	m.sidr_rep.qpn = qpn;
	m.sidr_rep.qkey = qkey;
	m.sidr_rep.service_id = sid;
	if (blue__ibcm_set_private_data(&m, priv, len) || blue__ibcm_encode(&m, mad, NULL))
		return -EINVAL;
	xmit(cm, mad, to);
	return 0;
}

int blue__ibcm_sidr_reply(struct blue_ibcm *cm, struct blue_ibcm_conn *c, uint8_t status,
			  uint32_t qpn, uint32_t qkey, const void *private_data, size_t len)
{
	int err;

	if (c->state != BLUE_IBCM_SIDR_REQ_RCVD)
		return -EINVAL;
	err = send_sidr_rep(cm, c->tid, c->remote_comm_id, c->service_id, status, qpn, qkey,
			    private_data, len, &c->peer);
	if (err)
		return err;
	conn_free(c);
	return 0;
}

/* A SIDR_REQ: new passive record, a duplicate (dropped, as cm_sidr_req_handler does),
 * or no listener (status 1). */
static void rx_sidr_req(struct blue_ibcm *cm, const struct blue_ibcm_msg *m,
			const struct blue_ibcm_addr *from)
{
	const struct blue_ibcm_sidr_req *r = &m->sidr_req;
	struct blue_ibcm_conn *c = by_remote(cm, r->request_id, 0, from);

	if (c && c->state == BLUE_IBCM_SIDR_REQ_RCVD) {
		cm->stats.dup_req++;
		return;
	}
	if (!listening(cm, r->service_id)) {
		cm->stats.no_listener++;
		(void)send_sidr_rep(cm, m->hdr.tid, r->request_id, r->service_id,
				    BLUE_IBCM_SIDR_UNSUPPORTED, 0, 0, NULL, 0, from);
		return;
	}
	c = conn_alloc(cm);
	if (!c) {
		cm->stats.table_full++;
		(void)send_sidr_rep(cm, m->hdr.tid, r->request_id, r->service_id,
				    BLUE_IBCM_SIDR_NO_QP, 0, 0, NULL, 0, from);
		return;
	}
	c->passive = 1;
	c->peer = *from;
	c->tid = m->hdr.tid;
	c->service_id = r->service_id;
	c->remote_comm_id = r->request_id;
	set_state(cm, c, BLUE_IBCM_SIDR_REQ_RCVD);
	emit(cm, c, BLUE_IBCM_EV_SIDR_REQ_RECEIVED, m, 0);
}

static void rx_sidr_rep(struct blue_ibcm *cm, const struct blue_ibcm_msg *m)
{
	struct blue_ibcm_conn *c = by_local_id(cm, m->sidr_rep.request_id);

	if (!c || c->passive) {
		cm->stats.no_conn++;
		return;
	}
	if (c->state != BLUE_IBCM_SIDR_REQ_SENT) {
		cm->stats.wrong_state++;
		return;
	}
	emit(cm, c, BLUE_IBCM_EV_SIDR_REP_RECEIVED, m, 1);
}

enum blue_ibcm_err blue__ibcm_rx(struct blue_ibcm *cm, const uint8_t *mad, size_t len,
				 const struct blue_ibcm_addr *from, uint64_t now_ns)
{
	struct blue_ibcm_msg m;
	enum blue_ibcm_err err;

	cm->stats.rx++;
	err = blue__ibcm_decode(mad, len, &m);
	if (err != BLUE_IBCM_OK) {
		cm->stats.decode[err < BLUE_IBCM_ERR_MAX ? err : 0]++;
		return err;
	}
	switch (m.hdr.attr_id) {
	case BLUE_IBCM_ATTR_REQ:
		rx_req(cm, &m, from, now_ns);
		break;
	case BLUE_IBCM_ATTR_REP:
		rx_rep(cm, &m);
		break;
	case BLUE_IBCM_ATTR_RTU:
		rx_rtu(cm, &m);
		break;
	case BLUE_IBCM_ATTR_REJ:
		rx_rej(cm, &m);
		break;
	case BLUE_IBCM_ATTR_MRA:
		rx_mra(cm, &m, now_ns);
		break;
	case BLUE_IBCM_ATTR_DREQ:
		rx_dreq(cm, &m, now_ns);
		break;
	case BLUE_IBCM_ATTR_DREP:
		rx_drep(cm, &m, now_ns);
		break;
	case BLUE_IBCM_ATTR_SIDR_REQ:
		rx_sidr_req(cm, &m, from);
		break;
	case BLUE_IBCM_ATTR_SIDR_REP:
		rx_sidr_rep(cm, &m);
		break;
	default:
		cm->stats.unhandled++;
		break;
	}
	return BLUE_IBCM_OK;
}

/* ---- timers ---- */

/* The wait for an answer ran out: re-send, or give up (IBA 12.9). */
static void expire(struct blue_ibcm *cm, struct blue_ibcm_conn *c, uint64_t now_ns)
{
	if (c->state == BLUE_IBCM_TIMEWAIT) {
		emit(cm, c, BLUE_IBCM_EV_TIMEWAIT_EXIT, NULL, 1);
		return;
	}
	if (c->retries < cm->cfg.max_cm_retries) {
		c->retries++;
		cm->stats.retransmits++;
		xmit(cm, c->last, &c->peer);
		c->deadline_ns = now_ns + c->wait_ns;
		return;
	}
	cm->stats.timeouts++;
	if (c->state == BLUE_IBCM_DREQ_SENT) {
		/* IBA 12.9: no DREP, TimeWait all the same */
		enter_timewait(cm, c, now_ns);
		emit(cm, c, BLUE_IBCM_EV_DISCONNECTED, NULL, 0);
		return;
	}
	emit(cm, c, BLUE_IBCM_EV_TIMEOUT, NULL, 1);
}

uint64_t blue__ibcm_tick(struct blue_ibcm *cm, uint64_t now_ns)
{
	uint64_t next = 0;

	for (unsigned int i = 0; i < cm->nconns; i++) {
		struct blue_ibcm_conn *c = &cm->conns[i];

		if (c->state != BLUE_IBCM_IDLE && c->deadline_ns && now_ns >= c->deadline_ns)
			expire(cm, c, now_ns);
		if (c->state != BLUE_IBCM_IDLE && c->deadline_ns &&
		    (!next || c->deadline_ns < next))
			next = c->deadline_ns;
	}
	return next;
}
