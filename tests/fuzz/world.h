/* SPDX-License-Identifier: MIT */
/*
 * The world the receive-path fuzzers run their inputs against (world.c), shared by
 * fuzz_rx.c (a fresh world per input) and fuzz_seq.c (one world, reset between inputs):
 * two contexts A and B over a loopback pair, one RC QP each; per side a read-write MR and
 * a remote-read-only MR in an arena fenced by PROT_NONE guard pages and canary bytes,
 * plus the key of an MR that was deregistered. An input (fuzz_rx.h) configures and
 * connects the QPs, posts legit work requests, and injects its records' frames.
 *
 * What must hold (a failure aborts, which libFuzzer reports):
 *  - no crash, and nothing ASan/UBSan object to;
 *  - memory outside the MRs untouched: the guard pages fault on any access, the canary
 *    bytes beside the MRs are unchanged, and the MR without remote-write rights is
 *    unchanged;
 *  - every completion names a posted WR, exactly once, and send completions come in
 *    posting order; a receive's byte_len fits its buffers;
 *  - the engine's drop counters add up; no frame is lost or freed twice (every frame is
 *    back in each pool once the QPs are reset, and once the contexts are closed);
 *    teardown succeeds and leaks nothing (LeakSanitizer);
 *  - the parser, given the raw bytes: a frame it accepts lies within the buffer, has a
 *    valid ICRC, and rebuilds (blue_pkt_build) into a frame that parses to the same
 *    fields.
 */
#ifndef BLUE_TESTS_FUZZ_WORLD_H
#define BLUE_TESTS_FUZZ_WORLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The input, read front to back; zeros once it runs out. */
struct fz_in {
	const uint8_t *p;
	size_t n;
};

/* fz_init() - once per process: the memory patterns, the engine's log level. */
void fz_init(void);

/* fz_world_open() - the loopback pair, both contexts, MRs and QPs (QPs in RESET). */
void fz_world_open(void);

/* fz_world_close() - destroy everything; checks that every frame came back. */
void fz_world_close(void);

/*
 * fz_world_reset() - back to the state fz_world_open() leaves, cheaply: both QPs to
 * RESET, the frames in flight drained (and the pools checked whole), the CQs checked
 * empty, the arenas rewritten with their patterns, the harness's WR records cleared.
 * Return: false if the world is unusable (a modify_qp refused), so that the caller
 * builds a new one.
 */
bool fz_world_reset(void);

/* fz_input_run() - one input against the world: config, records, final checks. */
void fz_input_run(const uint8_t *data, size_t size);

#endif /* BLUE_TESTS_FUZZ_WORLD_H */
