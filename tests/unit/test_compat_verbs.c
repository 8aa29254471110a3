// SPDX-License-Identifier: MIT
/*
 * The verbs data path through the compatibility layer over the loopback HAL: the
 * extended send API (ibv_wr_*) for WRITE, WRITE with immediate, READ, SEND with inline
 * data and both atomics, the classic ibv_post_send() with a list, and the extended CQ
 * poll. Bytes are compared at the target; completions are checked field by field.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <sys/epoll.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "afxdp_hal/hal.h"
#include "tests/unit/rc_fixture.h"
#include "tests/unit/test_compat_fx.h"

#define ALL_OPS (IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
		 IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
		 IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
		 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)

static void post_recv(struct cx_side *s, uint64_t wr_id, size_t off, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)(s->buf + off), len, s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	cr_assert_eq(ibv_post_recv(s->qp, &wr, &bad), 0);
}

static void expect(struct ibv_wc *wc, uint64_t wr_id, enum ibv_wc_opcode op)
{
	cr_assert_eq(wc->status, IBV_WC_SUCCESS, "status %s", ibv_wc_status_str(wc->status));
	cr_assert_eq(wc->wr_id, wr_id);
	cr_assert_eq(wc->opcode, op);
}

Test(compat_verbs, wr_api_write_then_read)
{
	struct cx_fx fx;
	struct ibv_qp_ex *x;
	struct ibv_wc wc;

	cx_init(&fx, ALL_OPS);
	x = ibv_qp_to_qp_ex(fx.a.qp);
	cr_assert_not_null(x);
	rc_fill(fx.a.buf, 4096, 301);
	ibv_wr_start(x);
	x->wr_id = 11;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x, fx.b.mr->rkey, (uintptr_t)fx.b.buf + 100);
	ibv_wr_set_sge(x, fx.a.mr->lkey, (uintptr_t)fx.a.buf, 4096);
	cr_assert_eq(ibv_wr_complete(x), 0);
	cx_wait(&fx, &fx.a, &wc);
	expect(&wc, 11, IBV_WC_RDMA_WRITE);
	cr_assert_arr_eq(fx.b.buf + 100, fx.a.buf, 4096);
	cr_assert(rc_check(fx.b.buf + 100, 4096, 301), "B's bytes are not A's pattern");

	/* read it back into A's second half, in two SGEs */
	ibv_wr_start(x);
	x->wr_id = 12;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_read(x, fx.b.mr->rkey, (uintptr_t)fx.b.buf + 100);
	struct ibv_sge sg[2] = {
		{ (uintptr_t)fx.a.buf + 4096, 1000, fx.a.mr->lkey },
		{ (uintptr_t)fx.a.buf + 5096, 3096, fx.a.mr->lkey },
	};
	ibv_wr_set_sge_list(x, 2, sg);
	cr_assert_eq(ibv_wr_complete(x), 0);
	cx_wait(&fx, &fx.a, &wc);
	expect(&wc, 12, IBV_WC_RDMA_READ);
	cr_assert_eq(wc.byte_len, 4096);
	cr_assert_arr_eq(fx.a.buf + 4096, fx.a.buf, 4096);
	cr_assert(rc_check(fx.a.buf + 4096, 4096, 301), "read back out of order");
	cx_fini(&fx);
}

Test(compat_verbs, wr_api_write_imm_and_send_imm)
{
	struct cx_fx fx;
	struct ibv_qp_ex *x;
	struct ibv_wc wc;

	cx_init(&fx, ALL_OPS);
	x = ibv_qp_to_qp_ex(fx.a.qp);
	post_recv(&fx.b, 21, 0, 0);
	post_recv(&fx.b, 22, 4096, 512);
	rc_fill(fx.a.buf, 512, 302);
	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write_imm(x, fx.b.mr->rkey, (uintptr_t)fx.b.buf + 1024, htonl(0xabcd));
	ibv_wr_set_sge(x, fx.a.mr->lkey, (uintptr_t)fx.a.buf, 256);
	x->wr_id = 2;
	ibv_wr_send_imm(x, htonl(0x1234));
	ibv_wr_set_sge(x, fx.a.mr->lkey, (uintptr_t)fx.a.buf, 512);
	cr_assert_eq(ibv_wr_complete(x), 0);	/* two WRs, one chain */
	cx_wait(&fx, &fx.a, &wc);
	expect(&wc, 1, IBV_WC_RDMA_WRITE);
	cx_wait(&fx, &fx.a, &wc);
	expect(&wc, 2, IBV_WC_SEND);
	cx_wait(&fx, &fx.b, &wc);
	expect(&wc, 21, IBV_WC_RECV_RDMA_WITH_IMM);
	cr_assert(wc.wc_flags & IBV_WC_WITH_IMM);
	cr_assert_eq(ntohl(wc.imm_data), 0xabcd);
	cr_assert_eq(wc.qp_num, fx.b.qp->qp_num);
	cx_wait(&fx, &fx.b, &wc);
	expect(&wc, 22, IBV_WC_RECV);
	cr_assert_eq(wc.byte_len, 512);
	cr_assert_eq(ntohl(wc.imm_data), 0x1234);
	cr_assert_arr_eq(fx.b.buf + 1024, fx.a.buf, 256);
	cr_assert_arr_eq(fx.b.buf + 4096, fx.a.buf, 512);
	cr_assert(rc_check(fx.b.buf + 1024, 256, 302));
	cr_assert(rc_check(fx.b.buf + 4096, 512, 302));
	cx_fini(&fx);
}

/* Inline bytes are the program's to reuse once set: they must be copied right away. */
Test(compat_verbs, wr_api_inline_is_copied_at_set)
{
	struct cx_fx fx;
	struct ibv_qp_ex *x;
	struct ibv_wc wc;
	uint8_t msg[100], want[100];
	struct ibv_data_buf parts[2] = { { msg, 40 }, { msg + 40, 60 } };

	cx_init(&fx, ALL_OPS);
	x = ibv_qp_to_qp_ex(fx.a.qp);
	post_recv(&fx.b, 31, 0, 256);
	post_recv(&fx.b, 32, 256, 256);
	rc_fill(msg, sizeof(msg), 303);
	memcpy(want, msg, sizeof(msg));
	ibv_wr_start(x);
	x->wr_id = 3;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_inline_data(x, msg, sizeof(msg));
	ibv_wr_send(x);
	ibv_wr_set_inline_data_list(x, 2, parts);
	memset(msg, 0xee, sizeof(msg));		/* too late to change what was sent */
	cr_assert_eq(ibv_wr_complete(x), 0);
	cx_wait(&fx, &fx.a, &wc);
	expect(&wc, 3, IBV_WC_SEND);
	cx_wait(&fx, &fx.a, &wc);
	expect(&wc, 3, IBV_WC_SEND);
	cx_wait(&fx, &fx.b, &wc);
	expect(&wc, 31, IBV_WC_RECV);
	cr_assert_eq(wc.byte_len, 100);
	cr_assert_arr_eq(fx.b.buf, want, 100);
	cr_assert(rc_check(fx.b.buf, 100, 303));
	cx_wait(&fx, &fx.b, &wc);
	expect(&wc, 32, IBV_WC_RECV);
	cr_assert_arr_eq(fx.b.buf + 256, want, 100);
	cr_assert(rc_check(fx.b.buf + 256, 100, 303));
	cx_fini(&fx);
}

Test(compat_verbs, wr_api_atomics)
{
	struct cx_fx fx;
	struct ibv_qp_ex *x;
	struct ibv_wc wc;
	uint64_t *target, *old;

	cx_init(&fx, ALL_OPS);
	x = ibv_qp_to_qp_ex(fx.a.qp);
	target = (uint64_t *)(fx.b.buf + 64);
	old = (uint64_t *)fx.a.buf;
	*target = 40;
	ibv_wr_start(x);
	x->wr_id = 41;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_fetch_add(x, fx.b.mr->rkey, (uintptr_t)target, 2);
	ibv_wr_set_sge(x, fx.a.mr->lkey, (uintptr_t)old, 8);
	cr_assert_eq(ibv_wr_complete(x), 0);
	cx_wait(&fx, &fx.a, &wc);
	expect(&wc, 41, IBV_WC_FETCH_ADD);
	cr_assert_eq(*old, 40);
	cr_assert_eq(*target, 42);

	ibv_wr_start(x);
	x->wr_id = 42;
	ibv_wr_atomic_cmp_swp(x, fx.b.mr->rkey, (uintptr_t)target, 42, 7);
	ibv_wr_set_sge(x, fx.a.mr->lkey, (uintptr_t)(old + 1), 8);
	cr_assert_eq(ibv_wr_complete(x), 0);
	cx_wait(&fx, &fx.a, &wc);
	expect(&wc, 42, IBV_WC_COMP_SWAP);
	cr_assert_eq(old[1], 42);
	cr_assert_eq(*target, 7);
	cx_fini(&fx);
}

/* The classic path perftest takes on a non-mlx5 device: a post list and ibv_poll_cq. */
Test(compat_verbs, post_send_list_and_poll_cq)
{
	struct cx_fx fx;
	struct ibv_sge sge[3];
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_wc wc[4];
	int got = 0, i;

	cx_init(&fx, 0);
	cr_assert_null(ibv_qp_to_qp_ex(fx.a.qp), "a plain QP has no extended send API");
	rc_fill(fx.a.buf, 3000, 304);
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 3; i++) {
		sge[i] = (struct ibv_sge){ (uintptr_t)fx.a.buf + i * 1000u, 1000, fx.a.mr->lkey };
		wr[i].wr_id = 50 + (uint64_t)i;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_RDMA_WRITE;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].wr.rdma.remote_addr = (uintptr_t)fx.b.buf + 4000 + i * 1000u;
		wr[i].wr.rdma.rkey = fx.b.mr->rkey;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	cr_assert_eq(ibv_post_send(fx.a.qp, wr, &bad), 0);
	for (i = 0; i < 1000000 && got < 3; i++) {
		int n = ibv_poll_cq(ibv_cq_ex_to_cq(fx.a.cq), 4 - got, wc + got);

		cr_assert_geq(n, 0);
		got += n;
		cr_assert_eq(ibv_poll_cq(ibv_cq_ex_to_cq(fx.b.cq), 0, NULL), 0);
	}
	cr_assert_eq(got, 3);
	for (i = 0; i < 3; i++)
		expect(&wc[i], 50 + (uint64_t)i, IBV_WC_RDMA_WRITE);
	cr_assert_arr_eq(fx.b.buf + 4000, fx.a.buf, 3000);
	cr_assert(rc_check(fx.b.buf + 4000, 3000, 304));
	cx_fini(&fx);
}

/* rdma-core's ibv_close_device() frees what the program left (perftest leaves a CQ). */
Test(compat_verbs, close_frees_leftovers)
{
	struct cx_fx fx;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;

	cx_init(&fx, ALL_OPS);
	ch = ibv_create_comp_channel(fx.a.ctx);
	cr_assert_not_null(ch);
	cq = ibv_create_cq(fx.a.ctx, 16, NULL, ch, 0);
	cr_assert_not_null(cq);
	cr_assert_eq(ibv_close_device(fx.a.ctx), 0);
	cr_assert_eq(ibv_close_device(fx.b.ctx), 0);
	blue_hal_destroy(fx.a.hal);
	blue_hal_destroy(fx.b.hal);
	free(fx.a.buf);
	free(fx.b.buf);
}

/*
 * The passive side never calls in: B's progress thread must execute A's WRITE and ACK
 * it, as rxe does for perftest's write server sitting in a TCP read.
 */
Test(compat_verbs, progress_thread_serves_a_passive_peer)
{
	struct cx_fx fx;
	struct ibv_sge sge;
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_wc wc;
	int n = 0, i;

	cx_init(&fx, 0);
	rc_fill(fx.a.buf, 2048, 305);
	sge = (struct ibv_sge){ (uintptr_t)fx.a.buf, 2048, fx.a.mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 60;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)fx.b.buf;
	wr.wr.rdma.rkey = fx.b.mr->rkey;
	cr_assert_eq(ibv_post_send(fx.a.qp, &wr, &bad), 0);
	/* poll A only, sleeping in between: B is left to its thread */
	for (i = 0; i < CX_WAIT_MS && !n; i++) {
		n = ibv_poll_cq(ibv_cq_ex_to_cq(fx.a.cq), 1, &wc);
		cr_assert_geq(n, 0);
		if (!n)
			usleep(1000);
	}
	cr_assert_eq(n, 1, "no completion: B's engine did not run");
	expect(&wc, 60, IBV_WC_RDMA_WRITE);
	cr_assert_arr_eq(fx.b.buf, fx.a.buf, 2048);
	cr_assert(rc_check(fx.b.buf, 2048, 305));
	cx_fini(&fx);
}

/* Event mode, as ibv_rc_pingpong -e: arm, wait on the channel, ack, then poll. */
Test(compat_verbs, completion_channel_events)
{
	struct cx_fx fx;
	struct ibv_comp_channel *ch;
	struct ibv_cq *rcq, *ev_cq = NULL;
	struct ibv_qp_init_attr qa;
	struct ibv_sge sge;
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_recv_wr rwr, *rbad = NULL;
	struct ibv_wc wc;
	struct pollfd pfd;
	void *ev_ctx = NULL;
	int tag = 7;

	cx_init_noqp(&fx);
	ch = ibv_create_comp_channel(fx.b.ctx);
	cr_assert_not_null(ch);
	cr_assert_geq(ch->fd, 0);
	rcq = ibv_create_cq(fx.b.ctx, 16, &tag, ch, 0);
	cr_assert_not_null(rcq);
	cr_assert_eq(ch->refcnt, 1);
	/* B's QP receives on the evented CQ; the fixture's QPs are made here by hand */
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = ibv_cq_ex_to_cq(fx.b.cq);
	qa.recv_cq = rcq;
	qa.cap = (struct ibv_qp_cap){ .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
				      .max_recv_sge = 1 };
	qa.qp_type = IBV_QPT_RC;
	fx.b.qp = ibv_create_qp(fx.b.pd, &qa);
	cr_assert_not_null(fx.b.qp);
	qa.send_cq = qa.recv_cq = ibv_cq_ex_to_cq(fx.a.cq);
	fx.a.qp = ibv_create_qp(fx.a.pd, &qa);
	cr_assert_not_null(fx.a.qp);
	cx_connect(&fx);

	sge = (struct ibv_sge){ (uintptr_t)fx.b.buf, 64, fx.b.mr->lkey };
	rwr = (struct ibv_recv_wr){ .wr_id = 70, .sg_list = &sge, .num_sge = 1 };
	cr_assert_eq(ibv_post_recv(fx.b.qp, &rwr, &rbad), 0);
	cr_assert_eq(ibv_req_notify_cq(rcq, 0), 0);
	rc_fill(fx.a.buf, 64, 306);
	sge = (struct ibv_sge){ (uintptr_t)fx.a.buf, 64, fx.a.mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 71;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	cr_assert_eq(ibv_post_send(fx.a.qp, &wr, &bad), 0);
	/* the wait is bounded here: ibv_get_cq_event() itself has no timeout */
	pfd = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
	cr_assert_gt(poll(&pfd, 1, CX_WAIT_MS), 0, "the channel fd never became readable");
	/* A's ACK and completion come from A's thread */
	cr_assert_eq(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
	cr_assert_eq(ev_cq, rcq);
	cr_assert_eq(ev_ctx, &tag);
	ibv_ack_cq_events(ev_cq, 1);
	cr_assert_eq(ibv_poll_cq(rcq, 1, &wc), 1);
	expect(&wc, 70, IBV_WC_RECV);
	cr_assert_arr_eq(fx.b.buf, fx.a.buf, 64);
	cr_assert(rc_check(fx.b.buf, 64, 306));
	cx_wait(&fx, &fx.a, &wc);
	expect(&wc, 71, IBV_WC_SEND);
	cr_assert_eq(ibv_destroy_qp(fx.b.qp), 0);
	fx.b.qp = NULL;
	cr_assert_eq(ibv_destroy_cq(rcq), 0);
	cr_assert_eq(ch->refcnt, 0);
	cr_assert_eq(ibv_destroy_comp_channel(ch), 0);
	cx_fini(&fx);
}

/*
 * The program's channel fd is readable only while an event is pending, as the kernel's
 * is: not for frames received (a completion on an unarmed CQ), and no longer once the
 * event is taken. UCX polls it from its async thread and takes readable for "an
 * event": libblue's own fd, readable for every frame, made UCX 1.13 assert.
 */
Test(compat_verbs, channel_fd_readable_only_with_an_event)
{
	struct cx_fx fx;
	struct ibv_comp_channel *ch;
	struct ibv_cq *rcq, *ev_cq = NULL;
	struct ibv_qp_init_attr qa;
	struct ibv_sge sge, rsge;
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_recv_wr rwr, *rbad = NULL;
	struct ibv_wc wc;
	struct pollfd pfd;
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };
	void *ev_ctx = NULL;
	int i, n, ep;

	cx_init_noqp(&fx);
	ch = ibv_create_comp_channel(fx.b.ctx);
	cr_assert_not_null(ch);
	rcq = ibv_create_cq(fx.b.ctx, 16, NULL, ch, 0);
	cr_assert_not_null(rcq);
	/* watched edge-triggered, as UCX's async thread does: any readiness is an edge */
	ep = epoll_create1(EPOLL_CLOEXEC);
	cr_assert_geq(ep, 0);
	cr_assert_eq(epoll_ctl(ep, EPOLL_CTL_ADD, ch->fd, &ev), 0);
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = ibv_cq_ex_to_cq(fx.b.cq);
	qa.recv_cq = rcq;
	qa.cap = (struct ibv_qp_cap){ .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
				      .max_recv_sge = 1 };
	qa.qp_type = IBV_QPT_RC;
	fx.b.qp = ibv_create_qp(fx.b.pd, &qa);
	cr_assert_not_null(fx.b.qp);
	qa.send_cq = qa.recv_cq = ibv_cq_ex_to_cq(fx.a.cq);
	fx.a.qp = ibv_create_qp(fx.a.pd, &qa);
	cr_assert_not_null(fx.a.qp);
	cx_connect(&fx);
	rsge = (struct ibv_sge){ (uintptr_t)fx.b.buf, 64, fx.b.mr->lkey };
	rwr = (struct ibv_recv_wr){ .wr_id = 80, .sg_list = &rsge, .num_sge = 1 };
	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.num_sge = 1;
	for (i = 0; i < 2; i++) {
		bool armed = i == 1;

		cr_assert_eq(ibv_post_recv(fx.b.qp, &rwr, &rbad), 0);
		if (armed)
			cr_assert_eq(ibv_req_notify_cq(rcq, 0), 0);
		sge = (struct ibv_sge){ (uintptr_t)fx.a.buf, 64, fx.a.mr->lkey };
		wr.sg_list = &sge;
		wr.wr_id = 81 + (uint64_t)i;
		cr_assert_eq(ibv_post_send(fx.a.qp, &wr, &bad), 0);
		cx_wait(&fx, &fx.a, &wc);
		expect(&wc, 81 + (uint64_t)i, IBV_WC_SEND);
		if (!armed) {
			/* the frame came and B completed it: still nothing to read */
			for (n = 0; n < 200 && ibv_poll_cq(rcq, 1, &wc) == 0; n++)
				usleep(1000);
			cr_assert_eq(n < 200, 1, "B's receive did not complete");
			pfd = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
			cr_assert_eq(poll(&pfd, 1, 50), 0,
				     "the channel fd is readable with no event pending");
			cr_assert_eq(epoll_wait(ep, &ev, 1, 0), 0,
				     "the channel fd was readable for frames, with no event");
			continue;
		}
		pfd = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
		cr_assert_gt(poll(&pfd, 1, CX_WAIT_MS), 0, "the armed CQ's event: fd not readable");
		cr_assert_eq(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
		cr_assert_eq(ev_cq, rcq);
		ibv_ack_cq_events(ev_cq, 1);
		cr_assert_eq(ibv_poll_cq(rcq, 1, &wc), 1);
		expect(&wc, 80, IBV_WC_RECV);
		pfd = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
		cr_assert_eq(poll(&pfd, 1, 50), 0, "the fd stayed readable after the event was taken");
	}
	cr_assert_eq(ibv_destroy_qp(fx.b.qp), 0);
	fx.b.qp = NULL;
	cr_assert_eq(ibv_destroy_cq(rcq), 0);
	cr_assert_eq(ibv_destroy_comp_channel(ch), 0);
	close(ep);
	cx_fini(&fx);
}
