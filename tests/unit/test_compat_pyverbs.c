// SPDX-License-Identifier: MIT
/*
 * What rdma-core's own test suite (tests/compat/test_pyverbs.sh) expects of a provider,
 * each at the verbs layer over the loopback HAL: the test of the suite it stands for is
 * named above each case.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/cq.h"
#include "tests/unit/test_compat_fx.h"

static void quiet(void)
{
	setenv("BLUE_LOG", "0", 1);
}

/* test_device.DeviceTest.test_query_gid_table_bad_flow: a buffer smaller than the table
 * is EINVAL (rdma-core's ibv_query_gid_table, as the kernel answers it) */
Test(compat_pyverbs, gid_table_needs_room_for_every_gid, .init = quiet)
{
	struct ibv_gid_entry e[4];
	struct cx_fx fx;

	cx_init_noqp(&fx);
	errno = 0;
	cr_assert_eq(ibv_query_gid_table(fx.a.ctx, e, 0, 0), -EINVAL, "no room at all");
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(ibv_query_gid_table(fx.a.ctx, e, 1, 0), -EINVAL, "room for one of two");
	cr_assert_eq(ibv_query_gid_table(fx.a.ctx, e, 4, 0), 2, "the whole table");
	cr_assert_eq(e[0].gid_index, 0);
	cr_assert_eq(e[1].gid_index, 1);
	cr_assert_eq(e[1].gid_type, IBV_GID_TYPE_ROCE_V2);
	cx_fini(&fx);
}

/* test_shared_pd.SharedPDTestCase: the suite dup()s the context's cmd_fd to import the
 * device from it, and skips when the import says EOPNOTSUPP; a -1 fails the dup first */
Test(compat_pyverbs, cmd_fd_is_an_open_fd, .init = quiet)
{
	struct cx_fx fx;
	int fd;

	cx_init_noqp(&fx);
	fd = dup(fx.a.ctx->cmd_fd);
	cr_assert_geq(fd, 0, "dup(cmd_fd %d): %s", fx.a.ctx->cmd_fd, strerror(errno));
	close(fd);
	cr_assert_neq(fx.a.ctx->cmd_fd, fx.b.ctx->cmd_fd, "each context has its own");
	cx_fini(&fx);
}

/* test_qp.QPTest.test_create_rc_qp_ex_*: the suite's random ibv_create_qp_ex attributes
 * carry IBV_QP_INIT_ATTR_CREATE_FLAGS with no flag set (it sets flags on mlx only);
 * a flag blue lacks is still refused */
Test(compat_pyverbs, create_qp_ex_with_no_create_flags, .init = quiet)
{
	struct ibv_qp_init_attr_ex a;
	struct ibv_qp *qp;
	struct cx_fx fx;

	cx_init_noqp(&fx);
	memset(&a, 0, sizeof(a));
	a.send_cq = a.recv_cq = ibv_cq_ex_to_cq(fx.a.cq);
	a.cap = (struct ibv_qp_cap){ .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
				     .max_recv_sge = 1 };
	a.qp_type = IBV_QPT_RC;
	a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS;
	a.pd = fx.a.pd;
	qp = ibv_create_qp_ex(fx.a.ctx, &a);
	cr_assert_not_null(qp, "create_flags 0: %s", strerror(errno));
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	a.create_flags = IBV_QP_CREATE_SCATTER_FCS;
	errno = 0;
	cr_assert_null(ibv_create_qp_ex(fx.a.ctx, &a), "scatter FCS is a raw packet QP's");
	cr_assert_eq(errno, EOPNOTSUPP);
	cx_fini(&fx);
}

/* An RDMA WRITE of @len bytes from A's buffer to @raddr/@rkey at B; its completion. */
static enum ibv_wc_status write_to_b(struct cx_fx *fx, uint64_t raddr, uint32_t rkey,
				     uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)fx->a.buf, len, fx->a.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 5, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;
	struct ibv_wc wc;

	cr_assert_eq(ibv_post_send(fx->a.qp, &wr, &bad), 0);
	cx_wait(fx, &fx->a, &wc);
	cr_assert_eq(wc.wr_id, 5);
	return wc.status;
}

/* Completions of @s's CQ not yet polled: in libblue's ring and in compat's batch. */
static uint32_t cq_pending(struct cx_side *s)
{
	struct bv_cq *cq = bv_cq(ibv_cq_ex_to_cq(s->cq));

	return blue_ring_count(&cq->bcq->ring) + (uint32_t)(cq->nwc - cq->cur);
}

/* The same WRITE posted only, as @wr_id. Return: ibv_post_send's. */
static int write_to_b_nowait(struct cx_fx *fx, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)fx->a.buf, 8, fx->a.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)fx->b.buf, .rkey = fx->b.mr->rkey },
	}, *bad;

	return ibv_post_send(fx->a.qp, &wr, &bad);
}

/* test_mr.MRTest.test_mr_rereg_access(_bad_flow): the peer keeps the rkey it was given,
 * so the keys stay; without remote write, the next WRITE is a remote access error */
Test(compat_pyverbs, rereg_mr_access_keeps_the_keys, .init = quiet)
{
	struct cx_fx fx;
	uint32_t lkey, rkey;

	cx_init(&fx, 0);
	lkey = fx.b.mr->lkey;
	rkey = fx.b.mr->rkey;
	memset(fx.a.buf, 0xa5, 64);
	cr_assert_eq(write_to_b(&fx, (uintptr_t)fx.b.buf, rkey, 64), IBV_WC_SUCCESS);
	cr_assert_eq(fx.b.buf[63], 0xa5);
	cr_assert_eq(ibv_rereg_mr(fx.b.mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				  IBV_ACCESS_LOCAL_WRITE), 0, "rereg: %s", strerror(errno));
	cr_assert_eq(fx.b.mr->lkey, lkey);
	cr_assert_eq(fx.b.mr->rkey, rkey);
	memset(fx.a.buf, 0x5a, 64);
	cr_assert_eq(write_to_b(&fx, (uintptr_t)fx.b.buf, rkey, 64), IBV_WC_REM_ACCESS_ERR);
	cr_assert_eq(fx.b.buf[0], 0xa5, "the WRITE reached memory it may no longer write");
	cx_fini(&fx);
}

/* test_mr.MRTest.test_mr_rereg_addr: the same rkey now names the new range */
Test(compat_pyverbs, rereg_mr_translation_moves_the_range, .init = quiet)
{
	uint8_t *nbuf = calloc(1, 4096);
	struct cx_fx fx;

	cr_assert_not_null(nbuf);
	cx_init(&fx, 0);
	cr_assert_eq(ibv_rereg_mr(fx.b.mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, nbuf, 4096,
				  0), 0, "rereg: %s", strerror(errno));
	cr_assert_eq(fx.b.mr->addr, nbuf);
	cr_assert_eq(fx.b.mr->length, 4096);
	memset(fx.a.buf, 0x3c, 128);
	cr_assert_eq(write_to_b(&fx, (uintptr_t)nbuf + 100, fx.b.mr->rkey, 128),
		     IBV_WC_SUCCESS);
	cr_assert_eq(nbuf[100], 0x3c);
	cr_assert_eq(nbuf[227], 0x3c);
	cr_assert_eq(fx.b.buf[100], 0, "the old range was written");
	/* the old range is outside the MR now */
	cr_assert_eq(write_to_b(&fx, (uintptr_t)fx.b.buf, fx.b.mr->rkey, 8),
		     IBV_WC_REM_ACCESS_ERR);
	cx_fini(&fx);
	free(nbuf);
}

/* test_mr.MRTest.test_mr_rereg_pd: in another PD than the QP's, the MR is out of reach;
 * back in the QP's PD it is reachable again; bad input changes nothing */
Test(compat_pyverbs, rereg_mr_pd, .init = quiet)
{
	struct ibv_pd *npd;
	struct cx_fx fx;

	cx_init(&fx, 0);
	npd = ibv_alloc_pd(fx.b.ctx);
	cr_assert_not_null(npd);
	errno = 0;
	cr_assert_eq(ibv_rereg_mr(fx.b.mr, 0, NULL, NULL, 0, 0), IBV_REREG_MR_ERR_INPUT);
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_eq(ibv_rereg_mr(fx.b.mr, IBV_REREG_MR_CHANGE_PD, fx.a.pd, NULL, 0, 0),
		     IBV_REREG_MR_ERR_INPUT, "a PD of another context");
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(ibv_rereg_mr(fx.b.mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				  IBV_ACCESS_REMOTE_WRITE), IBV_REREG_MR_ERR_INPUT,
		     "remote write without local write");
	cr_assert_eq(ibv_rereg_mr(fx.b.mr, IBV_REREG_MR_CHANGE_PD, npd, NULL, 0, 0), 0);
	cr_assert_eq(fx.b.mr->pd, npd);
	cr_assert_eq(ibv_dealloc_pd(npd), EBUSY, "the MR is in it now");
	cr_assert_eq(ibv_rereg_mr(fx.b.mr, IBV_REREG_MR_CHANGE_PD, fx.b.pd, NULL, 0, 0), 0);
	cr_assert_eq(write_to_b(&fx, (uintptr_t)fx.b.buf, fx.b.mr->rkey, 8), IBV_WC_SUCCESS,
		     "back in the QP's PD");
	cr_assert_eq(ibv_rereg_mr(fx.b.mr, IBV_REREG_MR_CHANGE_PD, npd, NULL, 0, 0), 0);
	cr_assert_eq(write_to_b(&fx, (uintptr_t)fx.b.buf, fx.b.mr->rkey, 8),
		     IBV_WC_REM_ACCESS_ERR, "the MR's PD is not the QP's");
	cr_assert_eq(ibv_rereg_mr(fx.b.mr, IBV_REREG_MR_CHANGE_PD, fx.b.pd, NULL, 0, 0), 0);
	cr_assert_eq(ibv_dealloc_pd(npd), 0);
	cx_fini(&fx);
}

/*
 * test_mr.MRTest.test_mr_rereg_{addr,pd}: B's receive WQE names memory its lkey no longer
 * reaches, so A's SEND fails at B (IBA 9.7.5.2.4: NAK remote operational error; rxe
 * sends AETH REM_OP_ERR). A's CQ serves its send and receive queues: the SEND's error
 * completion comes first, then A's posted receive, flushed as A's QP enters ERROR (the
 * suite polls one completion and wants "Remote operation error").
 */
Test(compat_pyverbs, send_into_a_bad_receive_wqe_completes_rem_op_err_first, .init = quiet)
{
	uint8_t *nbuf = calloc(1, 4096);
	struct ibv_sge as, bs, ss;
	struct ibv_recv_wr ar = { .wr_id = 20, .num_sge = 1 }, br = { .wr_id = 30, .num_sge = 1 };
	struct ibv_recv_wr *rbad;
	struct ibv_send_wr sw = { .wr_id = 10, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *sbad;
	struct ibv_wc wc;
	struct cx_fx fx;

	cr_assert_not_null(nbuf);
	cx_init(&fx, 0);
	as = (struct ibv_sge){ (uintptr_t)fx.a.buf + 4096, 256, fx.a.mr->lkey };
	ar.sg_list = &as;
	cr_assert_eq(ibv_post_recv(fx.a.qp, &ar, &rbad), 0);
	bs = (struct ibv_sge){ (uintptr_t)fx.b.buf, 256, fx.b.mr->lkey };
	br.sg_list = &bs;
	cr_assert_eq(ibv_post_recv(fx.b.qp, &br, &rbad), 0);
	/* the WQE's range is outside B's MR from now on */
	cr_assert_eq(ibv_rereg_mr(fx.b.mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, nbuf, 4096,
				  0), 0);
	memset(fx.a.buf, 0xff, 64);
	ss = (struct ibv_sge){ (uintptr_t)fx.a.buf, 64, fx.a.mr->lkey };
	sw.sg_list = &ss;
	cr_assert_eq(ibv_post_send(fx.a.qp, &sw, &sbad), 0);
	cx_wait(&fx, &fx.a, &wc);
	cr_assert_eq(wc.wr_id, 10, "A's first completion is wr_id %llu (%s), not the SEND's",
		     (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.status, IBV_WC_REM_OP_ERR, "the SEND: %s", ibv_wc_status_str(wc.status));
	cx_wait(&fx, &fx.a, &wc);
	cr_assert_eq(wc.wr_id, 20);
	cr_assert_eq(wc.status, IBV_WC_WR_FLUSH_ERR);
	cx_wait(&fx, &fx.b, &wc);
	cr_assert_eq(wc.wr_id, 30);
	cr_assert_eq(wc.status, IBV_WC_LOC_PROT_ERR, "B's receive: %s",
		     ibv_wc_status_str(wc.status));
	cr_assert(!memchr(nbuf, 0xff, 4096) && !memchr(fx.b.buf, 0xff, 256),
		  "the SEND's bytes landed at B");
	cx_fini(&fx);
	free(nbuf);
}

static void to_reset(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
}

/*
 * test_mr.MRTest.test_mr_rereg_{addr,pd} go on after the error: both QPs to RESET and
 * back to RTS, then traffic, whose first completion must be its own. A QP's completions
 * still in its CQs when it goes to RESET are removed, as rdma-core's mlx4/mlx5
 * providers clean the CQ at RESET (the flushed WQEs belong to the QP's old life).
 */
Test(compat_pyverbs, reset_removes_the_qps_completions_from_its_cqs, .init = quiet)
{
	struct ibv_sge as, bs, ss;
	struct ibv_recv_wr ar = { .wr_id = 20, .num_sge = 1, .sg_list = &as };
	struct ibv_recv_wr br = { .wr_id = 30, .num_sge = 1, .sg_list = &bs }, *rbad;
	struct ibv_send_wr sw = { .wr_id = 10, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED, .sg_list = &ss }, *sbad;
	struct ibv_wc wc;
	struct cx_fx fx;
	int i;

	cx_init(&fx, 0);
	as = (struct ibv_sge){ (uintptr_t)fx.a.buf + 4096, 256, fx.a.mr->lkey };
	bs = (struct ibv_sge){ (uintptr_t)fx.b.buf, 256, fx.b.mr->lkey + 1 };	/* no MR */
	ss = (struct ibv_sge){ (uintptr_t)fx.a.buf, 64, fx.a.mr->lkey };
	cr_assert_eq(ibv_post_recv(fx.a.qp, &ar, &rbad), 0);
	cr_assert_eq(ibv_post_recv(fx.b.qp, &br, &rbad), 0);
	cr_assert_eq(ibv_post_send(fx.a.qp, &sw, &sbad), 0);
	cx_wait(&fx, &fx.a, &wc);
	cr_assert_eq(wc.wr_id, 10);
	cr_assert_eq(wc.status, IBV_WC_REM_OP_ERR, "%s", ibv_wc_status_str(wc.status));
	for (i = 0; i < CX_WAIT_MS && (!cq_pending(&fx.a) || !cq_pending(&fx.b)); i++) {
		(void)ibv_poll_cq(ibv_cq_ex_to_cq(fx.a.cq), 0, &wc);
		(void)ibv_poll_cq(ibv_cq_ex_to_cq(fx.b.cq), 0, &wc);
		usleep(1000);
	}
	cr_assert_geq(cq_pending(&fx.a), 1, "A's flushed receive is not in its CQ");
	cr_assert_geq(cq_pending(&fx.b), 1, "B's failed receive is not in its CQ");
	to_reset(fx.a.qp);
	to_reset(fx.b.qp);
	cr_assert_eq(cq_pending(&fx.a), 0, "A's CQ still holds its QP's old completions");
	cr_assert_eq(cq_pending(&fx.b), 0, "B's CQ still holds its QP's old completions");
	cx_connect(&fx);
	br.wr_id = 31;
	bs.lkey = fx.b.mr->lkey;
	sw.wr_id = 11;
	cr_assert_eq(ibv_post_recv(fx.b.qp, &br, &rbad), 0);
	cr_assert_eq(ibv_post_send(fx.a.qp, &sw, &sbad), 0);
	cx_wait(&fx, &fx.a, &wc);
	cr_assert_eq(wc.wr_id, 11, "A's first completion after RESET: wr_id %llu (%s)",
		     (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cx_wait(&fx, &fx.b, &wc);
	cr_assert_eq(wc.wr_id, 31);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.byte_len, 64);
	cx_fini(&fx);
}

/*
 * test_cq.CQTest.test_resize_cq: ibv_resize_cq to fewer and more entries keeps what is
 * unpolled, reports at least what was asked, and refuses (EINVAL) fewer entries than
 * there are unpolled completions.
 */
Test(compat_pyverbs, resize_cq_keeps_its_completions, .init = quiet)
{
	struct ibv_cq *cq;
	struct ibv_wc wc;
	struct cx_fx fx;
	uint32_t i;

	cx_init(&fx, 0);
	cq = ibv_cq_ex_to_cq(fx.a.cq);
	cr_assert_eq(ibv_resize_cq(cq, 1), 0, "smaller: %s", strerror(errno));
	cr_assert_geq(cq->cqe, 1);
	cr_assert_eq(ibv_resize_cq(cq, 7), 0, "larger: %s", strerror(errno));
	cr_assert_geq(cq->cqe, 7);
	for (i = 0; i < 6; i++) {
		memset(fx.a.buf, (int)i, 8);
		cr_assert_eq(write_to_b_nowait(&fx, 100 + i), 0);
	}
	/* both engines driven (zero-entry polls take nothing), at most CX_WAIT_MS */
	for (i = 0; i < CX_WAIT_MS && cq_pending(&fx.a) < 6; i++) {
		(void)ibv_poll_cq(ibv_cq_ex_to_cq(fx.b.cq), 0, &wc);
		(void)ibv_poll_cq(cq, 0, &wc);
		usleep(1000);
	}
	cr_assert_eq(cq_pending(&fx.a), 6, "the six WRITEs completed");
	errno = 0;
	cr_assert_eq(ibv_resize_cq(cq, 1), EINVAL, "six unpolled into one entry");
	cr_assert_eq(ibv_resize_cq(cq, 64), 0);
	cr_assert_geq(cq->cqe, 64);
	for (i = 0; i < 6; i++) {
		cr_assert_eq(ibv_poll_cq(cq, 1, &wc), 1);
		cr_assert_eq(wc.wr_id, 100 + i, "in order across the resize");
		cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	}
	cr_assert_eq(ibv_resize_cq(cq, 0), EINVAL);
	cx_fini(&fx);
}

static void *pd_alloc_hook(struct ibv_pd *pd, void *pd_context, size_t size, size_t align,
			   uint64_t type)
{
	(void)pd; (void)pd_context; (void)size; (void)align; (void)type;
	return IBV_ALLOCATOR_USE_DEFAULT;
}

static void pd_free_hook(struct ibv_pd *pd, void *pd_context, void *ptr, uint64_t type)
{
	(void)pd; (void)pd_context; (void)ptr; (void)type;
}

/*
 * test_parent_domain.ParentDomainTrafficTest: a parent domain stands for its PD in
 * ibv_reg_mr, ibv_create_qp and ibv_create_cq_ex (IBV_CQ_INIT_ATTR_MASK_PD); traffic
 * flows; the PD cannot go before the parent domain on it.
 */
Test(compat_pyverbs, parent_domain_stands_for_its_pd, .init = quiet)
{
	struct ibv_parent_domain_init_attr pa = {
		.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			     IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
		.alloc = pd_alloc_hook, .free = pd_free_hook, .pd_context = &pa,
	};
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 64, .wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD,
	};
	struct ibv_pd *par, *other;
	struct ibv_mr *mr, *omr;
	struct ibv_cq_ex *cq;
	struct cx_fx fx;

	cx_init_noqp(&fx);
	pa.pd = fx.b.pd;
	par = ibv_alloc_parent_domain(fx.b.ctx, &pa);
	cr_assert_not_null(par, "ibv_alloc_parent_domain: %s", strerror(errno));
	cr_assert_eq(par->context, fx.b.ctx);
	errno = 0;
	ca.parent_domain = fx.b.pd;
	cr_assert_null(ibv_create_cq_ex(fx.b.ctx, &ca), "a plain PD is no parent domain");
	cr_assert_eq(errno, EINVAL);
	ca.parent_domain = par;
	cq = ibv_create_cq_ex(fx.b.ctx, &ca);
	cr_assert_not_null(cq, "create_cq_ex on a parent domain: %s", strerror(errno));
	/* B's QP, and the MR it is written through, on the parent domain */
	mr = ibv_reg_mr(par, fx.b.buf + 4096, 4096, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	cr_assert_not_null(mr, "reg_mr: %s", strerror(errno));
	cr_assert_eq(mr->pd, par);
	fx.a.qp = cx_qp_create(&fx.a, 0);
	{
		struct ibv_qp_init_attr qa = {
			.send_cq = ibv_cq_ex_to_cq(cq), .recv_cq = ibv_cq_ex_to_cq(cq),
			.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
				 .max_recv_sge = 1 },
			.qp_type = IBV_QPT_RC,
		};

		fx.b.qp = ibv_create_qp(par, &qa);
		cr_assert_not_null(fx.b.qp, "create_qp on a parent domain: %s", strerror(errno));
	}
	cx_connect(&fx);
	memset(fx.a.buf, 0x77, 32);
	cr_assert_eq(write_to_b(&fx, (uintptr_t)fx.b.buf + 4096, mr->rkey, 32), IBV_WC_SUCCESS);
	cr_assert_eq(fx.b.buf[4096 + 31], 0x77);
	/* an MR of the PD itself is in the same protection domain */
	omr = fx.b.mr;
	cr_assert_eq(write_to_b(&fx, (uintptr_t)fx.b.buf, omr->rkey, 8), IBV_WC_SUCCESS);
	/* another PD's MR is not */
	other = ibv_alloc_pd(fx.b.ctx);
	cr_assert_not_null(other);
	cr_assert_eq(ibv_dealloc_pd(fx.b.pd), EBUSY, "its parent domain is still there");
	cr_assert_eq(ibv_destroy_qp(fx.b.qp), 0);
	fx.b.qp = NULL;
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	cr_assert_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
	cr_assert_eq(ibv_dealloc_pd(par), 0);
	cr_assert_eq(ibv_dealloc_pd(other), 0);
	fx.b.qp = cx_qp_create(&fx.b, 0);	/* cx_fini destroys one */
	cx_fini(&fx);
}
