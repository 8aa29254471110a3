// SPDX-License-Identifier: MIT
/*
 * The scatter/gather walker that the requester (gathering a payload), the completer
 * (scattering READ responses and atomic results) and the responder (placing SENDs and
 * WRITEs, reading READ responses) all use. Each SGE piece is translated through
 * blue__mr_check() right before it is touched, never through an address saved earlier:
 * that is what keeps a deregistered (and perhaps unmapped) region out of reach. The
 * bytes move wherever the MR says they are (mem_at.h): here, or in the application.
 */
#include <string.h>

#include "runtime/mr_copy.h"

enum blue_mr_verdict blue__copy_data(struct blue_context *ctx, const struct blue_pd *pd,
				     const struct blue_sge *sge, uint32_t nsge, uint32_t off,
				     void *buf, uint32_t len, unsigned int need,
				     enum blue_copy_dir dir, const void **direct, uint32_t *bad)
{
	uint64_t start = 0, end;
	uint32_t i, done = 0, from, n;
	enum blue_mr_verdict v;
	struct blue_mem_at at;
	int err;

	if (direct)
		*direct = buf;
	for (i = 0; i < nsge && done < len; i++, start = end) {
		end = start + sge[i].length;
		if (off + (uint64_t)done >= end)
			continue;
		from = (uint32_t)(off + (uint64_t)done - start);
		n = sge[i].length - from;
		if (n > len - done)
			n = len - done;
		v = blue__mr_check(ctx, pd, sge[i].lkey, sge[i].addr + from, n, need, &at);
		if (v != BLUE_MR_OK) {
			if (bad)
				*bad = i;
			return v;
		}
		if (dir == BLUE_COPY_FROM_MEM && direct && done == 0 && n == len && !at.pid) {
			*direct = at.p;		/* one piece here: the frame copies it from there */
			err = 0;
		} else if (dir == BLUE_COPY_TO_MEM) {
			err = blue__mem_write(at, (const uint8_t *)buf + done, n);
		} else {
			err = blue__mem_read(at, (uint8_t *)buf + done, n);
		}
		if (err) {
			if (bad)
				*bad = i;
			return BLUE_MR_FAULT;
		}
		done += n;
	}
	if (done < len) {
		if (bad)
			*bad = i;
		return BLUE_MR_BOUNDS;
	}
	return BLUE_MR_OK;
}

enum blue_mr_verdict blue__copy_mr(struct blue_context *ctx, const struct blue_pd *pd,
				   uint32_t key, uint64_t va, void *buf, uint32_t len,
				   unsigned int need, enum blue_copy_dir dir, const void **direct)
{
	const struct blue_sge one = { .addr = va, .length = len, .lkey = key };

	return blue__copy_data(ctx, pd, &one, 1, 0, buf, len, need, dir, direct, NULL);
}
