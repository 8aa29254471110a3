// SPDX-License-Identifier: MIT
/*
 * Multicast for UD QPs: ibv_attach_mcast / ibv_detach_mcast over libblue's (runtime/
 * mcast.c has the kernel's answers: EINVAL for a non-UD QP, a non-multicast GID or a
 * group not attached; 0 for a QP attached twice; ENOMEM past the device's limits).
 */
#include <string.h>

#include "compat/compat.h"

/* One call, under the context's lock (the engine reads the groups on its passes). */
static int mcast_call(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid, bool attach)
{
	const char *who = attach ? "ibv_attach_mcast" : "ibv_detach_mcast";
	union blue_gid g;
	struct bv_context *c;
	int err;

	if (!qp || !gid) {
		bv_log("%s: %s is NULL", who, qp ? "gid" : "qp");
		return bv_ret(EINVAL);
	}
	memcpy(g.raw, gid->raw, sizeof(g.raw));
	c = bv_ctx(qp->context);
	bv_lock(c);
	err = attach ? blue_attach_mcast(bv_qp(qp)->bqp, &g, lid) :
		       blue_detach_mcast(bv_qp(qp)->bqp, &g, lid);
	bv_unlock(c);
	return err ? bv_ret(err) : 0;
}

BV_EXPORT int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return mcast_call(qp, gid, lid, true);
}

BV_EXPORT int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return mcast_call(qp, gid, lid, false);
}
