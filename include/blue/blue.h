/* SPDX-License-Identifier: MIT */
/*
 * libblue — the public, verbs-shaped API.
 *
 * It mirrors libibverbs on purpose: enum values (work-request and completion opcodes,
 * completion statuses, access flags, QP attribute masks, MTUs, QP states) are numerically
 * the ones <infiniband/verbs.h> uses, so an ibverbs user reads it without a manual and the
 * compatibility library maps structs field by field.
 *
 * Conventions (rdma-core's): create_* returns NULL and sets errno; other calls return 0
 * or a positive errno; post_* set *bad_wr to the first request not posted. Objects are
 * opaque except blue_mr, whose keys the application must send to its peer.
 *
 * Threading: one context is driven by one thread at a time (the application's
 * post/poll calls are the progress engine). Calls on different contexts are independent.
 */
#ifndef BLUE_BLUE_H
#define BLUE_BLUE_H

#include <stddef.h>
#include <stdint.h>
#include <blue/cc.h>
#include <blue/qp_ctx.h>

#ifdef __cplusplus
extern "C" {
#endif

struct blue_context;
struct blue_pd;
struct blue_cq;
struct blue_qp;
struct blue_comp_channel;
struct blue_ah;
struct blue_mw;
struct blue_srq;

union blue_gid {
	uint8_t raw[16];
	struct {
		uint64_t subnet_prefix;
		uint64_t interface_id;
	} global;
};

enum blue_mtu {
	BLUE_MTU_256 = 1,
	BLUE_MTU_512 = 2,
	BLUE_MTU_1024 = 3,
	BLUE_MTU_2048 = 4,
	BLUE_MTU_4096 = 5,
};

static inline int blue_mtu_bytes(enum blue_mtu m)
{
	return (m >= BLUE_MTU_256 && m <= BLUE_MTU_4096) ? 128 << m : -1;
}

enum blue_access_flags {
	BLUE_ACCESS_LOCAL_WRITE = 1,
	BLUE_ACCESS_REMOTE_WRITE = 2,
	BLUE_ACCESS_REMOTE_READ = 4,
	BLUE_ACCESS_REMOTE_ATOMIC = 8,
	BLUE_ACCESS_MW_BIND = 16,		/* memory windows may be bound to the MR */
	BLUE_ACCESS_ZERO_BASED = 32,		/* a type 2 window: remote va counts from 0 */
	BLUE_ACCESS_FLUSH_GLOBAL = 1 << 8,	/* FLUSH to global visibility (IBA 1.5) */
	BLUE_ACCESS_FLUSH_PERSISTENT = 1 << 9,	/* FLUSH to persistence (IBA 1.5) */
};

/* Same numbering as enum ibv_mw_type. */
enum blue_mw_type {
	BLUE_MW_TYPE_1 = 1,	/* bound by blue_bind_mw(), unbound by a new bind */
	BLUE_MW_TYPE_2 = 2,	/* bound by a BIND_MW work request, invalidated by LOCAL_INV
				 * or a SEND with invalidate; type 2B: one QP uses it */
};

/* FLUSH (IBA 1.5 o9-...): what the peer guarantees when it answers, and over what. */
enum blue_flush_type {
	BLUE_FLUSH_GLOBAL = 1,		/* as rdma-core's IBV_FLUSH_GLOBAL */
	BLUE_FLUSH_PERSISTENT = 2,	/* IBV_FLUSH_PERSISTENT */
};

enum blue_flush_level {
	BLUE_FLUSH_RANGE = 0,		/* [remote_addr, remote_addr + length) */
	BLUE_FLUSH_MR = 1,		/* the whole MR the rkey names */
};

enum blue_wr_opcode {
	BLUE_WR_RDMA_WRITE = 0,
	BLUE_WR_RDMA_WRITE_WITH_IMM = 1,
	BLUE_WR_SEND = 2,
	BLUE_WR_SEND_WITH_IMM = 3,
	BLUE_WR_RDMA_READ = 4,
	BLUE_WR_ATOMIC_CMP_AND_SWP = 5,
	BLUE_WR_ATOMIC_FETCH_AND_ADD = 6,
	BLUE_WR_LOCAL_INV = 7,		/* invalidate wr.invalidate_rkey (a type 2 MW) */
	BLUE_WR_BIND_MW = 8,		/* wr.bind_mw */
	BLUE_WR_SEND_WITH_INV = 9,	/* SEND whose IETH invalidates the peer's invalidate_rkey */
	BLUE_WR_FLUSH = 14,		/* wr.flush (rdma-core 45's IBV_WR_FLUSH) */
	BLUE_WR_ATOMIC_WRITE = 15,	/* wr.rdma; the 8 bytes are the SGE list's (IBA 1.5) */
};

enum blue_send_flags {
	BLUE_SEND_FENCE = 1,
	BLUE_SEND_SIGNALED = 2,
	BLUE_SEND_SOLICITED = 4,
	BLUE_SEND_INLINE = 8,
};

enum blue_wc_status {
	BLUE_WC_SUCCESS = 0,
	BLUE_WC_LOC_LEN_ERR = 1,
	BLUE_WC_LOC_QP_OP_ERR = 2,
	BLUE_WC_LOC_PROT_ERR = 4,
	BLUE_WC_MW_BIND_ERR = 6,	/* a BIND_MW the rules of IBA 10.6.7 refuse */
	BLUE_WC_WR_FLUSH_ERR = 5,
	BLUE_WC_BAD_RESP_ERR = 7,
	BLUE_WC_LOC_ACCESS_ERR = 8,
	BLUE_WC_REM_INV_REQ_ERR = 9,
	BLUE_WC_REM_ACCESS_ERR = 10,
	BLUE_WC_REM_OP_ERR = 11,
	BLUE_WC_RETRY_EXC_ERR = 12,
	BLUE_WC_RNR_RETRY_EXC_ERR = 13,
	BLUE_WC_REM_INV_RD_REQ_ERR = 15,
	BLUE_WC_FATAL_ERR = 19,
	BLUE_WC_GENERAL_ERR = 21,
};

enum blue_wc_opcode {
	BLUE_WC_SEND = 0,
	BLUE_WC_RDMA_WRITE = 1,
	BLUE_WC_RDMA_READ = 2,
	BLUE_WC_COMP_SWAP = 3,
	BLUE_WC_FETCH_ADD = 4,
	BLUE_WC_BIND_MW = 5,
	BLUE_WC_LOCAL_INV = 6,
	BLUE_WC_FLUSH = 8,
	BLUE_WC_ATOMIC_WRITE = 9,
	BLUE_WC_RECV = 1 << 7,
	BLUE_WC_RECV_RDMA_WITH_IMM = (1 << 7) + 1,
};

/* Same bits as enum ibv_wc_flags. */
enum blue_wc_flags {
	BLUE_WC_GRH = 1,	/* the first 40 bytes of the buffer hold the GRH (UD) */
	BLUE_WC_WITH_IMM = 2,
	BLUE_WC_WITH_INV = 8,	/* a SEND with invalidate: invalidated_rkey is set */
};

/* The bytes a UD receive buffer starts with: the GRH, or for RoCEv2 over IPv4 20 zero
 * bytes then the IPv4 header, as rxe lays it out (IBA 11.4.1.1). */
#define BLUE_GRH_LEN	40

/* Same bits as enum ibv_qp_attr_mask. */
enum blue_qp_attr_mask {
	BLUE_QP_STATE = 1 << 0,
	BLUE_QP_CUR_STATE = 1 << 1,
	BLUE_QP_ACCESS_FLAGS = 1 << 3,
	BLUE_QP_PKEY_INDEX = 1 << 4,
	BLUE_QP_PORT = 1 << 5,
	BLUE_QP_QKEY = 1 << 6,
	BLUE_QP_AV = 1 << 7,
	BLUE_QP_PATH_MTU = 1 << 8,
	BLUE_QP_TIMEOUT = 1 << 9,
	BLUE_QP_RETRY_CNT = 1 << 10,
	BLUE_QP_RNR_RETRY = 1 << 11,
	BLUE_QP_RQ_PSN = 1 << 12,
	BLUE_QP_MAX_QP_RD_ATOMIC = 1 << 13,
	BLUE_QP_MIN_RNR_TIMER = 1 << 15,
	BLUE_QP_SQ_PSN = 1 << 16,
	BLUE_QP_MAX_DEST_RD_ATOMIC = 1 << 17,
	BLUE_QP_CAP = 1 << 19,
	BLUE_QP_DEST_QPN = 1 << 20,
};

struct blue_device_attr {
	char fw_ver[64];
	uint64_t max_mr_size;
	uint32_t vendor_id;		/* 0x424c55, "BLU" (runtime/device.c says why) */
	uint32_t vendor_part_id;	/* 1: blue's device rev */
	int max_qp;
	int max_qp_wr;
	int max_sge;
	int max_cq;
	int max_cqe;
	int max_mr;
	int max_pd;
	int max_qp_rd_atom;
	int max_qp_init_rd_atom;
	int atomic_cap;		/* 1 = atomics are atomic within this HCA (IBV_ATOMIC_HCA) */
	int max_mw;		/* memory windows, type 1 and 2 (2B) */
	uint8_t phys_port_cnt;
	/* multicast (blue_attach_mcast), per context: include/blue/mcast.h */
	int max_mcast_grp;		/* groups attached at once */
	int max_mcast_qp_attach;	/* QPs one group holds */
	int max_total_mcast_qp_attach;	/* attachments in all */
};

struct blue_port_attr {
	int state;		/* 4 = ACTIVE, as enum ibv_port_state */
	enum blue_mtu max_mtu;
	enum blue_mtu active_mtu;
	int gid_tbl_len;
	uint32_t port_cap_flags;
	uint8_t link_layer;	/* 2 = Ethernet, as IBV_LINK_LAYER_ETHERNET */
};

/* The address vector of a connected QP's peer, or of a UD destination (an address
 * handle): RoCEv2 needs the GID (IPv4-mapped) and the port; the MAC is resolved. */
struct blue_ah_attr {
	union blue_gid dgid;	/* IPv4-mapped IPv6 */
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint8_t port_num;
};

struct blue_qp_cap {
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
};

struct blue_qp_init_attr {
	void *qp_context;
	struct blue_cq *send_cq;
	struct blue_cq *recv_cq;
	struct blue_srq *srq;		/* receives come from it (NULL: the QP's own queue) */
	struct blue_qp_cap cap;
	enum blue_qp_type qp_type;	/* BLUE_QPT_RC, BLUE_QPT_UC or BLUE_QPT_UD */
	int sq_sig_all;
};

struct blue_qp_attr {
	enum blue_qp_state qp_state;
	enum blue_qp_state cur_qp_state;
	enum blue_mtu path_mtu;
	uint32_t qp_access_flags;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t dest_qp_num;
	uint32_t qkey;		/* UD: the Q_Key the QP accepts and sends with (BLUE_QP_QKEY) */
	struct blue_qp_cap cap;
	struct blue_ah_attr ah_attr;
	uint16_t pkey_index;
	uint8_t port_num;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint8_t min_rnr_timer;	/* IBA table 45 encoding */
	uint8_t timeout;	/* local ACK timeout: 4.096 us * 2^timeout; 0 = infinite */
	uint8_t retry_cnt;	/* 0..7 */
	uint8_t rnr_retry;	/* 0..7, 7 = infinite */
};

/* What a memory window is bound to: a range of @mr with remote rights. */
struct blue_mw_bind_info {
	struct blue_mr *mr;		/* NULL (with length 0): unbind */
	uint64_t addr;
	uint64_t length;
	unsigned int mw_access_flags;	/* BLUE_ACCESS_REMOTE_*, ZERO_BASED */
};

/* A type 1 bind (blue_bind_mw), as struct ibv_mw_bind. */
struct blue_mw_bind {
	uint64_t wr_id;
	unsigned int send_flags;	/* BLUE_SEND_SIGNALED: a BLUE_WC_BIND_MW completion */
	struct blue_mw_bind_info bind_info;
};

struct blue_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

struct blue_send_wr {
	uint64_t wr_id;
	struct blue_send_wr *next;
	struct blue_sge *sg_list;
	int num_sge;
	enum blue_wr_opcode opcode;
	unsigned int send_flags;
	union {
		uint32_t imm_data;	/* network byte order, as ibverbs */
		uint32_t invalidate_rkey; /* LOCAL_INV, SEND_WITH_INV: host order */
	};
	union {
		struct {
			uint64_t remote_addr;
			uint32_t rkey;
		} rdma;
		struct {
			uint64_t remote_addr;
			uint64_t compare_add;
			uint64_t swap;
			uint32_t rkey;
		} atomic;
		/*
		 * UD: the destination. A @remote_qkey with its high bit set means "the
		 * QP's own Q_Key" (IBA 10.2.5, the controlled Q_Key rule).
		 */
		struct {
			struct blue_ah *ah;
			uint32_t remote_qpn;
			uint32_t remote_qkey;
		} ud;
		/* BIND_MW: bind @mw (type 2) with the new key @rkey (ibv_inc_rkey's) */
		struct {
			struct blue_mw *mw;
			uint32_t rkey;
			struct blue_mw_bind_info bind_info;
		} bind_mw;
		struct {
			uint64_t remote_addr;
			uint32_t rkey;
			uint32_t length;
			uint8_t type;	/* enum blue_flush_type bits */
			uint8_t level;	/* enum blue_flush_level */
		} flush;
	} wr;
};

struct blue_recv_wr {
	uint64_t wr_id;
	struct blue_recv_wr *next;
	struct blue_sge *sg_list;
	int num_sge;
};

struct blue_wc {
	uint64_t wr_id;
	enum blue_wc_status status;
	enum blue_wc_opcode opcode;
	uint32_t vendor_err;
	uint32_t byte_len;
	union {
		uint32_t imm_data;	/* network byte order */
		uint32_t invalidated_rkey; /* BLUE_WC_WITH_INV: host order */
	};
	uint32_t qp_num;
	uint32_t src_qp;	/* UD: the sender's QPN (DETH); RC: the peer's */
	unsigned int wc_flags;	/* enum blue_wc_flags */
	uint16_t pkey_index;
	uint8_t sl;
};

/* A registered memory region. The fields are read-only for the application. */
struct blue_mr {
	struct blue_context *context;
	struct blue_pd *pd;
	void *addr;
	size_t length;
	uint32_t lkey;
	uint32_t rkey;
	unsigned int access;
};

/* A memory window. The fields are read-only for the application. */
struct blue_mw {
	struct blue_context *context;
	struct blue_pd *pd;
	uint32_t rkey;		/* the key a peer uses; its low 8 bits change with each bind */
	enum blue_mw_type type;
};

/* ---- device ------------------------------------------------------------ */

/**
 * blue_open_device() - open blue on a netdev where `bluectl attach` has run.
 * @ifname: the network interface, e.g. "eth1".
 *
 * The context serves one netdev queue: BLUE_QUEUE=N in the environment, else queue 0
 * (see blue_open_device_queue).
 *
 * Return: a context, or NULL with errno set (ENODEV: no such interface; ENOENT: blue is
 * not attached to it; EBUSY: the queue is served by another context) after a message
 * on stderr naming the cause.
 */
struct blue_context *blue_open_device(const char *ifname);

/**
 * blue_open_device_queue() - open blue on netdev queue @queue of @ifname.
 * @queue: 0 .. 15, and below the netdev's queue count.
 *
 * One context owns a netdev queue: its own AF_XDP socket, UMEM and progress engine,
 * sharing nothing with contexts on other queues, so N contexts driven from N threads
 * (or processes) scale across cores. A QP receives only what arrives on its context's
 * queue: on a veth pair, what the peer sent from the same queue number; on a NIC,
 * what its RSS or flow rules put there (ethtool -N). Frames that arrive on another
 * queue are dropped and counted (bluectl stats: drop_wrong_queue).
 *
 * Return: as blue_open_device(); EINVAL for a queue the netdev does not have.
 */
struct blue_context *blue_open_device_queue(const char *ifname, unsigned int queue);

/**
 * blue_close_device() - close a context. Every QP, CQ, MR and PD must be destroyed.
 * Return: 0, or EBUSY while objects remain.
 */
int blue_close_device(struct blue_context *ctx);

/** blue_query_device() - device limits. Return: 0 or errno. */
int blue_query_device(struct blue_context *ctx, struct blue_device_attr *attr);

/** blue_query_port() - port @port (only 1 exists). Return: 0, or EINVAL for another port. */
int blue_query_port(struct blue_context *ctx, uint8_t port, struct blue_port_attr *attr);

/**
 * blue_query_gid() - the GID table, laid out as rxe lays it out: index 0 is the IPv6
 * link-local GID of the netdev, index 1 the IPv4-mapped RoCEv2 GID of its address,
 * 2 and on its global IPv6 addresses; the rest is empty and reads as zeros.
 * Return: 0, or EINVAL for an index past the table.
 */
int blue_query_gid(struct blue_context *ctx, uint8_t port, int index, union blue_gid *gid);

/* ---- protection domains and memory regions ------------------------------ */

/** blue_alloc_pd() - Return: a PD, or NULL with errno set. */
struct blue_pd *blue_alloc_pd(struct blue_context *ctx);

/** blue_dealloc_pd() - Return: 0, or EBUSY while MRs or QPs use it. */
int blue_dealloc_pd(struct blue_pd *pd);

/**
 * blue_reg_mr() - register @length bytes at @addr for local and remote access.
 * @access: enum blue_access_flags. Remote write or atomic needs local write (IBA 10.6.3).
 * Return: an MR with its lkey and rkey, or NULL with errno set (EINVAL for bad flags or a
 * zero length).
 */
struct blue_mr *blue_reg_mr(struct blue_pd *pd, void *addr, size_t length, unsigned int access);

/**
 * blue_dereg_mr() - deregister @mr. Once it returns, the engine never reads or writes
 * a byte of the region again, so the memory may be freed or unmapped: every access
 * translates its key through the MR table at the moment it happens. Operations still
 * using the region fail as IBA has it: a local send/READ/atomic WQE with a local
 * protection error; an incoming WRITE or an outgoing READ response with a remote
 * access NAK, and the responder's QP goes to ERROR.
 * Locking: the context's thread, as every call (compat holds the context lock, which
 * its progress thread also takes).
 * Return: 0 or errno.
 */
int blue_dereg_mr(struct blue_mr *mr);

/* What backs a blue_buf_alloc() buffer (its @flags_out); 0 is plain 4 KiB pages. */
enum blue_buf_flags {
	BLUE_BUF_HUGETLB = 1 << 0,	/* 2 MiB pages from the vm.nr_hugepages pool */
	BLUE_BUF_THP = 1 << 1,		/* 2 MiB-aligned, MADV_HUGEPAGE: THP, best effort */
};

/**
 * blue_buf_alloc() - memory to register as an MR, backed by 2 MiB pages where possible:
 * the payload copy to and from the UMEM then takes a TLB entry per 2 MiB, not per 4 KiB.
 * @len: bytes wanted; buffers over 1 MiB try, in order, hugetlb pages (when the reserved
 * pool has enough free pages), transparent huge pages (THP mode "always" or "madvise"),
 * then 4 KiB pages. Smaller ones take 4 KiB pages: a 2 MiB page would be mostly slack.
 * The environment's BLUE_HUGEPAGES=0 asks for 4 KiB pages only.
 * @flags_out: if not NULL, gets enum blue_buf_flags: which kind was used.
 * Return: page-aligned, zeroed memory of at least @len bytes, already faulted in, or NULL
 * with errno set (EINVAL for a zero or impossible @len, ENOMEM). Free with blue_buf_free().
 */
void *blue_buf_alloc(size_t len, unsigned int *flags_out);

/**
 * blue_buf_free() - give back a blue_buf_alloc() buffer (deregister its MRs first).
 * @len: the @len it was allocated with. NULL is a no-op.
 */
void blue_buf_free(void *buf, size_t len);

/* ---- memory windows ----------------------------------------------------- */

/**
 * blue_alloc_mw() - a memory window of @type in @pd, bound to nothing (every access
 * through its rkey is NAKed until it is bound).
 * Return: the window, or NULL with errno set (EINVAL: @type; ENOMEM: the key table).
 */
struct blue_mw *blue_alloc_mw(struct blue_pd *pd, enum blue_mw_type type);

/** blue_dealloc_mw() - free a window; its rkey misses from now on. Return: 0 or errno. */
int blue_dealloc_mw(struct blue_mw *mw);

/**
 * blue_bind_mw() - bind the type 1 window @mw through @qp's send queue (ibv_bind_mw):
 * posts a BIND_MW work request with a new key, which becomes @mw->rkey.
 * Return: 0, or errno (EINVAL: not type 1, a bad range or rights, the MR lacks
 * BLUE_ACCESS_MW_BIND; ENOMEM: the send queue is full).
 */
int blue_bind_mw(struct blue_qp *qp, struct blue_mw *mw, const struct blue_mw_bind *bind);

/* ---- completion queues --------------------------------------------------- */

/** blue_create_comp_channel() - Return: a channel whose fd polls readable on events. */
struct blue_comp_channel *blue_create_comp_channel(struct blue_context *ctx);
/** blue_comp_channel_fd() - the fd to poll()/epoll on. */
int blue_comp_channel_fd(struct blue_comp_channel *ch);
/** blue_destroy_comp_channel() - Return: 0, or EBUSY while CQs use it. */
int blue_destroy_comp_channel(struct blue_comp_channel *ch);

/**
 * blue_create_cq() - a CQ of at least @cqe entries.
 * @channel: optional completion channel for event mode.
 * Return: a CQ, or NULL with errno set.
 */
struct blue_cq *blue_create_cq(struct blue_context *ctx, int cqe, void *cq_context,
			       struct blue_comp_channel *channel, int comp_vector);

/** blue_destroy_cq() - Return: 0, or EBUSY while QPs use it. */
int blue_destroy_cq(struct blue_cq *cq);

/**
 * blue_poll_cq() - drive progress and reap up to @num completions into @wc.
 * Return: the number reaped (0..@num), or a negative errno.
 */
int blue_poll_cq(struct blue_cq *cq, int num, struct blue_wc *wc);

/** blue_req_notify_cq() - arm the CQ: the next completion raises a channel event. */
int blue_req_notify_cq(struct blue_cq *cq, int solicited_only);

/**
 * blue_get_cq_event() - wait for the next event on @ch (blocks unless the fd is
 * non-blocking). Return: 0 and the CQ, or -1 with errno set.
 */
int blue_get_cq_event(struct blue_comp_channel *ch, struct blue_cq **cq, void **cq_context);

/** blue_ack_cq_events() - acknowledge @nevents events got for @cq. */
void blue_ack_cq_events(struct blue_cq *cq, unsigned int nevents);

/* ---- address handles (UD) ---------------------------------------------------- */

/**
 * blue_create_ah() - an address handle for UD sends to @attr->dgid (IPv4-mapped) from
 * the GID at @attr->sgid_index. The destination's MAC is resolved now (a static
 * neighbour, the kernel's table, or ARP), or is the device's own for a GID of this
 * device (loopback).
 * Return: an AH, or NULL with errno set (EINVAL: not an IPv4-mapped GID, a bad GID
 * index or port; ENOENT: the MAC could not be resolved), after a message naming it.
 */
struct blue_ah *blue_create_ah(struct blue_pd *pd, const struct blue_ah_attr *attr);

/** blue_destroy_ah() - Return: 0 or errno. */
int blue_destroy_ah(struct blue_ah *ah);

/* ---- multicast (UD) ------------------------------------------------------------- */

/**
 * blue_attach_mcast() - attach the UD QP @qp to the multicast group @gid (ff00::/8, or
 * IPv4-mapped 224.0.0.0/4: ::ffff:a.b.c.d). From then on @qp gets a copy of every
 * datagram the device receives for the group with its Q_Key, including those QPs of
 * this device send to it. The first attachment of a group joins it on the netdev
 * (IGMP/MLD). An AH whose dgid is the group sends to it (with remote_qpn 0xFFFFFF).
 * @lid: IB's multicast LID; RoCE has none, and it is ignored.
 * Return: 0 (also for a QP attached already, as the kernel answers), EINVAL (not a UD
 * QP, not a multicast GID), ENOMEM (past max_mcast_grp, max_mcast_qp_attach or
 * max_total_mcast_qp_attach, as rxe answers), EOPNOTSUPP (the netdev was attached by a
 * blue without multicast: re-attach), or the errno of the netdev join; after a message.
 */
int blue_attach_mcast(struct blue_qp *qp, const union blue_gid *gid, uint16_t lid);

/**
 * blue_detach_mcast() - detach @qp from @gid; the last QP of the device to leave the
 * group leaves it on the netdev. Return: 0, or EINVAL when @qp is not attached to @gid
 * (the kernel's answer), after a message.
 */
int blue_detach_mcast(struct blue_qp *qp, const union blue_gid *gid, uint16_t lid);

/**
 * blue_ah_attr_from_grh() - the address vector back to the sender of a UD message,
 * from the BLUE_GRH_LEN bytes its receive buffer starts with (IPv4: the header in the
 * last 20 bytes; its source becomes @attr->dgid, its destination picks the local GID
 * index). Return: 0, or EINVAL when @grh holds neither an IPv4 header nor a GRH.
 */
int blue_ah_attr_from_grh(struct blue_context *ctx, const void *grh,
			  struct blue_ah_attr *attr);

/* ---- shared receive queues ---------------------------------------------------- */

struct blue_srq_attr {
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t srq_limit;	/* 0: disarmed; else the limit event fires below it */
};

/* Same bits as enum ibv_srq_attr_mask. */
enum blue_srq_attr_mask {
	BLUE_SRQ_MAX_WR = 1 << 0,	/* resize: refused (EINVAL), as rxe without resize */
	BLUE_SRQ_LIMIT = 1 << 1,
};

/**
 * blue_create_srq() - a shared receive queue of at least @attr->max_wr WQEs. QPs
 * created with it (blue_qp_init_attr.srq) take their receive WQEs from it, in posting
 * order, whichever QP a message arrives on; an RC QP answers RNR NAK when it is empty.
 * @srq_context: returned in its async events.
 * Return: an SRQ (@attr updated to what it got), or NULL with errno set.
 */
struct blue_srq *blue_create_srq(struct blue_pd *pd, struct blue_srq_attr *attr,
				 void *srq_context);

/**
 * blue_modify_srq() - arm the limit (BLUE_SRQ_LIMIT): when the WQEs posted drop below
 * @attr->srq_limit, one BLUE_EVENT_SRQ_LIMIT_REACHED is raised and the limit disarms
 * (back to 0) until armed again. Return: 0, or EINVAL (a limit above max_wr, a resize).
 */
int blue_modify_srq(struct blue_srq *srq, struct blue_srq_attr *attr, int attr_mask);

/** blue_query_srq() - max_wr, max_sge and the limit now (0: disarmed). */
int blue_query_srq(struct blue_srq *srq, struct blue_srq_attr *attr);

/** blue_post_srq_recv() - as blue_post_recv(), onto the SRQ. */
int blue_post_srq_recv(struct blue_srq *srq, struct blue_recv_wr *wr,
		       struct blue_recv_wr **bad_wr);

/** blue_destroy_srq() - Return: 0, or EBUSY while QPs use it. */
int blue_destroy_srq(struct blue_srq *srq);

/* ---- asynchronous events ------------------------------------------------------ */

/* Same numbering as enum ibv_event_type. */
enum blue_event_type {
	BLUE_EVENT_QP_FATAL = 1,		/* the engine moved a QP to ERROR */
	BLUE_EVENT_COMM_EST = 4,		/* first packet on a QP in RTR */
	BLUE_EVENT_DEVICE_FATAL = 8,		/* daemon mode: blue-manager has gone */
	BLUE_EVENT_PORT_ACTIVE = 9,
	BLUE_EVENT_PORT_ERR = 10,
	BLUE_EVENT_SRQ_LIMIT_REACHED = 15,
	BLUE_EVENT_QP_LAST_WQE_REACHED = 16,	/* an SRQ's QP in ERROR takes no more */
};

struct blue_async_event {
	enum blue_event_type type;
	struct blue_qp *qp;	/* QP events */
	struct blue_srq *srq;	/* SRQ events */
	uint8_t port_num;	/* port events */
	void *context;		/* the QP's qp_context or the SRQ's srq_context */
};

/**
 * blue_async_fd() - an fd that polls readable while events are queued on @ctx. The
 * engine queues them as it runs (the application's calls, or compat's progress thread).
 */
int blue_async_fd(struct blue_context *ctx);

/**
 * blue_get_async_event() - take the oldest queued event, without blocking.
 * Return: 0, or EAGAIN when none is queued.
 */
int blue_get_async_event(struct blue_context *ctx, struct blue_async_event *ev);

/* ---- queue pairs ---------------------------------------------------------- */

/** blue_create_qp() - Return: a QP in RESET, or NULL with errno set. */
struct blue_qp *blue_create_qp(struct blue_pd *pd, struct blue_qp_init_attr *attr);

/**
 * blue_modify_qp() - move the QP through RESET→INIT→RTR→RTS (or to ERROR), with the
 * attributes that @attr_mask names, checked as ibv_modify_qp checks them (IBA 10.3).
 * Return: 0, or EINVAL naming the missing or invalid attribute on stderr.
 */
int blue_modify_qp(struct blue_qp *qp, struct blue_qp_attr *attr, int attr_mask);

/** blue_query_qp() - Return: 0 or errno. */
int blue_query_qp(struct blue_qp *qp, struct blue_qp_attr *attr, int attr_mask,
		  struct blue_qp_init_attr *init_attr);

/** blue_destroy_qp() - Return: 0 or errno. */
int blue_destroy_qp(struct blue_qp *qp);

/** blue_qp_num() - the QP's number, to give to the peer. */
uint32_t blue_qp_num(const struct blue_qp *qp);

/**
 * blue_post_send() - post a chain of send work requests.
 * Return: 0, or an errno with *@bad_wr set to the first request not posted.
 */
int blue_post_send(struct blue_qp *qp, struct blue_send_wr *wr, struct blue_send_wr **bad_wr);

/**
 * blue_post_recv() - post a chain of receive work requests.
 * Return: 0, or an errno with *@bad_wr set to the first request not posted.
 */
int blue_post_recv(struct blue_qp *qp, struct blue_recv_wr *wr, struct blue_recv_wr **bad_wr);

/** blue_wc_status_str() - a name for @status, as ibv_wc_status_str. */
const char *blue_wc_status_str(enum blue_wc_status status);

/* ---- retransmission policy (blue-specific) ------------------------------------- */

/*
 * How a QP recovers lost packets. BLUE_RETX_GO_BACK_N is IBA's (9.7): on a
 * sequence-error NAK or a local ACK timeout the requester resends everything from the
 * oldest unacknowledged PSN. It is the default and what a standard peer (rxe, an RNIC)
 * speaks. BLUE_RETX_SELECTIVE (IRN-style) works only between two libblue peers that
 * negotiated BLUE_CM_CAP_SELECTIVE_RETX: the responder holds requests that arrive after
 * a hole, reports the hole with a NAK of its own (BLUE_NAK_SR_HOLE in <blue/wire.h>)
 * and executes what it holds in PSN order once the hole is filled; the requester
 * resends only the missing PSNs (a lost READ response: a new READ for the missing
 * range), and on a timeout only the newest unacknowledged packet (a tail-loss probe).
 */
enum blue_retx_policy {
	BLUE_RETX_GO_BACK_N = 0,
	BLUE_RETX_SELECTIVE = 1,
};

/* The local ACK timeout formula. */
enum blue_retx_timer {
	BLUE_RETX_TIMER_IBA_EXP = 0,	/* 4.096 us * 2^timeout (blue_qp_attr.timeout; 0 = none) */
	BLUE_RETX_TIMER_LINEAR = 1,	/* base_us + k_us * (PSNs in flight) */
};

#define BLUE_RETX_MAX_BASE_US	60000000u	/* 60 s */
#define BLUE_RETX_MAX_K_US	1000000u	/* 1 s per PSN in flight */

struct blue_retx_attr {
	enum blue_retx_policy policy;
	enum blue_retx_timer timer;
	uint32_t base_us;	/* LINEAR only (0 otherwise) */
	uint32_t k_us;		/* LINEAR only (0 otherwise) */
};

/**
 * blue_qp_set_retx() - choose @qp's retransmission policy and ACK timeout formula.
 * @attr: the policy and timer. With BLUE_RETX_TIMER_LINEAR the timer is armed at
 *        base_us + k_us * n microseconds, n being the PSNs in flight at that
 *        moment (kept in the QP context's timer_inflight field, with the deadline in
 *        timer_deadline_ns); retry_cnt counts its expiries as it counts IBA's.
 *
 * The timer may change at any time. The policy may change while the QP is not in RTS
 * or SQD, or while nothing is in flight either way (no send WR outstanding, no request
 * held); blue_cm_connect_qp() sets it from the negotiated capabilities.
 *
 * Return: 0; EINVAL for an unknown policy or timer, a LINEAR timer of 0 (both
 * base_us and k_us 0) or beyond BLUE_RETX_MAX_BASE_US / BLUE_RETX_MAX_K_US, or
 * base_us/k_us given to the IBA timer; EOPNOTSUPP for BLUE_RETX_SELECTIVE on a QP
 * whose peer did not negotiate BLUE_CM_CAP_SELECTIVE_RETX; EBUSY for a policy change
 * with traffic in flight. Each failure says why on stderr.
 */
int blue_qp_set_retx(struct blue_qp *qp, const struct blue_retx_attr *attr);

/** blue_qp_query_retx() - the policy and timer @qp uses now. Return: 0 or EINVAL. */
int blue_qp_query_retx(struct blue_qp *qp, struct blue_retx_attr *attr);

/**
 * blue_qp_set_cc() - choose @qp's congestion control and all its parameters
 * (include/blue/cc.h). May change at any time, traffic in flight or not: the algorithm
 * starts afresh from its initial rate or window.
 * Return: 0, EINVAL (a bad argument; the log names it), EOPNOTSUPP (not built).
 */
int blue_qp_set_cc(struct blue_qp *qp, const struct blue_cc_params *p);

/** blue_qp_query_cc() - the congestion control @qp runs now. Return: 0 or EINVAL. */
int blue_qp_query_cc(struct blue_qp *qp, struct blue_cc_params *p);

/* ==== connection manager ==================================================
 *
 * The control path: two processes exchange what each needs to connect a QP to the
 * other over TCP, then the data path runs over RoCEv2. Two exchanges exist:
 *
 *  - blue's own (blue_cm_exchange): a versioned, fixed-layout, checksummed message in
 *    network byte order with QPN, starting PSN, GID, IPv4, MAC, path MTU, transport
 *    type, capability bits and optionally one MR descriptor. Each side sends its own,
 *    checks the peer's, and sends a verdict, so a mismatch (protocol version, path MTU,
 *    transport type) fails on BOTH sides, each naming the field and both values, e.g.
 *    "MTU mismatch: local 1024, peer 4096".
 *  - ibv_rc_pingpong's (blue_cm_pp_client/_server): the "LID:QPN:PSN:GID" string on
 *    TCP port 18515, so blue programs interoperate with stock rdma-core examples.
 *
 * Both refuse a peer whose GID claims an IPv4 address other than the one its TCP
 * connection comes from (EACCES), since blue_cm_connect_qp() makes the MAC it sends the
 * neighbour entry for that address. A multi-homed peer is listed in the environment:
 * BLUE_CM_ALLOW="CLAIMED_IPV4[/PREFIX]=TCP_PEER_IP[,...]", e.g. "10.0.1.2=10.0.0.2".
 * Unix-domain sockets carry no address and are not checked.
 *
 * Conventions: functions that make a socket return it, or -1 with errno set; the others
 * return 0 or a positive errno. Every wait is bounded by @timeout_ms (>= 0; a negative
 * value is EINVAL). On failure blue_cm_last_error() says what went wrong in words (the
 * same line is logged on stderr unless BLUE_LOG=0). The socket and message functions
 * may be called from any thread; blue_cm_info_from_qp() and blue_cm_connect_qp() touch
 * the context and follow its one-thread-at-a-time rule.
 */

#define BLUE_CM_VERSION		1	/* of blue's own exchange */
#define BLUE_CM_PP_PORT		18515	/* ibv_rc_pingpong's default TCP port */
/* sizeof "0000:000000:000000:" + 32 hex digits + NUL, as rc_pingpong sends it */
#define BLUE_CM_PP_MSG_LEN	52
#define BLUE_CM_GID_STR_LEN	33	/* 32 hex digits + NUL */

/* Capability bits, for negotiation between two libblue peers: use local & remote. */
enum blue_cm_caps {
	BLUE_CM_CAP_SELECTIVE_RETX = 1 << 0,	/* IRN-style selective retransmission */
	BLUE_CM_CAP_DCQCN = 1 << 1,		/* DCQCN congestion control (ECN + CNP) */
	BLUE_CM_CAP_WINDOW_CC = 1 << 2,		/* window congestion control */
};

/* A memory region the peer may access: what it needs for RDMA READ/WRITE/atomics. */
struct blue_cm_mr_desc {
	uint64_t addr;
	uint64_t length;
	uint32_t rkey;
};

/* One side of the exchange, in host byte order except @ipv4. */
struct blue_cm_info {
	uint32_t qpn;			/* 24 bits */
	uint32_t psn;			/* starting PSN of this side's send queue, 24 bits */
	union blue_gid gid;		/* the source GID this side's QP uses */
	uint32_t ipv4;			/* network byte order; 0 if unknown */
	uint8_t mac[6];			/* all-zero if unknown */
	enum blue_mtu mtu;		/* path MTU; both sides must agree */
	enum blue_qp_type transport;	/* BLUE_QPT_RC; both sides must agree */
	uint32_t caps;			/* enum blue_cm_caps */
	int has_mr;			/* @mr is meaningful */
	struct blue_cm_mr_desc mr;
};

/**
 * blue_cm_last_error() - what the last failed CM call of this thread said.
 * Return: the message (e.g. "MTU mismatch: local 1024, peer 4096"), or "" after a call
 * that succeeded. Valid until the thread's next CM call.
 */
const char *blue_cm_last_error(void);

/**
 * blue_cm_listen() - a TCP socket listening on @bind_ip:@port.
 * @bind_ip: a numeric IPv4/IPv6 address or host name, or NULL for every address.
 * @port: the TCP port; 0 picks a free one (read it back with getsockname()).
 * Return: the listening fd, or -1 with errno set.
 */
int blue_cm_listen(const char *bind_ip, uint16_t port);

/**
 * blue_cm_accept() - accept one connection on @listen_fd within @timeout_ms.
 * Return: the connected fd, or -1 with errno set (ETIMEDOUT when nobody came).
 */
int blue_cm_accept(int listen_fd, int timeout_ms);

/**
 * blue_cm_connect() - connect to @host:@port. A refused connection (the server is not
 * listening yet) is retried until @timeout_ms has passed, so client and server may be
 * started together.
 * Return: the connected fd, or -1 with errno set (ETIMEDOUT, or the error that was not
 * worth retrying).
 */
int blue_cm_connect(const char *host, uint16_t port, int timeout_ms);

/**
 * blue_cm_exchange() - blue's own exchange on a connected @fd (either side calls it;
 * the protocol is symmetric). Sends @local, reads and checks the peer's message into
 * @remote, then sends and reads the verdicts.
 * Return: 0 when both sides accepted; otherwise, on both sides alike,
 *  EPROTO:          a field that must agree differs (path MTU, transport type);
 *  EPROTONOSUPPORT: the protocol versions differ;
 *  EBADMSG:         a message was not ours, truncated, or failed its checksum;
 *  ETIMEDOUT:       the peer did not answer within @timeout_ms;
 *  ECONNRESET:      the peer closed the connection;
 *  EACCES:          the peer's GID claims an address that is not its TCP address
 *                   (and BLUE_CM_ALLOW does not list the pair); @remote is zeroed;
 *  EADDRINUSE, ENOSPC: a side using blue_cm_exchange_qp() cannot hold the neighbour
 *                   entry the other asks for (see there);
 *  EINVAL:          bad arguments (@local itself is checked too), or a malformed
 *                   BLUE_CM_ALLOW (the peer then sees EIO with the reason).
 * blue_cm_last_error() names the field and both values.
 */
int blue_cm_exchange(int fd, const struct blue_cm_info *local, struct blue_cm_info *remote,
		     int timeout_ms);

/**
 * blue_cm_exchange_qp() - blue_cm_exchange(), and before the verdicts whether
 * blue_cm_connect_qp() on @ctx could then hold the neighbour entry the peer asks for,
 * so that a refusal fails on both sides rather than on this one after the peer was
 * told all is well. Call blue_cm_connect_qp() next, with no other change to @ctx between.
 * Return: as blue_cm_exchange(), and on both sides alike
 *  EADDRINUSE: the peer's address is in use here with another MAC;
 *  ENOSPC:     the static neighbour table is full.
 */
int blue_cm_exchange_qp(struct blue_context *ctx, int fd, const struct blue_cm_info *local,
			struct blue_cm_info *remote, int timeout_ms);

/**
 * blue_cm_info_from_qp() - fill @info for @qp: its QPN, a random starting PSN, the GID
 * at @gid_index, the IPv4 and MAC of the device (from its GID table), the port's active
 * MTU and the QP's transport type, and the congestion control it offers: every
 * algorithm built (BLUE_CM_CAP_DCQCN, BLUE_CM_CAP_WINDOW_CC), or only the one the
 * environment's BLUE_CC=none|dcqcn|window names. No MR and no other capability: set them
 * afterwards if wanted (blue_cm_info_set_mr()), and change @info->mtu to ask for a
 * smaller path MTU.
 * Return: 0 or an errno (EINVAL: no such GID index).
 */
int blue_cm_info_from_qp(struct blue_context *ctx, struct blue_qp *qp, int gid_index,
			 struct blue_cm_info *info);

/** blue_cm_info_set_mr() - describe @mr in @info for the peer (address, rkey, length). */
void blue_cm_info_set_mr(struct blue_cm_info *info, const struct blue_mr *mr);

/* The attributes blue_cm_connect_qp() uses besides what the exchange carried. */
struct blue_cm_qp_attr {
	unsigned int access;		/* qp_access_flags given at RESET->INIT */
	uint8_t sgid_index;		/* local GID index for the address vector */
	uint8_t timeout;		/* local ACK timeout exponent */
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t min_rnr_timer;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	/*
	 * The capabilities this side offered (its blue_cm_info.caps). Those the peer offered
	 * too are used: BLUE_CM_CAP_SELECTIVE_RETX on both sides selects
	 * BLUE_RETX_SELECTIVE on both QPs; otherwise both use BLUE_RETX_GO_BACK_N.
	 * Congestion control: DCQCN and the window both offered by both -> DCQCN (the
	 * default); one of them in common -> that one; none in common -> none, except that
	 * a side that offered only BLUE_CM_CAP_WINDOW_CC runs the window alone (it needs
	 * nothing from the peer).
	 */
	uint32_t caps;
};

/**
 * blue_cm_qp_attr_default() - the values rc_pingpong uses: access LOCAL_WRITE, GID
 * index 1 (the IPv4 GID), timeout 14, retry_cnt 7, rnr_retry 7, min_rnr_timer 12,
 * one outstanding READ/atomic each way, go-back-N, and the congestion control
 * blue_cm_info_from_qp() offers (caps: every algorithm built, or what BLUE_CC names).
 */
void blue_cm_qp_attr_default(struct blue_cm_qp_attr *attr);

/**
 * blue_cm_connect_qp() - move @qp to RTS against @remote: RESET->INIT (if in RESET)
 * with @attr->access, INIT->RTR with the peer's QPN, PSN, GID and @remote->mtu, and
 * RTR->RTS with @local_psn as the send PSN. When @remote carries a MAC, it becomes the
 * static neighbour entry for the peer's IPv4 address, so no ARP entry is needed; the
 * entry is held while a QP connected with it exists, and a different MAC for an address
 * in use is refused (EADDRINUSE, naming the address and both MACs). The table holds
 * 16 addresses (ENOSPC when full). On failure nothing is held.
 * Then the retransmission policy: selective when @attr->caps and @remote->caps both
 * have BLUE_CM_CAP_SELECTIVE_RETX, go-back-N otherwise (blue_qp_set_retx(); the timer
 * formula set on the QP before is kept), and the congestion control from both offers
 * (see blue_cm_qp_attr.caps; blue_qp_set_cc() with the algorithm's defaults).
 * @attr: NULL for blue_cm_qp_attr_default().
 * Return: 0 or an errno (blue_modify_qp's message names the attribute it refused).
 */
int blue_cm_connect_qp(struct blue_context *ctx, struct blue_qp *qp, uint32_t local_psn,
		       const struct blue_cm_info *remote, const struct blue_cm_qp_attr *attr);

/**
 * blue_cm_gid_to_str() - @gid as rdma-core's pingpong examples put it on the wire: the
 * 16 bytes in order as 32 lowercase hex digits, NUL-terminated.
 */
void blue_cm_gid_to_str(const union blue_gid *gid, char str[BLUE_CM_GID_STR_LEN]);

/** blue_cm_str_to_gid() - the inverse: exactly 32 hex digits. Return: 0 or EINVAL. */
int blue_cm_str_to_gid(const char *str, union blue_gid *gid);

/**
 * blue_cm_pp_format() - @info as ibv_rc_pingpong's message: "%04x:%06x:%06x:%s" of LID
 * (0: RoCE has none), QPN, PSN and the wire GID, NUL-padded to BLUE_CM_PP_MSG_LEN.
 * Return: 0, or EINVAL if the QPN or PSN does not fit 24 bits.
 */
int blue_cm_pp_format(const struct blue_cm_info *info, char msg[BLUE_CM_PP_MSG_LEN]);

/**
 * blue_cm_pp_parse() - read ibv_rc_pingpong's message of @len bytes into @info (QPN,
 * PSN, GID, and the IPv4 address when the GID is IPv4-mapped; other fields zeroed, with
 * transport RC). Return: 0, or EBADMSG (malformed, or a non-zero LID: an InfiniBand
 * peer, which RoCEv2 cannot reach).
 */
int blue_cm_pp_parse(const char *msg, size_t len, struct blue_cm_info *info);

/**
 * blue_cm_pp_client() - ibv_rc_pingpong's client side on a connected @fd: send ours,
 * read the server's, send "done". The server has already connected its QP by then.
 * Return: 0 or an errno (see blue_cm_last_error()); EACCES for a server claiming an
 * address not its own (no "done" is sent, @remote is zeroed).
 */
int blue_cm_pp_client(int fd, const struct blue_cm_info *local, struct blue_cm_info *remote,
		      int timeout_ms);

/**
 * blue_cm_pp_server() - ibv_rc_pingpong's server side on an accepted @fd: read the
 * client's message, call @on_remote (which should connect the QP, as rc_pingpong's
 * server does before it answers; NULL to skip), send ours, and wait for "done".
 * @on_remote: returns 0, or an errno that aborts the exchange without answering.
 * Return: 0 or an errno (see blue_cm_last_error()); EACCES for a client claiming an
 * address not its own (@on_remote is not called, nothing is answered: rc_pingpong's
 * exchange has no way to say why).
 */
int blue_cm_pp_server(int fd, const struct blue_cm_info *local, struct blue_cm_info *remote,
		      int (*on_remote)(const struct blue_cm_info *remote, void *arg), void *arg,
		      int timeout_ms);

/* ==== end of connection manager ============================================ */

#ifdef __cplusplus
}
#endif

#endif /* BLUE_BLUE_H */
