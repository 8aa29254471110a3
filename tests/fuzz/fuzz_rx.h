/* SPDX-License-Identifier: MIT */
/*
 * The input format of the receive-path fuzzer (fuzz_rx.c), shared with its seed writer.
 * A purely random byte stream never gets past the ICRC, so the input mostly *describes*
 * frames: the harness builds each one with blue_pkt_build() for the live QPN and the
 * PSN the receiver expects, then applies the damage the input asks for. Every field is
 * read with a consumer that yields zeros once the input runs out, so any prefix is a
 * valid input.
 *
 *   config (4 bytes), then up to FZ_MAX_RECORDS records:
 *
 *   c0: bits 0-1 path MTU (0: 256, 1: 512, else 1024); bit 2 A's own frames are lost;
 *       bit 3 B's own frames are lost; bits 4-6 receives B posts (0-6); bit 7 start
 *       both PSNs just below the 24-bit wrap
 *   c1: legit work requests A posts to B: bit 0 SEND 1500 B (two SGEs), 1 WRITE 3000 B,
 *       2 READ 2500 B, 3 Fetch&Add, 4 Compare&Swap, 5 WRITE with imm 100 B,
 *       6 a zero-length READ, 7 B posts a SEND to A too
 *   c2: bits 0-1 local ACK timeout (0, 0, 1, 3: 8 us or 32 us retransmits);
 *       bits 2-4 retry_cnt; bits 5-7 rnr_retry
 *   c3: bit 0 B's QP grants no remote READ, bit 1 no remote WRITE, bit 2 no atomics;
 *       bit 3 selective retransmission on both QPs (blue_qp_set_retx); bits 4-7
 *       engine passes before the first record
 *
 *   record: sel = u8: bits 0-4 index into fz_opcodes[] (the last two slots read the
 *   opcode byte itself from the input), bits 5-7 the record mode (enum fz_mode).
 */
#ifndef BLUE_TESTS_FUZZ_RX_H
#define BLUE_TESTS_FUZZ_RX_H

#define FZ_MAX_RECORDS	32
#define FZ_NOPS		32
#define FZ_MUT_SLOTS	4	/* byte mutations a template record carries */
#define FZ_MUT_MAX	15	/* ... with FZ_MODE_MUTATE */

enum fz_mode {
	/*
	 * A frame built from a template. Requests go to B's responder, responses to A's
	 * completer. Fields follow sel at fixed widths (so that a mutation of one field
	 * never shifts the others), little-endian:
	 *   opcode u8 (used by the last two fz_opcodes slots), flags u8 (FZ_F_*),
	 *   PSN u32 (added to the expected PSN: as an i8 from its low byte, or whole with
	 *   FZ_F_FAR_PSN), keysel u8 (bits 0-2 fz_key, 3-5 fz_base, 6-7 fz_len),
	 *   va offset i16 (from the base), RETH length u32 (as fz_len reads it), rkey u32
	 *   (FZ_KEY_RANDOM), base u64 (FZ_BASE_RANDOM), payload u8 (bits 0-1: 0 one MTU,
	 *   1 bits 2-7 bytes, 2 the next u16 % (MTU + 64), 3 the RETH length up to one
	 *   MTU), payload length u16, AETH syndrome u8, MSN delta i8, immediate u32,
	 *   swap/add u8, compare u8, mutations u8 (how many of the slots below apply),
	 *   length adjust i8 (< 0 truncates; > 0 appends bytes with FZ_MODE_MUTATE; the
	 *   pad count with FZ_F_PAD_LIE), misaddress variant u8 and QPN u32
	 *   (FZ_MODE_MISADDR), then FZ_MUT_SLOTS (FZ_MODE_MUTATE: FZ_MUT_MAX) slots of
	 *   u16 offset + u8 xor.
	 */
	FZ_MODE_TEMPLATE = 0,
	FZ_MODE_TEMPLATE2 = 1,
	FZ_MODE_TEMPLATE3 = 2,
	FZ_MODE_REVERSE = 3,	/* template, directions swapped (A's responder, B's completer) */
	/*
	 * Raw bytes: flags u8 (FZ_R_*), length u16 (% frame size), then the bytes. They also
	 * go straight to the parser, with round-trip checks.
	 */
	FZ_MODE_RAW = 4,
	/* Engine passes: count u8 (bits 0-3), then op u8: post one more legit WR (fz_post) */
	FZ_MODE_PASSES = 5,
	FZ_MODE_MUTATE = 6,	/* template with up to 15 byte mutations */
	FZ_MODE_MISADDR = 7,	/* template, then misaddressed: variant u8 % 4 (fz_misaddr) */
};

enum fz_flag {
	FZ_F_ACKREQ	= 1 << 0,
	FZ_F_FIX_ICRC	= 1 << 1,	/* recompute the ICRC after the mutations */
	FZ_F_FIX_IPCSUM	= 1 << 2,	/* recompute the IPv4 checksum after the mutations */
	FZ_F_SE		= 1 << 3,
	FZ_F_FAR_PSN	= 1 << 4,	/* PSN = expected + u24, not + i8 */
	FZ_F_PAD_LIE	= 1 << 5,	/* BTH pad count from the length adjust's low bits */
	FZ_F_VLAN	= 1 << 6,	/* an 802.1Q tag */
	FZ_F_ECN	= 1 << 7,	/* FECN and BECN set */
};

enum fz_key {
	FZ_KEY_RW = 0,		/* the target's read-write MR */
	FZ_KEY_RO,		/* the target's remote-read-only MR */
	FZ_KEY_DEAD,		/* a key whose MR was deregistered */
	FZ_KEY_ZERO,
	FZ_KEY_OTHER,		/* the sender's own MR: unknown at the target */
	FZ_KEY_RW_TAG,		/* the RW MR's index with another tag */
	FZ_KEY_RANDOM,		/* u32 from the input, read after the length */
	FZ_KEY_RW2,
};

enum fz_base {
	FZ_BASE_RW = 0,		/* start of the RW MR */
	FZ_BASE_RO,		/* start of the RO MR */
	FZ_BASE_CANARY,		/* the canary page between them */
	FZ_BASE_GUARD,		/* the PROT_NONE page before the RW MR */
	FZ_BASE_NULL,
	FZ_BASE_RANDOM,		/* u64 from the input, read after the length */
	FZ_BASE_RW_END,		/* one past the end of the RW MR */
	FZ_BASE_RO_END,
};

enum fz_len {
	FZ_LEN_U8 = 0,
	FZ_LEN_U16,
	FZ_LEN_U32,
	FZ_LEN_TO_END,		/* from va to the end of the base's MR, + (low 3 bits - 3) */
};

enum fz_raw_flag {
	FZ_R_ADDR	= 1 << 0,	/* patch MACs, IPs, QPN to the live ones (IHL 5 frames) */
	FZ_R_PSN	= 1 << 1,	/* patch the PSN to the expected one */
	FZ_R_FIX_ICRC	= 1 << 2,
	FZ_R_TO_A	= 1 << 3,	/* deliver to A (a response) rather than to B */
};

enum fz_misaddr {
	FZ_MIS_QPN_RANDOM = 0,	/* a QPN nobody owns */
	FZ_MIS_QPN_GEN,		/* the live QPN's slot, another generation */
	FZ_MIS_SRC_IP,		/* from an address that is not the QP's peer */
	FZ_MIS_OWN_QPN,		/* the sender's own QPN */
};

enum fz_post {
	FZ_POST_SEND = 0, FZ_POST_WRITE, FZ_POST_READ, FZ_POST_FADD, FZ_POST_CAS,
	FZ_POST_RECV_B, FZ_POST_RECV_A, FZ_POST_NONE, FZ_POST__MAX,
};

/* Opcodes a record's sel picks from: every RC opcode, some UC/UD, a CNP, an invalid one. */
static const unsigned char fz_opcodes[FZ_NOPS] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b,
	0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x16, 0x17,
	0x20, 0x24, 0x26, 0x64, 0x65, 0x81, 0x15, 0x1f, 0xff,
};

#endif /* BLUE_TESTS_FUZZ_RX_H */
