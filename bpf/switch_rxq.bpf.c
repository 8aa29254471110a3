// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * Bench equipment, not part of the RDMA stack: which receive queue of the receiver a
 * switch port's packets reach (tests/bench/cc.sh, tests/lib/cc_bench.sh).
 *
 * The incast bench has one receiver host with one netdev and one libblue process per
 * netdev queue (BLUE_QUEUE, as on a host whose applications each own a queue), and
 * senders in two namespaces behind the switch. A veth delivers a frame to the peer's RX
 * queue numbered as the TX queue it was sent on, and the switch's kernel picks that TX
 * queue for a forwarded packet by skb_tx_hash(): with a recorded RX queue
 * (queue_mapping != 0, "queue + 1") it takes that, else a flow hash, which would spread
 * each sender's QPs over both receiver processes at random. So on clsact ingress of each
 * sender-facing port this program records the receiver queue that port's traffic must
 * reach: sw_rxq[ingress ifindex] = queue, stored as queue + 1. Measured here: 30 pings
 * from one port all arrived on the receiver's queue 1 with the entry set, on queue 0
 * without it, with the switch's tbf on the egress port or not.
 *
 * A port without an entry is left alone. Always TC_ACT_OK: nothing is ever dropped here.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);	/* ifindex of the switch port the packet came in on */
	__type(value, __u32);	/* the receiver's RX queue for it */
} sw_rxq SEC(".maps");

SEC("tc")
int switch_rxq(struct __sk_buff *skb)
{
	__u32 ifindex = skb->ingress_ifindex;
	__u32 *q = bpf_map_lookup_elem(&sw_rxq, &ifindex);

	if (q && *q < 0xfffe)
		skb->queue_mapping = (__u16)(*q + 1);	/* "recorded RX queue *q" */
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
