// SPDX-License-Identifier: MIT
/* Two-player helpers for the RC transport tests (see rc_fixture.h). */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <string.h>

#include "runtime/codec.h"
#include "runtime/cq.h"
#include "runtime/device.h"
#include "runtime/progress.h"
#include "tests/unit/rc_fixture.h"

void rc_opts_default(struct rc_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->sq_psn_a = 0x100;
	o->sq_psn_b = 0x200;
	/* 4.096 us * 2^12 = 17 ms: ample for a pass on a loaded machine, so no test sees a
	 * spurious retransmission, and short enough for the tests that wait for one */
	o->timeout = 12;
	o->retry_cnt = 7;
	o->rnr_retry = 7;
	o->min_rnr_timer = 1;	/* 10 us */
	o->access = BLUE_ACCESS_LOCAL_WRITE | BLUE_ACCESS_REMOTE_WRITE |
		    BLUE_ACCESS_REMOTE_READ | BLUE_ACCESS_REMOTE_ATOMIC;
	o->max_send_wr = 64;
	o->max_recv_wr = 64;
	o->max_sge = 4;
	o->max_inline = 256;
	o->mtu = BLUE_MTU_1024;
	o->cqe = 256;
}

/* @s's PD and CQs on its context. */
static void side_objects(struct rc_side *s, const struct rc_opts *o)
{
	s->pd = blue_alloc_pd(s->ctx);
	cr_assert_not_null(s->pd);
	s->scq = blue_create_cq(s->ctx, o->cqe, NULL, NULL, 0);
	s->rcq = blue_create_cq(s->ctx, o->cqe, NULL, NULL, 0);
	cr_assert(s->scq && s->rcq);
}

static void side_open(struct rc_side *s, struct blue_hal *hal, uint8_t last,
		      const struct rc_opts *o)
{
	const uint8_t mac[6] = { 0x02, 0xb1, 0x0e, 0, 0, last };

	s->hal = hal;
	memcpy(s->mac, mac, 6);
	s->ip = htonl(0x0ac90000u | last);	/* 10.201.0.x: never leaves the process */
	s->ctx = blue_open_device_hal(hal, s->mac, s->ip);
	cr_assert_not_null(s->ctx, "open_device_hal");
	side_objects(s, o);
}

void rc_fx_init_self_noqp(struct rc_fx *fx, const struct rc_opts *o)
{
	memset(fx, 0, sizeof(*fx));
	if (o)
		fx->o = *o;
	else
		rc_opts_default(&fx->o);
	fx->self = true;
	cr_assert_eq(blue_hal_loopback_pair(&fx->a.hal, &fx->b.hal), 0, "loopback pair");
	side_open(&fx->a, fx->a.hal, 1, &fx->o);
	fx->b.ctx = fx->a.ctx;
	memcpy(fx->b.mac, fx->a.mac, 6);
	fx->b.ip = fx->a.ip;
	side_objects(&fx->b, &fx->o);
}

void rc_fx_init_self(struct rc_fx *fx, const struct rc_opts *o)
{
	rc_fx_init_self_noqp(fx, o);
	rc_qp_create(fx, &fx->a);
	rc_qp_create(fx, &fx->b);
	rc_qp_connect(fx, &fx->a, &fx->b, fx->o.sq_psn_a, fx->o.sq_psn_b);
	rc_qp_connect(fx, &fx->b, &fx->a, fx->o.sq_psn_b, fx->o.sq_psn_a);
}

void rc_fx_init_noqp(struct rc_fx *fx, const struct rc_opts *o)
{
	struct blue_hal *ha, *hb;

	memset(fx, 0, sizeof(*fx));
	if (o)
		fx->o = *o;
	else
		rc_opts_default(&fx->o);
	cr_assert_eq(blue_hal_loopback_pair(&ha, &hb), 0, "loopback pair");
	side_open(&fx->a, ha, 1, &fx->o);
	side_open(&fx->b, hb, 2, &fx->o);
	cr_assert_eq(blue__set_neigh(fx->a.ctx, fx->b.ip, fx->b.mac), 0);
	cr_assert_eq(blue__set_neigh(fx->b.ctx, fx->a.ip, fx->a.mac), 0);
}

struct blue_qp *rc_qp_create(struct rc_fx *fx, struct rc_side *s)
{
	struct blue_qp_init_attr ia = {
		.send_cq = s->scq,
		.recv_cq = s->rcq,
		.cap = {
			.max_send_wr = fx->o.max_send_wr,
			.max_recv_wr = fx->o.max_recv_wr,
			.max_send_sge = fx->o.max_sge,
			.max_recv_sge = fx->o.max_sge,
			.max_inline_data = fx->o.max_inline,
		},
		.qp_type = BLUE_QPT_RC,
		.sq_sig_all = fx->o.sq_sig_all,
	};

	s->qp = blue_create_qp(s->pd, &ia);
	cr_assert_not_null(s->qp, "create_qp");
	return s->qp;
}

void rc_qp_connect(struct rc_fx *fx, struct rc_side *s, struct rc_side *peer, uint32_t sq_psn,
		   uint32_t rq_psn)
{
	rc_qp_connect_qpn(fx, s, peer, blue_qp_num(peer->qp), sq_psn, rq_psn);
}

void rc_qp_connect_qpn(struct rc_fx *fx, struct rc_side *s, struct rc_side *peer,
		       uint32_t dqpn, uint32_t sq_psn, uint32_t rq_psn)
{
	struct blue_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = BLUE_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	a.qp_access_flags = fx->o.access;
	cr_assert_eq(blue_modify_qp(s->qp, &a, BLUE_QP_STATE | BLUE_QP_PKEY_INDEX |
				    BLUE_QP_PORT | BLUE_QP_ACCESS_FLAGS), 0, "to INIT");

	memset(&a, 0, sizeof(a));
	a.qp_state = BLUE_QPS_RTR;
	a.path_mtu = fx->o.mtu;
	a.dest_qp_num = dqpn;
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = fx->o.min_rnr_timer;
	a.ah_attr.sgid_index = fx->o.sgid_index ? fx->o.sgid_index : 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.hop_limit = fx->o.hop_limit;
	/* the peer's GID at the same index: both sides lay their tables out alike */
	cr_assert_eq(blue_query_gid(peer->ctx, 1, a.ah_attr.sgid_index, &a.ah_attr.dgid), 0);
	cr_assert_eq(blue_modify_qp(s->qp, &a, BLUE_QP_STATE | BLUE_QP_AV | BLUE_QP_PATH_MTU |
				    BLUE_QP_DEST_QPN | BLUE_QP_RQ_PSN |
				    BLUE_QP_MAX_DEST_RD_ATOMIC | BLUE_QP_MIN_RNR_TIMER),
		     0, "to RTR");

	memset(&a, 0, sizeof(a));
	a.qp_state = BLUE_QPS_RTS;
	a.sq_psn = sq_psn;
	a.timeout = fx->o.timeout;
	a.retry_cnt = fx->o.retry_cnt;
	a.rnr_retry = fx->o.rnr_retry;
	a.max_rd_atomic = 4;
	cr_assert_eq(blue_modify_qp(s->qp, &a, BLUE_QP_STATE | BLUE_QP_SQ_PSN | BLUE_QP_TIMEOUT |
				    BLUE_QP_RETRY_CNT | BLUE_QP_RNR_RETRY |
				    BLUE_QP_MAX_QP_RD_ATOMIC), 0, "to RTS");
}

void rc_fx_init(struct rc_fx *fx, const struct rc_opts *o)
{
	rc_fx_init_noqp(fx, o);
	rc_qp_create(fx, &fx->a);
	rc_qp_create(fx, &fx->b);
	rc_qp_connect(fx, &fx->a, &fx->b, fx->o.sq_psn_a, fx->o.sq_psn_b);
	rc_qp_connect(fx, &fx->b, &fx->a, fx->o.sq_psn_b, fx->o.sq_psn_a);
}

static void side_objects_close(struct rc_side *s)
{
	if (s->qp)
		cr_assert_eq(blue_destroy_qp(s->qp), 0);
	cr_assert_eq(blue_destroy_cq(s->scq), 0);
	cr_assert_eq(blue_destroy_cq(s->rcq), 0);
	cr_assert_eq(blue_dealloc_pd(s->pd), 0);
}

static void side_close(struct rc_side *s)
{
	side_objects_close(s);
	cr_assert_eq(blue_close_device(s->ctx), 0);
	blue_hal_destroy(s->hal);
}

void rc_fx_fini(struct rc_fx *fx)
{
	blue_hal_loopback_set_filter(fx->a.hal, NULL, NULL);
	blue_hal_loopback_set_filter(fx->b.hal, NULL, NULL);
	if (fx->self) {
		/* b's objects first: the context (a's) closes with a */
		side_objects_close(&fx->b);
		blue_hal_destroy(fx->b.hal);
		side_close(&fx->a);
		return;
	}
	side_close(&fx->a);
	side_close(&fx->b);
}

void rc_progress(struct rc_fx *fx)
{
	blue__progress(fx->a.ctx);
	if (!fx->self)
		blue__progress(fx->b.ctx);
}

int rc_poll(struct rc_fx *fx, struct blue_cq *cq, struct blue_wc *wc, int n, int timeout_ms)
{
	uint64_t end = blue__now_ns() + (uint64_t)timeout_ms * 1000000ull;
	struct blue_context *other = cq->ctx == fx->a.ctx ? fx->b.ctx : fx->a.ctx;
	int got = 0, r;

	while (got < n) {
		r = blue_poll_cq(cq, n - got, wc + got);
		cr_assert_geq(r, 0, "poll_cq failed: %d", r);
		got += r;
		if (got == n)
			break;
		blue__progress(other);
		if (blue__now_ns() > end)
			break;
	}
	return got;
}

struct blue_wc rc_wait1(struct rc_fx *fx, struct blue_cq *cq, int timeout_ms)
{
	struct blue_wc wc;

	memset(&wc, 0, sizeof(wc));
	cr_assert_eq(rc_poll(fx, cq, &wc, 1, timeout_ms), 1, "no completion within %d ms",
		     timeout_ms);
	return wc;
}

void rc_quiet(struct rc_fx *fx, struct blue_cq *cq, int ms)
{
	struct blue_wc wc;

	cr_assert_eq(rc_poll(fx, cq, &wc, 1, ms), 0,
		     "unexpected completion: wr_id %llu status %s",
		     (unsigned long long)wc.wr_id, blue_wc_status_str(wc.status));
}

void rc_post_recv(struct rc_side *s, uint64_t wr_id, void *buf, uint32_t len, uint32_t lkey)
{
	struct blue_sge sge = { .addr = (uintptr_t)buf, .length = len, .lkey = lkey };
	struct blue_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };
	struct blue_recv_wr *bad;

	cr_assert_eq(blue_post_recv(s->qp, &wr, &bad), 0, "post_recv");
}

void rc_post_send(struct rc_side *s, struct blue_send_wr *wr)
{
	struct blue_send_wr *bad;

	cr_assert_eq(blue_post_send(s->qp, wr, &bad), 0, "post_send");
}

void rc_fill(void *buf, size_t len, unsigned int seed)
{
	uint8_t *b = buf;
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		b[i] = (uint8_t)(x >> 16);
	}
}

bool rc_check(const void *buf, size_t len, unsigned int seed)
{
	const uint8_t *b = buf;
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		if (b[i] != (uint8_t)(x >> 16))
			return false;
	}
	return true;
}

static enum blue_lb_verdict drop_filter(void *arg, const struct blue_frame *f, uint64_t seq)
{
	struct rc_drop *d = arg;
	struct blue_pkt p;

	(void)seq;
	d->seen++;
	if (d->max_drops >= 0 && d->dropped >= d->max_drops)
		return BLUE_LB_PASS;
	if (blue_pkt_parse(f->data, f->len, &p))
		return BLUE_LB_PASS;
	if (d->opcode >= 0 && p.opcode != d->opcode)
		return BLUE_LB_PASS;
	if (d->psn >= 0 && p.psn != (uint32_t)d->psn)
		return BLUE_LB_PASS;
	d->dropped++;
	return BLUE_LB_DROP;
}

void rc_drop_install(struct blue_hal *hal, struct rc_drop *d)
{
	d->dropped = 0;
	d->seen = 0;
	blue_hal_loopback_set_filter(hal, drop_filter, d);
}

void rc_mem_init(struct rc_mem *m, struct rc_side *from, struct rc_side *to, uint32_t len,
		 unsigned int seed, unsigned int access)
{
	m->len = len;
	m->src = malloc(len);
	m->dst = calloc(1, len);
	cr_assert(m->src && m->dst);
	rc_fill(m->src, len, seed);
	m->smr = blue_reg_mr(from->pd, m->src, len, access);
	m->dmr = blue_reg_mr(to->pd, m->dst, len, access);
	cr_assert(m->smr && m->dmr);
}

void rc_mem_fini(struct rc_mem *m)
{
	cr_assert_eq(blue_dereg_mr(m->smr), 0);
	cr_assert_eq(blue_dereg_mr(m->dmr), 0);
	free(m->src);
	free(m->dst);
}
