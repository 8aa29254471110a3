// SPDX-License-Identifier: MIT
/*
 * A librdmacm probe for tests/compat/test_rdmacm_ud.sh, built against Debian's
 * <rdma/rdma_cma.h> and linked -lrdmacm, so that one binary runs on rdma-core's own
 * librdmacm (no LD_LIBRARY_PATH) and on blue's ($B/compat first in LD_LIBRARY_PATH):
 *
 *   rai_probe events
 *       "N NAME" for rdma_event_str(N), N = -1 .. 18
 *   rai_probe gai NODE SERVICE [nohints] [flags=F] [family=F] [qp=Q] [ps=P] [src=IP]
 *       rdma_getaddrinfo(NODE, SERVICE, hints) ('-' is NULL); prints "ret=R errno=E", then
 *       one line per rdma_addrinfo: flags family qp_type port_space src dst (IP:port or
 *       none) src_len dst_len route_len connect_len canonnames next
 *   rai_probe opts IP
 *       rdma_set_option, ports, ECE and multicast on real ids (TCP/RC and UDP/UD), bound
 *       to IP:7399: one "name: ret errno" line per call. Exit 3 if rdma_create_event_channel
 *       fails (a stand-in librdmacm).
 *   rai_probe reject_ece IP PORT
 *       listen on IP:PORT (PS_TCP) and answer the first connection request with
 *       rdma_reject_ece; prints "listening", "event NAME", "reject_ece: ret errno".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/rdma_cma.h>

static const char *addr_str(const struct sockaddr *sa, socklen_t len, char *buf, size_t cap)
{
	char ip[INET6_ADDRSTRLEN];

	if (!sa || !len)
		return "none";
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)sa;

		inet_ntop(AF_INET, &s->sin_addr, ip, sizeof(ip));
		snprintf(buf, cap, "%s:%u", ip, ntohs(s->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const void *)sa;

		inet_ntop(AF_INET6, &s->sin6_addr, ip, sizeof(ip));
		snprintf(buf, cap, "[%s]:%u", ip, ntohs(s->sin6_port));
	} else {
		snprintf(buf, cap, "family%d", sa->sa_family);
	}
	return buf;
}

static int gai(int argc, char **argv)
{
	struct rdma_addrinfo hints, *res = NULL, *r;
	struct sockaddr_in src;
	const char *node = strcmp(argv[0], "-") ? argv[0] : NULL;
	const char *svc = strcmp(argv[1], "-") ? argv[1] : NULL;
	int use_hints = 1, ret;

	memset(&hints, 0, sizeof(hints));
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "nohints"))
			use_hints = 0;
		else if (!strncmp(a, "flags=", 6))
			hints.ai_flags = (int)strtol(a + 6, NULL, 0);
		else if (!strncmp(a, "family=", 7))
			hints.ai_family = (int)strtol(a + 7, NULL, 0);
		else if (!strncmp(a, "qp=", 3))
			hints.ai_qp_type = (int)strtol(a + 3, NULL, 0);
		else if (!strncmp(a, "ps=", 3))
			hints.ai_port_space = (int)strtol(a + 3, NULL, 0);
		else if (!strncmp(a, "src=", 4)) {
			memset(&src, 0, sizeof(src));
			src.sin_family = AF_INET;
			if (inet_pton(AF_INET, a + 4, &src.sin_addr) != 1)
				return fprintf(stderr, "bad src %s\n", a + 4), 2;
			hints.ai_src_addr = (struct sockaddr *)&src;
			hints.ai_src_len = sizeof(src);
		} else {
			return fprintf(stderr, "unknown argument %s\n", a), 2;
		}
	}
	errno = 0;
	ret = rdma_getaddrinfo(node, svc, use_hints ? &hints : NULL, &res);
	printf("ret=%d errno=%d\n", ret, ret ? errno : 0);
	for (r = ret ? NULL : res; r; r = r->ai_next) {
		char s[80], d[80];

		printf("flags=%d family=%d qp_type=%d port_space=0x%x src=%s dst=%s src_len=%u "
		       "dst_len=%u route_len=%zu connect_len=%zu canon=%s,%s next=%d\n",
		       r->ai_flags, r->ai_family, r->ai_qp_type, r->ai_port_space,
		       addr_str(r->ai_src_addr, r->ai_src_len, s, sizeof(s)),
		       addr_str(r->ai_dst_addr, r->ai_dst_len, d, sizeof(d)), r->ai_src_len,
		       r->ai_dst_len, r->ai_route_len, r->ai_connect_len,
		       r->ai_src_canonname ? r->ai_src_canonname : "-",
		       r->ai_dst_canonname ? r->ai_dst_canonname : "-", r->ai_next != NULL);
	}
	if (!ret)
		rdma_freeaddrinfo(res);
	return 0;
}

#define SHOW(name, call) do {							\
	int r_;									\
	errno = 0;								\
	r_ = (call);								\
	printf("%s: %d %d\n", name, r_, r_ ? errno : 0);			\
} while (0)

static int opts(const char *ip)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *tcp = NULL, *udp = NULL;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(7399) };
	struct ibv_ece ece = { .vendor_id = 0x15b3, .options = 1 };
	uint8_t tos = 32, ack = 14;
	int one = 1, big = 32;

	if (!ch) {
		printf("rdma_create_event_channel: errno %d\n", errno);
		return 3;
	}
	if (inet_pton(AF_INET, ip, &sin.sin_addr) != 1)
		return 2;
	SHOW("create_id tcp", rdma_create_id(ch, &tcp, NULL, RDMA_PS_TCP));
	SHOW("create_id udp", rdma_create_id(ch, &udp, NULL, RDMA_PS_UDP));
	if (!tcp || !udp)
		return 1;
	SHOW("tos", rdma_set_option(tcp, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, 1));
	SHOW("tos len 4", rdma_set_option(tcp, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &big, 4));
	SHOW("reuseaddr", rdma_set_option(tcp, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one,
					  sizeof(one)));
	SHOW("afonly", rdma_set_option(tcp, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &one,
				       sizeof(one)));
	SHOW("ack_timeout rc", rdma_set_option(tcp, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT,
					       &ack, 1));
	SHOW("ack_timeout ud", rdma_set_option(udp, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT,
					       &ack, 1));
	SHOW("option 99", rdma_set_option(tcp, RDMA_OPTION_ID, 99, &one, sizeof(one)));
	SHOW("level 7", rdma_set_option(tcp, 7, 0, &one, sizeof(one)));
	SHOW("ib_path len 3", rdma_set_option(tcp, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, &one, 3));
	SHOW("bind", rdma_bind_addr(tcp, (struct sockaddr *)&sin));
	printf("src_port: %u dst_port: %u\n", ntohs(rdma_get_src_port(tcp)),
	       ntohs(rdma_get_dst_port(tcp)));
	SHOW("afonly bound", rdma_set_option(tcp, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &one,
					     sizeof(one)));
	SHOW("listen", rdma_listen(tcp, 1));
	SHOW("afonly listening", rdma_set_option(tcp, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY,
						 &one, sizeof(one)));
	SHOW("set_local_ece", rdma_set_local_ece(udp, &ece));
	memset(&ece, 0xff, sizeof(ece));
	SHOW("get_remote_ece", rdma_get_remote_ece(udp, &ece));
	printf("remote ece: vendor %u options %u comp_mask %u\n", ece.vendor_id, ece.options,
	       ece.comp_mask);
	SHOW("join_multicast", rdma_join_multicast(udp, (struct sockaddr *)&sin, NULL));
	SHOW("leave_multicast", rdma_leave_multicast(udp, (struct sockaddr *)&sin));
	rdma_destroy_id(udp);
	rdma_destroy_id(tcp);
	rdma_destroy_event_channel(ch);
	return 0;
}

/* Listen on IP:PORT (PS_TCP), answer the first CONNECT_REQUEST with rdma_reject_ece
 * (private data "ece"), then end; every wait bounded (15 s). */
static int reject_ece(const char *ip, const char *port)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(atoi(port)) };
	struct rdma_cm_id *l = NULL;
	struct rdma_cm_event *ev;
	struct pollfd pfd;
	int ret;

	if (!ch || inet_pton(AF_INET, ip, &sin.sin_addr) != 1 ||
	    rdma_create_id(ch, &l, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(l, (struct sockaddr *)&sin) || rdma_listen(l, 1)) {
		printf("listen: errno %d\n", errno);
		return 1;
	}
	printf("listening\n");
	fflush(stdout);
	pfd.fd = ch->fd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 15000) != 1 || rdma_get_cm_event(ch, &ev)) {
		printf("no event\n");
		return 1;
	}
	printf("event %s\n", rdma_event_str(ev->event));
	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		return 1;
	errno = 0;
	ret = rdma_reject_ece(ev->id, "ece", 3);
	printf("reject_ece: %d %d\n", ret, ret ? errno : 0);
	{
		struct rdma_cm_id *req = ev->id;

		/* destroy waits for the id's events to be acked */
		rdma_ack_cm_event(ev);
		rdma_destroy_id(req);
	}
	rdma_destroy_id(l);
	rdma_destroy_event_channel(ch);
	return ret ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "events")) {
		for (int i = -1; i <= 18; i++)
			printf("%d %s\n", i, rdma_event_str((enum rdma_cm_event_type)i));
		return 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "gai"))
		return gai(argc - 2, argv + 2);
	if (argc == 3 && !strcmp(argv[1], "opts"))
		return opts(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "reject_ece"))
		return reject_ece(argv[2], argv[3]);
	fprintf(stderr, "usage: rai_probe events | gai NODE SERVICE [hints...] | opts IP | "
		"reject_ece IP PORT\n");
	return 2;
}
