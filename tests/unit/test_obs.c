// SPDX-License-Identifier: MIT
/*
 * Observability over the loopback HAL: the histogram buckets, the diagnostics switch
 * (latency histograms fill only while BLUE_DIAG_LAT is on), the publish of the HAL's
 * and the engine's counters into dev_stats, connection setup timing, and CNPs counted
 * on their QP. The same code runs on a netdev, where dev_stats and diag are the pinned
 * maps (tests/netns/test_observe.sh).
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/codec.h"
#include "runtime/device.h"
#include "runtime/obs.h"
#include "runtime/progress.h"
#include "runtime/qp.h"
#include "tests/unit/rc_fixture.h"

Test(obs, hist_buckets_cover_every_value)
{
	static const uint64_t v[] = { 0, 1, 1023, 1024, 1025, 2047, 2048, 1000000,
				      (1ull << 31), (1ull << 32) - 1, 1ull << 32, ~0ull };
	unsigned int i, b;

	cr_assert_eq(blue_hist_bucket(0), 0);
	cr_assert_eq(blue_hist_bucket(1023), 0);
	cr_assert_eq(blue_hist_bucket(1024), 1);
	cr_assert_eq(blue_hist_bucket(2047), 1);
	cr_assert_eq(blue_hist_bucket(2048), 2);
	cr_assert_eq(blue_hist_bucket((1ull << 32) - 1), BLUE_HIST_BUCKETS - 2);
	cr_assert_eq(blue_hist_bucket(1ull << 32), BLUE_HIST_BUCKETS - 1);
	cr_assert_eq(blue_hist_bucket(~0ull), BLUE_HIST_BUCKETS - 1);
	/* every value lies below its bucket's bound and at or above the one before */
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		b = blue_hist_bucket(v[i]);
		if (b < BLUE_HIST_BUCKETS - 1)
			cr_assert_lt(v[i], blue_hist_le_ns(b), "%llu in bucket %u",
				     (unsigned long long)v[i], b);
		if (b)
			cr_assert_geq(v[i], blue_hist_le_ns(b - 1), "%llu in bucket %u",
				      (unsigned long long)v[i], b);
	}
}

static uint64_t hist_sum_buckets(const struct blue_hist *h)
{
	uint64_t n = 0;

	for (unsigned int b = 0; b < BLUE_HIST_BUCKETS; b++)
		n += h->bucket[b];
	return n;
}

/* @n signaled WRITEs of 64 bytes A -> B, each completed before the next. */
static void writes(struct rc_fx *fx, uint8_t *src, uint8_t *dst, struct blue_mr *smr,
		   struct blue_mr *dmr, unsigned int n)
{
	struct blue_sge sge = { .addr = (uintptr_t)src, .length = 64, .lkey = smr->lkey };
	struct blue_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = BLUE_WR_RDMA_WRITE,
				   .send_flags = BLUE_SEND_SIGNALED };
	struct blue_wc wc;

	wr.wr.rdma.remote_addr = (uintptr_t)dst;
	wr.wr.rdma.rkey = dmr->rkey;
	for (unsigned int i = 0; i < n; i++) {
		wr.wr_id = i;
		rc_post_send(&fx->a, &wr);
		wc = rc_wait1(fx, fx->a.scq, RC_WAIT_MS);
		cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	}
}

Test(obs, latency_histograms_follow_the_switch)
{
	unsigned int acc = BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE;
	uint8_t *src = calloc(1, 64), *dst = calloc(1, 64);
	const struct blue_hist *h;
	struct blue_mr *smr, *dmr;
	struct rc_fx fx;

	rc_fx_init(&fx, NULL);
	smr = blue_reg_mr(fx.a.pd, src, 64, acc);
	dmr = blue_reg_mr(fx.b.pd, dst, 64, acc);
	cr_assert(smr && dmr);
	h = &fx.a.ctx->obs.ds->lat[BLUE_WR_RDMA_WRITE];

	/* off by default: no timestamps, nothing recorded */
	writes(&fx, src, dst, smr, dmr, 3);
	cr_assert_eq(h->count, 0, "recorded with diagnostics off");
	cr_assert_eq(hist_sum_buckets(h), 0);

	blue__obs_set_diag(fx.a.ctx, BLUE_DIAG_LAT);
	writes(&fx, src, dst, smr, dmr, 5);
	cr_assert_eq(h->count, 5);
	cr_assert_eq(hist_sum_buckets(h), 5);
	cr_assert_gt(h->sum_ns, 0);
	cr_assert_eq(fx.a.ctx->obs.ds->lat[BLUE_WR_SEND].count, 0, "another opcode counted");
	/* the responder posts nothing: its histograms stay empty */
	cr_assert_eq(fx.b.ctx->obs.ds->lat[BLUE_WR_RDMA_WRITE].count, 0);

	/* off again, at once */
	blue__obs_set_diag(fx.a.ctx, 0);
	writes(&fx, src, dst, smr, dmr, 4);
	cr_assert_eq(h->count, 5, "recorded after diagnostics went off");

	cr_assert_eq(blue_dereg_mr(smr), 0);
	cr_assert_eq(blue_dereg_mr(dmr), 0);
	rc_fx_fini(&fx);
	free(src);
	free(dst);
}

Test(obs, publish_copies_hal_and_engine_counters)
{
	struct blue_hal_stats hs;
	struct rc_fx fx;
	const struct blue_dev_stats *ds;

	rc_fx_init(&fx, NULL);
	rc_progress(&fx);
	blue__obs_publish(fx.a.ctx);
	ds = fx.a.ctx->obs.ds;
	blue_hal_get_stats(fx.a.hal, &hs);
	cr_assert_eq(ds->eng.passes, blue__engine_stats(fx.a.ctx)->passes);
	cr_assert_eq(ds->eng.tx_frames, blue__engine_stats(fx.a.ctx)->tx_frames);
	cr_assert_eq(ds->hal.tx_frames, hs.tx_frames);
	cr_assert_eq(ds->hal.frames_total, hs.frames_total);
	cr_assert_gt(ds->published_ns, 0);
	rc_fx_fini(&fx);
}

Test(obs, cnp_is_counted_on_its_qp)
{
	struct blue_pkt p;
	struct rc_fx fx;
	uint64_t before;

	rc_fx_init(&fx, NULL);
	before = blue__engine_stats(fx.b.ctx)->rx_cnp;
	/* A sends B a CNP for B's QP (annex A17.9.3: DestQP is the congested flow's sender) */
	blue__qp_pkt(fx.a.qp, &p, BLUE_OP_CNP, 0);
	fx.a.ctx->eng.budget = 1;	/* outside a pass: allow this one frame */
	cr_assert_eq(blue__tx_pkt(fx.a.ctx, &p), 0);
	blue__tx_flush(fx.a.ctx);
	for (int i = 0; i < 10 && !fx.b.qp->live->cnp_rcvd; i++)
		rc_progress(&fx);
	cr_assert_eq(fx.b.qp->live->cnp_rcvd, 1);
	cr_assert_eq(blue__engine_stats(fx.b.ctx)->rx_cnp, before + 1);
	cr_assert_eq(blue__engine_stats(fx.b.ctx)->rx_wrong_transport, 0);
	rc_fx_fini(&fx);
}

Test(obs, connection_setup_is_timed_through_the_cm)
{
	struct blue_cm_info ia, ib;
	struct rc_fx fx;
	const struct blue_hist *h;

	rc_fx_init_noqp(&fx, NULL);
	rc_qp_create(&fx, &fx.a);
	rc_qp_create(&fx, &fx.b);
	h = &fx.a.ctx->obs.ds->conn_setup;
	cr_assert_eq(blue_cm_info_from_qp(fx.a.ctx, fx.a.qp, 1, &ia), 0);
	cr_assert_eq(blue_cm_info_from_qp(fx.b.ctx, fx.b.qp, 1, &ib), 0);
	cr_assert_eq(h->count, 0);
	cr_assert_eq(blue_cm_connect_qp(fx.a.ctx, fx.a.qp, ia.psn, &ib, NULL), 0,
		     "%s", blue_cm_last_error());
	cr_assert_eq(h->count, 1);
	cr_assert_eq(hist_sum_buckets(h), 1);
	cr_assert_gt(h->sum_ns, 0);
	rc_fx_fini(&fx);
}
