// SPDX-License-Identifier: MIT
/*
 * Address handles: create (check the address vector and resolve the destination's
 * MAC, the same lookups a connected QP makes at INIT->RTR), destroy, and the way back
 * to a sender from the GRH a UD receive placed (blue_ah_attr_from_grh).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "runtime/ah.h"
#include "runtime/device.h"
#include "runtime/log.h"
#include "runtime/mr.h"

/* Check @attr and find where its frames go; 0 or an errno, after a message. */
static int ah_resolve(struct blue_context *ctx, const struct blue_ah_attr *attr,
		      uint32_t *dip, uint8_t dmac[6])
{
	char ipstr[INET_ADDRSTRLEN];

	if (attr->port_num > 1) {
		blue__logf("create_ah: port_num %u; the device has port 1 only", attr->port_num);
		return EINVAL;
	}
	if (attr->sgid_index != 1) {
		blue__logf("create_ah: sgid_index %u; use 1, the IPv4 GID (index 0 is the IPv6 "
			   "link-local one, and RoCEv2 over IPv6 is not served yet)",
			   attr->sgid_index);
		return EINVAL;
	}
	if (!blue__gid_ipv4(&attr->dgid, dip)) {
		blue__logf("create_ah: the destination GID is not IPv4-mapped (::ffff:a.b.c.d); "
			   "RoCEv2 over IPv6 is not served yet");
		return EINVAL;
	}
	/* a GID of this device: its frames go to its own MAC (loopback, as on rxe) */
	if (*dip == ctx->ip) {
		memcpy(dmac, ctx->mac, 6);
		return 0;
	}
	if (blue__resolve_neigh(ctx, *dip, dmac)) {
		inet_ntop(AF_INET, dip, ipstr, sizeof(ipstr));
		blue__logf("create_ah: no MAC address for %s", ipstr);
		return ENOENT;
	}
	return 0;
}

struct blue_ah *blue_create_ah(struct blue_pd *pd, const struct blue_ah_attr *attr)
{
	struct blue_ah *ah;
	uint8_t dmac[6];
	uint32_t dip;
	int err;

	if (!pd || !attr) {
		errno = EINVAL;
		return NULL;
	}
	err = ah_resolve(pd->ctx, attr, &dip, dmac);
	if (err) {
		errno = err;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}
	ah->pd = pd;
	ah->attr = *attr;
	ah->attr.port_num = 1;
	ah->dip = dip;
	memcpy(ah->dmac, dmac, 6);
	pd->nah++;
	return ah;
}

int blue_destroy_ah(struct blue_ah *ah)
{
	if (!ah)
		return EINVAL;
	ah->pd->nah--;
	free(ah);
	return 0;
}

/* The GID table index holding @gid, or -1. */
static int gid_index(const struct blue_context *ctx, const uint8_t gid[16])
{
	for (int i = 0; i < BLUE_GID_TBL_LEN; i++)
		if (!memcmp(ctx->gid[i].raw, gid, 16))
			return i;
	return -1;
}

/* ::ffff:@ip (network order) into @gid. */
static void gid_of_ipv4(uint8_t gid[16], const uint8_t ip[4])
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	memcpy(gid + 12, ip, 4);
}

int blue_ah_attr_from_grh(struct blue_context *ctx, const void *grh, struct blue_ah_attr *attr)
{
	static const uint8_t zero[20];
	const uint8_t *g = grh;
	uint8_t sgid[16], dgid[16];
	int idx;

	if (!ctx || !grh || !attr)
		return EINVAL;
	memset(attr, 0, sizeof(*attr));
	if (!memcmp(g, zero, sizeof(zero)) && (g[20] >> 4) == 4) {
		/* RoCEv2 over IPv4 (annex A17.4.5.2): the IPv4 header in the last 20 bytes */
		const uint8_t *ip = g + 20;

		gid_of_ipv4(sgid, ip + 12);
		gid_of_ipv4(dgid, ip + 16);
		attr->traffic_class = ip[1];
	} else if ((g[0] >> 4) == 6) {
		/* a GRH (IBA 8.3) or an IPv6 header: same places for the two GIDs */
		memcpy(sgid, g + 8, 16);
		memcpy(dgid, g + 24, 16);
		attr->traffic_class = (uint8_t)((g[0] << 4) | (g[1] >> 4));
	} else {
		blue__logf("ah_attr_from_grh: the 40 bytes hold neither an IPv4 header (after 20 "
			   "zero bytes) nor a GRH (IP version %u)", g[0] >> 4);
		return EINVAL;
	}
	idx = gid_index(ctx, dgid);
	if (idx < 0) {
		blue__logf("ah_attr_from_grh: the message's destination GID is none of this "
			   "device's");
		return EINVAL;
	}
	memcpy(attr->dgid.raw, sgid, 16);
	attr->sgid_index = (uint8_t)idx;
	/* the answer may cross as many hops as it likes (ib_init_ah_attr_from_wc) */
	attr->hop_limit = 0xff;
	attr->port_num = 1;
	return 0;
}
