// SPDX-License-Identifier: MIT
/*
 * The completer's NAK path: copies of one sequence-error NAK for a go-back-N already
 * under way start no further retry (issue 12, item 6). rxe does the same: once
 * comp.started_retry is set, only a timeout starts another retry sequence (rxe_comp.c).
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/codec.h"
#include "runtime/device.h"
#include "runtime/qp.h"
#include "tests/unit/rc_fixture.h"

#define MSG_LEN		4096u	/* four packets at MTU 1024 */
#define PASSES		1000	/* bound on engine passes while the first send is dropped */

/* A frame from B's address to A's QP, built by the codec and sent on B's socket. */
static void inject_from_b(struct rc_fx *fx, const struct blue_pkt *p)
{
	struct blue_frame f;
	int n;

	cr_assert_eq(blue_hal_tx_alloc(fx->b.hal, &f, 1), 1);
	n = blue_pkt_build(p, f.data, fx->b.hal->frame_size - fx->b.hal->headroom);
	cr_assert_gt(n, 0, "building the NAK: %d", n);
	f.len = (uint32_t)n;
	cr_assert_eq(blue_hal_tx_submit(fx->b.ctx->sock, &f, 1), 1);
	cr_assert_eq(blue_hal_tx_flush(fx->b.ctx->sock), 0);
}

/* What B's responder would send for a gap at @psn: AETH syndrome 0x60 (IBA 9.7.5.2.2). */
static void seq_nak(struct rc_fx *fx, struct blue_pkt *p, uint32_t psn)
{
	blue_pkt_init(p, BLUE_OP_RC_ACKNOWLEDGE);
	memcpy(p->dst_mac, fx->a.mac, 6);
	memcpy(p->src_mac, fx->b.mac, 6);
	p->saddr = fx->b.ip;
	p->daddr = fx->a.ip;
	p->sport = blue_udp_sport(fx->b.qp->qpn, fx->a.qp->qpn);
	p->dqpn = fx->a.qp->qpn;
	p->psn = psn;
	p->aeth.syndrome = BLUE_NAK_PSN_SEQ_ERR;
	p->aeth.msn = 0;
}

/*
 * A's SEND is lost on the wire; retry_cnt + 1 copies of one sequence-error NAK for its
 * first PSN arrive. The first goes back N; the others find that retry under way and
 * are ignored, so the QP stays in RTS with one retransmission, and the SEND completes
 * once B's real ACK comes. The ACK timer is off (timeout 0), so only NAKs act here.
 */
Test(rc_nak, repeated_seq_nak_retries_once)
{
	struct rc_opts o;
	struct rc_fx fx;
	struct rc_drop d = { .opcode = -1, .psn = -1, .max_drops = -1 };
	struct blue_mr *smr, *dmr;
	struct blue_sge sge;
	struct blue_send_wr wr;
	struct blue_pkt nak;
	struct blue_wc wc;
	uint8_t *src, *dst;
	unsigned int i;
	int pass;

	rc_opts_default(&o);
	o.timeout = 0;
	rc_fx_init(&fx, &o);
	src = malloc(MSG_LEN);
	dst = calloc(1, MSG_LEN);
	cr_assert(src && dst);
	rc_fill(src, MSG_LEN, 61);
	smr = blue_reg_mr(fx.a.pd, src, MSG_LEN, 0);
	dmr = blue_reg_mr(fx.b.pd, dst, MSG_LEN, BLUE_ACCESS_LOCAL_WRITE);
	cr_assert(smr && dmr);
	rc_post_recv(&fx.b, 2, dst, MSG_LEN, dmr->lkey);

	rc_drop_install(fx.a.hal, &d);
	sge = (struct blue_sge){ .addr = (uintptr_t)src, .length = MSG_LEN, .lkey = smr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = BLUE_WR_SEND;
	wr.send_flags = BLUE_SEND_SIGNALED;
	rc_post_send(&fx.a, &wr);
	for (pass = 0; pass < PASSES && d.dropped < 4; pass++)
		rc_progress(&fx);
	cr_assert_eq(d.dropped, 4, "A sent %d of the SEND's 4 packets", d.dropped);
	cr_assert_eq(fx.b.qp->live->rx_pkts, 0);

	seq_nak(&fx, &nak, o.sq_psn_a);
	for (i = 0; i <= o.retry_cnt; i++)
		inject_from_b(&fx, &nak);
	blue_hal_loopback_set_filter(fx.a.hal, NULL, NULL);

	wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.wr_id, 1);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "send: %s after %u copies of one NAK",
		     blue_wc_status_str(wc.status), o.retry_cnt + 1);
	cr_assert_eq(fx.a.qp->live->state, BLUE_QPS_RTS);
	cr_assert_eq(fx.a.qp->live->naks_rcvd, o.retry_cnt + 1u, "every copy arrived");
	cr_assert_eq(fx.a.qp->live->retransmits, 1, "one retry for one NAK, not %llu",
		     (unsigned long long)fx.a.qp->live->retransmits);
	cr_assert_eq(fx.a.qp->live->retry_left, o.retry_cnt, "the ACK refilled the count");
	wc = rc_wait1(&fx, fx.b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	cr_assert_eq(wc.byte_len, MSG_LEN);
	cr_assert(rc_check(dst, MSG_LEN, 61), "received bytes differ");

	cr_assert_eq(blue_dereg_mr(smr), 0);
	cr_assert_eq(blue_dereg_mr(dmr), 0);
	free(src);
	free(dst);
	rc_fx_fini(&fx);
}
