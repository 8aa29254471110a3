/* SPDX-License-Identifier: MIT */
/*
 * 2 MiB page mappings, shared by the UMEM area (umem.c) and the MR buffers that
 * applications get from blue_buf_alloc() (runtime/buf.c).
 *
 * Why: every payload byte is copied once between a UMEM frame and an MR, so both sides
 * walk memory linearly at line rate. With 4 KiB pages a 16 MiB MR needs 4096 TLB
 * entries, far past the L2 TLB (1.5-2K entries on current x86), and the copy takes a
 * page walk every 4 KiB; 2 MiB pages cover the same MR with 8 entries.
 *
 * Two kinds exist (kernel Documentation/admin-guide/mm/hugetlbpage.rst and
 * transhuge.rst): hugetlb pages come only from the pool reserved by vm.nr_hugepages and
 * are guaranteed once mmap succeeds; transparent huge pages (THP) need no reservation
 * but are best effort: the kernel falls back to 4 KiB pages when it finds no free
 * 2 MiB block.
 */
#ifndef BLUE_HUGEMAP_H
#define BLUE_HUGEMAP_H

#include <stdbool.h>
#include <stddef.h>

#define BLUE_HUGE_2M	((size_t)2 << 20)

static inline size_t blue_huge_roundup(size_t n)
{
	return (n + BLUE_HUGE_2M - 1) & ~(BLUE_HUGE_2M - 1);
}

/*
 * blue_hugetlb_map() - @size bytes (a multiple of 2 MiB) of hugetlb 2 MiB pages, zeroed
 * and faulted in. Return: the area, or NULL with errno set (ENOMEM when the reserved
 * pool has fewer free pages than needed, EINVAL for a bad @size). Free with munmap().
 */
void *blue_hugetlb_map(size_t size);

/*
 * blue_thp_map() - @size bytes (a multiple of 2 MiB) of anonymous memory, 2 MiB aligned
 * and advised MADV_HUGEPAGE, not yet faulted (a page faulted before the advice would be
 * a 4 KiB one). Return: the area, or NULL with errno set. Free with munmap(@size).
 */
void *blue_thp_map(size_t size);

/*
 * blue_thp_enabled() - whether THP serves madvised memory: the mode in
 * /sys/kernel/mm/transparent_hugepage/enabled is "always" or "madvise".
 */
bool blue_thp_enabled(void);

#endif /* BLUE_HUGEMAP_H */
