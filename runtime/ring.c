// SPDX-License-Identifier: MIT
/* Mapping and unmapping a ring block (see ring.h), anonymous or in a memfd. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "runtime/log.h"
#include "runtime/ring.h"

#define BLUE_RING_MAX (1u << 20)
#define BLUE_RING_MAX_ELEM 65536u

/* The geometry of a ring of at least @min_count entries of @elem_size bytes. */
static int ring_geometry(uint32_t min_count, uint32_t elem_size, uint32_t *log2,
			 uint32_t *esize, size_t *len)
{
	uint32_t n = 1;

	if (!min_count || min_count > BLUE_RING_MAX || !elem_size ||
	    elem_size > BLUE_RING_MAX_ELEM)
		return -EINVAL;
	*log2 = 0;
	while (n < min_count) {
		n <<= 1;
		(*log2)++;
	}
	*esize = (elem_size + 15) & ~15u;
	*len = sizeof(struct blue_ring_hdr) + (size_t)n * *esize;
	return 0;
}

static void ring_set(struct blue_ring *r, void *p, uint32_t log2, uint32_t esize, size_t len)
{
	r->hdr = p;
	r->elems = (uint8_t *)p + sizeof(struct blue_ring_hdr);
	r->mask = (1u << log2) - 1;
	r->elem_size = esize;
	r->map_len = len;
}

/* A new block at @p: its header says what the creator laid out. */
static void ring_make(struct blue_ring *r, void *p, uint32_t log2, uint32_t esize, size_t len)
{
	ring_set(r, p, log2, esize, len);
	r->hdr->log2_size = log2;
	r->hdr->elem_size = esize;
}

int blue_ring_init(struct blue_ring *r, uint32_t min_count, uint32_t elem_size)
{
	uint32_t log2, esize;
	size_t len;
	void *p;
	int err;

	memset(r, 0, sizeof(*r));
	err = ring_geometry(min_count, elem_size, &log2, &esize, &len);
	if (err)
		return err;
	/*
	 * An anonymous shared mapping rather than malloc: page-aligned, zeroed, and the
	 * same kind of memory as the memfd of blue_ring_init_shared().
	 */
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	ring_make(r, p, log2, esize, len);
	return 0;
}

int blue_ring_init_shared(struct blue_ring *r, uint32_t min_count, uint32_t elem_size, int *fd)
{
	uint32_t log2, esize;
	size_t len;
	void *p;
	int err, mfd;

	memset(r, 0, sizeof(*r));
	*fd = -1;
	err = ring_geometry(min_count, elem_size, &log2, &esize, &len);
	if (err)
		return err;
	mfd = memfd_create("blue-ring", MFD_CLOEXEC);
	if (mfd < 0)
		return -errno;
	if (ftruncate(mfd, (off_t)len) < 0) {
		err = -errno;
		close(mfd);
		return err;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	if (p == MAP_FAILED) {
		err = -errno;
		close(mfd);
		return err;
	}
	ring_make(r, p, log2, esize, len);
	*fd = mfd;
	return 0;
}

int blue_ring_init_as(struct blue_ring *r, uint32_t min_count, uint32_t elem_size, bool shared,
		      int *fd)
{
	*fd = -1;
	return shared ? blue_ring_init_shared(r, min_count, elem_size, fd) :
			blue_ring_init(r, min_count, elem_size);
}

int blue_ring_map(struct blue_ring *r, int fd, uint32_t log2_size, uint32_t elem_size)
{
	const struct blue_ring_hdr *h;
	uint32_t log2, esize;
	struct stat st;
	size_t len;
	void *p;
	int err;

	memset(r, 0, sizeof(*r));
	if (log2_size > 20 || (elem_size & 15) ||
	    ring_geometry(1u << log2_size, elem_size, &log2, &esize, &len) ||
	    log2 != log2_size || esize != elem_size) {
		blue__logf("ring_map: a ring of 2^%u entries of %u bytes is out of range "
			   "(at most 2^20 entries of at most %u bytes, a multiple of 16)",
			   log2_size, elem_size, BLUE_RING_MAX_ELEM);
		return -EINVAL;
	}
	if (fstat(fd, &st) < 0)
		return -errno;
	if (st.st_size < 0 || (size_t)st.st_size < len) {
		blue__logf("ring_map: the block is %lld bytes; 2^%u entries of %u bytes need %zu",
			   (long long)st.st_size, log2_size, elem_size, len);
		return -EINVAL;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	h = p;
	if (h->log2_size != log2_size || h->elem_size != elem_size) {
		blue__logf("ring_map: the block was laid out as 2^%u entries of %u bytes, "
			   "not the 2^%u of %u it was handed over as",
			   h->log2_size, h->elem_size, log2_size, elem_size);
		err = -EINVAL;
		munmap(p, len);
		return err;
	}
	ring_set(r, p, log2_size, elem_size, len);
	r->prod = __atomic_load_n(&h->prod, __ATOMIC_ACQUIRE);
	r->cons = __atomic_load_n(&h->cons, __ATOMIC_ACQUIRE);
	return 0;
}

void blue_ring_fini(struct blue_ring *r)
{
	if (r->hdr)
		munmap(r->hdr, r->map_len);
	memset(r, 0, sizeof(*r));
}
