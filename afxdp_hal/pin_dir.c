// SPDX-License-Identifier: MIT
/* blue_pin_dir() (include/blue/pins.h): the pin directory of this network namespace. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/socket.h>
#include <blue/pins.h>

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

/* Any socket reports the cookie of the namespace it was made in, which is ours. */
static int netns_cookie(uint64_t *cookie)
{
	socklen_t len = sizeof(*cookie);
	int fd, err = 0;

	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, cookie, &len))
		err = -errno;
	close(fd);
	return err;
}

int blue_pin_dir(char *buf, size_t len, const char *ifname)
{
	uint64_t cookie;
	int n, err = netns_cookie(&cookie);

	if (err)
		return err;
	if (ifname)
		n = snprintf(buf, len, "%s/%s%llu/%s", BLUE_PIN_ROOT, BLUE_PIN_NS_PREFIX,
			     (unsigned long long)cookie, ifname);
	else
		n = snprintf(buf, len, "%s/%s%llu", BLUE_PIN_ROOT, BLUE_PIN_NS_PREFIX,
			     (unsigned long long)cookie);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}
