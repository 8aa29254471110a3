// SPDX-License-Identifier: MIT
/*
 * SRQs and async events through the verbs API (compat/srq.c, compat/async.c) over the
 * loopback HAL: a QP created with init_attr.srq receives from it, bytes compared; the
 * limit event and LAST_WQE_REACHED come out of ibv_get_async_event on a non-blocking
 * async_fd with the verbs objects in element, only on the verbs context that owns them,
 * while a port event reaches every context of the device.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime/events.h"
#include "tests/unit/rc_fixture.h"
#include "tests/unit/test_compat_fx.h"

static void quiet(void)
{
	setenv("BLUE_LOG", "0", 1);
}

static void nonblock(struct ibv_context *ctx)
{
	int fl = fcntl(ctx->async_fd, F_GETFL);

	cr_assert_geq(fl, 0);
	cr_assert_eq(fcntl(ctx->async_fd, F_SETFL, fl | O_NONBLOCK), 0);
}

/* The next event on @ctx within CX_WAIT_MS (the progress thread routes it). */
static struct ibv_async_event next_event(struct ibv_context *ctx)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event e;
	int i;

	for (i = 0; i < CX_WAIT_MS; i++) {
		if (ibv_get_async_event(ctx, &e) == 0)
			return e;
		cr_assert_eq(errno, EAGAIN);
		(void)poll(&pfd, 1, 1);
	}
	cr_assert_fail("no async event within %d ms", CX_WAIT_MS);
	return e;
}

static void no_event(struct ibv_context *ctx)
{
	struct ibv_async_event e;

	errno = 0;
	cr_assert_eq(ibv_get_async_event(ctx, &e), -1, "unexpected event %d", e.event_type);
	cr_assert_eq(errno, EAGAIN);
}

static void srq_post(struct ibv_srq *srq, struct cx_side *s, uint64_t wr_id, uint32_t off)
{
	struct ibv_sge sge = { .addr = (uintptr_t)s->buf + off, .length = 1024,
			       .lkey = s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	cr_assert_eq(ibv_post_srq_recv(srq, &wr, &bad), 0);
}

static void send_from(struct cx_side *s, uint32_t len, unsigned int seed)
{
	struct ibv_sge sge = { .addr = (uintptr_t)s->buf, .length = len, .lkey = s->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = seed, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;

	rc_fill(s->buf, len, seed);
	cr_assert_eq(ibv_post_send(s->qp, &wr, &bad), 0);
}

Test(compat_srq, receive_limit_and_routing, .init = quiet)
{
	struct ibv_srq_init_attr_ex sx = {
		.srq_context = &sx, .attr = { .max_wr = 8, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_BASIC,
	};
	struct ibv_qp_init_attr qa = { .cap = { .max_send_wr = 8, .max_recv_wr = 8,
						.max_send_sge = 1, .max_recv_sge = 1 },
				       .qp_type = IBV_QPT_RC };
	struct ibv_srq_attr at = { .srq_limit = 2 };
	struct ibv_device_attr da;
	struct ibv_async_event e;
	struct ibv_context *b2;
	struct ibv_qp_attr qat = { .qp_state = IBV_QPS_ERR };
	struct ibv_qp_init_attr qi;
	struct ibv_recv_wr rwr = { .wr_id = 1 }, *rbad;
	struct ibv_srq *srq;
	struct ibv_wc wc;
	int i;

	struct cx_fx fx;

	cx_init_noqp(&fx);
	cr_assert_eq(ibv_query_device(fx.b.ctx, &da), 0);
	cr_assert_gt(da.max_srq, 0);
	cr_assert_geq(da.max_srq_wr, 8);
	cr_assert_gt(da.max_srq_sge, 0);
	sx.pd = fx.b.pd;
	srq = ibv_create_srq_ex(fx.b.ctx, &sx);	/* the CQ bit takes the create_srq_ex op */
	cr_assert_not_null(srq, "ibv_create_srq_ex: %s", strerror(errno));
	cr_assert_eq(srq->srq_context, &sx);
	cr_assert_geq(sx.attr.max_wr, 8);
	qa.send_cq = qa.recv_cq = ibv_cq_ex_to_cq(fx.b.cq);
	qa.srq = srq;
	fx.b.qp = ibv_create_qp(fx.b.pd, &qa);
	cr_assert_not_null(fx.b.qp, "ibv_create_qp with an SRQ: %s", strerror(errno));
	cr_assert_eq(fx.b.qp->srq, srq);
	cr_assert_eq(qa.cap.max_recv_wr, 0);
	fx.a.qp = cx_qp_create(&fx.a, 0);
	cx_connect(&fx);
	cr_assert_eq(ibv_query_qp(fx.b.qp, &qat, IBV_QP_CAP, &qi), 0);
	cr_assert_eq(qi.srq, srq);
	cr_assert_eq(ibv_post_recv(fx.b.qp, &rwr, &rbad), EINVAL, "receives go to the SRQ");
	cr_assert_eq(ibv_destroy_srq(srq), EBUSY);

	/* a second verbs context of B's device: events about B's objects are not its */
	b2 = bv_context_wrap(bv_ctx(fx.b.ctx)->bctx, &fx.b.dev);
	cr_assert_not_null(b2);
	nonblock(fx.b.ctx);
	nonblock(b2);

	for (i = 0; i < 4; i++)
		srq_post(srq, &fx.b, 10 + i, 1024 * i);
	cr_assert_eq(ibv_modify_srq(srq, &at, IBV_SRQ_LIMIT), 0);
	at.max_wr = 64;
	cr_assert_eq(ibv_modify_srq(srq, &at, IBV_SRQ_MAX_WR), EINVAL, "no resize");
	for (i = 0; i < 2; i++) {
		send_from(&fx.a, 300 + i, 5 + i);
		cx_wait(&fx, &fx.a, &wc);
		cr_assert_eq(wc.status, IBV_WC_SUCCESS);
		cx_wait(&fx, &fx.b, &wc);
		cr_assert_eq(wc.status, IBV_WC_SUCCESS);
		cr_assert_eq(wc.wr_id, 10 + i);
		cr_assert_eq(wc.byte_len, 300 + i);
		cr_assert(rc_check(fx.b.buf + 1024 * i, 300 + i, 5 + i), "bytes of %d", i);
	}
	/* 4 posted, 2 taken: 2 left, not below 2 */
	send_from(&fx.a, 64, 9);
	cx_wait(&fx, &fx.a, &wc);
	cx_wait(&fx, &fx.b, &wc);
	cr_assert_eq(wc.wr_id, 12);
	e = next_event(fx.b.ctx);
	cr_assert_eq(e.event_type, IBV_EVENT_SRQ_LIMIT_REACHED);
	cr_assert_eq(e.element.srq, srq);
	ibv_ack_async_event(&e);
	cr_assert_eq(srq->events_completed, 1);
	cr_assert_eq(ibv_query_srq(srq, &at), 0);
	cr_assert_eq(at.srq_limit, 0, "disarmed");
	no_event(fx.b.ctx);
	no_event(b2);

	/* a port event goes to every context of the device */
	bv_lock(bv_ctx(fx.b.ctx));
	blue__events_port_seen(bv_ctx(fx.b.ctx)->bctx, false);
	bv_unlock(bv_ctx(fx.b.ctx));
	e = next_event(fx.b.ctx);
	cr_assert_eq(e.event_type, IBV_EVENT_PORT_ERR);
	cr_assert_eq(e.element.port_num, 1);
	e = next_event(b2);
	cr_assert_eq(e.event_type, IBV_EVENT_PORT_ERR);

	/* the application moves B's QP to ERROR: LAST_WQE_REACHED with the verbs QP */
	qat = (struct ibv_qp_attr){ .qp_state = IBV_QPS_ERR };
	cr_assert_eq(ibv_modify_qp(fx.b.qp, &qat, IBV_QP_STATE), 0);
	e = next_event(fx.b.ctx);
	cr_assert_eq(e.event_type, IBV_EVENT_QP_LAST_WQE_REACHED);
	cr_assert_eq(e.element.qp, fx.b.qp);
	ibv_ack_async_event(&e);
	cr_assert_eq(fx.b.qp->events_completed, 1);
	no_event(b2);

	cr_assert_eq(ibv_close_device(b2), 0);
	cr_assert_eq(ibv_destroy_qp(fx.b.qp), 0);
	fx.b.qp = NULL;
	cr_assert_eq(ibv_destroy_srq(srq), 0);
	cx_fini(&fx);
}

struct waiter {
	struct ibv_context *ctx;
	struct ibv_async_event e;
	int rc;
};

static void *wait_event(void *arg)
{
	struct waiter *w = arg;

	w->rc = ibv_get_async_event(w->ctx, &w->e);
	return NULL;
}

/* A blocking ibv_get_async_event (the fd as opened) wakes for an event raised later. */
Test(compat_srq, blocking_get_async_event_wakes, .init = quiet)
{
	struct waiter w = { .rc = -2 };
	struct timespec until;
	struct cx_fx fx;
	pthread_t t;

	cx_init_noqp(&fx);
	w.ctx = fx.b.ctx;
	cr_assert_eq(pthread_create(&t, NULL, wait_event, &w), 0);
	usleep(20000);	/* let it block; the test holds either way */
	bv_lock(bv_ctx(fx.b.ctx));
	blue__events_port_seen(bv_ctx(fx.b.ctx)->bctx, false);
	bv_unlock(bv_ctx(fx.b.ctx));
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += CX_WAIT_MS / 1000;
	cr_assert_eq(pthread_timedjoin_np(t, NULL, &until), 0, "still blocked");
	cr_assert_eq(w.rc, 0);
	cr_assert_eq(w.e.event_type, IBV_EVENT_PORT_ERR);
	cr_assert_eq(w.e.element.port_num, 1);
	cx_fini(&fx);
}
