/* SPDX-License-Identifier: MIT */
/*
 * The loopback HAL's stand-in for the XDP program's steering: parse plain
 * Eth(+one VLAN)/IPv4 or IPv6/UDP:4791/BTH at fixed offsets and look the destination QPN up in a
 * QP-context table with the same rules (owner QPN, accepting state, the P_Key, a socket
 * of the queue it came in on: the loopback HAL has one, queue 0); DestQP 0xFFFFFF is
 * looked up by its destination group in the end's group table instead, as the XDP
 * program looks it up in the multicast map. Checks beyond what
 * steering needs (opcode, lengths, ICRC) are bpf/'s job and are not repeated here.
 */
#ifndef BLUE_LB_STEER_H
#define BLUE_LB_STEER_H

#include <stdint.h>
#include <stdbool.h>
#include <blue/mcast.h>
#include <blue/qp_ctx.h>
#include <blue/stats.h>

/* One group of a loopback end (the multicast map's entries of its one queue). */
struct blue_lb_group {
	uint8_t gid[16];
	uint32_t xsk_slot;
	bool used;
};

/*
 * Returns the blue_stat_reason verdict. On BLUE_STAT_REDIRECT, *@qpn and *@xsk_slot say
 * where the frame goes (*@qpn is 0 for a multicast frame: it is for no one QP); whether
 * a socket sits at that slot is the caller's check. @groups has BLUE_MAX_MCAST_GRP
 * entries.
 */
int blue_lb_steer(const struct blue_qp_ctx *tbl, const struct blue_lb_group *groups,
		  const uint8_t *p, uint32_t len, uint32_t *qpn, uint32_t *xsk_slot);

#endif /* BLUE_LB_STEER_H */
