// SPDX-License-Identifier: MIT
/*
 * librdmacm.so.1 stand-in, part 3: rsockets (<rdma/rsocket.h>), sockets over RDMA CM
 * connections. Without the CM there are none: each call fails as its socket
 * counterpart fails, -1 (riowrite: (size_t)-1) with errno EOPNOTSUPP, so a program
 * that falls back to plain sockets on an error does.
 */
#include <rdma/rsocket.h>

#include "compat/stub_log.h"

#define NS() STUB_NOTSUP("librdmacm", "no rsockets without the RDMA CM; use sockets")

STUB_EXPORT int rsocket(int domain, int type, int protocol)
{ (void)domain; (void)type; (void)protocol; NS(); return -1; }
STUB_EXPORT int rbind(int s, const struct sockaddr *addr, socklen_t len)
{ (void)s; (void)addr; (void)len; NS(); return -1; }
STUB_EXPORT int rlisten(int s, int backlog) { (void)s; (void)backlog; NS(); return -1; }
STUB_EXPORT int raccept(int s, struct sockaddr *addr, socklen_t *len)
{ (void)s; (void)addr; (void)len; NS(); return -1; }
STUB_EXPORT int rconnect(int s, const struct sockaddr *addr, socklen_t len)
{ (void)s; (void)addr; (void)len; NS(); return -1; }
STUB_EXPORT int rshutdown(int s, int how) { (void)s; (void)how; NS(); return -1; }
STUB_EXPORT int rclose(int s) { (void)s; NS(); return -1; }

STUB_EXPORT ssize_t rrecv(int s, void *buf, size_t len, int flags)
{ (void)s; (void)buf; (void)len; (void)flags; NS(); return -1; }
STUB_EXPORT ssize_t rrecvfrom(int s, void *buf, size_t len, int flags,
			      struct sockaddr *src, socklen_t *alen)
{ (void)s; (void)buf; (void)len; (void)flags; (void)src; (void)alen; NS(); return -1; }
STUB_EXPORT ssize_t rrecvmsg(int s, struct msghdr *msg, int flags)
{ (void)s; (void)msg; (void)flags; NS(); return -1; }
STUB_EXPORT ssize_t rsend(int s, const void *buf, size_t len, int flags)
{ (void)s; (void)buf; (void)len; (void)flags; NS(); return -1; }
STUB_EXPORT ssize_t rsendto(int s, const void *buf, size_t len, int flags,
			    const struct sockaddr *dst, socklen_t alen)
{ (void)s; (void)buf; (void)len; (void)flags; (void)dst; (void)alen; NS(); return -1; }
STUB_EXPORT ssize_t rsendmsg(int s, const struct msghdr *msg, int flags)
{ (void)s; (void)msg; (void)flags; NS(); return -1; }
STUB_EXPORT ssize_t rread(int s, void *buf, size_t count)
{ (void)s; (void)buf; (void)count; NS(); return -1; }
STUB_EXPORT ssize_t rreadv(int s, const struct iovec *iov, int iovcnt)
{ (void)s; (void)iov; (void)iovcnt; NS(); return -1; }
STUB_EXPORT ssize_t rwrite(int s, const void *buf, size_t count)
{ (void)s; (void)buf; (void)count; NS(); return -1; }
STUB_EXPORT ssize_t rwritev(int s, const struct iovec *iov, int iovcnt)
{ (void)s; (void)iov; (void)iovcnt; NS(); return -1; }

STUB_EXPORT int rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{ (void)fds; (void)nfds; (void)timeout; NS(); return -1; }
STUB_EXPORT int rselect(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timeval *timeout)
{ (void)nfds; (void)r; (void)w; (void)e; (void)timeout; NS(); return -1; }

STUB_EXPORT int rgetpeername(int s, struct sockaddr *addr, socklen_t *len)
{ (void)s; (void)addr; (void)len; NS(); return -1; }
STUB_EXPORT int rgetsockname(int s, struct sockaddr *addr, socklen_t *len)
{ (void)s; (void)addr; (void)len; NS(); return -1; }
STUB_EXPORT int rsetsockopt(int s, int level, int name, const void *val, socklen_t len)
{ (void)s; (void)level; (void)name; (void)val; (void)len; NS(); return -1; }
STUB_EXPORT int rgetsockopt(int s, int level, int name, void *val, socklen_t *len)
{ (void)s; (void)level; (void)name; (void)val; (void)len; NS(); return -1; }
STUB_EXPORT int rfcntl(int s, int cmd, ...) { (void)s; (void)cmd; NS(); return -1; }

STUB_EXPORT off_t riomap(int s, void *buf, size_t len, int prot, int flags, off_t offset)
{ (void)s; (void)buf; (void)len; (void)prot; (void)flags; (void)offset; NS(); return -1; }
STUB_EXPORT int riounmap(int s, void *buf, size_t len)
{ (void)s; (void)buf; (void)len; NS(); return -1; }
STUB_EXPORT size_t riowrite(int s, const void *buf, size_t count, off_t offset, int flags)
{ (void)s; (void)buf; (void)count; (void)offset; (void)flags; NS(); return (size_t)-1; }
