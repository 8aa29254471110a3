// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * The bottleneck switch's ECN marker and tail drop, test and bench equipment: tc
 * clsact egress on the switch's receiver-facing port, in front of the tbf qdisc that
 * paces that port; include/blue/switch.h says why it reads tbf's backlog.
 *
 * Per packet, one decision on the depth the packet finds (the bytes tbf holds: the
 * queue it joins, as a switch's egress queue length at enqueue):
 *	depth + len > buffer		tail drop (TC_ACT_SHOT), counted
 *	else				on to tbf; RED on depth:
 *	   depth <= kmin		no mark
 *	   kmin < depth <= kmax		mark with probability pmax * (depth-kmin)/(kmax-kmin)
 *	   depth > kmax			mark
 * A mark turns ECT(0)/ECT(1) into CE; a Not-ECT packet or a non-IPv4 frame is never
 * marked (counted as notect_hot when RED chose it), a CE one stays CE.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "blue/switch.h"

#define ECN_MASK	0x3
#define ECN_NOT_ECT	0x0
#define ECN_CE		0x3

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct blue_sw_cfg);
} sw_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct blue_sw_state);
} sw_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BLUE_SW_RING_SLOTS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct blue_sw_sample);
} sw_ring SEC(".maps");

/*
 * The few kernel fields read, relocated against the running kernel's BTF (CO-RE): the
 * port's root qdisc and its byte backlog. tbf keeps its own qstats (it is not a
 * lockless qdisc), updated at every enqueue and dequeue.
 */
struct gnet_stats_queue___sw {
	__u32 qlen;
	__u32 backlog;
} __attribute__((preserve_access_index));

struct Qdisc___sw {
	struct gnet_stats_queue___sw qstats;
} __attribute__((preserve_access_index));

struct net_device___sw {
	struct Qdisc___sw *qdisc;
} __attribute__((preserve_access_index));

struct sk_buff___sw {
	struct net_device___sw *dev;
} __attribute__((preserve_access_index));

extern void *bpf_cast_to_kern_ctx(void *) __ksym;

/* The bytes queued in @ctx's device's root qdisc now (0 without one). */
static __always_inline __u64 queue_depth(struct __sk_buff *ctx)
{
	struct sk_buff___sw *skb = bpf_cast_to_kern_ctx(ctx);
	struct net_device___sw *dev = skb->dev;
	struct Qdisc___sw *q;

	if (!dev)
		return 0;
	q = dev->qdisc;
	return q ? q->qstats.backlog : 0;
}

/* What the locked step decided, for the work done after the lock (no helpers inside). */
enum sw_verdict {
	SW_PASS,
	SW_MARK,
	SW_DROP,
};

/* The IPv4 header of @skb, or NULL when the frame is not IPv4 (never marked). */
static __always_inline struct iphdr *pkt_ipv4(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *iph = data + sizeof(*eth);

	if ((void *)(iph + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP))
		return NULL;
	if (iph->version != 4 || iph->ihl < 5)
		return NULL;
	return iph;
}

/* RED on the depth a packet found: see the table at the top. */
static __always_inline int red_chooses(const struct blue_sw_cfg *c, __u64 depth, __u32 rnd)
{
	__u64 thresh;

	if (depth <= c->kmin_bytes)
		return 0;
	if (depth > c->kmax_bytes)
		return 1;
	/* kmin < depth <= kmax, so kmax > kmin; 2^32 * 2^32 would not fit, (2^32-1)^2 does */
	thresh = (__u64)c->pmax * (depth - c->kmin_bytes) / (c->kmax_bytes - c->kmin_bytes);
	return rnd < thresh;
}

/* Fold a sample of @depth into the record slot @slot; sets *flush to a finished slot. */
static __always_inline void record_depth(struct blue_sw_state *st, __u64 slot, __u64 depth,
					 struct blue_sw_sample *flush)
{
	if (slot > st->cur_slot) {
		flush->slot = st->cur_slot;
		flush->max_depth = st->cur_max;
		st->cur_slot = slot;
		st->cur_max = depth;
	} else if (depth > st->cur_max) {
		/* same slot (or an earlier one, when another CPU's clock read was later) */
		st->cur_max = depth;
	}
}

/*
 * The locked step: decide on @depth and account. @ecn is the packet's codepoint, or -1
 * for a non-IPv4 frame. Runs under st->lock, so it calls no helpers.
 */
static __always_inline enum sw_verdict queue_step(struct blue_sw_state *st,
						  const struct blue_sw_cfg *c, __u64 depth,
						  __u64 slot, __u32 len, int ecn, __u32 rnd,
						  struct blue_sw_sample *flush)
{
	record_depth(st, slot, depth, flush);
	if (depth > st->max_depth)
		st->max_depth = depth;

	if (depth + len > c->buffer_bytes) {
		st->dropped++;
		st->dropped_bytes += len;
		if (depth < st->min_drop_depth)
			st->min_drop_depth = depth;
		return SW_DROP;
	}
	st->pkts++;
	st->bytes += len;
	if (ecn == ECN_CE)
		st->ce_in++;
	if (!(c->flags & BLUE_SW_F_MARK) || !red_chooses(c, depth, rnd))
		return SW_PASS;
	if (ecn < 0 || ecn == ECN_NOT_ECT) {
		st->notect_hot++;
		return SW_PASS;
	}
	if (ecn == ECN_CE)
		return SW_PASS;
	st->marked++;
	if (depth < st->min_mark_depth)
		st->min_mark_depth = depth;
	if (depth > st->max_mark_depth)
		st->max_mark_depth = depth;
	return SW_MARK;
}

/* ECT(x) -> CE, with the header checksum updated incrementally (RFC 1624, eqn. 3). */
static __always_inline void mark_ce(struct iphdr *iph)
{
	__u16 *word = (__u16 *)iph;	/* version, IHL, TOS: the word the TOS is in */
	__u16 old = *word;
	__u32 sum;

	iph->tos |= ECN_CE;
	sum = (__u16)~bpf_ntohs(iph->check) + (__u16)~bpf_ntohs(old) + bpf_ntohs(*word);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	iph->check = bpf_htons(~sum & 0xffff);
}

/* Finish a record slot: its entry in the ring (written by this CPU only). */
static __always_inline void flush_slot(const struct blue_sw_sample *s)
{
	struct blue_sw_sample *e;
	__u32 idx;

	if (!s->slot)
		return;
	idx = (s->slot - 1) & (BLUE_SW_RING_SLOTS - 1);
	e = bpf_map_lookup_elem(&sw_ring, &idx);
	if (!e)
		return;
	e->max_depth = s->max_depth;
	e->slot = s->slot;
}

SEC("tc")
int switch_ecn(struct __sk_buff *skb)
{
	struct blue_sw_sample flush = {};
	struct blue_sw_state *st;
	struct blue_sw_cfg *cfgp, c;
	enum sw_verdict v;
	struct iphdr *iph;
	__u32 key = 0, rnd;
	__u64 now, slot, depth;
	int ecn;

	cfgp = bpf_map_lookup_elem(&sw_cfg, &key);
	st = bpf_map_lookup_elem(&sw_state, &key);
	if (!cfgp || !st)
		return TC_ACT_OK;
	c = *cfgp;
	/* not configured yet: a plain port (blue_switch config sets a buffer) */
	if (!c.buffer_bytes)
		return TC_ACT_OK;
	iph = pkt_ipv4(skb);
	ecn = iph ? (iph->tos & ECN_MASK) : -1;
	now = bpf_ktime_get_ns();
	slot = (now > c.epoch_ns ? (now - c.epoch_ns) / BLUE_SW_SLOT_NS : 0) + 1;
	rnd = bpf_get_prandom_u32();
	depth = queue_depth(skb);

	bpf_spin_lock(&st->lock);
	v = queue_step(st, &c, depth, slot, skb->len, ecn, rnd, &flush);
	bpf_spin_unlock(&st->lock);

	flush_slot(&flush);
	if (v == SW_DROP)
		return TC_ACT_SHOT;
	if (v == SW_MARK && iph) {
		/* re-derive the pointer: the verifier forgets packet bounds across the lock */
		iph = pkt_ipv4(skb);
		if (iph)
			mark_ce(iph);
	}
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
