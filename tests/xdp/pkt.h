/* SPDX-License-Identifier: MIT */
/*
 * A small frame builder for the XDP tests: Ethernet (+VLAN) / IPv4 (+options) / UDP /
 * BTH + extended headers / payload / pad / ICRC, with knobs to break each field.
 * Deliberately independent of the runtime codec, so the two can check each other.
 */
#ifndef BLUE_TEST_XDP_PKT_H
#define BLUE_TEST_XDP_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where each part of the frame starts; a cut is placed relative to one of these. */
enum pkt_layer {
	PL_NONE = 0,	/* no cut */
	PL_ETH,
	PL_VLAN,
	PL_IP,
	PL_IPOPT,
	PL_UDP,
	PL_BTH,
	PL_EXT,		/* first extended header after the BTH */
	PL_PAYLOAD,
	PL_ICRC,
	PL__MAX,
};

struct pkt_spec {
	int		vlan_tags;	/* 0, 1 or 2 (QinQ) */
	uint16_t	vlan_tpid;	/* outer tag's TPID */
	uint16_t	ethertype;	/* ETH_P_IP, ETH_P_IPV6, ETH_P_ARP, ... */
	uint8_t		ip_version;
	uint8_t		ihl;		/* > 5 adds NOP options */
	uint8_t		ip_proto;
	uint16_t	frag;		/* flags + fragment offset, host order */
	int		tot_len_adj;	/* added to the honest IPv4 total length */
	uint16_t	tot_len_set;	/* if not 0, the IPv4 total length to write */
	uint16_t	sport;
	uint16_t	dport;
	int		udp_len_adj;	/* added to the honest UDP length */
	uint16_t	udp_len_set;	/* if not 0, the UDP length to write */
	uint8_t		opcode;
	uint8_t		tver;
	uint8_t		pad;		/* BTH PadCnt; that many pad bytes are written */
	bool		pad_unwritten;	/* claim PadCnt but write no pad bytes */
	bool		becn;
	bool		ce;		/* ECN CE (11) in the IPv4 TOS instead of ECT(0) */
	uint16_t	pkey;		/* BTH P_Key */
	uint32_t	dqpn;
	uint32_t	psn;
	uint32_t	payload_len;
	uint32_t	aeth;		/* if not 0, the AETH word (syndrome << 24 | MSN) */
	bool		icrc;		/* write the 4-byte ICRC */
	uint32_t	trailer;	/* bytes after the IP datagram (Ethernet padding) */
	/* if not 0, the IPv4 destination (host order); IPv4 multicast gets its MAC */
	uint32_t	daddr;
	/* if daddr6[0], the IPv6 destination; ff00::/8 gets its MAC (33:33 + low 32 bits) */
	uint8_t		daddr6[16];
	/*
	 * End the frame cut_len bytes into cut_layer. Unless cut_raw, the IPv4 total length
	 * and UDP length describe the cut frame, as a sender of a short packet would write
	 * them; with cut_raw they still describe the whole packet.
	 */
	enum pkt_layer	cut_layer;
	int		cut_len;
	bool		cut_raw;
};

/* An RC SEND Only of 64 bytes to QPN 0x11, everything well formed. */
void pkt_spec_default(struct pkt_spec *s);

/* Build @s into @buf; returns the frame length, or 0 if @cap is too small. */
size_t pkt_build(const struct pkt_spec *s, uint8_t *buf, size_t cap);

/*
 * RoCEv2 ICRC (annex A17.3.3) of the IPv4 datagram at @ip whose ICRC field starts at
 * @icrc_off bytes from @ip: zlib CRC-32 over 8 bytes of 0xff and the datagram with TOS,
 * TTL, IP checksum, UDP checksum and BTH byte 4 masked to ones. Host-order value.
 */
uint32_t pkt_icrc(const uint8_t *ip, size_t icrc_off);

#endif /* BLUE_TEST_XDP_PKT_H */
