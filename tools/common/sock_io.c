// SPDX-License-Identifier: MIT
/*
 * Whole buffers over a stream socket with one deadline for all of it: the control
 * connections of blue_xfer and the perftest-style benchmarks. Non-blocking sends and
 * receives, polling only when the socket has nothing to give, so a stalled peer costs at
 * most the deadline.
 */
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>

#include "tools/common/tool_common.h"

int tool_send_all(int fd, const void *buf, size_t len, uint64_t deadline)
{
	const uint8_t *p = buf;
	ssize_t n;
	int err;

	while (len) {
		n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		err = tool_poll_wait(fd, POLLOUT, deadline);
		if (err)
			return err;
	}
	return 0;
}

int tool_recv_all(int fd, void *buf, size_t len, uint64_t deadline)
{
	uint8_t *p = buf;
	ssize_t n;
	int err;

	while (len) {
		n = recv(fd, p, len, MSG_DONTWAIT);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n == 0)
			return -ECONNRESET;
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
		err = tool_poll_wait(fd, POLLIN, deadline);
		if (err)
			return err;
	}
	return 0;
}
