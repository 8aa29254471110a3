/* SPDX-License-Identifier: MIT */
/* Helpers shared by the loader's files; not part of its API. */
#ifndef BLUE_LOADER_INTERNAL_H
#define BLUE_LOADER_INTERNAL_H

#include "loader/loader.h"

/* The pins in the order they are made; removed in reverse. */
#define BLUE_LD_NPINS	10
extern const char *const blue_ld__pin_names[BLUE_LD_NPINS];

/* Log one line (no trailing newline needed). Errors are also kept for
 * blue_loader_last_error(). */
void blue_ld__log(enum blue_loader_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define ld_err(...)	blue_ld__log(BLUE_LOADER_LOG_ERROR, __VA_ARGS__)
#define ld_warn(...)	blue_ld__log(BLUE_LOADER_LOG_WARN, __VA_ARGS__)
#define ld_info(...)	blue_ld__log(BLUE_LOADER_LOG_INFO, __VA_ARGS__)
#define ld_dbg(...)	blue_ld__log(BLUE_LOADER_LOG_DEBUG, __VA_ARGS__)

/* Route libbpf's messages into blue_ld__log at BLUE_LOADER_LOG_DEBUG (idempotent). */
void blue_ld__hook_libbpf(void);

/*
 * Log "permission denied: <what> needs <caps> (run as root)" and return -EPERM: the
 * one message for EPERM/EACCES, naming what to do about it.
 */
int blue_ld__err_perm(const char *what, const char *caps);

#define BLUE_CAPS_XDP	"CAP_NET_ADMIN and CAP_BPF"

/*
 * 0 if the effective set holds CAP_NET_ADMIN and CAP_BPF (or CAP_SYS_ADMIN, which
 * kernels before 5.8 required instead), else logs the permission message and returns
 * -EPERM. Checked up front so an unprivileged attempt changes nothing.
 */
int blue_ld__caps_check(const char *what);

/* 1 if BLUE_BPFFS is a bpffs, 0 if not, -errno if it cannot be inspected. */
int blue_ld__bpffs_present(void);

/* Make BLUE_BPFFS a bpffs, mounting one if needed (needs CAP_SYS_ADMIN). */
int blue_ld__bpffs_ensure(void);

/* Check @ifname is usable as a name (non-empty, < IFNAMSIZ, no '/'); logs. */
int blue_ld__ifname_check(const char *ifname);

/*
 * Remove every pin of @ifname that exists, its directory, and the namespace's directory
 * and BLUE_PIN_ROOT if they are empty afterwards. Missing pieces are not errors.
 * Return 0 or the first -errno. _dir: the same for the netdev directory @dir, without
 * the pruning, which _prune does for the directories above @dir.
 */
int blue_ld__pins_remove(const char *ifname);
int blue_ld__pins_remove_dir(const char *dir);
void blue_ld__pins_prune(const char *dir);

/*
 * Reclaim the pins of netdevs that are gone, in any namespace: a netdev directory
 * under BLUE_PIN_ROOT/BLUE_PIN_NS_PREFIX* whose pinned XDP link reports no interface
 * (the kernel detached it when the netdev, or its namespace, went away). Anything else,
 * a live link or a layout it does not recognise, is left alone. Logs one notice per
 * directory reclaimed. Return: how many.
 */
int blue_ld__reclaim_stale(void);

/* Id and name of a loaded program; -errno if @prog_id is gone. */
int blue_ld__prog_name_by_id(__u32 prog_id, char *name, size_t len);
int blue_ld__prog_id_by_fd(int prog_fd, __u32 *id);

#endif /* BLUE_LOADER_INTERNAL_H */
