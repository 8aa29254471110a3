/* SPDX-License-Identifier: MIT */
/*
 * The IB Connection Manager's MADs (IBA vol. 1 ch. 12.6) as Linux's kernel CM (ib_cm,
 * rdma_cm) speaks them on RoCEv2: a pure codec between a 256-byte MAD and host-order
 * structs. No sockets, no QP1 and no state machine here; those sit on top of this file.
 * Not to be confused with runtime/cm.h, blue's own TCP exchange (blue_cm_*): everything
 * here is blue_ibcm_* / blue__ibcm_*.
 *
 * The wire (IBA 13.4.2, 12.6): a MAD is exactly 256 bytes, a 24-byte common header
 *   0 BaseVersion (1)   1 MgmtClass (0x07, CM)   2 ClassVersion (2)   3 R:1 Method:7
 *   4 Status:16         6 ClassSpecific:16       8 TransactionID:64
 *  16 AttributeID:16   18 reserved:16           20 AttributeModifier:32
 * then 232 bytes of message (IBA 12.6.5-12.6.13 tables, numbered as in release 1.3:
 * REQ table 106, MRA 107, REJ 108, REP 110, RTU 111, DREQ 112, DREP 113, LAP 115, APR 116,
 * SIDR_REQ 119, SIDR_REP 120). Offsets in this file's comments are from the start of the
 * message (byte 24 of the MAD), with bits in IBA's Byte[Bit] notation: bit 0 is the most
 * significant bit of the byte, and a field runs towards the less significant bits and on
 * into the next byte. Every multi-byte field is big-endian.
 * Sent on QP1 (GSI, UD) with Q_Key 0x80010000 and P_Key 0xffff (IBA 13.5.1); the kernel
 * CM's agent takes only Method Send (0x03) of class 0x07 version 2.
 *
 * RoCE conventions of the kernel that the state machine must follow (read in
 * drivers/infiniband/core/cm.c cm_format_req / cm_req_handler / cm_process_routed_req
 * and cma.c cma_resolve_iboe_route; summarised, not copied):
 *  - Port LIDs: cm_format_req writes the path's SLID/DLID when the path's hop limit is
 *    <= 1 (subnet local = 1) and otherwise the permissive LID 0xffff in both (subnet
 *    local = 0). A RoCE path record has no LIDs (0), and rdma_cm sets the hop limit of a
 *    RoCEv2 path from the IP route (ip4_dst_hoplimit, normally 64), so a kernel REQ on
 *    RoCEv2 carries LIDs 0xffff/0xffff and subnet local 0. The receiver swaps a
 *    permissive LID for the work completion's SLID (0 on RoCE) when subnet local is 0.
 *  - An alternate path exists iff the alternate local port LID is non-zero
 *    (cm_req_has_alt_path): leave the whole alternate path zero.
 *  - GIDs: rdma_ip2gid, IPv4 as ::ffff:a.b.c.d (the RoCEv2 GID, annex A17.4.1); local is
 *    the sender's, remote the receiver's. The receiver takes the reverse path's GIDs and
 *    hop limit from the GRH of the MAD.
 *  - Local ACK timeout: the kernel sends cm_ack_timeout(CA ACK delay, packet life time),
 *    about packet life time + 1 (life time 18, CMA_IBOE_PACKET_LIFETIME, unless the
 *    consumer set a timeout); the receiver takes life time = timeout - 1.
 *  - CM response timeouts 20 (CMA_CM_RESPONSE_TIMEOUT, 4.096 us * 2^20 = 4.3 s), max CM
 *    retries 15, P_Key 0xffff, MTU from the netdev (1500 -> IB 1024, code 3), traffic class
 *    the ToS, flow label 0 or (newer kernels) derived from the ports.
 *  - Responder resources and initiator depth are the sender's; the receiver swaps them.
 *  - Starting PSN (REQ and REP): the PSN the sender's receive queue expects; the
 *    receiver starts its send queue there (ib_send_cm_req/rep set rq_psn from their own
 *    message, cm_req_handler/cm_rep_handler sq_psn from the peer's). So a QP's rq_psn is
 *    the PSN it announced and its sq_psn the peer's (compat/rdmacm/qp.c); rxe NAKs
 *    (PSN sequence error) a first SEND that starts at the sender's own PSN.
 *  - The kernel leaves an RC REQ's local Q_Key 0. The TID of a reply (REP, REJ, MRA, RTU)
 *    is the TID of the REQ it answers; a DREQ starts a new one.
 *
 * Reject reason codes are IBA table 109 (ib_cm.h's enum agrees): note 30 is "duplicate
 * local comm ID" and 32 "invalid flow label".
 */
#ifndef BLUE_RUNTIME_CM_MAD_H
#define BLUE_RUNTIME_CM_MAD_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

#define BLUE_HIDDEN_IBCM __attribute__((visibility("hidden")))

#define BLUE_IBCM_MAD_SIZE		256
#define BLUE_IBCM_MAD_HDR_SIZE		24
#define BLUE_IBCM_MAD_DATA_SIZE		232
#define BLUE_IBCM_BASE_VERSION		1
#define BLUE_IBCM_MGMT_CLASS		0x07
#define BLUE_IBCM_CLASS_VERSION		2
#define BLUE_IBCM_METHOD_SEND		0x03
#define BLUE_IBCM_GSI_QPN		1
#define BLUE_IBCM_GSI_QKEY		0x80010000u	/* IBA 13.5.1: QP1's well-known Q_Key */
#define BLUE_IBCM_PKEY_DEFAULT		0xffff
#define BLUE_IBCM_LID_PERMISSIVE	0xffff

/* Attribute IDs of the CM class (IBA 12.6; the kernel's CM_*_ATTR_ID in cm_msgs.h). */
enum blue_ibcm_attr {
	BLUE_IBCM_ATTR_CLASS_PORT_INFO	= 0x0001,
	BLUE_IBCM_ATTR_REQ		= 0x0010,
	BLUE_IBCM_ATTR_MRA		= 0x0011,
	BLUE_IBCM_ATTR_REJ		= 0x0012,
	BLUE_IBCM_ATTR_REP		= 0x0013,
	BLUE_IBCM_ATTR_RTU		= 0x0014,
	BLUE_IBCM_ATTR_DREQ		= 0x0015,
	BLUE_IBCM_ATTR_DREP		= 0x0016,
	BLUE_IBCM_ATTR_SIDR_REQ		= 0x0017,
	BLUE_IBCM_ATTR_SIDR_REP		= 0x0018,
	BLUE_IBCM_ATTR_LAP		= 0x0019,
	BLUE_IBCM_ATTR_APR		= 0x001a,
};

/* REQ Transport Service Type (IBA 12.6.5), and the Extended Transport Type under 3. */
enum blue_ibcm_transport {
	BLUE_IBCM_TRANSPORT_RC		= 0,
	BLUE_IBCM_TRANSPORT_UC		= 1,
	BLUE_IBCM_TRANSPORT_RD		= 2,
	BLUE_IBCM_TRANSPORT_EXTENDED	= 3,
};
#define BLUE_IBCM_EXT_TRANSPORT_XRC	1

/* MRA "Message MRAed" and REJ "Message REJected" (IBA 12.6.6, 12.6.7); 3 is reserved. */
enum blue_ibcm_msg_response {
	BLUE_IBCM_MSG_REQ	= 0,
	BLUE_IBCM_MSG_REP	= 1,
	BLUE_IBCM_MSG_OTHER	= 2,
};

/* REJ Reason (IBA 12.6.7.2 table 109). */
enum blue_ibcm_rej_reason {
	BLUE_IBCM_REJ_NO_QP			= 1,
	BLUE_IBCM_REJ_NO_EEC			= 2,
	BLUE_IBCM_REJ_NO_RESOURCES		= 3,
	BLUE_IBCM_REJ_TIMEOUT			= 4,
	BLUE_IBCM_REJ_UNSUPPORTED		= 5,
	BLUE_IBCM_REJ_INVALID_COMM_ID		= 6,
	BLUE_IBCM_REJ_INVALID_COMM_INSTANCE	= 7,
	BLUE_IBCM_REJ_INVALID_SERVICE_ID	= 8,
	BLUE_IBCM_REJ_INVALID_TRANSPORT_TYPE	= 9,
	BLUE_IBCM_REJ_STALE_CONN		= 10,
	BLUE_IBCM_REJ_RDC_NOT_EXIST		= 11,
	BLUE_IBCM_REJ_INVALID_GID		= 12,
	BLUE_IBCM_REJ_INVALID_LID		= 13,
	BLUE_IBCM_REJ_INVALID_SL		= 14,
	BLUE_IBCM_REJ_INVALID_TRAFFIC_CLASS	= 15,
	BLUE_IBCM_REJ_INVALID_HOP_LIMIT		= 16,
	BLUE_IBCM_REJ_INVALID_PACKET_RATE	= 17,
	BLUE_IBCM_REJ_INVALID_ALT_GID		= 18,
	BLUE_IBCM_REJ_INVALID_ALT_LID		= 19,
	BLUE_IBCM_REJ_INVALID_ALT_SL		= 20,
	BLUE_IBCM_REJ_INVALID_ALT_TRAFFIC_CLASS	= 21,
	BLUE_IBCM_REJ_INVALID_ALT_HOP_LIMIT	= 22,
	BLUE_IBCM_REJ_INVALID_ALT_PACKET_RATE	= 23,
	BLUE_IBCM_REJ_PORT_CM_REDIRECT		= 24,
	BLUE_IBCM_REJ_PORT_REDIRECT		= 25,
	BLUE_IBCM_REJ_INVALID_MTU		= 26,
	BLUE_IBCM_REJ_INSUFFICIENT_RESP_RESOURCES = 27,
	BLUE_IBCM_REJ_CONSUMER_DEFINED		= 28,
	BLUE_IBCM_REJ_INVALID_RNR_RETRY		= 29,
	BLUE_IBCM_REJ_DUPLICATE_LOCAL_COMM_ID	= 30,
	BLUE_IBCM_REJ_INVALID_CLASS_VERSION	= 31,
	BLUE_IBCM_REJ_INVALID_FLOW_LABEL	= 32,
	BLUE_IBCM_REJ_INVALID_ALT_FLOW_LABEL	= 33,
	BLUE_IBCM_REJ_VENDOR_OPTION_NOT_SUPPORTED = 35,
};

/*
 * Why blue__ibcm_decode() (or the IP CM header decode) refused a MAD: also the label of
 * the drop counters and of the tests (blue__ibcm_err_str()).
 */
enum blue_ibcm_err {
	BLUE_IBCM_OK = 0,
	BLUE_IBCM_ERR_SHORT,		/* fewer than 256 bytes */
	BLUE_IBCM_ERR_BASE_VERSION,	/* BaseVersion != 1 (the MAD layer drops it) */
	BLUE_IBCM_ERR_MGMT_CLASS,	/* MgmtClass != 0x07: not the CM's */
	BLUE_IBCM_ERR_CLASS_VERSION,	/* ClassVersion != 2: the kernel's agent is v2 only */
	BLUE_IBCM_ERR_METHOD,		/* not Method Send: the CM agent registers Send only */
	BLUE_IBCM_ERR_UNKNOWN_ATTR,	/* AttributeID not a CM message (cm_recv_handler drops) */
	BLUE_IBCM_ERR_UNSUPPORTED_ATTR,	/* ClassPortInfo: known, but the kernel CM drops it */
	BLUE_IBCM_ERR_TRANSPORT,	/* REQ transport RD, or extended but not XRC */
	BLUE_IBCM_ERR_MSG_RESPONSE,	/* MRA/REJ "message" field 3 (reserved) */
	BLUE_IBCM_ERR_INFO_LEN,		/* REJ ARI / APR / SIDR_REP info length > 72 */
	BLUE_IBCM_ERR_IP_SHORT,		/* private data shorter than the 36-byte IP CM header */
	BLUE_IBCM_ERR_IP_CM_VERSION,	/* IP CM header version != 0 (cma_save_ip_info) */
	BLUE_IBCM_ERR_IP_VERSION,	/* IP version nibble neither 4 nor 6 */
	BLUE_IBCM_ERR_MAX,
};

/* One path of a REQ (IBA 12.6.5: primary at 52, alternate at 96) or of a LAP. */
struct blue_ibcm_path {
	uint16_t	local_lid;
	uint16_t	remote_lid;
	uint8_t		local_gid[16];
	uint8_t		remote_gid[16];
	uint32_t	flow_label;		/* 20 bits */
	uint8_t		packet_rate;		/* 6 bits, IB rate code */
	uint8_t		traffic_class;
	uint8_t		hop_limit;
	uint8_t		sl;			/* 4 bits */
	uint8_t		subnet_local;		/* 1 bit */
	uint8_t		local_ack_timeout;	/* 5 bits */
};

#define BLUE_IBCM_REQ_PRIV	92
#define BLUE_IBCM_MRA_PRIV	222
#define BLUE_IBCM_REJ_PRIV	148
#define BLUE_IBCM_REP_PRIV	196
#define BLUE_IBCM_RTU_PRIV	224
#define BLUE_IBCM_DREQ_PRIV	220
#define BLUE_IBCM_DREP_PRIV	224
#define BLUE_IBCM_LAP_PRIV	168
#define BLUE_IBCM_APR_PRIV	148
#define BLUE_IBCM_SIDR_REQ_PRIV	216
#define BLUE_IBCM_SIDR_REP_PRIV	136
#define BLUE_IBCM_INFO_MAX	72	/* ARI, APR and SIDR_REP additional information */

/* REQ, IBA 12.6.5 table 106. */
struct blue_ibcm_req {
	uint32_t	local_comm_id;
	uint32_t	vendor_id;		/* 24 bits (IBA comment 9434, the kernel's ECE) */
	uint64_t	service_id;
	uint64_t	local_ca_guid;
	uint32_t	local_qkey;
	uint32_t	local_qpn;		/* 24 bits */
	uint8_t		responder_resources;
	uint32_t	local_eecn;		/* 24 bits */
	uint8_t		initiator_depth;
	uint32_t	remote_eecn;		/* 24 bits */
	uint8_t		remote_cm_response_timeout;	/* 5 bits */
	uint8_t		transport_type;		/* 2 bits, enum blue_ibcm_transport */
	uint8_t		e2e_flow_control;	/* 1 bit */
	uint32_t	starting_psn;		/* 24 bits */
	uint8_t		local_cm_response_timeout;	/* 5 bits */
	uint8_t		retry_count;		/* 3 bits */
	uint16_t	pkey;
	uint8_t		path_mtu;		/* 4 bits, IB MTU code (3 = 1024) */
	uint8_t		rdc_exists;		/* 1 bit */
	uint8_t		rnr_retry_count;	/* 3 bits */
	uint8_t		max_cm_retries;		/* 4 bits */
	uint8_t		srq;			/* 1 bit */
	uint8_t		ext_transport_type;	/* 3 bits */
	struct blue_ibcm_path primary;
	struct blue_ibcm_path alternate;
	uint8_t		sap_supported;		/* 1 bit, at 139[5] */
	uint8_t		private_data[BLUE_IBCM_REQ_PRIV];
};

/* MRA, IBA 12.6.6 table 107. */
struct blue_ibcm_mra {
	uint32_t	local_comm_id;
	uint32_t	remote_comm_id;
	uint8_t		msg_mraed;		/* 2 bits, enum blue_ibcm_msg_response */
	uint8_t		service_timeout;	/* 5 bits */
	uint8_t		private_data[BLUE_IBCM_MRA_PRIV];
};

/* REJ, IBA 12.6.7 table 108. */
struct blue_ibcm_rej {
	uint32_t	local_comm_id;
	uint32_t	remote_comm_id;
	uint8_t		msg_rejected;		/* 2 bits, enum blue_ibcm_msg_response */
	uint8_t		ari_len;		/* 7 bits, <= 72 */
	uint16_t	reason;			/* enum blue_ibcm_rej_reason */
	uint8_t		ari[BLUE_IBCM_INFO_MAX];
	uint8_t		private_data[BLUE_IBCM_REJ_PRIV];
};

/* REP, IBA 12.6.8 table 110. */
struct blue_ibcm_rep {
	uint32_t	local_comm_id;
	uint32_t	remote_comm_id;
	uint32_t	local_qkey;
	uint32_t	local_qpn;		/* 24 bits */
	uint32_t	vendor_id;		/* 24 bits, spread over bytes 15, 19 and 23 */
	uint32_t	local_eecn;		/* 24 bits */
	uint32_t	starting_psn;		/* 24 bits */
	uint8_t		responder_resources;
	uint8_t		initiator_depth;
	uint8_t		target_ack_delay;	/* 5 bits */
	uint8_t		failover_accepted;	/* 2 bits */
	uint8_t		e2e_flow_control;	/* 1 bit */
	uint8_t		rnr_retry_count;	/* 3 bits */
	uint8_t		srq;			/* 1 bit */
	uint64_t	local_ca_guid;
	uint8_t		private_data[BLUE_IBCM_REP_PRIV];
};

/* RTU, IBA 12.6.9 table 111. */
struct blue_ibcm_rtu {
	uint32_t	local_comm_id;
	uint32_t	remote_comm_id;
	uint8_t		private_data[BLUE_IBCM_RTU_PRIV];
};

/* DREQ, IBA 12.6.10 table 112. */
struct blue_ibcm_dreq {
	uint32_t	local_comm_id;
	uint32_t	remote_comm_id;
	uint32_t	remote_qpn_eecn;	/* 24 bits */
	uint8_t		private_data[BLUE_IBCM_DREQ_PRIV];
};

/* DREP, IBA 12.6.11 table 113. */
struct blue_ibcm_drep {
	uint32_t	local_comm_id;
	uint32_t	remote_comm_id;
	uint8_t		private_data[BLUE_IBCM_DREP_PRIV];
};

/* LAP, IBA 12.8.1 table 115 (its path packs differently from a REQ's). */
struct blue_ibcm_lap {
	uint32_t	local_comm_id;
	uint32_t	remote_comm_id;
	uint32_t	remote_qpn_eecn;	/* 24 bits */
	uint8_t		remote_cm_response_timeout;	/* 5 bits */
	struct blue_ibcm_path alternate;
	uint8_t		private_data[BLUE_IBCM_LAP_PRIV];
};

/* APR, IBA 12.8.2 table 116. */
struct blue_ibcm_apr {
	uint32_t	local_comm_id;
	uint32_t	remote_comm_id;
	uint8_t		info_len;		/* <= 72 */
	uint8_t		ar_status;
	uint8_t		info[BLUE_IBCM_INFO_MAX];
	uint8_t		private_data[BLUE_IBCM_APR_PRIV];
};

/* SIDR_REQ, IBA 12.11.1 table 119. */
struct blue_ibcm_sidr_req {
	uint32_t	request_id;
	uint16_t	pkey;
	uint64_t	service_id;
	uint8_t		private_data[BLUE_IBCM_SIDR_REQ_PRIV];
};

/* SIDR_REP, IBA 12.11.2 table 120. */
struct blue_ibcm_sidr_rep {
	uint32_t	request_id;
	uint8_t		status;
	uint8_t		info_len;		/* <= 72 */
	uint32_t	vendor_id;		/* 24 bits: 16 at bytes 6-7, 8 at byte 11 */
	uint32_t	qpn;			/* 24 bits */
	uint64_t	service_id;
	uint32_t	qkey;
	uint8_t		class_port_info[BLUE_IBCM_INFO_MAX];
	uint8_t		private_data[BLUE_IBCM_SIDR_REP_PRIV];
};

/* The common MAD header (IBA 13.4.3), host order. */
struct blue_ibcm_mad_hdr {
	uint8_t		base_version;
	uint8_t		mgmt_class;
	uint8_t		class_version;
	uint8_t		method;			/* with the R bit (0x80) */
	uint16_t	status;
	uint16_t	class_specific;
	uint64_t	tid;
	uint16_t	attr_id;		/* enum blue_ibcm_attr: selects the union member */
	uint32_t	attr_mod;
};

/* One CM MAD, decoded. hdr.attr_id says which member of the union is live. */
struct blue_ibcm_msg {
	struct blue_ibcm_mad_hdr hdr;
	union {
		struct blue_ibcm_req		req;
		struct blue_ibcm_mra		mra;
		struct blue_ibcm_rej		rej;
		struct blue_ibcm_rep		rep;
		struct blue_ibcm_rtu		rtu;
		struct blue_ibcm_dreq		dreq;
		struct blue_ibcm_drep		drep;
		struct blue_ibcm_lap		lap;
		struct blue_ibcm_apr		apr;
		struct blue_ibcm_sidr_req	sidr_req;
		struct blue_ibcm_sidr_rep	sidr_rep;
	};
};

/**
 * blue__ibcm_init() - zero @m and give it the header the kernel CM sends
 * (cm_format_mad_hdr): base version 1, class 0x07, class version 2, Method Send, @attr_id
 * and @tid; status, class specific and attribute modifier 0.
 */
void blue__ibcm_init(struct blue_ibcm_msg *m, uint16_t attr_id, uint64_t tid) BLUE_HIDDEN_IBCM;

/**
 * blue__ibcm_encode() - serialise @m into the 256 bytes at @mad. Every reserved bit is
 * written zero.
 * @m:     the message; m->hdr.attr_id picks the layout
 * @mad:   output, BLUE_IBCM_MAD_SIZE bytes
 * @field: if not NULL, on -ERANGE set to the name of the field that did not fit
 *
 * Return: 0; -EINVAL if attr_id is no CM message this codec lays out (ClassPortInfo, an
 * unknown ID); -ERANGE if a field's value is wider than its wire field (a QPN > 24 bits,
 * an info length > 72, ...).
 */
int blue__ibcm_encode(const struct blue_ibcm_msg *m, uint8_t mad[BLUE_IBCM_MAD_SIZE],
		      const char **field) BLUE_HIDDEN_IBCM;

/**
 * blue__ibcm_decode() - check and decode one CM MAD.
 * @buf: the MAD, from its first header byte (a longer buffer is accepted; the MAD layer
 *       hands the CM 256 bytes)
 * @len: bytes at @buf
 * @m:   output; zeroed first
 *
 * Checks the header as the kernel's MAD layer and CM agent do (base version, class,
 * class version, Method Send, a CM attribute), then the fields the kernel refuses or
 * the spec reserves (enum blue_ibcm_err).
 * Return: BLUE_IBCM_OK, or the first fault found.
 */
enum blue_ibcm_err blue__ibcm_decode(const uint8_t *buf, size_t len, struct blue_ibcm_msg *m)
	BLUE_HIDDEN_IBCM;

/**
 * blue__ibcm_private_data() - where @m's private data lives and how large it is (92 for
 * a REQ, 196 for a REP, ...).
 * Return: the bytes, with *@cap set; NULL (and *@cap 0) for an attribute without any.
 */
uint8_t *blue__ibcm_private_data(struct blue_ibcm_msg *m, size_t *cap) BLUE_HIDDEN_IBCM;

/**
 * blue__ibcm_set_private_data() - copy @len bytes of @data into @m's private data and
 * zero the rest of it.
 * Return: 0, or -EMSGSIZE if @len is more than the message carries (m untouched).
 */
int blue__ibcm_set_private_data(struct blue_ibcm_msg *m, const void *data, size_t len)
	BLUE_HIDDEN_IBCM;

/* Names for logs and tests: "REQ", "REP", ...; "unknown" otherwise. */
const char *blue__ibcm_attr_str(uint16_t attr_id) BLUE_HIDDEN_IBCM;
/* "consumer reject", "stale connection", ...; "unknown reason" otherwise. */
const char *blue__ibcm_rej_reason_str(uint16_t reason) BLUE_HIDDEN_IBCM;
/* "ok", "short", "class version", ...: one name per enum blue_ibcm_err. */
const char *blue__ibcm_err_str(enum blue_ibcm_err err) BLUE_HIDDEN_IBCM;

/*
 * The RDMA IP CM service (annex A11; the kernel's struct cma_hdr): the first 36 bytes of
 * the private data of a REQ (and of a SIDR_REQ) that rdma_cm sends for an AF_INET or
 * AF_INET6 id:
 *   0 version (0)   1 IP version:4 (4 or 6), reserved:4   2 source port:16
 *   4 source IP (16 bytes)   20 destination IP (16 bytes)
 * An IPv4 address sits in the last 4 bytes of its 16 and the kernel writes the 12 before
 * it zero (cma_format_hdr into zeroed private data); on receipt it reads only those last
 * 4 (cma_save_ip4_info), and so does the decoder here. The consumer's own private data
 * follows at byte 36 (56 bytes left in a REQ).
 */
#define BLUE_IBCM_IP_HDR_LEN	36
#define BLUE_IBCM_IP_CM_VERSION	0

struct blue_ibcm_ip_hdr {
	uint8_t		ip_version;	/* 4 or 6 */
	uint16_t	src_port;	/* host order */
	union {
		struct in_addr	v4;
		struct in6_addr	v6;
	} src, dst;
};

/**
 * blue__ibcm_ip_hdr_encode() - write @h as the first 36 bytes of @priv.
 * Return: BLUE_IBCM_IP_HDR_LEN; -EMSGSIZE if @cap < 36; -EAFNOSUPPORT if h->ip_version is
 * neither 4 nor 6.
 */
int blue__ibcm_ip_hdr_encode(const struct blue_ibcm_ip_hdr *h, uint8_t *priv, size_t cap)
	BLUE_HIDDEN_IBCM;

/**
 * blue__ibcm_ip_hdr_decode() - read the IP CM header at the start of @priv.
 * Return: BLUE_IBCM_OK, BLUE_IBCM_ERR_IP_SHORT, BLUE_IBCM_ERR_IP_CM_VERSION or
 * BLUE_IBCM_ERR_IP_VERSION (the kernel's -EINVAL and -EAFNOSUPPORT in cma_save_ip_info).
 */
enum blue_ibcm_err blue__ibcm_ip_hdr_decode(const uint8_t *priv, size_t len,
					    struct blue_ibcm_ip_hdr *h) BLUE_HIDDEN_IBCM;

/*
 * Service IDs of the RDMA IP CM service (annex A11.2; rdma_cm's cma_get_service_id):
 * 0x0000000001PPpppp with PP the port space's low byte and pppp the port. The port
 * spaces are rdma_cm's (RDMA_PS_*); the IB one (0x3f) is rdma_cm's own for AF_IB ids.
 */
#define BLUE_IBCM_PS_TCP	0x0106
#define BLUE_IBCM_PS_UDP	0x0111
#define BLUE_IBCM_PS_IB		0x013f
#define BLUE_IBCM_IP_SID_MASK	0xffffffffffff0000ull	/* RDMA_IB_IP_PS_MASK */

/* blue__ibcm_ip_service_id() - the service ID of port @port in port space @ps. */
static inline uint64_t blue__ibcm_ip_service_id(uint16_t ps, uint16_t port)
{
	return ((uint64_t)ps << 16) | port;
}

/**
 * blue__ibcm_ip_service_parse() - the port space and port of an IP CM service ID.
 * Return: 0; -EINVAL if @sid is not of the form 0x0000000001PPpppp, or PP names a port
 * space that rdma_cm has not (TCP, UDP and IB are all it has).
 */
int blue__ibcm_ip_service_parse(uint64_t sid, uint16_t *ps, uint16_t *port) BLUE_HIDDEN_IBCM;

#endif /* BLUE_RUNTIME_CM_MAD_H */
