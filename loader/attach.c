// SPDX-License-Identifier: MIT
/*
 * blue_loader_attach(): the skeleton lifecycle of STYLE.md point 3, open -> load -> pin
 * -> attach -> cleanup -> destroy. Every refusal is checked before anything is created,
 * and a failure after that removes what was made, so an error leaves no trace.
 *
 * The program is attached through a bpf_link (BPF_XDP), pinned next to the maps, rather
 * than through netlink or libxdp's dispatcher (which fails on these kernels,
 * ARCHITECTURE.md, facts). The pin keeps the link, and so the attachment, alive after
 * this process exits, as a CLI attach must. And the link tells when the netdev is gone:
 * the kernel then detaches it and it reports ifindex 0, which is how stale.c recognises
 * the pins of a namespace deleted without a detach. The kernel refuses to attach a link
 * over any program already there, so one appearing between our check and our attach is
 * refused rather than replaced.
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
#include "bpf/blue_xdp.skel.h"

static const char *mode_name(enum blue_xdp_mode mode)
{
	return mode == BLUE_XDP_NATIVE ? "native" : "generic";
}

/* Pins are the record that blue owns this netdev: refuse if any are left. */
static int check_not_pinned(const char *ifname)
{
	char dir[256];
	struct stat st;

	blue_pin_path(dir, sizeof(dir), ifname, NULL);
	if (stat(dir, &st) == 0) {
		ld_err("%s: blue is already attached (pinned at %s); run 'bluectl detach %s' first",
		       ifname, dir, ifname);
		return -EEXIST;
	}
	if (errno == EACCES || errno == EPERM)
		return blue_ld__err_perm("attaching XDP", BLUE_CAPS_XDP);
	return 0;
}

/* The id of whatever XDP program is on @ifindex in any mode, and the ip-link keyword
 * that removes it. */
static int xdp_attached(int ifindex, __u32 *id, const char **ipkw)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int ret = bpf_xdp_query(ifindex, 0, &q);

	if (ret)
		return ret;
	*id = 0;
	*ipkw = "xdp";
	if (q.drv_prog_id) {
		*id = q.drv_prog_id;
		*ipkw = "xdpdrv";
	} else if (q.skb_prog_id) {
		*id = q.skb_prog_id;
		*ipkw = "xdpgeneric";
	} else if (q.hw_prog_id) {
		*id = q.hw_prog_id;
		*ipkw = "xdpoffload";
	} else if (q.prog_id) {
		*id = q.prog_id;
	}
	return 0;
}

static int check_no_xdp(const char *ifname, int ifindex)
{
	const char *ipkw;
	char name[64] = "?";
	__u32 id;
	int ret = xdp_attached(ifindex, &id, &ipkw);

	if (ret == -EPERM || ret == -EACCES)
		return blue_ld__err_perm("attaching XDP", BLUE_CAPS_XDP);
	if (ret) {
		ld_err("%s: cannot query its XDP program: %s", ifname,
		       strerror(-ret));
		return ret;
	}
	if (!id)
		return 0;
	blue_ld__prog_name_by_id(id, name, sizeof(name));
	ld_err("%s: another XDP program (id %u, name %s) is attached; detach it first "
	       "('ip link set dev %s %s off')", ifname, id, name, ifname, ipkw);
	return -EBUSY;
}

static int make_dirs(const char *ifname)
{
	char dir[256], nsdir[256];
	int tries;

	blue_pin_path(dir, sizeof(dir), ifname, NULL);
	blue_pin_dir(nsdir, sizeof(nsdir), NULL);
	/* a concurrent detach (or reclaim) elsewhere may rmdir the shared root or the
	 * namespace's directory between our mkdirs; make them again */
	for (tries = 0; tries < 3; tries++) {
		if (mkdir(BLUE_PIN_ROOT, 0700) && errno != EEXIST)
			break;
		if (mkdir(nsdir, 0700) && errno != EEXIST) {
			if (errno == ENOENT)
				continue;
			break;
		}
		if (mkdir(dir, 0700) == 0)
			return 0;
		if (errno != ENOENT)
			break;
	}
	if (errno == EACCES || errno == EPERM)
		return blue_ld__err_perm("attaching XDP", BLUE_CAPS_XDP);
	ld_err("%s: cannot create pin directory: %s", dir, strerror(errno));
	return errno == EEXIST ? -EEXIST : -errno;
}

static int pin_one(const char *ifname, const char *name, struct bpf_map *map,
		   struct bpf_program *prog)
{
	char path[256];
	int ret;

	blue_pin_path(path, sizeof(path), ifname, name);
	ret = map ? bpf_map__pin(map, path) : bpf_program__pin(prog, path);
	if (ret)
		ld_err("%s: cannot pin: %s", path, strerror(-ret));
	return ret;
}

static int pin_all(const char *ifname, struct blue_xdp *skel)
{
	int ret;

	if ((ret = pin_one(ifname, BLUE_PIN_QP_CTX, skel->maps.qp_ctx, NULL)) ||
	    (ret = pin_one(ifname, BLUE_PIN_XSKS, skel->maps.xsks, NULL)) ||
	    (ret = pin_one(ifname, BLUE_PIN_STATS, skel->maps.stats, NULL)) ||
	    (ret = pin_one(ifname, BLUE_PIN_DEV_STATS, skel->maps.dev_stats, NULL)) ||
	    (ret = pin_one(ifname, BLUE_PIN_DIAG, skel->maps.diag, NULL)) ||
	    (ret = pin_one(ifname, BLUE_PIN_DROPS, skel->maps.drop_events, NULL)) ||
	    (ret = pin_one(ifname, BLUE_PIN_TUNE, skel->maps.tune, NULL)) ||
	    (ret = pin_one(ifname, BLUE_PIN_MCAST, skel->maps.mcast, NULL)) ||
	    (ret = pin_one(ifname, BLUE_PIN_PROG, NULL, skel->progs.blue_xdp)))
		return ret;
	return 0;
}

static int attach_error(const char *ifname, int ifindex, enum blue_xdp_mode mode, int ret)
{
	switch (ret) {
	case -EEXIST:
	case -EBUSY:
		/* somebody attached between our check and our attach: say who */
		if (check_no_xdp(ifname, ifindex) == 0)
			ld_err("%s: another XDP program is attached; detach it first",
			       ifname);
		return -EBUSY;
	case -EOPNOTSUPP:
		ld_err("%s: the driver does not support native XDP; try '--mode generic'", ifname);
		return ret;
	case -EPERM:
	case -EACCES:
		return blue_ld__err_perm("attaching XDP", BLUE_CAPS_XDP);
	default:
		ld_err("%s: attaching XDP in %s mode failed: %s (run with -v for the kernel's "
		       "reason)",
		       ifname, mode_name(mode), strerror(-ret));
		return ret;
	}
}

/* Attach @prog_fd to @ifindex through a bpf_link and pin it; the pin holds the link. */
static int attach_link(const char *ifname, int ifindex, int prog_fd, __u32 xdp_flags,
		       enum blue_xdp_mode mode)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts, .flags = xdp_flags);
	char path[256];
	int fd, ret;

	fd = bpf_link_create(prog_fd, ifindex, BPF_XDP, &opts);
	if (fd < 0)
		return attach_error(ifname, ifindex, mode, -errno);
	blue_pin_path(path, sizeof(path), ifname, BLUE_PIN_LINK);
	ret = bpf_obj_pin(fd, path) ? -errno : 0;
	if (ret)
		ld_err("%s: cannot pin: %s", path, strerror(-ret));
	/* without the pin, closing the last fd detaches the program again */
	close(fd);
	return ret;
}

int blue_loader_attach(const char *ifname, enum blue_xdp_mode mode, unsigned int flags)
{
	__u32 xdp_flags = 0;
	struct blue_xdp *skel = NULL;
	struct bpf_map *map;
	bool made_dirs = false;
	char dir[256];
	__u32 id = 0;
	int ifindex, ret;

	blue_ld__hook_libbpf();
	if (flags & ~BLUE_ATTACH_F_ALL) {
		ld_err("attach: unknown flags 0x%x", flags & ~BLUE_ATTACH_F_ALL);
		return -EINVAL;
	}
	if (mode == BLUE_XDP_NATIVE) {
		xdp_flags |= XDP_FLAGS_DRV_MODE;
	} else if (mode == BLUE_XDP_GENERIC) {
		xdp_flags |= XDP_FLAGS_SKB_MODE;
	} else {
		ld_err("attach: unknown mode %d", (int)mode);
		return -EINVAL;
	}
	ret = blue_ld__ifname_check(ifname);
	if (ret)
		return ret;
	/* the pins' place in this network namespace: every step below assumes it has one */
	ret = blue_pin_path(dir, sizeof(dir), ifname, NULL);
	if (ret) {
		ld_err("%s: cannot name its pin directory: %s", ifname, strerror(-ret));
		return ret;
	}
	ifindex = (int)if_nametoindex(ifname);
	if (!ifindex) {
		ld_err("%s: no such network interface", ifname);
		return -ENODEV;
	}
	ret = blue_ld__caps_check("attaching XDP");
	if (ret)
		return ret;
	/* pins of netdevs that are gone (ours among them, if this netdev was deleted and
	 * made again) would otherwise block this attach or linger for ever */
	if (blue_ld__bpffs_present() == 1)
		blue_ld__reclaim_stale();
	/* refusals first, in an order that names the real cause: our own pins before
	 * "another program" (which blue_xdp would otherwise be), and no bpffs mount yet */
	if ((blue_ld__bpffs_present() == 1 && (ret = check_not_pinned(ifname))) ||
	    (ret = check_no_xdp(ifname, ifindex)))
		return ret;

	skel = blue_xdp__open();
	if (!skel) {
		ret = -errno;
		ld_err("opening the blue_xdp object failed: %s", strerror(errno));
		return ret;
	}
	/* we pin by hand under the netdev's directory; a LIBBPF_PIN_BY_NAME in the object
	 * would otherwise pin (and share) its maps at /sys/fs/bpf/<map> for every netdev */
	bpf_object__for_each_map(map, skel->obj)
		bpf_map__set_pin_path(map, NULL);

	ret = blue_xdp__load(skel);
	if (ret) {
		if (ret == -EPERM || ret == -EACCES)
			ret = blue_ld__err_perm("attaching XDP", BLUE_CAPS_XDP);
		else
			ld_err("%s: loading the blue_xdp program failed: %s (run with -v for the "
			       "verifier log)", ifname, strerror(-ret));
		goto cleanup;
	}

	/*
	 * Mounting bpffs is not undone on a later failure: a bpffs at its standard place is
	 * what every BPF tool expects, and another process may already be pinning into it.
	 */
	ret = blue_ld__bpffs_ensure();
	if (ret)
		goto cleanup;
	ret = make_dirs(ifname);
	if (ret)
		goto cleanup;
	made_dirs = true;
	ret = pin_all(ifname, skel);
	if (ret)
		goto cleanup;

	ret = attach_link(ifname, ifindex, bpf_program__fd(skel->progs.blue_xdp), xdp_flags,
			  mode);
	if (ret)
		goto cleanup;
	blue_ld__prog_id_by_fd(bpf_program__fd(skel->progs.blue_xdp), &id);
	blue_pin_path(dir, sizeof(dir), ifname, NULL);
	ld_dbg("%s: blue_xdp attached in %s mode (prog id %u), pinned at %s",
	       ifname, mode_name(mode), id, dir);

cleanup:
	if (ret && made_dirs)
		blue_ld__pins_remove(ifname);
	/* the pins (the link's among them) hold the kernel objects; our fds can go */
	blue_xdp__destroy(skel);
	return ret;
}
