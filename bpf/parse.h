/* SPDX-License-Identifier: MIT */
/*
 * Header parsing for blue_xdp: one helper per header. Each helper checks its header
 * against the end of the frame before it reads it (the verifier insists, and so do we:
 * malformed input must never reach userspace), then returns either a final verdict
 * reason (enum blue_stat_reason) or BLUE_GO_ON to hand the cursor to the next helper.
 *
 * Lengths are checked as plain numbers against the frame length carried in the
 * cursor, and pointers are compared against data_end only to prove reads safe.
 */
#ifndef BLUE_BPF_PARSE_H
#define BLUE_BPF_PARSE_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "blue/stats.h"
#include "blue/wire.h"

/* Returned by a parse helper when the packet is fine so far: parse the next header. */
#define BLUE_GO_ON	(-1)

/* IPv4 flags/fragment-offset field (RFC 791); the kernel's names are not uapi. */
#define BLUE_IP_MF	0x2000
#define BLUE_IP_OFFSET	0x1fff

/* 802.1Q / 802.1ad tag that follows the MAC addresses; not in the uapi headers. */
struct blue_vlan_hdr {
	__be16	tci;
	__be16	encap_proto;
};

struct hdr_cursor {
	void	*pos;		/* next header to parse */
	void	*end;		/* ctx->data_end */
	__u32	off;		/* pos - data, as a number */
	__u32	frame_len;	/* the whole frame, frags included (>= end - pos) */
};

/*
 * What the helpers learn and the later steps need. l4_len and udp_pl_len are the
 * lengths the headers claim, already checked to lie inside the frame.
 */
struct roce_info {
	__u32	l4_len;		/* IPv4 total length minus header length */
	__u32	udp_pl_len;	/* UDP length minus the UDP header */
	__u32	dqpn;
	__u32	rx_queue;	/* the netdev queue it came in on (xdp_md.rx_queue_index) */
	__u16	pkey;		/* BTH P_Key, host order */
	__u8	dst_mcast;	/* the IP destination is a multicast group */
	/* the IP destination as a GID (::ffff:a.b.c.d for IPv4), read only when it is a
	 * group: the multicast map's key (include/blue/mcast.h) */
	__u8	dgid[16];
};

/*
 * Ethernet plus at most one 802.1Q or 802.1ad tag. IPv4 and IPv6 go on (*@proto says
 * which); the rest is not ours and goes to the kernel untouched. A second tag (QinQ)
 * shows up as an unknown inner ethertype and passes as non-IP.
 */
static __always_inline int parse_eth(struct hdr_cursor *c, __u16 *l3_proto)
{
	struct ethhdr *eth = c->pos;
	__u16 proto;

	if ((void *)(eth + 1) > c->end)
		return BLUE_STAT_DROP_TRUNC_ETH;
	proto = bpf_ntohs(eth->h_proto);
	c->pos = eth + 1;
	c->off += sizeof(*eth);

	if (proto == ETH_P_8021Q || proto == ETH_P_8021AD) {
		struct blue_vlan_hdr *vh = c->pos;

		if ((void *)(vh + 1) > c->end)
			return BLUE_STAT_DROP_TRUNC_ETH;
		proto = bpf_ntohs(vh->encap_proto);
		c->pos = vh + 1;
		c->off += sizeof(*vh);
	}

	*l3_proto = proto;
	if (proto == ETH_P_IP || proto == ETH_P_IPV6)
		return BLUE_GO_ON;
	return BLUE_STAT_PASS_NON_IP;
}

/*
 * IPv4 (RFC 791). Options are allowed and skipped. The total length must cover the
 * header and fit in the frame; bytes after it (Ethernet minimum-frame padding) are
 * ignored. Non-UDP packets go to the kernel whatever their fragment bits, so the
 * host's TCP and ICMP are never disturbed.
 *
 * UDP fragments are dropped: RoCEv2 packets are never fragmented (annex A17 sends
 * them with DF and fits them in the path MTU), a non-first fragment carries no UDP
 * port to tell RoCE from other traffic, and handing half a RoCE message to the kernel
 * would let it reassemble what userspace should have seen whole. The cost is that
 * fragmented UDP to other ports is lost on a netdev blue is attached to.
 *
 * A multicast destination changes nothing here: it is noted for steer_mcast (and the
 * Ethernet destination, 01:00:5e:.. or 33:33:.., is not looked at: the NIC's filter
 * took the frame, as it does for the host's own unicast MAC).
 */
static __always_inline int parse_ipv4(struct hdr_cursor *c, struct roce_info *ri)
{
	struct iphdr *iph = c->pos;
	__u32 hlen, tot;

	if ((void *)(iph + 1) > c->end)
		return BLUE_STAT_DROP_TRUNC_IP;
	if (iph->version != 4 || iph->ihl < 5)
		return BLUE_STAT_DROP_BAD_IP_HDR;
	hlen = iph->ihl * 4;
	if (c->pos + hlen > c->end)
		return BLUE_STAT_DROP_TRUNC_IP;
	tot = bpf_ntohs(iph->tot_len);
	if (tot < hlen || tot > c->frame_len - c->off)
		return BLUE_STAT_DROP_BAD_IP_HDR;
	if (iph->protocol != IPPROTO_UDP)
		return BLUE_STAT_PASS_NON_UDP;
	if (iph->frag_off & bpf_htons(BLUE_IP_MF | BLUE_IP_OFFSET))
		return BLUE_STAT_DROP_IP_FRAGMENT;

	ri->l4_len = tot - hlen;
	/* 224.0.0.0/4 (RFC 5771): a group, steered by the multicast map, not by QPN */
	if ((bpf_ntohl(iph->daddr) & 0xf0000000u) == 0xe0000000u) {
		ri->dst_mcast = 1;
		ri->dgid[10] = 0xff;
		ri->dgid[11] = 0xff;
		__builtin_memcpy(&ri->dgid[12], &iph->daddr, 4);
	}
	c->pos += hlen;
	c->off += hlen;
	return BLUE_GO_ON;
}

/*
 * IPv6 (RFC 8200) with the same rules as IPv4: the payload length must fit in the frame
 * (bytes after it are Ethernet padding), and only UDP goes on. RoCEv2 over IPv6 carries
 * no extension header (annex A17.4: the IPv6 header stands where the GRH would, and
 * rxe sends none), so a packet with one is not parsed here: it passes to the kernel,
 * counted as pass_ipv6, whatever it carries (hop-by-hop options, a fragment header:
 * a fragmented datagram is the kernel's to reassemble or refuse). Anything else (ICMPv6,
 * which neighbour discovery needs, TCP) passes as non-UDP.
 */
static __always_inline int ipv6_ext_hdr(__u8 nexthdr)
{
	switch (nexthdr) {
	case IPPROTO_HOPOPTS:
	case IPPROTO_ROUTING:
	case IPPROTO_FRAGMENT:
	case IPPROTO_ESP:
	case IPPROTO_AH:
	case IPPROTO_DSTOPTS:
	case IPPROTO_MH:
	case 139:	/* HIP (RFC 7401) */
	case 140:	/* Shim6 (RFC 5533) */
	case 253:	/* experimental (RFC 3692) */
	case 254:
		return 1;
	default:
		return 0;
	}
}

static __always_inline int parse_ipv6(struct hdr_cursor *c, struct roce_info *ri)
{
	struct ipv6hdr *ip6 = c->pos;
	__u32 plen;

	if ((void *)(ip6 + 1) > c->end)
		return BLUE_STAT_DROP_TRUNC_IP;
	if (ip6->version != 6)
		return BLUE_STAT_DROP_BAD_IP_HDR;
	plen = bpf_ntohs(ip6->payload_len);
	if (plen > c->frame_len - c->off - sizeof(*ip6))
		return BLUE_STAT_DROP_BAD_IP_HDR;
	if (ip6->nexthdr != IPPROTO_UDP)
		return ipv6_ext_hdr(ip6->nexthdr) ? BLUE_STAT_PASS_IPV6 :
						    BLUE_STAT_PASS_NON_UDP;

	ri->l4_len = plen;
	/* ff00::/8 (RFC 4291 2.7) */
	if (ip6->daddr.in6_u.u6_addr8[0] == 0xff) {
		ri->dst_mcast = 1;
		__builtin_memcpy(ri->dgid, &ip6->daddr, 16);
	}
	c->pos = ip6 + 1;
	c->off += sizeof(*ip6);
	return BLUE_GO_ON;
}

/*
 * UDP (RFC 768). Anything not to the RoCEv2 port (annex A17.2) passes untouched; for
 * RoCEv2 the UDP length must hold its own header and stay inside the IP payload, which
 * parse_ipv4 (parse_ipv6) has already proven to be inside the frame.
 */
static __always_inline int parse_udp(struct hdr_cursor *c, struct roce_info *ri)
{
	struct udphdr *udp = c->pos;
	__u32 ulen;

	if ((void *)(udp + 1) > c->end || ri->l4_len < sizeof(*udp))
		return BLUE_STAT_DROP_TRUNC_UDP;
	if (udp->dest != bpf_htons(BLUE_ROCEV2_UDP_PORT))
		return BLUE_STAT_PASS_NON_ROCE;
	ulen = bpf_ntohs(udp->len);
	if (ulen < sizeof(*udp) || ulen > ri->l4_len)
		return BLUE_STAT_DROP_BAD_UDP_LEN;

	ri->udp_pl_len = ulen - sizeof(*udp);
	c->pos = udp + 1;
	c->off += sizeof(*udp);
	return BLUE_GO_ON;
}

/*
 * BTH (IBA 9.2) and the extended headers its opcode names (IBA 9.3, table 36). The
 * headers, the pad bytes (BTH PadCnt) and the ICRC must all fit in the UDP payload.
 * Every opcode in the wire table is served, UC included (the QP context carries
 * BLUE_QPT_UC); RD opcodes are not in the table and drop as bad_opcode. Whether an
 * opcode suits the QP's transport type is checked in userspace with the rest of the
 * per-QP rules. The ICRC itself is checked in userspace too.
 */
static __always_inline int parse_bth(struct hdr_cursor *c, struct roce_info *ri)
{
	struct blue_bth *bth = c->pos;
	__u32 flags, hdr_len, pad;

	if ((void *)(bth + 1) > c->end || ri->udp_pl_len < sizeof(*bth))
		return BLUE_STAT_DROP_TRUNC_BTH;
	if ((bth->flags & BLUE_BTH_TVER_MASK) != BLUE_BTH_TVER)
		return BLUE_STAT_DROP_BAD_VERSION;
	flags = blue_opcode_flags(bth->opcode);
	if (!flags)
		return BLUE_STAT_DROP_BAD_OPCODE;
	hdr_len = blue_opcode_hdr_len(flags);
	pad = (bth->flags & BLUE_BTH_PAD_MASK) >> BLUE_BTH_PAD_SHIFT;
	if (hdr_len + pad + BLUE_ICRC_LEN > ri->udp_pl_len)
		return BLUE_STAT_DROP_BAD_LENGTH;
	/* Already implied by the length checks above; kept so the cursor stays honest. */
	if (c->pos + hdr_len > c->end)
		return BLUE_STAT_DROP_BAD_LENGTH;

	ri->dqpn = bpf_ntohl(bth->dqpn) & BLUE_QPN_MASK;
	ri->pkey = bpf_ntohs(bth->pkey);
	c->pos += hdr_len;
	c->off += hdr_len;
	return BLUE_GO_ON;
}

/* The XDP action for a verdict reason. Unknown reasons drop: fail closed. */
static __always_inline int blue_reason_action(int reason)
{
	switch (reason) {
	case BLUE_STAT_PASS_NON_IP:
	case BLUE_STAT_PASS_IPV6:
	case BLUE_STAT_PASS_NON_UDP:
	case BLUE_STAT_PASS_NON_ROCE:
		return XDP_PASS;
	case BLUE_STAT_REDIRECT:
		return XDP_REDIRECT;
	default:
		return XDP_DROP;
	}
}

#endif /* BLUE_BPF_PARSE_H */
