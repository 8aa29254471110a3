// SPDX-License-Identifier: MIT
/*
 * ud_probe — what a UD receiver sees: one SEND with immediate each way between two UD QPs,
 * and the receive side's work completion and 40-byte GRH printed field by field, each
 * relative to the peer (src_qp_is_peer, saddr_is_peer), so that two runs on different
 * stacks print the same lines when the stacks agree. Built against libibverbs: in the rxe
 * guest it runs on rdma-core's rxe provider, on the host on blue's compat library.
 *
 *   server: ud_probe -d DEV -g GIDX -p PORT
 *   client: ud_probe -d DEV -g GIDX -p PORT SERVER_IP
 *
 * The two exchange "QPN GID" over TCP; the client sends first; the server answers with an
 * address handle made from the completion (ibv_create_ah_from_wc), as UCX and the IB CM do.
 * Output lines (one per field): "rx.wc.NAME=VALUE", "rx.grh.NAME=VALUE", "rx.payload=ok".
 * Exit 0 when both messages went through; a failed connect prints "Couldn't connect to"
 * (the interop harness retries on that, as for rdma-core's pingpongs).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PROBE_QKEY 0x11111111u
#define PROBE_IMM 0x1234abcdu
#define PROBE_SIZE 256
#define PROBE_GRH 40
#define PROBE_HOPS 64
#define PROBE_WAIT_S 15

struct probe {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t buf[2 * (PROBE_GRH + PROBE_SIZE)];	/* receive area, then send area */
	int gidx;
	union ibv_gid gid;
	uint32_t peer_qpn;
	union ibv_gid peer_gid;
};

static int die(const char *what)
{
	fprintf(stderr, "ud_probe: %s: %s\n", what, strerror(errno ? errno : EIO));
	exit(1);
}

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = NULL;

	for (int i = 0; l && l[i]; i++)
		if (!strcmp(ibv_get_device_name(l[i]), name))
			c = ibv_open_device(l[i]);
	if (l)
		ibv_free_device_list(l);
	if (!c)
		die(name);
	return c;
}

/* RESET -> INIT -> RTR -> RTS, as a UD QP takes them (no path: the AH carries it) */
static void qp_up(struct probe *p)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
				 .qkey = PROBE_QKEY };

	if (ibv_modify_qp(p->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		die("modify_qp INIT");
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(p->qp, &a, IBV_QP_STATE))
		die("modify_qp RTR");
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (ibv_modify_qp(p->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("modify_qp RTS");
}

static void probe_init(struct probe *p, const char *dev)
{
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_UD,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 4,
						.max_send_sge = 1, .max_recv_sge = 1 } };

	p->ctx = open_dev(dev);
	if (!(p->pd = ibv_alloc_pd(p->ctx)))
		die("alloc_pd");
	if (!(p->cq = ibv_create_cq(p->ctx, 8, NULL, NULL, 0)))
		die("create_cq");
	ia.send_cq = ia.recv_cq = p->cq;
	if (!(p->qp = ibv_create_qp(p->pd, &ia)))
		die("create_qp UD");
	if (!(p->mr = ibv_reg_mr(p->pd, p->buf, sizeof(p->buf), IBV_ACCESS_LOCAL_WRITE)))
		die("reg_mr");
	if (ibv_query_gid(p->ctx, 1, p->gidx, &p->gid))
		die("query_gid");
	qp_up(p);
}

static void post_recv(struct probe *p)
{
	struct ibv_sge sge = { .addr = (uintptr_t)p->buf, .length = PROBE_GRH + PROBE_SIZE,
			       .lkey = p->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;

	memset(p->buf, 0xee, PROBE_GRH + PROBE_SIZE);	/* what the stack leaves alone shows */
	if (ibv_post_recv(p->qp, &wr, &bad))
		die("post_recv");
}

/* wait (bounded) for one completion of WR_ID. The send and the receive share the CQ, and
 * the peer's answer can complete before our send's completion is polled (blue answers
 * within a couple of ms, rxe under TCG completes later): a completion of the other WR is
 * kept for the next call, not dropped. */
static void wait_wc(struct probe *p, uint64_t wr_id, struct ibv_wc *wc)
{
	static struct ibv_wc kept;
	static int have_kept;
	time_t end = time(NULL) + PROBE_WAIT_S;

	if (have_kept && kept.wr_id == wr_id) {
		*wc = kept;
		have_kept = 0;
		return;
	}
	for (;;) {
		int n = ibv_poll_cq(p->cq, 1, wc);

		if (n < 0)
			die("poll_cq");
		if (n == 1 && wc->status != IBV_WC_SUCCESS) {
			fprintf(stderr, "ud_probe: wr %llu completed with %s\n",
				(unsigned long long)wc->wr_id, ibv_wc_status_str(wc->status));
			exit(1);
		}
		if (n == 1 && wc->wr_id == wr_id)
			return;
		if (n == 1) {
			kept = *wc;
			have_kept = 1;
		}
		if (time(NULL) > end) {
			errno = ETIMEDOUT;
			die(wr_id == 1 ? "no message received" : "send never completed");
		}
	}
}

static void send_msg(struct probe *p, struct ibv_ah *ah, uint8_t seed)
{
	uint8_t *m = p->buf + PROBE_GRH + PROBE_SIZE;
	struct ibv_sge sge = { .addr = (uintptr_t)m, .length = PROBE_SIZE, .lkey = p->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_IMM, .send_flags = IBV_SEND_SIGNALED,
				  .imm_data = htonl(PROBE_IMM) }, *bad;
	struct ibv_wc wc;

	for (int i = 0; i < PROBE_SIZE; i++)
		m[i] = (uint8_t)(seed + i * 7);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = p->peer_qpn;
	wr.wr.ud.remote_qkey = PROBE_QKEY;
	if (ibv_post_send(p->qp, &wr, &bad))
		die("post_send");
	wait_wc(p, 2, &wc);
}

static int is_mapped(const union ibv_gid *g, const uint8_t *ip4)
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return !memcmp(g->raw, pfx, 12) && !memcmp(g->raw + 12, ip4, 4);
}

/* the receive side's view of one message, relative to the peer */
static void report(struct probe *p, const struct ibv_wc *wc, uint8_t seed)
{
	const uint8_t *g = p->buf, *ip = g + 20, *m = g + PROBE_GRH;
	int zero20 = 1, ok = 1;
	char hex[2 * PROBE_GRH + 1];

	for (int i = 0; i < 20; i++)
		zero20 &= g[i] == 0;
	for (int i = 0; i < PROBE_SIZE; i++)
		ok &= m[i] == (uint8_t)(seed + i * 7);
	for (int i = 0; i < PROBE_GRH; i++)
		sprintf(hex + 2 * i, "%02x", g[i]);
	printf("rx.wc.opcode=%d\n", wc->opcode);
	printf("rx.wc.byte_len=%u\n", wc->byte_len);
	printf("rx.wc.imm=0x%08x\n", ntohl(wc->imm_data));
	printf("rx.wc.wc_flags=0x%x\n", wc->wc_flags);
	printf("rx.wc.src_qp_is_peer=%d\n", wc->src_qp == p->peer_qpn);
	printf("rx.wc.sl=%u\n", wc->sl);
	printf("rx.wc.pkey_index=%u\n", wc->pkey_index);
	printf("rx.wc.slid=%u\n", wc->slid);
	printf("rx.wc.dlid_path_bits=%u\n", wc->dlid_path_bits);
	printf("rx.wc.qp_num_is_mine=%d\n", wc->qp_num == p->qp->qp_num);
	printf("rx.grh.first20_zero=%d\n", zero20);
	printf("rx.grh.ver_ihl=0x%02x\n", ip[0]);
	printf("rx.grh.tos=0x%02x\n", ip[1]);
	printf("rx.grh.tot_len=%u\n", ip[2] << 8 | ip[3]);
	printf("rx.grh.frag=0x%04x\n", ip[6] << 8 | ip[7]);
	printf("rx.grh.ttl=%u\n", ip[8]);
	printf("rx.grh.proto=%u\n", ip[9]);
	printf("rx.grh.saddr_is_peer=%d\n", is_mapped(&p->peer_gid, ip + 12));
	printf("rx.grh.daddr_is_mine=%d\n", is_mapped(&p->gid, ip + 16));
	printf("rx.payload=%s\n", ok ? "ok" : "bad");
	printf("raw.grh=%s\n", hex);	/* for the log: id and checksum differ per packet */
	fflush(stdout);
}

static int tcp_server(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int one = 1, l = socket(AF_INET, SOCK_STREAM, 0), c;

	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (l < 0 || bind(l, (void *)&a, sizeof(a)) || listen(l, 1))
		die("listen");
	c = accept(l, NULL, NULL);
	if (c < 0)
		die("accept");
	close(l);
	return c;
}

static int tcp_client(const char *host, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int s = socket(AF_INET, SOCK_STREAM, 0);

	if (s < 0 || inet_pton(AF_INET, host, &a.sin_addr) != 1)
		die(host);
	if (connect(s, (void *)&a, sizeof(a))) {
		fprintf(stderr, "Couldn't connect to %s:%d\n", host, port);
		exit(1);
	}
	return s;
}

/* "QPN GID" each way, GID as 32 hex digits */
static void exchange(struct probe *p, int fd)
{
	char out[64], in[64];
	unsigned int b;
	size_t got = 0;

	int n = snprintf(out, sizeof(out), "%06x ", p->qp->qp_num);
	for (int i = 0; i < 16; i++)
		n += snprintf(out + n, sizeof(out) - n, "%02x", p->gid.raw[i]);
	out[n++] = '\n';
	if (write(fd, out, n) != n)
		die("write");
	while (got < (size_t)n) {
		ssize_t r = read(fd, in + got, (size_t)n - got);

		if (r <= 0)
			die("read");
		got += (size_t)r;
	}
	in[n - 1] = 0;
	if (sscanf(in, "%x", &p->peer_qpn) != 1)
		die("peer's QPN");
	for (int i = 0; i < 16; i++) {
		if (sscanf(in + 7 + 2 * i, "%2x", &b) != 1)
			die("peer's GID");
		p->peer_gid.raw[i] = (uint8_t)b;
	}
}

static void sync_fd(int fd)
{
	char c = 's';

	if (write(fd, &c, 1) != 1 || read(fd, &c, 1) != 1)
		die("sync");
}

int main(int argc, char **argv)
{
	static struct probe p;
	const char *dev = NULL, *peer = NULL;
	int port = 18700, opt, fd;
	struct ibv_wc wc;
	struct ibv_ah *ah;

	while ((opt = getopt(argc, argv, "d:g:p:")) != -1) {
		switch (opt) {
		case 'd': dev = optarg; break;
		case 'g': p.gidx = atoi(optarg); break;
		case 'p': port = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: ud_probe -d DEV -g GIDX [-p PORT] [SERVER]\n");
			return 2;
		}
	}
	if (!dev) {
		fprintf(stderr, "ud_probe: -d DEV is required\n");
		return 2;
	}
	if (optind < argc)
		peer = argv[optind];	/* the server's address: this side is the client */
	probe_init(&p, dev);
	post_recv(&p);
	fd = peer ? tcp_client(peer, port) : tcp_server(port);
	exchange(&p, fd);
	printf("local qpn 0x%06x, peer qpn 0x%06x\n", p.qp->qp_num, p.peer_qpn);
	if (peer) {
		struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
					  .grh = { .dgid = p.peer_gid, .sgid_index = p.gidx,
						   .hop_limit = PROBE_HOPS } };

		if (!(ah = ibv_create_ah(p.pd, &aa)))
			die("create_ah");
		sync_fd(fd);	/* both receives are posted */
		send_msg(&p, ah, 0x11);
		wait_wc(&p, 1, &wc);
		report(&p, &wc, 0x22);
	} else {
		sync_fd(fd);
		wait_wc(&p, 1, &wc);
		report(&p, &wc, 0x11);
		/* the answer goes to where the message came from, as a UD server does it */
		if (!(ah = ibv_create_ah_from_wc(p.pd, &wc, (void *)p.buf, 1)))
			die("create_ah_from_wc");
		send_msg(&p, ah, 0x22);
	}
	sync_fd(fd);	/* neither side tears down before the other has its message */
	ibv_destroy_ah(ah);
	close(fd);
	ibv_destroy_qp(p.qp);
	ibv_dereg_mr(p.mr);
	ibv_destroy_cq(p.cq);
	ibv_dealloc_pd(p.pd);
	ibv_close_device(p.ctx);
	printf("ud_probe: done\n");
	return 0;
}
