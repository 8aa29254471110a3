// SPDX-License-Identifier: MIT
/*
 * Golden input: every frame Linux Soft-RoCE put on the wire (tests/vectors/rxe) must
 * parse, carry a correct ICRC (ours and the zlib reference agree with the wire), and
 * rebuild from its parsed fields into the same bytes. Our opcode counts must be
 * tshark's (opcodes.tsv), and every field tshark decoded in the frames of fields.tsv
 * must be what we decode. Both tables were written by tshark when the vectors were
 * captured (tests/interop/capture_vectors.sh): nothing here is pinned to one capture.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/codec.h"
#include "tests/unit/icrc_ref.h"
#include "tests/lib/pcap_read.h"
#include "tests/lib/vectors.h"

#define DIR_CAP	(3 * PATH_MAX + 64)

static void vectors_dir(char *dir)
{
	if (tvec_dir(dir, DIR_CAP))
		cr_skip_test("rxe vectors not found; looked in: %s (set BLUE_VECTORS)", dir);
}

static void open_vector(const char *dir, const char *name, struct tpcap *pc)
{
	char path[4 * PATH_MAX];
	int err;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	err = tpcap_open(path, pc);
	cr_assert_eq(err, 0, "%s: cannot read: %s", path, strerror(-err));
	cr_assert_eq(pc->linktype, 1, "%s: not Ethernet", path);
}

static void check_file(const char *file)
{
	static uint8_t out[10000];
	unsigned long want[256], seen[256] = { 0 };
	char dir[DIR_CAP];
	struct blue_pkt p;
	struct tpcap pc;
	long total;
	size_t i;
	int k, err, n;

	vectors_dir(dir);
	total = tvec_opcode_counts(dir, file, want);
	cr_assert_gt(total, 0, "%s/opcodes.tsv: %s", dir,
		     total ? strerror((int)-total) : "no line for this capture");
	open_vector(dir, file, &pc);
	cr_expect_eq(pc.n, (size_t)total, "%s: %zu frames, opcodes.tsv says %ld", file, pc.n,
		     total);
	for (i = 0; i < pc.n; i++) {
		const struct tpcap_rec *r = &pc.recs[i];

		cr_assert_eq(r->len, r->orig_len, "%s #%zu: capture is cut", file, i);
		err = blue_pkt_parse(r->data, r->len, &p);
		cr_assert_eq(err, 0, "%s #%zu: parse %d (%s)", file, i + 1, err,
			     blue_parse_err_name(p.parse_err));
		cr_assert_eq(blue_pkt_verify_icrc(r->data, r->len), 0);
		cr_assert_eq(ref_icrc(r->data + p.l3_off, p.frame_len - p.l3_off - 4), p.icrc,
			     "%s #%zu: zlib reference disagrees", file, i + 1);
		seen[p.opcode]++;

		/* rebuild from the fields alone: rxe's frame, byte for byte */
		n = blue_pkt_build(&p, out, sizeof(out));
		cr_assert_eq(n, (int)r->len, "%s #%zu: rebuilt %d bytes, wire has %u", file,
			     i + 1, n, r->len);
		for (k = 0; k < n; k++)
			cr_assert_eq(out[k], r->data[k], "%s #%zu: byte %d is 0x%02x, rxe sent 0x%02x",
				     file, i + 1, k, out[k], r->data[k]);
	}
	for (k = 0; k < 256; k++)
		cr_expect_eq(seen[k], want[k], "%s: %lu frames of opcode 0x%02x, tshark saw %lu",
			     file, seen[k], k, want[k]);
	tpcap_close(&pc);
}

/*
 * One value of fields.tsv as a number: tshark prints integers in decimal or 0x-hex,
 * and booleans as 1/0 (or True/False in some versions).
 */
static unsigned long long tshark_num(const char *s, const char *what)
{
	unsigned long long v;
	char *end;

	if (!strcmp(s, "True"))
		return 1;
	if (!strcmp(s, "False"))
		return 0;
	errno = 0;
	v = strtoull(s, &end, 0);
	cr_assert(end != s && !*end && !errno, "fields.tsv: %s is \"%s\", not a number", what, s);
	return v;
}

static int is_atomic(uint8_t op)
{
	return op == BLUE_OP_RC_COMPARE_SWAP || op == BLUE_OP_RC_FETCH_ADD;
}

/* Our decoding of @p against tshark's value @v of field @name (@where names the frame). */
static void expect_field(const struct blue_pkt *p, const char *name, const char *v,
			 const char *where)
{
	uint8_t mac[6];
	uint32_t ip;

	if (!strcmp(name, "eth.dst") || !strcmp(name, "eth.src")) {
		cr_assert_eq(sscanf(v, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1], &mac[2],
				    &mac[3], &mac[4], &mac[5]), 6, "%s: %s \"%s\"", where, name, v);
		cr_expect_eq(memcmp(name[4] == 'd' ? p->dst_mac : p->src_mac, mac, 6), 0,
			     "%s: %s differs from tshark's %s", where, name, v);
		return;
	}
	if (!strcmp(name, "ip.src") || !strcmp(name, "ip.dst")) {
		cr_assert_eq(inet_pton(AF_INET, v, &ip), 1, "%s: %s \"%s\"", where, name, v);
		cr_expect_eq(name[3] == 's' ? p->saddr : p->daddr, ip,
			     "%s: %s differs from tshark's %s", where, name, v);
		return;
	}

	static const struct {
		const char	*name;
		int		atomic;	/* -1: any opcode; 0/1: only non-atomic / atomic ones */
		size_t		off;
		size_t		size;
	} map[] = {
#define F(n, a, m) { n, a, offsetof(struct blue_pkt, m), sizeof(((struct blue_pkt *)0)->m) }
		F("frame.len", -1, frame_len), F("ip.id", -1, ip_id), F("ip.flags.df", -1, ip_df),
		F("ip.ttl", -1, ttl), F("ip.dsfield", -1, tos), F("udp.srcport", -1, sport),
		F("infiniband.bth.opcode", -1, opcode), F("infiniband.bth.se", -1, se),
		F("infiniband.bth.m", -1, mig), F("infiniband.bth.padcnt", -1, pad),
		F("infiniband.bth.p_key", -1, pkey), F("infiniband.bth.destqp", -1, dqpn),
		F("infiniband.bth.a", -1, ackreq), F("infiniband.bth.psn", -1, psn),
		/* tshark names an AtomicETH's VA and R_Key as the RETH's */
		F("infiniband.reth.va", 0, reth.va), F("infiniband.reth.va", 1, atmeth.va),
		F("infiniband.reth.r_key", 0, reth.rkey), F("infiniband.reth.r_key", 1, atmeth.rkey),
		F("infiniband.reth.dmalen", -1, reth.len),
		F("infiniband.aeth.syndrome", -1, aeth.syndrome), F("infiniband.aeth.msn", -1, aeth.msn),
		F("infiniband.atomiceth.swapdt", -1, atmeth.swap_add),
		F("infiniband.atomiceth.cmpdt", -1, atmeth.compare),
		F("infiniband.atomicacketh.origremdt", -1, atmack.orig),
#undef F
	};
	unsigned long long want = tshark_num(v, name), got = 0;

	if (!strcmp(name, "infiniband.invariant.crc")) {
		/* tshark shows the four wire bytes big-endian; the CRC is their LE reading */
		cr_expect_eq(p->icrc, __builtin_bswap32((uint32_t)want),
			     "%s: ICRC 0x%08x, tshark shows %s", where, p->icrc, v);
		return;
	}
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		if (strcmp(map[i].name, name) ||
		    (map[i].atomic >= 0 && map[i].atomic != is_atomic(p->opcode)))
			continue;
		memcpy(&got, (const uint8_t *)p + map[i].off, map[i].size);	/* little endian */
		cr_expect_eq(got, want, "%s: %s is %llu (0x%llx), tshark says %s", where, name,
			     got, got, v);
		return;
	}
	cr_assert_fail("%s: fields.tsv has a column this test does not know: %s", where, name);
}

/* every frame of @file in fields.tsv, every field tshark decoded there */
static void check_fields(const char *file)
{
	char dir[DIR_CAP], where[128];
	struct tvec_table t;
	struct blue_pkt p;
	struct tpcap pc;
	int cf, cn, rows = 0, fields = 0, err;

	vectors_dir(dir);
	err = tvec_table_open(dir, "fields.tsv", &t);
	/* EPROTO: no header line, or a row with more cells than the header names */
	cr_assert_eq(err, 0, "%s/fields.tsv: cannot read: %s", dir, strerror(-err));
	cf = tvec_col(&t, "file");
	cn = tvec_col(&t, "frame");
	cr_assert(cf >= 0 && cn >= 0, "fields.tsv: no file/frame columns");
	open_vector(dir, file, &pc);
	for (int r = 0; r < t.nrow; r++) {
		unsigned long long fr;

		if (strcmp(tvec_cell(&t, r, cf), file))
			continue;
		fr = tshark_num(tvec_cell(&t, r, cn), "frame");
		snprintf(where, sizeof(where), "%s frame %llu", file, fr);
		cr_assert(fr >= 1 && fr <= pc.n, "%s: not in the capture (%zu frames)", where, pc.n);
		cr_assert_eq(blue_pkt_parse(pc.recs[fr - 1].data, pc.recs[fr - 1].len, &p), 0,
			     "%s: parse", where);
		for (int c = 0; c < t.ncol; c++) {
			const char *v = tvec_cell(&t, r, c);

			/* empty: tshark saw no such header in this frame */
			if (c == cf || c == cn || !*v)
				continue;
			expect_field(&p, t.name[c], v, where);
			fields++;
		}
		rows++;
	}
	cr_assert_gt(rows, 0, "fields.tsv: no frame of %s", file);
	cr_log_info("%s: %d fields of %d frames agree with tshark", file, fields, rows);
	tpcap_close(&pc);
	tvec_table_close(&t);
}

#define VECTOR(test, file)						\
	Test(codec_rxe_vectors, test) { check_file(file); }		\
	Test(codec_rxe_tshark, test) { check_fields(file); }

VECTOR(pp_64, "pp-64.pcap")
VECTOR(pp_4096, "pp-4096.pcap")
VECTOR(send_bw_2048, "ib_send_bw-2048.pcap")
VECTOR(write_bw_4096, "ib_write_bw-4096.pcap")
VECTOR(write_lat_64, "ib_write_lat-64.pcap")
VECTOR(read_bw_4096, "ib_read_bw-4096.pcap")
VECTOR(read_lat_64, "ib_read_lat-64.pcap")
VECTOR(atomic_bw_8, "ib_atomic_bw-8.pcap")
VECTOR(atomic_lat_8, "ib_atomic_lat-8.pcap")
