// SPDX-License-Identifier: MIT
/*
 * Codec: the opcode table against IBA, header placement byte by byte, build -> parse
 * round trips for every opcode, build errors, and the UDP source-port hash.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/codec.h"

#define L3	BLUE_ETH_HLEN
#define L4	(L3 + BLUE_IPV4_MIN_HLEN)
#define BTH	(L4 + BLUE_UDP_HLEN)
#define EXT	(BTH + 12)

/*
 * IBA vol. 1 table 36 and 9.3, written out here independently of wire.h. Letters name
 * the extended headers in wire order: D DETH, R RETH, T AtomicETH, A AETH,
 * K AtomicAckETH, I ImmDt, V IETH, C the CNP's 16 reserved bytes (annex A17.9.3),
 * F the FETH of IBA 1.5's FLUSH (before the RETH, where rxe puts it).
 */
static const struct {
	uint8_t		op;
	const char	*hdrs;
	int		payload;
} iba[] = {
	{ 0x00, "", 1 },   { 0x01, "", 1 },   { 0x02, "", 1 },   { 0x03, "I", 1 },
	{ 0x04, "", 1 },   { 0x05, "I", 1 },  { 0x06, "R", 1 },  { 0x07, "", 1 },
	{ 0x08, "", 1 },   { 0x09, "I", 1 },  { 0x0a, "R", 1 },  { 0x0b, "RI", 1 },
	{ 0x0c, "R", 0 },  { 0x0d, "A", 1 },  { 0x0e, "", 1 },   { 0x0f, "A", 1 },
	{ 0x10, "A", 1 },  { 0x11, "A", 0 },  { 0x12, "AK", 0 }, { 0x13, "T", 0 },
	{ 0x14, "T", 0 },  { 0x16, "V", 1 },  { 0x17, "V", 1 },
	{ 0x1c, "FR", 0 }, { 0x1d, "R", 1 },	/* IBA 1.5: FLUSH, ATOMIC WRITE */
	{ 0x20, "", 1 },   { 0x21, "", 1 },   { 0x22, "", 1 },   { 0x23, "I", 1 },
	{ 0x24, "", 1 },   { 0x25, "I", 1 },  { 0x26, "R", 1 },  { 0x27, "", 1 },
	{ 0x28, "", 1 },   { 0x29, "I", 1 },  { 0x2a, "R", 1 },  { 0x2b, "RI", 1 },
	{ 0x64, "D", 1 },  { 0x65, "DI", 1 },
	{ 0x81, "C", 0 },
};
#define N_OPS (sizeof(iba) / sizeof(iba[0]))

static unsigned int hdr_size(char h)
{
	switch (h) {
	case 'D': return 8;
	case 'R': return 16;
	case 'T': return 28;
	case 'A': return 4;
	case 'K': return 8;
	case 'I': return 4;
	case 'V': return 4;
	case 'C': return 16;
	case 'F': return 4;
	}
	return 1000;
}

/* Deterministic xorshift so failures reproduce. */
static uint64_t rng_state = 0x243f6a8885a308d3ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Every field set to something non-zero and distinctive, in range. */
static void fill_random(struct blue_pkt *p, uint8_t op)
{
	int i;

	blue_pkt_init(p, op);
	for (i = 0; i < 6; i++) {
		p->dst_mac[i] = (uint8_t)rnd();
		p->src_mac[i] = (uint8_t)rnd();
	}
	p->saddr = (uint32_t)rnd();
	p->daddr = (uint32_t)rnd();
	p->tos = (uint8_t)rnd();
	p->ttl = (uint8_t)rnd();
	p->ip_id = (uint16_t)rnd();
	p->ip_df = rnd() & 1;
	p->sport = (uint16_t)rnd();
	p->se = rnd() & 1;
	p->mig = rnd() & 1;
	p->pkey = (uint16_t)rnd();
	p->fecn = rnd() & 1;
	p->becn = rnd() & 1;
	p->dqpn = (uint32_t)rnd() & BLUE_QPN_MASK;
	p->ackreq = rnd() & 1;
	p->psn = (uint32_t)rnd() & BLUE_PSN_MASK;
	p->reth.va = rnd();
	p->reth.rkey = (uint32_t)rnd();
	p->reth.len = (uint32_t)rnd();
	p->aeth.syndrome = (uint8_t)rnd();
	p->aeth.msn = (uint32_t)rnd() & BLUE_PSN_MASK;
	p->atmeth.va = rnd();
	p->atmeth.rkey = (uint32_t)rnd();
	p->atmeth.swap_add = rnd();
	p->atmeth.compare = rnd();
	p->atmack.orig = rnd();
	p->imm = (uint32_t)rnd();
	p->ieth_rkey = (uint32_t)rnd();
	p->deth.qkey = (uint32_t)rnd();
	p->deth.sqpn = (uint32_t)rnd() & BLUE_QPN_MASK;
	p->feth = (uint32_t)rnd();
}

Test(codec_table, opcode_set_matches_iba)
{
	unsigned int op, i, found;

	for (op = 0; op < 256; op++) {
		found = 0;
		for (i = 0; i < N_OPS; i++)
			if (iba[i].op == op)
				found = 1;
		cr_expect_eq(!!blue_opcode_flags((uint8_t)op), found,
			     "opcode 0x%02x: wire.h valid=%d, IBA table says %d", op,
			     !!blue_opcode_flags((uint8_t)op), found);
	}
}

Test(codec_table, header_lengths_match_iba)
{
	unsigned int i, want;
	const char *h;

	for (i = 0; i < N_OPS; i++) {
		__u32 fl = blue_opcode_flags(iba[i].op);

		want = 12;
		for (h = iba[i].hdrs; *h; h++)
			want += hdr_size(*h);
		cr_expect_eq(blue_opcode_hdr_len(fl), want, "opcode 0x%02x: hdr_len %u, want %u",
			     iba[i].op, blue_opcode_hdr_len(fl), want);
		cr_expect_eq(!!(fl & BLUE_OPF_PAYLOAD), iba[i].payload,
			     "opcode 0x%02x: payload flag", iba[i].op);
	}
}

static uint64_t be_at(const uint8_t *b, unsigned int n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | *b++;
	return v;
}

/* Each extended header lands at the offset IBA's order gives, with each field's bytes. */
Test(codec_build, headers_in_iba_order)
{
	uint8_t buf[256];
	unsigned int i, off;
	struct blue_pkt p;
	const char *h;
	int n;

	for (i = 0; i < N_OPS; i++) {
		fill_random(&p, iba[i].op);
		n = blue_pkt_build(&p, buf, sizeof(buf));
		cr_assert_gt(n, 0, "build 0x%02x: %d", iba[i].op, n);
		cr_expect_eq(buf[BTH], iba[i].op);
		off = EXT;
		for (h = iba[i].hdrs; *h; h++) {
			const uint8_t *b = buf + off;

			switch (*h) {
			case 'D':
				cr_expect_eq(be_at(b, 4), p.deth.qkey, "0x%02x qkey", p.opcode);
				cr_expect_eq(be_at(b + 4, 4), p.deth.sqpn, "0x%02x sqpn", p.opcode);
				break;
			case 'R':
				cr_expect_eq(be_at(b, 8), p.reth.va, "0x%02x reth va", p.opcode);
				cr_expect_eq(be_at(b + 8, 4), p.reth.rkey, "0x%02x rkey", p.opcode);
				cr_expect_eq(be_at(b + 12, 4), p.reth.len, "0x%02x len", p.opcode);
				break;
			case 'T':
				cr_expect_eq(be_at(b, 8), p.atmeth.va);
				cr_expect_eq(be_at(b + 8, 4), p.atmeth.rkey);
				cr_expect_eq(be_at(b + 12, 8), p.atmeth.swap_add);
				cr_expect_eq(be_at(b + 20, 8), p.atmeth.compare);
				break;
			case 'A':
				cr_expect_eq(b[0], p.aeth.syndrome, "0x%02x syndrome", p.opcode);
				cr_expect_eq(be_at(b + 1, 3), p.aeth.msn, "0x%02x msn", p.opcode);
				break;
			case 'K':
				cr_expect_eq(be_at(b, 8), p.atmack.orig);
				break;
			case 'I':
				cr_expect_eq(be_at(b, 4), p.imm, "0x%02x imm", p.opcode);
				break;
			case 'V':
				cr_expect_eq(be_at(b, 4), p.ieth_rkey, "0x%02x ieth", p.opcode);
				break;
			case 'F':
				cr_expect_eq(be_at(b, 4), p.feth, "0x%02x feth", p.opcode);
				break;
			case 'C':
				for (unsigned int k = 0; k < 16; k++)
					cr_expect_eq(b[k], 0, "CNP reserved byte %u", k);
				break;
			}
			off += hdr_size(*h);
		}
		/* header-only opcodes: ICRC follows at once */
		if (!iba[i].payload)
			cr_expect_eq((unsigned int)n, off + 4, "0x%02x frame len %d", p.opcode, n);
	}
}

/* The fixed part: Ethernet, IPv4 (checksum verified independently), UDP, BTH bits. */
Test(codec_build, fixed_headers_bytes)
{
	static const uint8_t data[5] = { 1, 2, 3, 4, 5 };
	uint8_t buf[256];
	struct blue_pkt p;
	uint32_t sum = 0;
	int n, i;

	blue_pkt_init(&p, BLUE_OP_RC_SEND_ONLY_IMM);
	memcpy(p.dst_mac, "\x02\x00\x00\x00\x00\x01", 6);
	memcpy(p.src_mac, "\x02\x00\x00\x00\x00\x02", 6);
	p.saddr = htonl(0x0ac90101);
	p.daddr = htonl(0x0ac90102);
	p.tos = 0x02;
	p.ip_id = 0x1234;
	p.sport = 0xc123;
	p.se = 1;
	p.dqpn = 0xabcdef;
	p.psn = 0x123456;
	p.ackreq = 1;
	p.fecn = 1;
	p.imm = 0xdeadbeef;
	p.payload = data;
	p.payload_len = sizeof(data);
	n = blue_pkt_build(&p, buf, sizeof(buf));
	/* 14 + 20 + 8 + 12 + 4 (ImmDt) + 5 + 3 pad + 4 ICRC */
	cr_assert_eq(n, 70);
	cr_expect_eq(memcmp(buf, p.dst_mac, 6), 0);
	cr_expect_eq(memcmp(buf + 6, p.src_mac, 6), 0);
	cr_expect_eq(be_at(buf + 12, 2), 0x0800);
	cr_expect_eq(buf[L3], 0x45);
	cr_expect_eq(buf[L3 + 1], 0x02);
	cr_expect_eq(be_at(buf + L3 + 2, 2), 70 - 14);
	cr_expect_eq(be_at(buf + L3 + 4, 2), 0x1234);
	cr_expect_eq(be_at(buf + L3 + 6, 2), 0x4000, "DF, no fragment");
	cr_expect_eq(buf[L3 + 8], 64);
	cr_expect_eq(buf[L3 + 9], 17);
	for (i = 0; i < 20; i += 2)
		sum += (uint32_t)be_at(buf + L3 + i, 2);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	cr_expect_eq(sum, 0xffff, "IPv4 header checksum");
	cr_expect_eq(be_at(buf + L4, 2), 0xc123);
	cr_expect_eq(be_at(buf + L4 + 2, 2), 4791);
	cr_expect_eq(be_at(buf + L4 + 4, 2), 70 - 34);
	cr_expect_eq(be_at(buf + L4 + 6, 2), 0, "UDP checksum 0, as rxe");
	cr_expect_eq(buf[BTH + 1], 0x80 | 3 << 4, "SE, pad 3, TVer 0");
	cr_expect_eq(be_at(buf + BTH + 2, 2), 0xffff);
	cr_expect_eq(be_at(buf + BTH + 4, 4), 0x80abcdef, "FECN | dqpn");
	cr_expect_eq(be_at(buf + BTH + 8, 4), 0x80123456, "AckReq | psn");
	cr_expect_eq(be_at(buf + EXT, 4), 0xdeadbeef);
	cr_expect_eq(memcmp(buf + EXT + 4, data, 5), 0);
	cr_expect_eq(buf[EXT + 9] | buf[EXT + 10] | buf[EXT + 11], 0, "pad bytes are zero");
}

Test(codec_build, cnp)
{
	uint8_t buf[128];
	struct blue_pkt p, q;
	int n;

	blue_pkt_init(&p, BLUE_OP_CNP);
	cr_expect_eq(p.becn, 1, "blue_pkt_init sets BECN on a CNP");
	p.dqpn = 0x000123;
	n = blue_pkt_build(&p, buf, sizeof(buf));
	cr_assert_eq(n, 14 + 20 + 8 + 12 + 16 + 4);
	cr_expect_eq(buf[BTH], 0x81);
	cr_expect_eq(buf[BTH + 4], 0x40, "BECN set, FECN clear");
	cr_expect_eq(blue_pkt_parse(buf, (size_t)n, &q), 0);
	cr_expect_eq(q.becn, 1);
	cr_expect_eq(q.payload_len, 0);
	cr_expect_eq(q.dqpn, 0x123);
}

static void expect_same(const struct blue_pkt *w, const struct blue_pkt *g, const char *what)
{
	__u32 fl = blue_opcode_flags(w->opcode);

#define F(f) cr_expect_eq(g->f, w->f, "%s: " #f " got 0x%llx want 0x%llx", what, \
			  (unsigned long long)g->f, (unsigned long long)w->f)
	cr_expect_eq(memcmp(g->dst_mac, w->dst_mac, 6), 0, "%s: dst_mac", what);
	cr_expect_eq(memcmp(g->src_mac, w->src_mac, 6), 0, "%s: src_mac", what);
	F(has_vlan); F(vlan_tci); F(saddr); F(daddr); F(tos); F(ttl); F(ip_id); F(ip_df);
	F(sport); F(opcode); F(se); F(mig); F(tver); F(pkey); F(fecn); F(becn);
	F(dqpn); F(ackreq); F(psn); F(payload_len);
	/* absent headers must read back as zero */
	if (fl & BLUE_OPF_RETH) {
		F(reth.va); F(reth.rkey); F(reth.len);
	} else {
		cr_expect_eq(g->reth.va | g->reth.rkey | g->reth.len, 0, "%s: no RETH", what);
	}
	if (fl & BLUE_OPF_AETH) {
		F(aeth.syndrome); F(aeth.msn);
	} else {
		cr_expect_eq(g->aeth.syndrome | g->aeth.msn, 0, "%s: no AETH", what);
	}
	if (fl & BLUE_OPF_ATMETH) {
		F(atmeth.va); F(atmeth.rkey); F(atmeth.swap_add); F(atmeth.compare);
	} else {
		cr_expect_eq(g->atmeth.va | g->atmeth.swap_add | g->atmeth.compare |
			     g->atmeth.rkey, 0, "%s: no AtomicETH", what);
	}
	if (fl & BLUE_OPF_ATMACK)
		F(atmack.orig);
	else
		cr_expect_eq(g->atmack.orig, 0, "%s: no AtomicAckETH", what);
	if (fl & BLUE_OPF_IMMDT)
		F(imm);
	else
		cr_expect_eq(g->imm, 0, "%s: no ImmDt", what);
	if (fl & BLUE_OPF_IETH)
		F(ieth_rkey);
	else
		cr_expect_eq(g->ieth_rkey, 0, "%s: no IETH", what);
	if (fl & BLUE_OPF_DETH) {
		F(deth.qkey); F(deth.sqpn);
	} else {
		cr_expect_eq(g->deth.qkey | g->deth.sqpn, 0, "%s: no DETH", what);
	}
	if (fl & BLUE_OPF_FETH)
		F(feth);
	else
		cr_expect_eq(g->feth, 0, "%s: no FETH", what);
#undef F
}

static void round_trip(uint8_t op, uint32_t plen, int vlan)
{
	static uint8_t data[4096], buf[4096 + 256];
	struct blue_pkt p, q;
	char what[64];
	uint32_t i, pad;
	int n, err;

	for (i = 0; i < plen; i++)
		data[i] = (uint8_t)rnd();
	fill_random(&p, op);
	p.has_vlan = (uint8_t)vlan;
	p.vlan_tci = vlan ? (uint16_t)rnd() : 0;
	p.payload = data;
	p.payload_len = plen;
	snprintf(what, sizeof(what), "op 0x%02x len %u vlan %d", op, plen, vlan);

	n = blue_pkt_build(&p, buf, sizeof(buf));
	pad = (4 - (plen & 3)) & 3;
	cr_assert_eq(n, (int)(14 + (vlan ? 4 : 0) + 20 + 8 +
			      blue_opcode_hdr_len(blue_opcode_flags(op)) + plen + pad + 4),
		     "%s: build returned %d", what, n);
	cr_expect_eq(blue_pkt_verify_icrc(buf, (size_t)n), 0, "%s: ICRC", what);

	err = blue_pkt_parse(buf, (size_t)n, &q);
	cr_assert_eq(err, 0, "%s: parse %d (%s)", what, err, blue_parse_err_name(q.parse_err));
	cr_expect_eq(q.parse_err, BLUE_PARSE_OK);
	expect_same(&p, &q, what);
	cr_expect_eq(q.pad, pad, "%s: pad %u want %u", what, q.pad, pad);
	cr_expect_eq(q.frame_len, n, "%s: frame_len", what);
	cr_expect_eq(q.l3_off, vlan ? 18 : 14, "%s: l3_off", what);
	cr_expect_eq(q.bth_off, q.l3_off + 28, "%s: bth_off", what);
	if (plen) {
		cr_expect(q.payload >= buf && q.payload + plen <= buf + n,
			  "%s: payload points into the frame (no copy)", what);
		cr_expect_eq(memcmp(q.payload, data, plen), 0, "%s: payload bytes", what);
	}
	for (i = 0; i < pad; i++)
		cr_expect_eq(q.payload[plen + i], 0, "%s: pad byte %u", what, i);
}

Test(codec_roundtrip, every_opcode_every_pad)
{
	static const uint32_t lens[] = { 0, 1, 2, 3, 4, 5, 6, 7, 64, 255, 1024, 4093, 4096 };
	unsigned int i, j;

	for (i = 0; i < N_OPS; i++) {
		if (!iba[i].payload) {
			round_trip(iba[i].op, 0, 0);
			round_trip(iba[i].op, 0, 1);
			continue;
		}
		for (j = 0; j < sizeof(lens) / sizeof(lens[0]); j++)
			round_trip(iba[i].op, lens[j], (int)(j & 1));
	}
}

Test(codec_roundtrip, null_payload_sends_zeros)
{
	uint8_t buf[256];
	struct blue_pkt p, q;
	int n;
	uint32_t i;

	fill_random(&p, BLUE_OP_UD_SEND_ONLY);
	p.payload = NULL;
	p.payload_len = 37;
	n = blue_pkt_build(&p, buf, sizeof(buf));
	cr_assert_gt(n, 0);
	cr_assert_eq(blue_pkt_parse(buf, (size_t)n, &q), 0);
	cr_assert_eq(q.payload_len, 37);
	for (i = 0; i < 37; i++)
		cr_expect_eq(q.payload[i], 0);
}

Test(codec_build, errors)
{
	static const uint8_t bad_ops[] = { 0x15, 0x18, 0x1f, 0x2c, 0x2d, 0x40, 0x63, 0x66,
					   0x80, 0x82, 0xff };
	uint8_t buf[256];
	struct blue_pkt p;
	unsigned int i;
	int n;

	for (i = 0; i < sizeof(bad_ops); i++) {
		blue_pkt_init(&p, bad_ops[i]);
		cr_expect_eq(blue_pkt_build(&p, buf, sizeof(buf)), -EINVAL, "opcode 0x%02x",
			     bad_ops[i]);
	}

	blue_pkt_init(&p, BLUE_OP_RC_ACKNOWLEDGE);
	p.payload_len = 4;
	cr_expect_eq(blue_pkt_build(&p, buf, sizeof(buf)), -EINVAL, "payload on an ACK");
	blue_pkt_init(&p, BLUE_OP_RC_READ_REQUEST);
	p.payload_len = 1;
	cr_expect_eq(blue_pkt_build(&p, buf, sizeof(buf)), -EINVAL, "payload on a READ req");

	blue_pkt_init(&p, BLUE_OP_RC_SEND_ONLY);
	p.dqpn = 1u << 24;
	cr_expect_eq(blue_pkt_build(&p, buf, sizeof(buf)), -EINVAL, "25-bit QPN");
	blue_pkt_init(&p, BLUE_OP_RC_SEND_ONLY);
	p.psn = 1u << 24;
	cr_expect_eq(blue_pkt_build(&p, buf, sizeof(buf)), -EINVAL, "25-bit PSN");
	blue_pkt_init(&p, BLUE_OP_RC_ACKNOWLEDGE);
	p.aeth.msn = 1u << 24;
	cr_expect_eq(blue_pkt_build(&p, buf, sizeof(buf)), -EINVAL, "25-bit MSN");
	blue_pkt_init(&p, BLUE_OP_UD_SEND_ONLY);
	p.deth.sqpn = 1u << 24;
	cr_expect_eq(blue_pkt_build(&p, buf, sizeof(buf)), -EINVAL, "25-bit SrcQP");
	blue_pkt_init(&p, BLUE_OP_RC_SEND_ONLY);
	p.tver = 16;
	cr_expect_eq(blue_pkt_build(&p, buf, sizeof(buf)), -EINVAL, "TVer 16");
	blue_pkt_init(&p, BLUE_OP_RC_SEND_ONLY);
	p.se = 2;
	cr_expect_eq(blue_pkt_build(&p, buf, sizeof(buf)), -EINVAL, "SE 2");
	blue_pkt_init(&p, BLUE_OP_RC_SEND_ONLY);
	p.payload_len = 70000;
	cr_expect_eq(blue_pkt_build(&p, buf, sizeof(buf)), -EINVAL, "beyond IPv4 length");

	/* capacity: exact fits, one short does not and leaves nothing half-claimed */
	blue_pkt_init(&p, BLUE_OP_RC_ACKNOWLEDGE);
	n = blue_pkt_build(&p, buf, sizeof(buf));
	cr_assert_eq(n, 62);
	cr_expect_eq(blue_pkt_build(&p, buf, 62), 62);
	cr_expect_eq(blue_pkt_build(&p, buf, 61), -ENOSPC);
	cr_expect_eq(blue_pkt_build(&p, buf, 0), -ENOSPC);
	p.has_vlan = 1;
	cr_expect_eq(blue_pkt_build(&p, buf, 65), -ENOSPC);
	cr_expect_eq(blue_pkt_build(&p, buf, 66), 66);
}

Test(codec_sport, range_stable_and_spread)
{
	static uint8_t seen[0x4000];
	uint32_t a, b, distinct = 0;
	uint16_t s;

	for (a = 0; a < 64; a++) {
		for (b = 0; b < 64; b++) {
			s = blue_udp_sport(a * 0x101 + 17, b * 7 + 0x800000);
			cr_assert_geq(s, 0xc000, "port 0x%x below 0xC000", s);
			cr_assert_eq(s, blue_udp_sport(a * 0x101 + 17, b * 7 + 0x800000));
			if (!seen[s - 0xc000]++)
				distinct++;
		}
	}
	/* 4096 pairs into 16384 ports: a uniform hash leaves ~3600 distinct */
	cr_expect_gt(distinct, 3000, "only %u distinct ports for 4096 QP pairs", distinct);
	cr_expect_neq(blue_udp_sport(1, 2), blue_udp_sport(2, 1), "direction matters");
	cr_expect_neq(blue_udp_sport(5, 9), blue_udp_sport(5, 10), "dst QPN matters");
	cr_expect_neq(blue_udp_sport(5, 9), blue_udp_sport(6, 9), "src QPN matters");
	cr_expect_eq(blue_udp_sport(5, 9), blue_udp_sport(5 | 0xff000000u, 9),
		     "only the 24 QPN bits count");
}
