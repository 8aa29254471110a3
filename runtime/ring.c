// SPDX-License-Identifier: MIT
/* Mapping and unmapping a ring block (see ring.h). */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "runtime/ring.h"

#define BLUE_RING_MAX (1u << 20)

int blue_ring_init(struct blue_ring *r, uint32_t min_count, uint32_t elem_size)
{
	uint32_t n = 1, log2 = 0;
	size_t len;
	void *p;

	memset(r, 0, sizeof(*r));
	if (!min_count || min_count > BLUE_RING_MAX || !elem_size || elem_size > 65536)
		return -EINVAL;
	while (n < min_count) {
		n <<= 1;
		log2++;
	}
	elem_size = (elem_size + 15) & ~15u;
	len = sizeof(struct blue_ring_hdr) + (size_t)n * elem_size;
	/*
	 * An anonymous shared mapping rather than malloc: page-aligned, zeroed, and the
	 * same kind of memory a daemon would hand over as a memfd.
	 */
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	r->hdr = p;
	r->elems = (uint8_t *)p + sizeof(struct blue_ring_hdr);
	r->mask = n - 1;
	r->elem_size = elem_size;
	r->map_len = len;
	r->hdr->log2_size = log2;
	r->hdr->elem_size = elem_size;
	return 0;
}

void blue_ring_fini(struct blue_ring *r)
{
	if (r->hdr)
		munmap(r->hdr, r->map_len);
	memset(r, 0, sizeof(*r));
}
