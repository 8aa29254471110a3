// SPDX-License-Identifier: MIT
/*
 * Queue pairs: create, modify (the IBA 10.3 state machine with ibverbs' attribute-mask
 * rules), query, destroy; and the engine-side helpers every transport file uses:
 * completing the oldest send WQE, moving to ERROR, and flushing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "runtime/verbs_ops.h"
#include "runtime/ah.h"
#include "runtime/cc_wire.h"
#include "runtime/codec.h"
#include "runtime/cq.h"
#include "runtime/device.h"
#include "runtime/events.h"
#include "runtime/gsi_hub.h"
#include "runtime/log.h"
#include "runtime/mgr_client.h"
#include "runtime/mw.h"
#include "runtime/probes.h"
#include "runtime/qp.h"
#include "runtime/rq.h"
#include "runtime/slot_owner.h"
#include "runtime/srq.h"
#include "runtime/tune.h"

const char *blue__qp_state_str(unsigned int state)
{
	static const char *const names[] = {
		[BLUE_QPS_RESET] = "RESET", [BLUE_QPS_INIT] = "INIT", [BLUE_QPS_RTR] = "RTR",
		[BLUE_QPS_RTS] = "RTS", [BLUE_QPS_SQD] = "SQD", [BLUE_QPS_SQE] = "SQE",
		[BLUE_QPS_ERR] = "ERROR",
	};

	return state < sizeof(names) / sizeof(names[0]) ? names[state] : "?";
}

/* ---- QPN allocation -------------------------------------------------------- */

/*
 * A QPN is (generation << 12) | slot: the slot says where its context lives (one array
 * lookup for XDP), the generation makes a reused slot come back under a new number so
 * that a late packet for the old QP does not land in the new one. The slot is claimed
 * with a compare-and-swap on its qpn field, since other processes may share the table.
 */
#define QPN_SLOT_BITS	12
#define QPN_GEN_MAX	((BLUE_QPN_MASK >> QPN_SLOT_BITS))	/* 4095 */

_Static_assert((1u << QPN_SLOT_BITS) == BLUE_MAX_QP, "QPN slot bits match the table");

static uint32_t qpn_counter;

static int qpn_claim(struct blue_context *ctx, uint32_t *out)
{
	struct blue_qp_ctx *tbl = ctx->qp_tbl;
	uint32_t start, i, slot, gen, qpn, expected;

	/* seed from the pid so that two processes sharing a table start apart */
	expected = 0;
	__atomic_compare_exchange_n(&qpn_counter, &expected,
				    (uint32_t)getpid() * 2654435761u | 1, false,
				    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	start = __atomic_fetch_add(&qpn_counter, 1, __ATOMIC_RELAXED);
	for (i = 0; i < BLUE_MAX_QP; i++) {
		slot = (start + i) & BLUE_QP_SLOT_MASK;
		if (slot < 2)	/* QPN 0 and 1 are the special QPs (IBA 3.5.2) */
			continue;
		gen = (__atomic_fetch_add(&qpn_counter, 1, __ATOMIC_RELAXED) % QPN_GEN_MAX) + 1;
		qpn = gen << QPN_SLOT_BITS | slot;
		if (qpn == BLUE_MCAST_QPN)	/* every multicast packet's DestQP (IBA 10.5) */
			continue;
		expected = 0;
		if (__atomic_compare_exchange_n(&tbl[slot].qpn, &expected, qpn, false,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
			/* the mark is what tells other processes we live (slot_owner.c); the
			 * pid, stored after it, is for people */
			int err = blue__slot_own(ctx->slot_fd, slot);

			if (err) {
				__atomic_store_n(&tbl[slot].qpn, 0, __ATOMIC_RELEASE);
				blue__logf("create_qp: cannot mark QP slot %u as ours: %s", slot,
					   strerror(-err));
				return err;
			}
			__atomic_store_n(&tbl[slot].owner_pid, (uint32_t)getpid(),
					 __ATOMIC_RELEASE);
			*out = qpn;
			return 0;
		}
	}
	return -ENOMEM;
}

/*
 * QPN 1, the GSI (IBA 3.5.2, 13.5.1): slot 1, generation 0, claimed as qpn_claim claims
 * any slot (the compare-and-swap 0 -> 1, then the owner's mark), so a dead owner's GSI is
 * reclaimed like any other slot. A claimed slot whose mark nobody holds is freed first
 * (blue__slots_reclaim ran at open; the owner may have died since).
 * Return: 0, -EADDRINUSE while a live process (this one included) holds it, or the mark's
 * error.
 */
static int gsi_claim(struct blue_context *ctx, uint32_t *out)
{
	struct blue_qp_ctx *c = &ctx->qp_tbl[BLUE_GSI_SLOT];
	uint32_t expected;
	int err, round;

	for (round = 0; round < 2; round++) {
		expected = 0;
		if (__atomic_compare_exchange_n(&c->qpn, &expected, BLUE_GSI_SLOT, false,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			break;
		if (round == 0 && blue__slots_reclaim(ctx->qp_tbl, ctx->slot_fd))
			continue;	/* some owner was dead: maybe QP1's */
		blue__logf("create_qp: QP1 (the GSI) of this device is held by pid %u",
			   __atomic_load_n(&c->owner_pid, __ATOMIC_ACQUIRE));
		return -EADDRINUSE;
	}
	err = blue__slot_own(ctx->slot_fd, BLUE_GSI_SLOT);
	if (err) {
		__atomic_store_n(&c->qpn, 0, __ATOMIC_RELEASE);
		blue__logf("create_qp: cannot mark QP slot 1 (the GSI) as ours: %s",
			   strerror(-err));
		return err;
	}
	__atomic_store_n(&c->owner_pid, (uint32_t)getpid(), __ATOMIC_RELEASE);
	*out = BLUE_GSI_SLOT;
	return 0;
}

/* Zero a context entry except its identity, steering and owner fields. */
static void live_clear(struct blue_qp_ctx *c)
{
	uint32_t qpn = c->qpn, xsk = c->xsk_slot, owner = c->owner_pid;

	__atomic_store_n(&c->state, BLUE_QPS_RESET, __ATOMIC_RELEASE);
	memset((uint8_t *)c + offsetof(struct blue_qp_ctx, type), 0,
	       sizeof(*c) - offsetof(struct blue_qp_ctx, type));
	c->qpn = qpn;
	c->xsk_slot = xsk;
	c->owner_pid = owner;
}

/*
 * A fresh context entry for @qp. A UD QP has no path to set: its messages are one
 * packet of at most the port's active MTU (IBA C10-93.1.1), so that is its path MTU.
 */
static void live_init(struct blue_qp *qp)
{
	live_clear(qp->live);
	qp->live->type = (uint8_t)qp->type;
	qp->live->local_ip = qp->ctx->ip;
	if (qp->type == BLUE_QPT_UD)
		qp->live->path_mtu = (uint8_t)qp->ctx->active_mtu;
}

/*
 * The addresses of the checked address vector qp->ah into the context entry, for
 * bluectl and the XDP-side view: IPv4 in local_ip/peer_ip, or the peer's IPv6 address
 * in peer_ip6 (local_ip, peer_ip 0). Frames are built from the GIDs (blue__qp_pkt).
 */
static void live_set_peer(struct blue_qp *qp)
{
	struct blue_qp_ctx *live = qp->live;
	uint32_t ip = 0;

	live->local_ip = blue__gid_ipv4(&qp->ctx->gid[qp->ah.sgid_index], &ip) ? ip : 0;
	if (blue__gid_ipv4(&qp->ah.dgid, &ip)) {
		live->peer_ip = ip;
		memset(live->peer_ip6, 0, sizeof(live->peer_ip6));
	} else {
		live->peer_ip = 0;
		memcpy(live->peer_ip6, qp->ah.dgid.raw, sizeof(live->peer_ip6));
	}
}

/* ---- create / destroy ------------------------------------------------------- */

static int cap_check(const struct blue_qp_cap *c)
{
	if (c->max_send_wr > BLUE_MAX_QP_WR || c->max_recv_wr > BLUE_MAX_QP_WR) {
		blue__logf("create_qp: max_send_wr %u / max_recv_wr %u; the device takes "
			   "0..%d each", c->max_send_wr, c->max_recv_wr, BLUE_MAX_QP_WR);
		return EINVAL;
	}
	if (c->max_send_sge > BLUE_MAX_SGE || c->max_recv_sge > BLUE_MAX_SGE) {
		blue__logf("create_qp: max_send_sge %u / max_recv_sge %u; the device takes "
			   "at most %d", c->max_send_sge, c->max_recv_sge, BLUE_MAX_SGE);
		return EINVAL;
	}
	if (c->max_inline_data > BLUE_MAX_INLINE) {
		blue__logf("create_qp: max_inline_data %u; the device takes at most %d",
			   c->max_inline_data, BLUE_MAX_INLINE);
		return EINVAL;
	}
	return 0;
}

static struct blue_qp *qp_create(struct blue_pd *pd, struct blue_qp_init_attr *attr,
				 bool gsi)
{
	struct blue_context *ctx;
	struct blue_qp *qp;
	uint32_t qpn, sge;
	int err;

	if (!pd || !attr) {
		errno = EINVAL;
		return NULL;
	}
	ctx = pd->ctx;
	if (attr->qp_type != BLUE_QPT_RC && attr->qp_type != BLUE_QPT_UC &&
	    attr->qp_type != BLUE_QPT_UD) {
		blue__logf("create_qp: QP type %d is not supported; RC (%d), UC (%d) and UD (%d) "
			   "are", attr->qp_type, BLUE_QPT_RC, BLUE_QPT_UC, BLUE_QPT_UD);
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!attr->send_cq || !attr->recv_cq || attr->send_cq->ctx != ctx ||
	    attr->recv_cq->ctx != ctx) {
		blue__logf("create_qp: a send and a receive CQ of the same context are needed");
		errno = EINVAL;
		return NULL;
	}
	if (attr->srq) {
		if (attr->srq->ctx != ctx) {
			blue__logf("create_qp: the SRQ belongs to another context");
			errno = EINVAL;
			return NULL;
		}
		/* IBA 10.2.9: receives come from the SRQ; the QP's own sizes mean nothing */
		attr->cap.max_recv_wr = 0;
		attr->cap.max_recv_sge = 0;
	}
	err = cap_check(&attr->cap);
	if (err) {
		errno = err;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	if (attr->srq) {
		qp->rq_copy = malloc(blue__srq_wqe_size(attr->srq));
		if (!qp->rq_copy) {
			free(qp);
			errno = ENOMEM;
			return NULL;
		}
	}
	/* a WQE's SGE array doubles as the inline buffer: at least one SGE of room */
	sge = attr->cap.max_send_sge ? attr->cap.max_send_sge : 1;
	qp->sq.shm_fd = qp->rq.shm_fd = -1;
	err = blue__wq_init(&qp->sq, 1, attr->cap.max_send_wr, sge, attr->cap.max_inline_data,
			    pd->ctx->shared_rings);
	if (!err)
		err = blue__wq_init(&qp->rq, 0, attr->cap.max_recv_wr,
				    attr->cap.max_recv_sge ? attr->cap.max_recv_sge : 1, 0,
				    pd->ctx->shared_rings);
	if (!err) {
		qp->sq_eng = calloc(blue_ring_size(&qp->sq.ring), sizeof(*qp->sq_eng));
		if (!qp->sq_eng || blue__wq_copies_init(qp, pd->ctx->shared_rings))
			err = -ENOMEM;
	}
	if (err)
		goto fail;
	err = gsi ? gsi_claim(ctx, &qpn) : qpn_claim(ctx, &qpn);
	if (err == -ENOMEM) {
		blue__logf("create_qp: all %u QP slots of the %s HAL are in use", BLUE_MAX_QP,
			   ctx->hal->ops->name);
		goto fail;
	}
	if (err)
		goto fail;
	qp->qpn = qpn;
	qp->live = &ctx->qp_tbl[blue_qpn_slot(qpn)];
	qp->type = attr->qp_type;
	qp->ctx = ctx;		/* congestion control reads the link's speed from it */
	live_init(qp);
	blue__retx_reset(qp);
	blue__cc_reset(qp);
	err = blue_hal_flow_bind(ctx->sock, qpn);
	if (err) {
		blue__logf("create_qp: cannot steer QPN 0x%x to the context's socket: %s", qpn,
			   strerror(-err));
		__atomic_store_n(&qp->live->owner_pid, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&qp->live->qpn, 0, __ATOMIC_RELEASE);
		blue__slot_disown(ctx->slot_fd, blue_qpn_slot(qpn));
		goto fail;
	}
	qp->pd = pd;
	qp->send_cq = attr->send_cq;
	qp->recv_cq = attr->recv_cq;
	qp->qp_context = attr->qp_context;
	qp->sq_sig_all = attr->sq_sig_all != 0;
	qp->port_num = 1;
	qp->srq = attr->srq;
	/* report what was allocated, as ibv_create_qp does */
	attr->cap.max_send_wr = qp->sq.max_wr;
	attr->cap.max_recv_wr = qp->srq ? 0 : qp->rq.max_wr;
	attr->cap.max_send_sge = sge;
	attr->cap.max_recv_sge = qp->srq ? 0 : qp->rq.max_sge;
	attr->cap.max_inline_data = qp->sq.max_inline;
	blue__tune_qp_init(qp);	/* the interface's defaults (bluectl set IFNAME) */
	qp->next = ctx->qps;
	ctx->qps = qp;
	ctx->qp_by_slot[blue_qpn_slot(qpn)] = qp;
	ctx->nqp++;
	pd->nqp++;
	qp->send_cq->nqp++;
	qp->recv_cq->nqp++;
	if (qp->srq)
		qp->srq->nqp++;
	return qp;
fail:
	blue__wq_fini(&qp->sq);
	blue__wq_fini(&qp->rq);
	free(qp->sq_eng);
	free(qp->sq_copy);
	free(qp->rq_copy);
	free(qp);
	errno = -err;
	return NULL;
}

struct blue_qp *blue__lib_create_qp(struct blue_pd *pd, struct blue_qp_init_attr *attr)
{
	return qp_create(pd, attr, false);
}

struct blue_qp *blue__create_gsi_qp(struct blue_pd *pd, struct blue_qp_init_attr *attr)
{
	if (attr && attr->qp_type != BLUE_QPT_UD) {
		blue__logf("create_qp: the GSI (QP1) is a UD QP; qp_type %d asked",
			   attr->qp_type);
		errno = EINVAL;
		return NULL;
	}
	if (pd && blue__engine_elsewhere(pd->ctx))
		return blue__mgr_create_gsi_qp(pd, attr);	/* a member of the daemon's */
	return qp_create(pd, attr, true);
}

int blue__gsi_slot_claim(struct blue_context *ctx)
{
	struct blue_qp_ctx *c = &ctx->qp_tbl[BLUE_GSI_SLOT];
	uint32_t qpn;
	int err = gsi_claim(ctx, &qpn);

	if (err)
		return err;
	live_clear(c);
	c->type = BLUE_QPT_UD;
	c->local_ip = ctx->ip;
	c->pkey = BLUE_DEFAULT_PKEY;
	err = blue_hal_flow_bind(ctx->sock, BLUE_GSI_SLOT);
	if (err) {
		blue__logf("the shared GSI: cannot steer QPN 1 to the engine's socket: %s",
			   strerror(-err));
		blue__gsi_slot_release(ctx);
		return err;
	}
	/* last: XDP takes frames for it from now on */
	__atomic_store_n(&c->state, BLUE_QPS_RTS, __ATOMIC_RELEASE);
	return 0;
}

void blue__gsi_slot_release(struct blue_context *ctx)
{
	struct blue_qp_ctx *c = &ctx->qp_tbl[BLUE_GSI_SLOT];

	live_clear(c);
	blue_hal_flow_unbind(ctx->hal, BLUE_GSI_SLOT);
	blue__slot_disown(ctx->slot_fd, BLUE_GSI_SLOT);
	__atomic_store_n(&c->owner_pid, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&c->qpn, 0, __ATOMIC_RELEASE);
}

int blue__lib_destroy_qp(struct blue_qp *qp)
{
	struct blue_context *ctx;
	struct blue_qp **pp;

	if (!qp)
		return EINVAL;
	ctx = qp->ctx;
	if (qp->nmcast) {
		/* as the kernel's uverbs refuses it: the attachments would point at nothing */
		blue__logf("destroy_qp: QP 0x%x is attached to %u multicast group%s: detach "
			   "first (ibv_detach_mcast, rdma_leave_multicast)", qp->qpn, qp->nmcast,
			   qp->nmcast == 1 ? "" : "s");
		return EBUSY;
	}
	/* ACKs the last pass held (progress.c ack_hold) go now: the peer waits for them */
	blue__tx_flush(ctx);
	/* the policy's fini may still write the live context: before the slot goes */
	blue__retx_fini(qp);
	if (qp->gsi)
		blue__gsi_member_gone(qp);	/* no MAD is handed to it from here on */
	/* stop steering first (RESET drops at XDP), then free the slot for others */
	blue__tune_qp_gone(qp);
	blue__mw_qp_gone(qp);	/* its type 2B windows go with it */
	live_clear(qp->live);
	blue_hal_flow_unbind(ctx->hal, qp->qpn);
	blue__slot_disown(ctx->slot_fd, blue_qpn_slot(qp->qpn));
	ctx->qp_by_slot[blue_qpn_slot(qp->qpn)] = NULL;
	if (qp->neigh_held)
		blue__neigh_put(ctx, &qp->neigh_addr);
	for (pp = &ctx->qps; *pp; pp = &(*pp)->next) {
		if (*pp == qp) {
			*pp = qp->next;
			break;
		}
	}
	ctx->nqp--;
	qp->pd->nqp--;
	qp->send_cq->nqp--;
	qp->recv_cq->nqp--;
	if (qp->srq)
		qp->srq->nqp--;
	blue__wq_fini(&qp->sq);
	blue__wq_fini(&qp->rq);
	free(qp->sq_eng);
	free(qp->sq_copy);
	free(qp->rq_copy);
	free(qp);
	return 0;
}

uint32_t blue_qp_num(const struct blue_qp *qp)
{
	return qp ? qp->qpn : 0;
}

/* ---- modify: the state machine ----------------------------------------------- */

struct qp_trans {
	bool valid;
	uint32_t req;	/* attributes the transition needs */
	uint32_t opt;	/* attributes it may also take */
};

#define QPS_N (BLUE_QPS_ERR + 1)

/*
 * IBA 10.3.1 transitions for an RC QP and, per transition, the required and optional
 * attributes as ib_modify_qp_is_ok() (the kernel's qp_state_table) has them. Alternate
 * paths and path migration are not supported, so those optional bits are absent.
 */
static const struct qp_trans rc_trans[QPS_N][QPS_N] = {
	[BLUE_QPS_RESET] = {
		[BLUE_QPS_RESET] = { .valid = true },
		[BLUE_QPS_INIT] = { .valid = true,
			.req = BLUE_QP_PKEY_INDEX | BLUE_QP_PORT | BLUE_QP_ACCESS_FLAGS },
	},
	[BLUE_QPS_INIT] = {
		[BLUE_QPS_INIT] = { .valid = true,
			.opt = BLUE_QP_PKEY_INDEX | BLUE_QP_PORT | BLUE_QP_ACCESS_FLAGS },
		[BLUE_QPS_RTR] = { .valid = true,
			.req = BLUE_QP_AV | BLUE_QP_PATH_MTU | BLUE_QP_DEST_QPN | BLUE_QP_RQ_PSN |
			       BLUE_QP_MAX_DEST_RD_ATOMIC | BLUE_QP_MIN_RNR_TIMER,
			.opt = BLUE_QP_PKEY_INDEX | BLUE_QP_ACCESS_FLAGS },
	},
	[BLUE_QPS_RTR] = {
		[BLUE_QPS_RTS] = { .valid = true,
			.req = BLUE_QP_SQ_PSN | BLUE_QP_TIMEOUT | BLUE_QP_RETRY_CNT |
			       BLUE_QP_RNR_RETRY | BLUE_QP_MAX_QP_RD_ATOMIC,
			.opt = BLUE_QP_CUR_STATE | BLUE_QP_ACCESS_FLAGS | BLUE_QP_MIN_RNR_TIMER },
	},
	[BLUE_QPS_RTS] = {
		[BLUE_QPS_RTS] = { .valid = true,
			.opt = BLUE_QP_CUR_STATE | BLUE_QP_ACCESS_FLAGS | BLUE_QP_MIN_RNR_TIMER },
		[BLUE_QPS_SQD] = { .valid = true },
	},
	[BLUE_QPS_SQD] = {
		[BLUE_QPS_RTS] = { .valid = true,
			.opt = BLUE_QP_CUR_STATE | BLUE_QP_ACCESS_FLAGS | BLUE_QP_MIN_RNR_TIMER },
		[BLUE_QPS_SQD] = { .valid = true,
			.opt = BLUE_QP_ACCESS_FLAGS | BLUE_QP_MIN_RNR_TIMER | BLUE_QP_TIMEOUT |
			       BLUE_QP_RETRY_CNT | BLUE_QP_RNR_RETRY | BLUE_QP_MAX_QP_RD_ATOMIC |
			       BLUE_QP_MAX_DEST_RD_ATOMIC },
	},
	[BLUE_QPS_SQE] = {
		[BLUE_QPS_RTS] = { .valid = true,
			.opt = BLUE_QP_CUR_STATE | BLUE_QP_ACCESS_FLAGS },
	},
};

/*
 * The same for a UD QP (IBA 10.3.1, the kernel's qp_state_table for IB_QPT_UD): no
 * peer, no path, no retries; the Q_Key at INIT and changeable later. A UD QP in RTR
 * receives; in RTS it also sends, from SQ_PSN on.
 */
static const struct qp_trans ud_trans[QPS_N][QPS_N] = {
	[BLUE_QPS_RESET] = {
		[BLUE_QPS_RESET] = { .valid = true },
		[BLUE_QPS_INIT] = { .valid = true,
			.req = BLUE_QP_PKEY_INDEX | BLUE_QP_PORT | BLUE_QP_QKEY },
	},
	[BLUE_QPS_INIT] = {
		[BLUE_QPS_INIT] = { .valid = true,
			.opt = BLUE_QP_PKEY_INDEX | BLUE_QP_PORT | BLUE_QP_QKEY },
		[BLUE_QPS_RTR] = { .valid = true, .opt = BLUE_QP_PKEY_INDEX | BLUE_QP_QKEY },
	},
	[BLUE_QPS_RTR] = {
		[BLUE_QPS_RTS] = { .valid = true, .req = BLUE_QP_SQ_PSN,
			.opt = BLUE_QP_CUR_STATE | BLUE_QP_QKEY },
	},
	[BLUE_QPS_RTS] = {
		[BLUE_QPS_RTS] = { .valid = true, .opt = BLUE_QP_CUR_STATE | BLUE_QP_QKEY },
		[BLUE_QPS_SQD] = { .valid = true },
	},
	[BLUE_QPS_SQD] = {
		[BLUE_QPS_RTS] = { .valid = true, .opt = BLUE_QP_CUR_STATE | BLUE_QP_QKEY },
		[BLUE_QPS_SQD] = { .valid = true, .opt = BLUE_QP_PKEY_INDEX | BLUE_QP_QKEY },
	},
	[BLUE_QPS_SQE] = {
		[BLUE_QPS_RTS] = { .valid = true, .opt = BLUE_QP_CUR_STATE | BLUE_QP_QKEY },
	},
};

/*
 * The same for a UC QP (IBA 10.3.1 and 11.2.4, the kernel's qp_state_table for
 * IB_QPT_UC, which rxe applies): a peer and a path as RC, but nothing of reliability:
 * no ACK timeout, retry or RNR counts, no RNR timer and no READ/atomic depths, so
 * those bits are refused wherever they appear. This is what ibv_uc_pingpong and
 * perftest -c UC pass.
 */
static const struct qp_trans uc_trans[QPS_N][QPS_N] = {
	[BLUE_QPS_RESET] = {
		[BLUE_QPS_RESET] = { .valid = true },
		[BLUE_QPS_INIT] = { .valid = true,
			.req = BLUE_QP_PKEY_INDEX | BLUE_QP_PORT | BLUE_QP_ACCESS_FLAGS },
	},
	[BLUE_QPS_INIT] = {
		[BLUE_QPS_INIT] = { .valid = true,
			.opt = BLUE_QP_PKEY_INDEX | BLUE_QP_PORT | BLUE_QP_ACCESS_FLAGS },
		[BLUE_QPS_RTR] = { .valid = true,
			.req = BLUE_QP_AV | BLUE_QP_PATH_MTU | BLUE_QP_DEST_QPN | BLUE_QP_RQ_PSN,
			.opt = BLUE_QP_PKEY_INDEX | BLUE_QP_ACCESS_FLAGS },
	},
	[BLUE_QPS_RTR] = {
		[BLUE_QPS_RTS] = { .valid = true, .req = BLUE_QP_SQ_PSN,
			.opt = BLUE_QP_CUR_STATE | BLUE_QP_ACCESS_FLAGS },
	},
	[BLUE_QPS_RTS] = {
		[BLUE_QPS_RTS] = { .valid = true, .opt = BLUE_QP_CUR_STATE | BLUE_QP_ACCESS_FLAGS },
		[BLUE_QPS_SQD] = { .valid = true },
	},
	[BLUE_QPS_SQD] = {
		[BLUE_QPS_RTS] = { .valid = true, .opt = BLUE_QP_CUR_STATE | BLUE_QP_ACCESS_FLAGS },
		[BLUE_QPS_SQD] = { .valid = true,
			.opt = BLUE_QP_AV | BLUE_QP_ACCESS_FLAGS | BLUE_QP_PKEY_INDEX },
	},
	[BLUE_QPS_SQE] = {
		[BLUE_QPS_RTS] = { .valid = true, .opt = BLUE_QP_CUR_STATE | BLUE_QP_ACCESS_FLAGS },
	},
};

static bool trans_valid(const struct blue_qp *qp, unsigned int cur, unsigned int next,
			struct qp_trans *t)
{
	/* IBA 10.3.1: any state may go to RESET or ERROR, with no attributes */
	if (next == BLUE_QPS_RESET || next == BLUE_QPS_ERR) {
		*t = (struct qp_trans){ .valid = true };
		return true;
	}
	*t = qp->type == BLUE_QPT_UD ? ud_trans[cur][next] :
	     qp->type == BLUE_QPT_UC ? uc_trans[cur][next] : rc_trans[cur][next];
	return t->valid;
}

static const char *attr_name(uint32_t bit)
{
	switch (bit) {
	case BLUE_QP_STATE:		return "BLUE_QP_STATE";
	case BLUE_QP_CUR_STATE:		return "BLUE_QP_CUR_STATE";
	case BLUE_QP_ACCESS_FLAGS:	return "BLUE_QP_ACCESS_FLAGS";
	case BLUE_QP_PKEY_INDEX:	return "BLUE_QP_PKEY_INDEX";
	case BLUE_QP_PORT:		return "BLUE_QP_PORT";
	case BLUE_QP_QKEY:		return "BLUE_QP_QKEY";
	case BLUE_QP_AV:		return "BLUE_QP_AV";
	case BLUE_QP_PATH_MTU:		return "BLUE_QP_PATH_MTU";
	case BLUE_QP_TIMEOUT:		return "BLUE_QP_TIMEOUT";
	case BLUE_QP_RETRY_CNT:		return "BLUE_QP_RETRY_CNT";
	case BLUE_QP_RNR_RETRY:		return "BLUE_QP_RNR_RETRY";
	case BLUE_QP_RQ_PSN:		return "BLUE_QP_RQ_PSN";
	case BLUE_QP_MAX_QP_RD_ATOMIC:	return "BLUE_QP_MAX_QP_RD_ATOMIC";
	case BLUE_QP_MIN_RNR_TIMER:	return "BLUE_QP_MIN_RNR_TIMER";
	case BLUE_QP_SQ_PSN:		return "BLUE_QP_SQ_PSN";
	case BLUE_QP_MAX_DEST_RD_ATOMIC: return "BLUE_QP_MAX_DEST_RD_ATOMIC";
	case BLUE_QP_CAP:		return "BLUE_QP_CAP";
	case BLUE_QP_DEST_QPN:		return "BLUE_QP_DEST_QPN";
	}
	return "an unknown attribute bit";
}

/* "A, B and C" for the bits of @mask, into @buf. */
static const char *attr_list(uint32_t mask, char *buf, size_t len)
{
	size_t off = 0;
	uint32_t bit;

	buf[0] = 0;
	for (bit = 1; bit && off < len; bit <<= 1) {
		if (!(mask & bit))
			continue;
		mask &= ~bit;
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					off ? (mask ? ", " : " and ") : "", attr_name(bit));
	}
	return buf;
}


#define MODIFY_ERR(qpn, fmt, ...) do { \
		blue__logf("modify_qp: QP 0x%x: " fmt, qpn, ##__VA_ARGS__); \
		return EINVAL; \
	} while (0)

/* Value checks of everything @mask names; nothing is changed. */
static int attr_check(struct blue_qp *qp, const struct blue_qp_attr *a, uint32_t mask,
		      uint8_t peer_mac[6])
{
	const uint32_t access_all = BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE |
				    BLUE_ACCESS_REMOTE_READ | BLUE_ACCESS_REMOTE_ATOMIC;
	/* the FLUSH rights a responder checks a FLUSH against (IBA 1.5, as rxe) */
	const uint32_t flush_rights = BLUE_ACCESS_FLUSH_GLOBAL | BLUE_ACCESS_FLUSH_PERSISTENT;
	char who[48];

	if ((mask & BLUE_QP_ACCESS_FLAGS) &&
	    (a->qp_access_flags & ~(access_all | flush_rights)))
		MODIFY_ERR(qp->qpn, "unknown qp_access_flags bits 0x%x",
			   a->qp_access_flags & ~(access_all | flush_rights));
	if ((mask & BLUE_QP_PKEY_INDEX) && a->pkey_index != 0)
		MODIFY_ERR(qp->qpn, "pkey_index %u; the P_Key table has one entry (index 0)",
			   a->pkey_index);
	if ((mask & BLUE_QP_PORT) && a->port_num != 1)
		MODIFY_ERR(qp->qpn, "port_num %u; the device has port 1 only", a->port_num);
	if ((mask & BLUE_QP_PATH_MTU) &&
	    (blue_mtu_bytes(a->path_mtu) < 0 || a->path_mtu > qp->ctx->active_mtu))
		MODIFY_ERR(qp->qpn, "path_mtu %d is not an MTU this port carries "
			   "(1=256 .. %d=%d)", a->path_mtu, qp->ctx->active_mtu,
			   blue_mtu_bytes(qp->ctx->active_mtu));
	if ((mask & BLUE_QP_DEST_QPN) && (a->dest_qp_num > BLUE_QPN_MASK || a->dest_qp_num < 2))
		MODIFY_ERR(qp->qpn, "dest_qp_num 0x%x is not a 24-bit QPN above 1",
			   a->dest_qp_num);
	if ((mask & BLUE_QP_TIMEOUT) && a->timeout > 31)
		MODIFY_ERR(qp->qpn, "timeout %u; it is a 5-bit exponent (0..31)", a->timeout);
	if ((mask & BLUE_QP_RETRY_CNT) && a->retry_cnt > 7)
		MODIFY_ERR(qp->qpn, "retry_cnt %u; it is 3 bits (0..7)", a->retry_cnt);
	if ((mask & BLUE_QP_RNR_RETRY) && a->rnr_retry > 7)
		MODIFY_ERR(qp->qpn, "rnr_retry %u; it is 3 bits (0..7, 7 = infinite)",
			   a->rnr_retry);
	if ((mask & BLUE_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31)
		MODIFY_ERR(qp->qpn, "min_rnr_timer %u; it is 5 bits (IBA table 45)",
			   a->min_rnr_timer);
	if ((mask & BLUE_QP_MAX_QP_RD_ATOMIC) && a->max_rd_atomic > BLUE_MAX_RD_ATOMIC)
		MODIFY_ERR(qp->qpn, "max_rd_atomic %u; the device allows %d", a->max_rd_atomic,
			   BLUE_MAX_RD_ATOMIC);
	if ((mask & BLUE_QP_MAX_DEST_RD_ATOMIC) && a->max_dest_rd_atomic > BLUE_MAX_RD_ATOMIC)
		MODIFY_ERR(qp->qpn, "max_dest_rd_atomic %u; the device allows %d",
			   a->max_dest_rd_atomic, BLUE_MAX_RD_ATOMIC);
	if (mask & BLUE_QP_AV) {
		snprintf(who, sizeof(who), "modify_qp: QP 0x%x", qp->qpn);
		if (blue__av_resolve(qp->ctx, &a->ah_attr, who, peer_mac))
			return EINVAL;
	}
	return 0;
}

static bool qp_to_error(struct blue_qp *qp, const char *why);

/*
 * Back to a fresh RESET: queues emptied without completions (IBA 10.3.1), and what the
 * QP completed before gone from its CQs (blue__cq_clean).
 */
void blue__qp_reset_rings(struct blue_qp *qp, bool clean_cqs)
{
	blue_ring_reset(&qp->sq.ring);
	blue_ring_reset(&qp->rq.ring);
	qp->sq_admit = 0;
	if (!clean_cqs)
		return;
	blue__cq_clean(qp->send_cq, blue__qp_wire_qpn(qp));
	if (qp->recv_cq != qp->send_cq)
		blue__cq_clean(qp->recv_cq, blue__qp_wire_qpn(qp));
}

static void qp_reset(struct blue_qp *qp)
{
	live_init(qp);
	/* blue-manager produces into CQs another process consumes: that one cleans them */
	blue__qp_reset_rings(qp, !qp->ctx->shared_rings);
	qp->rq_held = false;	/* a WQE held from an SRQ goes, as the QP's own do */
	qp->last_wqe_raised = false;
	qp->comm_est_raised = false;
	memset(qp->sq_eng, 0, blue_ring_size(&qp->sq.ring) * sizeof(*qp->sq_eng));
	blue__req_reset(qp);
	blue__resp_reset(qp);
	blue__comp_reset(qp);
	blue__retx_reset(qp);
	blue__cc_reset(qp);
	blue__tune_qp_init(qp);
}

int blue__lib_modify_qp(struct blue_qp *qp, struct blue_qp_attr *attr, int attr_mask)
{
	uint32_t mask = (uint32_t)attr_mask, missing, extra;
	struct blue_qp_ctx *live;
	unsigned int cur, next;
	uint8_t peer_mac[6];
	struct qp_trans t;
	char list[256];
	int err;

	if (!qp || !attr)
		return EINVAL;
	live = qp->live;
	cur = live->state;
	next = (mask & BLUE_QP_STATE) ? (unsigned int)attr->qp_state : cur;
	if (next >= QPS_N)
		MODIFY_ERR(qp->qpn, "qp_state %u is not a QP state", next);
	if ((mask & BLUE_QP_CUR_STATE) && (unsigned int)attr->cur_qp_state != cur)
		MODIFY_ERR(qp->qpn, "cur_qp_state says %s but the QP is in %s",
			   blue__qp_state_str(attr->cur_qp_state), blue__qp_state_str(cur));
	if (!trans_valid(qp, cur, next, &t))
		MODIFY_ERR(qp->qpn, "%s -> %s is not a valid transition (IBA 10.3.1)",
			   blue__qp_state_str(cur), blue__qp_state_str(next));
	missing = t.req & ~mask;
	if (missing)
		MODIFY_ERR(qp->qpn, "%s -> %s needs %s", blue__qp_state_str(cur),
			   blue__qp_state_str(next), attr_list(missing, list, sizeof(list)));
	extra = mask & ~(t.req | t.opt | BLUE_QP_STATE);
	if (extra)
		MODIFY_ERR(qp->qpn, "%s -> %s does not take %s", blue__qp_state_str(cur),
			   blue__qp_state_str(next), attr_list(extra, list, sizeof(list)));
	err = attr_check(qp, attr, mask, peer_mac);
	if (err)
		return err;

	/* everything is checked: apply, the state last */
	if (next == BLUE_QPS_RESET) {
		BLUE_PROBE3(qp_state, qp->qpn, cur, next);
		qp_reset(qp);
		return 0;
	}
	if (next == BLUE_QPS_ERR) {
		qp_to_error(qp, NULL);	/* the application's own doing: no QP_FATAL */
		return 0;
	}
	if (mask & BLUE_QP_ACCESS_FLAGS)
		qp->access_flags = attr->qp_access_flags;
	if (mask & BLUE_QP_PKEY_INDEX) {
		qp->pkey_index = attr->pkey_index;
		/* XDP checks received P_Keys against this (the table's one entry) */
		live->pkey = BLUE_DEFAULT_PKEY;
	}
	if (mask & BLUE_QP_PORT)
		qp->port_num = attr->port_num;
	if (mask & BLUE_QP_QKEY)
		live->qkey = attr->qkey;
	if (mask & BLUE_QP_MIN_RNR_TIMER)
		qp->min_rnr_timer = attr->min_rnr_timer;
	if (mask & BLUE_QP_MAX_DEST_RD_ATOMIC)
		qp->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & BLUE_QP_PATH_MTU)
		live->path_mtu = (uint8_t)attr->path_mtu;
	if (mask & BLUE_QP_DEST_QPN)
		live->peer_qpn = attr->dest_qp_num;
	if (mask & BLUE_QP_RQ_PSN)
		live->rq_psn = attr->rq_psn & BLUE_PSN_MASK;
	if (mask & BLUE_QP_AV) {
		qp->ah = attr->ah_attr;
		live_set_peer(qp);
		memcpy(qp->peer_mac, peer_mac, 6);
	}
	if (mask & BLUE_QP_TIMEOUT)
		qp->timeout = attr->timeout;
	if (mask & BLUE_QP_RETRY_CNT) {
		qp->retry_cnt = attr->retry_cnt;
		live->retry_left = attr->retry_cnt;
	}
	if (mask & BLUE_QP_RNR_RETRY) {
		qp->rnr_retry = attr->rnr_retry;
		live->rnr_left = attr->rnr_retry;
	}
	if (mask & BLUE_QP_MAX_QP_RD_ATOMIC)
		qp->max_rd_atomic = attr->max_rd_atomic;
	if (mask & BLUE_QP_SQ_PSN) {
		qp->init_sq_psn = attr->sq_psn & BLUE_PSN_MASK;
		live->sq_psn = live->una_psn = qp->init_sq_psn;
		qp->req.psn_hi = qp->init_sq_psn;
	}
	if (next == BLUE_QPS_RTS && cur == BLUE_QPS_RTR)
		blue__cc_at_rts(qp);	/* BLUE_CC, and the algorithm's (re)start */
	if (next != cur)
		BLUE_PROBE3(qp_state, qp->qpn, cur, next);
	__atomic_store_n(&live->state, (uint8_t)next, __ATOMIC_RELEASE);
	return 0;
}

int blue__lib_query_qp(struct blue_qp *qp, struct blue_qp_attr *attr, int attr_mask,
		  struct blue_qp_init_attr *init_attr)
{
	const struct blue_qp_ctx *live;

	(void)attr_mask;	/* everything is cheap to report */
	if (!qp || !attr)
		return EINVAL;
	live = qp->live;
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = attr->cur_qp_state = live->state;
	attr->path_mtu = live->path_mtu;
	attr->qp_access_flags = qp->access_flags;
	attr->rq_psn = live->rq_psn;
	attr->sq_psn = live->sq_psn;
	attr->dest_qp_num = live->peer_qpn;
	attr->qkey = live->qkey;
	attr->cap.max_send_wr = qp->sq.max_wr;
	attr->cap.max_recv_wr = qp->srq ? 0 : qp->rq.max_wr;
	attr->cap.max_send_sge = qp->sq.max_sge;
	attr->cap.max_recv_sge = qp->srq ? 0 : qp->rq.max_sge;
	attr->cap.max_inline_data = qp->sq.max_inline;
	attr->ah_attr = qp->ah;
	attr->pkey_index = qp->pkey_index;
	attr->port_num = qp->port_num;
	attr->max_rd_atomic = qp->max_rd_atomic;
	attr->max_dest_rd_atomic = qp->max_dest_rd_atomic;
	attr->min_rnr_timer = qp->min_rnr_timer;
	attr->timeout = qp->timeout;
	attr->retry_cnt = qp->retry_cnt;
	attr->rnr_retry = qp->rnr_retry;
	if (init_attr) {
		memset(init_attr, 0, sizeof(*init_attr));
		init_attr->qp_context = qp->qp_context;
		init_attr->send_cq = qp->send_cq;
		init_attr->recv_cq = qp->recv_cq;
		init_attr->srq = qp->srq;
		init_attr->cap = attr->cap;
		init_attr->qp_type = qp->type;
		init_attr->sq_sig_all = qp->sq_sig_all;
	}
	return 0;
}

/* ---- engine-side helpers ------------------------------------------------------ */

void blue__qp_pkt(const struct blue_qp *qp, struct blue_pkt *p, uint8_t opcode, uint32_t psn)
{
	const struct blue_qp_ctx *live = qp->live;

	blue_pkt_init(p, opcode);
	memcpy(p->dst_mac, qp->peer_mac, 6);
	memcpy(p->src_mac, qp->ctx->mac, 6);
	blue_pkt_set_ips(p, qp->ctx->gid[qp->ah.sgid_index].raw, qp->ah.dgid.raw);
	p->tos = blue__cc_tos(live, qp->ah.traffic_class, opcode);
	/* the TTL stays blue_pkt_init's 64, the route's, as rxe's (the kernel resolves a
	 * RoCE address vector's hop limit from the route, whatever the QP was given) */
	p->sport = blue_udp_sport(qp->qpn, live->peer_qpn);
	p->dqpn = live->peer_qpn;
	p->psn = psn & BLUE_PSN_MASK;
}

/* Enter ERROR (the engine flushes from the next pass). Return: false if it already was. */
static bool qp_to_error(struct blue_qp *qp, const char *why)
{
	struct blue_qp_ctx *live = qp->live;

	if (live->state == BLUE_QPS_ERR)
		return false;
	if (why)
		blue__logf("QP 0x%x: %s -> ERROR: %s", qp->qpn, blue__qp_state_str(live->state),
			   why);
	BLUE_PROBE3(qp_state, qp->qpn, live->state, BLUE_QPS_ERR);
	__atomic_store_n(&live->state, BLUE_QPS_ERR, __ATOMIC_RELEASE);
	live->timer_deadline_ns = 0;
	qp->comp.timer = BLUE_TIMER_NONE;
	qp->comp.rnr_wait = false;
	qp->resp.in_msg = BLUE_MSG_NONE;
	return true;
}

void blue__qp_error(struct blue_qp *qp, const char *why)
{
	/* IBA 11.6.3.1: the engine's move to ERROR is the QP's fatal (catastrophic) event */
	if (qp_to_error(qp, why))
		blue__event_qp(qp, BLUE_EVENT_QP_FATAL);
}

static enum blue_wc_opcode wc_opcode(uint32_t wr_opcode)
{
	switch (wr_opcode) {
	case BLUE_WR_RDMA_WRITE:
	case BLUE_WR_RDMA_WRITE_WITH_IMM:	return BLUE_WC_RDMA_WRITE;
	case BLUE_WR_RDMA_READ:			return BLUE_WC_RDMA_READ;
	case BLUE_WR_ATOMIC_CMP_AND_SWP:	return BLUE_WC_COMP_SWAP;
	case BLUE_WR_ATOMIC_FETCH_AND_ADD:	return BLUE_WC_FETCH_ADD;
	case BLUE_WR_BIND_MW:			return BLUE_WC_BIND_MW;
	case BLUE_WR_LOCAL_INV:			return BLUE_WC_LOCAL_INV;
	case BLUE_WR_ATOMIC_WRITE:		return BLUE_WC_ATOMIC_WRITE;
	case BLUE_WR_FLUSH:			return BLUE_WC_FLUSH;
	default:				return BLUE_WC_SEND;
	}
}

int blue__sq_complete(struct blue_qp *qp, enum blue_wc_status status)
{
	struct blue_ring *r = &qp->sq.ring;
	uint32_t idx = blue_ring_cons_own(r);
	const struct blue_send_wqe *w = blue__sq_wqe(qp, idx);
	struct blue_swqe_eng *e = blue__sq_eng(qp, idx);
	/* an error always completes, signaled or not (as rxe and every RNIC do) */
	bool signal = (w->send_flags & BLUE_SEND_SIGNALED) || status != BLUE_WC_SUCCESS;
	struct blue_wc wc = {
		.wr_id = w->wr_id,
		.status = status,
		.opcode = wc_opcode(w->opcode),
		.byte_len = w->length,
		.qp_num = blue__qp_wire_qpn(qp),
	};

	if (signal && !blue__cq_room(qp->send_cq))
		return -ENOSPC;
	if (w->post_ns && status == BLUE_WC_SUCCESS)	/* posted with diag on */
		blue__obs_lat_done(qp->ctx, w->opcode, w->post_ns);
	memset(e, 0, sizeof(*e));
	/*
	 * The slot goes back before the completion is published (w is not read after): a
	 * process that posts as soon as it polls (daemon mode: at once, from another
	 * process) finds the room the completion says it has.
	 */
	blue_ring_consume(r, 1);
	if (signal) {
		(void)blue__cq_push(qp->send_cq, &wc, false);	/* room checked above */
		BLUE_PROBE5(completion, qp->qpn, wc.wr_id, wc.status, wc.opcode, wc.byte_len);
	}
	/* the requester never stays behind the oldest WQE */
	if ((int32_t)(qp->req.idx - (idx + 1)) < 0) {
		qp->req.idx = idx + 1;
		qp->req.offset = 0;
	}
	return 0;
}

void blue__qp_flush(struct blue_qp *qp)
{
	(void)blue__sq_take(qp);	/* every WQE posted flushes, not only those seen */
	while (blue__sq_count(qp)) {
		const struct blue_swqe_eng *e =
			blue__sq_eng(qp, blue_ring_cons_own(&qp->sq.ring));
		enum blue_wc_status st = e->state == BLUE_SWQE_ERROR ?
					 (enum blue_wc_status)e->status : BLUE_WC_WR_FLUSH_ERR;

		if (blue__sq_complete(qp, st))
			break;
	}
	(void)blue__rq_flush(qp);
}
