/* SPDX-License-Identifier: MIT */
/*
 * Multicast (IBA 10.5; annex A17.4.6 for RoCEv2): the groups a context's UD QPs are
 * attached to. A group is an IP multicast address, its GID the IPv4-mapped address or
 * the IPv6 one. The first attachment of a group on the context steers the group's
 * frames to the context's socket (the HAL's multicast map: include/blue/mcast.h) and
 * joins it on the netdev (a UDP socket's IP_ADD_MEMBERSHIP / IPV6_JOIN_GROUP, which
 * programs the NIC's filter and sends the IGMP/MLD report); the last detach undoes both.
 * A datagram for the group is handed to every attached QP (progress.c), and one sent by
 * a QP of the context to a group the context has attached is also received here
 * (progress.c blue__tx_pkt), as the kernel loops IP multicast back to rxe.
 */
#ifndef BLUE_RUNTIME_MCAST_H
#define BLUE_RUNTIME_MCAST_H

#include <stdbool.h>
#include <stdint.h>
#include <blue/blue.h>
#include <blue/mcast.h>

#define BLUE_HIDDEN __attribute__((visibility("hidden")))

struct blue_qp;
struct blue_context;

struct blue_mcast_grp {
	union blue_gid mgid;
	struct blue_qp *qp[BLUE_MAX_MCAST_QP_ATTACH];
	unsigned int nqp;		/* 0: the entry is free */
	int join_fd;			/* holds the netdev membership; -1 over loopback */
};

struct blue_mcast {
	struct blue_mcast_grp grp[BLUE_MAX_MCAST_GRP];
	unsigned int ngrp;		/* entries in use */
	unsigned int nattach;		/* attachments, all groups */
};

/* The group @mgid if a QP of @ctx is attached to it, else NULL. */
const struct blue_mcast_grp *blue__mcast_find(const struct blue_context *ctx,
					      const uint8_t mgid[16]) BLUE_HIDDEN;

/* blue__mcast_detach_all() - detach @qp from every group it is attached to. */
void blue__mcast_detach_all(struct blue_qp *qp) BLUE_HIDDEN;

#endif /* BLUE_RUNTIME_MCAST_H */
