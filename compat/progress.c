// SPDX-License-Identifier: MIT
/*
 * The progress thread. libblue's engine runs only when someone calls in (ARCHITECTURE.md
 * "Progress"), and a verbs program need not: perftest's RDMA WRITE and READ servers sit
 * in a TCP read while the client's requests arrive, and ib_write_lat spins on memory
 * between its polls; rxe, a kernel driver, answers them anyway. So one thread per
 * device core (every verbs context of the device in this process: compat.h) runs the engine while it has work, and otherwise sleeps in poll() on the
 * AF_XDP socket, which wakes it for the next frame, or at the engine's next deadline (a
 * timer; a paced QP's next departure, so pacing keeps its rate under this thread), and
 * after BV_IDLE_MS at most. It never waits for the context lock: when the application holds it, the
 * application is in libblue (polling its CQ drives the engine), and the thread naps
 * BV_NAP_US instead of queueing behind it. An earlier version stood back for a while
 * whenever the application had polled often; ib_write_lat, which polls for its send
 * completion and then spins on memory for the peer's WRITE, paid that while per message.
 *
 * BLUE_PROGRESS_RT=1 runs the thread at the lowest real-time priority (where allowed),
 * as a kernel driver's receive path runs in softirq ahead of any process: on a machine
 * with fewer cores than spinning threads (a program that spins on memory, like
 * ib_write_lat, on each end of a 2-core box) a woken thread may otherwise wait a
 * scheduler slice for a CPU (seen here: poll() returning 5 ms after its 1 ms timeout).
 * Off by default: the preemptions cost the busy-polling programs more than it saves
 * on this machine.
 */
#include <poll.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>

#include "compat/compat.h"
#include "runtime/device.h"
#include "runtime/log.h"
#include "runtime/progress.h"
#include "runtime/thread.h"
#include "runtime/verbs_ops.h"

#define BV_NAP_US	20	/* the nap when the application is in libblue */
#define BV_IDLE_MS	1	/* the longest sleep with nothing to do (timer granularity) */

uint64_t bv_idle_ns(uint64_t now, uint64_t next)
{
	const uint64_t cap = BV_IDLE_MS * 1000000ull;

	if (!next)
		return cap;
	if (next <= now)
		return 0;
	return next - now < cap ? next - now : cap;
}

/* Sleep on the socket until a frame comes or the engine's next deadline is due. */
static void idle_wait(struct bv_core *core, struct pollfd *pfd, const struct timespec *nap)
{
	uint64_t next = __atomic_load_n(&core->bctx->eng.next_ns, __ATOMIC_RELAXED);
	uint64_t ns = bv_idle_ns(blue__now_ns(), next);
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	if (pfd->fd < 0 || ppoll(pfd, 1, &ts, NULL) < 0)
		nanosleep(nap, NULL);
}

void bv_doorbell(struct bv_context *c)
{
	c->bctx->ops->progress(c->bctx);	/* daemon mode: post_send rang the daemon */
}

static void *progress_main(void *arg)
{
	struct bv_core *core = arg;
	struct timespec nap = { 0, BV_NAP_US * 1000L };
	struct pollfd pfd = { .events = POLLIN };
	int n;

	pfd.fd = blue_hal_sock_fd(core->bctx->sock);
	if (blue__env_flag("BLUE_PROGRESS_RT", false)) {
		struct sched_param sp = { .sched_priority = 1 };

		/* EPERM without CAP_SYS_NICE: then the normal priority it is */
		(void)pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	}
	/* the default 50 us timer slack would triple every nap */
	(void)prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	while (!atomic_load(&core->stop)) {
		if (pthread_mutex_trylock(&core->lock)) {
			nanosleep(&nap, NULL);
			continue;
		}
		n = blue__progress(core->bctx);
		bv_async_pump(core);	/* the events that pass raised, to their contexts */
		pthread_mutex_unlock(&core->lock);
		if (n > 0)
			continue;
		idle_wait(core, &pfd, &nap);
	}
	return NULL;
}

int bv_progress_start(struct bv_core *core)
{
	int err;

	/* in daemon mode blue-manager's engine runs anyway (ARCHITECTURE.md "Daemon mode") */
	if (core->thread_started || !core->bctx || blue__engine_elsewhere(core->bctx))
		return 0;
	atomic_store(&core->stop, false);
	err = blue_thread_start(&core->thread, progress_main, core);
	if (err) {
		bv_log("cannot start the progress thread for %s: %s",
		       core->ifname, strerror(err));
		return err;
	}
	core->thread_started = true;
	return 0;
}

void bv_progress_stop(struct bv_core *core)
{
	if (!core->thread_started)
		return;
	atomic_store(&core->stop, true);
	pthread_join(core->thread, NULL);
	core->thread_started = false;
}
