// SPDX-License-Identifier: MIT
/*
 * Importing another process's verbs objects (IBVERBS_1.10, 1.13): rdma-core opens a
 * context on a shared uverbs command fd and looks objects up by their kernel handle.
 * blue's objects live in the process that made them, with no kernel handle, so there
 * is nothing to import: each import is NULL with errno, each unimport says so.
 */
#include "compat/unsup.h"

#define WHY_IMPORT "blue's objects have no kernel handle to share between processes"

BV_EXPORT struct ibv_context *ibv_import_device(int cmd_fd)
{
	(void)cmd_fd;
	return BV_UNSUP_NULL(__func__, WHY_IMPORT);
}

BV_EXPORT struct ibv_pd *ibv_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	(void)context; (void)pd_handle;
	return BV_UNSUP_NULL(__func__, WHY_IMPORT);
}

BV_EXPORT struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	(void)pd; (void)mr_handle;
	return BV_UNSUP_NULL(__func__, WHY_IMPORT);
}

BV_EXPORT struct ibv_dm *ibv_import_dm(struct ibv_context *context, uint32_t dm_handle)
{
	(void)context; (void)dm_handle;
	return BV_UNSUP_NULL(__func__, WHY_IMPORT);
}

/* nothing was imported, so nothing is released */
BV_EXPORT void ibv_unimport_pd(struct ibv_pd *pd)
{
	(void)pd;
	BV_UNSUP_VOID(__func__, WHY_IMPORT);
}

BV_EXPORT void ibv_unimport_mr(struct ibv_mr *mr)
{
	(void)mr;
	BV_UNSUP_VOID(__func__, WHY_IMPORT);
}

BV_EXPORT void ibv_unimport_dm(struct ibv_dm *dm)
{
	(void)dm;
	BV_UNSUP_VOID(__func__, WHY_IMPORT);
}
