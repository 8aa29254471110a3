/* SPDX-License-Identifier: MIT */
/*
 * The flow table: the steering fields (qpn, xsk_slot) of the QP-context array. Shared by
 * both HALs, so the mmapped BPF map and the loopback's heap table follow one set of rules.
 */
#ifndef BLUE_HAL_FLOW_H
#define BLUE_HAL_FLOW_H

#include <stdint.h>
#include <blue/qp_ctx.h>

/* Steer @qpn to socket @xsk_slot. 0, -EINVAL (QPN 0 or > 24 bits; 1 is the GSI), -EBUSY. */
int blue_flow_bind(struct blue_qp_ctx *tbl, uint32_t qpn, uint32_t xsk_slot);

/* Stop steering @qpn. 0, or -ENOENT when @qpn does not own its slot. */
int blue_flow_unbind(struct blue_qp_ctx *tbl, uint32_t qpn);

/* Unbind every QPN steered to @xsk_slot (its socket is closing). Returns how many. */
unsigned int blue_flow_unbind_slot(struct blue_qp_ctx *tbl, uint32_t xsk_slot);

#endif /* BLUE_HAL_FLOW_H */
