// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * Fault injection, test-only: the XDP half of tools/blue_fault. Attached natively to
 * each of the two netdevs of the middle namespace, it hands every frame (ARP, the CM's
 * TCP, RoCEv2) to the forwarder's AF_XDP socket on that netdev, which decides what
 * happens to it and sends it out of the other one. Nothing here looks at the frame:
 * faults are decided in userspace, where a seeded PRNG makes them replayable.
 *
 * One copy of this object is loaded per netdev, so each has its own one-slot-per-queue
 * XSKMAP. A frame that finds no socket (the forwarder is starting or gone) is dropped,
 * not passed: the middle namespace has no addresses, so its stack could only drop it
 * too, and it must never answer in the forwarder's place.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define FAULT_FWD_MAX_QUEUES	64

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, FAULT_FWD_MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} fault_xsks SEC(".maps");

SEC("xdp")
int fault_fwd(struct xdp_md *ctx)
{
	return bpf_redirect_map(&fault_xsks, ctx->rx_queue_index, XDP_DROP);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
