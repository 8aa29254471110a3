// SPDX-License-Identifier: MIT
/*
 * The latency loops, one WR in flight, completions busy-polled (blue_poll_cq is also
 * what drives the transport, so a side that waits must keep polling).
 *
 *  - write_lat, send_lat: perftest's ping-pong. The client WRITEs (SENDs) a message, the
 *    server answers with one of its own as soon as it has seen it arrive (WRITE: the last
 *    byte of its receive half changes to this iteration's mark; SEND: a receive
 *    completes), and the client waits for that answer. Reported: round trip / 2, per
 *    iteration, as perftest's write_lat and send_lat report it.
 *  - read_lat, atomic_lat: post one READ (one FETCH_AND_ADD, or CMP_AND_SWAP with -A)
 *    and wait for its completion. Reported: the full round trip, as perftest does.
 *
 * Checks: ping-pong messages are a fresh pattern per round and the CRC-32 of the last
 * one each side received is compared with what the other side sent; a READ's data is
 * compared with the server's memory; every atomic's returned value must be the one that
 * exactly-once execution in order gives, and the server's final value must be the count.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tools/perf/perf.h"

#define POLL_BATCH	16

struct lat_state {
	uint32_t size;
	uint32_t sends_out;	/* send WRs not yet completed */
	uint64_t recvs;		/* receives completed */
	uint64_t acked;		/* READ/atomic WRs completed */
};

static uint8_t mark(uint64_t i)
{
	return (uint8_t)(i + 1);	/* never the 0 the receive half starts with */
}

static bool is_atomic(const struct perf_ctx *c)
{
	return c->t->op >= BLUE_WR_ATOMIC_CMP_AND_SWP;
}

static enum blue_wr_opcode opcode(const struct perf_ctx *c)
{
	return is_atomic(c) ? (c->o->cas ? BLUE_WR_ATOMIC_CMP_AND_SWP :
			       BLUE_WR_ATOMIC_FETCH_AND_ADD) : c->t->op;
}

static int lat_poll(struct perf_ctx *c, struct lat_state *st)
{
	struct blue_wc wc[POLL_BATCH];
	int n = perf_poll(c, wc, POLL_BATCH);

	for (int k = 0; k < n; k++) {
		if (wc[k].opcode & BLUE_WC_RECV) {
			if (wc[k].byte_len != st->size) {
				fprintf(stderr, "a receive of %u bytes in a round of %u\n",
					wc[k].byte_len, st->size);
				return -1;
			}
			c->q[0].rx_out--;
			st->recvs++;
			if (perf_post_recv(c, 0, (uint32_t)c->half))
				return -1;
		} else {
			st->sends_out--;
			if (wc[k].opcode != BLUE_WC_RDMA_WRITE && wc[k].opcode != BLUE_WC_SEND)
				st->acked++;
		}
	}
	return n;
}

/* Post one WR of this test for iteration @i. Return 0 or -1. */
static int lat_post(struct perf_ctx *c, struct lat_state *st, uint64_t i)
{
	struct perf_qp *q = &c->q[0];
	uint8_t *src = c->t->pingpong ? q->buf + c->half : q->buf;
	struct blue_sge sge = { .addr = (uintptr_t)src, .length = st->size,
				.lkey = c->mr->lkey };
	struct blue_send_wr wr = {
		.wr_id = i, .sg_list = &sge, .num_sge = 1, .opcode = opcode(c),
		.send_flags = BLUE_SEND_SIGNALED,
	}, *bad;
	int err;

	if (c->t->pingpong) {
		src[st->size - 1] = mark(i);
		if (st->size <= c->o->inline_size)
			wr.send_flags |= BLUE_SEND_INLINE;
	}
	if (is_atomic(c)) {
		wr.wr.atomic.remote_addr = q->remote.mr.addr;
		wr.wr.atomic.rkey = q->remote.mr.rkey;
		wr.wr.atomic.compare_add = c->o->cas ? i : 1;
		wr.wr.atomic.swap = i + 1;
	} else {
		wr.wr.rdma.remote_addr = q->remote.mr.addr;
		wr.wr.rdma.rkey = q->remote.mr.rkey;
	}
	err = blue_post_send(q->qp, &wr, &bad);
	if (err) {
		fprintf(stderr, "post_send: %s\n", strerror(err));
		return -1;
	}
	st->sends_out++;
	return 0;
}

/* Whether the answer to iteration @i (or the peer's message @i) is in. */
static bool arrived(const struct perf_ctx *c, const struct lat_state *st, uint64_t i)
{
	if (c->t->op == BLUE_WR_RDMA_WRITE)
		return ((volatile uint8_t *)c->q[0].buf)[st->size - 1] == mark(i);
	if (c->t->op == BLUE_WR_SEND)
		return st->recvs > i;
	return st->acked > i;
}

/* Reap this side's last send completions, so that none is left for the next round. */
static int drain(struct perf_ctx *c, struct lat_state *st)
{
	uint64_t dl = tool_now_ns() + c->tmo_ns;

	while (st->sends_out)
		if (lat_poll(c, st) < 0 || tool_now_ns() > dl) {
			fprintf(stderr, "the last WR did not complete within %d s\n",
				c->o->timeout_s);
			return -1;
		}
	return 0;
}

static void prepare(struct perf_ctx *c, uint32_t size)
{
	uint8_t *buf = c->q[0].buf;

	memset(buf, 0, size);	/* the receive half, the READ destination, the atomic */
	if (c->t->pingpong)
		perf_fill(buf + c->half, size, ((uint64_t)size << 1) | c->server);
}

static int top_up(struct perf_ctx *c)
{
	while (c->t->recv && c->q[0].rx_out < c->max_recv)
		if (perf_post_recv(c, 0, (uint32_t)c->half))
			return -1;
	return 0;
}

int perf_lat_client(struct perf_ctx *c, uint32_t size, struct perf_lat_result *res)
{
	const struct perf_opts *o = c->o;
	struct perf_msg m = { .type = PM_START, .size = size,
			      .count = o->duration ? 0 : o->iters };
	struct lat_state st = { .size = size };
	uint64_t cap = o->duration ? 65536 : o->iters, i, t, now, t0, stop, dl;
	double *lat = malloc(cap * sizeof(*lat)), cpu0;
	uint8_t *buf = c->q[0].buf;
	int rc = -1;

	if (!lat)
		return -1;
	prepare(c, size);
	if (top_up(c) || perf_msg_send(c, &m) || perf_msg_wait(c, PM_READY, &m))
		goto out;
	cpu0 = tool_cpu_s();
	t0 = tool_now_ns();
	stop = t0 + (uint64_t)o->duration * 1000000000ull;
	for (i = 0; o->duration || i < o->iters; i++) {
		now = tool_now_ns();
		if (o->duration && now >= stop)
			break;
		dl = now + c->tmo_ns;
		while (st.sends_out >= c->max_send)	/* an ACK may trail the reply */
			if (lat_poll(c, &st) < 0 || tool_now_ns() > dl)
				goto stalled;
		t = tool_now_ns();
		if (lat_post(c, &st, i))
			goto out;
		for (unsigned int spins = 0; !arrived(c, &st, i); spins++) {
			int n = lat_poll(c, &st);

			if (n < 0)
				goto out;
			if (!n && !arrived(c, &st, i))
				perf_idle(c);
			if (!(spins & 1023) && tool_now_ns() > dl)
				goto stalled;
		}
		now = tool_now_ns();
		if (i == cap) {
			double *p = realloc(lat, 2 * cap * sizeof(*lat));

			if (!p)
				goto out;
			lat = p;
			cap *= 2;
		}
		lat[i] = (double)(now - t) / (c->t->pingpong ? 2 : 1);
		if (is_atomic(c)) {
			uint64_t got;

			memcpy(&got, buf, 8);
			if (got != i) {
				fprintf(stderr, "atomic %" PRIu64 " returned %" PRIu64 ", expected %"
					PRIu64 " (each executed once, in order)\n", i, got, i);
				goto out;
			}
		}
	}
	if (!i) {
		fprintf(stderr, "no iteration completed\n");
		goto out;
	}
	if (drain(c, &st))
		goto out;
	res->size = size;
	res->cpu_client = tool_cpu_cores(cpu0, t0);
	perf_lat_stats(lat, i, res);
	m = (struct perf_msg){ .type = PM_END, .size = size, .count = i,
			       .crc = c->t->pingpong ? perf_crc(0, buf + c->half, size) : 0 };
	if (perf_msg_end(c, &m, &res->cpu_server))
		goto out;
	if ((c->t->pingpong || c->t->op == BLUE_WR_RDMA_READ) && perf_crc(0, buf, size) != m.crc) {
		fprintf(stderr, "data check failed: CRC-32 0x%08x of what arrived, the server "
			"sent 0x%08x\n", perf_crc(0, buf, size), m.crc);
		goto out;
	}
	rc = 0;
	goto out;
stalled:
	fprintf(stderr, "iteration %" PRIu64 ": no answer within %d s\n", i, o->timeout_s);
out:
	free(lat);
	return rc;
}

int perf_lat_server(struct perf_ctx *c, const struct perf_msg *start)
{
	uint32_t size = start->size, crc = 0;
	struct lat_state st = { .size = size };
	struct perf_msg m = { .type = PM_READY }, end = { 0 };
	uint8_t *buf = c->q[0].buf;
	uint64_t i = 0, t0, now, last;
	unsigned int spins = 0;
	bool ended = false;
	double cpu0;

	prepare(c, size);
	if (c->t->op == BLUE_WR_RDMA_READ) {
		perf_fill(buf, size, (uint64_t)size << 1);
		crc = perf_crc(0, buf, size);
	}
	m.crc = crc;
	if (top_up(c) || perf_msg_send(c, &m))
		return -1;
	cpu0 = tool_cpu_s();
	t0 = last = now = tool_now_ns();
	while (!ended) {
		int n = lat_poll(c, &st);

		if (n < 0)
			return -1;
		if (!n && !(c->t->pingpong && arrived(c, &st, i)))
			perf_idle(c);
		/* ping-pong: answer message i once it is in and a send slot is free */
		if (c->t->pingpong && arrived(c, &st, i) && st.sends_out < c->max_send) {
			if (lat_post(c, &st, i))
				return -1;
			i++;
			last = now;
		}
		if (!(++spins & 63)) {
			now = tool_now_ns();
			if (perf_msg_pending(c)) {
				if (perf_msg_recv(c, PM_END, &end))
					return -1;
				ended = true;
			} else if (c->t->pingpong ? now - last > c->tmo_ns :
				   now - t0 > perf_blind_bound_ns(c)) {
				fprintf(stderr, "stalled for %d s after %" PRIu64 " messages\n",
					c->o->timeout_s, i);
				return -1;
			}
		}
	}
	if (drain(c, &st))
		return -1;
	m = (struct perf_msg){ .type = PM_VERDICT, .size = size,
			       .cpu_milli = (uint64_t)(tool_cpu_cores(cpu0, t0) * 1000) };
	if (c->t->pingpong) {
		m.crc = perf_crc(0, buf + c->half, size);
		if (i != end.count)
			snprintf(m.reason, sizeof(m.reason), "answered %" PRIu64 " messages, the "
				 "client sent %" PRIu64, i, end.count);
		else if (perf_crc(0, buf, size) != end.crc)
			snprintf(m.reason, sizeof(m.reason), "CRC-32 0x%08x of the last message, "
				 "the client sent 0x%08x", perf_crc(0, buf, size), end.crc);
	} else if (c->t->op == BLUE_WR_RDMA_READ) {
		m.crc = crc;
		if (perf_crc(0, buf, size) != crc)
			snprintf(m.reason, sizeof(m.reason), "a READ source changed");
	} else {
		uint64_t v;

		memcpy(&v, buf, 8);
		if (v != end.count)
			snprintf(m.reason, sizeof(m.reason), "the atomic target is %" PRIu64
				 " after %" PRIu64 " operations each executed once", v, end.count);
	}
	m.status = m.reason[0] ? EIO : 0;
	if (m.status)
		fprintf(stderr, "data check failed: %s\n", m.reason);
	else
		printf(" server: %u B x %" PRIu64 ": data verified\n", size, end.count);
	return perf_msg_send(c, &m) || m.status ? -1 : 0;
}
