/* SPDX-License-Identifier: MIT */
/*
 * The loader: puts blue's XDP program on a netdev and takes it off again, and opens the
 * objects it pinned so other processes (bluectl, the runtime, tests) find them by ifname.
 *
 * Pins live in blue_pin_dir(ifname), BLUE_PIN_ROOT "/netns-<cookie>/<ifname>/"
 * (include/blue/pins.h): prog, link, qp_ctx, xsks, stats, dev_stats, diag, drop_events,
 * tune.
 * They are keyed by network namespace as well as name, since /sys/fs/bpf is shared by
 * every namespace of a mount namespace, so two containers' eth0s each have their own.
 * The pinned XDP link is the record of ownership: detach takes off what it attached and
 * nothing else. An attach first reclaims the pins of netdevs that are gone (their link
 * reports no interface), with a notice naming each directory.
 *
 * Every function returns 0 or a negative errno and, on error, logs one line a person
 * can act on (what failed, on which object, what to try) through the logger below. On
 * error nothing is changed.
 */
#ifndef BLUE_LOADER_H
#define BLUE_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <blue/dev_stats.h>
#include <blue/diag.h>
#include <blue/pins.h>
#include <blue/qp_ctx.h>
#include <blue/stats.h>
#include <blue/tune.h>

/* --- logging --------------------------------------------------------------------- */

enum blue_loader_log_level {
	BLUE_LOADER_LOG_ERROR,
	BLUE_LOADER_LOG_WARN,
	BLUE_LOADER_LOG_INFO,
	BLUE_LOADER_LOG_DEBUG,		/* includes libbpf's own messages (verifier log, ...) */
};

typedef void (*blue_loader_log_fn)(enum blue_loader_log_level level, const char *msg);

/**
 * blue_loader_set_log_fn() - send log lines to @fn instead of stderr.
 * @fn: receives one line without a trailing newline; NULL restores the default, which
 *	prints "blue: <msg>" on stderr.
 */
void blue_loader_set_log_fn(blue_loader_log_fn fn);

/**
 * blue_loader_set_log_level() - drop messages above @level. Default BLUE_LOADER_LOG_INFO.
 *
 * libbpf's messages go through the same logger at BLUE_LOADER_LOG_DEBUG, so they stay quiet
 * unless @level is BLUE_LOADER_LOG_DEBUG (bluectl -v).
 */
void blue_loader_set_log_level(enum blue_loader_log_level level);

/**
 * blue_loader_last_error() - the last error line this thread logged, or "" if none.
 * For callers that want the message without installing a log function.
 */
const char *blue_loader_last_error(void);

/* --- attach / detach ------------------------------------------------------------- */

enum blue_xdp_mode {
	BLUE_XDP_NATIVE,	/* XDP_FLAGS_DRV_MODE: in the driver, before an skb exists */
	BLUE_XDP_GENERIC,	/* XDP_FLAGS_SKB_MODE: after the skb, works on any netdev */
};

/* No flags are defined yet; pass 0. Unknown flags fail with -EINVAL. */
#define BLUE_ATTACH_F_ALL	0u

/**
 * blue_loader_attach() - load blue_xdp, pin it and its maps, attach it to @ifname.
 * @ifname: the network interface, in the caller's network namespace.
 * @mode: native or generic XDP.
 * @flags: 0.
 *
 * Mounts bpffs at /sys/fs/bpf first if it is not one there (as inside `ip netns exec`,
 * whose private /sys hides the host's bpffs; pins made there live only as long as that
 * mount namespace).
 *
 * Return: 0; -ENODEV no such interface; -EEXIST blue already attached (pins exist in
 * this namespace's directory for @ifname);
 * -EBUSY another XDP program is attached; -EPERM missing CAP_NET_ADMIN/CAP_BPF;
 * -EOPNOTSUPP the driver has no native XDP; other -errno from the kernel. On error the
 * interface and /sys/fs/bpf are left as they were.
 */
int blue_loader_attach(const char *ifname, enum blue_xdp_mode mode, unsigned int flags);

/**
 * blue_loader_detach() - take blue off @ifname and remove its pins.
 *
 * The XDP program is removed only if the attached one is the pinned one. If the
 * interface is gone (its namespace was deleted) or carries another program, the pins
 * are still removed and a warning says so.
 *
 * Return: 0; -ENOENT blue has no pins for @ifname; -EPERM missing privileges;
 * other -errno.
 */
int blue_loader_detach(const char *ifname);

/* --- pinned objects ---------------------------------------------------------------- */

/* File descriptors of one netdev's pinned objects; -1 when not open. */
struct blue_pins {
	int prog_fd;
	int qp_ctx_fd;
	int xsks_fd;
	int stats_fd;
	int dev_stats_fd;	/* include/blue/dev_stats.h, one entry per queue, mmapable */
	int diag_fd;		/* include/blue/diag.h, one entry, mmapable */
	int drops_fd;		/* ring buffer of struct blue_drop_event */
	int tune_fd;		/* include/blue/tune.h, BLUE_TUNE_ENTRIES entries, mmapable */
};

/**
 * blue_pin_path() - write blue_pin_dir(@ifname) "[/<name>]" into @buf.
 * @name: one of the BLUE_PIN_* names, or NULL for the directory.
 *
 * Return: 0, or -ENAMETOOLONG / -EINVAL for an unusable ifname, or blue_pin_dir()'s
 * error.
 */
int blue_pin_path(char *buf, size_t len, const char *ifname, const char *name);

/**
 * blue_pins_open() - open every pinned object of @ifname.
 *
 * Checks that each map has the type and layout this build expects (value size of
 * struct blue_qp_ctx, blue_stat, blue_dev_stats and blue_diag_cfg, entry counts), so a
 * tool never reads a table left by an incompatible version. On error @out holds only -1.
 *
 * Return: 0; -ENOENT blue is not attached to @ifname; -EPERM; -EPROTO layout mismatch.
 */
int blue_pins_open(const char *ifname, struct blue_pins *out);

/** blue_pins_close() - close the fds that are open and set them to -1. */
void blue_pins_close(struct blue_pins *p);

/**
 * blue_pins_mmap_qp_ctx() - map the qp_ctx array (BLUE_MAX_QP entries) into memory.
 * @qp_ctx_fd: from blue_pins_open().
 * @writable: false maps it read-only (tools), true read-write (the runtime).
 *
 * Return: the table, or NULL with errno set. Release with blue_pins_munmap_qp_ctx().
 */
struct blue_qp_ctx *blue_pins_mmap_qp_ctx(int qp_ctx_fd, bool writable);
void blue_pins_munmap_qp_ctx(struct blue_qp_ctx *table);

/**
 * blue_pins_mmap_dev_stats() - map the BLUE_MAX_QUEUES dev_stats entries (see blue_pins_mmap_qp_ctx).
 * blue_pins_mmap_diag() - the same for the diag entry; tools write its flags through it.
 */
struct blue_dev_stats *blue_pins_mmap_dev_stats(int dev_stats_fd, bool writable);
void blue_pins_munmap_dev_stats(struct blue_dev_stats *ds);
struct blue_diag_cfg *blue_pins_mmap_diag(int diag_fd, bool writable);
void blue_pins_munmap_diag(struct blue_diag_cfg *cfg);
/* blue_pins_mmap_tune() - the BLUE_TUNE_ENTRIES tune entries, writable (bluectl set). */
struct blue_tune_entry *blue_pins_mmap_tune(int tune_fd);
void blue_pins_munmap_tune(struct blue_tune_entry *map);

/**
 * blue_pins_read_stats() - sum the per-CPU stats map into @out[BLUE_STAT__MAX].
 * Return: 0 or -errno.
 */
int blue_pins_read_stats(int stats_fd, struct blue_stat out[BLUE_STAT__MAX]);

#endif /* BLUE_LOADER_H */
