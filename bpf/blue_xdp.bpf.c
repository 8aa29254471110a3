// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * blue_xdp: parse, validate and steer RoCEv2 by destination QPN (ARCHITECTURE.md,
 * "Boundary rules" 1). Non-RoCE traffic passes to the kernel untouched, malformed
 * RoCEv2 and packets for unknown or closed QPs are dropped here, and everything else is
 * redirected to the AF_XDP socket its QP names. Every verdict is counted under exactly
 * one reason in `stats`.
 */
#include "parse.h"
#include "blue/qp_ctx.h"

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

/* Per-CPU verdict counters, indexed by enum blue_stat_reason. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BLUE_STAT__MAX);
	__type(key, __u32);
	__type(value, struct blue_stat);
} stats SEC(".maps");

/*
 * Destination QPN → QP slot → socket. The slot is named by the QPN's low bits, so the
 * owner check catches a QPN whose slot belongs to another QP; QPN 0 never matches
 * because a free slot holds qpn 0. States follow IBA 10.3.1: RESET and ERROR QPs
 * receive nothing.
 */
static __always_inline int steer(struct roce_info *ri)
{
	struct blue_qp_ctx *qp;
	__u32 slot = blue_qpn_slot(ri->dqpn);

	qp = bpf_map_lookup_elem(&qp_ctx, &slot);
	if (!qp || ri->dqpn == 0 || qp->qpn != ri->dqpn)
		return BLUE_STAT_DROP_UNKNOWN_QPN;
	if (!blue_qp_state_accepts(qp->state))
		return BLUE_STAT_DROP_QP_STATE;
	/* flags 0: an empty XSKMAP slot makes the helper return XDP_ABORTED. */
	if (bpf_redirect_map(&xsks, qp->xsk_slot, 0) != XDP_REDIRECT)
		return BLUE_STAT_DROP_NO_SOCKET;
	/* The runtime reads this concurrently through its mmap of qp_ctx. */
	__sync_fetch_and_add(&qp->xdp_rx_pkts, 1);
	return BLUE_STAT_REDIRECT;
}

static __always_inline int classify(struct hdr_cursor *c)
{
	struct roce_info ri = {};
	int r;

	r = parse_eth(c);
	if (r != BLUE_GO_ON)
		return r;
	r = parse_ipv4(c, &ri);
	if (r != BLUE_GO_ON)
		return r;
	r = parse_udp(c, &ri);
	if (r != BLUE_GO_ON)
		return r;
	r = parse_bth(c, &ri);
	if (r != BLUE_GO_ON)
		return r;
	return steer(&ri);
}

static __always_inline void count(__u32 reason, __u32 len)
{
	struct blue_stat *st = bpf_map_lookup_elem(&stats, &reason);

	if (st) {
		st->pkts += 1;
		st->bytes += len;
	}
}

SEC("xdp")
int blue_xdp(struct xdp_md *ctx)
{
	struct hdr_cursor c = {
		.pos = (void *)(long)ctx->data,
		.end = (void *)(long)ctx->data_end,
		.off = 0,
		.frame_len = ctx->data_end - ctx->data,
	};
	int reason = classify(&c);

	count(reason, c.frame_len);
	return blue_reason_action(reason);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
