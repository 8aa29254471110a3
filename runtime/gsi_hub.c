// SPDX-License-Identifier: MIT
/* The shared GSI of blue-manager (gsi_hub.h). */
#include <errno.h>
#include <stdlib.h>

#include "runtime/cm_mad.h"
#include "runtime/codec.h"
#include "runtime/device.h"
#include "runtime/gsi_hub.h"
#include "runtime/log.h"
#include "runtime/qp.h"

static struct blue_qp *listener(const struct blue_gsi_hub *hub, uint64_t sid)
{
	for (unsigned int i = 0; i < hub->nlisten; i++)
		if (hub->listen[i].service_id == sid)
			return hub->listen[i].qp;
	for (unsigned int i = 1; i <= BLUE_GSI_MAX_MEMBERS; i++)
		if (hub->member[i])
			return hub->member[i];	/* its IB CM says nobody listens */
	return NULL;
}

/* The codec (cm_mad.h) checks the MAD as the members' IB CMs would, and finds the fields. */
struct blue_qp *blue__gsi_pick(const struct blue_gsi_hub *hub, const struct blue_pkt *p)
{
	struct blue_ibcm_msg m;
	uint32_t id;

	if (blue__ibcm_decode(p->payload, p->payload_len, &m) != BLUE_IBCM_OK)
		return NULL;
	switch (m.hdr.attr_id) {
	case BLUE_IBCM_ATTR_REQ:
		return listener(hub, m.req.service_id);
	case BLUE_IBCM_ATTR_SIDR_REQ:
		return listener(hub, m.sidr_req.service_id);
	case BLUE_IBCM_ATTR_SIDR_REP:
		id = m.sidr_rep.request_id;	/* the requester's local comm ID */
		break;
	case BLUE_IBCM_ATTR_MRA:
		id = m.mra.remote_comm_id;
		break;
	case BLUE_IBCM_ATTR_REJ:
		id = m.rej.remote_comm_id;
		break;
	case BLUE_IBCM_ATTR_REP:
		id = m.rep.remote_comm_id;
		break;
	case BLUE_IBCM_ATTR_RTU:
		id = m.rtu.remote_comm_id;
		break;
	case BLUE_IBCM_ATTR_DREQ:
		id = m.dreq.remote_comm_id;
		break;
	case BLUE_IBCM_ATTR_DREP:
		id = m.drep.remote_comm_id;
		break;
	case BLUE_IBCM_ATTR_LAP:
		id = m.lap.remote_comm_id;
		break;
	case BLUE_IBCM_ATTR_APR:
		id = m.apr.remote_comm_id;
		break;
	default:
		return NULL;
	}
	return hub->member[id >> 24];	/* [0] is always NULL */
}

/* The hub goes with its last member (or with a first one that could not be made). */
static void hub_put_if_empty(struct blue_context *ctx)
{
	if (ctx->gsi_hub->nmembers)
		return;
	blue__gsi_slot_release(ctx);
	free(ctx->gsi_hub);
	ctx->gsi_hub = NULL;
}

struct blue_qp *blue__gsi_member_create(struct blue_pd *pd, struct blue_qp_init_attr *attr)
{
	struct blue_context *ctx = pd->ctx;
	struct blue_gsi_hub *hub = ctx->gsi_hub;
	struct blue_qp *qp;
	unsigned int prefix;
	int err;

	if (attr->qp_type != BLUE_QPT_UD || attr->srq) {
		blue__logf("create_qp: the GSI (QP1) is a UD QP with its own receive queue");
		errno = EINVAL;
		return NULL;
	}
	if (!hub) {
		hub = calloc(1, sizeof(*hub));
		if (!hub) {
			errno = ENOMEM;
			return NULL;
		}
		err = blue__gsi_slot_claim(ctx);
		if (err) {
			free(hub);
			errno = -err;
			return NULL;
		}
		ctx->gsi_hub = hub;
	}
	for (prefix = 1; prefix <= BLUE_GSI_MAX_MEMBERS && hub->member[prefix]; prefix++)
		;
	if (prefix > BLUE_GSI_MAX_MEMBERS) {
		blue__logf("create_qp: the GSI (QP1) of this device has %u members, the most "
			   "it takes", BLUE_GSI_MAX_MEMBERS);
		errno = EMFILE;
		return NULL;
	}
	qp = blue_create_qp(pd, attr);
	if (!qp) {
		err = errno;
		hub_put_if_empty(ctx);
		errno = err;
		return NULL;
	}
	qp->gsi = true;
	qp->gsi_prefix = (uint8_t)prefix;
	hub->member[prefix] = qp;
	hub->nmembers++;
	return qp;
}

void blue__gsi_member_gone(struct blue_qp *qp)
{
	struct blue_context *ctx = qp->ctx;
	struct blue_gsi_hub *hub = ctx->gsi_hub;
	unsigned int i = 0;

	if (!hub || hub->member[qp->gsi_prefix] != qp)
		return;
	while (i < hub->nlisten) {
		if (hub->listen[i].qp == qp)
			hub->listen[i] = hub->listen[--hub->nlisten];
		else
			i++;
	}
	hub->member[qp->gsi_prefix] = NULL;
	hub->nmembers--;
	hub_put_if_empty(ctx);
}

int blue__gsi_listen(struct blue_qp *qp, uint64_t service_id, int on)
{
	struct blue_gsi_hub *hub = qp->ctx->gsi_hub;
	unsigned int i;

	if (!qp->gsi || !hub) {
		blue__logf("gsi_listen: QP 0x%x is not a GSI (QP1)", qp->qpn);
		return -EINVAL;
	}
	for (i = 0; i < hub->nlisten; i++)
		if (hub->listen[i].service_id == service_id)
			break;
	if (!on) {
		if (i < hub->nlisten && hub->listen[i].qp == qp)
			hub->listen[i] = hub->listen[--hub->nlisten];
		return 0;
	}
	if (i < hub->nlisten) {
		if (hub->listen[i].qp == qp)
			return 0;
		blue__logf("gsi_listen: service ID 0x%llx is listened on by another process "
			   "on this device", (unsigned long long)service_id);
		return -EADDRINUSE;
	}
	if (hub->nlisten == BLUE_GSI_MAX_LISTEN) {
		blue__logf("gsi_listen: %u service IDs listened on is the device's limit",
			   BLUE_GSI_MAX_LISTEN);
		return -ENOSPC;
	}
	hub->listen[hub->nlisten].service_id = service_id;
	hub->listen[hub->nlisten].qp = qp;
	hub->nlisten++;
	return 0;
}
