/* SPDX-License-Identifier: MIT */
/*
 * The device context: one HAL, one HAL socket that every QP's QPN is steered to, the
 * local MAC/IPv4 and GID table, the objects created on it, and its progress engine.
 */
#ifndef BLUE_RUNTIME_DEVICE_H
#define BLUE_RUNTIME_DEVICE_H

#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>

#include <blue/blue.h>
#include "afxdp_hal/hal.h"
#include "runtime/events.h"
#include "runtime/loopback.h"
#include "runtime/mcast.h"
#include "runtime/mr.h"
#include "runtime/obs.h"
#include "runtime/progress.h"

/*
 * The GID table (blue__fill_gids, blue__gid_add6): 0 the fe80 default GID, 1 the
 * IPv4-mapped GID (zero on an IPv6-only netdev), 2.. the netdev's IPv6 addresses.
 * An entry of all zeros is empty.
 */
#define BLUE_GID_TBL_LEN	16
#define BLUE_MAX_NEIGH		16

/* Device limits reported by blue_query_device() and enforced at create time. */
#define BLUE_MAX_QP_WR		16384
#define BLUE_MAX_SGE		32
#define BLUE_MAX_INLINE		512
#define BLUE_MAX_CQE		65536
#define BLUE_MAX_MR		16383	/* the key's 14-bit slot, 0 unused (mr_key.h) */
#define BLUE_MAX_MW		4096	/* windows take slots of the same table (mw.h) */
#define BLUE_MAX_PD		4096
#define BLUE_MAX_RD_ATOMIC	16
#define BLUE_MAX_MR_SIZE	(1ull << 40)
#define BLUE_MAX_MSG		(1u << 31)	/* IBA: a message is at most 2^31 bytes */

/*
 * A static neighbour: where to send frames for a peer's IP address (a GID: IPv4-mapped
 * for IPv4). Set by hand
 * (blue__set_neigh: kept) or from a peer's CM message (blue__neigh_hold: refcounted by
 * the QPs connected with it, freed with the last). Either way a different MAC for an
 * address in use is refused: changing it would redirect the traffic of the QPs that
 * rely on it.
 */
struct blue_neigh {
	union blue_gid addr;
	uint8_t mac[6];
	bool pinned;		/* set by hand: stays at refs 0 */
	unsigned int refs;	/* QPs holding it (struct blue_qp.neigh_addr) */
};

struct blue_qp;
struct blue_verbs_ops;
struct blue_mgr_client;
struct blue_tenant_table;

struct blue_gsi_hub;

struct blue_context {
	const struct blue_verbs_ops *ops;	/* library or daemon mode (verbs_ops.h) */
	struct blue_mgr_client *mgr;	/* daemon mode: the channel to blue-manager */
	bool shared_rings;		/* blue-manager's: QP and CQ rings in memfds */
	struct blue_tenant_table *tenants;	/* blue-manager's: transmit classes and
						 * rates (progress.c); NULL in library mode */
	struct blue_hal *hal;
	bool owns_hal;			/* opened by blue_open_device(): destroy on close */
	struct blue_hal_sock *sock;	/* every QP of this context is flow-bound to it */
	struct blue_qp_ctx *qp_tbl;	/* blue_hal_qp_ctx_table(hal) */
	int slot_fd;			/* marks our slots of qp_tbl (slot_owner.h); -1: loopback */
	char ifname[IF_NAMESIZE];	/* "" over the loopback HAL */

	uint8_t mac[6];
	uint32_t ip;			/* network order; 0: the netdev has no IPv4 */
	union blue_gid gid[BLUE_GID_TBL_LEN];	/* read at open (netdev.c) */
	enum blue_mtu active_mtu;	/* largest IB MTU a frame (and the netdev) carries */
	uint32_t link_mbps;		/* the netdev's speed (sysfs); 0: unknown, loopback */
	struct blue_neigh neigh[BLUE_MAX_NEIGH];
	unsigned int nneigh;

	/* objects, so close can refuse while they exist */
	unsigned int npd, nmr, ncq, nqp, nchannel, nsrq;
	unsigned int nmw;		/* memory windows (mw.c) */
	struct blue_mr_table mrs;
	struct blue_qp *qp_by_slot[BLUE_MAX_QP];	/* process-local: slot -> our QP */
	struct blue_qp *qps;				/* list of our QPs (qp->next) */

	/* event mode: a timerfd in every channel's epoll set, armed at the next deadline */
	int timer_fd;			/* -1 until the first completion channel */
	uint64_t timer_set_ns;		/* what it is armed for (0: disarmed) */

	struct blue_engine eng;
	struct blue_loopback lb;	/* frames to ourselves, for the next pass */
	struct blue_mcast mcast;	/* groups our UD QPs are attached to (mcast.h) */
	struct blue_gsi_hub *gsi_hub;	/* blue-manager: QP1 shared by processes (gsi_hub.h) */
	struct blue_obs obs;		/* dev_stats and the diag switch (obs.h) */
	struct blue_events events;	/* asynchronous events (events.h) */
};

/*
 * blue_open_device_hal() - open a context on an already opened HAL (the loopback HAL in
 * tests). The HAL stays the caller's: close the context before destroying it.
 * @mac: the local MAC; @ip: the local IPv4 address in network order.
 * Return: a context, or NULL with errno set.
 */
struct blue_context *blue_open_device_hal(struct blue_hal *hal, const uint8_t mac[6],
					  uint32_t ip) __attribute__((visibility("hidden")));

/*
 * blue__open_device_local() - blue_open_device_queue() in library mode, whatever
 * BLUE_MODE says: this process owns the queue and runs the engine (blue-manager's own
 * open). Return: a context, or NULL with errno set after a message.
 */
struct blue_context *blue__open_device_local(const char *ifname, unsigned int queue)
	__attribute__((visibility("hidden")));

/*
 * blue__set_neigh() - a static neighbour entry: frames to @ip go to @mac. Consulted at
 * INIT->RTR before the kernel neighbour table. It stays until the context closes.
 * Return: 0, -EADDRINUSE when QPs hold @ip with another MAC, -ENOSPC when the table is
 * full (BLUE_MAX_NEIGH).
 */
int blue__set_neigh_gid(struct blue_context *ctx, const union blue_gid *addr,
			const uint8_t mac[6]) __attribute__((visibility("hidden")));
/* The same for an IPv4 address @ip (network order). */
int blue__set_neigh(struct blue_context *ctx, uint32_t ip, const uint8_t mac[6])
	__attribute__((visibility("hidden")));

/*
 * blue__neigh_hold() - take a reference on the entry @ip -> @mac, making it if needed.
 * @cur: on -EADDRINUSE, a copy of the entry in the way (NULL: not wanted).
 * Return: 0, -EADDRINUSE when @ip is in use (held or set by hand) with another MAC,
 * -ENOSPC when the table is full.
 */
int blue__neigh_hold(struct blue_context *ctx, const union blue_gid *addr,
		     const uint8_t mac[6], struct blue_neigh *cur) __attribute__((visibility("hidden")));

/* blue__neigh_check() - would blue__neigh_hold() succeed? The same returns, no change. */
int blue__neigh_check(const struct blue_context *ctx, const union blue_gid *addr,
		      const uint8_t mac[6], struct blue_neigh *cur) __attribute__((visibility("hidden")));

/* blue__neigh_put() - drop a reference; the last one frees an entry not set by hand. */
void blue__neigh_put(struct blue_context *ctx, const union blue_gid *addr)
	__attribute__((visibility("hidden")));

/*
 * blue__resolve_neigh() - the MAC for @addr (a GID): the context's own for one of its
 * GIDs (loopback: a QP connected to another QP of this device), a static entry, else
 * the kernel neighbour table on the context's netdev (/proc/net/arp for IPv4, netlink
 * RTM_GETNEIGH for IPv6: ip6.c); when that has no usable entry, a datagram to the
 * address's discard port makes the kernel resolve it (ARP, or IPv6 neighbour
 * discovery), and the table is read again for up to a second. @addr must be on the
 * netdev's link (no next-hop lookup).
 * Return: 0 or -ENOENT (logged, naming the address and what to do).
 */
int blue__resolve_neigh(struct blue_context *ctx, const union blue_gid *addr, uint8_t mac[6])
	__attribute__((visibility("hidden")));

/* The index of @gid in the context's GID table, or -1 (empty entries match nothing). */
int blue__gid_index(const struct blue_context *ctx, const union blue_gid *gid)
	__attribute__((visibility("hidden")));

/* Is entry @index of the table in use (not all zeros)? */
bool blue__gid_valid(const union blue_gid gid[BLUE_GID_TBL_LEN], int index)
	__attribute__((visibility("hidden")));

/*
 * blue__gid_add6() - add the IPv6 address @a6 to the table from index 2 on, as
 * roce_gid_mgmt adds a netdev's addresses (in the order given). Link-local (fe80::/10)
 * addresses are left out: index 0 is the default link-local GID already.
 * Return: 0, -EEXIST (already there) or -ENOSPC (table full).
 */
int blue__gid_add6(union blue_gid gid[BLUE_GID_TBL_LEN], const uint8_t a6[16])
	__attribute__((visibility("hidden")));

/* ::ffff:@ip (network order) as a GID (annex A17.4.1). */
void blue__gid_from_ipv4(union blue_gid *gid, uint32_t ip) __attribute__((visibility("hidden")));

/* @gid as text: a.b.c.d when IPv4-mapped, else IPv6. */
const char *blue__gid_str(const union blue_gid *gid, char *buf, size_t len)
	__attribute__((visibility("hidden")));

/* The GID table of a MAC and an IPv4 address, as rxe fills it (see blue_query_gid). */
void blue__fill_gids(union blue_gid gid[BLUE_GID_TBL_LEN], const uint8_t mac[6], uint32_t ip)
	__attribute__((visibility("hidden")));

/* The MAC and MTU of @ifname (SIOCGIFHWADDR, SIOCGIFMTU); 0 or a negative errno. */
int blue__netdev_l2(const char *ifname, uint8_t mac[6], uint32_t *mtu)
	__attribute__((visibility("hidden")));

/* Is blue's pinned program the XDP program of @ifname (@ifindex) in this namespace?
 * 0, or -ENOENT; with @say, a message says what to run (netdev.c). */
int blue__netdev_attached(const char *ifname, unsigned int ifindex, bool say)
	__attribute__((visibility("hidden")));

/* Is @gid ::ffff:a.b.c.d (annex A17.4.1)? Then *@ip is a.b.c.d in network order. */
bool blue__gid_ipv4(const union blue_gid *gid, uint32_t *ip) __attribute__((visibility("hidden")));

/* The IB MTU for a frame room and a netdev MTU (0: no netdev limit). */
enum blue_mtu blue__mtu_for(uint32_t frame_room, uint32_t netdev_mtu)
	__attribute__((visibility("hidden")));

/* What blue_query_device() and blue_query_port() report, given the HAL's name and the
 * port's active MTU (shared with blue__netdev_query, which has no context). */
void blue__device_attr(struct blue_device_attr *attr, const char *hal_name)
	__attribute__((visibility("hidden")));
void blue__port_attr(struct blue_port_attr *attr, enum blue_mtu active_mtu)
	__attribute__((visibility("hidden")));

/* What a context on a netdev would answer to the queries (blue__netdev_query). */
struct blue_netdev_query {
	struct blue_device_attr dev;
	struct blue_port_attr port;
	union blue_gid gid[BLUE_GID_TBL_LEN];
};

/*
 * blue__netdev_query() - the answers blue_open_device(@ifname) would give to
 * blue_query_device/port/gid, read from the netdev (MAC, MTU, IPv4) and blue's pins,
 * without binding the netdev's AF_XDP queue, which serves one process: a query tool
 * (ibv_devinfo) must work while a server holds the device. The port's MTU assumes the
 * HAL gets the frames the netdev's MTU needs (multi-buffer above 4 KiB), as the open
 * asks for them; a kernel that refuses AF_XDP multi-buffer makes the open's smaller.
 * Return: 0, or a negative errno after a message saying why (as blue_open_device's).
 */
int blue__netdev_query(const char *ifname, struct blue_netdev_query *q)
	__attribute__((visibility("hidden")));

#endif /* BLUE_RUNTIME_DEVICE_H */
