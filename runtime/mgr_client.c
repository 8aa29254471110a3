// SPDX-License-Identifier: MIT
/*
 * Daemon mode's side in the application (verbs_ops.h): a context whose engine is
 * blue-manager's. The control verbs are commands over the channel (mgr_proto.h); the
 * data path is the same code as in library mode, on rings the daemon made and handed
 * over: post_send and post_recv write WQEs into them and ring the doorbell when the
 * engine sleeps, poll_cq reads completions out and runs no engine.
 *
 * The objects here are this process's shadows of the daemon's, each with the handle
 * that names it there. A QP's live context is a private copy that holds what the data
 * path reads (state and type), refreshed by modify_qp and query_qp: the engine's own
 * moves to ERROR need no copy here, since posting in ERROR is allowed (it flushes).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "runtime/buf.h"
#include "runtime/cm.h"
#include "runtime/cq.h"
#include "runtime/device.h"
#include "runtime/events.h"
#include "runtime/log.h"
#include "runtime/mgr_client.h"
#include "runtime/mgr_proto.h"
#include "runtime/mgr_sock.h"
#include "runtime/mr.h"
#include "runtime/obs.h"
#include "runtime/progress.h"
#include "runtime/qp.h"
#include "runtime/srq.h"
#include "runtime/verbs_ops.h"

struct blue_mgr_client {
	int sock;
	pthread_mutex_t lock;		/* one request at a time on the socket */
	int bell_efd;
	const struct blue_mgr_bell *bell;	/* mapped read-only */
	struct blue_device_attr dev;
	bool gone;			/* the daemon closed the channel */
	bool flushed_fatal;		/* DEVICE_FATAL raised, the QPs failed (mgr_lost) */
	uint64_t next_check_ns;		/* when an empty poll looks at the channel next */
	struct mgr_qp *qps;		/* every QP, for the flush when the daemon goes */
};

struct mgr_pd {
	struct blue_pd pd;
	uint32_t h;
};

struct mgr_mr {
	struct blue_mr mr;
	uint32_t h;
};

struct mgr_cq {
	struct blue_cq cq;
	uint32_t h;
	struct mgr_cq *ch_next;		/* among its channel's CQs */
};

/*
 * A completion channel: a datagram socket pair. A copy of the other end goes to the
 * daemon with each CQ made on it, and the daemon sends a byte on it when an armed CQ
 * completes (cq.c notify_far); which CQ it was is in each CQ's ring header (events
 * against events_seen).
 */
struct mgr_channel {
	struct blue_comp_channel ch;	/* ch.efd: the read end */
	int peer;			/* the other end: the daemon gets a copy per CQ */
	struct mgr_cq *cqs;
};

struct mgr_srq {
	struct blue_srq srq;
	uint32_t h;
};

struct mgr_qp {
	struct blue_qp qp;
	struct blue_qp_ctx live;	/* the copy the data path reads */
	uint32_t h;
	struct mgr_qp *next;		/* in blue_mgr_client.qps */
};

#define HANDLE(type, p) (((struct type *)(p))->h)

/* ---- when blue-manager goes ------------------------------------------------- */

#define MGR_CHECK_NS	1000000ull	/* an idle poll looks at the channel every 1 ms */

/*
 * @wc into @cq as its producer now that the daemon that produced into it is gone: the
 * engine's own push, from where the daemon's producer index stopped. The API side's CQ
 * has no channel arming of its own (the daemon did that), so nothing else happens.
 */
static bool lost_push(struct blue_cq *cq, const struct blue_wc *wc)
{
	cq->ring.prod = __atomic_load_n(&cq->ring.hdr->prod, __ATOMIC_ACQUIRE);
	return blue__cq_push(cq, wc, false) == 0;
}

/*
 * Every WQE the daemon had not completed, completed here with FLUSH_ERR: the rings
 * are this process's mapping and nothing else touches them now. A CQ with no room
 * keeps the rest for the next call (an application polls, then posts again).
 */
static void lost_flush_qp(struct blue_qp *qp)
{
	struct blue_ring *sq = &qp->sq.ring, *rq = &qp->rq.ring;
	struct blue_wc wc;

	__atomic_store_n(&qp->live->state, BLUE_QPS_ERR, __ATOMIC_RELEASE);
	while (sq->cons = __atomic_load_n(&sq->hdr->cons, __ATOMIC_ACQUIRE),
	       blue_ring_prod_own(sq) != sq->cons) {
		const struct blue_send_wqe *w = blue_sq_wqe(&qp->sq, sq->cons);

		memset(&wc, 0, sizeof(wc));
		wc.wr_id = w->wr_id;
		wc.status = BLUE_WC_WR_FLUSH_ERR;
		wc.opcode = BLUE_WC_SEND;
		wc.qp_num = qp->qpn;
		if (!lost_push(qp->send_cq, &wc))
			break;
		blue_ring_consume(sq, 1);
	}
	while (rq->cons = __atomic_load_n(&rq->hdr->cons, __ATOMIC_ACQUIRE),
	       blue_ring_prod_own(rq) != rq->cons) {
		memset(&wc, 0, sizeof(wc));
		wc.wr_id = blue_rq_wqe(&qp->rq, rq->cons)->wr_id;
		wc.status = BLUE_WC_WR_FLUSH_ERR;
		wc.opcode = BLUE_WC_RECV;
		wc.qp_num = qp->qpn;
		if (!lost_push(qp->recv_cq, &wc))
			break;
		blue_ring_consume(rq, 1);
	}
}

/*
 * The daemon is gone (its channel closed: killed, or stopped): once, a DEVICE_FATAL
 * event; then, each time it is called, every QP in ERROR and every WQE still posted
 * flushed, so that no application waits for a completion that cannot come.
 */
static void mgr_lost(struct blue_context *ctx)
{
	struct blue_mgr_client *m = ctx->mgr;

	if (!m->flushed_fatal) {
		struct blue_async_event e = { .type = BLUE_EVENT_DEVICE_FATAL, .port_num = 1 };

		m->flushed_fatal = true;
		blue__logf("%s: blue-manager has gone: every QP is in ERROR and its work requests "
			   "complete with WR_FLUSH_ERR; close the device, and open it again once "
			   "blue-manager is back", ctx->ifname);
		blue__event_raise(ctx, &e);
	}
	for (struct mgr_qp *p = m->qps; p; p = p->next)
		lost_flush_qp(&p->qp);
	/* an SRQ's WQEs belong to no QP until one takes them: they stay, as the kernel's do */
}

/* Has the channel closed? Looked at by empty polls, at most every MGR_CHECK_NS. */
static void mgr_check(struct blue_context *ctx)
{
	struct blue_mgr_client *m = ctx->mgr;
	struct pollfd p = { .fd = m->sock, .events = POLLIN };
	uint64_t now;

	if (m->gone) {
		mgr_lost(ctx);
		return;
	}
	now = blue__now_ns();
	if (now < m->next_check_ns)
		return;
	m->next_check_ns = now + MGR_CHECK_NS;
	/* the daemon never writes unasked: readable means closed (or a stray byte: gone too) */
	if (poll(&p, 1, 0) == 1 && (p.revents & (POLLIN | POLLHUP | POLLERR))) {
		m->gone = true;
		mgr_lost(ctx);
	}
}

/*
 * One request and its reply. @fd_in: a descriptor to send with it (-1: none); @fds:
 * where the reply's go (at most BLUE_MGR_MAX_FDS), *@nfds how many came.
 * Return: the reply's err (a positive errno); its message is logged here, as if this
 * process had said it. EPIPE when the daemon has gone.
 */
static int call(struct blue_context *ctx, struct blue_mgr_req *req, int fd_in,
		struct blue_mgr_rep *rep, int *fds, int *nfds)
{
	struct blue_mgr_client *m = ctx->mgr;
	bool was_gone = m->gone;
	int got = 0, err;
	long n = 0;

	memset(rep, 0, sizeof(*rep));
	pthread_mutex_lock(&m->lock);
	err = m->gone ? -EPIPE : blue__mgr_send(m->sock, req, sizeof(*req), &fd_in,
						 fd_in >= 0 ? 1 : 0);
	if (!err) {
		n = blue__mgr_recv(m->sock, rep, sizeof(*rep), fds, &got);
		if (n != (long)sizeof(*rep)) {
			for (int i = 0; n > 0 && i < got; i++)
				close(fds[i]);
			got = 0;
			err = -EPIPE;
		}
	}
	if (err == -EPIPE || err == -ECONNRESET)
		m->gone = true;
	pthread_mutex_unlock(&m->lock);
	if (m->gone)
		mgr_lost(ctx);
	if (nfds)
		*nfds = got;	/* without @fds, blue__mgr_recv closed any that came */
	if (err) {
		if (!was_gone)
			blue__logf("blue-manager is gone (request %u: %s); this context can only "
				   "be closed", req->op, strerror(-err));
		return EPIPE;
	}
	if (rep->err && rep->msg[0])
		blue__logf("%s", rep->msg);
	return rep->err;
}

/* A request of @op on handle @h, the fields zero. */
static struct blue_mgr_req req_of(uint32_t op, uint32_t h)
{
	struct blue_mgr_req r;

	memset(&r, 0, sizeof(r));
	r.op = op;
	r.handle = h;
	return r;
}

/*
 * A destroy whose daemon has gone succeeds here: what the object held went with the
 * daemon. Return: true when *@err (0 now, or the daemon's refusal) ends the call.
 */
static bool gone_ok(struct blue_context *ctx, int *err)
{
	if (*err == EPIPE && ctx->mgr->gone)
		*err = 0;
	return *err != 0;
}

static void *fail_null(int err)
{
	errno = err;
	return NULL;
}

static void mgr_progress(struct blue_context *ctx)
{
	(void)ctx;	/* blue-manager's engine runs whether or not we call in */
}

/*
 * An empty poll gives the core away: on a machine with fewer cores than spinning
 * threads (an application that busy-polls and the engine that serves it), the engine
 * runs when the application yields, not when the scheduler's slice ends (milliseconds).
 * With a core to itself, sched_yield returns at once.
 */
static void mgr_idle(struct blue_context *ctx)
{
	mgr_check(ctx);
	sched_yield();
}

static void mgr_kick(struct blue_context *ctx)
{
	struct blue_mgr_client *m = ctx->mgr;
	uint64_t one = 1;

	if (m->gone) {
		mgr_lost(ctx);	/* posted in ERROR: flushed at once, as the engine would */
		return;
	}
	/* the WQEs are published (release): now the flag (mgr_server.c says why) */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&m->bell->sleeping, __ATOMIC_RELAXED))
		(void)!write(m->bell_efd, &one, sizeof(one));
}

static int mgr_close_device(struct blue_context *ctx)
{
	struct blue_mgr_client *m = ctx->mgr;

	if (ctx->nqp || ctx->ncq || ctx->nmr || ctx->npd) {
		blue__logf("close_device: %u QPs, %u CQs, %u MRs, %u PDs remain; destroy "
			   "them first", ctx->nqp, ctx->ncq, ctx->nmr, ctx->npd);
		return EBUSY;
	}
	/* the daemon drops whatever this process made when the socket closes */
	blue__events_fini(&ctx->events);
	close(m->sock);
	close(m->bell_efd);
	munmap((void *)m->bell, sizeof(*m->bell));
	pthread_mutex_destroy(&m->lock);
	free(m);
	free(ctx);
	return 0;
}

static int mgr_query_device(struct blue_context *ctx, struct blue_device_attr *attr)
{
	if (!attr)
		return EINVAL;
	*attr = ctx->mgr->dev;
	return 0;
}

static struct blue_pd *mgr_alloc_pd(struct blue_context *ctx)
{
	struct blue_mgr_req req = req_of(BLUE_MGR_ALLOC_PD, 0);
	struct mgr_pd *p = calloc(1, sizeof(*p));
	struct blue_mgr_rep rep;
	int err;

	if (!p)
		return fail_null(ENOMEM);
	err = call(ctx, &req, -1, &rep, NULL, NULL);
	if (err) {
		free(p);
		return fail_null(err);
	}
	p->pd.ctx = ctx;
	p->h = rep.handle;
	ctx->npd++;
	return &p->pd;
}

static int mgr_dealloc_pd(struct blue_pd *pd)
{
	struct blue_mgr_req req = req_of(BLUE_MGR_DEALLOC_PD, HANDLE(mgr_pd, pd));
	struct blue_context *ctx = pd->ctx;
	struct blue_mgr_rep rep;
	int err = call(ctx, &req, -1, &rep, NULL, NULL);

	if (gone_ok(ctx, &err))
		return err;
	ctx->npd--;
	free(pd);
	return 0;
}

static struct blue_mr *mgr_reg_mr(struct blue_pd *pd, void *addr, size_t length,
				  unsigned int access)
{
	struct blue_mgr_req req = req_of(BLUE_MGR_REG_MR, 0);
	struct blue_mgr_rep rep;
	struct mgr_mr *p;
	uint64_t off;
	int fd, err;

	if (!addr || !length) {
		blue__logf("reg_mr: bad range %p + %zu", addr, length);
		return fail_null(EINVAL);
	}
	/* blue_buf_alloc memory: its memfd, which the daemon maps; else the daemon reaches
	 * the bytes in this process (process_vm, mem_at.h) */
	if (blue__buf_find(addr, length, &fd, &off)) {
		fd = -1;
		off = 0;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return fail_null(ENOMEM);
	req.u.reg_mr.pd = HANDLE(mgr_pd, pd);
	req.u.reg_mr.access = access;
	req.u.reg_mr.addr = (uint64_t)(uintptr_t)addr;
	req.u.reg_mr.length = length;
	req.u.reg_mr.fd_off = off;
	err = call(pd->ctx, &req, fd, &rep, NULL, NULL);
	if (err) {
		free(p);
		return fail_null(err);
	}
	p->h = rep.handle;
	p->mr.context = pd->ctx;
	p->mr.pd = pd;
	p->mr.addr = addr;
	p->mr.length = length;
	p->mr.access = access;
	p->mr.lkey = rep.u.mr.lkey;
	p->mr.rkey = rep.u.mr.rkey;
	pd->ctx->nmr++;
	pd->nmr++;
	return &p->mr;
}

static int mgr_dereg_mr(struct blue_mr *mr)
{
	struct blue_mgr_req req = req_of(BLUE_MGR_DEREG_MR, HANDLE(mgr_mr, mr));
	struct blue_context *ctx = mr->context;
	struct blue_mgr_rep rep;
	int err = call(ctx, &req, -1, &rep, NULL, NULL);

	if (gone_ok(ctx, &err))
		return err;
	ctx->nmr--;
	mr->pd->nmr--;
	free(mr);
	return 0;
}

/* Map a ring the daemon handed over; closes @fd. Return: 0 or a positive errno. */
static int ring_take(struct blue_ring *r, int fd, const struct blue_mgr_ring *g)
{
	int err = blue_ring_map(r, fd, g->log2_size, g->elem_size);

	close(fd);
	return -err;
}

static struct blue_cq *mgr_create_cq(struct blue_context *ctx, int cqe, void *cq_context,
				     struct blue_comp_channel *channel, int comp_vector)
{
	struct blue_mgr_req req = req_of(BLUE_MGR_CREATE_CQ, 0);
	struct blue_mgr_rep rep;
	struct mgr_cq *p;
	int fds[BLUE_MGR_MAX_FDS], nfds, err;

	(void)comp_vector;
	if (channel && channel->ctx != ctx) {
		blue__logf("create_cq: the channel is of another device context");
		return fail_null(EINVAL);
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return fail_null(ENOMEM);
	req.u.create_cq.cqe = cqe;
	err = call(ctx, &req, channel ? ((struct mgr_channel *)channel)->peer : -1, &rep, fds,
		   &nfds);
	if (!err && nfds != 1)
		err = EPROTO;
	if (!err)
		err = ring_take(&p->cq.ring, fds[0], &rep.u.cq.ring);
	if (err) {
		if (rep.handle) {
			struct blue_mgr_req d = req_of(BLUE_MGR_DESTROY_CQ, rep.handle);

			call(ctx, &d, -1, &rep, NULL, NULL);
		}
		free(p);
		return fail_null(err);
	}
	p->h = rep.handle;
	p->cq.ctx = ctx;
	p->cq.shm_fd = -1;
	p->cq.notify_fd = -1;
	p->cq.cqe = rep.u.cq.cqe;
	p->cq.cq_context = cq_context;
	if (channel) {
		struct mgr_channel *mc = (struct mgr_channel *)channel;

		p->cq.channel = channel;
		p->cq.events_seen = __atomic_load_n(&p->cq.ring.hdr->events, __ATOMIC_ACQUIRE);
		p->ch_next = mc->cqs;
		mc->cqs = p;
		channel->ncq++;
	}
	ctx->ncq++;
	return &p->cq;
}

static int mgr_destroy_cq(struct blue_cq *cq)
{
	struct blue_mgr_req req = req_of(BLUE_MGR_DESTROY_CQ, HANDLE(mgr_cq, cq));
	struct blue_context *ctx = cq->ctx;
	struct blue_mgr_rep rep;
	int err = call(ctx, &req, -1, &rep, NULL, NULL);

	if (gone_ok(ctx, &err))
		return err;
	if (cq->channel) {
		struct mgr_channel *mc = (struct mgr_channel *)cq->channel;
		struct mgr_cq **pp = &mc->cqs;

		while (*pp && &(*pp)->cq != cq)
			pp = &(*pp)->ch_next;
		if (*pp)
			*pp = (*pp)->ch_next;
		cq->channel->ncq--;
	}
	blue_ring_fini(&cq->ring);
	ctx->ncq--;
	free(cq);
	return 0;
}

static struct blue_srq *mgr_create_srq(struct blue_pd *pd, struct blue_srq_attr *attr,
				       void *srq_context)
{
	struct blue_mgr_req req = req_of(BLUE_MGR_CREATE_SRQ, 0);
	struct blue_context *ctx = pd->ctx;
	struct blue_mgr_rep rep;
	struct mgr_srq *p = calloc(1, sizeof(*p));
	int fds[BLUE_MGR_MAX_FDS], nfds = 0, err;

	if (!p)
		return fail_null(ENOMEM);
	req.u.srq.pd = HANDLE(mgr_pd, pd);
	req.u.srq.attr = *attr;
	err = call(ctx, &req, -1, &rep, fds, &nfds);
	if (!err && nfds != 1)
		err = EPROTO;
	if (!err)
		err = ring_take(&p->srq.wq.ring, fds[0], &rep.u.srq.ring);
	if (err) {
		if (rep.handle) {
			struct blue_mgr_req d = req_of(BLUE_MGR_DESTROY_SRQ, rep.handle);

			call(ctx, &d, -1, &rep, NULL, NULL);
		}
		free(p);
		return fail_null(err);
	}
	p->h = rep.handle;
	p->srq.ctx = ctx;
	p->srq.pd = pd;
	p->srq.srq_context = srq_context;
	p->srq.srqn = rep.u.srq.srqn;
	p->srq.wq.max_wr = rep.u.srq.attr.max_wr;
	p->srq.wq.max_sge = rep.u.srq.attr.max_sge;
	p->srq.wq.shm_fd = -1;
	*attr = rep.u.srq.attr;
	ctx->nsrq++;
	pd->nsrq++;
	return &p->srq;
}

/* MODIFY_SRQ and QUERY_SRQ: the attributes both ways. */
static int srq_attr(struct blue_srq *srq, uint32_t op, struct blue_srq_attr *attr, int mask)
{
	struct blue_mgr_req req = req_of(op, HANDLE(mgr_srq, srq));
	struct blue_mgr_rep rep;
	int err;

	req.u.srq.attr = *attr;
	req.u.srq.mask = mask;
	err = call(srq->ctx, &req, -1, &rep, NULL, NULL);
	if (!err)
		*attr = rep.u.srq.attr;
	return err;
}

static int mgr_modify_srq(struct blue_srq *srq, struct blue_srq_attr *attr, int attr_mask)
{
	return srq_attr(srq, BLUE_MGR_MODIFY_SRQ, attr, attr_mask);
}

static int mgr_query_srq(struct blue_srq *srq, struct blue_srq_attr *attr)
{
	return srq_attr(srq, BLUE_MGR_QUERY_SRQ, attr, 0);
}

static int mgr_destroy_srq(struct blue_srq *srq)
{
	struct blue_mgr_req req = req_of(BLUE_MGR_DESTROY_SRQ, HANDLE(mgr_srq, srq));
	struct blue_context *ctx = srq->ctx;
	struct blue_mgr_rep rep;
	int err;

	if (srq->nqp) {
		blue__logf("destroy_srq: SRQ 0x%x: %u QPs still take receives from it; destroy "
			   "them first", srq->srqn, srq->nqp);
		return EBUSY;
	}
	err = call(ctx, &req, -1, &rep, NULL, NULL);
	if (gone_ok(ctx, &err))
		return err;
	blue_ring_fini(&srq->wq.ring);
	ctx->nsrq--;
	srq->pd->nsrq--;
	free(srq);
	return 0;
}

static struct blue_comp_channel *mgr_create_comp_channel(struct blue_context *ctx)
{
	struct mgr_channel *mc = calloc(1, sizeof(*mc));
	int sv[2], err;

	if (!mc)
		return fail_null(ENOMEM);
	/*
	 * A datagram socket pair rather than an eventfd: the daemon sends each event with
	 * MSG_DONTWAIT, which no flag or count this process sets can turn into a wait.
	 * Readable while events wait, as the kernel's channel fd is.
	 */
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv)) {
		err = errno;
		blue__logf("create_comp_channel: socketpair: %s", strerror(err));
		free(mc);
		return fail_null(err);
	}
	/* no engine here: the channel's epoll set is its read end alone */
	err = blue__channel_init(&mc->ch, ctx, sv[0], false);
	if (err) {
		close(sv[1]);
		free(mc);
		return fail_null(-err);
	}
	mc->peer = sv[1];
	return &mc->ch;
}

static int mgr_destroy_comp_channel(struct blue_comp_channel *ch)
{
	int peer = ((struct mgr_channel *)ch)->peer;
	int err = blue__lib_destroy_comp_channel(ch);	/* the fds, the memory (mc) */

	if (!err)
		close(peer);
	return err;
}

static int mgr_req_notify_cq(struct blue_cq *cq, int solicited_only)
{
	if (!cq->channel) {
		blue__logf("req_notify_cq: the CQ has no completion channel to notify");
		return EINVAL;
	}
	__atomic_store_n(&cq->ring.hdr->arm,
			 solicited_only ? BLUE_RING_ARM_SOLICITED : BLUE_RING_ARM_ANY,
			 __ATOMIC_RELEASE);
	return 0;
}

/* Take every datagram the channel holds, without blocking. */
static void efd_drain(int fd)
{
	uint8_t b[64];

	while (recv(fd, b, sizeof(b), MSG_DONTWAIT) > 0)
		;
}

/*
 * The first CQ of @ch with an event not taken. The socket is drained first and made
 * readable again while another CQ still has one, so that it stays readable exactly
 * while events wait.
 */
static int mgr_get_cq_event_try(struct blue_comp_channel *ch, struct blue_cq **cq,
				void **cq_context)
{
	struct mgr_channel *mc = (struct mgr_channel *)ch;
	struct blue_cq *got = NULL;
	uint8_t one = 1;
	bool more = false;

	efd_drain(ch->efd);
	for (struct mgr_cq *p = mc->cqs; p; p = p->ch_next) {
		uint32_t ev = __atomic_load_n(&p->cq.ring.hdr->events, __ATOMIC_ACQUIRE);

		if (ev == p->cq.events_seen)
			continue;
		if (got) {
			more = true;
			break;
		}
		p->cq.events_seen = ev;	/* several raised since: one event, as ev_queued */
		got = &p->cq;
	}
	if (more)	/* readable again: the next take finds it */
		(void)send(mc->peer, &one, 1, MSG_DONTWAIT);
	if (!got)
		return -EAGAIN;
	got->events_got++;
	*cq = got;
	*cq_context = got->cq_context;
	return 0;
}

static void qp_unmap(struct blue_qp *qp)
{
	blue_ring_fini(&qp->sq.ring);
	blue_ring_fini(&qp->rq.ring);
}

static struct blue_qp *qp_make(struct blue_pd *pd, struct blue_qp_init_attr *attr, bool gsi)
{
	struct blue_mgr_req req = req_of(BLUE_MGR_CREATE_QP, 0);
	struct blue_context *ctx = pd->ctx;
	struct blue_mgr_rep rep;
	struct mgr_qp *p;
	struct blue_qp *qp;
	int fds[BLUE_MGR_MAX_FDS], nfds = 0, err;

	if (!attr || !attr->send_cq || !attr->recv_cq || attr->send_cq->ctx != ctx ||
	    attr->recv_cq->ctx != ctx) {
		blue__logf("create_qp: the send and receive CQs must be of this context");
		return fail_null(EINVAL);
	}
	if (attr->srq && attr->srq->ctx != ctx) {
		blue__logf("create_qp: the SRQ is of another device context");
		return fail_null(EINVAL);
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return fail_null(ENOMEM);
	req.u.create_qp.pd = HANDLE(mgr_pd, pd);
	req.u.create_qp.send_cq = HANDLE(mgr_cq, attr->send_cq);
	req.u.create_qp.recv_cq = HANDLE(mgr_cq, attr->recv_cq);
	req.u.create_qp.srq = attr->srq ? HANDLE(mgr_srq, attr->srq) : 0;
	req.u.create_qp.cap = attr->cap;
	req.u.create_qp.qp_type = attr->qp_type;
	req.u.create_qp.sq_sig_all = attr->sq_sig_all;
	req.u.create_qp.gsi = gsi;
	err = call(ctx, &req, -1, &rep, fds, &nfds);
	qp = &p->qp;
	if (!err && nfds != 2)
		err = EPROTO;
	if (!err) {
		err = ring_take(&qp->sq.ring, fds[0], &rep.u.qp.sq);
		fds[0] = -1;
		if (!err)
			err = ring_take(&qp->rq.ring, fds[1], &rep.u.qp.rq);
		else
			close(fds[1]);
	} else {
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
	}
	if (err) {
		if (rep.handle) {
			struct blue_mgr_req d = req_of(BLUE_MGR_DESTROY_QP, rep.handle);
			struct blue_mgr_rep r2;

			call(ctx, &d, -1, &r2, NULL, NULL);
		}
		qp_unmap(qp);
		free(p);
		return fail_null(err);
	}
	p->h = rep.handle;
	qp->ctx = ctx;
	qp->pd = pd;
	qp->send_cq = attr->send_cq;
	qp->recv_cq = attr->recv_cq;
	qp->qp_context = attr->qp_context;
	qp->live = &p->live;
	qp->qpn = rep.u.qp.qpn;
	qp->gsi_prefix = (uint8_t)rep.u.qp.gsi_prefix;
	qp->type = attr->qp_type;
	qp->sq_sig_all = attr->sq_sig_all != 0;
	qp->sq.max_wr = rep.u.qp.sq_max_wr;
	qp->sq.max_sge = rep.u.qp.cap.max_send_sge;
	qp->sq.max_inline = rep.u.qp.cap.max_inline_data;
	qp->sq.shm_fd = -1;
	qp->rq.max_wr = rep.u.qp.rq_max_wr;
	qp->rq.max_sge = rep.u.qp.cap.max_recv_sge ? rep.u.qp.cap.max_recv_sge : 1;
	qp->rq.shm_fd = -1;
	p->live.state = BLUE_QPS_RESET;
	p->live.type = (uint8_t)attr->qp_type;
	attr->cap = rep.u.qp.cap;
	p->next = ctx->mgr->qps;
	ctx->mgr->qps = p;
	qp->srq = attr->srq;
	if (qp->srq)
		qp->srq->nqp++;
	ctx->nqp++;
	pd->nqp++;
	return qp;
}

static struct blue_qp *mgr_create_qp(struct blue_pd *pd, struct blue_qp_init_attr *attr)
{
	return qp_make(pd, attr, false);
}

struct blue_qp *blue__mgr_create_gsi_qp(struct blue_pd *pd, struct blue_qp_init_attr *attr)
{
	return qp_make(pd, attr, true);
}

int blue__mgr_gsi_listen(struct blue_qp *qp, uint64_t service_id, bool on)
{
	struct blue_mgr_req req = req_of(BLUE_MGR_GSI_LISTEN, HANDLE(mgr_qp, qp));
	struct blue_mgr_rep rep;

	req.u.gsi_listen.service_id = service_id;
	req.u.gsi_listen.on = on;
	return -call(qp->ctx, &req, -1, &rep, NULL, NULL);
}

int blue__mgr_mcast(struct blue_qp *qp, const union blue_gid *gid, uint16_t lid, bool attach)
{
	struct blue_mgr_req req = req_of(attach ? BLUE_MGR_ATTACH_MCAST : BLUE_MGR_DETACH_MCAST,
					 HANDLE(mgr_qp, qp));
	struct blue_mgr_rep rep;

	req.u.mcast.gid = *gid;
	req.u.mcast.lid = lid;
	return call(qp->ctx, &req, -1, &rep, NULL, NULL);	/* the daemon counts them */
}

static void live_state(struct blue_qp *qp, uint32_t state)
{
	__atomic_store_n(&qp->live->state, (uint8_t)state, __ATOMIC_RELEASE);
}

static int mgr_modify_qp(struct blue_qp *qp, struct blue_qp_attr *attr, int attr_mask)
{
	struct blue_mgr_req req = req_of(BLUE_MGR_MODIFY_QP, HANDLE(mgr_qp, qp));
	struct blue_mgr_rep rep;
	int err;

	if (!attr)
		return EINVAL;
	req.u.modify_qp.attr = *attr;
	req.u.modify_qp.mask = attr_mask;
	err = call(qp->ctx, &req, -1, &rep, NULL, NULL);
	if (err == EPIPE)
		return err;
	live_state(qp, rep.u.modify_qp.state);
	/* the daemon emptied its side of the rings; ours, and the CQs we consume, here */
	if (!err && rep.u.modify_qp.state == BLUE_QPS_RESET)
		blue__qp_reset_rings(qp, true);
	return err;
}

static int mgr_query_qp(struct blue_qp *qp, struct blue_qp_attr *attr, int attr_mask,
			struct blue_qp_init_attr *init_attr)
{
	struct blue_mgr_req req = req_of(BLUE_MGR_QUERY_QP, HANDLE(mgr_qp, qp));
	struct blue_mgr_rep rep;
	int err;

	if (!attr || !init_attr)
		return EINVAL;
	req.u.query_qp.mask = attr_mask;
	err = call(qp->ctx, &req, -1, &rep, NULL, NULL);
	if (err)
		return err;
	*attr = rep.u.query_qp.attr;
	*init_attr = rep.u.query_qp.init;
	init_attr->qp_context = qp->qp_context;
	init_attr->send_cq = qp->send_cq;
	init_attr->recv_cq = qp->recv_cq;
	live_state(qp, attr->qp_state);
	return 0;
}

static int mgr_destroy_qp(struct blue_qp *qp)
{
	struct blue_mgr_req req = req_of(BLUE_MGR_DESTROY_QP, HANDLE(mgr_qp, qp));
	struct blue_context *ctx = qp->ctx;
	struct blue_mgr_rep rep;
	struct mgr_qp **pp;
	int err = call(ctx, &req, -1, &rep, NULL, NULL);

	if (gone_ok(ctx, &err))
		return err;
	for (pp = &ctx->mgr->qps; *pp && &(*pp)->qp != qp; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = (*pp)->next;
	if (qp->srq)
		qp->srq->nqp--;
	qp_unmap(qp);
	ctx->nqp--;
	qp->pd->nqp--;
	free(qp);
	return 0;
}

/*
 * A QP policy call: @in (@len bytes) into the request's body, or the reply's body out
 * into @out. The retransmission and congestion-control settings are each one struct.
 */
static int qp_policy(struct blue_qp *qp, uint32_t op, const void *in, void *out, size_t len)
{
	struct blue_mgr_req req = req_of(op, HANDLE(mgr_qp, qp));
	struct blue_mgr_rep rep;
	int err;

	if (!in && !out)
		return EINVAL;
	if (in)
		memcpy(&req.u, in, len);
	err = call(qp->ctx, &req, -1, &rep, NULL, NULL);
	if (!err && out)
		memcpy(out, &rep.u, len);
	return err;
}

static int mgr_qp_set_retx(struct blue_qp *qp, const struct blue_retx_attr *a)
{
	return qp_policy(qp, BLUE_MGR_SET_RETX, a, NULL, sizeof(*a));
}

static int mgr_qp_query_retx(struct blue_qp *qp, struct blue_retx_attr *a)
{
	return qp_policy(qp, BLUE_MGR_QUERY_RETX, NULL, a, sizeof(*a));
}

static int mgr_qp_set_cc(struct blue_qp *qp, const struct blue_cc_params *p)
{
	return qp_policy(qp, BLUE_MGR_SET_CC, p, NULL, sizeof(*p));
}

static int mgr_qp_query_cc(struct blue_qp *qp, struct blue_cc_params *p)
{
	return qp_policy(qp, BLUE_MGR_QUERY_CC, NULL, p, sizeof(*p));
}

/* A CM call's result: -errno, with the daemon's message as this thread's CM error. */
static int cm_result(int err, const struct blue_mgr_rep *rep)
{
	if (!err)
		return 0;
	return -blue__cm_fail(err, "%s", rep->msg[0] ? rep->msg : "blue-manager is gone");
}

static int mgr_cm_info_from_qp(struct blue_context *ctx, struct blue_qp *qp, int gid_index,
			       struct blue_cm_info *info)
{
	struct blue_mgr_req req;
	struct blue_mgr_rep rep;
	int err;

	blue__cm_clear_error();
	if (!qp || !info)
		return -blue__cm_fail(EINVAL, "info_from_qp: no QP or info");
	req = req_of(BLUE_MGR_CM_INFO, HANDLE(mgr_qp, qp));
	req.u.cm_info.gid_index = gid_index;
	err = call(ctx, &req, -1, &rep, NULL, NULL);
	if (!err)
		*info = rep.u.cm_info;
	return cm_result(err, &rep);
}

static int mgr_cm_connect_qp(struct blue_context *ctx, struct blue_qp *qp, uint32_t local_psn,
			     const struct blue_cm_info *remote, const struct blue_cm_qp_attr *attr)
{
	struct blue_mgr_req req;
	struct blue_mgr_rep rep;
	int err;

	blue__cm_clear_error();
	if (!qp || !remote)
		return -blue__cm_fail(EINVAL, "connect_qp: no QP or peer info");
	req = req_of(BLUE_MGR_CM_CONNECT, HANDLE(mgr_qp, qp));
	req.u.cm_connect.psn = local_psn;
	req.u.cm_connect.remote = *remote;
	if (attr) {
		req.u.cm_connect.attr = *attr;
		req.u.cm_connect.has_attr = 1;
	}
	err = call(ctx, &req, -1, &rep, NULL, NULL);
	/* the state it reached (RTS, or where it stopped), for the data path's copy */
	if (err != EPIPE)
		live_state(qp, rep.u.modify_qp.state);
	return cm_result(err, &rep);
}

static const struct blue_verbs_ops mgr_ops = {
	.mode = "daemon",
	.progress = mgr_progress,
	.idle = mgr_idle,
	.kick = mgr_kick,
	.close_device = mgr_close_device,
	.query_device = mgr_query_device,
	.alloc_pd = mgr_alloc_pd,
	.dealloc_pd = mgr_dealloc_pd,
	.reg_mr = mgr_reg_mr,
	.dereg_mr = mgr_dereg_mr,
	.create_cq = mgr_create_cq,
	.destroy_cq = mgr_destroy_cq,
	.create_srq = mgr_create_srq,
	.modify_srq = mgr_modify_srq,
	.query_srq = mgr_query_srq,
	.destroy_srq = mgr_destroy_srq,
	.create_comp_channel = mgr_create_comp_channel,
	.destroy_comp_channel = mgr_destroy_comp_channel,
	.req_notify_cq = mgr_req_notify_cq,
	.get_cq_event_try = mgr_get_cq_event_try,
	.create_qp = mgr_create_qp,
	.modify_qp = mgr_modify_qp,
	.query_qp = mgr_query_qp,
	.destroy_qp = mgr_destroy_qp,
	.qp_set_retx = mgr_qp_set_retx,
	.qp_query_retx = mgr_qp_query_retx,
	.qp_set_cc = mgr_qp_set_cc,
	.qp_query_cc = mgr_qp_query_cc,
	.cm_info_from_qp = mgr_cm_info_from_qp,
	.cm_connect_qp = mgr_cm_connect_qp,
};

/* Connect to the channel. Return: the socket, or -errno (-ENOENT: nobody listens). */
static int channel_connect(const char *ifname)
{
	struct sockaddr_un sa;
	socklen_t len;
	int fd, err;

	err = blue__mgr_addr(ifname, &sa, &len);
	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, len)) {
		err = errno == ECONNREFUSED ? -ENOENT : -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* HELLO, and the context filled in from its answer. Return: 0 or a positive errno. */
static int hello(struct blue_context *ctx, const char *ifname)
{
	struct blue_mgr_req req = req_of(BLUE_MGR_HELLO, 0);
	struct blue_mgr_client *m = ctx->mgr;
	struct blue_mgr_rep rep;
	int fds[BLUE_MGR_MAX_FDS], nfds = 0, err;
	void *bell;

	req.u.hello.proto = BLUE_MGR_PROTO;
	req.u.hello.req_size = sizeof(struct blue_mgr_req);
	req.u.hello.rep_size = sizeof(struct blue_mgr_rep);
	err = call(ctx, &req, -1, &rep, fds, &nfds);
	if (!err && nfds != 2)
		err = EPROTO;
	if (err) {
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		return err;
	}
	m->bell_efd = fds[0];
	bell = mmap(NULL, sizeof(*m->bell), PROT_READ, MAP_SHARED, fds[1], 0);
	close(fds[1]);
	if (bell == MAP_FAILED) {
		close(fds[0]);
		return errno;
	}
	m->bell = bell;
	if (strncmp(rep.u.hello.ifname, ifname, IF_NAMESIZE)) {
		blue__logf("open_device: the blue-manager at $%s serves %s, not %s",
			   BLUE_MGR_SOCK_ENV, rep.u.hello.ifname, ifname);
		close(m->bell_efd);
		munmap(bell, sizeof(*m->bell));
		return ENODEV;
	}
	snprintf(ctx->ifname, sizeof(ctx->ifname), "%s", ifname);
	memcpy(ctx->mac, rep.u.hello.mac, 6);
	ctx->ip = rep.u.hello.ip;
	ctx->active_mtu = (enum blue_mtu)rep.u.hello.active_mtu;
	ctx->link_mbps = rep.u.hello.link_mbps;
	memcpy(ctx->gid, rep.u.hello.gid, sizeof(ctx->gid));
	m->dev = rep.u.hello.dev;
	return 0;
}

struct blue_context *blue__mgr_open(const char *ifname, bool required, bool *absent)
{
	struct blue_mgr_client *m;
	struct blue_context *ctx;
	int fd, err;

	*absent = false;
	if (!ifname || !ifname[0]) {
		/* the library's open says what is wrong with the name, as without a daemon */
		*absent = !required;
		if (required)
			blue__logf("open_device: no netdev name");
		return fail_null(ENODEV);
	}
	fd = channel_connect(ifname);
	if (fd < 0) {
		if (fd == -ENOENT && !required) {
			*absent = true;
			return fail_null(ENOENT);
		}
		blue__logf("open_device: %s: BLUE_MODE=daemon, and no blue-manager serves it "
			   "here (%s): start `blue-manager -d %s` in this network namespace",
			   ifname, strerror(-fd), ifname);
		return fail_null(-fd);
	}
	ctx = calloc(1, sizeof(*ctx));
	m = calloc(1, sizeof(*m));
	if (!ctx || !m) {
		free(ctx);
		free(m);
		close(fd);
		return fail_null(ENOMEM);
	}
	m->sock = fd;
	m->bell_efd = -1;
	pthread_mutex_init(&m->lock, NULL);
	ctx->ops = &mgr_ops;
	ctx->mgr = m;
	ctx->slot_fd = -1;
	ctx->timer_fd = -1;
	blue__obs_init_bare(ctx);
	err = blue__events_init(&ctx->events);
	if (!err)
		err = hello(ctx, ifname);
	else
		err = -err;
	if (err) {
		blue__events_fini(&ctx->events);
			close(fd);
		pthread_mutex_destroy(&m->lock);
		free(m);
		free(ctx);
		return fail_null(err);
	}
	return ctx;
}
