// SPDX-License-Identifier: MIT
/* Moving registered bytes wherever they are (mem_at.h): memcpy here, process_vm elsewhere. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/uio.h>

#include "runtime/mem_at.h"

/* One process_vm call for the whole range; a short count is a range not all mapped. */
static int vm_move(struct blue_mem_at at, void *buf, size_t n, int write)
{
	struct iovec local = { .iov_base = buf, .iov_len = n };
	struct iovec remote = { .iov_base = at.p, .iov_len = n };
	ssize_t r;

	do {
		r = write ? process_vm_writev(at.pid, &local, 1, &remote, 1, 0) :
			    process_vm_readv(at.pid, &local, 1, &remote, 1, 0);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return (size_t)r == n ? 0 : -EFAULT;
}

int blue__mem_read(struct blue_mem_at at, void *buf, size_t n)
{
	if (!at.pid) {
		memcpy(buf, at.p, n);
		return 0;
	}
	return vm_move(at, buf, n, 0);
}

int blue__mem_write(struct blue_mem_at at, const void *buf, size_t n)
{
	if (!at.pid) {
		memcpy(at.p, buf, n);
		return 0;
	}
	return vm_move(at, (void *)buf, n, 1);
}

int blue__mem_cas(struct blue_mem_at at, uint64_t compare, uint64_t swap, uint64_t *orig)
{
	int err;

	if (!at.pid) {
		*orig = compare;
		__atomic_compare_exchange_n((uint64_t *)at.p, orig, swap, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
		return 0;
	}
	err = vm_move(at, orig, sizeof(*orig), 0);
	if (err || *orig != compare)
		return err;
	return vm_move(at, &swap, sizeof(swap), 1);
}

int blue__mem_fetch_add(struct blue_mem_at at, uint64_t add, uint64_t *orig)
{
	uint64_t v;
	int err;

	if (!at.pid) {
		*orig = __atomic_fetch_add((uint64_t *)at.p, add, __ATOMIC_SEQ_CST);
		return 0;
	}
	err = vm_move(at, orig, sizeof(*orig), 0);
	if (err)
		return err;
	v = *orig + add;
	return vm_move(at, &v, sizeof(v), 1);
}

int blue__mem_store64(struct blue_mem_at at, uint64_t v)
{
	if (!at.pid) {
		__atomic_store_n((uint64_t *)at.p, v, __ATOMIC_SEQ_CST);
		return 0;
	}
	return vm_move(at, &v, sizeof(v), 1);
}
