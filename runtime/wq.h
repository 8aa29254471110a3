/* SPDX-License-Identifier: MIT */
/*
 * Work queues: the send and receive queues of a QP, rings (ring.h) of fixed-size WQEs.
 * A WQE copies everything the engine needs out of the application's work request (the
 * SGE list, inline data, remote address and keys), so nothing in the ring points into
 * the application's heap except the data buffers the WR names: the same contract as
 * rxe's user/kernel queues, and what lets a daemon read the ring from shared memory.
 *
 * Producer: blue_post_send()/blue_post_recv(). Consumer: the engine (requester and
 * completer for the send queue, responder for the receive queue).
 */
#ifndef BLUE_RUNTIME_WQ_H
#define BLUE_RUNTIME_WQ_H

#include <stdbool.h>
#include <stdint.h>
#include <blue/blue.h>

#include "runtime/ring.h"

/* struct blue_sge holds addr/length/lkey and no pointer: the WQE's SGE as it is. */

struct blue_send_wqe {
	uint64_t wr_id;
	uint32_t opcode;	/* enum blue_wr_opcode */
	uint32_t send_flags;	/* SIGNALED already resolved against sq_sig_all */
	uint32_t imm_data;	/* network order, as posted */
	uint32_t num_sge;	/* SGEs that follow; 0 when the data is inline */
	uint32_t length;	/* message bytes: sum of the SGEs, or the inline bytes */
	uint32_t rkey;
	uint64_t remote_addr;
	uint64_t compare_add;
	uint64_t swap;
	uint64_t post_ns;	/* CLOCK_MONOTONIC at post with diag on (latency), else 0 */
	/* UD: the destination, copied from the AH at post (no pointer into the heap) */
	struct {
		uint8_t dgid[16];	/* the AH's: IPv4-mapped or IPv6 */
		uint8_t sgid_index;	/* the AH's source GID */
		uint32_t dqpn;
		uint32_t qkey;		/* as posted: the controlled Q_Key rule applies at send */
		uint8_t dmac[6];
		uint8_t tclass;
	} ud;
	/* BIND_MW: the window and what it is bound to (remote_addr: where; rkey: its new key) */
	struct {
		struct blue_mw *mw;
		struct blue_mr *mr;
		uint64_t length;
		uint32_t access;
	} bind;
	/* then num_sge struct blue_sge, or length bytes of inline data */
	uint8_t data[] __attribute__((aligned(16)));
};

struct blue_recv_wqe {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t length;	/* sum of the SGE lengths */
	struct blue_sge sge[];
};

struct blue_wq {
	struct blue_ring ring;
	uint32_t max_wr;	/* what the application may have posted at once */
	uint32_t max_sge;
	uint32_t max_inline;	/* send queue only */
	int shm_fd;		/* the ring's memfd until handed to the API side (daemon
				 * mode, blue__wq_init @shared), else -1 */
};

/* How many more WRs may be posted: none on a queue made for 0 */
static inline uint32_t blue__wq_room(const struct blue_wq *wq)
{
	return wq->max_wr ? blue_ring_room(&wq->ring) : 0;
}

static inline struct blue_send_wqe *blue_sq_wqe(const struct blue_wq *wq, uint32_t idx)
{
	return (struct blue_send_wqe *)blue_ring_elem(&wq->ring, idx);
}

static inline struct blue_recv_wqe *blue_rq_wqe(const struct blue_wq *wq, uint32_t idx)
{
	return (struct blue_recv_wqe *)blue_ring_elem(&wq->ring, idx);
}

static inline const struct blue_sge *blue_wqe_sges(const struct blue_send_wqe *w)
{
	return (const struct blue_sge *)w->data;
}

/* Whether a WR opcode is a READ, or an atomic: both wait for a response with data. */
static inline int blue_op_is_read(uint32_t op)
{
	return op == BLUE_WR_RDMA_READ;
}

static inline int blue_op_is_atomic(uint32_t op)
{
	return op == BLUE_WR_ATOMIC_CMP_AND_SWP || op == BLUE_WR_ATOMIC_FETCH_AND_ADD;
}

/*
 * ATOMIC WRITE and FLUSH (IBA 1.5): one request packet each, answered like a READ with
 * no data; each holds a responder resource, as READs and atomics do (aw.h).
 */
static inline int blue_op_is_aw(uint32_t op)
{
	return op == BLUE_WR_ATOMIC_WRITE || op == BLUE_WR_FLUSH;
}

/* Whether the WQE waits for a response of its own: a plain ACK cannot retire it. */
static inline int blue_op_wants_resp(uint32_t op)
{
	return blue_op_is_read(op) || blue_op_is_atomic(op) || blue_op_is_aw(op);
}

static inline int blue_wqe_is_inline(const struct blue_send_wqe *w)
{
	return (w->send_flags & BLUE_SEND_INLINE) != 0;
}

/*
 * blue__wq_init() - a queue of at least @max_wr WQEs (@is_send picks the layout); with
 * @shared its ring is in a memfd (wq->shm_fd), for a process that maps it (daemon mode).
 */
int blue__wq_init(struct blue_wq *wq, int is_send, uint32_t max_wr, uint32_t max_sge,
		  uint32_t max_inline, bool shared) __attribute__((visibility("hidden")));
void blue__wq_fini(struct blue_wq *wq) __attribute__((visibility("hidden")));

/*
 * blue__wq_post_recv() - check each receive WR against @wq and copy it in, publishing
 * the batch at once: the one body of blue_post_recv() and blue_post_srq_recv().
 * @who, @id: what a message names ("post_recv: QP", the QPN).
 * Return: 0, or EINVAL/ENOMEM with *@bad_wr at the first WR not posted.
 */
int blue__wq_post_recv(struct blue_wq *wq, const char *who, uint32_t id,
		       struct blue_recv_wr *wr, struct blue_recv_wr **bad_wr)
	__attribute__((visibility("hidden")));

#endif /* BLUE_RUNTIME_WQ_H */
