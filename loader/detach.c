// SPDX-License-Identifier: MIT
/*
 * blue_loader_detach(): take blue's program off a netdev and remove its pins.
 *
 * The pinned XDP link is the proof of ownership: detaching the link takes off exactly
 * the program it attached, so a program somebody else put on the netdev is never taken
 * down (the kernel refuses to attach one over our link anyway).
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
			/* the kernel refuses a netlink detach of a link's program (EBUSY), so
			 * 'ip link ... off' only helps with an older build's netlink attach */
			ld_err("%s: blue is not attached here (no pins at %s), but a blue_xdp "
			       "program (id %u) is on %s: it was attached where %s was private "
			       "(inside 'ip netns exec'?), and its XDP link lasts as long as that "
			       "mount namespace; detach it from there (attached by an older "
			       "build: 'ip link set dev %s %s off')", ifname, dir, id, ifname,
			       BLUE_BPFFS, ifname, q.skb_prog_id == id ? "xdpgeneric" : "xdp");
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

/*
 * Take the link pinned in @path off its netdev. Return 0 when nothing of ours is left
 * attached, saying so when the netdev was already gone.
 */
static int unhook(const char *ifname, const char *path, int link_fd)
{
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);
	int ret;

	if (bpf_obj_get_info_by_fd(link_fd, &info, &len)) {
		ret = -errno;
		ld_err("%s: cannot inspect pinned link: %s", path, strerror(-ret));
		return ret;
	}
	if (info.type != BPF_LINK_TYPE_XDP) {
		ld_err("%s: pinned link is not an XDP link (type %u); not touching it", path,
		       info.type);
		return -EPROTO;
	}
	if (!info.xdp.ifindex) {
		/* the kernel detached it when the netdev went away: only our pins are left */
		ld_warn("%s: its netdev is gone (the XDP link reports no interface); removing "
			"blue's pins", ifname);
		return 0;
	}
	if (bpf_link_detach(link_fd) == 0)
		return 0;
	ret = -errno;
	if (ret == -EPERM || ret == -EACCES)
		return blue_ld__err_perm("detaching XDP", BLUE_CAPS_XDP);
	ld_err("%s: detaching blue's XDP link (id %u) failed: %s", ifname, info.id,
	       strerror(-ret));
	return ret;
}

int blue_loader_detach(const char *ifname)
{
	char path[256];
	struct stat st;
	int link_fd, ret;

	blue_ld__hook_libbpf();
	if ((ret = blue_ld__ifname_check(ifname)) || (ret = blue_ld__caps_check("detaching XDP")))
		return ret;

	ret = blue_pin_path(path, sizeof(path), ifname, BLUE_PIN_LINK);
	if (ret) {
		ld_err("%s: cannot name its pin directory: %s", ifname, strerror(-ret));
		return ret;
	}
	link_fd = bpf_obj_get(path);
	if (link_fd < 0) {
		ret = -errno;
		if (ret == -EPERM || ret == -EACCES)
			return blue_ld__err_perm("detaching XDP", BLUE_CAPS_XDP);
		if (ret != -ENOENT) {
			ld_err("%s: cannot open pin: %s", path, strerror(-ret));
			return ret;
		}
		/* a directory without a link pin is debris of an interrupted attach */
		blue_pin_path(path, sizeof(path), ifname, NULL);
		if (stat(path, &st))
			return not_attached(ifname);
		ld_warn("%s: removing leftover pins without an XDP link at %s",
			ifname, path);
		return blue_ld__pins_remove(ifname);
	}
	ret = unhook(ifname, path, link_fd);
	close(link_fd);
	if (ret)
		return ret;
	return blue_ld__pins_remove(ifname);
}
