/* SPDX-License-Identifier: MIT */
/*
 * RoCEv2 wire codec: one Ethernet frame <-> struct blue_pkt.
 *
 * Layout built and accepted (IBA annex A17.2, ch. 9.2-9.3):
 *   Ethernet [802.1Q tag] / IPv4 (IHL 5, no fragments) or IPv6 (no extension
 *   header) / UDP dport 4791 /
 *   BTH / extended headers in IBA order (DETH, FETH, RETH, AtomicETH, AETH, AtomicAckETH,
 *   ImmDt, IETH) / payload / pad (0..3 zero bytes) / ICRC (4 bytes, little-endian).
 * Which extended headers an opcode carries comes from blue_opcode_flags() in
 * include/blue/wire.h, the one table shared with the XDP program.
 *
 * Every numeric field in struct blue_pkt is in host byte order, except the IP
 * addresses, which stay in network order (as in struct iphdr / struct in6_addr).
 */
#ifndef BLUE_RUNTIME_CODEC_H
#define BLUE_RUNTIME_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include <blue/wire.h>

/* Why blue_pkt_parse() rejected a frame; also the label in logs and tests. */
enum blue_parse_err {
	BLUE_PARSE_OK = 0,
	BLUE_PARSE_TRUNC_ETH,		/* shorter than the Ethernet (+VLAN) header */
	BLUE_PARSE_NOT_IPV4,		/* EtherType is neither IPv4 nor IPv6 */
	BLUE_PARSE_TRUNC_IP,		/* shorter than a 20-byte IPv4 header */
	BLUE_PARSE_BAD_IP_VERSION,	/* version nibble is not 4 */
	BLUE_PARSE_BAD_IHL,		/* IHL != 5: rxe and we take no IP options */
	BLUE_PARSE_BAD_IP_LEN,		/* total length < headers or > frame */
	BLUE_PARSE_BAD_IP_CSUM,		/* IPv4 header checksum wrong */
	BLUE_PARSE_IP_FRAGMENT,		/* MF set or fragment offset != 0 */
	BLUE_PARSE_NOT_UDP,		/* IP protocol is not UDP */
	BLUE_PARSE_TRUNC_UDP,		/* IP payload shorter than a UDP header */
	BLUE_PARSE_BAD_UDP_LEN,		/* UDP length != IP payload length */
	BLUE_PARSE_NOT_ROCEV2_PORT,	/* UDP destination port is not 4791 */
	BLUE_PARSE_TRUNC_BTH,		/* UDP payload shorter than the BTH */
	BLUE_PARSE_BAD_TVER,		/* BTH TVer != 0 (IBA 9.2) */
	BLUE_PARSE_BAD_OPCODE,		/* opcode not in the wire.h table */
	BLUE_PARSE_TRUNC_EXT,		/* extended headers run past the end */
	BLUE_PARSE_TRUNC_ICRC,		/* no room for the 4-byte ICRC */
	BLUE_PARSE_BAD_PAD,		/* pad count > data, or pad on an opcode w/o payload */
	BLUE_PARSE_BAD_PAYLOAD_LEN,	/* data not 4-byte aligned, or data on an opcode w/o payload */
	BLUE_PARSE_BAD_ICRC,		/* ICRC on the wire != computed */
	BLUE_PARSE_BAD_UDP_CSUM,	/* IPv6: a UDP checksum that is neither 0 nor right */
	BLUE_PARSE_ERR_MAX,
};

/* One RoCEv2 frame, decoded. Zero-initialise, or use blue_pkt_init(). */
struct blue_pkt {
	/* Ethernet */
	uint8_t		dst_mac[6];
	uint8_t		src_mac[6];
	uint8_t		has_vlan;	/* one 802.1Q tag (TPID 0x8100) */
	uint16_t	vlan_tci;	/* PCP:3 DEI:1 VID:12 */

	/* IPv4 (IHL 5 only) */
	uint32_t	saddr;		/* network order */
	uint32_t	daddr;		/* network order */
	uint8_t		tos;		/* DSCP:6 ECN:2; IPv6: the traffic class */
	uint8_t		ttl;		/* IPv6: the hop limit */
	uint16_t	ip_id;
	uint8_t		ip_df;		/* Don't Fragment; rxe sets it */

	/*
	 * IPv6 instead of IPv4 when set (blue_pkt_set_ips): then saddr6/daddr6 are the
	 * addresses (saddr/daddr, ip_id and ip_df unused) and tos/ttl the traffic class and
	 * hop limit. rxe sends flow label 0 (rxe_net.c prepare_ipv6_hdr: ip6_flow_hdr(ip6h,
	 * prio, htonl(0))), and so does blue_pkt_init's zero.
	 */
	uint8_t		ipv6;
	uint32_t	flow_label;	/* 20 bits */
	uint8_t		saddr6[16];
	uint8_t		daddr6[16];

	/* UDP (destination is always 4791; checksum is sent as 0, as rxe does over IPv4
	 * and IPv6 alike: rxe_net.c prepare_udp_hdr writes check = 0) */
	uint16_t	sport;

	/* BTH (IBA 9.2) */
	uint8_t		opcode;		/* enum blue_opcode */
	uint8_t		se;		/* solicited event */
	uint8_t		mig;		/* MigReq (the "M" bit) */
	uint8_t		pad;		/* parse: pad count; build: ignored, computed */
	uint8_t		tver;		/* transport header version, 0 */
	uint16_t	pkey;
	uint8_t		fecn;
	uint8_t		becn;
	uint32_t	dqpn;		/* 24 bits */
	uint8_t		ackreq;
	uint32_t	psn;		/* 24 bits */

	/* Extended headers: only those the opcode carries are built / filled in. */
	struct {
		uint64_t	va;
		uint32_t	rkey;
		uint32_t	len;
	} reth;				/* IBA 9.3.3 */
	struct {
		uint8_t		syndrome;	/* BLUE_AETH_* | value */
		uint32_t	msn;		/* 24 bits */
	} aeth;				/* IBA 9.3.5 */
	struct {
		uint64_t	va;
		uint32_t	rkey;
		uint64_t	swap_add;
		uint64_t	compare;
	} atmeth;			/* IBA 9.3.4 */
	struct {
		uint64_t	orig;
	} atmack;			/* IBA 9.3.6 */
	uint32_t	imm;		/* ImmDt, IBA 9.3.7 (host order of the wire value) */
	uint32_t	ieth_rkey;	/* IETH, IBA 9.3.8 */
	struct {
		uint32_t	qkey;
		uint32_t	sqpn;		/* 24 bits */
	} deth;				/* IBA 9.3.2 */
	uint32_t	feth;		/* FETH (IBA 1.5): BLUE_FETH_PLT/SEL bits, host order */

	/*
	 * Payload, without pad. Parse: points into the parsed buffer (no copy).
	 * Build: copied from here; NULL with a non-zero length sends zeros.
	 */
	const uint8_t	*payload;
	uint32_t	payload_len;

	/* Filled in by parse only. */
	uint32_t	icrc;		/* the CRC value found on the wire */
	uint16_t	l3_off;		/* offset of the IPv4 (IPv6) header */
	uint16_t	bth_off;	/* offset of the BTH */
	uint32_t	frame_len;	/* Ethernet + IP datagram (excludes Ethernet padding) */
	enum blue_parse_err parse_err;
};

/**
 * blue_pkt_init() - zero @p and set the defaults rxe sends.
 * @p:      packet to initialise
 * @opcode: BTH opcode
 *
 * TTL 64, DF set, P_Key 0xffff, TVer 0; for a CNP also BECN. Addresses, ports, QPN and
 * PSN are left zero for the caller.
 */
void blue_pkt_init(struct blue_pkt *p, uint8_t opcode);

/**
 * blue_pkt_build() - serialise @p into @buf.
 * @p:   fields; p->pad is ignored (pad is computed from payload_len)
 * @buf: output frame
 * @cap: bytes available at @buf
 *
 * Computes the pad, IPv4 total length and header checksum (IPv6: payload length), UDP
 * length (UDP checksum 0) and the ICRC. A CNP gets its 16 reserved zero bytes (annex A17.9.3).
 *
 * Return: frame length, -EINVAL for an unknown opcode, payload on an opcode that
 * carries none, or a field out of range (QPN/PSN/MSN/SrcQP > 24 bits, TVer > 15,
 * pad/bool fields > 1, frame larger than IPv4 allows), -ENOSPC if @cap is too small.
 */
int blue_pkt_build(const struct blue_pkt *p, uint8_t *buf, size_t cap);

/**
 * blue_pkt_frame_len() - the length of the frame blue_pkt_build() makes of @p (Ethernet
 * header to ICRC, no FCS), without building it: what a paced sender charges per packet.
 */
size_t blue_pkt_frame_len(const struct blue_pkt *p);

/**
 * blue_pkt_parse() - decode and check one frame.
 * @buf: the frame, starting at the Ethernet header
 * @len: bytes in the frame (trailing Ethernet padding is allowed)
 * @p:   output; zeroed first; p->payload points into @buf
 *
 * Checks every header, the length/pad arithmetic and the ICRC. p->parse_err names
 * the first problem found (BLUE_PARSE_OK on success).
 *
 * Over IPv6 a UDP checksum of 0 is taken (rxe sends 0, and its receive socket is made
 * without use_udp6_rx_checksums, so the kernel takes 0 for it), and a non-zero one must
 * be right (the kernel's UDP receive checks it before rxe sees the packet).
 *
 * Return: 0; -EPROTONOSUPPORT if the frame is not RoCEv2 at all (not IPv4/IPv6, not
 * UDP, not port 4791); -EILSEQ for a bad ICRC; -EBADMSG for any other malformation.
 */
int blue_pkt_parse(const uint8_t *buf, size_t len, struct blue_pkt *p);

/**
 * blue_pkt_set_ips() - the IP addresses of @p from two GIDs (16 bytes each): IPv4 when
 * both are IPv4-mapped (::ffff:a.b.c.d, annex A17.4.1), else IPv6 (p->ipv6 set).
 */
void blue_pkt_set_ips(struct blue_pkt *p, const uint8_t sgid[16], const uint8_t dgid[16]);

/* blue_pkt_sgid(), blue_pkt_dgid() - @p's source (destination) address as a GID. */
void blue_pkt_sgid(const struct blue_pkt *p, uint8_t gid[16]);
void blue_pkt_dgid(const struct blue_pkt *p, uint8_t gid[16]);

/* blue_pkt_ip_hlen() - the IP header length of @p: 20 (IPv4) or 40 (IPv6). */
static inline unsigned int blue_pkt_ip_hlen(const struct blue_pkt *p)
{
	return p->ipv6 ? BLUE_IPV6_HLEN : BLUE_IPV4_MIN_HLEN;
}

/* blue_parse_err_name() - stable lower-case name of @err, e.g. "bad_icrc". */
const char *blue_parse_err_name(enum blue_parse_err err);

/**
 * blue_icrc() - RoCEv2 invariant CRC (IBA annex A17.3.3).
 * @ip_hdr: start of the IPv4 (or IPv6) header
 * @len:    bytes from @ip_hdr to the end of the pad, excluding the ICRC itself
 *
 * CRC-32 (zlib's) over 8 bytes of 0xff, then the IP header with TOS, TTL and the
 * checksum set to all-ones (IPv6: traffic class, flow label, hop limit), the UDP header
 * with its checksum all-ones, BTH byte 4 (FECN, BECN, reserved) all-ones, and the rest
 * as is. The caller stores the result little-endian. @len must cover IP + UDP + BTH.
 *
 * Return: the CRC value.
 */
uint32_t blue_icrc(const uint8_t *ip_hdr, size_t len);

/**
 * blue_pkt_verify_icrc() - check the ICRC of a frame without decoding it fully.
 * Return: 0 if it matches, -EILSEQ if not, -EBADMSG if the frame is too short or not
 * IPv4/IPv6 (the IP datagram's length bounds the ICRC'd range).
 */
int blue_pkt_verify_icrc(const uint8_t *buf, size_t len);

/**
 * blue_pkt_fix_icrc() - recompute and store the ICRC of a frame in place.
 *
 * For tests that edit header bytes of a built frame and want only their own damage
 * to show. Return: 0 or -EBADMSG (same conditions as blue_pkt_verify_icrc()).
 */
int blue_pkt_fix_icrc(uint8_t *buf, size_t len);

/**
 * blue_udp_sport() - UDP source port for a flow (annex A17.3.1 flow entropy).
 *
 * Return: a port in 0xC000-0xFFFF that depends on both QPNs, so ECMP spreads
 * distinct QP pairs while every packet of one QP pair takes one path.
 */
uint16_t blue_udp_sport(uint32_t src_qpn, uint32_t dst_qpn);

#endif /* BLUE_RUNTIME_CODEC_H */
