// SPDX-License-Identifier: MIT
/* Fixed-offset RoCEv2 steering for the loopback HAL (see lb_steer.h). */
#include <stdbool.h>
#include <string.h>
#include <arpa/inet.h>
#include <blue/wire.h>
#include "afxdp_hal/lb_steer.h"

#define ETH_P_IPV4	0x0800
#define ETH_P_IPV6_	0x86dd
#define ETH_P_VLAN	0x8100
#define IPPROTO_UDP_	17
#define IP_FRAG_MASK	0x3fff	/* MF and fragment offset (RFC 791) */
static uint16_t be16_at(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return ntohs(v);
}

static uint32_t be32_at(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return ntohl(v);
}

#define IPV6_HLEN	40

/* IPv6 next-header values that are extension headers (bpf/parse.h ipv6_ext_hdr). */
static bool ipv6_ext_hdr(uint8_t nh)
{
	return nh == 0 || nh == 43 || nh == 44 || nh == 50 || nh == 51 || nh == 60 ||
	       nh == 135 || nh == 139 || nh == 140 || nh == 253 || nh == 254;
}

/* The IPv6 header at @off (bpf/parse.h parse_ipv6); BLUE_STAT__MAX: go on. */
static int steer_ipv6(const uint8_t *p, uint32_t len, uint32_t *off, uint8_t dgid[16])
{
	if (len < *off + IPV6_HLEN)
		return BLUE_STAT_DROP_TRUNC_IP;
	if ((p[*off] >> 4) != 6)
		return BLUE_STAT_DROP_BAD_IP_HDR;
	if (be16_at(p + *off + 4) > len - *off - IPV6_HLEN)
		return BLUE_STAT_DROP_BAD_IP_HDR;
	if (p[*off + 6] != IPPROTO_UDP_)
		return ipv6_ext_hdr(p[*off + 6]) ? BLUE_STAT_PASS_IPV6 : BLUE_STAT_PASS_NON_UDP;
	memcpy(dgid, p + *off + 24, 16);
	*off += IPV6_HLEN;
	return BLUE_STAT__MAX;
}

/* DestQP 0xFFFFFF: the group's socket (bpf/blue_xdp.bpf.c steer_mcast). */
static int steer_mcast(const struct blue_lb_group *groups, const uint8_t dgid[16],
		       uint32_t *xsk_slot)
{
	unsigned int i;

	if (!blue_gid_is_mcast(dgid))
		return BLUE_STAT_DROP_MCAST_UNJOINED;
	for (i = 0; i < BLUE_MAX_MCAST_GRP; i++) {
		if (groups[i].used && !memcmp(groups[i].gid, dgid, 16)) {
			*xsk_slot = groups[i].xsk_slot;
			return BLUE_STAT_REDIRECT;
		}
	}
	return BLUE_STAT_DROP_MCAST_UNJOINED;
}

int blue_lb_steer(const struct blue_qp_ctx *tbl, const struct blue_lb_group *groups,
		  const uint8_t *p, uint32_t len, uint32_t *qpn, uint32_t *xsk_slot)
{
	const struct blue_qp_ctx *c;
	uint32_t off = BLUE_ETH_HLEN, ihl, q;
	uint8_t dgid[16] = { 0 };
	uint16_t proto, pkey;
	int r;

	if (len < BLUE_ETH_HLEN)
		return BLUE_STAT_DROP_TRUNC_ETH;
	proto = be16_at(p + 12);
	if (proto == ETH_P_VLAN) {
		if (len < BLUE_ETH_HLEN + BLUE_VLAN_HLEN)
			return BLUE_STAT_DROP_TRUNC_ETH;
		proto = be16_at(p + 16);
		off += BLUE_VLAN_HLEN;
	}
	if (proto == ETH_P_IPV6_) {
		r = steer_ipv6(p, len, &off, dgid);
		if (r != BLUE_STAT__MAX)
			return r;
		goto udp;
	}
	if (proto != ETH_P_IPV4)
		return BLUE_STAT_PASS_NON_IP;

	if (len < off + BLUE_IPV4_MIN_HLEN)
		return BLUE_STAT_DROP_TRUNC_IP;
	ihl = (uint32_t)(p[off] & 0x0f) * 4;
	if ((p[off] >> 4) != 4 || ihl < BLUE_IPV4_MIN_HLEN)
		return BLUE_STAT_DROP_BAD_IP_HDR;
	if (len < off + ihl)
		return BLUE_STAT_DROP_TRUNC_IP;
	if (p[off + 9] != IPPROTO_UDP_)
		return BLUE_STAT_PASS_NON_UDP;
	if (be16_at(p + off + 6) & IP_FRAG_MASK)
		return BLUE_STAT_DROP_IP_FRAGMENT;
	dgid[10] = dgid[11] = 0xff;	/* ::ffff:a.b.c.d */
	memcpy(dgid + 12, p + off + 16, 4);
	off += ihl;
udp:
	if (len < off + BLUE_UDP_HLEN)
		return BLUE_STAT_DROP_TRUNC_UDP;
	if (be16_at(p + off + 2) != BLUE_ROCEV2_UDP_PORT)
		return BLUE_STAT_PASS_NON_ROCE;
	off += BLUE_UDP_HLEN;

	if (len < off + sizeof(struct blue_bth))
		return BLUE_STAT_DROP_TRUNC_BTH;
	q = be32_at(p + off + 4) & BLUE_QPN_MASK;	/* BTH DestQP (IBA 9.2) */
	pkey = be16_at(p + off + 2);

	if (q == BLUE_MCAST_QPN) {
		*qpn = 0;
		return steer_mcast(groups, dgid, xsk_slot);
	}
	c = &tbl[blue_qpn_slot(q)];
	if (!q || c->qpn != q)
		return BLUE_STAT_DROP_UNKNOWN_QPN;
	if (!blue_qp_state_accepts(c->state))
		return BLUE_STAT_DROP_QP_STATE;
	if (!blue_pkey_match(pkey, c->pkey))
		return BLUE_STAT_DROP_BAD_PKEY;
	*qpn = q;
	*xsk_slot = c->xsk_slot;
	if (*xsk_slot >= BLUE_MAX_XSK)
		return BLUE_STAT_DROP_NO_SOCKET;
	if (blue_xsk_queue(*xsk_slot) != 0)	/* the loopback HAL has one queue, 0 */
		return BLUE_STAT_DROP_WRONG_QUEUE;
	return BLUE_STAT_REDIRECT;
}
