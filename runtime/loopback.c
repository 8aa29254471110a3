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

void blue__loopback_mcast(struct blue_context *ctx, const struct blue_pkt *p,
			  const struct blue_frame *f)
{
	struct blue_frame copy;
	uint8_t dgid[16];

	blue_pkt_dgid(p, dgid);
	if (!blue__mcast_find(ctx, dgid))
		return;
	if (blue_hal_tx_alloc(ctx->hal, &copy, 1) != 1) {
		ctx->eng.st.tx_dropped++;	/* unreliable datagrams: lost like on a wire */
		return;
	}
	memcpy(copy.data, f->data, f->len);
	copy.len = f->len;
	if (blue__loopback_push(&ctx->lb, &copy)) {
		blue_hal_tx_free(ctx->hal, &copy, 1);
		ctx->eng.st.tx_dropped++;
		return;
	}
	ctx->eng.st.tx_mcast_loop++;
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
