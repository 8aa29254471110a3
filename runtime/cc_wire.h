/* SPDX-License-Identifier: MIT */
/*
 * Congestion control where it meets the transport and the wire: the calls the
 * transport makes at its events, each one line at its site. The algorithms behind
 * qp->cc.ops (runtime/cc.h) see only these events.
 *
 *  cc_gate.c  the pacing gate in blue__qp_tx() and the requester's window;
 *  cc_ecn.c   ECT(0) on a QP's requests, CE -> CNP at the receiver, CNP -> on_cnp;
 *  cc_rtt.c   RTT samples from the requester's own clock (Karn), on_ack, on_loss;
 *  cc_neg.c   what the CM offers and picks, and the BLUE_CC override.
 *
 * Decisions (issue 13), in one place:
 *  - only request packets are paced and ECT-marked: DCQCN's reaction point limits the
 *    requester's data (Zhu et al. 2015). ACK, NAK, CNP and READ responses are never
 *    held and never marked: a READ's data flows from the responder unpaced, so a READ
 *    incast is not controlled by DCQCN here (the window bounds READ PSNs in flight at
 *    the requester, which limits it);
 *  - a CNP answers a CE-marked request only on a QP with ecn on: the peer negotiated
 *    CC (or BLUE_CC asked for it), so it knows what a CNP is; a standard peer's CE
 *    (rxe marks nothing, but a switch could) is counted and not answered;
 *  - a paced packet is charged its frame length (Ethernet header to ICRC), as the
 *    bottleneck's tbf/htb count it.
 */
#ifndef BLUE_RUNTIME_CC_WIRE_H
#define BLUE_RUNTIME_CC_WIRE_H

#include <stdbool.h>
#include <stdint.h>

#include <blue/wire.h>
#include "runtime/cc.h"

struct blue_qp;
struct blue_pkt;
struct blue_context;

#define BLUE_CC_HIDDEN __attribute__((visibility("hidden")))

/*
 * A paced QP that was idle may send this much time's worth of packets at once: the
 * engine serves a QP once per pass, and without it a pass that comes late would lose
 * the lateness for good. It must cover the gap between passes: tens to hundreds of us
 * on a loaded machine or in event mode. Measured with 16 us: a QP paced at 1000 Mbit/s
 * through the switch moved 235 Mbit/s in event mode (tests/unit/test_cc_pace_late.c),
 * one paced at 40 Mbit/s (a 1 KiB packet per 200 us, longer than the allowance) 10.
 * 256 us is about one TX batch of 32 full frames at 1 Gbit/s, what one pass sends
 * anyway; longer would let a stalled QP's catch-up burst overrun a shallow switch buffer.
 */
#define BLUE_CC_BURST_NS	256000ull

/* ---- cc_gate.c ---- */

/*
 * blue__cc_gate_open() - may a request of @qp (paced: live->rate_mbps != 0) leave now?
 * No: counted in the engine's tx_paced, and the pass's timer minimum includes the
 * moment it may (blue__cc_deadline()).
 */
bool blue__cc_gate_open(struct blue_qp *qp) BLUE_CC_HIDDEN;

/*
 * blue__cc_sent() - the request @p left: the pacing clock moves on by its frame's bits
 * at the QP's rate, next_tx_ns = max(next_tx_ns, now - BLUE_CC_BURST_NS) + bits * 1000 /
 * rate_mbps; on_send; the RTT timing (cc_rtt.c).
 */
void blue__cc_sent(struct blue_qp *qp, const struct blue_pkt *p) BLUE_CC_HIDDEN;

/*
 * The requester's window: @fixed (its own limit), or the algorithm's cwnd when that is
 * smaller (live->cwnd != 0).
 */
static inline uint32_t blue__cc_window(const struct blue_qp_ctx *live, uint32_t fixed)
{
	return live->cwnd && live->cwnd < fixed ? live->cwnd : fixed;
}

/*
 * blue__cc_run() - per QP per pass, before it sends: a CNP owed since a pass that had
 * no frame for it, and the algorithm's timer when it is due.
 */
void blue__cc_run(struct blue_qp *qp, uint64_t now) BLUE_CC_HIDDEN;

/* blue__cc_deadline() - @next lowered to the QP's pacing and cc timer deadlines. */
uint64_t blue__cc_deadline(struct blue_qp *qp, uint64_t next, uint64_t now) BLUE_CC_HIDDEN;

/* ---- cc_ecn.c ---- */

/* The IPv4 TOS for a packet with @opcode of a QP: ECT(0) on its requests when ecn is on. */
static inline uint8_t blue__cc_tos(const struct blue_qp_ctx *live, uint8_t tclass,
				   uint8_t opcode)
{
	if (live->ecn && (blue_opcode_flags(opcode) & BLUE_OPF_REQUEST))
		return (uint8_t)((tclass & ~BLUE_ECN_MASK) | BLUE_ECN_ECT0);
	return tclass;
}

/*
 * blue__cc_ce_rx() - a frame for @qp arrived with CE: counted; a request on a QP with
 * ecn on is answered with a CNP, at most one per params.dcqcn.cnp_interval_us.
 */
void blue__cc_ce_rx(struct blue_qp *qp, const struct blue_pkt *p) BLUE_CC_HIDDEN;

/* blue__cc_cnp_rx() - a CNP for @qp's sends arrived: the algorithm's on_cnp. */
void blue__cc_cnp_rx(struct blue_qp *qp) BLUE_CC_HIDDEN;

/*
 * Send a CNP to @qp's peer for the CE-marked request @psn (blue:cnp_sent). Return: 0 or
 * -EAGAIN (no frame: owed, and sent by blue__cc_run() in a later pass).
 */
int blue__cc_send_cnp(struct blue_qp *qp, uint32_t psn) BLUE_CC_HIDDEN;

/* ---- cc_rtt.c ---- */

/*
 * blue__cc_rtt_sent() - a request with PSN @psn left; @first: never sent before.
 * The first one while nothing is timed starts a timing; any retransmission ends it
 * unsampled (Karn: an ACK after a resend cannot say which copy it answers).
 */
void blue__cc_rtt_sent(struct blue_qp *qp, uint32_t psn, bool first) BLUE_CC_HIDDEN;

/*
 * blue__cc_acked() - una_psn moved from @old_una to @new_una: a sample if it passed the
 * timed PSN (live->rtt_ns, live->srtt_ns), then on_ack with the PSNs newly acknowledged.
 */
void blue__cc_acked(struct blue_qp *qp, uint32_t old_una, uint32_t new_una) BLUE_CC_HIDDEN;

/* blue__cc_loss() - the ACK timer fired or a sequence NAK came: on_loss, timing ends. */
void blue__cc_loss(struct blue_qp *qp) BLUE_CC_HIDDEN;

/* ---- cc_neg.c ---- */

/* BLUE_CM_CAP_DCQCN / _WINDOW_CC for the algorithms this build has. */
uint32_t blue__cc_caps_built(void) BLUE_CC_HIDDEN;

/*
 * The congestion-control caps a side offers by default: those built, or only what
 * BLUE_CC names (none: nothing). Read once per process.
 */
uint32_t blue__cc_caps_offer(void) BLUE_CC_HIDDEN;

/*
 * blue__cc_env() - BLUE_CC parsed once per process: -1 when unset, else the algorithm.
 * Return -2 (logged, naming the value) when it names none of none, dcqcn, window, or
 * an algorithm this build lacks.
 */
int blue__cc_env(void) BLUE_CC_HIDDEN;

/*
 * blue__cc_choose() - the algorithm two sides that offered @local and @remote use:
 * both DCQCN and window in common -> BLUE_CC_DEFAULT; one in common -> that one;
 * none in common -> the window if @local offered only the window (an explicit
 * choice, and the window needs nothing from the peer), else none.
 */
uint32_t blue__cc_choose(uint32_t local, uint32_t remote) BLUE_CC_HIDDEN;

/* blue__cc_use() - @qp runs @algo with the parameters it has (the defaults, or the
 * interface's tuned ones), ECN on for DCQCN only. Return: 0 or errno. */
int blue__cc_use(struct blue_qp *qp, uint32_t algo) BLUE_CC_HIDDEN;

/* blue__cc_at_rts() - a QP reaching RTS runs what BLUE_CC names, when it is set. */
void blue__cc_at_rts(struct blue_qp *qp) BLUE_CC_HIDDEN;

#endif /* BLUE_RUNTIME_CC_WIRE_H */
