/* SPDX-License-Identifier: MIT */
/*
 * Asynchronous events of a context (IBA 11.6.3: QP, SRQ and port events). The engine
 * raises them as it runs; the application takes them with blue_get_async_event() and
 * sleeps on blue_async_fd(), an eventfd that is readable while the queue is non-empty.
 *
 * The queue is bounded and never blocks the engine: an event that finds it full is
 * dropped and counted (overflow), as a lost event is a smaller harm than a stalled
 * transport. A mutex guards it, since the taker may be another thread than the one
 * running the engine (compat's ibv_get_async_event blocks on the fd while its progress
 * thread runs passes); events are rare, so it costs nothing on the data path.
 */
#ifndef BLUE_RUNTIME_EVENTS_H
#define BLUE_RUNTIME_EVENTS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <blue/blue.h>

#define BLUE_EVENTS_MAX		256	/* queued events per context */
#define BLUE_PORT_CHECK_NS	100000000ull	/* the carrier is read at most every 100 ms */

/*
 * The carrier of a netdev as last read, for PORT_ACTIVE / PORT_ERR on a change. The
 * engine keeps one per context; compat keeps one for a verbs context that has not opened
 * the engine (ibv_asyncwatch only opens the device).
 */
struct blue_port_watch {
	int sock;		/* for SIOCGIFFLAGS; -1 until the first read */
	bool up;
	uint64_t next_ns;	/* when the carrier is read next */
};

struct blue_events {
	pthread_mutex_t lock;
	struct blue_async_event q[BLUE_EVENTS_MAX];
	unsigned int head;	/* oldest */
	unsigned int count;
	uint64_t raised;	/* every event offered, queued or not */
	uint64_t overflow;	/* dropped: the queue was full */
	int fd;			/* eventfd; -1 if it could not be made */
	struct blue_port_watch port;
};

struct blue_context;
struct blue_qp;
struct blue_srq;

/* blue__events_init() - an empty queue and its eventfd. Return: 0 or a negative errno. */
int blue__events_init(struct blue_events *ev) __attribute__((visibility("hidden")));
void blue__events_fini(struct blue_events *ev) __attribute__((visibility("hidden")));

/* blue__event_raise() - queue @e (or count it lost when the queue is full). */
void blue__event_raise(struct blue_context *ctx, const struct blue_async_event *e)
	__attribute__((visibility("hidden")));

/* The raise sites' helpers: an event about @qp, about @srq. */
void blue__event_qp(struct blue_qp *qp, enum blue_event_type type)
	__attribute__((visibility("hidden")));
void blue__event_srq(struct blue_srq *srq, enum blue_event_type type)
	__attribute__((visibility("hidden")));

/* blue__port_watch_init() - not read yet, taken as up (a device opens on a netdev that is). */
void blue__port_watch_init(struct blue_port_watch *w) __attribute__((visibility("hidden")));
void blue__port_watch_fini(struct blue_port_watch *w) __attribute__((visibility("hidden")));

/*
 * blue__port_carrier() - the carrier of @ifname (IFF_UP and IFF_RUNNING, read with an
 * ioctl in the caller's network namespace: /sys may show another one under nsenter),
 * when BLUE_PORT_CHECK_NS has passed since the last read. A netdev that is gone is down.
 * Return: 1 up, 0 down, -1 not read (not due, or the read failed).
 */
int blue__port_carrier(struct blue_port_watch *w, const char *ifname, uint64_t now_ns)
	__attribute__((visibility("hidden")));

/* blue__port_watch_seen() - the carrier is @up now. Return: whether that is a change. */
bool blue__port_watch_seen(struct blue_port_watch *w, bool up)
	__attribute__((visibility("hidden")));

/*
 * blue__events_port_seen() - the carrier of port 1 is @up now: PORT_ACTIVE or PORT_ERR
 * when that differs from what was seen before.
 */
void blue__events_port_seen(struct blue_context *ctx, bool up)
	__attribute__((visibility("hidden")));

/*
 * blue__events_port_check() - from the progress pass: read the netdev's carrier
 * (IFF_RUNNING) when BLUE_PORT_CHECK_NS has passed since the last read. A context with
 * no netdev (the loopback HAL) has nothing to read.
 */
void blue__events_port_check(struct blue_context *ctx, uint64_t now_ns)
	__attribute__((visibility("hidden")));

#endif /* BLUE_RUNTIME_EVENTS_H */
