/* SPDX-License-Identifier: MIT */
/*
 * librdmacm.so.1 over blue (issue 16): what the files of compat/rdmacm/ share.
 *
 * Layers (ARCHITECTURE.md; arrows point down):
 *   the rdma_cm API        compat/rdmacm/{channel,id,addr,conn,qp,ep,ud,dev,info,opt}.c
 *        |  (struct cma_id, events on struct cma_channel)
 *   the CM agent           compat/rdmacm/agent.c: per device, QP1 (the GSI, a UD QP
 *        |                 with QPN 1) + the IB CM state machine + its thread
 *   IB CM core             runtime/ibcm.c over runtime/cm_mad.c (pure, transport-free)
 *   verbs                  our libibverbs.so.1 (compat/), called through ibv_* only
 *
 * librdmacm.so.1 links libblue.a only for the pure objects it needs (ibcm, cm_mad,
 * log); every QP, CQ, PD, AH and MR it touches is made through ibv_* calls into our
 * libibverbs.so.1, so it shares the process's one engine per device with the
 * application. Never call blue_* (libblue's API) from here: that would be a second,
 * private copy of libblue.
 *
 * Locking: one mutex for all of librdmacm (cma_lock/cma_unlock), held by every API call
 * and by each agent thread while it runs the IB CM (so IB CM events reach
 * cma_ibcm_event with it held). Nothing blocks with it held except bounded verbs calls
 * (an AH's neighbour resolution); waiting for an event (rdma_get_cm_event, a
 * synchronous id's call) is done without it, on the channel's condition variable.
 *
 * Process model: a device's engine binds its netdev queue's AF_XDP socket, which serves
 * one process (compat.h), so one process per device runs rdma_cm, and it owns QP1 there.
 */
#ifndef BLUE_COMPAT_RDMACM_CMA_H
#define BLUE_COMPAT_RDMACM_CMA_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>
#include <infiniband/verbs.h>

#include "runtime/ibcm.h"
#include "runtime/log.h"

#define CMA_EXPORT __attribute__((visibility("default")))
#define CMA_HIDDEN __attribute__((visibility("hidden")))

/* librdmacm's messages go through libblue's logger ("libblue: rdma_cm: ..."). */
#define cma_log(...) blue__logf("rdma_cm: " __VA_ARGS__)

/* The GSI (IBA 13.4, 13.5.1): QP1, Q_Key 0x80010000, P_Key index 0 (0xffff). */
#define CMA_GSI_QPN		1u
#define CMA_GSI_QKEY		0x80010000u
/* rdma_cm's RDMA_UDP_QKEY (rdma-core's cma.h, the kernel's RDMA_UDP_QKEY). */
#define CMA_UDP_QKEY		0x01234567u
#define CMA_MAX_DEVICES		32

struct cma_agent;

/* One verbs device as rdma_cm sees it (rdma_get_devices() hands out .verbs). */
struct cma_dev {
	struct ibv_context	*verbs;		/* opened at first use of librdmacm */
	uint64_t		guid;		/* node GUID, network order as ibverbs gives */
	uint8_t			port_num;	/* always 1 */
	int			gid_v4;		/* index of the ::ffff:a.b.c.d GID, -1 none */
	/* the CM agent's own GID, what a path names when the connection's is not known:
	 * the IPv4 one, else the first global IPv6 one (an IPv6-only netdev); -1 none */
	int			gid_cm;
	union ibv_gid		gid[16];	/* the port's GID table, read at open */
	int			ngid;
	enum ibv_mtu		active_mtu;
	struct cma_agent	*agent;		/* QP1 and the IB CM, made on first need */
	unsigned int		refs;		/* ids bound to it (the agent is dropped at 0) */
	/* added by w-cma: the PD rdma_create_qp uses when given none (librdmacm keeps one
	 * per device too), and the limits rdma_connect/accept clamp to */
	struct ibv_pd		*pd;
	int			max_qp_rd_atom, max_qp_init_rd_atom;
};

/* added by w-cma: every device, opened by cma_devs_init (dev.c), under the lock */
extern struct cma_dev *cma_dev_list[CMA_MAX_DEVICES] CMA_HIDDEN;
extern int cma_ndevs CMA_HIDDEN;

/* The kernel's enum rdma_cm_state (drivers/infiniband/core/cma_priv.h), same order. */
enum cma_state {
	CMA_IDLE,
	CMA_ADDR_QUERY,
	CMA_ADDR_RESOLVED,
	CMA_ROUTE_QUERY,
	CMA_ROUTE_RESOLVED,
	CMA_CONNECT,
	CMA_DISCONNECT,
	CMA_ADDR_BOUND,
	CMA_LISTEN,
	CMA_DEVICE_REMOVAL,
	CMA_DESTROYING,
	CMA_ESTABLISHED,	/* rdma-core's userspace adds no state; ours, for clarity */
};

/* A group an id joined (mcast.c), on its list until it leaves or is destroyed. */
struct cma_mc {
	struct cma_mc		*next;
	union {
		struct sockaddr		sa;
		struct sockaddr_in	in;
		struct sockaddr_in6	in6;
	} addr;				/* as joined */
	union ibv_gid		mgid;		/* the group as a GID */
	void			*context;	/* the join's: the event's private_data */
	bool			send_only;	/* RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER */
	bool			attached;	/* the id's QP is attached (at the JOIN's hand-out) */
	unsigned int		events_out;	/* its events handed out, not yet acked */
};

/* One queued event: the user's struct rdma_cm_event first, its private data after. */
struct cma_event {
	struct rdma_cm_event	ev;
	struct cma_event	*next;
	struct cma_id		*owner;		/* ev.id, or for CONNECT_REQUEST the new id */
	struct cma_mc		*mc;		/* MULTICAST_JOIN/ERROR: the group's record */
	uint8_t			priv[256];	/* copied private data (ev.param.*.private_data) */
};

/*
 * An event channel. .ch.fd is readable while events are queued (an eventfd counting
 * them), so a program may poll() it, as it polls the kernel's rdma_cm fd.
 */
struct cma_channel {
	struct rdma_event_channel ch;		/* first: the user's pointer */
	struct cma_event	*head, *tail;	/* not yet handed out by get_cm_event */
	pthread_cond_t		cond;		/* signalled when an event is queued */
	unsigned int		nids;		/* ids on it (destroy refuses while > 0) */
	bool			sync;		/* made for one synchronous id */
	/* added by w-cma: threads inside rdma_get_cm_event; a channel destroyed under
	 * them is closed but kept (they go on waiting, as a read() of the kernel's closed
	 * fd does: rping destroys it while its CM thread waits) */
	unsigned int		waiters;
	bool			dead;
};

/* An rdma_cm_id: what the user holds is &cma_id.id. */
struct cma_id {
	struct rdma_cm_id	id;		/* first */
	enum cma_state		state;
	struct cma_dev		*dev;		/* after bind/resolve_addr (id.verbs = dev->verbs) */
	struct cma_channel	*chan;		/* id.channel's; a synchronous id's own */
	struct blue_ibcm_conn	*conn;		/* the IB CM record, while it exists */
	struct cma_id		*listener;	/* a CONNECT_REQUEST id: its listener */
	struct cma_id		*next;		/* on the list of all ids (cma_ids) */
	uint64_t		service_id;	/* ps << 16 | port, once bound or resolving */
	int			backlog;
	unsigned int		events_out;	/* handed out, not yet acked */
	pthread_cond_t		acked;		/* destroy waits for events_out == 0 */
	/* rdma_set_option */
	uint8_t			tos;
	bool			tos_set;
	uint8_t			ack_timeout;	/* 0: the kernel's default (CMA_IBOE_PACKET_LIFETIME + 1) */
	bool			reuseaddr;
	bool			afonly;
	/* the connection's parameters, as the REQ/REP carried them */
	uint32_t		remote_qpn;
	uint32_t		remote_qkey;	/* UD: from the SIDR_REP */
	uint32_t		local_psn;
	uint8_t			responder_resources;
	uint8_t			initiator_depth;
	uint8_t			retry_count;
	uint8_t			rnr_retry_count;
	struct ibv_sa_path_rec	path;		/* id.route.path_rec points here */
	/* rdma_create_ep / rdma_get_request: the ep owns what it made */
	bool			ep_owns_pd, ep_owns_cqs;
	struct cma_id		*req_queue;	/* rdma_get_request's pending ids (a listener) */
	/* added by w-cma */
	bool			any_dev;	/* bound to INADDR_ANY: listens on every device */
	bool			child;		/* made by a CONNECT_REQUEST: shares its listener's port */
	uint32_t		agents;		/* bit i: holds a ref on cma_dev_list[i]'s agent */
	struct cma_event	*sync_ev;	/* a synchronous id's last event (id.event) */
	bool			ep_qp;		/* rdma_create_ep: ep_init is the QP to make */
	struct ibv_qp_init_attr	ep_init;	/* for rdma_get_request's new ids */
	struct ibv_pd		*ep_pd;
	/* added by w-scale: REQs a listener dropped, its backlog full (conn.c) */
	unsigned long		backlog_drops;
	struct cma_mc		*mcs;		/* groups joined (mcast.c) */
};

static inline struct cma_id *cma_id_of(struct rdma_cm_id *id)
{
	return (struct cma_id *)id;
}

/* ---- locking and time (id.c) ---------------------------------------------- */
void cma_lock(void) CMA_HIDDEN;
void cma_unlock(void) CMA_HIDDEN;
/* added by w-cma: the lock's mutex, for the condition variables that wait with it
 * dropped (rdma_get_cm_event, a synchronous call, destroy waiting for acks) */
pthread_mutex_t *cma_lock_mutex(void) CMA_HIDDEN;
/* CLOCK_MONOTONIC nanoseconds: the IB CM's clock */
uint64_t cma_now_ns(void) CMA_HIDDEN;
/* every live id, under the lock */
extern struct cma_id *cma_ids CMA_HIDDEN;

/* ---- devices (dev.c) ------------------------------------------------------- */
/* open every verbs device once (idempotent); 0 or -errno. Under the lock. */
int cma_devs_init(void) CMA_HIDDEN;
/* the device whose GID table holds @addr's IP (IPv4-mapped for AF_INET), or NULL */
struct cma_dev *cma_dev_by_addr(const struct sockaddr *addr) CMA_HIDDEN;
struct cma_dev *cma_dev_by_verbs(const struct ibv_context *verbs) CMA_HIDDEN;
/* @addr as a GID: ::ffff:a.b.c.d for AF_INET, the address for AF_INET6 */
void cma_addr_gid(const struct sockaddr *addr, uint8_t gid[16]) CMA_HIDDEN;
/* added by w-tools: a loopback address (127/8, ::1, ::ffff:127.x.y.z): it binds as the
 * any address does (the kernel's cma_any_addr), and a loopback destination resolves on
 * the first device to itself (cma_resolve_loopback): cma_attach_loopback attaches @id
 * there, 0 or -errno. libfabric's verbs provider binds "localhost" when given no node. */
bool cma_is_loopback(const struct sockaddr *sa) CMA_HIDDEN;
int cma_attach_loopback(struct cma_id *id) CMA_HIDDEN;
/* the GID index of @gid on @dev, or -1 */
int cma_dev_gid_index(const struct cma_dev *dev, const uint8_t gid[16]) CMA_HIDDEN;
/* @d's first @len (at most 16) GIDs into d->gid, d->ngid, d->gid_v4, d->gid_cm
 * (dev_gids.c) */
void cma_dev_read_gids(struct cma_dev *d, int len) CMA_HIDDEN;

/* ---- events (channel.c) ---------------------------------------------------- */
/*
 * Queue an event for @owner on its channel (under the lock). @listen_id is the listener
 * for CONNECT_REQUEST, else NULL; (w-cma) with a listener the event goes on the
 * listener's channel, where the user waits for it. @priv/@len are copied (at most 256 bytes). Returns the
 * event so the caller may fill ev.param (conn or ud; private_data is already set to the
 * copy) before it unlocks; the reader sees it only after the lock is dropped.
 */
struct cma_event *cma_post_event(struct cma_id *owner, struct cma_id *listen_id,
				 enum rdma_cm_event_type type, int status,
				 const void *priv, size_t len) CMA_HIDDEN;
/* A synchronous id's call: wait (lock dropped meanwhile) for its next event, which it
 * consumes; 0 and *@out (free with cma_event_free), or -errno. Under the lock. */
int cma_sync_wait(struct cma_id *id, struct cma_event **out) CMA_HIDDEN;
void cma_event_free(struct cma_event *e) CMA_HIDDEN;
/* remove and free @id's queued events (destroy_id, migrate_id) */
void cma_flush_events(struct cma_channel *ch, struct cma_id *id) CMA_HIDDEN;
/* the same for the queued events of group record @mc (rdma_leave_multicast) */
void cma_flush_mc_events(struct cma_channel *ch, const struct cma_mc *mc) CMA_HIDDEN;
/* added by w-cma: librdmacm's ucma_complete. For a synchronous id, wait for its next
 * event, keep it as id.event (the previous one is freed) and turn its status into the
 * call's result: 0, or -1 with errno (ECONNREFUSED for REJECTED). 0 at once for an id on
 * a user's channel. Under the lock. */
int cma_sync_complete(struct cma_id *id) CMA_HIDDEN;
/* a new channel (sync: for one synchronous id), or NULL with errno. Under the lock. */
struct cma_channel *cma_channel_new(bool sync) CMA_HIDDEN;
void cma_channel_free(struct cma_channel *ch) CMA_HIDDEN;

/* ---- ids and devices (id.c, added by w-cma) -------------------------------- */
/* take a reference on cma_dev_list[@i]'s agent for @id (once per device) */
int cma_id_hold_agent(struct cma_id *id, int i) CMA_HIDDEN;
/* @id bound to @dev: id.verbs, port 1, the agent held */
int cma_id_attach(struct cma_id *id, struct cma_dev *dev) CMA_HIDDEN;
/* a new id on @ch (NULL: synchronous), linked on cma_ids; NULL with errno */
struct cma_id *cma_id_new(struct cma_channel *ch, void *ctx, enum rdma_port_space ps,
			  enum ibv_qp_type qpt) CMA_HIDDEN;
/* rdma_reject and rdma_reject_ece (conn.c): a REJ with @reason and private data for
 * @uid's connection request (a SIDR_REP refusal for a UD id); 0 or -1 with errno, the
 * refusal logged as @who. Takes the lock. */
int cma_reject(struct rdma_cm_id *uid, uint16_t reason, const void *data, uint8_t len,
	       const char *who) CMA_HIDDEN;
/* the id of a connection request (REQ or SIDR_REQ) at listener @l on @dev: on l's
 * channel (a synchronous listener's requests get a synchronous channel each, as
 * rdma_get_request hands them out), with l's context, port space and QP type, attached
 * to @dev, a child of @l, state CONNECT; NULL on failure. cma_id_free_unseen undoes it
 * while no event has shown the id. */
struct cma_id *cma_id_new_request(struct cma_dev *dev, struct cma_id *l) CMA_HIDDEN;
void cma_id_free_unseen(struct cma_id *n) CMA_HIDDEN;
/* the index of @dev in cma_dev_list */
int cma_dev_index(const struct cma_dev *dev) CMA_HIDDEN;
/* bind @id to @addr (port 0: an ephemeral one); 0 or -1 with errno */
int cma_bind(struct cma_id *id, const struct sockaddr *addr) CMA_HIDDEN;
/* the port in a sockaddr_in/in6, host order */
uint16_t cma_sa_port(const struct sockaddr *sa) CMA_HIDDEN;
/* RC QP state steps (qp.c): move @id's QP to RTR then RTS; 0 or -errno */
int cma_qp_to_rts(struct cma_id *id) CMA_HIDDEN;
int cma_qp_to_err(struct cma_id *id) CMA_HIDDEN;
/* @id's QP from @a (qp.c): PD the device's if none, CQs made if none, moved to INIT (UD
 * to RTS); 0 or -errno with a line logged. Under the lock. */
int cma_qp_create(struct cma_id *id, struct ibv_qp_init_attr_ex *a) CMA_HIDDEN;

/* ---- the IB CM's events, from the agent (conn.c, ud.c) -------------------- */
/* Called by the agent with the lock held, for every blue_ibcm event of its device. */
void cma_ibcm_event(struct cma_dev *dev, struct blue_ibcm_conn *conn,
		    enum blue_ibcm_event type, const struct blue_ibcm_msg *msg) CMA_HIDDEN;

/* ---- UD ids: SIDR (ud.c), called by conn.c for ids of qp_type IBV_QPT_UD ----- */
/* rdma_connect on a UD id: a SIDR_REQ to the resolved peer (RDMA_PS_UDP/PS_IB) */
int cma_sidr_connect(struct cma_id *id, const struct rdma_conn_param *param) CMA_HIDDEN;
/* rdma_accept / rdma_reject on a UD CONNECT_REQUEST id: the SIDR_REP (status 0 with
 * the QP's QPN and Q_Key, or a reject status with private data) */
int cma_sidr_accept(struct cma_id *id, const struct rdma_conn_param *param) CMA_HIDDEN;
int cma_sidr_reject(struct cma_id *id, const void *priv, uint8_t len) CMA_HIDDEN;
/* the SIDR_* IB CM events, forwarded by cma_ibcm_event, and TIMEOUT for a record in
 * BLUE_IBCM_SIDR_REQ_SENT (w-ud: a SIDR_REQ unanswered raises UNREACHABLE -ETIMEDOUT;
 * the record is still in that state when the event is raised) */
void cma_sidr_event(struct cma_dev *dev, struct blue_ibcm_conn *conn,
		    enum blue_ibcm_event type, const struct blue_ibcm_msg *msg) CMA_HIDDEN;
/* added by w-scale: a listener being destroyed (state no longer CMA_LISTEN) gives its
 * service back to each device's IB CM that no other listener serves it on (conn.c);
 * rdma_destroy_id calls it before it drops the agents. Under the lock. */
void cma_unlisten(struct cma_id *id) CMA_HIDDEN;
/* a listener for @service_id on @dev (conn.c), or NULL */
struct cma_id *cma_find_listener(struct cma_dev *dev, uint64_t service_id) CMA_HIDDEN;

/* ---- multicast (mcast.c) --------------------------------------------------- */
/* a group's event is being handed out (rdma_get_cm_event, a synchronous wait): a JOIN
 * attaches the id's QP to the group, or becomes MULTICAST_ERROR. Under the lock. */
void cma_mc_join_taken(struct cma_event *e) CMA_HIDDEN;
/* rdma_destroy_id: leave every group of @id (detach, free); its events are gone. */
void cma_mc_leave_all(struct cma_id *id) CMA_HIDDEN;

#endif
