/* SPDX-License-Identifier: MIT */
/*
 * Queue pairs. A QP's live transport state (state, PSNs, counters, timer, peer) is its
 * entry in the QP-context table (struct blue_qp_ctx in include/blue/qp_ctx.h), reached
 * through qp->live and used in place: there is no second copy to drift. What is here
 * besides is what the table has no field for: the queues, the attributes modify_qp set
 * (timeouts, retry counts, access flags, the peer's MAC), and the requester, responder
 * and completer sub-states.
 */
#ifndef BLUE_RUNTIME_QP_H
#define BLUE_RUNTIME_QP_H

#include <stdbool.h>
#include <stdint.h>
#include <blue/blue.h>
#include <blue/wire.h>

#include "runtime/cc.h"
#include "runtime/comp.h"
#include "runtime/cq.h"
#include "runtime/device.h"
#include "runtime/req.h"
#include "runtime/resp.h"
#include "runtime/retx.h"
#include "runtime/wq.h"

struct blue_pkt;
struct blue_tenant;

struct blue_qp {
	struct blue_context *ctx;
	struct blue_pd *pd;
	struct blue_cq *send_cq;
	struct blue_cq *recv_cq;
	void *qp_context;
	struct blue_qp_ctx *live;	/* this QP's entry in the QP-context table */
	uint32_t qpn;
	enum blue_qp_type type;		/* BLUE_QPT_RC, _UC or _UD (live->type too) */
	bool sq_sig_all;
	struct blue_qp *next;		/* in ctx->qps */

	/* attributes with no field in the live context (set by modify_qp) */
	uint32_t access_flags;		/* remote rights the QP grants (qp_access_flags) */
	uint16_t pkey_index;
	uint8_t port_num;
	uint8_t timeout;		/* local ACK timeout exponent; 0 = infinite */
	uint8_t retry_cnt;
	uint8_t rnr_retry;		/* 7 = infinite */
	uint8_t min_rnr_timer;		/* what our RNR NAKs ask the peer to wait */
	uint8_t max_rd_atomic;		/* READ/atomics we may have outstanding */
	uint8_t max_dest_rd_atomic;	/* READ/atomics the peer may have outstanding here */
	uint32_t init_sq_psn;		/* as set at RTR->RTS, for query_qp */
	struct blue_ah_attr ah;
	uint8_t peer_mac[6];
	union blue_gid neigh_addr;	/* the static neighbour it holds (connect_qp) */
	bool neigh_held;		/* neigh_addr is held */
	uint64_t cm_start_ns;		/* blue_cm_info_from_qp(): connection setup began */

	/* queues */
	struct blue_wq sq;
	struct blue_wq rq;
	bool rq_held;			/* a message is filling a receive WQE (rq.h) */
	struct blue_srq *srq;		/* receives come from it (NULL: from rq) */
	struct blue_recv_wqe *rq_copy;	/* with an SRQ, or in daemon mode: the WQE taken
					 * (copied and checked), while held (rq.c) */
	bool last_wqe_raised;		/* QP_LAST_WQE_REACHED was raised (rq.c) */
	bool comm_est_raised;		/* COMM_EST was raised (resp.c) */
	unsigned int nmcast;		/* multicast groups it is attached to (mcast.c) */
	struct blue_swqe_eng *sq_eng;	/* engine state per send-ring entry */
	uint8_t *sq_copy;		/* daemon mode: the engine's checked copy of each
					 * send WQE, same slots as the ring (wqe_admit.c) */
	uint32_t sq_admit;		/* send-ring index up to which WQEs are copied */
	struct blue_tenant *tenant;	/* blue-manager: whose it is (tenant.h), else NULL */
	/* blue-manager: a process's GSI, one member of the shared QP1 (gsi_hub.h). It has
	 * a slot of its own, but says 1 on the wire and in its completions */
	bool gsi;
	uint8_t gsi_prefix;		/* its CM's comm IDs start with it (daemon and process) */

	/* transport */
	struct blue_req req;
	struct blue_resp resp;
	struct blue_comp comp;
	struct blue_retx retx;		/* policy table, timer formula, selective-retx state */
	struct blue_cc cc;		/* congestion control (runtime/cc.h) */
	uint64_t tune_gen;		/* the gen of its tune entry it last applied (tune.h) */
};

/* The QPN the QP is known by outside the engine: 1 for a member of a shared GSI. */
static inline uint32_t blue__qp_wire_qpn(const struct blue_qp *qp)
{
	return qp->gsi ? 1u : qp->qpn;
}

/* The path MTU in bytes (from the live context). */
static inline uint32_t blue__qp_mtu(const struct blue_qp *qp)
{
	return (uint32_t)blue_mtu_bytes((enum blue_mtu)qp->live->path_mtu);
}

static inline struct blue_swqe_eng *blue__sq_eng(const struct blue_qp *qp, uint32_t idx)
{
	return &qp->sq_eng[idx & qp->sq.ring.mask];
}

/*
 * The engine's view of the send queue: the WQE at ring index @idx, and where the WQEs
 * it may read end. In library mode that is the ring itself; in daemon mode (another
 * process writes the ring) it is the copies blue__sq_admit() checked.
 */
static inline const struct blue_send_wqe *blue__sq_wqe(const struct blue_qp *qp, uint32_t idx)
{
	if (qp->sq_copy)
		return (const struct blue_send_wqe *)(qp->sq_copy +
			(size_t)(idx & qp->sq.ring.mask) * qp->sq.ring.elem_size);
	return blue_sq_wqe(&qp->sq, idx);
}

/* blue__sq_admit() - copy and check the send WQEs posted since the last call. Return: the end. */
uint32_t blue__sq_admit(struct blue_qp *qp) __attribute__((visibility("hidden")));

/*
 * blue__wq_copies_init() - with @shared (daemon mode), the slots of the send WQE copies
 * and the held receive WQE copy (an SRQ's QP has that one already).
 * Return: 0 or -1 (no memory).
 */
int blue__wq_copies_init(struct blue_qp *qp, bool shared) __attribute__((visibility("hidden")));

/* The end of what the engine may read, taking in what was posted since (the requester). */
static inline uint32_t blue__sq_take(struct blue_qp *qp)
{
	return qp->sq_copy ? blue__sq_admit(qp) : blue_ring_prod_acquire(&qp->sq.ring);
}

/* The end of what the engine has taken in: any walk over sent or queued WQEs. */
static inline uint32_t blue__sq_end(const struct blue_qp *qp)
{
	return qp->sq_copy ? qp->sq_admit : blue_ring_prod_acquire(&qp->sq.ring);
}

/* WQEs the engine has taken in and not completed. */
static inline uint32_t blue__sq_count(const struct blue_qp *qp)
{
	return blue__sq_end(qp) - blue_ring_cons_own(&qp->sq.ring);
}

/* Packets a READ of @len bytes is answered with (IBA 9.7: each consumes a PSN). */
static inline uint32_t blue__read_npkts(uint32_t len, uint32_t mtu)
{
	return len ? (len + mtu - 1) / mtu : 1;
}

/* blue__qp_pkt() - a packet to the peer with the QP's addresses, QPN and @psn filled in. */
void blue__qp_pkt(const struct blue_qp *qp, struct blue_pkt *p, uint8_t opcode, uint32_t psn)
	__attribute__((visibility("hidden")));

/*
 * blue__qp_reset_rings() - a move to RESET on one side of the QP's rings: this
 * process's ring indices back to 0 and, with @clean_cqs (the CQs' consumer), the QP's
 * completions gone from its CQs. Library mode does both at once; in daemon mode the
 * daemon resets its side and the API side, told the QP reached RESET, does the rest.
 */
void blue__qp_reset_rings(struct blue_qp *qp, bool clean_cqs) __attribute__((visibility("hidden")));

/*
 * blue__qp_error() - move the QP to ERROR from the engine (a retry count ran out, a
 * remote or local error). The engine then flushes every WQE (blue__qp_flush).
 */
void blue__qp_error(struct blue_qp *qp, const char *why) __attribute__((visibility("hidden")));

/*
 * blue__qp_flush() - in ERROR: complete every send and receive WQE still queued with
 * BLUE_WC_WR_FLUSH_ERR (a WQE that failed locally with its own status). Stops early if
 * a CQ is full and resumes on the next pass.
 */
void blue__qp_flush(struct blue_qp *qp) __attribute__((visibility("hidden")));

/*
 * blue__sq_complete() - retire the oldest send WQE with @status, writing a CQE if it
 * was signaled or failed (IBA: errors always complete).
 * Return: 0, or -ENOSPC when the send CQ is full (nothing retired).
 */
int blue__sq_complete(struct blue_qp *qp, enum blue_wc_status status)
	__attribute__((visibility("hidden")));

/*
 * blue__qp_tx() - send @p for this QP in the current pass, counting it in the live
 * context. Return: 0, or -EAGAIN when the pass has no frame or budget left.
 */
int blue__qp_tx(struct blue_qp *qp, const struct blue_pkt *p) __attribute__((visibility("hidden")));

/* blue__cc_reset() - back to no congestion control with the default parameters. */
void blue__cc_reset(struct blue_qp *qp) __attribute__((visibility("hidden")));

/*
 * UD (req_ud.c, resp_ud.c): blue__req_ud_run() sends what the send queue holds, one
 * packet per WQE, and completes each as it leaves (return: packets queued);
 * blue__resp_ud_rx() takes one UD request @p for this QP, whose frame's 20-byte IPv4
 * header is at @ip_hdr (the receive buffer gets it in its GRH).
 */
int blue__req_ud_run(struct blue_qp *qp) __attribute__((visibility("hidden")));
void blue__resp_ud_rx(struct blue_qp *qp, const struct blue_pkt *p, const uint8_t *ip_hdr)
	__attribute__((visibility("hidden")));

/*
 * UC (req_uc.c, resp_uc.c in resp.h): blue__req_uc_run() sends what the send queue
 * holds and completes each WQE as its last packet leaves. Return: packets queued.
 */
int blue__req_uc_run(struct blue_qp *qp) __attribute__((visibility("hidden")));

/*
 * The GSI (IBA 13.5.1): QP1, slot 1 of the QP-context table with generation 0, so XDP
 * steers dqpn 1 to its owner as it steers any QP.
 * blue__create_gsi_qp() - a UD QP whose QPN is exactly 1, for the CM agent (through our
 * libibverbs' blue_compat_create_gsi_qp). Otherwise as blue_create_qp().
 * Return: the QP, or NULL with errno (EADDRINUSE: a live process, this one included,
 * holds QP1 of this device; EINVAL: @attr is not UD).
 */
#define BLUE_GSI_SLOT 1u
struct blue_qp *blue__create_gsi_qp(struct blue_pd *pd, struct blue_qp_init_attr *attr)
	__attribute__((visibility("hidden")));

/*
 * blue__gsi_slot_claim() - blue-manager: take QP1's slot for the hub (gsi_hub.c), a UD
 * entry in RTS with no QP of its own behind it, steered to the context's socket.
 * blue__gsi_slot_release() gives it back. Return: 0, -EADDRINUSE or -errno.
 */
int blue__gsi_slot_claim(struct blue_context *ctx) __attribute__((visibility("hidden")));
void blue__gsi_slot_release(struct blue_context *ctx) __attribute__((visibility("hidden")));

/* The state names for logs: "RESET", "INIT", ... */
const char *blue__qp_state_str(unsigned int state) __attribute__((visibility("hidden")));

#endif /* BLUE_RUNTIME_QP_H */
