// SPDX-License-Identifier: MIT
/*
 * libmlx5.so.1 stand-in. perftest only takes the mlx5dv path on a Mellanox device, and
 * blue's devices report another vendor, so these answer "not supported" if reached.
 */
#include <stdint.h>

#include "compat/stub_log.h"

#define NS() STUB_NOTSUP("libmlx5", "not a Mellanox device; use plain verbs")

STUB_EXPORT void *mlx5dv_open_device(void *dev, void *attr) { (void)dev; (void)attr; NS(); return NULL; }
STUB_EXPORT void *mlx5dv_create_qp(void *ctx, void *a, void *b) { (void)ctx; (void)a; (void)b; NS(); return NULL; }
STUB_EXPORT void *mlx5dv_qp_ex_from_ibv_qp_ex(void *qp) { (void)qp; NS(); return NULL; }
STUB_EXPORT int mlx5dv_devx_general_cmd(void *ctx, const void *in, size_t inlen, void *out,
					size_t outlen)
{ (void)ctx; (void)in; (void)inlen; (void)out; (void)outlen; NS(); return EOPNOTSUPP; }
STUB_EXPORT void *mlx5dv_create_mkey(void *attr) { (void)attr; NS(); return NULL; }
STUB_EXPORT int mlx5dv_destroy_mkey(void *mkey) { (void)mkey; NS(); return EOPNOTSUPP; }
STUB_EXPORT int mlx5dv_crypto_login(void *ctx, void *attr) { (void)ctx; (void)attr; NS(); return EOPNOTSUPP; }
STUB_EXPORT void *mlx5dv_dek_create(void *ctx, void *attr) { (void)ctx; (void)attr; NS(); return NULL; }
STUB_EXPORT int mlx5dv_dek_destroy(void *dek) { (void)dek; NS(); return EOPNOTSUPP; }
