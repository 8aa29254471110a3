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
