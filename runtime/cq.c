// SPDX-License-Identifier: MIT
/*
 * Completion queues and completion channels.
 *
 * poll_cq drives one engine pass and then reaps the ring. Event mode: the channel fd is
 * an epoll set of an eventfd (CQ events), the HAL socket's fd (frames arrived) and the
 * context's timerfd (a retransmit or RNR deadline), so an application asleep in poll()
 * wakes for anything the engine must do; blue_get_cq_event() runs the engine until an
 * armed CQ gets a completion.
 */
#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>

#include "runtime/verbs_ops.h"
#include "runtime/cq.h"
#include "runtime/device.h"
#include "runtime/log.h"
#include "runtime/progress.h"

const char *blue_wc_status_str(enum blue_wc_status status)
{
	/* the strings ibv_wc_status_str() prints, so logs read the same */
	switch (status) {
	case BLUE_WC_SUCCESS:		return "success";
	case BLUE_WC_LOC_LEN_ERR:	return "local length error";
	case BLUE_WC_LOC_QP_OP_ERR:	return "local QP operation error";
	case BLUE_WC_LOC_PROT_ERR:	return "local protection error";
	case BLUE_WC_MW_BIND_ERR:	return "memory bind operation error";
	case BLUE_WC_WR_FLUSH_ERR:	return "Work Request Flushed Error";
	case BLUE_WC_BAD_RESP_ERR:	return "bad response error";
	case BLUE_WC_LOC_ACCESS_ERR:	return "local access error";
	case BLUE_WC_REM_INV_REQ_ERR:	return "remote invalid request error";
	case BLUE_WC_REM_ACCESS_ERR:	return "remote access error";
	case BLUE_WC_REM_OP_ERR:	return "remote operation error";
	case BLUE_WC_RETRY_EXC_ERR:	return "transport retry counter exceeded";
	case BLUE_WC_RNR_RETRY_EXC_ERR:	return "RNR retry counter exceeded";
	case BLUE_WC_REM_INV_RD_REQ_ERR: return "remote invalid RD request";
	case BLUE_WC_FATAL_ERR:		return "fatal error";
	case BLUE_WC_GENERAL_ERR:	return "general error";
	}
	return "unknown";
}

/* ---- completion channels ------------------------------------------------- */

static int epoll_add(int epfd, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

int blue__channel_init(struct blue_comp_channel *ch, struct blue_context *ctx, int efd,
		       bool engine)
{
	int err = 0;

	ch->ctx = ctx;
	/* blocking: its flags are the verbs program's (blue__comp_channel_event_fd) */
	ch->efd = efd >= 0 ? efd : eventfd(0, EFD_CLOEXEC);
	ch->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (engine && ctx->timer_fd < 0)
		ctx->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (ch->efd < 0 || ch->epfd < 0 || (engine && ctx->timer_fd < 0))
		err = -errno;
	if (!err)
		err = epoll_add(ch->epfd, ch->efd);
	if (!err && engine)
		err = epoll_add(ch->epfd, ctx->timer_fd);
	if (!err && engine)
		err = epoll_add(ch->epfd, blue_hal_sock_fd(ctx->sock));
	if (err) {
		blue__logf("create_comp_channel: %s", strerror(-err));
		if (ch->efd >= 0)
			close(ch->efd);
		if (ch->epfd >= 0)
			close(ch->epfd);
		return err;
	}
	ctx->nchannel++;
	return 0;
}

struct blue_comp_channel *blue__lib_create_comp_channel(struct blue_context *ctx)
{
	struct blue_comp_channel *ch;
	int err;

	ch = calloc(1, sizeof(*ch));
	if (!ch) {
		errno = ENOMEM;
		return NULL;
	}
	err = blue__channel_init(ch, ctx, -1, true);
	if (err) {
		free(ch);
		errno = -err;
		return NULL;
	}
	return ch;
}

int blue_comp_channel_fd(struct blue_comp_channel *ch)
{
	return ch ? ch->epfd : -1;
}

int blue__comp_channel_event_fd(struct blue_comp_channel *ch)
{
	return ch ? ch->efd : -1;
}

int blue__lib_destroy_comp_channel(struct blue_comp_channel *ch)
{
	struct blue_context *ctx;

	if (ch->ncq) {
		blue__logf("destroy_comp_channel: %u CQs still use it; destroy them first",
			   ch->ncq);
		return EBUSY;
	}
	ctx = ch->ctx;
	close(ch->efd);
	close(ch->epfd);
	free(ch);
	if (--ctx->nchannel == 0 && ctx->timer_fd >= 0) {
		close(ctx->timer_fd);
		ctx->timer_fd = -1;
		ctx->timer_set_ns = 0;
	}
	return 0;
}

void blue__channels_timer(struct blue_context *ctx, uint64_t deadline_ns)
{
	struct itimerspec its = { 0 };

	if (ctx->timer_fd < 0 || deadline_ns == ctx->timer_set_ns)
		return;
	its.it_value.tv_sec = (time_t)(deadline_ns / 1000000000ull);
	its.it_value.tv_nsec = (long)(deadline_ns % 1000000000ull);
	/* an all-zero value disarms, which is what deadline 0 means */
	if (timerfd_settime(ctx->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) == 0)
		ctx->timer_set_ns = deadline_ns;
}

static struct blue_cq *channel_pop(struct blue_comp_channel *ch)
{
	struct blue_cq *cq = ch->ev_head;

	if (!cq)
		return NULL;
	ch->ev_head = cq->ev_next;
	if (!ch->ev_head)
		ch->ev_tail = NULL;
	cq->ev_next = NULL;
	cq->ev_queued = false;
	return cq;
}

/* Reset an eventfd or timerfd, never blocking (the channel's eventfd may be blocking) */
static void drain_fd(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint64_t v;

	if (poll(&p, 1, 0) == 1 && (p.revents & POLLIN) && read(fd, &v, sizeof(v)) < 0)
		return;	/* EAGAIN: another reader was first */
}

/* Hand out the CQ at the head of @ch's event list, if there is one. */
static bool channel_take(struct blue_comp_channel *ch, struct blue_cq **cq, void **cq_context)
{
	struct blue_cq *got = channel_pop(ch);

	if (!got)
		return false;
	/* an application woken by events may sleep again before it polls:
	 * ACKs a pass held (progress.c ack_hold) must not wait for that */
	blue__tx_flush(ch->ctx);
	if (!ch->ev_head)
		drain_fd(ch->efd);
	got->events_got++;
	*cq = got;
	*cq_context = got->cq_context;
	return true;
}

int blue__lib_get_cq_event_try(struct blue_comp_channel *ch, struct blue_cq **cq,
			       void **cq_context)
{
	if (channel_take(ch, cq, cq_context))
		return 0;
	/* the engine runs only when someone calls in: this call is that someone */
	while (blue__progress(ch->ctx) > 0 && !ch->ev_head)
		;
	return channel_take(ch, cq, cq_context) ? 0 : -EAGAIN;
}

int blue_get_cq_event(struct blue_comp_channel *ch, struct blue_cq **cq, void **cq_context)
{
	struct epoll_event ev[4];
	int flags, n;

	if (!ch || !cq || !cq_context) {
		errno = EINVAL;
		return -1;
	}
	for (;;) {
		if (blue__get_cq_event_try(ch, cq, cq_context) == 0)
			return 0;
		flags = fcntl(ch->epfd, F_GETFL);
		if (flags >= 0 && (flags & O_NONBLOCK)) {
			errno = EAGAIN;
			return -1;
		}
		n = epoll_wait(ch->epfd, ev, 4, -1);
		if (n < 0 && errno != EINTR)
			return -1;
		for (int i = 0; i < n; i++)
			if (ev[i].data.fd == ch->ctx->timer_fd)
				drain_fd(ch->ctx->timer_fd);
	}
}

void blue_ack_cq_events(struct blue_cq *cq, unsigned int nevents)
{
	if (cq)
		cq->events_acked += nevents;
}

/* ---- completion queues --------------------------------------------------- */

struct blue_cq *blue__lib_create_cq(struct blue_context *ctx, int cqe, void *cq_context,
			       struct blue_comp_channel *channel, int comp_vector)
{
	struct blue_cq *cq;
	int err;

	(void)comp_vector;	/* one engine per context: there is one vector */
	if (!ctx || (channel && channel->ctx != ctx)) {
		errno = EINVAL;
		return NULL;
	}
	if (cqe < 1 || cqe > BLUE_MAX_CQE) {
		blue__logf("create_cq: %d entries asked, the device takes 1..%d", cqe,
			   BLUE_MAX_CQE);
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	err = blue_ring_init_as(&cq->ring, (uint32_t)cqe, sizeof(struct blue_wc), ctx->shared_rings,
				&cq->shm_fd);
	if (err) {
		free(cq);
		errno = -err;
		return NULL;
	}
	cq->ctx = ctx;
	cq->cqe = cqe;
	cq->cq_context = cq_context;
	cq->notify_fd = -1;
	cq->channel = channel;
	if (channel)
		channel->ncq++;
	ctx->ncq++;
	return cq;
}

int blue__lib_destroy_cq(struct blue_cq *cq)
{
	struct blue_comp_channel *ch;

	if (!cq)
		return EINVAL;
	if (cq->nqp) {
		blue__logf("destroy_cq: %u QPs still complete into it; destroy them first",
			   cq->nqp);
		return EBUSY;
	}
	if (cq->events_got != cq->events_acked) {
		blue__logf("destroy_cq: %u events got but not acked; call blue_ack_cq_events",
			   cq->events_got - cq->events_acked);
		return EBUSY;
	}
	ch = cq->channel;
	if (ch) {
		/* take it off the channel's pending list */
		struct blue_cq **pp = &ch->ev_head, *prev = NULL;

		while (*pp && *pp != cq) {
			prev = *pp;
			pp = &(*pp)->ev_next;
		}
		if (*pp) {
			*pp = cq->ev_next;
			if (ch->ev_tail == cq)
				ch->ev_tail = prev;
		}
		ch->ncq--;
	}
	cq->ctx->ncq--;
	if (cq->shm_fd >= 0)
		close(cq->shm_fd);
	if (cq->notify_fd >= 0)
		close(cq->notify_fd);
	blue_ring_fini(&cq->ring);
	free(cq);
	return 0;
}

uint32_t blue__cq_room(const struct blue_cq *cq)
{
	return blue_ring_room(&cq->ring);
}

/*
 * The CQ's channel is in the application (daemon mode): it armed in the ring's header;
 * the first completion that meets the arming disarms it, counts an event there and
 * sends a byte on the application's channel socket (mgr_client.c takes it).
 */
static int notify_far(struct blue_cq *cq, const struct blue_wc *wc, bool solicited)
{
	struct blue_ring_hdr *h = cq->ring.hdr;
	uint32_t arm = __atomic_load_n(&h->arm, __ATOMIC_ACQUIRE);
	uint8_t one = 1;

	if (!arm || (arm == BLUE_RING_ARM_SOLICITED && !solicited &&
		     wc->status == BLUE_WC_SUCCESS))
		return 0;
	if (!__atomic_compare_exchange_n(&h->arm, &arm, 0, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return 0;	/* the application changed it meanwhile: its next arming */
	__atomic_fetch_add(&h->events, 1, __ATOMIC_RELEASE);
	/* a datagram socket, and MSG_DONTWAIT whatever its flags: no process can make the
	 * engine wait here (full: it is readable already) */
	(void)send(cq->notify_fd, &one, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	return 0;
}

int blue__cq_push(struct blue_cq *cq, const struct blue_wc *wc, bool solicited)
{
	struct blue_comp_channel *ch = cq->channel;
	uint64_t one = 1;

	if (!blue_ring_room(&cq->ring))
		return -ENOSPC;
	memcpy(blue_ring_elem(&cq->ring, blue_ring_prod_own(&cq->ring)), wc, sizeof(*wc));
	blue_ring_produce(&cq->ring, 1);
	if (cq->notify_fd >= 0)
		return notify_far(cq, wc, solicited);
	/* as ibv_req_notify_cq(3): one event per arming */
	if (cq->armed && ch &&
	    (!cq->solicited_only || solicited || wc->status != BLUE_WC_SUCCESS)) {
		cq->armed = false;
		if (!cq->ev_queued) {
			cq->ev_queued = true;
			if (ch->ev_tail)
				ch->ev_tail->ev_next = cq;
			else
				ch->ev_head = cq;
			ch->ev_tail = cq;
		}
		if (write(ch->efd, &one, sizeof(one)) < 0)
			return 0;	/* only EAGAIN at 2^64-1: it is readable already */
	}
	return 0;
}

void blue__cq_clean(struct blue_cq *cq, uint32_t qpn)
{
	struct blue_ring *r = &cq->ring;
	uint32_t cons = blue_ring_cons_own(r), i = blue_ring_prod_acquire(r), gone = 0;

	/* from the newest down, the kept ones move up over the removed ones */
	while (i != cons) {
		const struct blue_wc *wc = blue_ring_elem(r, --i);

		if (wc->qp_num == qpn)
			gone++;
		else if (gone)
			memcpy(blue_ring_elem(r, i + gone), wc, sizeof(*wc));
	}
	blue_ring_consume(r, gone);
}

int blue__cq_resize(struct blue_cq *cq, int cqe, uint32_t held)
{
	struct blue_ring nr;
	uint32_t n, i, cons;
	int err;

	if (!cq || cqe < 1 || cqe > BLUE_MAX_CQE) {
		blue__logf("resize_cq: %d entries asked, the device takes 1..%d", cqe,
			   BLUE_MAX_CQE);
		return EINVAL;
	}
	if (cq->ctx->shared_rings) {
		blue__logf("resize_cq: not in daemon mode: the API side maps the ring it has");
		return EOPNOTSUPP;
	}
	blue__progress(cq->ctx);	/* what is due now counts against the new size */
	n = blue_ring_count(&cq->ring);
	if (n + held > (uint32_t)cqe) {
		blue__logf("resize_cq: %u completions are not polled yet, more than the %d "
			   "entries asked; poll them first", n + held, cqe);
		return EINVAL;
	}
	err = blue_ring_init(&nr, (uint32_t)cqe, sizeof(struct blue_wc));
	if (err)
		return -err;
	cons = blue_ring_cons_own(&cq->ring);
	for (i = 0; i < n; i++)
		memcpy(blue_ring_elem(&nr, i), blue_ring_elem(&cq->ring, cons + i),
		       sizeof(struct blue_wc));
	blue_ring_produce(&nr, n);
	blue_ring_fini(&cq->ring);
	cq->ring = nr;
	cq->cqe = cqe;
	return 0;
}

int blue__lib_req_notify_cq(struct blue_cq *cq, int solicited_only)
{
	if (!cq->channel) {
		blue__logf("req_notify_cq: the CQ has no completion channel to notify");
		return EINVAL;
	}
	cq->armed = true;
	cq->solicited_only = solicited_only != 0;
	return 0;
}

int blue_poll_cq(struct blue_cq *cq, int num, struct blue_wc *wc)
{
	struct blue_ring *r;
	uint32_t avail, i;

	if (!cq || num < 0 || (num && !wc))
		return -EINVAL;
	cq->ctx->ops->progress(cq->ctx);
	r = &cq->ring;
	avail = blue_ring_count(r);
	if (avail > (uint32_t)num)
		avail = (uint32_t)num;
	for (i = 0; i < avail; i++)
		memcpy(&wc[i], blue_ring_elem(r, blue_ring_cons_own(r) + i), sizeof(*wc));
	blue_ring_consume(r, avail);
	if (!avail)
		cq->ctx->ops->idle(cq->ctx);
	return (int)avail;
}
