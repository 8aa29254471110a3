// SPDX-License-Identifier: MIT
/*
 * The UD requester (IBA 9.8.3 / 10.2.5): a send WQE is one packet, SEND Only or SEND
 * Only with Immediate, with a DETH {Q_Key, source QPN}, addressed from the address
 * vector its WR copied out of the AH. Nothing acknowledges it, so it completes as soon
 * as it has been queued for the wire; PSNs only count up (24 bits) for the receiver's
 * information.
 *
 * Steps, as named functions: ud_check (keys, size), ud_build, then the send and the
 * completion. Written from the spec; rxe_req.c was read for the too-long case.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "runtime/cc_wire.h"
#include "runtime/log.h"
#include "runtime/probes.h"
#include "runtime/progress.h"
#include "runtime/qp.h"

enum ud_step {
	UD_SEND,	/* build and queue the packet */
	UD_SKIP,	/* longer than the MTU: completes, nothing is sent */
	UD_ERROR,	/* a local error: the WQE fails, the QP goes to ERROR */
};

/*
 * IBA 10.2.5 (the controlled Q_Key rule): a WR Q_Key with its high bit set means the
 * QP's own, so that an application cannot send with a privileged Q_Key it was not given.
 */
static uint32_t ud_qkey(const struct blue_qp *qp, const struct blue_send_wqe *w)
{
	return (w->ud.qkey & 0x80000000u) ? qp->live->qkey : w->ud.qkey;
}

static enum ud_step ud_check(struct blue_qp *qp, const struct blue_send_wqe *w)
{
	if (w->length > blue__qp_mtu(qp)) {
		/*
		 * IBA C10-93.1.1: a UD message longer than the port's MTU emits no packet
		 * and is not an error. rxe completes it successfully ("fake a successful UD
		 * send"), and so do we; the engine counts it, which rxe does not.
		 */
		qp->ctx->eng.st.tx_ud_too_long++;
		blue__logf("QP 0x%x: UD send wr_id %llu of %u bytes exceeds the MTU %u: not "
			   "sent (IBA C10-93.1.1), completed as rxe does", qp->qpn,
			   (unsigned long long)w->wr_id, w->length, blue__qp_mtu(qp));
		return UD_SKIP;
	}
	if (!blue__req_keys_ok(qp, w))
		return UD_ERROR;
	return UD_SEND;
}

/* The packet of @w. Return: 0, or -EACCES when its memory went away since the check. */
static int ud_build(struct blue_qp *qp, const struct blue_send_wqe *w, struct blue_pkt *p)
{
	uint8_t op = w->opcode == BLUE_WR_SEND_WITH_IMM ? BLUE_OP_UD_SEND_ONLY_IMM :
			      BLUE_OP_UD_SEND_ONLY;

	blue_pkt_init(p, op);
	memcpy(p->dst_mac, w->ud.dmac, 6);
	memcpy(p->src_mac, qp->ctx->mac, 6);
	blue_pkt_set_ips(p, qp->ctx->gid[w->ud.sgid_index].raw, w->ud.dgid);
	p->tos = blue__cc_tos(qp->live, w->ud.tclass, op);
	/* the TTL stays blue_pkt_init's 64, the route's: rxe's AHs (the kernel resolves a
	 * RoCE AH's hop limit from the route) send that whatever hop_limit the AH asks */
	p->sport = blue_udp_sport(blue__qp_wire_qpn(qp), w->ud.dqpn);
	p->dqpn = w->ud.dqpn;
	p->psn = qp->live->sq_psn;
	p->deth.qkey = ud_qkey(qp, w);
	p->deth.sqpn = blue__qp_wire_qpn(qp);
	if (op == BLUE_OP_UD_SEND_ONLY_IMM)
		p->imm = be32toh(w->imm_data);
	if (w->send_flags & BLUE_SEND_SOLICITED)
		p->se = 1;
	if (w->length) {
		p->payload = blue__req_gather(qp, w, 0, w->length);
		if (!p->payload)
			return -EACCES;
		p->payload_len = w->length;
	}
	return 0;
}

/* The WQE failed before it left: report it in order and stop the QP (as rxe does). */
static void ud_fail(struct blue_qp *qp, struct blue_swqe_eng *e, enum blue_wc_status st)
{
	e->state = BLUE_SWQE_ERROR;
	e->status = (uint8_t)st;
	blue__qp_error(qp, "a UD send failed locally");
}

int blue__req_ud_run(struct blue_qp *qp)
{
	struct blue_qp_ctx *live = qp->live;
	const struct blue_send_wqe *w;
	struct blue_swqe_eng *e;
	struct blue_pkt p;
	int sent = 0;

	/* IBA 10.3.1: RTS sends; SQD sends nothing new, and a UD message is one packet */
	while (live->state == BLUE_QPS_RTS &&
	       qp->req.idx != blue__sq_take(qp)) {
		w = blue__sq_wqe(qp, qp->req.idx);
		e = blue__sq_eng(qp, qp->req.idx);
		/* it completes as it leaves: only with room for its completion */
		if (!blue__cq_room(qp->send_cq))
			break;
		if (e->state == BLUE_SWQE_ERROR) {	/* refused when taken in (wqe_admit.c) */
			ud_fail(qp, e, (enum blue_wc_status)e->status);
			return sent;
		}
		switch (ud_check(qp, w)) {
		case UD_ERROR:
			ud_fail(qp, e, BLUE_WC_LOC_PROT_ERR);
			return sent;
		case UD_SKIP:
			break;
		case UD_SEND:
			if (ud_build(qp, w, &p)) {
				ud_fail(qp, e, BLUE_WC_LOC_PROT_ERR);
				return sent;
			}
			if (blue__qp_tx(qp, &p))
				return sent;	/* no frame or budget: the next pass */
			sent++;
			break;
		}
		live->sq_psn = blue_psn_add(live->sq_psn, 1);
		e->state = BLUE_SWQE_SENT;
		qp->req.idx++;
		(void)blue__sq_complete(qp, BLUE_WC_SUCCESS);	/* room checked above */
	}
	qp->req.state = BLUE_REQ_DONE;
	return sent;
}
