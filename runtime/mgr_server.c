// SPDX-License-Identifier: MIT
/*
 * blue-manager's loop (mgr_server.h): engine passes, and the command channel between
 * them; sleeping when idle.
 *
 * Sleeping races with a process that posts: the engine sets bell->sleeping, then makes
 * one more pass; a process publishes its WQEs, then reads bell->sleeping and writes the
 * doorbell eventfd if it is set. With a full fence on each side between the store and
 * the load, either the last pass sees the WQEs or the process sees the flag.
 */
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/timerfd.h>

#include "runtime/device.h"
#include "runtime/log.h"
#include "runtime/mgr_server.h"
#include "runtime/mgr_session.h"
#include "runtime/mgr_sock.h"
#include "runtime/progress.h"

#define MGR_BACKLOG		64
#define MGR_CMD_EVERY		64	/* engine passes between looks at the sockets */
#define MGR_SLEEP_MAX_MS	10	/* a CQ the engine waits on to drain is seen by then */

/* epoll data: the fd, with these tags in the high half for what is not a session */
enum { TAG_LISTEN = 1, TAG_BELL, TAG_ENGINE };

struct blue_mgr_server {
	struct blue_context *ctx;
	struct blue_mgr_server_cfg cfg;
	int listen_fd;
	int epfd;
	int bell_efd;			/* the doorbell processes write */
	int bell_page_fd;
	struct blue_mgr_bell *bell;
	struct blue_mgr_session *sessions;
	unsigned int next_id;
	struct blue_tenant_table tenants;	/* the engine's QPs point into it */
};

static int ep_add(int epfd, int fd, uint64_t data)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = data };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

static uint64_t tag(int t, int fd)
{
	return (uint64_t)t << 32 | (uint32_t)fd;
}

static int bell_open(struct blue_mgr_server *s)
{
	s->bell_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->bell_page_fd = memfd_create("blue-manager-bell", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (s->bell_efd < 0 || s->bell_page_fd < 0 ||
	    ftruncate(s->bell_page_fd, sizeof(struct blue_mgr_bell)))
		return -errno;
	/* processes map it read-only; sealed so that none can make it writable or shrink it */
	s->bell = mmap(NULL, sizeof(*s->bell), PROT_READ | PROT_WRITE, MAP_SHARED,
		       s->bell_page_fd, 0);
	if (s->bell == MAP_FAILED) {
		s->bell = NULL;
		return -errno;
	}
	if (fcntl(s->bell_page_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		return -errno;
	return 0;
}

static int listen_open(struct blue_mgr_server *s)
{
	struct sockaddr_un sa;
	socklen_t len;
	int err;

	err = blue__mgr_addr(s->cfg.ifname, &sa, &len);
	if (err)
		return err;
	s->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->listen_fd < 0)
		return -errno;
	if (bind(s->listen_fd, (struct sockaddr *)&sa, len) || listen(s->listen_fd, MGR_BACKLOG)) {
		err = -errno;
		if (err == -EADDRINUSE)
			blue__logf("blue-manager: another blue-manager serves %s in this network "
				   "namespace (its socket %s%s is bound)", s->cfg.ifname,
				   sa.sun_path[0] ? "" : "@", sa.sun_path[0] ? sa.sun_path :
				   sa.sun_path + 1);
		return err;
	}
	return 0;
}

struct blue_mgr_server *blue__mgr_server_open(struct blue_context *ctx,
					      const struct blue_mgr_server_cfg *cfg)
{
	struct blue_mgr_server *s = calloc(1, sizeof(*s));
	int err;

	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	s->ctx = ctx;
	s->cfg = *cfg;
	s->listen_fd = s->epfd = s->bell_efd = s->bell_page_fd = -1;
	s->next_id = 1;
	blue__tenants_init(&s->tenants);
	if (cfg->tenants_path && blue__tenants_load(&s->tenants, cfg->tenants_path)) {
		free(s);
		errno = EINVAL;
		return NULL;	/* the message named the file and line */
	}
	ctx->tenants = &s->tenants;
	/* the engine arms it at its next deadline (blue__channels_timer) */
	if (ctx->timer_fd < 0)
		ctx->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	err = ctx->timer_fd < 0 || s->epfd < 0 ? -errno : 0;
	if (!err)
		err = bell_open(s);
	if (!err)
		err = listen_open(s);
	if (!err)
		err = ep_add(s->epfd, s->listen_fd, tag(TAG_LISTEN, s->listen_fd));
	if (!err)
		err = ep_add(s->epfd, s->bell_efd, tag(TAG_BELL, s->bell_efd));
	if (!err)
		err = ep_add(s->epfd, blue_hal_sock_fd(ctx->sock),
			     tag(TAG_ENGINE, blue_hal_sock_fd(ctx->sock)));
	if (!err)
		err = ep_add(s->epfd, ctx->timer_fd, tag(TAG_ENGINE, ctx->timer_fd));
	if (err) {
		if (err != -EADDRINUSE)
			blue__logf("blue-manager: cannot set up the command channel: %s",
				   strerror(-err));
		blue__mgr_server_close(s);
		errno = -err;
		return NULL;
	}
	return s;
}

static void session_accept(struct blue_mgr_server *s)
{
	for (;;) {
		struct blue_mgr_session *ses;
		struct ucred cr;
		socklen_t len = sizeof(cr);
		int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (fd < 0)
			return;
		ses = calloc(1, sizeof(*ses));
		if (!ses || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) ||
		    ep_add(s->epfd, fd, (uint32_t)fd)) {
			blue__logf("blue-manager: a connection refused: %s", strerror(errno));
			free(ses);
			close(fd);
			continue;
		}
		ses->fd = fd;
		ses->id = s->next_id++;
		ses->pid = cr.pid;
		ses->uid = cr.uid;
		ses->gid = cr.gid;
		blue__cgroup_of(cr.pid, ses->cgroup, sizeof(ses->cgroup));
		ses->tenant = blue__tenant_of(&s->tenants, cr.uid, cr.gid, ses->cgroup);
		if (ses->tenant && !ses->tenant->in_config)
			ses->tenant = NULL;	/* a reload dropped it: no one new */
		ses->next = s->sessions;
		s->sessions = ses;
		if (blue__env_flag("BLUE_VERBOSE", false))
			blue__logf("blue-manager: session %u: pid %d uid %u gid %u", ses->id,
				   (int)cr.pid, (unsigned int)cr.uid, (unsigned int)cr.gid);
	}
}

static void session_close(struct blue_mgr_server *s, struct blue_mgr_session *ses)
{
	struct blue_mgr_session **pp;

	for (pp = &s->sessions; *pp; pp = &(*pp)->next) {
		if (*pp == ses) {
			*pp = ses->next;
			break;
		}
	}
	blue__mgr_session_drop(s->ctx, ses);
	if (ses->tenant && ses->hello)
		ses->tenant->use.sessions--;
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, ses->fd, NULL);
	close(ses->fd);
	if (blue__env_flag("BLUE_VERBOSE", false))
		blue__logf("blue-manager: session %u (pid %d) ended; what it made is gone",
			   ses->id, (int)ses->pid);
	free(ses);
}

/* Serve what @ses sent. Return: false when it has gone (end of file, or an error). */
static bool session_serve(struct blue_mgr_server *s, struct blue_mgr_session *ses)
{
	struct blue_mgr_req req;
	struct blue_mgr_rep rep;
	struct blue_mgr_call c;
	int fds[BLUE_MGR_MAX_FDS], nfds, err;
	long n;

	for (;;) {
		n = blue__mgr_recv(ses->fd, &req, sizeof(req), fds, &nfds);
		if (n == -EAGAIN)
			return true;
		if (n <= 0 || (size_t)n != sizeof(req)) {
			for (int i = 0; n > 0 && i < nfds; i++)
				close(fds[i]);
			if (n > 0 || n == -EMSGSIZE)
				blue__logf("blue-manager: session %u sent a request of the wrong "
					   "size; closing it", ses->id);
			return false;
		}
		memset(&c, 0, sizeof(c));
		c.ctx = s->ctx;
		c.ses = ses;
		c.req = &req;
		c.fd_in = nfds > 0 ? fds[0] : -1;
		c.rep = &rep;
		c.bell_efd = s->bell_efd;
		c.bell_page_fd = s->bell_page_fd;
		c.ifname = s->cfg.ifname;
		c.queue = s->cfg.queue;
		c.tenants = &s->tenants;
		c.tenants_path = s->cfg.tenants_path;
		for (int i = 1; i < nfds; i++)
			close(fds[i]);
		blue__mgr_call(&c);
		if (c.fd_in >= 0)
			close(c.fd_in);
		err = blue__mgr_send(ses->fd, &rep, sizeof(rep), c.fds_out, c.nfds_out);
		for (int i = 0; i < c.nfds_out; i++)
			close(c.fds_out[i]);
		if (err)
			return false;	/* it does not read its replies: gone or stuck */
	}
}

/* Everything the sockets have: new connections, requests, ends. */
static void serve_sockets(struct blue_mgr_server *s, int timeout_ms)
{
	struct epoll_event ev[16];
	int n = epoll_wait(s->epfd, ev, 16, timeout_ms);

	for (int i = 0; i < n; i++) {
		int t = (int)(ev[i].data.u64 >> 32), fd = (int)(uint32_t)ev[i].data.u64;
		struct blue_mgr_session *ses;
		uint64_t v;

		if (t == TAG_LISTEN) {
			session_accept(s);
		} else if (t == TAG_BELL || t == TAG_ENGINE) {
			if (fd != blue_hal_sock_fd(s->ctx->sock))
				(void)!read(fd, &v, sizeof(v));	/* eventfd, timerfd */
		} else {
			for (ses = s->sessions; ses && ses->fd != fd; ses = ses->next)
				;
			if (ses && !session_serve(s, ses))
				session_close(s, ses);
		}
	}
}

int blue__mgr_server_run(struct blue_mgr_server *s, volatile sig_atomic_t *stop)
{
	uint64_t idle_from = 0, spin_ns = s->cfg.spin_us == ~0u ? UINT64_MAX :
					   (uint64_t)s->cfg.spin_us * 1000;
	unsigned int passes = 0;

	while (!*stop) {
		if (s->cfg.reload && *s->cfg.reload) {
			*s->cfg.reload = 0;
			blue__mgr_tenants_reload(&s->tenants, s->cfg.tenants_path);
		}
		if (blue__progress(s->ctx) > 0) {
			idle_from = 0;
		} else if (!idle_from) {
			idle_from = blue__now_ns();
		} else if (spin_ns == UINT64_MAX || blue__now_ns() - idle_from <= spin_ns) {
			/* spinning: a process on this core that has work (the application
			 * polling its CQ, the peer engine) gets the core at once */
			;
		} else {
			__atomic_store_n(&s->bell->sleeping, 1, __ATOMIC_SEQ_CST);
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
			if (blue__progress(s->ctx) == 0)
				serve_sockets(s, MGR_SLEEP_MAX_MS);
			__atomic_store_n(&s->bell->sleeping, 0, __ATOMIC_RELAXED);
			idle_from = 0;
			passes = 0;
			continue;
		}
		if (++passes % MGR_CMD_EVERY == 0)
			serve_sockets(s, 0);
	}
	return 0;
}

unsigned int blue__mgr_server_sessions(const struct blue_mgr_server *s)
{
	return s->next_id - 1;
}

void blue__mgr_server_close(struct blue_mgr_server *s)
{
	if (!s)
		return;
	while (s->sessions)
		session_close(s, s->sessions);
	s->ctx->tenants = NULL;
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	if (s->epfd >= 0)
		close(s->epfd);
	if (s->bell)
		munmap(s->bell, sizeof(*s->bell));
	if (s->bell_efd >= 0)
		close(s->bell_efd);
	if (s->bell_page_fd >= 0)
		close(s->bell_page_fd);
	free(s);
}
