/* SPDX-License-Identifier: MIT */
/*
 * Address handles (UD): a destination's address vector with its MAC resolved at create
 * time, as rxe resolves it (rxe_av). A UD send WR copies it into its WQE at post
 * (wq.c), so the engine never follows a pointer into the application's objects and an
 * AH destroyed after posting leaves the send intact.
 */
#ifndef BLUE_RUNTIME_AH_H
#define BLUE_RUNTIME_AH_H

#include <stdint.h>
#include <blue/blue.h>

struct blue_ah {
	struct blue_pd *pd;
	struct blue_ah_attr attr;	/* as created, for query/compat */
	uint32_t dip;			/* network order: the IPv4 address of attr.dgid */
	uint8_t dmac[6];		/* resolved at create */
};

#endif /* BLUE_RUNTIME_AH_H */
