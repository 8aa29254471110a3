/* SPDX-License-Identifier: MIT */
/*
 * A single-producer single-consumer ring of fixed-size entries, the shape of rxe's
 * user/kernel queues (rdma-core providers/rxe/rxe_queue.h): one contiguous block that
 * holds a header (producer and consumer index, each on its own cache line) and then
 * 2^n entries. Nothing in the block is a pointer, so the block can later sit in shared
 * memory between an application and the engine in the manager daemon.
 *
 * The work queues (wq.c) and completion queues (cq.c) are built on it:
 *   send and receive queue: producer = API side (post_*), consumer = engine;
 *   completion queue:       producer = engine, consumer = API side (poll_cq).
 *
 * Indices are free-running 32-bit counters; an entry is at (index & mask). The ring is
 * full when prod - cons == size. Each side publishes its own index with a release store
 * and reads the other side's with an acquire load, so an entry's bytes are visible
 * before the index that hands it over.
 *
 * Geometry (mask, entry size) is kept in struct blue_ring, private to the process that
 * maps the block, and never re-read from the block: the other side could scribble on
 * the header, but not make us index outside our mapping. So is each side's own index
 * (prod_own, cons_own): the block's copy is only what it tells the other side, and a
 * count read across is clamped to the ring's size, so no lie in the header can send a
 * walk around the ring more than once.
 */
#ifndef BLUE_RUNTIME_RING_H
#define BLUE_RUNTIME_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BLUE_CACHELINE 64

/* The shared block's header; entries follow at offset sizeof(struct blue_ring_hdr). */
struct blue_ring_hdr {
	uint32_t prod __attribute__((aligned(BLUE_CACHELINE)));
	uint32_t cons __attribute__((aligned(BLUE_CACHELINE)));
	/* for a daemon that maps the block: what the creator laid out */
	uint32_t log2_size __attribute__((aligned(BLUE_CACHELINE)));
	uint32_t elem_size;
	/*
	 * A CQ's events when the consumer is another process (daemon mode, cq.c): the
	 * consumer arms (BLUE_RING_ARM_*), the producer disarms as it raises an event
	 * and counts it in @events.
	 */
	uint32_t arm;
	uint32_t events;
};

#define BLUE_RING_ARM_ANY	1u	/* the next completion raises an event */
#define BLUE_RING_ARM_SOLICITED	2u	/* the next solicited (or failed) one does */

_Static_assert(sizeof(struct blue_ring_hdr) == 3 * BLUE_CACHELINE, "ring header layout");

struct blue_ring {
	struct blue_ring_hdr *hdr;
	uint8_t *elems;
	uint32_t mask;
	uint32_t elem_size;
	size_t map_len;
	uint32_t prod;	/* the producer's own index, when this side produces */
	uint32_t cons;	/* the consumer's own index, when this side consumes */
};

/*
 * blue_ring_init() - map a ring of at least @min_count entries of @elem_size bytes
 * (both rounded up: the count to a power of two, the size to 16 bytes).
 * Return: 0 or -errno.
 */
int blue_ring_init(struct blue_ring *r, uint32_t min_count, uint32_t elem_size);
void blue_ring_fini(struct blue_ring *r);

/*
 * blue_ring_init_shared() - the same ring in a memfd, so that the block can be handed
 * to another process (SCM_RIGHTS) and mapped there with blue_ring_map(): the seam of
 * daemon mode (ARCHITECTURE.md, "Daemon mode"), where the API side and the engine sit
 * in different processes. *@fd is the memfd (close-on-exec), the caller's to close once
 * it has been handed over; the mapping does not need it.
 * Return: 0 or -errno.
 */
int blue_ring_init_shared(struct blue_ring *r, uint32_t min_count, uint32_t elem_size, int *fd);

/*
 * blue_ring_init_as() - blue_ring_init_shared() when @shared, else blue_ring_init() with
 * *@fd -1: the one call of a queue that may serve another process (daemon mode).
 */
int blue_ring_init_as(struct blue_ring *r, uint32_t min_count, uint32_t elem_size, bool shared,
		      int *fd);

/*
 * blue_ring_map() - map a block made by blue_ring_init_shared() in another process.
 * The geometry comes from the caller (what the creator said over the command channel),
 * never from the block: it is checked against the block's header and the memfd's size,
 * so a creator that lied cannot make us index outside the mapping.
 * @log2_size: log2 of the entry count; @elem_size: the rounded entry size.
 * Return: 0, or -EINVAL (geometry out of range, or not the block's: logged) or -errno.
 */
int blue_ring_map(struct blue_ring *r, int fd, uint32_t log2_size, uint32_t elem_size);

static inline uint32_t blue_ring_size(const struct blue_ring *r)
{
	return r->mask + 1;
}

/* The entry at free-running index @idx. Any side; the caller owns that entry. */
static inline void *blue_ring_elem(const struct blue_ring *r, uint32_t idx)
{
	return r->elems + (size_t)(idx & r->mask) * r->elem_size;
}

/* Producer side only: its own index (only it writes it). */
static inline uint32_t blue_ring_prod_own(const struct blue_ring *r)
{
	return r->prod;
}

/* Consumer side only: its own index (only it writes it). */
static inline uint32_t blue_ring_cons_own(const struct blue_ring *r)
{
	return r->cons;
}

/* Consumer side: the producer's index; entries before it are readable. */
static inline uint32_t blue_ring_prod_acquire(const struct blue_ring *r)
{
	return __atomic_load_n(&r->hdr->prod, __ATOMIC_ACQUIRE);
}

/* Producer side: the consumer's index; entries before it may be overwritten. */
static inline uint32_t blue_ring_cons_acquire(const struct blue_ring *r)
{
	return __atomic_load_n(&r->hdr->cons, __ATOMIC_ACQUIRE);
}

/*
 * Producer side: free entries. A consumer index that claims more was consumed than was
 * produced is a lie (another process's): no room, rather than room past the entries
 * still unread.
 */
static inline uint32_t blue_ring_room(const struct blue_ring *r)
{
	uint32_t used = blue_ring_prod_own(r) - blue_ring_cons_acquire(r);

	return used > blue_ring_size(r) ? 0 : blue_ring_size(r) - used;
}

/*
 * Consumer side: entries ready to consume, at most the ring's size whatever the
 * producer's index says: what a lie can cost is garbage entries, which the consumer
 * checks anyway when they come from another process (wqe_admit.c), never a walk of 2^32.
 */
static inline uint32_t blue_ring_count(const struct blue_ring *r)
{
	uint32_t n = blue_ring_prod_acquire(r) - blue_ring_cons_own(r);

	return n > blue_ring_size(r) ? blue_ring_size(r) : n;
}

/* Producer side: hand over @n written entries (release: their bytes first). */
static inline void blue_ring_produce(struct blue_ring *r, uint32_t n)
{
	r->prod += n;
	__atomic_store_n(&r->hdr->prod, r->prod, __ATOMIC_RELEASE);
}

/* Consumer side: give back @n entries (release: we are done reading them). */
static inline void blue_ring_consume(struct blue_ring *r, uint32_t n)
{
	r->cons += n;
	__atomic_store_n(&r->hdr->cons, r->cons, __ATOMIC_RELEASE);
}

/*
 * Reset both indices to 0. Only when neither side is using the ring (a QP going to
 * RESET, under the one-thread-per-context rule). In daemon mode each process resets
 * its own struct: the daemon at modify_qp, the API side when the reply says RESET.
 */
static inline void blue_ring_reset(struct blue_ring *r)
{
	r->prod = r->cons = 0;
	__atomic_store_n(&r->hdr->prod, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&r->hdr->cons, 0, __ATOMIC_RELEASE);
}

#endif /* BLUE_RUNTIME_RING_H */
