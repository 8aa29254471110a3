/* SPDX-License-Identifier: MIT */
/*
 * Where the loader pins blue's BPF objects, so other processes find them by netdev.
 *
 * bpffs is shared by every network namespace of a mount namespace (and containers often
 * share the host's), and containers all have an eth0, so a netdev's pins are keyed by
 * its network namespace as well as its name:
 *	BLUE_PIN_ROOT "/" BLUE_PIN_NS_PREFIX "<netns cookie>/<ifname>/" + one of the names
 * The netns cookie (SO_NETNS_COOKIE) is unique for the life of the system and never
 * reused, unlike the nsfs inode number, which the kernel recycles.
 */
#ifndef BLUE_PINS_H
#define BLUE_PINS_H

#include <stddef.h>
#include <blue/qp_ctx.h>

#define BLUE_BPFFS		"/sys/fs/bpf"
#define BLUE_PIN_ROOT		BLUE_BPFFS "/blue"
#define BLUE_PIN_NS_PREFIX	"netns-"
/* Per netdev: blue_pin_dir() "/" + one of these. */
#define BLUE_PIN_PROG		"prog"
#define BLUE_PIN_LINK		"link"		/* the bpf_link that attaches prog */
#define BLUE_PIN_QP_CTX		"qp_ctx"
#define BLUE_PIN_XSKS		"xsks"
#define BLUE_PIN_STATS		"stats"
#define BLUE_PIN_DEV_STATS	"dev_stats"	/* include/blue/dev_stats.h */
#define BLUE_PIN_DIAG		"diag"		/* include/blue/diag.h */
#define BLUE_PIN_DROPS		"drop_events"	/* ring buffer of struct blue_drop_event */
#define BLUE_PIN_TUNE		"tune"		/* include/blue/tune.h */
#define BLUE_PIN_MCAST		"mcast"		/* include/blue/mcast.h */

/**
 * blue_pin_dir() - the pin directory of @ifname in the caller's network namespace.
 * @ifname: the netdev, or NULL for the namespace's directory (which holds one directory
 *	per attached netdev).
 *
 * The one place that computes it: the loader, libblue, bluectl and compat all call it.
 * Return: 0, -ENAMETOOLONG if @len is too small, or -errno when the namespace's cookie
 * cannot be read (kernels before 5.14 have no SO_NETNS_COOKIE).
 */
int blue_pin_dir(char *buf, size_t len, const char *ifname);

/*
 * Owner marks: whoever owns a QP slot or serves a netdev queue holds a read lock (an
 * open-file-description lock, F_OFD_SETLK) on one byte of the netdev's pin directory,
 * opened read-only. The kernel drops it when the owner's file goes, on close or death,
 * whatever PID namespace the owner runs in, so "is the mark held" tells whether the
 * owner lives where its PID (owner_pid) cannot: another namespace numbers it
 * differently, and a dead owner's PID may be somebody else's by now.
 */
#define BLUE_PIN_MARK_SLOT(slot)	((unsigned int)(slot))
#define BLUE_PIN_MARK_QUEUE(q)		(BLUE_MAX_QP + (unsigned int)(q))

/* blue_pin_mark_take()/_drop() - hold or release @mark through @dir_fd. Return 0/-errno. */
int blue_pin_mark_take(int dir_fd, unsigned int mark);
void blue_pin_mark_drop(int dir_fd, unsigned int mark);

/*
 * blue_pin_mark_held() - does anybody hold @mark? Asked through @probe_fd, which must be
 * a file description that holds no marks itself (it never conflicts with its own).
 * Return: 1 held, 0 not, -errno when it cannot be told.
 */
int blue_pin_mark_held(int probe_fd, unsigned int mark);

#endif /* BLUE_PINS_H */
