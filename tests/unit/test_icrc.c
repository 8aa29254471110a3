// SPDX-License-Identifier: MIT
/*
 * ICRC: blue_icrc() (ISA-L, masked header copy + in-place payload) against an independent
 * zlib reference (icrc_ref.h), over every opcode and many sizes; and the masking rule
 * itself, byte by byte: exactly TOS, TTL, IP checksum, UDP checksum and BTH byte 4 are
 * outside the CRC.
 */
#include <criterion/criterion.h>
#include <string.h>
#include <isa-l/crc.h>
#include <zlib.h>

#include "runtime/codec.h"
#include "tests/unit/icrc_ref.h"

static uint64_t seed = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return seed;
}

static int build_random(uint8_t op, uint32_t plen, uint8_t *buf, size_t cap)
{
	static uint8_t data[8192];
	struct blue_pkt p;
	uint32_t i;

	for (i = 0; i < plen; i++)
		data[i] = (uint8_t)rnd();
	blue_pkt_init(&p, op);
	p.saddr = (uint32_t)rnd();
	p.daddr = (uint32_t)rnd();
	p.tos = (uint8_t)rnd();
	p.ttl = (uint8_t)rnd();
	p.ip_id = (uint16_t)rnd();
	p.sport = (uint16_t)rnd();
	p.fecn = rnd() & 1;
	p.becn = rnd() & 1;
	p.dqpn = (uint32_t)rnd() & BLUE_QPN_MASK;
	p.psn = (uint32_t)rnd() & BLUE_PSN_MASK;
	p.reth.va = rnd();
	p.aeth.msn = 7;
	p.imm = (uint32_t)rnd();
	p.payload = data;
	p.payload_len = plen;
	return blue_pkt_build(&p, buf, cap);
}

Test(codec_icrc, matches_zlib_reference_all_opcodes)
{
	static uint8_t buf[9000];
	unsigned int op, k, n_ops = 0;

	for (op = 0; op < 256; op++) {
		__u32 fl = blue_opcode_flags((uint8_t)op);

		if (!fl)
			continue;
		n_ops++;
		for (k = 0; k < 24; k++) {
			uint32_t plen = (fl & BLUE_OPF_PAYLOAD) ? (uint32_t)(rnd() % 8193) : 0;
			int n = build_random((uint8_t)op, plen, buf, sizeof(buf));
			uint32_t wire, want;

			cr_assert_gt(n, 0, "build 0x%02x len %u", op, plen);
			want = ref_icrc(buf + 14, (size_t)n - 14 - 4);
			cr_assert_eq(blue_icrc(buf + 14, (size_t)n - 14 - 4), want,
				     "op 0x%02x len %u", op, plen);
			/* stored little-endian */
			wire = (uint32_t)buf[n - 4] | (uint32_t)buf[n - 3] << 8 |
			       (uint32_t)buf[n - 2] << 16 | (uint32_t)buf[n - 1] << 24;
			cr_assert_eq(wire, want, "op 0x%02x: wire ICRC 0x%08x, want 0x%08x",
				     op, wire, want);
		}
	}
	cr_expect_eq(n_ops, 40);	/* 38 + IBA 1.5 FLUSH and ATOMIC WRITE */
}

/* The whole rule, one byte at a time: flip each byte, see whether the CRC moves. */
Test(codec_icrc, masks_exactly_the_variant_fields)
{
	uint8_t buf[256];
	int n = build_random(BLUE_OP_RC_WRITE_ONLY_IMM, 13, buf, sizeof(buf));
	uint8_t *ip = buf + 14;
	size_t len = (size_t)n - 14 - 4, i;
	uint32_t base = blue_icrc(ip, len);

	cr_assert_gt(n, 0);
	for (i = 0; i < len; i++) {
		int masked = i == 1 || i == 8 || i == 10 || i == 11 ||	/* TOS TTL csum */
			     i == 26 || i == 27 ||			/* UDP csum */
			     i == 28 + 4;				/* BTH byte 4 */
		uint32_t c;

		ip[i] ^= 0x5a;
		c = blue_icrc(ip, len);
		ip[i] ^= 0x5a;
		if (masked)
			cr_expect_eq(c, base, "IP+%zu is masked but changed the ICRC", i);
		else
			cr_expect_neq(c, base, "IP+%zu is covered but left the ICRC alone", i);
	}
}

/* Same rule for IPv6 (traffic class, flow label, hop limit), on a hand-made header. */
Test(codec_icrc, ipv6_masking)
{
	uint8_t pkt[40 + 8 + 12 + 8];
	size_t i;
	uint32_t base;

	for (i = 0; i < sizeof(pkt); i++)
		pkt[i] = (uint8_t)rnd();
	pkt[0] = 0x60 | (pkt[0] & 0x0f);
	base = blue_icrc(pkt, sizeof(pkt));
	cr_assert_eq(base, ref_icrc(pkt, sizeof(pkt)));
	for (i = 0; i < sizeof(pkt); i++) {
		int masked = (i >= 1 && i <= 3) || i == 7 || i == 46 || i == 47 || i == 52;
		uint8_t flip = i == 0 ? 0x0f : 0xa5;	/* keep the version nibble */
		uint32_t c;

		pkt[i] ^= flip;
		c = blue_icrc(pkt, sizeof(pkt));
		cr_expect_eq(c, ref_icrc(pkt, sizeof(pkt)), "IPv6+%zu vs zlib", i);
		pkt[i] ^= flip;
		if (masked || i == 0)
			cr_expect_eq(c, base, "IPv6+%zu is masked", i);
		else
			cr_expect_neq(c, base, "IPv6+%zu is covered", i);
	}
}

/* ISA-L's crc32_gzip_refl is zlib's crc32, chaining included (what blue_icrc relies on). */
Test(codec_icrc, isal_is_zlib_crc32)
{
	uint8_t big[5000];
	size_t i;

	for (i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)rnd();
	/* "123456789" -> 0xcbf43926 is the CRC-32 check value */
	cr_expect_eq(crc32_gzip_refl(0, (const unsigned char *)"123456789", 9), 0xcbf43926u);
	for (i = 1; i < sizeof(big); i += 997) {
		uint32_t z = (uint32_t)crc32(0, big, (uInt)i);
		uint32_t s = crc32_gzip_refl(0, big, i);

		cr_expect_eq(s, z, "prefix %zu", i);
		cr_expect_eq(crc32_gzip_refl(s, big + i, sizeof(big) - i),
			     (uint32_t)crc32(0, big, sizeof(big)), "chained at %zu", i);
	}
}
