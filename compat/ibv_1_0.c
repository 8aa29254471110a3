// SPDX-License-Identifier: MIT
/*
 * The IBVERBS_1.0 symbols: the libibverbs ABI of 2006, before struct ibv_context grew
 * its ops table. rdma-core still exports each verb of that time at IBVERBS_1.0 beside
 * its IBVERBS_1.1 default, behind wrapper structs (struct ibv_device_1_0 and friends).
 * A binary binds to them only if it was linked against that libibverbs; every program
 * linked since binds the 1.1 versions. blue does not carry the 1.0 wrappers: each call
 * fails cleanly, and the first, ibv_get_device_list@IBVERBS_1.0, finds no device, so a
 * 1.0 program stops there saying so, before it could hold a 1.0 object.
 *
 * Arguments are the 1.0 structs, which blue never reads; they are not declared (see
 * ibv_private.c for why a callee may ignore its arguments).
 */
#include "compat/symver.h"
#include "compat/unsup.h"

#define WHY_1_0 "the IBVERBS_1.0 ABI of 2006 is not served; relink against IBVERBS_1.1"
/* bv10_NAME is exported as ibv_NAME@IBVERBS_1.0 */
#define AT_1_0(name) SYMVER(bv10_##name, "ibv_" #name "@IBVERBS_1.0")

/* one stub per return type: NULL, an errno int, -1 (the two event calls), nothing */
#define PTR_1_0(name) BV_EXPORT void *bv10_##name(void) \
	{ return BV_UNSUP_NULL("ibv_" #name "@IBVERBS_1.0", WHY_1_0); } AT_1_0(name);
#define INT_1_0(name) BV_EXPORT int bv10_##name(void) \
	{ return BV_UNSUP_INT("ibv_" #name "@IBVERBS_1.0", WHY_1_0); } AT_1_0(name);
#define M1_1_0(name) BV_EXPORT int bv10_##name(void) \
	{ return BV_UNSUP_M1("ibv_" #name "@IBVERBS_1.0", WHY_1_0); } AT_1_0(name);
#define VOID_1_0(name) BV_EXPORT void bv10_##name(void) \
	{ BV_UNSUP_VOID("ibv_" #name "@IBVERBS_1.0", WHY_1_0); } AT_1_0(name);

BV_EXPORT void **bv10_get_device_list(int *num_devices)
{
	if (num_devices)
		*num_devices = 0;
	return BV_UNSUP_NULL("ibv_get_device_list@IBVERBS_1.0", WHY_1_0);
}
AT_1_0(get_device_list);

BV_EXPORT __be64 bv10_get_device_guid(void)
{
	BV_UNSUP_SAY("ibv_get_device_guid@IBVERBS_1.0", WHY_1_0);
	errno = EOPNOTSUPP;
	return 0;
}
AT_1_0(get_device_guid);

VOID_1_0(free_device_list)
PTR_1_0(get_device_name)
PTR_1_0(open_device)
INT_1_0(close_device)
M1_1_0(get_async_event)
VOID_1_0(ack_async_event)
INT_1_0(query_device)
INT_1_0(query_port)
INT_1_0(query_gid)
INT_1_0(query_pkey)
PTR_1_0(alloc_pd)
INT_1_0(dealloc_pd)
PTR_1_0(reg_mr)
INT_1_0(dereg_mr)
PTR_1_0(create_cq)
INT_1_0(resize_cq)
INT_1_0(destroy_cq)
M1_1_0(get_cq_event)
VOID_1_0(ack_cq_events)
PTR_1_0(create_srq)
INT_1_0(modify_srq)
INT_1_0(query_srq)
INT_1_0(destroy_srq)
PTR_1_0(create_qp)
INT_1_0(query_qp)
INT_1_0(modify_qp)
INT_1_0(destroy_qp)
PTR_1_0(create_ah)
INT_1_0(destroy_ah)
INT_1_0(attach_mcast)
INT_1_0(detach_mcast)

/*
 * ibv_register_driver@IBVERBS_1.1 (not a default: rdma-core keeps it for old provider
 * libraries, which call it from their constructor). blue loads no provider and its
 * devices are its own, so the registration is noted and ignored.
 */
BV_EXPORT void bv_register_driver_1_1(const char *name, void *init_func)
{
	(void)init_func;
	BV_SAY_ONCE("ibv_register_driver: provider %s ignored (blue loads no provider)",
		    name ? name : "(unnamed)");
}
SYMVER(bv_register_driver_1_1, "ibv_register_driver@IBVERBS_1.1");
