// SPDX-License-Identifier: MIT
/*
 * Rings in a memfd (runtime/ring.c: blue_ring_init_shared, blue_ring_map), the block
 * daemon mode hands between an application and the engine: made in one process, passed
 * to another over a Unix socket with SCM_RIGHTS and mapped there, 5000 entries go
 * through a 64-entry ring (wrapping 78 times, the producer stopping whenever it is full)
 * and each is checked where it lands. A block handed over with the wrong geometry, or
 * too small for the geometry it claims, is refused.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtime/ring.h"

#define NENT	5000u
#define WAIT_NS	(10ull * 1000000000ull)	/* each side gives up after 10 s */

struct ent {
	uint32_t seq;
	uint32_t neg;
	uint64_t mix;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t mix(uint32_t i)
{
	return (uint64_t)i * 0x9e3779b97f4a7c15ull;
}

static int send_fd(int sock, int fd)
{
	char buf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte = 'r';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = buf, .msg_controllen = sizeof(buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char buf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = buf, .msg_controllen = sizeof(buf) };
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &m, 0) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&m);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* The child: map what it was handed and produce NENT entries; its exit code says how it went. */
static int producer(int sock, uint32_t log2, uint32_t esize)
{
	struct blue_ring r;
	uint64_t give_up = now_ns() + WAIT_NS;
	uint32_t i = 0;
	int fd = recv_fd(sock);

	if (fd < 0)
		return 2;
	if (blue_ring_map(&r, fd, log2, esize))
		return 3;
	close(fd);
	while (i < NENT) {
		struct ent *e;

		if (!blue_ring_room(&r)) {
			if (now_ns() > give_up)
				return 4;
			continue;
		}
		e = blue_ring_elem(&r, blue_ring_prod_own(&r));
		e->seq = i;
		e->neg = ~i;
		e->mix = mix(i);
		blue_ring_produce(&r, 1);
		i++;
	}
	blue_ring_fini(&r);
	return 0;
}

Test(ring_shared, entries_cross_to_another_process_through_a_handed_over_memfd)
{
	struct blue_ring r;
	uint64_t give_up;
	uint32_t got = 0, bad = 0;
	int sv[2], fd, status;
	pid_t pid;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(sv[0]);
		_exit(producer(sv[1], 6, 16));
	}
	close(sv[1]);
	/* made after the fork: the child reaches it only through the fd it is sent */
	cr_assert_eq(blue_ring_init_shared(&r, 64, sizeof(struct ent), &fd), 0);
	cr_assert_eq(blue_ring_size(&r), 64);
	cr_assert_eq(r.elem_size, 16);
	cr_assert_eq(send_fd(sv[0], fd), 0);
	close(fd);
	give_up = now_ns() + WAIT_NS;
	while (got < NENT && now_ns() < give_up) {
		uint32_t n = blue_ring_count(&r), k;

		for (k = 0; k < n; k++) {
			const struct ent *e = blue_ring_elem(&r, blue_ring_cons_own(&r) + k);
			uint32_t i = got + k;

			if (e->seq != i || e->neg != ~i || e->mix != mix(i))
				bad++;
		}
		if (n)
			blue_ring_consume(&r, n);
		got += n;
	}
	if (got < NENT)
		kill(pid, SIGKILL);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "the producer died (status 0x%x)", status);
	cr_assert_eq(WEXITSTATUS(status), 0, "the producer failed at step %d", WEXITSTATUS(status));
	cr_assert_eq(got, NENT, "%u of %u entries arrived", got, NENT);
	cr_assert_eq(bad, 0, "%u entries arrived changed", bad);
	cr_assert_eq(r.hdr->prod, NENT);
	cr_assert_eq(r.hdr->cons, NENT);
	blue_ring_fini(&r);
	close(sv[0]);
}

Test(ring_shared, a_block_handed_over_with_the_wrong_geometry_is_refused)
{
	struct blue_ring r, m;
	int fd, small;

	cr_assert_eq(blue_ring_init_shared(&r, 64, 16, &fd), 0);
	/* the block says 2^6 entries of 16 bytes */
	cr_assert_eq(blue_ring_map(&m, fd, 5, 16), -EINVAL, "fewer entries than laid out");
	cr_assert_eq(blue_ring_map(&m, fd, 6, 32), -EINVAL, "larger entries than laid out");
	cr_assert_eq(blue_ring_map(&m, fd, 7, 16), -EINVAL, "more entries than the block holds");
	cr_assert_eq(blue_ring_map(&m, fd, 6, 24), -EINVAL, "an entry size not rounded to 16");
	cr_assert_eq(blue_ring_map(&m, fd, 21, 16), -EINVAL, "past the ring limit");
	cr_assert_null(m.hdr, "a refused map leaves nothing mapped");
	/* the right geometry maps, and both mappings are one block */
	cr_assert_eq(blue_ring_map(&m, fd, 6, 16), 0);
	*(uint32_t *)blue_ring_elem(&r, 3) = 0xb1e;
	cr_assert_eq(*(uint32_t *)blue_ring_elem(&m, 3), 0xb1e);
	blue_ring_fini(&m);
	close(fd);
	blue_ring_fini(&r);

	/* a memfd smaller than its claim */
	small = memfd_create("blue-ring-test", MFD_CLOEXEC);
	cr_assert_geq(small, 0);
	cr_assert_eq(ftruncate(small, 100), 0);
	cr_assert_eq(blue_ring_map(&m, small, 6, 16), -EINVAL);
	close(small);
}
