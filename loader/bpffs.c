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
	BLUE_PIN_DROPS, BLUE_PIN_PROG,
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
	int n;

	if (!ifname_ok(ifname))
		return -EINVAL;
	if (name)
		n = snprintf(buf, len, "%s/%s/%s", BLUE_PIN_ROOT, ifname, name);
	else
		n = snprintf(buf, len, "%s/%s", BLUE_PIN_ROOT, ifname);
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

int blue_ld__pins_remove(const char *ifname)
{
	char path[256];
	int i, ret, first = 0;
	const int n = (int)(sizeof(blue_ld__pin_names) / sizeof(blue_ld__pin_names[0]));

	for (i = n - 1; i >= 0; i--) {
		ret = blue_pin_path(path, sizeof(path), ifname, blue_ld__pin_names[i]);
		if (ret)
			return ret;
		if (unlink(path) && errno != ENOENT) {
			ret = -errno;
			ld_warn("%s: cannot remove pin: %s", path, strerror(-ret));
			if (!first)
				first = ret;
		}
	}
	ret = blue_pin_path(path, sizeof(path), ifname, NULL);
	if (ret)
		return ret;
	if (rmdir(path) && errno != ENOENT) {
		ret = -errno;
		ld_warn("%s: cannot remove directory: %s", path, strerror(-ret));
		if (!first)
			first = ret;
	}
	/* shared by every netdev: only goes when the last one is detached */
	if (rmdir(BLUE_PIN_ROOT) && errno != ENOENT && errno != ENOTEMPTY && errno != EEXIST)
		ld_dbg("%s: not removed: %s", BLUE_PIN_ROOT, strerror(errno));
	return first;
}
