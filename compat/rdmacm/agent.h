/* SPDX-License-Identifier: MIT */
/*
 * The CM agent of one device (issue 16, "XDP steers QP1 to one CM agent per device"):
 * what the kernel's ib_mad + ib_cm do for rdma_cm, in this process.
 *
 *   - QP1: a UD QP with QPN 1 (made through our libibverbs' private
 *     blue_compat_create_gsi_qp, compat/gsi.c), Q_Key 0x80010000, P_Key index 0, in RTS,
 *     with receive buffers posted (40-byte GRH + 256-byte MAD each). blue's XDP program
 *     steers it like any QP: slot 1 of the QP-context table, owner QPN 1, so a MAD for
 *     QP1 reaches this process's socket and nothing else does.
 *   - A blue_ibcm endpoint (runtime/ibcm.h), local GID = the device's IPv4 GID, CA GUID
 *     = the node GUID. Its send op posts a MAD on QP1 to the peer's QP1 (remote Q_Key
 *     0x80010000) through an address handle per peer GID, cached; its event op calls
 *     cma_ibcm_event() (cma.h).
 *   - A thread that sleeps in poll() on QP1's completion channel and a wake-up eventfd,
 *     bounded by blue__ibcm_tick()'s next deadline, and, with the cma lock held, hands
 *     each received MAD to blue__ibcm_rx() (from = the source GID in the GRH: for RoCEv2
 *     over IPv4 the IPv4 header is the GRH area's last 20 bytes) and runs the tick.
 *     Send completions are reaped; a failed one is counted.
 *   - Counters: the IB CM's (struct blue_ibcm_stats: every malformed or unexpected MAD
 *     dropped per reason) plus the agent's own (struct cma_agent_stats), printed at
 *     exit with BLUE_RDMACM_STATS=1 and readable by tests through cma_agent_stats().
 *
 * Everything here is called with the cma lock held (cma.h), and the agent's thread takes
 * it before it touches the IB CM (so cma_agent_put drops the lock while it joins the
 * thread).
 */
#ifndef BLUE_COMPAT_RDMACM_AGENT_H
#define BLUE_COMPAT_RDMACM_AGENT_H

#include "compat/rdmacm/cma.h"

struct cma_agent_stats {
	uint64_t	rx_mads;	/* receive completions handed to the IB CM */
	uint64_t	rx_short;	/* receive completions under 40 + 24 bytes: dropped */
	/* added with agent.c: receive completions over 40 + 256 bytes, dropped (the buffers
	 * hold a whole MTU, so that an oversized datagram cannot fail a WQE and put QP1 in
	 * ERROR) */
	uint64_t	rx_long;
	uint64_t	rx_bad_grh;	/* no IPv4/IPv6 source in the GRH: dropped */
	uint64_t	rx_err;		/* receive completions in error (flushes not counted) */
	/* added with agent.c: QP1 moved back from ERROR to RTS (after a failed receive) */
	uint64_t	qp_resets;
	uint64_t	tx_mads;	/* MADs posted */
	uint64_t	tx_err;		/* posts refused or send completions in error */
	uint64_t	ah_err;		/* no address handle (neighbour did not resolve) */
};

/**
 * cma_agent_get() - @dev's agent, made at the first call (QP1, its CQ, PD, buffers,
 * the thread). Takes a reference.
 * Return: 0 and *@out, or -errno with a line logged that names the device and the cause
 * (-EADDRINUSE: QP1 of this device belongs to another process).
 */
int cma_agent_get(struct cma_dev *dev, struct cma_agent **out) CMA_HIDDEN;

/**
 * cma_agent_put() - drop a reference; the last stops the thread and frees QP1. Called
 * from the agent's own thread (in cma_ibcm_event, say) it returns at once and the thread
 * frees the agent after its current pass (added with agent.c: it cannot join itself).
 */
void cma_agent_put(struct cma_agent *a) CMA_HIDDEN;

/** cma_agent_ibcm() - the agent's IB CM endpoint, for blue__ibcm_* calls. */
struct blue_ibcm *cma_agent_ibcm(struct cma_agent *a) CMA_HIDDEN;

/**
 * cma_agent_listen() - REQs and SIDR_REQs for @service_id to this process's IB CM (@on),
 * or no longer; in daemon mode the device's shared QP1 is told too (compat/gsi.c).
 * Return: 0 (this process listened already: 0 too), -EADDRINUSE (another process on
 * the device listens on it), or -errno.
 */
int cma_agent_listen(struct cma_agent *a, uint64_t service_id, bool on) CMA_HIDDEN;

/**
 * cma_agent_kick() - an API call changed the IB CM's timers (connect, accept,
 * disconnect...): wake the thread so that it sleeps to the new deadline.
 */
void cma_agent_kick(struct cma_agent *a) CMA_HIDDEN;

/**
 * cma_agent_ah() - an address handle on @a's PD for the peer @gid (cached; the first
 * call resolves the neighbour, bounded by our libibverbs' neighbour wait). rdma_cm's
 * UD ids use it too (rdma_resolve_route checks reachability with it).
 * Return: 0 and *@ah (owned by the agent), or -errno (-EHOSTUNREACH: no neighbour).
 */
int cma_agent_ah(struct cma_agent *a, const uint8_t gid[16], struct ibv_ah **ah) CMA_HIDDEN;

/** cma_agent_stats() - the agent's counters. */
const struct cma_agent_stats *cma_agent_stats(const struct cma_agent *a) CMA_HIDDEN;

#endif
