/* SPDX-License-Identifier: MIT */
/*
 * The bottleneck switch (test and bench equipment, not part of the RDMA stack): the
 * maps shared by bpf/switch_ecn.bpf.c and tools/blue_switch.c.
 *
 * The switch is a namespace whose receiver-facing port carries a tbf qdisc at the
 * bottleneck rate (tbf holds and paces the packets: it is the queue) and, on clsact
 * egress in front of it, switch_ecn. For each packet switch_ecn reads the depth of that
 * very queue, tbf's own backlog in bytes (the port's root qdisc, skb->dev->qdisc, read
 * through BTF), and on the depth the packet finds
 *  - tail-drops a packet that would take it above buffer_bytes (tbf's own limit is set
 *    above the buffer and is never hit), so drops are exact and counted here;
 *  - marks CE, RED-style: probability 0 at depth <= kmin, rising linearly to pmax at
 *    kmax, 1 above kmax (DCQCN deployments set their switches' WRED/ECN this way);
 *    only ECT(0)/ECT(1) packets, never Not-ECT (those pass unmarked, as on switches
 *    with ECN marking but WRED drop off), with the IPv4 header checksum fixed;
 *  - records the largest depth per BLUE_SW_SLOT_NS slot into a ring (the record that
 *    cc-bench turns into queue-delay percentiles).
 * The depth is read before the packet is enqueued and without tbf's lock, so packets
 * from several CPUs at once each see the queue without the others: it can run over the
 * buffer by a packet per other CPU, which tbf's limit leaves room for.
 */
#ifndef BLUE_SWITCH_H
#define BLUE_SWITCH_H

#include <linux/bpf.h>
#include <linux/types.h>

#define BLUE_SW_NS		1000000000ull
#define BLUE_SW_BUFFER_MAX	(64u << 20)	/* 64 MiB */

/* One record slot: 100 us, 262144 slots = 26.2 s of history in a ring. */
#define BLUE_SW_SLOT_NS		100000ull
#define BLUE_SW_RING_SLOTS	(1u << 18)

#define BLUE_SW_F_MARK		(1u << 0)	/* CE marking on; off: only rate and tail drop */

/* The one entry of the "sw_cfg" array map; written by blue_switch, read per packet. */
struct blue_sw_cfg {
	__u32	buffer_bytes;	/* tail drop above this depth; 0: not configured, pass all */
	__u32	kmin_bytes;
	__u32	kmax_bytes;
	__u32	pmax;		/* mark probability at kmax, in 1/2^32 (0xffffffff ~ 1) */
	__u32	flags;		/* BLUE_SW_F_* */
	__u32	pad;
	__u64	epoch_ns;	/* CLOCK_MONOTONIC of the last reset: record times are from it */
};
_Static_assert(sizeof(struct blue_sw_cfg) == 32, "blue_sw_cfg layout changed");

/*
 * The one entry of the "sw_state" array map: the counters and the record slot being
 * filled, under one lock, since packets arrive on every CPU (each sender's veth runs
 * its NAPI on the sender's CPU).
 */
struct blue_sw_state {
	struct bpf_spin_lock lock;
	__u32	pad;
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
_Static_assert(sizeof(struct blue_sw_state) == 112, "blue_sw_state layout changed");

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

#endif
