/* SPDX-License-Identifier: MIT */
/*
 * Memory keys (lkey == rkey): how the 32 bits are split between the MR table slot and a
 * tag, and how the tag is drawn.
 *
 * A key is (index << BLUE_MR_KEY_TAG_BITS) | tag. The index finds the MR in one array
 * read; the tag makes a key from a deregistered MR miss. rxe spends 24 bits on the index
 * and 8 on the tag, so its tags repeat every 256 registrations of a slot and a stale rkey
 * comes back to life. Here the index gets 14 bits (16383 MRs, slot 0 is never used so
 * that key 0 is invalid) and the tag 18, and the tag is not a counter: it is the slot's
 * registration count (its generation) put through a keyed permutation of the 18-bit tag
 * space, with a key drawn from getrandom() per MR table. So
 *  - keys cannot be guessed from the registration order (the first key is not 0x101),
 *    and two contexts or two runs draw different keys;
 *  - one slot never hands out the same key twice within 2^18 = 262144 registrations of
 *    that slot, since a permutation of distinct generations gives distinct tags.
 *
 * Memory windows take slots of the same table, so an rkey names an MR or a window by its
 * index alone. A window's key has the consumer's 8 bits at the bottom (IBA 10.6.7: the
 * "key" part ibv_inc_rkey() changes with each bind); the 10 tag bits above them are the
 * slot's generation put through a keyed permutation of 10 bits, so one slot never hands
 * a window the same upper key twice within 1024 allocations, whatever keys the consumer
 * chose. A slot keeps its kind (MR or window) for the table's life: a stale MR key can
 * then never name a window, nor a stale window key an MR, however the tags fall.
 */
#ifndef BLUE_RUNTIME_MR_KEY_H
#define BLUE_RUNTIME_MR_KEY_H

#include <stdint.h>

#define BLUE_MR_KEY_INDEX_BITS	14
#define BLUE_MR_KEY_TAG_BITS	(32 - BLUE_MR_KEY_INDEX_BITS)

/* A fresh random permutation key for one MR table (getrandom, clock if that fails). */
uint64_t blue__mr_key_secret(void) __attribute__((visibility("hidden")));

/* The key of generation @gen of slot @index (index < 2^BLUE_MR_KEY_INDEX_BITS). */
uint32_t blue__mr_key_make(uint64_t secret, uint32_t index, uint32_t gen)
	__attribute__((visibility("hidden")));

#define BLUE_MW_KEY_CONSUMER_BITS	8
#define BLUE_MW_KEY_CONSUMER_MASK	((1u << BLUE_MW_KEY_CONSUMER_BITS) - 1)

/* The first key of generation @gen of the window slot @index. */
uint32_t blue__mw_key_make(uint64_t secret, uint32_t index, uint32_t gen)
	__attribute__((visibility("hidden")));

/* The table slot a key names (any 32-bit value: it may come off the wire). */
static inline uint32_t blue__mr_key_index(uint32_t key)
{
	return key >> BLUE_MR_KEY_TAG_BITS;
}

#endif /* BLUE_RUNTIME_MR_KEY_H */
