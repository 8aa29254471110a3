/* SPDX-License-Identifier: MIT */
/*
 * XDP verdict reasons. One enum: it indexes the per-CPU stats map and is the metric label
 * that bluectl prints. Every packet the XDP program sees is counted under exactly one.
 */
#ifndef BLUE_STATS_H
#define BLUE_STATS_H

#include <linux/types.h>

enum blue_stat_reason {
	/* XDP_PASS: not ours, handed to the kernel untouched */
	BLUE_STAT_PASS_NON_IP = 0,	/* ARP and other ethertypes */
	BLUE_STAT_PASS_IPV6,		/* IPv6 with an extension header (RoCEv2 has none) */
	BLUE_STAT_PASS_NON_UDP,		/* TCP, ICMP, ... */
	BLUE_STAT_PASS_NON_ROCE,	/* UDP to a port other than 4791 */
	/* XDP_REDIRECT: steered to the QP's AF_XDP socket */
	BLUE_STAT_REDIRECT,
	/* XDP_DROP: malformed or unwanted RoCEv2 */
	BLUE_STAT_DROP_TRUNC_ETH,	/* shorter than an Ethernet (+VLAN) header */
	BLUE_STAT_DROP_TRUNC_IP,	/* IPv4 (IPv6) header runs past the frame */
	BLUE_STAT_DROP_BAD_IP_HDR,	/* IHL < 5, IPv4 total / IPv6 payload length inconsistent */
	BLUE_STAT_DROP_IP_FRAGMENT,	/* MF set or fragment offset != 0 */
	BLUE_STAT_DROP_TRUNC_UDP,	/* UDP header runs past the frame */
	BLUE_STAT_DROP_BAD_UDP_LEN,	/* UDP length < 8 or beyond the IP payload */
	BLUE_STAT_DROP_TRUNC_BTH,	/* UDP payload shorter than a BTH */
	BLUE_STAT_DROP_BAD_VERSION,	/* BTH TVer != 0 */
	BLUE_STAT_DROP_BAD_OPCODE,	/* opcode not served */
	BLUE_STAT_DROP_BAD_LENGTH,	/* headers + pad + ICRC exceed the UDP length */
	BLUE_STAT_DROP_UNKNOWN_QPN,	/* no QP owns this QPN */
	BLUE_STAT_DROP_QP_STATE,	/* QP in RESET or ERROR */
	BLUE_STAT_DROP_NO_SOCKET,	/* QP has no AF_XDP socket bound */
	BLUE_STAT_DROP_WRONG_QUEUE,	/* came in on a netdev queue other than its QP's socket's */
	BLUE_STAT_DROP_BAD_PKEY,	/* BTH P_Key does not match the QP's (IBA 10.9.3) */
	BLUE_STAT_DROP_MCAST_UNJOINED,	/* DestQP 0xFFFFFF to a group no engine on this queue
					 * joined, or to a unicast address (mcast.h) */
	BLUE_STAT__MAX,
};

/* Value of one stats map entry (per CPU). */
struct blue_stat {
	__u64	pkts;
	__u64	bytes;
};

_Static_assert(sizeof(struct blue_stat) == 16, "blue_stat layout changed");

static inline const char *blue_stat_name(__u32 r)
{
	switch (r) {
	case BLUE_STAT_PASS_NON_IP:		return "pass_non_ip";
	case BLUE_STAT_PASS_IPV6:		return "pass_ipv6";
	case BLUE_STAT_PASS_NON_UDP:		return "pass_non_udp";
	case BLUE_STAT_PASS_NON_ROCE:		return "pass_non_roce";
	case BLUE_STAT_REDIRECT:		return "redirect";
	case BLUE_STAT_DROP_TRUNC_ETH:		return "drop_trunc_eth";
	case BLUE_STAT_DROP_TRUNC_IP:		return "drop_trunc_ip";
	case BLUE_STAT_DROP_BAD_IP_HDR:		return "drop_bad_ip_hdr";
	case BLUE_STAT_DROP_IP_FRAGMENT:	return "drop_ip_fragment";
	case BLUE_STAT_DROP_TRUNC_UDP:		return "drop_trunc_udp";
	case BLUE_STAT_DROP_BAD_UDP_LEN:	return "drop_bad_udp_len";
	case BLUE_STAT_DROP_TRUNC_BTH:		return "drop_trunc_bth";
	case BLUE_STAT_DROP_BAD_VERSION:	return "drop_bad_version";
	case BLUE_STAT_DROP_BAD_OPCODE:		return "drop_bad_opcode";
	case BLUE_STAT_DROP_BAD_LENGTH:		return "drop_bad_length";
	case BLUE_STAT_DROP_UNKNOWN_QPN:	return "drop_unknown_qpn";
	case BLUE_STAT_DROP_QP_STATE:		return "drop_qp_state";
	case BLUE_STAT_DROP_NO_SOCKET:		return "drop_no_socket";
	case BLUE_STAT_DROP_WRONG_QUEUE:	return "drop_wrong_queue";
	case BLUE_STAT_DROP_BAD_PKEY:		return "drop_bad_pkey";
	case BLUE_STAT_DROP_MCAST_UNJOINED:	return "drop_mcast_unjoined";
	default:				return "unknown";
	}
}

#endif /* BLUE_STATS_H */
