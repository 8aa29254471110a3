// SPDX-License-Identifier: MIT
/*
 * blue_open_device(): a context on a real netdev. It reads the MAC (SIOCGIFHWADDR),
 * the MTU (SIOCGIFMTU) and the first IPv4 address (getifaddrs), and opens the AF_XDP
 * HAL, which needs `bluectl attach` to have pinned blue's maps for the netdev.
 *
 * Kept apart from device.c so that programs over the loopback HAL do not pull in
 * the AF_XDP HAL.
 */
#include <errno.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "runtime/device.h"
#include "runtime/log.h"

static int netdev_l2(const char *ifname, uint8_t mac[6], uint32_t *mtu)
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

struct blue_context *blue_open_device(const char *ifname)
{
	struct blue_afxdp_config cfg = { 0 };
	struct blue_context *ctx;
	struct blue_hal *hal;
	uint32_t ip = 0, mtu = 0;
	uint8_t mac[6];
	int err;

	if (!ifname || !ifname[0]) {
		errno = ENODEV;
		blue__logf("open_device: no interface name given");
		return NULL;
	}
	if (strlen(ifname) >= IF_NAMESIZE) {
		errno = ENODEV;
		blue__logf("open_device: interface name '%s' is longer than %d characters",
			   ifname, IF_NAMESIZE - 1);
		return NULL;
	}
	if (!if_nametoindex(ifname)) {
		errno = ENODEV;
		blue__logf("open_device: no interface %s", ifname);
		return NULL;
	}
	err = netdev_l2(ifname, mac, &mtu);
	if (err) {
		blue__logf("open_device: cannot read the MAC/MTU of %s: %s", ifname,
			   strerror(-err));
		errno = -err;
		return NULL;
	}
	err = netdev_ipv4(ifname, &ip);
	if (err) {
		blue__logf("open_device: %s has no IPv4 address; RoCEv2 over IPv4 needs one "
			   "(ip addr add A.B.C.D/N dev %s)", ifname, ifname);
		errno = -err;
		return NULL;
	}
	cfg.ifname = ifname;
	hal = blue_hal_afxdp_open(&cfg);
	if (!hal) {
		/* the HAL printed the cause; ENOENT means `bluectl attach` has not run */
		if (errno == ENOENT)
			blue__logf("open_device: blue is not attached to %s: run "
				   "`bluectl attach %s` first", ifname, ifname);
		return NULL;
	}
	ctx = blue_open_device_hal(hal, mac, ip);
	if (!ctx) {
		err = errno;
		blue_hal_destroy(hal);
		errno = err;
		return NULL;
	}
	ctx->owns_hal = true;
	snprintf(ctx->ifname, sizeof(ctx->ifname), "%s", ifname);
	ctx->active_mtu = blue__mtu_for(hal->frame_size - hal->headroom, mtu);
	return ctx;
}
