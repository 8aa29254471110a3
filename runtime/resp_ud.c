// SPDX-License-Identifier: MIT
/*
 * The UD responder (IBA 9.8.3 / 10.2.5 / 11.4.1.1): a SEND Only (with Immediate) for a
 * UD QP lands whole in the next receive WQE, behind the 40-byte GRH. Nothing is
 * answered: a request the QP cannot take (wrong Q_Key, no WQE posted, a full CQ) is
 * dropped and counted, never NAK'd and never RNR'd.
 *
 * Steps, each a named function returning the next: ud_check_state, ud_check_qkey,
 * ud_check_resource, ud_place, ud_complete. The GRH and the completion fields are laid
 * out as rxe lays them out for a user CQ (rxe_resp.c: build_rdma_network_hdr and
 * do_complete), read there and written from the spec.
 */
#include <endian.h>
#include <string.h>

#include "runtime/log.h"
#include "runtime/mr_copy.h"
#include "runtime/probes.h"
#include "runtime/qp.h"
#include "runtime/rq.h"

enum ud_resp_state {
	UDR_CHECK_STATE,
	UDR_CHECK_QKEY,
	UDR_CHECK_RESOURCE,
	UDR_PLACE,
	UDR_COMPLETE,
	UDR_DROP,
	UDR_DONE,
};

/* One received UD message on its way through the steps. */
struct ud_rx {
	const struct blue_pkt *p;
	const uint8_t *ip_hdr;
	const struct blue_recv_wqe *w;
	enum blue_wc_status status;
};

/* IBA 10.3.1: RTR and later receive; RESET, INIT and ERROR drop. */
static enum ud_resp_state ud_check_state(struct blue_qp *qp, struct ud_rx *rx)
{
	uint8_t st = qp->live->state;

	(void)rx;
	return st == BLUE_QPS_RTR || st == BLUE_QPS_RTS || st == BLUE_QPS_SQD ||
	       st == BLUE_QPS_SQE ? UDR_CHECK_QKEY : UDR_DROP;
}

/* IBA 10.2.5 (C10-15): a datagram whose Q_Key is not the QP's is silently dropped. */
static enum ud_resp_state ud_check_qkey(struct blue_qp *qp, struct ud_rx *rx)
{
	if (rx->p->deth.qkey == qp->live->qkey)
		return UDR_CHECK_RESOURCE;
	qp->ctx->eng.st.rx_bad_qkey++;
	qp->live->ud_bad_qkey++;
	return UDR_DROP;
}

/* A receive WQE and room for its completion; UD has no RNR (IBA 9.7.5.2.8 is RC). */
static enum ud_resp_state ud_check_resource(struct blue_qp *qp, struct ud_rx *rx)
{
	if (!blue__cq_room(qp->recv_cq))
		return UDR_DROP;
	rx->w = blue__rq_begin(qp);
	if (rx->w)
		return UDR_PLACE;
	qp->ctx->eng.st.rx_ud_no_wqe++;
	qp->live->ud_no_wqe++;
	return UDR_DROP;
}

/*
 * The 40 bytes a UD buffer starts with (IBA 11.4.1.1; annex A17.4.5.2 for RoCEv2 over
 * IPv4): 20 zero bytes, then the IPv4 header as received. rxe zeroes its
 * rdma_network_hdr and copies ip_hdr(skb) into the roce4grh member, whose 20 bytes
 * sit at the end of the 40-byte union. Over IPv6 the GRH is the IPv6 header itself, as
 * received (rxe copies ipv6_hdr(skb) into the union's ibgrh: 40 bytes, the same size).
 */
static void ud_grh(uint8_t grh[BLUE_GRH_LEN], const uint8_t *ip_hdr, int ipv6)
{
	if (ipv6) {
		memcpy(grh, ip_hdr, BLUE_IPV6_HLEN);
		return;
	}
	memset(grh, 0, BLUE_GRH_LEN - BLUE_IPV4_MIN_HLEN);
	memcpy(grh + BLUE_GRH_LEN - BLUE_IPV4_MIN_HLEN, ip_hdr, BLUE_IPV4_MIN_HLEN);
}

/* Copy @len bytes to @off of the WQE through its SGEs' MRs; a status. */
static enum blue_wc_status ud_copy(struct blue_qp *qp, const struct blue_recv_wqe *w,
				   uint32_t off, const void *data, uint32_t len)
{
	enum blue_mr_verdict v;
	uint32_t bad = 0;

	if (!len)
		return BLUE_WC_SUCCESS;
	v = blue__copy_data(qp->ctx, blue__rq_pd(qp), w->sge, w->num_sge, off, (void *)data, len,
			    BLUE_ACCESS_LOCAL_WRITE, BLUE_COPY_TO_MEM, NULL, &bad);
	if (v == BLUE_MR_OK)
		return BLUE_WC_SUCCESS;
	blue__logf("QP 0x%x: UD receive wr_id %llu, SGE %u (lkey 0x%x): %s", qp->qpn,
		   (unsigned long long)w->wr_id, bad, bad < w->num_sge ? w->sge[bad].lkey : 0,
		   blue__mr_verdict_str(v));
	return BLUE_WC_LOC_PROT_ERR;
}

/*
 * The GRH, then the payload. A message longer than the buffer fails with a local
 * length error (rxe: RESPST_ERR_LENGTH on a UD QP without an SRQ, IB_WC_LOC_LEN_ERR).
 */
static enum ud_resp_state ud_place(struct blue_qp *qp, struct ud_rx *rx)
{
	uint8_t grh[BLUE_GRH_LEN];

	if (rx->w->length < BLUE_GRH_LEN ||
	    rx->p->payload_len > rx->w->length - BLUE_GRH_LEN) {
		rx->status = BLUE_WC_LOC_LEN_ERR;
		return UDR_COMPLETE;
	}
	ud_grh(grh, rx->ip_hdr, rx->p->ipv6);
	rx->status = ud_copy(qp, rx->w, 0, grh, BLUE_GRH_LEN);
	if (rx->status == BLUE_WC_SUCCESS)
		rx->status = ud_copy(qp, rx->w, BLUE_GRH_LEN, rx->p->payload,
				     rx->p->payload_len);
	return UDR_COMPLETE;
}

/*
 * The completion as rxe writes it into a user CQ: wc_flags GRH (and WITH_IMM), src_qp
 * from the DETH, byte_len counting the GRH (IBA 11.4.2.1); sl and pkey_index stay 0,
 * since rxe's do_complete sets neither (its CQE is zeroed first). An error completes
 * with its status and moves the QP to ERROR, as rxe's completion of an error does.
 */
static enum ud_resp_state ud_complete(struct blue_qp *qp, struct ud_rx *rx)
{
	const struct blue_pkt *p = rx->p;
	struct blue_wc wc = {
		.wr_id = rx->w->wr_id,
		.status = rx->status,
		.opcode = BLUE_WC_RECV,
		.qp_num = blue__qp_wire_qpn(qp),
	};

	if (rx->status == BLUE_WC_SUCCESS) {
		wc.byte_len = BLUE_GRH_LEN + p->payload_len;
		wc.src_qp = p->deth.sqpn;
		wc.wc_flags = BLUE_WC_GRH;
		if (p->opcode == BLUE_OP_UD_SEND_ONLY_IMM) {
			wc.wc_flags |= BLUE_WC_WITH_IMM;
			wc.imm_data = htobe32(p->imm);	/* network order, as ibverbs */
		}
	}
	blue__rq_end(qp);	/* before the completion: as recv_complete (resp.c) says */
	if (blue__cq_push(qp->recv_cq, &wc, p->se) == 0)	/* room checked */
		BLUE_PROBE5(completion, qp->qpn, wc.wr_id, wc.status, wc.opcode, wc.byte_len);
	qp->live->msn = (qp->live->msn + 1) & BLUE_PSN_MASK;	/* messages received */
	if (rx->status != BLUE_WC_SUCCESS)
		blue__qp_error(qp, blue_wc_status_str(rx->status));
	return UDR_DONE;
}

void blue__resp_ud_rx(struct blue_qp *qp, const struct blue_pkt *p, const uint8_t *ip_hdr)
{
	struct ud_rx rx = { .p = p, .ip_hdr = ip_hdr, .status = BLUE_WC_SUCCESS };
	enum ud_resp_state st = UDR_CHECK_STATE;

	qp->live->rx_pkts++;
	qp->live->rx_bytes += p->payload_len;
	while (st != UDR_DONE) {
		switch (st) {
		case UDR_CHECK_STATE:	 st = ud_check_state(qp, &rx); break;
		case UDR_CHECK_QKEY:	 st = ud_check_qkey(qp, &rx); break;
		case UDR_CHECK_RESOURCE: st = ud_check_resource(qp, &rx); break;
		case UDR_PLACE:		 st = ud_place(qp, &rx); break;
		case UDR_COMPLETE:	 st = ud_complete(qp, &rx); break;
		case UDR_DROP:
		default:		 st = UDR_DONE; break;
		}
	}
	qp->live->rq_psn = blue_psn_add(p->psn, 1);	/* the last PSN seen, for people */
}
