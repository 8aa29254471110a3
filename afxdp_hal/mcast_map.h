/* SPDX-License-Identifier: MIT */
/*
 * The AF_XDP HAL's side of the multicast map (include/blue/mcast.h): the entries of
 * one netdev queue, written through the pinned map's fd. The queue's owner is the only
 * writer of its entries, so no entry is ever written by two processes.
 */
#ifndef BLUE_HAL_MCAST_MAP_H
#define BLUE_HAL_MCAST_MAP_H

#include <stdint.h>

/* {@gid, @queue} -> @xsk_slot. 0, -ENOSPC (map full), -EINVAL (not a group), -errno. */
int blue_mcast_map_put(int fd, uint32_t queue, const uint8_t gid[16], uint32_t xsk_slot,
		       uint32_t nqp);

/* Remove {@gid, @queue}. 0 or -ENOENT. */
int blue_mcast_map_del(int fd, uint32_t queue, const uint8_t gid[16]);

/*
 * Remove @queue's entries that steer to @xsk_slot (its socket is closing), or every
 * entry of @queue when @xsk_slot is UINT32_MAX (a new owner of the queue clears what a
 * dead one left). Returns how many went.
 */
unsigned int blue_mcast_map_clear(int fd, uint32_t queue, uint32_t xsk_slot);

#endif /* BLUE_HAL_MCAST_MAP_H */
