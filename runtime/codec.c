// SPDX-License-Identifier: MIT
/*
 * RoCEv2 frame builder and parser. See codec.h for the layout; the per-opcode header
 * table is blue_opcode_flags() in include/blue/wire.h.
 *
 * The builder reproduces what Linux rxe puts on the wire (checked frame for frame
 * against tests/vectors/rxe): IPv4 with IHL 5 and DF, UDP checksum 0 (allowed for
 * IPv4 and what rxe sends), zero pad bytes, the ICRC little-endian. Over IPv6, as rxe's
 * prepare_ipv6_hdr/prepare_udp_hdr: no extension header, flow label 0 unless asked,
 * UDP checksum 0 (RFC 6935 allows it for tunnels; rxe sends it).
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "runtime/codec.h"

#define ETH_P_IPV4	0x0800
#define ETH_P_IPV6_	0x86dd
#define ETH_P_8021Q	0x8100
#define IPPROTO_UDP_	17
#define IP_DF		0x4000
#define IP_MF		0x2000
#define IP_OFFMASK	0x1fff

/* IPv4 total length is 16 bits: the largest IB part that fits. */
#define IB_MAX_LEN	(0xffff - BLUE_IPV4_MIN_HLEN - BLUE_UDP_HLEN)

static void put16(uint8_t *b, uint16_t v) { v = htobe16(v); memcpy(b, &v, 2); }
static void put32(uint8_t *b, uint32_t v) { v = htobe32(v); memcpy(b, &v, 4); }
static void put64(uint8_t *b, uint64_t v) { v = htobe64(v); memcpy(b, &v, 8); }
static uint16_t get16(const uint8_t *b) { uint16_t v; memcpy(&v, b, 2); return be16toh(v); }
static uint32_t get32(const uint8_t *b) { uint32_t v; memcpy(&v, b, 4); return be32toh(v); }
static uint64_t get64(const uint8_t *b) { uint64_t v; memcpy(&v, b, 8); return be64toh(v); }

/* RFC 1071 ones'-complement sum; over a header with its checksum field zeroed. */
static uint16_t ip_csum(const uint8_t *h, size_t len)
{
	uint32_t sum = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)h[i] << 8 | h[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

void blue_pkt_init(struct blue_pkt *p, uint8_t opcode)
{
	memset(p, 0, sizeof(*p));
	p->opcode = opcode;
	p->ttl = 64;
	p->ip_df = 1;
	p->pkey = BLUE_DEFAULT_PKEY;
	p->tver = BLUE_BTH_TVER;
	if (blue_opcode_flags(opcode) & BLUE_OPF_CNP)
		p->becn = 1;	/* annex A17.9.3: a CNP has BECN set */
}

static int check_fields(const struct blue_pkt *p, __u32 fl)
{
	if (!fl)
		return -EINVAL;
	if (p->payload_len && !(fl & BLUE_OPF_PAYLOAD))
		return -EINVAL;
	if (p->payload_len > IB_MAX_LEN)
		return -EINVAL;
	if ((p->dqpn | p->psn) & ~BLUE_QPN_MASK)
		return -EINVAL;
	if ((fl & BLUE_OPF_AETH) && (p->aeth.msn & ~BLUE_PSN_MASK))
		return -EINVAL;
	if ((fl & BLUE_OPF_DETH) && (p->deth.sqpn & ~BLUE_QPN_MASK))
		return -EINVAL;
	if (p->tver > BLUE_BTH_TVER_MASK)
		return -EINVAL;
	if ((p->se | p->mig | p->fecn | p->becn | p->ackreq | p->has_vlan | p->ip_df |
	     p->ipv6) > 1)
		return -EINVAL;
	if (p->flow_label > 0xfffff)
		return -EINVAL;
	return 0;
}

/* Extended headers in IBA order (9.2: DETH, [FETH,] RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH). */
static uint8_t *put_ext(const struct blue_pkt *p, __u32 fl, uint8_t *b)
{
	if (fl & BLUE_OPF_DETH) {
		put32(b, p->deth.qkey);
		put32(b + 4, p->deth.sqpn);
		b += sizeof(struct blue_deth);
	}
	if (fl & BLUE_OPF_FETH) {	/* IBA 1.5: before the RETH (rxe's layout) */
		put32(b, p->feth);
		b += sizeof(struct blue_feth);
	}
	if (fl & BLUE_OPF_RETH) {
		put64(b, p->reth.va);
		put32(b + 8, p->reth.rkey);
		put32(b + 12, p->reth.len);
		b += sizeof(struct blue_reth);
	}
	if (fl & BLUE_OPF_ATMETH) {
		put64(b, p->atmeth.va);
		put32(b + 8, p->atmeth.rkey);
		put64(b + 12, p->atmeth.swap_add);
		put64(b + 20, p->atmeth.compare);
		b += sizeof(struct blue_atmeth);
	}
	if (fl & BLUE_OPF_AETH) {
		put32(b, (uint32_t)p->aeth.syndrome << 24 | p->aeth.msn);
		b += sizeof(struct blue_aeth);
	}
	if (fl & BLUE_OPF_ATMACK) {
		put64(b, p->atmack.orig);
		b += sizeof(struct blue_atmack);
	}
	if (fl & BLUE_OPF_IMMDT) {
		put32(b, p->imm);
		b += sizeof(struct blue_immdt);
	}
	if (fl & BLUE_OPF_IETH) {
		put32(b, p->ieth_rkey);
		b += sizeof(struct blue_ieth);
	}
	if (fl & BLUE_OPF_CNP) {
		memset(b, 0, BLUE_CNP_PAYLOAD_LEN);	/* annex A17.9.3: reserved */
		b += BLUE_CNP_PAYLOAD_LEN;
	}
	return b;
}

/* The IP datagram length of @p's frame (opcode flags @fl), and its pad in *@pad. */
static size_t ip_len_of(const struct blue_pkt *p, __u32 fl, uint32_t *pad)
{
	/* IBA 9.2: pad to a 4-byte multiple; rxe sends zero pad bytes */
	*pad = (4 - (p->payload_len & 3)) & 3;
	return blue_pkt_ip_hlen(p) + BLUE_UDP_HLEN + blue_opcode_hdr_len(fl) + p->payload_len +
	       *pad + BLUE_ICRC_LEN;
}

/* The IPv4 header of a datagram of @ip_len bytes. */
static void put_ipv4(const struct blue_pkt *p, uint8_t *ip, size_t ip_len)
{
	ip[0] = 0x45;
	ip[1] = p->tos;
	put16(ip + 2, (uint16_t)ip_len);
	put16(ip + 4, p->ip_id);
	put16(ip + 6, p->ip_df ? IP_DF : 0);
	ip[8] = p->ttl;
	ip[9] = IPPROTO_UDP_;
	put16(ip + 10, 0);
	memcpy(ip + 12, &p->saddr, 4);
	memcpy(ip + 16, &p->daddr, 4);
	put16(ip + 10, ip_csum(ip, BLUE_IPV4_MIN_HLEN));
}

/* The IPv6 header (RFC 8200 3) of a datagram of @ip_len bytes; next header UDP. */
static void put_ipv6(const struct blue_pkt *p, uint8_t *ip, size_t ip_len)
{
	put32(ip, 6u << 28 | (uint32_t)p->tos << 20 | p->flow_label);
	put16(ip + 4, (uint16_t)(ip_len - BLUE_IPV6_HLEN));
	ip[6] = IPPROTO_UDP_;
	ip[7] = p->ttl;
	memcpy(ip + 8, p->saddr6, 16);
	memcpy(ip + 24, p->daddr6, 16);
}

size_t blue_pkt_frame_len(const struct blue_pkt *p)
{
	uint32_t pad;

	return BLUE_ETH_HLEN + (p->has_vlan ? BLUE_VLAN_HLEN : 0) +
	       ip_len_of(p, blue_opcode_flags(p->opcode), &pad);
}

int blue_pkt_build(const struct blue_pkt *p, uint8_t *buf, size_t cap)
{
	__u32 fl = blue_opcode_flags(p->opcode);
	size_t l2, ip_len, frame_len;
	uint8_t *ip, *udp, *bth, *b;
	uint32_t pad, icrc;
	int err;

	err = check_fields(p, fl);
	if (err)
		return err;
	ip_len = ip_len_of(p, fl, &pad);
	/* the IPv4 total length, or the IPv6 payload length, is 16 bits */
	if (ip_len - (p->ipv6 ? BLUE_IPV6_HLEN : 0) > 0xffff)
		return -EINVAL;
	l2 = BLUE_ETH_HLEN + (p->has_vlan ? BLUE_VLAN_HLEN : 0);
	frame_len = l2 + ip_len;
	if (frame_len > cap)
		return -ENOSPC;

	memcpy(buf, p->dst_mac, 6);
	memcpy(buf + 6, p->src_mac, 6);
	if (p->has_vlan) {
		put16(buf + 12, ETH_P_8021Q);
		put16(buf + 14, p->vlan_tci);
	}
	put16(buf + l2 - 2, p->ipv6 ? ETH_P_IPV6_ : ETH_P_IPV4);

	ip = buf + l2;
	if (p->ipv6)
		put_ipv6(p, ip, ip_len);
	else
		put_ipv4(p, ip, ip_len);

	udp = ip + blue_pkt_ip_hlen(p);
	put16(udp, p->sport);
	put16(udp + 2, BLUE_ROCEV2_UDP_PORT);
	put16(udp + 4, (uint16_t)(ip_len - blue_pkt_ip_hlen(p)));
	put16(udp + 6, 0);

	bth = udp + BLUE_UDP_HLEN;
	bth[0] = p->opcode;
	bth[1] = (uint8_t)(p->se << 7 | p->mig << 6 | pad << BLUE_BTH_PAD_SHIFT | p->tver);
	put16(bth + 2, p->pkey);
	put32(bth + 4, (p->fecn ? BLUE_BTH_FECN : 0) | (p->becn ? BLUE_BTH_BECN : 0) | p->dqpn);
	put32(bth + 8, (p->ackreq ? BLUE_BTH_ACKREQ : 0) | p->psn);

	b = put_ext(p, fl, bth + sizeof(struct blue_bth));
	if (p->payload_len) {
		if (p->payload)
			memcpy(b, p->payload, p->payload_len);
		else
			memset(b, 0, p->payload_len);
		b += p->payload_len;
	}
	memset(b, 0, pad);
	b += pad;

	icrc = htole32(blue_icrc(ip, (size_t)(b - ip)));
	memcpy(b, &icrc, BLUE_ICRC_LEN);
	return (int)frame_len;
}

/* Locate the IP header and the datagram's length, as far as the ICRC needs them. */
static int locate_ip(const uint8_t *buf, size_t len, size_t *l3, size_t *tot)
{
	size_t off = BLUE_ETH_HLEN;
	uint16_t type;

	if (len < BLUE_ETH_HLEN)
		return -EBADMSG;
	type = get16(buf + 12);
	if (type == ETH_P_8021Q) {
		if (len < BLUE_ETH_HLEN + BLUE_VLAN_HLEN)
			return -EBADMSG;
		type = get16(buf + 16);
		off += BLUE_VLAN_HLEN;
	}
	*l3 = off;
	if (type == ETH_P_IPV6_) {
		if (len < off + BLUE_IPV6_HLEN)
			return -EBADMSG;
		*tot = BLUE_IPV6_HLEN + (size_t)get16(buf + off + 4);
	} else {
		if (type != ETH_P_IPV4 || len < off + BLUE_IPV4_MIN_HLEN)
			return -EBADMSG;
		*tot = get16(buf + off + 2);
	}
	if (*tot > len - off || *tot < (type == ETH_P_IPV6_ ? BLUE_IPV6_HLEN : BLUE_IPV4_MIN_HLEN) +
					BLUE_UDP_HLEN + sizeof(struct blue_bth) + BLUE_ICRC_LEN)
		return -EBADMSG;
	return 0;
}

int blue_pkt_verify_icrc(const uint8_t *buf, size_t len)
{
	size_t l3, tot;
	uint32_t wire;
	int err;

	err = locate_ip(buf, len, &l3, &tot);
	if (err)
		return err;
	memcpy(&wire, buf + l3 + tot - BLUE_ICRC_LEN, 4);
	return blue_icrc(buf + l3, tot - BLUE_ICRC_LEN) == le32toh(wire) ? 0 : -EILSEQ;
}

int blue_pkt_fix_icrc(uint8_t *buf, size_t len)
{
	size_t l3, tot;
	uint32_t icrc;
	int err;

	err = locate_ip(buf, len, &l3, &tot);
	if (err)
		return err;
	icrc = htole32(blue_icrc(buf + l3, tot - BLUE_ICRC_LEN));
	memcpy(buf + l3 + tot - BLUE_ICRC_LEN, &icrc, 4);
	return 0;
}

/* Record why, and map the reason to the errno class documented in codec.h. */
static int reject(struct blue_pkt *p, enum blue_parse_err why)
{
	p->parse_err = why;
	switch (why) {
	case BLUE_PARSE_NOT_IPV4:
	case BLUE_PARSE_NOT_UDP:
	case BLUE_PARSE_NOT_ROCEV2_PORT:
		return -EPROTONOSUPPORT;
	case BLUE_PARSE_BAD_ICRC:
		return -EILSEQ;
	default:
		return -EBADMSG;
	}
}

static void get_ext(struct blue_pkt *p, __u32 fl, const uint8_t *b)
{
	if (fl & BLUE_OPF_DETH) {
		p->deth.qkey = get32(b);
		p->deth.sqpn = get32(b + 4) & BLUE_QPN_MASK;
		b += sizeof(struct blue_deth);
	}
	if (fl & BLUE_OPF_FETH) {
		p->feth = get32(b);
		b += sizeof(struct blue_feth);
	}
	if (fl & BLUE_OPF_RETH) {
		p->reth.va = get64(b);
		p->reth.rkey = get32(b + 8);
		p->reth.len = get32(b + 12);
		b += sizeof(struct blue_reth);
	}
	if (fl & BLUE_OPF_ATMETH) {
		p->atmeth.va = get64(b);
		p->atmeth.rkey = get32(b + 8);
		p->atmeth.swap_add = get64(b + 12);
		p->atmeth.compare = get64(b + 20);
		b += sizeof(struct blue_atmeth);
	}
	if (fl & BLUE_OPF_AETH) {
		uint32_t w = get32(b);

		p->aeth.syndrome = (uint8_t)(w >> 24);
		p->aeth.msn = w & BLUE_PSN_MASK;
		b += sizeof(struct blue_aeth);
	}
	if (fl & BLUE_OPF_ATMACK) {
		p->atmack.orig = get64(b);
		b += sizeof(struct blue_atmack);
	}
	if (fl & BLUE_OPF_IMMDT) {
		p->imm = get32(b);
		b += sizeof(struct blue_immdt);
	}
	if (fl & BLUE_OPF_IETH)
		p->ieth_rkey = get32(b);
}

/* The IPv4 header at @l3; *@tot its total length. */
static int parse_ipv4(const uint8_t *buf, size_t len, size_t l3, struct blue_pkt *p,
		      size_t *tot)
{
	const uint8_t *ip = buf + l3;
	uint16_t frag;

	if (len - l3 < BLUE_IPV4_MIN_HLEN)
		return reject(p, BLUE_PARSE_TRUNC_IP);
	if (ip[0] >> 4 != 4)
		return reject(p, BLUE_PARSE_BAD_IP_VERSION);
	/* rxe computes the ICRC over a fixed 20-byte IPv4 header: no options */
	if ((ip[0] & 0x0f) != 5)
		return reject(p, BLUE_PARSE_BAD_IHL);
	*tot = get16(ip + 2);
	if (*tot < BLUE_IPV4_MIN_HLEN || *tot > len - l3)
		return reject(p, BLUE_PARSE_BAD_IP_LEN);
	if (ip_csum(ip, BLUE_IPV4_MIN_HLEN) != 0)
		return reject(p, BLUE_PARSE_BAD_IP_CSUM);
	frag = get16(ip + 6);
	if (frag & (IP_MF | IP_OFFMASK))
		return reject(p, BLUE_PARSE_IP_FRAGMENT);
	if (ip[9] != IPPROTO_UDP_)
		return reject(p, BLUE_PARSE_NOT_UDP);
	p->tos = ip[1];
	p->ttl = ip[8];
	p->ip_id = get16(ip + 4);
	p->ip_df = !!(frag & IP_DF);
	memcpy(&p->saddr, ip + 12, 4);
	memcpy(&p->daddr, ip + 16, 4);
	return 0;
}

/* The IPv6 header at @l3 (RFC 8200 3); *@tot the datagram's length. No extension
 * header: RoCEv2 carries none, and one shows up as a next header that is not UDP. */
static int parse_ipv6(const uint8_t *buf, size_t len, size_t l3, struct blue_pkt *p,
		      size_t *tot)
{
	const uint8_t *ip = buf + l3;
	uint32_t w;

	if (len - l3 < BLUE_IPV6_HLEN)
		return reject(p, BLUE_PARSE_TRUNC_IP);
	if (ip[0] >> 4 != 6)
		return reject(p, BLUE_PARSE_BAD_IP_VERSION);
	*tot = BLUE_IPV6_HLEN + (size_t)get16(ip + 4);
	if (*tot > len - l3)
		return reject(p, BLUE_PARSE_BAD_IP_LEN);
	if (ip[6] != IPPROTO_UDP_)
		return reject(p, BLUE_PARSE_NOT_UDP);
	w = get32(ip);
	p->ipv6 = 1;
	p->tos = (uint8_t)(w >> 20);
	p->flow_label = w & 0xfffff;
	p->ttl = ip[7];
	memcpy(p->saddr6, ip + 8, 16);
	memcpy(p->daddr6, ip + 24, 16);
	return 0;
}

/* RFC 8200 8.1: the UDP checksum over the IPv6 pseudo-header and the datagram. */
static int udp6_csum_ok(const uint8_t *ip, const uint8_t *udp, size_t ulen)
{
	uint32_t sum = 0;
	size_t i;

	for (i = 8; i < 40; i += 2)		/* source and destination addresses */
		sum += (uint32_t)ip[i] << 8 | ip[i + 1];
	sum += (uint32_t)ulen + IPPROTO_UDP_;
	for (i = 0; i + 1 < ulen; i += 2)
		sum += (uint32_t)udp[i] << 8 | udp[i + 1];
	if (ulen & 1)
		sum += (uint32_t)udp[ulen - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

/* Ethernet, IP and UDP; on success *l4 is the UDP header offset, *ulen its length. */
static int parse_l2_l4(const uint8_t *buf, size_t len, struct blue_pkt *p,
		       size_t *l4, size_t *ulen)
{
	size_t l3 = BLUE_ETH_HLEN, tot, hlen;
	const uint8_t *udp;
	uint16_t type;
	int err;

	if (len < BLUE_ETH_HLEN)
		return reject(p, BLUE_PARSE_TRUNC_ETH);
	memcpy(p->dst_mac, buf, 6);
	memcpy(p->src_mac, buf + 6, 6);
	type = get16(buf + 12);
	if (type == ETH_P_8021Q) {
		if (len < BLUE_ETH_HLEN + BLUE_VLAN_HLEN)
			return reject(p, BLUE_PARSE_TRUNC_ETH);
		p->has_vlan = 1;
		p->vlan_tci = get16(buf + 14);
		type = get16(buf + 16);
		l3 += BLUE_VLAN_HLEN;
	}
	if (type == ETH_P_IPV4)
		err = parse_ipv4(buf, len, l3, p, &tot);
	else if (type == ETH_P_IPV6_)
		err = parse_ipv6(buf, len, l3, p, &tot);
	else
		return reject(p, BLUE_PARSE_NOT_IPV4);
	if (err)
		return err;
	hlen = blue_pkt_ip_hlen(p);
	p->l3_off = (uint16_t)l3;
	p->frame_len = (uint32_t)(l3 + tot);

	if (tot - hlen < BLUE_UDP_HLEN)
		return reject(p, BLUE_PARSE_TRUNC_UDP);
	udp = buf + l3 + hlen;
	*ulen = get16(udp + 4);
	if (*ulen != tot - hlen)
		return reject(p, BLUE_PARSE_BAD_UDP_LEN);
	if (get16(udp + 2) != BLUE_ROCEV2_UDP_PORT)
		return reject(p, BLUE_PARSE_NOT_ROCEV2_PORT);
	if (p->ipv6 && get16(udp + 6) && !udp6_csum_ok(buf + l3, udp, *ulen))
		return reject(p, BLUE_PARSE_BAD_UDP_CSUM);
	p->sport = get16(udp);
	*l4 = l3 + hlen;
	return 0;
}

int blue_pkt_parse(const uint8_t *buf, size_t len, struct blue_pkt *p)
{
	size_t l4, ulen, ib_len, hdr_len, data;
	const uint8_t *bth;
	uint32_t w, wire;
	__u32 fl;
	int err;

	memset(p, 0, sizeof(*p));
	err = parse_l2_l4(buf, len, p, &l4, &ulen);
	if (err)
		return err;

	ib_len = ulen - BLUE_UDP_HLEN;
	if (ib_len < sizeof(struct blue_bth))
		return reject(p, BLUE_PARSE_TRUNC_BTH);
	bth = buf + l4 + BLUE_UDP_HLEN;
	p->bth_off = (uint16_t)(l4 + BLUE_UDP_HLEN);
	p->opcode = bth[0];
	p->se = !!(bth[1] & BLUE_BTH_SE);
	p->mig = !!(bth[1] & BLUE_BTH_MIG);
	p->pad = (bth[1] & BLUE_BTH_PAD_MASK) >> BLUE_BTH_PAD_SHIFT;
	p->tver = bth[1] & BLUE_BTH_TVER_MASK;
	p->pkey = get16(bth + 2);
	w = get32(bth + 4);
	p->fecn = !!(w & BLUE_BTH_FECN);
	p->becn = !!(w & BLUE_BTH_BECN);
	p->dqpn = w & BLUE_QPN_MASK;
	w = get32(bth + 8);
	p->ackreq = !!(w & BLUE_BTH_ACKREQ);
	p->psn = w & BLUE_PSN_MASK;

	/* IBA 9.2: a packet of an unsupported transport version is dropped */
	if (p->tver != BLUE_BTH_TVER)
		return reject(p, BLUE_PARSE_BAD_TVER);
	fl = blue_opcode_flags(p->opcode);
	if (!fl)
		return reject(p, BLUE_PARSE_BAD_OPCODE);
	hdr_len = blue_opcode_hdr_len(fl);
	if (ib_len < hdr_len)
		return reject(p, BLUE_PARSE_TRUNC_EXT);
	if (ib_len < hdr_len + BLUE_ICRC_LEN)
		return reject(p, BLUE_PARSE_TRUNC_ICRC);
	get_ext(p, fl, bth + sizeof(struct blue_bth));

	/* IBA 9.2: payload + pad fill whole 4-byte words; header-only opcodes carry none */
	data = ib_len - hdr_len - BLUE_ICRC_LEN;
	if (p->pad && !(fl & BLUE_OPF_PAYLOAD))
		return reject(p, BLUE_PARSE_BAD_PAD);
	if (data & 3 || (data && !(fl & BLUE_OPF_PAYLOAD)))
		return reject(p, BLUE_PARSE_BAD_PAYLOAD_LEN);
	if (p->pad > data)
		return reject(p, BLUE_PARSE_BAD_PAD);
	p->payload = bth + hdr_len;
	p->payload_len = (uint32_t)(data - p->pad);

	memcpy(&wire, bth + ib_len - BLUE_ICRC_LEN, 4);
	p->icrc = le32toh(wire);
	if (blue_icrc(buf + p->l3_off, ib_len + BLUE_UDP_HLEN + blue_pkt_ip_hlen(p) -
		      BLUE_ICRC_LEN) != p->icrc)
		return reject(p, BLUE_PARSE_BAD_ICRC);
	p->parse_err = BLUE_PARSE_OK;
	return 0;
}

static const char *const parse_err_names[BLUE_PARSE_ERR_MAX] = {
	[BLUE_PARSE_OK]			= "ok",
	[BLUE_PARSE_TRUNC_ETH]		= "trunc_eth",
	[BLUE_PARSE_NOT_IPV4]		= "not_ipv4",
	[BLUE_PARSE_TRUNC_IP]		= "trunc_ip",
	[BLUE_PARSE_BAD_IP_VERSION]	= "bad_ip_version",
	[BLUE_PARSE_BAD_IHL]		= "bad_ihl",
	[BLUE_PARSE_BAD_IP_LEN]		= "bad_ip_len",
	[BLUE_PARSE_BAD_IP_CSUM]	= "bad_ip_csum",
	[BLUE_PARSE_IP_FRAGMENT]	= "ip_fragment",
	[BLUE_PARSE_NOT_UDP]		= "not_udp",
	[BLUE_PARSE_TRUNC_UDP]		= "trunc_udp",
	[BLUE_PARSE_BAD_UDP_LEN]	= "bad_udp_len",
	[BLUE_PARSE_NOT_ROCEV2_PORT]	= "not_rocev2_port",
	[BLUE_PARSE_TRUNC_BTH]		= "trunc_bth",
	[BLUE_PARSE_BAD_TVER]		= "bad_tver",
	[BLUE_PARSE_BAD_OPCODE]		= "bad_opcode",
	[BLUE_PARSE_TRUNC_EXT]		= "trunc_ext",
	[BLUE_PARSE_TRUNC_ICRC]		= "trunc_icrc",
	[BLUE_PARSE_BAD_PAD]		= "bad_pad",
	[BLUE_PARSE_BAD_PAYLOAD_LEN]	= "bad_payload_len",
	[BLUE_PARSE_BAD_ICRC]		= "bad_icrc",
	[BLUE_PARSE_BAD_UDP_CSUM]	= "bad_udp_csum",
};

const char *blue_parse_err_name(enum blue_parse_err err)
{
	if ((unsigned int)err >= BLUE_PARSE_ERR_MAX)
		return "unknown";
	return parse_err_names[err];
}

static const uint8_t v4_mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

void blue_pkt_set_ips(struct blue_pkt *p, const uint8_t sgid[16], const uint8_t dgid[16])
{
	if (!memcmp(sgid, v4_mapped, 12) && !memcmp(dgid, v4_mapped, 12)) {
		p->ipv6 = 0;
		memcpy(&p->saddr, sgid + 12, 4);
		memcpy(&p->daddr, dgid + 12, 4);
		return;
	}
	p->ipv6 = 1;
	memcpy(p->saddr6, sgid, 16);
	memcpy(p->daddr6, dgid, 16);
}

/* ::ffff:@a (network order) or the IPv6 address @a6, as a GID. */
static void gid_of(uint8_t gid[16], int ipv6, uint32_t a, const uint8_t a6[16])
{
	if (ipv6) {
		memcpy(gid, a6, 16);
		return;
	}
	memcpy(gid, v4_mapped, 12);
	memcpy(gid + 12, &a, 4);
}

void blue_pkt_sgid(const struct blue_pkt *p, uint8_t gid[16])
{
	gid_of(gid, p->ipv6, p->saddr, p->saddr6);
}

void blue_pkt_dgid(const struct blue_pkt *p, uint8_t gid[16])
{
	gid_of(gid, p->ipv6, p->daddr, p->daddr6);
}

/*
 * Annex A17.3.1: the UDP source port is flow entropy for ECMP, constant for a QP pair.
 * A multiplicative hash of both QPNs, folded into the top 14 bits (0xC000 up, the
 * range rxe uses too).
 */
uint16_t blue_udp_sport(uint32_t src_qpn, uint32_t dst_qpn)
{
	uint32_t h = (src_qpn & BLUE_QPN_MASK) * 0x9e3779b1u;

	h ^= (dst_qpn & BLUE_QPN_MASK) * 0x85ebca77u;
	h ^= h >> 16;
	h *= 0x7feb352du;
	h ^= h >> 15;
	return (uint16_t)(0xc000 | (h >> 18));
}
