// SPDX-License-Identifier: MIT
/*
 * Completion queues and channels. Every CQ is a struct ibv_cq_ex (ibv_cq is its prefix),
 * so ibv_poll_cq() and the extended start_poll/next_poll/end_poll both work on it. The
 * extended poll takes a batch from blue_poll_cq() at a time and serves it one entry per
 * call; entries left when the program ends the poll wait for the next one.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "compat/compat.h"
#include "runtime/cq.h"

#define BV_EVENT_WAIT_MS 10	/* the event wait re-checks at least this often */

BV_EXPORT struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct bv_channel *ch;
	struct bv_context *c;

	if (!context) {
		bv_log("ibv_create_comp_channel: context is NULL");
		return bv_null(EINVAL);
	}
	c = bv_ctx(context);
	ch = bv_obj_new(sizeof(*ch));
	if (!ch)
		return NULL;
	bv_lock(c);
	if (!bv_ctx_open(c))
		ch->bch = blue_create_comp_channel(c->bctx);
	if (ch->bch)
		bv_list_add(&c->chs, &ch->link);
	bv_unlock(c);
	if (!ch->bch)
		return bv_obj_fail(ch);
	ch->ch.context = context;
	/* readable only while an event is pending, as the kernel's (runtime/cq.h) */
	ch->ch.fd = blue__comp_channel_event_fd(ch->bch);
	return &ch->ch;
}

BV_EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct bv_channel *ch = (struct bv_channel *)channel;
	struct bv_context *c;
	int err;

	if (!channel) {
		bv_log("ibv_destroy_comp_channel: channel is NULL");
		return bv_ret(EINVAL);
	}
	c = bv_ctx(channel->context);
	bv_lock(c);
	err = blue_destroy_comp_channel(ch->bch);
	if (!err)
		bv_list_del(&ch->link);
	bv_unlock(c);
	if (err)
		return bv_ret(err);
	free(ch);
	return 0;
}

static void wc_to_ibv(const struct blue_wc *b, struct ibv_wc *w)
{
	memset(w, 0, sizeof(*w));
	w->wr_id = b->wr_id;
	w->status = (enum ibv_wc_status)b->status;	/* same numbers (blue.h) */
	w->opcode = (enum ibv_wc_opcode)b->opcode;
	w->vendor_err = b->vendor_err;
	w->byte_len = b->byte_len;
	w->imm_data = b->imm_data;
	w->qp_num = b->qp_num;
	w->src_qp = b->src_qp;
	w->wc_flags = b->wc_flags;	/* same bits (enum blue_wc_flags) */
	w->pkey_index = b->pkey_index;
	w->sl = b->sl;
}

static int bv_poll_cq(struct ibv_cq *ibcq, int num, struct ibv_wc *wc)
{
	struct bv_cq *cq = bv_cq(ibcq);
	struct bv_context *c = bv_ctx(ibcq->context);
	struct blue_wc b[16];
	int got = 0, n, i;

	if (num < 0 || (num && !wc))
		return -EINVAL;
	bv_lock(c);
	/* first what an extended poll left behind */
	while (got < num && cq->cur < cq->nwc)
		wc_to_ibv(&cq->wc[cq->cur++], &wc[got++]);
	/* at least one call: polling for nothing still drives the engine, as in libblue */
	do {
		n = num - got < 16 ? num - got : 16;
		n = blue_poll_cq(cq->bcq, n, b);
		if (n < 0) {
			if (!got)
				got = n;
			break;
		}
		for (i = 0; i < n; i++)
			wc_to_ibv(&b[i], &wc[got++]);
	} while (n == 16 && got < num);
	bv_unlock(c);
	return got;
}

void bv_cq_clean(struct bv_cq *cq, uint32_t qpn)
{
	int i, n = cq->cur;

	for (i = cq->cur; i < cq->nwc; i++)
		if (cq->wc[i].qp_num != qpn)
			cq->wc[n++] = cq->wc[i];
	cq->nwc = n;
}

static int bv_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct bv_context *c = bv_ctx(ibcq->context);
	int err;

	bv_lock(c);
	err = blue_req_notify_cq(bv_cq(ibcq)->bcq, solicited_only);
	bv_unlock(c);
	return err;
}

/* ---- the extended poll -------------------------------------------------------- */

static struct bv_cq *cqx(struct ibv_cq_ex *x) { return (struct bv_cq *)x; }

static const struct blue_wc *cur_wc(struct ibv_cq_ex *x)
{
	return &cqx(x)->wc[cqx(x)->cur];
}

/* Make wc[cur] current: refill when used up. Return: 0, or ENOENT when empty. */
static int cqx_load(struct bv_cq *cq)
{
	struct bv_context *c = bv_ctx(cq->cq.context);

	if (cq->cur >= cq->nwc) {
		int n;

		bv_lock(c);
		n = blue_poll_cq(cq->bcq, BV_CQ_BATCH, cq->wc);
		bv_unlock(c);
		cq->cur = 0;
		cq->nwc = n > 0 ? n : 0;
		if (n < 0)
			return -n;
		if (!n)
			return ENOENT;
	}
	cq->cq.status = (enum ibv_wc_status)cq->wc[cq->cur].status;
	cq->cq.wr_id = cq->wc[cq->cur].wr_id;
	return 0;
}

static int cqx_start_poll(struct ibv_cq_ex *x, struct ibv_poll_cq_attr *attr)
{
	if (attr && attr->comp_mask)
		return EINVAL;
	return cqx_load(cqx(x));
}

static int cqx_next_poll(struct ibv_cq_ex *x)
{
	cqx(x)->cur++;
	return cqx_load(cqx(x));
}

static void cqx_end_poll(struct ibv_cq_ex *x)
{
	if (cqx(x)->cur < cqx(x)->nwc)
		cqx(x)->cur++;
}

static enum ibv_wc_opcode cqx_opcode(struct ibv_cq_ex *x)
{
	return (enum ibv_wc_opcode)cur_wc(x)->opcode;
}

static uint32_t cqx_vendor_err(struct ibv_cq_ex *x) { return cur_wc(x)->vendor_err; }
static uint32_t cqx_byte_len(struct ibv_cq_ex *x) { return cur_wc(x)->byte_len; }
static __be32 cqx_imm_data(struct ibv_cq_ex *x) { return cur_wc(x)->imm_data; }
static uint32_t cqx_qp_num(struct ibv_cq_ex *x) { return cur_wc(x)->qp_num; }
static uint32_t cqx_src_qp(struct ibv_cq_ex *x) { return cur_wc(x)->src_qp; }
static unsigned int cqx_wc_flags(struct ibv_cq_ex *x) { return cur_wc(x)->wc_flags; }
static uint32_t cqx_slid(struct ibv_cq_ex *x) { (void)x; return 0; }	/* RoCE: no LIDs */
static uint8_t cqx_sl(struct ibv_cq_ex *x) { return cur_wc(x)->sl; }
static uint8_t cqx_dlid_path_bits(struct ibv_cq_ex *x) { (void)x; return 0; }

#define BV_CQX_WC_FLAGS (IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | \
			 IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP | \
			 IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL | \
			 IBV_WC_EX_WITH_DLID_PATH_BITS)

static struct ibv_cq_ex *bv_create_cq_ex(struct ibv_context *context,
					 struct ibv_cq_init_attr_ex *attr)
{
	struct bv_context *c = bv_ctx(context);
	struct bv_channel *ch;
	struct bv_cq *cq;

	if (!attr) {
		bv_log("ibv_create_cq_ex: cq_attr is NULL");
		return bv_null(EINVAL);
	}
	if (attr->wc_flags & ~(uint64_t)BV_CQX_WC_FLAGS) {
		bv_log("ibv_create_cq_ex: wc_flags 0x%llx are not supported (completion "
		       "timestamps, CVLAN, flow tags, tag matching)",
		       (unsigned long long)(attr->wc_flags & ~(uint64_t)BV_CQX_WC_FLAGS));
		return bv_null(EOPNOTSUPP);
	}
	if (attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS |
					  IBV_CQ_INIT_ATTR_MASK_PD)) {
		bv_log("ibv_create_cq_ex: comp_mask 0x%x has bits blue does not know",
		       attr->comp_mask);
		return bv_null(EOPNOTSUPP);
	}
	/* a CQ "on" a parent domain: its allocators are hints (mr_pd.c); it must be one */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	    (!attr->parent_domain || attr->parent_domain->context != context ||
	     !bv_pd(attr->parent_domain)->parent_of)) {
		bv_log("ibv_create_cq_ex: parent_domain is not a parent domain of this context");
		return bv_null(EINVAL);
	}
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED)) {
		bv_log("ibv_create_cq_ex: flags 0x%x are not supported", attr->flags);
		return bv_null(EOPNOTSUPP);
	}
	if (attr->comp_vector >= (uint32_t)context->num_comp_vectors) {
		bv_log("ibv_create_cq_ex: comp_vector %u; the device has %d",
		       attr->comp_vector, context->num_comp_vectors);
		return bv_null(EINVAL);
	}
	if (attr->channel && bv_mixed(context, attr->channel->context, "ibv_create_cq",
				      "the completion channel"))
		return NULL;
	cq = bv_obj_new(sizeof(*cq));
	if (!cq)
		return NULL;
	ch = (struct bv_channel *)attr->channel;
	bv_lock(c);
	if (!bv_ctx_open(c))
		cq->bcq = blue_create_cq(c->bctx, (int)attr->cqe, cq, ch ? ch->bch : NULL, 0);
	if (cq->bcq)
		bv_list_add(&c->cqs, &cq->link);
	bv_unlock(c);
	if (!cq->bcq)
		return bv_obj_fail(cq);
	cq->cq.context = context;
	cq->cq.channel = attr->channel;
	cq->cq.cq_context = attr->cq_context;
	cq->cq.cqe = (int)attr->cqe;
	pthread_mutex_init(&cq->cq.mutex, NULL);
	pthread_cond_init(&cq->cq.cond, NULL);
	if (attr->channel)
		attr->channel->refcnt++;
	cq->cq.start_poll = cqx_start_poll;
	cq->cq.next_poll = cqx_next_poll;
	cq->cq.end_poll = cqx_end_poll;
	cq->cq.read_opcode = cqx_opcode;
	cq->cq.read_vendor_err = cqx_vendor_err;
	cq->cq.read_byte_len = cqx_byte_len;
	cq->cq.read_imm_data = cqx_imm_data;
	cq->cq.read_qp_num = cqx_qp_num;
	cq->cq.read_src_qp = cqx_src_qp;
	cq->cq.read_wc_flags = cqx_wc_flags;
	cq->cq.read_slid = cqx_slid;
	cq->cq.read_sl = cqx_sl;
	cq->cq.read_dlid_path_bits = cqx_dlid_path_bits;
	return &cq->cq;
}

BV_EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
				       struct ibv_comp_channel *channel, int comp_vector)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = cqe > 0 ? (uint32_t)cqe : 0,
		.cq_context = cq_context,
		.channel = channel,
		.comp_vector = comp_vector >= 0 ? (uint32_t)comp_vector : ~0u,
		.wc_flags = IBV_WC_STANDARD_FLAGS,
	};

	if (!context) {
		bv_log("ibv_create_cq: context is NULL");
		return bv_null(EINVAL);
	}
	if (cqe <= 0) {
		bv_log("ibv_create_cq: cqe %d must be positive", cqe);
		return bv_null(EINVAL);
	}
	return ibv_cq_ex_to_cq(bv_create_cq_ex(context, &attr));
}

BV_EXPORT int ibv_destroy_cq(struct ibv_cq *ibcq)
{
	struct bv_context *c;
	int err;

	if (!ibcq) {
		bv_log("ibv_destroy_cq: cq is NULL");
		return bv_ret(EINVAL);
	}
	c = bv_ctx(ibcq->context);
	bv_lock(c);
	err = blue_destroy_cq(bv_cq(ibcq)->bcq);
	if (!err)
		bv_list_del(&bv_cq(ibcq)->link);
	bv_unlock(c);
	if (err)
		return bv_ret(err);
	if (ibcq->channel)
		ibcq->channel->refcnt--;
	free(bv_cq(ibcq));
	return 0;
}

BV_EXPORT int ibv_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct bv_cq *cq = bv_cq(ibcq);
	struct bv_context *c;
	int err;

	if (!ibcq) {
		bv_log("ibv_resize_cq: cq is NULL");
		return bv_ret(EINVAL);
	}
	c = bv_ctx(ibcq->context);
	bv_lock(c);
	err = blue__cq_resize(cq->bcq, cqe, (uint32_t)(cq->nwc - cq->cur));
	bv_unlock(c);
	if (err)
		return bv_ret(err);
	ibcq->cqe = cqe;
	return 0;
}

/*
 * Wait for a CQ event. libblue's own wait runs the engine and blocks in epoll_wait
 * holding nothing; here the context lock must not be held while blocking (the progress
 * thread needs it), so each try (blue__get_cq_event_try(), which never sleeps) runs
 * under the lock and the wait is a poll() on the channel's fd in between. A program
 * that made the fd non-blocking gets EAGAIN, as from rdma-core's read() of the fd.
 */
BV_EXPORT int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq,
			       void **cq_context)
{
	struct bv_channel *ch = (struct bv_channel *)channel;
	struct pollfd pfd;
	struct bv_context *c;
	struct blue_cq *bcq;
	void *bctx_cq;
	int flags, r;

	if (!channel || !cq || !cq_context) {
		bv_log("ibv_get_cq_event: %s is NULL", !channel ? "channel" : !cq ? "cq" :
		       "cq_context");
		errno = EINVAL;
		return -1;
	}
	c = bv_ctx(channel->context);
	flags = fcntl(channel->fd, F_GETFL);	/* only read: the fd stays the app's */
	if (flags < 0)
		return -1;
	for (;;) {
		bv_lock(c);
		r = blue__get_cq_event_try(ch->bch, &bcq, &bctx_cq);
		bv_unlock(c);
		if (r == 0) {
			struct bv_cq *b = bctx_cq;

			*cq = ibv_cq_ex_to_cq(&b->cq);
			*cq_context = b->cq.cq_context;
			return 0;
		}
		if (flags & O_NONBLOCK) {
			errno = -r;
			return -1;
		}
		/* libblue's fd, not the program's: readable for frames and timers too, so
		 * this wait drives the engine itself instead of waiting for the thread */
		pfd.fd = blue_comp_channel_fd(ch->bch);
		pfd.events = POLLIN;
		/*
		 * A signal ends the wait with EINTR, as it ends rdma-core's read() of the
		 * kernel's channel fd: qperf, waiting here for a message that will not come
		 * after its peer's test time ran out, is woken by its own SIGALRM and must
		 * see it (the wait went on for good: its peer timed out for the results)
		 */
		if (poll(&pfd, 1, BV_EVENT_WAIT_MS) < 0 && errno == EINTR)
			return -1;
	}
}

BV_EXPORT void ibv_ack_cq_events(struct ibv_cq *ibcq, unsigned int nevents)
{
	struct bv_context *c;

	if (!ibcq)
		return;
	c = bv_ctx(ibcq->context);
	bv_lock(c);
	blue_ack_cq_events(bv_cq(ibcq)->bcq, nevents);
	bv_unlock(c);
}

void bv_cq_init_ops(struct bv_context *c)
{
	c->vctx.context.ops.poll_cq = bv_poll_cq;
	c->vctx.context.ops.req_notify_cq = bv_req_notify_cq;
	c->vctx.create_cq_ex = bv_create_cq_ex;
}
