// SPDX-License-Identifier: MIT
/*
 * libmlx5.so.1 stand-in, part 4 (see stubs_mlx5.c): DevX, raw firmware commands and
 * the objects, UMEMs, UARs, event channels and EQs made with them.
 * mlx5dv_devx_get_event() returns -1 with errno, as a read does.
 */
#include <infiniband/mlx5dv.h>

#include "compat/stub_log.h"

#pragma GCC diagnostic ignored "-Wunused-parameter"

#define NS() STUB_NOTSUP("libmlx5", "no DevX: not a Mellanox device")

STUB_EXPORT struct mlx5dv_devx_msi_vector *mlx5dv_devx_alloc_msi_vector(struct ibv_context *ibctx)
{ NS(); return NULL; }
STUB_EXPORT struct mlx5dv_devx_uar *mlx5dv_devx_alloc_uar(struct ibv_context *context,
		uint32_t flags)
{ NS(); return NULL; }
STUB_EXPORT int mlx5dv_devx_cq_modify(struct ibv_cq *cq, const void *in, size_t inlen,
		void *out, size_t outlen)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_devx_cq_query(struct ibv_cq *cq, const void *in, size_t inlen, void *out,
		size_t outlen)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT struct mlx5dv_devx_cmd_comp *mlx5dv_devx_create_cmd_comp(struct ibv_context *context)
{ NS(); return NULL; }
STUB_EXPORT struct mlx5dv_devx_eq *mlx5dv_devx_create_eq(struct ibv_context *ibctx,
		const void *in, size_t inlen, void *out, size_t outlen)
{ NS(); return NULL; }
STUB_EXPORT struct mlx5dv_devx_event_channel *
mlx5dv_devx_create_event_channel(struct ibv_context *context,
		enum mlx5dv_devx_create_event_channel_flags flags)
{ NS(); return NULL; }
STUB_EXPORT void mlx5dv_devx_destroy_cmd_comp(struct mlx5dv_devx_cmd_comp *cmd_comp)
{ NS(); }
STUB_EXPORT int mlx5dv_devx_destroy_eq(struct mlx5dv_devx_eq *eq)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT void mlx5dv_devx_destroy_event_channel(struct mlx5dv_devx_event_channel *event_channel)
{ NS(); }
STUB_EXPORT int mlx5dv_devx_free_msi_vector(struct mlx5dv_devx_msi_vector *msi)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT void mlx5dv_devx_free_uar(struct mlx5dv_devx_uar *devx_uar)
{ NS(); }
STUB_EXPORT int mlx5dv_devx_general_cmd(struct ibv_context *context, const void *in,
		size_t inlen, void *out, size_t outlen)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_devx_get_async_cmd_comp(struct mlx5dv_devx_cmd_comp *cmd_comp,
		struct mlx5dv_devx_async_cmd_hdr *cmd_resp, size_t cmd_resp_len)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT ssize_t mlx5dv_devx_get_event(struct mlx5dv_devx_event_channel *event_channel,
		struct mlx5dv_devx_async_event_hdr *event_data, size_t event_resp_len)
{ NS(); return -1; }
STUB_EXPORT int mlx5dv_devx_ind_tbl_modify(struct ibv_rwq_ind_table *ind_tbl, const void *in,
		size_t inlen, void *out, size_t outlen)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_devx_ind_tbl_query(struct ibv_rwq_ind_table *ind_tbl, const void *in,
		size_t inlen, void *out, size_t outlen)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT struct mlx5dv_devx_obj *mlx5dv_devx_obj_create(struct ibv_context *context,
		const void *in, size_t inlen, void *out, size_t outlen)
{ NS(); return NULL; }
STUB_EXPORT int mlx5dv_devx_obj_destroy(struct mlx5dv_devx_obj *obj)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_devx_obj_modify(struct mlx5dv_devx_obj *obj, const void *in,
		size_t inlen, void *out, size_t outlen)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_devx_obj_query(struct mlx5dv_devx_obj *obj, const void *in, size_t inlen,
		void *out, size_t outlen)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_devx_obj_query_async(struct mlx5dv_devx_obj *obj, const void *in,
		size_t inlen, size_t outlen, uint64_t wr_id,
		struct mlx5dv_devx_cmd_comp *cmd_comp)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_devx_qp_modify(struct ibv_qp *qp, const void *in, size_t inlen,
		void *out, size_t outlen)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_devx_qp_query(struct ibv_qp *qp, const void *in, size_t inlen, void *out,
		size_t outlen)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_devx_query_eqn(struct ibv_context *context, uint32_t vector,
		uint32_t *eqn)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_devx_srq_modify(struct ibv_srq *srq, const void *in, size_t inlen,
		void *out, size_t outlen)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_devx_srq_query(struct ibv_srq *srq, const void *in, size_t inlen,
		void *out, size_t outlen)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_devx_subscribe_devx_event(struct mlx5dv_devx_event_channel *event_channel,
		struct mlx5dv_devx_obj *obj, uint16_t events_sz, uint16_t events_num[],
		uint64_t cookie)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_devx_subscribe_devx_event_fd(struct mlx5dv_devx_event_channel *event_channel,
		int fd, struct mlx5dv_devx_obj *obj, uint16_t event_num)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_devx_umem_dereg(struct mlx5dv_devx_umem *umem)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT struct mlx5dv_devx_umem *mlx5dv_devx_umem_reg(struct ibv_context *ctx, void *addr,
		size_t size, uint32_t access)
{ NS(); return NULL; }
STUB_EXPORT struct mlx5dv_devx_umem *mlx5dv_devx_umem_reg_ex(struct ibv_context *ctx,
		struct mlx5dv_devx_umem_in *umem_in)
{ NS(); return NULL; }
STUB_EXPORT int mlx5dv_devx_wq_modify(struct ibv_wq *wq, const void *in, size_t inlen,
		void *out, size_t outlen)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_devx_wq_query(struct ibv_wq *wq, const void *in, size_t inlen, void *out,
		size_t outlen)
{ NS(); return EOPNOTSUPP; }
