// SPDX-License-Identifier: MIT
/*
 * Opening what the loader pinned: bluectl, the runtime and tests find a netdev's maps by
 * its name, and check they have the layout this build was compiled against.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "loader/internal.h"

void blue_pins_close(struct blue_pins *p)
{
	int *fds[] = { &p->prog_fd, &p->qp_ctx_fd, &p->xsks_fd, &p->stats_fd,
		       &p->dev_stats_fd, &p->diag_fd, &p->drops_fd, &p->tune_fd };
	size_t i;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

int blue_ld__prog_id_by_fd(int prog_fd, __u32 *id)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return -errno;
	*id = info.id;
	return 0;
}

int blue_ld__prog_name_by_id(__u32 prog_id, char *name, size_t len)
{
	struct bpf_prog_info info = {};
	__u32 ilen = sizeof(info);
	int fd, ret = 0;

	fd = bpf_prog_get_fd_by_id(prog_id);
	if (fd < 0)
		return -errno;
	if (bpf_obj_get_info_by_fd(fd, &info, &ilen))
		ret = -errno;
	else
		snprintf(name, len, "%s", info.name[0] ? info.name : "(unnamed)");
	close(fd);
	return ret;
}

static int open_pin(const char *ifname, const char *name, int *fd)
{
	char path[256];
	int ret = blue_pin_path(path, sizeof(path), ifname, name);

	if (ret) {
		/* a bad name, or no netns cookie to key the directory by (blue_pin_dir) */
		if (blue_ld__ifname_check(ifname))
			return -EINVAL;	/* said why */
		ld_err("%s: cannot name its pin directory: %s", ifname, strerror(-ret));
		return ret;
	}
	*fd = bpf_obj_get(path);
	if (*fd >= 0)
		return 0;
	ret = -errno;
	if (ret == -EPERM || ret == -EACCES)
		return blue_ld__err_perm("opening blue's pins under " BLUE_PIN_ROOT, "CAP_BPF");
	if (ret != -ENOENT) {
		ld_err("%s: cannot open pin: %s", path, strerror(-ret));
		return ret;
	}
	blue_pin_path(path, sizeof(path), ifname, NULL);
	if (blue_ld__bpffs_present() != 1)
		ld_err("%s: blue is not attached (%s is not a bpffs here; inside 'ip netns exec' the "
		       "host's pins are hidden: use 'nsenter --net=/run/netns/NS' instead)",
		       ifname, BLUE_BPFFS);
	else
		ld_err("%s: blue is not attached (no pins at %s); run 'bluectl attach %s'",
		       ifname, path, ifname);
	return -ENOENT;
}

/* A pin that attaches made by older builds lack: the program is there, so say that. */
static int open_newer_pin(const char *ifname, const char *name, int *fd)
{
	char path[256];

	blue_pin_path(path, sizeof(path), ifname, name);
	*fd = bpf_obj_get(path);
	if (*fd >= 0)
		return 0;
	if (errno != ENOENT)
		return open_pin(ifname, name, fd);
	ld_err("%s: %s is missing: blue was attached by an older build; detach and attach "
	       "again with this build", ifname, path);
	return -EPROTO;
}

struct map_expect {
	const char *name;
	__u32 type, value_size, max_entries, flags;
};

static int check_map(const char *ifname, int fd, const struct map_expect *e)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		ld_err("%s: cannot inspect pinned map %s: %s", ifname, e->name,
		       strerror(errno));
		return -errno;
	}
	if (info.type == e->type && info.value_size == e->value_size &&
	    info.max_entries == e->max_entries && (info.map_flags & e->flags) == e->flags)
		return 0;
	ld_err("%s: pinned map %s has type %u, value size %u, %u entries, flags 0x%x; this build "
	       "expects %u, %u, %u, 0x%x: detach and attach again with this build",
	       ifname, e->name, info.type, info.value_size, info.max_entries, info.map_flags,
	       e->type, e->value_size, e->max_entries, e->flags);
	return -EPROTO;
}

int blue_pins_open(const char *ifname, struct blue_pins *out)
{
	static const struct map_expect qp = {
		BLUE_PIN_QP_CTX, BPF_MAP_TYPE_ARRAY, sizeof(struct blue_qp_ctx), BLUE_MAX_QP,
		BPF_F_MMAPABLE,
	};
	static const struct map_expect xsks = {
		BLUE_PIN_XSKS, BPF_MAP_TYPE_XSKMAP, sizeof(__u32), BLUE_MAX_XSK, 0,
	};
	static const struct map_expect stats = {
		BLUE_PIN_STATS, BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(struct blue_stat),
		BLUE_STAT__MAX, 0,
	};
	static const struct map_expect dev = {
		BLUE_PIN_DEV_STATS, BPF_MAP_TYPE_ARRAY, sizeof(struct blue_dev_stats),
		BLUE_MAX_QUEUES, BPF_F_MMAPABLE,
	};
	static const struct map_expect diag = {
		BLUE_PIN_DIAG, BPF_MAP_TYPE_ARRAY, sizeof(struct blue_diag_cfg), 1, BPF_F_MMAPABLE,
	};
	static const struct map_expect drops = {
		BLUE_PIN_DROPS, BPF_MAP_TYPE_RINGBUF, 0, BLUE_DROP_RING_BYTES, 0,
	};
	static const struct map_expect tune = {
		BLUE_PIN_TUNE, BPF_MAP_TYPE_ARRAY, sizeof(struct blue_tune_entry),
		BLUE_TUNE_ENTRIES, BPF_F_MMAPABLE,
	};
	int ret;

	out->prog_fd = out->qp_ctx_fd = out->xsks_fd = out->stats_fd = -1;
	out->dev_stats_fd = out->diag_fd = out->drops_fd = out->tune_fd = -1;
	blue_ld__hook_libbpf();
	if ((ret = blue_ld__ifname_check(ifname)) ||
	    (ret = open_pin(ifname, BLUE_PIN_PROG, &out->prog_fd)) ||
	    (ret = open_pin(ifname, BLUE_PIN_QP_CTX, &out->qp_ctx_fd)) ||
	    (ret = open_pin(ifname, BLUE_PIN_XSKS, &out->xsks_fd)) ||
	    (ret = open_pin(ifname, BLUE_PIN_STATS, &out->stats_fd)) ||
	    (ret = open_newer_pin(ifname, BLUE_PIN_DEV_STATS, &out->dev_stats_fd)) ||
	    (ret = open_newer_pin(ifname, BLUE_PIN_DIAG, &out->diag_fd)) ||
	    (ret = open_newer_pin(ifname, BLUE_PIN_DROPS, &out->drops_fd)) ||
	    (ret = open_newer_pin(ifname, BLUE_PIN_TUNE, &out->tune_fd)) ||
	    (ret = check_map(ifname, out->qp_ctx_fd, &qp)) ||
	    (ret = check_map(ifname, out->xsks_fd, &xsks)) ||
	    (ret = check_map(ifname, out->stats_fd, &stats)) ||
	    (ret = check_map(ifname, out->dev_stats_fd, &dev)) ||
	    (ret = check_map(ifname, out->diag_fd, &diag)) ||
	    (ret = check_map(ifname, out->drops_fd, &drops)) ||
	    (ret = check_map(ifname, out->tune_fd, &tune)))
		blue_pins_close(out);
	return ret;
}

/* An mmapable array's values are laid out back to back, rounded up to whole pages. */
static size_t map_size(size_t value_size, size_t entries)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t sz = value_size * entries;

	return (sz + page - 1) / page * page;
}

static void *map_mmap(int fd, size_t len, bool writable)
{
	int prot = PROT_READ | (writable ? PROT_WRITE : 0);
	void *p = mmap(NULL, len, prot, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

struct blue_qp_ctx *blue_pins_mmap_qp_ctx(int qp_ctx_fd, bool writable)
{
	return map_mmap(qp_ctx_fd, map_size(sizeof(struct blue_qp_ctx), BLUE_MAX_QP), writable);
}

void blue_pins_munmap_qp_ctx(struct blue_qp_ctx *table)
{
	if (table)
		munmap(table, map_size(sizeof(struct blue_qp_ctx), BLUE_MAX_QP));
}

struct blue_dev_stats *blue_pins_mmap_dev_stats(int dev_stats_fd, bool writable)
{
	return map_mmap(dev_stats_fd, map_size(sizeof(struct blue_dev_stats), BLUE_MAX_QUEUES),
			writable);
}

void blue_pins_munmap_dev_stats(struct blue_dev_stats *ds)
{
	if (ds)
		munmap(ds, map_size(sizeof(struct blue_dev_stats), BLUE_MAX_QUEUES));
}

struct blue_diag_cfg *blue_pins_mmap_diag(int diag_fd, bool writable)
{
	return map_mmap(diag_fd, map_size(sizeof(struct blue_diag_cfg), 1), writable);
}

void blue_pins_munmap_diag(struct blue_diag_cfg *cfg)
{
	if (cfg)
		munmap(cfg, map_size(sizeof(struct blue_diag_cfg), 1));
}

struct blue_tune_entry *blue_pins_mmap_tune(int tune_fd)
{
	return map_mmap(tune_fd, map_size(sizeof(struct blue_tune_entry), BLUE_TUNE_ENTRIES),
			true);
}

void blue_pins_munmap_tune(struct blue_tune_entry *map)
{
	if (map)
		munmap(map, map_size(sizeof(struct blue_tune_entry), BLUE_TUNE_ENTRIES));
}

int blue_pins_read_stats(int stats_fd, struct blue_stat out[BLUE_STAT__MAX])
{
	int ncpu = libbpf_num_possible_cpus();
	struct blue_stat *per_cpu;
	__u32 key;
	int c, ret = 0;

	if (ncpu < 0)
		return ncpu;
	per_cpu = calloc((size_t)ncpu, sizeof(*per_cpu));
	if (!per_cpu)
		return -ENOMEM;
	for (key = 0; key < BLUE_STAT__MAX; key++) {
		out[key].pkts = out[key].bytes = 0;
		if (bpf_map_lookup_elem(stats_fd, &key, per_cpu)) {
			ret = -errno;
			break;
		}
		for (c = 0; c < ncpu; c++) {
			out[key].pkts += per_cpu[c].pkts;
			out[key].bytes += per_cpu[c].bytes;
		}
	}
	free(per_cpu);
	return ret;
}
