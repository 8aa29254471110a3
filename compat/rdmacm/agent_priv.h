/* SPDX-License-Identifier: MIT */
/*
 * What the files of the CM agent share (agent.h is its interface to the rest of
 * librdmacm): the agent itself and its sizes.
 *   agent.c     making and freeing, the IB CM's ops (send, event), the thread, counters
 *   agent_qp.c  QP1: to RTS, its receive buffers, reaping its CQ, back from ERROR
 *   agent_ah.c  address handles per peer GID, and the peers that did not resolve
 * Everything here runs with the cma lock held.
 */
#ifndef BLUE_COMPAT_RDMACM_AGENT_PRIV_H
#define BLUE_COMPAT_RDMACM_AGENT_PRIV_H

#include "compat/rdmacm/agent.h"

/* compat/gsi.c, exported by our libibverbs.so.1 at BLUE_PRIVATE_1.0 */
struct ibv_qp *blue_compat_create_gsi_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
int blue_compat_gsi_id_prefix(struct ibv_qp *qp);
int blue_compat_gsi_listen(struct ibv_qp *qp, uint64_t service_id, int on);

/* w-scale: 256 each (were 64): cmtime -c 256 sends 256 REQs (and gets 256 REPs) in a
 * burst; a MAD with no receive buffer is lost and waits a CM response timeout (~4 s) */
#define AGENT_NRECV	256			/* receive buffers posted on QP1 */
#define AGENT_NSEND	256			/* send buffers (a ring) */
/* w-scale: the IB CM's records (connections being made, up, or in TIMEWAIT), as many
 * as blue's QP table has slots (the IB CM's own default, 64, refused the 65th connect
 * with ENOSPC) */
#define AGENT_MAX_CONNS	4096
#define AGENT_GRH	40
/* A receive buffer: the GRH and a MAD. Room for a whole 4096-byte MTU after the GRH, so
 * that an oversized datagram completes (and is counted, rx_long) instead of failing its
 * WQE with a length error, which would move QP1 to ERROR: one hostile frame would end
 * the agent. */
#define AGENT_RBUF	(AGENT_GRH + 4096)
#define AGENT_NAH	32			/* address handles cached, per peer GID */
/* Peers whose neighbour did not resolve, remembered so that the next MAD to them fails
 * at once: each try blocks (our libibverbs' neighbour wait, ~1 s) with the lock held,
 * and a REQ from a spoofed source would otherwise stall every rdma_cm call that long. */
#define AGENT_NNEG	16
#define AGENT_NEG_NS	(5ull * 1000000000ull)
#define AGENT_SLEEP_MS	100			/* the thread's longest sleep */
#define AGENT_HOP_LIMIT	64
#define WR_SEND		(1ull << 32)		/* wr_id: send buffer index | WR_SEND */

struct agent_ah {
	uint8_t		gid[16];
	struct ibv_ah	*ah;
};

struct agent_neg {
	uint8_t		gid[16];
	uint64_t	until_ns;	/* 0: a free entry */
};

struct cma_agent {
	struct cma_dev		*dev;
	unsigned int		refs;
	struct ibv_pd		*pd;
	struct ibv_comp_channel	*ch;
	struct ibv_cq		*cq;
	struct ibv_qp		*qp;
	struct ibv_mr		*mr;
	uint8_t			*mem;		/* AGENT_NRECV receive, then AGENT_NSEND send buffers */
	uint64_t		tx_posted, tx_done;
	struct agent_ah		ahs[AGENT_NAH];
	unsigned int		ah_next;	/* the next victim when the cache is full */
	struct agent_neg	neg[AGENT_NNEG];	/* unreachable peers, for a while */
	unsigned int		neg_next;
	struct blue_ibcm	*cm;
	int			efd;		/* cma_agent_kick */
	pthread_t		thread;
	bool			thread_started;
	bool			stop;
	bool			freed_by_thread;	/* the last put came from the thread */
	bool			stats_printed;
	bool			qp_failed;	/* a receive failed: QP1 may be in ERROR */
	const char		*name;		/* the device's, for messages */
	struct cma_agent	*next;		/* on the list of live agents (for exit) */
	struct cma_agent_stats	st;
};

static inline uint8_t *rbuf(struct cma_agent *a, unsigned int i)
{
	return a->mem + (size_t)i * AGENT_RBUF;
}

static inline uint8_t *sbuf(struct cma_agent *a, unsigned int i)
{
	return a->mem + (size_t)AGENT_NRECV * AGENT_RBUF + (size_t)i * BLUE_IBCM_MAD_SIZE;
}

/* agent_ah.c: @gid's AH (cached; @neg: a peer that failed lately fails at once, for the
 * agent's own MADs); 0 or -errno. agent_ah_fini: every cached AH destroyed. */
int agent_ah(struct cma_agent *a, const uint8_t gid[16], struct ibv_ah **ah, bool neg)
	CMA_HIDDEN;
void agent_ah_fini(struct cma_agent *a) CMA_HIDDEN;

/* agent_qp.c: QP1 through INIT, RTR, RTS (0 or -errno after a line); receive buffer @i
 * posted (0 or an errno); the CQ reaped, true if its budget ran out. */
int agent_qp_up(struct cma_agent *a) CMA_HIDDEN;
int agent_recv_post(struct cma_agent *a, unsigned int i) CMA_HIDDEN;
bool agent_reap(struct cma_agent *a) CMA_HIDDEN;

#endif
