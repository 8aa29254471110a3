// SPDX-License-Identifier: MIT
/*
 * Event channels (cma.h): a queue of struct cma_event per channel, an eventfd that
 * counts the queued events (so poll() on rdma_event_channel.fd works as it does on the
 * kernel's rdma_cm fd), a condition variable for rdma_get_cm_event, and the wait of a
 * synchronous id's call for its own result (librdmacm's ucma_complete).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include "compat/rdmacm/cma.h"

struct cma_channel *cma_channel_new(bool sync)
{
	struct cma_channel *ch = calloc(1, sizeof(*ch));

	if (!ch) {
		errno = ENOMEM;
		return NULL;
	}
	/* blocking semaphore: we read only after taking an event off the queue, so the
	 * count is never 0 then; a user's O_NONBLOCK is read back with F_GETFL */
	ch->ch.fd = eventfd(0, EFD_SEMAPHORE | EFD_CLOEXEC);
	if (ch->ch.fd < 0) {
		int e = errno;

		cma_log("event channel: eventfd: %s", strerror(e));
		free(ch);
		errno = e;
		return NULL;
	}
	pthread_cond_init(&ch->cond, NULL);
	ch->sync = sync;
	return ch;
}

void cma_channel_free(struct cma_channel *ch)
{
	struct cma_event *e;

	while ((e = ch->head)) {
		ch->head = e->next;
		cma_event_free(e);
	}
	if (ch->ch.fd >= 0)
		close(ch->ch.fd);
	pthread_cond_destroy(&ch->cond);
	free(ch);
}

CMA_EXPORT struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct cma_channel *ch;
	int err;

	cma_lock();
	err = cma_devs_init();
	ch = err ? NULL : cma_channel_new(false);
	cma_unlock();
	if (err) {
		errno = -err;
		return NULL;
	}
	return ch ? &ch->ch : NULL;
}

CMA_EXPORT void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	struct cma_channel *ch = (struct cma_channel *)channel;

	if (!ch)
		return;
	cma_lock();
	if (ch->nids) {
		/* librdmacm's void call cannot fail: say why nothing happened */
		cma_log("rdma_destroy_event_channel: %u ids still use channel fd %d: not destroyed (EBUSY)",
			ch->nids, ch->ch.fd);
		cma_unlock();
		errno = EBUSY;
		return;
	}
	if (ch->waiters) {
		ch->dead = true;
		close(ch->ch.fd);
		ch->ch.fd = -1;
	} else {
		cma_channel_free(ch);
	}
	cma_unlock();
}

static void eventfd_add(struct cma_channel *ch)
{
	uint64_t one = 1;

	if (ch->ch.fd >= 0 && write(ch->ch.fd, &one, sizeof(one)) != sizeof(one))
		cma_log("event channel fd %d: eventfd write: %s", ch->ch.fd, strerror(errno));
}

static void eventfd_take(struct cma_channel *ch)
{
	uint64_t v;

	/* the count is >= 1 (one per queued event): this never blocks */
	if (ch->ch.fd >= 0 && read(ch->ch.fd, &v, sizeof(v)) != sizeof(v))
		cma_log("event channel fd %d: eventfd read: %s", ch->ch.fd, strerror(errno));
}

struct cma_event *cma_post_event(struct cma_id *owner, struct cma_id *listen_id,
				 enum rdma_cm_event_type type, int status,
				 const void *priv, size_t len)
{
	struct cma_channel *ch = listen_id ? listen_id->chan : owner->chan;
	struct cma_event *e = calloc(1, sizeof(*e));

	if (!e) {
		cma_log("%s for id %p lost: out of memory", rdma_event_str(type), (void *)owner);
		return NULL;
	}
	e->owner = owner;
	e->ev.id = &owner->id;
	e->ev.listen_id = listen_id ? &listen_id->id : NULL;
	e->ev.event = type;
	e->ev.status = status;
	if (priv && len) {
		if (len > sizeof(e->priv))
			len = sizeof(e->priv);
		memcpy(e->priv, priv, len);
		e->ev.param.conn.private_data = e->priv;
		e->ev.param.conn.private_data_len = (uint8_t)len;
	}
	if (ch->tail)
		ch->tail->next = e;
	else
		ch->head = e;
	ch->tail = e;
	eventfd_add(ch);
	pthread_cond_broadcast(&ch->cond);
	return e;
}

void cma_event_free(struct cma_event *e)
{
	free(e);
}

static struct cma_event *chan_pop(struct cma_channel *ch)
{
	struct cma_event *e = ch->head;

	if (!e)
		return NULL;
	ch->head = e->next;
	if (!ch->head)
		ch->tail = NULL;
	e->next = NULL;
	eventfd_take(ch);
	return e;
}

/* remove and free the queued events @doomed picks */
static void flush_if(struct cma_channel *ch, bool (*doomed)(const struct cma_event *, const void *),
		     const void *arg)
{
	struct cma_event **pp = &ch->head, *e;

	ch->tail = NULL;
	while ((e = *pp)) {
		if (doomed(e, arg)) {
			*pp = e->next;
			eventfd_take(ch);
			cma_event_free(e);
			continue;
		}
		ch->tail = e;
		pp = &e->next;
	}
}

static bool owned_by(const struct cma_event *e, const void *id)
{
	return e->owner == id;
}

static bool of_group(const struct cma_event *e, const void *mc)
{
	return e->mc == mc;
}

void cma_flush_events(struct cma_channel *ch, struct cma_id *id)
{
	flush_if(ch, owned_by, id);
}

void cma_flush_mc_events(struct cma_channel *ch, const struct cma_mc *mc)
{
	flush_if(ch, of_group, mc);
}

static void unlock_cleanup(void *arg)
{
	((struct cma_channel *)arg)->waiters--;
	cma_unlock();
}

/* wait, lock dropped, until @ch has an event; the lock is held again on return.
 * A cancelled thread (rping cancels its CM thread in rdma_get_cm_event) unlocks. */
static void chan_wait(struct cma_channel *ch, pthread_mutex_t *m)
{
	ch->waiters++;
	pthread_cleanup_push(unlock_cleanup, ch);
	while (!ch->head || ch->dead)
		pthread_cond_wait(&ch->cond, m);
	pthread_cleanup_pop(0);
	ch->waiters--;
}

CMA_EXPORT int rdma_get_cm_event(struct rdma_event_channel *channel,
				 struct rdma_cm_event **event)
{
	struct cma_channel *ch = (struct cma_channel *)channel;
	struct cma_event *e;
	int fl;

	if (!ch || !event) {
		cma_log("rdma_get_cm_event: %s is NULL", ch ? "event" : "channel");
		errno = EINVAL;
		return -1;
	}
	fl = fcntl(ch->ch.fd, F_GETFL);
	cma_lock();
	if (!ch->head && fl >= 0 && (fl & O_NONBLOCK)) {
		cma_unlock();
		errno = EAGAIN;
		return -1;
	}
	chan_wait(ch, cma_lock_mutex());
	e = chan_pop(ch);
	e->owner->events_out++;
	if (e->mc) {
		cma_mc_join_taken(e);
		e->mc->events_out++;	/* rdma_leave_multicast waits for its ack */
	}
	if (e->ev.event == RDMA_CM_EVENT_CONNECT_REQUEST && e->owner->listener) {
		/* handed out: the new id is the user's now, no longer the listener's */
		e->owner->listener->events_out++;
		e->owner->listener = NULL;
	}
	cma_unlock();
	*event = &e->ev;
	return 0;
}

CMA_EXPORT int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct cma_event *e = (struct cma_event *)event;

	if (!e) {
		cma_log("rdma_ack_cm_event: event is NULL");
		errno = EINVAL;
		return -1;
	}
	cma_lock();
	if (e->owner->events_out)
		e->owner->events_out--;
	if (e->mc && e->mc->events_out)
		e->mc->events_out--;
	pthread_cond_broadcast(&e->owner->acked);
	if (e->ev.event == RDMA_CM_EVENT_CONNECT_REQUEST && e->ev.listen_id) {
		struct cma_id *l = cma_id_of(e->ev.listen_id);

		if (l->events_out)
			l->events_out--;
		pthread_cond_broadcast(&l->acked);
	}
	cma_event_free(e);
	cma_unlock();
	return 0;
}

int cma_sync_wait(struct cma_id *id, struct cma_event **out)
{
	struct cma_channel *ch = id->chan;

	chan_wait(ch, cma_lock_mutex());
	*out = chan_pop(ch);
	/* a synchronous id's event is its call's result, never acked: not counted */
	if ((*out)->mc)
		cma_mc_join_taken(*out);
	return 0;
}

int cma_sync_complete(struct cma_id *id)
{
	struct cma_event *e;
	int st;

	if (!id->chan->sync)
		return 0;
	if (id->sync_ev) {
		cma_event_free(id->sync_ev);
		id->sync_ev = NULL;
		id->id.event = NULL;
	}
	cma_sync_wait(id, &e);
	id->sync_ev = e;
	id->id.event = &e->ev;
	st = e->ev.status;
	if (!st)
		return 0;
	if (e->ev.event == RDMA_CM_EVENT_REJECTED)
		errno = ECONNREFUSED;
	else
		errno = st < 0 ? -st : st;
	return -1;
}
