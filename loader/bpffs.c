// SPDX-License-Identifier: MIT
/*
 * The pin directory: where it is, making sure a bpffs is mounted under it, and removing
 * what the loader put there.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <linux/magic.h>

#include "loader/internal.h"

const char *const blue_ld__pin_names[BLUE_LD_NPINS] = {
	BLUE_PIN_QP_CTX, BLUE_PIN_XSKS, BLUE_PIN_STATS, BLUE_PIN_DEV_STATS, BLUE_PIN_DIAG,
	BLUE_PIN_DROPS, BLUE_PIN_TUNE, BLUE_PIN_MCAST, BLUE_PIN_PROG, BLUE_PIN_LINK,
};

static bool ifname_ok(const char *ifname)
{
	size_t n = ifname ? strlen(ifname) : 0;

	/* the kernel's own rule (dev_valid_name), which also keeps the pin path inside
	 * BLUE_PIN_ROOT */
	return n > 0 && n < IFNAMSIZ && !strchr(ifname, '/') &&
	       strcmp(ifname, ".") && strcmp(ifname, "..");
}

int blue_ld__ifname_check(const char *ifname)
{
	if (ifname_ok(ifname))
		return 0;
	ld_err("'%s': not a valid interface name (1 to %d characters, no '/')",
	       ifname ? ifname : "", IFNAMSIZ - 1);
	return -EINVAL;
}

int blue_pin_path(char *buf, size_t len, const char *ifname, const char *name)
{
	char dir[192];
	int ret, n;

	if (!ifname_ok(ifname))
		return -EINVAL;
	ret = blue_pin_dir(dir, sizeof(dir), ifname);
	if (ret)
		return ret;
	n = name ? snprintf(buf, len, "%s/%s", dir, name) : snprintf(buf, len, "%s", dir);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int blue_ld__bpffs_present(void)
{
	struct statfs st;

	if (statfs(BLUE_BPFFS, &st))
		return -errno;
	return st.f_type == BPF_FS_MAGIC;
}

int blue_ld__bpffs_ensure(void)
{
	int ret = blue_ld__bpffs_present();

	if (ret == 1)
		return 0;
	if (ret < 0) {
		ld_err("%s: cannot pin there: %s (is sysfs mounted?)",
		       BLUE_BPFFS, strerror(-ret));
		return ret;
	}
	/*
	 * Not a bpffs: either nobody mounted one, or `ip netns exec` gave us a fresh sysfs
	 * that hides it. A bpffs mounted here lives as long as this mount namespace.
	 */
	if (mount("bpf", BLUE_BPFFS, "bpf", 0, "mode=0700")) {
		ret = -errno;
		if (ret == -EPERM || ret == -EACCES)
			return blue_ld__err_perm("mounting bpffs at " BLUE_BPFFS, "CAP_SYS_ADMIN");
		ld_err("mounting bpffs at %s failed: %s", BLUE_BPFFS,
		       strerror(-ret));
		return ret;
	}
	ld_info("mounted bpffs at %s (none was mounted there)", BLUE_BPFFS);
	return 0;
}

/* Remove the pins of one netdev's directory @dir, then @dir. */
int blue_ld__pins_remove_dir(const char *dir)
{
	char path[256];
	int i, ret, first = 0;

	for (i = BLUE_LD_NPINS - 1; i >= 0; i--) {
		snprintf(path, sizeof(path), "%s/%s", dir, blue_ld__pin_names[i]);
		if (unlink(path) && errno != ENOENT) {
			ret = -errno;
			ld_warn("%s: cannot remove pin: %s", path, strerror(-ret));
			if (!first)
				first = ret;
		}
	}
	if (rmdir(dir) && errno != ENOENT) {
		ret = -errno;
		ld_warn("%s: cannot remove directory: %s", dir, strerror(-ret));
		if (!first)
			first = ret;
	}
	return first;
}

/* Remove @dir's parent, the namespace's directory, then BLUE_PIN_ROOT, if they are empty:
 * both are shared (by a namespace's netdevs, by every namespace). */
void blue_ld__pins_prune(const char *dir)
{
	char parent[256];
	char *slash;

	snprintf(parent, sizeof(parent), "%s", dir);
	slash = strrchr(parent, '/');
	if (slash && slash != parent) {
		*slash = '\0';
		if (strcmp(parent, BLUE_PIN_ROOT) && rmdir(parent) && errno != ENOENT &&
		    errno != ENOTEMPTY && errno != EEXIST)
			ld_dbg("%s: not removed: %s", parent, strerror(errno));
	}
	if (rmdir(BLUE_PIN_ROOT) && errno != ENOENT && errno != ENOTEMPTY && errno != EEXIST)
		ld_dbg("%s: not removed: %s", BLUE_PIN_ROOT, strerror(errno));
}

int blue_ld__pins_remove(const char *ifname)
{
	char dir[256];
	int ret = blue_pin_path(dir, sizeof(dir), ifname, NULL);

	if (ret)
		return ret;
	ret = blue_ld__pins_remove_dir(dir);
	blue_ld__pins_prune(dir);
	return ret;
}
