// SPDX-License-Identifier: MIT
/*
 * IBVERBS_PRIVATE_34: the calls rdma-core's libibverbs offers its provider libraries
 * (libmlx5-rdmav34.so and the like; rdma-core's private <infiniband/driver.h>), which a
 * provider built against rdma-core 44 imports. blue loads no providers (its devices are
 * its own), so a provider that gets loaded anyway finds these, and each fails cleanly.
 *
 * The ibv_cmd_* calls and execute_ioctl() marshal a kernel uverbs command and return 0
 * or a positive errno. blue has no uverbs device to send one to: each returns
 * EOPNOTSUPP. They are defined without parameters: none is read, and on the SysV x86-64
 * and AArch64 ABIs the caller owns its arguments, so a callee may ignore them.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "compat/unsup.h"

#define WHY_CMD "no kernel uverbs device behind blue's devices"
#define CMD_STUB(name) BV_EXPORT int name(void) { return BV_UNSUP_INT(#name, WHY_CMD); }

CMD_STUB(ibv_cmd_advise_mr)
CMD_STUB(ibv_cmd_alloc_dm)
CMD_STUB(ibv_cmd_alloc_mw)
CMD_STUB(ibv_cmd_alloc_pd)
CMD_STUB(ibv_cmd_attach_mcast)
CMD_STUB(ibv_cmd_close_xrcd)
CMD_STUB(ibv_cmd_create_ah)
CMD_STUB(ibv_cmd_create_counters)
CMD_STUB(ibv_cmd_create_cq)
CMD_STUB(ibv_cmd_create_cq_ex)
CMD_STUB(ibv_cmd_create_flow)
CMD_STUB(ibv_cmd_create_flow_action_esp)
CMD_STUB(ibv_cmd_create_qp)
CMD_STUB(ibv_cmd_create_qp_ex)
CMD_STUB(ibv_cmd_create_qp_ex2)
CMD_STUB(ibv_cmd_create_rwq_ind_table)
CMD_STUB(ibv_cmd_create_srq)
CMD_STUB(ibv_cmd_create_srq_ex)
CMD_STUB(ibv_cmd_create_wq)
CMD_STUB(ibv_cmd_dealloc_mw)
CMD_STUB(ibv_cmd_dealloc_pd)
CMD_STUB(ibv_cmd_dereg_mr)
CMD_STUB(ibv_cmd_destroy_ah)
CMD_STUB(ibv_cmd_destroy_counters)
CMD_STUB(ibv_cmd_destroy_cq)
CMD_STUB(ibv_cmd_destroy_flow)
CMD_STUB(ibv_cmd_destroy_flow_action)
CMD_STUB(ibv_cmd_destroy_qp)
CMD_STUB(ibv_cmd_destroy_rwq_ind_table)
CMD_STUB(ibv_cmd_destroy_srq)
CMD_STUB(ibv_cmd_destroy_wq)
CMD_STUB(ibv_cmd_detach_mcast)
CMD_STUB(ibv_cmd_free_dm)
CMD_STUB(ibv_cmd_get_context)
CMD_STUB(ibv_cmd_modify_cq)
CMD_STUB(ibv_cmd_modify_flow_action_esp)
CMD_STUB(ibv_cmd_modify_qp)
CMD_STUB(ibv_cmd_modify_qp_ex)
CMD_STUB(ibv_cmd_modify_srq)
CMD_STUB(ibv_cmd_modify_wq)
CMD_STUB(ibv_cmd_open_qp)
CMD_STUB(ibv_cmd_open_xrcd)
CMD_STUB(ibv_cmd_poll_cq)
CMD_STUB(ibv_cmd_post_recv)
CMD_STUB(ibv_cmd_post_send)
CMD_STUB(ibv_cmd_post_srq_recv)
CMD_STUB(ibv_cmd_query_context)
CMD_STUB(ibv_cmd_query_device_any)
CMD_STUB(ibv_cmd_query_mr)
CMD_STUB(ibv_cmd_query_port)
CMD_STUB(ibv_cmd_query_qp)
CMD_STUB(ibv_cmd_query_srq)
CMD_STUB(ibv_cmd_read_counters)
CMD_STUB(ibv_cmd_reg_dm_mr)
CMD_STUB(ibv_cmd_reg_dmabuf_mr)
CMD_STUB(ibv_cmd_reg_mr)
CMD_STUB(ibv_cmd_req_notify_cq)
CMD_STUB(ibv_cmd_rereg_mr)
CMD_STUB(ibv_cmd_resize_cq)
CMD_STUB(execute_ioctl)

/*
 * __ioctl_final_num_attrs(num_attrs, link): how many attributes a command buffer chain
 * holds, which a provider's DECLARE_COMMAND_BUFFER_LINK sizes its stack array by before
 * execute_ioctl(). That call fails here, so this buffer's own count is enough.
 */
BV_EXPORT unsigned int __ioctl_final_num_attrs(unsigned int num_attrs, void *link)
{
	(void)link;
	return num_attrs;
}

/* rdma-core lets a provider destroy objects of a disassociated device; none here */
BV_EXPORT bool verbs_allow_disassociate_destroy;

/* A provider's messages (verbs_err() and friends) go to libblue's log, as a line. */
BV_EXPORT void __verbs_log(void *ctx, uint32_t level, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	(void)ctx;
	(void)level;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	bv_log("provider: %s", line);
}

#define WHY_PROV "blue loads no rdma-core provider"

/* a provider's constructor registers its driver; blue never asks it for a device */
BV_EXPORT void verbs_register_driver_34(const void *ops)
{
	(void)ops;
	BV_UNSUP_VOID(__func__, WHY_PROV);
}

BV_EXPORT void *_verbs_init_and_alloc_context(void *device, int cmd_fd, size_t alloc_size,
					      void *context_offset, uint32_t driver_id)
{
	(void)device; (void)cmd_fd; (void)alloc_size; (void)context_offset; (void)driver_id;
	return BV_UNSUP_NULL(__func__, WHY_PROV);
}

BV_EXPORT void *verbs_open_device(void *device, void *private_data)
{
	(void)device; (void)private_data;
	return BV_UNSUP_NULL(__func__, WHY_PROV);
}

BV_EXPORT void verbs_uninit_context(void *context)
{
	(void)context;
	BV_UNSUP_VOID(__func__, WHY_PROV);
}

BV_EXPORT void verbs_set_ops(void *vctx, const void *ops)
{
	(void)vctx; (void)ops;
	BV_UNSUP_VOID(__func__, WHY_PROV);
}

BV_EXPORT void verbs_init_cq(void *cq, void *context, void *channel, void *cq_context)
{
	(void)cq; (void)context; (void)channel; (void)cq_context;
	BV_UNSUP_VOID(__func__, WHY_PROV);
}

/* a provider reads its device's sysfs files through this; blue's have no sysfs dir */
BV_EXPORT int ibv_read_ibdev_sysfs_file(char *buf, size_t size, void *sysfs_dev,
					const char *fnfmt, ...)
{
	(void)buf; (void)size; (void)sysfs_dev; (void)fnfmt;
	return BV_UNSUP_M1(__func__, WHY_PROV);
}
