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

#include "runtime/verbs_ops.h"
#include "runtime/ah.h"
#include "runtime/device.h"
#include "runtime/log.h"
#include "runtime/mr.h"

int blue__av_resolve(struct blue_context *ctx, const struct blue_ah_attr *attr,
		     const char *who, uint8_t dmac[6])
{
	char sstr[INET6_ADDRSTRLEN], dstr[INET6_ADDRSTRLEN];
	const union blue_gid *sgid;
	uint32_t ip;

	if (attr->port_num > 1) {
		blue__logf("%s: port_num %u; the device has port 1 only", who, attr->port_num);
		return EINVAL;
	}
	/* the default link-local GID is listed as RoCE v1 (as rxe lists its index 0), and
	 * blue sends RoCEv2 only: from the IPv4-mapped GID or a global IPv6 one */
	if (attr->sgid_index == 0) {
		blue__logf("%s: sgid_index 0 is the link-local default GID (RoCE v1 in the "
			   "table, as on rxe); blue sends RoCEv2: use 1 (IPv4) or 2.. (IPv6)", who);
		return EINVAL;
	}
	if (!blue__gid_valid(ctx->gid, attr->sgid_index)) {
		blue__logf("%s: sgid_index %u is no GID of this device (0 = the link-local one, "
			   "1 = IPv4-mapped, 2.. = the netdev's IPv6 addresses; ibv_devinfo -v "
			   "lists them)", who, attr->sgid_index);
		return EINVAL;
	}
	sgid = &ctx->gid[attr->sgid_index];
	/* one IP version per packet: both ends IPv4 (::ffff:a.b.c.d) or both IPv6 */
	if (blue__gid_ipv4(sgid, &ip) != blue__gid_ipv4(&attr->dgid, &ip)) {
		blue__logf("%s: the source GID %s (index %u) and the destination GID %s are not "
			   "the same IP version; pick the sgid_index of a GID of the peer's kind",
			   who, blue__gid_str(sgid, sstr, sizeof(sstr)), attr->sgid_index,
			   blue__gid_str(&attr->dgid, dstr, sizeof(dstr)));
		return EINVAL;
	}
	if (blue__resolve_neigh(ctx, &attr->dgid, dmac)) {
		blue__logf("%s: no MAC address for the peer %s", who,
			   blue__gid_str(&attr->dgid, dstr, sizeof(dstr)));
		return ENOENT;
	}
	return 0;
}

struct blue_ah *blue_create_ah(struct blue_pd *pd, const struct blue_ah_attr *attr)
{
	struct blue_ah *ah;
	uint8_t dmac[6];
	int err;

	if (!pd || !attr) {
		errno = EINVAL;
		return NULL;
	}
	/* daemon mode too: the GID table came with HELLO, and the neighbour tables are the
	 * network namespace's, the daemon's as much as this process's */
	err = blue__av_resolve(pd->ctx, attr, "create_ah", dmac);
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
	idx = blue__gid_index(ctx, (const union blue_gid *)dgid);
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
