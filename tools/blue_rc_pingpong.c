// SPDX-License-Identifier: MIT
/*
 * blue_rc_pingpong: rdma-core's ibv_rc_pingpong on libblue. The same options, the same
 * "LID:QPN:PSN:GID" exchange on TCP port 18515 (so either end may be the stock tool on
 * rxe or a real RNIC), the same SEND/RECV ping-pong and the same summary lines.
 *
 * Differences, all because blue is a RoCEv2 stack on a netdev:
 *  - -d names the netdev blue is attached to (`bluectl attach IF`); without -d, the
 *    first such netdev of this network namespace is used;
 *  - -g defaults to 1, the IPv4-mapped GID: RoCEv2 cannot run without a GID, whereas
 *    the stock tool sends a zero GID unless given -g;
 *  - every wait is bounded (--timeout, default 60 s): accept, connect, the exchange,
 *    and the time without any completion in the ping-pong loop;
 *  - -c checks every byte of the received buffer, not only the first of each page, and
 *    a bad buffer is an exit status of 1, not just a message. The pattern is the stock
 *    one (0x7b, with 0 at each page start), so it still checks a stock client.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/time.h>

#include <blue/blue.h>
#include <blue/pins.h>

enum {
	PINGPONG_RECV_WRID = 1,
	PINGPONG_SEND_WRID = 2,
};

struct pp_opts {
	const char *servername;
	const char *ifname;
	unsigned int port;
	unsigned int size;
	unsigned int rx_depth;
	unsigned int iters;
	enum blue_mtu mtu;
	int ib_port;
	int sl;
	int gidx;
	int use_event;
	int validate;
	int timeout_s;
	int dry_run;
};

struct pp_ctx {
	struct pp_opts *o;
	struct blue_context *ctx;
	struct blue_comp_channel *channel;
	struct blue_pd *pd;
	struct blue_mr *mr;
	struct blue_cq *cq;
	struct blue_qp *qp;
	uint8_t *buf;
	unsigned int send_flags;
	int pending;
	int routs;
	unsigned int num_cq_events;
	struct blue_cm_info local;
};

static long page_size;

static void usage(const char *argv0)
{
	printf("Usage:\n");
	printf("  %s            start a server and wait for connection\n", argv0);
	printf("  %s <host>     connect to server at <host>\n", argv0);
	printf("\n");
	printf("Options:\n");
	printf("  -p, --port=<port>      listen on/connect to port <port> (default 18515)\n");
	printf("  -d, --ib-dev=<dev>     use the netdev <dev> blue is attached to (default: "
	       "the first one)\n");
	printf("  -i, --ib-port=<port>   use port <port> of the device (only 1 exists)\n");
	printf("  -s, --size=<size>      size of message to exchange (default 4096)\n");
	printf("  -m, --mtu=<size>       path MTU (default 1024)\n");
	printf("  -r, --rx-depth=<dep>   number of receives to post at a time (default 500)\n");
	printf("  -n, --iters=<iters>    number of exchanges (default 1000)\n");
	printf("  -l, --sl=<sl>          service level value (accepted, unused on RoCEv2)\n");
	printf("  -e, --events           sleep on CQ events (default poll)\n");
	printf("  -g, --gid-idx=<gid index> local port gid index (default 1, the IPv4 GID)\n");
	printf("  -c, --chk              validate received buffer\n");
	printf("      --timeout=<sec>    bound on every wait (default 60)\n");
	printf("      --dry-run          print the settings and exit\n");
}

/* A whole decimal/hex number in [lo, hi], or -1 after a message. */
static long num_arg(const char *what, const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "invalid %s '%s': expected a number from %ld to %ld\n", what, s,
			lo, hi);
		return -1;
	}
	return v;
}

static enum blue_mtu mtu_to_enum(long mtu)
{
	switch (mtu) {
	case 256:	return BLUE_MTU_256;
	case 512:	return BLUE_MTU_512;
	case 1024:	return BLUE_MTU_1024;
	case 2048:	return BLUE_MTU_2048;
	case 4096:	return BLUE_MTU_4096;
	}
	return 0;
}

/* Return: 0 to run, 1 to exit with failure, 2 to exit with success (--help). */
static int parse_args(int argc, char **argv, struct pp_opts *o)
{
	static const struct option long_options[] = {
		{ .name = "port", .has_arg = 1, .val = 'p' },
		{ .name = "ib-dev", .has_arg = 1, .val = 'd' },
		{ .name = "ib-port", .has_arg = 1, .val = 'i' },
		{ .name = "size", .has_arg = 1, .val = 's' },
		{ .name = "mtu", .has_arg = 1, .val = 'm' },
		{ .name = "rx-depth", .has_arg = 1, .val = 'r' },
		{ .name = "iters", .has_arg = 1, .val = 'n' },
		{ .name = "sl", .has_arg = 1, .val = 'l' },
		{ .name = "events", .has_arg = 0, .val = 'e' },
		{ .name = "gid-idx", .has_arg = 1, .val = 'g' },
		{ .name = "chk", .has_arg = 0, .val = 'c' },
		{ .name = "odp", .has_arg = 0, .val = 'o' },
		{ .name = "iodp", .has_arg = 0, .val = 'O' },
		{ .name = "prefetch", .has_arg = 0, .val = 'P' },
		{ .name = "ts", .has_arg = 0, .val = 't' },
		{ .name = "dm", .has_arg = 0, .val = 'j' },
		{ .name = "new_send", .has_arg = 0, .val = 'N' },
		{ .name = "timeout", .has_arg = 1, .val = 'T' },
		{ .name = "dry-run", .has_arg = 0, .val = 'D' },
		{ .name = "help", .has_arg = 0, .val = 'h' },
		{}
	};
	long v;
	int c;

	memset(o, 0, sizeof(*o));
	o->port = BLUE_CM_PP_PORT;
	o->ib_port = 1;
	o->size = 4096;
	o->mtu = BLUE_MTU_1024;
	o->rx_depth = 500;
	o->iters = 1000;
	o->gidx = 1;
	o->timeout_s = 60;
	while ((c = getopt_long(argc, argv, "p:d:i:s:m:r:n:l:eg:coOPtjNh", long_options,
				NULL)) != -1) {
		v = 0;
		switch (c) {
		case 'p':
			v = num_arg("port", optarg, 1, 65535);
			o->port = (unsigned int)v;
			break;
		case 'd':
			o->ifname = optarg;
			break;
		case 'i':
			v = num_arg("IB port", optarg, 1, 255);
			if (v > 1) {
				fprintf(stderr, "IB port %ld: a blue device has port 1 only\n", v);
				v = -1;
			}
			o->ib_port = (int)v;
			break;
		case 's':
			v = num_arg("size", optarg, 1, INT_MAX);
			o->size = (unsigned int)v;
			break;
		case 'm':
			v = num_arg("MTU", optarg, 256, 4096);
			if (v > 0 && !(o->mtu = mtu_to_enum(v))) {
				fprintf(stderr, "invalid MTU %ld: use 256, 512, 1024, 2048 or 4096\n",
					v);
				v = -1;
			}
			break;
		case 'r':
			v = num_arg("rx depth", optarg, 1, 65536);
			o->rx_depth = (unsigned int)v;
			break;
		case 'n':
			v = num_arg("iterations", optarg, 1, INT_MAX);
			o->iters = (unsigned int)v;
			break;
		case 'l':
			v = num_arg("service level", optarg, 0, 15);
			o->sl = (int)v;
			break;
		case 'e':
			++o->use_event;
			break;
		case 'g':
			v = num_arg("GID index", optarg, 0, 255);
			o->gidx = (int)v;
			break;
		case 'c':
			o->validate = 1;
			break;
		case 'T':
			v = num_arg("timeout", optarg, 1, 3600);
			o->timeout_s = (int)v;
			break;
		case 'D':
			o->dry_run = 1;
			break;
		case 'h':
			usage(argv[0]);
			return 2;
		case 'o': case 'O': case 'P': case 't': case 'j': case 'N':
			fprintf(stderr, "option -%c (%s) is not supported by blue\n", c,
				c == 'o' || c == 'O' || c == 'P' ? "on-demand paging" :
				c == 't' ? "completion timestamps" :
				c == 'j' ? "device memory" : "the new post-send API");
			return 1;
		default:
			usage(argv[0]);
			return 1;
		}
		if (v < 0) {
			usage(argv[0]);
			return 1;
		}
	}
	if (optind == argc - 1) {
		o->servername = argv[optind];
	} else if (optind < argc) {
		usage(argv[0]);
		return 1;
	}
	return 0;
}

static void print_opts(const struct pp_opts *o)
{
	printf("mode=%s\n", o->servername ? "client" : "server");
	printf("server=%s\n", o->servername ? o->servername : "");
	printf("port=%u\n", o->port);
	printf("ib_dev=%s\n", o->ifname ? o->ifname : "");
	printf("ib_port=%d\n", o->ib_port);
	printf("size=%u\n", o->size);
	printf("mtu=%d\n", blue_mtu_bytes(o->mtu));
	printf("rx_depth=%u\n", o->rx_depth);
	printf("iters=%u\n", o->iters);
	printf("sl=%d\n", o->sl);
	printf("events=%d\n", o->use_event);
	printf("gid_idx=%d\n", o->gidx);
	printf("chk=%d\n", o->validate);
	printf("timeout=%d\n", o->timeout_s);
}

/*
 * The first netdev (by name) blue is attached to in this network namespace: one entry
 * of the namespace's pin directory each (blue_pin_dir).
 */
static int default_ifname(char *out, size_t len)
{
	struct dirent **list;
	char nsdir[PATH_MAX];
	int n, found = -1;

	if (blue_pin_dir(nsdir, sizeof(nsdir), NULL))
		return -1;
	n = scandir(nsdir, &list, NULL, alphasort);
	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		size_t nlen = strlen(list[i]->d_name);

		if (found < 0 && list[i]->d_name[0] != '.' && nlen < len &&
		    if_nametoindex(list[i]->d_name)) {
			memcpy(out, list[i]->d_name, nlen + 1);
			found = 0;
		}
		free(list[i]);
	}
	free(list);
	return found;
}

static int pp_post_recv(struct pp_ctx *c, int n)
{
	struct blue_sge sge = {
		.addr = (uintptr_t)c->buf,
		.length = c->o->size,
		.lkey = c->mr->lkey,
	};
	struct blue_recv_wr wr = {
		.wr_id = PINGPONG_RECV_WRID,
		.sg_list = &sge,
		.num_sge = 1,
	};
	struct blue_recv_wr *bad;
	int i;

	for (i = 0; i < n; i++)
		if (blue_post_recv(c->qp, &wr, &bad))
			break;
	return i;
}

static int pp_post_send(struct pp_ctx *c)
{
	struct blue_sge sge = {
		.addr = (uintptr_t)c->buf,
		.length = c->o->size,
		.lkey = c->mr->lkey,
	};
	struct blue_send_wr wr = {
		.wr_id = PINGPONG_SEND_WRID,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = BLUE_WR_SEND,
		.send_flags = c->send_flags,
	};
	struct blue_send_wr *bad;

	return blue_post_send(c->qp, &wr, &bad);
}

static int pp_init(struct pp_ctx *c)
{
	struct blue_qp_init_attr init = { 0 };
	struct blue_qp_attr attr;
	static char ifname[IF_NAMESIZE];
	struct pp_opts *o = c->o;
	int err;

	if (!o->ifname) {
		if (default_ifname(ifname, sizeof(ifname))) {
			fprintf(stderr, "No blue devices found: no netdev of this network "
				"namespace has blue attached (run `bluectl attach IF`, then "
				"pass -d IF)\n");
			return 1;
		}
		o->ifname = ifname;
	}
	if (posix_memalign((void **)&c->buf, (size_t)page_size, o->size)) {
		fprintf(stderr, "Couldn't allocate work buf.\n");
		return 1;
	}
	memset(c->buf, 0x7b, o->size);
	c->ctx = blue_open_device(o->ifname);
	if (!c->ctx) {
		fprintf(stderr, "Couldn't get context for %s: %s\n", o->ifname,
			strerror(errno));
		return 1;
	}
	if (o->use_event) {
		c->channel = blue_create_comp_channel(c->ctx);
		if (!c->channel) {
			fprintf(stderr, "Couldn't create completion channel\n");
			return 1;
		}
		/* we poll() its fd with a timeout; get_cq_event must not block on its own */
		err = blue_comp_channel_fd(c->channel);
		fcntl(err, F_SETFL, fcntl(err, F_GETFL) | O_NONBLOCK);
	}
	c->pd = blue_alloc_pd(c->ctx);
	if (!c->pd) {
		fprintf(stderr, "Couldn't allocate PD\n");
		return 1;
	}
	c->mr = blue_reg_mr(c->pd, c->buf, o->size, BLUE_ACCESS_LOCAL_WRITE);
	if (!c->mr) {
		fprintf(stderr, "Couldn't register MR\n");
		return 1;
	}
	c->cq = blue_create_cq(c->ctx, (int)o->rx_depth + 1, NULL, c->channel, 0);
	if (!c->cq) {
		fprintf(stderr, "Couldn't create CQ\n");
		return 1;
	}
	init.send_cq = c->cq;
	init.recv_cq = c->cq;
	init.cap.max_send_wr = 1;
	init.cap.max_recv_wr = o->rx_depth;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	init.qp_type = BLUE_QPT_RC;
	c->qp = blue_create_qp(c->pd, &init);
	if (!c->qp) {
		fprintf(stderr, "Couldn't create QP\n");
		return 1;
	}
	c->send_flags = BLUE_SEND_SIGNALED;
	if (blue_query_qp(c->qp, &attr, BLUE_QP_CAP, &init) == 0 &&
	    init.cap.max_inline_data >= o->size)
		c->send_flags |= BLUE_SEND_INLINE;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = BLUE_QPS_INIT;
	attr.pkey_index = 0;
	attr.port_num = (uint8_t)o->ib_port;
	attr.qp_access_flags = 0;
	if (blue_modify_qp(c->qp, &attr, BLUE_QP_STATE | BLUE_QP_PKEY_INDEX | BLUE_QP_PORT |
			   BLUE_QP_ACCESS_FLAGS)) {
		fprintf(stderr, "Failed to modify QP to INIT\n");
		return 1;
	}
	return 0;
}

static int pp_close(struct pp_ctx *c)
{
	int bad = 0;

	if (c->cq && c->num_cq_events)
		blue_ack_cq_events(c->cq, c->num_cq_events);
	if (c->qp && blue_destroy_qp(c->qp)) {
		fprintf(stderr, "Couldn't destroy QP\n");
		bad = 1;
	}
	if (c->cq && blue_destroy_cq(c->cq)) {
		fprintf(stderr, "Couldn't destroy CQ\n");
		bad = 1;
	}
	if (c->mr && blue_dereg_mr(c->mr)) {
		fprintf(stderr, "Couldn't deregister MR\n");
		bad = 1;
	}
	if (c->pd && blue_dealloc_pd(c->pd)) {
		fprintf(stderr, "Couldn't deallocate PD\n");
		bad = 1;
	}
	if (c->channel && blue_destroy_comp_channel(c->channel)) {
		fprintf(stderr, "Couldn't destroy completion channel\n");
		bad = 1;
	}
	if (c->ctx && blue_close_device(c->ctx)) {
		fprintf(stderr, "Couldn't release context\n");
		bad = 1;
	}
	free(c->buf);
	return bad;
}

static int connect_ctx(struct pp_ctx *c, const struct blue_cm_info *remote)
{
	struct blue_cm_info r = *remote;
	struct blue_cm_qp_attr qa;

	blue_cm_qp_attr_default(&qa);	/* rc_pingpong's timeout/retry values */
	qa.sgid_index = (uint8_t)c->o->gidx;
	r.mtu = c->o->mtu;		/* the exchange carries none: each side's -m */
	if (blue_cm_connect_qp(c->ctx, c->qp, c->local.psn, &r, &qa)) {
		fprintf(stderr, "Failed to connect the QP: %s\n", blue_cm_last_error());
		return EINVAL;
	}
	return 0;
}

static int server_on_remote(const struct blue_cm_info *remote, void *arg)
{
	return connect_ctx(arg, remote);
}

/* The exchange; the server connects inside it, the client right after. */
static int exch_dest(struct pp_ctx *c, struct blue_cm_info *remote)
{
	int tmo = c->o->timeout_s * 1000, lfd, fd, err;

	if (c->o->servername) {
		fd = blue_cm_connect(c->o->servername, (uint16_t)c->o->port, tmo);
		if (fd < 0) {
			fprintf(stderr, "Couldn't connect to %s:%u: %s\n", c->o->servername,
				c->o->port, blue_cm_last_error());
			return 1;
		}
		err = blue_cm_pp_client(fd, &c->local, remote, tmo);
		close(fd);
		if (err) {
			fprintf(stderr, "Couldn't read/write remote address: %s\n",
				blue_cm_last_error());
			return 1;
		}
		return 0;
	}
	lfd = blue_cm_listen(NULL, (uint16_t)c->o->port);
	if (lfd < 0) {
		fprintf(stderr, "Couldn't listen to port %u: %s\n", c->o->port,
			blue_cm_last_error());
		return 1;
	}
	fd = blue_cm_accept(lfd, tmo);
	close(lfd);
	if (fd < 0) {
		fprintf(stderr, "accept() failed: %s\n", blue_cm_last_error());
		return 1;
	}
	err = blue_cm_pp_server(fd, &c->local, remote, server_on_remote, c, tmo);
	close(fd);
	if (err) {
		fprintf(stderr, "Couldn't exchange addresses with the client: %s\n",
			blue_cm_last_error());
		return 1;
	}
	return 0;
}

static void print_dest(const char *what, const struct blue_cm_info *d)
{
	char gid[INET6_ADDRSTRLEN];

	inet_ntop(AF_INET6, d->gid.raw, gid, sizeof(gid));
	printf("  %s LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s\n", what, 0, d->qpn, d->psn,
	       gid);
}

static int parse_single_wc(struct pp_ctx *c, unsigned int *scnt, unsigned int *rcnt,
			   const struct blue_wc *wc)
{
	if (wc->status != BLUE_WC_SUCCESS) {
		fprintf(stderr, "Failed status %s (%d) for wr_id %d\n",
			blue_wc_status_str(wc->status), wc->status, (int)wc->wr_id);
		return 1;
	}
	switch ((int)wc->wr_id) {
	case PINGPONG_SEND_WRID:
		++*scnt;
		break;
	case PINGPONG_RECV_WRID:
		if (--c->routs <= 1) {
			c->routs += pp_post_recv(c, (int)c->o->rx_depth - c->routs);
			if (c->routs < (int)c->o->rx_depth) {
				fprintf(stderr, "Couldn't post receive (%d)\n", c->routs);
				return 1;
			}
		}
		++*rcnt;
		break;
	default:
		fprintf(stderr, "Completion for unknown wr_id %d\n", (int)wc->wr_id);
		return 1;
	}
	c->pending &= ~(int)wc->wr_id;
	if (*scnt < c->o->iters && !c->pending) {
		if (pp_post_send(c)) {
			fprintf(stderr, "Couldn't post send\n");
			return 1;
		}
		c->pending = PINGPONG_RECV_WRID | PINGPONG_SEND_WRID;
	}
	return 0;
}

static uint64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Event mode: the next CQ event, waiting at most until @deadline. */
static int wait_cq_event(struct pp_ctx *c, uint64_t deadline)
{
	struct pollfd p = { .fd = blue_comp_channel_fd(c->channel), .events = POLLIN };
	struct blue_cq *ev_cq;
	void *ev_ctx;
	uint64_t now;

	for (;;) {
		if (blue_get_cq_event(c->channel, &ev_cq, &ev_ctx) == 0)
			break;
		if (errno != EAGAIN && errno != EINTR) {
			fprintf(stderr, "Failed to get cq_event\n");
			return 1;
		}
		now = ms_now();
		if (now >= deadline)
			return -1;
		/* short naps too: the engine's timers run only when someone calls in */
		poll(&p, 1, deadline - now > 10 ? 10 : (int)(deadline - now));
	}
	++c->num_cq_events;
	if (ev_cq != c->cq) {
		fprintf(stderr, "CQ event for unknown CQ %p\n", (void *)ev_cq);
		return 1;
	}
	if (blue_req_notify_cq(c->cq, 0)) {
		fprintf(stderr, "Couldn't request CQ notification\n");
		return 1;
	}
	return 0;
}

static int run_loop(struct pp_ctx *c)
{
	unsigned int rcnt = 0, scnt = 0, iters = c->o->iters;
	uint64_t stall = (uint64_t)c->o->timeout_s * 1000u, deadline = ms_now() + stall;
	struct blue_wc wc[2];
	int ne, i, r;

	while (rcnt < iters || scnt < iters) {
		if (c->o->use_event) {
			r = wait_cq_event(c, deadline);
			if (r > 0)
				return 1;
			if (r < 0)
				goto stalled;
		}
		do {
			ne = blue_poll_cq(c->cq, 2, wc);
			if (ne < 0) {
				fprintf(stderr, "poll CQ failed %d\n", ne);
				return 1;
			}
			if (!ne && ms_now() >= deadline)
				goto stalled;
		} while (!c->o->use_event && ne < 1);
		if (ne)
			deadline = ms_now() + stall;
		for (i = 0; i < ne; ++i) {
			if (parse_single_wc(c, &scnt, &rcnt, &wc[i])) {
				fprintf(stderr, "parse WC failed %d\n", ne);
				return 1;
			}
		}
	}
	return 0;
stalled:
	fprintf(stderr, "No completion for %d s (sent %u, received %u of %u): is the peer "
		"still running?\n", c->o->timeout_s, scnt, rcnt, iters);
	return 1;
}

/* -c on the server: the stock client's pattern, 0 at each page start, 0x7b elsewhere. */
static int check_buf(const struct pp_ctx *c)
{
	int bad = 0, page = -1;

	for (unsigned int i = 0; i < c->o->size; i++) {
		uint8_t want = i % (unsigned int)page_size ? 0x7b : 0;

		if (c->buf[i] != want && (int)(i / page_size) != page) {
			page = (int)(i / page_size);
			printf("invalid data in page %d\n", page);
			bad = 1;
		}
	}
	return bad;
}

int main(int argc, char **argv)
{
	struct pp_opts o;
	struct pp_ctx c;
	struct blue_cm_info remote;
	struct timeval start, end;
	int rc, ret = 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	page_size = sysconf(_SC_PAGESIZE);
	rc = parse_args(argc, argv, &o);
	if (rc)
		return rc == 2 ? 0 : 1;
	if (o.dry_run) {
		print_opts(&o);
		return 0;
	}
	memset(&c, 0, sizeof(c));
	c.o = &o;
	if (pp_init(&c))
		goto out;
	c.routs = pp_post_recv(&c, (int)o.rx_depth);
	if (c.routs < (int)o.rx_depth) {
		fprintf(stderr, "Couldn't post receive (%d)\n", c.routs);
		goto out;
	}
	if (o.use_event && blue_req_notify_cq(c.cq, 0)) {
		fprintf(stderr, "Couldn't request CQ notification\n");
		goto out;
	}
	if (blue_cm_info_from_qp(c.ctx, c.qp, o.gidx, &c.local)) {
		fprintf(stderr, "can't read sgid of index %d\n", o.gidx);
		goto out;
	}
	print_dest("local address: ", &c.local);
	if (exch_dest(&c, &remote))
		goto out;
	print_dest("remote address:", &remote);
	if (o.servername && connect_ctx(&c, &remote))
		goto out;

	c.pending = PINGPONG_RECV_WRID;
	if (o.servername) {
		if (o.validate)
			for (unsigned int i = 0; i < o.size; i += (unsigned int)page_size)
				c.buf[i] = 0;	/* rdma-core's i / page_size % sizeof(char) */
		if (pp_post_send(&c)) {
			fprintf(stderr, "Couldn't post send\n");
			goto out;
		}
		c.pending |= PINGPONG_SEND_WRID;
	}
	if (gettimeofday(&start, NULL)) {
		perror("gettimeofday");
		goto out;
	}
	if (run_loop(&c))
		goto out;
	if (gettimeofday(&end, NULL)) {
		perror("gettimeofday");
		goto out;
	}
	{
		float usec = (float)((end.tv_sec - start.tv_sec) * 1000000 +
				     (end.tv_usec - start.tv_usec));
		long long bytes = (long long)o.size * o.iters * 2;

		printf("%lld bytes in %.2f seconds = %.2f Mbit/sec\n", bytes, usec / 1000000.,
		       bytes * 8. / usec);
		printf("%u iters in %.2f seconds = %.2f usec/iter\n", o.iters, usec / 1000000.,
		       usec / o.iters);
	}
	ret = 0;
	if (!o.servername && o.validate && check_buf(&c))
		ret = 1;
out:
	if (pp_close(&c))
		ret = 1;
	return ret;
}
