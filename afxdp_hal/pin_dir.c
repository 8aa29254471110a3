// SPDX-License-Identifier: MIT
/*
 * blue_pin_dir() (include/blue/pins.h): the pin directory of this network namespace; and
 * the owner marks on a netdev's pin directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
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

static int mark_lock(int fd, unsigned int mark, short type, int cmd, struct flock *fl)
{
	memset(fl, 0, sizeof(*fl));	/* OFD locks want l_pid 0 */
	fl->l_type = type;
	fl->l_whence = SEEK_SET;
	fl->l_start = mark;
	fl->l_len = 1;
	return fcntl(fd, cmd, fl) ? -errno : 0;
}

int blue_pin_mark_take(int dir_fd, unsigned int mark)
{
	struct flock fl;

	return mark_lock(dir_fd, mark, F_RDLCK, F_OFD_SETLK, &fl);
}

void blue_pin_mark_drop(int dir_fd, unsigned int mark)
{
	struct flock fl;

	(void)mark_lock(dir_fd, mark, F_UNLCK, F_OFD_SETLK, &fl);
}

int blue_pin_mark_held(int probe_fd, unsigned int mark)
{
	struct flock fl;
	int err = mark_lock(probe_fd, mark, F_WRLCK, F_OFD_GETLK, &fl);

	return err ? err : fl.l_type != F_UNLCK;
}
