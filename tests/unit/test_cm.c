// SPDX-License-Identifier: MIT
/*
 * The connection manager over TCP on 127.0.0.1, two threads per test (ephemeral ports,
 * every wait bounded): blue's exchange (happy paths, each mismatch failing on both
 * sides with the field and both values, garbled/truncated/foreign messages, a silent
 * peer), the wire layout byte for byte, ibv_rc_pingpong's exchange against peers that
 * behave exactly as rdma-core 44's client and server do, and two QPs connected through
 * the CM over the loopback HAL with data checked.
 *
 * Threads record what they saw and the main thread asserts after joining: Criterion's
 * asserts must not fire in other threads.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include <blue/blue.h>
#include "afxdp_hal/hal.h"
#include "runtime/cm.h"
#include "runtime/device.h"
#include "runtime/qp.h"

#define T_MS 3000	/* the bound for exchanges that are expected to finish */

static uint64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static uint16_t port_of(int fd)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);

	cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	return ntohs(a.sin_port);
}

static int listen_any(uint16_t *port)
{
	int fd = blue_cm_listen("127.0.0.1", 0);

	cr_assert_geq(fd, 0, "listen: %s", blue_cm_last_error());
	*port = port_of(fd);
	return fd;
}

/* A plain client socket with receive/send timeouts, as a foreign peer would use. */
static int raw_connect(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct timeval tv = { .tv_sec = 3 };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Read until @want bytes, EOF or the socket's timeout. Return: the bytes read. */
static size_t raw_read(int fd, uint8_t *buf, size_t want)
{
	size_t got = 0;
	ssize_t n;

	while (got < want) {
		n = read(fd, buf + got, want - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return got;
}

static void info_sample(struct blue_cm_info *in, uint32_t qpn, uint8_t last)
{
	memset(in, 0, sizeof(*in));
	in->qpn = qpn;
	in->psn = 0xabc000 | last;
	in->ipv4 = htonl(0x0ac90000u | last);	/* 10.201.0.x */
	in->gid.raw[10] = 0xff;
	in->gid.raw[11] = 0xff;
	memcpy(in->gid.raw + 12, &in->ipv4, 4);
	in->mac[0] = 0x02;
	in->mac[5] = last;
	in->mtu = BLUE_MTU_1024;
	in->transport = BLUE_QPT_RC;
	in->caps = BLUE_CM_CAP_SELECTIVE_RETX;
}

/* ---- two blue peers --------------------------------------------------------------- */

struct side {
	struct blue_cm_info local, remote;
	int rc;
	char err[256];
	int timeout_ms;
};

struct server_arg {
	int lfd;
	struct side *s;
};

static void *server_main(void *p)
{
	struct server_arg *a = p;
	int fd = blue_cm_accept(a->lfd, T_MS);

	if (fd < 0) {
		a->s->rc = errno;
	} else {
		a->s->rc = blue_cm_exchange(fd, &a->s->local, &a->s->remote, a->s->timeout_ms);
		close(fd);
	}
	snprintf(a->s->err, sizeof(a->s->err), "%s", blue_cm_last_error());
	return NULL;
}

/* Exchange @srv's and @cli's local infos; results land in each. */
static void run_pair(struct side *srv, struct side *cli)
{
	struct server_arg a;
	pthread_t th;
	uint16_t port;
	int fd;

	srv->timeout_ms = cli->timeout_ms = T_MS;
	a.lfd = listen_any(&port);
	a.s = srv;
	cr_assert_eq(pthread_create(&th, NULL, server_main, &a), 0);
	fd = blue_cm_connect("127.0.0.1", port, T_MS);
	cr_assert_geq(fd, 0, "connect: %s", blue_cm_last_error());
	cli->rc = blue_cm_exchange(fd, &cli->local, &cli->remote, cli->timeout_ms);
	snprintf(cli->err, sizeof(cli->err), "%s", blue_cm_last_error());
	close(fd);
	pthread_join(th, NULL);
	close(a.lfd);
}

static void assert_info_eq(const struct blue_cm_info *got, const struct blue_cm_info *want)
{
	cr_assert_eq(got->qpn, want->qpn);
	cr_assert_eq(got->psn, want->psn);
	cr_assert_arr_eq(got->gid.raw, want->gid.raw, 16);
	cr_assert_eq(got->ipv4, want->ipv4);
	cr_assert_arr_eq(got->mac, want->mac, 6);
	cr_assert_eq(got->mtu, want->mtu);
	cr_assert_eq(got->transport, want->transport);
	cr_assert_eq(got->caps, want->caps);
	cr_assert_eq(got->has_mr, want->has_mr);
	if (want->has_mr) {
		cr_assert_eq(got->mr.addr, want->mr.addr);
		cr_assert_eq(got->mr.length, want->mr.length);
		cr_assert_eq(got->mr.rkey, want->mr.rkey);
	}
}

Test(cm, exchange_happy_without_mr)
{
	struct side srv, cli;

	memset(&srv, 0, sizeof(srv));
	memset(&cli, 0, sizeof(cli));
	info_sample(&srv.local, 0x000123, 1);
	info_sample(&cli.local, 0xfedcba, 2);
	run_pair(&srv, &cli);
	cr_assert_eq(srv.rc, 0, "server: %s", srv.err);
	cr_assert_eq(cli.rc, 0, "client: %s", cli.err);
	cr_assert_str_empty(srv.err);
	cr_assert_str_empty(cli.err);
	assert_info_eq(&srv.remote, &cli.local);
	assert_info_eq(&cli.remote, &srv.local);
	cr_assert_eq(cli.remote.has_mr, 0);
}

Test(cm, exchange_happy_with_mr)
{
	struct side srv, cli;

	memset(&srv, 0, sizeof(srv));
	memset(&cli, 0, sizeof(cli));
	info_sample(&srv.local, 0x000456, 1);
	info_sample(&cli.local, 0x000789, 2);
	/* every byte different, to catch a byte-order slip in any 64-bit half */
	srv.local.has_mr = 1;
	srv.local.mr = (struct blue_cm_mr_desc){ .addr = 0x0123456789abcdefull,
						 .length = 0x100000001ull, .rkey = 0xdeadbeef };
	cli.local.has_mr = 1;
	cli.local.mr = (struct blue_cm_mr_desc){ .addr = 0x7fff00001000ull,
						 .length = 4096, .rkey = 0x00010203 };
	run_pair(&srv, &cli);
	cr_assert_eq(srv.rc, 0, "server: %s", srv.err);
	cr_assert_eq(cli.rc, 0, "client: %s", cli.err);
	assert_info_eq(&srv.remote, &cli.local);
	assert_info_eq(&cli.remote, &srv.local);
}

Test(cm, exchange_mr_one_side_only)
{
	struct side srv, cli;

	memset(&srv, 0, sizeof(srv));
	memset(&cli, 0, sizeof(cli));
	info_sample(&srv.local, 0x000456, 1);
	info_sample(&cli.local, 0x000789, 2);
	srv.local.has_mr = 1;
	srv.local.mr = (struct blue_cm_mr_desc){ .addr = 0x1000, .length = 64, .rkey = 7 };
	run_pair(&srv, &cli);
	cr_assert_eq(srv.rc, 0, "server: %s", srv.err);
	cr_assert_eq(cli.rc, 0, "client: %s", cli.err);
	cr_assert_eq(srv.remote.has_mr, 0);
	cr_assert_eq(cli.remote.has_mr, 1);
	cr_assert_eq(cli.remote.mr.rkey, 7);
}

Test(cm, mtu_mismatch_fails_on_both_sides)
{
	struct side srv, cli;

	memset(&srv, 0, sizeof(srv));
	memset(&cli, 0, sizeof(cli));
	info_sample(&srv.local, 0x10, 1);
	info_sample(&cli.local, 0x11, 2);
	srv.local.mtu = BLUE_MTU_1024;
	cli.local.mtu = BLUE_MTU_4096;
	run_pair(&srv, &cli);
	cr_assert_eq(srv.rc, EPROTO);
	cr_assert_eq(cli.rc, EPROTO);
	cr_assert_str_eq(srv.err, "MTU mismatch: local 1024, peer 4096");
	cr_assert_str_eq(cli.err, "MTU mismatch: local 4096, peer 1024");
}

Test(cm, transport_mismatch_fails_on_both_sides)
{
	struct side srv, cli;

	memset(&srv, 0, sizeof(srv));
	memset(&cli, 0, sizeof(cli));
	info_sample(&srv.local, 0x10, 1);
	info_sample(&cli.local, 0x11, 2);
	cli.local.transport = BLUE_QPT_UD;
	cli.local.mtu = BLUE_MTU_256;	/* transport is checked first, on both sides */
	run_pair(&srv, &cli);
	cr_assert_eq(srv.rc, EPROTO);
	cr_assert_eq(cli.rc, EPROTO);
	cr_assert_str_eq(srv.err, "transport type mismatch: local RC, peer UD");
	cr_assert_str_eq(cli.err, "transport type mismatch: local UD, peer RC");
}

Test(cm, bad_local_info_is_einval)
{
	struct blue_cm_info in;

	info_sample(&in, 0x1000000, 1);	/* 25 bits */
	cr_assert_eq(blue_cm_exchange(0, &in, NULL, 10), EINVAL);
	cr_assert_str_eq(blue_cm_last_error(), "local QPN 0x1000000 is not a 24-bit QPN above 1");
	info_sample(&in, 0x10, 1);
	in.mtu = 6;
	cr_assert_eq(blue_cm_exchange(0, &in, NULL, 10), EINVAL);
	cr_assert_eq(blue_cm_exchange(0, &in, NULL, -1), EINVAL);
}

/* ---- the wire layout -------------------------------------------------------------- */

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

Test(cm, wire_layout_is_fixed_and_big_endian)
{
	struct blue_cm_info in;
	struct blue_cm_wire w;
	uint8_t want[80];

	info_sample(&in, 0x123456, 9);
	in.caps = 0x01020304;
	in.has_mr = 1;
	in.mr = (struct blue_cm_mr_desc){ .addr = 0x1122334455667788ull,
					  .length = 0x99aabbccddeeff00ull, .rkey = 0xcafef00d };
	blue__cm_encode(&in, &w);

	/* built by hand from the layout documented in runtime/cm.h */
	memset(want, 0, sizeof(want));
	memcpy(want, "BLCM", 4);
	want[5] = 1;			/* version */
	want[7] = 80;			/* length */
	want[8] = BLUE_QPT_RC;
	want[9] = BLUE_MTU_1024;
	want[11] = 1;			/* flags: MR */
	put32(want + 12, 0x123456);
	put32(want + 16, 0xabc009);
	memcpy(want + 20, (uint8_t[]){ 10, 201, 0, 9 }, 4);
	memcpy(want + 24, in.gid.raw, 16);
	memcpy(want + 40, in.mac, 6);
	put32(want + 48, 0x01020304);
	put32(want + 52, 0xcafef00d);
	memcpy(want + 56, (uint8_t[]){ 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88 }, 8);
	memcpy(want + 64, (uint8_t[]){ 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x00 }, 8);
	put32(want + 76, (uint32_t)crc32(0, want, 76));
	cr_assert_arr_eq(&w, want, 80);
}

/* ---- foreign, garbled and silent peers ------------------------------------------ */

struct raw_peer {
	uint16_t port;
	uint8_t tx[256] __attribute__((aligned(8)));
	size_t txlen;
	size_t read_first;	/* read this much before sending (0: send first) */
	bool close_after_tx;
	bool send_nothing;
	uint8_t rx[1024] __attribute__((aligned(8)));
	size_t rxlen, rxwant;
};

static void *raw_peer_main(void *p)
{
	struct raw_peer *r = p;
	int fd = raw_connect(r->port);

	if (fd < 0)
		return NULL;
	if (r->read_first)
		r->rxlen = raw_read(fd, r->rx, r->read_first);
	if (!r->send_nothing && write(fd, r->tx, r->txlen) != (ssize_t)r->txlen)
		r->txlen = 0;
	if (r->close_after_tx) {
		close(fd);
		return NULL;
	}
	r->rxlen += raw_read(fd, r->rx + r->rxlen, r->rxwant - r->rxlen);
	close(fd);
	return NULL;
}

/* Run blue_cm_exchange against raw peer @r; Return: its rc, the message in @err. */
static int exchange_with_raw(struct raw_peer *r, int timeout_ms, char *err, size_t errlen,
			     uint64_t *elapsed_ms)
{
	struct blue_cm_info local, remote;
	pthread_t th;
	uint64_t t0;
	int lfd, fd, rc;

	info_sample(&local, 0x42, 1);
	lfd = listen_any(&r->port);
	cr_assert_eq(pthread_create(&th, NULL, raw_peer_main, r), 0);
	fd = blue_cm_accept(lfd, T_MS);
	cr_assert_geq(fd, 0, "accept: %s", blue_cm_last_error());
	t0 = ms_now();
	rc = blue_cm_exchange(fd, &local, &remote, timeout_ms);
	if (elapsed_ms)
		*elapsed_ms = ms_now() - t0;
	snprintf(err, errlen, "%s", blue_cm_last_error());
	close(fd);	/* lets a peer that waits for more see EOF */
	pthread_join(th, NULL);
	close(lfd);
	return rc;
}

/* The verdict our side sent, from the bytes the raw peer read after our info. */
static void raw_verdict(const struct raw_peer *r, uint32_t *status, const char **reason)
{
	const struct blue_cm_verdict_wire *v = (const void *)(r->rx + 80);

	cr_assert_geq(r->rxlen, 80 + sizeof(*v), "the peer got %zu bytes, no verdict",
		      r->rxlen);
	cr_assert_eq(ntohl(v->magic), BLUE_CM_VERDICT_MAGIC);
	*status = ntohl(v->status);
	*reason = v->reason;
}

Test(cm, garbage_is_rejected_and_told)
{
	struct raw_peer r = { .rxwant = 80 + 128 };
	const char *reason;
	uint32_t status;
	char err[256];

	r.txlen = (size_t)snprintf((char *)r.tx, sizeof(r.tx),
				   "GET / HTTP/1.1\r\nHost: x\r\n\r\n%60s", "");
	cr_assert_eq(exchange_with_raw(&r, T_MS, err, sizeof(err), NULL), EBADMSG);
	cr_assert_str_eq(err, "peer message is not a blue CM message: magic 0x47455420, "
			 "expected 0x424c434d (\"BLCM\")");
	raw_verdict(&r, &status, &reason);
	cr_assert_eq(status, BLUE_CM_REJ_BAD_MSG);
	cr_assert_str_eq(reason, err);
}

Test(cm, pingpong_string_on_blue_port_is_named)
{
	struct raw_peer r = { .rxwant = 80 + 128 };
	char err[256];

	r.txlen = BLUE_CM_PP_MSG_LEN;
	memcpy(r.tx, "0000:000123:000456:00000000000000000000ffff0ac90001", 52);
	cr_assert_eq(exchange_with_raw(&r, T_MS, err, sizeof(err), NULL), EBADMSG);
	cr_assert(strstr(err, "peer speaks ibv_rc_pingpong's exchange, not blue's"), "%s", err);
}

Test(cm, checksum_failure_is_rejected)
{
	struct raw_peer r = { .rxwant = 80 + 128 };
	struct blue_cm_info in;
	const char *reason;
	uint32_t status;
	char err[256];

	info_sample(&in, 0x77, 2);
	blue__cm_encode(&in, (struct blue_cm_wire *)r.tx);
	r.txlen = 80;
	r.tx[30] ^= 0x10;	/* a GID bit flipped on the way */
	cr_assert_eq(exchange_with_raw(&r, T_MS, err, sizeof(err), NULL), EBADMSG);
	cr_assert(strncmp(err, "peer message failed its checksum (CRC-32 0x", 43) == 0, "%s",
		  err);
	raw_verdict(&r, &status, &reason);
	cr_assert_eq(status, BLUE_CM_REJ_BAD_MSG);
}

Test(cm, bad_field_with_good_checksum_is_rejected)
{
	struct raw_peer r = { .rxwant = 80 + 128 };
	struct blue_cm_info in;
	struct blue_cm_wire *w = (struct blue_cm_wire *)r.tx;
	char err[256];

	info_sample(&in, 0x77, 2);
	blue__cm_encode(&in, w);
	w->mtu = 9;
	w->crc = htonl((uint32_t)crc32(0, r.tx, 76));
	r.txlen = 80;
	cr_assert_eq(exchange_with_raw(&r, T_MS, err, sizeof(err), NULL), EBADMSG);
	cr_assert_str_eq(err, "peer path MTU field 9 is not an IB MTU (1=256 .. 5=4096)");
}

Test(cm, bad_length_is_rejected)
{
	struct raw_peer r = { .rxwant = 80 + 128 };
	struct blue_cm_info in;
	struct blue_cm_wire *w = (struct blue_cm_wire *)r.tx;
	char err[256];

	info_sample(&in, 0x77, 2);
	blue__cm_encode(&in, w);
	w->length = htons(5);
	r.txlen = 80;
	cr_assert_eq(exchange_with_raw(&r, T_MS, err, sizeof(err), NULL), EBADMSG);
	cr_assert_str_eq(err, "peer message length 5 is out of range (8..4096)");
}

Test(cm, truncated_message_is_rejected)
{
	struct raw_peer r = { .read_first = 80, .close_after_tx = true };
	struct blue_cm_info in;
	char err[256];

	info_sample(&in, 0x77, 2);
	blue__cm_encode(&in, (struct blue_cm_wire *)r.tx);
	r.txlen = 40;
	cr_assert_eq(exchange_with_raw(&r, T_MS, err, sizeof(err), NULL), EBADMSG);
	cr_assert_str_eq(err, "truncated the peer's CM message: got 40 of 80 bytes before the "
			 "peer closed the connection");
}

Test(cm, version_mismatch_fails_on_both_sides)
{
	struct raw_peer r = { .rxwant = 80 + 128 };
	const char *reason;
	uint32_t status;
	char err[256];

	/* a version-2 peer: the fixed header, then a longer body of its own */
	memcpy(r.tx, "BLCM", 4);
	r.tx[5] = 2;
	r.tx[7] = 96;
	memset(r.tx + 8, 0xa5, 88);
	r.txlen = 96;
	cr_assert_eq(exchange_with_raw(&r, T_MS, err, sizeof(err), NULL), EPROTONOSUPPORT);
	cr_assert_str_eq(err, "protocol version mismatch: local 1, peer 2");
	/* what the version-2 peer reads from us: a verdict it can report */
	raw_verdict(&r, &status, &reason);
	cr_assert_eq(status, BLUE_CM_REJ_VERSION);
	cr_assert_str_eq(reason, "protocol version mismatch: local 1, peer 2");
}

Test(cm, peer_verdict_reject_fails_this_side)
{
	/* the peer accepted nothing we could see wrong, but its verdict says no */
	struct raw_peer r = { .rxwant = 80 + 128 };
	struct blue_cm_verdict_wire *v = (struct blue_cm_verdict_wire *)(r.tx + 80);
	struct blue_cm_info in;
	char err[256];

	info_sample(&in, 0x77, 2);
	blue__cm_encode(&in, (struct blue_cm_wire *)r.tx);
	memset(v, 0, sizeof(*v));
	v->magic = htonl(BLUE_CM_VERDICT_MAGIC);
	v->version = htons(1);
	v->length = htons(sizeof(*v));
	v->status = htonl(BLUE_CM_REJ_BAD_MSG);
	snprintf(v->reason, sizeof(v->reason), "peer message failed its checksum\x07");
	r.txlen = 80 + sizeof(*v);
	cr_assert_eq(exchange_with_raw(&r, T_MS, err, sizeof(err), NULL), EBADMSG);
	/* the peer's words, with the unprintable byte neutralised */
	cr_assert_str_eq(err, "the peer rejected the exchange, saying: \"peer message failed "
			 "its checksum?\"");
}

Test(cm, silent_peer_times_out)
{
	struct raw_peer r = { .send_nothing = true, .rxwant = 80 + 128 };
	uint64_t ms;
	char err[256];

	cr_assert_eq(exchange_with_raw(&r, 200, err, sizeof(err), &ms), ETIMEDOUT);
	cr_assert_str_eq(err, "timed out after 200 ms waiting for the peer's CM message: the "
			 "peer did not answer");
	cr_assert_geq(ms, 195);
	cr_assert_lt(ms, 1500, "the 200 ms bound took %llu ms", (unsigned long long)ms);
}

Test(cm, half_message_then_silence_times_out)
{
	struct raw_peer r = { .rxwant = 80 + 128 };
	struct blue_cm_info in;
	uint64_t ms;
	char err[256];

	info_sample(&in, 0x77, 2);
	blue__cm_encode(&in, (struct blue_cm_wire *)r.tx);
	r.txlen = 30;
	cr_assert_eq(exchange_with_raw(&r, 200, err, sizeof(err), &ms), ETIMEDOUT);
	cr_assert_str_eq(err, "timed out after 200 ms waiting for the peer's CM message "
			 "(got 30 of 80 bytes)");
	cr_assert_lt(ms, 1500);
}

/* ---- listen, accept, connect -------------------------------------------------------- */

Test(cm, accept_times_out)
{
	uint16_t port;
	int lfd = listen_any(&port), fd;
	uint64_t t0 = ms_now(), ms;

	fd = blue_cm_accept(lfd, 100);
	ms = ms_now() - t0;
	cr_assert_eq(fd, -1);
	cr_assert_eq(errno, ETIMEDOUT);
	cr_assert_str_eq(blue_cm_last_error(), "accept: no connection within 100 ms");
	cr_assert_geq(ms, 95);
	cr_assert_lt(ms, 1000);
	close(lfd);
}

/* A port nobody listens on: bound (so nobody else takes it) but not listening. */
static int reserve_port(uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_geq(fd, 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	*port = port_of(fd);
	return fd;
}

Test(cm, connect_refused_is_retried_until_the_deadline)
{
	uint16_t port;
	int hold = reserve_port(&port), fd;
	uint64_t t0 = ms_now(), ms;

	fd = blue_cm_connect("127.0.0.1", port, 150);
	ms = ms_now() - t0;
	cr_assert_eq(fd, -1);
	cr_assert_eq(errno, ETIMEDOUT);
	cr_assert(strstr(blue_cm_last_error(), "within 150 ms (last error: Connection refused)"),
		  "%s", blue_cm_last_error());
	cr_assert_geq(ms, 145, "gave up after %llu ms: no retries", (unsigned long long)ms);
	cr_assert_lt(ms, 1000);
	close(hold);
}

struct late_listener {
	int hold;
	uint16_t port;
	int lfd;
};

static void *late_listen_main(void *p)
{
	struct late_listener *l = p;

	poll(NULL, 0, 150);
	/* the reserved socket itself starts listening: the same port, no race */
	l->lfd = listen(l->hold, 1) == 0 ? l->hold : -1;
	return NULL;
}

Test(cm, connect_succeeds_once_the_server_listens)
{
	struct late_listener l;
	pthread_t th;
	uint64_t t0;
	int fd;

	l.hold = reserve_port(&l.port);
	cr_assert_eq(pthread_create(&th, NULL, late_listen_main, &l), 0);
	t0 = ms_now();
	fd = blue_cm_connect("127.0.0.1", l.port, T_MS);
	pthread_join(th, NULL);
	cr_assert_geq(fd, 0, "connect: %s", blue_cm_last_error());
	cr_assert_geq(ms_now() - t0, 140, "connected before anyone listened?");
	cr_assert_str_empty(blue_cm_last_error());
	close(fd);
	close(l.hold);
}

/* ---- GIDs and rc_pingpong's message -------------------------------------------- */

Test(cm, gid_string_round_trip)
{
	union blue_gid g, back;
	char s[BLUE_CM_GID_STR_LEN];

	for (int i = 0; i < 16; i++)
		g.raw[i] = (uint8_t)(0x10 * i + 15 - i);
	blue_cm_gid_to_str(&g, s);
	cr_assert_str_eq(s, "0f1e2d3c4b5a69788796a5b4c3d2e1f0");
	cr_assert_eq(blue_cm_str_to_gid(s, &back), 0);
	cr_assert_arr_eq(back.raw, g.raw, 16);
	/* upper case is read too (sscanf %x is what rc_pingpong uses) */
	cr_assert_eq(blue_cm_str_to_gid("0F1E2D3C4B5A69788796A5B4C3D2E1F0", &back), 0);
	cr_assert_arr_eq(back.raw, g.raw, 16);
	srand(7);
	for (int n = 0; n < 200; n++) {
		for (int i = 0; i < 16; i++)
			g.raw[i] = (uint8_t)rand();
		blue_cm_gid_to_str(&g, s);
		cr_assert_eq(strlen(s), 32);
		cr_assert_eq(blue_cm_str_to_gid(s, &back), 0);
		cr_assert_arr_eq(back.raw, g.raw, 16);
	}
	cr_assert_eq(blue_cm_str_to_gid("0f1e2d3c4b5a69788796a5b4c3d2e1f", &back), EINVAL);
	cr_assert_eq(blue_cm_str_to_gid("0f1e2d3c4b5a69788796a5b4c3d2e1f00", &back), EINVAL);
	cr_assert_eq(blue_cm_str_to_gid("0f1e2d3c4b5a69788796a5b4c3d2e1fg", &back), EINVAL);
}

/* rc_pingpong's message for (lid 0, qpn, psn, gid), built independently of the CM. */
static void pp_expected(char out[52], uint32_t qpn, uint32_t psn, const union blue_gid *g)
{
	char hex[33];
	int n;

	for (int i = 0; i < 16; i++)
		sprintf(hex + 2 * i, "%02x", g->raw[i]);
	memset(out, 0, 52);
	n = snprintf(out, 52, "%04x:%06x:%06x:%s", 0, qpn, psn, hex);
	cr_assert_eq(n, 51);
}

Test(cm, pp_format_is_byte_exact)
{
	struct blue_cm_info in;
	char msg[BLUE_CM_PP_MSG_LEN], want[52];

	cr_assert_eq(sizeof("0000:000000:000000:00000000000000000000000000000000"), 52);
	info_sample(&in, 0x00ab12, 1);
	in.psn = 0x0f00ba;
	memset(msg, 0x5a, sizeof(msg));
	cr_assert_eq(blue_cm_pp_format(&in, msg), 0);
	pp_expected(want, 0x00ab12, 0x0f00ba, &in.gid);
	cr_assert_arr_eq(msg, want, 52);
	cr_assert_str_eq(msg, "0000:00ab12:0f00ba:00000000000000000000ffff0ac90001");
	in.psn = 0x1000000;
	cr_assert_eq(blue_cm_pp_format(&in, msg), EINVAL);
}

Test(cm, pp_parse_round_trip_and_rejects)
{
	struct blue_cm_info in, out;
	char msg[52];

	info_sample(&in, 0xabcdef, 3);
	cr_assert_eq(blue_cm_pp_format(&in, msg), 0);
	cr_assert_eq(blue_cm_pp_parse(msg, sizeof(msg), &out), 0);
	cr_assert_eq(out.qpn, 0xabcdef);
	cr_assert_eq(out.psn, in.psn);
	cr_assert_arr_eq(out.gid.raw, in.gid.raw, 16);
	cr_assert_eq(out.ipv4, in.ipv4, "IPv4 from the mapped GID");
	cr_assert_eq(out.transport, BLUE_QPT_RC);

	cr_assert_eq(blue_cm_pp_parse(msg, 51, &out), EBADMSG);
	cr_assert_str_eq(blue_cm_last_error(), "pingpong message is 51 bytes; ibv_rc_pingpong "
			 "sends 52");
	msg[11] = '-';
	cr_assert_eq(blue_cm_pp_parse(msg, sizeof(msg), &out), EBADMSG);
	cr_assert(strstr(blue_cm_last_error(), "malformed at byte 11 (0x2d)"), "%s",
		  blue_cm_last_error());
	msg[11] = ':';
	msg[30] = 'x';
	cr_assert_eq(blue_cm_pp_parse(msg, sizeof(msg), &out), EBADMSG);
	cr_assert(strstr(blue_cm_last_error(), "malformed at byte 30"));
	cr_assert_eq(blue_cm_pp_format(&in, msg), 0);
	msg[51] = '0';
	cr_assert_eq(blue_cm_pp_parse(msg, sizeof(msg), &out), EBADMSG);
	/* an InfiniBand peer: a LID */
	cr_assert_eq(blue_cm_pp_format(&in, msg), 0);
	memcpy(msg, "0012", 4);
	cr_assert_eq(blue_cm_pp_parse(msg, sizeof(msg), &out), EBADMSG);
	cr_assert(strstr(blue_cm_last_error(), "LID 0x0012"));
	/* a zero GID (ibv_rc_pingpong without -g) parses; connect_qp refuses it */
	memcpy(msg, "0000:000011:000022:00000000000000000000000000000000", 52);
	cr_assert_eq(blue_cm_pp_parse(msg, sizeof(msg), &out), 0);
	cr_assert_eq(out.ipv4, 0);
}

/*
 * A peer that does exactly what rdma-core 44's ibv_rc_pingpong server does on the
 * socket: one read() of 52 bytes, its 52 bytes in one write(), then one read() of up
 * to 52 that must return exactly 5 ("done" and its NUL).
 */
struct stock_server {
	int lfd;
	char reply[52];
	char got[52];
	ssize_t got_n, done_n;
	char done[52];
};

static void *stock_server_main(void *p)
{
	struct stock_server *s = p;
	struct timeval tv = { .tv_sec = 3 };
	struct pollfd pfd = { .fd = s->lfd, .events = POLLIN };
	int fd;

	s->got_n = s->done_n = -1;
	if (poll(&pfd, 1, T_MS) != 1)
		return NULL;
	fd = accept(s->lfd, NULL, NULL);
	if (fd < 0)
		return NULL;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	s->got_n = read(fd, s->got, sizeof(s->got));
	if (s->got_n == 52 && write(fd, s->reply, 52) == 52)
		s->done_n = read(fd, s->done, sizeof(s->done));
	close(fd);
	return NULL;
}

Test(cm, pp_client_against_stock_server)
{
	struct stock_server s;
	struct blue_cm_info local, remote, srv;
	char want[52];
	pthread_t th;
	uint16_t port;
	int fd, rc;

	memset(&s, 0, sizeof(s));
	info_sample(&local, 0x000bee, 4);
	info_sample(&srv, 0x0000a1, 5);
	pp_expected(s.reply, srv.qpn, srv.psn, &srv.gid);
	s.lfd = listen_any(&port);
	cr_assert_eq(pthread_create(&th, NULL, stock_server_main, &s), 0);
	fd = blue_cm_connect("127.0.0.1", port, T_MS);
	cr_assert_geq(fd, 0);
	rc = blue_cm_pp_client(fd, &local, &remote, T_MS);
	close(fd);
	pthread_join(th, NULL);
	close(s.lfd);
	cr_assert_eq(rc, 0, "%s", blue_cm_last_error());
	/* what the stock server read, in its single read() */
	cr_assert_eq(s.got_n, 52);
	pp_expected(want, local.qpn, local.psn, &local.gid);
	cr_assert_arr_eq(s.got, want, 52);
	cr_assert_eq(s.done_n, 5, "rc_pingpong's server wants exactly sizeof \"done\"");
	cr_assert_arr_eq(s.done, "done", 5);
	cr_assert_eq(remote.qpn, srv.qpn);
	cr_assert_eq(remote.psn, srv.psn);
	cr_assert_arr_eq(remote.gid.raw, srv.gid.raw, 16);
}

/*
 * rdma-core 44's ibv_rc_pingpong client on the socket: its 52 bytes in one write(),
 * one read() of 52, "done" (5 bytes) in one write(), close.
 */
struct stock_client {
	uint16_t port;
	char msg[52];
	char got[52];
	ssize_t got_n;
	int connected_before_reply;	/* the server's callback had run when we read */
	const int *cb_ran;
};

static void *stock_client_main(void *p)
{
	struct stock_client *c = p;
	int fd = raw_connect(c->port);

	c->got_n = -1;
	if (fd < 0)
		return NULL;
	if (write(fd, c->msg, 52) == 52) {
		c->got_n = read(fd, c->got, 52);
		c->connected_before_reply = __atomic_load_n(c->cb_ran, __ATOMIC_ACQUIRE);
		if (write(fd, "done", sizeof("done")) != sizeof("done"))
			c->got_n = -2;
	}
	close(fd);
	return NULL;
}

struct cb_state {
	int ran;
	uint32_t qpn;
	int ret;
};

static int on_remote(const struct blue_cm_info *remote, void *arg)
{
	struct cb_state *cb = arg;

	cb->qpn = remote->qpn;
	__atomic_store_n(&cb->ran, 1, __ATOMIC_RELEASE);
	return cb->ret;
}

Test(cm, pp_server_against_stock_client)
{
	struct stock_client c;
	struct blue_cm_info local, remote, cli;
	struct cb_state cb = { 0 };
	char want[52];
	pthread_t th;
	int lfd, fd, rc;

	memset(&c, 0, sizeof(c));
	info_sample(&local, 0x0000c3, 6);
	info_sample(&cli, 0x00d00d, 7);
	pp_expected(c.msg, cli.qpn, cli.psn, &cli.gid);
	c.cb_ran = &cb.ran;
	lfd = listen_any(&c.port);
	cr_assert_eq(pthread_create(&th, NULL, stock_client_main, &c), 0);
	fd = blue_cm_accept(lfd, T_MS);
	cr_assert_geq(fd, 0);
	rc = blue_cm_pp_server(fd, &local, &remote, on_remote, &cb, T_MS);
	close(fd);
	pthread_join(th, NULL);
	close(lfd);
	cr_assert_eq(rc, 0, "%s", blue_cm_last_error());
	cr_assert_eq(cb.qpn, 0x00d00d);
	cr_assert_eq(c.connected_before_reply, 1, "the server must connect before it answers");
	cr_assert_eq(c.got_n, 52);
	pp_expected(want, local.qpn, local.psn, &local.gid);
	cr_assert_arr_eq(c.got, want, 52);
	cr_assert_eq(remote.qpn, cli.qpn);
	cr_assert_eq(remote.psn, cli.psn);
	cr_assert_arr_eq(remote.gid.raw, cli.gid.raw, 16);
}

Test(cm, pp_server_callback_failure_sends_nothing)
{
	struct stock_client c;
	struct blue_cm_info local, remote, cli;
	struct cb_state cb = { .ret = EINVAL };
	pthread_t th;
	int lfd, fd, rc;

	memset(&c, 0, sizeof(c));
	info_sample(&local, 0x0000c3, 6);
	info_sample(&cli, 0x00d00d, 7);
	pp_expected(c.msg, cli.qpn, cli.psn, &cli.gid);
	c.cb_ran = &cb.ran;
	lfd = listen_any(&c.port);
	cr_assert_eq(pthread_create(&th, NULL, stock_client_main, &c), 0);
	fd = blue_cm_accept(lfd, T_MS);
	rc = blue_cm_pp_server(fd, &local, &remote, on_remote, &cb, T_MS);
	close(fd);
	pthread_join(th, NULL);
	close(lfd);
	cr_assert_eq(rc, EINVAL);
	cr_assert(strstr(blue_cm_last_error(), "connecting to the client's QP 0x00d00d failed"));
	cr_assert_eq(c.got_n, 0, "the stock client must see the connection close, no reply");
}

struct pp_srv_arg {
	int lfd;
	struct blue_cm_info local, remote;
	int rc;
};

static void *pp_server_main(void *p)
{
	struct pp_srv_arg *a = p;
	int fd = blue_cm_accept(a->lfd, T_MS);

	a->rc = fd < 0 ? errno : blue_cm_pp_server(fd, &a->local, &a->remote, NULL, NULL, T_MS);
	if (fd >= 0)
		close(fd);
	return NULL;
}

Test(cm, pp_client_and_server_together)
{
	struct pp_srv_arg a;
	struct blue_cm_info local, remote;
	pthread_t th;
	uint16_t port;
	int fd, rc;

	memset(&a, 0, sizeof(a));
	info_sample(&a.local, 0x000111, 8);
	info_sample(&local, 0x000222, 9);
	a.lfd = listen_any(&port);
	cr_assert_eq(pthread_create(&th, NULL, pp_server_main, &a), 0);
	fd = blue_cm_connect("127.0.0.1", port, T_MS);
	cr_assert_geq(fd, 0);
	rc = blue_cm_pp_client(fd, &local, &remote, T_MS);
	close(fd);
	pthread_join(th, NULL);
	close(a.lfd);
	cr_assert_eq(rc, 0, "%s", blue_cm_last_error());
	cr_assert_eq(a.rc, 0);
	cr_assert_eq(remote.qpn, 0x111);
	cr_assert_eq(a.remote.qpn, 0x222);
	cr_assert_eq(a.remote.psn, local.psn);
	cr_assert_eq(remote.psn, a.local.psn);
}

Test(cm, pp_client_times_out_on_a_silent_server)
{
	uint16_t port;
	int lfd = listen_any(&port), fd, rc;
	struct blue_cm_info local, remote;
	uint64_t t0, ms;

	info_sample(&local, 0x000222, 9);
	fd = blue_cm_connect("127.0.0.1", port, T_MS);	/* the backlog accepts it */
	cr_assert_geq(fd, 0);
	t0 = ms_now();
	rc = blue_cm_pp_client(fd, &local, &remote, 150);
	ms = ms_now() - t0;
	cr_assert_eq(rc, ETIMEDOUT);
	cr_assert_str_eq(blue_cm_last_error(), "timed out after 150 ms waiting for the "
			 "server's pingpong message: the peer did not answer");
	cr_assert_lt(ms, 1000);
	close(fd);
	close(lfd);
}

/* ---- whom the CM believes: the claimed address against the TCP peer's ------------- */

/*
 * The tests above connect over 127.0.0.1 with GIDs that claim 10.201.0.x, as a
 * multi-homed host would: their suite lists that pair. Those below set their own list.
 */
static void allow_test_net(void)
{
	setenv("BLUE_CM_ALLOW", "10.201.0.0/24=127.0.0.1", 1);
}

TestSuite(cm, .init = allow_test_net);

/* @in claims @ip (host order): its IPv4 and its IPv4-mapped GID. */
static void info_claims(struct blue_cm_info *in, uint32_t ip)
{
	in->ipv4 = htonl(ip);
	memcpy(in->gid.raw + 12, &in->ipv4, 4);
}

/* The server claims 127.0.0.1 (true), the client 10.201.0.@last over 127.0.0.1. */
static void run_claim(struct side *srv, struct side *cli, uint8_t last)
{
	memset(srv, 0, sizeof(*srv));
	memset(cli, 0, sizeof(*cli));
	info_sample(&srv->local, 0x000123, 1);
	info_claims(&srv->local, INADDR_LOOPBACK);
	info_sample(&cli->local, 0x000456, last);
	run_pair(srv, cli);
}

Test(cm_peer, spoofed_gid_refused_on_both_sides)
{
	static const uint8_t zero[sizeof(struct blue_cm_info)];
	struct side srv, cli;

	unsetenv("BLUE_CM_ALLOW");
	run_claim(&srv, &cli, 2);
	cr_assert_eq(srv.rc, EACCES, "server accepted a GID claiming 10.201.0.2 from "
		     "127.0.0.1 (rc %d: %s)", srv.rc, srv.err);
	cr_assert(strstr(srv.err, "claims 10.201.0.2") && strstr(srv.err, "from 127.0.0.1"),
		  "%s", srv.err);
	cr_assert(strstr(srv.err, "BLUE_CM_ALLOW"), "the message names the way out: %s",
		  srv.err);
	cr_assert_eq(cli.rc, EACCES, "client: rc %d: %s", cli.rc, cli.err);
	cr_assert(strstr(cli.err, "the peer rejected the exchange") &&
		  strstr(cli.err, "claims 10.201.0.2"), "%s", cli.err);
	cr_assert_arr_eq(&srv.remote, zero, sizeof(zero), "nothing of a refused peer is kept");
}

Test(cm_peer, allow_listed_pair_accepted_and_only_it)
{
	struct side srv, cli;

	setenv("BLUE_CM_ALLOW", " 10.9.9.9=10.8.8.8 , 10.201.0.2=127.0.0.1", 1);
	run_claim(&srv, &cli, 2);
	cr_assert_eq(srv.rc, 0, "server: %s", srv.err);
	cr_assert_eq(cli.rc, 0, "client: %s", cli.err);
	cr_assert_eq(srv.remote.ipv4, htonl(0x0ac90002u));

	run_claim(&srv, &cli, 3);
	cr_assert_eq(srv.rc, EACCES, "10.201.0.3 is not listed: %s", srv.err);
	cr_assert_eq(cli.rc, EACCES);

	/* a prefix on the claimed side */
	setenv("BLUE_CM_ALLOW", "10.201.0.0/30=127.0.0.1", 1);
	run_claim(&srv, &cli, 3);
	cr_assert_eq(srv.rc, 0, "10.201.0.3 is in 10.201.0.0/30: %s", srv.err);
	run_claim(&srv, &cli, 4);
	cr_assert_eq(srv.rc, EACCES, "10.201.0.4 is not in 10.201.0.0/30: %s", srv.err);
}

Test(cm_peer, malformed_allow_list_is_named)
{
	struct side srv, cli;

	setenv("BLUE_CM_ALLOW", "10.201.0.2=127.0.0.1,10.201.0.3:127.0.0.1", 1);
	run_claim(&srv, &cli, 4);
	cr_assert_eq(srv.rc, EINVAL, "rc %d: %s", srv.rc, srv.err);
	cr_assert(strstr(srv.err, "BLUE_CM_ALLOW") &&
		  strstr(srv.err, "\"10.201.0.3:127.0.0.1\""), "%s", srv.err);
	cr_assert_neq(cli.rc, 0, "the client is told too");
}

/* @text (IPv4 or IPv6) in the form blue__cm_allow_match compares peers in. */
static struct in6_addr peer_addr(const char *text)
{
	struct in6_addr a;
	struct in_addr a4;

	memset(&a, 0, sizeof(a));
	if (inet_pton(AF_INET, text, &a4) == 1) {
		a.s6_addr[10] = a.s6_addr[11] = 0xff;
		memcpy(a.s6_addr + 12, &a4, 4);
	} else {
		cr_assert_eq(inet_pton(AF_INET6, text, &a), 1);
	}
	return a;
}

Test(cm_peer, allow_list_pairs_prefixes_and_ipv6)
{
	struct in6_addr p4 = peer_addr("10.0.0.2"), p6 = peer_addr("fd00::7");
	uint32_t c = inet_addr("10.0.1.2"), other = inet_addr("10.0.2.2");

	cr_assert_eq(blue__cm_allow_match(NULL, c, &p4), 0);
	cr_assert_eq(blue__cm_allow_match("", c, &p4), 0);
	cr_assert_eq(blue__cm_allow_match("10.0.1.2=10.0.0.2", c, &p4), 1);
	cr_assert_eq(blue__cm_allow_match("10.0.1.2=10.0.0.2", other, &p4), 0);
	cr_assert_eq(blue__cm_allow_match("10.0.1.2=10.0.0.3", c, &p4), 0, "another peer");
	cr_assert_eq(blue__cm_allow_match("10.0.1.2=fd00::7", c, &p6), 1);
	cr_assert_eq(blue__cm_allow_match("10.0.1.2=fd00::7", c, &p4), 0);
	cr_assert_eq(blue__cm_allow_match("10.0.0.0/23=10.0.0.2", c, &p4), 1);
	cr_assert_eq(blue__cm_allow_match("10.0.0.0/23=10.0.0.2", other, &p4), 0);
	cr_assert_eq(blue__cm_allow_match("0.0.0.0/0=10.0.0.2", other, &p4), 1, "/0: any");
	cr_assert_eq(blue__cm_allow_match("10.0.1.2/32=10.0.0.2,", c, &p4), 1);
	/* malformed entries are named, even after one that matched */
	cr_assert_eq(blue__cm_allow_match("10.0.1.2=10.0.0.2,10.0.1.2/33=10.0.0.2", c, &p4),
		     -EINVAL);
	cr_assert(strstr(blue_cm_last_error(), "\"10.0.1.2/33=10.0.0.2\""), "%s",
		  blue_cm_last_error());
	cr_assert_eq(blue__cm_allow_match("10.0.1.2=", c, &p4), -EINVAL);
	cr_assert_eq(blue__cm_allow_match("=10.0.0.2", c, &p4), -EINVAL);
	cr_assert_eq(blue__cm_allow_match("10.0.1=10.0.0.2", c, &p4), -EINVAL);
	cr_assert_eq(blue__cm_allow_match("10.0.1.2/=10.0.0.2", c, &p4), -EINVAL);
	cr_assert_eq(blue__cm_allow_match("10.0.1.2/+8=10.0.0.2", c, &p4), -EINVAL);
	cr_assert_eq(blue__cm_allow_match("10.0.1.2/-1=10.0.0.2", c, &p4), -EINVAL);
	cr_assert_eq(blue__cm_allow_match("fd00::1=10.0.0.2", c, &p4), -EINVAL,
		     "the claimed side is IPv4");
}

Test(cm_peer, pp_server_refuses_a_spoofed_client)
{
	struct stock_client c;
	struct blue_cm_info local, remote, cli;
	struct cb_state cb = { 0 };
	pthread_t th;
	int lfd, fd, rc;

	unsetenv("BLUE_CM_ALLOW");
	memset(&c, 0, sizeof(c));
	info_sample(&local, 0x0000c3, 6);
	info_sample(&cli, 0x00d00d, 7);		/* claims 10.201.0.7 over 127.0.0.1 */
	pp_expected(c.msg, cli.qpn, cli.psn, &cli.gid);
	c.cb_ran = &cb.ran;
	lfd = listen_any(&c.port);
	cr_assert_eq(pthread_create(&th, NULL, stock_client_main, &c), 0);
	fd = blue_cm_accept(lfd, T_MS);
	cr_assert_geq(fd, 0);
	rc = blue_cm_pp_server(fd, &local, &remote, on_remote, &cb, T_MS);
	close(fd);
	pthread_join(th, NULL);
	close(lfd);
	cr_assert_eq(rc, EACCES, "rc %d: %s", rc, blue_cm_last_error());
	cr_assert(strstr(blue_cm_last_error(), "claims 10.201.0.7"), "%s", blue_cm_last_error());
	cr_assert_eq(cb.ran, 0, "the QP must not be connected to a refused peer");
	cr_assert_eq(c.got_n, 0, "the client sees the connection close, no reply");
	cr_assert_eq(remote.qpn, 0);
}

Test(cm_peer, pp_client_refuses_a_spoofed_server)
{
	struct stock_server s;
	struct blue_cm_info local, remote, srv;
	pthread_t th;
	uint16_t port;
	int fd, rc;

	unsetenv("BLUE_CM_ALLOW");
	memset(&s, 0, sizeof(s));
	info_sample(&local, 0x000bee, 4);
	info_claims(&local, INADDR_LOOPBACK);
	info_sample(&srv, 0x0000a1, 5);		/* claims 10.201.0.5 over 127.0.0.1 */
	pp_expected(s.reply, srv.qpn, srv.psn, &srv.gid);
	s.lfd = listen_any(&port);
	cr_assert_eq(pthread_create(&th, NULL, stock_server_main, &s), 0);
	fd = blue_cm_connect("127.0.0.1", port, T_MS);
	cr_assert_geq(fd, 0);
	rc = blue_cm_pp_client(fd, &local, &remote, T_MS);
	close(fd);
	pthread_join(th, NULL);
	close(s.lfd);
	cr_assert_eq(rc, EACCES, "rc %d: %s", rc, blue_cm_last_error());
	cr_assert(strstr(blue_cm_last_error(), "claims 10.201.0.5"), "%s", blue_cm_last_error());
	cr_assert_eq(s.done_n, 0, "no \"done\" to a refused server: it sees the close");
	cr_assert_eq(remote.qpn, 0);
}

/* ---- QPs connected through the CM (loopback HAL) ------------------------------------ */

struct qp_side {
	struct blue_hal *hal;
	struct blue_context *ctx;
	struct blue_pd *pd;
	struct blue_cq *cq;
	struct blue_qp *qp;
	struct blue_mr *mr;
	uint8_t buf[4096];
	uint8_t mac[6];
	uint32_t ip;
	struct side cm;
};

static void qp_side_open(struct qp_side *s, struct blue_hal *hal, uint8_t last)
{
	struct blue_qp_init_attr ia = {
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = BLUE_QPT_RC,
	};
	const uint8_t mac[6] = { 0x02, 0xc3, 0x00, 0x00, 0x00, last };

	s->hal = hal;
	memcpy(s->mac, mac, 6);
	s->ip = htonl(0x0ac90000u | last);
	s->ctx = blue_open_device_hal(hal, s->mac, s->ip);
	cr_assert_not_null(s->ctx);
	s->pd = blue_alloc_pd(s->ctx);
	s->cq = blue_create_cq(s->ctx, 64, NULL, NULL, 0);
	cr_assert(s->pd && s->cq);
	ia.send_cq = ia.recv_cq = s->cq;
	s->qp = blue_create_qp(s->pd, &ia);
	cr_assert_not_null(s->qp);
	s->mr = blue_reg_mr(s->pd, s->buf, sizeof(s->buf), BLUE_ACCESS_LOCAL_WRITE |
			    BLUE_ACCESS_REMOTE_WRITE | BLUE_ACCESS_REMOTE_READ);
	cr_assert_not_null(s->mr);
}

static void qp_side_close(struct qp_side *s)
{
	cr_assert_eq(blue_destroy_qp(s->qp), 0);
	cr_assert_eq(blue_dereg_mr(s->mr), 0);
	cr_assert_eq(blue_destroy_cq(s->cq), 0);
	cr_assert_eq(blue_dealloc_pd(s->pd), 0);
	cr_assert_eq(blue_close_device(s->ctx), 0);
	blue_hal_destroy(s->hal);
}

/* Poll @s's CQ (which drives @s) and drive @other, until one completion or timeout. */
static struct blue_wc wait_wc(struct qp_side *s, struct qp_side *other)
{
	uint64_t end = ms_now() + T_MS;
	struct blue_wc wc, dummy;
	int n;

	memset(&wc, 0, sizeof(wc));
	for (;;) {
		n = blue_poll_cq(s->cq, 1, &wc);
		cr_assert_geq(n, 0);
		if (n == 1)
			return wc;
		cr_assert_eq(blue_poll_cq(other->cq, 0, &dummy), 0);
		cr_assert_lt(ms_now(), end, "no completion within %d ms", T_MS);
	}
}

Test(cm, qps_connected_through_the_cm_carry_data)
{
	struct blue_hal *ha, *hb;
	struct qp_side *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct blue_sge sge;
	struct blue_recv_wr rwr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad_r;
	struct blue_send_wr swr, *bad_s;
	struct blue_port_attr port;
	struct blue_cm_qp_attr qa;
	struct blue_qp_attr attr;
	struct blue_wc wc;

	cr_assert(a && b);
	cr_assert_eq(blue_hal_loopback_pair(&ha, &hb), 0);
	qp_side_open(a, ha, 1);
	qp_side_open(b, hb, 2);

	/* what each side tells the other, read from its QP and device */
	cr_assert_eq(blue_cm_info_from_qp(a->ctx, a->qp, 1, &a->cm.local), 0, "%s",
		     blue_cm_last_error());
	cr_assert_eq(blue_cm_info_from_qp(b->ctx, b->qp, 1, &b->cm.local), 0);
	cr_assert_eq(blue_query_port(a->ctx, 1, &port), 0);
	cr_assert_eq(a->cm.local.qpn, blue_qp_num(a->qp));
	cr_assert_leq(a->cm.local.psn, 0xffffff);
	cr_assert_eq(a->cm.local.ipv4, a->ip);
	cr_assert_arr_eq(a->cm.local.mac, a->mac, 6, "MAC read back from GID 0's EUI-64");
	cr_assert_eq(a->cm.local.mtu, port.active_mtu);
	cr_assert_eq(a->cm.local.transport, BLUE_QPT_RC);
	cr_assert_eq(blue_cm_info_from_qp(a->ctx, a->qp, 2, &a->cm.remote), EINVAL);
	blue_cm_info_set_mr(&b->cm.local, b->mr);

	run_pair(&a->cm, &b->cm);
	cr_assert_eq(a->cm.rc, 0, "%s", a->cm.err);
	cr_assert_eq(b->cm.rc, 0, "%s", b->cm.err);

	/* no static neighbours set here: the MACs come from the exchange */
	cr_assert_eq(blue_cm_connect_qp(a->ctx, a->qp, a->cm.local.psn, &a->cm.remote, NULL), 0,
		     "%s", blue_cm_last_error());
	blue_cm_qp_attr_default(&qa);
	cr_assert_eq(qa.access, BLUE_ACCESS_LOCAL_WRITE, "rc_pingpong's default");
	qa.access |= BLUE_ACCESS_REMOTE_WRITE;	/* B's MR is the target of A's WRITE */
	cr_assert_eq(blue_cm_connect_qp(b->ctx, b->qp, b->cm.local.psn, &b->cm.remote, &qa), 0,
		     "%s", blue_cm_last_error());
	cr_assert_eq(blue_query_qp(b->qp, &attr, 0, NULL), 0);
	cr_assert_eq(attr.qp_state, BLUE_QPS_RTS);
	cr_assert_eq(attr.dest_qp_num, a->cm.local.qpn);
	cr_assert_eq(attr.rq_psn, a->cm.local.psn, "B expects A's first PSN");
	cr_assert_eq(attr.sq_psn, b->cm.local.psn);
	cr_assert_eq(attr.path_mtu, a->cm.local.mtu);
	cr_assert_arr_eq(attr.ah_attr.dgid.raw, a->cm.local.gid.raw, 16);

	/* a SEND from A to B */
	memset(b->buf, 0, sizeof(b->buf));
	for (unsigned int i = 0; i < 3000; i++)
		a->buf[i] = (uint8_t)(i * 7 + 1);
	sge = (struct blue_sge){ .addr = (uintptr_t)b->buf, .length = 3000, .lkey = b->mr->lkey };
	cr_assert_eq(blue_post_recv(b->qp, &rwr, &bad_r), 0);
	sge = (struct blue_sge){ .addr = (uintptr_t)a->buf, .length = 3000, .lkey = a->mr->lkey };
	memset(&swr, 0, sizeof(swr));
	swr.wr_id = 2;
	swr.sg_list = &sge;
	swr.num_sge = 1;
	swr.opcode = BLUE_WR_SEND;
	swr.send_flags = BLUE_SEND_SIGNALED;
	cr_assert_eq(blue_post_send(a->qp, &swr, &bad_s), 0);
	wc = wait_wc(b, a);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "%s", blue_wc_status_str(wc.status));
	cr_assert_eq(wc.byte_len, 3000);
	cr_assert_arr_eq(b->buf, a->buf, 3000);
	wc = wait_wc(a, b);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 2);

	/* an RDMA WRITE from A into B's MR, at the address and rkey the exchange carried */
	cr_assert_eq(a->cm.remote.has_mr, 1);
	cr_assert_eq(a->cm.remote.mr.rkey, b->mr->rkey);
	for (unsigned int i = 0; i < 512; i++)
		a->buf[i] = (uint8_t)(0xa0 ^ i);
	sge = (struct blue_sge){ .addr = (uintptr_t)a->buf, .length = 512, .lkey = a->mr->lkey };
	swr.wr_id = 3;
	swr.opcode = BLUE_WR_RDMA_WRITE;
	swr.wr.rdma.remote_addr = a->cm.remote.mr.addr + 1024;
	swr.wr.rdma.rkey = a->cm.remote.mr.rkey;
	cr_assert_eq(blue_post_send(a->qp, &swr, &bad_s), 0);
	wc = wait_wc(a, b);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "%s", blue_wc_status_str(wc.status));
	cr_assert_arr_eq(b->buf + 1024, a->buf, 512);

	qp_side_close(a);
	qp_side_close(b);
	free(a);
	free(b);
}

Test(cm, connect_qp_refuses_a_zero_gid)
{
	struct blue_hal *ha, *hb;
	struct qp_side *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct blue_cm_info peer;
	struct blue_qp_attr attr;

	cr_assert(a && b);
	cr_assert_eq(blue_hal_loopback_pair(&ha, &hb), 0);
	qp_side_open(a, ha, 1);
	qp_side_open(b, hb, 2);
	memset(&peer, 0, sizeof(peer));
	peer.qpn = blue_qp_num(b->qp);
	peer.mtu = BLUE_MTU_1024;
	cr_assert_eq(blue_cm_connect_qp(a->ctx, a->qp, 1, &peer, NULL), EINVAL);
	cr_assert(strstr(blue_cm_last_error(), "the peer sent no GID"), "%s",
		  blue_cm_last_error());
	cr_assert_eq(blue_query_qp(a->qp, &attr, BLUE_QP_STATE, NULL), 0);
	cr_assert_eq(attr.qp_state, BLUE_QPS_RESET, "nothing was changed");
	qp_side_close(a);
	qp_side_close(b);
	free(a);
	free(b);
}

/*
 * Two QPs of one context connected through the CM (loopback): the exchange carries the
 * device's own IP and MAC both ways, selective retransmission is negotiated on both,
 * and a SEND and a WRITE carry data, looped back in the engine (never on the HAL).
 */
Test(cm, two_qps_of_one_device_connect_through_the_cm)
{
	struct blue_hal *ha, *hb;
	struct qp_side *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct blue_qp_init_attr ia = {
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = BLUE_QPT_RC,
	};
	struct blue_sge sge;
	struct blue_recv_wr rwr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad_r;
	struct blue_send_wr swr, *bad_s;
	struct blue_cm_qp_attr qa;
	struct blue_wc wc;

	cr_assert(a && b);
	cr_assert_eq(blue_hal_loopback_pair(&ha, &hb), 0);
	qp_side_open(a, ha, 1);
	/* b: a second QP (its own PD, CQ, MR) on a's context */
	b->ctx = a->ctx;
	b->pd = blue_alloc_pd(b->ctx);
	b->cq = blue_create_cq(b->ctx, 64, NULL, NULL, 0);
	cr_assert(b->pd && b->cq);
	ia.send_cq = ia.recv_cq = b->cq;
	b->qp = blue_create_qp(b->pd, &ia);
	b->mr = blue_reg_mr(b->pd, b->buf, sizeof(b->buf), BLUE_ACCESS_LOCAL_WRITE |
			    BLUE_ACCESS_REMOTE_WRITE);
	cr_assert(b->qp && b->mr);

	blue_cm_qp_attr_default(&qa);
	qa.caps |= BLUE_CM_CAP_SELECTIVE_RETX;
	qa.access |= BLUE_ACCESS_REMOTE_WRITE;
	cr_assert_eq(blue_cm_info_from_qp(a->ctx, a->qp, 1, &a->cm.local), 0);
	cr_assert_eq(blue_cm_info_from_qp(b->ctx, b->qp, 1, &b->cm.local), 0);
	a->cm.local.caps |= BLUE_CM_CAP_SELECTIVE_RETX;
	b->cm.local.caps |= BLUE_CM_CAP_SELECTIVE_RETX;
	blue_cm_info_set_mr(&b->cm.local, b->mr);
	run_pair(&a->cm, &b->cm);
	cr_assert_eq(a->cm.rc, 0, "%s", a->cm.err);
	cr_assert_eq(b->cm.rc, 0, "%s", b->cm.err);
	cr_assert_eq(a->cm.remote.ipv4, a->ip, "the peer's IP is our own");
	cr_assert_eq(blue_cm_connect_qp(a->ctx, a->qp, a->cm.local.psn, &a->cm.remote, &qa), 0,
		     "%s", blue_cm_last_error());
	cr_assert_eq(blue_cm_connect_qp(b->ctx, b->qp, b->cm.local.psn, &b->cm.remote, &qa), 0,
		     "%s", blue_cm_last_error());
	cr_assert_eq(a->qp->retx.policy, BLUE_RETX_SELECTIVE);
	cr_assert_eq(b->qp->retx.policy, BLUE_RETX_SELECTIVE);

	for (unsigned int i = 0; i < 3000; i++)
		a->buf[i] = (uint8_t)(i * 5 + 3);
	sge = (struct blue_sge){ .addr = (uintptr_t)b->buf, .length = 3000, .lkey = b->mr->lkey };
	cr_assert_eq(blue_post_recv(b->qp, &rwr, &bad_r), 0);
	sge = (struct blue_sge){ .addr = (uintptr_t)a->buf, .length = 3000, .lkey = a->mr->lkey };
	memset(&swr, 0, sizeof(swr));
	swr.wr_id = 2;
	swr.sg_list = &sge;
	swr.num_sge = 1;
	swr.opcode = BLUE_WR_SEND;
	swr.send_flags = BLUE_SEND_SIGNALED;
	cr_assert_eq(blue_post_send(a->qp, &swr, &bad_s), 0);
	wc = wait_wc(b, a);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "%s", blue_wc_status_str(wc.status));
	cr_assert_arr_eq(b->buf, a->buf, 3000);
	wc = wait_wc(a, b);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	swr.wr_id = 3;
	swr.opcode = BLUE_WR_RDMA_WRITE;
	swr.wr.rdma.remote_addr = a->cm.remote.mr.addr + 2048;
	swr.wr.rdma.rkey = a->cm.remote.mr.rkey;
	sge.length = 1024;
	cr_assert_eq(blue_post_send(a->qp, &swr, &bad_s), 0);
	wc = wait_wc(a, b);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "%s", blue_wc_status_str(wc.status));
	cr_assert_arr_eq(b->buf + 2048, a->buf, 1024);
	cr_assert_gt(blue__engine_stats(a->ctx)->tx_loopback, 0);
	{
		struct blue_hal_stats hs;

		blue_hal_get_stats(ha, &hs);
		cr_assert_eq(hs.tx_frames, 0, "%llu frames on the HAL",
			     (unsigned long long)hs.tx_frames);
	}

	cr_assert_eq(blue_destroy_qp(b->qp), 0);
	cr_assert_eq(blue_dereg_mr(b->mr), 0);
	cr_assert_eq(blue_destroy_cq(b->cq), 0);
	cr_assert_eq(blue_dealloc_pd(b->pd), 0);
	qp_side_close(a);
	blue_hal_destroy(hb);
	free(a);
	free(b);
}
