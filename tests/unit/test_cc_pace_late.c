// SPDX-License-Identifier: MIT
/*
 * The pacing gate when the engine's passes come late (runtime/cc_gate.c): a paced QP is
 * served once per pass, and on a loaded machine, or in event mode, passes come tens to
 * hundreds of microseconds apart. What a pass finds it may send must then cover the time
 * since the last one, or the QP runs at a fraction of its rate for good. Measured through
 * the switch before: a QP paced at 1000 Mbit/s with no congestion moved 235 Mbit/s in
 * event mode (16 us of burst against passes ~70 us apart).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "runtime/cc_wire.h"
#include "runtime/codec.h"
#include "runtime/device.h"
#include "runtime/qp.h"
#include "tests/unit/rc_fixture.h"

/*
 * Passes every @gap_ns for 20 ms at @rate_mbps: each pass sends full frames (1024 B
 * WRITE MIDDLE) while the gate is open. Return: the bytes sent over the bytes the rate
 * allows in that time, in percent.
 */
static unsigned int paced_share(struct blue_qp *qp, uint32_t rate_mbps, uint64_t gap_ns)
{
	struct blue_engine *eng = &qp->ctx->eng;
	const uint64_t t0 = 1000000000ull, span = 20000000ull;
	struct blue_pkt p;
	uint64_t bytes = 0;

	memset(&p, 0, sizeof(p));
	p.opcode = BLUE_OP_RC_WRITE_MIDDLE;
	p.payload_len = 1024;
	qp->live->rate_mbps = rate_mbps;
	qp->cc.next_tx_ns = t0;
	for (eng->now_ns = t0; eng->now_ns < t0 + span; eng->now_ns += gap_ns) {
		while (blue__cc_gate_open(qp)) {
			p.psn = blue_psn_add(p.psn, 1);
			blue__cc_sent(qp, &p);
			bytes += blue_pkt_frame_len(&p);
		}
	}
	return (unsigned int)(bytes * 8 * 1000 * 100 / ((uint64_t)rate_mbps * span));
}

Test(cc_pace, late_passes_keep_the_rate)
{
	static const uint64_t gaps_us[] = { 5, 30, 70, 150 };
	struct rc_fx fx;

	rc_fx_init(&fx, NULL);
	for (unsigned int i = 0; i < sizeof(gaps_us) / sizeof(gaps_us[0]); i++) {
		unsigned int pct = paced_share(fx.a.qp, 1000, gaps_us[i] * 1000);

		cr_assert(pct >= 95 && pct <= 101, "passes %llu us apart at 1000 Mbit/s: %u %% of "
			  "the rate", (unsigned long long)gaps_us[i], pct);
	}
	rc_fx_fini(&fx);
}
