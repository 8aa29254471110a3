// SPDX-License-Identifier: MIT
/*
 * RC RDMA READ and the atomics (compare-and-swap, fetch-and-add) between two contexts
 * over the loopback HAL: bytes and values compared, the PSNs a READ consumes checked.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/qp.h"
#include "tests/unit/rc_fixture.h"

#define MiB (1u << 20)
#define ALL_REMOTE (BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE | \
		    BLUE_ACCESS_REMOTE_READ | BLUE_ACCESS_REMOTE_ATOMIC)

/* A reads @len bytes of B's buffer (from offset 8) into its own. */
static void read_once(size_t len)
{
	struct rc_fx fx;
	uint8_t *remote = malloc(len + 16), *local = calloc(1, len + 16);
	struct blue_mr *rmr, *lmr;
	struct blue_sge sge;
	struct blue_send_wr wr;
	struct blue_wc wc;
	uint32_t psn0;

	rc_fx_init(&fx, NULL);
	cr_assert(remote && local);
	rc_fill(remote, len + 16, 31);
	rmr = blue_reg_mr(fx.b.pd, remote, len + 16, BLUE_ACCESS_REMOTE_READ);
	lmr = blue_reg_mr(fx.a.pd, local, len + 16, BLUE_ACCESS_LOCAL_WRITE);
	cr_assert(rmr && lmr);
	sge = (struct blue_sge){ .addr = (uintptr_t)local, .length = (uint32_t)len,
				 .lkey = lmr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 42;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = BLUE_WR_RDMA_READ;
	wr.send_flags = BLUE_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)remote + 8;
	wr.wr.rdma.rkey = rmr->rkey;
	psn0 = fx.a.qp->live->sq_psn;
	rc_post_send(&fx.a, &wr);
	wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "read: %s", blue_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, BLUE_WC_RDMA_READ);
	cr_assert_eq(wc.wr_id, 42);
	cr_assert_eq(wc.byte_len, len);
	cr_assert_eq(memcmp(local, remote + 8, len), 0, "read bytes differ");
	cr_assert_eq(local[len], 0, "read wrote past the local buffer");
	/* IBA 9.7: the READ consumed one PSN per response packet, on both sides */
	cr_assert_eq(fx.a.qp->live->sq_psn, (psn0 + (len + 1023) / 1024) & 0xffffff);
	cr_assert_eq(fx.b.qp->live->rq_psn, fx.a.qp->live->sq_psn);
	cr_assert_eq(fx.b.qp->live->tx_pkts, (len + 1023) / 1024, "response packets");
	cr_assert_eq(fx.a.qp->live->retransmits, 0);
	rc_quiet(&fx, fx.b.rcq, 2);	/* a READ consumes no receive WQE */
	cr_assert_eq(blue_dereg_mr(rmr), 0);
	cr_assert_eq(blue_dereg_mr(lmr), 0);
	free(remote);
	free(local);
	rc_fx_fini(&fx);
}

Test(rc_read, read_1B) { read_once(1); }
Test(rc_read, read_4KiB) { read_once(4096); }
Test(rc_read, read_1MiB) { read_once(MiB); }

Test(rc_read, zero_length_read)
{
	struct rc_fx fx;
	struct blue_send_wr wr;
	struct blue_wc wc;

	rc_fx_init(&fx, NULL);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.opcode = BLUE_WR_RDMA_READ;
	wr.send_flags = BLUE_SEND_SIGNALED;
	wr.wr.rdma.rkey = 0xbad;	/* not checked for zero bytes */
	rc_post_send(&fx.a, &wr);
	wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "%s", blue_wc_status_str(wc.status));
	cr_assert_eq(wc.byte_len, 0);
	rc_fx_fini(&fx);
}

/*
 * Eight 4 KiB READs into two local SGEs each, with sends between them: more READs than
 * max_rd_atomic (4) may have outstanding, so the requester has to wait for credits,
 * and completions still come in posting order.
 */
Test(rc_read, many_reads_scatter_in_order)
{
	struct rc_fx fx;
	uint8_t *remote = malloc(8 * 4096), *local = calloc(1, 8 * 4096 + 8 * 64);
	uint8_t sbuf[64], rbuf[8][64];
	struct blue_mr *rmr, *lmr, *smr, *rbmr;
	struct blue_sge sge[8][2], ssge;
	struct blue_send_wr wr[16];
	struct blue_wc wc[16];
	int i;

	rc_fx_init(&fx, NULL);
	rc_fill(remote, 8 * 4096, 4);
	rc_fill(sbuf, sizeof(sbuf), 5);
	rmr = blue_reg_mr(fx.b.pd, remote, 8 * 4096, BLUE_ACCESS_REMOTE_READ);
	lmr = blue_reg_mr(fx.a.pd, local, 8 * 4096 + 8 * 64, BLUE_ACCESS_LOCAL_WRITE);
	smr = blue_reg_mr(fx.a.pd, sbuf, sizeof(sbuf), 0);
	rbmr = blue_reg_mr(fx.b.pd, rbuf, sizeof(rbuf), BLUE_ACCESS_LOCAL_WRITE);
	cr_assert(rmr && lmr && smr && rbmr);
	ssge = (struct blue_sge){ .addr = (uintptr_t)sbuf, .length = 64, .lkey = smr->lkey };
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 8; i++) {
		uint8_t *dst = local + i * (4096 + 64);

		rc_post_recv(&fx.b, (uint64_t)i, rbuf[i], 64, rbmr->lkey);
		sge[i][0] = (struct blue_sge){ .addr = (uintptr_t)dst, .length = 1000,
					       .lkey = lmr->lkey };
		sge[i][1] = (struct blue_sge){ .addr = (uintptr_t)dst + 1000 + 64,
					       .length = 3096, .lkey = lmr->lkey };
		wr[2 * i].wr_id = (uint64_t)(2 * i);
		wr[2 * i].sg_list = sge[i];
		wr[2 * i].num_sge = 2;
		wr[2 * i].opcode = BLUE_WR_RDMA_READ;
		wr[2 * i].send_flags = BLUE_SEND_SIGNALED;
		wr[2 * i].wr.rdma.remote_addr = (uintptr_t)remote + (uint64_t)i * 4096;
		wr[2 * i].wr.rdma.rkey = rmr->rkey;
		wr[2 * i].next = &wr[2 * i + 1];
		wr[2 * i + 1].wr_id = (uint64_t)(2 * i + 1);
		wr[2 * i + 1].sg_list = &ssge;
		wr[2 * i + 1].num_sge = 1;
		wr[2 * i + 1].opcode = BLUE_WR_SEND;
		wr[2 * i + 1].send_flags = BLUE_SEND_SIGNALED;
		wr[2 * i + 1].next = i < 7 ? &wr[2 * i + 2] : NULL;
	}
	rc_post_send(&fx.a, wr);
	cr_assert_eq(rc_poll(&fx, fx.a.scq, wc, 16, RC_WAIT_MS), 16);
	for (i = 0; i < 16; i++) {
		cr_assert_eq(wc[i].wr_id, (uint64_t)i, "completion %d out of order", i);
		cr_assert_eq(wc[i].status, BLUE_WC_SUCCESS);
	}
	for (i = 0; i < 8; i++) {
		uint8_t *dst = local + i * (4096 + 64);

		cr_assert_eq(memcmp(dst, remote + i * 4096, 1000), 0);
		cr_assert_eq(memcmp(dst + 1064, remote + i * 4096 + 1000, 3096), 0);
		cr_assert_eq(dst[1000], 0, "nothing lands between the SGEs");
	}
	cr_assert_eq(rc_poll(&fx, fx.b.rcq, wc, 8, RC_WAIT_MS), 8);
	cr_assert_eq(blue_dereg_mr(rmr), 0);
	cr_assert_eq(blue_dereg_mr(lmr), 0);
	cr_assert_eq(blue_dereg_mr(smr), 0);
	cr_assert_eq(blue_dereg_mr(rbmr), 0);
	free(remote);
	free(local);
	rc_fx_fini(&fx);
}

/* One atomic from A on B's 64-bit word at @off of a 1 MiB region; returns the orig. */
static uint64_t atomic_once(struct rc_fx *fx, struct blue_mr *rmr, size_t off,
			    enum blue_wr_opcode op, uint64_t compare_add, uint64_t swap)
{
	uint64_t orig = 0xaaaaaaaaaaaaaaaaull;
	struct blue_mr *lmr = blue_reg_mr(fx->a.pd, &orig, sizeof(orig), BLUE_ACCESS_LOCAL_WRITE);
	struct blue_sge sge = { .addr = (uintptr_t)&orig, .length = 8, .lkey = lmr->lkey };
	struct blue_send_wr wr;
	struct blue_wc wc;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 77;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = BLUE_SEND_SIGNALED;
	wr.wr.atomic.remote_addr = (uintptr_t)rmr->addr + off;
	wr.wr.atomic.rkey = rmr->rkey;
	wr.wr.atomic.compare_add = compare_add;
	wr.wr.atomic.swap = swap;
	rc_post_send(&fx->a, &wr);
	wc = rc_wait1(fx, fx->a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "atomic: %s", blue_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, op == BLUE_WR_ATOMIC_CMP_AND_SWP ? BLUE_WC_COMP_SWAP :
			       BLUE_WC_FETCH_ADD);
	cr_assert_eq(wc.wr_id, 77);
	cr_assert_eq(blue_dereg_mr(lmr), 0);
	return orig;
}

static void atomics_at(size_t off)
{
	struct rc_fx fx;
	uint64_t *region = calloc(1, MiB);
	uint64_t *word = (uint64_t *)((uint8_t *)region + off);
	struct blue_mr *rmr;

	rc_fx_init(&fx, NULL);
	rmr = blue_reg_mr(fx.b.pd, region, MiB, ALL_REMOTE);
	cr_assert_not_null(rmr);
	*word = 1000;
	cr_assert_eq(atomic_once(&fx, rmr, off, BLUE_WR_ATOMIC_FETCH_AND_ADD, 5, 0), 1000);
	cr_assert_eq(*word, 1005);
	/* a matching compare swaps */
	cr_assert_eq(atomic_once(&fx, rmr, off, BLUE_WR_ATOMIC_CMP_AND_SWP, 1005, 0x77), 1005);
	cr_assert_eq(*word, 0x77);
	/* a compare that does not match leaves the word, and returns it */
	cr_assert_eq(atomic_once(&fx, rmr, off, BLUE_WR_ATOMIC_CMP_AND_SWP, 1, 0x99), 0x77);
	cr_assert_eq(*word, 0x77);
	/* fetch-and-add wraps at 2^64 */
	*word = ~0ull;
	cr_assert_eq(atomic_once(&fx, rmr, off, BLUE_WR_ATOMIC_FETCH_AND_ADD, 2, 0), ~0ull);
	cr_assert_eq(*word, 1);
	/* the neighbours are untouched */
	if (off)
		cr_assert_eq(word[-1], 0);
	if (off + 8 < MiB)
		cr_assert_eq(word[1], 0);
	cr_assert_eq(blue_dereg_mr(rmr), 0);
	free(region);
	rc_fx_fini(&fx);
}

Test(rc_atomic, at_first_word) { atomics_at(0); }
Test(rc_atomic, at_4KiB) { atomics_at(4096); }
Test(rc_atomic, at_last_word_of_1MiB) { atomics_at(MiB - 8); }
