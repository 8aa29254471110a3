// SPDX-License-Identifier: MIT
/*
 * The QP state machine (IBA 10.3.1) and modify_qp's attribute-mask rules, as
 * ibv_modify_qp applies them: required attributes per transition, attributes a
 * transition does not take, invalid transitions and values all fail with EINVAL and
 * change nothing; the live state is the QP-context table entry.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "runtime/qp.h"
#include "tests/unit/rc_fixture.h"

#define INIT_MASK (BLUE_QP_STATE | BLUE_QP_PKEY_INDEX | BLUE_QP_PORT | BLUE_QP_ACCESS_FLAGS)
#define RTR_MASK (BLUE_QP_STATE | BLUE_QP_AV | BLUE_QP_PATH_MTU | BLUE_QP_DEST_QPN | \
		  BLUE_QP_RQ_PSN | BLUE_QP_MAX_DEST_RD_ATOMIC | BLUE_QP_MIN_RNR_TIMER)
#define RTS_MASK (BLUE_QP_STATE | BLUE_QP_SQ_PSN | BLUE_QP_TIMEOUT | BLUE_QP_RETRY_CNT | \
		  BLUE_QP_RNR_RETRY | BLUE_QP_MAX_QP_RD_ATOMIC)

static struct rc_fx fx;

static void setup(void)
{
	rc_fx_init_noqp(&fx, NULL);
	rc_qp_create(&fx, &fx.a);
	rc_qp_create(&fx, &fx.b);
}

static void teardown(void)
{
	rc_fx_fini(&fx);
}

static uint8_t state(void)
{
	return fx.a.qp->live->state;
}

static void init_attr(struct blue_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = BLUE_QPS_INIT;
	a->port_num = 1;
	a->qp_access_flags = BLUE_ACCESS_REMOTE_WRITE;
}

static void rtr_attr(struct blue_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = BLUE_QPS_RTR;
	a->path_mtu = BLUE_MTU_1024;
	a->dest_qp_num = blue_qp_num(fx.b.qp);
	a->rq_psn = 0x1234567;	/* bits above 24 are dropped */
	a->max_dest_rd_atomic = 2;
	a->min_rnr_timer = 12;
	a->ah_attr.sgid_index = 1;
	a->ah_attr.port_num = 1;
	cr_assert_eq(blue_query_gid(fx.b.ctx, 1, 1, &a->ah_attr.dgid), 0);
}

static void rts_attr(struct blue_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = BLUE_QPS_RTS;
	a->sq_psn = 0xabcdef;
	a->timeout = 14;
	a->retry_cnt = 6;
	a->rnr_retry = 5;
	a->max_rd_atomic = 3;
}

TestSuite(rc_qp_state, .init = setup, .fini = teardown);

Test(rc_qp_state, reset_init_rtr_rts_and_query)
{
	struct blue_qp_attr a, q;
	struct blue_qp_init_attr qi;

	cr_assert_eq(state(), BLUE_QPS_RESET);
	cr_assert_eq(fx.a.qp->live->pkey, 0, "RESET: the invalid P_Key, XDP admits nothing");
	init_attr(&a);
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, INIT_MASK), 0);
	cr_assert_eq(state(), BLUE_QPS_INIT);
	cr_assert_eq(fx.a.qp->live->pkey, BLUE_DEFAULT_PKEY, "pkey_index 0's P_Key, for XDP");
	rtr_attr(&a);
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, RTR_MASK), 0);
	cr_assert_eq(state(), BLUE_QPS_RTR);
	rts_attr(&a);
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, RTS_MASK), 0);
	cr_assert_eq(state(), BLUE_QPS_RTS);

	/* the live context carries the transport fields */
	cr_assert_eq(fx.a.qp->live->rq_psn, 0x234567);
	cr_assert_eq(fx.a.qp->live->sq_psn, 0xabcdef);
	cr_assert_eq(fx.a.qp->live->una_psn, 0xabcdef);
	cr_assert_eq(fx.a.qp->live->peer_qpn, blue_qp_num(fx.b.qp));
	cr_assert_eq(fx.a.qp->live->peer_ip, fx.b.ip);
	cr_assert_eq(fx.a.qp->live->path_mtu, BLUE_MTU_1024);
	cr_assert_eq(fx.a.qp->live->retry_left, 6);
	cr_assert_eq(fx.a.qp->live->rnr_left, 5);
	cr_assert_eq(memcmp(fx.a.qp->peer_mac, fx.b.mac, 6), 0, "peer MAC from the neighbour");

	cr_assert_eq(blue_query_qp(fx.a.qp, &q, 0, &qi), 0);
	cr_assert_eq(q.qp_state, BLUE_QPS_RTS);
	cr_assert_eq(q.path_mtu, BLUE_MTU_1024);
	cr_assert_eq(q.dest_qp_num, blue_qp_num(fx.b.qp));
	cr_assert_eq(q.rq_psn, 0x234567);
	cr_assert_eq(q.sq_psn, 0xabcdef);
	cr_assert_eq(q.timeout, 14);
	cr_assert_eq(q.retry_cnt, 6);
	cr_assert_eq(q.rnr_retry, 5);
	cr_assert_eq(q.min_rnr_timer, 12);
	cr_assert_eq(q.max_rd_atomic, 3);
	cr_assert_eq(q.max_dest_rd_atomic, 2);
	cr_assert_eq(q.qp_access_flags, BLUE_ACCESS_REMOTE_WRITE);
	cr_assert_eq(qi.qp_type, BLUE_QPT_RC);
	cr_assert_eq(qi.send_cq, fx.a.scq);

	/* RTS -> RTS takes the optional attributes only */
	memset(&a, 0, sizeof(a));
	a.qp_state = BLUE_QPS_RTS;
	a.min_rnr_timer = 3;
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, BLUE_QP_STATE | BLUE_QP_MIN_RNR_TIMER), 0);
	cr_assert_eq(fx.a.qp->min_rnr_timer, 3);
	/* and without BLUE_QP_STATE, too */
	a.qp_access_flags = BLUE_ACCESS_REMOTE_READ;
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, BLUE_QP_ACCESS_FLAGS), 0);
	cr_assert_eq(fx.a.qp->access_flags, BLUE_ACCESS_REMOTE_READ);
}

Test(rc_qp_state, missing_required_attributes)
{
	struct blue_qp_attr a;

	init_attr(&a);
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, INIT_MASK & ~BLUE_QP_ACCESS_FLAGS), EINVAL);
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, INIT_MASK & ~BLUE_QP_PORT), EINVAL);
	cr_assert_eq(state(), BLUE_QPS_RESET, "a failed modify changes nothing");
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, INIT_MASK), 0);
	rtr_attr(&a);
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, RTR_MASK & ~BLUE_QP_AV), EINVAL);
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, RTR_MASK & ~BLUE_QP_DEST_QPN), EINVAL);
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, RTR_MASK & ~BLUE_QP_RQ_PSN), EINVAL);
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, RTR_MASK & ~BLUE_QP_MIN_RNR_TIMER), EINVAL);
	cr_assert_eq(state(), BLUE_QPS_INIT);
	cr_assert_eq(fx.a.qp->live->peer_qpn, 0, "nothing applied");
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, RTR_MASK), 0);
	rts_attr(&a);
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, RTS_MASK & ~BLUE_QP_SQ_PSN), EINVAL);
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, RTS_MASK & ~BLUE_QP_TIMEOUT), EINVAL);
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, RTS_MASK & ~BLUE_QP_MAX_QP_RD_ATOMIC), EINVAL);
	cr_assert_eq(state(), BLUE_QPS_RTR);
}

Test(rc_qp_state, attributes_a_transition_does_not_take)
{
	struct blue_qp_attr a;

	init_attr(&a);
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, INIT_MASK | BLUE_QP_SQ_PSN), EINVAL);
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, INIT_MASK | BLUE_QP_DEST_QPN), EINVAL);
	cr_assert_eq(state(), BLUE_QPS_RESET);
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, INIT_MASK), 0);
	rtr_attr(&a);
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, RTR_MASK | BLUE_QP_SQ_PSN), EINVAL);
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, RTR_MASK | BLUE_QP_TIMEOUT), EINVAL);
	cr_assert_eq(state(), BLUE_QPS_INIT);
}

Test(rc_qp_state, invalid_transitions)
{
	struct blue_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = BLUE_QPS_RTR;
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, RTR_MASK), EINVAL, "RESET -> RTR");
	a.qp_state = BLUE_QPS_RTS;
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, RTS_MASK), EINVAL, "RESET -> RTS");
	a.qp_state = BLUE_QPS_SQD;
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, BLUE_QP_STATE), EINVAL, "RESET -> SQD");
	a.qp_state = 9;
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, BLUE_QP_STATE), EINVAL, "no such state");
	init_attr(&a);
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, INIT_MASK), 0);
	rts_attr(&a);
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, RTS_MASK), EINVAL, "INIT -> RTS");
	/* CUR_STATE must say what the QP is in */
	init_attr(&a);
	a.cur_qp_state = BLUE_QPS_RTS;
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, BLUE_QP_STATE | BLUE_QP_CUR_STATE), EINVAL);
	/* any state may go to ERROR, and ERROR only back to RESET */
	a.qp_state = BLUE_QPS_ERR;
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, BLUE_QP_STATE), 0);
	cr_assert_eq(state(), BLUE_QPS_ERR);
	init_attr(&a);
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, INIT_MASK), EINVAL, "ERROR -> INIT");
	rts_attr(&a);
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, RTS_MASK), EINVAL, "ERROR -> RTS");
	a.qp_state = BLUE_QPS_RESET;
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, BLUE_QP_STATE), 0);
	cr_assert_eq(state(), BLUE_QPS_RESET);
}

Test(rc_qp_state, invalid_values)
{
	struct blue_qp_attr a;

	init_attr(&a);
	a.port_num = 2;
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, INIT_MASK), EINVAL, "port 2");
	init_attr(&a);
	a.pkey_index = 1;
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, INIT_MASK), EINVAL, "pkey index 1");
	init_attr(&a);
	a.qp_access_flags = 0x80;
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, INIT_MASK), EINVAL, "unknown access bit");
	init_attr(&a);
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, INIT_MASK), 0);

	rtr_attr(&a);
	a.path_mtu = BLUE_MTU_2048;	/* the loopback frame carries 1024 */
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, RTR_MASK), EINVAL, "MTU too large");
	rtr_attr(&a);
	a.path_mtu = 0;
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, RTR_MASK), EINVAL, "MTU 0");
	rtr_attr(&a);
	a.dest_qp_num = 1;
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, RTR_MASK), EINVAL, "QP1");
	rtr_attr(&a);
	a.dest_qp_num = 0x1000000;
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, RTR_MASK), EINVAL, "25-bit QPN");
	rtr_attr(&a);
	a.min_rnr_timer = 32;
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, RTR_MASK), EINVAL, "rnr timer");
	rtr_attr(&a);
	a.max_dest_rd_atomic = 200;
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, RTR_MASK), EINVAL, "rd atomic");
	rtr_attr(&a);
	a.ah_attr.sgid_index = 0;
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, RTR_MASK), EINVAL, "IPv6 source GID");
	rtr_attr(&a);
	a.ah_attr.dgid.raw[10] = 0;	/* not ::ffff:a.b.c.d */
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, RTR_MASK), EINVAL, "IPv6 destination GID");
	rtr_attr(&a);
	a.ah_attr.dgid.raw[15] = 99;	/* 10.201.0.99: no neighbour entry */
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, RTR_MASK), EINVAL, "unresolvable peer");
	cr_assert_eq(state(), BLUE_QPS_INIT);
	rtr_attr(&a);
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, RTR_MASK), 0);

	rts_attr(&a);
	a.timeout = 32;
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, RTS_MASK), EINVAL, "timeout");
	rts_attr(&a);
	a.retry_cnt = 8;
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, RTS_MASK), EINVAL, "retry_cnt");
	rts_attr(&a);
	a.rnr_retry = 8;
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, RTS_MASK), EINVAL, "rnr_retry");
	cr_assert_eq(state(), BLUE_QPS_RTR);
}

/* RTS -> SQD -> RTS, and RESET wipes the live context but keeps the QPN. */
Test(rc_qp_state, sqd_and_back_and_reset)
{
	struct blue_qp_attr a;
	uint32_t qpn = blue_qp_num(fx.a.qp);

	init_attr(&a);
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, INIT_MASK), 0);
	rtr_attr(&a);
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, RTR_MASK), 0);
	rts_attr(&a);
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, RTS_MASK), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = BLUE_QPS_SQD;
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, BLUE_QP_STATE), 0);
	cr_assert_eq(state(), BLUE_QPS_SQD);
	a.qp_state = BLUE_QPS_RTS;
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, BLUE_QP_STATE), 0);
	a.qp_state = BLUE_QPS_RESET;
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, BLUE_QP_STATE), 0);
	cr_assert_eq(state(), BLUE_QPS_RESET);
	cr_assert_eq(fx.a.qp->live->qpn, qpn);
	cr_assert_eq(fx.a.qp->live->sq_psn, 0);
	cr_assert_eq(fx.a.qp->live->peer_qpn, 0);
	cr_assert_eq(fx.a.qp->live->pkey, 0);
	/* and it can be brought up again */
	init_attr(&a);
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, INIT_MASK), 0);
}
