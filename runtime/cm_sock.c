// SPDX-License-Identifier: MIT
/*
 * The CM's TCP plumbing: listen, accept and connect with bounded waits, exact-length
 * send and receive against a deadline, and the per-thread error message that
 * blue_cm_last_error() returns.
 *
 * Sockets stay in blocking mode for the caller; every wait here is a poll() with the
 * time left, followed by a MSG_DONTWAIT call, so nothing here can block past a deadline.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "runtime/cm.h"
#include "runtime/log.h"
#include "runtime/progress.h"

/* A refused connect is retried after this long: the server is starting up. */
#define CM_CONNECT_RETRY_MS	20

static __thread char cm_err[256];

const char *blue_cm_last_error(void)
{
	return cm_err;
}

void blue__cm_clear_error(void)
{
	cm_err[0] = 0;
}

void blue__cm_set_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cm_err, sizeof(cm_err), fmt, ap);
	va_end(ap);
}

int blue__cm_fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cm_err, sizeof(cm_err), fmt, ap);
	va_end(ap);
	blue__logf("cm: %s", cm_err);
	return -err;
}

const char *blue__cm_transport_str(unsigned int t)
{
	switch (t) {
	case BLUE_QPT_RC:	return "RC";
	case BLUE_QPT_UC:	return "UC";
	case BLUE_QPT_UD:	return "UD";
	}
	return "unknown";
}

static uint64_t now_ms(void)
{
	return blue__now_ns() / 1000000u;
}

uint64_t blue__cm_deadline(int timeout_ms)
{
	return now_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);
}

int blue__cm_left_ms(uint64_t deadline)
{
	uint64_t now = now_ms();

	return now >= deadline ? 0 : (int)(deadline - now);
}

/* Wait for @events on @fd until @deadline. Return: 0 when ready, -ETIMEDOUT, -errno. */
static int wait_fd(int fd, short events, uint64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	int n;

	for (;;) {
		n = poll(&p, 1, blue__cm_left_ms(deadline));
		if (n > 0)
			return 0;	/* ready, or an error/hangup the next call reports */
		if (n == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

int blue__cm_send(int fd, const void *buf, size_t len, uint64_t deadline)
{
	const uint8_t *p = buf;
	size_t off = 0;
	ssize_t n;
	int err;

	while (off < len) {
		n = send(fd, p + off, len - off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		err = wait_fd(fd, POLLOUT, deadline);
		if (err)
			return err;
	}
	return 0;
}

int blue__cm_recv(int fd, void *buf, size_t len, uint64_t deadline, size_t *got)
{
	uint8_t *p = buf;
	size_t off = 0;
	ssize_t n;
	int err;

	*got = 0;
	while (off < len) {
		n = recv(fd, p + off, len - off, MSG_DONTWAIT);
		if (n > 0) {
			off += (size_t)n;
			*got = off;
			continue;
		}
		if (n == 0)
			return -ECONNRESET;	/* orderly close before the whole message */
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		err = wait_fd(fd, POLLIN, deadline);
		if (err)
			return err;
	}
	return 0;
}

int blue__cm_io_fail(int err, const char *what, size_t got, size_t want, int timeout_ms)
{
	if (err == -ETIMEDOUT && got)
		return blue__cm_fail(ETIMEDOUT, "timed out after %d ms waiting for %s "
				     "(got %zu of %zu bytes)", timeout_ms, what, got, want);
	if (err == -ETIMEDOUT)
		return blue__cm_fail(ETIMEDOUT, "timed out after %d ms waiting for %s: the "
				     "peer did not answer", timeout_ms, what);
	if (err == -ECONNRESET && got)
		return blue__cm_fail(EBADMSG, "truncated %s: got %zu of %zu bytes before the "
				     "peer closed the connection", what, got, want);
	if (err == -ECONNRESET)
		return blue__cm_fail(ECONNRESET, "the peer closed the connection before %s",
				     what);
	return blue__cm_fail(-err, "%s: %s", what, strerror(-err));
}

int blue_cm_listen(const char *bind_ip, uint16_t port)
{
	struct addrinfo hints = {
		.ai_flags = AI_PASSIVE,
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
	};
	struct addrinfo *res, *t;
	char service[8];
	int fd = -1, one = 1, err = 0, n;

	blue__cm_clear_error();
	snprintf(service, sizeof(service), "%u", port);
	n = getaddrinfo(bind_ip, service, &hints, &res);
	if (n) {
		blue__cm_fail(EADDRNOTAVAIL, "listen: cannot resolve %s: %s",
			      bind_ip ? bind_ip : "(any)", gai_strerror(n));
		errno = EADDRNOTAVAIL;
		return -1;
	}
	/*
	 * The first address that binds, as rc_pingpong's server does. For "every address"
	 * the IPv6 wildcard goes first, dual-stack (IPV6_V6ONLY off), so peers reach it over
	 * IPv4 and IPv6 alike; IPv4 peers then show as ::ffff:a.b.c.d, the form the peer
	 * check compares in (cm_peer.c). getaddrinfo lists 0.0.0.0 first.
	 */
	for (int pass = bind_ip ? 1 : 0; pass < 2 && fd < 0; pass++)
	for (t = res; t; t = t->ai_next) {
		if (pass == 0 && t->ai_family != AF_INET6)
			continue;
		fd = socket(t->ai_family, t->ai_socktype | SOCK_CLOEXEC, t->ai_protocol);
		if (fd < 0) {
			err = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (t->ai_family == AF_INET6 && !bind_ip) {
			int off = 0;

			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
		}
		if (bind(fd, t->ai_addr, t->ai_addrlen) == 0 && listen(fd, 8) == 0)
			break;
		err = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		blue__cm_fail(err, "cannot listen on %s port %u: %s",
			      bind_ip ? bind_ip : "any address", port, strerror(err));
		errno = err;
		return -1;
	}
	return fd;
}

int blue_cm_accept(int listen_fd, int timeout_ms)
{
	uint64_t deadline;
	int fd, err;

	blue__cm_clear_error();
	if (listen_fd < 0 || timeout_ms < 0) {
		blue__cm_fail(EINVAL, "accept: bad listening fd %d or timeout %d ms", listen_fd,
			      timeout_ms);
		errno = EINVAL;
		return -1;
	}
	deadline = blue__cm_deadline(timeout_ms);
	for (;;) {
		err = wait_fd(listen_fd, POLLIN, deadline);
		if (err == -ETIMEDOUT) {
			blue__cm_fail(ETIMEDOUT, "accept: no connection within %d ms", timeout_ms);
			errno = ETIMEDOUT;
			return -1;
		}
		if (err) {
			blue__cm_fail(-err, "accept: %s", strerror(-err));
			errno = -err;
			return -1;
		}
		fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd >= 0)
			break;
		/* the client may have gone again between poll and accept: wait on */
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ||
		    errno == ECONNABORTED)
			continue;
		err = errno;
		blue__cm_fail(err, "accept: %s", strerror(err));
		errno = err;
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int));
	/* hand the caller an ordinary blocking socket; our own I/O never blocks on it */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

/*
 * One non-blocking connect attempt to @a, bounded by @deadline.
 * Return: the connected fd, or -errno.
 */
static int connect_one(const struct addrinfo *a, uint64_t deadline)
{
	socklen_t len = sizeof(int);
	int fd, err = 0, one = 1;

	fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
		    a->ai_protocol);
	if (fd < 0)
		return -errno;
	if (connect(fd, a->ai_addr, a->ai_addrlen) < 0) {
		if (errno != EINPROGRESS) {
			err = -errno;
			goto fail;
		}
		err = wait_fd(fd, POLLOUT, deadline);
		if (err)
			goto fail;
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0) {
			err = -errno;
			goto fail;
		}
		if (err) {
			err = -err;
			goto fail;
		}
	}
	/* the exchanges are a few small messages each way: do not let Nagle hold them */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
fail:
	close(fd);
	return err;
}

static bool retry_worth(int err)
{
	/* not listening yet, or the link/route is still coming up */
	return err == -ECONNREFUSED || err == -ENETUNREACH || err == -EHOSTUNREACH;
}

int blue_cm_connect(const char *host, uint16_t port, int timeout_ms)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res, *t;
	char service[8];
	uint64_t deadline;
	int fd = -ECONNREFUSED, n, nap;

	blue__cm_clear_error();
	if (!host || timeout_ms < 0) {
		blue__cm_fail(EINVAL, "connect: no host, or a negative timeout (%d ms)",
			      timeout_ms);
		errno = EINVAL;
		return -1;
	}
	deadline = blue__cm_deadline(timeout_ms);
	snprintf(service, sizeof(service), "%u", port);
	n = getaddrinfo(host, service, &hints, &res);
	if (n) {
		blue__cm_fail(EHOSTUNREACH, "connect: cannot resolve %s: %s", host,
			      gai_strerror(n));
		errno = EHOSTUNREACH;
		return -1;
	}
	for (;;) {
		for (t = res; t; t = t->ai_next) {
			fd = connect_one(t, deadline);
			if (fd >= 0 || !retry_worth(fd))
				break;
		}
		if (fd >= 0 || !retry_worth(fd) || blue__cm_left_ms(deadline) == 0)
			break;
		nap = blue__cm_left_ms(deadline);
		if (nap > CM_CONNECT_RETRY_MS)
			nap = CM_CONNECT_RETRY_MS;
		poll(NULL, 0, nap);
	}
	freeaddrinfo(res);
	if (fd >= 0)
		return fd;
	if (fd == -ETIMEDOUT || retry_worth(fd)) {
		blue__cm_fail(ETIMEDOUT, "could not connect to %s port %u within %d ms "
			      "(last error: %s): is the server running?", host, port,
			      timeout_ms, strerror(-fd));
		errno = ETIMEDOUT;
		return -1;
	}
	blue__cm_fail(-fd, "could not connect to %s port %u: %s", host, port, strerror(-fd));
	errno = -fd;
	return -1;
}
