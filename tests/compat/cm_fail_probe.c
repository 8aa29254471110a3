// SPDX-License-Identifier: MIT
/*
 * cm_fail_probe: rdma_cm failure cases, with librdmacm + libibverbs calls only (run
 * against $(B)/compat's libraries by tests/compat/test_rdmacm_stress.sh). Every wait is
 * bounded (alarm: exit 3). One line per outcome on stdout, "probe: ..." for the test.
 *
 *   server IP PORT reject          rdma_reject every CONNECT_REQUEST with 20 bytes of
 *                                  private data (PRIV_PATTERN), then exit 0
 *   server IP PORT hold            print "probe: CONNECT_REQUEST held" and wait (to be
 *                                  killed mid-handshake)
 *   server IP PORT relisten PORT2  listen on PORT, destroy that id, listen on PORT again
 *                                  with a new id; listen on PORT2 and destroy it; print
 *                                  "probe: ready"; accept one connection on PORT and
 *                                  exit 0 after its DISCONNECTED
 *   server IP PORT traffic ROLE    accept one connection, ping-pong SENDs (see below)
 *   server IP PORT backlog N MS    listen with backlog N, read nothing for MS ms, then
 *                                  accept what is queued; print the events counted
 *   server IP PORT migrate         rdma_migrate_id the CONNECT_REQUEST's id to a new
 *                                  channel before accepting: its ESTABLISHED and
 *                                  DISCONNECTED must come there and none on the
 *                                  listener's; then migrate it to NULL (synchronous)
 *                                  and back, and exit 0
 *   client IP PORT expect EVENT STATUS [PRIVLEN]
 *                                  connect; the first event after the route must be
 *                                  EVENT (rdma_event_str's name) with STATUS; PRIVLEN:
 *                                  the event's private data starts with PRIVLEN bytes
 *                                  of PRIV_PATTERN. ESTABLISHED is then disconnected.
 *   client IP PORT traffic ROLE    connect, ping-pong SENDs
 *   client IP PORT multi N         N ids connect at once (no QPs), all must reach
 *                                  ESTABLISHED, then all disconnect
 *
 * Traffic (ROLE): 64-byte SENDs, the client sends seq 0, each side answers a message
 * with the next seq; an idle side (no completion for 300 ms) sends a keepalive the peer
 * drops, so a dead peer shows as a failed send. ROLE "stay": run until DISCONNECTED
 * (the peer's DREQ), or until a send fails (then rdma_disconnect, whose DREQ times out
 * into DISCONNECTED); ROLE "disconnect:MS": after MS ms, rdma_disconnect mid-traffic and
 * wait for DISCONNECTED. Both print "probe: DISCONNECTED after N messages (why)".
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <netdb.h>
#include <rdma/rdma_cma.h>
#include <infiniband/verbs.h>

#define PRIV_LEN	20
#define MSG_LEN		64
#define NRECV		16
#define KEEPALIVE	0xffffffffu
#define IDLE_MS		300

static struct rdma_event_channel *ch;

static void die(const char *what)
{
	printf("probe: %s failed: %s\n", what, strerror(errno));
	exit(1);
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char m[] = "probe: timed out (alarm)\n";

	(void)!write(1, m, sizeof(m) - 1);
	_exit(3);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void pattern(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(0xa0 + i * 7);
}

/* the next event on ch within @ms, or NULL (timeout) */
static struct rdma_cm_event *next_event(int ms)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *e;

	if (poll(&pfd, 1, ms) <= 0)
		return NULL;
	if (rdma_get_cm_event(ch, &e))
		return NULL;
	return e;
}

static struct rdma_cm_event *must_event(enum rdma_cm_event_type want, int ms)
{
	struct rdma_cm_event *e = next_event(ms);

	if (!e) {
		printf("probe: no %s within %d ms\n", rdma_event_str(want), ms);
		exit(1);
	}
	if (e->event != want) {
		printf("probe: %s (status %d), not %s\n", rdma_event_str(e->event), e->status,
		       rdma_event_str(want));
		exit(1);
	}
	return e;
}

static struct sockaddr_storage addr_of(const char *ip, const char *port)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_flags = AI_NUMERICHOST }, *res;
	struct sockaddr_storage ss;

	if (getaddrinfo(ip, port, &hints, &res)) {
		printf("probe: bad address %s:%s\n", ip, port);
		exit(2);
	}
	memcpy(&ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return ss;
}

static struct rdma_cm_id *listen_on(const char *ip, const char *port)
{
	struct sockaddr_storage ss = addr_of(ip, port);
	struct rdma_cm_id *id;

	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	if (rdma_bind_addr(id, (struct sockaddr *)&ss))
		die("rdma_bind_addr");
	if (rdma_listen(id, 8))
		die("rdma_listen");
	return id;
}

/* ---- traffic ---- */
struct conn {
	struct rdma_cm_id	*id;
	struct ibv_pd		*pd;
	struct ibv_cq		*cq;
	struct ibv_mr		*mr;
	uint8_t			buf[NRECV + 1][MSG_LEN];	/* NRECV receive, 1 send */
};

static void make_qp(struct conn *c, struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr a;

	c->id = id;
	c->pd = ibv_alloc_pd(id->verbs);
	if (!c->pd)
		die("ibv_alloc_pd");
	c->cq = ibv_create_cq(id->verbs, 2 * NRECV + 4, NULL, NULL, 0);
	if (!c->cq)
		die("ibv_create_cq");
	c->mr = ibv_reg_mr(c->pd, c->buf, sizeof(c->buf), IBV_ACCESS_LOCAL_WRITE);
	if (!c->mr)
		die("ibv_reg_mr");
	memset(&a, 0, sizeof(a));
	a.send_cq = a.recv_cq = c->cq;
	a.qp_type = IBV_QPT_RC;
	a.cap.max_send_wr = 4;
	a.cap.max_recv_wr = NRECV;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	a.sq_sig_all = 1;
	if (rdma_create_qp(id, c->pd, &a))
		die("rdma_create_qp");
}

static void post_recv(struct conn *c, unsigned int i)
{
	struct ibv_sge sge = { (uintptr_t)c->buf[i], MSG_LEN, c->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(c->id->qp, &wr, &bad))
		die("ibv_post_recv");
}

static int post_send(struct conn *c, uint32_t seq)
{
	struct ibv_sge sge = { (uintptr_t)c->buf[NRECV], MSG_LEN, c->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = NRECV, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

	memset(c->buf[NRECV], 0x5a, MSG_LEN);
	memcpy(c->buf[NRECV], &seq, sizeof(seq));
	return ibv_post_send(c->id->qp, &wr, &bad);
}

static void disconnected(unsigned long n, const char *why, int status)
{
	printf("probe: DISCONNECTED after %lu messages (%s) status %d\n", n, why, status);
	fflush(stdout);
	exit(0);
}

/* wait for DISCONNECTED (our DREQ's DREP or its timeout), bounded by the alarm */
static void wait_disconnected(unsigned long n, const char *why)
{
	struct rdma_cm_event *e;

	for (;;) {
		e = next_event(1000);
		if (!e)
			continue;
		if (e->event == RDMA_CM_EVENT_DISCONNECTED) {
			int st = e->status;

			rdma_ack_cm_event(e);
			disconnected(n, why, st);
		}
		printf("probe: %s while disconnecting\n", rdma_event_str(e->event));
		rdma_ack_cm_event(e);
	}
}

static void traffic(struct conn *c, int client, const char *role)
{
	long stop_ms = strncmp(role, "disconnect:", 11) ? -1 : atol(role + 11);
	uint64_t t0 = now_ms(), last = t0;
	unsigned long n = 0;
	int send_busy = 0, pending = 0;
	uint32_t pending_seq = 0;
	struct rdma_cm_event *e;
	struct ibv_wc wc[8];
	int fl = fcntl(ch->fd, F_GETFL);

	fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK);
	printf("probe: traffic (%s, role %s)\n", client ? "client" : "server", role);
	fflush(stdout);
	if (client) {
		if (post_send(c, 0))
			die("ibv_post_send");
		send_busy = 1;
	}
	for (;;) {
		int k = ibv_poll_cq(c->cq, 8, wc);

		for (int i = 0; i < k; i++) {
			last = now_ms();
			if (wc[i].status != IBV_WC_SUCCESS) {
				printf("probe: completion %s (%d) after %lu messages\n",
				       ibv_wc_status_str(wc[i].status), wc[i].status, n);
				fflush(stdout);
				/* a flush: the peer's DREQ moved the QP to ERROR, its
				 * DISCONNECTED is on the channel (or comes at once) */
				e = next_event(1000);
				if (e && e->event == RDMA_CM_EVENT_DISCONNECTED) {
					int st = e->status;

					rdma_ack_cm_event(e);
					disconnected(n, "the peer's DREQ", st);
				}
				if (e)
					rdma_ack_cm_event(e);
				rdma_disconnect(c->id);
				wait_disconnected(n, "a send failed, our DREQ");
			}
			if (wc[i].wr_id == NRECV) {
				send_busy = 0;
				if (pending) {
					if (post_send(c, pending_seq))
						die("ibv_post_send");
					send_busy = 1;
					pending = 0;
				}
				continue;
			}
			uint32_t seq;

			memcpy(&seq, c->buf[wc[i].wr_id], sizeof(seq));
			post_recv(c, (unsigned int)wc[i].wr_id);
			if (seq == KEEPALIVE)
				continue;
			n++;
			if (send_busy) {	/* our last send's ACK is not back yet */
				pending = 1;
				pending_seq = seq + 1;
			} else {
				if (post_send(c, seq + 1))
					die("ibv_post_send");
				send_busy = 1;
			}
		}
		if (!send_busy && now_ms() - last > IDLE_MS) {
			if (post_send(c, KEEPALIVE) == 0)
				send_busy = 1;
			last = now_ms();
		}
		if (stop_ms >= 0 && now_ms() - t0 >= (uint64_t)stop_ms) {
			printf("probe: rdma_disconnect after %lu messages\n", n);
			fflush(stdout);
			if (rdma_disconnect(c->id))
				die("rdma_disconnect");
			wait_disconnected(n, "we disconnected");
		}
		if (rdma_get_cm_event(ch, &e) == 0) {
			if (e->event == RDMA_CM_EVENT_DISCONNECTED) {
				int st = e->status;

				rdma_ack_cm_event(e);
				disconnected(n, "the peer's DREQ", st);
			}
			printf("probe: %s during traffic\n", rdma_event_str(e->event));
			rdma_ack_cm_event(e);
		}
		if (!k)
			usleep(50);
	}
}

static struct rdma_conn_param conn_param(void)
{
	struct rdma_conn_param p;

	memset(&p, 0, sizeof(p));
	p.responder_resources = 1;
	p.initiator_depth = 1;
	p.retry_count = 1;	/* a dead peer fails a send soon */
	p.rnr_retry_count = 7;
	return p;
}

/* backlog N HOLD_MS: listen with backlog N, read no event for HOLD_MS, then accept
 * (without a QP) every CONNECT_REQUEST queued; count the events until 3 s pass idle */
static int backlog_server(const char *ip, const char *port, int argc, char **argv)
{
	struct sockaddr_storage ss = addr_of(ip, port);
	struct rdma_conn_param p = conn_param();
	int nreq = 0, nest = 0, ndisc = 0;
	struct rdma_cm_event *e;
	struct rdma_cm_id *l;

	if (argc < 3)
		return 2;
	if (rdma_create_id(ch, &l, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	if (rdma_bind_addr(l, (struct sockaddr *)&ss))
		die("rdma_bind_addr");
	if (rdma_listen(l, atoi(argv[1])))
		die("rdma_listen");
	printf("probe: ready\n");
	fflush(stdout);
	usleep((useconds_t)atoi(argv[2]) * 1000);
	while ((e = next_event(3000))) {
		struct rdma_cm_id *id = e->id;
		enum rdma_cm_event_type t = e->event;

		rdma_ack_cm_event(e);
		if (t == RDMA_CM_EVENT_CONNECT_REQUEST) {
			nreq++;
			if (rdma_accept(id, &p))
				die("rdma_accept");
		} else if (t == RDMA_CM_EVENT_ESTABLISHED) {
			nest++;
		} else if (t == RDMA_CM_EVENT_DISCONNECTED) {
			ndisc++;
			rdma_destroy_id(id);
		} else {
			printf("probe: %s\n", rdma_event_str(t));
		}
	}
	printf("probe: backlog: %d CONNECT_REQUEST, %d ESTABLISHED, %d DISCONNECTED\n",
	       nreq, nest, ndisc);
	rdma_destroy_id(l);
	return 0;
}

/*
 * migrate: @req (a CONNECT_REQUEST's id on ch) moves to a channel of its own before it
 * accepts; everything of it must arrive there and nothing more on ch
 */
static int migrate_server(struct rdma_cm_id *l, struct rdma_cm_id *req)
{
	struct rdma_event_channel *lch = ch, *ch2 = rdma_create_event_channel();
	struct rdma_conn_param p = conn_param();
	struct rdma_cm_event *e;
	static struct conn c;

	if (!ch2)
		die("rdma_create_event_channel");
	if (rdma_migrate_id(req, ch2))
		die("rdma_migrate_id (to a new channel)");
	if (req->channel != ch2) {
		printf("probe: after rdma_migrate_id the id's channel is not the new one\n");
		return 1;
	}
	make_qp(&c, req);
	if (rdma_accept(req, &p))
		die("rdma_accept");
	ch = ch2;
	rdma_ack_cm_event(must_event(RDMA_CM_EVENT_ESTABLISHED, 10000));
	printf("probe: ESTABLISHED on the migrated channel\n");
	fflush(stdout);
	rdma_ack_cm_event(must_event(RDMA_CM_EVENT_DISCONNECTED, 30000));
	printf("probe: DISCONNECTED on the migrated channel\n");
	ch = lch;
	e = next_event(200);
	if (e) {
		printf("probe: the listener's channel got %s for a migrated id\n",
		       rdma_event_str(e->event));
		return 1;
	}
	if (rdma_migrate_id(req, NULL) || !req->channel || req->channel == ch2)
		die("rdma_migrate_id (to synchronous)");
	if (rdma_migrate_id(req, ch2) || req->channel != ch2)
		die("rdma_migrate_id (back from synchronous)");
	printf("probe: migrated to synchronous and back\n");
	rdma_destroy_qp(req);
	if (rdma_destroy_id(req))
		die("rdma_destroy_id (migrated)");
	rdma_destroy_event_channel(ch2);
	rdma_destroy_id(l);
	return 0;
}

/* ---- server ---- */
static int server(const char *ip, const char *port, int argc, char **argv)
{
	const char *mode = argv[0];
	struct rdma_cm_event *e;
	struct rdma_cm_id *l, *req;
	static struct conn c;

	if (!strcmp(mode, "relisten")) {
		if (argc < 2)
			return 2;
		l = listen_on(ip, port);
		if (rdma_destroy_id(l))
			die("rdma_destroy_id (first listener)");
		l = listen_on(ip, port);	/* a new id, the same port */
		printf("probe: listening again on %s\n", port);
		req = listen_on(ip, argv[1]);
		if (rdma_destroy_id(req))
			die("rdma_destroy_id (second port)");
		printf("probe: ready\n");
		fflush(stdout);
	} else if (!strcmp(mode, "backlog")) {
		return backlog_server(ip, port, argc, argv);
	} else {
		l = listen_on(ip, port);
		printf("probe: ready\n");
		fflush(stdout);
	}
	e = must_event(RDMA_CM_EVENT_CONNECT_REQUEST, 30000);
	req = e->id;
	rdma_ack_cm_event(e);
	if (!strcmp(mode, "reject")) {
		uint8_t p[PRIV_LEN];

		pattern(p, sizeof(p));
		if (rdma_reject(req, p, sizeof(p)))
			die("rdma_reject");
		printf("probe: rejected with %d bytes\n", PRIV_LEN);
		rdma_destroy_id(req);
		rdma_destroy_id(l);
		return 0;
	}
	if (!strcmp(mode, "migrate"))
		return migrate_server(l, req);
	if (!strcmp(mode, "hold")) {
		printf("probe: CONNECT_REQUEST held\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	uint8_t ack = 14;	/* 67 ms, as the client's */

	if (rdma_set_option(req, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &ack, sizeof(ack)))
		die("rdma_set_option ACK_TIMEOUT");
	make_qp(&c, req);
	for (int i = 0; i < NRECV; i++)
		post_recv(&c, (unsigned int)i);
	struct rdma_conn_param p = conn_param();

	if (rdma_accept(req, &p))
		die("rdma_accept");
	rdma_ack_cm_event(must_event(RDMA_CM_EVENT_ESTABLISHED, 10000));
	printf("probe: ESTABLISHED\n");
	fflush(stdout);
	if (!strcmp(mode, "traffic") && argc >= 2)
		traffic(&c, 0, argv[1]);
	e = must_event(RDMA_CM_EVENT_DISCONNECTED, 30000);
	rdma_ack_cm_event(e);
	printf("probe: DISCONNECTED\n");
	rdma_disconnect(req);
	rdma_destroy_qp(req);
	rdma_destroy_id(req);
	rdma_destroy_id(l);
	return 0;
}

/* multi N: N ids of one process connect at once (no QPs); each must reach ESTABLISHED
 * (printed with its time), then all disconnect */
static int multi_client(struct sockaddr_storage *dst, int n)
{
	struct rdma_conn_param p = conn_param();
	struct rdma_cm_id *ids[16];
	struct rdma_cm_event *e;
	uint64_t t0;
	int est = 0, disc = 0;

	if (n < 1 || n > 16)
		return 2;
	for (int i = 0; i < n; i++) {
		if (rdma_create_id(ch, &ids[i], (void *)(uintptr_t)i, RDMA_PS_TCP))
			die("rdma_create_id");
		if (rdma_resolve_addr(ids[i], NULL, (struct sockaddr *)dst, 2000))
			die("rdma_resolve_addr");
		rdma_ack_cm_event(must_event(RDMA_CM_EVENT_ADDR_RESOLVED, 5000));
		if (rdma_resolve_route(ids[i], 2000))
			die("rdma_resolve_route");
		rdma_ack_cm_event(must_event(RDMA_CM_EVENT_ROUTE_RESOLVED, 5000));
	}
	t0 = now_ms();
	for (int i = 0; i < n; i++)
		if (rdma_connect(ids[i], &p))
			die("rdma_connect");
	while (est < n && (e = next_event(30000))) {
		int i = (int)(uintptr_t)e->id->context;

		printf("probe: connection %d: %s status %d after %llu ms\n", i,
		       rdma_event_str(e->event), e->status, (unsigned long long)(now_ms() - t0));
		if (e->event == RDMA_CM_EVENT_CONNECT_RESPONSE)
			rdma_establish(e->id);
		else if (e->event != RDMA_CM_EVENT_ESTABLISHED)
			return 1;
		est++;
		rdma_ack_cm_event(e);
	}
	printf("probe: %d of %d ESTABLISHED\n", est, n);
	if (est < n)
		return 1;
	for (int i = 0; i < n; i++)
		rdma_disconnect(ids[i]);
	while (disc < n && (e = next_event(30000))) {
		disc += e->event == RDMA_CM_EVENT_DISCONNECTED;
		rdma_ack_cm_event(e);
	}
	printf("probe: %d of %d DISCONNECTED\n", disc, n);
	for (int i = 0; i < n; i++)
		rdma_destroy_id(ids[i]);
	return disc == n ? 0 : 1;
}

/* ---- client ---- */
static int client(const char *ip, const char *port, int argc, char **argv)
{
	struct sockaddr_storage dst = addr_of(ip, port);
	struct rdma_conn_param p = conn_param();
	struct rdma_cm_event *e;
	struct rdma_cm_id *id;
	static struct conn c;
	uint8_t ack = 14;	/* 67 ms: a dead peer fails a send within a second */

	if (!strcmp(argv[0], "multi"))
		return argc < 2 ? 2 : multi_client(&dst, atoi(argv[1]));
	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000))
		die("rdma_resolve_addr");
	rdma_ack_cm_event(must_event(RDMA_CM_EVENT_ADDR_RESOLVED, 5000));
	if (rdma_resolve_route(id, 2000))
		die("rdma_resolve_route");
	rdma_ack_cm_event(must_event(RDMA_CM_EVENT_ROUTE_RESOLVED, 5000));
	if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &ack, sizeof(ack)))
		die("rdma_set_option ACK_TIMEOUT");
	make_qp(&c, id);
	for (int i = 0; i < NRECV; i++)
		post_recv(&c, (unsigned int)i);
	uint64_t t0 = now_ms();

	if (rdma_connect(id, &p))
		die("rdma_connect");
	if (!strcmp(argv[0], "traffic") && argc >= 2) {
		rdma_ack_cm_event(must_event(RDMA_CM_EVENT_ESTABLISHED, 10000));
		printf("probe: ESTABLISHED\n");
		traffic(&c, 1, argv[1]);
	}
	if (strcmp(argv[0], "expect") || argc < 3)
		return 2;
	e = next_event(60000);
	if (!e) {
		printf("probe: no event after rdma_connect\n");
		return 1;
	}
	printf("probe: %s status %d after %llu ms\n", rdma_event_str(e->event), e->status,
	       (unsigned long long)(now_ms() - t0));
	if (strcmp(rdma_event_str(e->event), argv[1]) || e->status != atoi(argv[2])) {
		printf("probe: wanted %s status %s\n", argv[1], argv[2]);
		return 1;
	}
	if (argc >= 4) {
		size_t want = (size_t)atoi(argv[3]);
		uint8_t p2[256];

		pattern(p2, sizeof(p2));
		if (want > sizeof(p2) || e->param.conn.private_data_len < want ||
		    !e->param.conn.private_data ||
		    memcmp(e->param.conn.private_data, p2, want)) {
			printf("probe: private data: %u bytes, not the %zu bytes sent\n",
			       e->param.conn.private_data_len, want);
			return 1;
		}
		printf("probe: private data: the %zu bytes sent (of %u)\n", want,
		       e->param.conn.private_data_len);
	}
	if (e->event == RDMA_CM_EVENT_ESTABLISHED) {
		rdma_ack_cm_event(e);
		if (rdma_disconnect(id))
			die("rdma_disconnect");
		rdma_ack_cm_event(must_event(RDMA_CM_EVENT_DISCONNECTED, 30000));
		printf("probe: DISCONNECTED\n");
		rdma_destroy_qp(id);
	} else {
		rdma_ack_cm_event(e);
	}
	rdma_destroy_id(id);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGALRM, on_alarm);
	alarm(60);
	if (argc < 5) {
		fprintf(stderr, "usage: cm_fail_probe server|client IP PORT MODE [ARGS]\n");
		return 2;
	}
	ch = rdma_create_event_channel();
	if (!ch)
		die("rdma_create_event_channel");
	if (!strcmp(argv[1], "server"))
		return server(argv[2], argv[3], argc - 4, argv + 4);
	if (!strcmp(argv[1], "client"))
		return client(argv[2], argv[3], argc - 4, argv + 4);
	return 2;
}
