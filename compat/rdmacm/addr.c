// SPDX-License-Identifier: MIT
/*
 * Address and route resolution (cma.h). The source address comes from the kernel's
 * routing table (a UDP socket connect()ed to the destination: getsockname() says which
 * address the kernel would send from; no packet leaves), the device is the one holding
 * it, and the neighbour is resolved by the agent's address handle for the peer's GID
 * (bounded by our libibverbs' neighbour wait). RoCE has no SA: the route is the one
 * path the two GIDs make.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "compat/rdmacm/agent.h"
#include "compat/rdmacm/cma.h"

#define CMA_IBOE_PACKET_LIFETIME	18	/* the kernel's, cma.c */
#define CMA_DEFAULT_HOP_LIMIT		64

static socklen_t sa_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET ? sizeof(struct sockaddr_in) :
					  sizeof(struct sockaddr_in6);
}

static const char *sa_str(const struct sockaddr *sa, char *buf, size_t n)
{
	const void *a = sa->sa_family == AF_INET ?
		(const void *)&((const struct sockaddr_in *)sa)->sin_addr :
		(const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr;

	if (!inet_ntop(sa->sa_family, a, buf, (socklen_t)n))
		snprintf(buf, n, "?");
	return buf;
}

/* the source address the kernel's routing would pick towards @dst */
static int route_src(const struct sockaddr *dst, struct sockaddr_storage *src)
{
	struct sockaddr_storage d;
	socklen_t len = sizeof(*src);
	int fd, err = 0;

	memcpy(&d, dst, sa_len(dst));
	if (!cma_sa_port(dst))	/* connect() needs a port; any will do */
		((struct sockaddr_in *)&d)->sin_port = htons(9);
	fd = socket(dst->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&d, sa_len(dst)) ||
	    getsockname(fd, (struct sockaddr *)src, &len))
		err = -errno;
	close(fd);
	if (!err)
		((struct sockaddr_in *)src)->sin_port = 0;
	return err;
}

/* the steps of resolve_addr, each 0 or -errno with a line logged */
static int addr_bind_src(struct cma_id *id, struct sockaddr *src, const struct sockaddr *dst)
{
	struct sockaddr_storage ss;
	char b[INET6_ADDRSTRLEN];
	int err;

	if (id->state != CMA_IDLE)
		return 0;	/* bound already */
	if (!src || (src->sa_family == AF_INET &&
		     !((struct sockaddr_in *)src)->sin_addr.s_addr)) {
		uint16_t port = src ? cma_sa_port(src) : 0;

		err = route_src(dst, &ss);
		if (err) {
			cma_log("rdma_resolve_addr: no route to %s: %s", sa_str(dst, b, sizeof(b)),
				strerror(-err));
			return err;
		}
		((struct sockaddr_in *)&ss)->sin_port = htons(port);
		src = (struct sockaddr *)&ss;
	}
	if (cma_bind(id, src))
		return -errno;
	return 0;
}

static void fill_dst(struct cma_id *id, const struct sockaddr *dst)
{
	uint8_t g[16];

	memset(&id->id.route.addr.dst_storage, 0, sizeof(id->id.route.addr.dst_storage));
	memcpy(&id->id.route.addr.dst_storage, dst, sa_len(dst));
	cma_addr_gid(dst, g);
	memcpy(id->id.route.addr.addr.ibaddr.dgid.raw, g, 16);
}

static int addr_neighbour(struct cma_id *id, const struct sockaddr *dst)
{
	struct ibv_ah *ah;
	uint8_t g[16];
	char b[INET6_ADDRSTRLEN];
	int err;

	cma_addr_gid(dst, g);
	if (!id->dev || !id->dev->agent)
		return -ENODEV;
	err = cma_agent_ah(id->dev->agent, g, &ah);
	/* our libibverbs says ENOENT for "no MAC for the peer": the neighbour did not
	 * resolve, which agent.h (and the kernel's rdma_cm user) knows as EHOSTUNREACH */
	if (err == -ENOENT)
		err = -EHOSTUNREACH;
	if (err)
		cma_log("rdma_resolve_addr: %s: neighbour not resolved: %s",
			sa_str(dst, b, sizeof(b)), strerror(-err));
	return err;
}

CMA_EXPORT int rdma_resolve_addr(struct rdma_cm_id *uid, struct sockaddr *src,
				 struct sockaddr *dst, int timeout_ms)
{
	struct cma_id *id = cma_id_of(uid);
	int err;

	(void)timeout_ms;	/* the neighbour wait is our libibverbs' own bound */
	if (!id || !dst) {
		cma_log("rdma_resolve_addr: %s is NULL (EINVAL)", id ? "dst" : "id");
		errno = EINVAL;
		return -1;
	}
	if (dst->sa_family != AF_INET && dst->sa_family != AF_INET6) {
		cma_log("rdma_resolve_addr: destination family %d: only AF_INET and AF_INET6 (EAFNOSUPPORT)",
			dst->sa_family);
		errno = EAFNOSUPPORT;
		return -1;
	}
	cma_lock();
	if (id->state != CMA_IDLE && id->state != CMA_ADDR_BOUND) {
		cma_log("rdma_resolve_addr: id %p is not idle or bound (EINVAL)", (void *)id);
		cma_unlock();
		errno = EINVAL;
		return -1;
	}
	err = addr_bind_src(id, src, dst);
	if (!err && !id->dev && cma_is_loopback(dst))
		err = cma_attach_loopback(id);
	if (!err && !id->dev) {
		cma_log("rdma_resolve_addr: the id is bound to the any address: no device (EINVAL)");
		err = -EINVAL;
	}
	if (err) {
		cma_unlock();
		errno = -err;
		return -1;
	}
	fill_dst(id, dst);
	id->state = CMA_ADDR_QUERY;
	if (cma_is_loopback(dst))	/* to ourselves: no neighbour, our own GID */
		memcpy(id->id.route.addr.addr.ibaddr.dgid.raw,
		       id->id.route.addr.addr.ibaddr.sgid.raw, 16);
	else
		err = addr_neighbour(id, dst);
	id->state = err ? CMA_ADDR_BOUND : CMA_ADDR_RESOLVED;
	cma_post_event(id, NULL, err ? RDMA_CM_EVENT_ADDR_ERROR : RDMA_CM_EVENT_ADDR_RESOLVED,
		       err, NULL, 0);
	err = cma_sync_complete(id);
	cma_unlock();
	return err;
}

static void fill_path(struct cma_id *id)
{
	struct ibv_sa_path_rec *p = &id->path;

	memset(p, 0, sizeof(*p));
	p->sgid = id->id.route.addr.addr.ibaddr.sgid;
	p->dgid = id->id.route.addr.addr.ibaddr.dgid;
	p->dlid = htons(0xffff);
	p->slid = htons(0xffff);
	p->pkey = htons(0xffff);
	p->hop_limit = CMA_DEFAULT_HOP_LIMIT;
	p->traffic_class = id->tos;
	p->reversible = 1;
	p->numb_path = 1;
	p->mtu_selector = 2;	/* exactly */
	p->mtu = (uint8_t)id->dev->active_mtu;
	p->rate_selector = 2;
	p->rate = 3;		/* 10 Gb/s */
	p->packet_life_time_selector = 2;
	p->packet_life_time = CMA_IBOE_PACKET_LIFETIME;
	id->id.route.path_rec = p;
	id->id.route.num_paths = 1;
}

CMA_EXPORT int rdma_resolve_route(struct rdma_cm_id *uid, int timeout_ms)
{
	struct cma_id *id = cma_id_of(uid);
	int ret;

	(void)timeout_ms;
	if (!id) {
		cma_log("rdma_resolve_route: id is NULL (EINVAL)");
		errno = EINVAL;
		return -1;
	}
	cma_lock();
	if (id->state != CMA_ADDR_RESOLVED && id->state != CMA_ROUTE_RESOLVED) {
		cma_log("rdma_resolve_route: the id's address is not resolved (EINVAL)");
		cma_unlock();
		errno = EINVAL;
		return -1;
	}
	fill_path(id);
	id->state = CMA_ROUTE_RESOLVED;
	cma_post_event(id, NULL, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL, 0);
	ret = cma_sync_complete(id);
	cma_unlock();
	return ret;
}
