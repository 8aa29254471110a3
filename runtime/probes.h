/* SPDX-License-Identifier: MIT */
/*
 * USDT probes (provider "blue") at the transport's events, for bpftrace and perf:
 *   blue:qp_state     (qpn, old state, new state)
 *   blue:retransmit   (qpn, PSN resent from, 0 = ACK timeout / 1 = NAK or gap / 2 = RNR)
 *   blue:nak_sent     (qpn, PSN, AETH syndrome)
 *   blue:nak_rcvd     (qpn, PSN, AETH syndrome)
 *   blue:completion   (qpn, wr_id, status, opcode)
 * A probe is a nop in the instruction stream until a tracer attaches.
 */
#ifndef BLUE_RUNTIME_PROBES_H
#define BLUE_RUNTIME_PROBES_H

#if defined(__has_include) && __has_include(<sys/sdt.h>)
#include <sys/sdt.h>
#define BLUE_PROBE3(name, a, b, c)	DTRACE_PROBE3(blue, name, a, b, c)
#define BLUE_PROBE4(name, a, b, c, d)	DTRACE_PROBE4(blue, name, a, b, c, d)
#else
#define BLUE_PROBE3(name, a, b, c)	do { (void)(a); (void)(b); (void)(c); } while (0)
#define BLUE_PROBE4(name, a, b, c, d)	do { (void)(a); (void)(b); (void)(c); (void)(d); } while (0)
#endif

enum blue_retx_reason {
	BLUE_RETX_TIMEOUT = 0,
	BLUE_RETX_NAK = 1,
	BLUE_RETX_RNR = 2,
};

#endif /* BLUE_RUNTIME_PROBES_H */
