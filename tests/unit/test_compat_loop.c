// SPDX-License-Identifier: MIT
/*
 * Two verbs contexts of one device in one process (rdma-core's tests open a server and
 * a client; UCX and Open MPI's osc ucx open their own): they share the device's core,
 * one libblue context, and a QP of one connects to a QP of the other through loopback.
 * Objects of two contexts do not mix (verbs: a QP's PD and CQs are its context's), and
 * closing one context frees its own leftovers only.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "runtime/device.h"
#include "runtime/progress.h"
#include "tests/unit/test_compat_fx.h"

static void post_recv(struct cx_side *s, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)s->buf + 4096, len, s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1 }, *bad;

	cr_assert_eq(ibv_post_recv(s->qp, &wr, &bad), 0);
}

/* @len bytes of pattern @seed from @from's buffer into @to's (at 4096), checked. */
static void send_one(struct cx_fx *fx, struct cx_side *from, struct cx_side *to,
		     uint32_t len, uint8_t seed)
{
	struct ibv_sge sge = { (uintptr_t)from->buf, len, from->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	uint32_t i;

	for (i = 0; i < len; i++)
		from->buf[i] = (uint8_t)(seed + i * 7);
	memset(to->buf + 4096, 0, len);
	post_recv(to, len);
	cr_assert_eq(ibv_post_send(from->qp, &wr, &bad), 0);
	cx_wait(fx, from, &wc);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "send: %s", ibv_wc_status_str(wc.status));
	cx_wait(fx, to, &wc);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "recv: %s", ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.byte_len, len);
	cr_assert_eq(wc.qp_num, to->qp->qp_num);
	cr_assert_eq(memcmp(to->buf + 4096, from->buf, len), 0, "received bytes differ");
}

Test(compat_loop, two_contexts_of_one_device_talk)
{
	struct cx_fx fx;

	cx_init_shared_noqp(&fx);
	cr_assert_eq(bv_ctx(fx.a.ctx)->bctx, bv_ctx(fx.b.ctx)->bctx, "one libblue context");
	fx.a.qp = cx_qp_create(&fx.a, 0);
	fx.b.qp = cx_qp_create(&fx.b, 0);
	cx_connect(&fx);
	send_one(&fx, &fx.a, &fx.b, 4000, 1);
	send_one(&fx, &fx.b, &fx.a, 64, 2);
	cr_assert_gt(blue__engine_stats(bv_ctx(fx.a.ctx)->bctx)->tx_loopback, 0);
	cx_fini(&fx);
}

/* A QP of context A with B's PD or CQ, a CQ of A on B's channel: EINVAL, as verbs has it. */
Test(compat_loop, objects_of_two_contexts_do_not_mix)
{
	struct ibv_qp_init_attr ia = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_comp_channel *ch;
	struct cx_fx fx;
	struct ibv_qp *qp;

	cx_init_shared_noqp(&fx);
	ia.send_cq = ibv_cq_ex_to_cq(fx.a.cq);
	ia.recv_cq = ibv_cq_ex_to_cq(fx.b.cq);	/* B's */
	errno = 0;
	qp = ibv_create_qp(fx.a.pd, &ia);
	cr_assert_null(qp, "a QP on A's PD took B's CQ");
	cr_assert_eq(errno, EINVAL);
	ia.send_cq = ibv_cq_ex_to_cq(fx.b.cq);
	ia.recv_cq = ibv_cq_ex_to_cq(fx.a.cq);
	errno = 0;
	cr_assert_null(ibv_create_qp(fx.a.pd, &ia), "a QP on A's PD took B's send CQ");
	cr_assert_eq(errno, EINVAL);
	ch = ibv_create_comp_channel(fx.b.ctx);
	cr_assert_not_null(ch);
	errno = 0;
	cr_assert_null(ibv_create_cq(fx.a.ctx, 16, NULL, ch, 0), "A's CQ on B's channel");
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(ibv_destroy_comp_channel(ch), 0);
	/* the same objects of one context are fine */
	ia.send_cq = ia.recv_cq = ibv_cq_ex_to_cq(fx.b.cq);
	qp = ibv_create_qp(fx.b.pd, &ia);
	cr_assert_not_null(qp, "%s", strerror(errno));
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cx_fini(&fx);
}

/*
 * Closing B with objects left frees B's only: A's PD, CQ and MR live on in the one
 * libblue context, and A still works (a second context opened, and a QP pair on it).
 */
Test(compat_loop, close_frees_only_its_own_leftovers)
{
	struct blue_context *bctx;
	struct ibv_context *c2;
	struct ibv_pd *pd2;
	struct cx_fx fx;

	cx_init_shared_noqp(&fx);
	bctx = bv_ctx(fx.a.ctx)->bctx;
	cr_assert_eq(bctx->npd, 2);
	cr_assert_eq(bctx->ncq, 2);
	/* b's PD, CQ and MR are left to ibv_close_device */
	cr_assert_eq(ibv_close_device(fx.b.ctx), 0);
	fx.b.ctx = NULL;
	cr_assert_eq(bctx->npd, 1, "%u PDs left", bctx->npd);
	cr_assert_eq(bctx->ncq, 1, "%u CQs left", bctx->ncq);
	cr_assert_eq(bctx->nmr, 1, "%u MRs left", bctx->nmr);
	/* another context of the device again, talking to A */
	c2 = bv_context_wrap(bctx, &fx.a.dev);
	cr_assert_not_null(c2);
	pd2 = ibv_alloc_pd(c2);
	cr_assert_not_null(pd2);
	cr_assert_eq(bctx->npd, 2);
	cr_assert_eq(ibv_dealloc_pd(pd2), 0);
	cr_assert_eq(ibv_close_device(c2), 0);
	fx.shared = false;
	/* a's side closes the device's last context: the libblue context with it */
	cr_assert_eq(ibv_dereg_mr(fx.a.mr), 0);
	cr_assert_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(fx.a.cq)), 0);
	cr_assert_eq(ibv_dealloc_pd(fx.a.pd), 0);
	cr_assert_eq(ibv_close_device(fx.a.ctx), 0);
	cr_assert_null(fx.a.dev.core, "the core outlived the device's last context");
	blue_hal_destroy(fx.a.hal);
	blue_hal_destroy(fx.b.hal);
	free(fx.a.buf);
	free(fx.b.buf);
}

/*
 * Each context's cmd_fd is an open descriptor of its own, closed with it: rdma-core's
 * test_shared_pd dups it (os.dup) before it asks ibv_import_device() for a context, and
 * a -1 made that an error.
 */
Test(compat_loop, cmd_fd_is_an_open_descriptor)
{
	struct ibv_context *imp;
	struct cx_fx fx;
	int fd, dupfd;

	cx_init_shared_noqp(&fx);
	fd = fx.a.ctx->cmd_fd;
	cr_assert_geq(fd, 0, "cmd_fd %d", fd);
	cr_assert_neq(fx.b.ctx->cmd_fd, fd, "each context has its own");
	dupfd = dup(fd);
	cr_assert_geq(dupfd, 0, "dup(cmd_fd): %s", strerror(errno));
	/* the import itself: compat_import/imported_pd_and_mr_carry_traffic */
	imp = ibv_import_device(dupfd);
	cr_assert_not_null(imp, "ibv_import_device: %s", strerror(errno));
	cr_assert_eq(ibv_close_device(imp), 0);
	cx_fini(&fx);
	cr_assert_eq(fcntl(fd, F_GETFD), -1, "cmd_fd left open after ibv_close_device");
}
