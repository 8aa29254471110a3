// SPDX-License-Identifier: MIT
/*
 * UC queue pairs between two contexts over the loopback HAL (IBA 9.7.5.1, 9.8.1): SEND
 * and WRITE, with and without immediate, from 1 byte to several path MTUs, bytes
 * compared; the requester uses the UC opcodes, never asks for an ACK, and the responder
 * never sends a frame (every frame each side sends is counted); a lost MIDDLE or LAST
 * drops that one message and the next arrives intact in the same receive WQE; no
 * receive WQE and a refused WRITE are dropped and counted, never answered; a WRITE
 * through a type 2 window bound and invalidated on the UC QP itself; the UC
 * attribute masks; READ and atomics refused at post time; wrong-transport drops.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/codec.h"
#include "runtime/device.h"
#include "runtime/progress.h"
#include "runtime/qp.h"
#include "tests/unit/rc_fixture.h"

#define MTU	1024u
#define BIG	(3 * MTU + 17)	/* four packets: FIRST MIDDLE MIDDLE LAST */

/* What one side put on the wire, and a PSN of it to lose. */
struct tap {
	int frames;		/* every frame it sent */
	int uc;			/* of them, UC request opcodes (0x20-0x2b) */
	int ackreq;		/* of them, with AckReq set */
	int64_t drop_psn;	/* lose the frame with this PSN once (-1: none) */
	int64_t dup_psn;	/* deliver the frame with this PSN twice, once (-1: none) */
	int dropped, duped;
};

static enum blue_lb_verdict tap_fn(void *arg, const struct blue_frame *f, uint64_t seq)
{
	struct tap *t = arg;
	struct blue_pkt p;

	(void)seq;
	t->frames++;
	if (blue_pkt_parse(f->data, f->len, &p))
		return BLUE_LB_PASS;
	if (p.opcode >= BLUE_OP_UC_SEND_FIRST && p.opcode <= BLUE_OP_UC_WRITE_ONLY_IMM)
		t->uc++;
	if (p.ackreq)
		t->ackreq++;
	if (t->drop_psn >= 0 && p.psn == (uint32_t)t->drop_psn && !t->dropped) {
		t->dropped++;
		return BLUE_LB_DROP;
	}
	if (t->dup_psn >= 0 && p.psn == (uint32_t)t->dup_psn && !t->duped) {
		t->duped++;
		return BLUE_LB_DUP;
	}
	return BLUE_LB_PASS;
}

struct uc_fx {
	struct rc_fx rc;
	struct rc_mem m;	/* A's source, B's sink (BIG * 4 bytes each) */
	struct tap ta, tb;
};

static struct blue_qp *uc_qp_create(struct rc_fx *fx, struct rc_side *s)
{
	struct blue_qp_init_attr ia = {
		.send_cq = s->scq,
		.recv_cq = s->rcq,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32, .max_send_sge = 2,
			 .max_recv_sge = 2, .max_inline_data = 64 },
		.qp_type = BLUE_QPT_UC,
	};

	(void)fx;
	s->qp = blue_create_qp(s->pd, &ia);
	cr_assert_not_null(s->qp, "create_qp UC: %s", strerror(errno));
	return s->qp;
}

/* RESET -> INIT -> RTR -> RTS with exactly what ibv_uc_pingpong passes. */
static void uc_qp_connect(struct rc_side *s, struct rc_side *peer, uint32_t access,
			  uint32_t sq_psn, uint32_t rq_psn)
{
	struct blue_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = BLUE_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = access;
	cr_assert_eq(blue_modify_qp(s->qp, &a, BLUE_QP_STATE | BLUE_QP_PKEY_INDEX |
				    BLUE_QP_PORT | BLUE_QP_ACCESS_FLAGS), 0, "UC to INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = BLUE_QPS_RTR;
	a.path_mtu = BLUE_MTU_1024;
	a.dest_qp_num = blue_qp_num(peer->qp);
	a.rq_psn = rq_psn;
	a.ah_attr.sgid_index = 1;
	a.ah_attr.port_num = 1;
	cr_assert_eq(blue_query_gid(peer->ctx, 1, 1, &a.ah_attr.dgid), 0);
	cr_assert_eq(blue_modify_qp(s->qp, &a, BLUE_QP_STATE | BLUE_QP_AV | BLUE_QP_PATH_MTU |
				    BLUE_QP_DEST_QPN | BLUE_QP_RQ_PSN), 0, "UC to RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = BLUE_QPS_RTS;
	a.sq_psn = sq_psn;
	cr_assert_eq(blue_modify_qp(s->qp, &a, BLUE_QP_STATE | BLUE_QP_SQ_PSN), 0,
		     "UC to RTS");
}

static void uc_fx_init(struct uc_fx *fx)
{
	const uint32_t acc = BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE;

	memset(fx, 0, sizeof(*fx));
	rc_fx_init_noqp(&fx->rc, NULL);
	uc_qp_create(&fx->rc, &fx->rc.a);
	uc_qp_create(&fx->rc, &fx->rc.b);
	uc_qp_connect(&fx->rc.a, &fx->rc.b, acc, 0x100, 0x200);
	uc_qp_connect(&fx->rc.b, &fx->rc.a, acc, 0x200, 0x100);
	rc_mem_init(&fx->m, &fx->rc.a, &fx->rc.b, 4 * BIG, 7, acc);
	fx->ta.drop_psn = fx->tb.drop_psn = -1;
	fx->ta.dup_psn = fx->tb.dup_psn = -1;
	blue_hal_loopback_set_filter(fx->rc.a.hal, tap_fn, &fx->ta);
	blue_hal_loopback_set_filter(fx->rc.b.hal, tap_fn, &fx->tb);
}

static void uc_fx_fini(struct uc_fx *fx)
{
	blue_hal_loopback_set_filter(fx->rc.a.hal, NULL, NULL);
	blue_hal_loopback_set_filter(fx->rc.b.hal, NULL, NULL);
	rc_mem_fini(&fx->m);
	rc_fx_fini(&fx->rc);
}

/* A posts @op of @len bytes from src + @off (to dst + @roff for a WRITE). */
static void a_post(struct uc_fx *fx, enum blue_wr_opcode op, uint64_t wr_id, uint32_t off,
		   uint32_t len, uint32_t roff, uint32_t imm)
{
	struct blue_sge sge = { .addr = (uintptr_t)fx->m.src + off, .length = len,
				.lkey = (fx->m.smr)->lkey };
	struct blue_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = op;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = BLUE_SEND_SIGNALED;
	wr.imm_data = htonl(imm);
	wr.wr.rdma.remote_addr = (uintptr_t)fx->m.dst + roff;
	wr.wr.rdma.rkey = (fx->m.dmr)->rkey;
	rc_post_send(&fx->rc.a, &wr);
}

/* A's send completion for @wr_id: success, @opcode (it comes without any ACK). */
static void a_sent(struct uc_fx *fx, uint64_t wr_id, enum blue_wc_opcode opcode)
{
	struct blue_wc wc = rc_wait1(&fx->rc, fx->rc.a.scq, RC_WAIT_MS);

	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "send status %s", blue_wc_status_str(wc.status));
	cr_assert_eq(wc.wr_id, wr_id);
	cr_assert_eq(wc.opcode, opcode);
}

/* B's receive completion: @wr_id, @opcode, @len bytes, immediate @imm when @has_imm. */
static void b_received(struct uc_fx *fx, uint64_t wr_id, enum blue_wc_opcode opcode,
		       uint32_t len, bool has_imm, uint32_t imm)
{
	struct blue_wc wc = rc_wait1(&fx->rc, fx->rc.b.rcq, RC_WAIT_MS);

	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "recv status %s", blue_wc_status_str(wc.status));
	cr_assert_eq(wc.wr_id, wr_id, "wr_id %llu, expected %llu",
		     (unsigned long long)wc.wr_id, (unsigned long long)wr_id);
	cr_assert_eq(wc.opcode, opcode);
	cr_assert_eq(wc.byte_len, len, "byte_len %u, expected %u", wc.byte_len, len);
	cr_assert_eq(wc.src_qp, blue_qp_num(fx->rc.a.qp));
	if (has_imm) {
		cr_assert(wc.wc_flags & BLUE_WC_WITH_IMM);
		cr_assert_eq(ntohl(wc.imm_data), imm);
	} else {
		cr_assert_not(wc.wc_flags & BLUE_WC_WITH_IMM);
	}
}

/* Packets a message of @len bytes takes at MTU. */
static int npkts(uint32_t len)
{
	return len ? (int)((len + MTU - 1) / MTU) : 1;
}

static const uint32_t sizes[] = { 1, 7, MTU - 1, MTU, MTU + 1, 2 * MTU, BIG };
#define NSIZES ((int)(sizeof(sizes) / sizeof(sizes[0])))

Test(uc, send_sizes_with_and_without_imm)
{
	struct uc_fx fx;
	int i, imm, expect = 0;

	uc_fx_init(&fx);
	for (imm = 0; imm < 2; imm++) {
		for (i = 0; i < NSIZES; i++) {
			uint32_t len = sizes[i], off = (uint32_t)i * 13;

			memset(fx.m.dst, 0, fx.m.len);
			rc_post_recv(&fx.rc.b, 100 + (uint64_t)i, fx.m.dst, BIG + 64,
				     (fx.m.dmr)->lkey);
			a_post(&fx, imm ? BLUE_WR_SEND_WITH_IMM : BLUE_WR_SEND, (uint64_t)i, off,
			       len, 0, 0xabc000u + (uint32_t)i);
			a_sent(&fx, (uint64_t)i, BLUE_WC_SEND);
			b_received(&fx, 100 + (uint64_t)i, BLUE_WC_RECV, len, imm,
				   0xabc000u + (uint32_t)i);
			cr_assert_eq(memcmp(fx.m.dst, fx.m.src + off, len), 0,
				     "SEND of %u bytes: bytes differ", len);
			cr_assert_eq(fx.m.dst[len], 0, "SEND of %u bytes wrote past its end", len);
			expect += npkts(len);
		}
	}
	cr_assert_eq(fx.ta.frames, expect, "A sent %d frames, the messages take %d",
		     fx.ta.frames, expect);
	cr_assert_eq(fx.ta.uc, expect, "every request uses a UC opcode");
	cr_assert_eq(fx.ta.ackreq, 0, "a UC request never asks for an ACK");
	cr_assert_eq(fx.tb.frames, 0, "the UC responder sent %d frames", fx.tb.frames);
	cr_assert_eq(fx.rc.a.qp->live->sq_psn, blue_psn_add(0x100, (uint32_t)expect));
	cr_assert_eq(fx.rc.b.qp->live->rq_psn, blue_psn_add(0x100, (uint32_t)expect));
	cr_assert_eq(fx.rc.a.qp->live->timer_deadline_ns, 0, "no retransmit timer");
	uc_fx_fini(&fx);
}

Test(uc, write_sizes_with_and_without_imm)
{
	struct uc_fx fx;
	uint32_t roff = 0;
	int i, imm, expect = 0;

	uc_fx_init(&fx);
	for (imm = 0; imm < 2; imm++) {
		for (i = 0; i < NSIZES; i++) {
			uint32_t len = sizes[i], off = (uint32_t)i * 5;

			if (imm)
				rc_post_recv(&fx.rc.b, 200 + (uint64_t)i, NULL, 0, 0);
			a_post(&fx, imm ? BLUE_WR_RDMA_WRITE_WITH_IMM : BLUE_WR_RDMA_WRITE,
			       (uint64_t)i, off, len, roff, 0x5000u + (uint32_t)i);
			a_sent(&fx, (uint64_t)i, BLUE_WC_RDMA_WRITE);
			if (imm) {
				b_received(&fx, 200 + (uint64_t)i, BLUE_WC_RECV_RDMA_WITH_IMM, len,
					   true, 0x5000u + (uint32_t)i);
			} else {
				/* no completion at B: wait until the last byte is there */
				for (int n = 0; n < 1000 && fx.m.dst[roff + len - 1] !=
				     fx.m.src[off + len - 1]; n++)
					rc_progress(&fx.rc);
			}
			cr_assert_eq(memcmp(fx.m.dst + roff, fx.m.src + off, len), 0,
				     "WRITE of %u bytes: bytes differ", len);
			roff += len;
			if (roff + BIG > fx.m.len)
				roff = 0;
			expect += npkts(len);
		}
	}
	cr_assert_eq(fx.ta.frames, expect);
	cr_assert_eq(fx.ta.uc, expect);
	cr_assert_eq(fx.ta.ackreq, 0);
	cr_assert_eq(fx.tb.frames, 0, "the UC responder sent %d frames", fx.tb.frames);
	uc_fx_fini(&fx);
}

/* A SEND of BIG bytes whose packet at PSN @lose is lost; then a second one, intact. */
static void lost_packet_send(uint32_t lose)
{
	struct uc_fx fx;

	uc_fx_init(&fx);
	fx.ta.drop_psn = lose;
	rc_post_recv(&fx.rc.b, 1, fx.m.dst, BIG, (fx.m.dmr)->lkey);
	rc_post_recv(&fx.rc.b, 2, fx.m.dst + BIG, BIG, (fx.m.dmr)->lkey);
	a_post(&fx, BLUE_WR_SEND, 10, 0, BIG, 0, 0);
	a_post(&fx, BLUE_WR_SEND_WITH_IMM, 11, BIG, BIG, 0, 0x77);
	a_sent(&fx, 10, BLUE_WC_SEND);	/* the sender never knows */
	a_sent(&fx, 11, BLUE_WC_SEND);
	cr_assert_eq(fx.ta.dropped, 1);
	/* the first receive WQE is not completed in error: the second message fills it */
	b_received(&fx, 1, BLUE_WC_RECV, BIG, true, 0x77);
	cr_assert_eq(memcmp(fx.m.dst, fx.m.src + BIG, BIG), 0, "the second message's bytes");
	rc_quiet(&fx.rc, fx.rc.b.rcq, 20);	/* WQE 2 is still posted, unfilled */
	cr_assert_eq(fx.rc.b.qp->live->uc_drop_seq, lose == 0x103 ? 1u : 2u,
		     "uc_drop_seq %u", fx.rc.b.qp->live->uc_drop_seq);
	cr_assert_eq(blue__engine_stats(fx.rc.b.ctx)->rx_uc_dropped,
		     fx.rc.b.qp->live->uc_drop_seq);
	cr_assert_eq(fx.rc.b.qp->live->state, BLUE_QPS_RTS, "a loss is no error");
	cr_assert_eq(fx.tb.frames, 0, "no NAK, no ACK");
	/* and the next one lands in WQE 2 */
	a_post(&fx, BLUE_WR_SEND, 12, 100, 2 * MTU, 0, 0);
	a_sent(&fx, 12, BLUE_WC_SEND);
	b_received(&fx, 2, BLUE_WC_RECV, 2 * MTU, false, 0);
	cr_assert_eq(memcmp(fx.m.dst + BIG, fx.m.src + 100, 2 * MTU), 0);
	cr_assert_eq(fx.tb.frames, 0);
	uc_fx_fini(&fx);
}

/* MIDDLE lost: the next MIDDLE and the LAST are discarded (2), the next FIRST begins. */
Test(uc, lost_middle_drops_one_message)
{
	lost_packet_send(0x101);
}

/* LAST lost: the next message's FIRST abandons the open one (counted once). */
Test(uc, lost_last_drops_one_message)
{
	lost_packet_send(0x103);
}

Test(uc, lost_middle_of_write_with_imm)
{
	struct uc_fx fx;

	uc_fx_init(&fx);
	fx.ta.drop_psn = 0x102;
	rc_post_recv(&fx.rc.b, 1, NULL, 0, 0);
	a_post(&fx, BLUE_WR_RDMA_WRITE_WITH_IMM, 10, 0, BIG, 0, 0x1);
	a_post(&fx, BLUE_WR_RDMA_WRITE_WITH_IMM, 11, BIG, BIG, BIG, 0x2);
	a_sent(&fx, 10, BLUE_WC_RDMA_WRITE);
	a_sent(&fx, 11, BLUE_WC_RDMA_WRITE);
	/* the receive WQE goes to the second WRITE: the first never completed */
	b_received(&fx, 1, BLUE_WC_RECV_RDMA_WITH_IMM, BIG, true, 0x2);
	cr_assert_eq(memcmp(fx.m.dst + BIG, fx.m.src + BIG, BIG), 0);
	/* the first's packets after the hole did not land (its tail stays zero) */
	cr_assert_eq(fx.m.dst[BIG - 1], 0);
	cr_assert_eq(fx.rc.b.qp->live->uc_drop_seq, 1u);
	cr_assert_eq(fx.tb.frames, 0);
	uc_fx_fini(&fx);
}

Test(uc, duplicate_first_restarts_the_message)
{
	struct uc_fx fx;

	uc_fx_init(&fx);
	fx.ta.dup_psn = 0x100;	/* FIRST, FIRST again, MIDDLE, MIDDLE, LAST */
	rc_post_recv(&fx.rc.b, 1, fx.m.dst, BIG, (fx.m.dmr)->lkey);
	rc_post_recv(&fx.rc.b, 2, fx.m.dst + BIG, BIG, (fx.m.dmr)->lkey);
	a_post(&fx, BLUE_WR_SEND, 10, 0, BIG, 0, 0);
	a_sent(&fx, 10, BLUE_WC_SEND);
	b_received(&fx, 1, BLUE_WC_RECV, BIG, false, 0);
	cr_assert_eq(fx.ta.duped, 1);
	cr_assert_eq(memcmp(fx.m.dst, fx.m.src, BIG), 0);
	cr_assert_eq(fx.rc.b.qp->live->uc_drop_seq, 1u, "the first copy's message, abandoned");
	rc_quiet(&fx.rc, fx.rc.b.rcq, 20);
	uc_fx_fini(&fx);
}

Test(uc, no_wqe_dropped_counted_no_rnr)
{
	struct uc_fx fx;

	uc_fx_init(&fx);
	a_post(&fx, BLUE_WR_SEND, 10, 0, BIG, 0, 0);
	a_sent(&fx, 10, BLUE_WC_SEND);
	for (int i = 0; i < 20 && fx.rc.b.qp->live->rx_pkts < 4; i++)
		rc_progress(&fx.rc);
	cr_assert_eq(fx.rc.b.qp->live->rx_pkts, 4);
	/* the FIRST found no WQE, the other three belong to the dropped message */
	cr_assert_eq(fx.rc.b.qp->live->uc_no_wqe, 1u);
	cr_assert_eq(fx.rc.b.qp->live->uc_drop_seq, 3u);
	cr_assert_eq(fx.tb.frames, 0, "no RNR NAK");
	cr_assert_eq(fx.rc.a.qp->live->rnr_events, 0);
	/* posted now, the next message arrives */
	rc_post_recv(&fx.rc.b, 1, fx.m.dst, BIG, (fx.m.dmr)->lkey);
	a_post(&fx, BLUE_WR_SEND, 11, 3, BIG, 0, 0);
	a_sent(&fx, 11, BLUE_WC_SEND);
	b_received(&fx, 1, BLUE_WC_RECV, BIG, false, 0);
	cr_assert_eq(memcmp(fx.m.dst, fx.m.src + 3, BIG), 0);
	uc_fx_fini(&fx);
}

Test(uc, write_access_violations_dropped_counted)
{
	struct uc_fx fx;
	struct blue_sge sge;
	struct blue_send_wr wr;

	uc_fx_init(&fx);
	/* a bad R_Key, then out of the MR's range: nothing lands, nothing answers */
	memset(&wr, 0, sizeof(wr));
	sge = (struct blue_sge){ .addr = (uintptr_t)fx.m.src, .length = 2 * MTU,
				 .lkey = (fx.m.smr)->lkey };
	wr.wr_id = 1;
	wr.opcode = BLUE_WR_RDMA_WRITE;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = BLUE_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)fx.m.dst;
	wr.wr.rdma.rkey = (fx.m.dmr)->rkey ^ 0x80;
	rc_post_send(&fx.rc.a, &wr);
	a_sent(&fx, 1, BLUE_WC_RDMA_WRITE);
	wr.wr_id = 2;
	wr.wr.rdma.rkey = (fx.m.dmr)->rkey;
	wr.wr.rdma.remote_addr = (uintptr_t)fx.m.dst + fx.m.len - MTU;
	rc_post_send(&fx.rc.a, &wr);
	a_sent(&fx, 2, BLUE_WC_RDMA_WRITE);
	for (int i = 0; i < 20 && fx.rc.b.qp->live->rx_pkts < 4; i++)
		rc_progress(&fx.rc);
	cr_assert_eq(fx.rc.b.qp->live->rx_pkts, 4);
	cr_assert_eq(fx.rc.b.qp->live->uc_drop_access, 2u);
	cr_assert_eq(fx.rc.b.qp->live->uc_drop_seq, 2u, "each LAST went with its FIRST");
	for (uint32_t i = 0; i < fx.m.len; i++)
		cr_assert_eq(fx.m.dst[i], 0, "byte %u was written", i);
	cr_assert_eq(fx.tb.frames, 0, "no NAK");
	cr_assert_eq(fx.rc.b.qp->live->state, BLUE_QPS_RTS);
	/* the next good WRITE lands */
	a_post(&fx, BLUE_WR_RDMA_WRITE_WITH_IMM, 3, 0, BIG, 0, 9);
	rc_post_recv(&fx.rc.b, 7, NULL, 0, 0);
	a_sent(&fx, 3, BLUE_WC_RDMA_WRITE);
	b_received(&fx, 7, BLUE_WC_RECV_RDMA_WITH_IMM, BIG, true, 9);
	cr_assert_eq(memcmp(fx.m.dst, fx.m.src, BIG), 0);
	uc_fx_fini(&fx);
}

Test(uc, write_without_remote_write_right_dropped)
{
	struct uc_fx fx;
	struct blue_qp_attr a;

	uc_fx_init(&fx);
	memset(&a, 0, sizeof(a));
	a.qp_access_flags = BLUE_ACCESS_LOCAL_WRITE;
	cr_assert_eq(blue_modify_qp(fx.rc.b.qp, &a, BLUE_QP_ACCESS_FLAGS), 0,
		     "RTS->RTS takes access flags");
	a_post(&fx, BLUE_WR_RDMA_WRITE, 1, 0, 100, 0, 0);
	a_sent(&fx, 1, BLUE_WC_RDMA_WRITE);
	for (int i = 0; i < 20 && fx.rc.b.qp->live->rx_pkts < 1; i++)
		rc_progress(&fx.rc);
	cr_assert_eq(fx.rc.b.qp->live->uc_drop_access, 1u);
	cr_assert_eq(fx.m.dst[0], 0);
	cr_assert_eq(fx.tb.frames, 0);
	uc_fx_fini(&fx);
}

Test(uc, post_refuses_read_and_atomics)
{
	struct uc_fx fx;
	struct blue_sge sge;
	struct blue_send_wr wr, *bad;
	/* and SEND with invalidate: UC has no opcode for it */
	const enum blue_wr_opcode ops[] = { BLUE_WR_RDMA_READ, BLUE_WR_ATOMIC_CMP_AND_SWP,
					    BLUE_WR_ATOMIC_FETCH_AND_ADD, BLUE_WR_SEND_WITH_INV };

	uc_fx_init(&fx);
	sge = (struct blue_sge){ .addr = (uintptr_t)fx.m.src, .length = 8,
				 .lkey = (fx.m.smr)->lkey };
	for (unsigned int i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		memset(&wr, 0, sizeof(wr));
		wr.opcode = ops[i];
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.wr.rdma.rkey = (fx.m.dmr)->rkey;
		wr.wr.rdma.remote_addr = (uintptr_t)fx.m.dst;
		bad = NULL;
		cr_assert_eq(blue_post_send(fx.rc.a.qp, &wr, &bad), EINVAL, "opcode %d", ops[i]);
		cr_assert_eq(bad, &wr);
	}
	cr_assert_eq(fx.rc.a.qp->live->outstanding, 0);
	uc_fx_fini(&fx);
}

Test(uc, attribute_masks_and_query)
{
	struct rc_fx fx;
	struct blue_qp_attr a, q;
	struct blue_qp_init_attr ia;
	struct blue_qp *qp;
	const uint32_t rtr = BLUE_QP_STATE | BLUE_QP_AV | BLUE_QP_PATH_MTU | BLUE_QP_DEST_QPN |
			     BLUE_QP_RQ_PSN;

	rc_fx_init_noqp(&fx, NULL);
	qp = uc_qp_create(&fx, &fx.a);
	uc_qp_create(&fx, &fx.b);
	memset(&a, 0, sizeof(a));
	a.qp_state = BLUE_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = BLUE_ACCESS_REMOTE_WRITE;
	cr_assert_eq(blue_modify_qp(qp, &a, BLUE_QP_STATE | BLUE_QP_PKEY_INDEX | BLUE_QP_PORT),
		     EINVAL, "RESET->INIT needs the access flags");
	cr_assert_eq(blue_modify_qp(qp, &a, BLUE_QP_STATE | BLUE_QP_PKEY_INDEX | BLUE_QP_PORT |
				    BLUE_QP_ACCESS_FLAGS | BLUE_QP_QKEY), EINVAL,
		     "a UC QP has no Q_Key");
	cr_assert_eq(blue_modify_qp(qp, &a, BLUE_QP_STATE | BLUE_QP_PKEY_INDEX | BLUE_QP_PORT |
				    BLUE_QP_ACCESS_FLAGS), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = BLUE_QPS_RTR;
	a.path_mtu = BLUE_MTU_1024;
	a.dest_qp_num = blue_qp_num(fx.b.qp);
	a.rq_psn = 0x33;
	a.ah_attr.sgid_index = 1;
	a.ah_attr.port_num = 1;
	cr_assert_eq(blue_query_gid(fx.b.ctx, 1, 1, &a.ah_attr.dgid), 0);
	/* what RC needs at RTR, UC refuses: no responder resources, no RNR timer */
	cr_assert_eq(blue_modify_qp(qp, &a, rtr | BLUE_QP_MAX_DEST_RD_ATOMIC), EINVAL);
	cr_assert_eq(blue_modify_qp(qp, &a, rtr | BLUE_QP_MIN_RNR_TIMER), EINVAL);
	cr_assert_eq(blue_modify_qp(qp, &a, rtr & ~BLUE_QP_RQ_PSN), EINVAL, "needs RQ_PSN");
	cr_assert_eq(blue_modify_qp(qp, &a, rtr), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = BLUE_QPS_RTS;
	a.sq_psn = 0x44;
	a.timeout = 14;
	a.retry_cnt = 7;
	cr_assert_eq(blue_modify_qp(qp, &a, BLUE_QP_STATE | BLUE_QP_SQ_PSN | BLUE_QP_TIMEOUT),
		     EINVAL, "no ACK timeout");
	cr_assert_eq(blue_modify_qp(qp, &a, BLUE_QP_STATE | BLUE_QP_SQ_PSN | BLUE_QP_RETRY_CNT),
		     EINVAL, "no retry count");
	cr_assert_eq(blue_modify_qp(qp, &a, BLUE_QP_STATE | BLUE_QP_SQ_PSN | BLUE_QP_RNR_RETRY),
		     EINVAL, "no RNR retry");
	cr_assert_eq(blue_modify_qp(qp, &a, BLUE_QP_STATE | BLUE_QP_SQ_PSN |
				    BLUE_QP_MAX_QP_RD_ATOMIC), EINVAL, "no READ/atomic depth");
	cr_assert_eq(blue_modify_qp(qp, &a, BLUE_QP_STATE), EINVAL, "needs SQ_PSN");
	cr_assert_eq(blue_modify_qp(qp, &a, BLUE_QP_STATE | BLUE_QP_SQ_PSN), 0);
	cr_assert_eq(blue_query_qp(qp, &q, 0, &ia), 0);
	cr_assert_eq(q.qp_state, BLUE_QPS_RTS);
	cr_assert_eq(q.sq_psn, 0x44);
	cr_assert_eq(q.rq_psn, 0x33);
	cr_assert_eq(q.dest_qp_num, blue_qp_num(fx.b.qp));
	cr_assert_eq(ia.qp_type, BLUE_QPT_UC);
	cr_assert_eq(qp->live->type, BLUE_QPT_UC);
	/* RESET keeps it a UC QP */
	a.qp_state = BLUE_QPS_RESET;
	cr_assert_eq(blue_modify_qp(qp, &a, BLUE_QP_STATE), 0);
	cr_assert_eq(qp->live->type, BLUE_QPT_UC);
	rc_fx_fini(&fx);
}

Test(uc, wrong_transport_both_ways)
{
	struct uc_fx fx;
	struct blue_send_wr wr;
	struct blue_qp *uc_b;
	struct blue_qp_ctx *live;

	uc_fx_init(&fx);
	/* B gets an RC QP besides its UC one, "connected" to A's UC QP */
	uc_b = fx.rc.b.qp;
	rc_qp_create(&fx.rc, &fx.rc.b);
	rc_qp_connect(&fx.rc, &fx.rc.b, &fx.rc.a, 0x300, 0x400);
	live = uc_b->live;
	/* an RC SEND to A's UC QP: dropped and counted at A */
	memset(&wr, 0, sizeof(wr));
	wr.opcode = BLUE_WR_SEND;
	wr.wr_id = 1;
	rc_post_send(&fx.rc.b, &wr);
	for (int i = 0; i < 20 && !blue__engine_stats(fx.rc.a.ctx)->rx_wrong_transport; i++)
		rc_progress(&fx.rc);
	cr_assert_eq(blue__engine_stats(fx.rc.a.ctx)->rx_wrong_transport, 1);
	cr_assert_eq(fx.rc.a.qp->live->rx_pkts, 0, "never reached the UC responder");
	/* a UC SEND from A's UC QP to B's RC QP (A's peer is B's UC QP: re-aim it) */
	fx.rc.a.qp->live->peer_qpn = blue_qp_num(fx.rc.b.qp);
	a_post(&fx, BLUE_WR_SEND, 2, 0, 10, 0, 0);
	a_sent(&fx, 2, BLUE_WC_SEND);
	for (int i = 0; i < 20 && blue__engine_stats(fx.rc.b.ctx)->rx_wrong_transport < 1; i++)
		rc_progress(&fx.rc);
	cr_assert_eq(blue__engine_stats(fx.rc.b.ctx)->rx_wrong_transport, 1);
	cr_assert_eq(live->rx_pkts, 0);
	cr_assert_eq(blue_destroy_qp(uc_b), 0);
	uc_fx_fini(&fx);
}

/* A receive WQE of an SRQ a dropped SEND was filling is reused, not completed. */
Test(uc, lost_middle_with_srq_reuses_the_wqe)
{
	struct rc_fx fx;
	struct rc_mem m;
	struct tap ta = { .drop_psn = 0x101, .dup_psn = -1 };
	struct blue_srq_attr sa = { .max_wr = 8, .max_sge = 1 };
	struct blue_qp_init_attr ia;
	struct blue_srq *srq;
	struct blue_sge sge;
	struct blue_recv_wr rwr, *rbad;
	struct blue_send_wr wr;
	struct blue_wc wc;
	const uint32_t acc = BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE;

	rc_fx_init_noqp(&fx, NULL);
	srq = blue_create_srq(fx.b.pd, &sa, NULL);
	cr_assert_not_null(srq);
	uc_qp_create(&fx, &fx.a);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = fx.b.scq;
	ia.recv_cq = fx.b.rcq;
	ia.srq = srq;
	ia.cap.max_send_wr = 4;
	ia.cap.max_send_sge = 1;
	ia.qp_type = BLUE_QPT_UC;
	fx.b.qp = blue_create_qp(fx.b.pd, &ia);
	cr_assert_not_null(fx.b.qp);
	uc_qp_connect(&fx.a, &fx.b, acc, 0x100, 0x200);
	uc_qp_connect(&fx.b, &fx.a, acc, 0x200, 0x100);
	rc_mem_init(&m, &fx.a, &fx.b, 2 * BIG, 3, acc);
	blue_hal_loopback_set_filter(fx.a.hal, tap_fn, &ta);
	for (int i = 0; i < 2; i++) {
		sge = (struct blue_sge){ .addr = (uintptr_t)m.dst + (uint32_t)i * BIG,
					 .length = BIG, .lkey = (m.dmr)->lkey };
		rwr = (struct blue_recv_wr){ .wr_id = 50 + (uint64_t)i, .sg_list = &sge,
					     .num_sge = 1 };
		cr_assert_eq(blue_post_srq_recv(srq, &rwr, &rbad), 0);
	}
	for (int i = 0; i < 2; i++) {
		sge = (struct blue_sge){ .addr = (uintptr_t)m.src + (uint32_t)i * BIG,
					 .length = BIG, .lkey = (m.smr)->lkey };
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = (uint64_t)i;
		wr.opcode = BLUE_WR_SEND;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		rc_post_send(&fx.a, &wr);
	}
	wc = rc_wait1(&fx, fx.b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 50, "the WQE the dropped message held is the one completed");
	cr_assert_eq(wc.byte_len, BIG);
	cr_assert_eq(memcmp(m.dst, m.src + BIG, BIG), 0);
	rc_quiet(&fx, fx.b.rcq, 20);
	blue_hal_loopback_set_filter(fx.a.hal, NULL, NULL);
	rc_mem_fini(&m);
	cr_assert_eq(blue_destroy_qp(fx.b.qp), 0);
	fx.b.qp = NULL;
	cr_assert_eq(blue_destroy_srq(srq), 0);
	rc_fx_fini(&fx);
}

/* libblue's own CM connects UC QPs too: UC's masks at RTR and RTS, then data. */
Test(uc, cm_connects_uc_qps)
{
	struct rc_fx fx;
	struct rc_mem m;
	struct blue_cm_info ia, ib;
	struct blue_cm_qp_attr qa;
	struct blue_qp_attr q;
	struct blue_send_wr wr;
	struct blue_sge sge;
	struct blue_wc wc;

	rc_fx_init_noqp(&fx, NULL);
	uc_qp_create(&fx, &fx.a);
	uc_qp_create(&fx, &fx.b);
	cr_assert_eq(blue_cm_info_from_qp(fx.a.ctx, fx.a.qp, 1, &ia), 0);
	cr_assert_eq(blue_cm_info_from_qp(fx.b.ctx, fx.b.qp, 1, &ib), 0);
	cr_assert_eq(ia.transport, BLUE_QPT_UC);
	blue_cm_qp_attr_default(&qa);
	qa.access = BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE;
	cr_assert_eq(blue_cm_connect_qp(fx.a.ctx, fx.a.qp, ia.psn, &ib, &qa), 0, "%s",
		     blue_cm_last_error());
	cr_assert_eq(blue_cm_connect_qp(fx.b.ctx, fx.b.qp, ib.psn, &ia, &qa), 0, "%s",
		     blue_cm_last_error());
	cr_assert_eq(blue_query_qp(fx.b.qp, &q, 0, NULL), 0);
	cr_assert_eq(q.qp_state, BLUE_QPS_RTS);
	cr_assert_eq(q.rq_psn, ia.psn);
	rc_mem_init(&m, &fx.a, &fx.b, BIG, 5, qa.access);
	rc_post_recv(&fx.b, 3, m.dst, BIG, m.dmr->lkey);
	sge = (struct blue_sge){ .addr = (uintptr_t)m.src, .length = BIG, .lkey = m.smr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 4;
	wr.opcode = BLUE_WR_SEND;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	rc_post_send(&fx.a, &wr);
	wc = rc_wait1(&fx, fx.b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	cr_assert_eq(wc.byte_len, BIG);
	cr_assert_eq(memcmp(m.dst, m.src, BIG), 0);
	rc_mem_fini(&m);
	rc_fx_fini(&fx);
}

/* Two UC QPs of one context (loopback, as rxe's): the frames never reach the HAL. */
Test(uc, loopback_within_one_context)
{
	struct rc_fx fx;
	struct rc_mem m;
	struct blue_send_wr wr;
	struct blue_sge sge;
	struct blue_wc wc;
	const uint32_t acc = BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE;

	rc_fx_init_self_noqp(&fx, NULL);
	uc_qp_create(&fx, &fx.a);
	uc_qp_create(&fx, &fx.b);
	uc_qp_connect(&fx.a, &fx.b, acc, 0x10, 0x20);
	uc_qp_connect(&fx.b, &fx.a, acc, 0x20, 0x10);
	rc_mem_init(&m, &fx.a, &fx.b, BIG, 9, acc);
	rc_post_recv(&fx.b, 5, m.dst, BIG, m.dmr->lkey);
	sge = (struct blue_sge){ .addr = (uintptr_t)m.src, .length = BIG, .lkey = m.smr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 6;
	wr.opcode = BLUE_WR_SEND_WITH_IMM;
	wr.imm_data = htonl(0xfeed);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = BLUE_SEND_SIGNALED;
	rc_post_send(&fx.a, &wr);
	wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	wc = rc_wait1(&fx, fx.b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 5);
	cr_assert_eq(wc.byte_len, BIG);
	cr_assert_eq(ntohl(wc.imm_data), 0xfeed);
	cr_assert_eq(memcmp(m.dst, m.src, BIG), 0);
	cr_assert_geq(blue__engine_stats(fx.a.ctx)->tx_loopback, 4);
	rc_mem_fini(&m);
	rc_fx_fini(&fx);
}

/* A SEND longer than the receive buffer: dropped (class D), the WQE takes the next one. */
Test(uc, send_longer_than_the_buffer_dropped_wqe_reused)
{
	struct uc_fx fx;

	uc_fx_init(&fx);
	rc_post_recv(&fx.rc.b, 1, fx.m.dst, 2 * MTU, fx.m.dmr->lkey);
	a_post(&fx, BLUE_WR_SEND, 10, 0, BIG, 0, 0);		/* 4 packets into 2 KiB */
	a_post(&fx, BLUE_WR_SEND, 11, 50, 2 * MTU, 0, 0);	/* fits */
	a_sent(&fx, 10, BLUE_WC_SEND);
	a_sent(&fx, 11, BLUE_WC_SEND);
	b_received(&fx, 1, BLUE_WC_RECV, 2 * MTU, false, 0);
	cr_assert_eq(memcmp(fx.m.dst, fx.m.src + 50, 2 * MTU), 0);
	cr_assert_eq(fx.rc.b.qp->live->uc_drop_len, 1u, "the third packet did not fit");
	cr_assert_eq(fx.rc.b.qp->live->uc_drop_seq, 1u, "the LAST went with it");
	cr_assert_eq(fx.rc.b.qp->live->state, BLUE_QPS_RTS);
	cr_assert_eq(fx.tb.frames, 0);
	uc_fx_fini(&fx);
}

/* A send WQE whose SGE is not registered fails locally: LOC_PROT_ERR, the QP to ERROR. */
Test(uc, bad_lkey_fails_the_send_and_errors_the_qp)
{
	struct uc_fx fx;
	struct blue_sge sge;
	struct blue_send_wr wr;
	struct blue_wc wc;

	uc_fx_init(&fx);
	sge = (struct blue_sge){ .addr = (uintptr_t)fx.m.src, .length = 100,
				 .lkey = fx.m.smr->lkey ^ 0x40 };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.opcode = BLUE_WR_SEND;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	rc_post_send(&fx.rc.a, &wr);
	a_post(&fx, BLUE_WR_SEND, 2, 0, 10, 0, 0);
	wc = rc_wait1(&fx.rc, fx.rc.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.wr_id, 1);
	cr_assert_eq(wc.status, BLUE_WC_LOC_PROT_ERR, "%s", blue_wc_status_str(wc.status));
	wc = rc_wait1(&fx.rc, fx.rc.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.wr_id, 2);
	cr_assert_eq(wc.status, BLUE_WC_WR_FLUSH_ERR);
	cr_assert_eq(fx.rc.a.qp->live->state, BLUE_QPS_ERR);
	cr_assert_eq(fx.ta.frames, 0, "nothing left");
	uc_fx_fini(&fx);
}

/* A receive WQE whose SGE is not registered is a local error at the responder. */
Test(uc, bad_receive_lkey_is_a_local_error)
{
	struct uc_fx fx;
	struct blue_wc wc;

	uc_fx_init(&fx);
	rc_post_recv(&fx.rc.b, 1, fx.m.dst, BIG, fx.m.dmr->lkey ^ 0x40);
	a_post(&fx, BLUE_WR_SEND, 10, 0, 100, 0, 0);
	a_sent(&fx, 10, BLUE_WC_SEND);
	wc = rc_wait1(&fx.rc, fx.rc.b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.wr_id, 1);
	cr_assert_eq(wc.status, BLUE_WC_LOC_PROT_ERR, "%s", blue_wc_status_str(wc.status));
	cr_assert_eq(fx.rc.b.qp->live->state, BLUE_QPS_ERR);
	cr_assert_eq(fx.tb.frames, 0, "no NAK");
	uc_fx_fini(&fx);
}

/* B's UC QP posts @op (BIND_MW of @mw over [@buf, + @len), or LOCAL_INV of @rkey). */
static void b_mw_op(struct uc_fx *fx, enum blue_wr_opcode op, struct blue_mw *mw,
		    struct blue_mr *mr, void *buf, uint32_t len, uint32_t rkey)
{
	struct blue_send_wr wr, *bad;
	struct blue_wc wc;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 40 + op;
	wr.opcode = op;
	wr.send_flags = BLUE_SEND_SIGNALED;
	if (op == BLUE_WR_BIND_MW) {
		wr.wr.bind_mw.mw = mw;
		wr.wr.bind_mw.rkey = rkey;
		wr.wr.bind_mw.bind_info = (struct blue_mw_bind_info){
			.mr = mr, .addr = (uintptr_t)buf, .length = len,
			.mw_access_flags = BLUE_ACCESS_REMOTE_WRITE,
		};
	} else {
		wr.invalidate_rkey = rkey;
	}
	cr_assert_eq(blue_post_send(fx->rc.b.qp, &wr, &bad), 0, "post %d on UC", op);
	wc = rc_wait1(&fx->rc, fx->rc.b.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "%d: %s", op, blue_wc_status_str(wc.status));
	cr_assert_eq(wc.wr_id, 40 + op);
}

/* A WRITE through a type 2 window's R_Key lands (the window resolves to its MR, as for
 * RC); once the window is invalidated the same WRITE is dropped and counted, and the
 * memory behind it is untouched. */
Test(uc, write_through_a_memory_window)
{
	const uint32_t acc = BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_MW_BIND;
	struct blue_send_wr wr;
	struct blue_sge sge;
	struct blue_mr *wmr;
	struct blue_mw *mw;
	struct uc_fx fx;
	uint8_t *win;
	uint32_t key;

	uc_fx_init(&fx);
	win = calloc(1, BIG);
	cr_assert_not_null(win);
	wmr = blue_reg_mr(fx.rc.b.pd, win, BIG, acc);
	cr_assert_not_null(wmr, "reg_mr MW_BIND: %s", strerror(errno));
	mw = blue_alloc_mw(fx.rc.b.pd, BLUE_MW_TYPE_2);
	cr_assert_not_null(mw, "alloc_mw: %s", strerror(errno));
	key = (mw->rkey & ~0xffu) | ((mw->rkey + 1) & 0xffu);
	b_mw_op(&fx, BLUE_WR_BIND_MW, mw, wmr, win, BIG, key);
	cr_assert_eq(mw->rkey, key);

	memset(&wr, 0, sizeof(wr));
	sge = (struct blue_sge){ .addr = (uintptr_t)fx.m.src, .length = BIG,
				 .lkey = (fx.m.smr)->lkey };
	wr.wr_id = 1;
	wr.opcode = BLUE_WR_RDMA_WRITE;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = BLUE_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)win;
	wr.wr.rdma.rkey = key;
	rc_post_send(&fx.rc.a, &wr);
	a_sent(&fx, 1, BLUE_WC_RDMA_WRITE);
	for (int i = 0; i < 20 && fx.rc.b.qp->live->rx_pkts < (uint64_t)npkts(BIG); i++)
		rc_progress(&fx.rc);
	cr_assert_eq(fx.rc.b.qp->live->uc_drop_access, 0u, "the window's key was refused");
	cr_assert_eq(memcmp(win, fx.m.src, BIG), 0, "the WRITE through the window landed");

	b_mw_op(&fx, BLUE_WR_LOCAL_INV, NULL, NULL, NULL, 0, key);
	sge.addr = (uintptr_t)fx.m.src + BIG;	/* other bytes: a landing would show */
	wr.wr_id = 2;
	rc_post_send(&fx.rc.a, &wr);
	a_sent(&fx, 2, BLUE_WC_RDMA_WRITE);
	for (int i = 0; i < 20 && fx.rc.b.qp->live->rx_pkts < 2u * npkts(BIG); i++)
		rc_progress(&fx.rc);
	cr_assert_eq(fx.rc.b.qp->live->rx_pkts, 2u * npkts(BIG));
	cr_assert_eq(fx.rc.b.qp->live->uc_drop_access, 1u, "the invalidated key was taken");
	cr_assert_eq(memcmp(win, fx.m.src, BIG), 0, "memory behind a dead window changed");
	cr_assert_eq(fx.tb.frames, 0, "no NAK");
	cr_assert_eq(blue_dealloc_mw(mw), 0);
	cr_assert_eq(blue_dereg_mr(wmr), 0);
	free(win);
	uc_fx_fini(&fx);
}
