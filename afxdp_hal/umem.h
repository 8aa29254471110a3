/* SPDX-License-Identifier: MIT */
/*
 * UMEM: one page-aligned area cut into equal frames, a frame pool (a stack of free frame
 * addresses) and, for AF_XDP, the fill and completion rings of the netdev queue.
 *
 * One fill ring and one completion ring serve every socket on the queue: sockets bound
 * with XDP_SHARED_UMEM to the same netdev and queue share the owner's rings (kernel
 * Documentation/networking/af_xdp.rst, "XDP_SHARED_UMEM bind flag"). So the pool and
 * both rings live here, once per HAL, not per socket.
 *
 * Threading: the caller serialises every call (the HAL's one-thread rule).
 */
#ifndef BLUE_UMEM_H
#define BLUE_UMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <xdp/xsk.h>

/*
 * The free-frame stack. @in_pool has one byte per frame so that a double free or a
 * foreign address is refused (and counted) instead of corrupting the stack.
 */
struct blue_fpool {
	uint64_t *stack;	/* frame base addresses (UMEM offsets) */
	uint8_t *in_pool;	/* per frame: 1 while on the stack */
	uint32_t top;		/* frames on the stack */
	uint32_t count;		/* frames in this pool */
	uint32_t frame_shift;	/* log2(frame size) */
	uint64_t base;		/* UMEM offset of the pool's first frame */
	uint64_t bad_frees;	/* refused pushes: double free or bad address */
};

struct blue_umem {
	uint8_t *area;
	size_t size;
	uint32_t frame_size;
	uint32_t frame_count;
	bool hugepages;		/* the area is backed by 2 MiB pages (MAP_HUGETLB) */
	struct blue_fpool pool;
	/*
	 * Multi-buffer mode (blue_umem_split_tx): TX frames are pairs of adjacent chunks,
	 * from a pool of their own above tx_pairs.base (0 in a TX-only UMEM: all pairs), so
	 * a ~4.2 KB frame is contiguous for the builder and goes out as two descriptors.
	 * Otherwise txpool is &pool.
	 */
	struct blue_fpool tx_pairs;
	struct blue_fpool *txpool;

	/* AF_XDP only: NULL when the area is plain memory (loopback HAL) */
	struct xsk_umem *xumem;
	struct xsk_ring_prod fill;
	struct xsk_ring_cons comp;
	uint32_t fill_target;	/* frames to keep on the fill ring */
	uint32_t in_fill;	/* frames currently owned by the fill ring or RX rings */
	uint64_t fill_empty;	/* top-ups that found the pool empty */
};

/*
 * Map a page-aligned area of @frame_count frames of @frame_size bytes (power of two,
 * 2048..4096) and fill the pool with all of them. With @try_huge the area is first
 * asked for in 2 MiB pages (fewer TLB misses on a 16 MiB UMEM), and plain pages are
 * used when none are reserved (vm.nr_hugepages); u->hugepages says which. Returns 0 or
 * -errno.
 */
int blue_umem_init(struct blue_umem *u, uint32_t frame_count, uint32_t frame_size);
int blue_umem_init_ex(struct blue_umem *u, uint32_t frame_count, uint32_t frame_size,
		      bool try_huge);

/*
 * Keep frames [0, @rx_frames) in u->pool for RX, and cut the rest into TX frames of two
 * adjacent chunks in u->tx_pairs. Only before any frame is handed out. Returns 0 or
 * -errno (@rx_frames must be even and leave at least two frames).
 */
int blue_umem_split_tx(struct blue_umem *u, uint32_t rx_frames);

/* Put a TX frame (any address inside it) back where it came from. */
bool blue_umem_tx_put(struct blue_umem *u, uint64_t addr);

/* Whether blue_umem_split_tx() gave TX its own pool of pairs. */
static inline bool blue_umem_split(const struct blue_umem *u)
{
	return u->txpool == &u->tx_pairs;
}

/*
 * Register the area as an AF_XDP UMEM (libxdp xsk_umem__create) with fill and completion
 * rings of the given sizes, and keep @fill_target frames on the fill ring from then on
 * (0: RX is not used). Returns 0 or -errno.
 */
int blue_umem_register(struct blue_umem *u, uint32_t fill_size, uint32_t comp_size,
		       uint32_t fill_target);

/* Drop the AF_XDP registration (all sockets must be gone) but keep the area. */
void blue_umem_unregister(struct blue_umem *u);

/* Unregister if needed and unmap. Safe on a zeroed struct. */
void blue_umem_fini(struct blue_umem *u);

/* Base address of the frame holding UMEM offset @addr (aligned chunk mode). */
static inline uint64_t blue_umem_frame_base(const struct blue_umem *u, uint64_t addr)
{
	return addr & ~(uint64_t)(u->frame_size - 1);
}

static inline uint8_t *blue_umem_data(const struct blue_umem *u, uint64_t addr)
{
	return u->area + addr;
}

/* Pop up to @n free frame base addresses; returns how many. */
uint32_t blue_fpool_get(struct blue_fpool *p, uint64_t *addrs, uint32_t n);

/*
 * Push one frame back, given any address inside it. Returns false (and counts it) for an
 * address outside the UMEM or a frame already free.
 */
bool blue_fpool_put(struct blue_fpool *p, uint64_t addr);

static inline uint32_t blue_fpool_avail(const struct blue_fpool *p)
{
	return p->top;
}

/*
 * Move frames from the pool to the fill ring until it holds fill_target frames. Returns
 * how many were added. Counts fill_empty when the pool ran dry first.
 */
uint32_t blue_umem_fill_topup(struct blue_umem *u);

/* Take every completed TX frame off the completion ring back into the pool. */
uint32_t blue_umem_reap(struct blue_umem *u);

#endif /* BLUE_UMEM_H */
