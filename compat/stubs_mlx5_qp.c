// SPDX-License-Identifier: MIT
/*
 * libmlx5.so.1 stand-in, part 2 (see stubs_mlx5.c): mlx5-specific CQs, QPs and WQs,
 * LAG ports, the UDP source port, packet-pacing schedules, DCI streams.
 */
#include <infiniband/mlx5dv.h>

#include "compat/stub_log.h"

#pragma GCC diagnostic ignored "-Wunused-parameter"

#define NS() STUB_NOTSUP("libmlx5", "not a Mellanox device; use plain verbs")

STUB_EXPORT struct ibv_cq_ex *mlx5dv_create_cq(struct ibv_context *context,
		struct ibv_cq_init_attr_ex *cq_attr, struct mlx5dv_cq_init_attr *mlx5_cq_attr)
{ NS(); return NULL; }
STUB_EXPORT struct ibv_qp *mlx5dv_create_qp(struct ibv_context *context,
		struct ibv_qp_init_attr_ex *qp_attr, struct mlx5dv_qp_init_attr *mlx5_qp_attr)
{ NS(); return NULL; }
STUB_EXPORT struct ibv_wq *mlx5dv_create_wq(struct ibv_context *context,
		struct ibv_wq_init_attr *wq_init_attr, struct mlx5dv_wq_init_attr *mlx5_wq_attr)
{ NS(); return NULL; }
STUB_EXPORT struct mlx5dv_qp_ex *mlx5dv_qp_ex_from_ibv_qp_ex(struct ibv_qp_ex *qp)
{ NS(); return NULL; }
STUB_EXPORT int mlx5dv_qp_cancel_posted_send_wrs(struct mlx5dv_qp_ex *mqp, uint64_t wr_id)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_map_ah_to_qp(struct ibv_ah *ah, uint32_t qp_num)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_dci_stream_id_reset(struct ibv_qp *qp, uint16_t stream_id)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_modify_qp_lag_port(struct ibv_qp *qp, uint8_t port_num)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_query_qp_lag_port(struct ibv_qp *qp, uint8_t *port_num,
		uint8_t *active_port_num)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_modify_qp_udp_sport(struct ibv_qp *qp, uint16_t udp_sport)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_modify_qp_sched_elem(struct ibv_qp *qp,
		const struct mlx5dv_sched_leaf *requestor,
		const struct mlx5dv_sched_leaf *responder)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT struct mlx5dv_sched_node *mlx5dv_sched_node_create(struct ibv_context *context,
		const struct mlx5dv_sched_attr *sched_attr)
{ NS(); return NULL; }
STUB_EXPORT int mlx5dv_sched_node_modify(struct mlx5dv_sched_node *node,
		const struct mlx5dv_sched_attr *sched_attr)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_sched_node_destroy(struct mlx5dv_sched_node *node)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT struct mlx5dv_sched_leaf *mlx5dv_sched_leaf_create(struct ibv_context *context,
		const struct mlx5dv_sched_attr *sched_attr)
{ NS(); return NULL; }
STUB_EXPORT int mlx5dv_sched_leaf_modify(struct mlx5dv_sched_leaf *leaf,
		const struct mlx5dv_sched_attr *sched_attr)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_sched_leaf_destroy(struct mlx5dv_sched_leaf *leaf)
{ NS(); return EOPNOTSUPP; }
