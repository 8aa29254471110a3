// SPDX-License-Identifier: MIT
/*
 * ECN and CNPs (IBA annex A17.9; runtime/cc_wire.h). A QP with ecn on sends its
 * requests with ECT(0) (blue__cc_tos(), in blue__qp_pkt()); a switch under queueing
 * turns that into CE; the responder's QP answers CE with a RoCEv2 CNP (opcode 0x81,
 * BECN set, to the sending QP: annex A17.9.3), at most one per QP per
 * params.dcqcn.cnp_interval_us (mlx5's min_time_between_cnps), and the sender's
 * algorithm reacts in on_cnp.
 */
#include <errno.h>

#include "runtime/cc_wire.h"
#include "runtime/codec.h"
#include "runtime/device.h"
#include "runtime/probes.h"
#include "runtime/qp.h"

int blue__cc_send_cnp(struct blue_qp *qp, uint32_t psn)
{
	struct blue_engine *eng = &qp->ctx->eng;
	struct blue_pkt p;
	int err;

	/* annex A17.9.3: BECN set (blue_pkt_init), to the QP whose requests were marked;
	 * the PSN is reserved and sent as 0 */
	blue__qp_pkt(qp, &p, BLUE_OP_CNP, 0);
	/*
	 * A CNP is one small frame that the peer needs now: a pass whose budget is spent
	 * still sends it, one frame over (frames permitting).
	 */
	if (!eng->budget)
		eng->budget = 1;
	err = blue__qp_tx(qp, &p);
	if (err) {
		qp->cc.cnp_owed = true;
		qp->cc.cnp_psn = psn;
		return err;
	}
	qp->cc.cnp_owed = false;
	qp->cc.last_cnp_tx_ns = eng->now_ns;
	qp->live->cnp_sent++;
	eng->st.tx_cnp++;
	BLUE_PROBE3(cnp_sent, qp->qpn, qp->live->peer_ip, psn);
	return 0;
}

/* At most one CNP per interval: the first CE of a QP always gets one. */
static bool cnp_due(const struct blue_cc *cc, uint64_t now)
{
	uint64_t gap = (uint64_t)cc->params.dcqcn.cnp_interval_us * 1000u;

	return !cc->last_cnp_tx_ns || now - cc->last_cnp_tx_ns >= gap;
}

void blue__cc_ce_rx(struct blue_qp *qp, const struct blue_pkt *p)
{
	struct blue_cc *cc = &qp->cc;

	qp->live->ecn_ce_rcvd++;
	qp->ctx->eng.st.rx_ce++;
	/* only requests: CE on our own flow's ACKs or READ responses says nothing of the
	 * peer's sending rate (we mark none of them ECT) */
	if (!qp->live->ecn || !(blue_opcode_flags(p->opcode) & BLUE_OPF_REQUEST))
		return;
	if (cc->cnp_owed || !cnp_due(cc, qp->ctx->eng.now_ns))
		return;
	blue__cc_send_cnp(qp, p->psn);
}

void blue__cc_cnp_rx(struct blue_qp *qp)
{
	struct blue_cc *cc = &qp->cc;

	if (cc->ops->on_cnp)
		cc->ops->on_cnp(cc, qp->ctx->eng.now_ns);
}
