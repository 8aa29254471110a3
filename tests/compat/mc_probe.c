// SPDX-License-Identifier: MIT
/*
 * mc_probe IP GROUP: rdma_join_multicast and rdma_leave_multicast on a UDP id bound to
 * IP with a UD QP, with librdmacm + libibverbs calls only (Debian's headers), printing
 * one line per answer for tests/compat/test_rdmacm_mcast.sh to compare:
 *   - a unicast address and an unknown join flag are refused (EINVAL);
 *   - the JOIN event: its type and status, param.ud (qp_num, qkey, the address vector:
 *     is_global, dgid, sgid_index, hop_limit, dlid) and private_data the join's context;
 *   - the id's QP is attached after the event (ibv_detach_mcast succeeds; then it is
 *     attached again), and detached after the leave (ibv_detach_mcast: EINVAL);
 *   - a second leave: EADDRNOTAVAIL; a send-only join; destroying an id with a group
 *     joined leaves it (its QP is attached to nothing afterwards).
 * Every wait is bounded (10 s).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <rdma/rdma_cma.h>
#include <infiniband/verbs.h>

#define SHOW(name, call) do {							\
	int r_;									\
	errno = 0;								\
	r_ = (call);								\
	printf("%s: %d %d\n", name, r_, r_ ? errno : 0);			\
} while (0)

/* The next event on @ch within 10 s, or NULL. */
static struct rdma_cm_event *next_event(struct rdma_event_channel *ch)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&p, 1, 10000) != 1 || rdma_get_cm_event(ch, &ev))
		return NULL;
	return ev;
}

static int sa_of(const char *ip, struct sockaddr_storage *ss)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, ip, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, ip, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		return 0;
	}
	return -1;
}

static void show_join(struct rdma_cm_event *ev, void *ctx)
{
	const struct rdma_ud_param *ud = &ev->param.ud;
	char g[INET6_ADDRSTRLEN];

	printf("event: %s status %d\n", rdma_event_str(ev->event), ev->status);
	if (ev->event != RDMA_CM_EVENT_MULTICAST_JOIN)
		return;
	inet_ntop(AF_INET6, ud->ah_attr.grh.dgid.raw, g, sizeof(g));
	printf("ud: qp_num %#x qkey %#x is_global %u dgid %s sgid_index %u hop_limit %u "
	       "dlid %u context %s\n", ud->qp_num, ud->qkey, ud->ah_attr.is_global, g,
	       ud->ah_attr.grh.sgid_index, ud->ah_attr.grh.hop_limit, ud->ah_attr.dlid,
	       ud->private_data == ctx ? "ok" : "wrong");
}

/* A UDP id bound to @src with a UD QP. */
static struct rdma_cm_id *ud_id(struct rdma_event_channel *ch, struct sockaddr_storage *src)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_UD,
	};
	struct rdma_cm_id *id;

	if (rdma_create_id(ch, &id, NULL, RDMA_PS_UDP) ||
	    rdma_bind_addr(id, (struct sockaddr *)src) || rdma_create_qp(id, NULL, &qa)) {
		perror("mc_probe: a bound UDP id with a QP");
		return NULL;
	}
	return id;
}

int main(int argc, char **argv)
{
	struct rdma_cm_join_mc_attr_ex ex = { 0 };
	struct sockaddr_storage src, grp, uni;
	struct rdma_event_channel *ch;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	struct ibv_qp *qp;
	union ibv_gid mgid;
	int ctx_tag, rc = 0;

	if (argc != 3 || sa_of(argv[1], &src) || sa_of(argv[2], &grp)) {
		fprintf(stderr, "usage: mc_probe IP GROUP\n");
		return 2;
	}
	uni = src;
	ch = rdma_create_event_channel();
	id = ch ? ud_id(ch, &src) : NULL;
	if (!id)
		return 1;
	SHOW("join unicast", rdma_join_multicast(id, (struct sockaddr *)&uni, NULL));
	ex.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS | RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS;
	ex.addr = (struct sockaddr *)&grp;
	ex.join_flags = 7;
	SHOW("join_ex flags 7", rdma_join_multicast_ex(id, &ex, NULL));

	SHOW("join", rdma_join_multicast(id, (struct sockaddr *)&grp, &ctx_tag));
	ev = next_event(ch);
	if (!ev)
		return 1;
	show_join(ev, &ctx_tag);
	mgid = ev->param.ud.ah_attr.grh.dgid;
	rdma_ack_cm_event(ev);
	/* attached at the event: a detach works (then attach it again for the leave) */
	printf("attached: %s\n", ibv_detach_mcast(id->qp, &mgid, 0) == 0 &&
	       ibv_attach_mcast(id->qp, &mgid, 0) == 0 ? "yes" : "no");
	SHOW("leave", rdma_leave_multicast(id, (struct sockaddr *)&grp));
	printf("detached: %s\n", ibv_detach_mcast(id->qp, &mgid, 0) == EINVAL ? "yes" : "no");
	SHOW("leave again", rdma_leave_multicast(id, (struct sockaddr *)&grp));

	ex.join_flags = RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER;
	SHOW("join_ex sendonly", rdma_join_multicast_ex(id, &ex, &ctx_tag));
	ev = next_event(ch);
	if (!ev)
		return 1;
	printf("event: %s status %d\n", rdma_event_str(ev->event), ev->status);
	rdma_ack_cm_event(ev);
	/* rdma_destroy_id leaves what is joined, detaching the id's QP (the kernel's
	 * ucma_destroy_id does): afterwards the QP is attached to nothing */
	qp = id->qp;
	printf("destroy with a group joined: %d\n", rdma_destroy_id(id));
	printf("left at destroy: %s\n", ibv_detach_mcast(qp, &mgid, 0) == EINVAL ? "yes" : "no");
	ibv_destroy_qp(qp);
	rdma_destroy_event_channel(ch);
	return rc;
}
