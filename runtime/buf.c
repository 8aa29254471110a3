// SPDX-License-Identifier: MIT
/*
 * blue_buf_alloc(): memory for applications to register as MRs, on 2 MiB pages where the
 * machine has them (blue.h).
 *
 * Why: the engine copies every payload byte between a UMEM frame and the MR, walking the
 * MR linearly. On 4 KiB pages a 16 MiB MR spans 4096 pages, more than the L2 TLB holds,
 * so the copy pays a page walk every 4 KiB; 2 MiB pages cover it with 8 TLB entries. The
 * UMEM side already gets 2 MiB pages (umem.c); this is the MR side.
 *
 * Free without a header or a table: the mapping's size depends on @len alone, whatever
 * kind of page backs it. A buffer over half a huge page is mapped in whole 2 MiB units
 * (hugetlb needs it; the THP and 4 KiB fallbacks take the same size and fault only the
 * pages under @len, so the tail is address space, not memory); a smaller one is mapped in
 * 4 KiB pages only, so blue_buf_free() recomputes the size from @len.
 *
 * In daemon mode (blue__mgr_wanted) a buffer is a memfd instead, hugetlb first, kept in
 * a list so that blue_reg_mr() can hand it to blue-manager (buf.h). Measured on these
 * machines (2 cores, the process reading its own memory): memcpy 4 ns for 8 B, 43 ns
 * for 4 KiB; process_vm_readv 1.4-1.7 us per call for 8 B to 4 KiB (0.4-0.7 us per copy
 * with 16 iovecs a call), 6 us for 64 KiB. A WRITE round trip copies at both ends, so
 * process_vm would add about 3 us to the 8 B latency, where a mapped memfd adds none.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <blue/blue.h>
#include "afxdp_hal/hugemap.h"
#include "runtime/buf.h"
#include "runtime/log.h"
#include "runtime/mgr_sock.h"

#ifndef MFD_HUGETLB
#define MFD_HUGETLB	0x0004U
#endif

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23	/* Linux 5.14 */
#endif

/* Below this a 2 MiB page would be over half slack: 4 KiB pages only. */
#define BUF_HUGE_MIN	(BLUE_HUGE_2M / 2)
/*
 * No mapping can be this large: x86-64 with 4-level page tables gives a process 128 TiB
 * of address space. Refusing early keeps the round-ups below from wrapping.
 */
#define BUF_MAX		((size_t)1 << 47)

static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

static bool buf_huge(size_t len)
{
	return len > BUF_HUGE_MIN;
}

/* The size of the mapping behind a buffer of @len bytes (see the top of the file). */
static size_t buf_map_len(size_t len)
{
	size_t pg = page_size();

	return buf_huge(len) ? blue_huge_roundup(len) : (len + pg - 1) & ~(pg - 1);
}

/*
 * Fault in the first @len bytes for writing, so that neither the engine's copy nor the
 * application's first touch takes the faults later (and a short machine fails here, with
 * ENOMEM, instead of with SIGBUS/OOM in the data path).
 */
static int populate(void *p, size_t len)
{
	size_t pg = page_size();
	volatile uint8_t *b = p;

	if (!madvise(p, len, MADV_POPULATE_WRITE))
		return 0;
	if (errno != EINVAL)
		return -ENOMEM;
	/* a kernel before 5.14: touch each page (writing the zero that is there) */
	for (size_t off = 0; off < len; off += pg)
		b[off] = 0;
	return 0;
}

/* @p (a mapping of @map_len bytes, or NULL) with its first @len bytes faulted in, or
 * NULL with errno ENOMEM after unmapping it. */
static void *populated(void *p, size_t map_len, size_t len)
{
	if (p && populate(p, len)) {
		munmap(p, map_len);
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

/* 4 KiB pages: MADV_NOHUGEPAGE so that THP "always" mode does not turn them into more. */
static void *map_small(size_t map_len, size_t len)
{
	void *p = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	/* EINVAL on a kernel without THP, where there is nothing to prevent */
	(void)madvise(p, map_len, MADV_NOHUGEPAGE);
	return populated(p, map_len, len);
}

/* The memfd buffers (daemon mode), newest first. */
struct shared_buf {
	uint8_t *addr;
	size_t map_len;
	int fd;
	struct shared_buf *next;
};

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shared_buf *shared_bufs;

/*
 * Sealed at its size: blue-manager maps it and refuses one that could shrink under its
 * mapping (the engine's next copy would fault in the daemon).
 */
static int seal(int fd)
{
	return fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW);
}

/*
 * A sealed memfd of @map_len bytes (@mfd_flags: MFD_HUGETLB or 0), mapped shared with
 * its first @len bytes faulted in. Return: the mapping with *@fd, or NULL.
 */
static void *memfd_map(size_t map_len, size_t len, unsigned int mfd_flags, int *fd)
{
	void *p = MAP_FAILED;

	*fd = memfd_create("blue-buf", MFD_CLOEXEC | MFD_ALLOW_SEALING | mfd_flags);
	if (*fd < 0)
		return NULL;
	if (ftruncate(*fd, (off_t)map_len) || seal(*fd) ||
	    (p = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0)) == MAP_FAILED ||
	    populate(p, len)) {
		if (p != MAP_FAILED)
			munmap(p, map_len);
		close(*fd);
		*fd = -1;
		return NULL;
	}
	return p;
}

/* A memfd buffer, hugetlb when @huge (and the pool has it), listed for blue__buf_find. */
static void *map_memfd(size_t map_len, size_t len, bool huge, unsigned int *flags)
{
	struct shared_buf *b = calloc(1, sizeof(*b));
	void *p = NULL;
	int fd = -1;

	if (!b)
		return NULL;
	if (huge)
		p = memfd_map(map_len, len, MFD_HUGETLB, &fd);
	if (p)
		*flags = BLUE_BUF_HUGETLB;
	else
		p = memfd_map(map_len, len, 0, &fd);
	if (!p) {
		free(b);
		return NULL;
	}
	b->addr = p;
	b->map_len = map_len;
	b->fd = fd;
	pthread_mutex_lock(&shared_lock);
	b->next = shared_bufs;
	shared_bufs = b;
	pthread_mutex_unlock(&shared_lock);
	return p;
}

int blue__buf_find(const void *addr, size_t len, int *fd, uint64_t *off)
{
	const uint8_t *a = addr;
	int err = -ENOENT;

	pthread_mutex_lock(&shared_lock);
	for (struct shared_buf *b = shared_bufs; b; b = b->next) {
		if (a >= b->addr && a - b->addr <= (ptrdiff_t)b->map_len &&
		    len <= b->map_len - (size_t)(a - b->addr)) {
			*fd = b->fd;
			*off = (uint64_t)(a - b->addr);
			err = 0;
			break;
		}
	}
	pthread_mutex_unlock(&shared_lock);
	return err;
}

/* Unmap @buf if it is a memfd buffer. Return: whether it was one. */
static bool free_memfd(void *buf)
{
	struct shared_buf **pp, *b = NULL;

	pthread_mutex_lock(&shared_lock);
	for (pp = &shared_bufs; *pp; pp = &(*pp)->next) {
		if ((*pp)->addr == buf) {
			b = *pp;
			*pp = b->next;
			break;
		}
	}
	pthread_mutex_unlock(&shared_lock);
	if (!b)
		return false;
	munmap(b->addr, b->map_len);
	close(b->fd);
	free(b);
	return true;
}

void *blue_buf_alloc(size_t len, unsigned int *flags_out)
{
	bool huge = buf_huge(len) && blue__env_flag("BLUE_HUGEPAGES", true);
	size_t map_len, pg = page_size();
	unsigned int flags = 0;
	void *p = NULL;

	if (flags_out)
		*flags_out = 0;
	if (!len || len > BUF_MAX) {
		blue__logf("buf_alloc: len %zu is %s", len,
			   len ? "more than any process can map" : "zero: nothing to allocate");
		errno = EINVAL;
		return NULL;
	}
	map_len = buf_map_len(len);
	if (blue__mgr_wanted())
		p = map_memfd(map_len, (len + pg - 1) & ~(pg - 1), huge, &flags);
	if (!p && huge) {
		/* ENOMEM here is an empty or short pool: not an error, the next kind serves */
		p = blue_hugetlb_map(map_len);
		if (p)
			flags = BLUE_BUF_HUGETLB;
	}
	if (!p && huge && blue_thp_enabled()) {
		p = populated(blue_thp_map(map_len), map_len, (len + pg - 1) & ~(pg - 1));
		if (p)
			flags = BLUE_BUF_THP;
	}
	if (!p)
		p = map_small(map_len, (len + pg - 1) & ~(pg - 1));
	if (!p) {
		blue__logf("buf_alloc: cannot map %zu bytes: %s (ulimit -v, free memory?)",
			   map_len, strerror(errno));
		errno = ENOMEM;
		return NULL;
	}
	if (blue__env_flag("BLUE_VERBOSE", false))
		blue__logf("buf_alloc: %zu bytes on %s", len,
			   flags & BLUE_BUF_HUGETLB ? "2 MiB hugetlb pages" :
			   flags & BLUE_BUF_THP ? "transparent huge pages (madvise)" :
			   "4 KiB pages");
	if (flags_out)
		*flags_out = flags;
	return p;
}

void blue_buf_free(void *buf, size_t len)
{
	if (!buf || !len || len > BUF_MAX || free_memfd(buf))
		return;
	if (munmap(buf, buf_map_len(len)))
		blue__logf("buf_free: %p: %s (not a blue_buf_alloc buffer of %zu bytes?)", buf,
			   strerror(errno), len);
}
