// SPDX-License-Identifier: MIT
/*
 * The CM agent's address handles (agent_priv.h): one per peer GID, made on the agent's
 * PD with the device's GID of the peer's family as the source, cached; and the peers
 * whose neighbour did not resolve, remembered for a while so that answering MADs from a
 * spoofed source costs one neighbour wait, not one per MAD.
 */
#include <errno.h>
#include <string.h>

#include "compat/rdmacm/agent_priv.h"

static bool gid_v4mapped(const uint8_t g[16])
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return memcmp(g, pfx, sizeof(pfx)) == 0;
}

/* The GID index to send to @gid from: the IPv4 GID for an IPv4 peer, else the first
 * IPv6 GID of the same scope (link-local fe80::/10 or not). -1: none. */
static int agent_sgid_index(const struct cma_dev *dev, const uint8_t gid[16])
{
	bool ll = gid[0] == 0xfe && (gid[1] & 0xc0) == 0x80;
	int i;

	if (gid_v4mapped(gid))
		return dev->gid_v4;
	for (i = 0; i < dev->ngid; i++) {
		const uint8_t *g = dev->gid[i].raw;

		if (gid_v4mapped(g) || !memcmp(g, (uint8_t[16]){ 0 }, 16))
			continue;
		if ((g[0] == 0xfe && (g[1] & 0xc0) == 0x80) == ll)
			return i;
	}
	return -1;
}

/* @gid failed to resolve less than AGENT_NEG_NS ago */
static bool agent_neg_hit(struct cma_agent *a, const uint8_t gid[16], uint64_t now)
{
	unsigned int i;

	for (i = 0; i < AGENT_NNEG; i++)
		if (a->neg[i].until_ns > now && !memcmp(a->neg[i].gid, gid, 16))
			return true;
	return false;
}

static void agent_neg_add(struct cma_agent *a, const uint8_t gid[16], uint64_t now)
{
	struct agent_neg *n = &a->neg[a->neg_next++ % AGENT_NNEG];

	memcpy(n->gid, gid, 16);
	n->until_ns = now + AGENT_NEG_NS;
}

/* @gid's AH; @neg: a peer that failed lately fails at once (the agent's own MADs; an
 * API call, rdma_resolve_route say, always tries) */
int agent_ah(struct cma_agent *a, const uint8_t gid[16], struct ibv_ah **ah, bool neg)
{
	struct ibv_ah_attr attr;
	struct agent_ah *slot;
	unsigned int i;
	uint64_t now;
	int sgid;

	for (i = 0; i < AGENT_NAH; i++) {
		if (a->ahs[i].ah && !memcmp(a->ahs[i].gid, gid, 16)) {
			*ah = a->ahs[i].ah;
			return 0;
		}
	}
	now = cma_now_ns();
	if (neg && agent_neg_hit(a, gid, now)) {
		a->st.ah_err++;
		return -EHOSTUNREACH;
	}
	sgid = agent_sgid_index(a->dev, gid);
	if (sgid < 0) {
		a->st.ah_err++;
		cma_log("agent %s: no source GID for a peer of that address family", a->name);
		return -EADDRNOTAVAIL;
	}
	memset(&attr, 0, sizeof(attr));
	attr.is_global = 1;
	memcpy(attr.grh.dgid.raw, gid, 16);
	attr.grh.sgid_index = (uint8_t)sgid;
	attr.grh.hop_limit = AGENT_HOP_LIMIT;
	attr.port_num = a->dev->port_num ? a->dev->port_num : 1;
	errno = 0;
	*ah = ibv_create_ah(a->pd, &attr);
	if (!*ah) {
		int err = errno ? errno : EHOSTUNREACH;

		a->st.ah_err++;
		agent_neg_add(a, gid, now);
		return -err;
	}
	/* a free entry, else the next victim (a posted WR holds a copy, not the AH) */
	for (i = 0; i < AGENT_NAH && a->ahs[i].ah; i++)
		;
	if (i == AGENT_NAH) {
		i = a->ah_next++ % AGENT_NAH;
		ibv_destroy_ah(a->ahs[i].ah);
	}
	slot = &a->ahs[i];
	memcpy(slot->gid, gid, 16);
	slot->ah = *ah;
	return 0;
}

int cma_agent_ah(struct cma_agent *a, const uint8_t gid[16], struct ibv_ah **ah)
{
	return agent_ah(a, gid, ah, false);
}

void agent_ah_fini(struct cma_agent *a)
{
	unsigned int i;

	for (i = 0; i < AGENT_NAH; i++) {
		if (a->ahs[i].ah)
			ibv_destroy_ah(a->ahs[i].ah);
		a->ahs[i].ah = NULL;
	}
}
