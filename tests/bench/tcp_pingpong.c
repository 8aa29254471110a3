// SPDX-License-Identifier: MIT
/*
 * tcp_pingpong: the TCP reference for blue's latency figures. One TCP_NODELAY connection,
 * the client sends SIZE bytes, the server sends them back, ITERS times; the client times
 * each round trip.
 *
 *   tcp_pingpong server --bind A --port P [--busy] [--timeout S]
 *   tcp_pingpong client --host A --port P [--size B] [--iters N] [--busy] [--timeout S]
 *
 * Two ways to wait, so the comparison with blue (which busy-polls) is fair both ways:
 *  - blocking (default): recv() sleeps until the data is there, as most programs do;
 *  - --busy: the socket is non-blocking and recv(MSG_DONTWAIT) spins, with SO_BUSY_POLL
 *    set as well (50 us: the kernel polls the device queue inside recv before it gives
 *    up; on veth it has no NAPI queue of its own to poll, so the spin does the work).
 *
 * The client prints "RESULT iters N rtt_p50_us X rtt_p99_us Y rtt_avg_us Z rtt_min_us W
 * cpu_cores C" on stdout (round trips; cores = utime + stime over the run's wall time, from
 * /proc/self/stat); the server prints "cpu_cores C". Every wait is bounded by --timeout.
 * Exit 0 when every byte came back as sent.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "tools/common/tool_common.h"

#define MAX_SIZE	65536
#define MAX_ITERS	100000000	/* their RTTs are kept: 800 MB */

struct opts {
	bool server, busy;
	const char *addr;
	uint16_t port;
	uint32_t size, iters, timeout_s;
};

static void usage(void)
{
	fprintf(stderr, "usage: tcp_pingpong server --bind A --port P [--busy] [--timeout S]\n"
			"       tcp_pingpong client --host A --port P [--size B] [--iters N] "
			"[--busy] [--timeout S]\n");
	exit(2);
}

static void setup_sock(int fd, const struct opts *o)
{
	int one = 1, us = 50;
	struct timeval tv = { .tv_sec = o->timeout_s };

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (o->busy)
		setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &us, sizeof(us));
}

/* Exactly @len bytes, or -1 (closed, error, or nothing for --timeout). */
static int recv_all(int fd, uint8_t *buf, size_t len, const struct opts *o)
{
	uint64_t dl = tool_now_ns() + (uint64_t)o->timeout_s * 1000000000ull;
	size_t got = 0;
	unsigned int spins = 0;
	ssize_t n;

	while (got < len) {
		n = recv(fd, buf + got, len - got, o->busy ? MSG_DONTWAIT : 0);
		if (n > 0) {
			got += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN && o->busy) {
			if (!(++spins & 1023) && tool_now_ns() > dl)
				return -1;	/* the spin's bound */
			continue;
		}
		return -1;	/* closed, an error, or SO_RCVTIMEO passed */
	}
	return 0;
}

static int send_all(int fd, const uint8_t *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int run_server(const struct opts *o)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(o->port) };
	static uint8_t buf[MAX_SIZE];
	struct pollfd p;
	uint32_t size;
	double c0;
	uint64_t t0;
	int lfd, fd, one = 1;

	if (inet_pton(AF_INET, o->addr, &a.sin_addr) != 1)
		usage();
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 1)) {
		perror("tcp_pingpong: listen");
		return 1;
	}
	printf("READY\n");
	fflush(stdout);
	p = (struct pollfd){ .fd = lfd, .events = POLLIN };
	if (poll(&p, 1, (int)o->timeout_s * 1000) != 1) {
		fprintf(stderr, "tcp_pingpong: no client within %u s\n", o->timeout_s);
		return 1;
	}
	fd = accept(lfd, NULL, NULL);
	close(lfd);
	if (fd < 0) {
		perror("tcp_pingpong: accept");
		return 1;
	}
	setup_sock(fd, o);
	if (recv_all(fd, (uint8_t *)&size, 4, o) || (size = ntohl(size)) < 1 || size > MAX_SIZE) {
		fprintf(stderr, "tcp_pingpong: bad hello\n");
		return 1;
	}
	c0 = tool_cpu_s();
	t0 = tool_now_ns();
	/* echo until the client closes */
	while (!recv_all(fd, buf, size, o))
		if (send_all(fd, buf, size))
			break;
	printf("cpu_cores %.3f\n", tool_cpu_cores(c0, t0));
	close(fd);
	return 0;
}

static int run_client(const struct opts *o)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(o->port) };
	static uint8_t out[MAX_SIZE], in[MAX_SIZE];
	uint64_t *rtt = calloc(o->iters, sizeof(*rtt)), t, t0, dl;
	uint32_t hello = htonl(o->size);
	double c0;
	int fd = -1;

	if (!rtt || inet_pton(AF_INET, o->addr, &a.sin_addr) != 1)
		usage();
	/* the server may not listen yet: retry a refused connect until the bound */
	dl = tool_now_ns() + (uint64_t)o->timeout_s * 1000000000ull;
	for (;;) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd >= 0 && !connect(fd, (struct sockaddr *)&a, sizeof(a)))
			break;
		if (fd >= 0)
			close(fd);
		if (tool_now_ns() > dl) {
			perror("tcp_pingpong: connect");
			return 1;
		}
		usleep(20000);
	}
	setup_sock(fd, o);
	if (send_all(fd, (uint8_t *)&hello, 4))
		return 1;
	for (uint32_t i = 0; i < o->size; i++)
		out[i] = (uint8_t)(i * 7 + 1);
	c0 = tool_cpu_s();
	t0 = tool_now_ns();
	for (uint32_t i = 0; i < o->iters; i++) {
		out[0] = (uint8_t)i;
		t = tool_now_ns();
		if (send_all(fd, out, o->size) || recv_all(fd, in, o->size, o)) {
			fprintf(stderr, "tcp_pingpong: round trip %u failed\n", i);
			return 1;
		}
		rtt[i] = tool_now_ns() - t;
		if (memcmp(in, out, o->size)) {
			fprintf(stderr, "tcp_pingpong: round trip %u: the echo differs\n", i);
			return 1;
		}
	}
	printf("cpu_cores %.3f\n", tool_cpu_cores(c0, t0));
	close(fd);
	tool_print_rtt(rtt, o->iters);
	free(rtt);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "bind", 1, NULL, 'b' }, { "host", 1, NULL, 'H' }, { "port", 1, NULL, 'p' },
		{ "size", 1, NULL, 's' }, { "iters", 1, NULL, 'n' }, { "busy", 0, NULL, 'B' },
		{ "timeout", 1, NULL, 'T' }, { NULL, 0, NULL, 0 },
	};
	struct opts o = { .port = 18600, .size = 8, .iters = 10000, .timeout_s = 10 };
	long long v = 0;
	int c;

	if (argc < 2 || (strcmp(argv[1], "server") && strcmp(argv[1], "client")))
		usage();
	o.server = !strcmp(argv[1], "server");
	optind = 2;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'b': case 'H': o.addr = optarg; break;
		case 'p':
			v = tool_num_arg("--port", optarg, 1, 65535, false);
			o.port = (uint16_t)v;
			break;
		case 's':
			v = tool_num_arg("--size", optarg, 1, MAX_SIZE, true);
			o.size = (uint32_t)v;
			break;
		case 'n':
			v = tool_num_arg("--iters", optarg, 1, MAX_ITERS, true);
			o.iters = (uint32_t)v;
			break;
		case 'B': o.busy = true; break;
		case 'T':	/* poll() takes an int of milliseconds */
			v = tool_num_arg("--timeout", optarg, 1, 3600, false);
			o.timeout_s = (uint32_t)v;
			break;
		default: usage();
		}
		if (v < 0)	/* tool_num_arg said why */
			return 2;
	}
	if (!o.addr || optind != argc)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	return o.server ? run_server(&o) : run_client(&o);
}
