// SPDX-License-Identifier: MIT
/*
 * Memory key tags: a keyed permutation of each slot's generation (see mr_key.h for why).
 * The permutation is a four-round balanced Feistel network over the 18 tag bits (two
 * 9-bit halves); a Feistel network is a bijection whatever its round function, which is
 * what the no-reuse guarantee rests on. The round function is a 64-bit mixer of the
 * table's secret, the slot and the round, so each slot walks its own sequence.
 */
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "runtime/mr_key.h"

#define HALF_BITS	(BLUE_MR_KEY_TAG_BITS / 2)
#define HALF_MASK	((1u << HALF_BITS) - 1)
#define ROUNDS		4

_Static_assert(BLUE_MR_KEY_TAG_BITS % 2 == 0, "the Feistel halves must be equal");

/* splitmix64's finaliser: every input bit reaches every output bit */
static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t blue__mr_key_secret(void)
{
	uint64_t s;
	struct timespec ts;

	if (getrandom(&s, sizeof(s), GRND_NONBLOCK) == (ssize_t)sizeof(s))
		return s;
	/* no entropy yet (early boot): still differs per process and per call */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return mix64((uint64_t)ts.tv_sec << 32 ^ (uint64_t)ts.tv_nsec ^
		     (uint64_t)getpid() << 20 ^ (uintptr_t)&s);
}

static uint32_t round_fn(uint64_t secret, uint32_t index, unsigned int round, uint32_t half)
{
	return (uint32_t)mix64(secret ^ ((uint64_t)index << 32 | round << 24 | half)) & HALF_MASK;
}

uint32_t blue__mr_key_make(uint64_t secret, uint32_t index, uint32_t gen)
{
	uint32_t l = (gen >> HALF_BITS) & HALF_MASK, r = gen & HALF_MASK, t;
	unsigned int i;

	for (i = 0; i < ROUNDS; i++) {
		t = l ^ round_fn(secret, index, i, r);
		l = r;
		r = t;
	}
	return index << BLUE_MR_KEY_TAG_BITS | l << HALF_BITS | r;
}
