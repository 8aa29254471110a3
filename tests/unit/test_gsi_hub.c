// SPDX-License-Identifier: MIT
/*
 * blue-manager's shared GSI (runtime/gsi_hub.c): which member a MAD for QP1 goes to.
 * Two IB CM endpoints with the prefixes the hub gave them (runtime/ibcm.c id_prefix)
 * make real MADs: a REQ goes to the member listening on its service (or, with nobody
 * listening, to the first, whose CM rejects it), the REP back to the requester by its
 * comm ID, SIDR the same; a MAD the codec refuses, or with a prefix no member has, to
 * nobody.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "runtime/codec.h"
#include "runtime/gsi_hub.h"
#include "runtime/ibcm.h"
#include "runtime/qp.h"

#define SID	0x0106000000001c0eull	/* RDMA_PS_TCP, port 7182 */
#define SID2	0x0106000000001c0full

struct end {
	struct blue_ibcm *cm;
	struct blue_ibcm_addr addr;
	uint8_t mad[BLUE_IBCM_MAD_SIZE];	/* the last one it sent */
	unsigned int sent;
	struct blue_ibcm_conn *got;		/* the last REQ / SIDR_REQ it received */
};

static struct end a, b;
static struct blue_qp qa, qb, qc;
static struct blue_gsi_hub hub;

static int cap_send(void *ctx, const uint8_t mad[BLUE_IBCM_MAD_SIZE],
		    const struct blue_ibcm_addr *to)
{
	struct end *e = ctx;

	(void)to;
	memcpy(e->mad, mad, BLUE_IBCM_MAD_SIZE);
	e->sent++;
	return 0;
}

static void on_event(void *ctx, struct blue_ibcm_conn *conn, enum blue_ibcm_event type,
		     const struct blue_ibcm_msg *msg)
{
	struct end *e = ctx;

	(void)msg;
	if (type == BLUE_IBCM_EV_REQ_RECEIVED || type == BLUE_IBCM_EV_SIDR_REQ_RECEIVED)
		e->got = conn;
}

static void end_init(struct end *e, uint8_t prefix, uint8_t last_ip_byte)
{
	struct blue_ibcm_cfg cfg = {
		.ops = { .send = cap_send, .event = on_event },
		.ctx = e, .seed = 0x5eed0000u + prefix, .id_prefix = prefix,
	};

	memset(e, 0, sizeof(*e));
	e->addr.gid[10] = e->addr.gid[11] = 0xff;
	e->addr.gid[12] = 10;
	e->addr.gid[15] = last_ip_byte;
	e->addr.qpn = BLUE_IBCM_GSI_QPN;
	memcpy(cfg.local_gid, e->addr.gid, 16);
	cfg.local_ca_guid = 0x1000 + prefix;
	e->cm = blue__ibcm_create(&cfg);
	cr_assert_not_null(e->cm);
}

/* The member the hub hands @mad to. */
static struct blue_qp *pick(const uint8_t *mad)
{
	struct blue_pkt p = { .payload = mad, .payload_len = BLUE_IBCM_MAD_SIZE };

	return blue__gsi_pick(&hub, &p);
}

static void setup(void)
{
	memset(&hub, 0, sizeof(hub));
	hub.member[3] = &qa;	/* a: prefix 3, the first member */
	hub.member[5] = &qb;	/* b: prefix 5, listens on SID */
	hub.member[9] = &qc;
	hub.nmembers = 3;
	hub.listen[0].service_id = SID;
	hub.listen[0].qp = &qb;
	hub.nlisten = 1;
	end_init(&a, 3, 1);
	end_init(&b, 5, 2);
	cr_assert_eq(blue__ibcm_listen(b.cm, SID), 0);
}

static void teardown(void)
{
	blue__ibcm_destroy(a.cm);
	blue__ibcm_destroy(b.cm);
}

static struct blue_ibcm_conn *connect_a(uint64_t sid)
{
	struct blue_ibcm_conn_param cp = {
		.service_id = sid, .local_qpn = 0xaa01, .starting_psn = 0x123,
		.responder_resources = 1, .initiator_depth = 1, .path_mtu = 3,
		.retry_count = 7, .rnr_retry_count = 7,
	};
	struct blue_ibcm_conn *c;

	cp.peer = b.addr;
	c = blue__ibcm_connect(a.cm, &cp, 1);
	cr_assert_not_null(c);
	return c;
}

TestSuite(gsi_hub, .init = setup, .fini = teardown);

Test(gsi_hub, req_to_listener_rep_back_by_comm_id)
{
	struct blue_ibcm_rep_param rp = {
		.local_qpn = 0xbb01, .starting_psn = 0x456, .responder_resources = 1,
		.initiator_depth = 1, .rnr_retry_count = 7,
	};
	struct blue_ibcm_conn *c = connect_a(SID);

	cr_assert_eq(c->local_comm_id >> 24, 3, "comm ID 0x%08x: not a's prefix",
		     c->local_comm_id);
	cr_assert_eq(pick(a.mad), &qb, "the REQ went to the member that does not listen");
	cr_assert_eq(blue__ibcm_rx(b.cm, a.mad, sizeof(a.mad), &a.addr, 2), BLUE_IBCM_OK);
	cr_assert_not_null(b.got);
	cr_assert_eq(b.got->local_comm_id >> 24, 5);
	cr_assert_eq(blue__ibcm_accept(b.cm, b.got, &rp, 3), 0);
	cr_assert_eq(pick(b.mad), &qa, "the REP did not go back to the requester");
	/* the same REP naming a comm ID of a prefix nobody has: nobody's */
	b.mad[24 + 4] = 0x44;
	cr_assert_null(pick(b.mad));
}

Test(gsi_hub, req_nobody_listens_to_first_member)
{
	connect_a(SID2);
	cr_assert_eq(pick(a.mad), &qa, "a REQ for an unlistened service: the first member");
}

Test(gsi_hub, sidr_by_service_then_request_id)
{
	struct blue_ibcm_conn *c = blue__ibcm_sidr_request(a.cm, &b.addr, SID, NULL, 0, 1);

	cr_assert_not_null(c);
	cr_assert_eq(pick(a.mad), &qb);
	cr_assert_eq(blue__ibcm_rx(b.cm, a.mad, sizeof(a.mad), &a.addr, 2), BLUE_IBCM_OK);
	cr_assert_not_null(b.got);
	cr_assert_eq(blue__ibcm_sidr_reply(b.cm, b.got, 0, 0xbb02, 0x11111111, NULL, 0), 0);
	cr_assert_eq(pick(b.mad), &qa, "the SIDR_REP did not go back by its request ID");
}

Test(gsi_hub, not_a_cm_mad_goes_nowhere)
{
	connect_a(SID);
	a.mad[1] = 0x01;	/* MgmtClass: the SM's, not the CM's */
	cr_assert_null(pick(a.mad));
	connect_a(SID);
	{
		struct blue_pkt p = { .payload = a.mad, .payload_len = 100 };

		cr_assert_null(blue__gsi_pick(&hub, &p), "a short MAD was handed on");
	}
}
