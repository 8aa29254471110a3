// SPDX-License-Identifier: MIT
/*
 * bluectl metrics --listen ADDR:PORT: a tiny HTTP/1.1 server for Prometheus to scrape.
 *
 * One thread, one poll() loop over the listening socket and up to BLUE_HTTP_MAX_CONNS
 * clients, each with its own buffer and one absolute deadline, BLUE_HTTP_DEADLINE_MS
 * from its accept to its response sent: a client that trickles its request (a byte
 * just inside any per-read timeout) is cut at that deadline with a 408, and meanwhile
 * the others are served. When all slots are taken, a new client replaces the oldest
 * one, which is the closest to its deadline anyway. A request head is at most
 * HTTP_REQ_MAX_HEAD bytes (http_req.h); a malformed one gets its 4xx/5xx status, a log
 * line on stderr naming the client and the fault, and the close. `Connection: close`
 * after every response: scrapes are rare and small, and it keeps every state bounded.
 *
 * GET /metrics gets a fresh snapshot each time; other paths 404. The server stops on
 * SIGINT/SIGTERM or once --max-requests connections are done with.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "tools/bluectl/bluectl.h"
#include "tools/bluectl/http_req.h"

#define BLUE_HTTP_DEADLINE_MS	2000
#define BLUE_HTTP_MAX_CONNS	8
/* the longest poll() sleep: a signal that raced with poll is seen this late */
#define BLUE_HTTP_TICK_MS	500

enum conn_state {
	C_FREE,
	C_READ,		/* reading the request head */
	C_WRITE,	/* sending the response */
	C_DRAIN,	/* response sent, write side shut: reading to the client's close, so
			 * unread request bytes do not turn our close into a RST that could
			 * destroy the response before the client reads it */
};

struct conn {
	enum conn_state st;
	int fd;
	uint64_t accepted_ns, deadline_ns;
	char peer[64];			/* "ADDR:PORT", for the log */
	char in[HTTP_REQ_MAX_HEAD];
	size_t got;
	char *out;			/* the whole response */
	size_t out_len, out_off;
};

struct server {
	const char *ifname;
	const struct opts *o;
	int lfd;
	long done;			/* connections finished, for --max-requests */
	struct conn c[BLUE_HTTP_MAX_CONNS];
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void log_conn(const struct conn *c, const char *what)
{
	fprintf(stderr, "bluectl: metrics: %s: %s\n", c->peer, what);
}

/* "HOST:PORT" or "[V6]:PORT", numeric, the host never left out: an endpoint that
 * exposes the transport's state is bound where the operator says, not on every
 * address by default. */
static struct addrinfo *listen_addr(const char *addr)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
	struct addrinfo *res = NULL;
	char host[256], *colon;
	const char *port = "";
	size_t n;
	int err;

	snprintf(host, sizeof(host), "%s", addr);
	colon = strrchr(host, ':');
	if (colon) {
		*colon = '\0';
		port = colon + 1;
		n = strlen(host);
		if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
			host[n - 1] = '\0';
			memmove(host, host + 1, n - 1);
		}
	}
	if (!colon || !host[0] || !port[0]) {
		fprintf(stderr, "bluectl: --listen '%s': want ADDR:PORT with an explicit address "
			"(e.g. 10.0.0.1:9464, 127.0.0.1:9464 or [::1]:9464)\n", addr);
		return NULL;
	}
	err = getaddrinfo(host, port, &hints, &res);
	if (err) {
		fprintf(stderr, "bluectl: --listen '%s': %s (numeric address and port)\n", addr,
			gai_strerror(err));
		return NULL;
	}
	return res;
}

static int listen_on(const char *addr, struct addrinfo *res)
{
	int fd, one = 1;

	fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		fprintf(stderr, "bluectl: socket: %s\n", strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, 16)) {
		fprintf(stderr, "bluectl: --listen %s: %s\n", addr, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static void conn_close(struct server *sv, struct conn *c)
{
	close(c->fd);
	free(c->out);
	c->out = NULL;
	c->st = C_FREE;
	sv->done++;
}

/* A complete response (head, and body unless @with_body is false: HEAD) to send. */
static void conn_respond(struct conn *c, const char *status, const char *type,
			 const char *body, size_t len, bool with_body)
{
	FILE *f = open_memstream(&c->out, &c->out_len);

	if (!f) {
		c->out = NULL;
		c->out_len = 0;
	} else {
		fprintf(f, "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			"Connection: close\r\n\r\n", status, type, len);
		if (with_body)
			fwrite(body, 1, len, f);
		fclose(f);
	}
	c->out_off = 0;
	c->st = C_WRITE;
}

static void conn_respond_text(struct conn *c, const char *status, const char *text)
{
	conn_respond(c, status, "text/plain", text, strlen(text), true);
}

/* GET or HEAD of a well-formed request: the metrics, or 404. */
static void conn_serve(struct server *sv, struct conn *c, const struct http_req *r)
{
	char *body = NULL;
	size_t len = 0;
	struct snap s;
	FILE *f;

	if (r->path_len != 8 || memcmp(r->target, "/metrics", 8)) {
		conn_respond_text(c, "404 Not Found", "try /metrics\n");
		return;
	}
	f = open_memstream(&body, &len);
	if (!f || snap_take(sv->ifname, &s)) {
		if (f)
			fclose(f);
		free(body);
		log_conn(c, "503 Service Unavailable (blue's pins unreadable)");
		conn_respond_text(c, "503 Service Unavailable", "blue's pins unreadable\n");
		return;
	}
	metrics_write(&s, sv->o, f);
	snap_free(&s);
	fclose(f);
	conn_respond(c, "200 OK", "text/plain; version=0.0.4; charset=utf-8", body, len,
		     r->method != HTTP_HEAD);
	free(body);
}

static void conn_refuse(struct conn *c, enum http_verdict v, const struct http_req *r)
{
	char text[160];

	fprintf(stderr, "bluectl: metrics: %s: %s (%s); closing\n", c->peer,
		http_verdict_status(v), r->why);
	snprintf(text, sizeof(text), "%s\n", r->why);
	conn_respond_text(c, http_verdict_status(v), text);
}

static void conn_read(struct server *sv, struct conn *c)
{
	enum http_verdict v;
	struct http_req r;
	ssize_t n;

	n = recv(c->fd, c->in + c->got, sizeof(c->in) - c->got, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		/* a port probe or a client that gave up: nothing to answer */
		conn_close(sv, c);
		return;
	}
	c->got += (size_t)n;
	v = http_req_parse(c->in, c->got, &r);
	if (v == HTTP_MORE)
		return;
	if (v == HTTP_OK)
		conn_serve(sv, c, &r);
	else
		conn_refuse(c, v, &r);
}

static void conn_write(struct server *sv, struct conn *c)
{
	ssize_t n;

	while (c->out_off < c->out_len) {
		n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
			 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			conn_close(sv, c);
			return;
		}
		c->out_off += (size_t)n;
	}
	shutdown(c->fd, SHUT_WR);
	c->st = C_DRAIN;
}

static void conn_drain(struct server *sv, struct conn *c)
{
	char sink[4096];
	ssize_t n;

	do
		n = recv(c->fd, sink, sizeof(sink), MSG_DONTWAIT);
	while (n > 0);
	if (n == 0 || (errno != EAGAIN && errno != EINTR))
		conn_close(sv, c);
}

/* Past its deadline: a 408 if it never finished its request (best effort, one
 * non-blocking send), and the close. */
static void conn_expire(struct server *sv, struct conn *c)
{
	static const char r408[] = "HTTP/1.1 408 Request Timeout\r\nContent-Type: text/plain\r\n"
				   "Content-Length: 0\r\nConnection: close\r\n\r\n";

	if (c->st == C_READ) {
		fprintf(stderr, "bluectl: metrics: %s: request not complete within %d ms (%zu "
			"bytes); 408, closing\n", c->peer, BLUE_HTTP_DEADLINE_MS, c->got);
		if (send(c->fd, r408, sizeof(r408) - 1, MSG_DONTWAIT | MSG_NOSIGNAL) > 0)
			shutdown(c->fd, SHUT_WR);
	} else if (c->st == C_WRITE) {
		fprintf(stderr, "bluectl: metrics: %s: response not taken within %d ms (%zu of "
			"%zu bytes); closing\n", c->peer, BLUE_HTTP_DEADLINE_MS, c->out_off,
			c->out_len);
	}
	conn_close(sv, c);
}

/* A slot for a new client: a free one, else the oldest client's, which is dropped. */
static struct conn *conn_slot(struct server *sv)
{
	struct conn *oldest = NULL;
	unsigned int i;

	for (i = 0; i < BLUE_HTTP_MAX_CONNS; i++) {
		if (sv->c[i].st == C_FREE)
			return &sv->c[i];
		if (!oldest || sv->c[i].accepted_ns < oldest->accepted_ns)
			oldest = &sv->c[i];
	}
	log_conn(oldest, "dropped: every connection slot taken, and this client the oldest");
	conn_close(sv, oldest);
	return oldest;
}

static void peer_name(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[48], port[8];

	if (getpeername(fd, (struct sockaddr *)&ss, &sl) ||
	    getnameinfo((struct sockaddr *)&ss, sl, host, sizeof(host), port, sizeof(port),
			NI_NUMERICHOST | NI_NUMERICSERV))
		snprintf(buf, len, "?");
	else
		snprintf(buf, len, ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, port);
}

static void accept_all(struct server *sv)
{
	struct conn *c;
	int fd;

	while ((fd = accept4(sv->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
		c = conn_slot(sv);
		c->fd = fd;
		c->st = C_READ;
		c->got = 0;
		c->accepted_ns = mono_ns();
		c->deadline_ns = c->accepted_ns + BLUE_HTTP_DEADLINE_MS * 1000000ull;
		peer_name(fd, c->peer, sizeof(c->peer));
	}
}

static void conn_step(struct server *sv, struct conn *c)
{
	switch (c->st) {
	case C_READ:
		conn_read(sv, c);
		/* a response ready now is sent now, not after another poll round */
		if (c->st == C_WRITE)
			conn_write(sv, c);
		break;
	case C_WRITE:
		conn_write(sv, c);
		break;
	case C_DRAIN:
		conn_drain(sv, c);
		break;
	case C_FREE:
		break;
	}
}

/* One round: wait for any socket or the nearest deadline, step the ready ones, expire
 * the late ones, accept the new ones. */
static void serve_round(struct server *sv)
{
	struct pollfd p[1 + BLUE_HTTP_MAX_CONNS];
	struct conn *map[1 + BLUE_HTTP_MAX_CONNS];
	uint64_t now = mono_ns(), wait_ns = BLUE_HTTP_TICK_MS * 1000000ull;
	unsigned int i, n = 1;

	p[0] = (struct pollfd){ .fd = sv->lfd, .events = POLLIN };
	for (i = 0; i < BLUE_HTTP_MAX_CONNS; i++) {
		struct conn *c = &sv->c[i];

		if (c->st == C_FREE)
			continue;
		if (c->deadline_ns <= now)
			wait_ns = 0;
		else if (c->deadline_ns - now < wait_ns)
			wait_ns = c->deadline_ns - now;
		map[n] = c;
		p[n++] = (struct pollfd){ .fd = c->fd,
					  .events = c->st == C_WRITE ? POLLOUT : POLLIN };
	}
	/* round up: waking a hair early would only spin */
	if (poll(p, n, (int)((wait_ns + 999999) / 1000000)) < 0)
		return;		/* EINTR: the caller looks at stop */
	for (i = 1; i < n; i++)
		if (p[i].revents)
			conn_step(sv, map[i]);
	now = mono_ns();
	for (i = 0; i < BLUE_HTTP_MAX_CONNS; i++)
		if (sv->c[i].st != C_FREE && sv->c[i].deadline_ns <= now)
			conn_expire(sv, &sv->c[i]);
	if (p[0].revents & POLLIN)
		accept_all(sv);
}

int metrics_serve(const char *ifname, const char *addr, const struct opts *o)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct addrinfo *res;
	struct server *sv;
	struct snap s;
	unsigned int i;

	res = listen_addr(addr);
	if (!res)
		return 1;
	/* fail now, not at the first scrape, if the pins are not there */
	if (snap_take(ifname, &s)) {
		freeaddrinfo(res);
		return 1;
	}
	snap_free(&s);
	sv = calloc(1, sizeof(*sv));
	if (!sv) {
		freeaddrinfo(res);
		fprintf(stderr, "bluectl: metrics: out of memory\n");
		return 1;
	}
	sv->ifname = ifname;
	sv->o = o;
	sv->lfd = listen_on(addr, res);
	freeaddrinfo(res);
	if (sv->lfd < 0) {
		free(sv);
		return 1;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	printf("serving %s metrics at http://%s/metrics\n", ifname, addr);
	fflush(stdout);
	while (!stop && (!o->max_requests || sv->done < o->max_requests))
		serve_round(sv);
	for (i = 0; i < BLUE_HTTP_MAX_CONNS; i++)
		if (sv->c[i].st != C_FREE)
			conn_close(sv, &sv->c[i]);
	close(sv->lfd);
	free(sv);
	return 0;
}
