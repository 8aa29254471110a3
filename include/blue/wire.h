/* SPDX-License-Identifier: MIT */
/*
 * RoCEv2 wire format: constants, header layouts and the per-opcode header table.
 *
 * Shared by the XDP program (bpf/) and userspace (runtime/, tests/). Every struct is
 * the exact on-wire layout in network byte order; sizes are asserted below.
 * References: IBA vol. 1 ch. 9.2-9.3 (BTH and extended headers), annex A17 (RoCEv2).
 */
#ifndef BLUE_WIRE_H
#define BLUE_WIRE_H

#include <linux/types.h>

#define BLUE_ROCEV2_UDP_PORT	4791
#define BLUE_ETH_HLEN		14
#define BLUE_VLAN_HLEN		4
#define BLUE_IPV4_MIN_HLEN	20
#define BLUE_IPV6_HLEN		40	/* RoCEv2 over IPv6 carries no extension header */
#define BLUE_UDP_HLEN		8
#define BLUE_ICRC_LEN		4
#define BLUE_BTH_TVER		0	/* IBA 9.2: transport header version 0 */
#define BLUE_DEFAULT_PKEY	0xffff
#define BLUE_PKEY_FULL		0x8000	/* membership bit: full member when set */
#define BLUE_PKEY_BASE		0x7fff	/* the partition number */
#define BLUE_PSN_MASK		0x00ffffffu
#define BLUE_QPN_MASK		0x00ffffffu
#define BLUE_CNP_PAYLOAD_LEN	16	/* annex A17.9.3: 16 reserved bytes */
/* The ECN field, the low 2 bits of the IPv4 TOS (RFC 3168; annex A17.9.1) */
#define BLUE_ECN_MASK		0x3
#define BLUE_ECN_ECT0		0x2	/* ECN-capable transport, what DCQCN senders mark */
#define BLUE_ECN_CE		0x3	/* congestion experienced: a switch marked it */

/* Base Transport Header, 12 bytes (IBA 9.2). */
struct blue_bth {
	__u8	opcode;
	__u8	flags;		/* SE:1 M:1 PadCnt:2 TVer:4, MSB first */
	__be16	pkey;
	__be32	dqpn;		/* FECN:1 BECN:1 resv:6 | DestQP:24 */
	__be32	apsn;		/* AckReq:1 resv:7 | PSN:24 */
} __attribute__((packed));

#define BLUE_BTH_SE		0x80	/* in flags */
#define BLUE_BTH_MIG		0x40
#define BLUE_BTH_PAD_SHIFT	4
#define BLUE_BTH_PAD_MASK	0x30
#define BLUE_BTH_TVER_MASK	0x0f
#define BLUE_BTH_FECN		0x80000000u	/* in host-order dqpn word */
#define BLUE_BTH_BECN		0x40000000u
#define BLUE_BTH_ACKREQ		0x80000000u	/* in host-order apsn word */

/* RDMA Extended Transport Header, 16 bytes (IBA 9.3.3). */
struct blue_reth {
	__be64	va;
	__be32	rkey;
	__be32	dma_len;
} __attribute__((packed));

/* ACK Extended Transport Header, 4 bytes (IBA 9.3.5). */
struct blue_aeth {
	__be32	syn_msn;	/* Syndrome:8 | MSN:24 */
} __attribute__((packed));

/* Atomic Extended Transport Header, 28 bytes (IBA 9.3.4). */
struct blue_atmeth {
	__be64	va;
	__be32	rkey;
	__be64	swap_add;
	__be64	compare;
} __attribute__((packed));

/* Atomic Acknowledge Extended Transport Header, 8 bytes (IBA 9.3.6). */
struct blue_atmack {
	__be64	orig;
} __attribute__((packed));

/* Immediate data, 4 bytes (IBA 9.3.7). */
struct blue_immdt {
	__be32	imm;
} __attribute__((packed));

/* Invalidate Extended Transport Header, 4 bytes (IBA 9.3.8). */
struct blue_ieth {
	__be32	rkey;
} __attribute__((packed));

/* Datagram Extended Transport Header, 8 bytes (IBA 9.3.2). */
struct blue_deth {
	__be32	qkey;
	__be32	sqpn;		/* resv:8 | SrcQP:24 */
} __attribute__((packed));

/*
 * FLUSH Extended Transport Header, 4 bytes (IBA 1.5, annex A19): the placement type
 * (bits 3-0: enum blue_flush_type, GLOBAL 1 / PERSISTENT 2) and the selectivity level
 * (bits 5-4: enum blue_flush_level, RANGE 0 / MR 1); the rest reserved. It comes
 * between the BTH and the RETH, as rxe (rxe_opcode.c, IB_OPCODE_RC_FLUSH) places it.
 */
struct blue_feth {
	__be32	bits;
} __attribute__((packed));

#define BLUE_FETH_PLT_MASK	0x0000000fu
#define BLUE_FETH_SEL_MASK	0x00000030u
#define BLUE_FETH_SEL_SHIFT	4

_Static_assert(sizeof(struct blue_bth) == 12, "BTH is 12 bytes");
_Static_assert(sizeof(struct blue_reth) == 16, "RETH is 16 bytes");
_Static_assert(sizeof(struct blue_aeth) == 4, "AETH is 4 bytes");
_Static_assert(sizeof(struct blue_atmeth) == 28, "AtomicETH is 28 bytes");
_Static_assert(sizeof(struct blue_atmack) == 8, "AtomicAckETH is 8 bytes");
_Static_assert(sizeof(struct blue_immdt) == 4, "ImmDt is 4 bytes");
_Static_assert(sizeof(struct blue_ieth) == 4, "IETH is 4 bytes");
_Static_assert(sizeof(struct blue_deth) == 8, "DETH is 8 bytes");
_Static_assert(sizeof(struct blue_feth) == 4, "FETH is 4 bytes");

/* AETH syndrome (IBA 9.7.5.1.1, table 42): top 3 bits select the kind. */
#define BLUE_AETH_ACK		0x00	/* 000 + credit count */
#define BLUE_AETH_RNR_NAK	0x20	/* 001 + timer */
#define BLUE_AETH_NAK		0x60	/* 011 + NAK code */
#define BLUE_AETH_TYPE_MASK	0xe0
#define BLUE_NAK_PSN_SEQ_ERR	0x60
#define BLUE_NAK_INVALID_REQ	0x61
#define BLUE_NAK_REM_ACCESS_ERR	0x62
#define BLUE_NAK_REM_OP_ERR	0x63
#define BLUE_NAK_INVALID_RD_REQ	0x64

/*
 * blue's selective-retransmission NAK. Sent only between two libblue peers that
 * negotiated BLUE_CM_CAP_SELECTIVE_RETX (blue_cm_connect_qp), and only by a QP whose
 * policy is BLUE_RETX_SELECTIVE: a standard peer (rxe, an RNIC) never sees it, and
 * libblue treats it as an unknown NAK code from a peer that did not negotiate it.
 * IBA table 42 reserves NAK codes 5..31 (syndromes 0x65..0x7f); blue takes code 24:
 *
 *   opcode  Acknowledge (0x11), with AETH
 *   BTH PSN the first PSN the responder lacks: its expected PSN. Like a sequence-error
 *           NAK it acknowledges every request before it (all of them were executed).
 *   AETH    syndrome 0x78; the 24-bit MSN field carries the hole's length n >= 1:
 *           PSNs [PSN, PSN + n) never arrived, and the request at PSN + n did (the
 *           responder holds it, and what it holds past it, in its reorder buffer).
 *
 * The requester resends only [PSN, PSN + n) (a READ in the hole as one request for its
 * missing responses) and keeps the rest in flight. The responder reports the first hole
 * when it first sees it, again for every out-of-order or duplicate request that asks for
 * an ACK, and the next hole once the first is filled; held requests run in PSN order.
 */
#define BLUE_NAK_SR_HOLE	0x78

/* BTH opcodes (IBA table 36): transport in the top 3 bits. */
enum blue_opcode {
	BLUE_OP_RC_SEND_FIRST			= 0x00,
	BLUE_OP_RC_SEND_MIDDLE			= 0x01,
	BLUE_OP_RC_SEND_LAST			= 0x02,
	BLUE_OP_RC_SEND_LAST_IMM		= 0x03,
	BLUE_OP_RC_SEND_ONLY			= 0x04,
	BLUE_OP_RC_SEND_ONLY_IMM		= 0x05,
	BLUE_OP_RC_WRITE_FIRST			= 0x06,
	BLUE_OP_RC_WRITE_MIDDLE			= 0x07,
	BLUE_OP_RC_WRITE_LAST			= 0x08,
	BLUE_OP_RC_WRITE_LAST_IMM		= 0x09,
	BLUE_OP_RC_WRITE_ONLY			= 0x0a,
	BLUE_OP_RC_WRITE_ONLY_IMM		= 0x0b,
	BLUE_OP_RC_READ_REQUEST			= 0x0c,
	BLUE_OP_RC_READ_RESPONSE_FIRST		= 0x0d,
	BLUE_OP_RC_READ_RESPONSE_MIDDLE		= 0x0e,
	BLUE_OP_RC_READ_RESPONSE_LAST		= 0x0f,
	BLUE_OP_RC_READ_RESPONSE_ONLY		= 0x10,
	BLUE_OP_RC_ACKNOWLEDGE			= 0x11,
	BLUE_OP_RC_ATOMIC_ACKNOWLEDGE		= 0x12,
	BLUE_OP_RC_COMPARE_SWAP			= 0x13,
	BLUE_OP_RC_FETCH_ADD			= 0x14,
	BLUE_OP_RC_SEND_LAST_INV		= 0x16,
	BLUE_OP_RC_SEND_ONLY_INV		= 0x17,
	BLUE_OP_RC_FLUSH			= 0x1c,	/* IBA 1.5: FETH, RETH */
	BLUE_OP_RC_ATOMIC_WRITE			= 0x1d,	/* IBA 1.5: RETH, 8 bytes */
	BLUE_OP_UC_SEND_FIRST			= 0x20,
	BLUE_OP_UC_SEND_MIDDLE			= 0x21,
	BLUE_OP_UC_SEND_LAST			= 0x22,
	BLUE_OP_UC_SEND_LAST_IMM		= 0x23,
	BLUE_OP_UC_SEND_ONLY			= 0x24,
	BLUE_OP_UC_SEND_ONLY_IMM		= 0x25,
	BLUE_OP_UC_WRITE_FIRST			= 0x26,
	BLUE_OP_UC_WRITE_MIDDLE			= 0x27,
	BLUE_OP_UC_WRITE_LAST			= 0x28,
	BLUE_OP_UC_WRITE_LAST_IMM		= 0x29,
	BLUE_OP_UC_WRITE_ONLY			= 0x2a,
	BLUE_OP_UC_WRITE_ONLY_IMM		= 0x2b,
	BLUE_OP_UD_SEND_ONLY			= 0x64,
	BLUE_OP_UD_SEND_ONLY_IMM		= 0x65,
	BLUE_OP_CNP				= 0x81,
};

/* Which extended headers an opcode carries, and its place in a message. */
enum blue_op_flag {
	BLUE_OPF_VALID		= 1u << 0,
	BLUE_OPF_RETH		= 1u << 1,
	BLUE_OPF_AETH		= 1u << 2,
	BLUE_OPF_ATMETH		= 1u << 3,
	BLUE_OPF_ATMACK		= 1u << 4,
	BLUE_OPF_IMMDT		= 1u << 5,
	BLUE_OPF_IETH		= 1u << 6,
	BLUE_OPF_DETH		= 1u << 7,
	BLUE_OPF_PAYLOAD	= 1u << 8,	/* may carry payload */
	BLUE_OPF_FIRST		= 1u << 9,
	BLUE_OPF_MIDDLE		= 1u << 10,
	BLUE_OPF_LAST		= 1u << 11,
	BLUE_OPF_ONLY		= BLUE_OPF_FIRST | BLUE_OPF_LAST,
	BLUE_OPF_REQUEST	= 1u << 12,	/* requester -> responder */
	BLUE_OPF_RESPONSE	= 1u << 13,	/* responder -> requester */
	BLUE_OPF_CNP		= 1u << 14,
	BLUE_OPF_FETH		= 1u << 15,
};

/*
 * The per-opcode header table (IBA table 36 and 9.3). A switch rather than an array so
 * it compiles identically for BPF and userspace; unknown opcodes return 0.
 */
static inline __u32 blue_opcode_flags(__u8 op)
{
	const __u32 rq = BLUE_OPF_VALID | BLUE_OPF_REQUEST;
	const __u32 rs = BLUE_OPF_VALID | BLUE_OPF_RESPONSE;
	const __u32 pl = BLUE_OPF_PAYLOAD;

	switch (op) {
	case 0x00: case 0x20: return rq | pl | BLUE_OPF_FIRST;
	case 0x01: case 0x21: return rq | pl | BLUE_OPF_MIDDLE;
	case 0x02: case 0x22: return rq | pl | BLUE_OPF_LAST;
	case 0x03: case 0x23: return rq | pl | BLUE_OPF_LAST | BLUE_OPF_IMMDT;
	case 0x04: case 0x24: return rq | pl | BLUE_OPF_ONLY;
	case 0x05: case 0x25: return rq | pl | BLUE_OPF_ONLY | BLUE_OPF_IMMDT;
	case 0x06: case 0x26: return rq | pl | BLUE_OPF_FIRST | BLUE_OPF_RETH;
	case 0x07: case 0x27: return rq | pl | BLUE_OPF_MIDDLE;
	case 0x08: case 0x28: return rq | pl | BLUE_OPF_LAST;
	case 0x09: case 0x29: return rq | pl | BLUE_OPF_LAST | BLUE_OPF_IMMDT;
	case 0x0a: case 0x2a: return rq | pl | BLUE_OPF_ONLY | BLUE_OPF_RETH;
	case 0x0b: case 0x2b:
		return rq | pl | BLUE_OPF_ONLY | BLUE_OPF_RETH | BLUE_OPF_IMMDT;
	case 0x0c: return rq | BLUE_OPF_ONLY | BLUE_OPF_RETH;
	case 0x0d: return rs | pl | BLUE_OPF_FIRST | BLUE_OPF_AETH;
	case 0x0e: return rs | pl | BLUE_OPF_MIDDLE;
	case 0x0f: return rs | pl | BLUE_OPF_LAST | BLUE_OPF_AETH;
	case 0x10: return rs | pl | BLUE_OPF_ONLY | BLUE_OPF_AETH;
	case 0x11: return rs | BLUE_OPF_ONLY | BLUE_OPF_AETH;
	case 0x12: return rs | BLUE_OPF_ONLY | BLUE_OPF_AETH | BLUE_OPF_ATMACK;
	case 0x13: case 0x14: return rq | BLUE_OPF_ONLY | BLUE_OPF_ATMETH;
	case 0x16: return rq | pl | BLUE_OPF_LAST | BLUE_OPF_IETH;
	case 0x17: return rq | pl | BLUE_OPF_ONLY | BLUE_OPF_IETH;
	/* IBA 1.5: both are answered by a zero-length READ RESPONSE Only (rxe) */
	case 0x1c: return rq | BLUE_OPF_ONLY | BLUE_OPF_FETH | BLUE_OPF_RETH;
	case 0x1d: return rq | pl | BLUE_OPF_ONLY | BLUE_OPF_RETH;
	case 0x64: return rq | pl | BLUE_OPF_ONLY | BLUE_OPF_DETH;
	case 0x65: return rq | pl | BLUE_OPF_ONLY | BLUE_OPF_DETH | BLUE_OPF_IMMDT;
	case 0x81: return BLUE_OPF_VALID | BLUE_OPF_CNP;
	default: return 0;
	}
}

/* Length of BTH plus every extended header that @flags names. */
static inline __u32 blue_opcode_hdr_len(__u32 flags)
{
	__u32 len = sizeof(struct blue_bth);

	if (flags & BLUE_OPF_DETH)
		len += sizeof(struct blue_deth);
	if (flags & BLUE_OPF_FETH)
		len += sizeof(struct blue_feth);
	if (flags & BLUE_OPF_RETH)
		len += sizeof(struct blue_reth);
	if (flags & BLUE_OPF_ATMETH)
		len += sizeof(struct blue_atmeth);
	if (flags & BLUE_OPF_AETH)
		len += sizeof(struct blue_aeth);
	if (flags & BLUE_OPF_ATMACK)
		len += sizeof(struct blue_atmack);
	if (flags & BLUE_OPF_IMMDT)
		len += sizeof(struct blue_immdt);
	if (flags & BLUE_OPF_IETH)
		len += sizeof(struct blue_ieth);
	if (flags & BLUE_OPF_CNP)
		len += BLUE_CNP_PAYLOAD_LEN;
	return len;
}

/* 24-bit PSN arithmetic (IBA 9.7.1): a - b as a signed distance in [-2^23, 2^23). */
static inline __s32 blue_psn_diff(__u32 a, __u32 b)
{
	return (__s32)((a - b) << 8) >> 8;
}

static inline __u32 blue_psn_add(__u32 psn, __u32 n)
{
	return (psn + n) & BLUE_PSN_MASK;
}

/*
 * Whether a packet's BTH P_Key @pkt admits it to a QP whose P_Key is @qp (IBA 10.9.3,
 * as rxe's pkey_match): the same partition (low 15 bits, never 0, which is the invalid
 * P_Key) and at least one side a full member, since two limited members may not talk.
 * Both keys in host order.
 */
static inline int blue_pkey_match(__u16 pkt, __u16 qp)
{
	return (pkt & BLUE_PKEY_BASE) != 0 &&
	       (pkt & BLUE_PKEY_BASE) == (qp & BLUE_PKEY_BASE) &&
	       ((pkt | qp) & BLUE_PKEY_FULL) != 0;
}

#endif /* BLUE_WIRE_H */
