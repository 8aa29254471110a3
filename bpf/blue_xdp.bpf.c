// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * blue_xdp: parse, validate and steer RoCEv2 by destination QPN (ARCHITECTURE.md,
 * "Boundary rules" 1). Non-RoCE traffic passes to the kernel untouched, malformed
 * RoCEv2 and packets for unknown or closed QPs are dropped here, and everything else is
 * redirected to the AF_XDP socket its QP names. Every verdict is counted under exactly
 * one reason in `stats`. With diagnostics on (`bluectl diag on`), every drop is also
 * reported as an event in the `drop_events` ring buffer.
 */
#include "parse.h"
#include "blue/dev_stats.h"
#include "blue/diag.h"
#include "blue/tune.h"
#include "blue/qp_ctx.h"
#include "blue/mcast.h"

/* The live QP context, shared with the runtime through mmap (include/blue/qp_ctx.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, BLUE_MAX_QP);
	__type(key, __u32);
	__type(value, struct blue_qp_ctx);
} qp_ctx SEC(".maps");

/* AF_XDP sockets, indexed by blue_qp_ctx.xsk_slot. */
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, BLUE_MAX_XSK);
	__type(key, __u32);
	__type(value, __u32);
} xsks SEC(".maps");

/*
 * Multicast groups: {group, queue} -> the socket of the engine that joined it on that
 * queue (include/blue/mcast.h), written by the runtime on attach and detach.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BLUE_MCAST_MAP_ENTRIES);
	__type(key, struct blue_mcast_key);
	__type(value, struct blue_mcast_val);
} mcast SEC(".maps");

/* Per-CPU verdict counters, indexed by enum blue_stat_reason. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BLUE_STAT__MAX);
	__type(key, __u32);
	__type(value, struct blue_stat);
} stats SEC(".maps");

/*
 * Device statistics and histograms, one entry per netdev queue. Created here so the
 * loader pins it with the rest, written only by the runtime through its mmap
 * (include/blue/dev_stats.h).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, BLUE_MAX_QUEUES);
	__type(key, __u32);
	__type(value, struct blue_dev_stats);
} dev_stats SEC(".maps");

/* The diagnostics switch (include/blue/diag.h); off after attach. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct blue_diag_cfg);
} diag SEC(".maps");

/*
 * Tuning (include/blue/tune.h): written by bluectl, read by the engines through their
 * mmap. The XDP program never touches it; it is declared here so that it is created,
 * with BTF, and pinned with the rest.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, BLUE_TUNE_ENTRIES);
	__type(key, __u32);
	__type(value, struct blue_tune_entry);
} tune SEC(".maps");

/* Drop events, written only while diag has BLUE_DIAG_DROPS; read by `bluectl drops`. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, BLUE_DROP_RING_BYTES);
} drop_events SEC(".maps");

/*
 * Destination QPN → QP slot → socket. The slot is named by the QPN's low bits, so the
 * owner check catches a QPN whose slot belongs to another QP; QPN 0 never matches
 * because a free slot holds qpn 0. States follow IBA 10.3.1: RESET and ERROR QPs
 * receive nothing. The BTH P_Key must match the QP's (IBA 10.9.3).
 */
/*
 * DestQP 0xFFFFFF: a multicast datagram (IBA 10.5). It goes to the socket of the engine
 * that joined its group on this queue, whichever of that engine's UD QPs are attached
 * (the engine hands a copy to each: runtime/mcast.c). Sent to a unicast address, or to
 * a group nobody here joined, it is dropped: the NIC lets every group's frames in that
 * the host joined, blue's or not.
 */
static __always_inline int steer_mcast(struct roce_info *ri)
{
	struct blue_mcast_key key = { .queue = ri->rx_queue };
	struct blue_mcast_val *v;

	if (!ri->dst_mcast)
		return BLUE_STAT_DROP_MCAST_UNJOINED;
	__builtin_memcpy(key.gid, ri->dgid, 16);
	v = bpf_map_lookup_elem(&mcast, &key);
	if (!v)
		return BLUE_STAT_DROP_MCAST_UNJOINED;
	if (bpf_redirect_map(&xsks, v->xsk_slot, 0) != XDP_REDIRECT)
		return BLUE_STAT_DROP_NO_SOCKET;
	return BLUE_STAT_REDIRECT;
}

static __always_inline int steer(struct roce_info *ri)
{
	struct blue_qp_ctx *qp;
	__u32 slot = blue_qpn_slot(ri->dqpn);

	if (ri->dqpn == BLUE_MCAST_QPN)
		return steer_mcast(ri);

	qp = bpf_map_lookup_elem(&qp_ctx, &slot);
	if (!qp || ri->dqpn == 0 || qp->qpn != ri->dqpn)
		return BLUE_STAT_DROP_UNKNOWN_QPN;
	if (!blue_qp_state_accepts(qp->state))
		return BLUE_STAT_DROP_QP_STATE;
	/* the P_Key check of rxe's check_keys: a table lookup against the QP's context */
	if (!blue_pkey_match(ri->pkey, qp->pkey))
		return BLUE_STAT_DROP_BAD_PKEY;
	/*
	 * A socket takes only frames of the queue it is bound to: the kernel would drop a
	 * redirect to another queue's socket after we had counted it. Say so here instead
	 * (a NIC's RSS, or a peer sending on another veth queue, put it here).
	 */
	if (qp->xsk_slot < BLUE_MAX_XSK && blue_xsk_queue(qp->xsk_slot) != ri->rx_queue)
		return BLUE_STAT_DROP_WRONG_QUEUE;
	/* flags 0: an empty XSKMAP slot makes the helper return XDP_ABORTED. */
	if (bpf_redirect_map(&xsks, qp->xsk_slot, 0) != XDP_REDIRECT)
		return BLUE_STAT_DROP_NO_SOCKET;
	/* The runtime reads this concurrently through its mmap of qp_ctx. */
	__sync_fetch_and_add(&qp->xdp_rx_pkts, 1);
	return BLUE_STAT_REDIRECT;
}

static __always_inline int classify(struct hdr_cursor *c, struct roce_info *ri)
{
	__u16 l3 = 0;
	int r;

	r = parse_eth(c, &l3);
	if (r != BLUE_GO_ON)
		return r;
	r = l3 == ETH_P_IPV6 ? parse_ipv6(c, ri) : parse_ipv4(c, ri);
	if (r != BLUE_GO_ON)
		return r;
	r = parse_udp(c, ri);
	if (r != BLUE_GO_ON)
		return r;
	r = parse_bth(c, ri);
	if (r != BLUE_GO_ON)
		return r;
	return steer(ri);
}

static __always_inline void count(__u32 reason, __u32 len)
{
	struct blue_stat *st = bpf_map_lookup_elem(&stats, &reason);

	if (st) {
		st->pkts += 1;
		st->bytes += len;
	}
}

/*
 * Only reached for drops, which are rare and already off the fast path: the redirect
 * path pays one compare against the reason, and diag off costs one array lookup (the
 * verifier inlines it) and a branch here.
 */
static __noinline void drop_event(struct xdp_md *ctx, __u32 reason, __u32 len, __u32 dqpn)
{
	struct blue_drop_event ev = {};
	struct blue_diag_cfg *d;
	__u32 zero = 0;

	d = bpf_map_lookup_elem(&diag, &zero);
	if (!d || !(d->flags & BLUE_DIAG_DROPS))
		return;
	ev.ts_ns = bpf_ktime_get_ns();
	ev.reason = reason;
	ev.len = len;
	ev.ifindex = ctx->ingress_ifindex;
	ev.rx_queue = ctx->rx_queue_index;
	ev.dqpn = dqpn;
	if (bpf_ringbuf_output(&drop_events, &ev, sizeof(ev), 0))
		__sync_fetch_and_add(&d->drop_events_lost, 1);
	else
		__sync_fetch_and_add(&d->drop_events, 1);
}

/*
 * "xdp.frags" (BPF_F_XDP_HAS_FRAGS): the program copes with multi-buffer frames, which
 * is what lets it attach to a veth whose MTU exceeds a page (IB path MTU 4096 needs a
 * ~4.2 KB frame). The headers the parse helpers read always sit in the linear part
 * (the drivers put at least the first page there); only payload and ICRC may lie in a
 * frag, and neither is read here. So data_end bounds the reads, while the lengths the
 * headers claim are checked against the whole frame, frags included.
 */
SEC("xdp.frags")
int blue_xdp(struct xdp_md *ctx)
{
	struct hdr_cursor c = {
		.pos = (void *)(long)ctx->data,
		.end = (void *)(long)ctx->data_end,
		.off = 0,
		.frame_len = (__u32)bpf_xdp_get_buff_len(ctx),
	};
	struct roce_info ri = { .rx_queue = ctx->rx_queue_index };
	int reason = classify(&c, &ri);

	count(reason, c.frame_len);
	if (reason >= BLUE_STAT_DROP_TRUNC_ETH)	/* the drops follow REDIRECT in the enum */
		drop_event(ctx, reason, c.frame_len, ri.dqpn);
	return blue_reason_action(reason);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
