/* SPDX-License-Identifier: MIT */
/*
 * Where the bytes of a registered region are, and the one way the engine moves them.
 * In library mode, and for blue_buf_alloc memory that blue-manager maps from its memfd,
 * the bytes are in this process. Memory an application in daemon mode registers from
 * its heap (malloc, posix_memalign: what unmodified programs register) stays in that
 * process: the engine reads and writes it with process_vm_readv/writev, so the kernel
 * checks every access against that process's mappings and nothing of it is mapped into
 * the daemon. The figures that chose this (one copy, ~1.4 us per call against 4 ns for
 * memcpy at 8 B) are in the README's daemon-mode section.
 */
#ifndef BLUE_RUNTIME_MEM_AT_H
#define BLUE_RUNTIME_MEM_AT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct blue_mem_at {
	uint8_t *p;	/* the address: in this process, or in process @pid */
	pid_t pid;	/* 0: this process */
};

static inline struct blue_mem_at blue_mem_here(void *p)
{
	return (struct blue_mem_at){ .p = p, .pid = 0 };
}

/* @at + @off */
static inline struct blue_mem_at blue_mem_off(struct blue_mem_at at, uint64_t off)
{
	at.p += off;
	return at;
}

/*
 * blue__mem_read()/blue__mem_write() - move @n bytes between @buf and @at.
 * Return: 0, or -EFAULT (the range is not mapped there, or not all of it) or -ESRCH
 * (the process is gone) or another -errno of process_vm_*.
 */
int blue__mem_read(struct blue_mem_at at, void *buf, size_t n) __attribute__((visibility("hidden")));
int blue__mem_write(struct blue_mem_at at, const void *buf, size_t n)
	__attribute__((visibility("hidden")));

/*
 * The responder's 64-bit operations at @at (8-byte aligned). In this process they are
 * CPU atomics; in another they are a read and a write by the engine, the one thread
 * that executes this queue's RDMA atomics, so they are atomic against every other RDMA
 * atomic but not against the application's own stores (IBA 10.6.4: atomicity is
 * guaranteed only among the HCA's atomics). *@orig: the value before.
 * Return: 0 or -errno as blue__mem_read().
 */
int blue__mem_cas(struct blue_mem_at at, uint64_t compare, uint64_t swap, uint64_t *orig)
	__attribute__((visibility("hidden")));
int blue__mem_fetch_add(struct blue_mem_at at, uint64_t add, uint64_t *orig)
	__attribute__((visibility("hidden")));
int blue__mem_store64(struct blue_mem_at at, uint64_t v) __attribute__((visibility("hidden")));

#endif /* BLUE_RUNTIME_MEM_AT_H */
