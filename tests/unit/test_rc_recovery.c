// SPDX-License-Identifier: MIT
/*
 * Loss, duplication and reordering injected deterministically with the loopback HAL's
 * filter, and what IBA reliability makes of them: go-back-N after a sequence-error NAK
 * (sent once per gap), retransmission after an ACK timeout, duplicates re-ACKed, a
 * duplicate atomic answered from the cache and never executed twice, a lost READ
 * response re-requested, and frames with a bad ICRC dropped and counted.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/codec.h"
#include "runtime/progress.h"
#include "runtime/qp.h"
#include "tests/unit/rc_fixture.h"

#define KiB 1024u

struct xfer {
	uint8_t *src, *dst;
	struct blue_mr *smr, *dmr;
	uint32_t len;
};

static void xfer_init(struct rc_fx *fx, struct xfer *x, uint32_t len)
{
	unsigned int acc = BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE |
			   BLUE_ACCESS_REMOTE_READ | BLUE_ACCESS_REMOTE_ATOMIC;

	x->len = len;
	x->src = malloc(len);
	x->dst = calloc(1, len);
	cr_assert(x->src && x->dst);
	rc_fill(x->src, len, len);
	x->smr = blue_reg_mr(fx->a.pd, x->src, len, acc);
	x->dmr = blue_reg_mr(fx->b.pd, x->dst, len, acc);
	cr_assert(x->smr && x->dmr);
}

static void xfer_fini(struct xfer *x)
{
	cr_assert_eq(blue_dereg_mr(x->smr), 0);
	cr_assert_eq(blue_dereg_mr(x->dmr), 0);
	free(x->src);
	free(x->dst);
}

/* SEND x->len bytes A -> B and check both completions and the bytes. */
static void send_and_check(struct rc_fx *fx, struct xfer *x)
{
	struct blue_sge sge = { .addr = (uintptr_t)x->src, .length = x->len, .lkey = x->smr->lkey };
	struct blue_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				   .opcode = BLUE_WR_SEND, .send_flags = BLUE_SEND_SIGNALED };
	struct blue_wc wc;

	rc_post_recv(&fx->b, 2, x->dst, x->len, x->dmr->lkey);
	rc_post_send(&fx->a, &wr);
	wc = rc_wait1(fx, fx->a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "send: %s", blue_wc_status_str(wc.status));
	wc = rc_wait1(fx, fx->b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "recv: %s", blue_wc_status_str(wc.status));
	cr_assert_eq(wc.byte_len, x->len);
	cr_assert(rc_check(x->dst, x->len, x->len), "received bytes differ");
	rc_quiet(fx, fx->b.rcq, 2);	/* delivered exactly once */
}

/*
 * One MIDDLE packet of a 64-packet SEND is dropped. The responder NAKs the gap once
 * (the 40-odd packets after it are out of sequence too, but one NAK is enough), the
 * requester goes back N to the lost PSN, and the message arrives whole.
 */
Test(rc_recovery, go_back_n_after_one_drop)
{
	struct rc_fx fx;
	struct xfer x;
	struct rc_drop d;

	rc_fx_init(&fx, NULL);
	xfer_init(&fx, &x, 64 * KiB);
	d = (struct rc_drop){ .opcode = BLUE_OP_RC_SEND_MIDDLE, .psn = fx.o.sq_psn_a + 20,
			      .max_drops = 1 };
	rc_drop_install(fx.a.hal, &d);
	send_and_check(&fx, &x);
	cr_assert_eq(d.dropped, 1);
	cr_assert_eq(fx.b.qp->live->naks_sent, 1, "one NAK for one gap");
	cr_assert_eq(fx.b.qp->live->last_nak_syndrome, BLUE_NAK_PSN_SEQ_ERR);
	cr_assert_eq(fx.b.qp->live->last_nak_psn, fx.o.sq_psn_a + 20, "NAK names the hole");
	cr_assert_eq(fx.a.qp->live->naks_rcvd, 1);
	cr_assert_eq(fx.a.qp->live->retransmits, 1);
	/* go back N: the hole and everything after it went again */
	cr_assert_geq(fx.a.qp->live->tx_pkts, 64 + 44);
	xfer_fini(&x);
	rc_fx_fini(&fx);
}

/* The same hole in a WRITE. */
Test(rc_recovery, go_back_n_in_a_write)
{
	struct rc_fx fx;
	struct xfer x;
	struct rc_drop d;
	struct blue_sge sge;
	struct blue_send_wr wr;
	struct blue_wc wc;

	rc_fx_init(&fx, NULL);
	xfer_init(&fx, &x, 64 * KiB);
	d = (struct rc_drop){ .opcode = BLUE_OP_RC_WRITE_MIDDLE, .psn = fx.o.sq_psn_a + 7,
			      .max_drops = 1 };
	rc_drop_install(fx.a.hal, &d);
	sge = (struct blue_sge){ .addr = (uintptr_t)x.src, .length = x.len, .lkey = x.smr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = BLUE_WR_RDMA_WRITE;
	wr.send_flags = BLUE_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)x.dst;
	wr.wr.rdma.rkey = x.dmr->rkey;
	rc_post_send(&fx.a, &wr);
	wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	cr_assert(rc_check(x.dst, x.len, x.len));
	cr_assert_eq(d.dropped, 1);
	cr_assert_eq(fx.b.qp->live->naks_sent, 1);
	xfer_fini(&x);
	rc_fx_fini(&fx);
}

/* The LAST packet is lost: nothing follows to reveal the gap, so the ACK timer does. */
Test(rc_recovery, lost_last_packet_times_out)
{
	struct rc_fx fx;
	struct xfer x;
	struct rc_drop d;

	rc_fx_init(&fx, NULL);
	xfer_init(&fx, &x, 8 * KiB);
	d = (struct rc_drop){ .opcode = BLUE_OP_RC_SEND_LAST, .psn = -1, .max_drops = 1 };
	rc_drop_install(fx.a.hal, &d);
	send_and_check(&fx, &x);
	cr_assert_eq(d.dropped, 1);
	cr_assert_eq(fx.b.qp->live->naks_sent, 0, "no gap was seen");
	cr_assert_eq(fx.a.qp->live->retransmits, 1);
	xfer_fini(&x);
	rc_fx_fini(&fx);
}

/*
 * The responder's ACK is lost: the requester times out and resends; the responder
 * sees duplicates, re-ACKs, and does not deliver the message twice.
 */
Test(rc_recovery, lost_ack_duplicate_is_reacked)
{
	struct rc_fx fx;
	struct xfer x;
	struct rc_drop d;

	rc_fx_init(&fx, NULL);
	xfer_init(&fx, &x, 4 * KiB);
	d = (struct rc_drop){ .opcode = BLUE_OP_RC_ACKNOWLEDGE, .psn = -1, .max_drops = 1 };
	rc_drop_install(fx.b.hal, &d);
	send_and_check(&fx, &x);
	cr_assert_eq(d.dropped, 1);
	cr_assert_eq(fx.a.qp->live->retransmits, 1);
	cr_assert_geq(fx.b.qp->live->rx_pkts, 5, "the duplicate arrived");
	xfer_fini(&x);
	rc_fx_fini(&fx);
}

/*
 * The atomic ACK is lost. The requester resends the fetch-and-add; the responder sees
 * a duplicate atomic and answers from its cache: the word is added to once, and the
 * requester gets the original value from before that one addition.
 */
Test(rc_recovery, duplicate_atomic_executes_once)
{
	struct rc_fx fx;
	uint64_t *word = aligned_alloc(64, 64), orig = 0;
	struct blue_mr *wmr, *omr;
	struct rc_drop d = { .opcode = BLUE_OP_RC_ATOMIC_ACKNOWLEDGE, .psn = -1, .max_drops = 1 };
	struct blue_sge sge;
	struct blue_send_wr wr;
	struct blue_wc wc;

	rc_fx_init(&fx, NULL);
	*word = 40;
	wmr = blue_reg_mr(fx.b.pd, word, 64, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_ATOMIC);
	omr = blue_reg_mr(fx.a.pd, &orig, 8, BLUE_ACCESS_LOCAL_WRITE);
	cr_assert(wmr && omr);
	rc_drop_install(fx.b.hal, &d);
	sge = (struct blue_sge){ .addr = (uintptr_t)&orig, .length = 8, .lkey = omr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = BLUE_WR_ATOMIC_FETCH_AND_ADD;
	wr.send_flags = BLUE_SEND_SIGNALED;
	wr.wr.atomic.remote_addr = (uintptr_t)word;
	wr.wr.atomic.rkey = wmr->rkey;
	wr.wr.atomic.compare_add = 2;
	rc_post_send(&fx.a, &wr);
	wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "%s", blue_wc_status_str(wc.status));
	cr_assert_eq(d.dropped, 1);
	cr_assert_eq(fx.a.qp->live->retransmits, 1, "the atomic was sent twice");
	cr_assert_eq(fx.b.qp->live->rx_pkts, 2, "and arrived twice");
	cr_assert_eq(*word, 42, "executed once");
	cr_assert_eq(orig, 40, "the original value of the one execution");
	cr_assert_eq(blue_dereg_mr(wmr), 0);
	cr_assert_eq(blue_dereg_mr(omr), 0);
	free(word);
	rc_fx_fini(&fx);
}

/*
 * A READ response in the middle is lost: the requester sees the next one out of order,
 * asks again from the hole (a READ request for the rest), and the data arrives whole.
 */
Test(rc_recovery, lost_read_response_is_requested_again)
{
	struct rc_fx fx;
	struct xfer x;
	struct rc_drop d;
	struct blue_sge sge;
	struct blue_send_wr wr;
	struct blue_wc wc;

	rc_fx_init(&fx, NULL);
	xfer_init(&fx, &x, 32 * KiB);
	rc_fill(x.dst, x.len, 77);	/* B's side holds the data to read */
	sge = (struct blue_sge){ .addr = (uintptr_t)x.src, .length = x.len, .lkey = x.smr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = BLUE_WR_RDMA_READ;
	wr.send_flags = BLUE_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)x.dst;
	wr.wr.rdma.rkey = x.dmr->rkey;
	d = (struct rc_drop){ .opcode = BLUE_OP_RC_READ_RESPONSE_MIDDLE,
			      .psn = fx.o.sq_psn_a + 11, .max_drops = 1 };
	rc_drop_install(fx.b.hal, &d);
	rc_post_send(&fx.a, &wr);
	wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "%s", blue_wc_status_str(wc.status));
	cr_assert(rc_check(x.src, x.len, 77), "read bytes differ");
	cr_assert_eq(d.dropped, 1);
	cr_assert_eq(fx.a.qp->live->retransmits, 1);
	xfer_fini(&x);
	rc_fx_fini(&fx);
}

/* Every frame A sends arrives twice: still exactly one delivery, correct bytes. */
static enum blue_lb_verdict dup_all(void *arg, const struct blue_frame *f, uint64_t seq)
{
	(void)f;
	(void)seq;
	(*(int *)arg)++;
	return BLUE_LB_DUP;
}

Test(rc_recovery, duplicated_frames_deliver_once)
{
	struct rc_fx fx;
	struct xfer x;
	int n = 0;

	rc_fx_init(&fx, NULL);
	xfer_init(&fx, &x, 16 * KiB);
	blue_hal_loopback_set_filter(fx.a.hal, dup_all, &n);
	send_and_check(&fx, &x);
	cr_assert_geq(n, 16);
	cr_assert_eq(fx.b.qp->live->rx_pkts, 32, "every packet came twice");
	cr_assert_eq(fx.b.qp->live->naks_sent, 0, "a duplicate is not a gap");
	xfer_fini(&x);
	rc_fx_fini(&fx);
}

/* One frame is held back and delivered after the next: out of order, then healed. */
static enum blue_lb_verdict hold_fifth(void *arg, const struct blue_frame *f, uint64_t seq)
{
	(void)f;
	(void)arg;
	return seq == 5 ? BLUE_LB_HOLD : BLUE_LB_PASS;
}

Test(rc_recovery, reordered_frame)
{
	struct rc_fx fx;
	struct xfer x;

	rc_fx_init(&fx, NULL);
	xfer_init(&fx, &x, 16 * KiB);
	blue_hal_loopback_set_filter(fx.a.hal, hold_fifth, NULL);
	send_and_check(&fx, &x);
	/*
	 * The early packet opens a gap (NAK); the late one then fills it, and the packet
	 * after it, dropped as early, opens the next gap: one or two NAKs, never a storm.
	 */
	cr_assert(fx.b.qp->live->naks_sent >= 1 && fx.b.qp->live->naks_sent <= 2,
		  "%llu NAKs", (unsigned long long)fx.b.qp->live->naks_sent);
	xfer_fini(&x);
	rc_fx_fini(&fx);
}

/*
 * A frame corrupted on the wire (one payload bit flipped, ICRC left as it was) is
 * dropped by the receiver's parser and counted; the transport recovers the packet.
 */
static enum blue_lb_verdict corrupt_third(void *arg, const struct blue_frame *f, uint64_t seq)
{
	(void)arg;
	if (seq == 2)
		f->data[f->len - 8] ^= 0x10;	/* in the payload, before the ICRC */
	return BLUE_LB_PASS;
}

Test(rc_recovery, bad_icrc_is_dropped_and_counted)
{
	struct rc_fx fx;
	struct xfer x;

	rc_fx_init(&fx, NULL);
	xfer_init(&fx, &x, 8 * KiB);
	blue_hal_loopback_set_filter(fx.a.hal, corrupt_third, NULL);
	send_and_check(&fx, &x);
	cr_assert_eq(blue__engine_stats(fx.b.ctx)->rx_bad_icrc, 1);
	cr_assert_eq(blue__engine_stats(fx.b.ctx)->parse_err[BLUE_PARSE_BAD_ICRC], 1);
	cr_assert_eq(fx.a.qp->live->retransmits, 1);
	xfer_fini(&x);
	rc_fx_fini(&fx);
}

/* A READ, a SEND and an atomic in a row, each losing its first packet once. */
static enum blue_lb_verdict drop_every_first(void *arg, const struct blue_frame *f, uint64_t seq)
{
	uint8_t *seen = arg;
	struct blue_pkt p;

	(void)seq;
	if (blue_pkt_parse(f->data, f->len, &p) || p.opcode > 0x1f || seen[p.opcode])
		return BLUE_LB_PASS;
	seen[p.opcode] = 1;
	return BLUE_LB_DROP;
}

Test(rc_recovery, mixed_operations_each_lose_one)
{
	struct rc_fx fx;
	struct xfer x;
	uint64_t *word = aligned_alloc(64, 64);
	struct blue_mr *wmr;
	uint8_t seen[32] = { 0 };
	struct blue_sge rs, ss, as;
	struct blue_send_wr wr[3];
	struct blue_wc wc[3];

	rc_fx_init(&fx, NULL);
	xfer_init(&fx, &x, 8 * KiB);
	*word = 7;
	wmr = blue_reg_mr(fx.b.pd, word, 64, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_ATOMIC);
	rc_fill(x.dst, 4 * KiB, 99);
	rc_post_recv(&fx.b, 10, x.dst + 4 * KiB, 4 * KiB, x.dmr->lkey);
	rs = (struct blue_sge){ .addr = (uintptr_t)x.src, .length = 4 * KiB, .lkey = x.smr->lkey };
	ss = (struct blue_sge){ .addr = (uintptr_t)x.src + 4 * KiB, .length = 3000,
				.lkey = x.smr->lkey };
	as = (struct blue_sge){ .addr = (uintptr_t)x.src + 8 * KiB - 8, .length = 8,
				.lkey = x.smr->lkey };
	memset(wr, 0, sizeof(wr));
	wr[0] = (struct blue_send_wr){ .wr_id = 1, .sg_list = &rs, .num_sge = 1,
				       .opcode = BLUE_WR_RDMA_READ, .send_flags = BLUE_SEND_SIGNALED,
				       .next = &wr[1] };
	wr[0].wr.rdma.remote_addr = (uintptr_t)x.dst;
	wr[0].wr.rdma.rkey = x.dmr->rkey;
	wr[1] = (struct blue_send_wr){ .wr_id = 2, .sg_list = &ss, .num_sge = 1,
				       .opcode = BLUE_WR_SEND, .send_flags = BLUE_SEND_SIGNALED,
				       .next = &wr[2] };
	wr[2] = (struct blue_send_wr){ .wr_id = 3, .sg_list = &as, .num_sge = 1,
				       .opcode = BLUE_WR_ATOMIC_CMP_AND_SWP,
				       .send_flags = BLUE_SEND_SIGNALED };
	wr[2].wr.atomic.remote_addr = (uintptr_t)word;
	wr[2].wr.atomic.rkey = wmr->rkey;
	wr[2].wr.atomic.compare_add = 7;
	wr[2].wr.atomic.swap = 8;
	blue_hal_loopback_set_filter(fx.a.hal, drop_every_first, seen);
	rc_post_send(&fx.a, wr);
	cr_assert_eq(rc_poll(&fx, fx.a.scq, wc, 3, RC_WAIT_MS), 3);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(wc[i].wr_id, (uint64_t)i + 1);
		cr_assert_eq(wc[i].status, BLUE_WC_SUCCESS, "wr %d: %s", i + 1,
			     blue_wc_status_str(wc[i].status));
	}
	cr_assert(rc_check(x.src, 4 * KiB, 99), "READ data");
	cr_assert_eq(memcmp(x.dst + 4 * KiB, x.src + 4 * KiB, 3000), 0, "SEND data");
	cr_assert_eq(*word, 8, "swapped once");
	cr_assert_eq(*(uint64_t *)(x.src + 8 * KiB - 8), 7, "original value");
	cr_assert_eq(blue_dereg_mr(wmr), 0);
	free(word);
	xfer_fini(&x);
	rc_fx_fini(&fx);
}

/*
 * A frame whose IPv4 source is not the connected peer (rewritten on the wire, checksum
 * and ICRC made valid again) is not accepted by the QP; the real one is resent.
 */
static enum blue_lb_verdict spoof_second(void *arg, const struct blue_frame *f, uint64_t seq)
{
	uint8_t *ip = f->data + BLUE_ETH_HLEN;
	uint32_t sum = 0;
	int i;

	(void)arg;
	if (seq != 1)
		return BLUE_LB_PASS;
	ip[15] ^= 0x40;			/* another source address */
	ip[10] = ip[11] = 0;		/* RFC 1071 header checksum, recomputed */
	for (i = 0; i < 20; i += 2)
		sum += (uint32_t)ip[i] << 8 | ip[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	ip[10] = (uint8_t)(~sum >> 8);
	ip[11] = (uint8_t)~sum;
	blue_pkt_fix_icrc(f->data, f->len);
	return BLUE_LB_PASS;
}

Test(rc_recovery, frame_from_another_source_is_ignored)
{
	struct rc_fx fx;
	struct xfer x;

	rc_fx_init(&fx, NULL);
	xfer_init(&fx, &x, 4 * KiB);
	blue_hal_loopback_set_filter(fx.a.hal, spoof_second, NULL);
	send_and_check(&fx, &x);
	cr_assert_eq(blue__engine_stats(fx.b.ctx)->rx_bad_src, 1);
	cr_assert_eq(blue__engine_stats(fx.b.ctx)->rx_malformed, 0, "it parsed fine");
	cr_assert_eq(fx.a.qp->live->retransmits, 1);
	xfer_fini(&x);
	rc_fx_fini(&fx);
}
