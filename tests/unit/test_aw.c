// SPDX-License-Identifier: MIT
/*
 * ATOMIC WRITE and FLUSH (IBA 1.5) between two contexts over the loopback HAL: the 8
 * bytes land exactly, neighbours untouched; the rights each needs on the MR and the QP
 * (what rxe checks) and the NAK without them, memory untouched; FLUSH completes after
 * the WRITEs before it; and both survive the loss of their request or their response
 * (a duplicate is answered from its responder resource, never executed again).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/codec.h"
#include "runtime/qp.h"
#include "tests/unit/rc_fixture.h"

#define BUF	64
#define OFF	16		/* the word written: B's buffer + OFF */
#define OLD	0xa5		/* what B's buffer holds before */

static const uint8_t pattern[8] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef };

struct aw_fx {
	struct rc_fx fx;
	uint8_t *src, *dst;		/* A's 8 bytes, B's target buffer */
	struct blue_mr *smr, *dmr;
};

/*
 * Both sides connected with QP rights @qp_access and local ACK timeout @timeout (0: none);
 * B's buffer registered with @mr_access.
 */
static void aw_init_to(struct aw_fx *t, unsigned int qp_access, unsigned int mr_access,
		       uint8_t timeout)
{
	struct rc_opts o;

	rc_opts_default(&o);
	o.access = qp_access;
	o.timeout = timeout;
	rc_fx_init(&t->fx, &o);
	t->src = aligned_alloc(64, BUF);
	t->dst = aligned_alloc(64, BUF);
	cr_assert(t->src && t->dst);
	memset(t->src, 0, BUF);
	memcpy(t->src, pattern, sizeof(pattern));
	memset(t->dst, OLD, BUF);
	t->smr = blue_reg_mr(t->fx.a.pd, t->src, BUF, 0);
	t->dmr = blue_reg_mr(t->fx.b.pd, t->dst, BUF, mr_access);
	cr_assert(t->smr && t->dmr, "reg_mr");
}

static void aw_init(struct aw_fx *t, unsigned int qp_access, unsigned int mr_access)
{
	aw_init_to(t, qp_access, mr_access, 12);	/* the fixture's default */
}

static void aw_fini(struct aw_fx *t)
{
	cr_assert_eq(blue_dereg_mr(t->smr), 0);
	cr_assert_eq(blue_dereg_mr(t->dmr), 0);
	free(t->src);
	free(t->dst);
	rc_fx_fini(&t->fx);
}

static void atomic_write_wr(struct aw_fx *t, struct blue_send_wr *wr, struct blue_sge *sge,
			    uint64_t off)
{
	*sge = (struct blue_sge){ .addr = (uintptr_t)t->src, .length = 8,
				  .lkey = t->smr->lkey };
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = 0xa7;
	wr->opcode = BLUE_WR_ATOMIC_WRITE;
	wr->send_flags = BLUE_SEND_SIGNALED;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->wr.rdma.remote_addr = (uintptr_t)t->dst + off;
	wr->wr.rdma.rkey = t->dmr->rkey;
}

static void flush_wr(struct aw_fx *t, struct blue_send_wr *wr, uint8_t type, uint8_t level)
{
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = 0xf1;
	wr->opcode = BLUE_WR_FLUSH;
	wr->send_flags = BLUE_SEND_SIGNALED;
	wr->wr.flush.remote_addr = (uintptr_t)t->dst;
	wr->wr.flush.rkey = t->dmr->rkey;
	wr->wr.flush.length = BUF;
	wr->wr.flush.type = type;
	wr->wr.flush.level = level;
}

/* B's buffer: the pattern at OFF if @written, the old bytes everywhere else. */
static void expect_dst(const struct aw_fx *t, bool written)
{
	for (unsigned int i = 0; i < BUF; i++) {
		bool in = written && i >= OFF && i < OFF + 8;
		uint8_t want = in ? pattern[i - OFF] : OLD;

		cr_expect_eq(t->dst[i], want, "byte %u: 0x%02x, want 0x%02x", i, t->dst[i], want);
	}
}

static struct blue_wc post_wait(struct aw_fx *t, struct blue_send_wr *wr)
{
	rc_post_send(&t->fx.a, wr);
	return rc_wait1(&t->fx, t->fx.a.scq, RC_WAIT_MS);
}

/* Both sides on selective retransmission (what the CM records when both offer it). */
static void aw_selective(struct aw_fx *t)
{
	struct blue_retx_attr r = { .policy = BLUE_RETX_SELECTIVE };

	blue__qp_set_peer_caps(t->fx.a.qp, BLUE_CM_CAP_SELECTIVE_RETX);
	blue__qp_set_peer_caps(t->fx.b.qp, BLUE_CM_CAP_SELECTIVE_RETX);
	cr_assert_eq(blue_qp_set_retx(t->fx.a.qp, &r), 0);
	cr_assert_eq(blue_qp_set_retx(t->fx.b.qp, &r), 0);
}

#define RIGHTS (BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE | BLUE_ACCESS_REMOTE_READ | \
		BLUE_ACCESS_REMOTE_ATOMIC)

Test(aw_write, stores_8_bytes_exactly)
{
	struct blue_send_wr wr;
	struct blue_sge sge;
	struct blue_wc wc;
	struct aw_fx t;
	uint32_t psn0;

	aw_init(&t, RIGHTS, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE);
	atomic_write_wr(&t, &wr, &sge, OFF);
	psn0 = t.fx.a.qp->live->sq_psn;
	wc = post_wait(&t, &wr);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "%s", blue_wc_status_str(wc.status));
	cr_expect_eq(wc.opcode, BLUE_WC_ATOMIC_WRITE);
	cr_expect_eq(wc.wr_id, 0xa7);
	cr_expect_eq(wc.byte_len, 8);
	expect_dst(&t, true);
	/* one PSN, one request packet, one zero-length READ RESPONSE Only */
	cr_expect_eq(t.fx.a.qp->live->sq_psn, (psn0 + 1) & 0xffffff);
	cr_expect_eq(t.fx.b.qp->live->rq_psn, t.fx.a.qp->live->sq_psn);
	cr_expect_eq(t.fx.b.qp->live->tx_pkts, 1);
	cr_expect_eq(t.fx.a.qp->live->retransmits, 0);
	rc_quiet(&t.fx, t.fx.b.rcq, 2);	/* no receive completion on B */
	aw_fini(&t);
}

Test(aw_write, inline_stores_8_bytes)
{
	struct blue_send_wr wr;
	struct blue_sge sge;
	struct blue_wc wc;
	struct aw_fx t;

	aw_init(&t, RIGHTS, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE);
	atomic_write_wr(&t, &wr, &sge, OFF);
	sge.lkey = 0;			/* inline: no key is looked at */
	wr.send_flags |= BLUE_SEND_INLINE;
	rc_post_send(&t.fx.a, &wr);
	memset(t.src, 0, 8);		/* the bytes were copied at post */
	wc = rc_wait1(&t.fx, t.fx.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "%s", blue_wc_status_str(wc.status));
	expect_dst(&t, true);
	aw_fini(&t);
}

Test(aw_write, unaligned_or_not_8_bytes_is_einval)
{
	struct blue_send_wr wr, *bad = NULL;
	struct blue_sge sge;
	struct aw_fx t;

	aw_init(&t, RIGHTS, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE);
	atomic_write_wr(&t, &wr, &sge, OFF + 4);
	cr_expect_eq(blue_post_send(t.fx.a.qp, &wr, &bad), EINVAL, "unaligned remote_addr");
	cr_expect_eq(bad, &wr);
	atomic_write_wr(&t, &wr, &sge, OFF);
	sge.length = 4;
	cr_expect_eq(blue_post_send(t.fx.a.qp, &wr, &bad), EINVAL, "4 bytes");
	rc_quiet(&t.fx, t.fx.a.scq, 2);
	expect_dst(&t, false);
	aw_fini(&t);
}

/* An MR without REMOTE_WRITE (rxe checks ATOMIC WRITE as a write): NAK, nothing stored. */
Test(aw_write, without_remote_write_naks_rem_access)
{
	struct blue_send_wr wr;
	struct blue_sge sge;
	struct blue_wc wc;
	struct aw_fx t;

	aw_init(&t, RIGHTS, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_ATOMIC |
		BLUE_ACCESS_REMOTE_READ);
	atomic_write_wr(&t, &wr, &sge, OFF);
	wc = post_wait(&t, &wr);
	cr_assert_eq(wc.status, BLUE_WC_REM_ACCESS_ERR, "%s", blue_wc_status_str(wc.status));
	expect_dst(&t, false);
	cr_expect_eq(t.fx.b.ctx->eng.st.rx_access_err, 1);
	aw_fini(&t);
}

/* The QP without REMOTE_WRITE: an invalid request (rxe's check_qp_attr_access). */
Test(aw_write, qp_without_remote_write_naks_inv_req)
{
	struct blue_send_wr wr;
	struct blue_sge sge;
	struct blue_wc wc;
	struct aw_fx t;

	aw_init(&t, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_READ,
		BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE);
	atomic_write_wr(&t, &wr, &sge, OFF);
	wc = post_wait(&t, &wr);
	cr_assert_eq(wc.status, BLUE_WC_REM_INV_REQ_ERR, "%s", blue_wc_status_str(wc.status));
	expect_dst(&t, false);
	aw_fini(&t);
}

Test(aw_flush, global_with_the_mr_right_completes)
{
	struct blue_send_wr wr;
	struct blue_wc wc;
	struct aw_fx t;

	for (uint8_t level = BLUE_FLUSH_RANGE; level <= BLUE_FLUSH_MR; level++) {
		aw_init(&t, RIGHTS | BLUE_ACCESS_FLUSH_GLOBAL,
			BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_FLUSH_GLOBAL);
		flush_wr(&t, &wr, BLUE_FLUSH_GLOBAL, level);
		wc = post_wait(&t, &wr);
		cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "level %u: %s", level,
			     blue_wc_status_str(wc.status));
		cr_expect_eq(wc.opcode, BLUE_WC_FLUSH);
		cr_expect_eq(wc.wr_id, 0xf1);
		cr_expect_eq(wc.byte_len, 0);
		expect_dst(&t, false);
		aw_fini(&t);
	}
}

Test(aw_flush, global_without_the_mr_right_naks_rem_access)
{
	struct blue_send_wr wr;
	struct blue_wc wc;
	struct aw_fx t;

	aw_init(&t, RIGHTS | BLUE_ACCESS_FLUSH_GLOBAL,
		BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE);
	flush_wr(&t, &wr, BLUE_FLUSH_GLOBAL, BLUE_FLUSH_RANGE);
	wc = post_wait(&t, &wr);
	cr_assert_eq(wc.status, BLUE_WC_REM_ACCESS_ERR, "%s", blue_wc_status_str(wc.status));
	expect_dst(&t, false);
	cr_expect_eq(t.fx.b.ctx->eng.st.rx_access_err, 1);
	aw_fini(&t);
}

Test(aw_flush, range_past_the_mr_naks_rem_access)
{
	struct blue_send_wr wr;
	struct blue_wc wc;
	struct aw_fx t;

	aw_init(&t, RIGHTS | BLUE_ACCESS_FLUSH_GLOBAL,
		BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_FLUSH_GLOBAL);
	flush_wr(&t, &wr, BLUE_FLUSH_GLOBAL, BLUE_FLUSH_RANGE);
	wr.wr.flush.length = BUF + 1;
	wc = post_wait(&t, &wr);
	cr_assert_eq(wc.status, BLUE_WC_REM_ACCESS_ERR, "%s", blue_wc_status_str(wc.status));
	aw_fini(&t);
}

Test(aw_flush, qp_without_the_flush_right_naks_inv_req)
{
	struct blue_send_wr wr;
	struct blue_wc wc;
	struct aw_fx t;

	aw_init(&t, RIGHTS, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_FLUSH_GLOBAL);
	flush_wr(&t, &wr, BLUE_FLUSH_GLOBAL, BLUE_FLUSH_RANGE);
	wc = post_wait(&t, &wr);
	cr_assert_eq(wc.status, BLUE_WC_REM_INV_REQ_ERR, "%s", blue_wc_status_str(wc.status));
	aw_fini(&t);
}

/*
 * PERSISTENT: host memory has no persistence domain; rxe refuses to register an MR with
 * FLUSH_PERSISTENT on pages that are not pmem, and so does blue. A PERSISTENT FLUSH to
 * an MR with only GLOBAL therefore lacks the right: NAK.
 */
Test(aw_flush, persistent_mr_refused_and_flush_naked)
{
	struct blue_send_wr wr;
	struct blue_wc wc;
	struct aw_fx t;

	aw_init(&t, RIGHTS | BLUE_ACCESS_FLUSH_GLOBAL | BLUE_ACCESS_FLUSH_PERSISTENT,
		BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_FLUSH_GLOBAL);
	errno = 0;
	cr_expect_null(blue_reg_mr(t.fx.b.pd, t.dst, BUF,
				   BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_FLUSH_PERSISTENT));
	cr_expect_eq(errno, EINVAL);
	flush_wr(&t, &wr, BLUE_FLUSH_PERSISTENT, BLUE_FLUSH_RANGE);
	wc = post_wait(&t, &wr);
	cr_assert_eq(wc.status, BLUE_WC_REM_ACCESS_ERR, "%s", blue_wc_status_str(wc.status));
	aw_fini(&t);
}

Test(aw_flush, bad_type_or_level_is_einval)
{
	struct blue_send_wr wr, *bad = NULL;
	struct aw_fx t;

	aw_init(&t, RIGHTS | BLUE_ACCESS_FLUSH_GLOBAL,
		BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_FLUSH_GLOBAL);
	flush_wr(&t, &wr, 0, BLUE_FLUSH_RANGE);
	cr_expect_eq(blue_post_send(t.fx.a.qp, &wr, &bad), EINVAL, "type 0");
	flush_wr(&t, &wr, 4, BLUE_FLUSH_RANGE);
	cr_expect_eq(blue_post_send(t.fx.a.qp, &wr, &bad), EINVAL, "type 4");
	flush_wr(&t, &wr, BLUE_FLUSH_GLOBAL, 2);
	cr_expect_eq(blue_post_send(t.fx.a.qp, &wr, &bad), EINVAL, "level 2");
	cr_expect_eq(bad, &wr);
	rc_quiet(&t.fx, t.fx.a.scq, 2);
	aw_fini(&t);
}

/*
 * WRITEs then a FLUSH, with one WRITE packet lost: the FLUSH completes after the WRITEs,
 * and when it does, every byte is in place.
 */
static void writes_then_flush(int drop_opcode)
{
	const uint32_t len = 16384;
	struct rc_drop d = { .opcode = drop_opcode, .psn = -1, .max_drops = 1 };
	struct blue_send_wr w1, w2, fl;
	struct blue_sge sge;
	struct blue_wc wc[3];
	struct rc_mem m;
	struct aw_fx t;
	int n;

	aw_init(&t, RIGHTS | BLUE_ACCESS_FLUSH_GLOBAL,
		BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_FLUSH_GLOBAL);
	rc_mem_init(&m, &t.fx.a, &t.fx.b, len, 77, BLUE_ACCESS_LOCAL_WRITE |
		    BLUE_ACCESS_REMOTE_WRITE | BLUE_ACCESS_FLUSH_GLOBAL);
	if (drop_opcode >= 0)
		rc_drop_install(drop_opcode == BLUE_OP_RC_READ_RESPONSE_ONLY ? t.fx.b.hal :
				t.fx.a.hal, &d);
	sge = (struct blue_sge){ .addr = (uintptr_t)m.src, .length = len / 2,
				 .lkey = m.smr->lkey };
	memset(&w1, 0, sizeof(w1));
	w1.wr_id = 1;
	w1.opcode = BLUE_WR_RDMA_WRITE;
	w1.send_flags = BLUE_SEND_SIGNALED;
	w1.sg_list = &sge;
	w1.num_sge = 1;
	w1.wr.rdma.remote_addr = (uintptr_t)m.dst;
	w1.wr.rdma.rkey = m.dmr->rkey;
	w2 = w1;
	w2.wr_id = 2;
	w2.sg_list = &(struct blue_sge){ .addr = (uintptr_t)m.src + len / 2,
					 .length = len / 2, .lkey = m.smr->lkey };
	w2.wr.rdma.remote_addr = (uintptr_t)m.dst + len / 2;
	memset(&fl, 0, sizeof(fl));
	fl.wr_id = 3;
	fl.opcode = BLUE_WR_FLUSH;
	fl.send_flags = BLUE_SEND_SIGNALED;
	fl.wr.flush.remote_addr = (uintptr_t)m.dst;
	fl.wr.flush.rkey = m.dmr->rkey;
	fl.wr.flush.length = len;
	fl.wr.flush.type = BLUE_FLUSH_GLOBAL;
	fl.wr.flush.level = BLUE_FLUSH_RANGE;
	w1.next = &w2;
	w2.next = &fl;
	rc_post_send(&t.fx.a, &w1);
	n = rc_poll(&t.fx, t.fx.a.scq, wc, 3, RC_WAIT_MS);
	cr_assert_eq(n, 3, "%d completions", n);
	for (int i = 0; i < 3; i++) {
		cr_expect_eq(wc[i].status, BLUE_WC_SUCCESS, "wc %d: %s", i,
			     blue_wc_status_str(wc[i].status));
		cr_expect_eq(wc[i].wr_id, (uint64_t)i + 1, "in order");
	}
	cr_expect_eq(wc[2].opcode, BLUE_WC_FLUSH);
	cr_expect_eq(memcmp(m.src, m.dst, len), 0, "the WRITEs' bytes");
	if (drop_opcode >= 0) {
		cr_expect_eq(d.dropped, 1, "the drop filter matched");
		cr_expect_gt(t.fx.a.qp->live->retransmits, 0, "went back N");
	}
	rc_mem_fini(&m);
	aw_fini(&t);
}

Test(aw_flush, after_writes_completes_after_them) { writes_then_flush(-1); }
Test(aw_flush, after_writes_a_write_packet_lost) { writes_then_flush(BLUE_OP_RC_WRITE_MIDDLE); }
Test(aw_flush, after_writes_the_flush_lost) { writes_then_flush(BLUE_OP_RC_FLUSH); }
Test(aw_flush, after_writes_its_response_lost)
{
	writes_then_flush(BLUE_OP_RC_READ_RESPONSE_ONLY);
}

/* The ATOMIC WRITE request lost: the requester times out and resends it; it lands once. */
Test(aw_write, request_lost_is_resent)
{
	struct rc_drop d = { .opcode = BLUE_OP_RC_ATOMIC_WRITE, .psn = -1, .max_drops = 1 };
	struct blue_send_wr wr;
	struct blue_sge sge;
	struct blue_wc wc;
	struct aw_fx t;

	aw_init(&t, RIGHTS, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE);
	rc_drop_install(t.fx.a.hal, &d);
	atomic_write_wr(&t, &wr, &sge, OFF);
	wc = post_wait(&t, &wr);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "%s", blue_wc_status_str(wc.status));
	cr_expect_eq(d.dropped, 1);
	cr_expect_gt(t.fx.a.qp->live->retransmits, 0);
	expect_dst(&t, true);
	aw_fini(&t);
}

/*
 * The response lost: the resend is a duplicate at B, answered from its responder
 * resource and not executed again (rxe's replay). B's word is changed between the first
 * execution and the resend; a second execution would put the pattern back.
 */
static void response_lost(bool flush, bool selective)
{
	struct rc_drop d = { .opcode = BLUE_OP_RC_READ_RESPONSE_ONLY, .psn = -1,
			     .max_drops = 1 };
	uint64_t sentinel = 0x5e5e5e5e5e5e5e5eull, word;
	struct blue_send_wr wr;
	struct blue_sge sge;
	struct blue_wc wc;
	struct aw_fx t;
	int i;

	aw_init(&t, RIGHTS | BLUE_ACCESS_FLUSH_GLOBAL,
		BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE | BLUE_ACCESS_FLUSH_GLOBAL);
	if (selective)
		aw_selective(&t);
	rc_drop_install(t.fx.b.hal, &d);
	if (flush)
		flush_wr(&t, &wr, BLUE_FLUSH_GLOBAL, BLUE_FLUSH_MR);
	else
		atomic_write_wr(&t, &wr, &sge, OFF);
	rc_post_send(&t.fx.a, &wr);
	/* bounded: until B has executed it once (and its answer was dropped) */
	for (i = 0; i < 100000 && t.fx.b.qp->live->rq_psn == t.fx.a.qp->live->una_psn; i++)
		rc_progress(&t.fx);
	cr_assert_eq(d.dropped, 1, "B answered, and the answer was dropped");
	if (!flush)
		expect_dst(&t, true);
	memcpy(t.dst + OFF, &sentinel, 8);
	wc = rc_wait1(&t.fx, t.fx.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "%s", blue_wc_status_str(wc.status));
	cr_expect_eq(wc.opcode, flush ? BLUE_WC_FLUSH : BLUE_WC_ATOMIC_WRITE);
	cr_expect_gt(t.fx.a.qp->live->retransmits, 0, "A resent it");
	cr_expect_gt(t.fx.b.ctx->eng.st.rx_dup, 0, "B saw the duplicate");
	memcpy(&word, t.dst + OFF, 8);
	cr_expect_eq(word, sentinel, "executed again: 0x%016llx", (unsigned long long)word);
	aw_fini(&t);
}

Test(aw_write, response_lost_replayed_not_reexecuted) { response_lost(false, false); }
Test(aw_flush, response_lost_replayed) { response_lost(true, false); }
Test(aw_write, selective_response_lost_replayed) { response_lost(false, true); }
Test(aw_flush, selective_response_lost_replayed) { response_lost(true, true); }

/* Selective retransmission: a lost ATOMIC WRITE among WRITEs is resent alone, lands once. */
Test(aw_write, selective_request_lost_among_writes)
{
	struct rc_drop d = { .opcode = BLUE_OP_RC_ATOMIC_WRITE, .psn = -1, .max_drops = 1 };
	struct blue_send_wr aw, w;
	struct blue_sge sge, wsge;
	struct blue_wc wc[2];
	struct aw_fx t;
	int n;

	aw_init(&t, RIGHTS, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE);
	aw_selective(&t);
	rc_drop_install(t.fx.a.hal, &d);
	atomic_write_wr(&t, &aw, &sge, OFF);
	/* then a WRITE of 8 more bytes of A's buffer (zeros) right after the word */
	wsge = (struct blue_sge){ .addr = (uintptr_t)t.src + 8, .length = 8,
				  .lkey = t.smr->lkey };
	memset(&w, 0, sizeof(w));
	w.wr_id = 2;
	w.opcode = BLUE_WR_RDMA_WRITE;
	w.send_flags = BLUE_SEND_SIGNALED;
	w.sg_list = &wsge;
	w.num_sge = 1;
	w.wr.rdma.remote_addr = (uintptr_t)t.dst + OFF + 8;
	w.wr.rdma.rkey = t.dmr->rkey;
	aw.next = &w;
	rc_post_send(&t.fx.a, &aw);
	n = rc_poll(&t.fx, t.fx.a.scq, wc, 2, RC_WAIT_MS);
	cr_assert_eq(n, 2, "%d completions", n);
	cr_expect_eq(wc[0].status, BLUE_WC_SUCCESS, "%s", blue_wc_status_str(wc[0].status));
	cr_expect_eq(wc[0].opcode, BLUE_WC_ATOMIC_WRITE);
	cr_expect_eq(wc[1].status, BLUE_WC_SUCCESS, "%s", blue_wc_status_str(wc[1].status));
	cr_expect_eq(d.dropped, 1);
	cr_expect_eq(memcmp(t.dst + OFF, pattern, 8), 0, "the word");
	for (unsigned int i = OFF + 8; i < OFF + 16; i++)
		cr_expect_eq(t.dst[i], 0, "the WRITE's byte %u", i);
	aw_fini(&t);
}

/* A frame from B's address to A's QP, built by the codec and sent on B's socket. */
static void inject_from_b(struct rc_fx *fx, const struct blue_pkt *p)
{
	struct blue_frame f;
	int n;

	cr_assert_eq(blue_hal_tx_alloc(fx->b.hal, &f, 1), 1);
	n = blue_pkt_build(p, f.data, fx->b.hal->frame_size - fx->b.hal->headroom);
	cr_assert_gt(n, 0, "building the response: %d", n);
	f.len = (uint32_t)n;
	cr_assert_eq(blue_hal_tx_submit(fx->b.ctx->sock, &f, 1), 1);
	cr_assert_eq(blue_hal_tx_flush(fx->b.ctx->sock), 0);
}

/*
 * The answer to an ATOMIC WRITE is one zero-length READ RESPONSE Only with an ACK
 * AETH (rxe's completer takes nothing else): one with data, or with a NAK syndrome,
 * fails the WQE with a bad response. B's real answer is dropped; A has no ACK timer.
 */
static void bad_response(uint32_t paylen, uint8_t syndrome)
{
	static const uint8_t junk[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	/* one drop: the injected frame passes the same filter on B's end */
	struct rc_drop d = { .opcode = BLUE_OP_RC_READ_RESPONSE_ONLY, .psn = -1,
			     .max_drops = 1 };
	struct blue_send_wr wr;
	struct blue_sge sge;
	struct blue_pkt p;
	struct blue_wc wc;
	struct aw_fx t;
	uint32_t psn;
	int i;

	/* no ACK timer: only the injected answer acts */
	aw_init_to(&t, RIGHTS, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE, 0);
	rc_drop_install(t.fx.b.hal, &d);
	atomic_write_wr(&t, &wr, &sge, OFF);
	psn = t.fx.a.qp->live->sq_psn;
	rc_post_send(&t.fx.a, &wr);
	for (i = 0; i < 100000 && !d.dropped; i++)
		rc_progress(&t.fx);
	cr_assert_eq(d.dropped, 1, "B answered once");
	blue_pkt_init(&p, BLUE_OP_RC_READ_RESPONSE_ONLY);
	memcpy(p.dst_mac, t.fx.a.mac, 6);
	memcpy(p.src_mac, t.fx.b.mac, 6);
	p.saddr = t.fx.b.ip;
	p.daddr = t.fx.a.ip;
	p.sport = blue_udp_sport(t.fx.b.qp->qpn, t.fx.a.qp->qpn);
	p.dqpn = t.fx.a.qp->qpn;
	p.psn = psn;
	p.aeth.syndrome = syndrome;
	p.aeth.msn = 1;
	p.payload = junk;
	p.payload_len = paylen;
	inject_from_b(&t.fx, &p);
	wc = rc_wait1(&t.fx, t.fx.a.scq, RC_WAIT_MS);
	cr_expect_eq(wc.status, BLUE_WC_BAD_RESP_ERR, "%s", blue_wc_status_str(wc.status));
	aw_fini(&t);
}

Test(aw_write, response_with_data_is_bad_resp) { bad_response(8, 0x1f); }
Test(aw_write, response_with_nak_syndrome_is_bad_resp)
{
	bad_response(0, BLUE_NAK_REM_ACCESS_ERR);
}
