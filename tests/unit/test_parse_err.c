// SPDX-License-Identifier: MIT
/*
 * Parser rejections: one crafted bad frame per reason, each damaged in exactly one way
 * (IP checksum and ICRC repaired afterwards unless they are the point), checked for the
 * reason, the errno class and its name. Plus what must still pass: Ethernet padding,
 * and the fields the ICRC masks (TOS, TTL, FECN/BECN) rewritten on the way.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "runtime/codec.h"

#define L3	14
#define L4	(L3 + 20)
#define BTH	(L4 + 8)

static uint8_t frame[2048];

/* Independent RFC 1071 checksum fix-up after a test edits the IPv4 header. */
static void fix_ip_csum(uint8_t *ip)
{
	uint32_t sum = 0;
	int i;

	ip[10] = ip[11] = 0;
	for (i = 0; i < 20; i += 2)
		sum += (uint32_t)ip[i] << 8 | ip[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	ip[10] = (uint8_t)(~sum >> 8);
	ip[11] = (uint8_t)~sum;
}

static void put16(uint8_t *b, unsigned int v)
{
	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

/* Set IP total and UDP lengths to @ib bytes of IB part, fix the IP checksum. */
static void set_ib_len(unsigned int ib)
{
	put16(frame + L3 + 2, 20 + 8 + ib);
	put16(frame + L4 + 4, 8 + ib);
	fix_ip_csum(frame + L3);
}

static int build(uint8_t op, uint32_t plen)
{
	static const uint8_t data[64] = "0123456789abcdef0123456789abcdef";
	struct blue_pkt p;
	int n;

	blue_pkt_init(&p, op);
	memcpy(p.dst_mac, "\x02\x00\x00\x00\x00\x01", 6);
	memcpy(p.src_mac, "\x02\x00\x00\x00\x00\x02", 6);
	p.saddr = 0x0101c90a;
	p.daddr = 0x0201c90a;
	p.sport = blue_udp_sport(0x11, 0x12);
	p.dqpn = 0x12;
	p.psn = 100;
	p.payload = data;
	p.payload_len = plen;
	memset(frame, 0xee, sizeof(frame));
	n = blue_pkt_build(&p, frame, sizeof(frame));
	cr_assert_gt(n, 0, "build 0x%02x", op);
	return n;
}

static void expect(size_t len, enum blue_parse_err why, int err, const char *what)
{
	struct blue_pkt p;
	int rc;

	rc = blue_pkt_parse(frame, len, &p);
	cr_expect_eq(p.parse_err, why, "%s: reason %s, want %s", what,
		     blue_parse_err_name(p.parse_err), blue_parse_err_name(why));
	cr_expect_eq(rc, err, "%s: rc %d want %d", what, rc, err);
}

#define EXPECT_OK(len, what)	expect(len, BLUE_PARSE_OK, 0, what)
#define EXPECT_BAD(len, why, what) expect(len, why, -EBADMSG, what)

Test(codec_parse, baseline_ok)
{
	int n = build(BLUE_OP_RC_SEND_ONLY, 5);

	EXPECT_OK((size_t)n, "unmodified");
}

Test(codec_parse, trunc_eth)
{
	int n = build(BLUE_OP_RC_SEND_ONLY, 5);

	(void)n;
	EXPECT_BAD(0, BLUE_PARSE_TRUNC_ETH, "empty");
	EXPECT_BAD(13, BLUE_PARSE_TRUNC_ETH, "13 bytes");
	put16(frame + 12, 0x8100);
	EXPECT_BAD(17, BLUE_PARSE_TRUNC_ETH, "VLAN tag cut");
}

Test(codec_parse, not_ipv4)
{
	int n = build(BLUE_OP_RC_SEND_ONLY, 5);

	/* RoCEv2 over IPv6 is parsed (test_codec6.c): an IPv4 header under its
	 * ethertype is a wrong IP version */
	put16(frame + 12, 0x86dd);
	expect((size_t)n, BLUE_PARSE_BAD_IP_VERSION, -EBADMSG, "IPv4 under the IPv6 ethertype");
	put16(frame + 12, 0x0806);
	expect((size_t)n, BLUE_PARSE_NOT_IPV4, -EPROTONOSUPPORT, "ARP");
}

Test(codec_parse, trunc_ip)
{
	build(BLUE_OP_RC_SEND_ONLY, 5);
	EXPECT_BAD(L3 + 19, BLUE_PARSE_TRUNC_IP, "19-byte IP header");
	EXPECT_BAD(L3, BLUE_PARSE_TRUNC_IP, "no IP header");
}

Test(codec_parse, bad_ip_version)
{
	int n = build(BLUE_OP_RC_SEND_ONLY, 5);

	frame[L3] = 0x65;
	fix_ip_csum(frame + L3);
	EXPECT_BAD((size_t)n, BLUE_PARSE_BAD_IP_VERSION, "version 6 in an IPv4 ethertype");
}

Test(codec_parse, bad_ihl)
{
	int n = build(BLUE_OP_RC_SEND_ONLY, 5);

	frame[L3] = 0x46;
	fix_ip_csum(frame + L3);
	EXPECT_BAD((size_t)n, BLUE_PARSE_BAD_IHL, "IHL 6 (options)");
	frame[L3] = 0x44;
	EXPECT_BAD((size_t)n, BLUE_PARSE_BAD_IHL, "IHL 4");
}

Test(codec_parse, bad_ip_len)
{
	int n = build(BLUE_OP_RC_SEND_ONLY, 5);

	put16(frame + L3 + 2, (unsigned int)n - L3 + 1);
	fix_ip_csum(frame + L3);
	EXPECT_BAD((size_t)n, BLUE_PARSE_BAD_IP_LEN, "total length past the frame");
	put16(frame + L3 + 2, 19);
	fix_ip_csum(frame + L3);
	EXPECT_BAD((size_t)n, BLUE_PARSE_BAD_IP_LEN, "total length below the header");
	build(BLUE_OP_RC_SEND_ONLY, 5);
	EXPECT_BAD((size_t)n - 1, BLUE_PARSE_BAD_IP_LEN, "frame cut by one byte");
}

Test(codec_parse, bad_ip_csum)
{
	int n = build(BLUE_OP_RC_SEND_ONLY, 5);

	frame[L3 + 5] ^= 1;	/* IP id, checksum left stale */
	EXPECT_BAD((size_t)n, BLUE_PARSE_BAD_IP_CSUM, "stale checksum");
}

Test(codec_parse, ip_fragment)
{
	int n = build(BLUE_OP_RC_SEND_ONLY, 5);

	put16(frame + L3 + 6, 0x2000);
	fix_ip_csum(frame + L3);
	EXPECT_BAD((size_t)n, BLUE_PARSE_IP_FRAGMENT, "MF set");
	put16(frame + L3 + 6, 0x0001);
	fix_ip_csum(frame + L3);
	EXPECT_BAD((size_t)n, BLUE_PARSE_IP_FRAGMENT, "offset 8");
	put16(frame + L3 + 6, 0x0000);
	fix_ip_csum(frame + L3);
	expect((size_t)n, BLUE_PARSE_BAD_ICRC, -EILSEQ, "DF is inside the ICRC");
	blue_pkt_fix_icrc(frame, (size_t)n);
	EXPECT_OK((size_t)n, "DF clear is fine");
}

Test(codec_parse, not_udp)
{
	int n = build(BLUE_OP_RC_SEND_ONLY, 5);

	frame[L3 + 9] = 6;
	fix_ip_csum(frame + L3);
	expect((size_t)n, BLUE_PARSE_NOT_UDP, -EPROTONOSUPPORT, "TCP");
}

Test(codec_parse, trunc_udp)
{
	int n = build(BLUE_OP_RC_SEND_ONLY, 5);

	put16(frame + L3 + 2, 20 + 7);
	fix_ip_csum(frame + L3);
	EXPECT_BAD((size_t)n, BLUE_PARSE_TRUNC_UDP, "7-byte UDP");
}

Test(codec_parse, bad_udp_len)
{
	int n = build(BLUE_OP_RC_SEND_ONLY, 5);

	put16(frame + L4 + 4, (unsigned int)n - L4 + 4);
	EXPECT_BAD((size_t)n, BLUE_PARSE_BAD_UDP_LEN, "UDP longer than IP payload");
	put16(frame + L4 + 4, (unsigned int)n - L4 - 4);
	EXPECT_BAD((size_t)n, BLUE_PARSE_BAD_UDP_LEN, "UDP shorter than IP payload");
}

Test(codec_parse, not_rocev2_port)
{
	int n = build(BLUE_OP_RC_SEND_ONLY, 5);

	put16(frame + L4 + 2, 4792);
	expect((size_t)n, BLUE_PARSE_NOT_ROCEV2_PORT, -EPROTONOSUPPORT, "port 4792");
}

Test(codec_parse, trunc_bth)
{
	build(BLUE_OP_RC_SEND_ONLY, 5);
	set_ib_len(11);
	EXPECT_BAD(L4 + 8 + 11, BLUE_PARSE_TRUNC_BTH, "11-byte BTH");
	set_ib_len(0);
	EXPECT_BAD(L4 + 8, BLUE_PARSE_TRUNC_BTH, "no BTH");
}

Test(codec_parse, bad_tver)
{
	int n = build(BLUE_OP_RC_SEND_ONLY, 5);

	frame[BTH + 1] |= 1;
	blue_pkt_fix_icrc(frame, (size_t)n);
	EXPECT_BAD((size_t)n, BLUE_PARSE_BAD_TVER, "TVer 1");
}

Test(codec_parse, bad_opcode)
{
	static const uint8_t ops[] = { 0x15, 0x2c, 0x40, 0x63, 0x80, 0xff };
	unsigned int i;
	int n;

	for (i = 0; i < sizeof(ops); i++) {
		n = build(BLUE_OP_RC_SEND_ONLY, 8);
		frame[BTH] = ops[i];
		blue_pkt_fix_icrc(frame, (size_t)n);
		EXPECT_BAD((size_t)n, BLUE_PARSE_BAD_OPCODE, "reserved opcode");
	}
}

Test(codec_parse, trunc_ext)
{
	build(BLUE_OP_RC_WRITE_ONLY, 0);		/* BTH + RETH (16) */
	set_ib_len(12 + 15);
	EXPECT_BAD(L4 + 8 + 12 + 15, BLUE_PARSE_TRUNC_EXT, "RETH cut");
	build(BLUE_OP_RC_ATOMIC_ACKNOWLEDGE, 0);	/* BTH + AETH + AtomicAckETH */
	set_ib_len(12 + 4 + 4);
	EXPECT_BAD(L4 + 8 + 20, BLUE_PARSE_TRUNC_EXT, "AtomicAckETH cut");
	build(BLUE_OP_CNP, 0);
	set_ib_len(12 + 8);
	EXPECT_BAD(L4 + 8 + 20, BLUE_PARSE_TRUNC_EXT, "CNP reserved bytes cut");
}

Test(codec_parse, trunc_icrc)
{
	build(BLUE_OP_RC_ACKNOWLEDGE, 0);
	set_ib_len(12 + 4 + 2);
	EXPECT_BAD(L4 + 8 + 18, BLUE_PARSE_TRUNC_ICRC, "2 of 4 ICRC bytes");
	set_ib_len(12 + 4);
	EXPECT_BAD(L4 + 8 + 16, BLUE_PARSE_TRUNC_ICRC, "no ICRC");
}

Test(codec_parse, bad_pad)
{
	int n = build(BLUE_OP_RC_ACKNOWLEDGE, 0);

	frame[BTH + 1] |= 1 << 4;
	blue_pkt_fix_icrc(frame, (size_t)n);
	EXPECT_BAD((size_t)n, BLUE_PARSE_BAD_PAD, "pad on an ACK");

	n = build(BLUE_OP_RC_SEND_ONLY, 0);
	frame[BTH + 1] |= 2 << 4;
	blue_pkt_fix_icrc(frame, (size_t)n);
	EXPECT_BAD((size_t)n, BLUE_PARSE_BAD_PAD, "pad 2 with no data");
}

Test(codec_parse, bad_payload_len)
{
	int n = build(BLUE_OP_RC_ACKNOWLEDGE, 0);

	/* four more bytes before the ICRC: data on a header-only opcode */
	set_ib_len(12 + 4 + 4 + 4);
	blue_pkt_fix_icrc(frame, (size_t)n + 4);
	EXPECT_BAD((size_t)n + 4, BLUE_PARSE_BAD_PAYLOAD_LEN, "data on an ACK");

	n = build(BLUE_OP_RC_SEND_ONLY, 5);	/* 5 + pad 3 */
	set_ib_len(12 + 8 - 1 + 4);
	blue_pkt_fix_icrc(frame, (size_t)n - 1);
	EXPECT_BAD((size_t)n - 1, BLUE_PARSE_BAD_PAYLOAD_LEN, "data not in 4-byte words");
}

Test(codec_parse, bad_icrc)
{
	int n = build(BLUE_OP_RC_SEND_ONLY, 5);
	struct blue_pkt p;

	frame[BTH + 12] ^= 0x01;	/* payload byte */
	expect((size_t)n, BLUE_PARSE_BAD_ICRC, -EILSEQ, "payload bit flip");
	cr_expect_eq(blue_pkt_verify_icrc(frame, (size_t)n), -EILSEQ);
	frame[BTH + 12] ^= 0x01;
	frame[n - 1] ^= 0x80;		/* the ICRC itself */
	expect((size_t)n, BLUE_PARSE_BAD_ICRC, -EILSEQ, "ICRC bit flip");
	frame[n - 1] ^= 0x80;
	frame[BTH + 11] ^= 0x01;	/* PSN: covered */
	expect((size_t)n, BLUE_PARSE_BAD_ICRC, -EILSEQ, "PSN bit flip");
	frame[BTH + 11] ^= 0x01;
	cr_expect_eq(blue_pkt_parse(frame, (size_t)n, &p), 0, "restored");
}

/* What a router or switch may rewrite is outside the ICRC (annex A17.3.3). */
Test(codec_parse, masked_fields_may_change)
{
	int n = build(BLUE_OP_RC_SEND_ONLY, 5);
	struct blue_pkt p;

	frame[L3 + 1] = 0x03;		/* ECN CE marked on the way */
	frame[L3 + 8] = 7;		/* TTL decremented */
	fix_ip_csum(frame + L3);
	put16(frame + L4 + 6, 0x1234);	/* a UDP checksum added */
	frame[BTH + 4] |= 0xc0;		/* FECN + BECN */
	cr_assert_eq(blue_pkt_parse(frame, (size_t)n, &p), 0, "%s",
		     blue_parse_err_name(p.parse_err));
	cr_expect_eq(p.tos, 3);
	cr_expect_eq(p.ttl, 7);
	cr_expect_eq(p.fecn, 1);
	cr_expect_eq(p.becn, 1);
	cr_expect_eq(p.dqpn, 0x12);
}

Test(codec_parse, ethernet_padding_allowed)
{
	int n = build(BLUE_OP_RC_ACKNOWLEDGE, 0);	/* 62 bytes */
	struct blue_pkt p;

	memset(frame + n, 0, 8);
	cr_assert_eq(blue_pkt_parse(frame, (size_t)n + 8, &p), 0, "%s",
		     blue_parse_err_name(p.parse_err));
	cr_expect_eq(p.frame_len, n);
	cr_expect_eq(blue_pkt_verify_icrc(frame, (size_t)n + 8), 0);
}

Test(codec_parse, vlan_tag)
{
	uint8_t tagged[256];
	struct blue_pkt p;
	int n = build(BLUE_OP_RC_SEND_ONLY, 5);

	memcpy(tagged, frame, 12);
	tagged[12] = 0x81;
	tagged[13] = 0x00;
	tagged[14] = 0x60;	/* PCP 3, VID 5 */
	tagged[15] = 0x05;
	memcpy(tagged + 16, frame + 12, (size_t)n - 12);
	cr_assert_eq(blue_pkt_parse(tagged, (size_t)n + 4, &p), 0);
	cr_expect_eq(p.has_vlan, 1);
	cr_expect_eq(p.vlan_tci, 0x6005);
	cr_expect_eq(p.l3_off, 18);
}

Test(codec_parse, names)
{
	unsigned int i, j;

	for (i = 0; i < BLUE_PARSE_ERR_MAX; i++) {
		const char *a = blue_parse_err_name((enum blue_parse_err)i);

		cr_assert_not_null(a);
		cr_expect_str_neq(a, "unknown", "reason %u has no name", i);
		for (j = 0; j < i; j++)
			cr_expect_str_neq(a, blue_parse_err_name((enum blue_parse_err)j),
					  "reasons %u and %u share a name", i, j);
	}
	cr_expect_str_eq(blue_parse_err_name(BLUE_PARSE_BAD_ICRC), "bad_icrc");
	cr_expect_str_eq(blue_parse_err_name(BLUE_PARSE_ERR_MAX), "unknown");
	cr_expect_str_eq(blue_parse_err_name((enum blue_parse_err)-1), "unknown");
}
