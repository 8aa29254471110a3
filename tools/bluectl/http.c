// SPDX-License-Identifier: MIT
/*
 * bluectl metrics --listen ADDR:PORT: a tiny HTTP/1.1 server for Prometheus to scrape.
 * One thread, one connection at a time, `Connection: close` after every response:
 * scrapes are rare and small, and this keeps it obviously bounded. Every wait is
 * bounded (a client gets BLUE_HTTP_IO_MS to send its request), a request is at most
 * HTTP_REQ_MAX_HEAD bytes (http_req.h), and the server stops on SIGINT/SIGTERM or after
 * --max-requests. GET /metrics gets a fresh snapshot each time; anything else 404/405.
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

#define BLUE_HTTP_IO_MS		2000

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* "HOST:PORT" or "[V6]:PORT" -> a listening socket. */
static int listen_on(const char *addr)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV };
	struct addrinfo *res = NULL;
	char host[256], *colon;
	const char *port;
	int fd = -1, one = 1, err;

	snprintf(host, sizeof(host), "%s", addr);
	colon = strrchr(host, ':');
	if (!colon || colon == host || !colon[1]) {
		fprintf(stderr, "bluectl: --listen '%s': want ADDR:PORT (e.g. 10.0.0.1:9464)\n",
			addr);
		return -1;
	}
	*colon = '\0';
	port = colon + 1;
	if (host[0] == '[' && colon[-1] == ']') {
		colon[-1] = '\0';
		memmove(host, host + 1, strlen(host));
	}
	err = getaddrinfo(host, port, &hints, &res);
	if (err) {
		fprintf(stderr, "bluectl: --listen '%s': %s (numeric address and port)\n", addr,
			gai_strerror(err));
		return -1;
	}
	fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, 8)) {
			fprintf(stderr, "bluectl: --listen %s: %s\n", addr, strerror(errno));
			close(fd);
			fd = -1;
		}
	} else {
		fprintf(stderr, "bluectl: socket: %s\n", strerror(errno));
	}
	freeaddrinfo(res);
	return fd;
}

/* Read until the parser has a verdict, within the bounds; HTTP_MORE if the client
 * closed or went quiet first. */
static enum http_verdict read_request(int fd, char *buf, size_t cap, struct http_req *r)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	enum http_verdict v = HTTP_MORE;
	size_t got = 0;
	ssize_t n;

	while (v == HTTP_MORE && got < cap) {
		if (poll(&p, 1, BLUE_HTTP_IO_MS) <= 0)
			break;
		n = recv(fd, buf + got, cap - got, 0);
		if (n <= 0)
			break;
		got += (size_t)n;
		v = http_req_parse(buf, got, r);
	}
	return v;
}

static void send_all(int fd, const char *p, size_t len)
{
	struct pollfd pf = { .fd = fd, .events = POLLOUT };
	ssize_t n;

	while (len) {
		if (poll(&pf, 1, BLUE_HTTP_IO_MS) <= 0)
			return;
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n <= 0)
			return;
		p += n;
		len -= (size_t)n;
	}
}

/* @with_body false: a HEAD request, which gets the headers of the GET only. */
static void respond_(int fd, const char *status, const char *type, const char *body, size_t len,
		     bool with_body)
{
	char head[256];
	int n;

	n = snprintf(head, sizeof(head), "HTTP/1.1 %s\r\nContent-Type: %s\r\n"
		     "Content-Length: %zu\r\nConnection: close\r\n\r\n", status, type, len);
	send_all(fd, head, (size_t)n);
	if (with_body)
		send_all(fd, body, len);
}

static void respond(int fd, const char *status, const char *type, const char *body, size_t len)
{
	respond_(fd, status, type, body, len, true);
}

static void serve_one(int fd, const char *ifname)
{
	char req[HTTP_REQ_MAX_HEAD], *body = NULL;
	enum http_verdict v;
	struct http_req r;
	size_t len = 0;
	struct snap s;
	char msg[128];
	FILE *f;

	v = read_request(fd, req, sizeof(req), &r);
	if (v == HTTP_MORE)
		return;
	if (v != HTTP_OK) {
		snprintf(msg, sizeof(msg), "%s\n", r.why);
		respond(fd, http_verdict_status(v), "text/plain", msg, strlen(msg));
		return;
	}
	if (r.path_len != 8 || memcmp(r.target, "/metrics", 8)) {
		respond(fd, "404 Not Found", "text/plain", "try /metrics\n", 13);
		return;
	}
	f = open_memstream(&body, &len);
	if (!f || snap_take(ifname, &s)) {
		if (f)
			fclose(f);
		free(body);
		respond(fd, "503 Service Unavailable", "text/plain", "blue's pins unreadable\n",
			23);
		return;
	}
	metrics_write(&s, f);
	snap_free(&s);
	fclose(f);
	respond_(fd, "200 OK", "text/plain; version=0.0.4; charset=utf-8", body, len,
		 r.method != HTTP_HEAD);
	free(body);
}

int metrics_serve(const char *ifname, const char *addr, const struct opts *o)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct pollfd p;
	long served = 0;
	struct snap s;
	int lfd, cfd;

	/* fail now, not at the first scrape, if the pins are not there */
	if (snap_take(ifname, &s))
		return 1;
	snap_free(&s);
	lfd = listen_on(addr);
	if (lfd < 0)
		return 1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	printf("serving %s metrics at http://%s/metrics\n", ifname, addr);
	fflush(stdout);
	p.fd = lfd;
	p.events = POLLIN;
	while (!stop && (!o->max_requests || served < o->max_requests)) {
		/* wake up now and then to see a signal that raced with poll */
		if (poll(&p, 1, 500) <= 0)
			continue;
		cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (cfd < 0)
			continue;
		serve_one(cfd, ifname);
		close(cfd);
		served++;
	}
	close(lfd);
	return 0;
}
