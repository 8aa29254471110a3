// SPDX-License-Identifier: MIT
/*
 * Codec over IPv6: the IPv6 header byte by byte (what rxe sends: flow label 0, UDP
 * checksum 0, hop limit 64, next header UDP), build -> parse round trips for every
 * opcode, the ICRC against an independent zlib reference with the annex A17.8 masks
 * (traffic class, flow label and hop limit may change on the way and the ICRC holds),
 * the UDP checksum rule (0 or right), the address helpers, and parse rejections.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "runtime/codec.h"
#include "icrc_ref.h"

#define L3	BLUE_ETH_HLEN
#define L4	(L3 + BLUE_IPV6_HLEN)
#define BTH	(L4 + BLUE_UDP_HLEN)

static const uint8_t SIP6[16] = { 0xfd, 0x00, 0xb1, 0x0e, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };
static const uint8_t DIP6[16] = { 0xfd, 0x00, 0xb1, 0x0e, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2 };

static uint64_t be_at(const uint8_t *b, unsigned int n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | *b++;
	return v;
}

static void v6_pkt(struct blue_pkt *p, uint8_t op)
{
	blue_pkt_init(p, op);
	memcpy(p->dst_mac, "\x02\x00\x00\x00\x00\x01", 6);
	memcpy(p->src_mac, "\x02\x00\x00\x00\x00\x02", 6);
	blue_pkt_set_ips(p, SIP6, DIP6);
	p->sport = 0xc123;
	p->dqpn = 0xabcdef;
	p->psn = 0x123456;
}

Test(codec6_build, ipv6_header_bytes_as_rxe)
{
	static const uint8_t data[5] = { 1, 2, 3, 4, 5 };
	uint8_t buf[256];
	struct blue_pkt p;
	int n;

	v6_pkt(&p, BLUE_OP_RC_SEND_ONLY);
	p.tos = 0xa2;
	p.payload = data;
	p.payload_len = sizeof(data);
	n = blue_pkt_build(&p, buf, sizeof(buf));
	/* 14 + 40 + 8 + 12 + 5 + 3 pad + 4 ICRC */
	cr_assert_eq(n, 86);
	cr_expect_eq(be_at(buf + 12, 2), 0x86dd, "EtherType IPv6");
	cr_expect_eq(be_at(buf + L3, 4), 0x6u << 28 | 0xa2u << 20,
		     "version 6, traffic class 0xa2, flow label 0 (rxe: ip6_flow_hdr(.., 0))");
	cr_expect_eq(be_at(buf + L3 + 4, 2), 86 - 14 - 40, "payload length");
	cr_expect_eq(buf[L3 + 6], 17, "next header UDP, no extension header");
	cr_expect_eq(buf[L3 + 7], 64, "hop limit 64");
	cr_expect_eq(memcmp(buf + L3 + 8, SIP6, 16), 0);
	cr_expect_eq(memcmp(buf + L3 + 24, DIP6, 16), 0);
	cr_expect_eq(be_at(buf + L4, 2), 0xc123);
	cr_expect_eq(be_at(buf + L4 + 2, 2), 4791);
	cr_expect_eq(be_at(buf + L4 + 4, 2), 86 - 14 - 40);
	cr_expect_eq(be_at(buf + L4 + 6, 2), 0, "UDP checksum 0, as rxe sends");
	cr_expect_eq(be_at(buf + BTH + 4, 4), 0xabcdef);
	cr_expect_eq(blue_pkt_frame_len(&p), (size_t)n);
	cr_expect_eq(buf[n - 4] | buf[n - 3] << 8 | buf[n - 2] << 16 | (uint32_t)buf[n - 1] << 24,
		     ref_icrc(buf + L3, (size_t)n - 4 - L3), "ICRC == zlib reference");
}

Test(codec6_build, flow_label_and_errors)
{
	uint8_t buf[256];
	struct blue_pkt p;
	int n;

	v6_pkt(&p, BLUE_OP_RC_ACKNOWLEDGE);
	p.flow_label = 0xabcde;
	n = blue_pkt_build(&p, buf, sizeof(buf));
	cr_assert_gt(n, 0);
	cr_expect_eq(be_at(buf + L3, 4) & 0xfffff, 0xabcde);
	p.flow_label = 0x100000;
	cr_expect_eq(blue_pkt_build(&p, buf, sizeof(buf)), -EINVAL, "flow label is 20 bits");
	p.flow_label = 0;
	p.ipv6 = 2;
	cr_expect_eq(blue_pkt_build(&p, buf, sizeof(buf)), -EINVAL);
}

/* Every opcode, every pad, with and without VLAN: what is built parses back. */
Test(codec6_roundtrip, every_opcode)
{
	static const uint32_t lens[] = { 0, 1, 2, 3, 4, 5, 1024, 4093 };
	static uint8_t data[4096], buf[4096 + 256];
	struct blue_pkt p, q;
	unsigned int op, j;
	char what[64];
	int n, err;

	for (j = 0; j < sizeof(data); j++)
		data[j] = (uint8_t)(j * 7 + 3);
	for (op = 0; op < 256; op++) {
		__u32 fl = blue_opcode_flags((uint8_t)op);

		if (!fl)
			continue;
		for (j = 0; j < sizeof(lens) / sizeof(lens[0]); j++) {
			uint32_t plen = (fl & BLUE_OPF_PAYLOAD) ? lens[j] : 0;

			v6_pkt(&p, (uint8_t)op);
			p.has_vlan = j & 1;
			p.vlan_tci = p.has_vlan ? 0x2064 : 0;
			p.tos = (uint8_t)(j * 37);
			p.ttl = (uint8_t)(64 - j);
			p.flow_label = j * 0x1111;
			if (fl & BLUE_OPF_DETH) {
				p.deth.qkey = 0x11223344;
				p.deth.sqpn = 0x55;
			}
			p.payload = data;
			p.payload_len = plen;
			snprintf(what, sizeof(what), "op 0x%02x len %u", op, plen);
			n = blue_pkt_build(&p, buf, sizeof(buf));
			cr_assert_gt(n, 0, "%s: build %d", what, n);
			cr_expect_eq(blue_pkt_verify_icrc(buf, (size_t)n), 0, "%s: ICRC", what);
			err = blue_pkt_parse(buf, (size_t)n, &q);
			cr_assert_eq(err, 0, "%s: parse %d (%s)", what, err,
				     blue_parse_err_name(q.parse_err));
			cr_expect_eq(q.ipv6, 1, "%s", what);
			cr_expect_eq(memcmp(q.saddr6, SIP6, 16), 0, "%s: saddr6", what);
			cr_expect_eq(memcmp(q.daddr6, DIP6, 16), 0, "%s: daddr6", what);
			cr_expect_eq(q.tos, p.tos, "%s: traffic class", what);
			cr_expect_eq(q.ttl, p.ttl, "%s: hop limit", what);
			cr_expect_eq(q.flow_label, p.flow_label, "%s: flow label", what);
			cr_expect_eq(q.saddr | q.daddr, 0, "%s: no IPv4 addresses", what);
			cr_expect_eq(q.opcode, op);
			cr_expect_eq(q.dqpn, p.dqpn);
			cr_expect_eq(q.psn, p.psn);
			cr_expect_eq(q.payload_len, plen, "%s", what);
			cr_expect_eq(q.l3_off, p.has_vlan ? 18 : 14);
			cr_expect_eq(q.bth_off, q.l3_off + 48, "%s: bth_off", what);
			cr_expect_eq(q.frame_len, (uint32_t)n);
			if (plen)
				cr_expect_eq(memcmp(q.payload, data, plen), 0, "%s: payload", what);
			if (fl & BLUE_OPF_DETH)
				cr_expect_eq(q.deth.qkey, 0x11223344u);
		}
	}
}

/*
 * Annex A17.8: the IPv6 traffic class, flow label and hop limit are masked in the ICRC,
 * so a router that rewrites them leaves it valid; the addresses and the payload length
 * are not masked.
 */
Test(codec6_icrc, masks_tc_flow_label_hop_limit)
{
	uint8_t buf[256], orig[256];
	struct blue_pkt p, q;
	int n;

	v6_pkt(&p, BLUE_OP_RC_SEND_ONLY);
	p.payload_len = 16;
	n = blue_pkt_build(&p, buf, sizeof(buf));
	cr_assert_gt(n, 0);
	memcpy(orig, buf, (size_t)n);
	buf[L3] = 0x6f;			/* traffic class high nibble */
	buf[L3 + 1] = 0xf5;		/* traffic class low nibble (ECN CE) + flow label */
	buf[L3 + 2] = 0x43;
	buf[L3 + 3] = 0x21;
	buf[L3 + 7] = 3;		/* hop limit */
	buf[L4 + 6] = 0;		/* UDP checksum stays 0 */
	cr_expect_eq(blue_pkt_verify_icrc(buf, (size_t)n), 0);
	cr_expect_eq(blue_pkt_parse(buf, (size_t)n, &q), 0, "%s",
		     blue_parse_err_name(q.parse_err));
	cr_expect_eq(q.ttl, 3);
	cr_expect_eq(q.tos, 0xff);
	cr_expect_eq(q.flow_label, 0x54321);
	memcpy(buf, orig, (size_t)n);
	buf[L3 + 8 + 15] ^= 1;		/* the source address is covered */
	cr_expect_eq(blue_pkt_verify_icrc(buf, (size_t)n), -EILSEQ);
	cr_expect_eq(blue_pkt_parse(buf, (size_t)n, &q), -EILSEQ);
	cr_expect_eq(q.parse_err, BLUE_PARSE_BAD_ICRC);
	cr_expect_eq(blue_pkt_fix_icrc(buf, (size_t)n), 0);
	cr_expect_eq(blue_pkt_parse(buf, (size_t)n, &q), 0);
}

/* RFC 8200 8.1 checksum of the UDP datagram at @udp, for the test's own frames. */
static uint16_t udp6_csum(const uint8_t *ip, const uint8_t *udp, size_t ulen)
{
	uint32_t sum = 17 + (uint32_t)ulen;
	size_t i;

	for (i = 8; i < 40; i += 2)
		sum += be_at(ip + i, 2);
	for (i = 0; i + 1 < ulen; i += 2)
		if (i != 6)
			sum += be_at(udp + i, 2);
	if (ulen & 1)
		sum += (uint32_t)udp[ulen - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	sum = ~sum & 0xffff;
	return sum ? (uint16_t)sum : 0xffff;
}

/* rxe sends 0 and takes 0 (no use_udp6_rx_checksums); a non-zero one must be right. */
Test(codec6_parse, udp_checksum_zero_or_right)
{
	uint8_t buf[256];
	struct blue_pkt p, q;
	uint16_t c;
	int n;

	v6_pkt(&p, BLUE_OP_RC_SEND_ONLY);
	p.payload_len = 13;
	n = blue_pkt_build(&p, buf, sizeof(buf));
	cr_assert_gt(n, 0);
	c = udp6_csum(buf + L3, buf + L4, (size_t)n - L4);
	buf[L4 + 6] = (uint8_t)(c >> 8);
	buf[L4 + 7] = (uint8_t)c;
	cr_expect_eq(blue_pkt_parse(buf, (size_t)n, &q), 0, "a right checksum: %s",
		     blue_parse_err_name(q.parse_err));
	buf[L4 + 7] ^= 0x10;
	cr_expect_eq(blue_pkt_parse(buf, (size_t)n, &q), -EBADMSG);
	cr_expect_eq(q.parse_err, BLUE_PARSE_BAD_UDP_CSUM);
	cr_expect_str_eq(blue_parse_err_name(q.parse_err), "bad_udp_csum");
}

Test(codec6_parse, rejections)
{
	uint8_t buf[256], orig[256];
	struct blue_pkt p, q;
	int n;

	v6_pkt(&p, BLUE_OP_RC_SEND_ONLY);
	p.payload_len = 8;
	n = blue_pkt_build(&p, buf, sizeof(buf));
	cr_assert_gt(n, 0);
	memcpy(orig, buf, (size_t)n);

	cr_expect_eq(blue_pkt_parse(buf, L3 + 30, &q), -EBADMSG);
	cr_expect_eq(q.parse_err, BLUE_PARSE_TRUNC_IP);
	buf[L3] = 0x45;
	cr_expect_eq(blue_pkt_parse(buf, (size_t)n, &q), -EBADMSG);
	cr_expect_eq(q.parse_err, BLUE_PARSE_BAD_IP_VERSION);
	memcpy(buf, orig, (size_t)n);
	buf[L3 + 6] = 0;		/* a hop-by-hop options header */
	cr_expect_eq(blue_pkt_parse(buf, (size_t)n, &q), -EPROTONOSUPPORT);
	cr_expect_eq(q.parse_err, BLUE_PARSE_NOT_UDP);
	memcpy(buf, orig, (size_t)n);
	buf[L3 + 5] += 1;		/* payload length past the frame */
	cr_expect_eq(blue_pkt_parse(buf, (size_t)n, &q), -EBADMSG);
	cr_expect_eq(q.parse_err, BLUE_PARSE_BAD_IP_LEN);
	memcpy(buf, orig, (size_t)n);
	buf[L4 + 5] -= 4;		/* UDP length short of the payload length */
	cr_expect_eq(blue_pkt_parse(buf, (size_t)n, &q), -EBADMSG);
	cr_expect_eq(q.parse_err, BLUE_PARSE_BAD_UDP_LEN);
	/* Ethernet padding after the datagram is allowed */
	memcpy(buf, orig, (size_t)n);
	memset(buf + n, 0, 6);
	cr_expect_eq(blue_pkt_parse(buf, (size_t)n + 6, &q), 0);
	cr_expect_eq(q.frame_len, (uint32_t)n);
}

Test(codec6_addr, set_ips_and_gids)
{
	static const uint8_t m1[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1 };
	static const uint8_t m2[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2 };
	struct blue_pkt p;
	uint8_t g[16];

	blue_pkt_init(&p, BLUE_OP_RC_SEND_ONLY);
	blue_pkt_set_ips(&p, m1, m2);
	cr_expect_eq(p.ipv6, 0, "two IPv4-mapped GIDs make IPv4");
	cr_expect_eq(p.saddr, htonl(0x0a000001));
	cr_expect_eq(p.daddr, htonl(0x0a000002));
	blue_pkt_sgid(&p, g);
	cr_expect_eq(memcmp(g, m1, 16), 0);
	blue_pkt_dgid(&p, g);
	cr_expect_eq(memcmp(g, m2, 16), 0);
	blue_pkt_set_ips(&p, SIP6, DIP6);
	cr_expect_eq(p.ipv6, 1);
	blue_pkt_sgid(&p, g);
	cr_expect_eq(memcmp(g, SIP6, 16), 0);
	blue_pkt_dgid(&p, g);
	cr_expect_eq(memcmp(g, DIP6, 16), 0);
}
