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

#endif /* BLUE_PINS_H */
