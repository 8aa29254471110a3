// SPDX-License-Identifier: MIT
/*
 * librdmacm's one lock and its clock (cma.h): every API call and each CM agent's thread
 * (agent.c) run under cma_lock; the IB CM's time is CLOCK_MONOTONIC nanoseconds.
 */
#include <pthread.h>
#include <time.h>

#include "compat/rdmacm/cma.h"

static pthread_mutex_t cma_mutex = PTHREAD_MUTEX_INITIALIZER;

void cma_lock(void)
{
	pthread_mutex_lock(&cma_mutex);
}

void cma_unlock(void)
{
	pthread_mutex_unlock(&cma_mutex);
}

/* added by w-cma: the condition variables of channels and ids wait on this mutex */
pthread_mutex_t *cma_lock_mutex(void)
{
	return &cma_mutex;
}

uint64_t cma_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
