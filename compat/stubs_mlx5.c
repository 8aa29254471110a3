// SPDX-License-Identifier: MIT
/*
 * libmlx5.so.1 stand-in (MLX5_1.0..1.24, <infiniband/mlx5dv.h>), part 1: the device.
 * blue's devices are not Mellanox devices: mlx5dv_is_supported() says no (UCX's mlx5
 * memory domain asks it first, and falls back to plain verbs), and any call reached
 * anyway answers "not supported": an int call EOPNOTSUPP (mlx5dv's calls return an
 * errno), a pointer NULL with errno, a void one nothing (the message says so).
 * The other parts: stubs_mlx5_qp.c (QPs, CQs, WQs, scheduling), stubs_mlx5_mem.c (DM,
 * mkeys, crypto), stubs_mlx5_devx.c (DevX), stubs_mlx5_flow.c and stubs_mlx5_dr.c
 * (steering). The stubs read no argument.
 */
#include <infiniband/mlx5dv.h>

#include "compat/stub_log.h"
#include "compat/symver.h"

#pragma GCC diagnostic ignored "-Wunused-parameter"

#define NS() STUB_NOTSUP("libmlx5", "not a Mellanox device; use plain verbs")

/*
 * mlx5dv_init_obj@@MLX5_1.2 and @MLX5_1.0 (the pre-1.2 object layouts) fail alike, so
 * one function is both. It has a name of its own: ld drops the default version of a
 * symbol that is also its own symver'd alias.
 */
STUB_EXPORT int stub_mlx5dv_init_obj(struct mlx5dv_obj *obj, uint64_t obj_type)
{
	STUB_NOTSUP_AS("libmlx5", "mlx5dv_init_obj", "not a Mellanox device; use plain verbs");
	return EOPNOTSUPP;
}
SYMVER(stub_mlx5dv_init_obj, "mlx5dv_init_obj@@MLX5_1.2");
SYMVER(stub_mlx5dv_init_obj, "mlx5dv_init_obj@MLX5_1.0");
/* no, and quietly: a question answered, not a call refused */
STUB_EXPORT bool mlx5dv_is_supported(struct ibv_device *device)
{ return false; }
STUB_EXPORT struct ibv_context *mlx5dv_open_device(struct ibv_device *device,
		struct mlx5dv_context_attr *attr)
{ NS(); return NULL; }
STUB_EXPORT int mlx5dv_query_device(struct ibv_context *ctx_in,
		struct mlx5dv_context *attrs_out)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int _mlx5dv_query_port(struct ibv_context *context, uint32_t port_num,
		struct mlx5dv_port *info, size_t info_len)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_set_context_attr(struct ibv_context *context,
		enum mlx5dv_set_ctx_attr_type type, void *attr)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_get_clock_info(struct ibv_context *context,
		struct mlx5dv_clock_info *clock_info)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT struct ibv_device **mlx5dv_get_vfio_device_list(struct mlx5dv_vfio_context_attr *attr)
{ NS(); return NULL; }
/* an fd, so -1 with errno */
STUB_EXPORT int mlx5dv_vfio_get_events_fd(struct ibv_context *ibctx)
{ NS(); return -1; }
STUB_EXPORT int mlx5dv_vfio_process_events(struct ibv_context *context)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_reserved_qpn_alloc(struct ibv_context *ctx, uint32_t *qpn)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_reserved_qpn_dealloc(struct ibv_context *ctx, uint32_t qpn)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT struct mlx5dv_var *mlx5dv_alloc_var(struct ibv_context *context, uint32_t flags)
{ NS(); return NULL; }
STUB_EXPORT void mlx5dv_free_var(struct mlx5dv_var *dv_var)
{ NS(); }
STUB_EXPORT struct mlx5dv_pp *mlx5dv_pp_alloc(struct ibv_context *context, size_t pp_context_sz,
		const void *pp_context, uint32_t flags)
{ NS(); return NULL; }
STUB_EXPORT void mlx5dv_pp_free(struct mlx5dv_pp *pp)
{ NS(); }
