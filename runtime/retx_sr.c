// SPDX-License-Identifier: MIT
/*
 * The selective retransmission policy's table (runtime/retx.h): the requester's side
 * in req_sr.c, the responder's reorder buffer in resp_sr.c. Only between two libblue
 * peers that negotiated BLUE_CM_CAP_SELECTIVE_RETX (blue_qp_set_retx() checks).
 */
#include "runtime/qp.h"

/* Nothing known, wanted or held: the bitmaps start at una_psn. */
static void sr_init(struct blue_qp *qp)
{
	blue__sr_req_reset(qp);
	blue__sr_resp_drop(qp);
}

/* Leave nothing behind: the books forgotten, the held requests dropped, the buffer freed. */
static void sr_fini(struct blue_qp *qp)
{
	blue__sr_req_reset(qp);
	blue__sr_resp_fini(qp);
}

static bool sr_resp_holds(const struct blue_qp *qp)
{
	return qp->retx.resp.nheld != 0;
}

const struct blue_retx_ops blue__retx_sr_ops = {
	.name = "selective",
	.init = sr_init,
	.fini = sr_fini,
	.resp_holds = sr_resp_holds,
	.comp_rx = blue__sr_comp_rx,
	.comp_timeout = blue__sr_timeout,
	.req_resend = blue__sr_req_resend,
	.resp_ahead = blue__sr_resp_ahead,
	.resp_duplicate = blue__sr_resp_duplicate,
	.resp_after_rx = blue__sr_resp_drain,
	.resp_tx_resume = blue__sr_resp_resume,
	.resp_dup_read_supersedes = false,
};
