// SPDX-License-Identifier: MIT
/*
 * The compatibility layer's answers to what blue does not support and to bad
 * arguments: NULL or an error with errno, never a crash; and the queries programs
 * (ibv_devinfo, perftest) read: vendor, port, GID table and types, P_Key.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/test_compat_fx.h"

/* rdma-core's private declaration (driver.h); IBVERBS_PRIVATE_34 */
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       int *type);

static void quiet(void)
{
	setenv("BLUE_LOG", "0", 1);
}

Test(compat_errors, queries, .init = quiet)
{
	struct cx_fx fx;
	struct ibv_device_attr da;
	struct ibv_device_attr_ex dx;
	struct ibv_port_attr pa;
	struct ibv_gid_entry ge;
	union ibv_gid gid;
	__be16 pkey;
	int type = -1;

	cx_init_noqp(&fx);
	cr_assert_eq(ibv_query_device(fx.a.ctx, &da), 0);
	/* perftest takes mlx5dv/efadv only on Mellanox (0x2c9) or Amazon (0x1d0f) */
	cr_assert_neq(da.vendor_id, 0x2c9);
	cr_assert_neq(da.vendor_id, 0x1d0f);
	/* libblue's ids, as blue_query_device() gives them (test_rc_objects) */
	cr_assert_eq(da.vendor_id, 0x424c55, "vendor_id 0x%x", da.vendor_id);
	cr_assert_eq(da.vendor_part_id, 1, "vendor_part_id %u", da.vendor_part_id);
	cr_assert_eq(da.phys_port_cnt, 1);
	cr_assert_eq(da.atomic_cap, IBV_ATOMIC_HCA);
	cr_assert_eq(ibv_query_device_ex(fx.a.ctx, NULL, &dx), 0);
	cr_assert_eq(dx.orig_attr.max_qp_wr, da.max_qp_wr);
	cr_assert_eq(ibv_query_port(fx.a.ctx, 1, &pa), 0);	/* verbs_context op */
	cr_assert_eq(pa.state, IBV_PORT_ACTIVE);
	cr_assert_eq(pa.link_layer, IBV_LINK_LAYER_ETHERNET);
	cr_assert_eq(pa.gid_tbl_len, 16);
	cr_assert_eq(pa.active_mtu, IBV_MTU_1024);
	cr_assert_neq(ibv_query_port(fx.a.ctx, 2, &pa), 0);
	/* index 1: ::ffff:10.201.12.1, RoCE v2 */
	cr_assert_eq(ibv_query_gid(fx.a.ctx, 1, 1, &gid), 0);
	cr_assert_eq(gid.raw[10], 0xff);
	cr_assert_eq(gid.raw[11], 0xff);
	cr_assert_eq(memcmp(gid.raw + 12, &fx.a.ip, 4), 0);
	cr_assert_eq(ibv_query_gid_type(fx.a.ctx, 1, 1, &type), 0);
	cr_assert_eq(type, 1, "RoCE v2 (IBV_GID_TYPE_SYSFS_ROCE_V2)");
	cr_assert_eq(ibv_query_gid_ex(fx.a.ctx, 1, 1, &ge, 0), 0);
	cr_assert_eq(ge.gid_type, IBV_GID_TYPE_ROCE_V2);
	cr_assert_eq(memcmp(ge.gid.raw, gid.raw, 16), 0);
	/* index 0: fe80:: from the MAC, RoCE v1 as rxe lists it */
	cr_assert_eq(ibv_query_gid(fx.a.ctx, 1, 0, &gid), 0);
	cr_assert_eq(gid.raw[0], 0xfe);
	cr_assert_eq(gid.raw[1], 0x80);
	cr_assert_eq(ibv_query_gid_type(fx.a.ctx, 1, 0, &type), 0);
	cr_assert_eq(type, 0);
	/* index 2: the first IPv6 GID's place, empty over the loopback HAL: zeros, and
	 * ENODATA from the _ex query, as rdma-core answers for an empty entry */
	memset(&gid, 0xaa, sizeof(gid));
	cr_assert_eq(ibv_query_gid(fx.a.ctx, 1, 2, &gid), 0);
	for (int i = 0; i < 16; i++)
		cr_assert_eq(gid.raw[i], 0);
	cr_assert_eq(ibv_query_gid_ex(fx.a.ctx, 1, 2, &ge, 0), ENODATA);
	errno = 0;
	cr_assert_eq(ibv_query_gid(fx.a.ctx, 1, 16, &gid), -1, "beyond gid_tbl_len");
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(ibv_query_pkey(fx.a.ctx, 1, 0, &pkey), 0);
	cr_assert_eq(ntohs(pkey), 0xffff);
	cr_assert_eq(ibv_query_pkey(fx.a.ctx, 1, 1, &pkey), -1);
	cx_fini(&fx);
}

Test(compat_errors, unsupported_objects, .init = quiet)
{
	struct cx_fx fx;
	struct ibv_srq_init_attr_ex sx = {
		.attr = { .max_wr = 16, .max_sge = 1 }, .srq_type = IBV_SRQT_XRC,
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD,
	};
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RAW_PACKET,	/* RC, UC and UD are served; raw packet is not */
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 16, .wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
	};
	uint8_t buf[64];

	cx_init_noqp(&fx);
	sx.pd = fx.a.pd;
	errno = 0;
	cr_assert_null(ibv_create_srq_ex(fx.a.ctx, &sx), "XRC SRQ");
	cr_assert_eq(errno, EOPNOTSUPP);
	errno = 0;
	cr_assert_null(ibv_create_ah(fx.a.pd, &aa), "dgid :: is not IPv4-mapped");
	cr_assert_eq(errno, EINVAL);
	qa.send_cq = qa.recv_cq = ibv_cq_ex_to_cq(fx.a.cq);
	errno = 0;
	cr_assert_null(ibv_create_qp(fx.a.pd, &qa), "raw packet");
	cr_assert_eq(errno, EOPNOTSUPP);
	errno = 0;
	cr_assert_null(ibv_create_cq_ex(fx.a.ctx, &ca), "timestamps");
	cr_assert_eq(errno, EOPNOTSUPP);
	errno = 0;
	cr_assert_null(ibv_reg_mr(fx.a.pd, buf, sizeof(buf), IBV_ACCESS_ON_DEMAND));
	cr_assert_eq(errno, EOPNOTSUPP);
	errno = 0;
	cr_assert_null(ibv_reg_mr_iova(fx.a.pd, buf, sizeof(buf), 0x1000, 0));
	cr_assert_eq(errno, EOPNOTSUPP);
	cr_assert_eq(ibv_resize_cq(ibv_cq_ex_to_cq(fx.a.cq), 512), 0, "resize: compat_pyverbs");
	cr_assert_eq(ibv_attach_mcast(NULL, NULL, 0), EINVAL, "no QP: multicast is served");
	errno = 0;
	cr_assert_null(ibv_alloc_mw(fx.a.pd, (enum ibv_mw_type)3), "type 3: rxe has none");
	cr_assert_eq(errno, EINVAL);
	cx_fini(&fx);
}

Test(compat_errors, bad_arguments, .init = quiet)
{
	struct cx_fx fx;
	struct ibv_qp_attr a;
	struct ibv_sge sge;
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_recv_wr rwr, *rbad = NULL;
	struct ibv_sge rsge;
	struct ibv_wc wc;
	struct ibv_qp_ex *x;

	cx_init(&fx, IBV_QP_EX_WITH_SEND);
	errno = 0;
	cr_assert_null(ibv_alloc_pd(NULL));
	cr_assert_eq(errno, EINVAL);
	cr_assert_null(ibv_create_cq(fx.a.ctx, 0, NULL, NULL, 0), "cqe 0");
	cr_assert_null(ibv_create_cq(fx.a.ctx, 16, NULL, NULL, 5), "comp_vector 5");
	cr_assert_eq(ibv_dealloc_pd(NULL), EINVAL);

	/* RoCE needs the GRH: is_global 0 (ibv_rc_pingpong without -g) is refused */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.ah_attr.is_global = 0;
	cr_assert_eq(ibv_modify_qp(fx.a.qp, &a, IBV_QP_STATE | IBV_QP_AV), EINVAL);
	cr_assert_eq(ibv_modify_qp(fx.a.qp, &a, IBV_QP_QKEY), EINVAL, "Q_Key is UD's");

	/* an opcode blue lacks: nothing posted, bad_wr names it */
	memset(&wr, 0, sizeof(wr));
	sge = (struct ibv_sge){ (uintptr_t)fx.a.buf, 8, fx.a.mr->lkey };
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_TSO;
	cr_assert_eq(ibv_post_send(fx.a.qp, &wr, &bad), EOPNOTSUPP);
	cr_assert_eq(bad, &wr);

	/* a builder blue lacks fails the batch at wr_complete */
	x = ibv_qp_to_qp_ex(fx.a.qp);
	cr_assert_not_null(x);
	ibv_wr_start(x);
	ibv_wr_send_tso(x, fx.a.buf, 8, 1024);
	cr_assert_eq(ibv_wr_complete(x), EOPNOTSUPP);
	/* a setter before any opcode */
	ibv_wr_start(x);
	ibv_wr_set_sge(x, fx.a.mr->lkey, (uintptr_t)fx.a.buf, 8);
	cr_assert_eq(ibv_wr_complete(x), EINVAL);
	/* wr_abort drops the batch: completing it afterwards posts nothing */
	ibv_wr_start(x);
	x->wr_id = 77;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, fx.a.mr->lkey, (uintptr_t)fx.a.buf, 8);
	ibv_wr_abort(x);
	cr_assert_eq(ibv_wr_complete(x), 0);
	/*
	 * proof: a marker SEND of another length after it is the first thing B receives
	 * and A completes; had the aborted SEND gone out it would have taken B's receive
	 * (8 bytes) and completed first as wr_id 77
	 */
	rsge = (struct ibv_sge){ (uintptr_t)fx.b.buf, 64, fx.b.mr->lkey };
	rwr = (struct ibv_recv_wr){ .wr_id = 90, .sg_list = &rsge, .num_sge = 1 };
	cr_assert_eq(ibv_post_recv(fx.b.qp, &rwr, &rbad), 0);
	ibv_wr_start(x);
	x->wr_id = 78;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, fx.a.mr->lkey, (uintptr_t)fx.a.buf, 16);
	cr_assert_eq(ibv_wr_complete(x), 0);
	cx_wait(&fx, &fx.b, &wc);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 90);
	cr_assert_eq(wc.byte_len, 16, "B received the aborted SEND (%u bytes)", wc.byte_len);
	cx_wait(&fx, &fx.a, &wc);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 78, "A completed wr_id %llu first",
		     (unsigned long long)wc.wr_id);
	cr_assert_eq(ibv_poll_cq(ibv_cq_ex_to_cq(fx.a.cq), 1, &wc), 0, "A: one SEND only");
	cx_fini(&fx);
}

Test(compat_errors, names)
{
	cr_assert_str_eq(ibv_wc_status_str(IBV_WC_SUCCESS), "success");
	cr_assert_str_eq(ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR),
			 "transport retry counter exceeded");
	cr_assert_str_eq(ibv_wc_status_str((enum ibv_wc_status)999), "unknown");
	cr_assert_str_eq(ibv_port_state_str(IBV_PORT_ACTIVE), "PORT_ACTIVE");
	cr_assert_str_eq(ibv_node_type_str(IBV_NODE_CA), "InfiniBand channel adapter");
	cr_assert_str_eq(ibv_event_type_str(IBV_EVENT_PORT_ACTIVE), "port active");
	cr_assert_eq(ibv_fork_init(), 0);
}
