// SPDX-License-Identifier: MIT
/*
 * blue_xdp, one table row per case: {what, packet, verdict, stats reason, map effect}.
 * Each row runs the real object once through BPF_PROG_RUN and checks
 *   - the XDP verdict,
 *   - the frame comes out byte for byte as it went in (the program never rewrites),
 *   - its stats reason went up by exactly one packet of the frame's length, and no other
 *     reason moved,
 *   - xdp_rx_pkts of the destination QP went up by one on REDIRECT, and no QP's
 *     counter moved otherwise.
 * A REDIRECT row then runs again with live frames and checks the frame lands, intact,
 * in the RX ring of the AF_XDP socket its QP names, and not in the other one.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <netinet/in.h>
#include <string.h>

#include "blue/mcast.h"
#include "blue/qp_ctx.h"
#include "blue/stats.h"
#include "blue/wire.h"
#include "fixture.h"
#include "pkt.h"

/* The QP table every row runs against. */
#define QPN_A		0x000011u	/* RTS, socket 0 */
#define QPN_B		0x000021u	/* RTS, socket 1 */
#define QPN_RESET	0x000013u
#define QPN_ERR		0x000014u
#define QPN_NOSOCK	0x000015u	/* XSKMAP slot 5: empty */
#define QPN_BADXSK	0x000016u	/* XSKMAP slot 5000: beyond the map */
#define QPN_OTHERQ	0x00001bu	/* a socket of queue 1; the rows come in on queue 0 */
#define QPN_INIT	0x000017u
#define QPN_RTR		0x000018u
#define QPN_SQD		0x000019u
#define QPN_SQE		0x00001au
#define QPN_TOP		0xabcfffu	/* lives in the last slot, 0xfff */
#define QPN_UNKNOWN	0x000077u	/* its slot is free */
#define QPN_ALIAS	0x001011u	/* slot 0x11, which QPN_A owns */
#define QPN_LIMITED	0x00001cu	/* P_Key 0x7fff: a limited member of the default partition */
#define QPN_PART	0x00001du	/* P_Key 0x8123: a full member of partition 0x123 */
#define QPN_GSI		0x000001u	/* QP1, the GSI (slot 1, generation 0): the CM agent's */

#define PK_FULL		BLUE_DEFAULT_PKEY

/*
 * The multicast map every row runs against (include/blue/mcast.h): groups joined on
 * queue 0 (the rows come in on queue 0) go to socket 0 or 1; 239.1.2.5 only on queue 1.
 */
#define MC_JOINED	0xef010203u	/* 239.1.2.3 -> socket 0 */
#define MC_UNJOINED	0xef010204u	/* 239.1.2.4: nobody */
#define MC_OTHERQ	0xef010205u	/* 239.1.2.5: joined on queue 1 only */
static const uint8_t grp6_joined[16] = { 0xff, 0x0e, [12] = 0, 0x01, 0x02, 0x03 };
static const uint8_t grp6_unjoined[16] = { 0xff, 0x0e, [12] = 0, 0x01, 0x02, 0x09 };

static void mc_gid4(uint8_t gid[16], uint32_t ip)
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	gid[12] = ip >> 24;
	gid[13] = (uint8_t)(ip >> 16);
	gid[14] = (uint8_t)(ip >> 8);
	gid[15] = (uint8_t)ip;
}

static const struct {
	uint32_t	qpn;
	uint32_t	xsk_slot;
	uint8_t		state;
	uint16_t	pkey;
} qp_table[] = {
	{ QPN_A,	0,   BLUE_QPS_RTS, PK_FULL },
	{ QPN_B,	1,   BLUE_QPS_RTS, PK_FULL },
	{ QPN_RESET,	0,   BLUE_QPS_RESET, PK_FULL },
	{ QPN_ERR,	0,   BLUE_QPS_ERR, PK_FULL },
	{ QPN_NOSOCK,	5,   BLUE_QPS_RTS, PK_FULL },
	{ QPN_BADXSK,	5000, BLUE_QPS_RTS, PK_FULL },
	{ QPN_OTHERQ,	BLUE_XSK_PER_QUEUE, BLUE_QPS_RTS, PK_FULL },
	{ QPN_INIT,	0,   BLUE_QPS_INIT, PK_FULL },
	{ QPN_RTR,	0,   BLUE_QPS_RTR, PK_FULL },
	{ QPN_SQD,	0,   BLUE_QPS_SQD, PK_FULL },
	{ QPN_SQE,	0,   BLUE_QPS_SQE, PK_FULL },
	{ QPN_TOP,	0,   BLUE_QPS_RTS, PK_FULL },
	{ QPN_LIMITED,	0,   BLUE_QPS_RTS, 0x7fff },
	{ QPN_PART,	0,   BLUE_QPS_RTS, 0x8123 },
	{ QPN_GSI,	1,   BLUE_QPS_RTS, PK_FULL },
};
#define N_QP	(sizeof(qp_table) / sizeof(qp_table[0]))

enum row_effect {
	EFF_NONE,	/* no QP context changes */
	EFF_RX_PKTS,	/* the destination QP's xdp_rx_pkts goes up by one */
};

struct xdp_row {
	const char	*what;
	void		(*build)(struct pkt_spec *s);
	uint32_t	verdict;
	uint32_t	reason;
	enum row_effect	effect;
	int		sock;		/* REDIRECT: the socket the frame must land in */
};

/* One packet builder per row: the default RC SEND Only to QPN_A, then these changes. */
#define B(name, ...) static void name(struct pkt_spec *s) { __VA_ARGS__; }

B(send_only, (void)s)
B(send_first, s->opcode = BLUE_OP_RC_SEND_FIRST)
B(send_middle, s->opcode = BLUE_OP_RC_SEND_MIDDLE)
B(send_last, s->opcode = BLUE_OP_RC_SEND_LAST)
B(send_last_imm, s->opcode = BLUE_OP_RC_SEND_LAST_IMM)
B(send_only_imm, s->opcode = BLUE_OP_RC_SEND_ONLY_IMM)
B(send_last_inv, s->opcode = BLUE_OP_RC_SEND_LAST_INV)
B(send_only_inv, s->opcode = BLUE_OP_RC_SEND_ONLY_INV)
B(write_first, s->opcode = BLUE_OP_RC_WRITE_FIRST)
B(write_middle, s->opcode = BLUE_OP_RC_WRITE_MIDDLE)
B(write_last_imm, s->opcode = BLUE_OP_RC_WRITE_LAST_IMM)
B(write_only, s->opcode = BLUE_OP_RC_WRITE_ONLY)
B(write_only_imm, s->opcode = BLUE_OP_RC_WRITE_ONLY_IMM)
B(read_req, s->opcode = BLUE_OP_RC_READ_REQUEST; s->payload_len = 0)
B(read_resp_first, s->opcode = BLUE_OP_RC_READ_RESPONSE_FIRST)
B(read_resp_middle, s->opcode = BLUE_OP_RC_READ_RESPONSE_MIDDLE)
B(read_resp_last, s->opcode = BLUE_OP_RC_READ_RESPONSE_LAST)
B(read_resp_only, s->opcode = BLUE_OP_RC_READ_RESPONSE_ONLY)
B(ack, s->opcode = BLUE_OP_RC_ACKNOWLEDGE; s->payload_len = 0)
B(sr_nak, s->opcode = BLUE_OP_RC_ACKNOWLEDGE; s->payload_len = 0;
  s->aeth = (uint32_t)BLUE_NAK_SR_HOLE << 24 | 3)
B(cmp_swap, s->opcode = BLUE_OP_RC_COMPARE_SWAP; s->payload_len = 0)
B(fetch_add, s->opcode = BLUE_OP_RC_FETCH_ADD; s->payload_len = 0)
B(atomic_ack, s->opcode = BLUE_OP_RC_ATOMIC_ACKNOWLEDGE; s->payload_len = 0)
B(flush, s->opcode = BLUE_OP_RC_FLUSH; s->payload_len = 0)
B(atomic_write, s->opcode = BLUE_OP_RC_ATOMIC_WRITE; s->payload_len = 8)
B(ud_send, s->opcode = BLUE_OP_UD_SEND_ONLY)
B(ud_send_imm, s->opcode = BLUE_OP_UD_SEND_ONLY_IMM)
B(uc_send, s->opcode = BLUE_OP_UC_SEND_ONLY)
B(uc_write, s->opcode = BLUE_OP_UC_WRITE_ONLY)
B(cnp, s->opcode = BLUE_OP_CNP; s->payload_len = 0; s->becn = true)
B(padded, s->payload_len = 61; s->pad = 3)
B(becn_send, s->becn = true)
B(ce_send, s->ce = true)
B(ce_write, s->ce = true; s->opcode = BLUE_OP_RC_WRITE_FIRST)
B(ce_ack, s->ce = true; s->opcode = BLUE_OP_RC_ACKNOWLEDGE; s->payload_len = 0)
B(vlan_q, s->vlan_tags = 1)
B(vlan_ad, s->vlan_tags = 1; s->vlan_tpid = ETH_P_8021AD)
B(ip_opt_4, s->ihl = 6)
B(ip_opt_40, s->ihl = 15)
B(eth_trailer, s->opcode = BLUE_OP_RC_ACKNOWLEDGE; s->payload_len = 0; s->trailer = 8)
B(df_clear, s->frag = 0)
B(to_qp_b, s->dqpn = QPN_B)
B(to_init, s->dqpn = QPN_INIT)
B(to_rtr, s->dqpn = QPN_RTR)
B(to_sqd, s->dqpn = QPN_SQD)
B(to_sqe, s->dqpn = QPN_SQE)
B(to_top, s->dqpn = QPN_TOP)

/* UD to a group: DestQP 0xFFFFFF (IBA 10.5) */
#define MC	s->opcode = BLUE_OP_UD_SEND_ONLY; s->dqpn = BLUE_MCAST_QPN
B(mc_joined, MC; s->daddr = MC_JOINED)
B(mc_joined_imm, MC; s->daddr = MC_JOINED; s->opcode = BLUE_OP_UD_SEND_ONLY_IMM)
B(mc_unjoined, MC; s->daddr = MC_UNJOINED)
B(mc_otherq, MC; s->daddr = MC_OTHERQ)
B(mc_unicast, MC)
B(mc_ucast_qpn, s->opcode = BLUE_OP_UD_SEND_ONLY; s->daddr = MC_JOINED)
B(mc6_joined, MC; s->ethertype = ETH_P_IPV6; s->ip_version = 6;
  memcpy(s->daddr6, grp6_joined, 16))
B(mc6_unjoined, MC; s->ethertype = ETH_P_IPV6; s->ip_version = 6;
  memcpy(s->daddr6, grp6_unjoined, 16))

B(arp, s->ethertype = ETH_P_ARP)
B(lldp, s->ethertype = 0x88cc)
#define V6	s->ethertype = ETH_P_IPV6; s->ip_version = 6
B(ipv6, V6)
B(vlan_ipv6, V6; s->vlan_tags = 1)
B(ipv6_ack, V6; s->opcode = BLUE_OP_RC_ACKNOWLEDGE; s->payload_len = 0)
B(ipv6_ud, V6; s->opcode = BLUE_OP_UD_SEND_ONLY)
B(ipv6_trailer, V6; s->opcode = BLUE_OP_RC_ACKNOWLEDGE; s->payload_len = 0; s->trailer = 8)
B(ipv6_icmp, V6; s->ip_proto = 58)
B(ipv6_tcp, V6; s->ip_proto = IPPROTO_TCP)
B(ipv6_hopopts, V6; s->ip_proto = 0)
B(ipv6_frag, V6; s->ip_proto = 44)
B(ipv6_routing, V6; s->ip_proto = 43)
B(ipv6_dstopts, V6; s->ip_proto = 60)
B(ipv6_udp_53, V6; s->dport = 53)
B(ipv6_cut, V6; s->cut_layer = PL_IP; s->cut_len = 30)
B(ipv6_ver_4, V6; s->ip_version = 4)
B(ipv6_plen_long, V6; s->tot_len_adj = 1)
B(ipv6_udp_len_long, V6; s->udp_len_adj = 1)
B(ipv6_udp_len_7, V6; s->udp_len_set = 7)
B(ipv6_cut_bth, V6; s->cut_layer = PL_BTH; s->cut_len = 6)
B(ipv6_no_icrc, V6; s->opcode = BLUE_OP_RC_ACKNOWLEDGE; s->payload_len = 0; s->icrc = false)
B(ipv6_unknown, V6; s->dqpn = QPN_UNKNOWN)
B(ipv6_reset, V6; s->dqpn = QPN_RESET)
B(ipv6_pk_other, V6; s->pkey = 0x9234)
B(qinq, s->vlan_tags = 2; s->vlan_tpid = ETH_P_8021AD)
B(tcp, s->ip_proto = IPPROTO_TCP)
B(icmp_mf, s->ip_proto = IPPROTO_ICMP; s->frag = 0x2000)
B(udp_4792, s->dport = BLUE_ROCEV2_UDP_PORT + 1)
B(udp_from_4791, s->sport = BLUE_ROCEV2_UDP_PORT; s->dport = 53)
B(udp_53_bad_len, s->dport = 53; s->udp_len_set = 3)

B(cut_vlan_tpid, s->vlan_tags = 1; s->cut_layer = PL_VLAN; s->cut_len = 2; s->cut_raw = true)
B(cut_vlan_tci, s->vlan_tags = 1; s->cut_layer = PL_VLAN; s->cut_len = 4; s->cut_raw = true)
B(cut_ip, s->cut_layer = PL_IP; s->cut_len = 10; s->cut_raw = true)
B(cut_ip_vlan, s->vlan_tags = 1; s->cut_layer = PL_IP; s->cut_len = 19; s->cut_raw = true)
B(cut_ip_opt, s->ihl = 8; s->cut_layer = PL_IPOPT; s->cut_len = 4; s->cut_raw = true)
B(ihl_4, s->ihl = 4)
B(ip_ver_6, s->ip_version = 6)
B(tot_len_long, s->tot_len_adj = 1)
B(tot_len_short_hdr, s->tot_len_set = 19)
B(tot_len_opt_hdr, s->ihl = 6; s->tot_len_set = 20)
B(frag_mf, s->frag = 0x2000)
B(frag_off, s->frag = 185)
B(frag_mf_df, s->frag = 0x6000)
B(cut_udp, s->cut_layer = PL_UDP; s->cut_len = 4)
B(udp_len_7, s->udp_len_set = 7)
B(udp_len_0, s->udp_len_set = 0xffff)
B(udp_len_long, s->udp_len_adj = 1)
B(cut_bth, s->cut_layer = PL_BTH; s->cut_len = 6)
B(bth_only_no_icrc, s->payload_len = 0; s->icrc = false)
B(cut_reth, s->opcode = BLUE_OP_RC_WRITE_ONLY; s->payload_len = 0; s->cut_layer = PL_EXT;
  s->cut_len = 8)
B(cut_aeth, s->opcode = BLUE_OP_RC_ACKNOWLEDGE; s->payload_len = 0; s->cut_layer = PL_EXT;
  s->cut_len = 2)
B(cut_atmeth, s->opcode = BLUE_OP_RC_FETCH_ADD; s->payload_len = 0; s->cut_layer = PL_EXT;
  s->cut_len = 20)
B(cut_atmack, s->opcode = BLUE_OP_RC_ATOMIC_ACKNOWLEDGE; s->payload_len = 0;
  s->cut_layer = PL_EXT; s->cut_len = 8)
B(cut_immdt, s->opcode = BLUE_OP_RC_SEND_ONLY_IMM; s->payload_len = 0; s->cut_layer = PL_EXT;
  s->cut_len = 2)
B(cut_ieth, s->opcode = BLUE_OP_RC_SEND_ONLY_INV; s->payload_len = 0; s->cut_layer = PL_EXT;
  s->cut_len = 2)
B(cut_feth, s->opcode = BLUE_OP_RC_FLUSH; s->payload_len = 0; s->cut_layer = PL_EXT;
  s->cut_len = 12)
B(cut_deth, s->opcode = BLUE_OP_UD_SEND_ONLY; s->payload_len = 0; s->cut_layer = PL_EXT;
  s->cut_len = 4)
B(cut_ud_immdt, s->opcode = BLUE_OP_UD_SEND_ONLY_IMM; s->payload_len = 0;
  s->cut_layer = PL_EXT; s->cut_len = 10)
B(ud_to_rtr, s->opcode = BLUE_OP_UD_SEND_ONLY; s->dqpn = QPN_RTR)
/* a MAD as the kernel CM sends it: UD SEND Only to QP1, 256 bytes after the DETH */
B(ud_mad_to_gsi, s->opcode = BLUE_OP_UD_SEND_ONLY; s->dqpn = QPN_GSI; s->payload_len = 256)
B(gsi_other_part, s->opcode = BLUE_OP_UD_SEND_ONLY; s->dqpn = QPN_GSI; s->pkey = 0x9234;
  s->payload_len = 256)
B(cut_cnp, s->opcode = BLUE_OP_CNP; s->payload_len = 0; s->becn = true; s->cut_layer = PL_EXT;
  s->cut_len = 8)
B(cut_icrc, s->payload_len = 0; s->cut_layer = PL_ICRC; s->cut_len = 2)
B(pad_no_room, s->payload_len = 0; s->pad = 3; s->pad_unwritten = true)
B(tver_1, s->tver = 1)
B(tver_15, s->tver = 15)
B(op_reserved, s->opcode = 0x15)
B(op_rd, s->opcode = 0x44)
B(op_ff, s->opcode = 0xff)
B(to_unknown, s->dqpn = QPN_UNKNOWN)
B(to_zero, s->dqpn = 0)
B(to_alias, s->dqpn = QPN_ALIAS)
B(to_reset, s->dqpn = QPN_RESET)
B(to_err, s->dqpn = QPN_ERR)
B(to_nosock, s->dqpn = QPN_NOSOCK)
B(to_badxsk, s->dqpn = QPN_BADXSK)
B(to_otherq, s->dqpn = QPN_OTHERQ)
B(pk_limited, s->pkey = 0x7fff)
B(pk_other_part, s->pkey = 0x9234)
B(pk_zero, s->pkey = 0)
B(pk_full_zero, s->pkey = BLUE_PKEY_FULL)
B(pk_limited_to_limited, s->pkey = 0x7fff; s->dqpn = QPN_LIMITED)
B(pk_full_to_limited, s->dqpn = QPN_LIMITED)
B(pk_limited_to_part, s->pkey = 0x0123; s->dqpn = QPN_PART)
B(pk_default_to_part, s->dqpn = QPN_PART)
B(pk_ack_other_part, s->opcode = BLUE_OP_RC_ACKNOWLEDGE; s->payload_len = 0;
  s->pkey = 0x9234)
B(pk_bad_to_reset, s->pkey = 0x9234; s->dqpn = QPN_RESET)

#define REDIR(what, b, sk)	{ what, b, XDP_REDIRECT, BLUE_STAT_REDIRECT, EFF_RX_PKTS, sk }
#define PASS(what, b, r)	{ what, b, XDP_PASS, BLUE_STAT_##r, EFF_NONE, -1 }
#define DROP(what, b, r)	{ what, b, XDP_DROP, BLUE_STAT_##r, EFF_NONE, -1 }
/* a group's frame is for no one QP: no QP's xdp_rx_pkts moves */
#define MCREDIR(what, b, sk)	{ what, b, XDP_REDIRECT, BLUE_STAT_REDIRECT, EFF_NONE, sk }

static const struct xdp_row rows[] = {
	/* every opcode class reaches its QP's socket */
	REDIR("RC SEND Only", send_only, 0),
	REDIR("RC SEND First", send_first, 0),
	REDIR("RC SEND Middle", send_middle, 0),
	REDIR("RC SEND Last", send_last, 0),
	REDIR("RC SEND Last with Immediate (ImmDt)", send_last_imm, 0),
	REDIR("RC SEND Only with Immediate (ImmDt)", send_only_imm, 0),
	REDIR("RC SEND Last with Invalidate (IETH)", send_last_inv, 0),
	REDIR("RC SEND Only with Invalidate (IETH)", send_only_inv, 0),
	REDIR("RC RDMA WRITE First (RETH)", write_first, 0),
	REDIR("RC RDMA WRITE Middle", write_middle, 0),
	REDIR("RC RDMA WRITE Last with Immediate", write_last_imm, 0),
	REDIR("RC RDMA WRITE Only (RETH)", write_only, 0),
	REDIR("RC RDMA WRITE Only with Immediate (RETH + ImmDt)", write_only_imm, 0),
	REDIR("RC RDMA READ Request (RETH, no payload)", read_req, 0),
	REDIR("RC RDMA READ Response First (AETH)", read_resp_first, 0),
	REDIR("RC RDMA READ Response Middle", read_resp_middle, 0),
	REDIR("RC RDMA READ Response Last (AETH)", read_resp_last, 0),
	REDIR("RC RDMA READ Response Only (AETH)", read_resp_only, 0),
	REDIR("RC Acknowledge (AETH)", ack, 0),
	/* libblue's selective-retransmission NAK is an AETH like any other to XDP */
	REDIR("blue hole NAK (AETH syndrome 0x78, hole length 3 in the MSN)", sr_nak, 0),
	REDIR("RC Compare & Swap (AtomicETH)", cmp_swap, 0),
	REDIR("RC Fetch & Add (AtomicETH)", fetch_add, 0),
	REDIR("RC Atomic Acknowledge (AETH + AtomicAckETH)", atomic_ack, 0),
	REDIR("RC FLUSH 0x1c (FETH + RETH, IBA 1.5)", flush, 0),
	REDIR("RC ATOMIC WRITE 0x1d (RETH + 8 bytes, IBA 1.5)", atomic_write, 0),
	REDIR("UD SEND Only (DETH)", ud_send, 0),
	REDIR("UD SEND Only with Immediate (DETH + ImmDt)", ud_send_imm, 0),
	REDIR("UC SEND Only (UC is served)", uc_send, 0),
	REDIR("UC RDMA WRITE Only (RETH)", uc_write, 0),
	REDIR("RoCEv2 CNP 0x81 with BECN", cnp, 0),
	REDIR("SEND Only with PadCnt 3 and its pad bytes", padded, 0),
	REDIR("BECN set in the DestQP word still steers by the 24-bit QPN", becn_send, 0),
	/* ECN CE: the responder must see it to answer with a CNP (annex A17.9) */
	REDIR("ECN CE-marked SEND steers like any other", ce_send, 0),
	REDIR("ECN CE-marked WRITE First steers like any other", ce_write, 0),
	REDIR("ECN CE-marked ACK steers like any other", ce_ack, 0),
	REDIR("802.1Q-tagged RoCEv2", vlan_q, 0),
	REDIR("802.1ad-tagged RoCEv2", vlan_ad, 0),
	REDIR("IPv4 with 4 bytes of options (IHL 6)", ip_opt_4, 0),
	REDIR("IPv4 with 40 bytes of options (IHL 15)", ip_opt_40, 0),
	REDIR("Ethernet padding after the IPv4 datagram", eth_trailer, 0),
	REDIR("DF clear, still not a fragment", df_clear, 0),
	REDIR("second QP steers to the second socket", to_qp_b, 1),
	REDIR("QP in INIT", to_init, 0),
	REDIR("QP in RTR", to_rtr, 0),
	REDIR("UD SEND Only to a QP in RTR (a UD QP receives there)", ud_to_rtr, 0),
	/* QP1 is steered like any QP, to the socket of the process that owns it */
	REDIR("UD SEND Only to QP1 (a CM MAD for the GSI's owner)", ud_mad_to_gsi, 1),
	REDIR("QP in SQD", to_sqd, 0),
	REDIR("QP in SQE", to_sqe, 0),
	REDIR("QPN 0xabcfff in the last slot", to_top, 0),

	/* not ours: the kernel gets it untouched */
	PASS("ARP", arp, PASS_NON_IP),
	PASS("LLDP ethertype", lldp, PASS_NON_IP),
	PASS("QinQ: a second tag is not parsed", qinq, PASS_NON_IP),
	/* RoCEv2 over IPv6: the same checks as over IPv4 */
	REDIR("IPv6 RC SEND Only", ipv6, 0),
	REDIR("802.1Q-tagged IPv6 RC SEND Only", vlan_ipv6, 0),
	REDIR("IPv6 ACK", ipv6_ack, 0),
	REDIR("IPv6 UD SEND Only", ipv6_ud, 0),
	REDIR("Ethernet padding after the IPv6 datagram", ipv6_trailer, 0),
	PASS("ICMPv6 (neighbour discovery is the kernel's)", ipv6_icmp, PASS_NON_UDP),
	PASS("IPv6 TCP to port 4791", ipv6_tcp, PASS_NON_UDP),
	PASS("IPv6 hop-by-hop options header: passed, counted", ipv6_hopopts, PASS_IPV6),
	PASS("IPv6 fragment header: passed, counted", ipv6_frag, PASS_IPV6),
	PASS("IPv6 routing header: passed, counted", ipv6_routing, PASS_IPV6),
	PASS("IPv6 destination options header: passed, counted", ipv6_dstopts, PASS_IPV6),
	PASS("IPv6 UDP to 53", ipv6_udp_53, PASS_NON_ROCE),
	DROP("IPv6 header cut at 30 bytes", ipv6_cut, DROP_TRUNC_IP),
	DROP("IP version 4 under the IPv6 ethertype", ipv6_ver_4, DROP_BAD_IP_HDR),
	DROP("IPv6 payload length 1 byte beyond the frame", ipv6_plen_long, DROP_BAD_IP_HDR),
	DROP("UDP length 1 byte beyond the IPv6 payload", ipv6_udp_len_long, DROP_BAD_UDP_LEN),
	DROP("UDP length 7 over IPv6", ipv6_udp_len_7, DROP_BAD_UDP_LEN),
	DROP("IPv6: BTH cut at 6 bytes", ipv6_cut_bth, DROP_TRUNC_BTH),
	DROP("IPv6 ACK with no room for the ICRC", ipv6_no_icrc, DROP_BAD_LENGTH),
	DROP("IPv6 to an unknown QPN", ipv6_unknown, DROP_UNKNOWN_QPN),
	DROP("IPv6 to a QP in RESET", ipv6_reset, DROP_QP_STATE),
	DROP("IPv6 with P_Key 0x9234: another partition", ipv6_pk_other, DROP_BAD_PKEY),
	PASS("TCP to port 4791", tcp, PASS_NON_UDP),
	PASS("ICMP fragment (MF): not UDP, the kernel's", icmp_mf, PASS_NON_UDP),
	PASS("UDP to 4792", udp_4792, PASS_NON_ROCE),
	PASS("UDP from 4791 to 53", udp_from_4791, PASS_NON_ROCE),
	PASS("UDP to 53 with a bad length: not ours to judge", udp_53_bad_len, PASS_NON_ROCE),

	/* truncated at each header */
	/*
	 * A frame shorter than 14 bytes cannot be tested here: BPF_PROG_RUN refuses input
	 * below ETH_HLEN (EINVAL). The tag rows below reach the same check.
	 */
	DROP("802.1Q TPID and no tag", cut_vlan_tpid, DROP_TRUNC_ETH),
	DROP("802.1Q tag without its ethertype", cut_vlan_tci, DROP_TRUNC_ETH),
	DROP("IPv4 header cut at 10 bytes", cut_ip, DROP_TRUNC_IP),
	DROP("IPv4 header cut at 19 bytes after a VLAN tag", cut_ip_vlan, DROP_TRUNC_IP),
	DROP("IPv4 options cut (IHL 8, 4 of 12 bytes)", cut_ip_opt, DROP_TRUNC_IP),
	DROP("UDP header cut at 4 bytes", cut_udp, DROP_TRUNC_UDP),
	DROP("BTH cut at 6 bytes", cut_bth, DROP_TRUNC_BTH),
	DROP("RETH cut at 8 of 16 bytes", cut_reth, DROP_BAD_LENGTH),
	DROP("AETH cut at 2 of 4 bytes", cut_aeth, DROP_BAD_LENGTH),
	DROP("AtomicETH cut at 20 of 28 bytes", cut_atmeth, DROP_BAD_LENGTH),
	DROP("AtomicAckETH cut (AETH + 4 of 8 bytes)", cut_atmack, DROP_BAD_LENGTH),
	DROP("ImmDt cut at 2 of 4 bytes", cut_immdt, DROP_BAD_LENGTH),
	DROP("IETH cut at 2 of 4 bytes", cut_ieth, DROP_BAD_LENGTH),
	DROP("FLUSH: FETH + RETH cut at 12 of 20 bytes", cut_feth, DROP_BAD_LENGTH),
	DROP("DETH cut at 4 of 8 bytes", cut_deth, DROP_BAD_LENGTH),
	DROP("UD ImmDt cut at 2 of 4 bytes (after a whole DETH)", cut_ud_immdt, DROP_BAD_LENGTH),
	DROP("CNP reserved bytes cut at 8 of 16", cut_cnp, DROP_BAD_LENGTH),
	DROP("ICRC cut at 2 bytes", cut_icrc, DROP_BAD_LENGTH),
	DROP("BTH and nothing else: no room for the ICRC", bth_only_no_icrc, DROP_BAD_LENGTH),
	DROP("PadCnt 3 without room for the pad", pad_no_room, DROP_BAD_LENGTH),

	/* malformed IPv4 and UDP */
	DROP("IHL 4", ihl_4, DROP_BAD_IP_HDR),
	DROP("IP version 6 under the IPv4 ethertype", ip_ver_6, DROP_BAD_IP_HDR),
	DROP("IPv4 total length 1 byte beyond the frame", tot_len_long, DROP_BAD_IP_HDR),
	DROP("IPv4 total length 19, shorter than the header", tot_len_short_hdr,
	     DROP_BAD_IP_HDR),
	DROP("IPv4 total length 20 with IHL 6", tot_len_opt_hdr, DROP_BAD_IP_HDR),
	DROP("IPv4 MF set", frag_mf, DROP_IP_FRAGMENT),
	DROP("IPv4 fragment offset 185", frag_off, DROP_IP_FRAGMENT),
	DROP("IPv4 DF and MF both set", frag_mf_df, DROP_IP_FRAGMENT),
	DROP("UDP length 7", udp_len_7, DROP_BAD_UDP_LEN),
	DROP("UDP length 65535", udp_len_0, DROP_BAD_UDP_LEN),
	DROP("UDP length 1 byte beyond the IP payload", udp_len_long, DROP_BAD_UDP_LEN),

	/* malformed BTH */
	DROP("BTH TVer 1", tver_1, DROP_BAD_VERSION),
	DROP("BTH TVer 15", tver_15, DROP_BAD_VERSION),
	DROP("reserved RC opcode 0x15", op_reserved, DROP_BAD_OPCODE),
	DROP("RD opcode 0x44 (RD is not served)", op_rd, DROP_BAD_OPCODE),
	DROP("opcode 0xff", op_ff, DROP_BAD_OPCODE),

	/* QP lookup */
	DROP("unknown QPN, free slot", to_unknown, DROP_UNKNOWN_QPN),
	DROP("QPN 0 never matches a free slot", to_zero, DROP_UNKNOWN_QPN),
	DROP("QPN 0x001011: its slot belongs to QPN 0x11", to_alias, DROP_UNKNOWN_QPN),
	DROP("QP in RESET", to_reset, DROP_QP_STATE),
	DROP("QP in ERROR", to_err, DROP_QP_STATE),
	DROP("QP whose XSKMAP slot is empty", to_nosock, DROP_NO_SOCKET),
	DROP("QP whose XSKMAP slot is beyond the map", to_badxsk, DROP_NO_SOCKET),
	DROP("QP whose socket serves another netdev queue", to_otherq, DROP_WRONG_QUEUE),

	/* P_Key (IBA 10.9.3): same partition, and at least one side a full member */
	REDIR("limited member 0x7fff to a full-member QP", pk_limited, 0),
	REDIR("full member 0xffff to a limited-member QP", pk_full_to_limited, 0),
	REDIR("limited member 0x0123 to a full member of partition 0x123", pk_limited_to_part,
	      0),
	DROP("P_Key 0x9234: another partition", pk_other_part, DROP_BAD_PKEY),
	DROP("an ACK with P_Key 0x9234", pk_ack_other_part, DROP_BAD_PKEY),
	DROP("a MAD to QP1 with P_Key 0x9234", gsi_other_part, DROP_BAD_PKEY),
	DROP("P_Key 0x0000, the invalid key", pk_zero, DROP_BAD_PKEY),
	DROP("P_Key 0x8000, the invalid key as a full member", pk_full_zero, DROP_BAD_PKEY),
	DROP("limited member to a limited-member QP", pk_limited_to_limited, DROP_BAD_PKEY),
	DROP("default P_Key 0xffff to a QP of partition 0x123", pk_default_to_part,
	     DROP_BAD_PKEY),
	DROP("wrong P_Key to a QP in RESET: the state is judged first", pk_bad_to_reset,
	     DROP_QP_STATE),

	/* multicast: DestQP 0xFFFFFF steered by {group, queue} (include/blue/mcast.h) */
	MCREDIR("UD to group 239.1.2.3, joined on this queue", mc_joined, 0),
	MCREDIR("UD with immediate to group 239.1.2.3", mc_joined_imm, 0),
	MCREDIR("UD to group ff0e::1:203 over IPv6, joined (socket 1)", mc6_joined, 1),
	DROP("UD to group 239.1.2.4, which nobody joined", mc_unjoined, DROP_MCAST_UNJOINED),
	DROP("UD to group 239.1.2.5, joined on another queue only", mc_otherq,
	     DROP_MCAST_UNJOINED),
	DROP("UD to group ff0e::1:209 over IPv6, which nobody joined", mc6_unjoined,
	     DROP_MCAST_UNJOINED),
	DROP("DestQP 0xFFFFFF to a unicast address", mc_unicast, DROP_MCAST_UNJOINED),
	/* as rxe: a QPN other than 0xFFFFFF is that QP's, whatever the address */
	REDIR("UD to a group's address with QPN 0x11: steered by the QPN", mc_ucast_qpn, 0),
};

#define N_ROWS	(sizeof(rows) / sizeof(rows[0]))
_Static_assert(N_ROWS >= 25, "the brief asks for at least 25 rows");

static const char *verdict_name(uint32_t v)
{
	switch (v) {
	case XDP_ABORTED:	return "XDP_ABORTED";
	case XDP_DROP:		return "XDP_DROP";
	case XDP_PASS:		return "XDP_PASS";
	case XDP_TX:		return "XDP_TX";
	case XDP_REDIRECT:	return "XDP_REDIRECT";
	default:		return "?";
	}
}

static struct xdp_fix fix;

static void fini(void)
{
	fix_teardown(&fix);
}

static void load_qp_table(void)
{
	uint8_t g[16];

	mc_gid4(g, MC_JOINED);
	cr_assert_eq(fix_mcast_set(&fix, g, 0, 0), 0, "mcast entry 239.1.2.3");
	mc_gid4(g, MC_OTHERQ);
	cr_assert_eq(fix_mcast_set(&fix, g, 1, BLUE_XSK_PER_QUEUE), 0, "mcast entry 239.1.2.5");
	cr_assert_eq(fix_mcast_set(&fix, grp6_joined, 0, 1), 0, "mcast entry ff0e::1:203");
	for (size_t i = 0; i < N_QP; i++)
		cr_assert_eq(fix_qp_set_pkey(&fix, qp_table[i].qpn, qp_table[i].xsk_slot,
					     qp_table[i].state, qp_table[i].pkey), 0,
			     "qp_ctx for QPN %#x",
			     qp_table[i].qpn);
}

/* After a REDIRECT: the frame must be in socket @want's RX ring, intact, and only there. */
static void expect_landed(const struct xdp_row *row, const uint8_t *pkt, uint32_t len)
{
	uint8_t got[FIX_FRAME_SIZE];
	uint32_t got_len = 0;
	int n;

	cr_assert_eq(fix_run_live(&fix, row->sock, pkt, len), 0,
		     "%s: live BPF_PROG_RUN failed", row->what);
	n = fix_sock_take(&fix, row->sock, got, sizeof(got), &got_len, 500);
	cr_expect_eq(n, 1, "%s: socket %d received %d frames, want 1", row->what, row->sock, n);
	if (n == 1) {
		cr_expect_eq(got_len, len, "%s: socket got %u bytes, sent %u", row->what,
			     got_len, len);
		cr_expect(got_len == len && memcmp(got, pkt, len) == 0,
			  "%s: frame in the socket differs from the one sent", row->what);
	}
	for (int s = 0; s < FIX_NSOCK; s++) {
		if (s == row->sock)
			continue;
		n = fix_sock_take(&fix, s, got, sizeof(got), &got_len, 0);
		cr_expect_eq(n, 0, "%s: socket %d (not this QP's) received %d frames",
			     row->what, s, n);
	}
}

/*
 * Criterion hands parameters to a re-executed worker, where pointers from the runner
 * (strings, builders) mean nothing: pass each row's index and look it up there.
 */
struct row_ref {
	size_t	idx;
};

static struct row_ref row_refs[N_ROWS];

ParameterizedTestParameters(xdp, verdicts)
{
	for (size_t i = 0; i < N_ROWS; i++)
		row_refs[i].idx = i;
	return cr_make_param_array(struct row_ref, row_refs, N_ROWS);
}

ParameterizedTest(struct row_ref *ref, xdp, verdicts, .fini = fini, .timeout = 20)
{
	const struct xdp_row *row = &rows[ref->idx];
	struct blue_stat before[BLUE_STAT__MAX], after[BLUE_STAT__MAX];
	uint64_t rx_before[N_QP];
	uint8_t pkt[2048], out[2048];
	uint32_t len, out_len = sizeof(out), verdict = ~0u;
	struct pkt_spec spec;
	int err;

	fix_setup_or_skip(&fix);
	load_qp_table();

	pkt_spec_default(&spec);
	row->build(&spec);
	len = pkt_build(&spec, pkt, sizeof(pkt));
	cr_assert_gt(len, 0, "%s: builder failed", row->what);

	cr_assert_eq(fix_stats(&fix, before), 0);
	for (size_t i = 0; i < N_QP; i++)
		rx_before[i] = fix_qp_rx(&fix, qp_table[i].qpn);

	err = fix_run(&fix, pkt, len, &verdict, out, &out_len);
	cr_assert_eq(err, 0, "%s: BPF_PROG_RUN of %u bytes: %s", row->what, len,
		     strerror(-err));

	cr_expect_eq(verdict, row->verdict, "%s: verdict %s, want %s", row->what,
		     verdict_name(verdict), verdict_name(row->verdict));
	cr_expect(out_len == len && memcmp(out, pkt, len) == 0,
		  "%s: the program changed the frame", row->what);

	cr_assert_eq(fix_stats(&fix, after), 0);
	fix_expect_counted(before, after, row->reason, len, row->what);

	for (size_t i = 0; i < N_QP; i++) {
		uint64_t want = rx_before[i];

		if (row->effect == EFF_RX_PKTS &&
		    qp_table[i].qpn == (spec.dqpn & BLUE_QPN_MASK))
			want++;
		cr_expect_eq(fix_qp_rx(&fix, qp_table[i].qpn), want,
			     "%s: QPN %#x xdp_rx_pkts %llu, want %llu", row->what,
			     qp_table[i].qpn,
			     (unsigned long long)fix_qp_rx(&fix, qp_table[i].qpn),
			     (unsigned long long)want);
	}

	if (row->verdict == XDP_REDIRECT && verdict == XDP_REDIRECT)
		expect_landed(row, pkt, len);
}
