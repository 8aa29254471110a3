// SPDX-License-Identifier: MIT
/*
 * Golden input: every frame Linux Soft-RoCE put on the wire (shared/vectors/rxe) must
 * parse, carry a correct ICRC (ours and the zlib reference agree with the wire), and
 * rebuild from its parsed fields into the same bytes. A few decoded fields are pinned
 * to what `tshark -r FILE -V` shows for those frames.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "runtime/codec.h"
#include "tests/unit/icrc_ref.h"
#include "tests/lib/pcap_read.h"

/* Frame counts and opcode sets from the vectors' README (and tshark). */
static const struct {
	const char	*file;
	size_t		frames;
	uint8_t		ops[5];		/* 0xff ends the list */
} files[] = {
	{ "pp-64.pcap",			80,	{ 0x04, 0x11, 0xff } },
	{ "pp-4096.pcap",		108,	{ 0x00, 0x01, 0x02, 0x11, 0xff } },
	{ "ib_send_bw-2048.pcap",	60,	{ 0x00, 0x02, 0x11, 0xff } },
	{ "ib_write_bw-4096.pcap",	100,	{ 0x06, 0x07, 0x08, 0x11, 0xff } },
	{ "ib_write_lat-64.pcap",	42,	{ 0x0a, 0x11, 0xff } },
	{ "ib_read_bw-4096.pcap",	100,	{ 0x0c, 0x0d, 0x0e, 0x0f, 0xff } },
	{ "ib_read_lat-64.pcap",	20,	{ 0x0c, 0x10, 0xff } },
	{ "ib_atomic_bw-8.pcap",	40,	{ 0x14, 0x12, 0xff } },
	{ "ib_atomic_lat-8.pcap",	20,	{ 0x14, 0x12, 0xff } },
};
#define N_FILES (sizeof(files) / sizeof(files[0]))

static void open_vector(const char *name, struct tpcap *pc)
{
	char dir[3 * PATH_MAX + 64], path[4 * PATH_MAX];
	int err;

	if (tpcap_vectors_dir(dir, sizeof(dir)))
		cr_skip_test("rxe vectors not found; looked in: %s (set BLUE_VECTORS)", dir);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	err = tpcap_open(path, pc);
	cr_assert_eq(err, 0, "%s: cannot read (%d)", path, err);
	cr_assert_eq(pc->linktype, 1, "%s: not Ethernet", path);
}

static void check_file(unsigned int fi)
{
	static uint8_t out[10000];
	int seen[256] = { 0 };
	struct blue_pkt p;
	struct tpcap pc;
	size_t i;
	int k, err, n;

	open_vector(files[fi].file, &pc);
	cr_expect_eq(pc.n, files[fi].frames, "%s: %zu frames, README says %zu",
		     files[fi].file, pc.n, files[fi].frames);
	for (i = 0; i < pc.n; i++) {
		const struct tpcap_rec *r = &pc.recs[i];

		cr_assert_eq(r->len, r->orig_len, "%s #%zu: capture is cut", files[fi].file, i);
		err = blue_pkt_parse(r->data, r->len, &p);
		cr_assert_eq(err, 0, "%s #%zu: parse %d (%s)", files[fi].file, i + 1, err,
			     blue_parse_err_name(p.parse_err));
		cr_assert_eq(blue_pkt_verify_icrc(r->data, r->len), 0);
		cr_assert_eq(ref_icrc(r->data + p.l3_off, p.frame_len - p.l3_off - 4), p.icrc,
			     "%s #%zu: zlib reference disagrees", files[fi].file, i + 1);
		seen[p.opcode] = 1;

		/* rebuild from the fields alone: rxe's frame, byte for byte */
		n = blue_pkt_build(&p, out, sizeof(out));
		cr_assert_eq(n, (int)r->len, "%s #%zu: rebuilt %d bytes, wire has %u",
			     files[fi].file, i + 1, n, r->len);
		for (k = 0; k < n; k++)
			cr_assert_eq(out[k], r->data[k], "%s #%zu: byte %d is 0x%02x, rxe sent 0x%02x",
				     files[fi].file, i + 1, k, out[k], r->data[k]);
	}
	for (k = 0; files[fi].ops[k] != 0xff; k++) {
		cr_expect(seen[files[fi].ops[k]], "%s: no opcode 0x%02x", files[fi].file,
			  files[fi].ops[k]);
		seen[files[fi].ops[k]] = 0;
	}
	for (k = 0; k < 256; k++)
		cr_expect(!seen[k], "%s: unexpected opcode 0x%02x", files[fi].file, k);
	tpcap_close(&pc);
}

Test(codec_rxe_vectors, pp_64) { check_file(0); }
Test(codec_rxe_vectors, pp_4096) { check_file(1); }
Test(codec_rxe_vectors, send_bw_2048) { check_file(2); }
Test(codec_rxe_vectors, write_bw_4096) { check_file(3); }
Test(codec_rxe_vectors, write_lat_64) { check_file(4); }
Test(codec_rxe_vectors, read_bw_4096) { check_file(5); }
Test(codec_rxe_vectors, read_lat_64) { check_file(6); }
Test(codec_rxe_vectors, atomic_bw_8) { check_file(7); }
Test(codec_rxe_vectors, atomic_lat_8) { check_file(8); }

static void parse_frame(const char *file, size_t idx, struct tpcap *pc, struct blue_pkt *p)
{
	open_vector(file, pc);
	cr_assert_gt(pc->n, idx);
	cr_assert_eq(blue_pkt_parse(pc->recs[idx].data, pc->recs[idx].len, p), 0);
}

/*
 * Expected values below were read from `tshark -r FILE -V`. tshark prints the ICRC as
 * the four wire bytes big-endian; the CRC value is their little-endian reading.
 */
Test(codec_rxe_tshark, write_lat_first_write_only)
{
	struct blue_pkt p;
	struct tpcap pc;

	parse_frame("ib_write_lat-64.pcap", 0, &pc, &p);
	cr_expect_eq(p.frame_len, 138);
	cr_expect_eq(memcmp(p.dst_mac, "\x52\x54\x00\x77\x01\x0b", 6), 0);
	cr_expect_eq(memcmp(p.src_mac, "\x52\x54\x00\x77\x01\x0a", 6), 0);
	cr_expect_eq(memcmp(&p.saddr, "\x0a\x4d\x01\x0a", 4), 0, "10.77.1.10");
	cr_expect_eq(memcmp(&p.daddr, "\x0a\x4d\x01\x0b", 4), 0, "10.77.1.11");
	cr_expect_eq(p.ip_id, 0x62a3);
	cr_expect_eq(p.ip_df, 1);
	cr_expect_eq(p.ttl, 64);
	cr_expect_eq(p.tos, 0);
	cr_expect_eq(p.sport, 49441);
	cr_expect_eq(p.opcode, BLUE_OP_RC_WRITE_ONLY);
	cr_expect_eq(p.se, 0);
	cr_expect_eq(p.mig, 0);
	cr_expect_eq(p.pad, 0);
	cr_expect_eq(p.pkey, 65535);
	cr_expect_eq(p.dqpn, 0x11);
	cr_expect_eq(p.ackreq, 1);
	cr_expect_eq(p.psn, 11594458);
	cr_expect_eq(p.reth.va, 0x0000563b7f430000ull);
	cr_expect_eq(p.reth.rkey, 0x267);
	cr_expect_eq(p.reth.len, 64);
	cr_expect_eq(p.payload_len, 64);
	cr_expect_eq(p.icrc, __builtin_bswap32(0x23ca3e74));
	tpcap_close(&pc);
}

Test(codec_rxe_tshark, write_lat_first_ack)
{
	struct blue_pkt p;
	struct tpcap pc;

	parse_frame("ib_write_lat-64.pcap", 1, &pc, &p);
	cr_expect_eq(p.frame_len, 62);
	cr_expect_eq(p.ip_id, 0x7c11);
	cr_expect_eq(p.opcode, BLUE_OP_RC_ACKNOWLEDGE);
	cr_expect_eq(p.ackreq, 0);
	cr_expect_eq(p.psn, 11594458);
	cr_expect_eq(p.aeth.syndrome, 31, "ACK, credit code 31 (no flow control)");
	cr_expect_eq(p.aeth.msn, 1);
	cr_expect_eq(p.icrc, __builtin_bswap32(0x6061ffb5));
	tpcap_close(&pc);
}

Test(codec_rxe_tshark, atomic_fetch_add_and_ack)
{
	struct blue_pkt p;
	struct tpcap pc;

	parse_frame("ib_atomic_lat-8.pcap", 0, &pc, &p);
	cr_expect_eq(p.frame_len, 86);
	cr_expect_eq(p.opcode, BLUE_OP_RC_FETCH_ADD);
	cr_expect_eq(p.psn, 15985505);
	cr_expect_eq(p.ackreq, 1);
	cr_expect_eq(p.atmeth.va, 0x0000556114a96000ull);
	cr_expect_eq(p.atmeth.rkey, 0x283);
	cr_expect_eq(p.atmeth.swap_add, 1);
	cr_expect_eq(p.atmeth.compare, 0);
	cr_expect_eq(p.icrc, __builtin_bswap32(0xead6b07a));
	tpcap_close(&pc);

	parse_frame("ib_atomic_lat-8.pcap", 1, &pc, &p);
	cr_expect_eq(p.frame_len, 70);
	cr_expect_eq(p.opcode, BLUE_OP_RC_ATOMIC_ACKNOWLEDGE);
	cr_expect_eq(p.psn, 15985505);
	cr_expect_eq(p.aeth.syndrome, 31);
	cr_expect_eq(p.aeth.msn, 1);
	cr_expect_eq(p.atmack.orig, 10871832084401530881ull);
	cr_expect_eq(p.icrc, __builtin_bswap32(0x8ec0bf25));
	tpcap_close(&pc);
}

Test(codec_rxe_tshark, read_request_and_response)
{
	struct blue_pkt p;
	struct tpcap pc;

	parse_frame("ib_read_bw-4096.pcap", 0, &pc, &p);
	cr_expect_eq(p.frame_len, 74);
	cr_expect_eq(p.ip_id, 0xf2f3);
	cr_expect_eq(p.opcode, BLUE_OP_RC_READ_REQUEST);
	cr_expect_eq(p.psn, 3576193);
	cr_expect_eq(p.reth.va, 0x00005637610e7000ull);
	cr_expect_eq(p.reth.rkey, 0x222);
	cr_expect_eq(p.reth.len, 4096);
	cr_expect_eq(p.icrc, __builtin_bswap32(0x5b3e8add));
	tpcap_close(&pc);

	parse_frame("ib_read_lat-64.pcap", 1, &pc, &p);
	cr_expect_eq(p.frame_len, 126);
	cr_expect_eq(memcmp(&p.saddr, "\x0a\x4d\x01\x0a", 4), 0, "10.77.1.10");
	cr_expect_eq(p.opcode, BLUE_OP_RC_READ_RESPONSE_ONLY);
	cr_expect_eq(p.psn, 12473686);
	cr_expect_eq(p.aeth.syndrome, 31);
	cr_expect_eq(p.aeth.msn, 1);
	cr_expect_eq(p.payload_len, 64);
	cr_expect_eq(p.icrc, __builtin_bswap32(0x7724a93d));
	tpcap_close(&pc);
}

Test(codec_rxe_tshark, multi_packet_messages)
{
	struct blue_pkt p;
	struct tpcap pc;

	parse_frame("ib_write_bw-4096.pcap", 0, &pc, &p);
	cr_expect_eq(p.frame_len, 1098);
	cr_expect_eq(p.opcode, BLUE_OP_RC_WRITE_FIRST);
	cr_expect_eq(p.ackreq, 0);
	cr_expect_eq(p.psn, 64374);
	cr_expect_eq(p.reth.va, 0x000055b3994d4000ull);
	cr_expect_eq(p.reth.rkey, 0x215);
	cr_expect_eq(p.reth.len, 4096);
	cr_expect_eq(p.payload_len, 1024, "path MTU 1024");
	cr_expect_eq(p.icrc, __builtin_bswap32(0xc0a6c37f));
	tpcap_close(&pc);

	parse_frame("pp-4096.pcap", 3, &pc, &p);
	cr_expect_eq(p.frame_len, 1082);
	cr_expect_eq(p.ip_id, 0x4311);
	cr_expect_eq(p.opcode, BLUE_OP_RC_SEND_LAST);
	cr_expect_eq(p.ackreq, 1);
	cr_expect_eq(p.psn, 5632047);
	cr_expect_eq(p.payload_len, 1024);
	cr_expect_eq(p.icrc, __builtin_bswap32(0x73523ef3));
	tpcap_close(&pc);
}
