// SPDX-License-Identifier: MIT
/*
 * rdma_getaddrinfo / rdma_freeaddrinfo (RDMACM_1.0) for IP addresses, as rdma-core 44's
 * librdmacm answers them (rdma_getaddrinfo(3)):
 *   - the lookup is getaddrinfo(3)'s, with the hints mapped onto it: RAI_PASSIVE ->
 *     AI_PASSIVE, RAI_NUMERICHOST -> AI_NUMERICHOST, ai_family (AF_IB -> unspecified),
 *     the QP type -> the socket type (RC/UC/XRC: stream, UD: datagram) and the port space
 *     -> the protocol (TCP: TCP, UDP/IPoIB: UDP, IB: by socket type);
 *   - only getaddrinfo's first answer is kept, and mapped back: the QP type and port space
 *     are the hints' when given, else from its socket type and protocol (stream -> RC and
 *     PS_TCP, datagram -> UD and PS_UDP); its address is ai_src_addr for a passive lookup,
 *     ai_dst_addr otherwise;
 *   - without node and service the hints' flags, family, QP type, port space and
 *     destination are taken as they are; a source in the hints fills an empty source;
 *   - errors: -1 and errno EINVAL without node, service and hints; ENODEV with no verbs
 *     device; a getaddrinfo failure as librdmacm passes it on: -1 with errno set to the
 *     EAI_* code (a negative number: gai_strerror(errno) names it).
 * Routing: rdma-core asks ibacm for the source of a non-passive lookup (ucma_ib_resolve);
 * with no ibacm it leaves ai_src_addr empty. blue has no ibacm: its route is the kernel's
 * IP route (the one rdma_resolve_addr uses), so unless RAI_NOROUTE is set the source is
 * the local address that route picks (a UDP socket connected to the destination, then
 * getsockname), port 0 as ibacm gives it. A destination with no route leaves it empty.
 * AF_IB addresses (RAI_FAMILY + AF_IB + RAI_NUMERICHOST) are not supported: blue's
 * rdma_cm has IP ids only (EAFNOSUPPORT).
 */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "compat/rdmacm/cma.h"

static const struct rdma_addrinfo info_nohints;

/* The getaddrinfo(3) hints for rdma_cm's @rh. */
static void info_hints_to_ai(const struct rdma_addrinfo *rh, struct addrinfo *ai)
{
	memset(ai, 0, sizeof(*ai));
	if (rh->ai_flags & RAI_PASSIVE)
		ai->ai_flags |= AI_PASSIVE;
	if (rh->ai_flags & RAI_NUMERICHOST)
		ai->ai_flags |= AI_NUMERICHOST;
	ai->ai_family = rh->ai_family == AF_IB ? AF_UNSPEC : rh->ai_family;

	switch (rh->ai_qp_type) {
	case IBV_QPT_RC:
	case IBV_QPT_UC:
	case IBV_QPT_XRC_SEND:
	case IBV_QPT_XRC_RECV:
		ai->ai_socktype = SOCK_STREAM;
		break;
	case IBV_QPT_UD:
		ai->ai_socktype = SOCK_DGRAM;
		break;
	default:
		break;
	}
	switch (rh->ai_port_space) {
	case RDMA_PS_TCP:
		ai->ai_protocol = IPPROTO_TCP;
		break;
	case RDMA_PS_UDP:
	case RDMA_PS_IPOIB:
		ai->ai_protocol = IPPROTO_UDP;
		break;
	case RDMA_PS_IB:
		if (ai->ai_socktype == SOCK_STREAM)
			ai->ai_protocol = IPPROTO_TCP;
		else if (ai->ai_socktype == SOCK_DGRAM)
			ai->ai_protocol = IPPROTO_UDP;
		break;
	default:
		break;
	}
}

/* A malloc'd copy of @len bytes of @sa in *@dst; 0 or -ENOMEM. */
static int info_copy_addr(struct sockaddr **dst, socklen_t *dst_len, const struct sockaddr *sa,
			  socklen_t len)
{
	*dst = malloc(len);
	if (!*dst)
		return -ENOMEM;
	memcpy(*dst, sa, len);
	*dst_len = len;
	return 0;
}

/* @rai from getaddrinfo's first answer @ai (and the hints that asked for it). */
static int info_from_ai(struct rdma_addrinfo *rai, const struct rdma_addrinfo *rh,
			const struct addrinfo *ai)
{
	if (rh->ai_qp_type)
		rai->ai_qp_type = rh->ai_qp_type;
	else if (ai->ai_socktype == SOCK_STREAM)
		rai->ai_qp_type = IBV_QPT_RC;
	else if (ai->ai_socktype == SOCK_DGRAM)
		rai->ai_qp_type = IBV_QPT_UD;

	if (rh->ai_port_space)
		rai->ai_port_space = rh->ai_port_space;
	else if (ai->ai_protocol == IPPROTO_TCP)
		rai->ai_port_space = RDMA_PS_TCP;
	else if (ai->ai_protocol == IPPROTO_UDP)
		rai->ai_port_space = RDMA_PS_UDP;

	rai->ai_family = ai->ai_family;
	if (rh->ai_flags & RAI_PASSIVE) {
		rai->ai_flags = RAI_PASSIVE;
		if (ai->ai_canonname && !(rai->ai_src_canonname = strdup(ai->ai_canonname)))
			return -ENOMEM;
		return info_copy_addr(&rai->ai_src_addr, &rai->ai_src_len, ai->ai_addr,
				      ai->ai_addrlen);
	}
	if (ai->ai_canonname && !(rai->ai_dst_canonname = strdup(ai->ai_canonname)))
		return -ENOMEM;
	return info_copy_addr(&rai->ai_dst_addr, &rai->ai_dst_len, ai->ai_addr, ai->ai_addrlen);
}

/* getaddrinfo for @node/@service; 0, -errno, or an EAI_* code (> 0 as a flag: *@eai). */
static int info_lookup(const char *node, const char *service, const struct rdma_addrinfo *rh,
		       struct rdma_addrinfo *rai, int *eai)
{
	struct addrinfo aih, *ai = NULL;
	int ret;

	if ((rh->ai_flags & RAI_FAMILY) && rh->ai_family == AF_IB &&
	    (rh->ai_flags & RAI_NUMERICHOST)) {
		cma_log("rdma_getaddrinfo: AF_IB addresses are not supported (blue's rdma_cm "
			"has IPv4/IPv6 ids only)");
		return -EAFNOSUPPORT;
	}
	info_hints_to_ai(rh, &aih);
	ret = getaddrinfo(node, service, rh == &info_nohints ? NULL : &aih, &ai);
	if (ret) {
		cma_log("rdma_getaddrinfo: node %s%s%s, service %s%s%s: %s", node ? "'" : "",
			node ? node : "(none)", node ? "'" : "", service ? "'" : "",
			service ? service : "(none)", service ? "'" : "", gai_strerror(ret));
		*eai = ret;
		return 0;
	}
	ret = info_from_ai(rai, rh, ai);
	freeaddrinfo(ai);
	return ret;
}

/* The source the kernel's IP route to @dst picks (port 0), into rai->ai_src_addr; a
 * destination with no route leaves it empty, as a failed ibacm lookup does. */
static void info_route_src(struct rdma_addrinfo *rai)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int fd;

	if (!rai->ai_dst_addr || (rai->ai_dst_addr->sa_family != AF_INET &&
				  rai->ai_dst_addr->sa_family != AF_INET6))
		return;
	fd = socket(rai->ai_dst_addr->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	memset(&ss, 0, sizeof(ss));
	if (!connect(fd, rai->ai_dst_addr, rai->ai_dst_len) &&
	    !getsockname(fd, (struct sockaddr *)&ss, &len)) {
		if (ss.ss_family == AF_INET)
			((struct sockaddr_in *)&ss)->sin_port = 0;
		else
			((struct sockaddr_in6 *)&ss)->sin6_port = 0;
		(void)info_copy_addr(&rai->ai_src_addr, &rai->ai_src_len,
				     (struct sockaddr *)&ss, len);
	}
	close(fd);
}

/* As librdmacm's ucma_init: no verbs device, no rdma_cm (ENODEV). */
static int info_have_device(void)
{
	struct ibv_device **list;
	int n = 0;

	list = ibv_get_device_list(&n);
	if (list)
		ibv_free_device_list(list);
	return n > 0;
}

CMA_EXPORT int rdma_getaddrinfo(const char *node, const char *service,
				const struct rdma_addrinfo *hints, struct rdma_addrinfo **res)
{
	struct rdma_addrinfo *rai;
	int ret = 0, eai = 0;

	if (!node && !service && !hints) {
		cma_log("rdma_getaddrinfo: no node, service or hints");
		errno = EINVAL;
		return -1;
	}
	if (!res) {
		cma_log("rdma_getaddrinfo: res is NULL");
		errno = EINVAL;
		return -1;
	}
	if (!info_have_device()) {
		cma_log("rdma_getaddrinfo: no verbs device (is blue attached to an interface?)");
		errno = ENODEV;
		return -1;
	}
	rai = calloc(1, sizeof(*rai));
	if (!rai) {
		errno = ENOMEM;
		return -1;
	}
	if (!hints)
		hints = &info_nohints;

	if (node || service) {
		ret = info_lookup(node, service, hints, rai, &eai);
	} else {
		rai->ai_flags = hints->ai_flags;
		rai->ai_family = hints->ai_family;
		rai->ai_qp_type = hints->ai_qp_type;
		rai->ai_port_space = hints->ai_port_space;
		if (hints->ai_dst_len)
			ret = info_copy_addr(&rai->ai_dst_addr, &rai->ai_dst_len,
					     hints->ai_dst_addr, hints->ai_dst_len);
	}
	if (!ret && !eai && !rai->ai_src_len && hints->ai_src_len)
		ret = info_copy_addr(&rai->ai_src_addr, &rai->ai_src_len, hints->ai_src_addr,
				     hints->ai_src_len);
	if (ret || eai) {
		rdma_freeaddrinfo(rai);
		/* librdmacm hands getaddrinfo's EAI_* code on in errno, as it is */
		errno = eai ? eai : -ret;
		return -1;
	}
	if (!(rai->ai_flags & RAI_PASSIVE) && !(hints->ai_flags & RAI_NOROUTE) &&
	    !rai->ai_src_len)
		info_route_src(rai);
	*res = rai;
	return 0;
}

CMA_EXPORT void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	while (res) {
		struct rdma_addrinfo *next = res->ai_next;

		free(res->ai_connect);
		free(res->ai_route);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res);
		res = next;
	}
}
