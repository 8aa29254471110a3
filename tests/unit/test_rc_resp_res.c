// SPDX-License-Identifier: MIT
/*
 * Responder resources over the loopback HAL: duplicate READs are replayed only from
 * READs that executed, within the bytes they covered, and no more READs/atomics are in
 * progress than max_dest_rd_atomic. Forged requests go straight into B's responder
 * (blue__resp_rx, the layer that decides), and what B answers is read back from its
 * QP's own counters: response frames and payload bytes out.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/codec.h"
#include "runtime/progress.h"
#include "runtime/qp.h"
#include "tests/unit/rc_fixture.h"

#define KiB		1024u
#define MiB		(1024u * KiB)
#define REAL_LEN	(64 * KiB)	/* the READ that really runs: 64 response packets */

struct bside {
	uint8_t *remote;	/* B's memory the READs name */
	struct blue_mr *rmr;
	uint8_t *local;		/* A's sink */
	struct blue_mr *lmr;
};

static void bside_init(struct bside *m, struct rc_fx *fx)
{
	m->remote = malloc(MiB);
	m->local = calloc(1, REAL_LEN);
	cr_assert(m->remote && m->local);
	rc_fill(m->remote, MiB, 17);
	m->rmr = blue_reg_mr(fx->b.pd, m->remote, MiB, BLUE_ACCESS_REMOTE_READ);
	m->lmr = blue_reg_mr(fx->a.pd, m->local, REAL_LEN, BLUE_ACCESS_LOCAL_WRITE);
	cr_assert(m->rmr && m->lmr);
}

static void bside_fini(struct bside *m)
{
	cr_assert_eq(blue_dereg_mr(m->rmr), 0);
	cr_assert_eq(blue_dereg_mr(m->lmr), 0);
	free(m->remote);
	free(m->local);
}

/* A's real READ of REAL_LEN bytes of B; Return: its first PSN. */
static uint32_t real_read(struct rc_fx *fx, struct bside *m)
{
	struct blue_sge sge = { .addr = (uintptr_t)m->local, .length = REAL_LEN,
				.lkey = m->lmr->lkey };
	struct blue_send_wr wr;
	struct blue_wc wc;
	uint32_t psn = fx->a.qp->live->sq_psn;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = BLUE_WR_RDMA_READ;
	wr.send_flags = BLUE_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)m->remote;
	wr.wr.rdma.rkey = m->rmr->rkey;
	rc_post_send(&fx->a, &wr);
	wc = rc_wait1(fx, fx->a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "the real READ: %s",
		     blue_wc_status_str(wc.status));
	cr_assert_eq(memcmp(m->local, m->remote, REAL_LEN), 0);
	return psn;
}

/* A READ request "from A" at @psn for [@va, @va + @len) under @rkey, into B's responder. */
static void forge_read(struct rc_fx *fx, uint32_t psn, uint64_t va, uint32_t len,
		       uint32_t rkey)
{
	struct blue_pkt p;

	blue__qp_pkt(fx->a.qp, &p, BLUE_OP_RC_READ_REQUEST, psn & 0xffffff);
	p.reth.va = va;
	p.reth.rkey = rkey;
	p.reth.len = len;
	p.ackreq = 1;
	blue__resp_rx(fx->b.qp, &p);
}

/* Drive both engines until B has nothing left to send (bounded). */
static void drain(struct rc_fx *fx)
{
	const struct blue_resp *r = &fx->b.qp->resp;

	for (int i = 0; i < 100000 && r->out_cons != r->out_prod; i++)
		rc_progress(fx);
	cr_assert_eq(r->out_cons, r->out_prod, "B's responses never drained");
	rc_progress(fx);
}

/*
 * After one real 64 KiB READ, forged "duplicates": 32 at PSNs behind rq_psn where no
 * READ ever ran, 16 at the real READ's PSN asking for 1 MiB, and 16 there asking for
 * other bytes. A replay of the real READ would send nothing for any of them.
 */
Test(rc_resources, forged_duplicate_reads_send_nothing)
{
	struct rc_fx fx;
	struct bside m;
	uint64_t tx_pkts0, tx_bytes0, va;
	uint32_t psn, rq, i;

	rc_fx_init(&fx, NULL);
	bside_init(&m, &fx);
	psn = real_read(&fx, &m);
	drain(&fx);
	va = (uintptr_t)m.remote;
	rq = fx.b.qp->live->rq_psn;
	tx_pkts0 = fx.b.qp->live->tx_pkts;
	tx_bytes0 = fx.b.qp->live->tx_bytes;
	for (i = 0; i < 32; i++)	/* behind rq_psn, 2048 PSNs apart: never executed */
		forge_read(&fx, rq - 0x100000 + i * 2048, va, MiB, m.rmr->rkey);
	for (i = 0; i < 16; i++)	/* the real READ's PSN, more bytes than it read */
		forge_read(&fx, psn, va, MiB, m.rmr->rkey);
	for (i = 0; i < 16; i++)	/* the real READ's PSN, other bytes */
		forge_read(&fx, psn, va + REAL_LEN, REAL_LEN, m.rmr->rkey);
	drain(&fx);
	cr_assert_eq(fx.b.qp->live->tx_pkts, tx_pkts0, "B sent %llu response frames",
		     (unsigned long long)(fx.b.qp->live->tx_pkts - tx_pkts0));
	cr_assert_eq(fx.b.qp->live->tx_bytes, tx_bytes0, "B sent %llu response bytes",
		     (unsigned long long)(fx.b.qp->live->tx_bytes - tx_bytes0));
	cr_assert_eq(fx.b.qp->live->state, BLUE_QPS_RTS, "dropped, not an error");
	bside_fini(&m);
	rc_fx_fini(&fx);
}

/*
 * Duplicates of the real READ, exactly as a requester going back N sends them: from
 * its start, and from half way with the rest. They are replayed, and 16 of each, all
 * arriving before B sends, cost what one replay does: each supersedes the one before.
 */
Test(rc_resources, true_duplicates_are_replayed_once)
{
	struct rc_fx fx;
	struct bside m;
	uint64_t tx_bytes0, va;
	uint32_t psn, i, half = REAL_LEN / 2, mtu = 1024;

	rc_fx_init(&fx, NULL);
	bside_init(&m, &fx);
	psn = real_read(&fx, &m);
	drain(&fx);
	va = (uintptr_t)m.remote;
	tx_bytes0 = fx.b.qp->live->tx_bytes;
	for (i = 0; i < 16; i++)
		forge_read(&fx, psn, va, REAL_LEN, m.rmr->rkey);
	drain(&fx);
	cr_assert_eq(fx.b.qp->live->tx_bytes - tx_bytes0, REAL_LEN, "a whole replay: %llu",
		     (unsigned long long)(fx.b.qp->live->tx_bytes - tx_bytes0));
	tx_bytes0 = fx.b.qp->live->tx_bytes;
	for (i = 0; i < 16; i++)
		forge_read(&fx, psn + half / mtu, va + half, half, m.rmr->rkey);
	drain(&fx);
	cr_assert_eq(fx.b.qp->live->tx_bytes - tx_bytes0, half, "the second half: %llu",
		     (unsigned long long)(fx.b.qp->live->tx_bytes - tx_bytes0));
	cr_assert_eq(fx.b.qp->live->state, BLUE_QPS_RTS);
	bside_fini(&m);
	rc_fx_fini(&fx);
}

/*
 * max_dest_rd_atomic is 4 (the fixture's): four READs in progress are served, a fifth
 * while they are is an invalid request (IBA 9.4.3; rxe: too many RDMA/atomic requests).
 */
Test(rc_resources, read_beyond_max_dest_rd_atomic_is_refused)
{
	struct rc_fx fx;
	struct bside m;
	uint64_t inv0;
	uint32_t rq, i, npkts = REAL_LEN / 1024;

	rc_fx_init(&fx, NULL);
	bside_init(&m, &fx);
	cr_assert_eq(fx.b.qp->max_dest_rd_atomic, 4);
	rq = fx.b.qp->live->rq_psn;
	inv0 = fx.b.ctx->eng.st.rx_inv_req;
	for (i = 0; i < 4; i++)
		forge_read(&fx, rq + i * npkts, (uintptr_t)m.remote, REAL_LEN, m.rmr->rkey);
	cr_assert_eq(fx.b.qp->live->state, BLUE_QPS_RTS, "four are within the limit");
	cr_assert_eq(fx.b.qp->live->rq_psn, (rq + 4 * npkts) & 0xffffff, "all four executed");
	forge_read(&fx, rq + 4 * npkts, (uintptr_t)m.remote, REAL_LEN, m.rmr->rkey);
	cr_assert_eq(fx.b.qp->live->state, BLUE_QPS_ERR, "the fifth is refused");
	cr_assert_eq(fx.b.ctx->eng.st.rx_inv_req, inv0 + 1);
	cr_assert_eq(fx.b.qp->live->last_nak_syndrome, BLUE_NAK_INVALID_REQ);
	cr_assert_eq(fx.b.qp->live->last_nak_psn, (rq + 4 * npkts) & 0xffffff);
	bside_fini(&m);
	rc_fx_fini(&fx);
}
