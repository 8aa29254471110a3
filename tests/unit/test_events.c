// SPDX-License-Identifier: MIT
/*
 * Asynchronous events over the loopback HAL: QP_FATAL when the engine moves a QP to
 * ERROR (retry exceeded against a silent peer) and not when the application does,
 * COMM_EST on the first request in RTR, port events on carrier changes, and a full
 * queue that counts what it drops while the fd stays truthful.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/events.h"
#include "runtime/progress.h"
#include "runtime/qp.h"
#include "tests/unit/rc_fixture.h"

static int fd_readable(struct blue_context *ctx)
{
	struct pollfd pfd = { .fd = blue_async_fd(ctx), .events = POLLIN };

	return poll(&pfd, 1, 0);
}

static void send64(struct rc_side *s, struct blue_mr *mr, void *buf)
{
	struct blue_sge sge = { .addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey };
	struct blue_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				   .opcode = BLUE_WR_SEND, .send_flags = BLUE_SEND_SIGNALED };

	rc_post_send(s, &wr);
}

/* Everything A sends is lost: retry exceeded moves A's QP to ERROR, raising QP_FATAL. */
Test(events, qp_fatal_on_retry_exceeded)
{
	struct rc_drop drop = { .opcode = -1, .psn = -1, .max_drops = -1 };
	struct blue_async_event e;
	struct rc_opts o;
	struct rc_fx fx;
	struct blue_wc wc;
	uint8_t buf[64] = { 0 };
	struct blue_mr *mr;

	rc_opts_default(&o);
	o.retry_cnt = 1;
	o.timeout = 5;
	rc_fx_init(&fx, &o);
	mr = blue_reg_mr(fx.a.pd, buf, sizeof(buf), BLUE_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(mr);
	cr_assert_eq(fd_readable(fx.a.ctx), 0);
	rc_drop_install(fx.a.hal, &drop);
	send64(&fx.a, mr, buf);
	wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_RETRY_EXC_ERR, "%s", blue_wc_status_str(wc.status));
	cr_assert_eq(fd_readable(fx.a.ctx), 1);
	cr_assert_eq(blue_get_async_event(fx.a.ctx, &e), 0);
	cr_assert_eq(e.type, BLUE_EVENT_QP_FATAL);
	cr_assert_eq(e.qp, fx.a.qp);
	cr_assert_null(e.srq);
	cr_assert_eq(blue_get_async_event(fx.a.ctx, &e), EAGAIN, "one event (type %d)", e.type);
	cr_assert_eq(fd_readable(fx.a.ctx), 0);
	cr_assert_eq(blue_get_async_event(fx.b.ctx, &e), EAGAIN, "B saw nothing");
	cr_assert_eq(blue_dereg_mr(mr), 0);
	rc_fx_fini(&fx);
}

/* The application's own move to ERROR is no fatal event. */
Test(events, no_qp_fatal_for_modify_to_error)
{
	struct blue_qp_attr qa = { .qp_state = BLUE_QPS_ERR };
	struct blue_async_event e;
	struct rc_fx fx;
	int i;

	rc_fx_init(&fx, NULL);
	cr_assert_eq(blue_modify_qp(fx.a.qp, &qa, BLUE_QP_STATE), 0);
	for (i = 0; i < 10; i++)
		rc_progress(&fx);
	cr_assert_eq(blue_get_async_event(fx.a.ctx, &e), EAGAIN, "got type %d", e.type);
	rc_fx_fini(&fx);
}

/* B in RTR: the first request it receives raises COMM_EST, once. */
Test(events, comm_est_on_first_request_in_rtr)
{
	struct blue_async_event e;
	struct blue_qp_attr qa;
	struct rc_fx fx;
	uint8_t sbuf[64] = { 0 }, rbuf[64];
	struct blue_mr *smr, *rmr;
	struct blue_wc wc;

	rc_fx_init_noqp(&fx, NULL);
	rc_qp_create(&fx, &fx.a);
	rc_qp_create(&fx, &fx.b);
	rc_qp_connect(&fx, &fx.a, &fx.b, 0x100, 0x200);
	rc_qp_connect(&fx, &fx.b, &fx.a, 0x200, 0x100);
	/* back to RTR is no IBA transition: walk B again and stop at RTR */
	qa = (struct blue_qp_attr){ .qp_state = BLUE_QPS_RESET };
	cr_assert_eq(blue_modify_qp(fx.b.qp, &qa, BLUE_QP_STATE), 0);
	{
		struct blue_qp_attr a = { .qp_state = BLUE_QPS_INIT, .port_num = 1,
					  .qp_access_flags = BLUE_ACCESS_LOCAL_WRITE };

		cr_assert_eq(blue_modify_qp(fx.b.qp, &a, BLUE_QP_STATE | BLUE_QP_PKEY_INDEX |
					    BLUE_QP_PORT | BLUE_QP_ACCESS_FLAGS), 0);
		a = (struct blue_qp_attr){ .qp_state = BLUE_QPS_RTR, .path_mtu = BLUE_MTU_1024,
					   .dest_qp_num = blue_qp_num(fx.a.qp), .rq_psn = 0x100,
					   .max_dest_rd_atomic = 1, .min_rnr_timer = 1 };
		a.ah_attr.sgid_index = 1;
		a.ah_attr.port_num = 1;
		cr_assert_eq(blue_query_gid(fx.a.ctx, 1, 1, &a.ah_attr.dgid), 0);
		cr_assert_eq(blue_modify_qp(fx.b.qp, &a, BLUE_QP_STATE | BLUE_QP_AV |
					    BLUE_QP_PATH_MTU | BLUE_QP_DEST_QPN | BLUE_QP_RQ_PSN |
					    BLUE_QP_MAX_DEST_RD_ATOMIC | BLUE_QP_MIN_RNR_TIMER), 0);
	}
	smr = blue_reg_mr(fx.a.pd, sbuf, sizeof(sbuf), BLUE_ACCESS_LOCAL_WRITE);
	rmr = blue_reg_mr(fx.b.pd, rbuf, sizeof(rbuf), BLUE_ACCESS_LOCAL_WRITE);
	cr_assert(smr && rmr);
	cr_assert_eq(blue_get_async_event(fx.b.ctx, &e), EAGAIN);
	rc_post_recv(&fx.b, 7, rbuf, sizeof(rbuf), rmr->lkey);
	rc_post_recv(&fx.b, 8, rbuf, sizeof(rbuf), rmr->lkey);
	send64(&fx.a, smr, sbuf);
	send64(&fx.a, smr, sbuf);
	cr_assert_eq(rc_poll(&fx, fx.a.scq, (struct blue_wc[2]){ 0 }, 2, RC_WAIT_MS), 2);
	wc = rc_wait1(&fx, fx.b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	cr_assert_eq(blue_get_async_event(fx.b.ctx, &e), 0);
	cr_assert_eq(e.type, BLUE_EVENT_COMM_EST);
	cr_assert_eq(e.qp, fx.b.qp);
	cr_assert_eq(blue_get_async_event(fx.b.ctx, &e), EAGAIN, "once");
	cr_assert_eq(blue_dereg_mr(smr), 0);
	cr_assert_eq(blue_dereg_mr(rmr), 0);
	rc_fx_fini(&fx);
}

/* Carrier changes: PORT_ERR, then PORT_ACTIVE, each once per change, on port 1. */
Test(events, port_events_on_carrier_change)
{
	struct blue_async_event e;
	struct rc_fx fx;

	rc_fx_init_noqp(&fx, NULL);
	blue__events_port_seen(fx.a.ctx, true);
	cr_assert_eq(blue_get_async_event(fx.a.ctx, &e), EAGAIN, "up at open: no change");
	blue__events_port_seen(fx.a.ctx, false);
	blue__events_port_seen(fx.a.ctx, false);
	blue__events_port_seen(fx.a.ctx, true);
	cr_assert_eq(blue_get_async_event(fx.a.ctx, &e), 0);
	cr_assert_eq(e.type, BLUE_EVENT_PORT_ERR);
	cr_assert_eq(e.port_num, 1);
	cr_assert_eq(blue_get_async_event(fx.a.ctx, &e), 0);
	cr_assert_eq(e.type, BLUE_EVENT_PORT_ACTIVE);
	cr_assert_eq(e.port_num, 1);
	cr_assert_eq(blue_get_async_event(fx.a.ctx, &e), EAGAIN);
	rc_fx_fini(&fx);
}

/* A full queue drops and counts; what it kept comes out in order; the fd tells the truth. */
Test(events, overflow_counted)
{
	struct blue_async_event e;
	struct rc_fx fx;
	unsigned int i, n = 0;

	rc_fx_init_noqp(&fx, NULL);
	for (i = 0; i < BLUE_EVENTS_MAX + 5; i++) {
		e = (struct blue_async_event){ .type = BLUE_EVENT_PORT_ACTIVE,
					       .port_num = 1, .context = (void *)(uintptr_t)i };
		blue__event_raise(fx.a.ctx, &e);
	}
	cr_assert_eq(fx.a.ctx->events.overflow, 5);
	cr_assert_eq(fx.a.ctx->events.raised, BLUE_EVENTS_MAX + 5);
	cr_assert_eq(fd_readable(fx.a.ctx), 1);
	while (blue_get_async_event(fx.a.ctx, &e) == 0) {
		cr_assert_eq((uintptr_t)e.context, n, "in order");
		n++;
	}
	cr_assert_eq(n, BLUE_EVENTS_MAX);
	cr_assert_eq(fd_readable(fx.a.ctx), 0);
	rc_fx_fini(&fx);
}
