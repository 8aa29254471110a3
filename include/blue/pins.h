/* SPDX-License-Identifier: MIT */
/* Where the loader pins blue's BPF objects, so other processes find them by netdev. */
#ifndef BLUE_PINS_H
#define BLUE_PINS_H

#define BLUE_BPFFS		"/sys/fs/bpf"
#define BLUE_PIN_ROOT		BLUE_BPFFS "/blue"
/* Per netdev: BLUE_PIN_ROOT "/<ifname>/" + one of these. */
#define BLUE_PIN_PROG		"prog"
#define BLUE_PIN_QP_CTX		"qp_ctx"
#define BLUE_PIN_XSKS		"xsks"
#define BLUE_PIN_STATS		"stats"
#define BLUE_PIN_DEV_STATS	"dev_stats"	/* include/blue/dev_stats.h */
#define BLUE_PIN_DIAG		"diag"		/* include/blue/diag.h */
#define BLUE_PIN_DROPS		"drop_events"	/* ring buffer of struct blue_drop_event */

#endif /* BLUE_PINS_H */
