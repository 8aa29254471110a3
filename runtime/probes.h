/* SPDX-License-Identifier: MIT */
/*
 * USDT probes (provider "blue") at the transport's events, for bpftrace and perf. A
 * probe is a nop in the instruction stream until a tracer attaches; its arguments are
 * values the code has at hand anyway. The bpftrace scripts in tools/trace use them.
 *
 *   blue:qp_state     (qpn, old state, new state)                 enum blue_qp_state
 *   blue:post_send    (qpn, wr_id, opcode, length, send_flags)    enum blue_wr_opcode
 *   blue:post_recv    (qpn, wr_id, length)
 *   blue:completion   (qpn, wr_id, status, opcode, byte_len)      enum blue_wc_status/opcode
 *   blue:retransmit   (qpn, first PSN, reason, end PSN)           enum blue_retx_reason;
 *                     the PSNs [first, end) are sent again (24-bit, end may wrap)
 *   blue:nak_sent     (qpn, PSN, AETH syndrome)                   RNR NAKs included
 *   blue:nak_rcvd     (qpn, PSN, AETH syndrome)                   RNR NAKs included
 *   blue:rnr          (qpn, PSN, wait ns, RNR retries left)       an RNR NAK makes us wait
 *   blue:cnp          (qpn, source IPv4 (network order), PSN)     a RoCEv2 CNP arrived
 *   blue:timer        (qpn, kind, deadline ns, una PSN)           a timer expired;
 *                                                                  enum blue_timer_kind
 *   blue:cm_connected (qpn, peer qpn, setup ns)                   RTS via the CM
 *   blue:cc_rate      (qpn, old Mbit/s, new Mbit/s, target Mbit/s) the paced rate changed
 *   blue:cc_window    (qpn, old cwnd, new cwnd, srtt ns)           the window changed
 *   blue:cnp_sent     (qpn, peer IPv4 (network order), PSN)        a CNP answered CE
 *   blue:tune         (qpn, keys, keys refused, gen)               the engine applied a
 *                     `bluectl set` (qpn 0: the interface's defaults); keys are
 *                     bits of enum blue_tune_key (include/blue/tune.h)
 *
 * Every site of one probe must pass the same number of arguments: bpftrace refuses an
 * argument that one site lacks (tests/netns/test_observe.sh checks the binaries).
 */
#ifndef BLUE_RUNTIME_PROBES_H
#define BLUE_RUNTIME_PROBES_H

#if defined(__has_include) && __has_include(<sys/sdt.h>)
#include <sys/sdt.h>
#define BLUE_PROBE3(name, a, b, c)	DTRACE_PROBE3(blue, name, a, b, c)
#define BLUE_PROBE4(name, a, b, c, d)	DTRACE_PROBE4(blue, name, a, b, c, d)
#define BLUE_PROBE5(name, a, b, c, d, e) DTRACE_PROBE5(blue, name, a, b, c, d, e)
#else
#define BLUE_PROBE3(name, a, b, c)	do { (void)(a); (void)(b); (void)(c); } while (0)
#define BLUE_PROBE4(name, a, b, c, d)	do { (void)(a); (void)(b); (void)(c); (void)(d); } while (0)
#define BLUE_PROBE5(name, a, b, c, d, e) \
	do { (void)(a); (void)(b); (void)(c); (void)(d); (void)(e); } while (0)
#endif

enum blue_retx_reason {
	BLUE_RETX_TIMEOUT = 0,	/* the local ACK timeout (or a tail-loss probe) */
	BLUE_RETX_NAK = 1,	/* a sequence-error NAK or a hole the receiver reported */
	BLUE_RETX_RNR = 2,	/* the wait an RNR NAK asked for is over */
};

/* blue:retransmit for the PSNs [@first, @end). */
#define BLUE_PROBE_RETX(qpn, first, reason, end) \
	BLUE_PROBE4(retransmit, qpn, first, reason, end)

#endif /* BLUE_RUNTIME_PROBES_H */
