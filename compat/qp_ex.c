// SPDX-License-Identifier: MIT
/*
 * The extended send API on struct ibv_qp_ex (ibv_wr_start, ibv_wr_rdma_write,
 * ibv_wr_set_sge, ..., ibv_wr_complete), which perftest uses by default. The builders
 * collect blue_send_wrs; ibv_wr_complete() posts them as one chain with
 * blue_post_send(). SGE lists and inline bytes are copied when given, as the API
 * allows the program to reuse its arrays right away.
 */
#include <stdlib.h>
#include <string.h>

#include "compat/compat.h"

static struct bv_qp *qx(struct ibv_qp_ex *x) { return (struct bv_qp *)x; }

static void wr_fail(struct bv_qp *q, int err, const char *what)
{
	if (!q->wr_err) {
		bv_log("ibv_wr_*: QP 0x%x: %s", q->qpx.qp_base.qp_num, what);
		q->wr_err = err;
	}
}

static bool grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
	uint32_t n = *cap ? *cap : 16;
	void *np;

	if (need <= *cap)
		return true;
	while (n < need)
		n *= 2;
	np = realloc(*p, (size_t)n * elem);
	if (!np)
		return false;
	*p = np;
	*cap = n;
	return true;
}

/* Open a new WR with the program's wr_id and flags. Return: it, or NULL (error noted). */
static struct bv_wr *wr_new(struct ibv_qp_ex *x, enum blue_wr_opcode op)
{
	struct bv_qp *q = qx(x);
	struct bv_wr *w;

	if (!grow((void **)&q->wrs, &q->cap_wr, q->nwr + 1, sizeof(*q->wrs))) {
		wr_fail(q, ENOMEM, "out of memory for the batch");
		return NULL;
	}
	w = &q->wrs[q->nwr++];
	memset(w, 0, sizeof(*w));
	w->wr.wr_id = x->wr_id;
	w->wr.opcode = op;
	/* inline is said by wr_set_inline_data, not by the flags */
	w->wr.send_flags = x->wr_flags & (IBV_SEND_FENCE | IBV_SEND_SIGNALED |
					  IBV_SEND_SOLICITED);
	if (x->wr_flags & ~(unsigned int)(IBV_SEND_FENCE | IBV_SEND_SIGNALED |
					  IBV_SEND_SOLICITED | IBV_SEND_INLINE))
		wr_fail(q, EINVAL, "wr_flags has bits blue does not know");
	return w;
}

static struct bv_wr *wr_cur(struct ibv_qp_ex *x)
{
	struct bv_qp *q = qx(x);

	if (!q->nwr) {
		wr_fail(q, EINVAL, "a data setter was called before any wr_<opcode>");
		return NULL;
	}
	return &q->wrs[q->nwr - 1];
}

static void bx_start(struct ibv_qp_ex *x)
{
	struct bv_qp *q = qx(x);

	q->nwr = 0;
	q->nsges = 0;
	q->ninl = 0;
	q->wr_err = 0;
}

static int bx_complete(struct ibv_qp_ex *x)
{
	struct bv_qp *q = qx(x);
	struct bv_context *c = bv_ctx(x->qp_base.context);
	struct blue_send_wr *bad;
	uint32_t i;
	int err;

	if (q->wr_err) {
		err = q->wr_err;
		bx_start(x);
		return err;
	}
	if (!q->nwr)
		return 0;
	for (i = 0; i < q->nwr; i++) {
		struct bv_wr *w = &q->wrs[i];

		w->wr.next = i + 1 < q->nwr ? &q->wrs[i + 1].wr : NULL;
		w->wr.sg_list = w->nsge ? &q->sges[w->sge_off] : NULL;
		w->wr.num_sge = (int)w->nsge;
		if (w->inl) {
			/* one SGE over the copied bytes; blue copies inline data at post */
			q->sges[w->sge_off].addr = (uintptr_t)(q->inl + w->inl_off);
			q->sges[w->sge_off].length = w->inl_len;
			q->sges[w->sge_off].lkey = 0;
		}
	}
	bv_lock(c);
	err = blue_post_send(q->bqp, &q->wrs[0].wr, &bad);
	bv_doorbell(c);
	bv_unlock(c);
	bx_start(x);
	return err;
}

/* A new RDMA WRITE/READ work request on @rkey/@raddr (NULL: wr_new failed). */
static struct bv_wr *wr_rdma(struct ibv_qp_ex *x, enum blue_wr_opcode op, uint32_t rkey,
			     uint64_t raddr)
{
	struct bv_wr *w = wr_new(x, op);

	if (w) {
		w->wr.wr.rdma.rkey = rkey;
		w->wr.wr.rdma.remote_addr = raddr;
	}
	return w;
}

static void bx_rdma_write(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr)
{
	(void)wr_rdma(x, BLUE_WR_RDMA_WRITE, rkey, raddr);
}

static void bx_rdma_write_imm(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr, __be32 imm)
{
	struct bv_wr *w = wr_rdma(x, BLUE_WR_RDMA_WRITE_WITH_IMM, rkey, raddr);

	if (w)
		w->wr.imm_data = imm;
}

static void bx_rdma_read(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr)
{
	(void)wr_rdma(x, BLUE_WR_RDMA_READ, rkey, raddr);
}

static void bx_send(struct ibv_qp_ex *x)
{
	(void)wr_new(x, BLUE_WR_SEND);
}

static void bx_send_imm(struct ibv_qp_ex *x, __be32 imm)
{
	struct bv_wr *w = wr_new(x, BLUE_WR_SEND_WITH_IMM);

	if (w)
		w->wr.imm_data = imm;
}

/* An atomic on the 8 bytes at @rkey/@raddr (@swap: 0 for FETCH_AND_ADD, which has none). */
static void wr_atomic(struct ibv_qp_ex *x, enum blue_wr_opcode op, uint32_t rkey,
		      uint64_t raddr, uint64_t compare_add, uint64_t swap)
{
	struct bv_wr *w = wr_new(x, op);

	if (w) {
		w->wr.wr.atomic.rkey = rkey;
		w->wr.wr.atomic.remote_addr = raddr;
		w->wr.wr.atomic.compare_add = compare_add;
		w->wr.wr.atomic.swap = swap;
	}
}

static void bx_cmp_swp(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr, uint64_t compare,
		       uint64_t swap)
{
	wr_atomic(x, BLUE_WR_ATOMIC_CMP_AND_SWP, rkey, raddr, compare, swap);
}

static void bx_fetch_add(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr, uint64_t add)
{
	wr_atomic(x, BLUE_WR_ATOMIC_FETCH_AND_ADD, rkey, raddr, add, 0);
}

static void bx_set_sge_list(struct ibv_qp_ex *x, size_t num, const struct ibv_sge *sg)
{
	struct bv_qp *q = qx(x);
	struct bv_wr *w = wr_cur(x);

	if (!w)
		return;
	if (num > 1024 || (num && !sg)) {
		wr_fail(q, EINVAL, "bad num_sge or sg_list");
		return;
	}
	if (!grow((void **)&q->sges, &q->cap_sges, q->nsges + (uint32_t)num, sizeof(*q->sges))) {
		wr_fail(q, ENOMEM, "out of memory for SGEs");
		return;
	}
	w->sge_off = q->nsges;
	w->nsge = (uint32_t)num;
	w->inl = false;
	memcpy(&q->sges[q->nsges], sg, num * sizeof(*sg));	/* same layout (qp.c) */
	q->nsges += (uint32_t)num;
}

static void bx_set_sge(struct ibv_qp_ex *x, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct ibv_sge sg = { .addr = addr, .length = length, .lkey = lkey };

	bx_set_sge_list(x, 1, &sg);
}

static void bx_set_inline_data_list(struct ibv_qp_ex *x, size_t num,
				    const struct ibv_data_buf *buf)
{
	struct bv_qp *q = qx(x);
	struct bv_wr *w = wr_cur(x);
	size_t i, len = 0;

	if (!w)
		return;
	for (i = 0; i < num; i++)
		len += buf[i].length;
	if (len > UINT32_MAX / 2 ||
	    !grow((void **)&q->inl, &q->cap_inl, q->ninl + (uint32_t)len, 1) ||
	    !grow((void **)&q->sges, &q->cap_sges, q->nsges + 1, sizeof(*q->sges))) {
		wr_fail(q, ENOMEM, "out of memory for inline data");
		return;
	}
	w->inl = true;
	w->inl_off = q->ninl;
	w->inl_len = (uint32_t)len;
	w->sge_off = q->nsges++;
	w->nsge = 1;
	w->wr.send_flags |= BLUE_SEND_INLINE;
	for (i = 0; i < num; i++) {
		memcpy(q->inl + q->ninl, buf[i].addr, buf[i].length);
		q->ninl += (uint32_t)buf[i].length;
	}
}

static void bx_set_inline_data(struct ibv_qp_ex *x, void *addr, size_t length)
{
	struct ibv_data_buf b = { .addr = addr, .length = length };

	bx_set_inline_data_list(x, 1, &b);
}

/* Memory windows (compat/mw.c): a type 2 bind, and the two invalidations. */
static void bx_bind_mw(struct ibv_qp_ex *x, struct ibv_mw *mw, uint32_t rkey,
		       const struct ibv_mw_bind_info *info)
{
	struct bv_wr *w = wr_new(x, BLUE_WR_BIND_MW);

	if (!w)
		return;
	w->wr.wr.bind_mw.mw = bv_bmw(mw);
	w->wr.wr.bind_mw.rkey = rkey;
	bv_mw_bind_info(info, &w->wr.wr.bind_mw.bind_info);
}

static void bx_local_inv(struct ibv_qp_ex *x, uint32_t rkey)
{
	struct bv_wr *w = wr_new(x, BLUE_WR_LOCAL_INV);

	if (w)
		w->wr.invalidate_rkey = rkey;
}

static void bx_send_inv(struct ibv_qp_ex *x, uint32_t rkey)
{
	struct bv_wr *w = wr_new(x, BLUE_WR_SEND_WITH_INV);

	if (w)
		w->wr.invalidate_rkey = rkey;
}

/* Builders for what blue lacks: the batch fails at wr_complete, saying why. */

static void bx_send_tso(struct ibv_qp_ex *x, void *hdr, uint16_t hdr_sz, uint16_t mss)
{
	(void)hdr; (void)hdr_sz; (void)mss;
	wr_fail(qx(x), EOPNOTSUPP, "TSO is for raw packet QPs, not RC");
}

/* The destination of the current WR of a UD QP (its AH's libblue object, QPN, Q_Key). */
static void bx_set_ud_addr(struct ibv_qp_ex *x, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{
	struct bv_wr *w = wr_cur(x);

	if (!w)
		return;
	if (x->qp_base.qp_type != IBV_QPT_UD) {
		wr_fail(qx(x), EINVAL, "ibv_wr_set_ud_addr on a QP that is not UD");
		return;
	}
	w->wr.wr.ud.ah = bv_bah(ah);
	w->wr.wr.ud.remote_qpn = qpn;
	w->wr.wr.ud.remote_qkey = qkey;
}

static void bx_set_xrc_srqn(struct ibv_qp_ex *x, uint32_t srqn)
{
	(void)srqn;
	wr_fail(qx(x), EOPNOTSUPP, "XRC is not supported");
}

/* IBA 1.5 ATOMIC WRITE: the 8 bytes at @data, copied now as inline data (as rxe copies) */
static void bx_atomic_write(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr,
			    const void *data)
{
	if (!data) {
		wr_fail(qx(x), EINVAL, "ibv_wr_atomic_write: atomic_wr is NULL");
		return;
	}
	if (wr_rdma(x, BLUE_WR_ATOMIC_WRITE, rkey, raddr))
		bx_set_inline_data(x, (void *)data, 8);
}

/* rdma-core 45's ibv_wr_flush (IBA 1.5 FLUSH); libblue checks type and level */
static void bx_flush(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr, size_t len,
		     uint8_t type, uint8_t level)
{
	struct bv_wr *w;

	if (len > UINT32_MAX) {
		wr_fail(qx(x), EINVAL, "ibv_wr_flush: len is over 4 GiB (the RETH has 32 bits)");
		return;
	}
	w = wr_new(x, BLUE_WR_FLUSH);
	if (w) {
		w->wr.wr.flush.remote_addr = raddr;
		w->wr.wr.flush.rkey = rkey;
		w->wr.wr.flush.length = (uint32_t)len;
		w->wr.wr.flush.type = type;
		w->wr.wr.flush.level = level;
	}
}

void bv_qp_ex_init(struct bv_qp *q)
{
	struct ibv_qp_ex *x = &q->qpx;

	x->wr_start = bx_start;
	x->wr_complete = bx_complete;
	/* nothing reaches libblue before wr_complete: aborting is emptying the batch */
	x->wr_abort = bx_start;
	x->wr_rdma_write = bx_rdma_write;
	x->wr_rdma_write_imm = bx_rdma_write_imm;
	x->wr_rdma_read = bx_rdma_read;
	x->wr_send = bx_send;
	x->wr_send_imm = bx_send_imm;
	x->wr_atomic_cmp_swp = bx_cmp_swp;
	x->wr_atomic_fetch_add = bx_fetch_add;
	x->wr_set_sge = bx_set_sge;
	x->wr_set_sge_list = bx_set_sge_list;
	x->wr_set_inline_data = bx_set_inline_data;
	x->wr_set_inline_data_list = bx_set_inline_data_list;
	x->wr_bind_mw = bx_bind_mw;
	x->wr_local_inv = bx_local_inv;
	x->wr_send_inv = bx_send_inv;
	x->wr_send_tso = bx_send_tso;
	x->wr_set_ud_addr = bx_set_ud_addr;
	x->wr_set_xrc_srqn = bx_set_xrc_srqn;
	x->wr_atomic_write = bx_atomic_write;
	q->wr_flush = bx_flush;		/* for programs built against rdma-core 45 */
}
