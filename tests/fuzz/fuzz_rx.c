// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for libblue's receive path: the parser, the responder and the
 * completer, behind the in-process loopback HAL (issue 4, "Fuzzing").
 *
 * Each input builds a fresh world (world.h), so a crash replays from its file alone with
 * nothing carried over: fuzz_seq.c runs the same inputs about 20 times faster against one
 * world it resets between them, and this target is the reference it is checked against.
 * The input format is fuzz_rx.h's; the invariants are world.h's.
 */
#include <stddef.h>
#include <stdint.h>

#include "tests/fuzz/world.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_world_open();
	fz_input_run(data, size);
	fz_world_close();
	return 0;
}
