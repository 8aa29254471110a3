// SPDX-License-Identifier: MIT
/*
 * The machine's 2 MiB hugetlb pool for unit tests that need pages in it (test_buf.c,
 * test_umem.c): see huge_pool.h.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "tests/unit/huge_pool.h"

#define NR_HUGE		"/proc/sys/vm/nr_hugepages"
#define SURP_HUGE	"/sys/kernel/mm/hugepages/hugepages-2048kB/surplus_hugepages"

long read_long(const char *path)
{
	FILE *f = fopen(path, "re");
	long v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static int write_long(const char *path, long v)
{
	FILE *f = fopen(path, "we");
	int err;

	if (!f)
		return -1;
	err = fprintf(f, "%ld\n", v) < 0;
	return fclose(f) || err ? -1 : 0;
}

/*
 * vm.nr_hugepages is one number for the whole machine, and Criterion runs tests in
 * parallel: every test that reads or changes the pool holds this lock, from
 * huge_lock() to huge_fini(), and gives back exactly the pages it added (a plain
 * save-and-restore would undo a parallel test's raise, or leak its own).
 */
#define HUGE_LOCK	"/run/lock/blue-test-hugepages.lock"

static int lock_fd = -1;
static long added;

void huge_lock(void)
{
	lock_fd = open(HUGE_LOCK, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lock_fd < 0)
		lock_fd = open("/tmp/blue-test-hugepages.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	cr_assert_geq(lock_fd, 0, "lock file: %s", strerror(errno));
	for (int i = 0; flock(lock_fd, LOCK_EX | LOCK_NB); i++) {
		if (i == 1000) {
			close(lock_fd);
			lock_fd = -1;
			cr_skip("another test held %s for 10 s", HUGE_LOCK);
		}
		usleep(10000);
	}
}

/*
 * The persistent pool: nr_hugepages counts surplus pages too (pages still mapped when
 * a pool was lowered, which go away when unmapped), but writing it sets the former.
 */
static long pool_size(void)
{
	long nr = read_long(NR_HUGE), surplus = read_long(SURP_HUGE);

	return nr < 0 ? -1 : nr - (surplus > 0 ? surplus : 0);
}

void huge_fini(void)
{
	long nr = pool_size();

	if (added && (nr < added || write_long(NR_HUGE, nr - added)))
		cr_log_error("could not give back the %ld hugetlb pages added", added);
	added = 0;
	unsetenv("BLUE_HUGEPAGES");
	if (lock_fd >= 0)
		close(lock_fd);	/* drops the lock */
	lock_fd = -1;
}

/* Add @need 2 MiB hugetlb pages to the pool (lock held): whether @need are free now. */
bool huge_try_reserve(long need)
{
	long nr = pool_size();

	if (nr < 0 || read_long(FREE_HUGE) < 0 || write_long(NR_HUGE, nr + need))
		return false;
	/* the kernel may find fewer free 2 MiB blocks than asked: count what it added */
	added = pool_size() - nr;
	if (added < 0)
		added = 0;
	return read_long(FREE_HUGE) >= need;
}

void huge_reserve(long need)
{
	if (read_long(FREE_HUGE) < 0)
		huge_skip("this kernel has no 2 MiB hugetlb pages (%s)", FREE_HUGE);
	if (!huge_try_reserve(need))
		huge_skip("the kernel found %ld of %ld free 2 MiB blocks for vm.nr_hugepages "
			  "(or %s is not writable: not root?)", read_long(FREE_HUGE), need, NR_HUGE);
}
