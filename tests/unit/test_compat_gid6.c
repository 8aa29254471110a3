// SPDX-License-Identifier: MIT
/*
 * The GID types the compatibility layer reports, as rxe lists them (which is what
 * ibv_devinfo, perftest --ipv6's GID search and rdma-core's tests read): index 0 the
 * fe80 default GID as RoCE v1, index 1 the IPv4-mapped GID and 2.. the netdev's IPv6
 * addresses as RoCE v2, which is what blue sends for them. Seen against rxe in the
 * interop guest: rxe0 lists fd00:c9:4d::10 as "RoCE v2"; blue listed fd00:c9:4d::1 as
 * "RoCE v1".
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/device.h"
#include "tests/unit/test_compat_fx.h"

/* rdma-core's private declaration (driver.h); IBVERBS_PRIVATE_34 */
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       int *type);

static const uint8_t A6[16] = { 0xfd, 0x00, 0x00, 0xc9, 0, 0x4d, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };

static void quiet(void)
{
	setenv("BLUE_LOG", "0", 1);
}

Test(compat_gid6, ipv6_gid_is_roce_v2, .init = quiet)
{
	struct cx_fx fx;
	struct ibv_gid_entry ge;
	union ibv_gid gid;
	int type = -1;

	cx_init_noqp(&fx);
	/* the IPv6 address a netdev would have, in the table the queries answer from */
	cr_assert_eq(blue__gid_add6(bv_ctx(fx.a.ctx)->attrs.gid, A6), 0);
	cr_assert_eq(ibv_query_gid(fx.a.ctx, 1, 2, &gid), 0);
	cr_assert_eq(memcmp(gid.raw, A6, 16), 0, "index 2 is the IPv6 address");
	cr_assert_eq(ibv_query_gid_type(fx.a.ctx, 1, 2, &type), 0);
	cr_assert_eq(type, 1, "index 2: type %d, want RoCE v2 (IBV_GID_TYPE_SYSFS_ROCE_V2 = 1)", type);
	cr_assert_eq(ibv_query_gid_ex(fx.a.ctx, 1, 2, &ge, 0), 0);
	cr_assert_eq(ge.gid_type, IBV_GID_TYPE_ROCE_V2, "gid_ex type %u", ge.gid_type);
	/* the others as before: 0 RoCE v1, 1 RoCE v2 */
	cr_assert_eq(ibv_query_gid_type(fx.a.ctx, 1, 0, &type), 0);
	cr_assert_eq(type, 0);
	cr_assert_eq(ibv_query_gid_type(fx.a.ctx, 1, 1, &type), 0);
	cr_assert_eq(type, 1);
	cx_fini(&fx);
}
