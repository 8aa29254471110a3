// SPDX-License-Identifier: MIT
/*
 * The device context over a HAL: open/close, the queries, the GID table and the
 * neighbour lookup used at INIT->RTR. Opening a real netdev is netdev.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "runtime/verbs_ops.h"
#include "runtime/cc_wire.h"
#include "runtime/device.h"
#include "runtime/ip6.h"
#include "runtime/log.h"
#include "runtime/qp.h"

/*
 * The most any RC packet that carries payload adds around it: IPv4 20, UDP 8, BTH 12,
 * RETH 16, ImmDt 4, ICRC 4 (a full-MTU payload needs no pad). Ethernet adds 14 more
 * in a frame.
 */
#define BLUE_IP_OVERHEAD	(20 + 8 + 12 + 16 + 4 + 4)

enum blue_mtu blue__mtu_for(uint32_t frame_room, uint32_t netdev_mtu)
{
	uint32_t room = frame_room > BLUE_ETH_HLEN + BLUE_IP_OVERHEAD ?
			frame_room - BLUE_ETH_HLEN - BLUE_IP_OVERHEAD : 0;
	enum blue_mtu m;

	if (netdev_mtu) {
		uint32_t nroom = netdev_mtu > BLUE_IP_OVERHEAD ? netdev_mtu - BLUE_IP_OVERHEAD : 0;

		if (nroom < room)
			room = nroom;
	}
	for (m = BLUE_MTU_4096; m > BLUE_MTU_256; m--)
		if ((uint32_t)blue_mtu_bytes(m) <= room)
			break;
	return m;
}

bool blue__gid_ipv4(const union blue_gid *gid, uint32_t *ip)
{
	static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (memcmp(gid->raw, prefix, sizeof(prefix)))
		return false;
	memcpy(ip, gid->raw + 12, 4);
	return true;
}

void blue__gid_from_ipv4(union blue_gid *gid, uint32_t ip)
{
	memset(gid->raw, 0, 16);
	gid->raw[10] = 0xff;
	gid->raw[11] = 0xff;
	memcpy(gid->raw + 12, &ip, 4);
}

const char *blue__gid_str(const union blue_gid *gid, char *buf, size_t len)
{
	uint32_t ip;

	if (blue__gid_ipv4(gid, &ip))
		inet_ntop(AF_INET, &ip, buf, (socklen_t)len);
	else
		inet_ntop(AF_INET6, gid->raw, buf, (socklen_t)len);
	return buf;
}

bool blue__gid_valid(const union blue_gid gid[BLUE_GID_TBL_LEN], int index)
{
	static const uint8_t zero[16];

	return index >= 0 && index < BLUE_GID_TBL_LEN && memcmp(gid[index].raw, zero, 16);
}

int blue__gid_index(const struct blue_context *ctx, const union blue_gid *gid)
{
	for (int i = 0; i < BLUE_GID_TBL_LEN; i++)
		if (blue__gid_valid(ctx->gid, i) && !memcmp(ctx->gid[i].raw, gid->raw, 16))
			return i;
	return -1;
}

int blue__gid_add6(union blue_gid gid[BLUE_GID_TBL_LEN], const uint8_t a6[16])
{
	int i;

	if (a6[0] == 0xfe && (a6[1] & 0xc0) == 0x80)
		return -EEXIST;		/* link-local: the default GID stands for it */
	for (i = 2; i < BLUE_GID_TBL_LEN; i++) {
		if (!blue__gid_valid(gid, i)) {
			memcpy(gid[i].raw, a6, 16);
			return 0;
		}
		if (!memcmp(gid[i].raw, a6, 16))
			return -EEXIST;
	}
	return -ENOSPC;
}

void blue__fill_gids(union blue_gid gid[BLUE_GID_TBL_LEN], const uint8_t mac[6], uint32_t ip)
{
	uint8_t *g;

	memset(gid, 0, sizeof(union blue_gid) * BLUE_GID_TBL_LEN);

	/* index 0: fe80::/64 with the modified EUI-64 of the MAC (RFC 4291 app. A) */
	g = gid[0].raw;
	memset(g, 0, 16);
	g[0] = 0xfe;
	g[1] = 0x80;
	g[8] = mac[0] ^ 0x02;	/* flip the universal/local bit */
	g[9] = mac[1];
	g[10] = mac[2];
	g[11] = 0xff;
	g[12] = 0xfe;
	g[13] = mac[3];
	g[14] = mac[4];
	g[15] = mac[5];
	/* index 1: ::ffff:a.b.c.d, the RoCEv2 GID of the IPv4 address (annex A17.4.1);
	 * left empty without one, so the IPv6 GIDs keep their indices from 2 */
	if (ip)
		blue__gid_from_ipv4(&gid[1], ip);
}

struct blue_context *blue_open_device_hal(struct blue_hal *hal, const uint8_t mac[6], uint32_t ip)
{
	struct blue_context *ctx;
	int err;

	if (!hal || !mac) {
		errno = EINVAL;
		return NULL;
	}
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx) {
		errno = ENOMEM;
		return NULL;
	}
	if (blue__cc_env() == -2) {	/* BLUE_CC names nothing we have (logged) */
		free(ctx);
		errno = EINVAL;
		return NULL;
	}
	ctx->ops = &blue__lib_ops;
	ctx->hal = hal;
	ctx->timer_fd = -1;
	ctx->slot_fd = -1;
	/* progress.c ack_hold: hold ACK-only doorbells for the next pass */
	ctx->eng.defer_acks = blue__env_flag("BLUE_ACK_DEFER", true);
	blue__obs_init(ctx);
	ctx->qp_tbl = blue_hal_qp_ctx_table(hal);
	memcpy(ctx->mac, mac, 6);
	ctx->ip = ip;
	blue__fill_gids(ctx->gid, mac, ip);
	ctx->active_mtu = blue__mtu_for(hal->max_pkt, 0);
	err = blue__events_init(&ctx->events);
	if (err) {
		blue__logf("cannot make the async event fd: %s", strerror(-err));
		free(ctx);
		errno = -err;
		return NULL;
	}
	err = blue_hal_sock_open(hal, &ctx->sock);
	if (err) {
		blue__logf("cannot open a %s HAL socket: %s", hal->ops->name, strerror(-err));
		blue__events_fini(&ctx->events);
		free(ctx);
		errno = -err;
		return NULL;
	}
	return ctx;
}

int blue__lib_close_device(struct blue_context *ctx)
{
	if (!ctx)
		return EINVAL;
	if (ctx->nqp || ctx->ncq || ctx->nmr || ctx->npd || ctx->nchannel || ctx->nsrq) {
		blue__logf("close_device: %u QPs, %u CQs, %u MRs, %u PDs, %u channels, %u SRQs "
			   "remain; destroy them first", ctx->nqp, ctx->ncq, ctx->nmr, ctx->npd,
			   ctx->nchannel, ctx->nsrq);
		return EBUSY;
	}
	blue__tx_flush(ctx);
	blue__loopback_fini(ctx);
	blue__obs_close(ctx);
	blue_hal_sock_close(ctx->sock);
	if (ctx->owns_hal)
		blue_hal_destroy(ctx->hal);
	if (ctx->slot_fd >= 0)
		close(ctx->slot_fd);
	blue__mr_table_fini(&ctx->mrs);
	blue__events_fini(&ctx->events);
	free(ctx);
	return 0;
}

int blue__lib_query_device(struct blue_context *ctx, struct blue_device_attr *attr)
{
	if (!ctx || !attr)
		return EINVAL;
	blue__device_attr(attr, ctx->hal->ops->name);
	return 0;
}

/*
 * The ids a verbs program reads (ibv_devinfo's vendor_id, vendor_part_id). rdma-core's
 * tests require a non-zero vendor_id (test_device.py), and programs pick vendor paths by
 * it: Mellanox 0x02c9 (perftest, UCX: mlx5dv; rdma-core tests: mlx5), Amazon 0x1d0f
 * (EFA), rxe 0xffffff; perftest's ib_dev_name() also matches Chelsio 0x1425, Intel
 * 0x8086, 0x209b, 0x1f67, 0x1f0f, 0x1dd8 and, for any other vendor, a table of part ids,
 * none of them 1. So: "BLU" in ASCII, which no such table holds and which cannot be an
 * IEEE-assigned OUI (0x42 has the locally-administered bit set), and device rev 1.
 */
#define BLUE_VENDOR_ID		0x424c55
#define BLUE_VENDOR_PART_ID	1

void blue__device_attr(struct blue_device_attr *attr, const char *hal_name)
{
	memset(attr, 0, sizeof(*attr));
	snprintf(attr->fw_ver, sizeof(attr->fw_ver), "blue 0.1 (%s)", hal_name);
	attr->max_mr_size = BLUE_MAX_MR_SIZE;
	attr->vendor_id = BLUE_VENDOR_ID;
	attr->vendor_part_id = BLUE_VENDOR_PART_ID;
	attr->max_qp = BLUE_MAX_QP - 2;	/* slots 0 and 1 would make QPN 0 and 1 */
	attr->max_qp_wr = BLUE_MAX_QP_WR;
	attr->max_sge = BLUE_MAX_SGE;
	attr->max_cq = 65536;
	attr->max_cqe = BLUE_MAX_CQE;
	attr->max_mr = BLUE_MAX_MR;
	attr->max_mw = BLUE_MAX_MW;
	attr->max_pd = BLUE_MAX_PD;
	attr->max_qp_rd_atom = BLUE_MAX_RD_ATOMIC;
	attr->max_qp_init_rd_atom = BLUE_MAX_RD_ATOMIC;
	attr->atomic_cap = 1;
	attr->phys_port_cnt = 1;
	attr->max_mcast_grp = BLUE_MAX_MCAST_GRP;
	attr->max_mcast_qp_attach = BLUE_MAX_MCAST_QP_ATTACH;
	attr->max_total_mcast_qp_attach = BLUE_MAX_MCAST_TOTAL_ATTACH;
}

int blue_query_port(struct blue_context *ctx, uint8_t port, struct blue_port_attr *attr)
{
	if (!ctx || !attr || port != 1)
		return EINVAL;
	blue__port_attr(attr, ctx->active_mtu);
	return 0;
}

void blue__port_attr(struct blue_port_attr *attr, enum blue_mtu active_mtu)
{
	memset(attr, 0, sizeof(*attr));
	attr->state = 4;	/* IBV_PORT_ACTIVE */
	attr->max_mtu = active_mtu;
	attr->active_mtu = active_mtu;
	attr->gid_tbl_len = BLUE_GID_TBL_LEN;
	attr->link_layer = 2;	/* IBV_LINK_LAYER_ETHERNET */
}

int blue_query_gid(struct blue_context *ctx, uint8_t port, int index, union blue_gid *gid)
{
	if (!ctx || !gid || port != 1 || index < 0 || index >= BLUE_GID_TBL_LEN)
		return EINVAL;
	*gid = ctx->gid[index];	/* an empty entry reads as zeros, as rxe's sysfs shows it */
	return 0;
}

static int neigh_find(const struct blue_context *ctx, const union blue_gid *addr)
{
	for (unsigned int i = 0; i < ctx->nneigh; i++)
		if (!memcmp(ctx->neigh[i].addr.raw, addr->raw, 16))
			return (int)i;
	return -1;
}

int blue__neigh_check(const struct blue_context *ctx, const union blue_gid *addr,
		      const uint8_t mac[6], struct blue_neigh *cur)
{
	int i = neigh_find(ctx, addr);
	const struct blue_neigh *n;

	if (i < 0)
		return ctx->nneigh == BLUE_MAX_NEIGH ? -ENOSPC : 0;
	n = &ctx->neigh[i];
	if (memcmp(n->mac, mac, 6) && (n->refs || n->pinned)) {
		if (cur)
			*cur = *n;
		return -EADDRINUSE;
	}
	return 0;
}

/* The entry for @addr set to @mac, or -EADDRINUSE if one in use has another MAC. */
static int neigh_claim(struct blue_context *ctx, const union blue_gid *addr,
		       const uint8_t mac[6], struct blue_neigh *cur, struct blue_neigh **out)
{
	int i = neigh_find(ctx, addr);
	int err = blue__neigh_check(ctx, addr, mac, cur);
	struct blue_neigh *n;

	if (err)
		return err;
	if (i >= 0) {
		n = &ctx->neigh[i];
		memcpy(n->mac, mac, 6);
		*out = n;
		return 0;
	}
	n = &ctx->neigh[ctx->nneigh++];
	memset(n, 0, sizeof(*n));
	n->addr = *addr;
	memcpy(n->mac, mac, 6);
	*out = n;
	return 0;
}

int blue__set_neigh_gid(struct blue_context *ctx, const union blue_gid *addr,
			const uint8_t mac[6])
{
	struct blue_neigh *n;
	int err = neigh_claim(ctx, addr, mac, NULL, &n);

	if (!err)
		n->pinned = true;
	return err;
}

int blue__set_neigh(struct blue_context *ctx, uint32_t ip, const uint8_t mac[6])
{
	union blue_gid g;

	blue__gid_from_ipv4(&g, ip);
	return blue__set_neigh_gid(ctx, &g, mac);
}

int blue__neigh_hold(struct blue_context *ctx, const union blue_gid *addr,
		     const uint8_t mac[6], struct blue_neigh *cur)
{
	struct blue_neigh *n;
	int err = neigh_claim(ctx, addr, mac, cur, &n);

	if (!err)
		n->refs++;
	return err;
}

void blue__neigh_put(struct blue_context *ctx, const union blue_gid *addr)
{
	int i = neigh_find(ctx, addr);
	struct blue_neigh *n;

	if (i < 0)
		return;
	n = &ctx->neigh[i];
	if (n->refs)
		n->refs--;
	if (!n->refs && !n->pinned)
		*n = ctx->neigh[--ctx->nneigh];	/* the last entry fills the hole */
}

/* /proc/net/arp: "IP address  HW type  Flags  HW address  Mask  Device". */
static int arp_lookup(const char *ifname, uint32_t ip, uint8_t mac[6])
{
	char line[256], ipstr[64], hw[64], dev[64];
	unsigned int type, flags, m[6];
	struct in_addr a;
	int found = -ENOENT;
	FILE *f;

	f = fopen("/proc/net/arp", "r");
	if (!f)
		return -ENOENT;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s 0x%x 0x%x %63s %*s %63s", ipstr, &type, &flags, hw,
			   dev) != 5)
			continue;
		if (inet_pton(AF_INET, ipstr, &a) != 1 || a.s_addr != ip)
			continue;
		if (ifname[0] && strcmp(dev, ifname))
			continue;
		if (!(flags & 0x2))	/* ATF_COM: the entry is resolved */
			continue;
		if (sscanf(hw, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4],
			   &m[5]) != 6)
			continue;
		for (int i = 0; i < 6; i++)
			mac[i] = (uint8_t)m[i];
		found = 0;
		break;
	}
	fclose(f);
	return found;
}

/* The kernel's entry for @addr on @ifname: ARP's table for IPv4, the netlink neighbour
 * table for IPv6 (ip6.c). Return: 0 or -ENOENT. */
static int neigh_lookup(const char *ifname, const union blue_gid *addr, uint8_t mac[6])
{
	uint32_t ip;

	if (blue__gid_ipv4(addr, &ip))
		return arp_lookup(ifname, ip, mac);
	return blue__neigh6_lookup(ifname, addr->raw, mac);
}

/*
 * The kernel has no entry yet: make it resolve one. A UDP datagram to the peer's
 * discard port (RFC 863), sent from a socket bound to the netdev, makes the kernel ARP
 * for it, or send an IPv6 neighbour solicitation (neither is RoCE, so blue's XDP
 * program passes them to the stack); then wait, bounded, for the entry to complete, as
 * rdma_resolve_addr() does.
 */
static int neigh_trigger(const char *ifname, const union blue_gid *addr, uint8_t mac[6])
{
	struct sockaddr_in sa4 = { .sin_family = AF_INET, .sin_port = htons(9) };
	struct sockaddr_in6 sa6 = { .sin6_family = AF_INET6, .sin6_port = htons(9) };
	struct timespec step = { 0, BLUE_NEIGH_STEP_MS * 1000000L };
	bool v4 = blue__gid_ipv4(addr, &sa4.sin_addr.s_addr);
	struct sockaddr *sa = v4 ? (struct sockaddr *)&sa4 : (struct sockaddr *)&sa6;
	socklen_t salen = v4 ? sizeof(sa4) : sizeof(sa6);
	int fd, waited;
	char b = 0;

	memcpy(sa6.sin6_addr.s6_addr, addr->raw, 16);
	/* a link-local IPv6 peer needs its scope; a global one takes the route's netdev */
	sa6.sin6_scope_id = if_nametoindex(ifname);
	fd = socket(sa->sa_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -ENOENT;
	/* best effort: without CAP_NET_RAW the route picks the netdev, as it does anyway */
	(void)setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ifname, (socklen_t)strlen(ifname));
	if (connect(fd, sa, salen) == 0)
		(void)send(fd, &b, 1, 0);
	close(fd);
	for (waited = 0; waited < BLUE_NEIGH_WAIT_MS; waited += BLUE_NEIGH_STEP_MS) {
		nanosleep(&step, NULL);
		if (neigh_lookup(ifname, addr, mac) == 0)
			return 0;
	}
	return -ENOENT;
}

int blue__resolve_neigh(struct blue_context *ctx, const union blue_gid *addr, uint8_t mac[6])
{
	char ipstr[INET6_ADDRSTRLEN];
	uint32_t ip = 0;
	bool v4 = blue__gid_ipv4(addr, &ip);
	int i;

	/* a group: its mapped MAC (RFC 1112 6.4, RFC 2464 7), no neighbour to ask */
	if (blue_gid_is_mcast(addr->raw)) {
		blue_mcast_mac(addr->raw, mac);
		return 0;
	}
	/* our own address: the frames loop back in the engine, no ARP (rxe_loopback) */
	if (blue__gid_index(ctx, addr) >= 0) {
		memcpy(mac, ctx->mac, 6);
		return 0;
	}
	i = neigh_find(ctx, addr);
	if (i >= 0) {
		memcpy(mac, ctx->neigh[i].mac, 6);
		return 0;
	}
	if (ctx->ifname[0] && (neigh_lookup(ctx->ifname, addr, mac) == 0 ||
			       neigh_trigger(ctx->ifname, addr, mac) == 0))
		return 0;
	blue__gid_str(addr, ipstr, sizeof(ipstr));
	if (ctx->ifname[0])
		blue__logf("no MAC address for %s on %s: it did not answer %s within %d ms "
			   "(is it on this link? a static entry: ip %sneigh add %s lladdr MAC "
			   "dev %s)", ipstr, ctx->ifname, v4 ? "ARP" : "neighbour discovery",
			   BLUE_NEIGH_WAIT_MS, v4 ? "" : "-6 ", ipstr, ctx->ifname);
	else
		blue__logf("no neighbour entry for %s on the loopback HAL: add a static one "
			   "(blue__set_neigh)", ipstr);
	return -ENOENT;
}
