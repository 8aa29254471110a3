// SPDX-License-Identifier: MIT
/*
 * What keeps blue-manager's processes and tenants apart, at the lowest layers:
 *  - the command layer (runtime/mgr_cmd.c, blue__mgr_call): a session names only the
 *    handles it made; another session's handle is EBADF, its PD cannot hold this
 *    session's MR, and the tenant's quota answers EDQUOT with the daemon's message;
 *  - the wire (the engine over the loopback HAL): one context, as in the daemon, with a
 *    QP of tenant B and an MR of tenant C in another PD; a WRITE to B's QP naming C's
 *    rkey (a peer guessing it) is NAKed with a remote access error and C's bytes never
 *    change, while B's own MR takes the same WRITE.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/device.h"
#include "runtime/mgr_session.h"
#include "runtime/mr.h"
#include "runtime/qp.h"
#include "runtime/tenant.h"
#include "tests/unit/rc_fixture.h"

#define WAIT_MS 3000

struct sess {
	struct blue_mgr_session ses;
	struct blue_mgr_req req;
	struct blue_mgr_rep rep;
	struct blue_mgr_call call;
};

static void sess_init(struct sess *s, struct blue_context *ctx, struct blue_tenant *t,
		      unsigned int id)
{
	memset(s, 0, sizeof(*s));
	s->ses.id = id;
	s->ses.fd = -1;
	s->ses.pid = getpid();
	s->ses.hello = 1;
	s->ses.tenant = t;
	s->call.ctx = ctx;
	s->call.ses = &s->ses;
	s->call.req = &s->req;
	s->call.rep = &s->rep;
	s->call.fd_in = -1;
}

/* One request of @s. Return: the reply's errno. */
static int ask(struct sess *s, uint32_t op, uint32_t handle)
{
	s->req.op = op;
	s->req.handle = handle;
	blue__mgr_call(&s->call);
	for (int i = 0; i < s->call.nfds_out; i++)
		if (s->call.fds_out[i] >= 0)
			close(s->call.fds_out[i]);
	return s->rep.err;
}

static int reg(struct sess *s, uint32_t pd, void *buf, size_t len)
{
	memset(&s->req.u, 0, sizeof(s->req.u));
	s->req.u.reg_mr.pd = pd;
	s->req.u.reg_mr.access = BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE;
	s->req.u.reg_mr.addr = (uintptr_t)buf;
	s->req.u.reg_mr.length = len;
	return ask(s, BLUE_MGR_REG_MR, 0);
}

Test(mgr_isolation, sessions_name_only_their_own_handles)
{
	static uint8_t buf1[4096], buf2[4096];
	struct blue_tenant_table tt;
	struct sess *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct rc_fx fx;
	uint32_t pd_a;

	cr_assert(a && b);
	rc_fx_init_noqp(&fx, NULL);
	blue__tenants_init(&tt);
	cr_assert_eq(blue__tenants_parse(&tt, "tenant ta mrs=1\ntenant tb\ndefault tb\n", "t"), 0);
	sess_init(a, fx.a.ctx, blue__tenant_find(&tt, "ta"), 1);
	sess_init(b, fx.a.ctx, blue__tenant_find(&tt, "tb"), 2);

	cr_assert_eq(ask(a, BLUE_MGR_ALLOC_PD, 0), 0);
	pd_a = a->rep.handle;
	cr_assert_neq(pd_a, 0);
	/* b has made nothing: a's handle names nothing of b's */
	cr_assert_eq(ask(b, BLUE_MGR_DEALLOC_PD, pd_a), EBADF);
	cr_assert_eq(reg(b, pd_a, buf2, sizeof(buf2)), EBADF, "b registered into a's PD");
	/* a's own, within its quota of one MR; the second says EDQUOT, naming the limit */
	cr_assert_eq(reg(a, pd_a, buf1, sizeof(buf1)), 0);
	cr_assert_eq(reg(a, pd_a, buf2, sizeof(buf2)), EDQUOT);
	cr_assert(strstr(a->rep.msg, "tenant ta: its MR quota (mrs=1) is reached"), "%s", a->rep.msg);
	cr_assert_eq(blue__tenant_find(&tt, "ta")->use.mrs, 1);
	cr_assert_eq(blue__tenant_find(&tt, "tb")->use.mrs, 0, "a's MR counted for b");
	/* a session that ends gives everything back */
	blue__mgr_session_drop(fx.a.ctx, &a->ses);
	cr_assert_eq(blue__tenant_find(&tt, "ta")->use.mrs, 0);
	cr_assert_eq(blue__tenant_find(&tt, "ta")->use.mr_bytes, 0);
	blue__mgr_session_drop(fx.a.ctx, &b->ses);
	free(a);
	free(b);
	rc_fx_fini(&fx);
}

Test(mgr_isolation, a_guessed_rkey_of_another_tenant_is_naked)
{
	uint8_t *src = malloc(4096), *mine = calloc(1, 4096), *theirs = calloc(1, 4096);
	struct blue_mr *msrc, *mmine, *mtheirs;
	struct blue_pd *pd_c;
	struct blue_sge sge;
	struct blue_send_wr wr;
	struct rc_fx fx;
	struct blue_wc wc;

	cr_assert(src && mine && theirs);
	/* one context, as in the daemon: a's QP and b's QP, each tenant its own PD */
	rc_fx_init_self(&fx, NULL);
	rc_fill(src, 4096, 3);
	msrc = blue_reg_mr(fx.a.pd, src, 4096, 0);
	mmine = blue_reg_mr(fx.b.pd, mine, 4096, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE);
	pd_c = blue_alloc_pd(fx.a.ctx);	/* tenant C: no QP of its own is talked to */
	mtheirs = blue_reg_mr(pd_c, theirs, 4096, BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE);
	cr_assert(msrc && mmine && pd_c && mtheirs);

	sge = (struct blue_sge){ .addr = (uintptr_t)src, .length = 4096, .lkey = msrc->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = BLUE_WR_RDMA_WRITE;
	wr.send_flags = BLUE_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)mine;
	wr.wr.rdma.rkey = mmine->rkey;
	rc_post_send(&fx.a, &wr);
	wc = rc_wait1(&fx, fx.a.scq, WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "B's own MR through B's QP: %d", wc.status);
	cr_assert(rc_check(mine, 4096, 3));

	/* the same WRITE through B's QP, naming C's region and key: refused, untouched */
	wr.wr_id = 2;
	wr.wr.rdma.remote_addr = (uintptr_t)theirs;
	wr.wr.rdma.rkey = mtheirs->rkey;
	rc_post_send(&fx.a, &wr);
	wc = rc_wait1(&fx, fx.a.scq, WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_REM_ACCESS_ERR, "status %d", wc.status);
	for (int i = 0; i < 4096; i++)
		cr_assert_eq(theirs[i], 0, "C's byte %d changed", i);
	cr_assert_eq(fx.b.qp->live->last_nak_syndrome, BLUE_NAK_REM_ACCESS_ERR);

	cr_assert_eq(blue_dereg_mr(mtheirs), 0);
	cr_assert_eq(blue_dealloc_pd(pd_c), 0);
	cr_assert_eq(blue_dereg_mr(mmine), 0);
	cr_assert_eq(blue_dereg_mr(msrc), 0);
	rc_fx_fini(&fx);
	free(src);
	free(mine);
	free(theirs);
}
