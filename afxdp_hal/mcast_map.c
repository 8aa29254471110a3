// SPDX-License-Identifier: MIT
/* The multicast map's entries of one queue (see mcast_map.h). */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <blue/mcast.h>
#include "afxdp_hal/mcast_map.h"

static void key_of(struct blue_mcast_key *k, uint32_t queue, const uint8_t gid[16])
{
	memset(k, 0, sizeof(*k));
	memcpy(k->gid, gid, sizeof(k->gid));
	k->queue = queue;
}

int blue_mcast_map_put(int fd, uint32_t queue, const uint8_t gid[16], uint32_t xsk_slot,
		       uint32_t nqp)
{
	struct blue_mcast_key k;
	struct blue_mcast_val v = {
		.xsk_slot = xsk_slot,
		.nqp = nqp,
		.owner_pid = (uint32_t)getpid(),
	};

	if (!blue_gid_is_mcast(gid))
		return -EINVAL;
	key_of(&k, queue, gid);
	if (bpf_map_update_elem(fd, &k, &v, BPF_ANY))
		return errno == E2BIG ? -ENOSPC : -errno;	/* E2BIG: the hash map is full */
	return 0;
}

int blue_mcast_map_del(int fd, uint32_t queue, const uint8_t gid[16])
{
	struct blue_mcast_key k;

	key_of(&k, queue, gid);
	return bpf_map_delete_elem(fd, &k) ? -errno : 0;
}

unsigned int blue_mcast_map_clear(int fd, uint32_t queue, uint32_t xsk_slot)
{
	struct blue_mcast_key k, next, doomed[BLUE_MCAST_MAP_ENTRIES];
	struct blue_mcast_val v;
	unsigned int n = 0, i;
	void *prev = NULL;

	/* collect first: deleting while walking a hash map restarts the walk */
	while (n < BLUE_MCAST_MAP_ENTRIES && !bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		if (k.queue != queue || bpf_map_lookup_elem(fd, &k, &v))
			continue;
		if (xsk_slot == UINT32_MAX || v.xsk_slot == xsk_slot)
			doomed[n++] = k;
	}
	for (i = 0; i < n; i++)
		bpf_map_delete_elem(fd, &doomed[i]);
	return n;
}
