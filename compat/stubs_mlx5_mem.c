// SPDX-License-Identifier: MIT
/*
 * libmlx5.so.1 stand-in, part 3 (see stubs_mlx5.c): device memory, mkeys and
 * signature checks, crypto login and data-encryption keys.
 */
#include <infiniband/mlx5dv.h>

#include "compat/stub_log.h"

#pragma GCC diagnostic ignored "-Wunused-parameter"

#define NS() STUB_NOTSUP("libmlx5", "not a Mellanox device; use plain verbs")

STUB_EXPORT struct ibv_dm *mlx5dv_alloc_dm(struct ibv_context *context,
		struct ibv_alloc_dm_attr *dm_attr, struct mlx5dv_alloc_dm_attr *mlx5_dm_attr)
{ NS(); return NULL; }
STUB_EXPORT void *mlx5dv_dm_map_op_addr(struct ibv_dm *dm, uint8_t op)
{ NS(); return NULL; }
STUB_EXPORT struct mlx5dv_mkey *mlx5dv_create_mkey(struct mlx5dv_mkey_init_attr *mkey_init_attr)
{ NS(); return NULL; }
STUB_EXPORT int mlx5dv_destroy_mkey(struct mlx5dv_mkey *mkey)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int _mlx5dv_mkey_check(struct mlx5dv_mkey *mkey, struct mlx5dv_mkey_err *err_info,
		size_t err_info_size)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_crypto_login(struct ibv_context *context,
		struct mlx5dv_crypto_login_attr *login_attr)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_crypto_login_query_state(struct ibv_context *context,
		enum mlx5dv_crypto_login_state *state)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_crypto_logout(struct ibv_context *context)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT struct mlx5dv_crypto_login_obj *mlx5dv_crypto_login_create(struct ibv_context *context,
		struct mlx5dv_crypto_login_attr_ex *login_attr)
{ NS(); return NULL; }
STUB_EXPORT int mlx5dv_crypto_login_query(struct mlx5dv_crypto_login_obj *crypto_login,
		struct mlx5dv_crypto_login_query_attr *query_attr)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_crypto_login_destroy(struct mlx5dv_crypto_login_obj *crypto_login)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT struct mlx5dv_dek *mlx5dv_dek_create(struct ibv_context *context,
		struct mlx5dv_dek_init_attr *init_attr)
{ NS(); return NULL; }
STUB_EXPORT int mlx5dv_dek_query(struct mlx5dv_dek *dek, struct mlx5dv_dek_attr *attr)
{ NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_dek_destroy(struct mlx5dv_dek *dek)
{ NS(); return EOPNOTSUPP; }
