/* SPDX-License-Identifier: MIT */
/*
 * The plumbing under blue-manager's command channel (mgr_proto.h), shared by the daemon
 * and the library: which mode a process runs in, the socket's address, and messages
 * with file descriptors beside them.
 */
#ifndef BLUE_RUNTIME_MGR_SOCK_H
#define BLUE_RUNTIME_MGR_SOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

#define BLUE_MGR_HIDDEN __attribute__((visibility("hidden")))

enum blue_mgr_mode {
	BLUE_MODE_AUTO,		/* daemon mode where blue-manager serves the netdev */
	BLUE_MODE_LIBRARY,
	BLUE_MODE_DAEMON,
};

/* BLUE_MODE as set (auto, library, daemon). Return: the mode, or -EINVAL (logged). */
int blue__mgr_mode(void) BLUE_MGR_HIDDEN;

/*
 * blue__mgr_wanted() - may this process be in daemon mode? BLUE_MODE=daemon, or auto
 * with BLUE_MANAGER_SOCK set or a blue-manager listening in this network namespace.
 * blue_buf_alloc() asks, having no device to ask about.
 */
bool blue__mgr_wanted(void) BLUE_MGR_HIDDEN;

/*
 * blue__mgr_addr() - the channel's address for @ifname: BLUE_MANAGER_SOCK (a path, or
 * @name for an abstract one), else the abstract "blue-manager/<ifname>".
 * Return: 0, or -ENAMETOOLONG (logged).
 */
int blue__mgr_addr(const char *ifname, struct sockaddr_un *sa, socklen_t *len) BLUE_MGR_HIDDEN;

/* One message of @len bytes with @nfds descriptors. Return: 0 or -errno. */
int blue__mgr_send(int sock, const void *buf, size_t len, const int *fds, int nfds)
	BLUE_MGR_HIDDEN;

/*
 * blue__mgr_recv() - one message into @buf, its descriptors (close-on-exec) into
 * @fds[0..*@nfds) (at most BLUE_MGR_MAX_FDS; any beyond are closed).
 * Return: the message's length, 0 at end of file, or -errno (-EMSGSIZE: truncated).
 */
long blue__mgr_recv(int sock, void *buf, size_t len, int *fds, int *nfds) BLUE_MGR_HIDDEN;

#endif /* BLUE_RUNTIME_MGR_SOCK_H */
