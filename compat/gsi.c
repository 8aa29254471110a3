// SPDX-License-Identifier: MIT
/*
 * The GSI (QP1) for our librdmacm's CM agent (compat/rdmacm/agent.h): a normal compat
 * ibv_qp (ibv_modify_qp, ibv_post_send/recv, ibv_destroy_qp all work on it) whose QPN is
 * exactly 1, so blue's XDP program steers the IB CM's MADs (BTH dqpn 1) to it. The
 * kernel's ib_mad owns QP1 on a real device; over blue one process per device does.
 * In daemon mode QP1 is shared by the processes of the device (runtime/gsi_hub.h): the
 * QP is this process's member, its CM's comm IDs must start with the byte
 * blue_compat_gsi_id_prefix() gives, and the services it listens on are told to the
 * daemon with blue_compat_gsi_listen(). In library mode both are no-ops.
 * Exported under the private version node BLUE_PRIVATE_1.0 (compat/libibverbs.map):
 * rdma-core's libibverbs has no such call, and nothing but our librdmacm uses it.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "compat/compat.h"
#include "runtime/mgr_client.h"
#include "runtime/qp.h"

struct ibv_qp *blue_compat_create_gsi_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
int blue_compat_gsi_id_prefix(struct ibv_qp *qp);
int blue_compat_gsi_listen(struct ibv_qp *qp, uint64_t service_id, int on);

/**
 * blue_compat_create_gsi_qp() - ibv_create_qp() for QP1.
 * @pd: the PD (its context is the device)
 * @attr: as ibv_create_qp's; qp_type must be IBV_QPT_UD, no SRQ; caps are written back
 * Return: the QP (qp_num 1), or NULL with errno: EINVAL (a NULL argument, not UD, an
 * SRQ), EADDRINUSE (a live process, this one included, holds QP1 of this device).
 */
BV_EXPORT struct ibv_qp *blue_compat_create_gsi_qp(struct ibv_pd *pd,
						   struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ex;
	struct ibv_qp *qp;

	if (!pd || !attr) {
		bv_log("blue_compat_create_gsi_qp: %s is NULL", pd ? "qp_init_attr" : "pd");
		return bv_null(EINVAL);
	}
	if (attr->qp_type != IBV_QPT_UD || attr->srq) {
		bv_log("blue_compat_create_gsi_qp: QP1 is a UD QP with its own receive queue "
		       "(qp_type %d, srq %s)", attr->qp_type, attr->srq ? "set" : "NULL");
		return bv_null(EINVAL);
	}
	memset(&ex, 0, sizeof(ex));
	memcpy(&ex, attr, sizeof(*attr));
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd;
	qp = bv_qp_create(pd->context, &ex, true);
	if (qp)
		attr->cap = ex.cap;
	return qp;
}

/**
 * blue_compat_gsi_id_prefix() - the first byte every local comm ID (and SIDR request
 * ID) of this QP1's IB CM must have, so that the daemon hands the replies to it.
 * Return: 1..255 in daemon mode, 0 in library mode (any ID), -EINVAL for a NULL @qp.
 */
BV_EXPORT int blue_compat_gsi_id_prefix(struct ibv_qp *qp)
{
	if (!qp || !bv_qp(qp)->bqp)
		return -EINVAL;
	return bv_qp(qp)->bqp->gsi_prefix;
}

/**
 * blue_compat_gsi_listen() - REQs and SIDR_REQs for @service_id to this process (@on),
 * or no longer. Return: 0 (library mode: always), -EADDRINUSE (another process on the
 * device listens on it), or another -errno after a message.
 */
BV_EXPORT int blue_compat_gsi_listen(struct ibv_qp *qp, uint64_t service_id, int on)
{
	struct blue_qp *bqp;

	if (!qp || !bv_qp(qp)->bqp)
		return -EINVAL;
	bqp = bv_qp(qp)->bqp;
	if (!bqp->gsi_prefix)
		return 0;
	return blue__mgr_gsi_listen(bqp, service_id, on != 0);
}
