// SPDX-License-Identifier: MIT
/*
 * Memory keys: a fresh context's keys cannot be guessed from the registration order, and
 * a deregistered key never becomes valid again however often its slot is reused
 * (issue 12, item 4). The checks read only the public keys and the table's slots, not
 * the key layout, so they say the same about any layout.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/device.h"
#include "runtime/mr.h"
#include "runtime/qp.h"
#include "tests/unit/rc_fixture.h"

#define NKEYS 4
#define REUSES 100000

static const unsigned int rw = BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE;

/* The first NKEYS keys a context hands out, each MR deregistered again. */
static void first_keys(struct rc_side *s, void *buf, uint32_t *keys)
{
	struct blue_mr *mr[NKEYS];
	int i;

	for (i = 0; i < NKEYS; i++) {
		mr[i] = blue_reg_mr(s->pd, buf, 64, rw);
		cr_assert(mr[i], "reg_mr %d", i);
		cr_assert_eq(mr[i]->lkey, mr[i]->rkey);
		keys[i] = mr[i]->rkey;
	}
	for (i = 0; i < NKEYS; i++)
		cr_assert_eq(blue_dereg_mr(mr[i]), 0);
}

Test(mr_keys, fresh_context_keys_are_not_predictable)
{
	static uint8_t buf[64];
	uint32_t a[NKEYS], b[NKEYS], c[NKEYS];
	struct rc_fx fx;
	int i;

	rc_fx_init_noqp(&fx, NULL);
	first_keys(&fx.a, buf, a);
	first_keys(&fx.b, buf, b);
	rc_fx_fini(&fx);
	/* a second pair of contexts, as a second run of the same program would open */
	rc_fx_init_noqp(&fx, NULL);
	first_keys(&fx.a, buf, c);
	rc_fx_fini(&fx);
	cr_assert_neq(a[0], 0x101, "the first MR of a context got the counter key 0x101");
	cr_assert_neq(c[0], 0x101, "the first MR of a context got the counter key 0x101");
	for (i = 0; i < NKEYS; i++)
		cr_assert_neq(a[i], 0, "key 0 is never handed out");
	/* NKEYS random tags of 18 bits: all equal by chance with probability 2^-72 */
	cr_assert(memcmp(a, b, sizeof(a)), "two contexts drew the same keys 0x%x 0x%x ...",
		  a[0], a[1]);
	cr_assert(memcmp(a, c, sizeof(a)), "two runs drew the same keys 0x%x 0x%x ...",
		  a[0], a[1]);
}

static uint32_t slot_of(const struct blue_context *ctx, const struct blue_mr *mr)
{
	uint32_t i;

	for (i = 0; i < ctx->mrs.cap; i++)
		if (ctx->mrs.mr[i] == mr)
			return i;
	cr_assert_fail("MR %p is in no slot", (const void *)mr);
	return 0;
}

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

/*
 * Fill every slot the table has, free one, and register and deregister REUSES times: each
 * MR lands in that one free slot. The first key never validates again, no key of the run
 * repeats, and a WRITE with the stale rkey gets a remote access NAK and writes nothing.
 */
Test(mr_keys, stale_key_never_revives_on_a_reused_slot)
{
	static uint8_t buf[4096], src[64];
	struct blue_mr **fill, *victim, *smr, *mr;
	struct blue_context *ctx;
	struct blue_sge sge;
	struct blue_send_wr wr;
	struct blue_wc wc;
	uint32_t *keys, stale, slot, nfill = 0, i;
	uint64_t va = (uintptr_t)buf;
	struct rc_fx fx;

	rc_fx_init(&fx, NULL);
	ctx = fx.b.ctx;
	victim = blue_reg_mr(fx.b.pd, buf, sizeof(buf), rw);
	cr_assert(victim);
	fill = calloc(ctx->mrs.cap, sizeof(*fill));
	cr_assert(fill);
	/* slot 0 is never used: the table is full at cap - 1 MRs */
	while (ctx->nmr < ctx->mrs.cap - 1) {
		fill[nfill] = blue_reg_mr(fx.b.pd, src, sizeof(src), 0);
		cr_assert(fill[nfill]);
		nfill++;
	}
	slot = slot_of(ctx, victim);
	stale = victim->rkey;
	cr_assert_eq(blue_dereg_mr(victim), 0);
	keys = malloc((REUSES + 1) * sizeof(*keys));
	cr_assert(keys);
	keys[0] = stale;
	for (i = 1; i <= REUSES; i++) {
		mr = blue_reg_mr(fx.b.pd, buf, sizeof(buf), rw);
		cr_assert(mr, "registration %u", i);
		cr_assert_eq(slot_of(ctx, mr), slot, "registration %u left the one free slot", i);
		keys[i] = mr->rkey;
		cr_assert_eq(blue__mr_check(ctx, fx.b.pd, stale, va, 8, rw, NULL), BLUE_MR_BAD_KEY,
			     "the stale key 0x%x validates again after %u registrations of its slot",
			     stale, i);
		if (i < REUSES)
			cr_assert_eq(blue_dereg_mr(mr), 0);
	}
	qsort(keys, REUSES + 1, sizeof(*keys), cmp_u32);
	for (i = 1; i <= REUSES; i++)
		cr_assert_neq(keys[i], keys[i - 1], "key 0x%x handed out twice in %u registrations",
			      keys[i], REUSES + 1);

	/* on the wire: the stale rkey, with a live MR in its slot, is a remote access error */
	memset(buf, 0, sizeof(buf));
	smr = blue_reg_mr(fx.a.pd, src, sizeof(src), 0);
	cr_assert(smr);
	memset(src, 0x5a, sizeof(src));
	sge = (struct blue_sge){ .addr = (uintptr_t)src, .length = sizeof(src),
				 .lkey = smr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 7;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = BLUE_WR_RDMA_WRITE;
	wr.send_flags = BLUE_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = va;
	wr.wr.rdma.rkey = stale;
	rc_post_send(&fx.a, &wr);
	wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.wr_id, 7);
	cr_assert_eq(wc.status, BLUE_WC_REM_ACCESS_ERR, "status %d", wc.status);
	cr_assert_eq(fx.b.qp->live->last_nak_syndrome, BLUE_NAK_REM_ACCESS_ERR);
	for (i = 0; i < sizeof(buf); i++)
		cr_assert_eq(buf[i], 0, "the refused WRITE changed byte %u", i);

	cr_assert_eq(blue_dereg_mr(smr), 0);
	cr_assert_eq(blue_dereg_mr(mr), 0);
	for (i = 0; i < nfill; i++)
		cr_assert_eq(blue_dereg_mr(fill[i]), 0);
	free(fill);
	free(keys);
	rc_fx_fini(&fx);
}
