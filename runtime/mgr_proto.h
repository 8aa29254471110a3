/* SPDX-License-Identifier: MIT */
/*
 * blue-manager's command channel: what a libblue process in daemon mode (mgr_client.c)
 * and the daemon (mgr_server.c) say to each other.
 *
 * The channel is a SOCK_SEQPACKET Unix socket, one per process, on the abstract name
 * "\0blue-manager/<ifname>" (abstract names belong to the network namespace, as the
 * netdev does; BLUE_MANAGER_SOCK names another). The daemon knows who is calling from
 * SO_PEERCRED, never from what the message says. Each request is one message and gets
 * one reply; the shared memory a reply hands over (ring blocks, the doorbell) travels as
 * SCM_RIGHTS file descriptors beside it, and what a request hands over (an MR's memfd)
 * the same way.
 *
 * Both ends are the same build of libblue on the same machine: the structs go as they
 * are, and HELLO checks the version and the sizes before anything else.
 * Objects are named by handles that the daemon gives out per connection: a process can
 * name only what it created, and everything it created goes when its socket closes.
 */
#ifndef BLUE_RUNTIME_MGR_PROTO_H
#define BLUE_RUNTIME_MGR_PROTO_H

#include <stdint.h>
#include <net/if.h>
#include <blue/blue.h>
#include <blue/cc.h>

#include "runtime/tenant.h"

#define BLUE_MGR_PROTO		2
#define BLUE_MGR_SOCK_ENV	"BLUE_MANAGER_SOCK"
#define BLUE_MGR_SOCK_PREFIX	"blue-manager/"	/* + ifname, abstract */
#define BLUE_MGR_MSG_LEN	200		/* a daemon message handed back */
#define BLUE_MGR_MAX_FDS	2

enum blue_mgr_op {
	BLUE_MGR_HELLO = 1,
	BLUE_MGR_ALLOC_PD,
	BLUE_MGR_DEALLOC_PD,
	BLUE_MGR_REG_MR,	/* fd: the memfd that holds the range */
	BLUE_MGR_DEREG_MR,
	BLUE_MGR_CREATE_CQ,	/* reply fd: the ring block */
	BLUE_MGR_DESTROY_CQ,
	BLUE_MGR_CREATE_QP,	/* reply fds: the send and the receive ring blocks */
	BLUE_MGR_MODIFY_QP,
	BLUE_MGR_QUERY_QP,
	BLUE_MGR_DESTROY_QP,
	BLUE_MGR_SET_RETX,
	BLUE_MGR_QUERY_RETX,
	BLUE_MGR_SET_CC,
	BLUE_MGR_QUERY_CC,
	BLUE_MGR_CM_INFO,
	BLUE_MGR_CM_CONNECT,
	BLUE_MGR_CREATE_SRQ,	/* reply fd: the ring block */
	BLUE_MGR_MODIFY_SRQ,
	BLUE_MGR_QUERY_SRQ,
	BLUE_MGR_DESTROY_SRQ,
	BLUE_MGR_GSI_LISTEN,	/* handle: the process's GSI (create_qp.gsi) */
	BLUE_MGR_ATTACH_MCAST,	/* handle: a UD QP; u.mcast */
	BLUE_MGR_DETACH_MCAST,
	BLUE_MGR_TENANT_GET,	/* u.tenant.index: the table's Nth (ENOENT past the end) */
	BLUE_MGR_TENANT_SET,	/* root only: u.tenant.name, u.tenant.items */
	BLUE_MGR_TENANT_RELOAD,	/* root only: read the config file again, as SIGHUP */
	BLUE_MGR_OP_MAX,
};

/* The doorbell page, shared read-only with every process (reply fd of HELLO). */
struct blue_mgr_bell {
	uint32_t sleeping;	/* the engine sleeps: a process that posts writes the eventfd */
	uint32_t pad[15];
};

struct blue_mgr_req {
	uint32_t op;		/* enum blue_mgr_op */
	uint32_t handle;	/* the object the request is about (0: none) */
	union {
		struct {
			uint32_t proto;
			uint32_t req_size, rep_size;	/* sizeof both structs */
		} hello;
		struct {
			uint32_t pd;
			uint32_t access;
			uint64_t addr;		/* the I/O address: the caller's own */
			uint64_t length;
			uint64_t fd_off;	/* where @addr is in the memfd sent */
		} reg_mr;
		struct {
			int32_t cqe;
		} create_cq;
		struct {
			uint32_t pd;
			struct blue_srq_attr attr;
			int32_t mask;		/* MODIFY_SRQ */
		} srq;
		struct {
			uint32_t pd, send_cq, recv_cq;
			uint32_t srq;		/* 0: the QP's own receive queue */
			struct blue_qp_cap cap;
			uint32_t qp_type;
			int32_t sq_sig_all;
			uint32_t gsi;		/* a member of the shared QP1 (gsi_hub.h) */
		} create_qp;
		struct {
			uint64_t service_id;
			uint32_t on;
		} gsi_listen;
		struct {
			union blue_gid gid;
			uint16_t lid;
		} mcast;
		struct {
			struct blue_qp_attr attr;
			int32_t mask;
		} modify_qp;
		struct {
			int32_t mask;
		} query_qp;
		struct blue_retx_attr retx;
		struct blue_cc_params cc;
		struct {
			int32_t gid_index;
		} cm_info;
		struct {
			uint32_t psn;
			uint32_t has_attr;
			struct blue_cm_info remote;
			struct blue_cm_qp_attr attr;
		} cm_connect;
		struct {
			uint32_t index;
			char name[BLUE_TENANT_NAME];
			char items[200];	/* "key=value ...", as a config line's */
		} tenant;
	} u;
};

/* A ring as handed over: what blue_ring_map() takes besides the fd. */
struct blue_mgr_ring {
	uint32_t log2_size;
	uint32_t elem_size;
};

struct blue_mgr_rep {
	int32_t err;		/* 0, or a positive errno (CM ops: the same, made negative) */
	uint32_t handle;	/* of what the request created */
	char msg[BLUE_MGR_MSG_LEN];	/* err: the daemon's message, else "" */
	union {
		struct {
			uint32_t proto;
			uint32_t queue;
			char ifname[IF_NAMESIZE];
			uint8_t mac[6];
			uint32_t ip;
			uint32_t active_mtu;
			uint32_t link_mbps;
			union blue_gid gid[16];
			struct blue_device_attr dev;
		} hello;		/* fds: the doorbell eventfd, the doorbell page */
		struct {
			uint32_t lkey, rkey;
		} mr;
		struct {
			struct blue_mgr_ring ring;
			int32_t cqe;
		} cq;
		struct {
			struct blue_mgr_ring ring;
			struct blue_srq_attr attr;
			uint32_t srqn;
		} srq;
		struct {
			uint32_t qpn;
			struct blue_qp_cap cap;
			struct blue_mgr_ring sq, rq;
			uint32_t sq_max_wr, rq_max_wr;
			uint32_t gsi_prefix;	/* gsi: the first byte of its CM's comm IDs */
		} qp;
		struct {
			struct blue_qp_attr attr;
			struct blue_qp_init_attr init;	/* its pointers are zero */
		} query_qp;
		struct {
			uint32_t state;	/* after the change */
		} modify_qp;
		struct blue_retx_attr retx;
		struct blue_cc_params cc;
		struct blue_cm_info cm_info;
		struct {
			char name[BLUE_TENANT_NAME];
			uint32_t in_config;
			struct blue_tenant_limits lim;
			struct blue_tenant_usage use;
			uint32_t mine;	/* the asking process is in it */
		} tenant;
	} u;
};

#endif /* BLUE_RUNTIME_MGR_PROTO_H */
