// SPDX-License-Identifier: MIT
/* The loopback queue (loopback.h). */
#include <errno.h>
#include <string.h>

#include "runtime/device.h"
#include "runtime/loopback.h"
#include "runtime/progress.h"

bool blue__loopback_dst(const struct blue_context *ctx, const struct blue_pkt *p)
{
	union blue_gid dgid;

	blue_pkt_dgid(p, dgid.raw);
	return !memcmp(p->dst_mac, ctx->mac, sizeof(ctx->mac)) && blue__gid_index(ctx, &dgid) >= 0;
}

int blue__loopback_push(struct blue_loopback *lb, const struct blue_frame *f)
{
	if (lb->tail - lb->head == BLUE_LB_QLEN)
		return -ENOSPC;
	lb->q[lb->tail++ % BLUE_LB_QLEN] = *f;
	return 0;
}

unsigned int blue__loopback_count(const struct blue_loopback *lb)
{
	return lb->tail - lb->head;
}

unsigned int blue__loopback_drain(struct blue_context *ctx)
{
	struct blue_loopback *lb = &ctx->lb;
	unsigned int n = blue__loopback_count(lb), i;
	struct blue_frame f;

	for (i = 0; i < n; i++) {
		f = lb->q[lb->head++ % BLUE_LB_QLEN];
		blue__rx_frame(ctx, &f);
		blue_hal_tx_free(ctx->hal, &f, 1);
	}
	return n;
}

void blue__loopback_fini(struct blue_context *ctx)
{
	struct blue_loopback *lb = &ctx->lb;

	while (lb->head != lb->tail)
		blue_hal_tx_free(ctx->hal, &lb->q[lb->head++ % BLUE_LB_QLEN], 1);
}
