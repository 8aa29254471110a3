// SPDX-License-Identifier: MIT
/*
 * blue_loader_detach(): take blue's program off a netdev and remove its pins.
 *
 * The pinned program is the proof of ownership: the kernel is asked to remove the
 * attached program only if it is still that one (XDP_FLAGS_REPLACE with old_prog_fd),
 * so a program somebody else put there after us is never taken down.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <net/if.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "loader/internal.h"

/* No pins: explain why, and point at a blue program that may be stranded without them. */
static int not_attached(const char *ifname)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	char dir[256], name[64] = "";
	int ifindex = (int)if_nametoindex(ifname);
	__u32 id;

	blue_pin_path(dir, sizeof(dir), ifname, NULL);
	if (ifindex && !bpf_xdp_query(ifindex, 0, &q)) {
		id = q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id ? q.skb_prog_id : q.prog_id;
		if (id && !blue_ld__prog_name_by_id(id, name, sizeof(name)) &&
		    !strcmp(name, "blue_xdp")) {
			ld_err("%s: blue is not attached here (no pins at %s), but a blue_xdp program "
			       "(id %u) is on %s: it was attached where %s was private (inside 'ip "
			       "netns exec'?); detach it from there, or with 'ip link set dev %s %s off'",
			       ifname, dir, id, ifname, BLUE_BPFFS, ifname,
			       q.skb_prog_id == id ? "xdpgeneric" : "xdp");
			return -ENOENT;
		}
	}
	if (blue_ld__bpffs_present() != 1)
		ld_err("%s: blue is not attached (%s is not a bpffs here, so it holds no pins)",
		       ifname, BLUE_BPFFS);
	else if (!ifindex)
		ld_err("%s: no such network interface, and blue has no pins for it",
		       ifname);
	else
		ld_err("%s: blue is not attached (no pins at %s)", ifname, dir);
	return -ENOENT;
}

/* Remove our program if it is what @ifindex runs. Returns 0 when nothing of ours is
 * left attached (with a warning if it was not there to begin with). */
static int unhook(const char *ifname, int ifindex, int prog_fd, __u32 our_id)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	LIBBPF_OPTS(bpf_xdp_attach_opts, a, .old_prog_fd = prog_fd);
	char name[64] = "?";
	__u32 mode, other;
	int ret;

	ret = bpf_xdp_query(ifindex, 0, &q);
	if (ret == -EPERM || ret == -EACCES)
		return blue_ld__err_perm("detaching XDP", BLUE_CAPS_XDP);
	if (ret) {
		ld_err("%s: cannot query its XDP program: %s", ifname,
		       strerror(-ret));
		return ret;
	}
	if (q.drv_prog_id == our_id) {
		mode = XDP_FLAGS_DRV_MODE;
	} else if (q.skb_prog_id == our_id) {
		mode = XDP_FLAGS_SKB_MODE;
	} else {
		other = q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id ? q.skb_prog_id :
			q.hw_prog_id ? q.hw_prog_id : q.prog_id;
		if (other) {
			blue_ld__prog_name_by_id(other, name, sizeof(name));
			ld_warn("%s: runs another XDP program (id %u, name %s), not blue's (id %u); "
				"leaving it attached and removing blue's pins", ifname, other, name,
				our_id);
		} else {
			ld_warn("%s: blue's program (id %u) was no longer attached; removing its pins",
				ifname, our_id);
		}
		return 0;
	}
	ret = bpf_xdp_detach(ifindex, mode | XDP_FLAGS_REPLACE, &a);
	if (ret == -EPERM || ret == -EACCES)
		return blue_ld__err_perm("detaching XDP", BLUE_CAPS_XDP);
	if (ret)
		ld_err("%s: detaching blue's XDP program (id %u) failed: %s",
		       ifname, our_id, strerror(-ret));
	return ret;
}

int blue_loader_detach(const char *ifname)
{
	char path[256];
	struct stat st;
	__u32 our_id = 0;
	int ifindex, prog_fd, ret;

	blue_ld__hook_libbpf();
	if ((ret = blue_ld__ifname_check(ifname)) || (ret = blue_ld__caps_check("detaching XDP")))
		return ret;

	blue_pin_path(path, sizeof(path), ifname, BLUE_PIN_PROG);
	prog_fd = bpf_obj_get(path);
	if (prog_fd < 0) {
		ret = -errno;
		if (ret == -EPERM || ret == -EACCES)
			return blue_ld__err_perm("detaching XDP", BLUE_CAPS_XDP);
		if (ret != -ENOENT) {
			ld_err("%s: cannot open pin: %s", path, strerror(-ret));
			return ret;
		}
		/* a directory without a program pin is debris of an interrupted attach */
		blue_pin_path(path, sizeof(path), ifname, NULL);
		if (stat(path, &st))
			return not_attached(ifname);
		ld_warn("%s: removing leftover pins without a program at %s",
			ifname, path);
		return blue_ld__pins_remove(ifname);
	}
	ret = blue_ld__prog_id_by_fd(prog_fd, &our_id);
	if (ret) {
		ld_err("%s: cannot inspect pinned program: %s", path,
		       strerror(-ret));
		goto out;
	}

	ifindex = (int)if_nametoindex(ifname);
	if (!ifindex) {
		/* its namespace was deleted (or it lives in another one): the kernel dropped
		 * the attachment with the device, only our pins are left */
		ld_warn("%s: no such network interface here; removing blue's pins (if it lives in "
			"another network namespace, its program stays attached there)", ifname);
	} else {
		ret = unhook(ifname, ifindex, prog_fd, our_id);
		if (ret)
			goto out;
	}
	ret = blue_ld__pins_remove(ifname);
out:
	close(prog_fd);
	return ret;
}
