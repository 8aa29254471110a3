/* SPDX-License-Identifier: MIT */
/*
 * blue_buf_alloc()'s buffers in daemon mode: each is a memfd, so that registering it
 * hands the memfd to blue-manager, which maps it and moves payload straight between
 * its UMEM and the application's pages (buf.c says why, with the figures).
 */
#ifndef BLUE_RUNTIME_BUF_H
#define BLUE_RUNTIME_BUF_H

#include <stddef.h>
#include <stdint.h>

/*
 * blue__buf_find() - the memfd behind [@addr, @addr + @len) when one blue_buf_alloc()
 * buffer in a memfd holds it all: *@fd (still the buffer's: do not close it) and
 * *@off, where @addr is in it. Return: 0, or -ENOENT.
 */
int blue__buf_find(const void *addr, size_t len, int *fd, uint64_t *off)
	__attribute__((visibility("hidden")));

#endif /* BLUE_RUNTIME_BUF_H */
