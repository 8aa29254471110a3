// SPDX-License-Identifier: MIT
/* 2 MiB page mappings: hugetlb and transparent huge pages (see hugemap.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "afxdp_hal/hugemap.h"

#ifndef MAP_HUGE_2MB
#define MAP_HUGE_2MB	(21 << MAP_HUGE_SHIFT)
#endif

void *blue_hugetlb_map(size_t size)
{
	void *a;

	if (!size || (size & (BLUE_HUGE_2M - 1))) {
		errno = EINVAL;
		return NULL;
	}
	/*
	 * A private hugetlb mapping takes its pages from the reserved pool at mmap time
	 * (hugetlbpage.rst: "reserved" pages), so a short pool fails here with ENOMEM
	 * rather than with SIGBUS on a later fault; MAP_POPULATE then faults them in.
	 * MAP_HUGE_2MB: the size is explicit, whatever the default huge page size is.
	 */
	a = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE | MAP_HUGETLB | MAP_HUGE_2MB, -1, 0);
	return a == MAP_FAILED ? NULL : a;
}

void *blue_thp_map(size_t size)
{
	size_t span = size + BLUE_HUGE_2M - getpagesize();
	uint8_t *raw, *a;
	size_t head;

	if (!size || (size & (BLUE_HUGE_2M - 1)) || span < size) {
		errno = EINVAL;
		return NULL;
	}
	/*
	 * A huge page can back only a 2 MiB-aligned 2 MiB block that lies inside the
	 * mapping: over-map by one huge page less a page, keep the aligned middle and
	 * give the slack on both sides back, so munmap(@size) frees all of it.
	 */
	raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		return NULL;
	a = (uint8_t *)(((uintptr_t)raw + BLUE_HUGE_2M - 1) & ~(uintptr_t)(BLUE_HUGE_2M - 1));
	head = (size_t)(a - raw);
	if (head)
		munmap(raw, head);
	if (span - head > size)
		munmap(a + size, span - head - size);
	if (madvise(a, size, MADV_HUGEPAGE)) {
		int err = errno;

		munmap(a, size);
		errno = err;
		return NULL;
	}
	return a;
}

bool blue_thp_enabled(void)
{
	char mode[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "re");

	if (!f)
		return false;	/* a kernel without THP */
	if (!fgets(mode, sizeof(mode), f))
		mode[0] = '\0';
	fclose(f);
	/* the active mode is the bracketed one: "always [madvise] never" */
	return strstr(mode, "[always]") || strstr(mode, "[madvise]");
}
