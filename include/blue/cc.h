/* SPDX-License-Identifier: MIT */
/*
 * Congestion control: the algorithms a QP can run and every parameter they take. Shared
 * by libblue (runtime/cc*.c), the pinned tuning map (include/blue/tune.h) and bluectl
 * (`bluectl set|get`), so that one struct is the one list of knobs.
 *
 *  none    IBA as it is: no pacing, no window beyond the requester's fixed one.
 *  DCQCN   rate-based, ECN-driven (Zhu et al., SIGCOMM 2015): the receiver answers CE
 *          with CNPs, the sender cuts its rate by alpha/2 per CNP and recovers by timer
 *          and byte counter (fast recovery, additive, hyper increase). Needs a peer that
 *          sends CNPs and a switch that marks.
 *  window  delay-based (Swift-like): the requester measures RTT from its own send and
 *          ACK times and runs AIMD on a congestion window against a target delay. Needs
 *          nothing from the peer or the switch.
 */
#ifndef BLUE_CC_H
#define BLUE_CC_H

#include <linux/types.h>

enum blue_cc_algo {
	BLUE_CC_NONE	= 0,
	BLUE_CC_DCQCN	= 1,
	BLUE_CC_WINDOW	= 2,
	BLUE_CC__MAX
};

/*
 * DCQCN, reaction point (sender) and notification point (receiver). Rates in Mbit/s,
 * times in microseconds, alpha and g in 1/1024. Defaults from the paper and from RNICs'
 * firmware defaults (mlx5's rpg_* / dce_tcp_* / min_time_between_cnps), named in
 * runtime/cc_dcqcn.c.
 */
struct blue_cc_dcqcn {
	__u32	line_rate_mbps;		/* start and ceiling; 0: the netdev's speed */
	__u32	min_rate_mbps;		/* floor of a cut */
	__u32	rai_mbps;		/* R_AI: additive increase step */
	__u32	rhai_mbps;		/* R_HAI: hyper increase step */
	__u32	g;			/* alpha gain, 1/1024 */
	__u32	alpha_init;		/* alpha at start, 1/1024 */
	__u32	alpha_timer_us;		/* alpha decays when no CNP came for this long */
	__u32	rate_timer_us;		/* rate-increase timer period */
	__u32	byte_counter_kb;	/* rate-increase byte counter, KiB sent */
	__u32	fast_recovery_steps;	/* F: steps of fast recovery before additive */
	__u32	min_dec_pct;		/* a cut keeps at least this % of the rate */
	__u32	cnp_interval_us;	/* receiver: at most one CNP per QP this often */
	__u32	reserved[4];
};

/* The window (Swift-like). Window in packets; times in microseconds; factors in 1/1024. */
struct blue_cc_window {
	__u32	target_delay_us;	/* RTT above which the window shrinks */
	__u32	ai_pkts;		/* additive increase per RTT, packets */
	__u32	beta;			/* multiplicative decrease gain, 1/1024 */
	__u32	max_mdf;		/* at most this cut per RTT, 1/1024 */
	__u32	min_cwnd;		/* packets, >= 1 */
	__u32	max_cwnd;		/* packets, <= the requester's window (256) */
	__u32	init_cwnd;		/* packets */
	__u32	rtt_gain;		/* srtt EWMA gain, 1/1024 */
	__u32	reserved[4];
};

/* Everything one QP's congestion control is set by. */
struct blue_cc_params {
	__u32	algo;			/* enum blue_cc_algo */
	__u32	ecn;			/* 1: send ECT(0) and answer CE with CNPs */
	struct blue_cc_dcqcn dcqcn;
	struct blue_cc_window window;
};

#endif /* BLUE_CC_H */
