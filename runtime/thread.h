/* SPDX-License-Identifier: MIT */
/*
 * Threads that a library starts inside an application (compat's progress thread, the
 * rdma_cm agent's thread) must not take the application's signals. A process-directed
 * signal goes to any thread that does not block it, so an application that ends a
 * blocking call with a signal (qperf ends each test with SIGALRM, set by setitimer, and
 * expects its main thread to see it) could otherwise have it land in our thread, where it
 * interrupts nothing of the application's. rxe's work runs in the kernel and takes no
 * signals; these threads start with every signal blocked, as UCX's async thread does.
 */
#ifndef BLUE_RUNTIME_THREAD_H
#define BLUE_RUNTIME_THREAD_H

#include <pthread.h>
#include <signal.h>

/* pthread_create() with every signal blocked in the new thread. Return: 0 or an errno. */
static inline int blue_thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}

#endif
