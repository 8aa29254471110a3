// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for libblue's receive path that keeps its world (world.h) across
 * inputs: the contexts, CQs, MRs and QPs stay, and between inputs both QPs go to RESET
 * and back through INIT, RTR and RTS with the input's PSNs and attributes, the frames in
 * flight are drained (every frame must be back in its pool), the CQs must be empty and
 * the MRs and canaries are rewritten. Each input so starts from the state a fresh world
 * has, and replays the same in fuzz_rx (which builds the world per input) — use that to
 * confirm a crash stands alone. The world is built anew only when a reset is refused.
 *
 * Building the world dominated fuzz_rx's time (two loopback HALs with their UMEMs, two
 * contexts and their QP-context maps, four MRs in mmapped arenas); a reset is a few
 * modify_qp calls and memcpys.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tests/fuzz/world.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool g_open;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!g_open) {
		fz_world_open();
		g_open = true;
	}
	fz_input_run(data, size);
	if (!fz_world_reset()) {
		fz_world_close();
		fz_world_open();
	}
	return 0;
}
