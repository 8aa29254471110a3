// SPDX-License-Identifier: MIT
/* The multicast map's entries of one queue (see mcast_map.h). */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <sys/syscall.h>
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

/*
 * The key after @key (any key that is not in the map, such as the all-zero one, which is
 * no group: the first). The syscall itself, with the whole attribute zeroed: libbpf
 * 1.1's bpf_map_get_next_key() passes a partly written one, which valgrind reports
 * (test_valgrind) as does a NULL first key.
 */
static int next_key(int fd, const struct blue_mcast_key *key, struct blue_mcast_key *next)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)key;
	a.next_key = (uint64_t)(uintptr_t)next;
	return syscall(__NR_bpf, BPF_MAP_GET_NEXT_KEY, &a, sizeof(a)) < 0 ? -errno : 0;
}

unsigned int blue_mcast_map_clear(int fd, uint32_t queue, uint32_t xsk_slot)
{
	struct blue_mcast_key k, next, doomed[BLUE_MCAST_MAP_ENTRIES];
	struct blue_mcast_val v;
	unsigned int n = 0, i;

	memset(&k, 0, sizeof(k));	/* no group: the walk starts at the first key */
	/* collect first: deleting while walking a hash map restarts the walk */
	while (n < BLUE_MCAST_MAP_ENTRIES && !next_key(fd, &k, &next)) {
		k = next;
		if (k.queue != queue || bpf_map_lookup_elem(fd, &k, &v))
			continue;
		if (xsk_slot == UINT32_MAX || v.xsk_slot == xsk_slot)
			doomed[n++] = k;
	}
	for (i = 0; i < n; i++)
		bpf_map_delete_elem(fd, &doomed[i]);
	return n;
}
