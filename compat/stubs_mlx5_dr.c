// SPDX-License-Identifier: MIT
/*
 * libmlx5.so.1 stand-in, part 6 (see stubs_mlx5.c): direct rule steering (mlx5dv_dr_*:
 * domains, tables, matchers, rules, actions) and its dumps.
 */
#include <infiniband/mlx5dv.h>

#include "compat/stub_log.h"

#pragma GCC diagnostic ignored "-Wunused-parameter"

#define NS() STUB_NOTSUP("libmlx5", "no direct rule steering: not a Mellanox device")

STUB_EXPORT struct mlx5dv_dr_action *mlx5dv_dr_action_create_aso(struct mlx5dv_dr_domain *domain,
		struct mlx5dv_devx_obj *devx_obj, uint32_t offset, uint32_t flags,
		uint8_t return_reg_c)
{ NS(); return NULL; }
STUB_EXPORT struct mlx5dv_dr_action *mlx5dv_dr_action_create_default_miss(void)
{ NS(); return NULL; }
STUB_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_dest_array(struct mlx5dv_dr_domain *domain, size_t num_dest,
		struct mlx5dv_dr_action_dest_attr *dests[])
{ NS(); return NULL; }
STUB_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_dest_devx_tir(struct mlx5dv_devx_obj *devx_obj)
{ NS(); return NULL; }
STUB_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_dest_ib_port(struct mlx5dv_dr_domain *domain, uint32_t ib_port)
{ NS(); return NULL; }
STUB_EXPORT struct mlx5dv_dr_action *mlx5dv_dr_action_create_dest_ibv_qp(struct ibv_qp *ibqp)
{ NS(); return NULL; }
STUB_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_dest_root_table(struct mlx5dv_dr_table *table, uint16_t priority)
{ NS(); return NULL; }
STUB_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_dest_table(struct mlx5dv_dr_table *table)
{ NS(); return NULL; }
STUB_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_dest_vport(struct mlx5dv_dr_domain *domain, uint32_t vport)
{ NS(); return NULL; }
STUB_EXPORT struct mlx5dv_dr_action *mlx5dv_dr_action_create_drop(void)
{ NS(); return NULL; }
STUB_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_flow_counter(struct mlx5dv_devx_obj *devx_obj, uint32_t offset)
{ NS(); return NULL; }
STUB_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_flow_meter(struct mlx5dv_dr_flow_meter_attr *attr)
{ NS(); return NULL; }
STUB_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_flow_sampler(struct mlx5dv_dr_flow_sampler_attr *attr)
{ NS(); return NULL; }
STUB_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_modify_header(struct mlx5dv_dr_domain *domain, uint32_t flags,
		size_t actions_sz, __be64 actions[])
{ NS(); return NULL; }
STUB_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_packet_reformat(struct mlx5dv_dr_domain *domain, uint32_t flags,
		enum mlx5dv_flow_action_packet_reformat_type reformat_type, size_t data_sz,
		void *data)
{ NS(); return NULL; }
STUB_EXPORT struct mlx5dv_dr_action *mlx5dv_dr_action_create_pop_vlan(void)
{ NS(); return NULL; }
STUB_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_push_vlan(struct mlx5dv_dr_domain *domain, __be32 vlan_hdr)
{ NS(); return NULL; }
STUB_EXPORT struct mlx5dv_dr_action *mlx5dv_dr_action_create_tag(uint32_t tag_value)
{ NS(); return NULL; }
STUB_EXPORT int mlx5dv_dr_action_destroy(struct mlx5dv_dr_action *action)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_dr_action_modify_aso(struct mlx5dv_dr_action *action, uint32_t offset,
		uint32_t flags, uint8_t return_reg_c)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_dr_action_modify_flow_meter(struct mlx5dv_dr_action *action,
		struct mlx5dv_dr_flow_meter_attr *attr, __be64 modify_field_select)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_dr_aso_other_domain_link(struct mlx5dv_devx_obj *devx_obj,
		struct mlx5dv_dr_domain *peer_dmn, struct mlx5dv_dr_domain *dmn, uint32_t flags,
		uint8_t return_reg_c)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_dr_aso_other_domain_unlink(struct mlx5dv_devx_obj *devx_obj,
		struct mlx5dv_dr_domain *dmn)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT void mlx5dv_dr_domain_allow_duplicate_rules(struct mlx5dv_dr_domain *domain,
		bool allow)
{ NS(); }
STUB_EXPORT struct mlx5dv_dr_domain *mlx5dv_dr_domain_create(struct ibv_context *ctx,
		enum mlx5dv_dr_domain_type type)
{ NS(); return NULL; }
STUB_EXPORT int mlx5dv_dr_domain_destroy(struct mlx5dv_dr_domain *domain)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT void mlx5dv_dr_domain_set_reclaim_device_memory(struct mlx5dv_dr_domain *dmn,
		bool enable)
{ NS(); }
STUB_EXPORT int mlx5dv_dr_domain_sync(struct mlx5dv_dr_domain *domain, uint32_t flags)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT struct mlx5dv_dr_matcher *mlx5dv_dr_matcher_create(struct mlx5dv_dr_table *table,
		uint16_t priority, uint8_t match_criteria_enable,
		struct mlx5dv_flow_match_parameters *mask)
{ NS(); return NULL; }
STUB_EXPORT int mlx5dv_dr_matcher_destroy(struct mlx5dv_dr_matcher *matcher)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_dr_matcher_set_layout(struct mlx5dv_dr_matcher *matcher,
		struct mlx5dv_dr_matcher_layout *layout)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT struct mlx5dv_dr_rule *mlx5dv_dr_rule_create(struct mlx5dv_dr_matcher *matcher,
		struct mlx5dv_flow_match_parameters *value, size_t num_actions,
		struct mlx5dv_dr_action *actions[])
{ NS(); return NULL; }
STUB_EXPORT int mlx5dv_dr_rule_destroy(struct mlx5dv_dr_rule *rule)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT struct mlx5dv_dr_table *mlx5dv_dr_table_create(struct mlx5dv_dr_domain *domain,
		uint32_t level)
{ NS(); return NULL; }
STUB_EXPORT int mlx5dv_dr_table_destroy(struct mlx5dv_dr_table *table)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_dump_dr_domain(FILE *fout, struct mlx5dv_dr_domain *domain)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_dump_dr_matcher(FILE *fout, struct mlx5dv_dr_matcher *matcher)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_dump_dr_rule(FILE *fout, struct mlx5dv_dr_rule *rule)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_dump_dr_table(FILE *fout, struct mlx5dv_dr_table *table)
{ NS(); return EOPNOTSUPP; }
