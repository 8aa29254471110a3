/* SPDX-License-Identifier: MIT */
/*
 * The shared GSI of blue-manager: QP1 of one netdev queue, served to many processes.
 *
 * On a device the kernel's ib_mad owns QP1 and hands each CM MAD to the ib_cm agent of
 * the right connection. Over blue each process runs its own IB CM (compat/rdmacm/agent.c
 * over runtime/ibcm.c) on a QP it believes is QP1. In daemon mode that QP is a member:
 * an ordinary UD QP of the daemon's context with a slot of its own, which says 1 on the
 * wire (DETH source QP) and in its completions (blue__qp_wire_qpn), and takes no frame
 * sent to its own QPN. The hub holds slot 1 (XDP steers dqpn 1 to the daemon's socket)
 * while it has members, and hands each MAD that arrives for QP1 to one member:
 *   - REQ and SIDR_REQ: the member listening on the MAD's service ID; none listens, the
 *     first member, whose IB CM answers REJ 8 or SIDR status 1 itself;
 *   - every other CM message: by the comm ID it names as the receiver's (REP, RTU, REJ,
 *     MRA, DREQ, DREP, LAP, APR: the remote comm ID; SIDR_REP: the request ID). A member's
 *     comm IDs start with its prefix byte (blue_ibcm_cfg.id_prefix), given at creation;
 *   - anything else (a MAD the codec, cm_mad.h, refuses; a prefix nobody has): dropped
 *     and counted (rx_no_qp).
 * A member listens with BLUE_MGR_GSI_LISTEN; a service ID has one listener on a device,
 * as rdma_cm's port spaces have one owner per port.
 */
#ifndef BLUE_RUNTIME_GSI_HUB_H
#define BLUE_RUNTIME_GSI_HUB_H

#include <stdint.h>

#define BLUE_HIDDEN_GSI __attribute__((visibility("hidden")))
#define BLUE_GSI_MAX_MEMBERS	255	/* prefixes 1..255 */
#define BLUE_GSI_MAX_LISTEN	256	/* service IDs listened on, all members together */

struct blue_context;
struct blue_pd;
struct blue_qp;
struct blue_qp_init_attr;
struct blue_pkt;

struct blue_gsi_listen {
	uint64_t service_id;
	struct blue_qp *qp;
};

struct blue_gsi_hub {
	struct blue_qp *member[BLUE_GSI_MAX_MEMBERS + 1];	/* by prefix; [0] unused */
	unsigned int nmembers;
	struct blue_gsi_listen listen[BLUE_GSI_MAX_LISTEN];
	unsigned int nlisten;
};

/*
 * blue__gsi_member_create() - a member of @pd's context's shared GSI: a UD QP as
 * blue_create_qp() makes it, marked as QP1's, with its prefix in qp->gsi_prefix. The
 * first member claims slot 1. Return: the QP, or NULL with errno (EADDRINUSE: a
 * library-mode process holds QP1; EMFILE: 255 members already).
 */
struct blue_qp *blue__gsi_member_create(struct blue_pd *pd, struct blue_qp_init_attr *attr)
	BLUE_HIDDEN_GSI;

/* blue__gsi_member_gone() - @qp is being destroyed: its listens go; the last frees slot 1. */
void blue__gsi_member_gone(struct blue_qp *qp) BLUE_HIDDEN_GSI;

/*
 * blue__gsi_listen() - @qp, a member, takes (@on) or gives back REQs for @service_id.
 * Return: 0, -EADDRINUSE (another member listens on it), -ENOSPC, -EINVAL (not a member).
 */
int blue__gsi_listen(struct blue_qp *qp, uint64_t service_id, int on) BLUE_HIDDEN_GSI;

/* blue__gsi_pick() - the member a frame for QP1 goes to, or NULL (drop it). */
struct blue_qp *blue__gsi_pick(const struct blue_gsi_hub *hub, const struct blue_pkt *p)
	BLUE_HIDDEN_GSI;

#endif /* BLUE_RUNTIME_GSI_HUB_H */
