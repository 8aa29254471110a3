// SPDX-License-Identifier: MIT
/*
 * aw_flush: IBA 1.5 ATOMIC WRITE and FLUSH through libibverbs, the way a program built
 * against rdma-core 45 or later does them; run on blue's compat library between two
 * namespaces by tests/compat/test_compat_aw.sh.
 *
 *   aw_flush -d DEV -g GIDX server PORT
 *   aw_flush -d DEV -g GIDX client SERVER_IP PORT MODE
 *
 * MODE ok:        ibv_wr_atomic_write of a pattern to the server's buffer + 8, then
 *                 ibv_wr_flush (GLOBAL, RANGE) over the buffer, then an RDMA READ of the
 *                 buffer back; every byte compared (the pattern at 8, the server's fill
 *                 around it). The server checks its own bytes too.
 * MODE nak-aw:    ibv_wr_atomic_write to a region registered without REMOTE_WRITE: the
 *                 completion is IBV_WC_REM_ACCESS_ERR, and the server's bytes are unchanged.
 * MODE nak-flush: ibv_wr_flush to a region registered without FLUSH_GLOBAL: the
 *                 completion is IBV_WC_REM_ACCESS_ERR.
 *
 * Debian's headers are rdma-core 44's, which have ibv_wr_atomic_write but no FLUSH: the
 * FLUSH names and struct ibv_qp_ex's wr_flush member (the one after wr_atomic_write) are
 * declared below with rdma-core 45's values, as a program built against 45 has them.
 * Exit 0 when every check holds; each failure is printed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* rdma-core 45, libibverbs/verbs.h */
#define V45_ACCESS_FLUSH_GLOBAL		(1 << 8)
#define V45_QP_EX_WITH_FLUSH		(1 << 11)
#define V45_WC_FLUSH			8
#define V45_FLUSH_GLOBAL		1
#define V45_FLUSH_RANGE			0

struct v45_qp_ex {
	struct ibv_qp_ex ex;	/* rdma-core 44's, ending with wr_atomic_write */
	void (*wr_flush)(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr, size_t len,
			 uint8_t type, uint8_t level);
};
_Static_assert(offsetof(struct v45_qp_ex, wr_flush) ==
	       offsetof(struct ibv_qp_ex, wr_atomic_write) + sizeof(void *),
	       "rdma-core 45 appends wr_flush right after wr_atomic_write");

#define BUF	4096
#define FILL	0xa5
#define AT	8
static const uint8_t pattern[8] = { 0xde, 0xad, 0xbe, 0xef, 0x01, 0x23, 0x45, 0x67 };

/* What each side sends the other over TCP. */
struct wire {
	uint32_t qpn, psn;
	union ibv_gid gid;
	uint64_t addr[3];	/* server: ok, no-write, no-flush regions */
	uint32_t rkey[3];
};

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	uint8_t *buf[3];
	struct ibv_mr *mr[3];
	int gidx;
};

static int failures;

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "aw_flush: FAIL: " __VA_ARGS__); \
	fputc('\n', stderr); failures++; } } while (0)

static void die(const char *what)
{
	fprintf(stderr, "aw_flush: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void open_dev(struct side *s, const char *name)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_qp_init_attr_ex a;
	int i;

	if (!l)
		die("ibv_get_device_list");
	for (i = 0; l[i] && strcmp(ibv_get_device_name(l[i]), name); i++)
		;
	if (!l[i]) {
		fprintf(stderr, "aw_flush: no device %s\n", name);
		exit(2);
	}
	s->ctx = ibv_open_device(l[i]);
	ibv_free_device_list(l);
	if (!s->ctx)
		die("ibv_open_device");
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = ibv_create_cq(s->ctx, 16, NULL, NULL, 0);
	if (!s->pd || !s->cq)
		die("ibv_alloc_pd/ibv_create_cq");
	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_RC;
	a.send_cq = a.recv_cq = s->cq;
	a.cap.max_send_wr = a.cap.max_recv_wr = 8;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	a.pd = s->pd;
	a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	a.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_WRITE | V45_QP_EX_WITH_FLUSH |
			   IBV_QP_EX_WITH_RDMA_READ;
	s->qp = ibv_create_qp_ex(s->ctx, &a);
	if (!s->qp)
		die("ibv_create_qp_ex with ATOMIC_WRITE and FLUSH");
	s->qpx = ibv_qp_to_qp_ex(s->qp);
}

static void reg(struct side *s, int i, int access)
{
	s->buf[i] = aligned_alloc(4096, BUF);
	if (!s->buf[i])
		die("aligned_alloc");
	memset(s->buf[i], FILL, BUF);
	s->mr[i] = ibv_reg_mr(s->pd, s->buf[i], BUF, access);
	if (!s->mr[i])
		die("ibv_reg_mr");
}

static void to_rts(struct side *s, const struct wire *me, const struct wire *peer)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			    V45_ACCESS_FLUSH_GLOBAL;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		die("modify_qp INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer->qpn;
	a.rq_psn = peer->psn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.sgid_index = (uint8_t)s->gidx;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER))
		die("modify_qp RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = me->psn;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify_qp RTS");
}

/* One completion, within 10 s. Return: its status and opcode through @wc. */
static void wait_wc(struct side *s, struct ibv_wc *wc)
{
	time_t end = time(NULL) + 10;
	int n;

	while ((n = ibv_poll_cq(s->cq, 1, wc)) == 0 && time(NULL) < end)
		;
	if (n != 1) {
		fprintf(stderr, "aw_flush: no completion within 10 s\n");
		exit(2);
	}
}

static void xfer(int fd, void *p, size_t n, int out)
{
	ssize_t r = out ? write(fd, p, n) : read(fd, p, n);

	if (r != (ssize_t)n)
		die(out ? "write to peer" : "read from peer");
}

static void fill_me(struct side *s, struct wire *w)
{
	memset(w, 0, sizeof(*w));
	w->qpn = s->qp->qp_num;
	w->psn = (uint32_t)getpid() & 0xffffff;
	if (ibv_query_gid(s->ctx, 1, s->gidx, &w->gid))
		die("ibv_query_gid");
}

static int serve(struct side *s, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct wire me, peer;
	int lfd, fd, one = 1, i;
	uint8_t done;

	reg(s, 0, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
	    V45_ACCESS_FLUSH_GLOBAL);
	reg(s, 1, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | V45_ACCESS_FLUSH_GLOBAL);
	reg(s, 2, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	fill_me(s, &me);
	for (i = 0; i < 3; i++) {
		me.addr[i] = (uintptr_t)s->buf[i];
		me.rkey[i] = s->mr[i]->rkey;
	}
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1))
		die("listen");
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		die("accept");
	xfer(fd, &peer, sizeof(peer), 0);
	to_rts(s, &me, &peer);
	xfer(fd, &me, sizeof(me), 1);
	xfer(fd, &done, 1, 0);	/* the client is through: 'o' (ok) or 'w' (nak-aw) or 'f' */
	for (i = 0; i < BUF; i++) {
		uint8_t want = done == 'o' && i >= AT && i < AT + 8 ? pattern[i - AT] : FILL;

		if (s->buf[0][i] != want) {
			CHECK(0, "server byte %d is 0x%02x, want 0x%02x", i, s->buf[0][i], want);
			break;
		}
	}
	for (i = 0; i < BUF; i++)
		if (s->buf[1][i] != FILL) {
			CHECK(0, "the region without REMOTE_WRITE changed at %d", i);
			break;
		}
	printf("aw_flush server: %s\n", failures ? "FAILED" : "memory as expected");
	return failures ? 1 : 0;
}

static int client(struct side *s, const char *ip, int port, const char *mode)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct wire me, peer;
	struct ibv_wc wc;
	uint8_t done;
	int fd, i;

	reg(s, 0, IBV_ACCESS_LOCAL_WRITE);
	memset(s->buf[0], 0, BUF);
	fill_me(s, &me);
	if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1)
		die("server address");
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		die("connect");
	xfer(fd, &me, sizeof(me), 1);
	xfer(fd, &peer, sizeof(peer), 0);
	to_rts(s, &me, &peer);

	ibv_wr_start(s->qpx);
	s->qpx->wr_id = 1;
	s->qpx->wr_flags = IBV_SEND_SIGNALED;
	if (!strcmp(mode, "nak-flush")) {
		((struct v45_qp_ex *)s->qpx)->wr_flush(s->qpx, peer.rkey[2], peer.addr[2], BUF,
							V45_FLUSH_GLOBAL, V45_FLUSH_RANGE);
	} else {
		int r = !strcmp(mode, "nak-aw") ? 1 : 0;

		ibv_wr_atomic_write(s->qpx, peer.rkey[r], peer.addr[r] + AT, pattern);
	}
	if (ibv_wr_complete(s->qpx))
		die("ibv_wr_complete");
	wait_wc(s, &wc);
	if (strcmp(mode, "ok")) {
		CHECK(wc.status == IBV_WC_REM_ACCESS_ERR, "%s: status %s, want remote access error",
		      mode, ibv_wc_status_str(wc.status));
		printf("aw_flush client: %s: %s\n", mode, ibv_wc_status_str(wc.status));
		done = mode[4];
		xfer(fd, &done, 1, 1);
		return failures ? 1 : 0;
	}
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_ATOMIC_WRITE,
	      "atomic write: %s, opcode %d", ibv_wc_status_str(wc.status), wc.opcode);

	/* FLUSH GLOBAL over the buffer, then READ it back: FLUSH completes after the write */
	ibv_wr_start(s->qpx);
	s->qpx->wr_id = 2;
	s->qpx->wr_flags = IBV_SEND_SIGNALED;
	((struct v45_qp_ex *)s->qpx)->wr_flush(s->qpx, peer.rkey[0], peer.addr[0], BUF,
						V45_FLUSH_GLOBAL, V45_FLUSH_RANGE);
	s->qpx->wr_id = 3;
	ibv_wr_rdma_read(s->qpx, peer.rkey[0], peer.addr[0]);
	ibv_wr_set_sge(s->qpx, s->mr[0]->lkey, (uintptr_t)s->buf[0], BUF);
	if (ibv_wr_complete(s->qpx))
		die("ibv_wr_complete");
	wait_wc(s, &wc);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == V45_WC_FLUSH && wc.wr_id == 2,
	      "flush: %s, opcode %d, wr_id %llu", ibv_wc_status_str(wc.status), wc.opcode,
	      (unsigned long long)wc.wr_id);
	wait_wc(s, &wc);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_READ && wc.wr_id == 3,
	      "read: %s", ibv_wc_status_str(wc.status));
	for (i = 0; i < BUF; i++) {
		uint8_t want = i >= AT && i < AT + 8 ? pattern[i - AT] : FILL;

		if (s->buf[0][i] != want) {
			CHECK(0, "read back byte %d is 0x%02x, want 0x%02x", i, s->buf[0][i], want);
			break;
		}
	}
	printf("aw_flush client: atomic write, flush, read back of %d bytes: %s\n", BUF,
	       failures ? "FAILED" : "all equal");
	done = 'o';
	xfer(fd, &done, 1, 1);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct side s = { .gidx = 0 };
	const char *dev = NULL;
	int opt;

	while ((opt = getopt(argc, argv, "d:g:")) != -1) {
		if (opt == 'd')
			dev = optarg;
		else if (opt == 'g')
			s.gidx = atoi(optarg);
		else
			return 2;
	}
	argv += optind;
	argc -= optind;
	if (!dev || argc < 2 || (strcmp(argv[0], "server") && argc < 4)) {
		fprintf(stderr, "usage: aw_flush -d DEV -g GIDX server PORT | "
			"client IP PORT ok|nak-aw|nak-flush\n");
		return 2;
	}
	open_dev(&s, dev);
	if (!strcmp(argv[0], "server"))
		return serve(&s, atoi(argv[1]));
	return client(&s, argv[1], atoi(argv[2]), argv[3]);
}
