/* SPDX-License-Identifier: MIT */
/*
 * Multicast steering (IBA 10.5, annex A17.4.6 for RoCEv2): a hash map from {group,
 * netdev queue} to the AF_XDP socket of the engine that serves that queue and has UD
 * QPs attached to the group. The runtime writes an entry when the first QP of its
 * engine attaches to a group and deletes it with the last detach; the XDP program
 * looks a frame with BTH DestQP 0xFFFFFF up by its destination IP and the queue it
 * came in on, and redirects it to that socket or drops it (drop_mcast_unjoined). Which
 * QPs get a copy is the engine's business (runtime/mcast.c): the map knows sockets.
 *
 * Keyed by queue as well as group so that each engine owns its own entries: two
 * processes on two queues that join one group never write the same entry.
 */
#ifndef BLUE_MCAST_H
#define BLUE_MCAST_H

#include <linux/types.h>
#include <blue/qp_ctx.h>

/* The DestQP of every multicast packet (IBA 10.5); no QP is ever given it (qp.c). */
#define BLUE_MCAST_QPN		0x00ffffffu

/*
 * Groups one engine (a device's context in one process) may have attached at once,
 * QPs one group may hold, and attachments in all (a QP in several groups counts once
 * per group). rxe offers 8192 / 56 / 8192 * 56; blue's table is a fixed array per
 * engine, and the map holds every queue's groups.
 */
#define BLUE_MAX_MCAST_GRP		64u
#define BLUE_MAX_MCAST_QP_ATTACH	16u
#define BLUE_MAX_MCAST_TOTAL_ATTACH	256u
#define BLUE_MCAST_MAP_ENTRIES		(BLUE_MAX_MCAST_GRP * BLUE_MAX_QUEUES)

struct blue_mcast_key {
	__u8	gid[16];	/* the group: ::ffff:a.b.c.d for IPv4, else the IPv6 address */
	__u32	queue;		/* the netdev queue its frames come in on */
};

struct blue_mcast_val {
	__u32	xsk_slot;	/* XSKMAP index of the engine's socket (on that queue) */
	__u32	nqp;		/* QPs of the engine attached, for people (bluectl, bpftool) */
	__u32	owner_pid;	/* the engine's process, as its PID namespace numbers it */
	__u32	pad;
};

_Static_assert(sizeof(struct blue_mcast_key) == 20, "blue_mcast_key layout changed");
_Static_assert(sizeof(struct blue_mcast_val) == 16, "blue_mcast_val layout changed");

/* Is @gid a multicast GID (ff00::/8, or IPv4-mapped 224.0.0.0/4)? */
static inline int blue_gid_is_mcast(const __u8 gid[16])
{
	__u32 w0, w1;

	if (gid[0] == 0xff)
		return 1;
	__builtin_memcpy(&w0, gid, 4);
	__builtin_memcpy(&w1, gid + 4, 4);
	/* ::ffff:0:0/96 with a class D address (RFC 5771) */
	return !w0 && !w1 && gid[8] == 0 && gid[9] == 0 && gid[10] == 0xff &&
	       gid[11] == 0xff && (gid[12] & 0xf0) == 0xe0;
}

/*
 * The Ethernet address a group's frames go to (RFC 1112 6.4: 01:00:5e + the low 23
 * bits of the IPv4 group; RFC 2464 7: 33:33 + the low 32 bits of the IPv6 group).
 */
static inline void blue_mcast_mac(const __u8 gid[16], __u8 mac[6])
{
	int v4 = gid[0] != 0xff;

	mac[0] = v4 ? 0x01 : 0x33;
	mac[1] = v4 ? 0x00 : 0x33;
	mac[2] = v4 ? 0x5e : gid[12];
	mac[3] = v4 ? (__u8)(gid[13] & 0x7f) : gid[13];
	mac[4] = gid[14];
	mac[5] = gid[15];
}

#endif /* BLUE_MCAST_H */
