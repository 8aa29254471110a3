/* SPDX-License-Identifier: MIT */
/*
 * Completion queues: a ring of struct blue_wc entries (ring.h) that the engine produces
 * into and blue_poll_cq() consumes from, and completion channels for event mode.
 */
#ifndef BLUE_RUNTIME_CQ_H
#define BLUE_RUNTIME_CQ_H

#include <stdbool.h>
#include <stdint.h>
#include <blue/blue.h>

#include "runtime/ring.h"

/* struct blue_wc holds no pointer, so it is the ring entry as it is. */
_Static_assert(sizeof(struct blue_wc) <= 64, "a CQE stays within a cache line");

struct blue_cq;

struct blue_comp_channel {
	struct blue_context *ctx;
	int epfd;		/* what a libblue application polls: efd, the HAL socket, the
				 * timer (it drives the engine when woken) */
	int efd;		/* eventfd (daemon mode: a datagram socket), readable while CQ
				 * events are pending: what a
				 * verbs program polls (compat; a thread runs the engine) */
	unsigned int ncq;	/* CQs that use the channel */
	struct blue_cq *ev_head, *ev_tail;	/* CQs with an event not yet got */
};

struct blue_cq {
	struct blue_context *ctx;
	struct blue_ring ring;		/* entries: struct blue_wc */
	int shm_fd;			/* the ring's memfd until handed over (daemon
					 * mode: ctx->shared_rings), else -1 */
	struct blue_comp_channel *channel;
	void *cq_context;
	int cqe;			/* entries the application asked for */
	unsigned int nqp;		/* QPs that complete into it */
	bool armed;			/* blue_req_notify_cq() since the last event */
	bool solicited_only;
	bool ev_queued;			/* on the channel's event list */
	struct blue_cq *ev_next;
	unsigned int events_got;	/* blue_get_cq_event() returned it */
	unsigned int events_acked;	/* blue_ack_cq_events() */
	/* daemon mode, the CQ's channel is in the application: arming is in the ring's
	 * header (arm, events), and an event is a datagram on the application's socket */
	int notify_fd;
	uint32_t events_seen;		/* the API side: the header's events it has taken */
};

/*
 * blue__cq_room() - free entries; the engine checks before it completes a WQE so that
 * no completion is ever lost (it waits for the application to poll instead).
 * Locking: the engine's (producer's) side.
 */
uint32_t blue__cq_room(const struct blue_cq *cq) __attribute__((visibility("hidden")));

/*
 * blue__cq_push() - append one completion, raising a channel event if the CQ is armed
 * and @solicited (or the CQ is armed for all completions, or @wc is an error).
 * Locking: the engine's (producer's) side.
 * Return: 0, or -ENOSPC when the ring is full (nothing written).
 */
int blue__cq_push(struct blue_cq *cq, const struct blue_wc *wc, bool solicited)
	__attribute__((visibility("hidden")));

/*
 * blue__cq_clean() - remove @qpn's completions that the application has not polled yet,
 * keeping the others in order: a QP going to RESET starts a new life, and what it
 * completed (or flushed) before must not be taken for its new work (rdma-core's mlx4
 * and mlx5 clean their CQs so at RESET).
 * Locking: the consumer's side (it moves the consumer index only), and the engine does
 * not produce meanwhile: the context's one thread.
 */
void blue__cq_clean(struct blue_cq *cq, uint32_t qpn) __attribute__((visibility("hidden")));

/*
 * blue__cq_resize() - give @cq room for @cqe completions, keeping the unpolled ones in
 * order (ibv_resize_cq(3)). @held: completions the caller took out of the ring and has
 * not handed to the application yet (compat's extended poll batch); they count too.
 * Locking: the context's one thread (the engine does not produce meanwhile).
 * Return: 0; EINVAL (after a message) when @cqe is out of range or fewer than the
 * unpolled completions; ENOMEM.
 */
int blue__cq_resize(struct blue_cq *cq, int cqe, uint32_t held)
	__attribute__((visibility("hidden")));

/*
 * blue__channels_timer() - the engine's next deadline (CLOCK_MONOTONIC ns, 0: none),
 * so that an application asleep on a channel fd wakes up for retransmissions.
 */
void blue__channels_timer(struct blue_context *ctx, uint64_t deadline_ns)
	__attribute__((visibility("hidden")));

/*
 * blue__get_cq_event_try() - one non-blocking try of blue_get_cq_event(): take a pending
 * event, else run the engine and look again. It never sleeps, whatever the channel fd's
 * O_NONBLOCK, so a caller that must not block under its own lock (compat) waits on the
 * fd itself between tries.
 * Return: 0 with *@cq and *@cq_context set, or -EAGAIN when no event is there.
 */
int blue__get_cq_event_try(struct blue_comp_channel *ch, struct blue_cq **cq, void **cq_context)
	__attribute__((visibility("hidden")));

/*
 * blue__channel_init() - @ch's event fd (@efd, or a new eventfd for -1) and the epoll fd
 * a libblue application polls; with @engine (library mode) the epoll set also holds
 * what wakes this process's engine (the engine's timer, the HAL socket).
 * Return: 0 or -errno (after a message; @efd is closed).
 */
int blue__channel_init(struct blue_comp_channel *ch, struct blue_context *ctx, int efd,
		       bool engine) __attribute__((visibility("hidden")));

/*
 * blue__comp_channel_event_fd() - the channel's eventfd, readable only while an event is
 * pending, as the kernel's completion channel fd is. compat hands it to verbs programs
 * as ibv_comp_channel.fd: the libblue fd (blue_comp_channel_fd) is also readable for
 * every frame the device receives and every engine timer, and a program that polls
 * the fd itself takes readable for "an event is there". UCX 1.13 does, from its async
 * thread: it called its UD interface's event callback before it had filled in that
 * interface's capabilities, and asserted (ucp_worker.c:773). Blocking unless the
 * program sets O_NONBLOCK on it.
 */
int blue__comp_channel_event_fd(struct blue_comp_channel *ch)
	__attribute__((visibility("hidden")));

#endif /* BLUE_RUNTIME_CQ_H */
