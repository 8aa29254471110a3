// SPDX-License-Identifier: MIT
/*
 * RC SEND and RDMA WRITE between two contexts over the loopback HAL: every flavour
 * (immediate, several SGEs, inline, unsignaled) at 1 B, 4 KiB and 1 MiB, bytes
 * compared; and PSN wraparound.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/progress.h"
#include "runtime/qp.h"
#include "tests/unit/rc_fixture.h"

#define MiB (1u << 20)

struct bufs {
	uint8_t *src, *dst;
	struct blue_mr *smr, *dmr;
	size_t len;
};

static void bufs_init(struct rc_fx *fx, struct bufs *b, size_t len, unsigned int seed)
{
	unsigned int rw = BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE |
			  BLUE_ACCESS_REMOTE_READ;

	b->len = len;
	b->src = malloc(len + 64);
	b->dst = calloc(1, len + 64);
	cr_assert(b->src && b->dst);
	rc_fill(b->src, len + 64, seed);
	b->smr = blue_reg_mr(fx->a.pd, b->src, len + 64, rw);
	b->dmr = blue_reg_mr(fx->b.pd, b->dst, len + 64, rw);
	cr_assert(b->smr && b->dmr);
}

static void bufs_fini(struct bufs *b)
{
	cr_assert_eq(blue_dereg_mr(b->smr), 0);
	cr_assert_eq(blue_dereg_mr(b->dmr), 0);
	free(b->src);
	free(b->dst);
}

/* A SEND of @len bytes from A to B with one SGE; checks both completions and bytes. */
static void send_once(size_t len, bool imm)
{
	struct rc_fx fx;
	struct bufs b;
	struct blue_sge sge;
	struct blue_send_wr wr;
	struct blue_wc wc;

	rc_fx_init(&fx, NULL);
	bufs_init(&fx, &b, len, 7);
	rc_post_recv(&fx.b, 99, b.dst, (uint32_t)len, b.dmr->lkey);
	sge = (struct blue_sge){ .addr = (uintptr_t)b.src, .length = (uint32_t)len,
				 .lkey = b.smr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = imm ? BLUE_WR_SEND_WITH_IMM : BLUE_WR_SEND;
	wr.send_flags = BLUE_SEND_SIGNALED;
	wr.imm_data = htonl(0xdeadbeef);
	rc_post_send(&fx.a, &wr);

	wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "send: %s", blue_wc_status_str(wc.status));
	cr_assert_eq(wc.wr_id, 1);
	cr_assert_eq(wc.opcode, BLUE_WC_SEND);
	cr_assert_eq(wc.qp_num, blue_qp_num(fx.a.qp));
	wc = rc_wait1(&fx, fx.b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "recv: %s", blue_wc_status_str(wc.status));
	cr_assert_eq(wc.wr_id, 99);
	cr_assert_eq(wc.opcode, BLUE_WC_RECV);
	cr_assert_eq(wc.byte_len, len);
	cr_assert_eq(wc.src_qp, blue_qp_num(fx.a.qp));
	if (imm) {
		cr_assert(wc.wc_flags & BLUE_WC_WITH_IMM);
		cr_assert_eq(wc.imm_data, htonl(0xdeadbeef));
	} else {
		cr_assert_eq(wc.wc_flags & BLUE_WC_WITH_IMM, 0);
	}
	cr_assert(rc_check(b.dst, len, 7), "received bytes differ");
	cr_assert_eq(b.dst[len], 0, "wrote past the message");
	/* a clean link: no go-back-N, no NAK, every packet counted once */
	cr_assert_eq(fx.a.qp->live->retransmits, 0);
	cr_assert_eq(fx.b.qp->live->naks_sent, 0);
	cr_assert_eq(fx.a.qp->live->tx_pkts, (len + 1023) / 1024);
	cr_assert_eq(fx.b.qp->live->rx_pkts, (len + 1023) / 1024);
	cr_assert_eq(fx.a.qp->live->una_psn, fx.a.qp->live->sq_psn, "everything acknowledged");
	cr_assert_eq(fx.a.qp->live->outstanding, 0);
	bufs_fini(&b);
	rc_fx_fini(&fx);
}

Test(rc_send, send_1B) { send_once(1, false); }
Test(rc_send, send_4KiB) { send_once(4096, false); }
Test(rc_send, send_1MiB) { send_once(MiB, false); }
Test(rc_send, send_imm_1B) { send_once(1, true); }
Test(rc_send, send_imm_4KiB) { send_once(4096, true); }
Test(rc_send, send_imm_1MiB) { send_once(MiB, true); }

/* A WRITE of @len bytes from A into B at offset 16; with @imm B consumes a receive. */
static void write_once(size_t len, bool imm)
{
	struct rc_fx fx;
	struct bufs b;
	struct blue_sge sge;
	struct blue_send_wr wr;
	struct blue_wc wc;
	uint8_t rbuf[8] = { 0 };
	struct blue_mr *rmr;

	rc_fx_init(&fx, NULL);
	bufs_init(&fx, &b, len + 16, 11);
	rmr = blue_reg_mr(fx.b.pd, rbuf, sizeof(rbuf), BLUE_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(rmr);
	if (imm)
		rc_post_recv(&fx.b, 55, rbuf, sizeof(rbuf), rmr->lkey);
	sge = (struct blue_sge){ .addr = (uintptr_t)b.src, .length = (uint32_t)len,
				 .lkey = b.smr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 2;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = imm ? BLUE_WR_RDMA_WRITE_WITH_IMM : BLUE_WR_RDMA_WRITE;
	wr.send_flags = BLUE_SEND_SIGNALED;
	wr.imm_data = htonl(0x1234);
	wr.wr.rdma.remote_addr = (uintptr_t)b.dst + 16;
	wr.wr.rdma.rkey = b.dmr->rkey;
	rc_post_send(&fx.a, &wr);

	wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "write: %s", blue_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, BLUE_WC_RDMA_WRITE);
	cr_assert_eq(wc.wr_id, 2);
	cr_assert(rc_check(b.dst + 16, len, 11), "written bytes differ");
	for (int i = 0; i < 16; i++)
		cr_assert_eq(b.dst[i], 0, "wrote before the target");
	cr_assert_eq(b.dst[16 + len], 0, "wrote past the target");
	if (imm) {
		wc = rc_wait1(&fx, fx.b.rcq, RC_WAIT_MS);
		cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
		cr_assert_eq(wc.opcode, BLUE_WC_RECV_RDMA_WITH_IMM);
		cr_assert_eq(wc.wr_id, 55);
		cr_assert_eq(wc.byte_len, len);
		cr_assert(wc.wc_flags & BLUE_WC_WITH_IMM);
		cr_assert_eq(wc.imm_data, htonl(0x1234));
		for (size_t i = 0; i < sizeof(rbuf); i++)
			cr_assert_eq(rbuf[i], 0, "a WRITE with imm must not fill the receive buffer");
	} else {
		rc_quiet(&fx, fx.b.rcq, 5);
	}
	cr_assert_eq(blue_dereg_mr(rmr), 0);
	bufs_fini(&b);
	rc_fx_fini(&fx);
}

Test(rc_write, write_1B) { write_once(1, false); }
Test(rc_write, write_4KiB) { write_once(4096, false); }
Test(rc_write, write_1MiB) { write_once(MiB, false); }
Test(rc_write, write_imm_1B) { write_once(1, true); }
Test(rc_write, write_imm_4KiB) { write_once(4096, true); }
Test(rc_write, write_imm_1MiB) { write_once(MiB, true); }

Test(rc_write, zero_length_write_with_imm)
{
	struct rc_fx fx;
	struct blue_send_wr wr;
	struct blue_wc wc;

	rc_fx_init(&fx, NULL);
	rc_post_recv(&fx.b, 5, NULL, 0, 0);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 4;
	wr.opcode = BLUE_WR_RDMA_WRITE_WITH_IMM;
	wr.send_flags = BLUE_SEND_SIGNALED;
	wr.imm_data = htonl(77);
	wr.wr.rdma.rkey = 0x12345;	/* a zero-length WRITE names no memory */
	rc_post_send(&fx.a, &wr);
	wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "%s", blue_wc_status_str(wc.status));
	wc = rc_wait1(&fx, fx.b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.opcode, BLUE_WC_RECV_RDMA_WITH_IMM);
	cr_assert_eq(wc.byte_len, 0);
	cr_assert_eq(wc.imm_data, htonl(77));
	rc_fx_fini(&fx);
}

/*
 * A 1 MiB SEND gathered from three SGEs of odd sizes (so packets straddle them) and
 * scattered into two receive SGEs.
 */
Test(rc_send, multi_sge_gather_scatter)
{
	const uint32_t part[3] = { 1000, 300001, MiB - 301001 };
	struct rc_fx fx;
	struct bufs b;
	struct blue_sge sge[3], rsge[2];
	struct blue_send_wr wr;
	struct blue_recv_wr rwr, *rbad;
	struct blue_wc wc;
	uint32_t off = 0;

	rc_fx_init(&fx, NULL);
	bufs_init(&fx, &b, MiB + 4096, 3);
	for (int i = 0; i < 3; i++) {
		/* gaps of 8 bytes between the source SGEs: only the SGEs go out */
		sge[i] = (struct blue_sge){ .addr = (uintptr_t)b.src + off + 8u * (uint32_t)i,
					    .length = part[i], .lkey = b.smr->lkey };
		off += part[i];
	}
	rsge[0] = (struct blue_sge){ .addr = (uintptr_t)b.dst, .length = 4097,
				     .lkey = b.dmr->lkey };
	rsge[1] = (struct blue_sge){ .addr = (uintptr_t)b.dst + 8192, .length = MiB,
				     .lkey = b.dmr->lkey };
	memset(&rwr, 0, sizeof(rwr));
	rwr.wr_id = 8;
	rwr.sg_list = rsge;
	rwr.num_sge = 2;
	cr_assert_eq(blue_post_recv(fx.b.qp, &rwr, &rbad), 0);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 9;
	wr.sg_list = sge;
	wr.num_sge = 3;
	wr.opcode = BLUE_WR_SEND;
	wr.send_flags = BLUE_SEND_SIGNALED;
	rc_post_send(&fx.a, &wr);
	wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	wc = rc_wait1(&fx, fx.b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	cr_assert_eq(wc.byte_len, MiB);

	/* reassemble what was expected: the three source parts back to back */
	{
		uint8_t *want = malloc(MiB), *got = malloc(MiB);

		cr_assert(want && got);
		memcpy(want, b.src, part[0]);
		memcpy(want + part[0], b.src + part[0] + 8, part[1]);
		memcpy(want + part[0] + part[1], b.src + part[0] + part[1] + 16, part[2]);
		memcpy(got, b.dst, 4097);
		memcpy(got + 4097, b.dst + 8192, MiB - 4097);
		cr_assert_eq(memcmp(want, got, MiB), 0, "gathered/scattered bytes differ");
		cr_assert_eq(b.dst[4097], 0, "wrote between the receive SGEs");
		free(want);
		free(got);
	}
	/* 1 MiB at a 1024-byte path MTU is 1024 packets */
	cr_assert_geq(fx.a.qp->live->tx_pkts, 1024);
	bufs_fini(&b);
	rc_fx_fini(&fx);
}

/* Inline data is copied at post time: the buffer may change (and need no MR) after. */
Test(rc_send, inline_send)
{
	struct rc_fx fx;
	struct bufs b;
	uint8_t data[200];
	struct blue_sge sge = { .addr = (uintptr_t)data, .length = sizeof(data), .lkey = 0 };
	struct blue_send_wr wr;
	struct blue_wc wc;

	rc_fx_init(&fx, NULL);
	bufs_init(&fx, &b, 4096, 1);
	rc_post_recv(&fx.b, 1, b.dst, 4096, b.dmr->lkey);
	rc_fill(data, sizeof(data), 21);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 3;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = BLUE_WR_SEND;
	wr.send_flags = BLUE_SEND_SIGNALED | BLUE_SEND_INLINE;
	rc_post_send(&fx.a, &wr);
	memset(data, 0xee, sizeof(data));	/* too late to matter */
	wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "%s", blue_wc_status_str(wc.status));
	wc = rc_wait1(&fx, fx.b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.byte_len, sizeof(data));
	cr_assert(rc_check(b.dst, sizeof(data), 21), "inline bytes differ");
	bufs_fini(&b);
	rc_fx_fini(&fx);
}

Test(rc_send, inline_too_long_is_einval)
{
	struct rc_fx fx;
	static uint8_t data[257];
	struct blue_sge sge = { .addr = (uintptr_t)data, .length = sizeof(data) };
	struct blue_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				   .opcode = BLUE_WR_SEND, .send_flags = BLUE_SEND_INLINE };
	struct blue_send_wr *bad = NULL;

	rc_fx_init(&fx, NULL);	/* max_inline 256 */
	cr_assert_eq(blue_post_send(fx.a.qp, &wr, &bad), EINVAL);
	cr_assert_eq(bad, &wr);
	rc_fx_fini(&fx);
}

/*
 * Unsignaled sends produce no completion but still retire; the signaled one after them
 * is the only completion. Posting several times the queue depth shows they retire.
 */
Test(rc_send, unsignaled)
{
	struct rc_opts o;
	struct rc_fx fx;
	struct bufs b;
	struct blue_sge sge;
	struct blue_send_wr wr;
	struct blue_wc wc[8];
	int round, i;

	rc_opts_default(&o);
	o.max_send_wr = 4;
	rc_fx_init(&fx, &o);
	bufs_init(&fx, &b, 64, 5);
	sge = (struct blue_sge){ .addr = (uintptr_t)b.src, .length = 64, .lkey = b.smr->lkey };
	for (round = 0; round < 5; round++) {
		for (i = 0; i < 4; i++) {
			rc_post_recv(&fx.b, (uint64_t)(round * 4 + i), b.dst, 64, b.dmr->lkey);
			memset(&wr, 0, sizeof(wr));
			wr.wr_id = (uint64_t)(100 + round * 4 + i);
			wr.sg_list = &sge;
			wr.num_sge = 1;
			wr.opcode = BLUE_WR_SEND;
			wr.send_flags = i == 3 ? BLUE_SEND_SIGNALED : 0;
			rc_post_send(&fx.a, &wr);
		}
		cr_assert_eq(rc_poll(&fx, fx.a.scq, wc, 1, RC_WAIT_MS), 1);
		cr_assert_eq(wc[0].wr_id, (uint64_t)(100 + round * 4 + 3));
		cr_assert_eq(wc[0].status, BLUE_WC_SUCCESS);
		cr_assert_eq(rc_poll(&fx, fx.b.rcq, wc, 4, RC_WAIT_MS), 4);
		for (i = 0; i < 4; i++)
			cr_assert_eq(wc[i].wr_id, (uint64_t)(round * 4 + i), "receives in order");
		rc_quiet(&fx, fx.a.scq, 2);
	}
	bufs_fini(&b);
	rc_fx_fini(&fx);
}

/* sq_sig_all makes every send signaled. */
Test(rc_send, sq_sig_all)
{
	struct rc_opts o;
	struct rc_fx fx;
	struct bufs b;
	struct blue_sge sge;
	struct blue_send_wr wr[3];
	struct blue_wc wc[3];

	rc_opts_default(&o);
	o.sq_sig_all = 1;
	rc_fx_init(&fx, &o);
	bufs_init(&fx, &b, 64, 5);
	sge = (struct blue_sge){ .addr = (uintptr_t)b.src, .length = 64, .lkey = b.smr->lkey };
	memset(wr, 0, sizeof(wr));
	for (int i = 0; i < 3; i++) {
		rc_post_recv(&fx.b, (uint64_t)i, b.dst, 64, b.dmr->lkey);
		wr[i].wr_id = (uint64_t)i + 10;
		wr[i].sg_list = &sge;
		wr[i].num_sge = 1;
		wr[i].opcode = BLUE_WR_SEND;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;	/* one chained post */
	}
	rc_post_send(&fx.a, wr);
	cr_assert_eq(rc_poll(&fx, fx.a.scq, wc, 3, RC_WAIT_MS), 3);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(wc[i].wr_id, (uint64_t)i + 10);
	bufs_fini(&b);
	rc_fx_fini(&fx);
}

/*
 * PSNs wrap at 2^24 (IBA 9.7.1): start A's send PSN 16 below the wrap and send 64
 * packets; start B's 1 below and send back.
 */
Test(rc_send, psn_wraparound)
{
	struct rc_opts o;
	struct rc_fx fx;
	struct bufs b;
	uint8_t *back;
	struct blue_mr *bmr;
	struct blue_sge sge;
	struct blue_send_wr wr;
	struct blue_wc wc;

	rc_opts_default(&o);
	o.sq_psn_a = 0xfffff0;
	o.sq_psn_b = 0xffffff;
	rc_fx_init(&fx, &o);
	bufs_init(&fx, &b, 64 * 1024, 9);
	rc_post_recv(&fx.b, 1, b.dst, 64 * 1024, b.dmr->lkey);
	sge = (struct blue_sge){ .addr = (uintptr_t)b.src, .length = 64 * 1024,
				 .lkey = b.smr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = BLUE_WR_SEND;
	wr.send_flags = BLUE_SEND_SIGNALED;
	rc_post_send(&fx.a, &wr);
	wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	wc = rc_wait1(&fx, fx.b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	cr_assert(rc_check(b.dst, 64 * 1024, 9));
	cr_assert_eq(fx.a.qp->live->sq_psn, (0xfffff0 + 64) & 0xffffff, "A's PSN wrapped");
	cr_assert_eq(fx.b.qp->live->rq_psn, (0xfffff0 + 64) & 0xffffff, "B's expected PSN");

	/* and back: B -> A, 3 packets starting at 0xffffff */
	back = calloc(1, 4096);
	bmr = blue_reg_mr(fx.a.pd, back, 4096, BLUE_ACCESS_LOCAL_WRITE);
	rc_post_recv(&fx.a, 2, back, 4096, bmr->lkey);
	sge = (struct blue_sge){ .addr = (uintptr_t)b.dst, .length = 3000, .lkey = b.dmr->lkey };
	wr.wr_id = 2;
	rc_post_send(&fx.b, &wr);
	wc = rc_wait1(&fx, fx.b.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	wc = rc_wait1(&fx, fx.a.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.byte_len, 3000);
	cr_assert(rc_check(back, 3000, 9));
	cr_assert_eq(fx.b.qp->live->sq_psn, 2, "0xffffff + 3 wraps to 2");
	cr_assert_eq(blue_dereg_mr(bmr), 0);
	free(back);
	bufs_fini(&b);
	rc_fx_fini(&fx);
}

/*
 * Both sides at once: each SENDs 256 KiB to the other and READs 128 KiB from it, so
 * each QP's requester, responder and completer run interleaved on one engine pass.
 */
Test(rc_send, bidirectional_mixed)
{
	const uint32_t n = 256 * 1024, rn = 128 * 1024;
	struct rc_fx fx;
	struct rc_side *side[2];
	uint8_t *src[2], *dst[2], *rd[2];
	struct blue_mr *mr[2];
	struct blue_sge ssge[2], rsge[2];
	struct blue_send_wr wr[2][2];
	struct blue_wc wc[2];
	int i;

	rc_fx_init(&fx, NULL);
	side[0] = &fx.a;
	side[1] = &fx.b;
	for (i = 0; i < 2; i++) {
		/* one region per side: [src n][dst n][rd rn] */
		src[i] = calloc(1, 2 * n + rn);
		cr_assert_not_null(src[i]);
		dst[i] = src[i] + n;
		rd[i] = dst[i] + n;
		rc_fill(src[i], n, 100 + (unsigned int)i);
		mr[i] = blue_reg_mr(side[i]->pd, src[i], 2 * n + rn,
				    BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_READ);
		cr_assert_not_null(mr[i]);
		rc_post_recv(side[i], 1, dst[i], n, mr[i]->lkey);
	}
	for (i = 0; i < 2; i++) {
		ssge[i] = (struct blue_sge){ .addr = (uintptr_t)src[i], .length = n,
					     .lkey = mr[i]->lkey };
		rsge[i] = (struct blue_sge){ .addr = (uintptr_t)rd[i], .length = rn,
					     .lkey = mr[i]->lkey };
		memset(wr[i], 0, sizeof(wr[i]));
		wr[i][0] = (struct blue_send_wr){ .wr_id = 10, .sg_list = &ssge[i], .num_sge = 1,
						  .opcode = BLUE_WR_SEND,
						  .send_flags = BLUE_SEND_SIGNALED, .next = &wr[i][1] };
		wr[i][1] = (struct blue_send_wr){ .wr_id = 11, .sg_list = &rsge[i], .num_sge = 1,
						  .opcode = BLUE_WR_RDMA_READ,
						  .send_flags = BLUE_SEND_SIGNALED };
		/* read the other side's source buffer */
		wr[i][1].wr.rdma.remote_addr = (uintptr_t)src[1 - i];
		wr[i][1].wr.rdma.rkey = mr[1 - i]->rkey;
		rc_post_send(side[i], wr[i]);
	}
	for (i = 0; i < 2; i++) {
		cr_assert_eq(rc_poll(&fx, side[i]->scq, wc, 2, RC_WAIT_MS), 2);
		cr_assert_eq(wc[0].wr_id, 10);
		cr_assert_eq(wc[0].status, BLUE_WC_SUCCESS);
		cr_assert_eq(wc[1].wr_id, 11);
		cr_assert_eq(wc[1].status, BLUE_WC_SUCCESS);
		cr_assert_eq(rc_poll(&fx, side[i]->rcq, wc, 1, RC_WAIT_MS), 1);
		cr_assert_eq(wc[0].byte_len, n);
	}
	for (i = 0; i < 2; i++) {
		cr_assert(rc_check(dst[i], n, 100 + (unsigned int)(1 - i)), "SEND data on %d", i);
		cr_assert(rc_check(rd[i], rn, 100 + (unsigned int)(1 - i)), "READ data on %d", i);
		cr_assert_eq(side[i]->qp->live->retransmits, 0);
		cr_assert_eq(blue_dereg_mr(mr[i]), 0);
		free(src[i]);
	}
	rc_fx_fini(&fx);
}

/* 2000 small messages through 16-deep queues: ring wrap, order, nothing lost. */
Test(rc_send, many_small_messages)
{
	struct rc_opts o;
	struct rc_fx fx;
	uint32_t sbuf[16], rbuf[16];
	struct blue_mr *smr, *rmr;
	struct blue_sge sge;
	struct blue_send_wr wr;
	struct blue_wc wc[16];
	uint32_t sent = 0, got = 0, done = 0;
	uint64_t end;
	int n, i;

	rc_opts_default(&o);
	o.max_send_wr = 16;
	o.max_recv_wr = 16;
	rc_fx_init(&fx, &o);
	smr = blue_reg_mr(fx.a.pd, sbuf, sizeof(sbuf), 0);
	rmr = blue_reg_mr(fx.b.pd, rbuf, sizeof(rbuf), BLUE_ACCESS_LOCAL_WRITE);
	for (i = 0; i < 16; i++)
		rc_post_recv(&fx.b, (uint64_t)i, &rbuf[i], 4, rmr->lkey);
	end = blue__now_ns() + RC_WAIT_MS * 1000000ull;
	while (got < 2000) {
		cr_assert_lt(blue__now_ns(), end, "stuck at %u of 2000 messages", got);
		/* keep the send queue full */
		while (sent < 2000 && sent - done < 16) {
			sbuf[sent % 16] = sent;
			sge = (struct blue_sge){ .addr = (uintptr_t)&sbuf[sent % 16], .length = 4,
						 .lkey = smr->lkey };
			memset(&wr, 0, sizeof(wr));
			wr.wr_id = sent;
			wr.sg_list = &sge;
			wr.num_sge = 1;
			wr.opcode = BLUE_WR_SEND;
			wr.send_flags = BLUE_SEND_SIGNALED | BLUE_SEND_INLINE;
			rc_post_send(&fx.a, &wr);
			sent++;
		}
		n = blue_poll_cq(fx.a.scq, 16, wc);
		for (i = 0; i < n; i++) {
			cr_assert_eq(wc[i].wr_id, done, "send completions in order");
			cr_assert_eq(wc[i].status, BLUE_WC_SUCCESS);
			done++;
		}
		n = blue_poll_cq(fx.b.rcq, 16, wc);
		for (i = 0; i < n; i++) {
			uint32_t slot = (uint32_t)wc[i].wr_id;

			cr_assert_eq(wc[i].status, BLUE_WC_SUCCESS);
			cr_assert_eq(slot, got % 16, "receives in order");
			cr_assert_eq(rbuf[slot], got, "message %u carries its number", got);
			got++;
			rc_post_recv(&fx.b, slot, &rbuf[slot], 4, rmr->lkey);
		}
	}
	cr_assert_eq(rc_poll(&fx, fx.a.scq, wc, (int)(2000 - done), RC_WAIT_MS), (int)(2000 - done));
	cr_assert_eq(fx.b.qp->live->msn, 2000, "MSN counts the messages");
	cr_assert_eq(blue_dereg_mr(smr), 0);
	cr_assert_eq(blue_dereg_mr(rmr), 0);
	rc_fx_fini(&fx);
}
