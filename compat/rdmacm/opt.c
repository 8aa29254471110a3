// SPDX-License-Identifier: MIT
/*
 * The small rdma_cm calls around an id: rdma_set_option, rdma_event_str, the ports of
 * its addresses and ECE (RDMACM_1.0..1.3). Multicast is mcast.c's.
 *
 * rdma_set_option is what the kernel's ucma_set_option does for it (librdmacm passes the
 * call through): level RDMA_OPTION_ID takes TOS (uint8_t), REUSEADDR (int; the kernel's
 * rdma_set_reuseaddr: an idle id, or turning it on for an id that does not listen),
 * AFONLY (int; an idle or bound id) and ACK_TIMEOUT (uint8_t; RC ids only); level
 * RDMA_OPTION_IB takes RDMA_OPTION_IB_PATH, an array of struct ibv_path_data of which
 * the one flagged GMP | PRIMARY | BIDIRECTIONAL becomes the id's route (an id whose
 * address is resolved; ROUTE_RESOLVED follows on its channel, as the kernel raises it).
 * A wrong length or state is EINVAL, an unknown option or level ENOSYS.
 *
 * ECE (enhanced connection establishment): blue's devices have none (ibv_query_ece
 * answers EOPNOTSUPP) and blue's CM carries no ECE options. librdmacm on such a device
 * reads back the remote options as zero (vendor 0: none), which rdma_get_remote_ece does
 * here; rdma_set_local_ece fails EOPNOTSUPP with a line (the options would not reach
 * the peer); rdma_reject_ece rejects as the kernel's does: REJ reason 35, "vendor option
 * not supported" (a UD id: SIDR_REP status 2).
 */
#include <errno.h>
#include <string.h>
#include <infiniband/ib.h>
#include <infiniband/sa.h>

#include "compat/rdmacm/agent.h"
#include "compat/rdmacm/cma.h"

CMA_EXPORT const char *rdma_event_str(enum rdma_cm_event_type event)
{
	static const char *const names[] = {
		[RDMA_CM_EVENT_ADDR_RESOLVED] = "RDMA_CM_EVENT_ADDR_RESOLVED",
		[RDMA_CM_EVENT_ADDR_ERROR] = "RDMA_CM_EVENT_ADDR_ERROR",
		[RDMA_CM_EVENT_ROUTE_RESOLVED] = "RDMA_CM_EVENT_ROUTE_RESOLVED",
		[RDMA_CM_EVENT_ROUTE_ERROR] = "RDMA_CM_EVENT_ROUTE_ERROR",
		[RDMA_CM_EVENT_CONNECT_REQUEST] = "RDMA_CM_EVENT_CONNECT_REQUEST",
		[RDMA_CM_EVENT_CONNECT_RESPONSE] = "RDMA_CM_EVENT_CONNECT_RESPONSE",
		[RDMA_CM_EVENT_CONNECT_ERROR] = "RDMA_CM_EVENT_CONNECT_ERROR",
		[RDMA_CM_EVENT_UNREACHABLE] = "RDMA_CM_EVENT_UNREACHABLE",
		[RDMA_CM_EVENT_REJECTED] = "RDMA_CM_EVENT_REJECTED",
		[RDMA_CM_EVENT_ESTABLISHED] = "RDMA_CM_EVENT_ESTABLISHED",
		[RDMA_CM_EVENT_DISCONNECTED] = "RDMA_CM_EVENT_DISCONNECTED",
		[RDMA_CM_EVENT_DEVICE_REMOVAL] = "RDMA_CM_EVENT_DEVICE_REMOVAL",
		[RDMA_CM_EVENT_MULTICAST_JOIN] = "RDMA_CM_EVENT_MULTICAST_JOIN",
		[RDMA_CM_EVENT_MULTICAST_ERROR] = "RDMA_CM_EVENT_MULTICAST_ERROR",
		[RDMA_CM_EVENT_ADDR_CHANGE] = "RDMA_CM_EVENT_ADDR_CHANGE",
		[RDMA_CM_EVENT_TIMEWAIT_EXIT] = "RDMA_CM_EVENT_TIMEWAIT_EXIT",
	};

	if ((unsigned int)event < sizeof(names) / sizeof(names[0]) && names[event])
		return names[event];
	return "UNKNOWN EVENT";
}

/* ---- rdma_set_option ------------------------------------------------------ */

/* One RDMA_OPTION_ID option, under the lock; 0 or -errno. */
static int opt_set_id(struct cma_id *c, int name, const void *val, size_t len)
{
	int on;

	switch (name) {
	case RDMA_OPTION_ID_TOS:
		if (len != sizeof(uint8_t))
			goto bad_len;
		c->tos = *(const uint8_t *)val;
		c->tos_set = true;
		return 0;
	case RDMA_OPTION_ID_REUSEADDR:
		if (len != sizeof(int))
			goto bad_len;
		on = *(const int *)val;
		if (!((on && c->state != CMA_LISTEN) || c->state == CMA_IDLE)) {
			cma_log("rdma_set_option: REUSEADDR %s on an id that is %s", on ? "on" : "off",
				c->state == CMA_LISTEN ? "listening" : "bound already");
			return -EINVAL;
		}
		c->reuseaddr = on != 0;
		return 0;
	case RDMA_OPTION_ID_AFONLY:
		if (len != sizeof(int))
			goto bad_len;
		if (c->state != CMA_IDLE && c->state != CMA_ADDR_BOUND) {
			cma_log("rdma_set_option: AFONLY on an id past rdma_bind_addr");
			return -EINVAL;
		}
		c->afonly = *(const int *)val != 0;
		return 0;
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		if (len != sizeof(uint8_t))
			goto bad_len;
		if (c->id.qp_type != IBV_QPT_RC && c->id.qp_type != IBV_QPT_XRC_SEND) {
			cma_log("rdma_set_option: ACK_TIMEOUT is for RC ids (qp_type %d)",
				(int)c->id.qp_type);
			return -EINVAL;
		}
		c->ack_timeout = *(const uint8_t *)val;
		return 0;
	default:
		cma_log("rdma_set_option: RDMA_OPTION_ID option %d is not one of TOS, REUSEADDR, "
			"AFONLY, ACK_TIMEOUT", name);
		return -ENOSYS;
	}
bad_len:
	cma_log("rdma_set_option: RDMA_OPTION_ID option %d: optlen %zu is not the option's size",
		name, len);
	return -EINVAL;
}

/* An SA path record (wire layout, network order) as the id's route. */
static void opt_path_from_record(struct ibv_sa_path_rec *p, const struct ibv_path_record *r)
{
	uint32_t fh = be32toh(r->flowlabel_hoplimit);

	memset(p, 0, sizeof(*p));
	p->dgid = r->dgid;
	p->sgid = r->sgid;
	p->dlid = r->dlid;
	p->slid = r->slid;
	p->flow_label = htobe32((fh >> 8) & 0xfffff);
	p->hop_limit = fh & 0xff;
	p->traffic_class = r->tclass;
	p->reversible = r->reversible_numpath >> 7;
	p->numb_path = r->reversible_numpath & 0x7f;
	p->pkey = r->pkey;
	p->sl = be16toh(r->qosclass_sl) & 0xf;
	p->mtu_selector = r->mtu >> 6;
	p->mtu = r->mtu & 0x3f;
	p->rate_selector = r->rate >> 6;
	p->rate = r->rate & 0x3f;
	p->packet_life_time_selector = r->packetlifetime >> 6;
	p->packet_life_time = r->packetlifetime & 0x3f;
	p->preference = r->preference;
}

/* RDMA_OPTION_IB_PATH, under the lock; 0 or -errno. */
static int opt_set_ib_path(struct cma_id *c, const void *val, size_t len)
{
	const uint32_t want = IBV_PATH_FLAG_GMP | IBV_PATH_FLAG_PRIMARY |
			      IBV_PATH_FLAG_BIDIRECTIONAL;
	const struct ibv_path_data *pd = val, *use = NULL;
	size_t n = len / sizeof(*pd);

	if (!len || len % sizeof(*pd)) {
		cma_log("rdma_set_option: RDMA_OPTION_IB_PATH: optlen %zu is no whole number of "
			"struct ibv_path_data (%zu bytes)", len, sizeof(*pd));
		return -EINVAL;
	}
	for (size_t i = 0; i < n && !use; i++)
		if (pd[i].flags == want)
			use = &pd[i];
	if (!use) {
		cma_log("rdma_set_option: RDMA_OPTION_IB_PATH: no path flagged GMP | PRIMARY | "
			"BIDIRECTIONAL");
		return -EINVAL;
	}
	if (!c->dev || c->state != CMA_ADDR_RESOLVED) {
		cma_log("rdma_set_option: RDMA_OPTION_IB_PATH on an id whose address is not "
			"resolved");
		return -EINVAL;
	}
	opt_path_from_record(&c->path, &use->path);
	c->id.route.path_rec = &c->path;
	c->id.route.num_paths = 1;
	c->state = CMA_ROUTE_RESOLVED;
	/* the kernel raises ROUTE_RESOLVED; a synchronous id's call is its own answer */
	if (c->chan && !c->chan->sync &&
	    !cma_post_event(c, NULL, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL, 0))
		return -ENOMEM;
	return 0;
}

CMA_EXPORT int rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval,
			       size_t optlen)
{
	int ret;

	if (!id) {
		cma_log("rdma_set_option: id is NULL");
		errno = EINVAL;
		return -1;
	}
	if (!optval) {
		cma_log("rdma_set_option: optval is NULL");
		errno = EFAULT;
		return -1;
	}
	cma_lock();
	if (level == RDMA_OPTION_ID) {
		ret = opt_set_id(cma_id_of(id), optname, optval, optlen);
	} else if (level == RDMA_OPTION_IB && optname == RDMA_OPTION_IB_PATH) {
		ret = opt_set_ib_path(cma_id_of(id), optval, optlen);
	} else {
		cma_log("rdma_set_option: level %d option %d is not supported (RDMA_OPTION_ID, "
			"RDMA_OPTION_IB/RDMA_OPTION_IB_PATH are)", level, optname);
		ret = -ENOSYS;
	}
	cma_unlock();
	if (ret) {
		errno = -ret;
		return -1;
	}
	return 0;
}

/* ---- ports ---------------------------------------------------------------- */

static __be16 opt_port_of(const struct sockaddr *sa)
{
	switch (sa->sa_family) {
	case AF_INET:
		return ((const struct sockaddr_in *)sa)->sin_port;
	case AF_INET6:
		return ((const struct sockaddr_in6 *)sa)->sin6_port;
	case AF_IB:
		/* the service ID's low 16 bits */
		return htobe16((uint16_t)be64toh(((const struct sockaddr_ib *)sa)->sib_sid));
	default:
		return 0;
	}
}

CMA_EXPORT __be16 rdma_get_src_port(struct rdma_cm_id *id)
{
	return opt_port_of(&id->route.addr.src_addr);
}

CMA_EXPORT __be16 rdma_get_dst_port(struct rdma_cm_id *id)
{
	return opt_port_of(&id->route.addr.dst_addr);
}

/* ---- ECE -------------------------------------------------------------------- */

CMA_EXPORT int rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	if (!id || id->qp || !ece || !ece->vendor_id || ece->comp_mask) {
		cma_log("rdma_set_local_ece: %s", !id ? "id is NULL" :
			id->qp ? "the id has a QP (ECE is for external QPs)" :
			!ece ? "ece is NULL" : !ece->vendor_id ? "vendor_id 0" : "comp_mask not 0");
		errno = EINVAL;
		return -1;
	}
	cma_log("rdma_set_local_ece: blue's devices and CM have no ECE options (vendor 0x%x "
		"not sent)", ece->vendor_id);
	errno = EOPNOTSUPP;
	return -1;
}

CMA_EXPORT int rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	if (!id || id->qp || !ece) {
		cma_log("rdma_get_remote_ece: %s", !id ? "id is NULL" :
			id->qp ? "the id has a QP (ECE is for external QPs)" : "ece is NULL");
		errno = EINVAL;
		return -1;
	}
	/* blue's CM carries none: what librdmacm reads back when the peer sent none */
	memset(ece, 0, sizeof(*ece));
	return 0;
}

/* As rdma_reject, with the kernel's reason for it: REJ 35, vendor option not supported
 * (a UD id's SIDR_REP has no such status: status 2, rejected, as rdma_reject). */
CMA_EXPORT int rdma_reject_ece(struct rdma_cm_id *uid, const void *private_data,
			       uint8_t private_data_len)
{
	/* IBA 12.6.7: REJ 35, vendor option not supported: ECE is not negotiated here */
	return cma_reject(uid, BLUE_IBCM_REJ_VENDOR_OPTION_NOT_SUPPORTED, private_data,
			  private_data_len, "rdma_reject_ece");
}
