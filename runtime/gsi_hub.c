// SPDX-License-Identifier: MIT
/* The shared GSI of blue-manager (gsi_hub.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cm_mad.h"
#include "runtime/codec.h"
#include "runtime/device.h"
#include "runtime/gsi_hub.h"
#include "runtime/log.h"
#include "runtime/qp.h"

/* The MAD's common header (cm_mad.h) and where each message names its receiver. */
#define MAD_CLASS_OFF	1
#define MAD_ATTR_OFF	16
#define MAD_DATA_OFF	24
#define CM_CLASS	0x07
#define SID_OFF		(MAD_DATA_OFF + 8)	/* REQ and SIDR_REQ: ServiceID */
#define REMOTE_ID_OFF	(MAD_DATA_OFF + 4)	/* REP ... APR: RemoteCommunicationID */
#define REQUEST_ID_OFF	MAD_DATA_OFF		/* SIDR_REP: RequestID */

static uint16_t be16_at(const uint8_t *b)
{
	return (uint16_t)(b[0] << 8 | b[1]);
}

static uint32_t be32_at(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static uint64_t be64_at(const uint8_t *b)
{
	return (uint64_t)be32_at(b) << 32 | be32_at(b + 4);
}

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

struct blue_qp *blue__gsi_pick(const struct blue_gsi_hub *hub, const struct blue_pkt *p)
{
	const uint8_t *m = p->payload;
	uint32_t id;

	if (p->payload_len < BLUE_IBCM_MAD_SIZE || m[MAD_CLASS_OFF] != CM_CLASS)
		return NULL;
	switch (be16_at(m + MAD_ATTR_OFF)) {
	case BLUE_IBCM_ATTR_REQ:
	case BLUE_IBCM_ATTR_SIDR_REQ:
		return listener(hub, be64_at(m + SID_OFF));
	case BLUE_IBCM_ATTR_SIDR_REP:
		id = be32_at(m + REQUEST_ID_OFF);
		break;
	case BLUE_IBCM_ATTR_MRA:
	case BLUE_IBCM_ATTR_REJ:
	case BLUE_IBCM_ATTR_REP:
	case BLUE_IBCM_ATTR_RTU:
	case BLUE_IBCM_ATTR_DREQ:
	case BLUE_IBCM_ATTR_DREP:
	case BLUE_IBCM_ATTR_LAP:
	case BLUE_IBCM_ATTR_APR:
		id = be32_at(m + REMOTE_ID_OFF);
		break;
	default:
		return NULL;
	}
	return hub->member[id >> 24];	/* [0] is always NULL */
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
		if (!hub->nmembers) {
			blue__gsi_slot_release(ctx);
			ctx->gsi_hub = NULL;
			free(hub);
		}
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
	if (--hub->nmembers)
		return;
	blue__gsi_slot_release(ctx);
	ctx->gsi_hub = NULL;
	free(hub);
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
