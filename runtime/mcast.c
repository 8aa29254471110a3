// SPDX-License-Identifier: MIT
/*
 * Multicast groups of a context (mcast.h): attach and detach with their checks and
 * limits, the group's steering entry and its membership on the netdev. The answers
 * follow the kernel's: ib_attach_mcast refuses a non-UD QP or a non-multicast GID with
 * EINVAL; attaching a QP twice succeeds (uverbs finds it on its list and says 0, as
 * rxe_attach_mcg does); detaching a group the QP is not attached to is EINVAL (uverbs);
 * rxe's limits answer ENOMEM.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "runtime/device.h"
#include "runtime/log.h"
#include "runtime/mcast.h"
#include "runtime/mgr_client.h"
#include "runtime/verbs_ops.h"
#include "runtime/qp.h"

static struct blue_mcast_grp *grp_find(struct blue_mcast *mc, const uint8_t mgid[16])
{
	unsigned int i;

	for (i = 0; i < BLUE_MAX_MCAST_GRP; i++)
		if (mc->grp[i].nqp && !memcmp(mc->grp[i].mgid.raw, mgid, 16))
			return &mc->grp[i];
	return NULL;
}

const struct blue_mcast_grp *blue__mcast_find(const struct blue_context *ctx,
					      const uint8_t mgid[16])
{
	return grp_find((struct blue_mcast *)&ctx->mcast, mgid);
}

static int grp_qp_index(const struct blue_mcast_grp *g, const struct blue_qp *qp)
{
	unsigned int i;

	for (i = 0; i < g->nqp; i++)
		if (g->qp[i] == qp)
			return (int)i;
	return -1;
}

/*
 * Join @mgid on the context's netdev: a UDP socket's membership makes the kernel accept
 * the group's MAC (it programs the NIC's filter) and report the group (IGMP, MLD) to
 * snooping switches, as rdma_cm's cma_igmp_send does for rxe. The socket receives
 * nothing blue wants (XDP takes RoCE frames first); it only holds the membership.
 * Return: the socket, -1 over the loopback HAL (no netdev), or -errno.
 */
static int netdev_join(struct blue_context *ctx, const uint8_t mgid[16])
{
	char gstr[INET6_ADDRSTRLEN];
	unsigned int ifindex;
	uint32_t ip4;
	int fd, err;

	if (!ctx->ifname[0])
		return -1;
	ifindex = if_nametoindex(ctx->ifname);
	if (!ifindex)
		return -errno;
	ip4 = blue__gid_ipv4((const union blue_gid *)mgid, &ip4) ? ip4 : 0;
	fd = socket(ip4 ? AF_INET : AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (ip4) {
		struct ip_mreqn m = { .imr_ifindex = (int)ifindex };

		m.imr_multiaddr.s_addr = ip4;
		err = setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof(m));
	} else {
		struct ipv6_mreq m = { .ipv6mr_interface = ifindex };

		memcpy(&m.ipv6mr_multiaddr, mgid, 16);
		err = setsockopt(fd, IPPROTO_IPV6, IPV6_JOIN_GROUP, &m, sizeof(m));
	}
	if (err) {
		err = -errno;
		blue__logf("attach_mcast: joining %s on %s failed: %s",
			   blue__gid_str((const union blue_gid *)mgid, gstr, sizeof(gstr)),
			   ctx->ifname, strerror(-err));
		close(fd);
		return err;
	}
	return fd;
}

/* A new group entry: steered to our socket, joined on the netdev. 0 or -errno. */
static int grp_open(struct blue_context *ctx, const union blue_gid *gid,
		    struct blue_mcast_grp **out)
{
	struct blue_mcast *mc = &ctx->mcast;
	struct blue_mcast_grp *g = NULL;
	char gstr[INET6_ADDRSTRLEN];
	unsigned int i;
	int err, fd;

	for (i = 0; i < BLUE_MAX_MCAST_GRP && !g; i++)
		if (!mc->grp[i].nqp)
			g = &mc->grp[i];
	if (!g) {
		blue__logf("attach_mcast: the device has %u groups attached already, its "
			   "max_mcast_grp", BLUE_MAX_MCAST_GRP);
		return -ENOMEM;
	}
	err = blue_hal_mcast_bind(ctx->sock, gid->raw, 1);
	if (err) {
		blue__logf("attach_mcast: steering group %s to this device's socket failed: "
			   "%s%s", blue__gid_str(gid, gstr, sizeof(gstr)), strerror(-err),
			   err == -EOPNOTSUPP ? " (the netdev's pins have no multicast map: "
			   "bluectl detach and attach it again)" : "");
		return err == -ENOSPC ? -ENOMEM : err;
	}
	fd = netdev_join(ctx, gid->raw);
	if (fd < -1) {
		blue_hal_mcast_unbind(ctx->hal, gid->raw);
		return fd;
	}
	memset(g, 0, sizeof(*g));
	g->mgid = *gid;
	g->join_fd = fd;
	mc->ngrp++;
	*out = g;
	return 0;
}

static void grp_close(struct blue_context *ctx, struct blue_mcast_grp *g)
{
	blue_hal_mcast_unbind(ctx->hal, g->mgid.raw);
	if (g->join_fd >= 0)
		close(g->join_fd);	/* the kernel leaves the group (IGMP/MLD leave) */
	g->join_fd = -1;
	ctx->mcast.ngrp--;
}

/* The checks ib_attach_mcast and ib_detach_mcast make; 0 or EINVAL after a line. */
static int mcast_check(const struct blue_qp *qp, const union blue_gid *gid, const char *who)
{
	char gstr[INET6_ADDRSTRLEN];

	if (!qp || !gid) {
		blue__logf("%s: %s is NULL", who, qp ? "gid" : "qp");
		return EINVAL;
	}
	if (qp->type != BLUE_QPT_UD) {
		blue__logf("%s: QP 0x%x is not a UD QP: only UD QPs join groups (IBA 10.5)",
			   who, qp->qpn);
		return EINVAL;
	}
	if (!blue_gid_is_mcast(gid->raw)) {
		blue__logf("%s: %s is not a multicast GID (ff00::/8, or ::ffff:a.b.c.d with "
			   "a.b.c.d in 224.0.0.0/4)", who, blue__gid_str(gid, gstr, sizeof(gstr)));
		return EINVAL;
	}
	return 0;
}

int blue_attach_mcast(struct blue_qp *qp, const union blue_gid *gid, uint16_t lid)
{
	struct blue_mcast_grp *g;
	struct blue_mcast *mc;
	int err;

	err = mcast_check(qp, gid, "attach_mcast");
	if (err)
		return err;
	if (blue__engine_elsewhere(qp->ctx))
		return blue__mgr_mcast(qp, gid, lid, true);	/* the daemon's groups */
	mc = &qp->ctx->mcast;
	g = grp_find(mc, gid->raw);
	if (g && grp_qp_index(g, qp) >= 0)
		return 0;
	if (g && g->nqp == BLUE_MAX_MCAST_QP_ATTACH) {
		blue__logf("attach_mcast: the group has %u QPs of this device attached, its "
			   "max_mcast_qp_attach", BLUE_MAX_MCAST_QP_ATTACH);
		return ENOMEM;
	}
	if (mc->nattach == BLUE_MAX_MCAST_TOTAL_ATTACH) {
		blue__logf("attach_mcast: the device has %u attachments, its "
			   "max_total_mcast_qp_attach", BLUE_MAX_MCAST_TOTAL_ATTACH);
		return ENOMEM;
	}
	if (!g) {
		err = grp_open(qp->ctx, gid, &g);
		if (err)
			return -err;
	}
	g->qp[g->nqp++] = qp;
	mc->nattach++;
	qp->nmcast++;
	/* the count beside the steering entry, for bluectl and bpftool; best effort */
	if (g->nqp > 1)
		blue_hal_mcast_bind(qp->ctx->sock, gid->raw, g->nqp);
	return 0;
}

int blue_detach_mcast(struct blue_qp *qp, const union blue_gid *gid, uint16_t lid)
{
	char gstr[INET6_ADDRSTRLEN];
	struct blue_mcast_grp *g;
	int err, i;

	err = mcast_check(qp, gid, "detach_mcast");
	if (err)
		return err;
	if (blue__engine_elsewhere(qp->ctx))
		return blue__mgr_mcast(qp, gid, lid, false);
	g = grp_find(&qp->ctx->mcast, gid->raw);
	i = g ? grp_qp_index(g, qp) : -1;
	if (i < 0) {
		blue__logf("detach_mcast: QP 0x%x is not attached to %s", qp->qpn,
			   blue__gid_str(gid, gstr, sizeof(gstr)));
		return EINVAL;
	}
	g->qp[i] = g->qp[--g->nqp];
	qp->ctx->mcast.nattach--;
	qp->nmcast--;
	if (!g->nqp)
		grp_close(qp->ctx, g);
	else
		blue_hal_mcast_bind(qp->ctx->sock, gid->raw, g->nqp);
	return 0;
}

void blue__mcast_detach_all(struct blue_qp *qp)
{
	struct blue_mcast *mc = &qp->ctx->mcast;

	for (unsigned int i = 0; i < BLUE_MAX_MCAST_GRP && qp->nmcast; i++) {
		struct blue_mcast_grp *g = &mc->grp[i];
		union blue_gid gid = g->mgid;

		if (g->nqp && grp_qp_index(g, qp) >= 0)
			(void)blue_detach_mcast(qp, &gid, 0);
	}
}
