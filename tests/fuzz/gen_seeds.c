// SPDX-License-Identifier: MIT
/*
 * Writes the seed corpus of the receive-path fuzzer (tests/fuzz/corpus/rx) in the input
 * format of fuzz_rx.h: one template record per opcode, the message sequences a real
 * peer sends (SEND and WRITE FIRST/MIDDLE/LAST, READ responses and atomic ACKs for the
 * requests A has outstanding), the NAKs, some damaged frames, and the frames of the
 * rxe captures in tests/vectors/rxe as raw records readdressed to the live QPs.
 *
 * Usage: gen_seeds DIR   (run by `make fuzz-seeds`; the files are small and committed)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <blue/wire.h>
#include "tests/fuzz/fuzz_rx.h"
#include "tests/lib/pcap_read.h"
#include "tests/lib/vectors.h"

struct seed {
	uint8_t b[4096];
	size_t n;
};

static const char *g_dir;
static unsigned int g_written;

static void e8(struct seed *s, unsigned int v)
{
	if (s->n < sizeof(s->b))
		s->b[s->n++] = (uint8_t)v;
}

static void e16(struct seed *s, unsigned int v)
{
	e8(s, v & 0xff);
	e8(s, v >> 8);
}

static void e32(struct seed *s, uint32_t v)
{
	e16(s, v & 0xffff);
	e16(s, v >> 16);
}

/*
 * Configurations (fuzz_rx.h "config"):
 *  QUIET: MTU 1024, B posts 4 receives, no requests: frames go to a fresh responder.
 *  MTU512: the same with MTU 512, so three packets fit one 1600-byte receive.
 *  BUSY: A posts SEND, WRITE, READ, both atomics and a WRITE with imm, B's answers
 *        are lost and one pass has run: A's completer waits for responses.
 */
enum cfg { QUIET, MTU512, BUSY };

static void config(struct seed *s, enum cfg c)
{
	s->n = 0;
	e8(s, (c == MTU512 ? 1 : 2) | (c == BUSY ? 0x08 : 0) | 4 << 4);
	e8(s, c == BUSY ? 0x3f : 0);
	e8(s, 7 << 2 | 7 << 5);		/* no ACK timeout; retry 7, rnr 7 */
	e8(s, c == BUSY ? 1 << 4 : 0);
}

/* Payload kinds for tmpl(). */
#define PL_MTU		0x10000u
#define PL_NONE		0x20000u
#define PL_RETH		0x30000u	/* as long as the RETH says, up to one MTU */

struct tmpl {
	unsigned int opidx;	/* index into fz_opcodes */
	unsigned int mode;
	uint8_t flags;
	int8_t psnd;
	uint8_t keysel;
	int16_t off;
	uint32_t len;		/* as the key selector's length kind reads it */
	unsigned int pl;	/* PL_MTU, PL_NONE, or a byte count (u16 % (MTU + 64)) */
	uint8_t syndrome;
	uint8_t nmut;
	uint16_t mut_off;
	uint8_t mut_xor;
	int8_t adj;
	int misaddr;		/* -1: none */
};

static unsigned int opidx(uint8_t op)
{
	for (unsigned int i = 0; i < FZ_NOPS; i++)
		if (fz_opcodes[i] == op)
			return i;
	fprintf(stderr, "gen_seeds: opcode 0x%02x not in the table\n", op);
	exit(1);
}

static void tmpl_default(struct tmpl *t, uint8_t op)
{
	memset(t, 0, sizeof(*t));
	t->opidx = opidx(op);
	t->flags = FZ_F_ACKREQ;
	t->keysel = 1 << 6 | FZ_BASE_RW << 3 | FZ_KEY_RW;	/* u16 length */
	t->off = 64;
	t->len = 64;
	t->pl = 60;
	t->syndrome = 0x1f;	/* ACK, no credit count */
	t->misaddr = -1;
}

static void record(struct seed *s, const struct tmpl *t)
{
	unsigned int i, slots = t->mode == FZ_MODE_MUTATE ? FZ_MUT_MAX : FZ_MUT_SLOTS;

	e8(s, t->opidx | t->mode << 5);
	e8(s, fz_opcodes[t->opidx]);
	e8(s, t->flags);
	e32(s, (t->flags & FZ_F_FAR_PSN) ? 0x400000 : (uint8_t)t->psnd);
	e8(s, t->keysel);
	e16(s, (uint16_t)t->off);
	e32(s, t->len);
	e32(s, 0x12345678);	/* rkey for FZ_KEY_RANDOM */
	e32(s, 0);		/* base for FZ_BASE_RANDOM */
	e32(s, 0x7f00);
	if (t->pl == PL_MTU)
		e8(s, 0);
	else if (t->pl == PL_NONE)
		e8(s, 1);	/* bits 2-7 bytes: none */
	else if (t->pl == PL_RETH)
		e8(s, 3);
	else
		e8(s, 2);
	e16(s, t->pl < PL_MTU ? t->pl : 0);
	e8(s, t->syndrome);
	e8(s, 0);		/* MSN delta */
	e32(s, 0xb1e00000u | t->opidx);
	e8(s, 0x11);		/* swap/add */
	e8(s, 0x22);		/* compare */
	e8(s, t->nmut);
	e8(s, (uint8_t)t->adj);
	e8(s, t->misaddr < 0 ? 0 : (uint8_t)t->misaddr);
	e32(s, t->misaddr == FZ_MIS_SRC_IP ? 0x40 : 0x00abcdef);
	for (i = 0; i < slots; i++) {
		e16(s, t->mut_off + i * 7);
		e8(s, i < t->nmut ? t->mut_xor : 0);
	}
}

static void passes_rec(struct seed *s, unsigned int n, unsigned int post)
{
	e8(s, FZ_MODE_PASSES << 5);
	e8(s, n);
	e8(s, post);
}

static void write_seed(const struct seed *s, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", g_dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(s->b, 1, s->n, f) != s->n || fclose(f)) {
		fprintf(stderr, "gen_seeds: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	g_written++;
}

/* One record per opcode, each against the configuration its direction needs. */
static void seeds_per_opcode(void)
{
	struct seed s;
	struct tmpl t;
	char name[64];

	for (unsigned int i = 0; i < FZ_NOPS - 2; i++) {
		uint8_t op = fz_opcodes[i];
		uint32_t fl = blue_opcode_flags(op);

		config(&s, (fl & BLUE_OPF_RESPONSE) ? BUSY : QUIET);
		tmpl_default(&t, op);
		if ((fl & (BLUE_OPF_FIRST | BLUE_OPF_LAST)) == BLUE_OPF_FIRST ||
		    (fl & BLUE_OPF_MIDDLE))
			t.pl = PL_MTU;
		if (op == BLUE_OP_RC_READ_REQUEST)
			t.len = 2048;
		if (op == BLUE_OP_RC_COMPARE_SWAP || op == BLUE_OP_RC_FETCH_ADD)
			t.off = 0;
		if (op == BLUE_OP_RC_WRITE_FIRST)
			t.len = 4096;
		if (op == BLUE_OP_RC_WRITE_ONLY || op == BLUE_OP_RC_WRITE_ONLY_IMM)
			t.len = 60;
		record(&s, &t);
		snprintf(name, sizeof(name), "op-%02x", op);
		write_seed(&s, name);
	}
}

/* FIRST, MIDDLE, LAST of a SEND and of a WRITE, each at the PSN then expected. */
static void seeds_sequences(void)
{
	static const uint8_t send[3] = { 0x00, 0x01, 0x02 }, write[3] = { 0x06, 0x07, 0x09 };
	struct seed s;
	struct tmpl t;

	config(&s, MTU512);
	for (unsigned int i = 0; i < 3; i++) {
		tmpl_default(&t, send[i]);
		t.pl = i < 2 ? PL_MTU : 60;
		record(&s, &t);
	}
	write_seed(&s, "seq-send-first-middle-last");

	config(&s, MTU512);
	for (unsigned int i = 0; i < 3; i++) {
		tmpl_default(&t, write[i]);
		t.len = 2 * 512 + 60;
		t.pl = i < 2 ? PL_MTU : 60;
		record(&s, &t);
	}
	write_seed(&s, "seq-write-first-middle-last-imm");

	/* the rule breakers: MIDDLE without FIRST, LAST after a SEND FIRST of a WRITE */
	config(&s, MTU512);
	tmpl_default(&t, 0x01);
	t.pl = PL_MTU;
	record(&s, &t);
	write_seed(&s, "seq-middle-without-first");
	config(&s, MTU512);
	tmpl_default(&t, 0x00);
	t.pl = PL_MTU;
	record(&s, &t);
	tmpl_default(&t, 0x08);
	t.pl = 60;
	record(&s, &t);
	write_seed(&s, "seq-send-first-write-last");

	/* A's outstanding requests answered: SEND and WRITE acked, READ, two atomics */
	config(&s, BUSY);
	tmpl_default(&t, BLUE_OP_RC_ACKNOWLEDGE);
	t.psnd = 4;
	record(&s, &t);
	tmpl_default(&t, BLUE_OP_RC_READ_RESPONSE_FIRST);
	t.psnd = 0;
	t.pl = PL_MTU;
	record(&s, &t);
	tmpl_default(&t, BLUE_OP_RC_READ_RESPONSE_MIDDLE);
	t.pl = PL_MTU;
	record(&s, &t);
	tmpl_default(&t, BLUE_OP_RC_READ_RESPONSE_LAST);
	t.pl = 2500 - 2 * 1024;
	record(&s, &t);
	tmpl_default(&t, BLUE_OP_RC_ATOMIC_ACKNOWLEDGE);
	record(&s, &t);
	tmpl_default(&t, BLUE_OP_RC_ATOMIC_ACKNOWLEDGE);
	record(&s, &t);
	tmpl_default(&t, BLUE_OP_RC_ACKNOWLEDGE);
	record(&s, &t);
	passes_rec(&s, 4, FZ_POST_READ);
	write_seed(&s, "seq-responses-all");

	/* NAKs: sequence error (go back N), RNR, and the fatal ones */
	static const uint8_t naks[] = { 0x60, 0x61, 0x62, 0x63, 0x64, 0x21, 0x3f, 0x00 };
	for (unsigned int i = 0; i < sizeof(naks); i++) {
		char name[32];

		config(&s, BUSY);
		tmpl_default(&t, BLUE_OP_RC_ACKNOWLEDGE);
		t.syndrome = naks[i];
		t.psnd = 2;
		record(&s, &t);
		passes_rec(&s, 8, FZ_POST_NONE);
		tmpl_default(&t, BLUE_OP_RC_ACKNOWLEDGE);
		t.psnd = 10;
		record(&s, &t);
		snprintf(name, sizeof(name), "nak-%02x", naks[i]);
		write_seed(&s, name);
	}
}

/* Selective retransmission (config c3 bit 3): requests held past a hole, then drained. */
static void seeds_selective(void)
{
	static const struct {
		uint8_t op;
		int8_t psnd;
		unsigned int pl;
	} hole[] = {
		{ BLUE_OP_RC_SEND_MIDDLE, 1, PL_MTU },	/* held */
		{ BLUE_OP_RC_SEND_LAST, 2, 60 },	/* held */
		{ BLUE_OP_RC_WRITE_ONLY, 3, 60 },	/* held */
		{ BLUE_OP_RC_SEND_FIRST, 0, PL_MTU },	/* fills the hole: all four execute */
	};
	struct seed s;
	struct tmpl t;

	config(&s, MTU512);
	s.b[3] |= 8;
	for (unsigned int i = 0; i < sizeof(hole) / sizeof(hole[0]); i++) {
		tmpl_default(&t, hole[i].op);
		t.psnd = hole[i].psnd;
		t.pl = hole[i].pl;
		t.len = 60;
		record(&s, &t);
	}
	write_seed(&s, "sr-hole-then-fill");

	/* A's requests outstanding: a hole report, then the rest acknowledged */
	config(&s, BUSY);
	s.b[3] |= 8;
	tmpl_default(&t, BLUE_OP_RC_ACKNOWLEDGE);
	t.syndrome = BLUE_NAK_SR_HOLE;
	t.psnd = 1;
	record(&s, &t);
	passes_rec(&s, 4, FZ_POST_NONE);
	tmpl_default(&t, BLUE_OP_RC_ACKNOWLEDGE);
	t.psnd = 4;
	record(&s, &t);
	write_seed(&s, "sr-nak-hole");

	/* both sides' own traffic, with B's answers lost: the requester's SR recovery */
	config(&s, BUSY);
	s.b[3] |= 8;
	s.b[2] = 2 | 7 << 2 | 7 << 5;	/* 8 us ACK timeout: resends happen */
	passes_rec(&s, 15, FZ_POST_SEND);
	passes_rec(&s, 15, FZ_POST_READ);
	write_seed(&s, "sr-timeouts");
}

/* Frames that must be rejected: the hostile kinds of issue 4. */
static void seeds_hostile(void)
{
	struct seed s;
	struct tmpl t;

	config(&s, QUIET);
	tmpl_default(&t, BLUE_OP_RC_SEND_ONLY);
	t.nmut = 1;
	t.mut_off = 60;		/* in the payload: only the ICRC can tell */
	t.mut_xor = 0x01;
	record(&s, &t);
	write_seed(&s, "bad-icrc");

	config(&s, QUIET);
	tmpl_default(&t, BLUE_OP_RC_SEND_ONLY);
	t.adj = -9;
	record(&s, &t);
	write_seed(&s, "truncated");

	config(&s, QUIET);
	tmpl_default(&t, BLUE_OP_RC_WRITE_ONLY);
	t.flags |= FZ_F_PAD_LIE | FZ_F_FIX_ICRC;
	t.adj = 3;
	record(&s, &t);
	write_seed(&s, "pad-lie");

	config(&s, QUIET);
	tmpl_default(&t, BLUE_OP_RC_SEND_ONLY);
	t.flags |= FZ_F_FAR_PSN;
	record(&s, &t);
	write_seed(&s, "far-psn");

	config(&s, QUIET);
	tmpl_default(&t, BLUE_OP_RC_WRITE_ONLY);
	t.keysel = 1 << 6 | FZ_BASE_RW_END << 3 | FZ_KEY_RW;
	t.off = -30;		/* 60 bytes from 30 before the end of the MR */
	t.len = 60;
	record(&s, &t);
	write_seed(&s, "reth-beyond-mr");

	config(&s, QUIET);
	tmpl_default(&t, BLUE_OP_RC_WRITE_ONLY);
	t.keysel = 1 << 6 | FZ_BASE_RW << 3 | FZ_KEY_DEAD;
	record(&s, &t);
	write_seed(&s, "rkey-dead");

	config(&s, QUIET);
	tmpl_default(&t, BLUE_OP_RC_FETCH_ADD);
	t.off = 4;
	record(&s, &t);
	write_seed(&s, "atomic-misaligned");

	config(&s, QUIET);
	tmpl_default(&t, BLUE_OP_RC_READ_REQUEST);
	t.keysel = 1 << 6 | FZ_BASE_CANARY << 3 | FZ_KEY_RW;
	t.len = 256;
	record(&s, &t);
	write_seed(&s, "read-unregistered");

	/* right up to each MR end, and one byte past it: every bounds check's edge */
	static const struct {
		const char *name;
		uint8_t op;
		unsigned int base;
		int16_t off;
		int8_t delta;
	} edges[] = {
		{ "edge-write-rw-end", BLUE_OP_RC_WRITE_ONLY, FZ_BASE_RW_END, -40, 0 },
		{ "edge-write-rw-past", BLUE_OP_RC_WRITE_ONLY, FZ_BASE_RW_END, -40, 1 },
		{ "edge-read-ro-end", BLUE_OP_RC_READ_REQUEST, FZ_BASE_RO_END, -300, 0 },
		{ "edge-read-ro-past", BLUE_OP_RC_READ_REQUEST, FZ_BASE_RO_END, -300, 1 },
		{ "edge-read-rw-start", BLUE_OP_RC_READ_REQUEST, FZ_BASE_RW, -1, -3 },
		{ "edge-atomic-rw-end", BLUE_OP_RC_FETCH_ADD, FZ_BASE_RW_END, -8, 0 },
		{ "edge-write-first-rw-end", BLUE_OP_RC_WRITE_FIRST, FZ_BASE_RW_END, -2048, 1 },
	};
	for (unsigned int e = 0; e < sizeof(edges) / sizeof(edges[0]); e++) {
		config(&s, QUIET);
		tmpl_default(&t, edges[e].op);
		t.keysel = FZ_LEN_TO_END << 6 | edges[e].base << 3 |
			   (edges[e].base == FZ_BASE_RO_END ? FZ_KEY_RO : FZ_KEY_RW);
		t.off = edges[e].off;
		t.len = (uint32_t)(edges[e].delta + 3);	/* FZ_LEN_TO_END: low 3 bits - 3 */
		t.pl = edges[e].op == BLUE_OP_RC_WRITE_FIRST ? PL_MTU : PL_RETH;
		record(&s, &t);
		write_seed(&s, edges[e].name);
	}

	for (int v = 0; v < 4; v++) {
		char name[32];

		config(&s, QUIET);
		tmpl_default(&t, BLUE_OP_RC_SEND_ONLY);
		t.mode = FZ_MODE_MISADDR;
		t.misaddr = v;
		record(&s, &t);
		snprintf(name, sizeof(name), "misaddr-%d", v);
		write_seed(&s, name);
	}

	config(&s, QUIET);
	tmpl_default(&t, BLUE_OP_RC_WRITE_FIRST);
	t.mode = FZ_MODE_MUTATE;
	t.pl = PL_MTU;
	t.len = 4096;
	t.nmut = 4;
	t.mut_off = 16;		/* the IPv4 length and onwards */
	t.mut_xor = 0x40;
	t.flags |= FZ_F_FIX_ICRC | FZ_F_FIX_IPCSUM;
	t.adj = 20;
	record(&s, &t);
	write_seed(&s, "mutate-lengths");
}

/* The rxe captures, a few frames of each, readdressed to the live QPs. */
static int seeds_rxe(void)
{
	static const char *const files[] = {
		"pp-64.pcap", "pp-4096.pcap", "ib_send_bw-2048.pcap", "ib_write_bw-4096.pcap",
		"ib_write_lat-64.pcap", "ib_read_bw-4096.pcap", "ib_read_lat-64.pcap",
		"ib_atomic_bw-8.pcap",
	};
	char dir[1024], path[2048], name[64];
	struct tpcap pc;
	struct seed s;
	int err;

	err = tvec_dir(dir, sizeof(dir));
	if (err) {
		fprintf(stderr, "gen_seeds: no rxe vectors (tried %s); skipping them\n", dir);
		return 0;
	}
	for (unsigned int f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[f]);
		err = tpcap_open(path, &pc);
		if (err) {
			fprintf(stderr, "gen_seeds: %s: %s\n", path, strerror(-err));
			return 1;
		}
		for (size_t i = 0; i < pc.n && i < 6; i++) {
			const struct tpcap_rec *r = &pc.recs[i];
			uint32_t fl = r->len > 42 ? blue_opcode_flags(r->data[42]) : 0;
			uint8_t rf = FZ_R_ADDR | FZ_R_PSN | FZ_R_FIX_ICRC;

			if (fl & BLUE_OPF_RESPONSE)
				rf |= FZ_R_TO_A;
			config(&s, (fl & BLUE_OPF_RESPONSE) ? BUSY : QUIET);
			e8(&s, FZ_MODE_RAW << 5);
			e8(&s, rf);
			e16(&s, r->len);
			for (uint32_t k = 0; k < r->len; k++)
				e8(&s, r->data[k]);
			snprintf(name, sizeof(name), "rxe-%.*s-%zu",
				 (int)(strlen(files[f]) - 5), files[f], i);
			write_seed(&s, name);
		}
		tpcap_close(&pc);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen_seeds DIR\n");
		return 2;
	}
	g_dir = argv[1];
	seeds_per_opcode();
	seeds_sequences();
	seeds_hostile();
	seeds_selective();
	if (seeds_rxe())
		return 1;
	printf("gen_seeds: %u seeds in %s\n", g_written, g_dir);
	return 0;
}
