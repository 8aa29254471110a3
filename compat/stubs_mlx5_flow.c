// SPDX-License-Identifier: MIT
/*
 * libmlx5.so.1 stand-in, part 5 (see stubs_mlx5.c): flow steering through mlx5dv
 * (matchers, flows, flow actions, steering anchors).
 */
#include <infiniband/mlx5dv.h>

#include "compat/stub_log.h"

#pragma GCC diagnostic ignored "-Wunused-parameter"

#define NS() STUB_NOTSUP("libmlx5", "no mlx5 flow steering: not a Mellanox device")

STUB_EXPORT struct mlx5dv_flow_matcher *mlx5dv_create_flow_matcher(struct ibv_context *context,
		struct mlx5dv_flow_matcher_attr *matcher_attr)
{ NS(); return NULL; }
STUB_EXPORT int mlx5dv_destroy_flow_matcher(struct mlx5dv_flow_matcher *matcher)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT struct ibv_flow *mlx5dv_create_flow(struct mlx5dv_flow_matcher *matcher,
		struct mlx5dv_flow_match_parameters *match_value, size_t num_actions,
		struct mlx5dv_flow_action_attr actions_attr[])
{ NS(); return NULL; }
STUB_EXPORT struct ibv_flow_action *mlx5dv_create_flow_action_esp(struct ibv_context *ctx,
		struct ibv_flow_action_esp_attr *esp, struct mlx5dv_flow_action_esp *mlx5_attr)
{ NS(); return NULL; }
STUB_EXPORT struct ibv_flow_action *mlx5dv_create_flow_action_modify_header(struct ibv_context *ctx,
		size_t actions_sz, uint64_t actions[], enum mlx5dv_flow_table_type ft_type)
{ NS(); return NULL; }
STUB_EXPORT struct ibv_flow_action *
mlx5dv_create_flow_action_packet_reformat(struct ibv_context *ctx, size_t data_sz, void *data,
		enum mlx5dv_flow_action_packet_reformat_type reformat_type,
		enum mlx5dv_flow_table_type ft_type)
{ NS(); return NULL; }
STUB_EXPORT struct mlx5dv_steering_anchor *
mlx5dv_create_steering_anchor(struct ibv_context *context,
		struct mlx5dv_steering_anchor_attr *attr)
{ NS(); return NULL; }
STUB_EXPORT int mlx5dv_destroy_steering_anchor(struct mlx5dv_steering_anchor *sa)
{ NS(); return EOPNOTSUPP; }
