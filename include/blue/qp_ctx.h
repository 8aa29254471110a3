/* SPDX-License-Identifier: MIT */
/*
 * The live queue-pair context. One array map of these, indexed by QP slot, created
 * BPF_F_MMAPABLE: the runtime mmaps it and works on it in place, the XDP program reads
 * the steering fields from it, and `bpftool map dump` prints it with field names.
 */
#ifndef BLUE_QP_CTX_H
#define BLUE_QP_CTX_H

#include <linux/types.h>

/*
 * Slots in the map. A QPN names its slot in its low bits, so the XDP program steers with
 * one array lookup and then checks that the slot's owner is that exact QPN. QPN 0 and 1
 * are the IB special QPs: QPN 0 is never allocated; QPN 1 (the GSI, slot 1, generation
 * 0) only by blue__create_gsi_qp, for the CM agent of one process per device.
 */
#define BLUE_MAX_QP		4096u
#define BLUE_QP_SLOT_MASK	(BLUE_MAX_QP - 1)
/*
 * The XSKMAP is split by netdev queue: queue q owns entries [q * BLUE_XSK_PER_QUEUE,
 * (q + 1) * BLUE_XSK_PER_QUEUE). An AF_XDP socket receives only what arrives on the
 * queue it is bound to, so the XDP program redirects a packet only to a socket of the
 * queue the packet came in on (blue_xsk_queue), and each process that owns a queue
 * hands out slots from that queue's range without asking anyone.
 */
#define BLUE_XSK_PER_QUEUE	64u	/* AF_XDP sockets per netdev queue */
#define BLUE_MAX_QUEUES		16u	/* netdev queues blue serves */
#define BLUE_MAX_XSK		(BLUE_XSK_PER_QUEUE * BLUE_MAX_QUEUES)	/* XSKMAP entries */

static inline __u32 blue_qpn_slot(__u32 qpn)
{
	return qpn & BLUE_QP_SLOT_MASK;
}

/* The netdev queue whose socket owns XSKMAP entry @xsk_slot. */
static inline __u32 blue_xsk_queue(__u32 xsk_slot)
{
	return xsk_slot / BLUE_XSK_PER_QUEUE;
}

/* Same numbering as enum ibv_qp_state. */
enum blue_qp_state {
	BLUE_QPS_RESET	= 0,
	BLUE_QPS_INIT	= 1,
	BLUE_QPS_RTR	= 2,
	BLUE_QPS_RTS	= 3,
	BLUE_QPS_SQD	= 4,
	BLUE_QPS_SQE	= 5,
	BLUE_QPS_ERR	= 6,
};

enum blue_qp_type {
	BLUE_QPT_NONE	= 0,
	BLUE_QPT_RC	= 2,	/* IBV_QPT_RC */
	BLUE_QPT_UC	= 3,
	BLUE_QPT_UD	= 4,
};

/* States in which the XDP program hands a QP's packets to userspace (IBA 10.3.1). */
static inline int blue_qp_state_accepts(__u8 state)
{
	return state == BLUE_QPS_INIT || state == BLUE_QPS_RTR ||
	       state == BLUE_QPS_RTS || state == BLUE_QPS_SQD || state == BLUE_QPS_SQE;
}

struct blue_qp_ctx {
	/* identity and steering: written by the flow table, read by XDP */
	__u32	qpn;		/* owner of this slot; 0 when free */
	__u32	xsk_slot;	/* XSKMAP index of the socket that receives this QP */
	__u8	state;		/* enum blue_qp_state */
	__u8	type;		/* enum blue_qp_type */
	__u8	path_mtu;	/* IB MTU enum: 1=256 .. 5=4096 */
	__u8	last_nak_syndrome;
	__u32	peer_qpn;
	__u32	peer_ip;	/* IPv4, network byte order */
	__u32	local_ip;	/* IPv4, network byte order */

	/* requester */
	__u32	sq_psn;		/* next PSN to send */
	__u32	una_psn;	/* oldest unacknowledged PSN */
	__u32	outstanding;	/* WRs posted and not yet completed */
	__u32	retry_left;

	/* responder */
	__u32	rq_psn;		/* expected receive PSN */
	__u32	msn;
	__u32	last_nak_psn;
	__u32	rnr_left;

	/* timer and pacing */
	__u32	timer_inflight;	/* PSNs in flight when the ACK timer was last armed (the
				 * LINEAR timer's k term) */
	__u32	rate_mbps;	/* the rate the QP is paced at (DCQCN); 0 when unpaced */
	__u64	timer_deadline_ns;	/* CLOCK_MONOTONIC; 0 when disarmed */

	/* counters */
	__u64	retransmits;
	__u64	naks_sent;
	__u64	naks_rcvd;
	__u64	rnr_events;
	__u64	cnp_rcvd;	/* RoCEv2 CNPs received for this QP's sends */
	__u64	tx_pkts;
	__u64	tx_bytes;
	__u64	rx_pkts;
	__u64	rx_bytes;
	__u64	xdp_rx_pkts;	/* counted by the XDP program when it steers */

	/* retransmission policy (blue_qp_set_retx) */
	__u64	retx_pkts;	/* request packets sent again, under either policy */
	__u32	sr_held;	/* requests held past a hole (selective retransmission) */
	__u8	retx_policy;	/* enum blue_retx_policy: 0 go-back-N, 1 selective */
	__u8	retx_timer;	/* enum blue_retx_timer: 0 IBA 4.096us*2^t, 1 base+k*cwnd */
	/*
	 * The QP's P_Key (host order), from its pkey_index, written before the state
	 * leaves RESET; XDP drops a packet whose BTH P_Key does not match it
	 * (blue_pkey_match). 0 in RESET: the invalid P_Key matches nothing.
	 */
	__u16	pkey;
	/*
	 * The process that claimed the slot, as its PID namespace numbers it (0 for a
	 * moment while it claims), for people: whether the owner lives is told by a lock
	 * it holds on the pin directory (runtime/slot_owner.c), not by this PID.
	 */
	__u32	owner_pid;
	__u32	qkey;		/* UD: the Q_Key it accepts and sends with; 0 for RC */

	/* congestion control (runtime/cc*.c; the parameters in include/blue/cc.h) */
	__u8	cc_algo;	/* enum blue_cc_algo: 0 none, 1 DCQCN, 2 window */
	__u8	ecn;		/* 1: sends ECT(0), and answers CE with CNPs */
	__u16	pad2;
	__u32	cwnd;		/* congestion window in packets (window); 0: no window */
	__u32	alpha;		/* DCQCN's alpha in 1/1024 */
	__u32	target_rate_mbps; /* DCQCN's target rate */
	__u32	srtt_ns;	/* smoothed RTT the requester measured (send to ACK) */
	__u32	rtt_ns;		/* the last RTT sample */
	__u64	cnp_sent;	/* CNPs sent, answering CE-marked requests */
	__u64	ecn_ce_rcvd;	/* packets received with ECN CE */
	__u64	cc_cuts;	/* rate or window decreases */
	__u32	ud_bad_qkey;	/* UD: requests dropped for a Q_Key not the QP's */
	__u32	ud_no_wqe;	/* UD: requests dropped with no receive WQE posted */
	/* UC (runtime/resp_uc.c): requests dropped, never answered (IBA 9.7.5.1, 9.8.1) */
	__u32	uc_drop_seq;	/* a PSN gap or an opcode out of sequence, and the rest of
				 * the message they broke */
	__u32	uc_no_wqe;	/* no receive WQE posted (UC has no RNR), or no CQ room */
	__u32	uc_drop_access;	/* WRITEs the QP's rights or an R_Key refused */
	__u32	uc_drop_len;	/* lengths that do not fit: packet, RETH, receive buffer */
	/* the peer's IPv6 address when the QP talks RoCEv2 over IPv6 (peer_ip is 0 then);
	 * all zeros over IPv4. For bluectl: the engine builds frames from its GIDs */
	__u8	peer_ip6[16];
	__u64	reserved[7];	/* room to grow without changing the size */
};

_Static_assert(sizeof(struct blue_qp_ctx) == 320, "blue_qp_ctx layout changed");

#endif /* BLUE_QP_CTX_H */
