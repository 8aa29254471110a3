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

#endif /* BLUE_PINS_H */
