// SPDX-License-Identifier: MIT
/*
 * Reclaiming the pins of netdevs that are gone. A namespace deleted without a detach
 * (a container that stopped) leaves its directory under BLUE_PIN_ROOT behind. What
 * proves it dead is the XDP link pinned there: when its netdev is unregistered, the
 * kernel detaches the link and it reports ifindex 0 from then on, to a reader in any
 * namespace. A link that still has an interface is a live attach and is never touched,
 * nor is anything not in this layout (older builds pin at BLUE_PIN_ROOT/<ifname>).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "loader/internal.h"

/* 1: @dir holds an XDP link whose netdev is gone; 0: live, or not ours to judge. */
static int link_orphaned(const char *dir)
{
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);
	char path[512];
	int fd, ret = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, BLUE_PIN_LINK) >= sizeof(path))
		return 0;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.type == BPF_LINK_TYPE_XDP &&
	    info.xdp.ifindex == 0)
		ret = 1;
	close(fd);
	return ret;
}

/* The netdev directories of one namespace directory; removes it too once empty. */
static int reclaim_ns(const char *nsdir)
{
	char dir[512];
	struct dirent *e;
	DIR *d = opendir(nsdir);
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || e->d_type != DT_DIR)
			continue;
		if ((size_t)snprintf(dir, sizeof(dir), "%s/%s", nsdir, e->d_name) >= sizeof(dir) ||
		    !link_orphaned(dir))
			continue;
		if (blue_ld__pins_remove_dir(dir) == 0) {
			ld_info("reclaimed %s: its netdev is gone (deleted, or its network namespace "
				"was) and blue was not detached", dir);
			n++;
		}
	}
	closedir(d);
	if (rmdir(nsdir) && errno != ENOTEMPTY && errno != EEXIST && errno != ENOENT)
		ld_dbg("%s: not removed: %s", nsdir, strerror(errno));
	return n;
}

int blue_ld__reclaim_stale(void)
{
	const size_t plen = strlen(BLUE_PIN_NS_PREFIX);
	char nsdir[512];
	struct dirent *e;
	DIR *d = opendir(BLUE_PIN_ROOT);
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, BLUE_PIN_NS_PREFIX, plen) || e->d_type != DT_DIR)
			continue;
		if ((size_t)snprintf(nsdir, sizeof(nsdir), "%s/%s", BLUE_PIN_ROOT, e->d_name) <
		    sizeof(nsdir))
			n += reclaim_ns(nsdir);
	}
	closedir(d);
	return n;
}
