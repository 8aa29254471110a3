// SPDX-License-Identifier: MIT
/* Flow-table updates on the QP-context array (see flow.h). */
#include <errno.h>
#include <blue/wire.h>
#include "afxdp_hal/flow.h"

/*
 * The XDP program may read a slot on another CPU while we write it. It trusts xsk_slot
 * only after it has seen its own QPN in qpn, so: bind writes xsk_slot first and
 * publishes qpn last; unbind withdraws qpn first. Release stores order the two.
 */
int blue_flow_bind(struct blue_qp_ctx *tbl, uint32_t qpn, uint32_t xsk_slot)
{
	struct blue_qp_ctx *c;
	uint32_t owner;

	/* QP0 (the SMI, IBA 3.5.2) is never steered: RoCE has no subnet manager. QP1, the
	 * GSI, is: the CM agent of the process that owns it (runtime/qp.c gsi_claim). */
	if (qpn == 0 || qpn > BLUE_QPN_MASK || xsk_slot >= BLUE_MAX_XSK)
		return -EINVAL;
	c = &tbl[blue_qpn_slot(qpn)];
	owner = __atomic_load_n(&c->qpn, __ATOMIC_ACQUIRE);
	if (owner && owner != qpn)
		return -EBUSY;
	__atomic_store_n(&c->xsk_slot, xsk_slot, __ATOMIC_RELEASE);
	__atomic_store_n(&c->qpn, qpn, __ATOMIC_RELEASE);
	return 0;
}

int blue_flow_unbind(struct blue_qp_ctx *tbl, uint32_t qpn)
{
	struct blue_qp_ctx *c;

	if (qpn == 0 || qpn > BLUE_QPN_MASK)
		return -ENOENT;
	c = &tbl[blue_qpn_slot(qpn)];
	if (__atomic_load_n(&c->qpn, __ATOMIC_ACQUIRE) != qpn)
		return -ENOENT;
	/* a free slot has no owner, so the next claimer's slot never looks abandoned */
	__atomic_store_n(&c->owner_pid, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&c->qpn, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&c->xsk_slot, 0, __ATOMIC_RELEASE);
	return 0;
}

unsigned int blue_flow_unbind_slot(struct blue_qp_ctx *tbl, uint32_t xsk_slot)
{
	unsigned int i, n = 0;

	for (i = 0; i < BLUE_MAX_QP; i++) {
		uint32_t q = __atomic_load_n(&tbl[i].qpn, __ATOMIC_ACQUIRE);

		if (q && tbl[i].xsk_slot == xsk_slot && blue_flow_unbind(tbl, q) == 0)
			n++;
	}
	return n;
}
