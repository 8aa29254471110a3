// SPDX-License-Identifier: MIT
/*
 * rdma_cm ids (cma.h): create, destroy, migrate between channels, bind to an address.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <sys/random.h>

#include "compat/rdmacm/agent.h"
#include "compat/rdmacm/cma.h"

struct cma_id *cma_ids;

/* ---- creation ---------------------------------------------------------------- */
struct cma_id *cma_id_new(struct cma_channel *ch, void *ctx, enum rdma_port_space ps,
			  enum ibv_qp_type qpt)
{
	struct cma_id *id = calloc(1, sizeof(*id));

	if (!id) {
		errno = ENOMEM;
		return NULL;
	}
	if (!ch) {
		ch = cma_channel_new(true);
		if (!ch) {
			free(id);
			return NULL;
		}
	}
	id->chan = ch;
	ch->nids++;
	id->id.channel = &ch->ch;
	id->id.context = ctx;
	id->id.ps = ps;
	id->id.qp_type = qpt;
	id->id.route.path_rec = NULL;
	id->state = CMA_IDLE;
	id->retry_count = 7;
	id->rnr_retry_count = 7;
	pthread_cond_init(&id->acked, NULL);
	id->next = cma_ids;
	cma_ids = id;
	return id;
}

CMA_EXPORT int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id,
			      void *context, enum rdma_port_space ps)
{
	enum ibv_qp_type qpt;
	struct cma_id *c;
	int err;

	if (!id) {
		cma_log("rdma_create_id: id is NULL");
		errno = EINVAL;
		return -1;
	}
	switch (ps) {
	case RDMA_PS_TCP:
	case RDMA_PS_IB:
		qpt = IBV_QPT_RC;
		break;
	case RDMA_PS_UDP:
		qpt = IBV_QPT_UD;
		break;
	case RDMA_PS_IPOIB:
		cma_log("rdma_create_id: port space RDMA_PS_IPOIB: no IPoIB on RoCE (EINVAL)");
		errno = EINVAL;
		return -1;
	default:
		cma_log("rdma_create_id: unknown port space 0x%x (EINVAL)", (unsigned int)ps);
		errno = EINVAL;
		return -1;
	}
	cma_lock();
	err = cma_devs_init();
	if (err) {
		cma_unlock();
		errno = -err;
		return -1;
	}
	c = cma_id_new((struct cma_channel *)channel, context, ps, qpt);
	cma_unlock();
	if (!c)
		return -1;
	*id = &c->id;
	return 0;
}

/* ---- devices and agents ----------------------------------------------------- */
int cma_id_hold_agent(struct cma_id *id, int i)
{
	struct cma_dev *d = cma_dev_list[i];
	struct cma_agent *a;
	int err;

	if (id->agents & (1u << i))
		return 0;
	err = cma_agent_get(d, &a);
	if (err)
		return err;
	d->agent = a;
	d->refs++;
	id->agents |= 1u << i;
	return 0;
}

static void release_agents(struct cma_id *id)
{
	for (int i = 0; i < cma_ndevs; i++) {
		struct cma_dev *d = cma_dev_list[i];

		if (!(id->agents & (1u << i)))
			continue;
		id->agents &= ~(1u << i);
		d->refs--;
		if (!d->refs) {
			struct cma_agent *a = d->agent;

			d->agent = NULL;
			cma_agent_put(a);	/* may drop the lock to join */
		} else {
			cma_agent_put(d->agent);
		}
	}
}

int cma_id_attach(struct cma_id *id, struct cma_dev *dev)
{
	int err = cma_id_hold_agent(id, cma_dev_index(dev));

	if (err)
		return err;
	id->dev = dev;
	id->id.verbs = dev->verbs;
	id->id.port_num = dev->port_num;
	/* rdma-core's librdmacm gives every id on a device the device's PD (ucma_get_device);
	 * UCX's rdmacm CM makes its dummy UD QP on id->pd (w-tools) */
	if (!dev->pd)
		dev->pd = ibv_alloc_pd(dev->verbs);
	if (!id->id.pd)
		id->id.pd = dev->pd;
	return 0;
}

/* ---- destroy ------------------------------------------------------------------ */
static void unlink_id(struct cma_id *id)
{
	for (struct cma_id **pp = &cma_ids; *pp; pp = &(*pp)->next)
		if (*pp == id) {
			*pp = id->next;
			return;
		}
}

/* Undo cma_id_new for an id that no event has shown yet. */
void cma_id_free_unseen(struct cma_id *n)
{
	unlink_id(n);
	n->chan->nids--;
	if (n->chan->sync)
		cma_channel_free(n->chan);
	pthread_cond_destroy(&n->acked);
	free(n);
}

struct cma_id *cma_id_new_request(struct cma_dev *dev, struct cma_id *l)
{
	struct cma_channel *ch = NULL;
	struct cma_id *n;

	if (l->chan->sync) {
		ch = cma_channel_new(true);
		if (!ch)
			return NULL;
	}
	n = cma_id_new(ch ? ch : l->chan, l->id.context, l->id.ps, l->id.qp_type);
	if (!n) {
		if (ch)
			cma_channel_free(ch);
		return NULL;
	}
	if (cma_id_attach(n, dev)) {
		cma_log("connection request on %s: no CM agent for its new id",
			ibv_get_device_name(dev->verbs->device));
		cma_id_free_unseen(n);
		return NULL;
	}
	n->listener = l;
	n->child = true;
	n->state = CMA_CONNECT;
	return n;
}

/* end the IB CM record as the kernel does on destroy: DREQ if connected, REJ if
 * still being set up, then forget it (its later events find no id) */
static void drop_conn(struct cma_id *id)
{
	struct blue_ibcm_conn *c = id->conn;
	struct blue_ibcm *cm;

	if (!c || !id->dev || !id->dev->agent) {
		id->conn = NULL;
		return;
	}
	cm = cma_agent_ibcm(id->dev->agent);
	switch (c->state) {
	case BLUE_IBCM_REP_SENT:
	case BLUE_IBCM_MRA_REP_RCVD:
		if (blue__ibcm_established(cm, c))
			break;
		/* now ESTABLISHED */
		__attribute__((fallthrough));
	case BLUE_IBCM_ESTABLISHED:
		blue__ibcm_disconnect(cm, c, cma_now_ns());
		break;
	case BLUE_IBCM_REQ_RCVD:
	case BLUE_IBCM_MRA_REQ_SENT:
	case BLUE_IBCM_REP_RCVD:
	case BLUE_IBCM_MRA_REP_SENT:
		blue__ibcm_reject(cm, c, BLUE_IBCM_REJ_CONSUMER_DEFINED, NULL, 0);
		c = NULL;
		break;
	default:
		break;
	}
	if (c)
		c->user = NULL;
	id->conn = NULL;
	cma_agent_kick(id->dev->agent);
}

/* CONNECT_REQUEST ids of a listener that goes away whose request is still queued (the
 * user never saw them; listener is cleared when the request is handed out): REJ, free */
static void drop_orphans(struct cma_id *l)
{
	struct cma_id *o;

again:
	for (o = cma_ids; o; o = o->next) {
		if (o->listener != l)
			continue;
		o->listener = NULL;
		drop_conn(o);
		cma_flush_events(l->chan, o);
		if (o->chan != l->chan)
			cma_flush_events(o->chan, o);
		unlink_id(o);
		o->chan->nids--;
		if (o->chan->sync && !o->chan->nids)
			cma_channel_free(o->chan);
		release_agents(o);
		pthread_cond_destroy(&o->acked);
		free(o);
		goto again;
	}
}

static bool has_queued(const struct cma_id *id)
{
	for (const struct cma_event *e = id->chan->head; e; e = e->next)
		if (e->owner == id)
			return true;
	return false;
}

/*
 * Our DREQ is out (rdma_disconnect, then at once rdma_destroy_id: rping): give the DREP
 * a bounded while, CMA_LINGER_MS, so the DISCONNECTED it raises reaches a thread reading
 * the channel, as it does over the kernel's CM, whose DREP is back before rping's
 * teardown ends. Lock held (dropped while waiting).
 */
#define CMA_LINGER_MS	1000

static void linger_for_drep(struct cma_id *id)
{
	uint64_t end = cma_now_ns() + CMA_LINGER_MS * 1000000ull;

	while (cma_now_ns() < end) {
		bool drep_due = id->conn && id->conn->state == BLUE_IBCM_DREQ_SENT;
		bool unread = id->chan->waiters && (has_queued(id) || id->events_out);
		struct timespec ts;

		if (!drep_due && !unread)
			return;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 10 * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&id->acked, cma_lock_mutex(), &ts);
	}
}

CMA_EXPORT int rdma_destroy_id(struct rdma_cm_id *uid)
{
	struct cma_id *id = cma_id_of(uid);
	struct cma_channel *ch;
	bool was_listen;

	if (!id) {
		cma_log("rdma_destroy_id: id is NULL");
		errno = EINVAL;
		return -1;
	}
	cma_lock();
	if (id->conn && id->conn->state == BLUE_IBCM_DREQ_SENT)
		linger_for_drep(id);
	was_listen = id->state == CMA_LISTEN;
	id->state = CMA_DESTROYING;
	if (was_listen)
		cma_unlisten(id);	/* w-scale: its port is free again, REQs get REJ 8 */
	drop_conn(id);
	ch = id->chan;
	/* a listener's pending requests die with it */
	drop_orphans(id);
	cma_flush_events(ch, id);
	while (id->events_out)
		pthread_cond_wait(&id->acked, cma_lock_mutex());
	cma_mc_leave_all(id);	/* the kernel's ucma_destroy_id leaves them too */
	unlink_id(id);
	if (id->sync_ev)
		cma_event_free(id->sync_ev);
	ch->nids--;
	if (ch->sync && !ch->nids)
		cma_channel_free(ch);
	release_agents(id);
	cma_unlock();
	pthread_cond_destroy(&id->acked);
	free(id);
	return 0;
}

CMA_EXPORT int rdma_migrate_id(struct rdma_cm_id *uid, struct rdma_event_channel *channel)
{
	struct cma_id *id = cma_id_of(uid);
	struct cma_channel *to = (struct cma_channel *)channel, *from;

	if (!id) {
		cma_log("rdma_migrate_id: id is NULL");
		errno = EINVAL;
		return -1;
	}
	cma_lock();
	from = id->chan;
	if (to == from) {
		cma_unlock();
		return 0;
	}
	if (!to) {
		to = cma_channel_new(true);
		if (!to) {
			cma_unlock();
			return -1;
		}
	}
	/* librdmacm waits for the id's handed-out events to be acked first */
	while (id->events_out)
		pthread_cond_wait(&id->acked, cma_lock_mutex());
	cma_flush_events(from, id);
	from->nids--;
	if (from->sync && !from->nids)
		cma_channel_free(from);
	id->chan = to;
	to->nids++;
	id->id.channel = &to->ch;
	cma_unlock();
	return 0;
}

/* ---- bind ------------------------------------------------------------------------ */
uint16_t cma_sa_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)sa)->sin_port);
	if (sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	return 0;
}

static void set_port(struct sockaddr *sa, uint16_t port)
{
	if (sa->sa_family == AF_INET)
		((struct sockaddr_in *)sa)->sin_port = htons(port);
	else if (sa->sa_family == AF_INET6)
		((struct sockaddr_in6 *)sa)->sin6_port = htons(port);
}

static bool is_any(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr == htonl(INADDR_ANY);
	return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)sa)->sin6_addr);
}

/* 127.0.0.0/8, ::1 or ::ffff:127.x.y.z */
bool cma_is_loopback(const struct sockaddr *sa)
{
	const struct in6_addr *a6;

	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	a6 = &((const struct sockaddr_in6 *)sa)->sin6_addr;
	return IN6_IS_ADDR_LOOPBACK(a6) ||
	       (IN6_IS_ADDR_V4MAPPED(a6) && a6->s6_addr[12] == 127);
}

/* The device a loopback destination resolves on: as the kernel's cma_bind_loopback, the
 * first device whose port is up (blue's is while attached), else the first. */
static struct cma_dev *loopback_dev(void)
{
	for (int i = 0; i < cma_ndevs; i++) {
		struct ibv_port_attr pa;

		if (!ibv_query_port(cma_dev_list[i]->verbs, cma_dev_list[i]->port_num, &pa) &&
		    pa.state == IBV_PORT_ACTIVE)
			return cma_dev_list[i];
	}
	return cma_ndevs ? cma_dev_list[0] : NULL;
}

int cma_attach_loopback(struct cma_id *id)
{
	struct cma_dev *dev = loopback_dev();
	int err;

	if (!dev || dev->gid_v4 < 0)
		return -ENODEV;
	err = cma_id_attach(id, dev);
	if (err)
		return err;
	id->any_dev = false;
	/* the kernel takes the port's GID 0; blue's entry 0 is the link-local RoCE v1
	 * one, which it cannot send from: its IPv4 GID instead */
	memcpy(id->id.route.addr.addr.ibaddr.sgid.raw, dev->gid[dev->gid_v4].raw, 16);
	id->id.route.addr.addr.ibaddr.pkey = htons(0xffff);
	return 0;
}

static size_t sa_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET ? sizeof(struct sockaddr_in) :
					  sizeof(struct sockaddr_in6);
}

static bool same_ip(const struct sockaddr *a, const struct sockaddr *b)
{
	uint8_t ga[16], gb[16];

	cma_addr_gid(a, ga);
	cma_addr_gid(b, gb);
	return !memcmp(ga, gb, 16);
}

/* another id of @ps holds @port on an address that overlaps @sa */
static struct cma_id *port_owner(const struct cma_id *self, const struct sockaddr *sa,
				 uint16_t port)
{
	for (struct cma_id *o = cma_ids; o; o = o->next) {
		const struct sockaddr *osa = &o->id.route.addr.src_addr;

		if (o == self || o->id.ps != self->id.ps || !osa->sa_family ||
		    o->state == CMA_IDLE || o->state == CMA_DESTROYING ||
		    cma_sa_port(osa) != port || o->listener || o->child)
			continue;
		if (is_any(osa) || is_any(sa) || same_ip(osa, sa))
			return o;
	}
	return NULL;
}

static int pick_port(struct cma_id *id, const struct sockaddr *sa, uint16_t *port)
{
	uint32_t r = 0;

	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		r = (uint32_t)cma_now_ns();
	/* the kernel's default ip_local_port_range, 32768..60999 */
	for (unsigned int i = 0; i < 28232; i++) {
		uint16_t p = (uint16_t)(32768 + (r + i) % 28232);

		if (!port_owner(id, sa, p)) {
			*port = p;
			return 0;
		}
	}
	return -EADDRNOTAVAIL;
}

int cma_bind(struct cma_id *id, const struct sockaddr *addr)
{
	struct sockaddr_storage ss;
	struct sockaddr *sa = (struct sockaddr *)&ss;
	struct cma_dev *dev = NULL;
	uint16_t port;
	int err;

	if (addr->sa_family != AF_INET && addr->sa_family != AF_INET6) {
		cma_log("rdma_bind_addr: address family %d: only AF_INET and AF_INET6 (EAFNOSUPPORT)",
			addr->sa_family);
		errno = EAFNOSUPPORT;
		return -1;
	}
	if (id->state != CMA_IDLE) {
		cma_log("rdma_bind_addr: id %p is already bound (EINVAL)", (void *)id);
		errno = EINVAL;
		return -1;
	}
	memset(&ss, 0, sizeof(ss));
	memcpy(&ss, addr, sa_len(addr));
	/* a loopback address binds as the any address does (the kernel's cma_any_addr is
	 * zero or loopback): no device yet, every device's listener */
	if (!is_any(sa) && !cma_is_loopback(sa)) {
		dev = cma_dev_by_addr(sa);
		if (!dev) {
			char buf[INET6_ADDRSTRLEN] = "?";

			inet_ntop(sa->sa_family, sa->sa_family == AF_INET ?
				  (void *)&((struct sockaddr_in *)sa)->sin_addr :
				  (void *)&((struct sockaddr_in6 *)sa)->sin6_addr, buf, sizeof(buf));
			cma_log("rdma_bind_addr: no blue device has address %s (ENODEV)", buf);
			errno = ENODEV;
			return -1;
		}
	}
	port = cma_sa_port(sa);
	if (!port) {
		err = pick_port(id, sa, &port);
		if (err) {
			cma_log("rdma_bind_addr: no free port (EADDRNOTAVAIL)");
			errno = -err;
			return -1;
		}
	} else {
		struct cma_id *o = port_owner(id, sa, port);

		if (o && !(id->reuseaddr && o->reuseaddr && o->state != CMA_LISTEN)) {
			cma_log("rdma_bind_addr: port %u is bound by another id (EADDRINUSE)", port);
			errno = EADDRINUSE;
			return -1;
		}
	}
	set_port(sa, port);
	if (dev) {
		err = cma_id_attach(id, dev);
		if (err) {
			errno = -err;
			return -1;
		}
	} else {
		id->any_dev = true;
	}
	memcpy(&id->id.route.addr.src_storage, &ss, sizeof(ss));
	if (dev) {
		uint8_t g[16];

		cma_addr_gid(sa, g);
		memcpy(id->id.route.addr.addr.ibaddr.sgid.raw, g, 16);
		id->id.route.addr.addr.ibaddr.pkey = htons(0xffff);
	}
	id->state = CMA_ADDR_BOUND;
	return 0;
}

CMA_EXPORT int rdma_bind_addr(struct rdma_cm_id *uid, struct sockaddr *addr)
{
	struct cma_id *id = cma_id_of(uid);
	int ret;

	if (!id || !addr) {
		cma_log("rdma_bind_addr: %s is NULL (EINVAL)", id ? "addr" : "id");
		errno = EINVAL;
		return -1;
	}
	cma_lock();
	ret = cma_bind(id, addr);
	cma_unlock();
	return ret;
}
