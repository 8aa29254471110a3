/* SPDX-License-Identifier: MIT */
/*
 * The loopback HAL's stand-in for the XDP program's steering: parse plain
 * Eth(+one VLAN)/IPv4 or IPv6/UDP:4791/BTH at fixed offsets and look the destination QPN up in a
 * QP-context table with the same rules (owner QPN, accepting state, the P_Key, a socket
 * of the queue it came in on: the loopback HAL has one, queue 0). Checks beyond what
 * steering needs (opcode, lengths, ICRC) are bpf/'s job and are not repeated here.
 */
#ifndef BLUE_LB_STEER_H
#define BLUE_LB_STEER_H

#include <stdint.h>
#include <blue/qp_ctx.h>
#include <blue/stats.h>

/*
 * Returns the blue_stat_reason verdict. On BLUE_STAT_REDIRECT, *@qpn and *@xsk_slot say
 * where the frame goes; whether a socket sits at that slot is the caller's check.
 */
int blue_lb_steer(const struct blue_qp_ctx *tbl, const uint8_t *p, uint32_t len,
		  uint32_t *qpn, uint32_t *xsk_slot);

#endif /* BLUE_LB_STEER_H */
