// SPDX-License-Identifier: MIT
/*
 * The UMEM frame pools (afxdp_hal/umem.c), in particular the multi-buffer layout: RX
 * keeps single chunks, TX gets pairs of adjacent chunks that a ~4.2 KB frame (IB path
 * MTU 4096) spans, and a pair that went out as two descriptors completes twice but
 * returns to its pool once. No socket is needed: the pools are plain memory.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "afxdp_hal/umem.h"
#include "tests/unit/huge_pool.h"

#define CHUNK	4096u
#define FRAMES	64u

static struct blue_umem u;

static void fini(void)
{
	blue_umem_fini(&u);
}

Test(umem, split_pairs_are_adjacent_and_disjoint_from_rx, .fini = fini)
{
	uint64_t rx[FRAMES], tx[FRAMES];
	uint32_t nrx, ntx, i, j;

	cr_assert_eq(blue_umem_init(&u, FRAMES, CHUNK), 0);
	cr_assert_eq(u.txpool, &u.pool, "unsplit: one pool serves both");
	cr_assert_eq(blue_umem_split_tx(&u, FRAMES / 2), 0);
	cr_assert_eq(u.txpool, &u.tx_pairs);
	nrx = blue_fpool_get(&u.pool, rx, FRAMES);
	ntx = blue_fpool_get(u.txpool, tx, FRAMES);
	cr_assert_eq(nrx, FRAMES / 2, "RX keeps the low half: %u frames", nrx);
	cr_assert_eq(ntx, FRAMES / 4, "TX gets the high half in pairs: %u", ntx);
	for (i = 0; i < nrx; i++)
		cr_assert_lt(rx[i], (uint64_t)FRAMES / 2 * CHUNK, "RX frame %#lx in the TX half",
			     (unsigned long)rx[i]);
	for (i = 0; i < ntx; i++) {
		cr_assert_geq(tx[i], u.tx_pairs.base);
		cr_assert_eq((tx[i] - u.tx_pairs.base) % (2 * CHUNK), 0, "pair %#lx not aligned",
			     (unsigned long)tx[i]);
		cr_assert_leq(tx[i] + 2 * CHUNK, u.size, "pair runs past the UMEM");
		for (j = 0; j < i; j++)
			cr_assert_neq(tx[i], tx[j]);
	}
}

Test(umem, pair_completes_twice_returns_once, .fini = fini)
{
	uint64_t a, b;

	cr_assert_eq(blue_umem_init(&u, FRAMES, CHUNK), 0);
	cr_assert_eq(blue_umem_split_tx(&u, FRAMES / 2), 0);
	cr_assert_eq(blue_fpool_get(u.txpool, &a, 1), 1);
	cr_assert_eq(blue_fpool_avail(u.txpool), FRAMES / 4 - 1);
	/* the two completions of a two-descriptor packet: first chunk, then second */
	cr_assert(blue_umem_tx_put(&u, a));
	cr_assert(blue_umem_tx_put(&u, a + CHUNK));
	cr_assert_eq(blue_fpool_avail(u.txpool), FRAMES / 4, "the pair came back once");
	cr_assert_eq(u.tx_pairs.bad_frees, 0);
	/* a real double free is still refused and counted */
	cr_assert_not(blue_umem_tx_put(&u, a));
	cr_assert_eq(u.tx_pairs.bad_frees, 1);
	/* the same pair is handed out again, whole */
	cr_assert_eq(blue_fpool_get(u.txpool, &b, 1), 1);
	cr_assert_eq(b, a);
	/* an RX chunk given to tx_put goes back to the RX pool */
	cr_assert_eq(blue_fpool_get(&u.pool, &a, 1), 1);
	cr_assert(blue_umem_tx_put(&u, a + 256));
	cr_assert_eq(blue_fpool_avail(&u.pool), FRAMES / 2);
}

Test(umem, split_refuses_bad_layouts, .fini = fini)
{
	uint64_t a;

	cr_assert_eq(blue_umem_init(&u, FRAMES, CHUNK), 0);
	cr_assert_eq(blue_umem_split_tx(&u, 3), -EINVAL, "odd RX count");
	cr_assert_eq(blue_umem_split_tx(&u, FRAMES), -EINVAL, "no room for one pair");
	cr_assert_eq(blue_fpool_get(&u.pool, &a, 1), 1);
	cr_assert_eq(blue_umem_split_tx(&u, FRAMES / 2), -EINVAL, "a frame is out");
	cr_assert(blue_fpool_put(&u.pool, a));
	cr_assert_eq(blue_umem_split_tx(&u, FRAMES / 2), 0);
	cr_assert_eq(blue_umem_split_tx(&u, FRAMES / 2), -EINVAL, "split twice");
}

#define HUGE_AREA_PAGES	((long)((size_t)FRAMES * 8 * CHUNK / HUGE_2M_BYTES))

static void huge_area_fini(void)
{
	blue_umem_fini(&u);
	huge_fini();
}

Test(umem, hugepages_fall_back_quietly, .fini = huge_area_fini)
{
	bool free_pages;

	/* whatever vm.nr_hugepages holds, the area exists and says which pages it got */
	huge_lock();
	free_pages = read_long(FREE_HUGE) >= HUGE_AREA_PAGES;
	cr_assert_eq(blue_umem_init_ex(&u, FRAMES * 8, CHUNK, true), 0);
	cr_assert_not_null(u.area);
	cr_assert_eq(u.hugepages, free_pages, "hugepages %d with %ld free 2 MiB pages",
		     u.hugepages, read_long(FREE_HUGE));
	memset(u.area, 0xa5, u.size);
	blue_umem_fini(&u);
	cr_assert_eq(blue_umem_init_ex(&u, 0, CHUNK, true), -EINVAL);
}

Test(umem, hugepages_when_reserved, .fini = huge_area_fini)
{
	huge_lock();
	huge_reserve(HUGE_AREA_PAGES);
	cr_assert_eq(blue_umem_init_ex(&u, FRAMES * 8, CHUNK, true), 0);
	cr_assert(u.hugepages, "%ld 2 MiB pages reserved, but the UMEM got 4 KiB pages",
		  HUGE_AREA_PAGES);
	memset(u.area, 0xa5, u.size);
	/* and without asking for them, none */
	blue_umem_fini(&u);
	cr_assert_eq(blue_umem_init_ex(&u, FRAMES * 8, CHUNK, false), 0);
	cr_assert_not(u.hugepages);
}

/* A TX-only UMEM (hal_rate's sender) is all pairs, from address 0: their completions must
 * come back to the pair pool, or the sender runs dry after one pool's worth of frames. */
Test(umem, tx_only_split_returns_pairs, .fini = fini)
{
	uint64_t tx[FRAMES];
	uint32_t n, i;

	cr_assert_eq(blue_umem_init(&u, FRAMES, CHUNK), 0);
	cr_assert_eq(blue_umem_split_tx(&u, 0), 0);
	cr_assert(blue_umem_split(&u));
	n = blue_fpool_get(u.txpool, tx, FRAMES);
	cr_assert_eq(n, FRAMES / 2, "all %u chunks in pairs: %u", FRAMES, n);
	cr_assert_eq(blue_fpool_avail(u.txpool), 0);
	for (i = 0; i < n; i++) {
		cr_assert(blue_umem_tx_put(&u, tx[i]));
		cr_assert(blue_umem_tx_put(&u, tx[i] + CHUNK));
	}
	cr_assert_eq(blue_fpool_avail(u.txpool), FRAMES / 2, "every pair came back");
	cr_assert_eq(u.tx_pairs.bad_frees, 0);
}
