// SPDX-License-Identifier: MIT
/* UMEM area, frame pool, fill-ring top-up and completion reaping (see umem.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "afxdp_hal/hugemap.h"
#include "afxdp_hal/umem.h"

static int pool_init(struct blue_fpool *p, uint32_t count, uint32_t frame_size, uint64_t base)
{
	uint32_t i;

	memset(p, 0, sizeof(*p));
	p->stack = calloc(count, sizeof(*p->stack));
	p->in_pool = calloc(count, 1);
	if (!p->stack || !p->in_pool) {
		free(p->stack);
		free(p->in_pool);
		p->stack = NULL;
		p->in_pool = NULL;
		return -ENOMEM;
	}
	p->count = count;
	p->base = base;
	p->frame_shift = (uint32_t)__builtin_ctz(frame_size);
	/* Push in reverse so the first allocations hand out frame 0, 1, 2...: easier to
	 * read in a dump, and the order of a fresh pool is deterministic for tests. */
	for (i = count; i-- > 0;) {
		p->stack[p->top++] = base + ((uint64_t)i << p->frame_shift);
		p->in_pool[i] = 1;
	}
	return 0;
}

uint32_t blue_fpool_get(struct blue_fpool *p, uint64_t *addrs, uint32_t n)
{
	uint32_t i;

	if (n > p->top)
		n = p->top;
	for (i = 0; i < n; i++) {
		uint64_t a = p->stack[--p->top];

		p->in_pool[(a - p->base) >> p->frame_shift] = 0;
		addrs[i] = a;
	}
	return n;
}

bool blue_fpool_put(struct blue_fpool *p, uint64_t addr)
{
	uint64_t idx = (addr - p->base) >> p->frame_shift;

	if (addr < p->base || idx >= p->count || p->in_pool[idx]) {
		p->bad_frees++;
		return false;
	}
	p->in_pool[idx] = 1;
	p->stack[p->top++] = p->base + (idx << p->frame_shift);
	return true;
}

static void pool_fini(struct blue_fpool *p)
{
	free(p->stack);
	free(p->in_pool);
	memset(p, 0, sizeof(*p));
}

/*
 * The UMEM area. XDP_UMEM_REG needs page alignment, which mmap gives. 2 MiB pages
 * cover a 16 MiB UMEM with 8 TLB entries instead of 4096; they come only from the
 * reserved pool (vm.nr_hugepages), so an empty pool falls back to 4 KiB pages.
 */
static void *area_map(size_t size, bool try_huge, bool *huge)
{
	void *a;

	*huge = false;
	if (try_huge) {
		a = blue_hugetlb_map(size);	/* NULL, EINVAL, unless whole 2 MiB pages */
		if (a) {
			*huge = true;
			return a;
		}
	}
	return mmap(NULL, size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
}

int blue_umem_init(struct blue_umem *u, uint32_t frame_count, uint32_t frame_size)
{
	return blue_umem_init_ex(u, frame_count, frame_size, false);
}

int blue_umem_init_ex(struct blue_umem *u, uint32_t frame_count, uint32_t frame_size,
		      bool try_huge)
{
	int err;

	memset(u, 0, sizeof(*u));
	if (frame_count == 0 || (frame_count & (frame_count - 1)) ||
	    (frame_size != 2048 && frame_size != 4096))
		return -EINVAL;
	u->frame_count = frame_count;
	u->frame_size = frame_size;
	u->size = (size_t)frame_count * frame_size;
	u->area = area_map(u->size, try_huge, &u->hugepages);
	if (u->area == MAP_FAILED) {
		u->area = NULL;
		return -errno;
	}
	err = pool_init(&u->pool, frame_count, frame_size, 0);
	if (err) {
		munmap(u->area, u->size);
		u->area = NULL;
	}
	u->txpool = &u->pool;
	return err;
}

int blue_umem_split_tx(struct blue_umem *u, uint32_t rx_frames)
{
	int err;

	if ((rx_frames & 1) || rx_frames + 2 > u->frame_count || blue_umem_split(u) ||
	    u->pool.top != u->frame_count)
		return -EINVAL;
	err = pool_init(&u->tx_pairs, (u->frame_count - rx_frames) / 2, u->frame_size * 2,
			(uint64_t)rx_frames * u->frame_size);
	if (err)
		return err;
	/* The RX pool keeps its layout but only its low frames. */
	pool_fini(&u->pool);
	err = pool_init(&u->pool, rx_frames, u->frame_size, 0);
	if (err) {
		pool_fini(&u->tx_pairs);
		/* fall back to one pool of every frame, as before the call */
		if (pool_init(&u->pool, u->frame_count, u->frame_size, 0))
			return -ENOMEM;
		return err;
	}
	u->txpool = &u->tx_pairs;
	return 0;
}

bool blue_umem_tx_put(struct blue_umem *u, uint64_t addr)
{
	if (!blue_umem_split(u) || addr < u->tx_pairs.base)
		return blue_fpool_put(&u->pool, addr);
	/* A pair goes out as two descriptors and completes as two: the second chunk's
	 * completion is the same frame, already returned by the first. */
	if ((addr - u->tx_pairs.base) & u->frame_size)
		return true;
	return blue_fpool_put(&u->tx_pairs, addr);
}

int blue_umem_register(struct blue_umem *u, uint32_t fill_size, uint32_t comp_size,
		       uint32_t fill_target)
{
	struct xsk_umem_config cfg = {
		.fill_size = fill_size,
		.comp_size = comp_size,
		.frame_size = u->frame_size,
		.frame_headroom = 0,
		.flags = 0,
	};
	int err;

	err = xsk_umem__create(&u->xumem, u->area, u->size, &u->fill, &u->comp, &cfg);
	if (err) {
		u->xumem = NULL;
		return err;
	}
	u->fill_target = fill_target < fill_size ? fill_target : fill_size;
	u->in_fill = 0;
	return 0;
}

void blue_umem_unregister(struct blue_umem *u)
{
	if (u->xumem)
		xsk_umem__delete(u->xumem);
	u->xumem = NULL;
	memset(&u->fill, 0, sizeof(u->fill));
	memset(&u->comp, 0, sizeof(u->comp));
	u->fill_target = 0;
	u->in_fill = 0;
}

void blue_umem_fini(struct blue_umem *u)
{
	blue_umem_unregister(u);
	if (u->area)
		munmap(u->area, u->size);
	pool_fini(&u->pool);
	pool_fini(&u->tx_pairs);
	memset(u, 0, sizeof(*u));
}

uint32_t blue_umem_fill_topup(struct blue_umem *u)
{
	uint64_t addrs[64];
	uint32_t want, room, got, idx = 0, i, done = 0;

	if (!u->xumem || u->in_fill >= u->fill_target)
		return 0;
	want = u->fill_target - u->in_fill;
	room = xsk_prod_nb_free(&u->fill, want);
	if (want > room)
		want = room;
	while (done < want) {
		uint32_t chunk = want - done < 64 ? want - done : 64;

		got = blue_fpool_get(&u->pool, addrs, chunk);
		if (!got)
			break;
		/* room was checked above, so the reservation cannot fail */
		xsk_ring_prod__reserve(&u->fill, got, &idx);
		for (i = 0; i < got; i++)
			*xsk_ring_prod__fill_addr(&u->fill, idx + i) = addrs[i];
		xsk_ring_prod__submit(&u->fill, got);
		done += got;
		if (got < chunk)
			break;
	}
	if (done < want)
		u->fill_empty++;
	u->in_fill += done;
	return done;
}

uint32_t blue_umem_reap(struct blue_umem *u)
{
	uint32_t n, idx = 0, i;

	if (!u->xumem)
		return 0;
	n = xsk_ring_cons__peek(&u->comp, u->comp.size, &idx);
	for (i = 0; i < n; i++)
		blue_umem_tx_put(u, *xsk_ring_cons__comp_addr(&u->comp, idx + i));
	if (n)
		xsk_ring_cons__release(&u->comp, n);
	return n;
}
