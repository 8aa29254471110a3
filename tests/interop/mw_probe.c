// SPDX-License-Identifier: MIT
/*
 * mw_probe — a type 2 memory window between two RC QPs, with plain libibverbs: one side
 * (the window side, the TCP server) binds a window over part of an MR that grants no
 * remote access of its own; the other (the writer, the TCP client) RDMA WRITEs through
 * the window, the window is invalidated, and the writer's next WRITE must be NAKed
 * (IBV_WC_REM_ACCESS_ERR) with the window's memory untouched. Two rounds, each on its own
 * QP pair (the NAK of round 0 takes the writer's QP to the error state, and a type 2
 * window belongs to the QP that bound it):
 *   round 0: the window side invalidates with IBV_WR_LOCAL_INV;
 *   round 1: the same window is bound again (a new key) and the writer invalidates it
 *            with IBV_WR_SEND_WITH_INV; the window side's receive completion must carry
 *            IBV_WC_WITH_INV and the window's rkey.
 * Built against libibverbs: in the rxe guest it runs on rdma-core's rxe provider, on the
 * host on blue's compat library (tests/compat/test_compat_rxe.sh runs both roles).
 *
 *   window side: mw_probe -d DEV -g GIDX -p PORT
 *   writer:      mw_probe -d DEV -g GIDX -p PORT SERVER_IP
 *   capability:  mw_probe -d DEV -C uc|mw   (exit 0: the device creates a UC QP / a type
 *                2 window; 3: it cannot, and says why)
 *
 * Output: one "mw.rN.STEP=VALUE" line per observation (what the harness checks), and
 * "mw_probe: done" when every check of this side passed (exit 0). A failed connect prints
 * "Couldn't connect to" (the interop harness retries on that).
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

#define MW_BUF 8192
#define MW_OFF 1024	/* the window: [MW_OFF, MW_OFF + MW_LEN) of the MR */
#define MW_LEN 1024
#define MW_MSG 4096	/* the receive/send area for SEND_WITH_INV, past the window */
#define MW_MSG_LEN 16
#define MW_HOPS 64
#define MW_WAIT_S 15
#define MW_ROUNDS 2

enum { WR_BIND = 1, WR_INV, WR_WRITE, WR_SEND, WR_RECV };

struct mw_probe {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp[MW_ROUNDS];
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	uint8_t *buf;
	int gidx;
	union ibv_gid gid;
	uint32_t peer_qpn[MW_ROUNDS];
	union ibv_gid peer_gid;
	int fd;
	int bad;	/* a check of this side failed */
};

static void die(const char *what)
{
	fprintf(stderr, "mw_probe: %s: %s\n", what, strerror(errno ? errno : EIO));
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

static struct ibv_qp *create_qp(struct mw_probe *p, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr ia = { .qp_type = type, .send_cq = p->cq, .recv_cq = p->cq,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 4,
						.max_send_sge = 1, .max_recv_sge = 1 } };

	return ibv_create_qp(p->pd, &ia);
}

/* -C WHAT: can the device do WHAT at all (the harness asks before it runs a row) */
static int capability(const char *dev, const char *what)
{
	struct mw_probe p = { 0 };
	struct ibv_qp *qp;
	struct ibv_mw *mw;

	p.ctx = open_dev(dev);
	if (!(p.pd = ibv_alloc_pd(p.ctx)) || !(p.cq = ibv_create_cq(p.ctx, 4, NULL, NULL, 0)))
		die("alloc_pd/create_cq");
	if (!strcmp(what, "uc")) {
		if (!(qp = create_qp(&p, IBV_QPT_UC))) {
			printf("%s: cannot create a UC QP: %s\n", dev, strerror(errno));
			return 3;
		}
		ibv_destroy_qp(qp);
	} else if (!strcmp(what, "mw")) {
		if (!(mw = ibv_alloc_mw(p.pd, IBV_MW_TYPE_2))) {
			printf("%s: cannot allocate a type 2 memory window: %s\n", dev, strerror(errno));
			return 3;
		}
		ibv_dealloc_mw(mw);
	} else {
		fprintf(stderr, "mw_probe: -C takes uc or mw, not '%s'\n", what);
		return 2;
	}
	ibv_destroy_cq(p.cq);
	ibv_dealloc_pd(p.pd);
	ibv_close_device(p.ctx);
	printf("%s: %s ok\n", dev, what);
	return 0;
}

static void probe_init(struct mw_probe *p, const char *dev, int window)
{
	/* the window side's MR grants no remote access itself: only the window does */
	int access = IBV_ACCESS_LOCAL_WRITE | (window ? IBV_ACCESS_MW_BIND : 0);

	p->ctx = open_dev(dev);
	if (!(p->pd = ibv_alloc_pd(p->ctx)))
		die("alloc_pd");
	if (!(p->cq = ibv_create_cq(p->ctx, 16, NULL, NULL, 0)))
		die("create_cq");
	for (int r = 0; r < MW_ROUNDS; r++)
		if (!(p->qp[r] = create_qp(p, IBV_QPT_RC)))
			die("create_qp RC");
	if (posix_memalign((void **)&p->buf, 4096, MW_BUF))
		die("posix_memalign");
	memset(p->buf, 0, MW_BUF);
	if (!(p->mr = ibv_reg_mr(p->pd, p->buf, MW_BUF, access)))
		die(window ? "reg_mr LOCAL_WRITE|MW_BIND" : "reg_mr");
	if (window && !(p->mw = ibv_alloc_mw(p->pd, IBV_MW_TYPE_2)))
		die("alloc_mw type 2");
	if (ibv_query_gid(p->ctx, 1, p->gidx, &p->gid))
		die("query_gid");
}

/* RESET -> INIT -> RTR -> RTS for the pair of round R */
static void qp_up(struct mw_probe *p, int r)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };

	if (ibv_modify_qp(p->qp[r], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		die("modify_qp INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = p->peer_qpn[r];
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = p->peer_gid;
	a.ah_attr.grh.sgid_index = (uint8_t)p->gidx;
	a.ah_attr.grh.hop_limit = MW_HOPS;
	if (ibv_modify_qp(p->qp[r], &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER))
		die("modify_qp RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 0;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(p->qp[r], &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify_qp RTS");
}

/* wait (bounded) for the completion of WR_ID; its status is the caller's to judge */
static void wait_wc(struct mw_probe *p, uint64_t wr_id, struct ibv_wc *wc)
{
	time_t end = time(NULL) + MW_WAIT_S;

	for (;;) {
		int n = ibv_poll_cq(p->cq, 1, wc);

		if (n < 0)
			die("poll_cq");
		if (n == 1 && wc->wr_id == wr_id)
			return;
		if (n == 1)
			fprintf(stderr, "mw_probe: unexpected completion of wr %llu: %s\n",
				(unsigned long long)wc->wr_id, ibv_wc_status_str(wc->status));
		if (time(NULL) > end) {
			errno = ETIMEDOUT;
			fprintf(stderr, "mw_probe: no completion of wr %llu\n", (unsigned long long)wr_id);
			die("wait_wc");
		}
	}
}

/* wait for WR_ID, which must succeed with OPCODE */
static void wait_ok(struct mw_probe *p, uint64_t wr_id, enum ibv_wc_opcode opcode, const char *what)
{
	struct ibv_wc wc;

	wait_wc(p, wr_id, &wc);
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "mw_probe: %s completed with %s (vendor_err 0x%x)\n", what,
			ibv_wc_status_str(wc.status), wc.vendor_err);
		exit(1);
	}
	if (wc.opcode != opcode) {
		fprintf(stderr, "mw_probe: %s completed with opcode %d, want %d\n", what, wc.opcode, opcode);
		exit(1);
	}
}

static void post_send(struct mw_probe *p, int r, struct ibv_send_wr *wr, const char *what)
{
	struct ibv_send_wr *bad;
	int err = ibv_post_send(p->qp[r], wr, &bad);

	if (err) {
		errno = err;
		die(what);
	}
}

/* --- the TCP side channel: one line each way at a time ---------------------------- */
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

static void say(struct mw_probe *p, const char *line)
{
	size_t n = strlen(line);

	if (write(p->fd, line, n) != (ssize_t)n || write(p->fd, "\n", 1) != 1)
		die("write to peer");
}

/* one line from the peer, which must start with WORD */
static void hear(struct mw_probe *p, const char *word, char *line, size_t size)
{
	size_t n = 0;

	while (n + 1 < size) {
		ssize_t r = read(p->fd, line + n, 1);

		if (r <= 0) {
			fprintf(stderr, "mw_probe: the peer closed before '%s'\n", word);
			exit(1);
		}
		if (line[n] == '\n')
			break;
		n++;
	}
	line[n] = 0;
	if (strncmp(line, word, strlen(word))) {
		fprintf(stderr, "mw_probe: the peer said '%s', want '%s ...'\n", line, word);
		exit(1);
	}
}

/* "QPN0 QPN1 GID" each way, GID as 32 hex digits */
static void exchange(struct mw_probe *p)
{
	char line[128];
	int n = snprintf(line, sizeof(line), "QP %06x %06x ", p->qp[0]->qp_num, p->qp[1]->qp_num);
	unsigned int b;

	for (int i = 0; i < 16; i++)
		n += snprintf(line + n, sizeof(line) - n, "%02x", p->gid.raw[i]);
	say(p, line);
	hear(p, "QP ", line, sizeof(line));
	if (sscanf(line, "QP %x %x", &p->peer_qpn[0], &p->peer_qpn[1]) != 2 || strlen(line) != 3 + 14 + 32)
		die("the peer's QP line");
	for (int i = 0; i < 16; i++) {
		if (sscanf(line + 17 + 2 * i, "%2x", &b) != 1)
			die("the peer's GID");
		p->peer_gid.raw[i] = (uint8_t)b;
	}
}

static uint8_t pattern(int r, int pass, int i)
{
	return (uint8_t)(0x40 * r + 0x11 * (pass + 1) + i * 7);
}

/* the window holds round R's first pattern and nothing outside it was written */
static int window_holds(const struct mw_probe *p, int r)
{
	for (int i = 0; i < MW_LEN; i++)
		if (p->buf[MW_OFF + i] != pattern(r, 0, i))
			return 0;
	for (int i = 0; i < MW_OFF; i++)
		if (p->buf[i])
			return 0;
	for (int i = MW_OFF + MW_LEN; i < MW_MSG; i++)
		if (p->buf[i])
			return 0;
	return 1;
}

static void report(struct mw_probe *p, int r, const char *step, const char *value, int ok)
{
	printf("mw.r%d.%s=%s\n", r, step, value);
	fflush(stdout);
	p->bad |= !ok;
}

/* --- the window side -------------------------------------------------------------- */
static uint32_t bind_window(struct mw_probe *p, int r)
{
	uint32_t rkey = ibv_inc_rkey(p->mw->rkey);
	struct ibv_send_wr wr = { .wr_id = WR_BIND, .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED };

	wr.bind_mw.mw = p->mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = p->mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)p->buf + MW_OFF;
	wr.bind_mw.bind_info.length = MW_LEN;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	post_send(p, r, &wr, "post_send BIND_MW");
	wait_ok(p, WR_BIND, IBV_WC_BIND_MW, "BIND_MW");
	/* a post_send bind leaves ibv_mw.rkey to the consumer (ibv_bind_mw sets it for a
	 * type 1 window); the next bind names the window by it, and rxe checks it */
	p->mw->rkey = rkey;
	return rkey;
}

static void invalidate_local(struct mw_probe *p, int r, uint32_t rkey)
{
	struct ibv_send_wr wr = { .wr_id = WR_INV, .opcode = IBV_WR_LOCAL_INV,
				  .send_flags = IBV_SEND_SIGNALED, .invalidate_rkey = rkey };

	post_send(p, r, &wr, "post_send LOCAL_INV");
	wait_ok(p, WR_INV, IBV_WC_LOCAL_INV, "LOCAL_INV");
	report(p, r, "inv", "local", 1);
}

/* the writer's SEND_WITH_INV arrives: the completion names the window's rkey */
static void invalidated_remotely(struct mw_probe *p, int r, uint32_t rkey)
{
	struct ibv_wc wc;

	wait_wc(p, WR_RECV, &wc);
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "mw_probe: the SEND_WITH_INV's receive completed with %s\n",
			ibv_wc_status_str(wc.status));
		exit(1);
	}
	report(p, r, "recv_opcode", wc.opcode == IBV_WC_RECV ? "recv" : "other", wc.opcode == IBV_WC_RECV);
	/* libibverbs says IBV_WC_WITH_INV (1 << 3). rxe's kernel side sets its own
	 * IB_WC_WITH_INVALIDATE (1 << 2) and the provider copies the flags as they are, so on
	 * rxe the invalidation shows as bit 2 (IBV_WC_IP_CSUM_OK's place): taken too, by name */
	report(p, r, "with_inv", wc.wc_flags & IBV_WC_WITH_INV ? "ibv" :
	       wc.wc_flags & (1u << 2) ? "kernel_bit2" : "none", wc.wc_flags & (IBV_WC_WITH_INV | 1u << 2));
	report(p, r, "invalidated_rkey", wc.invalidated_rkey == rkey ? "window" : "other",
	       wc.invalidated_rkey == rkey);
	if (wc.invalidated_rkey != rkey)
		fprintf(stderr, "mw_probe: invalidated rkey 0x%x, the window's is 0x%x\n",
			wc.invalidated_rkey, rkey);
	report(p, r, "inv", "remote", 1);
}

static void window_round(struct mw_probe *p, int r)
{
	struct ibv_sge sge = { .addr = (uintptr_t)p->buf + MW_MSG, .length = MW_MSG_LEN,
			       .lkey = p->mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = WR_RECV, .sg_list = &sge, .num_sge = 1 }, *rbad;
	char line[128];
	uint32_t rkey;
	int ok;

	if (r == 1 && ibv_post_recv(p->qp[r], &rwr, &rbad))
		die("post_recv");
	rkey = bind_window(p, r);
	report(p, r, "bind", "ok", 1);
	snprintf(line, sizeof(line), "WIN %llx %x %u", (unsigned long long)(uintptr_t)p->buf + MW_OFF,
		 rkey, MW_LEN);
	say(p, line);
	hear(p, "WROTE", line, sizeof(line));
	ok = window_holds(p, r);
	report(p, r, "write", ok ? "ok" : "bad", ok);
	if (r == 0)
		invalidate_local(p, r, rkey);
	else
		invalidated_remotely(p, r, rkey);
	say(p, "INV");
	hear(p, "DONE", line, sizeof(line));
	ok = window_holds(p, r);
	report(p, r, "after", ok ? "untouched" : "written", ok);
}

/* --- the writer --------------------------------------------------------------------- */
static void write_through(struct mw_probe *p, int r, int pass, uint64_t addr, uint32_t rkey,
			  struct ibv_wc *wc)
{
	struct ibv_sge sge = { .addr = (uintptr_t)p->buf, .length = MW_LEN, .lkey = p->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = WR_WRITE, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED };

	for (int i = 0; i < MW_LEN; i++)
		p->buf[i] = pattern(r, pass, i);
	wr.wr.rdma.remote_addr = addr;
	wr.wr.rdma.rkey = rkey;
	post_send(p, r, &wr, "post_send RDMA_WRITE");
	wait_wc(p, WR_WRITE, wc);
}

static void send_with_inv(struct mw_probe *p, int r, uint32_t rkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)p->buf + MW_MSG, .length = MW_MSG_LEN,
			       .lkey = p->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = WR_SEND, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_INV, .send_flags = IBV_SEND_SIGNALED,
				  .invalidate_rkey = rkey };

	post_send(p, r, &wr, "post_send SEND_WITH_INV");
	wait_ok(p, WR_SEND, IBV_WC_SEND, "SEND_WITH_INV");
	report(p, r, "send_inv", "ok", 1);
}

static void writer_round(struct mw_probe *p, int r)
{
	unsigned long long addr;
	unsigned int rkey, len;
	char line[128];
	struct ibv_wc wc;
	int ok;

	hear(p, "WIN", line, sizeof(line));
	if (sscanf(line, "WIN %llx %x %u", &addr, &rkey, &len) != 3 || len != MW_LEN)
		die("the peer's WIN line");
	write_through(p, r, 0, addr, rkey, &wc);
	ok = wc.status == IBV_WC_SUCCESS;
	if (!ok)
		fprintf(stderr, "mw_probe: WRITE through the window (rkey 0x%x) completed with %s\n",
			rkey, ibv_wc_status_str(wc.status));
	report(p, r, "write", ok ? "ok" : ibv_wc_status_str(wc.status), ok);
	if (!ok)
		exit(1);
	say(p, "WROTE");
	if (r == 1)
		send_with_inv(p, r, rkey);
	hear(p, "INV", line, sizeof(line));
	write_through(p, r, 1, addr, rkey, &wc);
	ok = wc.status == IBV_WC_REM_ACCESS_ERR;
	report(p, r, "after", ok ? "rem_access_err" : ibv_wc_status_str(wc.status), ok);
	snprintf(line, sizeof(line), "DONE %d", wc.status);
	say(p, line);
}

int main(int argc, char **argv)
{
	static struct mw_probe p;
	const char *dev = NULL, *peer = NULL, *can = NULL;
	int port = 18800, opt, window;

	while ((opt = getopt(argc, argv, "d:g:p:C:")) != -1) {
		switch (opt) {
		case 'd': dev = optarg; break;
		case 'g': p.gidx = atoi(optarg); break;
		case 'p': port = atoi(optarg); break;
		case 'C': can = optarg; break;
		default:
			fprintf(stderr, "usage: mw_probe -d DEV [-g GIDX] [-p PORT] [SERVER] | -d DEV -C uc|mw\n");
			return 2;
		}
	}
	if (!dev) {
		fprintf(stderr, "mw_probe: -d DEV is required\n");
		return 2;
	}
	if (can)
		return capability(dev, can);
	if (optind < argc)
		peer = argv[optind];	/* the server's address: this side is the writer */
	window = !peer;
	probe_init(&p, dev, window);
	p.fd = peer ? tcp_client(peer, port) : tcp_server(port);
	exchange(&p);
	printf("%s: qpn 0x%06x 0x%06x, peer 0x%06x 0x%06x\n", window ? "window side" : "writer",
	       p.qp[0]->qp_num, p.qp[1]->qp_num, p.peer_qpn[0], p.peer_qpn[1]);
	for (int r = 0; r < MW_ROUNDS; r++) {
		qp_up(&p, r);
		/* both QPs of the pair are in RTS before either side posts */
		say(&p, "UP");
		char line[16];
		hear(&p, "UP", line, sizeof(line));
		if (window)
			window_round(&p, r);
		else
			writer_round(&p, r);
	}
	close(p.fd);
	if (p.mw)
		ibv_dealloc_mw(p.mw);
	for (int r = 0; r < MW_ROUNDS; r++)
		ibv_destroy_qp(p.qp[r]);
	ibv_dereg_mr(p.mr);
	ibv_destroy_cq(p.cq);
	ibv_dealloc_pd(p.pd);
	ibv_close_device(p.ctx);
	free(p.buf);
	if (p.bad) {
		fprintf(stderr, "mw_probe: a check failed (see the mw.* lines)\n");
		return 1;
	}
	printf("mw_probe: done\n");
	return 0;
}
