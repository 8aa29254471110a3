// SPDX-License-Identifier: MIT
/*
 * The connection of a perftest-style benchmark: one TCP connection (blue's CM sockets)
 * carries PARAMS (the client's options), one blue_cm_exchange_qp() per QP (QPN, PSN, GID,
 * MAC and the QP's memory slice), then the control messages of each round. Every wait is
 * bounded by --timeout.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "tools/perf/perf.h"

#define PARAMS_MAGIC	0x42504631u	/* "BPF1": blue perf, version 1 */
#define MAX_RD_ATOMIC	16		/* the device's max_qp_rd_atom */

/* The client's options as the server takes them, all big-endian 32-bit words. */
struct params_wire {
	uint32_t magic, test, size, all_sizes, iters, duration, nqps, tx_depth, post_list,
		 inline_size, mtu, cas;
};

static int send_all(struct perf_ctx *c, const void *buf, size_t len)
{
	return tool_send_all(c->fd, buf, len, tool_now_ns() + c->tmo_ns);
}

static int recv_all(struct perf_ctx *c, void *buf, size_t len)
{
	return tool_recv_all(c->fd, buf, len, tool_now_ns() + c->tmo_ns);
}

int perf_msg_send(struct perf_ctx *c, const struct perf_msg *m)
{
	struct perf_msg w = *m;
	int err;

	w.type = htobe32(m->type);
	w.status = htobe32(m->status);
	w.size = htobe32(m->size);
	w.crc = htobe32(m->crc);
	w.count = htobe64(m->count);
	w.cpu_milli = htobe64(m->cpu_milli);
	w.reason[sizeof(w.reason) - 1] = 0;
	err = send_all(c, &w, sizeof(w));
	if (err)
		fprintf(stderr, "control channel: send: %s\n", strerror(-err));
	return err ? -1 : 0;
}

int perf_msg_recv(struct perf_ctx *c, uint32_t want, struct perf_msg *m)
{
	int err = recv_all(c, m, sizeof(*m));

	if (err) {
		fprintf(stderr, "control channel: %s\n", err == -ECONNRESET ?
			"the peer closed the connection" : err == -ETIMEDOUT ?
			"no message from the peer within --timeout" : strerror(-err));
		return -1;
	}
	m->type = be32toh(m->type);
	m->status = be32toh(m->status);
	m->size = be32toh(m->size);
	m->crc = be32toh(m->crc);
	m->count = be64toh(m->count);
	m->cpu_milli = be64toh(m->cpu_milli);
	m->reason[sizeof(m->reason) - 1] = 0;
	if (want && m->type != want) {
		fprintf(stderr, "control channel: message %u, expected %u\n", m->type, want);
		return -1;
	}
	return 0;
}

int perf_msg_end(struct perf_ctx *c, struct perf_msg *m, double *cpu_server)
{
	if (perf_msg_send(c, m) || perf_msg_wait(c, PM_VERDICT, m))
		return -1;
	*cpu_server = (double)m->cpu_milli / 1000;
	if (m->status) {
		fprintf(stderr, "the server's check failed: %s\n", m->reason);
		return -1;
	}
	return 0;
}

void perf_idle(struct perf_ctx *c)
{
	/* the channel fd is an epoll set of the AF_XDP socket and the transport timers */
	struct pollfd p = { .fd = c->chan ? blue_comp_channel_fd(c->chan) : -1,
			    .events = POLLIN };

	if (c->chan)
		poll(&p, 1, 1);
}

bool perf_msg_pending(struct perf_ctx *c)
{
	struct pollfd p = { .fd = c->fd, .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

static int params_send(struct perf_ctx *c)
{
	const struct perf_opts *o = c->o;
	struct params_wire w = {
		.magic = htobe32(PARAMS_MAGIC), .test = htobe32(o->test),
		.size = htobe32(o->size), .all_sizes = htobe32(o->all_sizes),
		.iters = htobe32(o->iters), .duration = htobe32(o->duration),
		.nqps = htobe32(o->nqps), .tx_depth = htobe32(o->tx_depth),
		.post_list = htobe32(o->post_list), .inline_size = htobe32(o->inline_size),
		.mtu = htobe32(o->mtu), .cas = htobe32(o->cas),
	};
	int err = send_all(c, &w, sizeof(w));

	if (err)
		fprintf(stderr, "sending the parameters: %s\n", strerror(-err));
	return err ? -1 : 0;
}

/* The server takes the client's options; a client of another test is refused. */
static int params_recv(struct perf_ctx *c, struct perf_msg *verdict)
{
	struct perf_opts *o = c->o;
	struct params_wire w;
	int err = recv_all(c, &w, sizeof(w));

	if (err) {
		fprintf(stderr, "no parameters from the client: %s\n", strerror(-err));
		return -1;
	}
	if (be32toh(w.magic) != PARAMS_MAGIC || be32toh(w.test) >= PT__MAX ||
	    be32toh(w.nqps) < 1 || be32toh(w.nqps) > PERF_MAX_QPS ||
	    be32toh(w.size) > PERF_MAX_SIZE || be32toh(w.tx_depth) < 1 ||
	    be32toh(w.tx_depth) > 8192 || be32toh(w.inline_size) > 512 ||
	    be32toh(w.mtu) > BLUE_MTU_4096) {
		fprintf(stderr, "the client's parameters are not a blue perf client's\n");
		return -1;
	}
	if (be32toh(w.test) != o->test) {
		snprintf(verdict->reason, sizeof(verdict->reason),
			 "this server runs %s, the client asked for %s", c->t->name,
			 perf_tests[be32toh(w.test)].name);
		verdict->status = EPROTO;
		return 0;
	}
	o->size = be32toh(w.size);
	o->all_sizes = be32toh(w.all_sizes);
	o->iters = be32toh(w.iters);
	o->duration = be32toh(w.duration);
	o->nqps = be32toh(w.nqps);
	o->tx_depth = be32toh(w.tx_depth);
	o->post_list = be32toh(w.post_list);
	o->inline_size = be32toh(w.inline_size);
	o->mtu = (enum blue_mtu)be32toh(w.mtu);
	o->cas = be32toh(w.cas);
	return 0;
}

/* Path MTU the port cannot carry: say so in words both sides can act on. */
static int check_mtu(struct perf_ctx *c, char *why, size_t len)
{
	struct blue_port_attr pa;

	if (blue_query_port(c->ctx, 1, &pa)) {
		snprintf(why, len, "cannot query port 1 of %s", c->o->ifname);
		return -1;
	}
	if (c->o->mtu && c->o->mtu > pa.active_mtu) {
		snprintf(why, len, "path MTU %d is more than %s can carry (active MTU %d: raise "
			 "the link MTU, or the frames need multi-buffer XDP)",
			 blue_mtu_bytes(c->o->mtu), c->o->ifname, blue_mtu_bytes(pa.active_mtu));
		return -1;
	}
	return 0;
}

static int create_resources(struct perf_ctx *c)
{
	const struct perf_opts *o = c->o;
	bool rdma_op = c->t->op == BLUE_WR_RDMA_WRITE || c->t->op == BLUE_WR_SEND;
	size_t max = o->all_sizes ? PERF_MAX_SIZE : o->size;
	unsigned int access = BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE |
			      BLUE_ACCESS_REMOTE_READ | BLUE_ACCESS_REMOTE_ATOMIC;
	int cqe;

	c->nqps = o->nqps;
	c->slot = (max + 4095) & ~(size_t)4095;
	/*
	 * Ping-pong tests write into the peer's slot while the peer writes into theirs:
	 * each slot has a receive half (offset 0, the peer's target) and a source half.
	 */
	if (c->t->pingpong) {
		c->half = c->slot;
		c->slot *= 2;
	}
	/* a latency test keeps one WR in flight, but its ACK may trail the peer's reply */
	c->max_send = c->t->lat ? (o->tx_depth > 4 ? o->tx_depth : 4) : o->tx_depth;
	c->max_recv = c->t->recv ? PERF_RX_DEPTH : 1;
	cqe = (int)(c->nqps * (c->max_send + c->max_recv) + 16);
	/* zeroed and faulted in now, not in the timed loop; 2 MiB pages where there are */
	c->mem = blue_buf_alloc(c->slot * c->nqps, &c->mem_flags);
	if (!c->mem) {
		fprintf(stderr, "cannot allocate %zu bytes: %s\n", c->slot * c->nqps,
			strerror(errno));
		return -1;
	}
	c->mr = blue_reg_mr(c->pd, c->mem, c->slot * c->nqps, access);
	if (!c->mr) {
		fprintf(stderr, "cannot register %zu bytes: %s\n", c->slot * c->nqps,
			strerror(errno));
		return -1;
	}
	if (o->events) {
		c->chan = blue_create_comp_channel(c->ctx);
		if (!c->chan) {
			fprintf(stderr, "cannot create a completion channel: %s\n",
				strerror(errno));
			return -1;
		}
	}
	c->cq = blue_create_cq(c->ctx, cqe, NULL, c->chan, 0);
	if (!c->cq) {
		fprintf(stderr, "cannot create a CQ of %d entries: %s\n", cqe, strerror(errno));
		return -1;
	}
	c->q = calloc(c->nqps, sizeof(*c->q));
	if (!c->q)
		return -1;
	for (uint32_t i = 0; i < c->nqps; i++) {
		struct blue_qp_init_attr init = {
			.send_cq = c->cq,
			.recv_cq = c->cq,
			.cap = { .max_send_wr = c->max_send, .max_recv_wr = c->max_recv,
				 .max_send_sge = 1, .max_recv_sge = 1,
				 .max_inline_data = rdma_op ? o->inline_size : 0 },
			.qp_type = BLUE_QPT_RC,
		};

		c->q[i].buf = c->mem + i * c->slot;
		c->q[i].qp = blue_create_qp(c->pd, &init);
		if (!c->q[i].qp) {
			fprintf(stderr, "cannot create QP %u: %s\n", i, strerror(errno));
			return -1;
		}
	}
	return 0;
}

static int connect_qps(struct perf_ctx *c)
{
	const struct perf_opts *o = c->o;
	int tmo = o->timeout_s * 1000, err;
	struct blue_cm_qp_attr qa;

	blue_cm_qp_attr_default(&qa);
	qa.sgid_index = (uint8_t)o->gidx;
	qa.access = BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE | BLUE_ACCESS_REMOTE_READ |
		    BLUE_ACCESS_REMOTE_ATOMIC;
	qa.max_rd_atomic = MAX_RD_ATOMIC;
	qa.max_dest_rd_atomic = MAX_RD_ATOMIC;
	qa.caps = tool_cc_caps(qa.caps, o->cc_given, o->cc_caps);
	for (uint32_t i = 0; i < c->nqps; i++) {
		struct perf_qp *q = &c->q[i];

		err = blue_cm_info_from_qp(c->ctx, q->qp, o->gidx, &q->local);
		if (err) {
			fprintf(stderr, "QP %u: %s\n", i, blue_cm_last_error());
			return -1;
		}
		if (o->mtu)
			q->local.mtu = o->mtu;
		blue_cm_info_set_mr(&q->local, c->mr);
		q->local.caps = qa.caps;	/* what connect_qp assumes we offered */
		q->local.mr.addr = (uintptr_t)q->buf;
		q->local.mr.length = c->slot;
		err = blue_cm_exchange_qp(c->ctx, c->fd, &q->local, &q->remote, tmo);
		if (err) {
			fprintf(stderr, "exchange for QP %u failed: %s\n", i, blue_cm_last_error());
			return -1;
		}
		if (!q->remote.has_mr || q->remote.mr.length < c->slot) {
			fprintf(stderr, "QP %u: the peer's memory is missing or too small\n", i);
			return -1;
		}
		err = blue_cm_connect_qp(c->ctx, q->qp, q->local.psn, &q->remote, &qa);
		if (err) {
			fprintf(stderr, "QP %u: %s\n", i, blue_cm_last_error());
			return -1;
		}
	}
	return 0;
}

int perf_open(struct perf_ctx *c)
{
	struct perf_opts *o = c->o;
	struct perf_msg ok = { .type = PM_PARAMS_OK };
	int lfd, tmo = o->timeout_s * 1000;

	c->fd = -1;
	c->t = &perf_tests[o->test];
	c->server = !o->server;
	c->tmo_ns = (uint64_t)o->timeout_s * 1000000000ull;
	c->ctx = blue_open_device(o->ifname);
	if (!c->ctx) {
		fprintf(stderr, "cannot open blue on %s: %s\n", o->ifname, strerror(errno));
		return -1;
	}
	c->pd = blue_alloc_pd(c->ctx);
	if (!c->pd) {
		fprintf(stderr, "cannot allocate a PD: %s\n", strerror(errno));
		return -1;
	}
	if (!c->server) {
		char why[160];

		if (check_mtu(c, why, sizeof(why))) {
			fprintf(stderr, "%s\n", why);
			return -1;
		}
		c->fd = blue_cm_connect(o->server, o->port, tmo);
		if (c->fd < 0) {
			fprintf(stderr, "cannot reach %s:%u: %s\n", o->server, o->port,
				blue_cm_last_error());
			return -1;
		}
		if (params_send(c) || perf_msg_recv(c, PM_PARAMS_OK, &ok))
			return -1;
		if (ok.status) {
			fprintf(stderr, "the server refused: %s\n", ok.reason);
			return -1;
		}
	} else {
		lfd = blue_cm_listen(NULL, o->port);
		if (lfd < 0) {
			fprintf(stderr, "cannot listen on port %u: %s\n", o->port,
				blue_cm_last_error());
			return -1;
		}
		printf("\n************************************\n"
		       "* Waiting for client to connect... *\n"
		       "************************************\n");
		fflush(stdout);
		c->fd = blue_cm_accept(lfd, tmo);
		close(lfd);
		if (c->fd < 0) {
			fprintf(stderr, "no client within %d s: %s\n", o->timeout_s,
				blue_cm_last_error());
			return -1;
		}
		if (params_recv(c, &ok))
			return -1;
		if (!ok.status && check_mtu(c, ok.reason, sizeof(ok.reason)))
			ok.status = EINVAL;
		if (perf_msg_send(c, &ok))
			return -1;
		if (ok.status) {
			fprintf(stderr, "refused the client: %s\n", ok.reason);
			return -1;
		}
	}
	if (create_resources(c) || connect_qps(c))
		return -1;
	return 0;
}

void perf_close(struct perf_ctx *c)
{
	for (uint32_t i = 0; c->q && i < c->nqps; i++)
		if (c->q[i].qp && blue_destroy_qp(c->q[i].qp))
			fprintf(stderr, "teardown: QP %u would not go away\n", i);
	free(c->q);
	c->q = NULL;
	if (c->cq && blue_destroy_cq(c->cq))
		fprintf(stderr, "teardown: the CQ would not go away\n");
	if (c->chan && blue_destroy_comp_channel(c->chan))
		fprintf(stderr, "teardown: the completion channel would not go away\n");
	if (c->mr && blue_dereg_mr(c->mr))
		fprintf(stderr, "teardown: the MR would not go away\n");
	blue_buf_free(c->mem, c->slot * c->nqps);
	c->mem = NULL;
	if (c->pd && blue_dealloc_pd(c->pd))
		fprintf(stderr, "teardown: the PD would not go away\n");
	if (c->ctx && blue_close_device(c->ctx))
		fprintf(stderr, "teardown: the device would not close\n");
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}
