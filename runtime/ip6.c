// SPDX-License-Identifier: MIT
/*
 * The netdev's IPv6 addresses and the kernel's IPv6 neighbour table (ip6.h).
 */
#include <errno.h>
#include <ifaddrs.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "runtime/device.h"
#include "runtime/ip6.h"

int blue__netdev_ipv6_gids(const char *ifname, union blue_gid gid[])
{
	struct ifaddrs *ifa, *i;
	int n = 0;

	if (getifaddrs(&ifa) < 0)
		return 0;
	for (i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET6 ||
		    strcmp(i->ifa_name, ifname))
			continue;
		if (blue__gid_add6(gid, ((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr.s6_addr) == 0)
			n++;
	}
	freeifaddrs(ifa);
	return n;
}

/* States whose entry holds a link-layer address the kernel would send to. */
#define NUD_USABLE	(NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT | \
			 NUD_NOARP)

/* One RTM_NEWNEIGH message: is it @a6 on @ifindex, usable? Then its MAC in @mac. */
static int neigh_msg(const struct nlmsghdr *h, int ifindex, const uint8_t a6[16],
		     uint8_t mac[6])
{
	const struct ndmsg *nd = NLMSG_DATA(h);
	const struct rtattr *rta = (const struct rtattr *)((const char *)nd +
							   NLMSG_ALIGN(sizeof(*nd)));
	int len = (int)h->nlmsg_len - NLMSG_LENGTH(sizeof(*nd));
	const uint8_t *dst = NULL, *ll = NULL;

	if (nd->ndm_family != AF_INET6 || nd->ndm_ifindex != ifindex ||
	    !(nd->ndm_state & NUD_USABLE))
		return -ENOENT;
	for (; RTA_OK(rta, len); rta = RTA_NEXT(rta, len)) {
		if (rta->rta_type == NDA_DST && RTA_PAYLOAD(rta) == 16)
			dst = RTA_DATA(rta);
		else if (rta->rta_type == NDA_LLADDR && RTA_PAYLOAD(rta) == 6)
			ll = RTA_DATA(rta);
	}
	if (!dst || !ll || memcmp(dst, a6, 16))
		return -ENOENT;
	memcpy(mac, ll, 6);
	return 0;
}

int blue__neigh6_lookup(const char *ifname, const uint8_t a6[16], uint8_t mac[6])
{
	struct {
		struct nlmsghdr h;
		struct ndmsg nd;
	} req = {
		.h = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_GETNEIGH,
		       .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP, .nlmsg_seq = 1 },
		.nd = { .ndm_family = AF_INET6 },
	};
	static __thread char buf[16384];
	int ifindex = (int)if_nametoindex(ifname), fd, found = -ENOENT, done = 0;
	ssize_t n;

	if (!ifindex)
		return -ENOENT;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -ENOENT;
	if (send(fd, &req, sizeof(req), 0) < 0) {
		close(fd);
		return -ENOENT;
	}
	while (!done && (n = recv(fd, buf, sizeof(buf), 0)) > 0) {
		size_t off = 0, left = (size_t)n;

		/* NLMSG_OK/NEXT by hand: the macros mix signed and unsigned lengths */
		while (!done && left >= sizeof(struct nlmsghdr)) {
			struct nlmsghdr *h = (struct nlmsghdr *)(buf + off);
			size_t step = NLMSG_ALIGN(h->nlmsg_len);

			if (h->nlmsg_len < sizeof(*h) || h->nlmsg_len > left)
				break;
			if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR)
				done = 1;
			else if (h->nlmsg_type == RTM_NEWNEIGH && found &&
				 neigh_msg(h, ifindex, a6, mac) == 0)
				found = 0;	/* read on to the end of the dump */
			if (step >= left)
				break;
			off += step;
			left -= step;
		}
	}
	close(fd);
	return found;
}
