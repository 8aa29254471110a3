// SPDX-License-Identifier: MIT
/*
 * The public calls that differ between library and daemon mode, dispatched through the
 * context's ops table (verbs_ops.h), and the library mode's table. A NULL object is
 * refused here, before anything is read through it.
 */
#include <errno.h>
#include <stddef.h>

#include "runtime/cq.h"
#include "runtime/device.h"
#include "runtime/log.h"
#include "runtime/mr.h"
#include "runtime/progress.h"
#include "runtime/qp.h"
#include "runtime/srq.h"
#include "runtime/verbs_ops.h"

static void lib_progress(struct blue_context *ctx)
{
	blue__progress(ctx);
}

static void lib_idle(struct blue_context *ctx)
{
	(void)ctx;	/* the next poll runs the engine again */
}

static void lib_kick(struct blue_context *ctx)
{
	(void)ctx;	/* the engine runs in this process: it sees the ring at its next pass */
}

const struct blue_verbs_ops blue__lib_ops = {
	.mode = "library",
	.progress = lib_progress,
	.idle = lib_idle,
	.kick = lib_kick,
	.close_device = blue__lib_close_device,
	.query_device = blue__lib_query_device,
	.alloc_pd = blue__lib_alloc_pd,
	.dealloc_pd = blue__lib_dealloc_pd,
	.reg_mr = blue__lib_reg_mr,
	.dereg_mr = blue__lib_dereg_mr,
	.create_cq = blue__lib_create_cq,
	.create_srq = blue__lib_create_srq,
	.modify_srq = blue__lib_modify_srq,
	.query_srq = blue__lib_query_srq,
	.destroy_srq = blue__lib_destroy_srq,
	.create_comp_channel = blue__lib_create_comp_channel,
	.destroy_comp_channel = blue__lib_destroy_comp_channel,
	.req_notify_cq = blue__lib_req_notify_cq,
	.get_cq_event_try = blue__lib_get_cq_event_try,
	.destroy_cq = blue__lib_destroy_cq,
	.create_qp = blue__lib_create_qp,
	.modify_qp = blue__lib_modify_qp,
	.query_qp = blue__lib_query_qp,
	.destroy_qp = blue__lib_destroy_qp,
	.qp_set_retx = blue__lib_qp_set_retx,
	.qp_query_retx = blue__lib_qp_query_retx,
	.qp_set_cc = blue__lib_qp_set_cc,
	.qp_query_cc = blue__lib_qp_query_cc,
	.cm_info_from_qp = blue__lib_cm_info_from_qp,
	.cm_connect_qp = blue__lib_cm_connect_qp,
};

int blue__local_only(const struct blue_context *ctx, const char *what)
{
	if (!ctx || ctx->ops == &blue__lib_ops)
		return 0;
	blue__logf("%s: not served in %s mode yet (BLUE_MODE=library runs it in this "
		   "process, without blue-manager)", what, ctx->ops->mode);
	return EOPNOTSUPP;
}

bool blue__engine_elsewhere(const struct blue_context *ctx)
{
	return ctx && ctx->ops != &blue__lib_ops;
}

static void *null_arg(void)
{
	errno = EINVAL;
	return NULL;
}

int blue_close_device(struct blue_context *ctx)
{
	return ctx ? ctx->ops->close_device(ctx) : EINVAL;
}

int blue_query_device(struct blue_context *ctx, struct blue_device_attr *attr)
{
	return ctx ? ctx->ops->query_device(ctx, attr) : EINVAL;
}

struct blue_pd *blue_alloc_pd(struct blue_context *ctx)
{
	return ctx ? ctx->ops->alloc_pd(ctx) : null_arg();
}

int blue_dealloc_pd(struct blue_pd *pd)
{
	return pd ? pd->ctx->ops->dealloc_pd(pd) : EINVAL;
}

struct blue_mr *blue_reg_mr(struct blue_pd *pd, void *addr, size_t length, unsigned int access)
{
	return pd ? pd->ctx->ops->reg_mr(pd, addr, length, access) : null_arg();
}

int blue_dereg_mr(struct blue_mr *mr)
{
	return mr ? mr->context->ops->dereg_mr(mr) : EINVAL;
}

struct blue_srq *blue_create_srq(struct blue_pd *pd, struct blue_srq_attr *attr,
				 void *srq_context)
{
	return pd && attr ? pd->ctx->ops->create_srq(pd, attr, srq_context) : null_arg();
}

int blue_modify_srq(struct blue_srq *srq, struct blue_srq_attr *attr, int attr_mask)
{
	return srq && attr ? srq->ctx->ops->modify_srq(srq, attr, attr_mask) : EINVAL;
}

int blue_query_srq(struct blue_srq *srq, struct blue_srq_attr *attr)
{
	return srq && attr ? srq->ctx->ops->query_srq(srq, attr) : EINVAL;
}

int blue_destroy_srq(struct blue_srq *srq)
{
	return srq ? srq->ctx->ops->destroy_srq(srq) : EINVAL;
}

struct blue_comp_channel *blue_create_comp_channel(struct blue_context *ctx)
{
	return ctx ? ctx->ops->create_comp_channel(ctx) : null_arg();
}

int blue_destroy_comp_channel(struct blue_comp_channel *ch)
{
	return ch ? ch->ctx->ops->destroy_comp_channel(ch) : EINVAL;
}

int blue_req_notify_cq(struct blue_cq *cq, int solicited_only)
{
	return cq ? cq->ctx->ops->req_notify_cq(cq, solicited_only) : EINVAL;
}

int blue__get_cq_event_try(struct blue_comp_channel *ch, struct blue_cq **cq, void **cq_context)
{
	return ch->ctx->ops->get_cq_event_try(ch, cq, cq_context);
}

struct blue_cq *blue_create_cq(struct blue_context *ctx, int cqe, void *cq_context,
			       struct blue_comp_channel *channel, int comp_vector)
{
	return ctx ? ctx->ops->create_cq(ctx, cqe, cq_context, channel, comp_vector) :
		     null_arg();
}

int blue_destroy_cq(struct blue_cq *cq)
{
	return cq ? cq->ctx->ops->destroy_cq(cq) : EINVAL;
}

struct blue_qp *blue_create_qp(struct blue_pd *pd, struct blue_qp_init_attr *attr)
{
	return pd ? pd->ctx->ops->create_qp(pd, attr) : null_arg();
}

int blue_modify_qp(struct blue_qp *qp, struct blue_qp_attr *attr, int attr_mask)
{
	return qp ? qp->ctx->ops->modify_qp(qp, attr, attr_mask) : EINVAL;
}

int blue_query_qp(struct blue_qp *qp, struct blue_qp_attr *attr, int attr_mask,
		  struct blue_qp_init_attr *init_attr)
{
	return qp ? qp->ctx->ops->query_qp(qp, attr, attr_mask, init_attr) : EINVAL;
}

int blue_destroy_qp(struct blue_qp *qp)
{
	return qp ? qp->ctx->ops->destroy_qp(qp) : EINVAL;
}

int blue_qp_set_retx(struct blue_qp *qp, const struct blue_retx_attr *a)
{
	return qp ? qp->ctx->ops->qp_set_retx(qp, a) : EINVAL;
}

int blue_qp_query_retx(struct blue_qp *qp, struct blue_retx_attr *a)
{
	return qp ? qp->ctx->ops->qp_query_retx(qp, a) : EINVAL;
}

int blue_qp_set_cc(struct blue_qp *qp, const struct blue_cc_params *p)
{
	return qp ? qp->ctx->ops->qp_set_cc(qp, p) : EINVAL;
}

int blue_qp_query_cc(struct blue_qp *qp, struct blue_cc_params *p)
{
	return qp ? qp->ctx->ops->qp_query_cc(qp, p) : EINVAL;
}

/* A NULL context gets the library body, whose CM error names what is missing. */
static const struct blue_verbs_ops *cm_ops(const struct blue_context *ctx)
{
	return ctx ? ctx->ops : &blue__lib_ops;
}

int blue_cm_info_from_qp(struct blue_context *ctx, struct blue_qp *qp, int gid_index,
			 struct blue_cm_info *info)
{
	return cm_ops(ctx)->cm_info_from_qp(ctx, qp, gid_index, info);
}

int blue_cm_connect_qp(struct blue_context *ctx, struct blue_qp *qp, uint32_t local_psn,
		       const struct blue_cm_info *remote, const struct blue_cm_qp_attr *attr)
{
	return cm_ops(ctx)->cm_connect_qp(ctx, qp, local_psn, remote, attr);
}
