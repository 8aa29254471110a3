// SPDX-License-Identifier: MIT
/*
 * MR lifetime over the loopback HAL: an MR deregistered, and its pages unmapped, in the
 * middle of a 1 MiB message is never touched again, on either side of either
 * direction. The engines are stepped one pass at a time so that the deregistration
 * lands mid-message; an unmapped page turns any stray access into a fault, so "no
 * byte touched" is what a test that finishes shows. The QP whose memory went away
 * reports the error IBA gives it: a local protection error on the requester's side, a
 * remote access NAK (and ERROR) on the responder's.
 */
#include <criterion/criterion.h>
#include <string.h>
#include <sys/mman.h>

#include "runtime/progress.h"
#include "runtime/qp.h"
#include "tests/unit/rc_fixture.h"

#define MSG		(1u << 20)
#define MTU_BYTES	1024u
#define MSG_PKTS	(MSG / MTU_BYTES)

struct region {
	uint8_t *buf;
	struct blue_mr *mr;
};

/* @len bytes of their own pages, so that munmap makes any later access fault. */
static void region_reg(struct region *r, struct rc_side *s, unsigned int access, int seed)
{
	r->buf = mmap(NULL, MSG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(r->buf, MAP_FAILED);
	if (seed >= 0)
		rc_fill(r->buf, MSG, (unsigned int)seed);
	r->mr = blue_reg_mr(s->pd, r->buf, MSG, access);
	cr_assert_not_null(r->mr);
}

/* What the application does when it is done with the memory: dereg, then unmap. */
static void region_drop(struct region *r)
{
	cr_assert_eq(blue_dereg_mr(r->mr), 0);
	cr_assert_eq(munmap(r->buf, MSG), 0);
	r->mr = NULL;
	r->buf = NULL;
}

static void region_fini(struct region *r)
{
	if (r->mr)
		cr_assert_eq(blue_dereg_mr(r->mr), 0);
	if (r->buf)
		cr_assert_eq(munmap(r->buf, MSG), 0);
}

static void post_rdma(struct rc_side *s, enum blue_wr_opcode op, const struct region *local,
		      const struct region *remote)
{
	struct blue_sge sge = { .addr = (uintptr_t)local->buf, .length = MSG,
				.lkey = local->mr->lkey };
	struct blue_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 7;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = BLUE_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)remote->buf;
	wr.wr.rdma.rkey = remote->mr->rkey;
	rc_post_send(s, &wr);
}

/* PSNs @s's QP has sent (requests, or READ responses) since @psn0. */
static uint32_t sent_since(const struct rc_side *s, uint32_t psn0)
{
	return (s->qp->live->sq_psn - psn0) & 0xffffff;
}

static void expect_err(struct rc_fx *fx, enum blue_wc_status want)
{
	struct blue_wc wc = rc_wait1(fx, fx->a.scq, RC_WAIT_MS);

	cr_assert_eq(wc.wr_id, 7);
	cr_assert_eq(wc.status, want, "A's WQE: %s, %s expected",
		     blue_wc_status_str(wc.status), blue_wc_status_str(want));
	cr_assert_eq(fx->a.qp->live->state, BLUE_QPS_ERR, "A's QP follows its error");
}

/* A's WRITE source is deregistered after its first packets went out. */
Test(rc_mr, write_source_dereg_mid_message)
{
	struct region src, dst;
	struct rc_fx fx;
	uint32_t psn0;

	rc_fx_init(&fx, NULL);
	region_reg(&src, &fx.a, BLUE_ACCESS_LOCAL_WRITE, 3);
	region_reg(&dst, &fx.b, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE, -1);
	psn0 = fx.a.qp->live->sq_psn;
	post_rdma(&fx.a, BLUE_WR_RDMA_WRITE, &src, &dst);
	blue__progress(fx.a.ctx);
	cr_assert(sent_since(&fx.a, psn0) > 0 && sent_since(&fx.a, psn0) < MSG_PKTS,
		  "the dereg must land mid-message (%u of %u packets sent)",
		  sent_since(&fx.a, psn0), MSG_PKTS);
	region_drop(&src);
	expect_err(&fx, BLUE_WC_LOC_PROT_ERR);
	cr_assert(sent_since(&fx.a, psn0) < MSG_PKTS, "packets went out after the dereg");
	region_fini(&dst);
	rc_fx_fini(&fx);
}

/* A's READ sink is deregistered after the first responses were placed in it. */
Test(rc_mr, read_sink_dereg_mid_response)
{
	struct region src, dst;
	struct rc_fx fx;

	rc_fx_init(&fx, NULL);
	region_reg(&src, &fx.b, BLUE_ACCESS_REMOTE_READ, 5);
	region_reg(&dst, &fx.a, BLUE_ACCESS_LOCAL_WRITE, -1);
	post_rdma(&fx.a, BLUE_WR_RDMA_READ, &dst, &src);
	rc_progress(&fx);		/* A asks, B answers with its first responses */
	blue__progress(fx.a.ctx);	/* A places them */
	cr_assert(fx.a.qp->live->rx_pkts > 0 && fx.a.qp->live->rx_pkts < MSG_PKTS,
		  "the dereg must land mid-response (%llu of %u responses in)",
		  (unsigned long long)fx.a.qp->live->rx_pkts, MSG_PKTS);
	cr_assert_eq(memcmp(dst.buf, src.buf, MTU_BYTES), 0, "the first response is placed");
	region_drop(&dst);
	expect_err(&fx, BLUE_WC_LOC_PROT_ERR);
	region_fini(&src);
	rc_fx_fini(&fx);
}

/* B, the target of an incoming WRITE, deregisters it between FIRST and LAST. */
Test(rc_mr, write_target_dereg_mid_message)
{
	struct region src, dst;
	struct rc_fx fx;
	uint64_t access_err0;

	rc_fx_init(&fx, NULL);
	region_reg(&src, &fx.a, BLUE_ACCESS_LOCAL_WRITE, 9);
	region_reg(&dst, &fx.b, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE, -1);
	access_err0 = fx.b.ctx->eng.st.rx_access_err;
	post_rdma(&fx.a, BLUE_WR_RDMA_WRITE, &src, &dst);
	rc_progress(&fx);
	cr_assert(fx.b.qp->live->rx_pkts > 0 && fx.b.qp->live->rx_pkts < MSG_PKTS,
		  "the dereg must land mid-message (%llu of %u packets in)",
		  (unsigned long long)fx.b.qp->live->rx_pkts, MSG_PKTS);
	cr_assert_eq(memcmp(dst.buf, src.buf, MTU_BYTES), 0, "WRITE FIRST is placed");
	region_drop(&dst);
	/* IBA 9.7.5.2.4: the R_Key no longer validates: remote access NAK, both to ERROR */
	expect_err(&fx, BLUE_WC_REM_ACCESS_ERR);
	cr_assert_eq(fx.b.qp->live->state, BLUE_QPS_ERR);
	cr_assert_eq(fx.b.ctx->eng.st.rx_access_err, access_err0 + 1);
	region_fini(&src);
	rc_fx_fini(&fx);
}

/* B deregisters the source of a READ response it is part way through sending. */
Test(rc_mr, read_source_dereg_mid_response)
{
	struct region src, dst;
	struct rc_fx fx;
	uint64_t access_err0, b_tx;

	rc_fx_init(&fx, NULL);
	region_reg(&src, &fx.b, BLUE_ACCESS_REMOTE_READ, 11);
	region_reg(&dst, &fx.a, BLUE_ACCESS_LOCAL_WRITE, -1);
	access_err0 = fx.b.ctx->eng.st.rx_access_err;
	post_rdma(&fx.a, BLUE_WR_RDMA_READ, &dst, &src);
	rc_progress(&fx);
	b_tx = fx.b.qp->live->tx_pkts;
	cr_assert(b_tx > 0 && b_tx < MSG_PKTS,
		  "the dereg must land mid-response (%llu of %u responses out)",
		  (unsigned long long)b_tx, MSG_PKTS);
	region_drop(&src);
	expect_err(&fx, BLUE_WC_REM_ACCESS_ERR);
	cr_assert_eq(fx.b.qp->live->state, BLUE_QPS_ERR);
	cr_assert_eq(fx.b.ctx->eng.st.rx_access_err, access_err0 + 1);
	/* the responses B sent before the dereg are all A placed; one NAK followed */
	cr_assert_eq(fx.b.qp->live->tx_pkts, b_tx + 1, "B sent %llu frames, %llu + the NAK",
		     (unsigned long long)fx.b.qp->live->tx_pkts, (unsigned long long)b_tx);
	cr_assert(rc_check(dst.buf, b_tx * MTU_BYTES, 11), "the responses before it are placed");
	region_fini(&dst);
	rc_fx_fini(&fx);
}

/*
 * An SGE whose lkey is valid but whose address lies past its MR, on a page that faults:
 * the requester refuses it with a local protection error and reads nothing there.
 * @gathered: the bad SGE is the second of two (the gather path), else alone (the
 * zero-copy path).
 */
static void sge_outside_case(bool gathered)
{
	struct blue_send_wr wr;
	struct blue_sge sge[2];
	struct region dst;
	struct blue_mr *mr;
	struct rc_fx fx;
	uint8_t *pages;

	rc_fx_init(&fx, NULL);
	pages = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(pages, MAP_FAILED);
	cr_assert_eq(mprotect(pages + 4096, 4096, PROT_NONE), 0);
	mr = blue_reg_mr(fx.a.pd, pages, 4096, BLUE_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(mr);
	region_reg(&dst, &fx.b, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE, -1);
	sge[0] = (struct blue_sge){ (uintptr_t)pages, 512, mr->lkey };
	sge[1] = (struct blue_sge){ (uintptr_t)pages + 4096, 512, mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 7;
	wr.send_flags = BLUE_SEND_SIGNALED;
	wr.opcode = BLUE_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)dst.buf;
	wr.wr.rdma.rkey = dst.mr->rkey;
	wr.sg_list = gathered ? sge : &sge[1];
	wr.num_sge = gathered ? 2 : 1;
	rc_post_send(&fx.a, &wr);
	expect_err(&fx, BLUE_WC_LOC_PROT_ERR);
	cr_assert_eq(fx.b.qp->live->rx_pkts, 0, "nothing went out");
	region_fini(&dst);
	cr_assert_eq(blue_dereg_mr(mr), 0);
	cr_assert_eq(munmap(pages, 2 * 4096), 0);
	rc_fx_fini(&fx);
}

Test(rc_mr, sge_outside_its_mr_is_refused) { sge_outside_case(false); }
Test(rc_mr, gathered_sge_outside_its_mr_is_refused) { sge_outside_case(true); }
