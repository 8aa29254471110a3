/* SPDX-License-Identifier: MIT */
/*
 * IPv6 on the netdev side: the netdev's IPv6 addresses for the GID table, and the
 * kernel's IPv6 neighbour table (there is no /proc file for it: netlink RTM_GETNEIGH).
 */
#ifndef BLUE_RUNTIME_IP6_H
#define BLUE_RUNTIME_IP6_H

#include <stdint.h>
#include <blue/blue.h>

/* How long a neighbour resolution waits for the kernel (ARP or ND), and how often it looks. */
#define BLUE_NEIGH_WAIT_MS	1000
#define BLUE_NEIGH_STEP_MS	10

/*
 * blue__netdev_ipv6_gids() - add @ifname's IPv6 addresses to @gid (blue__gid_add6: from
 * index 2, link-local ones left out) in the order the kernel lists them (getifaddrs reads
 * the RTM_GETADDR dump, which walks the interface's address list as roce_gid_mgmt does).
 * Return: how many were added.
 */
int blue__netdev_ipv6_gids(const char *ifname, union blue_gid gid[])
	__attribute__((visibility("hidden")));

/* blue__neigh6_lookup() - the kernel's IPv6 neighbour entry for @a6 on @ifname
 * (netlink RTM_GETNEIGH); 0 or -ENOENT. The caller makes the kernel solicit a
 * missing one (device.c neigh_trigger). */
int blue__neigh6_lookup(const char *ifname, const uint8_t a6[16], uint8_t mac[6])
	__attribute__((visibility("hidden")));

#endif /* BLUE_RUNTIME_IP6_H */
