// SPDX-License-Identifier: MIT
/* The XDP tests' frame builder; see pkt.h. */
#include "pkt.h"

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <netinet/in.h>
#include <string.h>
#include <zlib.h>

#include "blue/wire.h"

#define PKT_MAX_HDRS	256	/* every header this builder can write fits in this */

void pkt_spec_default(struct pkt_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->vlan_tpid = ETH_P_8021Q;
	s->ethertype = ETH_P_IP;
	s->ip_version = 4;
	s->ihl = 5;
	s->ip_proto = IPPROTO_UDP;
	s->frag = 0x4000;	/* DF, as RoCEv2 senders set it */
	s->sport = 0xc011;
	s->dport = BLUE_ROCEV2_UDP_PORT;
	s->opcode = BLUE_OP_RC_SEND_ONLY;
	s->pkey = BLUE_DEFAULT_PKEY;
	s->dqpn = 0x11;
	s->psn = 0x123456;
	s->payload_len = 64;
	s->icrc = true;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static uint16_t ip_csum(const uint8_t *p, size_t len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

uint32_t pkt_icrc(const uint8_t *ip, size_t icrc_off)
{
	uint8_t tmp[8 + 9000];
	bool v6 = (ip[0] >> 4) == 6;
	size_t ihl = v6 ? 40 : (ip[0] & 0x0f) * 4u;
	uint8_t *d = tmp + 8;

	if (icrc_off > sizeof(tmp) - 8 || icrc_off < ihl + 8 + 12)
		return 0;
	memset(tmp, 0xff, 8);
	memcpy(d, ip, icrc_off);
	if (v6) {			/* annex A17.8: traffic class, flow label, hop limit */
		d[0] |= 0x0f;
		d[1] = d[2] = d[3] = 0xff;
		d[7] = 0xff;
	} else {
		d[1] = 0xff;		/* TOS */
		d[8] = 0xff;		/* TTL */
		d[10] = d[11] = 0xff;	/* header checksum */
	}
	d[ihl + 6] = d[ihl + 7] = 0xff;	/* UDP checksum */
	d[ihl + 8 + 4] = 0xff;		/* BTH FECN, BECN, reserved */
	return crc32(0, tmp, 8 + icrc_off);
}

/* BTH, the extended headers the opcode names (IBA 9.3 order), payload, pad, ICRC. */
static uint8_t *put_roce(const struct pkt_spec *s, uint8_t *p, size_t off[PL__MAX],
			 const uint8_t *base)
{
	uint32_t f = blue_opcode_flags(s->opcode);

	off[PL_BTH] = p - base;
	p[0] = s->opcode;
	p[1] = (s->pad & 3) << BLUE_BTH_PAD_SHIFT | (s->tver & BLUE_BTH_TVER_MASK);
	put16(p + 2, s->pkey);
	put32(p + 4, (s->dqpn & BLUE_QPN_MASK) | (s->becn ? BLUE_BTH_BECN : 0));
	put32(p + 8, BLUE_BTH_ACKREQ | (s->psn & BLUE_PSN_MASK));
	p += sizeof(struct blue_bth);

	off[PL_EXT] = p - base;
	if (f & BLUE_OPF_DETH) {
		put32(p, 0x11111111);		/* Q_Key */
		put32(p + 4, 0x000abc);		/* source QP */
		p += sizeof(struct blue_deth);
	}
	if (f & BLUE_OPF_FETH) {
		put32(p, 0x1);			/* FLUSH GLOBAL, level RANGE (IBA 1.5) */
		p += sizeof(struct blue_feth);
	}
	if (f & BLUE_OPF_RETH) {
		put32(p, 0);
		put32(p + 4, 0x10000000);	/* VA */
		put32(p + 8, 0x1234);		/* R_Key */
		put32(p + 12, s->payload_len);	/* DMA length */
		p += sizeof(struct blue_reth);
	}
	if (f & BLUE_OPF_ATMETH) {
		memset(p, 0, sizeof(struct blue_atmeth));
		put32(p + 4, 0x10000000);
		put32(p + 8, 0x1234);
		p[19] = 1;			/* add 1 */
		p += sizeof(struct blue_atmeth);
	}
	if (f & BLUE_OPF_AETH) {
		/* ACK, MSN 7, unless the row asks for another AETH */
		put32(p, s->aeth ? s->aeth : (uint32_t)BLUE_AETH_ACK << 24 | 7);
		p += sizeof(struct blue_aeth);
	}
	if (f & BLUE_OPF_ATMACK) {
		memset(p, 0, sizeof(struct blue_atmack));
		p[7] = 41;
		p += sizeof(struct blue_atmack);
	}
	if (f & BLUE_OPF_IMMDT) {
		put32(p, 0xdeadbeef);
		p += sizeof(struct blue_immdt);
	}
	if (f & BLUE_OPF_IETH) {
		put32(p, 0x5678);
		p += sizeof(struct blue_ieth);
	}
	if (f & BLUE_OPF_CNP) {
		memset(p, 0, BLUE_CNP_PAYLOAD_LEN);
		p += BLUE_CNP_PAYLOAD_LEN;
	}

	off[PL_PAYLOAD] = p - base;
	for (uint32_t i = 0; i < s->payload_len; i++)
		*p++ = i;
	for (uint32_t i = 0; i < (s->pad_unwritten ? 0 : s->pad & 3u); i++)
		*p++ = 0;

	off[PL_ICRC] = p - base;
	if (s->icrc) {
		memset(p, 0, BLUE_ICRC_LEN);
		p += BLUE_ICRC_LEN;
	}
	return p;
}

static uint8_t *put_l4(const struct pkt_spec *s, uint8_t *p, size_t off[PL__MAX],
		       const uint8_t *base)
{
	off[PL_UDP] = p - base;
	switch (s->ip_proto) {
	case IPPROTO_UDP:
		put16(p, s->sport);
		put16(p + 2, s->dport);
		put16(p + 4, 0);	/* length: set once the frame's end is known */
		put16(p + 6, 0);	/* no checksum; RoCEv2 allows zero (A17.4.2) */
		return put_roce(s, p + 8, off, base);
	case IPPROTO_TCP:
		memset(p, 0, 20);
		put16(p, 40000);
		put16(p + 2, BLUE_ROCEV2_UDP_PORT);	/* the port alone must not matter */
		p[12] = 5 << 4;
		p[13] = 0x02;				/* SYN */
		return p + 20;
	default:
		memset(p, 0, 8);
		p[0] = 8;				/* ICMP echo request */
		return p + 8;
	}
}

size_t pkt_build(const struct pkt_spec *s, uint8_t *buf, size_t cap)
{
	static const uint8_t dmac[6] = { 0x02, 0xb1, 0x00, 0x00, 0x00, 0x02 };
	static const uint8_t smac[6] = { 0x02, 0xb1, 0x00, 0x00, 0x00, 0x01 };
	size_t off[PL__MAX] = { 0 };
	size_t full, end, ip_hlen = 0;
	uint8_t *p = buf;

	if (cap < PKT_MAX_HDRS + s->payload_len + s->trailer)
		return 0;
	memset(buf, 0, cap);

	off[PL_ETH] = 0;
	memcpy(p, dmac, 6);
	if ((s->daddr & 0xf0000000u) == 0xe0000000u) {	/* RFC 1112 6.4 */
		const uint8_t m[6] = { 0x01, 0x00, 0x5e, (s->daddr >> 16) & 0x7f,
				       (uint8_t)(s->daddr >> 8), (uint8_t)s->daddr };

		memcpy(p, m, 6);
	} else if (s->daddr6[0] == 0xff) {		/* RFC 2464 7 */
		p[0] = p[1] = 0x33;
		memcpy(p + 2, s->daddr6 + 12, 4);
	}
	memcpy(p + 6, smac, 6);
	p += 12;
	off[PL_VLAN] = p - buf;
	for (int i = 0; i < s->vlan_tags; i++) {
		put16(p, i == 0 ? s->vlan_tpid : ETH_P_8021Q);
		put16(p + 2, 100 + i);		/* VID */
		p += 4;
	}
	put16(p, s->ethertype);
	p += 2;

	off[PL_IP] = p - buf;
	if (s->ethertype == ETH_P_IP) {
		ip_hlen = s->ihl * 4u;
		p[0] = s->ip_version << 4 | (s->ihl & 0x0f);
		p[1] = s->ce ? 0x03 : 0x02;	/* ECT(0) as DCQCN senders mark; CE as a
						 * congested switch leaves it */
		put16(p + 4, 0x1234);		/* ID */
		put16(p + 6, s->frag);
		p[8] = 64;
		p[9] = s->ip_proto;
		put32(p + 12, 0x0ac90101);	/* 10.201.1.1 */
		put32(p + 16, s->daddr ? s->daddr : 0x0ac90102);	/* 10.201.1.2 */
		off[PL_IPOPT] = off[PL_IP] + 20;
		if (ip_hlen > 20)
			memset(p + 20, 1, ip_hlen - 20);	/* NOP options */
		p = put_l4(s, p + (ip_hlen > 20 ? ip_hlen : 20), off, buf);
	} else if (s->ethertype == ETH_P_IPV6) {
		p[0] = (uint8_t)(s->ip_version << 4);
		p[6] = s->ip_proto;
		p[7] = 64;
		p[8] = 0xfe;
		p[9] = 0x80;
		p[24] = 0xfe;
		p[25] = 0x80;
		p[23] = 1;
		p[39] = 2;
		if (s->daddr6[0])
			memcpy(p + 24, s->daddr6, 16);
		p[1] = 0x20;			/* traffic class ECT(0), as p[1] of IPv4 */
		p = put_l4(s, p + 40, off, buf);
	} else if (s->ethertype == ETH_P_ARP) {
		put16(p, 1);			/* Ethernet */
		put16(p + 2, ETH_P_IP);
		p[4] = 6;
		p[5] = 4;
		put16(p + 6, 1);		/* request */
		memcpy(p + 8, smac, 6);
		put32(p + 14, 0x0ac90101);
		put32(p + 24, 0x0ac90102);
		p += 28;
	} else {
		p += 46;
	}
	full = p - buf;

	end = full;
	if (s->cut_layer != PL_NONE)
		end = off[s->cut_layer] + s->cut_len;
	if (end > full)
		end = full;

	if (s->ethertype == ETH_P_IP) {
		uint8_t *ip = buf + off[PL_IP];
		size_t upto = s->cut_raw ? full : end;

		put16(ip + 2, s->tot_len_set ? s->tot_len_set :
			      (upto - off[PL_IP]) + s->tot_len_adj);
		if (s->ip_proto == IPPROTO_UDP)
			put16(buf + off[PL_UDP] + 4, s->udp_len_set ? s->udp_len_set :
			      (upto - off[PL_UDP]) + s->udp_len_adj);
		if (s->icrc && s->ip_proto == IPPROTO_UDP && end == full)
			put32(buf + off[PL_ICRC], htonl(pkt_icrc(ip, off[PL_ICRC] - off[PL_IP])));
		put16(ip + 10, 0);
		put16(ip + 10, ip_csum(ip, ip_hlen));
	} else if (s->ethertype == ETH_P_IPV6) {
		uint8_t *ip = buf + off[PL_IP];
		size_t upto = s->cut_raw ? full : end;

		/* the payload length, as IPv4's total length, describes the (cut) frame */
		put16(ip + 4, s->tot_len_set ? s->tot_len_set :
			      (upto - off[PL_IP] - 40) + s->tot_len_adj);
		if (s->ip_proto == IPPROTO_UDP)
			put16(buf + off[PL_UDP] + 4, s->udp_len_set ? s->udp_len_set :
			      (upto - off[PL_UDP]) + s->udp_len_adj);
		if (s->icrc && s->ip_proto == IPPROTO_UDP && end == full)
			put32(buf + off[PL_ICRC], htonl(pkt_icrc(ip, off[PL_ICRC] - off[PL_IP])));
	}

	/* Bytes past the cut are not part of the frame; trailer bytes are, as zeros. */
	memset(buf + end, 0, cap - end);
	return end + s->trailer;
}
