// SPDX-License-Identifier: MIT
/*
 * Multicast on RoCE (RDMACM_1.0 rdma_join_multicast, rdma_leave_multicast; RDMACM_1.2
 * rdma_join_multicast_ex): what the kernel's cma_iboe_join_multicast and librdmacm's
 * rdma_join_multicast2 / ucma_process_join / rdma_leave_multicast do between them.
 *
 * RoCE has no SA to ask: the group's MGID is the IP group address as a GID (IPv4-mapped
 * ::ffff:a.b.c.d for AF_INET, the address itself for AF_INET6), and the join completes
 * at once with RDMA_CM_EVENT_MULTICAST_JOIN on the id's channel, whose param.ud holds
 * the address vector to send to the group (is_global, grh.dgid the MGID, grh.sgid_index
 * the id's source GID, hop_limit 64, no LID), qp_num 0xFFFFFF, the Q_Key
 * (RDMA_UDP_QKEY for RDMA_PS_UDP, 0 otherwise, as the kernel's record has it) and
 * private_data the join's context. When that event is handed out (rdma_get_cm_event,
 * or a synchronous id's own wait), the id's QP, if it has one then, is attached to the
 * group (ibv_attach_mcast), as ucma_process_join does; a failed attach turns the event
 * into RDMA_CM_EVENT_MULTICAST_ERROR. Leaving detaches it and waits for the group's
 * handed-out events to be acked; destroying the id leaves its groups.
 *
 * Two differences from the kernel, both on purpose: an IPv6 group is joined (the
 * kernel's cma refuses IPv6 groups on RoCEv2 with ENOTSUPP; blue's verbs serve them),
 * and a send-only full member (RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER) is accepted as
 * the kernel accepts it on RoCE (it sends no IGMP report for it), but the QP's attach
 * still joins the group on the netdev, since blue's verbs join at attach (rxe's
 * attach programs the netdev's MAC filter the same way).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <blue/mcast.h>
#include "compat/rdmacm/cma.h"

#define CMA_MC_HOP_LIMIT	64	/* the kernel's IPV6_DEFAULT_HOPLIMIT for RoCEv2 groups */

/* the address bytes of @sa and their length (0: not AF_INET/AF_INET6) */
static size_t sa_addr(const struct sockaddr *sa, const void **a)
{
	if (sa->sa_family == AF_INET) {
		*a = &((const struct sockaddr_in *)sa)->sin_addr;
		return 4;
	}
	if (sa->sa_family == AF_INET6) {
		*a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		return 16;
	}
	return 0;
}

static bool same_group(const struct sockaddr *x, const struct sockaddr *y)
{
	const void *a, *b;
	size_t n = sa_addr(x, &a);

	return x->sa_family == y->sa_family && n && sa_addr(y, &b) == n && !memcmp(a, b, n);
}

/* The checks of a join (the kernel's rdma_join_multicast and ours); 0 or an errno. */
static int join_check(const struct cma_id *id, const struct sockaddr *addr, const char *fn,
		      uint8_t mgid[16])
{
	char b[INET6_ADDRSTRLEN];
	const void *a;

	if (!sa_addr(addr, &a)) {
		cma_log("%s: address family %d: RoCE groups are IP groups (AF_INET, AF_INET6)",
			fn, addr->sa_family);
		return EINVAL;
	}
	cma_addr_gid(addr, mgid);
	if (!blue_gid_is_mcast(mgid)) {
		cma_log("%s: %s is not a multicast address (224.0.0.0/4, ff00::/8)", fn,
			inet_ntop(addr->sa_family, a, b, sizeof(b)) ? b : "?");
		return EINVAL;
	}
	if (!id->dev || (id->state != CMA_ADDR_BOUND && id->state != CMA_ADDR_RESOLVED)) {
		cma_log("%s: the id must be bound to a device's address or have its address "
			"resolved, and not be connecting (the kernel's rule)", fn);
		return EINVAL;
	}
	if (id->id.qp_type != IBV_QPT_UD) {
		cma_log("%s: groups take datagrams: the id must be of RDMA_PS_UDP or "
			"RDMA_PS_IPOIB (a UD QP), not port space 0x%x", fn, id->id.ps);
		return EINVAL;
	}
	return 0;
}

/* The event's address vector and keys, as ib_init_ah_from_mcmember fills them. */
static void join_params(const struct cma_id *id, const struct cma_mc *mc,
			struct rdma_ud_param *ud)
{
	int sgid = cma_dev_gid_index(id->dev, id->id.route.addr.addr.ibaddr.sgid.raw);

	memset(ud, 0, sizeof(*ud));
	ud->private_data = mc->context;
	ud->ah_attr.is_global = 1;
	ud->ah_attr.grh.dgid = mc->mgid;
	ud->ah_attr.grh.sgid_index = (uint8_t)(sgid >= 0 ? sgid : 0);
	ud->ah_attr.grh.hop_limit = CMA_MC_HOP_LIMIT;
	ud->ah_attr.port_num = id->id.port_num ? id->id.port_num : 1;
	ud->qp_num = BLUE_MCAST_QPN;
	ud->qkey = id->id.ps == RDMA_PS_UDP ? CMA_UDP_QKEY : 0;
}

static int join(struct rdma_cm_id *uid, const struct sockaddr *addr, uint32_t flags,
		void *context, const char *fn)
{
	struct cma_id *id = cma_id_of(uid);
	struct cma_event *e;
	struct cma_mc *mc;
	uint8_t mgid[16];
	int err;

	if (!id || !addr) {
		cma_log("%s: %s is NULL", fn, !id ? "id" : "the group address");
		errno = EINVAL;
		return -1;
	}
	cma_lock();
	err = join_check(id, addr, fn, mgid);
	mc = err ? NULL : calloc(1, sizeof(*mc));
	if (!err && !mc)
		err = ENOMEM;
	if (err) {
		cma_unlock();
		errno = err;
		return -1;
	}
	if (addr->sa_family == AF_INET)
		mc->addr.in = *(const struct sockaddr_in *)addr;
	else
		mc->addr.in6 = *(const struct sockaddr_in6 *)addr;
	memcpy(mc->mgid.raw, mgid, 16);
	mc->context = context;
	mc->send_only = flags == RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER;
	mc->next = id->mcs;
	id->mcs = mc;
	e = cma_post_event(id, NULL, RDMA_CM_EVENT_MULTICAST_JOIN, 0, NULL, 0);
	if (e) {
		e->mc = mc;
		join_params(id, mc, &e->ev.param.ud);
	}
	err = cma_sync_complete(id);
	cma_unlock();
	return err;
}

CMA_EXPORT int rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *context)
{
	return join(id, addr, RDMA_MC_JOIN_FLAG_FULLMEMBER, context, "rdma_join_multicast");
}

CMA_EXPORT int rdma_join_multicast_ex(struct rdma_cm_id *id,
				      struct rdma_cm_join_mc_attr_ex *attr, void *context)
{
	const char *fn = "rdma_join_multicast_ex";

	/* librdmacm's checks: both attributes given, a join flag it knows */
	if (!attr || !(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_ADDRESS) ||
	    !(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS) ||
	    attr->join_flags >= RDMA_MC_JOIN_FLAG_RESERVED) {
		cma_log("%s: %s", fn, !attr ? "mc_join_attr is NULL" :
			!(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_ADDRESS) ?
			"comp_mask lacks RDMA_CM_JOIN_MC_ATTR_ADDRESS" :
			!(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS) ?
			"comp_mask lacks RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS" :
			"join_flags is neither FULLMEMBER nor SENDONLY_FULLMEMBER");
		errno = EINVAL;
		return -1;
	}
	return join(id, attr->addr, attr->join_flags, context, fn);
}

void cma_mc_join_taken(struct cma_event *e)
{
	struct cma_id *id = e->owner;
	struct cma_mc *mc = e->mc;

	if (e->ev.event != RDMA_CM_EVENT_MULTICAST_JOIN || !id->id.qp || mc->attached)
		return;
	if (ibv_attach_mcast(id->id.qp, &mc->mgid, 0)) {
		/* ucma_process_join's failure: the join is reported as an error */
		e->ev.status = -errno;
		e->ev.event = RDMA_CM_EVENT_MULTICAST_ERROR;
		return;
	}
	mc->attached = true;
}

/* Is another group record of @id attached to @mc's group (joined twice)? */
static bool mgid_held_elsewhere(const struct cma_id *id, const struct cma_mc *mc)
{
	const struct cma_mc *m;

	for (m = id->mcs; m; m = m->next)
		if (m != mc && m->attached && !memcmp(m->mgid.raw, mc->mgid.raw, 16))
			return true;
	return false;
}

/* Unlink @mc from @id, detach the QP, drop its queued events. Lock held. */
static void mc_drop(struct cma_id *id, struct cma_mc *mc)
{
	struct cma_mc **pp;

	for (pp = &id->mcs; *pp && *pp != mc; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = mc->next;
	if (mc->attached && id->id.qp && !mgid_held_elsewhere(id, mc) &&
	    ibv_detach_mcast(id->id.qp, &mc->mgid, 0))
		cma_log("rdma_leave_multicast: detaching QP 0x%x: %s", id->id.qp->qp_num,
			strerror(errno));
	cma_flush_mc_events(id->chan, mc);
}

CMA_EXPORT int rdma_leave_multicast(struct rdma_cm_id *uid, struct sockaddr *addr)
{
	struct cma_id *id = cma_id_of(uid);
	struct cma_mc *mc;

	if (!id || !addr) {
		cma_log("rdma_leave_multicast: %s is NULL", !id ? "id" : "the group address");
		errno = EINVAL;
		return -1;
	}
	cma_lock();
	for (mc = id->mcs; mc && !same_group(&mc->addr.sa, addr); mc = mc->next)
		;
	if (!mc) {
		cma_unlock();
		cma_log("rdma_leave_multicast: the id never joined that group (EADDRNOTAVAIL)");
		errno = EADDRNOTAVAIL;	/* librdmacm's answer */
		return -1;
	}
	mc_drop(id, mc);
	/* events of the group handed out still point at it: wait for their acks */
	while (mc->events_out)
		pthread_cond_wait(&id->acked, cma_lock_mutex());
	cma_unlock();
	free(mc);
	return 0;
}

void cma_mc_leave_all(struct cma_id *id)
{
	struct cma_mc *mc;

	while ((mc = id->mcs)) {
		mc_drop(id, mc);
		free(mc);
	}
}
