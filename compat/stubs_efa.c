// SPDX-License-Identifier: MIT
/* libefa.so.1 stand-in: perftest uses efadv for SRD on Amazon devices only. */
#include <stdint.h>

#include "compat/stub_log.h"

#define NS() STUB_NOTSUP("libefa", "not an EFA device; use plain verbs")

STUB_EXPORT int efadv_query_device(void *ctx, void *attr, uint32_t inlen)
{ (void)ctx; (void)attr; (void)inlen; NS(); return EOPNOTSUPP; }
STUB_EXPORT void *efadv_create_qp_ex(void *ctx, void *attr, void *efa_attr, uint32_t inlen)
{ (void)ctx; (void)attr; (void)efa_attr; (void)inlen; NS(); return NULL; }
