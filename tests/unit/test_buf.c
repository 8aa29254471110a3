// SPDX-License-Identifier: MIT
/*
 * blue_buf_alloc() (runtime/buf.c): argument checks, odd sizes zeroed and writable end
 * to end, and which pages really back a buffer, read back from /proc/self/smaps:
 * KernelPageSize 2048 kB for hugetlb, 4 kB (and no AnonHugePages) with BLUE_HUGEPAGES=0.
 * A hugetlb buffer is then registered as an MR and written by the peer over the loopback
 * HAL.
 *
 * The hugetlb tests raise vm.nr_hugepages by the pages they need (tests run as root) and
 * put the old value back in .fini, pass or fail; a kernel that cannot find the 2 MiB
 * blocks is a skip that says so.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <unistd.h>

#include <blue/blue.h>
#include "tests/unit/huge_pool.h"
#include "tests/unit/rc_fixture.h"

#define MiB		((size_t)1 << 20)
/* 3 MiB and an odd tail: two 2 MiB pages, and a last page only partly used */
#define HUGE_LEN	(3 * MiB + 12345)
#define HUGE_PAGES	2

/*
 * A "Name:   N kB" field of the smaps entry of the mapping that holds @p, or -1 when
 * no mapping holds it or it has no such field.
 */
static long smaps_kb(const void *p, const char *field)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	uintptr_t a = (uintptr_t)p, lo, hi;
	size_t flen = strlen(field);
	bool in = false;
	char line[512];
	long v = -1;

	cr_assert_not_null(f, "/proc/self/smaps: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		/* a mapping's first line is "lo-hi perms ...", its fields "Name: value" */
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &lo, &hi) == 2) {
			if (in)
				break;	/* the next mapping: ours had no such field */
			in = lo <= a && a < hi;
			continue;
		}
		if (in && !strncmp(line, field, flen) && line[flen] == ':') {
			v = strtol(line + flen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

/* Whether the page holding @p is mapped: msync allocates nothing (smaps_kb would). */
static bool mapped(const void *p)
{
	return !msync((void *)((uintptr_t)p & ~(uintptr_t)4095), 1, MS_ASYNC) || errno != ENOMEM;
}

/* Every byte of @p zero, then writable and readable back end to end. */
static void check_buf(uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i])
			cr_assert_fail("byte %zu of %zu is %#x, not zero", i, len, p[i]);
	rc_fill(p, len, (unsigned int)len);
	cr_assert(rc_check(p, len, (unsigned int)len), "%zu bytes did not read back", len);
}

Test(buf, bad_args_are_einval)
{
	unsigned int flags = 77;

	setenv("BLUE_LOG", "0", 1);
	errno = 0;
	cr_assert_null(blue_buf_alloc(0, &flags));
	cr_assert_eq(errno, EINVAL, "len 0: errno %d", errno);
	cr_assert_eq(flags, 0, "flags are cleared even on failure");
	errno = 0;
	cr_assert_null(blue_buf_alloc(SIZE_MAX, NULL));
	cr_assert_eq(errno, EINVAL, "len SIZE_MAX: errno %d", errno);
	errno = 0;
	cr_assert_null(blue_buf_alloc(SIZE_MAX - 4096, NULL), "a round-up must not wrap");
	cr_assert_eq(errno, EINVAL);
	blue_buf_free(NULL, 4096);	/* a no-op */
}

/* locked: the 2 MiB and larger sizes may take pages from a pool another test added */
Test(buf, odd_sizes_zeroed_writable_aligned, .fini = huge_fini)
{
	const size_t lens[] = { 1, 4095, 4097, MiB - 1, MiB + 1, 2 * MiB, HUGE_LEN };
	uint8_t *p[sizeof(lens) / sizeof(lens[0])];
	unsigned int flags;

	huge_lock();
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		p[i] = blue_buf_alloc(lens[i], &flags);
		cr_assert_not_null(p[i], "len %zu: %s", lens[i], strerror(errno));
		cr_assert_eq((uintptr_t)p[i] % 4096, 0, "len %zu: %p not page-aligned",
			     lens[i], p[i]);
		if (flags)
			cr_assert_eq((uintptr_t)p[i] % (2 * MiB), 0,
				     "len %zu on 2 MiB pages (flags %#x) but %p not 2 MiB aligned",
				     lens[i], flags, p[i]);
		if (lens[i] <= MiB)
			cr_assert_eq(flags, 0, "len %zu: too small for 2 MiB pages, flags %#x",
				     lens[i], flags);
		check_buf(p[i], lens[i]);
	}
	/* freed in another order than allocated: each unmaps exactly its own mapping */
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i += 2)
		blue_buf_free(p[i], lens[i]);
	for (size_t i = 1; i < sizeof(lens) / sizeof(lens[0]); i += 2) {
		cr_assert(rc_check(p[i], lens[i], (unsigned int)lens[i]),
			  "len %zu: changed when its neighbours were freed", lens[i]);
		cr_assert(mapped(p[i]), "len %zu: unmapped too early", lens[i]);
		blue_buf_free(p[i], lens[i]);
	}
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		cr_assert_not(mapped(p[i] + lens[i] - 1), "len %zu: still mapped after free",
			      lens[i]);
}

Test(buf, hugetlb_when_reserved, .fini = huge_fini)
{
	unsigned int flags;
	uint8_t *p;

	huge_lock();
	huge_reserve(HUGE_PAGES);
	p = blue_buf_alloc(HUGE_LEN, &flags);
	cr_assert_not_null(p, "%s", strerror(errno));
	if (!(flags & BLUE_BUF_HUGETLB) && read_long(FREE_HUGE) < HUGE_PAGES) {
		blue_buf_free(p, HUGE_LEN);
		huge_skip("another process took the 2 MiB pages added for this test");
	}
	cr_assert_eq(flags, BLUE_BUF_HUGETLB, "flags %#x with %d free hugetlb pages", flags,
		     HUGE_PAGES);
	cr_assert_eq((uintptr_t)p % (2 * MiB), 0);
	cr_assert_eq(smaps_kb(p, "KernelPageSize"), 2048, "smaps: %ld kB pages",
		     smaps_kb(p, "KernelPageSize"));
	cr_assert_eq(smaps_kb(p + HUGE_LEN - 1, "KernelPageSize"), 2048);
	check_buf(p, HUGE_LEN);
	blue_buf_free(p, HUGE_LEN);
	cr_assert_not(mapped(p), "still mapped after free");
	cr_assert_geq(read_long(FREE_HUGE), HUGE_PAGES, "the pages went back to the pool");
}

Test(buf, env_off_gives_4k_pages, .fini = huge_fini)
{
	unsigned int flags = 77;
	uint8_t *p;

	/* even with pages reserved (when the kernel has them), the knob wins */
	huge_lock();
	(void)huge_try_reserve(HUGE_PAGES);
	setenv("BLUE_HUGEPAGES", "0", 1);
	p = blue_buf_alloc(HUGE_LEN, &flags);
	cr_assert_not_null(p, "%s", strerror(errno));
	cr_assert_eq(flags, 0, "BLUE_HUGEPAGES=0 but flags %#x", flags);
	cr_assert_eq(smaps_kb(p, "KernelPageSize"), 4, "smaps: %ld kB pages",
		     smaps_kb(p, "KernelPageSize"));
	cr_assert_eq(smaps_kb(p, "AnonHugePages"), 0, "THP crept in: %ld kB",
		     smaps_kb(p, "AnonHugePages"));
	check_buf(p, HUGE_LEN);
	blue_buf_free(p, HUGE_LEN);
}

/* Without a reserved pool, THP (when the kernel has it in "madvise" or "always" mode). */
Test(buf, thp_without_a_pool, .fini = huge_fini)
{
	char mode[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "re");
	unsigned int flags;
	uint8_t *p;
	long thp;

	if (f) {
		if (!fgets(mode, sizeof(mode), f))
			mode[0] = '\0';
		fclose(f);
	}
	if (!strstr(mode, "[madvise]") && !strstr(mode, "[always]"))
		huge_skip("THP is off on this kernel: '%s'", mode);
	huge_lock();
	if (read_long(FREE_HUGE) >= HUGE_PAGES)
		huge_skip("%ld hugetlb pages are free, so hugetlb wins", read_long(FREE_HUGE));
	p = blue_buf_alloc(HUGE_LEN, &flags);
	cr_assert_not_null(p, "%s", strerror(errno));
	if (flags & BLUE_BUF_HUGETLB) {
		blue_buf_free(p, HUGE_LEN);
		huge_skip("another process reserved hugetlb pages meanwhile");
	}
	cr_assert_eq(flags, BLUE_BUF_THP, "flags %#x", flags);
	cr_assert_eq((uintptr_t)p % (2 * MiB), 0, "%p: THP needs 2 MiB alignment", p);
	thp = smaps_kb(p, "AnonHugePages");
	check_buf(p, HUGE_LEN);
	blue_buf_free(p, HUGE_LEN);
	/* THP is best effort: the kernel may have found no free 2 MiB block */
	if (thp <= 0)
		huge_skip("advised, but the kernel gave no huge page (memory fragmented?)");
	cr_assert_geq(thp, 2048, "AnonHugePages %ld kB", thp);
}

/* A hugetlb buffer as an MR: the peer RDMA WRITEs 1 MiB across the 2 MiB page boundary. */
Test(buf, hugetlb_buffer_is_an_mr, .fini = huge_fini)
{
	const size_t off = 2 * MiB - 1000, wlen = MiB;
	unsigned int rw = BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE;
	struct blue_mr *smr, *dmr;
	struct blue_send_wr wr;
	struct blue_sge sge;
	struct blue_wc wc;
	unsigned int flags;
	struct rc_fx fx;
	uint8_t *src, *dst;

	huge_lock();
	huge_reserve(HUGE_PAGES);
	dst = blue_buf_alloc(HUGE_LEN, &flags);
	cr_assert_not_null(dst, "%s", strerror(errno));
	if (!(flags & BLUE_BUF_HUGETLB) && read_long(FREE_HUGE) < HUGE_PAGES) {
		blue_buf_free(dst, HUGE_LEN);
		huge_skip("no hugetlb pages after all (flags %#x): another process took them",
			  flags);
	}
	cr_assert_eq(flags, BLUE_BUF_HUGETLB, "flags %#x with %d free hugetlb pages", flags,
		     HUGE_PAGES);
	src = blue_buf_alloc(wlen, NULL);
	cr_assert_not_null(src);
	rc_fill(src, wlen, 21);
	rc_fx_init(&fx, NULL);
	smr = blue_reg_mr(fx.a.pd, src, wlen, rw);
	dmr = blue_reg_mr(fx.b.pd, dst, HUGE_LEN, rw);
	cr_assert(smr && dmr, "reg_mr: %s", strerror(errno));

	sge = (struct blue_sge){ .addr = (uintptr_t)src, .length = (uint32_t)wlen,
				 .lkey = smr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 9;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = BLUE_WR_RDMA_WRITE;
	wr.send_flags = BLUE_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)dst + off;
	wr.wr.rdma.rkey = dmr->rkey;
	rc_post_send(&fx.a, &wr);
	wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "write: %s", blue_wc_status_str(wc.status));
	cr_assert_eq(wc.wr_id, 9);
	cr_assert(rc_check(dst + off, wlen, 21), "the written bytes differ");
	for (size_t i = 0; i < off; i++)
		if (dst[i])
			cr_assert_fail("byte %zu before the target is %#x", i, dst[i]);
	for (size_t i = off + wlen; i < HUGE_LEN; i++)
		if (dst[i])
			cr_assert_fail("byte %zu past the target is %#x", i, dst[i]);

	cr_assert_eq(blue_dereg_mr(smr), 0);
	cr_assert_eq(blue_dereg_mr(dmr), 0);
	rc_fx_fini(&fx);
	blue_buf_free(src, wlen);
	blue_buf_free(dst, HUGE_LEN);
}
