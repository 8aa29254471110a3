/* SPDX-License-Identifier: MIT */
/*
 * Diagnostics that cost something, off by default and switched at run time with no
 * restart (`bluectl diag on|off IFNAME`): one entry of a pinned, mmapable BPF array
 * (diag), read by the XDP program at every drop and by the runtime, through its mmap,
 * at every send WR. Off, each costs one predictable branch on a cached word.
 *
 * Writers: bluectl sets flags (an atomic store through its own mmap); the XDP program
 * counts the events it emitted or could not (the ring buffer was full). The runtime
 * only reads.
 */
#ifndef BLUE_DIAG_H
#define BLUE_DIAG_H

#include <linux/types.h>

#define BLUE_DIAG_DROPS	(1u << 0)	/* XDP: one blue_drop_event per dropped frame */
#define BLUE_DIAG_LAT	(1u << 1)	/* runtime: post-to-completion latency histograms */
#define BLUE_DIAG_ALL	(BLUE_DIAG_DROPS | BLUE_DIAG_LAT)

struct blue_diag_cfg {
	__u32	flags;		/* BLUE_DIAG_*; 0 (off) after attach */
	__u32	pad;
	__u64	drop_events;	/* events the XDP program put in drop_events */
	__u64	drop_events_lost; /* events it dropped because the ring was full */
	__u64	reserved[5];
};

_Static_assert(sizeof(struct blue_diag_cfg) == 64, "blue_diag_cfg layout changed");

/* The drop-event ring buffer (BPF_MAP_TYPE_RINGBUF): a power-of-two page multiple. */
#define BLUE_DROP_RING_BYTES	(256u * 1024u)

/* One XDP drop, as read from the drop_events ring buffer (`bluectl drops`). */
struct blue_drop_event {
	__u64	ts_ns;		/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32	reason;		/* enum blue_stat_reason (a BLUE_STAT_DROP_*) */
	__u32	len;		/* frame bytes */
	__u32	ifindex;
	__u32	rx_queue;
	__u32	dqpn;		/* the BTH destination QP if parsing got that far, else 0 */
	__u32	pad;
};

_Static_assert(sizeof(struct blue_drop_event) == 32, "blue_drop_event layout changed");

#endif /* BLUE_DIAG_H */
