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
	uint8_t dmac[6];		/* resolved at create */
};

/*
 * blue__av_resolve() - check an address vector and find the MAC its frames go to: port
 * 1, sgid_index names a GID of the table, source and destination GIDs of one IP version
 * (IPv4-mapped both, or IPv6 both), the destination's MAC (blue__resolve_neigh). Shared
 * by create_ah and a connected QP's INIT->RTR. @who prefixes the message.
 * Return: 0, EINVAL, or ENOENT (no MAC), after a message.
 */
int blue__av_resolve(struct blue_context *ctx, const struct blue_ah_attr *attr,
		     const char *who, uint8_t dmac[6]) __attribute__((visibility("hidden")));

#endif /* BLUE_RUNTIME_AH_H */
