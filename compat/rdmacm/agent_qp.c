// SPDX-License-Identifier: MIT
/*
 * QP1 of the CM agent (agent_priv.h): its way to RTS (Q_Key 0x80010000, P_Key index 0),
 * its receive buffers (the GRH area, then the MAD), the CQ reaped with each MAD checked
 * and handed to the IB CM, and the way back when a failed receive put QP1 in ERROR.
 */
#include <errno.h>
#include <string.h>

#include "compat/rdmacm/agent_priv.h"

int agent_recv_post(struct cma_agent *a, unsigned int i)
{
	struct ibv_recv_wr wr, *bad = NULL;
	struct ibv_sge sge;

	sge.addr = (uintptr_t)rbuf(a, i);
	sge.length = AGENT_RBUF;
	sge.lkey = a->mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = i;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return ibv_post_recv(a->qp, &wr, &bad);
}

/*
 * The sender's GID from the 40-byte GRH area (IBA 11.4.1.1, annex A17.4.5.2): over
 * IPv4, 20 zero bytes then the IPv4 header (source address at byte 32); over IPv6, the
 * IPv6 header (source address at byte 8). False: neither.
 */
static bool agent_grh_source(const uint8_t *grh, uint8_t gid[16])
{
	static const uint8_t zero[20];

	if ((grh[20] >> 4) == 4 && !memcmp(grh, zero, sizeof(zero))) {
		memset(gid, 0, 10);
		gid[10] = gid[11] = 0xff;
		memcpy(gid + 12, grh + 32, 4);
		return true;
	}
	if ((grh[0] >> 4) == 6) {
		memcpy(gid, grh + 8, 16);
		return true;
	}
	return false;
}

/* One receive completion: checked, handed to the IB CM, the buffer posted again. */
static void agent_rx(struct cma_agent *a, const struct ibv_wc *wc)
{
	unsigned int i = (unsigned int)wc->wr_id;
	struct blue_ibcm_addr from;
	const uint8_t *b = rbuf(a, i);

	if (wc->status != IBV_WC_SUCCESS) {
		/* a failed receive moves QP1 to ERROR (a datagram longer than the buffer on
		 * a jumbo link, say) and flushes the rest: agent_recover brings it back */
		if (wc->status != IBV_WC_WR_FLUSH_ERR)
			a->st.rx_err++;
		a->qp_failed = true;
		return;
	}
	if (wc->byte_len < AGENT_GRH + BLUE_IBCM_MAD_HDR_SIZE) {
		a->st.rx_short++;
		goto repost;
	}
	if (wc->byte_len > AGENT_GRH + BLUE_IBCM_MAD_SIZE) {
		a->st.rx_long++;
		goto repost;
	}
	if (!(wc->wc_flags & IBV_WC_GRH) || !agent_grh_source(b, from.gid)) {
		a->st.rx_bad_grh++;
		goto repost;
	}
	from.qpn = wc->src_qp;
	a->st.rx_mads++;
	(void)blue__ibcm_rx(a->cm, b + AGENT_GRH, wc->byte_len - AGENT_GRH, &from,
			    cma_now_ns());
repost:
	if (agent_recv_post(a, i)) {
		a->st.rx_err++;
		cma_log("agent %s: cannot post receive buffer %u on QP1 again", a->name, i);
	}
}

/*
 * QP1 in ERROR (a receive failed): back to RESET, up to RTS, every receive buffer posted
 * again. RESET drops what the CQ still holds of QP1 and its send queue, so the sends in
 * flight count as done. One line says it happened, and rx_err counted the cause.
 */
static void agent_recover(struct cma_agent *a)
{
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	unsigned int i;

	a->qp_failed = false;
	if (ibv_query_qp(a->qp, &attr, IBV_QP_STATE, &init) == 0 && attr.qp_state != IBV_QPS_ERR)
		return;
	cma_log("agent %s: QP1 went to ERROR (a receive failed): resetting it", a->name);
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RESET;
	if (ibv_modify_qp(a->qp, &attr, IBV_QP_STATE) || agent_qp_up(a)) {
		cma_log("agent %s: QP1 cannot be brought back: the CM is deaf on this device",
			a->name);
		return;
	}
	a->tx_done = a->tx_posted;
	for (i = 0; i < AGENT_NRECV; i++)
		if (agent_recv_post(a, i))
			a->st.rx_err++;
	a->st.qp_resets++;
}

/*
 * The completions QP1's CQ holds, with the notification armed first (so one that comes
 * after the last poll wakes the thread), at most AGENT_REAP_MAX per pass so that a flood
 * of MADs does not keep the lock from the API. Under the lock.
 * Return: true if the budget ran out (more may be waiting: no sleep before the next pass).
 */
#define AGENT_REAP_MAX	256
bool agent_reap(struct cma_agent *a)
{
	struct ibv_wc wc[16];
	unsigned int done = 0;
	int n, k;

	(void)ibv_req_notify_cq(a->cq, 0);
	while (done < AGENT_REAP_MAX && (n = ibv_poll_cq(a->cq, 16, wc)) > 0) {
		done += (unsigned int)n;
		for (k = 0; k < n; k++) {
			if (wc[k].wr_id & WR_SEND) {
				a->tx_done++;
				if (wc[k].status != IBV_WC_SUCCESS)
					a->st.tx_err++;
			} else {
				agent_rx(a, &wc[k]);
			}
		}
	}
	if (a->qp_failed && !a->stop)
		agent_recover(a);
	return done >= AGENT_REAP_MAX;
}

static int qp_modify(struct cma_agent *a, struct ibv_qp_attr *attr, int mask, const char *to)
{
	int err = ibv_modify_qp(a->qp, attr, mask);

	if (err)
		cma_log("agent %s: QP1 to %s: %s", a->name, to, strerror(err));
	return -err;
}

/* QP1 through INIT (Q_Key 0x80010000, P_Key index 0, port 1), RTR and RTS. */
int agent_qp_up(struct cma_agent *a)
{
	struct ibv_qp_attr attr;
	int err;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_INIT;
	attr.pkey_index = 0;
	attr.port_num = a->dev->port_num ? a->dev->port_num : 1;
	attr.qkey = CMA_GSI_QKEY;
	err = qp_modify(a, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY,
			"INIT");
	if (err)
		return err;
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTR;
	err = qp_modify(a, &attr, IBV_QP_STATE, "RTR");
	if (err)
		return err;
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	return qp_modify(a, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN, "RTS");
}
