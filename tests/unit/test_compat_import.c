// SPDX-License-Identifier: MIT
/*
 * ibv_import_device / ibv_import_pd / ibv_import_mr within one process, as rdma-core's
 * test_shared_pd.SharedPDTestCase uses them: a second context from a dup of the first's
 * cmd_fd, the PD and MR imported into it by handle, and RC traffic through them.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/test_compat_fx.h"

static void quiet(void)
{
	setenv("BLUE_LOG", "0", 1);
}

/* An RDMA WRITE of @len bytes from @s's @off into @peer's @poff (rkey @rkey). */
static void write_to(struct cx_side *s, uint32_t off, uint64_t raddr, uint32_t rkey,
		     uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(s->buf + off), .length = len,
			       .lkey = s->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	cr_assert_eq(ibv_post_send(s->qp, &wr, &bad), 0);
}

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

/* test_shared_pd.SharedPDTestCase.test_imported_rc_ex_rdma_write */
Test(compat_import, imported_pd_and_mr_carry_traffic, .init = quiet)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = 64, .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct cx_side orig;
	struct ibv_context *ctx2;
	struct ibv_pd *pd2;
	struct ibv_mr *mr2;
	struct ibv_wc wc;
	struct cx_fx fx;
	int fd;

	cx_init_noqp(&fx);
	fd = dup(fx.a.ctx->cmd_fd);
	cr_assert_geq(fd, 0);
	ctx2 = ibv_import_device(fd);
	cr_assert_not_null(ctx2, "ibv_import_device: %s", strerror(errno));
	cr_assert_eq(ctx2->cmd_fd, fd, "the import's command fd is the one it was given");
	cr_assert_eq(ctx2->device, fx.a.ctx->device);
	pd2 = ibv_import_pd(ctx2, fx.a.pd->handle);
	cr_assert_not_null(pd2, "ibv_import_pd: %s", strerror(errno));
	cr_assert_eq(pd2->context, ctx2);
	cr_assert_eq(pd2->handle, fx.a.pd->handle);
	mr2 = ibv_import_mr(pd2, fx.a.mr->handle);
	cr_assert_not_null(mr2, "ibv_import_mr: %s", strerror(errno));
	cr_assert_eq(mr2->pd, pd2);
	cr_assert_eq(mr2->lkey, fx.a.mr->lkey);
	cr_assert_eq(mr2->rkey, fx.a.mr->rkey);
	cr_assert_eq(mr2->length, fx.a.mr->length);
	/* the owner cannot free what is imported */
	cr_assert_eq(ibv_dereg_mr(fx.a.mr), EBUSY);
	cr_assert_eq(ibv_dealloc_pd(fx.a.pd), EBUSY);

	/* side a is now the imported context, with a CQ and QP of its own on the PD */
	orig = fx.a;
	fx.a.ctx = ctx2;
	fx.a.pd = pd2;
	fx.a.mr = mr2;
	fx.a.cq = ibv_create_cq_ex(ctx2, &ca);
	cr_assert_not_null(fx.a.cq);
	fx.a.qp = cx_qp_create(&fx.a, 0);
	fx.b.qp = cx_qp_create(&fx.b, 0);
	cx_connect(&fx);

	/* b writes into the memory through the imported MR's rkey */
	fill(fx.b.buf, 512, 3);
	write_to(&fx.b, 0, (uintptr_t)fx.a.buf + 256, mr2->rkey, 512);
	cx_wait(&fx, &fx.b, &wc);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(memcmp(fx.a.buf + 256, fx.b.buf, 512), 0, "the bytes b wrote");
	/* the imported context's QP writes from it with the imported lkey */
	fill(fx.a.buf + 4096, 300, 11);
	write_to(&fx.a, 4096, (uintptr_t)fx.b.buf + 2048, fx.b.mr->rkey, 300);
	cx_wait(&fx, &fx.a, &wc);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(memcmp(fx.b.buf + 2048, fx.a.buf + 4096, 300), 0, "the bytes a wrote");

	cr_assert_eq(ibv_destroy_qp(fx.a.qp), 0);
	cr_assert_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(fx.a.cq)), 0);
	ibv_unimport_mr(mr2);
	ibv_unimport_pd(pd2);
	cr_assert_eq(ibv_close_device(ctx2), 0);
	cr_assert_eq(fcntl(fd, F_GETFD), -1, "the import's close closes its command fd");
	cr_assert_geq(fcntl(orig.ctx->cmd_fd, F_GETFD), 0, "the first context's stays open");
	fx.a = orig;	/* its PD and MR are free to go now: cx_fini deallocs them */
	cx_fini(&fx);
}

/* An import's release (unimport or dealloc/dereg) frees the import, not the object. */
Test(compat_import, dealloc_of_an_import_leaves_the_object, .init = quiet)
{
	struct ibv_context *ctx2;
	struct ibv_pd *pd2;
	struct ibv_mr *mr2;
	struct cx_fx fx;

	cx_init_noqp(&fx);
	ctx2 = ibv_import_device(dup(fx.a.ctx->cmd_fd));
	cr_assert_not_null(ctx2);
	pd2 = ibv_import_pd(ctx2, fx.a.pd->handle);
	cr_assert_not_null(pd2);
	mr2 = ibv_import_mr(pd2, fx.a.mr->handle);
	cr_assert_not_null(mr2);
	cr_assert_eq(ibv_dereg_mr(mr2), 0);
	cr_assert_eq(ibv_dealloc_pd(pd2), 0);
	cr_assert_eq(ibv_close_device(ctx2), 0);
	cx_fini(&fx);	/* asserts the owner's dereg and dealloc succeed: no import stands */
}

Test(compat_import, bad_imports_say_why, .init = quiet)
{
	struct ibv_context *ctx2;
	struct cx_fx fx;
	int p[2];

	cx_init_noqp(&fx);
	errno = 0;
	cr_assert_null(ibv_import_device(-1));
	cr_assert_eq(errno, EBADF);
	/* an fd that is no context's: blue's contexts are imported within their process */
	cr_assert_eq(pipe(p), 0);
	errno = 0;
	cr_assert_null(ibv_import_device(p[0]));
	cr_assert_eq(errno, EOPNOTSUPP);
	cr_assert_geq(fcntl(p[0], F_GETFD), 0, "a failed import leaves the fd open");
	close(p[0]);
	close(p[1]);
	ctx2 = ibv_import_device(dup(fx.a.ctx->cmd_fd));
	cr_assert_not_null(ctx2);
	errno = 0;
	cr_assert_null(ibv_import_pd(ctx2, 0xfffffff0u));
	cr_assert_eq(errno, EINVAL);
	/* b's PD is another context's (not imported from): not found by its handle */
	cr_assert_null(ibv_import_pd(ctx2, fx.b.pd->handle));
	/* an MR handle under a PD that is not the MR's */
	cr_assert_null(ibv_import_mr(fx.b.pd, fx.a.mr->handle));
	errno = 0;
	ibv_unimport_pd(fx.a.pd);	/* not an import: refused, nothing freed */
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(ibv_close_device(ctx2), 0);
	cx_fini(&fx);
}
