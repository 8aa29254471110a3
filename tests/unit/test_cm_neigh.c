// SPDX-License-Identifier: MIT
/*
 * The static neighbour entries blue_cm_connect_qp() makes from the MAC a peer sends:
 * refcounted by the QPs using them, never overwritten while in use (a different MAC for
 * an address in use is refused, naming the address and both MACs), freed with their
 * last QP, and a full table refused with the table's name and size. Over the loopback
 * HAL, one context, QPs connected to peers that need not exist: connect_qp only moves
 * the local QP to RTS.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <blue/blue.h>
#include "afxdp_hal/hal.h"
#include "runtime/cm.h"
#include "runtime/device.h"
#include "runtime/qp.h"

#define NQP (BLUE_MAX_NEIGH + 2)

struct fx {
	struct blue_hal *ha, *hb;
	struct blue_context *ctx;
	struct blue_pd *pd;
	struct blue_cq *cq;
	struct blue_qp *qp[NQP];
};

static const uint8_t our_mac[6] = { 0x02, 0xc4, 0, 0, 0, 1 };

static void fx_open(struct fx *f)
{
	struct blue_qp_init_attr ia = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = BLUE_QPT_RC,
	};

	memset(f, 0, sizeof(*f));
	cr_assert_eq(blue_hal_loopback_pair(&f->ha, &f->hb), 0);
	f->ctx = blue_open_device_hal(f->ha, our_mac, htonl(0x0aca0001u));
	cr_assert_not_null(f->ctx);
	f->pd = blue_alloc_pd(f->ctx);
	f->cq = blue_create_cq(f->ctx, 64, NULL, NULL, 0);
	cr_assert(f->pd && f->cq);
	ia.send_cq = ia.recv_cq = f->cq;
	for (int i = 0; i < NQP; i++) {
		f->qp[i] = blue_create_qp(f->pd, &ia);
		cr_assert_not_null(f->qp[i]);
	}
}

static void fx_close(struct fx *f)
{
	for (int i = 0; i < NQP; i++)
		if (f->qp[i])
			cr_assert_eq(blue_destroy_qp(f->qp[i]), 0);
	cr_assert_eq(blue_destroy_cq(f->cq), 0);
	cr_assert_eq(blue_dealloc_pd(f->pd), 0);
	cr_assert_eq(blue_close_device(f->ctx), 0);
	blue_hal_destroy(f->ha);
	blue_hal_destroy(f->hb);
}

/* A peer at 10.202.0.@host with MAC 02:c5:00:00:@m:@host, as the exchange hands it over. */
static void peer(struct blue_cm_info *in, uint8_t host, uint8_t m)
{
	memset(in, 0, sizeof(*in));
	in->qpn = 0x100 + host;
	in->psn = 0x1000;
	in->ipv4 = htonl(0x0aca0000u | host);
	in->gid.raw[10] = 0xff;
	in->gid.raw[11] = 0xff;
	memcpy(in->gid.raw + 12, &in->ipv4, 4);
	in->mac[0] = 0x02;
	in->mac[1] = 0xc5;
	in->mac[4] = m;
	in->mac[5] = host;
	in->mtu = BLUE_MTU_1024;
	in->transport = BLUE_QPT_RC;
}

static int cm_conn(struct fx *f, int i, const struct blue_cm_info *in)
{
	return blue_cm_connect_qp(f->ctx, f->qp[i], 1, in, NULL);
}

static enum blue_qp_state state_of(struct blue_qp *qp)
{
	struct blue_qp_attr a;

	cr_assert_eq(blue_query_qp(qp, &a, BLUE_QP_STATE, NULL), 0);
	return a.qp_state;
}

/* The MAC the context sends to @in's address with now (its static entry). */
static void entry_mac(struct fx *f, const struct blue_cm_info *in, uint8_t mac[6])
{
	union blue_gid g;

	memset(mac, 0, 6);
	blue__gid_from_ipv4(&g, in->ipv4);
	cr_assert_eq(blue__resolve_neigh(f->ctx, &g, mac), 0, "no entry for the peer");
}

Test(cm_neigh, in_use_entry_is_not_overwritten)
{
	struct blue_cm_info a, spoof;
	uint8_t mac[6];
	struct fx f;
	int rc;

	fx_open(&f);
	peer(&a, 9, 1);
	peer(&spoof, 9, 2);		/* the same address, another MAC */
	cr_assert_eq(cm_conn(&f, 0, &a), 0, "%s", blue_cm_last_error());
	rc = cm_conn(&f, 1, &spoof);
	cr_assert_eq(rc, EADDRINUSE, "a second MAC for 10.202.0.9 while QP 0 uses it: rc %d "
		     "(%s)", rc, blue_cm_last_error());
	cr_assert(strstr(blue_cm_last_error(), "10.202.0.9") &&
		  strstr(blue_cm_last_error(), "02:c5:00:00:01:09") &&
		  strstr(blue_cm_last_error(), "02:c5:00:00:02:09"),
		  "names the address, the MAC in use and the refused one: %s",
		  blue_cm_last_error());
	/* nothing half-done: the entry, QP 0's path and QP 1's state are as they were */
	entry_mac(&f, &a, mac);
	cr_assert_arr_eq(mac, a.mac, 6);
	cr_assert_arr_eq(f.qp[0]->peer_mac, a.mac, 6);
	cr_assert_eq(state_of(f.qp[1]), BLUE_QPS_RESET);

	/* the same MAC again shares the entry */
	cr_assert_eq(cm_conn(&f, 2, &a), 0, "%s", blue_cm_last_error());
	cr_assert_arr_eq(f.qp[2]->peer_mac, a.mac, 6);

	/* once its last QP is gone, the address is free for the new MAC */
	cr_assert_eq(blue_destroy_qp(f.qp[0]), 0);
	f.qp[0] = NULL;
	cr_assert_eq(cm_conn(&f, 1, &spoof), EADDRINUSE, "QP 2 still uses the entry");
	cr_assert_eq(blue_destroy_qp(f.qp[2]), 0);
	f.qp[2] = NULL;
	cr_assert_eq(cm_conn(&f, 1, &spoof), 0, "%s", blue_cm_last_error());
	entry_mac(&f, &spoof, mac);
	cr_assert_arr_eq(mac, spoof.mac, 6);
	fx_close(&f);
}

Test(cm_neigh, static_entry_is_not_overwritten)
{
	struct blue_cm_info a, spoof;
	uint8_t mac[6];
	struct fx f;

	fx_open(&f);
	peer(&a, 7, 1);
	peer(&spoof, 7, 2);
	cr_assert_eq(blue__set_neigh(f.ctx, a.ipv4, a.mac), 0);
	cr_assert_eq(cm_conn(&f, 0, &spoof), EADDRINUSE, "%s", blue_cm_last_error());
	entry_mac(&f, &a, mac);
	cr_assert_arr_eq(mac, a.mac, 6);
	cr_assert_eq(cm_conn(&f, 0, &a), 0, "%s", blue_cm_last_error());
	fx_close(&f);
}

Test(cm_neigh, full_table_is_a_clear_error_and_entries_are_freed)
{
	struct blue_cm_info in;
	char want[64];
	struct fx f;
	int i;

	fx_open(&f);
	for (i = 0; i < BLUE_MAX_NEIGH; i++) {
		peer(&in, (uint8_t)(10 + i), 1);
		cr_assert_eq(cm_conn(&f, i, &in), 0, "peer %d: %s", i, blue_cm_last_error());
	}
	peer(&in, 99, 1);
	cr_assert_eq(cm_conn(&f, i, &in), ENOSPC);
	snprintf(want, sizeof(want), "table is full (%d entries", BLUE_MAX_NEIGH);
	cr_assert(strstr(blue_cm_last_error(), "static neighbour table") &&
		  strstr(blue_cm_last_error(), want) &&
		  strstr(blue_cm_last_error(), "10.202.0.99"),
		  "names the table, its size and the address: %s", blue_cm_last_error());
	cr_assert_eq(state_of(f.qp[i]), BLUE_QPS_RESET, "nothing half-done");

	/* a destroyed QP gives its entry back */
	cr_assert_eq(blue_destroy_qp(f.qp[0]), 0);
	f.qp[0] = NULL;
	cr_assert_eq(cm_conn(&f, i, &in), 0, "%s", blue_cm_last_error());
	cr_assert_eq(state_of(f.qp[i]), BLUE_QPS_RTS);
	fx_close(&f);
}

/* ---- the exchange tells the peer too ------------------------------------------------ */

struct xside {
	struct blue_context *ctx;	/* NULL: plain blue_cm_exchange() */
	struct blue_cm_info local, remote;
	int lfd, rc;
	char err[256];
};

static void *xserver(void *p)
{
	struct xside *s = p;
	int fd = blue_cm_accept(s->lfd, 3000);

	if (fd < 0) {
		s->rc = errno;
	} else {
		s->rc = s->ctx ? blue_cm_exchange_qp(s->ctx, fd, &s->local, &s->remote, 3000) :
				 blue_cm_exchange(fd, &s->local, &s->remote, 3000);
		close(fd);
	}
	snprintf(s->err, sizeof(s->err), "%s", blue_cm_last_error());
	return NULL;
}

/* @srv (with or without its context) against a plain client claiming @cli_info. */
static void xrun(struct xside *srv, struct xside *cli)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	pthread_t th;
	int fd;

	srv->lfd = blue_cm_listen("127.0.0.1", 0);
	cr_assert_geq(srv->lfd, 0);
	cr_assert_eq(getsockname(srv->lfd, (struct sockaddr *)&a, &len), 0);
	cr_assert_eq(pthread_create(&th, NULL, xserver, srv), 0);
	fd = blue_cm_connect("127.0.0.1", ntohs(a.sin_port), 3000);
	cr_assert_geq(fd, 0, "%s", blue_cm_last_error());
	cli->rc = blue_cm_exchange(fd, &cli->local, &cli->remote, 3000);
	snprintf(cli->err, sizeof(cli->err), "%s", blue_cm_last_error());
	close(fd);
	pthread_join(th, NULL);
	close(srv->lfd);
}

Test(cm_neigh, exchange_refuses_an_address_in_use_on_both_sides)
{
	struct xside srv, cli;
	struct blue_cm_info a;
	uint8_t mac[6];
	struct fx f;

	/* the client's RoCE addresses are 10.202.0.x, its CM connection 127.0.0.1 */
	setenv("BLUE_CM_ALLOW", "10.202.0.0/24=127.0.0.1", 1);
	fx_open(&f);
	peer(&a, 9, 1);
	cr_assert_eq(cm_conn(&f, 0, &a), 0, "%s", blue_cm_last_error());

	memset(&srv, 0, sizeof(srv));
	memset(&cli, 0, sizeof(cli));
	cr_assert_eq(blue_cm_info_from_qp(f.ctx, f.qp[1], 1, &srv.local), 0);
	peer(&cli.local, 9, 2);		/* QP 0's peer address with another MAC */

	/* the plain exchange cannot know: the client is told all is well */
	xrun(&srv, &cli);
	cr_assert_eq(srv.rc, 0, "%s", srv.err);
	cr_assert_eq(cli.rc, 0, "%s", cli.err);
	cr_assert_eq(cm_conn(&f, 1, &srv.remote), EADDRINUSE);

	/* with the context, both sides refuse, naming the address and both MACs */
	srv.ctx = f.ctx;
	xrun(&srv, &cli);
	cr_assert_eq(srv.rc, EADDRINUSE, "server: rc %d: %s", srv.rc, srv.err);
	cr_assert(strstr(srv.err, "10.202.0.9") && strstr(srv.err, "02:c5:00:00:01:09") &&
		  strstr(srv.err, "02:c5:00:00:02:09"), "%s", srv.err);
	cr_assert_eq(cli.rc, EADDRINUSE, "client: rc %d: %s", cli.rc, cli.err);
	cr_assert(strstr(cli.err, "the peer rejected the exchange") &&
		  strstr(cli.err, "02:c5:00:00:01:09"), "%s", cli.err);
	entry_mac(&f, &a, mac);
	cr_assert_arr_eq(mac, a.mac, 6, "the entry in use is unchanged");
	cr_assert_eq(srv.remote.qpn, 0, "nothing of a refused peer is kept");

	/* the same MAC is no conflict */
	peer(&cli.local, 9, 1);
	xrun(&srv, &cli);
	cr_assert_eq(srv.rc, 0, "%s", srv.err);
	cr_assert_eq(cli.rc, 0, "%s", cli.err);
	cr_assert_eq(cm_conn(&f, 1, &srv.remote), 0, "%s", blue_cm_last_error());
	fx_close(&f);
}
