// SPDX-License-Identifier: MIT
/*
 * blue_open_device(): a context on a real netdev. It reads the MAC (SIOCGIFHWADDR),
 * the MTU (SIOCGIFMTU), the first IPv4 address and the IPv6 ones (getifaddrs: the GID
 * table, read once at open), checks that blue's
 * program is the one attached to the netdev, and opens the AF_XDP HAL on the maps
 * `bluectl attach` pinned for it.
 *
 * Kept apart from device.c so that programs over the loopback HAL do not pull in
 * the AF_XDP HAL.
 */
#include <errno.h>
#include <ifaddrs.h>
#include <sched.h>
#include <stdlib.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <blue/pins.h>

#include "runtime/mgr_client.h"
#include "runtime/mgr_sock.h"
#include "runtime/device.h"
#include "runtime/ip6.h"
#include "runtime/log.h"
#include "runtime/slot_owner.h"

int blue__netdev_l2(const char *ifname, uint8_t mac[6], uint32_t *mtu)
{
	struct ifreq ifr;
	int fd, err = 0;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) {
		err = -errno;
		goto out;
	}
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	if (ioctl(fd, SIOCGIFMTU, &ifr) < 0) {
		err = -errno;
		goto out;
	}
	*mtu = (uint32_t)ifr.ifr_mtu;
out:
	close(fd);
	return err;
}

static int netdev_ipv4(const char *ifname, uint32_t *ip)
{
	struct ifaddrs *ifa, *i;
	int err = -EADDRNOTAVAIL;

	if (getifaddrs(&ifa) < 0)
		return -errno;
	for (i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
			continue;
		if (strcmp(i->ifa_name, ifname))
			continue;
		*ip = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
		err = 0;
		break;
	}
	freeifaddrs(ifa);
	return err;
}

/* a message only when the caller wants one (a device scan does not) */
#define SAY(...) do { if (say) blue__logf(__VA_ARGS__); } while (0)

/*
 * Is blue attached to @ifname in this network namespace? The pins live in this
 * namespace's directory (blue_pin_dir), but a netdev deleted and made again under the
 * same name finds the old one's pins until an attach reclaims them. What decides is
 * that the program pinned there is the XDP program on this ifindex (in any mode).
 * Return: 0, or -ENOENT (after saying what to run, with @say).
 */
int blue__netdev_attached(const char *ifname, unsigned int ifindex, bool say)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	struct statfs sfs;
	size_t dir_len;
	int fd, err;

	if (statfs(BLUE_BPFFS, &sfs) || sfs.f_type != BPF_FS_MAGIC) {
		SAY("open_device: %s: %s is not a mounted bpffs here, so blue's pins "
			   "cannot be found (under `ip netns exec` use `nsenter --net=...` "
			   "instead, or mount -t bpf bpf %s)", ifname, BLUE_BPFFS, BLUE_BPFFS);
		return -ENOENT;
	}
	err = blue_pin_dir(path, sizeof(path), ifname);
	if (err) {
		SAY("open_device: %s: cannot name its pin directory: %s", ifname, strerror(-err));
		return -ENOENT;
	}
	dir_len = strlen(path);
	snprintf(path + dir_len, sizeof(path) - dir_len, "/%s", BLUE_PIN_PROG);
	fd = bpf_obj_get(path);
	if (fd < 0) {
		err = errno;
		if (err == ENOENT)
			SAY("%s: blue is not attached; run 'bluectl attach %s'", ifname,
				   ifname);
		else
			SAY("open_device: %s: cannot open %s: %s", ifname, path,
				   strerror(err));
		return -ENOENT;
	}
	memset(&info, 0, sizeof(info));
	err = bpf_obj_get_info_by_fd(fd, &info, &len) ? -errno : 0;
	close(fd);
	if (err) {
		SAY("open_device: %s: %s: %s", ifname, path, strerror(-err));
		return err;
	}
	if (bpf_xdp_query((int)ifindex, 0, &q) == 0 &&
	    (q.prog_id == info.id || q.drv_prog_id == info.id || q.skb_prog_id == info.id ||
	     q.hw_prog_id == info.id))
		return 0;
	path[dir_len] = '\0';
	SAY("%s: blue is not attached; run 'bluectl attach %s' (pins exist under %s, but "
		   "this netdev runs XDP program id %u, not blue's id %u: left over from a "
		   "same-named netdev that was deleted)", ifname, ifname, path, q.prog_id,
		   info.id);
	return -ENOENT;
}

#undef SAY

/*
 * The QP-context table is shared by every process that serves a queue of the netdev,
 * and a process that died without closing leaves its slots claimed. Mark ours through
 * the pin directory, and free the slots whose owner is dead (slot_owner.c: a lock the
 * owner holds, which says the truth across PID namespaces and PID reuse), so `bluectl
 * qp list` tells the truth and XDP drops their late packets as unknown QPNs. The queue
 * we serve gets its mark too, for bluectl's "open by pid" (include/blue/pins.h).
 */
static int slots_open(struct blue_context *ctx, const char *ifname, unsigned int queue)
{
	char dir[PATH_MAX];
	unsigned int n;
	int fd, err = blue_pin_dir(dir, sizeof(dir), ifname);

	if (err) {	/* @dir holds nothing to show */
		blue__logf("open_device: %s: cannot name its pin directory to mark QP slots: %s",
			   ifname, strerror(-err));
		return err;
	}
	fd = blue__slot_owner_open(dir);
	if (fd < 0) {
		blue__logf("open_device: %s: cannot open its pin directory %s to mark QP slots: %s",
			   ifname, dir, strerror(-fd));
		return fd;
	}
	ctx->slot_fd = fd;
	err = blue_pin_mark_take(fd, BLUE_PIN_MARK_QUEUE(queue));
	if (err)	/* only what bluectl shows suffers */
		blue__logf("open_device: %s: cannot mark queue %u as served: %s", ifname, queue,
			   strerror(-err));
	n = blue__slots_reclaim(ctx->qp_tbl, fd);
	if (n)
		blue__logf("open_device: %s: freed %u QP slot%s left by a process that exited "
			   "without closing its device", ifname, n, n == 1 ? "" : "s");
	return 0;
}

/*
 * BLUE_CPU=N pins the thread that opens the device, the one that will poll it in
 * library mode, to CPU N. The progress engine busy-polls from blue_poll_cq(), and a
 * spinning poller that migrates drags its cache (UMEM rings, QP context) along;
 * pinning it is the usual remedy. Unset: the scheduler decides.
 */
static void pin_from_env(void)
{
	const char *e = getenv("BLUE_CPU");
	cpu_set_t set;
	char *end;
	long cpu;

	if (!e || !*e)
		return;
	cpu = strtol(e, &end, 10);
	if (*end || cpu < 0 || cpu >= CPU_SETSIZE) {
		blue__logf("open_device: BLUE_CPU=%s is not a CPU number; not pinning", e);
		return;
	}
	CPU_ZERO(&set);
	CPU_SET((int)cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		blue__logf("open_device: BLUE_CPU=%ld: cannot pin this thread: %s", cpu,
			   strerror(errno));
}

struct blue_context *blue_open_device(const char *ifname)
{
	const char *e = getenv("BLUE_QUEUE");
	unsigned long q = 0;
	char *end;

	if (e && *e) {
		errno = 0;
		q = strtoul(e, &end, 10);
		if (*end || errno || q >= BLUE_MAX_QUEUES) {
			blue__logf("open_device: BLUE_QUEUE=%s is not a queue number 0..%u", e,
				   BLUE_MAX_QUEUES - 1);
			errno = EINVAL;
			return NULL;
		}
	}
	return blue_open_device_queue(ifname, (unsigned int)q);
}

/*
 * What an open and a query both read first: the netdev exists here, blue is attached to
 * it, its MAC, MTU and IPv4 address (0 when it has none but has an IPv6 one: an
 * IPv6-only netdev serves RoCEv2 over IPv6). Return: 0, or a negative errno after a
 * message saying why.
 */
static int netdev_probe(const char *ifname, uint8_t mac[6], uint32_t *mtu, uint32_t *ip)
{
	unsigned int ifindex;
	int err;

	if (!ifname || !ifname[0]) {
		blue__logf("open_device: no interface name given");
		return -ENODEV;
	}
	if (strlen(ifname) >= IF_NAMESIZE) {
		blue__logf("open_device: interface name '%s' is longer than %d characters",
			   ifname, IF_NAMESIZE - 1);
		return -ENODEV;
	}
	ifindex = if_nametoindex(ifname);
	if (!ifindex) {
		blue__logf("open_device: no interface %s in this network namespace", ifname);
		return -ENODEV;
	}
	err = blue__netdev_attached(ifname, ifindex, true);
	if (err)
		return err;
	err = blue__netdev_l2(ifname, mac, mtu);
	if (err) {
		blue__logf("open_device: cannot read the MAC/MTU of %s: %s", ifname,
			   strerror(-err));
		return err;
	}
	err = netdev_ipv4(ifname, ip);
	if (err) {
		union blue_gid g[BLUE_GID_TBL_LEN] = { 0 };

		*ip = 0;
		if (blue__netdev_ipv6_gids(ifname, g) > 0)
			return 0;
		blue__logf("open_device: %s has no IPv4 address and no global IPv6 one; RoCEv2 "
			   "needs one (ip addr add A.B.C.D/N dev %s, or ip -6 addr add X::Y/N "
			   "dev %s)", ifname, ifname, ifname);
	}
	return err;
}

/*
 * The netdev's speed in Mbit/s, as ethtool reports it (veth: 10000), for congestion
 * control's line rate; 0 when the driver does not say (-1 in sysfs) or it cannot be read.
 */
static uint32_t netdev_speed_mbps(const char *ifname)
{
	char path[64 + IF_NAMESIZE];
	long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/speed", ifname);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%ld", &v) != 1 || v <= 0 || v > 10000000)
		v = 0;
	fclose(f);
	return (uint32_t)v;
}

struct blue_context *blue_open_device_queue(const char *ifname, unsigned int queue)
{
	int mode = blue__mgr_mode();
	struct blue_context *ctx;
	bool absent;

	if (mode < 0) {
		errno = EINVAL;
		return NULL;
	}
	if (mode != BLUE_MODE_LIBRARY) {
		/* blue-manager owns the netdev's queue: the queue asked for is its own */
		ctx = blue__mgr_open(ifname, mode == BLUE_MODE_DAEMON, &absent);
		if (ctx || !absent)
			return ctx;
	}
	return blue__open_device_local(ifname, queue);
}

struct blue_context *blue__open_device_local(const char *ifname, unsigned int queue)
{
	struct blue_afxdp_config cfg = { 0 };
	struct blue_context *ctx;
	struct blue_hal *hal;
	uint32_t ip = 0, mtu = 0;
	uint8_t mac[6];
	int err;

	err = netdev_probe(ifname, mac, &mtu, &ip);
	if (err) {
		errno = -err;
		return NULL;
	}
	pin_from_env();
	/* veth and most drivers refuse zero-copy: the HAL falls back to copy mode */
	cfg.ifname = ifname;
	cfg.queue_id = queue;	/* the HAL refuses one beyond BLUE_MAX_QUEUES, saying so */
	/* A link that carries IB MTU 4096 (netdev MTU >= 4096 + headers, e.g. veth at
	 * 4200 or 9000) needs frames beyond one 4 KiB chunk: AF_XDP multi-buffer. Only
	 * then: it costs two chunks per full-size packet. */
	if (blue__mtu_for(2 * 4096, mtu) > blue__mtu_for(4096, mtu))
		cfg.max_pkt = mtu + BLUE_ETH_HLEN;
	cfg.hugepages = blue__env_flag("BLUE_HUGEPAGES", true);
	cfg.busy_poll = blue__env_flag("BLUE_BUSY_POLL", false);
	hal = blue_hal_afxdp_open(&cfg);
	if (!hal) {
		/* the HAL said what failed; EBUSY needs the why */
		if (errno == EBUSY)
			blue__logf("open_device: %s: another process (or context) has blue open "
				   "on queue %u of this netdev; an AF_XDP queue serves one process "
				   "(another queue: BLUE_QUEUE=N)", ifname, queue);
		return NULL;
	}
	if (blue__env_flag("BLUE_VERBOSE", false))
		blue__logf("open_device: %s queue %u: UMEM of %s pages, %u-byte frames%s, "
			   "busy poll %s", ifname, queue, hal->hugepages ? "2 MiB" : "4 KiB", hal->max_pkt,
			   hal->max_pkt > hal->frame_size ? " (AF_XDP multi-buffer)" : "",
			   cfg.busy_poll ? "on" : "off");
	ctx = blue_open_device_hal(hal, mac, ip);
	if (!ctx) {
		err = errno;
		blue_hal_destroy(hal);
		errno = err;
		return NULL;
	}
	ctx->owns_hal = true;
	err = slots_open(ctx, ifname, queue);
	if (err) {
		blue_close_device(ctx);
		errno = -err;
		return NULL;
	}
	snprintf(ctx->ifname, sizeof(ctx->ifname), "%s", ifname);
	/* the GID table's IPv6 part is read once, here: an address added later needs a
	 * new open (rxe's table follows address events; blue's follows opens) */
	(void)blue__netdev_ipv6_gids(ifname, ctx->gid);
	/* a failure is logged and leaves the statistics in this process: not fatal */
	(void)blue__obs_open(ctx, ifname, queue);
	ctx->active_mtu = blue__mtu_for(hal->max_pkt, mtu);
	ctx->link_mbps = netdev_speed_mbps(ifname);
	return ctx;
}

int blue__netdev_query(const char *ifname, struct blue_netdev_query *q)
{
	uint32_t ip = 0, mtu = 0;
	uint8_t mac[6];
	int err;

	if (!q)
		return -EINVAL;
	err = netdev_probe(ifname, mac, &mtu, &ip);
	if (err)
		return err;
	/* the open's HAL is the AF_XDP one, and carries a frame of the netdev's MTU */
	blue__device_attr(&q->dev, "afxdp");
	blue__port_attr(&q->port, blue__mtu_for(mtu + BLUE_ETH_HLEN, mtu));
	blue__fill_gids(q->gid, mac, ip);
	(void)blue__netdev_ipv6_gids(ifname, q->gid);
	return 0;
}
