/* SPDX-License-Identifier: MIT */
/*
 * Congestion control, per QP: an ops table per algorithm (none, DCQCN, window; the
 * parameters in include/blue/cc.h), called by the transport at a few named events, and
 * one pacing gate.
 *
 *  - the requester's packets leave through blue__qp_tx(), which asks blue__cc_gate()
 *    first: a paced QP whose next departure time is still ahead gets -EAGAIN ("stop,
 *    nothing committed, resume next pass"); ACK/NAK/CNP are never held;
 *  - the requester's window check (req.c) takes the smaller of its fixed window and the
 *    algorithm's cwnd (live->cwnd, 0 for none);
 *  - the completer reports newly acknowledged PSNs with an RTT sample (on_ack) and
 *    losses (on_loss); the CNP receive path reports on_cnp;
 *  - the engine's timer minimum includes blue__cc_deadline(), so a paced QP is woken in
 *    event mode and by compat's progress thread.
 *
 * An algorithm works only on struct blue_cc and the live context it points to, never
 * on the rest of the QP, so that unit tests run it on synthetic event sequences.
 */
#ifndef BLUE_RUNTIME_CC_H
#define BLUE_RUNTIME_CC_H

#include <stdbool.h>
#include <stdint.h>
#include <blue/cc.h>
#include <blue/qp_ctx.h>

struct blue_cc;

struct blue_cc_ops {
	const char *name;	/* "none", "dcqcn", "window": as bluectl and the CM spell it */
	/* (re)start with cc->params: at RTS, and when the algorithm or a parameter changes */
	void (*init)(struct blue_cc *cc, uint64_t now);
	/* a request packet of @bytes (wire bytes) left */
	void (*on_send)(struct blue_cc *cc, uint32_t bytes, uint64_t now);
	/* @pkts PSNs newly acknowledged; @rtt_ns the sample they gave, 0 for none */
	void (*on_ack)(struct blue_cc *cc, uint32_t pkts, uint64_t rtt_ns, uint64_t now);
	/* a CNP for this QP's sends arrived */
	void (*on_cnp)(struct blue_cc *cc, uint64_t now);
	/* the ACK timer fired, or a sequence NAK reported a loss */
	void (*on_loss)(struct blue_cc *cc, uint64_t now);
	/* the algorithm's own timers; Return: the next deadline, 0 for none */
	uint64_t (*on_timer)(struct blue_cc *cc, uint64_t now);
	/*
	 * Whether @p's parameters for this algorithm are in range (@link_mbps: the
	 * netdev's speed, 0 unknown). Return: 0, or -EINVAL with @why saying which
	 * parameter and its range ("dcqcn.g 0: use 1..1024"). NULL: nothing to check.
	 */
	int (*check)(const struct blue_cc_params *p, uint64_t link_mbps, char *why,
		     unsigned int len);
};

/* DCQCN's reaction-point state (runtime/cc_dcqcn.c). */
struct blue_cc_dcqcn_state {
	uint64_t rate_cur_kbps;		/* RC, kbit/s for resolution at low rates */
	uint64_t rate_target_kbps;	/* RT */
	uint32_t alpha;			/* 1/2^20 (live->alpha shows it in 1/1024): a
					 * decay by 1/256 a period must not stall */
	uint32_t timer_steps;		/* T: rate-timer expiries since the last cut */
	uint32_t byte_steps;		/* BC: byte-counter expiries since the last cut */
	uint64_t bytes;			/* sent since the byte counter last expired */
	uint64_t alpha_deadline_ns;	/* next alpha decay; 0 before the first CNP */
	uint64_t rate_deadline_ns;	/* next rate increase; 0 at line rate */
};

/* The window's state (runtime/cc_window.c). */
struct blue_cc_window_state {
	uint64_t cwnd_milli;		/* cwnd in 1/1000 packets: AI adds fractions */
	uint64_t last_cut_ns;		/* at most one cut per RTT (live->srtt_ns) */
	bool cut_seen;			/* last_cut_ns holds a cut */
};

struct blue_cc {
	const struct blue_cc_ops *ops;
	struct blue_cc_params params;
	struct blue_qp_ctx *live;	/* rate_mbps, alpha, cwnd, srtt_ns, cc_cuts ... */
	uint64_t link_mbps;		/* the netdev's speed, for line_rate_mbps 0 */
	uint64_t next_tx_ns;		/* pacing: when the next request packet may leave */
	uint64_t timer_ns;		/* the algorithm's next deadline; 0: none */
	uint64_t last_cnp_tx_ns;	/* receiver: when this QP last sent a CNP */
	/* the wire's own books (runtime/cc_wire.h) */
	bool paced_wait;		/* the gate held a request: wake at next_tx_ns */
	bool cnp_owed;			/* a CE came and its CNP found no frame: send next pass */
	uint32_t cnp_psn;		/* the CE-marked request that CNP answers */
	bool rtt_armed;			/* rtt_psn is timed (sent once, not yet acknowledged) */
	uint32_t rtt_psn;		/* the PSN being timed (Karn: first transmissions only) */
	uint64_t rtt_sent_ns;		/* when it left */
	uint64_t rtt_samples;		/* RTT samples taken (for tests and traces) */
	union {
		struct blue_cc_dcqcn_state dcqcn;
		struct blue_cc_window_state window;
	} s;
};

/*
 * What the CM picks when both peers offer both DCQCN and the window (cm_qp.c via
 * blue__cc_choose()). DCQCN with ECN to start with; measurements may switch it.
 */
#define BLUE_CC_DEFAULT		BLUE_CC_DCQCN

extern const struct blue_cc_ops blue__cc_none_ops;
extern const struct blue_cc_ops blue__cc_dcqcn_ops;
extern const struct blue_cc_ops blue__cc_window_ops;

/* One parameter's allowed range, for blue__cc_check_ranges(). */
struct blue_cc_range {
	const char *name;	/* as bluectl spells it after the section: "g" */
	uint64_t val;
	uint64_t lo, hi;
	const char *hint;	/* NULL, or said after the range: "(at most max_cwnd)" */
};

/*
 * blue__cc_check_ranges() - the first of @rows (@n) out of range, said in @why as
 * "@section.name val: use lo..hi [hint]". Return: 0, or -EINVAL.
 */
int blue__cc_check_ranges(const char *section, const struct blue_cc_range *rows,
			  unsigned int n, char *why, unsigned int len)
	__attribute__((visibility("hidden")));

/* The table for @algo (enum blue_cc_algo), NULL when out of range. */
const struct blue_cc_ops *blue__cc_ops(uint32_t algo) __attribute__((visibility("hidden")));

/* blue__cc_defaults() - the documented defaults of every parameter, algorithm @algo. */
void blue__cc_defaults(struct blue_cc_params *p, uint32_t algo)
	__attribute__((visibility("hidden")));

/*
 * blue__cc_set_rate()/_set_cwnd() - what an algorithm calls to change live->rate_mbps
 * or live->cwnd: writes it and fires blue:cc_rate (qpn, old, new, target Mbit/s) or
 * blue:cc_window (qpn, old, new packets, srtt ns) when it changed.
 */
void blue__cc_set_rate(struct blue_cc *cc, uint32_t mbps) __attribute__((visibility("hidden")));
void blue__cc_set_cwnd(struct blue_cc *cc, uint32_t pkts) __attribute__((visibility("hidden")));

#endif /* BLUE_RUNTIME_CC_H */
