// SPDX-License-Identifier: MIT
/*
 * The bandwidth loop (write_bw, read_bw, send_bw), as perftest runs it: every QP keeps
 * -t WRs outstanding, posted -l at a time (a shorter chain where only that much of the
 * window is free), and only every CQ-moderation-th WR (and the last) is signaled; an RC
 * send queue completes in order (IBA 10.8.3), so one completion retires every WR before
 * it. The time runs from the first post to the last completion.
 *
 * BW average is bytes over that time. BW peak is the best rate over any stretch of at
 * least a tenth of the WRs, between two completions (perftest takes the best of its
 * per-completion cycle counts; a tenth keeps one lucky interval from being "peak").
 *
 * So that a broken transport cannot report a figure, the data is checked once at the
 * end: the CRC-32 of every QP's source, chained in QP order, must equal the same over the
 * destination (the server's memory for WRITE and SEND, the client's for READ). Each
 * round's source is a new pattern and each destination is zeroed first.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tools/perf/perf.h"

#define POLL_BATCH	32
#define QI_SHIFT	40

struct bwq {
	uint64_t posted, done, target;
};

struct sample {
	uint64_t t, done;
};

static uint64_t key_of(uint32_t size, uint32_t qi)
{
	return ((uint64_t)size << 16) | qi;
}

static uint32_t crc_slices(const struct perf_ctx *c, uint32_t size)
{
	uint32_t crc = 0;

	for (uint32_t i = 0; i < c->nqps; i++)
		crc = perf_crc(crc, c->q[i].buf, size);
	return crc;
}

static enum blue_wc_opcode wc_op(enum blue_wr_opcode op)
{
	return op == BLUE_WR_RDMA_READ ? BLUE_WC_RDMA_READ :
	       op == BLUE_WR_SEND ? BLUE_WC_SEND : BLUE_WC_RDMA_WRITE;
}

/* Post up to -l WRs on QP @qi. Return WRs posted, or -1. */
static int post_chain(struct perf_ctx *c, uint32_t qi, struct bwq *b, uint32_t size,
		      uint32_t cq_mod, struct blue_send_wr *wr, struct blue_sge *sge)
{
	const struct perf_opts *o = c->o;
	struct perf_qp *q = &c->q[qi];
	uint64_t n = b->target - b->posted;
	struct blue_send_wr *bad;
	unsigned int flags = 0;
	int err;

	if (n > o->post_list)
		n = o->post_list;
	/* a short chain fills the window: the signaled WR may be its last slot */
	if (n > o->tx_depth - (b->posted - b->done))
		n = o->tx_depth - (b->posted - b->done);
	if (c->t->op != BLUE_WR_RDMA_READ && size <= o->inline_size)
		flags |= BLUE_SEND_INLINE;
	for (uint64_t k = 0; k < n; k++) {
		uint64_t idx = b->posted + k;

		sge[k] = (struct blue_sge){ .addr = (uintptr_t)q->buf, .length = size,
					    .lkey = c->mr->lkey };
		wr[k] = (struct blue_send_wr){
			.wr_id = ((uint64_t)qi << QI_SHIFT) | idx,
			.next = k + 1 < n ? &wr[k + 1] : NULL,
			.sg_list = &sge[k],
			.num_sge = 1,
			.opcode = c->t->op,
			.send_flags = flags | ((idx + 1) % cq_mod == 0 || idx + 1 == b->target ?
					       BLUE_SEND_SIGNALED : 0),
		};
		wr[k].wr.rdma.remote_addr = q->remote.mr.addr;
		wr[k].wr.rdma.rkey = q->remote.mr.rkey;
	}
	err = blue_post_send(q->qp, wr, &bad);
	if (err) {
		fprintf(stderr, "post_send on QP %u: %s\n", qi, strerror(err));
		return -1;
	}
	b->posted += n;
	return (int)n;
}

static double peak_rate(const struct sample *s, size_t n, uint64_t total)
{
	uint64_t w = total / 10 ? total / 10 : 1;
	double best = 0;
	size_t i = 0;

	for (size_t j = 1; j < n; j++) {
		while (i + 1 < j && s[j].done - s[i + 1].done >= w)
			i++;
		if (s[j].done - s[i].done >= w && s[j].t > s[i].t) {
			double r = (double)(s[j].done - s[i].done) * 1e9 / (double)(s[j].t - s[i].t);

			if (r > best)
				best = r;
		}
	}
	return best;
}

int perf_bw_client(struct perf_ctx *c, uint32_t size, struct perf_bw_result *res)
{
	const struct perf_opts *o = c->o;
	uint32_t cq_mod = perf_cq_mod(o);
	struct perf_flowlog fl = { 0 };
	struct perf_msg m = { .type = PM_START, .size = size,
			      .count = o->duration ? 0 : o->iters };
	struct blue_send_wr *wr = calloc(o->post_list, sizeof(*wr));
	struct blue_sge *sge = calloc(o->post_list, sizeof(*sge));
	struct bwq *b = calloc(c->nqps, sizeof(*b));
	struct blue_wc wc[POLL_BATCH];
	struct sample *s = NULL;
	size_t ns = 0, cap = 1024;
	uint64_t t0, now = 0, last, stop, total = 0;
	double cpu0;
	bool stopped = false;
	unsigned int spins = 0;
	uint32_t crc = 0;
	int rc = -1, n;

	s = malloc(cap * sizeof(*s));
	if (!wr || !sge || !b || !s)
		goto out;
	for (uint32_t i = 0; i < c->nqps; i++) {
		if (c->t->op == BLUE_WR_RDMA_READ)
			memset(c->q[i].buf, 0, size);	/* the READs must bring it back */
		else
			perf_fill(c->q[i].buf, size, key_of(size, i));
		b[i].target = o->duration ? UINT64_MAX : o->iters;
	}
	if (c->t->op != BLUE_WR_RDMA_READ)
		crc = crc_slices(c, size);
	if (o->inject && c->t->op != BLUE_WR_RDMA_READ)
		c->q[0].buf[size / 2] ^= 0x5a;	/* what goes out is not what was announced */
	if (perf_msg_send(c, &m) || perf_msg_wait(c, PM_READY, &m))
		goto out;
	cpu0 = tool_cpu_s();
	t0 = last = now = tool_now_ns();
	stop = t0 + (uint64_t)o->duration * 1000000000ull;
	s[ns++] = (struct sample){ t0, 0 };
	if (perf_flowlog_open(&fl, c, t0))
		goto out;
	for (;;) {
		bool busy = false;

		for (uint32_t i = 0; i < c->nqps; i++) {
			while (b[i].posted < b[i].target &&
			       b[i].posted - b[i].done < o->tx_depth)
				if (post_chain(c, i, &b[i], size, cq_mod, wr, sge) < 0)
					goto out;
			busy |= b[i].done < b[i].target;
		}
		if (!busy)
			break;
		n = perf_poll(c, wc, POLL_BATCH);
		if (n < 0)
			goto out;
		if (!n)
			perf_idle(c);
		for (int k = 0; k < n; k++) {
			uint32_t qi = (uint32_t)(wc[k].wr_id >> QI_SHIFT);
			uint64_t idx = wc[k].wr_id & ((1ull << QI_SHIFT) - 1);

			if (qi >= c->nqps || wc[k].opcode != wc_op(c->t->op) || idx < b[qi].done) {
				fprintf(stderr, "unexpected completion: wr_id 0x%" PRIx64 " opcode %d\n",
					wc[k].wr_id, wc[k].opcode);
				goto out;
			}
			total += idx + 1 - b[qi].done;
			perf_flowlog_add(&fl, qi, (idx + 1 - b[qi].done) * size);
			b[qi].done = idx + 1;
		}
		if (n > 0 || !(++spins & 255)) {
			now = tool_now_ns();
			perf_flowlog_tick(&fl, now);
		}
		if (n > 0) {
			last = now;
			if (ns == cap) {
				struct sample *p = realloc(s, 2 * cap * sizeof(*s));

				if (!p)
					goto out;
				s = p;
				cap *= 2;
			}
			s[ns++] = (struct sample){ now, total };
		} else if (now - last > c->tmo_ns) {
			fprintf(stderr, "no completion for %d s: %" PRIu64 " of the WRs done\n",
				o->timeout_s, total);
			goto out;
		}
		/* -D: finish at the next signaled WR of each QP, so nothing is left behind */
		if (o->duration && !stopped && now >= stop) {
			stopped = true;
			for (uint32_t i = 0; i < c->nqps; i++)
				b[i].target = (b[i].posted + cq_mod - 1) / cq_mod * cq_mod;
		}
	}
	if (perf_flowlog_close(&fl, last))
		goto out;
	res->size = size;
	res->iters = total / c->nqps;	/* per QP, as perftest prints -n */
	res->bw_avg = (double)total * size * 1e9 / (double)(last - t0);
	res->msg_rate = (double)total * 1e9 / (double)(last - t0);
	res->bw_peak = peak_rate(s, ns, total) * size;
	if (res->bw_peak < res->bw_avg)	/* a single stretch: the average is the peak */
		res->bw_peak = res->bw_avg;
	res->cpu_client = tool_cpu_cores(cpu0, t0);
	m = (struct perf_msg){ .type = PM_END, .size = size, .count = total, .crc = crc };
	if (perf_msg_end(c, &m, &res->cpu_server))
		goto out;
	if (o->inject && c->t->op == BLUE_WR_RDMA_READ)
		c->q[0].buf[size / 2] ^= 0x5a;	/* as if a byte had arrived wrong */
	if (c->t->op == BLUE_WR_RDMA_READ && crc_slices(c, size) != m.crc) {
		fprintf(stderr, "READ data check failed: CRC-32 0x%08x of what arrived, the "
			"server's memory has 0x%08x\n", crc_slices(c, size), m.crc);
		goto out;
	}
	rc = 0;
out:
	perf_flowlog_close(&fl, now);
	free(s);
	free(b);
	free(sge);
	free(wr);
	return rc;
}

/* Keep every QP's receive queue full (send tests): receives outlive a round. */
static int top_up_recv(struct perf_ctx *c)
{
	for (uint32_t i = 0; i < c->nqps; i++)
		while (c->q[i].rx_out < c->max_recv)
			if (perf_post_recv(c, i, (uint32_t)c->slot))
				return -1;
	return 0;
}

int perf_bw_server(struct perf_ctx *c, const struct perf_msg *start)
{
	uint32_t size = start->size, crc = 0, got;
	struct perf_msg m = { .type = PM_READY }, end = { 0 };
	struct blue_wc wc[POLL_BATCH];
	uint64_t t0, now, last, rx = 0;
	unsigned int spins = 0;
	bool ended = false;
	double cpu0;
	int n;

	for (uint32_t i = 0; i < c->nqps; i++) {
		if (c->t->op == BLUE_WR_RDMA_READ)
			perf_fill(c->q[i].buf, size, key_of(size, i) ^ 0x5a5a);
		else
			memset(c->q[i].buf, 0, size);
	}
	if (c->t->recv && top_up_recv(c))
		return -1;
	if (c->t->op == BLUE_WR_RDMA_READ)
		crc = crc_slices(c, size);
	m.crc = crc;
	if (perf_msg_send(c, &m))
		return -1;
	cpu0 = tool_cpu_s();
	t0 = last = now = tool_now_ns();
	/* The responder runs only while we poll: poll until END, and all receives are in. */
	while (!ended || (c->t->recv && rx < end.count)) {
		n = perf_poll(c, wc, POLL_BATCH);
		if (n < 0)
			return -1;
		if (!n)
			perf_idle(c);
		for (int k = 0; k < n; k++) {
			/* perf_post_recv's wr_id: bit 63, and the QP index from bit 40 */
			uint32_t qi = (uint32_t)(wc[k].wr_id >> QI_SHIFT) & 0xffff;

			if (!(wc[k].opcode & BLUE_WC_RECV) || qi >= c->nqps ||
			    wc[k].byte_len != size) {
				fprintf(stderr, "unexpected completion: opcode %d, %u bytes (a "
					"round of %u)\n", wc[k].opcode, wc[k].byte_len, size);
				return -1;
			}
			c->q[qi].rx_out--;
			rx++;
		}
		if (n > 0 && top_up_recv(c))
			return -1;
		spins++;
		if (n > 0 || !(spins & 63)) {
			now = tool_now_ns();
			if (n > 0)
				last = now;
		}
		if (!ended && !(spins & 63) && perf_msg_pending(c)) {
			if (perf_msg_recv(c, PM_END, &end))
				return -1;
			ended = true;
			last = now;
		}
		if (c->t->recv || ended ? now - last > c->tmo_ns :
		    now - t0 > perf_blind_bound_ns(c)) {
			fprintf(stderr, "stalled for %d s: %s\n", c->o->timeout_s, ended ?
				"receives missing" : "no END from the client");
			return -1;
		}
	}
	m = (struct perf_msg){ .type = PM_VERDICT, .size = size, .crc = crc,
			       .cpu_milli = (uint64_t)(tool_cpu_cores(cpu0, t0) * 1000) };
	/* one pass over the memory: written by the client, or the READ source unchanged */
	got = crc_slices(c, size);
	if (c->t->recv && rx != end.count) {
		m.status = EIO;
		snprintf(m.reason, sizeof(m.reason), "%" PRIu64 " messages received, the client "
			 "sent %" PRIu64, rx, end.count);
	} else if (c->t->op != BLUE_WR_RDMA_READ && got != end.crc) {
		m.status = EIO;
		snprintf(m.reason, sizeof(m.reason), "CRC-32 0x%08x of the memory written, the "
			 "client sent 0x%08x", got, end.crc);
	} else if (c->t->op == BLUE_WR_RDMA_READ && got != crc) {
		m.status = EIO;
		snprintf(m.reason, sizeof(m.reason), "a READ source changed");
	}
	if (m.status)
		fprintf(stderr, "data check failed: %s\n", m.reason);
	else
		printf(" server: %u B x %" PRIu64 ": data verified (CRC-32 0x%08x)\n", size,
		       end.count, got);
	return perf_msg_send(c, &m) || m.status ? -1 : 0;
}
