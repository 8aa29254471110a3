// SPDX-License-Identifier: MIT
/*
 * Asynchronous events: ibv_get_async_event() / ibv_ack_async_event() over libblue's
 * per-context queue (runtime/events.h). The libblue context is shared by every verbs
 * context of the device in this process (compat.h "Several contexts"), so its events
 * are routed: a QP or SRQ event to the verbs context that owns the object, a port
 * event to every context of the device. Each verbs context keeps its own small queue
 * and its async_fd (an eventfd) is readable while that queue is non-empty, so a program
 * may poll/epoll it (UCX does) before calling ibv_get_async_event() on an O_NONBLOCK fd.
 *
 * Routing runs with the core's lock held: after each pass of the progress thread, in
 * ibv_get_async_event(), and before a QP or SRQ is destroyed (so no queued event names a
 * freed object; rdma-core's kernel path waits for the events to be acked instead, which
 * would hang every program that never reads them).
 */
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "compat/compat.h"
#include "runtime/progress.h"

#define BV_ASYNC_WAIT_MS 100	/* a blocked taker looks again for a core opened meanwhile */

static void async_push(struct bv_context *c, const struct ibv_async_event *e)
{
	struct bv_async *a = &c->async;
	uint64_t one = 1;

	if (a->count == BV_ASYNC_MAX) {
		a->overflow++;
		return;
	}
	a->q[(a->head + a->count) % BV_ASYNC_MAX] = *e;
	if (a->count++ == 0 && write(c->vctx.context.async_fd, &one, sizeof(one)) < 0) {
		/* only at a counter near 2^64: readable anyway */
	}
}

static int async_pop(struct bv_context *c, struct ibv_async_event *e)
{
	struct bv_async *a = &c->async;
	uint64_t n;

	if (!a->count)
		return EAGAIN;
	*e = a->q[a->head];
	a->head = (a->head + 1) % BV_ASYNC_MAX;
	if (--a->count == 0 && read(c->vctx.context.async_fd, &n, sizeof(n)) < 0) {
		/* EAGAIN: already drained */
	}
	return 0;
}

static struct bv_context *ctx_of_async_link(struct bv_link *l)
{
	return (struct bv_context *)((char *)l - __builtin_offsetof(struct bv_context,
								    async.link));
}

/* One libblue event as the verbs objects it names, pushed where it belongs. */
static void async_route(struct bv_core *core, const struct blue_async_event *b)
{
	struct ibv_async_event e;
	struct bv_link *l;

	memset(&e, 0, sizeof(e));
	e.event_type = (enum ibv_event_type)b->type;	/* the same numbering (blue.h) */
	switch (b->type) {
	case BLUE_EVENT_QP_FATAL:
	case BLUE_EVENT_COMM_EST:
	case BLUE_EVENT_QP_LAST_WQE_REACHED: {
		struct bv_qp *q = b->context;	/* compat creates QPs with qp_context = bv_qp */

		e.element.qp = &q->qpx.qp_base;
		async_push(bv_ctx(e.element.qp->context), &e);
		break;
	}
	case BLUE_EVENT_SRQ_LIMIT_REACHED: {
		struct bv_srq *s = b->context;	/* and SRQs with srq_context = bv_srq */

		e.element.srq = &s->srq;
		async_push(bv_ctx(s->srq.context), &e);
		break;
	}
	case BLUE_EVENT_PORT_ACTIVE:
	case BLUE_EVENT_PORT_ERR:
	case BLUE_EVENT_DEVICE_FATAL:	/* daemon mode: blue-manager has gone */
		e.element.port_num = b->port_num;
		for (l = core->ctxs.next; l != &core->ctxs; l = l->next)
			async_push(ctx_of_async_link(l), &e);
		break;
	}
}

/*
 * A device no context of which has opened the engine (ibv_asyncwatch only opens the
 * device): its carrier is read here, at the engine's pace, for the port events.
 */
static void async_port_watch(struct bv_core *core)
{
	struct blue_async_event b = { .port_num = 1 };
	int up;

	if (core->bctx)
		return;
	up = blue__port_carrier(&core->pwatch, core->ifname, blue__now_ns());
	if (up < 0 || !blue__port_watch_seen(&core->pwatch, up))
		return;
	b.type = up ? BLUE_EVENT_PORT_ACTIVE : BLUE_EVENT_PORT_ERR;
	async_route(core, &b);
}

void bv_async_pump(struct bv_core *core)
{
	struct blue_async_event b;

	/* a racy peek, so that a pass with no event costs no lock: the next pump sees it */
	if (!core->bctx || !__atomic_load_n(&core->bctx->events.count, __ATOMIC_RELAXED))
		return;
	while (blue_get_async_event(core->bctx, &b) == 0)
		async_route(core, &b);
}

void bv_async_forget(struct bv_context *c, const struct ibv_qp *qp, const struct ibv_srq *srq)
{
	struct bv_async *a = &c->async;
	struct ibv_async_event keep[BV_ASYNC_MAX], e;
	unsigned int n = 0, i;

	bv_async_pump(c->core);
	while (async_pop(c, &e) == 0) {
		bool names_qp = qp && e.element.qp == qp &&
				(e.event_type == IBV_EVENT_QP_FATAL ||
				 e.event_type == IBV_EVENT_COMM_EST ||
				 e.event_type == IBV_EVENT_QP_LAST_WQE_REACHED);
		bool names_srq = srq && e.element.srq == srq &&
				 e.event_type == IBV_EVENT_SRQ_LIMIT_REACHED;

		if (!names_qp && !names_srq)
			keep[n++] = e;
	}
	for (i = 0; i < n; i++)
		async_push(c, &keep[i]);
	(void)a;
}

BV_EXPORT int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	struct bv_context *c;
	struct pollfd pfd[2];
	int err, flags, nfd;

	if (!context || !event) {
		bv_log("ibv_get_async_event: %s is NULL", context ? "event" : "context");
		errno = EINVAL;
		return -1;
	}
	c = bv_ctx(context);
	/* the program makes the fd non-blocking to poll it itself (as on rdma-core) */
	flags = fcntl(context->async_fd, F_GETFL);
	for (;;) {
		bv_lock(c);
		async_port_watch(c->core);
		bv_async_pump(c->core);
		err = async_pop(c, event);
		pfd[1].fd = c->core->bctx ? blue_async_fd(c->core->bctx) : -1;
		bv_unlock(c);
		if (!err)
			return 0;
		if (flags >= 0 && (flags & O_NONBLOCK)) {
			errno = EAGAIN;
			return -1;
		}
		/* our own fd (another thread routed one to us) or libblue's (one to route) */
		pfd[0] = (struct pollfd){ .fd = context->async_fd, .events = POLLIN };
		pfd[1].events = POLLIN;
		nfd = pfd[1].fd >= 0 ? 2 : 1;
		/* a signal ends the wait with EINTR, as it ends rdma-core's read() of the
		 * kernel's async fd (compat/cq.c ibv_get_cq_event) */
		if (poll(pfd, (nfds_t)nfd, BV_ASYNC_WAIT_MS) < 0)
			return -1;
	}
}

/* As rdma-core: count the event done on its object, for a destroy that waits on it. */
BV_EXPORT void ibv_ack_async_event(struct ibv_async_event *event)
{
	pthread_mutex_t *m = NULL;
	pthread_cond_t *cv = NULL;
	uint32_t *done = NULL;

	if (!event)
		return;
	switch (event->event_type) {
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		if (!event->element.qp)
			return;
		m = &event->element.qp->mutex;
		cv = &event->element.qp->cond;
		done = &event->element.qp->events_completed;
		break;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		if (!event->element.srq)
			return;
		m = &event->element.srq->mutex;
		cv = &event->element.srq->cond;
		done = &event->element.srq->events_completed;
		break;
	case IBV_EVENT_CQ_ERR:
		if (!event->element.cq)
			return;
		m = &event->element.cq->mutex;
		cv = &event->element.cq->cond;
		done = &event->element.cq->async_events_completed;
		break;
	default:
		return;	/* port and device events name no object */
	}
	pthread_mutex_lock(m);
	++*done;
	pthread_cond_signal(cv);
	pthread_mutex_unlock(m);
}
