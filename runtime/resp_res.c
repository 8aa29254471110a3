// SPDX-License-Identifier: MIT
/*
 * Responder resources (IBA 9.4.3 "responder resources", rxe's qp->resp.resources): a
 * ring of max_dest_rd_atomic slots, one per READ or atomic that executed. A duplicate
 * READ is replayed only from its slot, inside the bytes that READ covered, and a
 * duplicate atomic is answered from its slot, never executed again. A forged
 * "duplicate" for a PSN that never ran a READ therefore finds nothing, which bounds
 * what it can make the responder send to what a genuine requester's resend would.
 */
#include <string.h>

#include "runtime/qp.h"

/* Slots in use: max_dest_rd_atomic, which modify_qp keeps within BLUE_MAX_RD_ATOMIC. */
static uint32_t res_slots(const struct blue_qp *qp)
{
	uint32_t n = qp->max_dest_rd_atomic;

	return n ? (n < BLUE_MAX_RD_ATOMIC ? n : BLUE_MAX_RD_ATOMIC) : 1;
}

struct blue_resp_res *blue__resp_res_new(struct blue_qp *qp)
{
	struct blue_resp *r = &qp->resp;
	struct blue_resp_res *res = &r->res[r->res_head % res_slots(qp)];

	r->res_head = (r->res_head + 1) % res_slots(qp);
	memset(res, 0, sizeof(*res));
	return res;
}

const struct blue_resp_res *blue__resp_res_find(const struct blue_qp *qp, uint32_t psn,
						enum blue_res_type type)
{
	const struct blue_resp_res *res;
	uint32_t i;

	for (i = 0; i < res_slots(qp); i++) {
		res = &qp->resp.res[i];
		if (res->type == type && blue_psn_diff(psn, res->first_psn) >= 0 &&
		    blue_psn_diff(psn, res->last_psn) <= 0)
			return res;
	}
	return NULL;
}

uint32_t blue__resp_res_busy(const struct blue_qp *qp)
{
	const struct blue_resp *r = &qp->resp;
	const struct blue_resp_out *o;
	uint32_t i, n = 0;

	for (i = r->out_cons; i != r->out_prod; i++) {
		o = &r->out[i & (BLUE_RESP_OUTQ - 1)];
		if ((o->kind == BLUE_OUT_READ || o->kind == BLUE_OUT_ATOMIC) && !o->replay)
			n++;
	}
	return n;
}
