// SPDX-License-Identifier: MIT
/* Asynchronous events: the per-context queue, its eventfd, and the port carrier (events.h). */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "runtime/verbs_ops.h"
#include "runtime/device.h"
#include "runtime/events.h"
#include "runtime/log.h"
#include "runtime/qp.h"
#include "runtime/srq.h"

void blue__port_watch_init(struct blue_port_watch *w)
{
	w->sock = -1;
	w->up = true;
	w->next_ns = 0;
}

void blue__port_watch_fini(struct blue_port_watch *w)
{
	if (w->sock >= 0)
		close(w->sock);
	w->sock = -1;
}

int blue__port_carrier(struct blue_port_watch *w, const char *ifname, uint64_t now_ns)
{
	struct ifreq ifr;

	if (!ifname[0] || now_ns < w->next_ns)
		return -1;
	w->next_ns = now_ns + BLUE_PORT_CHECK_NS;
	if (w->sock < 0) {
		w->sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (w->sock < 0)
			return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, ifname, strnlen(ifname, sizeof(ifr.ifr_name) - 1));
	if (ioctl(w->sock, SIOCGIFFLAGS, &ifr) < 0)
		return errno == ENODEV ? 0 : -1;	/* gone: down for good */
	return (ifr.ifr_flags & IFF_UP) && (ifr.ifr_flags & IFF_RUNNING);
}

bool blue__port_watch_seen(struct blue_port_watch *w, bool up)
{
	if (up == w->up)
		return false;
	w->up = up;
	return true;
}

int blue__events_init(struct blue_events *ev)
{
	memset(ev, 0, sizeof(ev[0]));
	blue__port_watch_init(&ev->port);
	ev->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ev->fd < 0)
		return -errno;
	pthread_mutex_init(&ev->lock, NULL);
	return 0;
}

void blue__events_fini(struct blue_events *ev)
{
	if (ev->fd >= 0)
		close(ev->fd);
	ev->fd = -1;
	blue__port_watch_fini(&ev->port);
	pthread_mutex_destroy(&ev->lock);
}

void blue__event_raise(struct blue_context *ctx, const struct blue_async_event *e)
{
	struct blue_events *ev = &ctx->events;
	uint64_t one = 1;
	bool wake;

	pthread_mutex_lock(&ev->lock);
	ev->raised++;
	if (ev->count == BLUE_EVENTS_MAX) {
		ev->overflow++;
		pthread_mutex_unlock(&ev->lock);
		return;
	}
	ev->q[(ev->head + ev->count) % BLUE_EVENTS_MAX] = *e;
	wake = ev->count++ == 0;
	/* under the lock, so that a taker emptying the queue cannot drain it after us */
	if (wake && write(ev->fd, &one, sizeof(one)) < 0) {
		/* EAGAIN only at a counter of 2^64-2: it is readable anyway */
	}
	pthread_mutex_unlock(&ev->lock);
}

void blue__event_qp(struct blue_qp *qp, enum blue_event_type type)
{
	struct blue_async_event e = { .type = type, .qp = qp, .context = qp->qp_context };

	blue__event_raise(qp->ctx, &e);
}

void blue__event_srq(struct blue_srq *srq, enum blue_event_type type)
{
	struct blue_async_event e = { .type = type, .srq = srq, .context = srq->srq_context };

	blue__event_raise(srq->ctx, &e);
}

int blue_async_fd(struct blue_context *ctx)
{
	if (!ctx) {
		errno = EINVAL;
		return -1;
	}
	/* daemon mode: the events this process raises itself (DEVICE_FATAL, mgr_client.c) */
	return ctx->events.fd;
}

int blue_get_async_event(struct blue_context *ctx, struct blue_async_event *out)
{
	struct blue_events *ev;
	uint64_t n;

	if (!ctx || !out)
		return EINVAL;
	ev = &ctx->events;
	pthread_mutex_lock(&ev->lock);
	if (!ev->count) {
		pthread_mutex_unlock(&ev->lock);
		return EAGAIN;
	}
	*out = ev->q[ev->head];
	ev->head = (ev->head + 1) % BLUE_EVENTS_MAX;
	/* the fd stays readable while something is left */
	if (--ev->count == 0 && read(ev->fd, &n, sizeof(n)) < 0) {
		/* EAGAIN: nothing to drain */
	}
	pthread_mutex_unlock(&ev->lock);
	return 0;
}

void blue__events_port_seen(struct blue_context *ctx, bool up)
{
	struct blue_async_event e = { .port_num = 1 };

	if (!blue__port_watch_seen(&ctx->events.port, up))
		return;
	blue__logf("%s: port 1 is %s", ctx->ifname[0] ? ctx->ifname : "device",
		   up ? "ACTIVE (carrier up)" : "DOWN (carrier lost)");
	e.type = up ? BLUE_EVENT_PORT_ACTIVE : BLUE_EVENT_PORT_ERR;
	blue__event_raise(ctx, &e);
}

void blue__events_port_check(struct blue_context *ctx, uint64_t now_ns)
{
	int up = blue__port_carrier(&ctx->events.port, ctx->ifname, now_ns);

	if (up >= 0)
		blue__events_port_seen(ctx, up);
}
