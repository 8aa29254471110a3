/* SPDX-License-Identifier: MIT */
/*
 * vm.nr_hugepages for unit tests (tests run as root): take the lock, add the pages a
 * test needs, and give back exactly those in .fini (huge_fini), pass, fail or skip.
 */
#ifndef BLUE_TESTS_HUGE_POOL_H
#define BLUE_TESTS_HUGE_POOL_H

#include <stdbool.h>
#include <stddef.h>

#define FREE_HUGE	"/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages"
#define HUGE_2M_BYTES	((size_t)2 << 20)

/* A number read from a /proc or /sys file, or -1. */
long read_long(const char *path);
/* Hold the pool lock (Criterion runs tests in parallel), or skip after 10 s. */
void huge_lock(void);
/* Add @need pages to the pool (lock held): whether @need pages are free now. */
bool huge_try_reserve(long need);
/* The same, or skip saying why. */
void huge_reserve(long need);
/* Give back the pages added, unset BLUE_HUGEPAGES, drop the lock: a test's .fini. */
void huge_fini(void);

/* Criterion 2.4 ends a skipped test without running its .fini: give the pages back first. */
#define huge_skip(...) do { huge_fini(); cr_skip(__VA_ARGS__); } while (0)

#endif
