// SPDX-License-Identifier: MIT
/* See mgr_sock.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/log.h"
#include "runtime/mgr_proto.h"
#include "runtime/mgr_sock.h"

int blue__mgr_mode(void)
{
	const char *e = getenv("BLUE_MODE");

	if (!e || !*e || !strcmp(e, "auto"))
		return BLUE_MODE_AUTO;
	if (!strcmp(e, "library"))
		return BLUE_MODE_LIBRARY;
	if (!strcmp(e, "daemon"))
		return BLUE_MODE_DAEMON;
	blue__logf("BLUE_MODE=%s: not a mode (auto, library or daemon)", e);
	return -EINVAL;
}

/* Is an abstract socket named @blue-manager/... bound in this network namespace? */
static bool manager_listening(void)
{
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/net/unix", "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, " @" BLUE_MGR_SOCK_PREFIX) != NULL;
	fclose(f);
	return found;
}

bool blue__mgr_wanted(void)
{
	switch (blue__mgr_mode()) {
	case BLUE_MODE_DAEMON:
		return true;
	case BLUE_MODE_AUTO:
		return getenv(BLUE_MGR_SOCK_ENV) || manager_listening();
	default:
		return false;
	}
}

int blue__mgr_addr(const char *ifname, struct sockaddr_un *sa, socklen_t *len)
{
	const char *e = getenv(BLUE_MGR_SOCK_ENV);
	char name[sizeof(sa->sun_path)];
	size_t n;

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (e && *e)
		n = (size_t)snprintf(name, sizeof(name), "%s", e);
	else
		n = (size_t)snprintf(name, sizeof(name), "@" BLUE_MGR_SOCK_PREFIX "%s",
				     ifname ? ifname : "");
	if (n >= sizeof(name)) {
		blue__logf("blue-manager socket name %s... is too long (at most %zu bytes)",
			   name, sizeof(name) - 1);
		return -ENAMETOOLONG;
	}
	memcpy(sa->sun_path, name, n);
	if (name[0] == '@')
		sa->sun_path[0] = 0;	/* abstract: the name is the bytes after the NUL */
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (name[0] == '@' ? 0 : 1));
	return 0;
}

int blue__mgr_send(int sock, const void *buf, size_t len, const int *fds, int nfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * BLUE_MGR_MAX_FDS)] = { 0 };
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;

	if (nfds > BLUE_MGR_MAX_FDS)
		return -EINVAL;
	if (nfds > 0) {
		m.msg_control = cbuf;
		m.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
	}
	for (;;) {
		ssize_t n = sendmsg(sock, &m, MSG_NOSIGNAL);

		if (n == (ssize_t)len)
			return 0;
		if (n >= 0)
			return -EMSGSIZE;
		if (errno != EINTR)
			return -errno;
	}
}

long blue__mgr_recv(int sock, void *buf, size_t len, int *fds, int *nfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * (BLUE_MGR_MAX_FDS + 4))];
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int got = 0;
	ssize_t n;

	do
		n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		size_t k;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (fds && got < BLUE_MGR_MAX_FDS)
				fds[got++] = fd;
			else
				close(fd);
		}
	}
	if (nfds)
		*nfds = got;
	if (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
		for (int i = 0; i < got; i++)
			close(fds[i]);
		if (nfds)
			*nfds = 0;
		return -EMSGSIZE;
	}
	return (long)n;
}
