// SPDX-License-Identifier: MIT
/*
 * QP slot ownership (runtime/slot_owner.c): a slot of a shared QP-context table is
 * freed when its owner is dead, and only then. What the owner's PID says cannot decide
 * it: an owner in another PID namespace (a container sharing the host's bpffs) has a
 * PID that means nothing here, and a dead owner's PID may belong to another process
 * by now. The table here is shared memory and the lock directory a temporary one, as
 * the pinned qp_ctx map and its pin directory are on a netdev.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "runtime/slot_owner.h"

#define SLOT	77u
#define QPN	(5u << 12 | SLOT)

static struct blue_qp_ctx *tbl;
static char dir[] = "/tmp/blue-slot-owner-XXXXXX";

static void setup(void)
{
	tbl = mmap(NULL, BLUE_MAX_QP * sizeof(*tbl), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	cr_assert(tbl != MAP_FAILED);
	cr_assert(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
}

static void teardown(void)
{
	munmap(tbl, BLUE_MAX_QP * sizeof(*tbl));
	rmdir(dir);
}

/* Claim @slot as the runtime does: qpn, then the mark, then owner_pid. */
static void claim(unsigned int slot, int fd, uint32_t pid)
{
	tbl[slot].qpn = QPN;
	tbl[slot].state = BLUE_QPS_RTS;
	cr_assert_eq(blue__slot_own(fd, slot), 0);
	__atomic_store_n(&tbl[slot].owner_pid, pid, __ATOMIC_RELEASE);
}

/* A PID no process has here, so kill(pid, 0) says ESRCH. */
static pid_t unused_pid(void)
{
	pid_t p;

	for (p = 30000; p < 4000000; p += 7)
		if (kill(p, 0) < 0 && errno == ESRCH)
			return p;
	cr_assert_fail("no unused PID found");
	return 0;
}

/*
 * In a new PID namespace, make the process with PID @pid there (ns_last_pid), have it
 * claim SLOT and report on @ready, then hold it until @hold reaches EOF. Runs as the
 * namespace's init; exit status 0 when all went well.
 */
static int pidns_owner(pid_t pid, int ready, int hold)
{
	char buf[16];
	pid_t child;
	int fd, st;

	fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY);
	if (fd < 0 || dprintf(fd, "%d", pid - 1) < 0)
		return 10;
	close(fd);
	child = fork();
	if (child < 0)
		return 11;
	if (child == 0) {
		int lock_fd = blue__slot_owner_open(dir);

		if (lock_fd < 0 || getpid() != pid)
			_exit(12);
		/* claim() without Criterion's asserts, which belong to the test process */
		tbl[SLOT].qpn = QPN;
		tbl[SLOT].state = BLUE_QPS_RTS;
		if (blue__slot_own(lock_fd, SLOT))
			_exit(15);
		__atomic_store_n(&tbl[SLOT].owner_pid, (uint32_t)getpid(), __ATOMIC_RELEASE);
		if (write(ready, "r", 1) != 1)
			_exit(13);
		while (read(hold, buf, sizeof(buf)) > 0)
			;
		_exit(0);
	}
	close(ready);
	close(hold);
	if (waitpid(child, &st, 0) != child || !WIFEXITED(st))
		return 14;
	return WEXITSTATUS(st);
}

Test(slot_owner, live_owner_in_another_pid_namespace_is_kept, .init = setup, .fini = teardown)
{
	int ready[2], hold[2], st;
	pid_t pid = unused_pid(), outer;
	struct pollfd pfd;
	char c;
	int fd;

	if (geteuid() != 0)
		cr_skip_test("needs root: a new PID namespace (unshare CLONE_NEWPID)");
	cr_assert_eq(pipe(ready), 0);
	cr_assert_eq(pipe(hold), 0);
	outer = fork();
	cr_assert_geq(outer, 0);
	if (outer == 0) {
		pid_t init;

		close(ready[0]);
		close(hold[1]);
		if (unshare(CLONE_NEWPID))
			_exit(20);
		init = fork();
		if (init == 0)
			_exit(pidns_owner(pid, ready[1], hold[0]));
		close(ready[1]);
		close(hold[0]);
		if (init < 0 || waitpid(init, &st, 0) != init || !WIFEXITED(st))
			_exit(21);
		_exit(WEXITSTATUS(st));
	}
	close(ready[1]);
	close(hold[0]);
	pfd = (struct pollfd){ .fd = ready[0], .events = POLLIN };
	if (poll(&pfd, 1, 10000) != 1 || read(ready[0], &c, 1) != 1) {
		close(hold[1]);
		waitpid(outer, &st, 0);
		cr_assert_fail("the owner in the new PID namespace did not claim its slot (exit %d)",
			 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	}
	/* it is alive, but its PID says nothing here */
	cr_assert_eq(tbl[SLOT].owner_pid, (uint32_t)pid);
	cr_assert(kill(pid, 0) < 0 && errno == ESRCH, "PID %d exists outside too", pid);

	fd = blue__slot_owner_open(dir);
	cr_assert_geq(fd, 0);
	cr_expect_eq(blue__slots_reclaim(tbl, fd), 0, "a live owner's slot was freed");
	cr_expect_eq(tbl[SLOT].qpn, QPN);
	cr_expect_eq(tbl[SLOT].state, BLUE_QPS_RTS);

	/* once it has exited the slot is stale, and freed */
	close(hold[1]);
	cr_assert_eq(waitpid(outer, &st, 0), outer);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "owner exit status %d", st);
	cr_expect_eq(blue__slots_reclaim(tbl, fd), 1, "the dead owner's slot was kept");
	cr_expect_eq(tbl[SLOT].qpn, 0);
	cr_expect_eq(tbl[SLOT].owner_pid, 0);
	close(fd);
	close(ready[0]);
}

Test(slot_owner, dead_owner_whose_pid_was_reused_is_freed, .init = setup, .fini = teardown)
{
	int fd = blue__slot_owner_open(dir);

	cr_assert_geq(fd, 0);
	/* nobody holds the slot's mark, but owner_pid names a live, unrelated process */
	tbl[SLOT].qpn = QPN;
	tbl[SLOT].state = BLUE_QPS_RTS;
	tbl[SLOT].owner_pid = (uint32_t)getppid();
	cr_assert_eq(kill(getppid(), 0), 0);
	cr_expect_eq(blue__slots_reclaim(tbl, fd), 1, "a slot nobody owns was kept");
	cr_expect_eq(tbl[SLOT].qpn, 0);
	cr_expect_eq(tbl[SLOT].state, BLUE_QPS_RESET);
	cr_expect_eq(tbl[SLOT].owner_pid, 0);
	close(fd);
}

Test(slot_owner, other_context_of_this_process_keeps_its_slots, .init = setup,
     .fini = teardown)
{
	int mine = blue__slot_owner_open(dir), other = blue__slot_owner_open(dir);

	cr_assert_geq(mine, 0);
	cr_assert_geq(other, 0);
	/* a second context of this process (its own fd) owns SLOT; a slot being claimed
	 * (qpn set, no owner yet) is left alone too */
	claim(SLOT, other, (uint32_t)getpid());
	tbl[SLOT + 1].qpn = QPN + 1;
	cr_expect_eq(blue__slots_reclaim(tbl, mine), 0);
	cr_expect_eq(tbl[SLOT].qpn, QPN);
	cr_expect_eq(tbl[SLOT + 1].qpn, QPN + 1);
	/* the owner's own pass never frees what it holds */
	cr_expect_eq(blue__slots_reclaim(tbl, other), 0);
	/* disowned (its QP destroyed without clearing the slot, as a crash would leave it) */
	blue__slot_disown(other, SLOT);
	cr_expect_eq(blue__slots_reclaim(tbl, mine), 1);
	cr_expect_eq(tbl[SLOT].qpn, 0);
	close(mine);
	close(other);
}
