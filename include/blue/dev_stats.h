/* SPDX-License-Identifier: MIT */
/*
 * Device-level statistics: a pinned, mmapable BPF array (dev_stats) next to qp_ctx, with
 * one entry per netdev queue (BLUE_MAX_QUEUES), since each queue is served by its own
 * context; bluectl adds them up. The runtime that has a queue open mmaps it and keeps
 * its entry current, so
 * another process (bluectl, bpftool map dump) sees the HAL's ring counters, the engine's
 * counters and the timing histograms of a live device without asking the process.
 *
 * Writers: only the runtime (one process owns a netdev queue). The XDP program creates
 * the map and never touches it.
 *  - hal and eng are published from the progress path at most every
 *    BLUE_DEV_PUBLISH_NS (and at close): the hot counters stay in process-local cache
 *    lines, and the HAL's XDP_STATISTICS read is a syscall. Each is the sum over every
 *    process that had the device open since attach (base + current), so a counter never
 *    goes backwards when an application restarts.
 *  - the histograms are updated in place, at the event.
 * Readers see each 64-bit field whole; fields are not a consistent snapshot with each
 * other unless the device is idle.
 */
#ifndef BLUE_DEV_STATS_H
#define BLUE_DEV_STATS_H

#include <linux/types.h>
#include <blue/qp_ctx.h>	/* BLUE_MAX_QUEUES */

#define BLUE_DEV_PUBLISH_NS	10000000ull	/* 10 ms */

/*
 * Log2 histogram of durations in nanoseconds. Bucket 0 counts values below
 * 2^BLUE_HIST_SHIFT ns (about 1 us), bucket i (1 <= i < BLUE_HIST_BUCKETS - 1) counts
 * [2^(SHIFT+i-1), 2^(SHIFT+i)) ns, and the last bucket everything from 2^(SHIFT+22) ns
 * (about 4.3 s) up. So bucket i's upper bound ("le" in Prometheus) is 2^(SHIFT+i) ns.
 */
#define BLUE_HIST_SHIFT		10
#define BLUE_HIST_BUCKETS	24

struct blue_hist {
	__u64	count;
	__u64	sum_ns;
	__u64	bucket[BLUE_HIST_BUCKETS];
};

_Static_assert(sizeof(struct blue_hist) == 208, "blue_hist layout changed");

static inline __u32 blue_hist_bucket(__u64 ns)
{
	__u32 b;

	if (ns < (1ull << BLUE_HIST_SHIFT))
		return 0;
	b = 64 - (__u32)__builtin_clzll(ns) - BLUE_HIST_SHIFT;	/* floor(log2) + 1 - SHIFT */
	return b < BLUE_HIST_BUCKETS ? b : BLUE_HIST_BUCKETS - 1;
}

/* Upper bound of bucket @b in ns; the last bucket has none (+Inf). */
static inline __u64 blue_hist_le_ns(__u32 b)
{
	return 1ull << (BLUE_HIST_SHIFT + b);
}

/* Send-queue opcodes with a latency histogram: enum blue_wr_opcode (ibv_wr_opcode). */
#define BLUE_LAT_OPS		8

static inline const char *blue_lat_op_name(__u32 op)
{
	switch (op) {
	case 0:	return "write";
	case 1:	return "write_imm";
	case 2:	return "send";
	case 3:	return "send_imm";
	case 4:	return "read";
	case 5:	return "cas";
	case 6:	return "faa";
	default: return NULL;
	}
}

/* What the HAL counts (afxdp_hal/hal.h struct blue_hal_stats), plus RX batches. */
struct blue_dev_hal {
	__u64	rx_frames;
	__u64	tx_frames;
	__u64	tx_kicks;	/* TX doorbells: sendto() calls */
	__u64	rx_wakeups;	/* poll() calls that slept */
	__u64	fill_empty;	/* times the fill ring could not be topped up */
	__u64	tx_ring_full;
	__u64	rx_dropped;	/* lost at the socket: RX ring full or no fill frame */
	__u64	frame_errors;
	__u64	rx_batches;	/* RX bursts that returned frames */
	__u64	frames_total;	/* gauge: frames in the UMEM */
	__u64	frames_free;	/* gauge: frames in the pool now */
	__u64	rx_multibuf;	/* packets that came in several descriptors */
	__u64	tx_multibuf;	/* packets sent as several descriptors */
	__u64	busy_polls;	/* syscalls that ran the NAPI loop instead of sleeping */
	__u64	reserved[2];
};

/* The engine's counters (runtime/progress.h struct blue_engine_stats). */
struct blue_dev_engine {
	__u64	passes;
	__u64	rx_frames;
	__u64	rx_bad_icrc;
	__u64	rx_malformed;
	__u64	rx_no_qp;
	__u64	rx_bad_src;
	__u64	rx_wrong_transport;
	__u64	rx_dup;
	__u64	rx_seq_err;
	__u64	rx_inv_req;
	__u64	rx_access_err;
	__u64	rx_op_err;
	__u64	rx_cnp;
	__u64	tx_frames;
	__u64	tx_no_frame;
	__u64	tx_dropped;
	__u64	tx_loopback;	/* frames to this device itself, looped back in the engine */
	__u64	rx_bad_qkey;	/* UD: dropped, the Q_Key is not the QP's */
	__u64	rx_ud_no_wqe;	/* UD: dropped, no receive WQE posted */
	__u64	tx_ud_too_long;	/* UD: sends over the MTU, completed unsent */
	__u64	rx_uc_dropped;	/* UC: requests dropped unanswered (gap, no WQE, access) */
	/* UD multicast (runtime/mcast.h): the engine block's last three reserved words and
	 * one of struct blue_dev_stats' own, so the map's value keeps its size */
	__u64	rx_mcast_copies;	/* copies handed to the QPs attached to a group */
	__u64	rx_mcast_no_group;	/* dropped: no QP of ours attached to the group */
	__u64	rx_mcast_bad_pkey;	/* copies dropped: the attached QP's P_Key differs */
	__u64	tx_mcast_loop;		/* sent to a group of our own: looped back too */
};

struct blue_dev_stats {
	__u32	owner_pid;	/* the process that has the device open; 0 when none */
	__u32	opens;		/* blue_open_device() calls since attach */
	__u64	published_ns;	/* CLOCK_MONOTONIC of the last publish of hal and eng */
	struct blue_dev_hal	hal;
	struct blue_dev_engine	eng;
	/* control plane: blue_cm_info_from_qp() to RTS in blue_cm_connect_qp() */
	struct blue_hist	conn_setup;
	/* data plane: blue_post_send() to the CQE, per WR opcode; only with diag on */
	struct blue_hist	lat[BLUE_LAT_OPS];
	__u64	reserved[15];
};

_Static_assert(sizeof(struct blue_dev_engine) == 200, "blue_dev_engine layout changed");
_Static_assert(sizeof(struct blue_dev_stats) == 2336, "blue_dev_stats layout changed");

#endif /* BLUE_DEV_STATS_H */
