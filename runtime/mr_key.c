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
#define ROUNDS		4
/* a window's permuted part: the tag above the consumer's byte */
#define MW_HALF_BITS	((BLUE_MR_KEY_TAG_BITS - BLUE_MW_KEY_CONSUMER_BITS) / 2)

_Static_assert(BLUE_MR_KEY_TAG_BITS % 2 == 0, "the Feistel halves must be equal");
_Static_assert((BLUE_MR_KEY_TAG_BITS - BLUE_MW_KEY_CONSUMER_BITS) % 2 == 0,
	       "the window tag's Feistel halves must be equal");

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

static uint32_t round_fn(uint64_t secret, uint32_t index, unsigned int round, uint32_t half,
			 uint32_t mask)
{
	return (uint32_t)mix64(secret ^ ((uint64_t)index << 32 | round << 24 | half)) & mask;
}

/* The generation @gen put through a permutation of the 2 * @hb-bit space (slot @index). */
static uint32_t permute(uint64_t secret, uint32_t index, uint32_t gen, unsigned int hb)
{
	uint32_t mask = (1u << hb) - 1, l = (gen >> hb) & mask, r = gen & mask, t;
	unsigned int i;

	for (i = 0; i < ROUNDS; i++) {
		t = l ^ round_fn(secret, index, i, r, mask);
		l = r;
		r = t;
	}
	return l << hb | r;
}

uint32_t blue__mr_key_make(uint64_t secret, uint32_t index, uint32_t gen)
{
	return index << BLUE_MR_KEY_TAG_BITS | permute(secret, index, gen, HALF_BITS);
}

uint32_t blue__mw_key_make(uint64_t secret, uint32_t index, uint32_t gen)
{
	/* the consumer's byte starts somewhere the key does not tell */
	uint32_t lo = (uint32_t)mix64(secret ^ ~((uint64_t)index << 32 | gen)) &
		      ((1u << BLUE_MW_KEY_CONSUMER_BITS) - 1);

	/* the round function sees another secret: window tags walk their own sequence */
	return index << BLUE_MR_KEY_TAG_BITS |
	       permute(~secret, index, gen, MW_HALF_BITS) << BLUE_MW_KEY_CONSUMER_BITS | lo;
}
