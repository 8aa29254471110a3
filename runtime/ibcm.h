/* SPDX-License-Identifier: MIT */
/*
 * The IB CM connection state machine (IBA vol. 1 ch. 12.9) over the MAD codec of
 * runtime/cm_mad.h: pure and transport-free. A CM endpoint (struct blue_ibcm) owns a
 * fixed table of connection records (struct blue_ibcm_conn) and is driven by three
 * inputs only:
 *   - blue__ibcm_rx(): a MAD that arrived on QP1,
 *   - blue__ibcm_tick(): the clock (retransmissions, timeouts, the end of TIMEWAIT),
 *   - the API calls: listen, connect, accept, reject, send_mra, send_rtu, established,
 *     disconnect.
 * It answers through an ops table: send() a 256-byte MAD to a peer, and event() to the
 * consumer (rdma_cm's role). Time is the caller's nanoseconds, never read here, so the
 * unit tests run two endpoints with a fake clock.
 *
 * States are the kernel's (ib_cm_state in include/rdma/ib_cm.h, IBA 12.9).
 * What this file chose where the spec leaves it to the CM's user:
 *   - RTU: the active side gets REP_RECEIVED in REP_RCVD and sends the RTU itself with
 *     blue__ibcm_send_rtu() once its QP is in RTS (as rdma_cm does: cma_rep_recv moves
 *     the QP to RTR and RTS, then ib_send_cm_rtu). It raises no ESTABLISHED of its own.
 *   - The passive side raises ESTABLISHED on the RTU, or when the next layer sees the
 *     first packet on the QP and calls blue__ibcm_established() (IBA 12.9: "RTU or
 *     communication established"; the kernel's IB_EVENT_COMM_EST).
 *   - DREQ received: the DREP is sent at once (the kernel lets the consumer call
 *     ib_send_cm_drep; rdma_cm does it at once too), then DISCONNECTED, then TIMEWAIT.
 *   - Records end after REJECTED, TIMEOUT (not after DREQ) and TIMEWAIT_EXIT: the event
 *     callback is the last use of the conn pointer. A REJ sent or received resets the
 *     record to IDLE (freed) without TIMEWAIT (the kernel's cm_reset_to_idle for most
 *     states).
 *   - SIDR (IBA 12.11, rdma_cm's UDP port space): a record per request, in SIDR_REQ_SENT
 *     (timed and retried like a REQ, TIMEOUT at the end) or SIDR_REQ_RCVD; a SIDR_REQ
 *     for an unlistened service is answered with status 1 (service ID not supported).
 * Left out (see ibcm.c's head): LAP/APR, stale connection detection beyond
 * duplicate REQs, the REQ ARI/redirects, CM ClassPortInfo.
 */
#ifndef BLUE_RUNTIME_IBCM_H
#define BLUE_RUNTIME_IBCM_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/cm_mad.h"

/* A CM peer: its GID (::ffff:a.b.c.d for IPv4, RoCEv2 annex A17.4.1) and its GSI QP. */
struct blue_ibcm_addr {
	uint8_t		gid[16];
	uint32_t	qpn;		/* always BLUE_IBCM_GSI_QPN */
};

/* IBA 12.9 / the kernel's enum ib_cm_state (LAP states left out). */
enum blue_ibcm_state {
	BLUE_IBCM_IDLE = 0,		/* a free record */
	BLUE_IBCM_REQ_SENT,
	BLUE_IBCM_REQ_RCVD,
	BLUE_IBCM_MRA_REQ_SENT,
	BLUE_IBCM_MRA_REQ_RCVD,
	BLUE_IBCM_REP_SENT,
	BLUE_IBCM_REP_RCVD,
	BLUE_IBCM_MRA_REP_SENT,
	BLUE_IBCM_MRA_REP_RCVD,
	BLUE_IBCM_ESTABLISHED,
	BLUE_IBCM_DREQ_SENT,
	BLUE_IBCM_DREQ_RCVD,
	BLUE_IBCM_TIMEWAIT,
	BLUE_IBCM_SIDR_REQ_SENT,	/* IBA 12.11: a SIDR_REQ out, waiting for the SIDR_REP */
	BLUE_IBCM_SIDR_REQ_RCVD,	/* a SIDR_REQ in, the consumer owes the SIDR_REP */
	BLUE_IBCM_STATE_MAX,
};

enum blue_ibcm_event {
	BLUE_IBCM_EV_REQ_RECEIVED = 0,	/* listener got a REQ: new conn in REQ_RCVD */
	BLUE_IBCM_EV_REP_RECEIVED,	/* active: REP in, send the RTU when the QP is in RTS */
	BLUE_IBCM_EV_ESTABLISHED,	/* passive: RTU in, or blue__ibcm_established() */
	BLUE_IBCM_EV_REJECTED,		/* REJ in (msg->rej: reason, private data); conn ends */
	BLUE_IBCM_EV_TIMEOUT,		/* REQ or REP unanswered after max CM retries; ends */
	BLUE_IBCM_EV_DISCONNECTED,	/* DREQ in, or DREP in / DREQ timed out: TIMEWAIT */
	BLUE_IBCM_EV_TIMEWAIT_EXIT,	/* TIMEWAIT over: the conn ends */
	BLUE_IBCM_EV_SIDR_REQ_RECEIVED,	/* listener got a SIDR_REQ: answer blue__ibcm_sidr_reply */
	BLUE_IBCM_EV_SIDR_REP_RECEIVED,	/* msg->sidr_rep (status, QPN, Q_Key); the conn ends */
	BLUE_IBCM_EV_MAX,
};

struct blue_ibcm;
struct blue_ibcm_conn;

struct blue_ibcm_ops {
	/* hand one MAD to QP1 for @to; a non-zero return counts as a send error only */
	int	(*send)(void *ctx, const uint8_t mad[BLUE_IBCM_MAD_SIZE],
			const struct blue_ibcm_addr *to);
	/* @msg is the decoded MAD that caused the event, NULL for a timer or an API call */
	void	(*event)(void *ctx, struct blue_ibcm_conn *conn, enum blue_ibcm_event type,
			 const struct blue_ibcm_msg *msg);
};

struct blue_ibcm_cfg {
	struct blue_ibcm_ops	ops;
	void			*ctx;
	uint8_t			local_gid[16];
	uint64_t		local_ca_guid;
	unsigned int		max_conns;	/* 0: 64 */
	uint8_t			cm_response_timeout;	/* 0: 20 (CMA_CM_RESPONSE_TIMEOUT) */
	uint8_t			max_cm_retries;		/* 0: 15 (CMA_MAX_CM_RETRIES) */
	uint64_t		timewait_ns;	/* 0: one response timeout */
	uint32_t		seed;		/* mixes the local comm IDs */
	uint8_t			id_prefix;	/* non-zero: every local comm ID's top byte
						 * (blue-manager's shared GSI, gsi_hub.h) */
};

/* Drops and work, per endpoint. */
struct blue_ibcm_stats {
	uint64_t	rx;			/* MADs handed to blue__ibcm_rx */
	uint64_t	tx;			/* MADs handed to ops.send */
	uint64_t	tx_err;			/* ops.send returned non-zero */
	uint64_t	decode[BLUE_IBCM_ERR_MAX];	/* refused by the codec, per reason */
	uint64_t	no_conn;		/* no record for the comm IDs */
	uint64_t	wrong_state;		/* a record, but not in a state for this MAD */
	uint64_t	unhandled;		/* LAP, APR: not implemented here */
	uint64_t	dup_req;		/* REQ again for a passive record */
	uint64_t	no_listener;		/* REQ for an unlistened service: REJ 8 */
	uint64_t	stale_conn;		/* REQ of a connection in TIMEWAIT, or of a
						 * QPN a live record holds: REJ 10 */
	uint64_t	table_full;		/* REQ with no free record: REJ 3 */
	uint64_t	req_dropped;		/* w-scale: REQs forgotten, blue__ibcm_drop_req */
	uint64_t	retransmits;
	uint64_t	timeouts;
};

/* One connection. The fields are for reading; only the user pointer is the caller's. */
struct blue_ibcm_conn {
	enum blue_ibcm_state	state;
	void			*user;
	struct blue_ibcm_addr	peer;
	uint64_t		service_id;
	uint32_t		local_comm_id;
	uint32_t		remote_comm_id;
	uint64_t		remote_ca_guid;
	uint64_t		tid;		/* of the REQ (replies) or of our DREQ */
	int			passive;
	/* ours, as sent in the REQ or REP (local_psn: our receive queue's first PSN; the
	 * peer's remote_psn is where our send queue starts, cm_mad.h) */
	uint32_t		local_qpn;
	uint32_t		local_psn;
	/* the peer's, as received; responder resources / initiator depth already swapped
	 * to what this side's QP must use (IBA 12.6.5, 12.6.8) */
	uint32_t		remote_qpn;
	uint32_t		remote_psn;
	uint8_t			responder_resources;
	uint8_t			initiator_depth;
	uint8_t			path_mtu;
	uint8_t			retry_count;
	uint8_t			rnr_retry_count;
	/* timer: 0 = none; retries counts retransmissions of the MAD in @last */
	uint64_t		deadline_ns;
	uint64_t		wait_ns;
	unsigned int		retries;
	uint8_t			last[BLUE_IBCM_MAD_SIZE];	/* last MAD sent: re-sent as is */
	uint16_t		last_attr;
};

/* What the active side asks for (the REQ, IBA 12.6.5). */
struct blue_ibcm_conn_param {
	struct blue_ibcm_addr	peer;
	/* the GID this connection is sent from (an IPv6 connection: an IPv6 GID); all
	 * zero: the endpoint's cfg.local_gid */
	uint8_t			local_gid[16];
	uint64_t		service_id;
	uint32_t		local_qpn;
	uint32_t		starting_psn;
	uint8_t			responder_resources;
	uint8_t			initiator_depth;
	uint8_t			path_mtu;		/* IB code, 3 = 1024 */
	uint8_t			retry_count;		/* 3 bits */
	uint8_t			rnr_retry_count;	/* 3 bits */
	const void		*private_data;
	size_t			private_data_len;	/* <= 92 */
	void			*user;
};

/* What the passive side answers (the REP, IBA 12.6.8). */
struct blue_ibcm_rep_param {
	uint32_t		local_qpn;
	uint32_t		starting_psn;
	uint8_t			responder_resources;
	uint8_t			initiator_depth;
	uint8_t			rnr_retry_count;
	const void		*private_data;
	size_t			private_data_len;	/* <= 196 */
};

/**
 * blue__ibcm_create() - a CM endpoint.
 * Return: the endpoint, or NULL with errno set (EINVAL without ops, ENOMEM).
 */
struct blue_ibcm *blue__ibcm_create(const struct blue_ibcm_cfg *cfg) BLUE_HIDDEN_IBCM;

/** blue__ibcm_destroy() - free @cm and every record, sending nothing. */
void blue__ibcm_destroy(struct blue_ibcm *cm) BLUE_HIDDEN_IBCM;

/** blue__ibcm_stats() - the endpoint's counters. */
const struct blue_ibcm_stats *blue__ibcm_stats(const struct blue_ibcm *cm) BLUE_HIDDEN_IBCM;

/** blue__ibcm_conn_count() - records not IDLE. */
unsigned int blue__ibcm_conn_count(const struct blue_ibcm *cm) BLUE_HIDDEN_IBCM;

/**
 * blue__ibcm_listen() - accept REQs for @service_id (exact match).
 * Return: 0, -EADDRINUSE if already listened, -ENOSPC if the listen table is full.
 */
int blue__ibcm_listen(struct blue_ibcm *cm, uint64_t service_id) BLUE_HIDDEN_IBCM;

/**
 * blue__ibcm_unlisten() - stop accepting REQs and SIDR_REQs for @service_id (w-scale):
 * a later REQ for it gets REJ 8 (invalid service ID), a SIDR_REQ status 1, as for a
 * service never listened. Records already made for it are not touched (they belong to
 * their connections now).
 * Return: 0, -ENOENT if @service_id is not listened.
 */
int blue__ibcm_unlisten(struct blue_ibcm *cm, uint64_t service_id) BLUE_HIDDEN_IBCM;

/**
 * blue__ibcm_connect() - send a REQ (IBA 12.9 IDLE -> REQ_SENT) and arm its timer.
 * Return: the new record, or NULL with errno (EINVAL for a field wider than its wire
 * field, EMSGSIZE for private data over 92 bytes, ENOSPC if the table is full).
 */
struct blue_ibcm_conn *blue__ibcm_connect(struct blue_ibcm *cm,
					  const struct blue_ibcm_conn_param *p,
					  uint64_t now_ns) BLUE_HIDDEN_IBCM;

/**
 * blue__ibcm_accept() - send the REP for a received REQ (REQ_RCVD or MRA_REQ_SENT ->
 * REP_SENT) and wait for the RTU.
 * Return: 0, -EINVAL (wrong state, a field too wide, private data too long).
 */
int blue__ibcm_accept(struct blue_ibcm *cm, struct blue_ibcm_conn *conn,
		      const struct blue_ibcm_rep_param *p, uint64_t now_ns) BLUE_HIDDEN_IBCM;

/**
 * blue__ibcm_reject() - send a REJ for the REQ or REP this side holds (REQ_RCVD,
 * MRA_REQ_SENT, REP_RCVD, MRA_REP_SENT) and free the record. No event is raised.
 * Return: 0, -EINVAL (wrong state, private data over 148 bytes).
 */
int blue__ibcm_reject(struct blue_ibcm *cm, struct blue_ibcm_conn *conn, uint16_t reason,
		      const void *private_data, size_t len) BLUE_HIDDEN_IBCM;

/**
 * blue__ibcm_drop_req() - forget a received REQ without answering it (REQ_RCVD -> IDLE,
 * nothing sent, no event; w-scale): the kernel's cm_reset_to_idle for a REQ its
 * consumer could not queue (rdma_cm's listen backlog full, -ENOMEM: "do not reject to
 * allow future retries"). The peer's next retransmission of the REQ is a new REQ.
 * Return: 0, -EINVAL in another state.
 */
int blue__ibcm_drop_req(struct blue_ibcm *cm, struct blue_ibcm_conn *conn) BLUE_HIDDEN_IBCM;

/*
 * With this bit in @service_timeout, blue__ibcm_send_mra() enters MRA_REQ_SENT /
 * MRA_REP_SENT and keeps the MRA without sending it; it goes out only when the peer
 * repeats its REQ or REP (the kernel's IB_CM_MRA_FLAG_DELAY: rdma_cm arms one with
 * CMA_CM_MRA_SETTING, flag | 24, for every connect request it hands its user).
 */
#define BLUE_IBCM_MRA_DELAY	0x80

/**
 * blue__ibcm_send_mra() - tell the peer to wait @service_timeout (4.096 us * 2^t, the
 * low 5 bits) more for our REP (in REQ_RCVD) or RTU (in REP_RCVD) (IBA 12.6.6); with
 * BLUE_IBCM_MRA_DELAY, only once the peer repeats itself.
 * Return: 0, -EINVAL in another state.
 */
int blue__ibcm_send_mra(struct blue_ibcm *cm, struct blue_ibcm_conn *conn,
			uint8_t service_timeout) BLUE_HIDDEN_IBCM;

/**
 * blue__ibcm_send_rtu() - active side, REP_RCVD or MRA_REP_SENT -> ESTABLISHED: send the
 * RTU. Call it once the QP is in RTS.
 * Return: 0, -EINVAL in another state.
 */
int blue__ibcm_send_rtu(struct blue_ibcm *cm, struct blue_ibcm_conn *conn) BLUE_HIDDEN_IBCM;

/**
 * blue__ibcm_established() - passive side saw traffic before the RTU (IBA 12.9, the
 * kernel's COMM_EST): REP_SENT or MRA_REP_RCVD -> ESTABLISHED with the ESTABLISHED event.
 * Return: 0, -EINVAL in another state.
 */
int blue__ibcm_established(struct blue_ibcm *cm, struct blue_ibcm_conn *conn) BLUE_HIDDEN_IBCM;

/**
 * blue__ibcm_disconnect() - ESTABLISHED -> DREQ_SENT: send a DREQ (new TID) and wait for
 * the DREP; DISCONNECTED follows on the DREP or after the retries run out.
 * Return: 0, -EINVAL in another state.
 */
int blue__ibcm_disconnect(struct blue_ibcm *cm, struct blue_ibcm_conn *conn,
			  uint64_t now_ns) BLUE_HIDDEN_IBCM;

/**
 * blue__ibcm_rx() - one MAD received on QP1 from @from (@len bytes at @mad; the MAD
 * layer hands 256, fewer is counted as BLUE_IBCM_ERR_SHORT). Malformed or unexpected
 * MADs are dropped and counted (struct blue_ibcm_stats).
 * Return: BLUE_IBCM_OK if the MAD was decoded (handled or dropped for state), else the
 * codec's reason.
 */
enum blue_ibcm_err blue__ibcm_rx(struct blue_ibcm *cm, const uint8_t *mad, size_t len,
				 const struct blue_ibcm_addr *from, uint64_t now_ns)
	BLUE_HIDDEN_IBCM;

/**
 * blue__ibcm_tick() - run the timers due at @now_ns.
 * Return: the earliest deadline still armed (0 if none), for the caller's sleep.
 */
uint64_t blue__ibcm_tick(struct blue_ibcm *cm, uint64_t now_ns) BLUE_HIDDEN_IBCM;

/* SIDR_REP status (IBA 12.11.2; the kernel's enum ib_cm_sidr_status). */
enum blue_ibcm_sidr_status {
	BLUE_IBCM_SIDR_OK		= 0,
	BLUE_IBCM_SIDR_UNSUPPORTED	= 1,	/* service ID not supported */
	BLUE_IBCM_SIDR_REJECT		= 2,
	BLUE_IBCM_SIDR_NO_QP		= 3,
	BLUE_IBCM_SIDR_REDIRECT		= 4,
	BLUE_IBCM_SIDR_UNSUPPORTED_VERSION = 5,
};

/**
 * blue__ibcm_sidr_request() - send a SIDR_REQ for @service_id to @peer (IBA 12.11.1):
 * the answer comes as SIDR_REP_RECEIVED, or TIMEOUT after the retries.
 * Return: the new record (SIDR_REQ_SENT), or NULL with errno (EINVAL, ENOSPC).
 */
struct blue_ibcm_conn *blue__ibcm_sidr_request(struct blue_ibcm *cm,
					       const struct blue_ibcm_addr *peer,
					       uint64_t service_id, const void *private_data,
					       size_t len, uint64_t now_ns) BLUE_HIDDEN_IBCM;

/**
 * blue__ibcm_sidr_reply() - answer the SIDR_REQ of @conn (SIDR_REQ_RCVD) with @status,
 * the UD QP's @qpn and @qkey, and free the record.
 * Return: 0, -EINVAL (wrong state, private data over 136 bytes).
 */
int blue__ibcm_sidr_reply(struct blue_ibcm *cm, struct blue_ibcm_conn *conn, uint8_t status,
			  uint32_t qpn, uint32_t qkey, const void *private_data, size_t len)
	BLUE_HIDDEN_IBCM;

/** blue__ibcm_wait_ns() - 4.096 us * 2^@timeout, the CM's timeout unit (IBA 12.6.5). */
static inline uint64_t blue__ibcm_wait_ns(uint8_t timeout)
{
	return 4096ull << (timeout & 31);
}

/** blue__ibcm_state_str() - "REQ_SENT", "TIMEWAIT", ...; "unknown" out of range. */
const char *blue__ibcm_state_str(enum blue_ibcm_state s) BLUE_HIDDEN_IBCM;
/** blue__ibcm_event_str() - "REQ_RECEIVED", "TIMEOUT", ...; "unknown" out of range. */
const char *blue__ibcm_event_str(enum blue_ibcm_event e) BLUE_HIDDEN_IBCM;

/*
 * The first PSNs of a connection's QP, as the kernel's IB CM reads the starting PSN of a
 * REQ or REP (cm_mad.h): the receive queue starts at the PSN this side announced
 * (local_psn: set by blue__ibcm_connect, or by blue__ibcm_accept on the passive side),
 * the send queue at the one the peer announced (remote_psn: from its REQ or REP).
 */
static inline uint32_t blue__ibcm_rq_psn(const struct blue_ibcm_conn *c)
{
	return c->local_psn;
}

static inline uint32_t blue__ibcm_sq_psn(const struct blue_ibcm_conn *c)
{
	return c->remote_psn;
}

#endif /* BLUE_RUNTIME_IBCM_H */
