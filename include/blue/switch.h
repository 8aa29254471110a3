/* SPDX-License-Identifier: MIT */
/*
 * The bottleneck switch (test and bench equipment, not part of the RDMA stack): the
 * maps shared by bpf/switch_ecn.bpf.c and tools/blue_switch.c.
 *
 * The switch is a namespace whose receiver-facing port carries a tbf qdisc at the
 * bottleneck rate and, on clsact egress in front of it, switch_ecn. tbf is the queue
 * that really holds and paces packets; a tc program cannot read its backlog, so
 * switch_ecn keeps a model of it: a virtual queue that every packet joins and that
 * drains at the configured rate (the rate tbf is given). On that modelled depth it
 *  - marks CE, RED-style: probability 0 at depth <= kmin, rising linearly to pmax at
 *    kmax, 1 above kmax (DCQCN deployments set their switches' WRED/ECN this way);
 *    only ECT(0)/ECT(1) packets, never Not-ECT (those pass unmarked, as on switches
 *    with ECN marking but WRED drop off), with the IPv4 header checksum fixed;
 *  - tail-drops a packet that would take the depth above buffer_bytes, so drops are
 *    exact and counted here (tbf's own limit is set above the buffer and never hit);
 *  - records the maximum depth per BLUE_SW_SLOT_NS slot into a ring (the record that
 *    cc-bench turns into queue-delay percentiles).
 * tests/netns/test_switch.sh checks the model against tbf's real backlog and drops.
 */
#ifndef BLUE_SWITCH_H
#define BLUE_SWITCH_H

#include <linux/bpf.h>
#include <linux/types.h>

/* Limits blue_switch enforces on a configuration (the model relies on them). */
#define BLUE_SW_RATE_MIN_BPS	1000000ull		/* 1 Mbit/s */
#define BLUE_SW_RATE_MAX_BPS	40000000000ull		/* 40 Gbit/s: rate * 1 s fits 63 bits */
/*
 * At most one second of the rate: then a gap of a second or more empties the queue,
 * and the drain (elapsed ns * bytes per second) never needs more than 63 bits.
 */
#define BLUE_SW_NS		1000000000ull

/* One record slot: 100 us, 262144 slots = 26.2 s of history in a ring. */
#define BLUE_SW_SLOT_NS		100000ull
#define BLUE_SW_RING_SLOTS	(1u << 18)

#define BLUE_SW_F_MARK		(1u << 0)	/* CE marking on; off: only rate and tail drop */

/* The one entry of the "sw_cfg" array map; written by blue_switch, read per packet. */
struct blue_sw_cfg {
	__u64	rate_bps;	/* drain rate, bits/s of skb->len (what tbf meters) */
	__u32	buffer_bytes;	/* tail drop above this depth */
	__u32	kmin_bytes;
	__u32	kmax_bytes;
	__u32	pmax;		/* mark probability at kmax, in 1/2^32 (0xffffffff ~ 1) */
	__u32	flags;		/* BLUE_SW_F_* */
	__u32	pad;
	__u64	epoch_ns;	/* CLOCK_MONOTONIC of the last reset: record times are from it */
};
_Static_assert(sizeof(struct blue_sw_cfg) == 40, "blue_sw_cfg layout changed");

/*
 * The one entry of the "sw_state" array map: the modelled queue and the counters, all
 * under one lock, since packets arrive on every CPU (each sender's veth runs its NAPI
 * on the sender's CPU) and the queue is one.
 */
struct blue_sw_state {
	struct bpf_spin_lock lock;
	__u32	pad;
	/* depth in bytes * BLUE_SW_NS: draining dt ns at R bytes/s is exact (dt * R) */
	__u64	backlog_scaled;
	__u64	last_ns;	/* time the backlog was last drained to */
	__u64	pkts;		/* enqueued (passed on to tbf) */
	__u64	bytes;
	__u64	marked;		/* ECT -> CE */
	__u64	ce_in;		/* arrived CE already (counted, left alone) */
	__u64	notect_hot;	/* Not-ECT (or not IPv4) that RED would have marked */
	__u64	dropped;	/* tail drops */
	__u64	dropped_bytes;
	__u64	max_depth;	/* largest depth a packet found, bytes */
	__u64	min_mark_depth;	/* smallest depth at which a packet was marked (~0: none) */
	__u64	max_mark_depth;
	__u64	min_drop_depth;	/* smallest depth at which a packet was dropped (~0: none) */
	/* the record slot being filled; written to the ring when a later slot begins */
	__u64	cur_slot;	/* slot number + 1 (0: none yet) */
	__u64	cur_max;
};
_Static_assert(sizeof(struct blue_sw_state) == 128, "blue_sw_state layout changed");

/*
 * One entry of the "sw_ring" array map, index slot % BLUE_SW_RING_SLOTS: the largest
 * depth a packet found during slot (time since epoch_ns / BLUE_SW_SLOT_NS). Slots in
 * which no packet arrived have no entry (the queue only drained then).
 */
struct blue_sw_sample {
	__u64	slot;		/* slot number + 1 (0: empty) */
	__u64	max_depth;
};
_Static_assert(sizeof(struct blue_sw_sample) == 16, "blue_sw_sample layout changed");

/*
 * blue_sw_drain() - the modelled backlog (bytes * BLUE_SW_NS) left at @now_ns of
 * @backlog_scaled at @last_ns, drained at @rate_bps. Time that runs backwards (@now_ns
 * read on another CPU before that CPU took the lock) drains nothing. The switch program
 * and blue_switch's "depth now" both use it, so the two agree.
 */
static inline __u64 blue_sw_drain(__u64 backlog_scaled, __u64 last_ns, __u64 now_ns,
				  __u64 rate_bps)
{
	__u64 dt, out;

	if (now_ns <= last_ns)
		return backlog_scaled;
	dt = now_ns - last_ns;
	/* the buffer is at most one second of the rate: a second empties it */
	if (dt >= BLUE_SW_NS)
		return 0;
	out = dt * (rate_bps / 8);
	return out >= backlog_scaled ? 0 : backlog_scaled - out;
}

#endif
