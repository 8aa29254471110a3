// SPDX-License-Identifier: MIT
/*
 * The IB CM MAD codec (runtime/cm_mad.c): every message round-trips with every field
 * set; single fields land on the bytes and bits that IBA vol. 1 ch. 12.6 (release 1.3
 * tables 106-120) gives them, written out here by hand from the spec and not from the
 * codec's tables; a kernel-like RoCEv2 REQ and REP assembled byte by byte match the
 * encoder's; each malformed MAD is refused with its named reason; the IP CM header
 * (annex A11) and service IDs.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "runtime/cm_mad.h"

#define H BLUE_IBCM_MAD_HDR_SIZE	/* message offsets in the tables are from here */

static const uint16_t all_attrs[] = {
	BLUE_IBCM_ATTR_REQ, BLUE_IBCM_ATTR_MRA, BLUE_IBCM_ATTR_REJ, BLUE_IBCM_ATTR_REP,
	BLUE_IBCM_ATTR_RTU, BLUE_IBCM_ATTR_DREQ, BLUE_IBCM_ATTR_DREP, BLUE_IBCM_ATTR_LAP,
	BLUE_IBCM_ATTR_APR, BLUE_IBCM_ATTR_SIDR_REQ, BLUE_IBCM_ATTR_SIDR_REP,
};
#define N_ATTRS (sizeof(all_attrs) / sizeof(all_attrs[0]))

static void fill_bytes(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + 7 * i + 1);
}

static void fill_path(struct blue_ibcm_path *p, uint8_t seed)
{
	p->local_lid = (uint16_t)(0xfe01 + seed);
	p->remote_lid = (uint16_t)(0x8d02 + seed);
	fill_bytes(p->local_gid, 16, (uint8_t)(seed + 0x10));
	fill_bytes(p->remote_gid, 16, (uint8_t)(seed + 0x20));
	p->flow_label = 0xfedcbu - seed;
	p->packet_rate = 0x2b;
	p->traffic_class = (uint8_t)(0xb8 + seed);
	p->hop_limit = (uint8_t)(0xf0 + seed);
	p->sl = 0xd;
	p->subnet_local = 1;
	p->local_ack_timeout = 0x1d;
}

/* Every field of @attr's message set to a distinct value that reaches its top bit. */
static void fill_msg(struct blue_ibcm_msg *m, uint16_t attr)
{
	blue__ibcm_init(m, attr, 0xfedcba9876543210ull);
	m->hdr.status = 0x8001;
	m->hdr.class_specific = 0x4002;
	m->hdr.attr_mod = 0x80000003u;
	switch (attr) {
	case BLUE_IBCM_ATTR_REQ: {
		struct blue_ibcm_req *r = &m->req;

		r->local_comm_id = 0xa1b2c3d4u;
		r->vendor_id = 0xc0ffeeu;
		r->service_id = 0x8000000001061d2full;
		r->local_ca_guid = 0x9002c9fffe123456ull;
		r->local_qkey = 0x80010000u;
		r->local_qpn = 0xabcdef;
		r->responder_resources = 0x91;
		r->local_eecn = 0xfedcba;
		r->initiator_depth = 0x92;
		r->remote_eecn = 0x876543;
		r->remote_cm_response_timeout = 0x17;
		r->transport_type = BLUE_IBCM_TRANSPORT_UC;
		r->e2e_flow_control = 1;
		r->starting_psn = 0xbcdef1;
		r->local_cm_response_timeout = 0x19;
		r->retry_count = 6;
		r->pkey = 0xfffe;
		r->path_mtu = 0xb;
		r->rdc_exists = 1;
		r->rnr_retry_count = 5;
		r->max_cm_retries = 0xe;
		r->srq = 1;
		r->ext_transport_type = 4;
		fill_path(&r->primary, 0);
		fill_path(&r->alternate, 3);
		r->sap_supported = 1;
		fill_bytes(r->private_data, sizeof(r->private_data), 0x31);
		break;
	}
	case BLUE_IBCM_ATTR_MRA:
		m->mra.local_comm_id = 0x81828384u;
		m->mra.remote_comm_id = 0x91929394u;
		m->mra.msg_mraed = BLUE_IBCM_MSG_OTHER;
		m->mra.service_timeout = 0x1e;
		fill_bytes(m->mra.private_data, sizeof(m->mra.private_data), 0x41);
		break;
	case BLUE_IBCM_ATTR_REJ:
		m->rej.local_comm_id = 0xa1a2a3a4u;
		m->rej.remote_comm_id = 0xb1b2b3b4u;
		m->rej.msg_rejected = BLUE_IBCM_MSG_REP;
		m->rej.ari_len = 72;
		m->rej.reason = 0x801c;
		fill_bytes(m->rej.ari, sizeof(m->rej.ari), 0x51);
		fill_bytes(m->rej.private_data, sizeof(m->rej.private_data), 0x52);
		break;
	case BLUE_IBCM_ATTR_REP:
		m->rep.local_comm_id = 0xc1c2c3c4u;
		m->rep.remote_comm_id = 0xd1d2d3d4u;
		m->rep.local_qkey = 0xe1e2e3e4u;
		m->rep.local_qpn = 0xabcdef;
		m->rep.vendor_id = 0xa5b6c7;
		m->rep.local_eecn = 0xfedcba;
		m->rep.starting_psn = 0x987654;
		m->rep.responder_resources = 0xf1;
		m->rep.initiator_depth = 0xf2;
		m->rep.target_ack_delay = 0x1b;
		m->rep.failover_accepted = 2;
		m->rep.e2e_flow_control = 1;
		m->rep.rnr_retry_count = 6;
		m->rep.srq = 1;
		m->rep.local_ca_guid = 0x8877665544332211ull;
		fill_bytes(m->rep.private_data, sizeof(m->rep.private_data), 0x61);
		break;
	case BLUE_IBCM_ATTR_RTU:
		m->rtu.local_comm_id = 0x8a8b8c8du;
		m->rtu.remote_comm_id = 0x9a9b9c9du;
		fill_bytes(m->rtu.private_data, sizeof(m->rtu.private_data), 0x71);
		break;
	case BLUE_IBCM_ATTR_DREQ:
		m->dreq.local_comm_id = 0xaaabacadu;
		m->dreq.remote_comm_id = 0xbabbbcbdu;
		m->dreq.remote_qpn_eecn = 0xabcdef;
		fill_bytes(m->dreq.private_data, sizeof(m->dreq.private_data), 0x81);
		break;
	case BLUE_IBCM_ATTR_DREP:
		m->drep.local_comm_id = 0xcacbcccdu;
		m->drep.remote_comm_id = 0xdadbdcddu;
		fill_bytes(m->drep.private_data, sizeof(m->drep.private_data), 0x91);
		break;
	case BLUE_IBCM_ATTR_LAP:
		m->lap.local_comm_id = 0xeaebecedu;
		m->lap.remote_comm_id = 0xfafbfcfdu;
		m->lap.remote_qpn_eecn = 0xabcdef;
		m->lap.remote_cm_response_timeout = 0x1c;
		fill_path(&m->lap.alternate, 5);
		fill_bytes(m->lap.private_data, sizeof(m->lap.private_data), 0xa1);
		break;
	case BLUE_IBCM_ATTR_APR:
		m->apr.local_comm_id = 0x8c8d8e8fu;
		m->apr.remote_comm_id = 0x9c9d9e9fu;
		m->apr.info_len = 72;
		m->apr.ar_status = 0xc3;
		fill_bytes(m->apr.info, sizeof(m->apr.info), 0xb1);
		fill_bytes(m->apr.private_data, sizeof(m->apr.private_data), 0xb2);
		break;
	case BLUE_IBCM_ATTR_SIDR_REQ:
		m->sidr_req.request_id = 0xacadaeafu;
		m->sidr_req.pkey = 0xfffe;
		m->sidr_req.service_id = 0x8000000001111234ull;
		fill_bytes(m->sidr_req.private_data, sizeof(m->sidr_req.private_data), 0xc1);
		break;
	case BLUE_IBCM_ATTR_SIDR_REP:
		m->sidr_rep.request_id = 0xbcbdbebfu;
		m->sidr_rep.status = 0xd4;
		m->sidr_rep.info_len = 72;
		m->sidr_rep.vendor_id = 0xe5f6a7;
		m->sidr_rep.qpn = 0xabcdef;
		m->sidr_rep.service_id = 0x8000000001115678ull;
		m->sidr_rep.qkey = 0x81234567u;
		fill_bytes(m->sidr_rep.class_port_info, sizeof(m->sidr_rep.class_port_info), 0xd1);
		fill_bytes(m->sidr_rep.private_data, sizeof(m->sidr_rep.private_data), 0xd2);
		break;
	}
}

Test(cm_mad, round_trip_every_message)
{
	for (size_t i = 0; i < N_ATTRS; i++) {
		const char *name = blue__ibcm_attr_str(all_attrs[i]);
		struct blue_ibcm_msg a, b;
		uint8_t mad[BLUE_IBCM_MAD_SIZE], again[BLUE_IBCM_MAD_SIZE];
		const char *bad = NULL;

		fill_msg(&a, all_attrs[i]);
		cr_assert_eq(blue__ibcm_encode(&a, mad, &bad), 0, "%s: encode (field %s)", name,
			     bad ? bad : "-");
		cr_assert_eq(blue__ibcm_decode(mad, sizeof(mad), &b), BLUE_IBCM_OK, "%s: decode %s",
			     name, blue__ibcm_err_str(blue__ibcm_decode(mad, sizeof(mad), &b)));
		cr_expect_eq(memcmp(&a.hdr, &b.hdr, sizeof(a.hdr)), 0, "%s: header", name);
		cr_expect_eq(memcmp(&a, &b, sizeof(a)), 0, "%s: decode(encode(m)) != m", name);
		cr_assert_eq(blue__ibcm_encode(&b, again, NULL), 0, "%s: second encode", name);
		cr_expect_eq(memcmp(mad, again, sizeof(mad)), 0, "%s: second encode differs", name);
	}
}

/*
 * One field at a time: starting from an all-zero message of @attr, the member at @off
 * (@size bytes, within the message struct) set to @val changes exactly the @n bytes at
 * MAD offset @at into @bytes, and nothing else. Offsets are 24 (the MAD header) plus
 * the byte the IBA table gives.
 */
struct golden {
	uint16_t	attr;
	const char	*what;
	size_t		off;
	uint8_t		size;
	uint64_t	val;
	uint16_t	at;
	uint8_t		n;
	uint8_t		bytes[8];
};

#define G(a, st, m, v, where, cnt, ...)					\
	{ BLUE_IBCM_ATTR_##a, #a "." #m, offsetof(st, m), sizeof(((st *)0)->m), (v),	\
	  (where), (cnt), { __VA_ARGS__ } }
#define RQ struct blue_ibcm_req
#define RP struct blue_ibcm_rep

static const struct golden goldens[] = {
	/* REQ, table 106 */
	G(REQ, RQ, local_comm_id, 0x11223344, H + 0, 4, 0x11, 0x22, 0x33, 0x44),
	G(REQ, RQ, vendor_id, 0xabcdef, H + 5, 3, 0xab, 0xcd, 0xef),
	G(REQ, RQ, service_id, 0x0102030405060708ull, H + 8, 8, 1, 2, 3, 4, 5, 6, 7, 8),
	G(REQ, RQ, local_ca_guid, 0x1112131415161718ull, H + 16, 8,
	  0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18),
	G(REQ, RQ, local_qkey, 0x80010000, H + 28, 4, 0x80, 0x01, 0x00, 0x00),
	G(REQ, RQ, local_qpn, 0xabcdef, H + 32, 3, 0xab, 0xcd, 0xef),	/* 32[0..23] */
	G(REQ, RQ, responder_resources, 0xa5, H + 35, 1, 0xa5),
	G(REQ, RQ, local_eecn, 0xabcdef, H + 36, 3, 0xab, 0xcd, 0xef),
	G(REQ, RQ, initiator_depth, 0x5a, H + 39, 1, 0x5a),
	G(REQ, RQ, remote_eecn, 0x123456, H + 40, 3, 0x12, 0x34, 0x56),
	G(REQ, RQ, remote_cm_response_timeout, 0x1f, H + 43, 1, 0xf8),	/* 43[0..4] */
	G(REQ, RQ, transport_type, 3, H + 43, 1, 0x06),			/* 43[5..6] */
	G(REQ, RQ, e2e_flow_control, 1, H + 43, 1, 0x01),		/* 43[7] */
	G(REQ, RQ, starting_psn, 0xfedcba, H + 44, 3, 0xfe, 0xdc, 0xba),
	G(REQ, RQ, local_cm_response_timeout, 0x11, H + 47, 1, 0x88),	/* 47[0..4] */
	G(REQ, RQ, retry_count, 5, H + 47, 1, 0x05),			/* 47[5..7] */
	G(REQ, RQ, pkey, 0xfffe, H + 48, 2, 0xff, 0xfe),
	G(REQ, RQ, path_mtu, 3, H + 50, 1, 0x30),			/* 50[0..3] */
	G(REQ, RQ, rdc_exists, 1, H + 50, 1, 0x08),			/* 50[4] */
	G(REQ, RQ, rnr_retry_count, 7, H + 50, 1, 0x07),		/* 50[5..7] */
	G(REQ, RQ, max_cm_retries, 15, H + 51, 1, 0xf0),		/* 51[0..3] */
	G(REQ, RQ, srq, 1, H + 51, 1, 0x08),				/* 51[4] */
	G(REQ, RQ, ext_transport_type, 1, H + 51, 1, 0x01),		/* 51[5..7] */
	G(REQ, RQ, primary.local_lid, 0xfffe, H + 52, 2, 0xff, 0xfe),
	G(REQ, RQ, primary.remote_lid, 0x1234, H + 54, 2, 0x12, 0x34),
	G(REQ, RQ, primary.flow_label, 0xfffff, H + 88, 3, 0xff, 0xff, 0xf0), /* 88[0..19] */
	G(REQ, RQ, primary.packet_rate, 0x3f, H + 91, 1, 0x3f),		/* 91[2..7] */
	G(REQ, RQ, primary.traffic_class, 0xb8, H + 92, 1, 0xb8),
	G(REQ, RQ, primary.hop_limit, 0x40, H + 93, 1, 0x40),
	G(REQ, RQ, primary.sl, 0xf, H + 94, 1, 0xf0),			/* 94[0..3] */
	G(REQ, RQ, primary.subnet_local, 1, H + 94, 1, 0x08),		/* 94[4] */
	G(REQ, RQ, primary.local_ack_timeout, 0x13, H + 95, 1, 0x98),	/* 95[0..4] */
	G(REQ, RQ, alternate.local_lid, 0xabcd, H + 96, 2, 0xab, 0xcd),
	G(REQ, RQ, alternate.remote_lid, 0xef01, H + 98, 2, 0xef, 0x01),
	G(REQ, RQ, alternate.flow_label, 0x80001, H + 132, 3, 0x80, 0x00, 0x10),
	G(REQ, RQ, alternate.packet_rate, 0x21, H + 135, 1, 0x21),
	G(REQ, RQ, alternate.traffic_class, 0x7f, H + 136, 1, 0x7f),
	G(REQ, RQ, alternate.hop_limit, 0xff, H + 137, 1, 0xff),
	G(REQ, RQ, alternate.sl, 0x9, H + 138, 1, 0x90),
	G(REQ, RQ, alternate.subnet_local, 1, H + 138, 1, 0x08),
	G(REQ, RQ, alternate.local_ack_timeout, 0x1f, H + 139, 1, 0xf8),
	G(REQ, RQ, sap_supported, 1, H + 139, 1, 0x04),			/* 139[5] */
	/* MRA, table 107 */
	G(MRA, struct blue_ibcm_mra, remote_comm_id, 0xdeadbeef, H + 4, 4, 0xde, 0xad, 0xbe, 0xef),
	G(MRA, struct blue_ibcm_mra, msg_mraed, 2, H + 8, 1, 0x80),	/* 8[0..1] */
	G(MRA, struct blue_ibcm_mra, service_timeout, 0x1f, H + 9, 1, 0xf8), /* 9[0..4] */
	/* REJ, table 108 */
	G(REJ, struct blue_ibcm_rej, msg_rejected, 1, H + 8, 1, 0x40),
	G(REJ, struct blue_ibcm_rej, ari_len, 72, H + 9, 1, 0x90),	/* 9[0..6] */
	G(REJ, struct blue_ibcm_rej, reason, 28, H + 10, 2, 0x00, 0x1c),
	/* REP, table 110 */
	G(REP, RP, local_qkey, 0x01234567, H + 8, 4, 0x01, 0x23, 0x45, 0x67),
	G(REP, RP, local_qpn, 0xabcdef, H + 12, 3, 0xab, 0xcd, 0xef),
	G(REP, RP, local_eecn, 0x654321, H + 16, 3, 0x65, 0x43, 0x21),
	G(REP, RP, starting_psn, 0xabcdef, H + 20, 3, 0xab, 0xcd, 0xef),
	G(REP, RP, responder_resources, 0x10, H + 24, 1, 0x10),
	G(REP, RP, initiator_depth, 0x20, H + 25, 1, 0x20),
	G(REP, RP, target_ack_delay, 0x1f, H + 26, 1, 0xf8),		/* 26[0..4] */
	G(REP, RP, failover_accepted, 3, H + 26, 1, 0x06),		/* 26[5..6] */
	G(REP, RP, e2e_flow_control, 1, H + 26, 1, 0x01),		/* 26[7] */
	G(REP, RP, rnr_retry_count, 7, H + 27, 1, 0xe0),		/* 27[0..2] */
	G(REP, RP, srq, 1, H + 27, 1, 0x10),				/* 27[3] */
	G(REP, RP, local_ca_guid, 0xa1a2a3a4a5a6a7a8ull, H + 28, 8,
	  0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8),
	/* RTU 111, DREQ 112, DREP 113 */
	G(RTU, struct blue_ibcm_rtu, remote_comm_id, 0x01020304, H + 4, 4, 1, 2, 3, 4),
	G(DREQ, struct blue_ibcm_dreq, remote_qpn_eecn, 0xabcdef, H + 8, 3, 0xab, 0xcd, 0xef),
	G(DREP, struct blue_ibcm_drep, local_comm_id, 0x0a0b0c0d, H + 0, 4, 10, 11, 12, 13),
	/* LAP, table 115 */
	G(LAP, struct blue_ibcm_lap, remote_qpn_eecn, 0xabcdef, H + 12, 3, 0xab, 0xcd, 0xef),
	G(LAP, struct blue_ibcm_lap, remote_cm_response_timeout, 0x1f, H + 15, 1, 0xf8),
	G(LAP, struct blue_ibcm_lap, alternate.local_lid, 0x1234, H + 20, 2, 0x12, 0x34),
	G(LAP, struct blue_ibcm_lap, alternate.flow_label, 0xfffff, H + 56, 3, 0xff, 0xff, 0xf0),
	G(LAP, struct blue_ibcm_lap, alternate.traffic_class, 0xaa, H + 59, 1, 0xaa),
	G(LAP, struct blue_ibcm_lap, alternate.hop_limit, 0xbb, H + 60, 1, 0xbb),
	G(LAP, struct blue_ibcm_lap, alternate.packet_rate, 0x3f, H + 61, 1, 0x3f),
	G(LAP, struct blue_ibcm_lap, alternate.sl, 0xf, H + 62, 1, 0xf0),
	G(LAP, struct blue_ibcm_lap, alternate.subnet_local, 1, H + 62, 1, 0x08),
	G(LAP, struct blue_ibcm_lap, alternate.local_ack_timeout, 0x1f, H + 63, 1, 0xf8),
	/* APR, table 116 */
	G(APR, struct blue_ibcm_apr, info_len, 72, H + 8, 1, 72),
	G(APR, struct blue_ibcm_apr, ar_status, 0x0c, H + 9, 1, 0x0c),
	/* SIDR_REQ 119, SIDR_REP 120 */
	G(SIDR_REQ, struct blue_ibcm_sidr_req, pkey, 0xffff, H + 4, 2, 0xff, 0xff),
	G(SIDR_REQ, struct blue_ibcm_sidr_req, service_id, 0x0000000001111234ull, H + 8, 8,
	  0, 0, 0, 0, 0x01, 0x11, 0x12, 0x34),
	G(SIDR_REP, struct blue_ibcm_sidr_rep, status, 0x02, H + 4, 1, 0x02),
	G(SIDR_REP, struct blue_ibcm_sidr_rep, info_len, 0x48, H + 5, 1, 0x48),
	G(SIDR_REP, struct blue_ibcm_sidr_rep, qpn, 0xabcdef, H + 8, 3, 0xab, 0xcd, 0xef),
	G(SIDR_REP, struct blue_ibcm_sidr_rep, service_id, 0x0102030405060708ull, H + 12, 8,
	  1, 2, 3, 4, 5, 6, 7, 8),
	G(SIDR_REP, struct blue_ibcm_sidr_rep, qkey, 0x80010000, H + 20, 4, 0x80, 0x01, 0, 0),
};

static void encode_or_die(const struct blue_ibcm_msg *m, uint8_t *mad, const char *what)
{
	const char *bad = NULL;
	int rc = blue__ibcm_encode(m, mad, &bad);

	cr_assert_eq(rc, 0, "%s: encode %d (field %s)", what, rc, bad ? bad : "-");
}

Test(cm_mad, single_fields_land_where_the_spec_says)
{
	for (size_t i = 0; i < sizeof(goldens) / sizeof(goldens[0]); i++) {
		const struct golden *g = &goldens[i];
		uint8_t base[BLUE_IBCM_MAD_SIZE], mad[BLUE_IBCM_MAD_SIZE];
		struct blue_ibcm_msg m;
		uint64_t v = g->val;
		uint8_t *member;

		blue__ibcm_init(&m, g->attr, 0);
		encode_or_die(&m, base, g->what);
		member = (uint8_t *)&m.req + g->off;
		if (g->size == 1)
			*member = (uint8_t)v;
		else if (g->size == 2)
			memcpy(member, &(uint16_t){ (uint16_t)v }, 2);
		else if (g->size == 4)
			memcpy(member, &(uint32_t){ (uint32_t)v }, 4);
		else
			memcpy(member, &v, 8);
		encode_or_die(&m, mad, g->what);
		memcpy(base + g->at, g->bytes, g->n);
		for (size_t b = 0; b < sizeof(mad); b++)
			cr_expect_eq(mad[b], base[b], "%s = 0x%llx: MAD byte %zu is 0x%02x, want 0x%02x",
				     g->what, (unsigned long long)g->val, b, mad[b], base[b]);
	}
}

/* The byte fields: GIDs, ARI/info areas and private data start where the tables say. */
Test(cm_mad, byte_fields_land_where_the_spec_says)
{
	static const struct {
		uint16_t attr;
		const char *what;
		size_t off, len;
		uint16_t at;
	} rows[] = {
		{ BLUE_IBCM_ATTR_REQ, "REQ primary local GID",
		  offsetof(struct blue_ibcm_req, primary.local_gid), 16, H + 56 },
		{ BLUE_IBCM_ATTR_REQ, "REQ primary remote GID",
		  offsetof(struct blue_ibcm_req, primary.remote_gid), 16, H + 72 },
		{ BLUE_IBCM_ATTR_REQ, "REQ alternate local GID",
		  offsetof(struct blue_ibcm_req, alternate.local_gid), 16, H + 100 },
		{ BLUE_IBCM_ATTR_REQ, "REQ alternate remote GID",
		  offsetof(struct blue_ibcm_req, alternate.remote_gid), 16, H + 116 },
		{ BLUE_IBCM_ATTR_REQ, "REQ private", offsetof(struct blue_ibcm_req, private_data),
		  92, H + 140 },
		{ BLUE_IBCM_ATTR_MRA, "MRA private", offsetof(struct blue_ibcm_mra, private_data),
		  222, H + 10 },
		{ BLUE_IBCM_ATTR_REJ, "REJ ARI", offsetof(struct blue_ibcm_rej, ari), 72, H + 12 },
		{ BLUE_IBCM_ATTR_REJ, "REJ private", offsetof(struct blue_ibcm_rej, private_data),
		  148, H + 84 },
		{ BLUE_IBCM_ATTR_REP, "REP private", offsetof(struct blue_ibcm_rep, private_data),
		  196, H + 36 },
		{ BLUE_IBCM_ATTR_RTU, "RTU private", offsetof(struct blue_ibcm_rtu, private_data),
		  224, H + 8 },
		{ BLUE_IBCM_ATTR_DREQ, "DREQ private",
		  offsetof(struct blue_ibcm_dreq, private_data), 220, H + 12 },
		{ BLUE_IBCM_ATTR_DREP, "DREP private",
		  offsetof(struct blue_ibcm_drep, private_data), 224, H + 8 },
		{ BLUE_IBCM_ATTR_LAP, "LAP alternate local GID",
		  offsetof(struct blue_ibcm_lap, alternate.local_gid), 16, H + 24 },
		{ BLUE_IBCM_ATTR_LAP, "LAP alternate remote GID",
		  offsetof(struct blue_ibcm_lap, alternate.remote_gid), 16, H + 40 },
		{ BLUE_IBCM_ATTR_LAP, "LAP private", offsetof(struct blue_ibcm_lap, private_data),
		  168, H + 64 },
		{ BLUE_IBCM_ATTR_APR, "APR info", offsetof(struct blue_ibcm_apr, info), 72, H + 12 },
		{ BLUE_IBCM_ATTR_APR, "APR private", offsetof(struct blue_ibcm_apr, private_data),
		  148, H + 84 },
		{ BLUE_IBCM_ATTR_SIDR_REQ, "SIDR_REQ private",
		  offsetof(struct blue_ibcm_sidr_req, private_data), 216, H + 16 },
		{ BLUE_IBCM_ATTR_SIDR_REP, "SIDR_REP class port info",
		  offsetof(struct blue_ibcm_sidr_rep, class_port_info), 72, H + 24 },
		{ BLUE_IBCM_ATTR_SIDR_REP, "SIDR_REP private",
		  offsetof(struct blue_ibcm_sidr_rep, private_data), 136, H + 96 },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint8_t base[BLUE_IBCM_MAD_SIZE], mad[BLUE_IBCM_MAD_SIZE];
		struct blue_ibcm_msg m;

		blue__ibcm_init(&m, rows[i].attr, 0);
		encode_or_die(&m, base, rows[i].what);
		fill_bytes((uint8_t *)&m.req + rows[i].off, rows[i].len, (uint8_t)i);
		encode_or_die(&m, mad, rows[i].what);
		cr_assert_leq(rows[i].at + rows[i].len, BLUE_IBCM_MAD_SIZE, "%s", rows[i].what);
		memcpy(base + rows[i].at, (uint8_t *)&m.req + rows[i].off, rows[i].len);
		cr_expect_eq(memcmp(mad, base, sizeof(mad)), 0, "%s: not at MAD byte %u, %zu long",
			     rows[i].what, rows[i].at, rows[i].len);
	}
}

/* The vendor IDs are split: REP's over bytes 15, 19 and 23; SIDR_REP's over 6-7 and 11. */
Test(cm_mad, split_vendor_ids)
{
	uint8_t base[BLUE_IBCM_MAD_SIZE], mad[BLUE_IBCM_MAD_SIZE];
	struct blue_ibcm_msg m, d;

	blue__ibcm_init(&m, BLUE_IBCM_ATTR_REP, 0);
	encode_or_die(&m, base, "REP");
	m.rep.vendor_id = 0xa1b2c3;
	encode_or_die(&m, mad, "REP vendor");
	base[H + 15] = 0xa1;
	base[H + 19] = 0xb2;
	base[H + 23] = 0xc3;
	cr_expect_eq(memcmp(mad, base, sizeof(mad)), 0, "REP vendor ID H/M/L at 15/19/23");
	cr_assert_eq(blue__ibcm_decode(mad, sizeof(mad), &d), BLUE_IBCM_OK);
	cr_expect_eq(d.rep.vendor_id, 0xa1b2c3u);

	blue__ibcm_init(&m, BLUE_IBCM_ATTR_SIDR_REP, 0);
	encode_or_die(&m, base, "SIDR_REP");
	m.sidr_rep.vendor_id = 0xd4e5f6;
	encode_or_die(&m, mad, "SIDR_REP vendor");
	base[H + 6] = 0xd4;
	base[H + 7] = 0xe5;
	base[H + 11] = 0xf6;
	cr_expect_eq(memcmp(mad, base, sizeof(mad)), 0, "SIDR_REP vendor ID H at 6-7, L at 11");
	cr_assert_eq(blue__ibcm_decode(mad, sizeof(mad), &d), BLUE_IBCM_OK);
	cr_expect_eq(d.sidr_rep.vendor_id, 0xd4e5f6u);
}

/* IBA 13.4.3: the MAD header, and every attribute ID at bytes 16-17. */
Test(cm_mad, header_layout)
{
	uint8_t mad[BLUE_IBCM_MAD_SIZE];
	struct blue_ibcm_msg m;
	static const uint8_t want[24] = {
		0x01, 0x07, 0x02, 0x03,		/* base version, class CM, class version, Send */
		0x12, 0x34, 0x56, 0x78,		/* status, class specific */
		0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,	/* TID */
		0x00, 0x13, 0x00, 0x00,		/* attribute REP, reserved */
		0xfe, 0xdc, 0xba, 0x98,		/* attribute modifier */
	};

	blue__ibcm_init(&m, BLUE_IBCM_ATTR_REP, 0x0123456789abcdefull);
	m.hdr.status = 0x1234;
	m.hdr.class_specific = 0x5678;
	m.hdr.attr_mod = 0xfedcba98u;
	encode_or_die(&m, mad, "REP");
	cr_expect_eq(memcmp(mad, want, sizeof(want)), 0, "MAD header bytes");

	for (size_t i = 0; i < N_ATTRS; i++) {
		blue__ibcm_init(&m, all_attrs[i], 0);
		encode_or_die(&m, mad, blue__ibcm_attr_str(all_attrs[i]));
		cr_expect_eq(mad[16] << 8 | mad[17], all_attrs[i], "attribute %s",
			     blue__ibcm_attr_str(all_attrs[i]));
	}
}

static void put(uint8_t *g, size_t at, const void *bytes, size_t n)
{
	memcpy(g + at, bytes, n);
}

/*
 * A REQ as rdma_cm sends one on RoCEv2/IPv4 (see cm_mad.h), from 10.0.0.1:49152 to
 * 10.0.0.2 port 7471 (PS_TCP), assembled from IBA 12.6.5 table 106 byte by byte.
 */
static void golden_req_bytes(uint8_t g[BLUE_IBCM_MAD_SIZE])
{
	memset(g, 0, BLUE_IBCM_MAD_SIZE);
	/* MAD header (13.4.3): v1, class 07, v2, Send; TID; attribute 0x0010 */
	put(g, 0, "\x01\x07\x02\x03", 4);
	put(g, 8, "\x00\x00\x00\x01\x12\x34\x56\x78", 8);
	put(g, 16, "\x00\x10", 2);
	put(g, H + 0, "\x12\x34\x56\x78", 4);		/* local comm ID */
	put(g, H + 8, "\x00\x00\x00\x00\x01\x06\x1d\x2f", 8); /* service ID: IP CM, TCP, 7471 */
	put(g, H + 16, "\x00\x02\xc9\xff\xfe\x12\x34\x56", 8); /* local CA GUID */
	/* 28: local Q_Key 0 (the kernel leaves it for RC) */
	put(g, H + 32, "\x00\x00\x11\x01", 4);		/* QPN 0x11, responder resources 1 */
	put(g, H + 36, "\x00\x00\x00\x01", 4);		/* EECN 0, initiator depth 1 */
	put(g, H + 40, "\x00\x00\x00\xa1", 4);		/* remote timeout 20, RC, EEFC 1 */
	put(g, H + 44, "\xab\xcd\xef\xa7", 4);		/* PSN, local timeout 20, retry 7 */
	put(g, H + 48, "\xff\xff\x37\xf0", 4);		/* P_Key, MTU 1024, RNR 7, CM retries 15 */
	put(g, H + 52, "\xff\xff\xff\xff", 4);		/* permissive LIDs: routed RoCEv2 */
	put(g, H + 56 + 10, "\xff\xff\x0a\x00\x00\x01", 6);	/* ::ffff:10.0.0.1 */
	put(g, H + 72 + 10, "\xff\xff\x0a\x00\x00\x02", 6);	/* ::ffff:10.0.0.2 */
	put(g, H + 88, "\x1f\x00\xd0\x03", 4);		/* flow label 0x1f00d, rate 3 */
	put(g, H + 92, "\x60\x40\x00\x98", 4);		/* TC, hop 64, SL 0 not local, ACK 19 */
	/* 96..139: no alternate path (its local LID 0) */
	put(g, H + 140, "\x00\x40\xc0\x00", 4);		/* IP CM v0, IPv4, source port */
	put(g, H + 140 + 4 + 12, "\x0a\x00\x00\x01", 4);
	put(g, H + 140 + 20 + 12, "\x0a\x00\x00\x02", 4);
	put(g, H + 140 + 36, "blue", 4);		/* the consumer's private data */
}

static void golden_req_msg(struct blue_ibcm_msg *m)
{
	struct blue_ibcm_req *r = &m->req;
	struct blue_ibcm_ip_hdr ip = { .ip_version = 4, .src_port = 0xc000 };
	static const uint8_t v4m[12] = { [10] = 0xff, [11] = 0xff };

	blue__ibcm_init(m, BLUE_IBCM_ATTR_REQ, 0x0000000112345678ull);
	r->local_comm_id = 0x12345678;
	r->service_id = blue__ibcm_ip_service_id(BLUE_IBCM_PS_TCP, 7471);
	r->local_ca_guid = 0x0002c9fffe123456ull;
	r->local_qpn = 0x11;
	r->responder_resources = 1;
	r->initiator_depth = 1;
	r->remote_cm_response_timeout = 20;
	r->transport_type = BLUE_IBCM_TRANSPORT_RC;
	r->e2e_flow_control = 1;
	r->starting_psn = 0xabcdef;
	r->local_cm_response_timeout = 20;
	r->retry_count = 7;
	r->pkey = 0xffff;
	r->path_mtu = 3;
	r->rnr_retry_count = 7;
	r->max_cm_retries = 15;
	r->primary.local_lid = BLUE_IBCM_LID_PERMISSIVE;
	r->primary.remote_lid = BLUE_IBCM_LID_PERMISSIVE;
	memcpy(r->primary.local_gid, v4m, 12);
	memcpy(r->primary.local_gid + 12, "\x0a\x00\x00\x01", 4);
	memcpy(r->primary.remote_gid, v4m, 12);
	memcpy(r->primary.remote_gid + 12, "\x0a\x00\x00\x02", 4);
	r->primary.flow_label = 0x1f00d;
	r->primary.packet_rate = 3;
	r->primary.traffic_class = 0x60;
	r->primary.hop_limit = 64;
	r->primary.local_ack_timeout = 19;
	inet_pton(AF_INET, "10.0.0.1", &ip.src.v4);
	inet_pton(AF_INET, "10.0.0.2", &ip.dst.v4);
	cr_assert_eq(blue__ibcm_ip_hdr_encode(&ip, r->private_data, sizeof(r->private_data)),
		     BLUE_IBCM_IP_HDR_LEN);
	memcpy(r->private_data + BLUE_IBCM_IP_HDR_LEN, "blue", 4);
}

static void expect_same_bytes(const uint8_t *got, const uint8_t *want, const char *what)
{
	for (size_t b = 0; b < BLUE_IBCM_MAD_SIZE; b++)
		cr_expect_eq(got[b], want[b], "%s: byte %zu (message byte %d) 0x%02x, want 0x%02x",
			     what, b, (int)b - H, got[b], want[b]);
}

Test(cm_mad, golden_req_byte_for_byte)
{
	uint8_t want[BLUE_IBCM_MAD_SIZE], got[BLUE_IBCM_MAD_SIZE];
	struct blue_ibcm_msg m, d;
	struct blue_ibcm_ip_hdr ip;
	char a[INET_ADDRSTRLEN];

	golden_req_bytes(want);
	golden_req_msg(&m);
	encode_or_die(&m, got, "golden REQ");
	expect_same_bytes(got, want, "REQ");

	cr_assert_eq(blue__ibcm_decode(want, sizeof(want), &d), BLUE_IBCM_OK);
	cr_expect_eq(d.req.local_qpn, 0x11u);
	cr_expect_eq(d.req.starting_psn, 0xabcdefu);
	cr_expect_eq(d.req.primary.local_ack_timeout, 19);
	cr_expect_eq(d.req.max_cm_retries, 15);
	cr_assert_eq(blue__ibcm_ip_hdr_decode(d.req.private_data, sizeof(d.req.private_data), &ip),
		     BLUE_IBCM_OK);
	cr_expect_eq(ip.ip_version, 4);
	cr_expect_eq(ip.src_port, 0xc000);
	cr_expect_str_eq(inet_ntop(AF_INET, &ip.dst.v4, a, sizeof(a)), "10.0.0.2");
}

/* The REP that answers it, assembled from IBA 12.6.8 table 110. */
Test(cm_mad, golden_rep_byte_for_byte)
{
	uint8_t want[BLUE_IBCM_MAD_SIZE], got[BLUE_IBCM_MAD_SIZE];
	struct blue_ibcm_msg m;

	memset(want, 0, sizeof(want));
	put(want, 0, "\x01\x07\x02\x03", 4);
	put(want, 8, "\x00\x00\x00\x01\x12\x34\x56\x78", 8);	/* the REQ's TID */
	put(want, 16, "\x00\x13", 2);
	put(want, H + 0, "\x9a\xbc\xde\xf0", 4);	/* local comm ID */
	put(want, H + 4, "\x12\x34\x56\x78", 4);	/* remote comm ID: the REQ's */
	/* 8: local Q_Key 0 */
	put(want, H + 12, "\x00\x00\x12\x00", 4);	/* QPN 0x12, vendor ID H 0 */
	/* 16: EECN 0 */
	put(want, H + 20, "\x12\x34\x56\x00", 4);	/* starting PSN */
	put(want, H + 24, "\x01\x01\x79\xe0", 4);	/* resources, depth, ACK delay 15 + EEFC, RNR 7 */
	put(want, H + 28, "\x00\x02\xc9\xff\xfe\x65\x43\x21", 8);	/* local CA GUID */
	put(want, H + 36, "ok", 2);

	blue__ibcm_init(&m, BLUE_IBCM_ATTR_REP, 0x0000000112345678ull);
	m.rep.local_comm_id = 0x9abcdef0;
	m.rep.remote_comm_id = 0x12345678;
	m.rep.local_qpn = 0x12;
	m.rep.starting_psn = 0x123456;
	m.rep.responder_resources = 1;
	m.rep.initiator_depth = 1;
	m.rep.target_ack_delay = 15;
	m.rep.e2e_flow_control = 1;
	m.rep.rnr_retry_count = 7;
	m.rep.local_ca_guid = 0x0002c9fffe654321ull;
	cr_assert_eq(blue__ibcm_set_private_data(&m, "ok", 2), 0);
	encode_or_die(&m, got, "golden REP");
	expect_same_bytes(got, want, "REP");
}

/* A valid MAD of @attr to damage. */
static void valid_mad(uint16_t attr, uint8_t *mad)
{
	struct blue_ibcm_msg m;

	blue__ibcm_init(&m, attr, 1);
	encode_or_die(&m, mad, blue__ibcm_attr_str(attr));
}

static void expect_refused(const uint8_t *mad, size_t len, enum blue_ibcm_err want,
			   const char *what)
{
	struct blue_ibcm_msg m;
	enum blue_ibcm_err got = blue__ibcm_decode(mad, len, &m);

	cr_expect_eq(got, want, "%s: decode says %s, want %s", what, blue__ibcm_err_str(got),
		     blue__ibcm_err_str(want));
}

Test(cm_mad, decode_refuses_with_named_reason)
{
	uint8_t mad[BLUE_IBCM_MAD_SIZE];

	valid_mad(BLUE_IBCM_ATTR_RTU, mad);
	expect_refused(mad, sizeof(mad), BLUE_IBCM_OK, "valid RTU");
	expect_refused(mad, sizeof(mad) - 1, BLUE_IBCM_ERR_SHORT, "255 bytes");
	expect_refused(mad, 0, BLUE_IBCM_ERR_SHORT, "0 bytes");

	mad[0] = 2;
	expect_refused(mad, sizeof(mad), BLUE_IBCM_ERR_BASE_VERSION, "base version 2");
	valid_mad(BLUE_IBCM_ATTR_RTU, mad);
	mad[1] = 0x03;
	expect_refused(mad, sizeof(mad), BLUE_IBCM_ERR_MGMT_CLASS, "class 0x03 (SA)");
	valid_mad(BLUE_IBCM_ATTR_RTU, mad);
	mad[2] = 1;
	expect_refused(mad, sizeof(mad), BLUE_IBCM_ERR_CLASS_VERSION, "class version 1");
	mad[2] = 3;
	expect_refused(mad, sizeof(mad), BLUE_IBCM_ERR_CLASS_VERSION, "class version 3");
	valid_mad(BLUE_IBCM_ATTR_RTU, mad);
	mad[3] = 0x83;
	expect_refused(mad, sizeof(mad), BLUE_IBCM_ERR_METHOD, "Send with the R bit");
	mad[3] = 0x01;
	expect_refused(mad, sizeof(mad), BLUE_IBCM_ERR_METHOD, "Get");
	valid_mad(BLUE_IBCM_ATTR_RTU, mad);
	mad[17] = 0x1b;
	expect_refused(mad, sizeof(mad), BLUE_IBCM_ERR_UNKNOWN_ATTR, "attribute 0x001b");
	mad[16] = 0x10;
	mad[17] = 0x10;
	expect_refused(mad, sizeof(mad), BLUE_IBCM_ERR_UNKNOWN_ATTR, "attribute 0x1010");
	mad[16] = 0;
	mad[17] = 0x01;
	expect_refused(mad, sizeof(mad), BLUE_IBCM_ERR_UNSUPPORTED_ATTR, "ClassPortInfo");

	/* REQ transport service type 43[5..6] and extended transport 51[5..7] */
	valid_mad(BLUE_IBCM_ATTR_REQ, mad);
	mad[H + 43] = 0x02;
	expect_refused(mad, sizeof(mad), BLUE_IBCM_OK, "REQ UC");
	mad[H + 43] = 0x04;
	expect_refused(mad, sizeof(mad), BLUE_IBCM_ERR_TRANSPORT, "REQ RD");
	mad[H + 43] = 0x06;
	expect_refused(mad, sizeof(mad), BLUE_IBCM_ERR_TRANSPORT, "REQ extended, type 0");
	mad[H + 51] = 0x01;
	expect_refused(mad, sizeof(mad), BLUE_IBCM_OK, "REQ XRC");
	mad[H + 51] = 0x02;
	expect_refused(mad, sizeof(mad), BLUE_IBCM_ERR_TRANSPORT, "REQ extended, type 2");

	valid_mad(BLUE_IBCM_ATTR_MRA, mad);
	mad[H + 8] = 0xc0;
	expect_refused(mad, sizeof(mad), BLUE_IBCM_ERR_MSG_RESPONSE, "MRA message 3");
	valid_mad(BLUE_IBCM_ATTR_REJ, mad);
	mad[H + 8] = 0xc0;
	expect_refused(mad, sizeof(mad), BLUE_IBCM_ERR_MSG_RESPONSE, "REJ message 3");
	valid_mad(BLUE_IBCM_ATTR_REJ, mad);
	mad[H + 9] = 72 << 1;
	expect_refused(mad, sizeof(mad), BLUE_IBCM_OK, "REJ ARI 72");
	mad[H + 9] = 73 << 1;
	expect_refused(mad, sizeof(mad), BLUE_IBCM_ERR_INFO_LEN, "REJ ARI 73");
	valid_mad(BLUE_IBCM_ATTR_APR, mad);
	mad[H + 8] = 73;
	expect_refused(mad, sizeof(mad), BLUE_IBCM_ERR_INFO_LEN, "APR info 73");
	valid_mad(BLUE_IBCM_ATTR_SIDR_REP, mad);
	mad[H + 5] = 0xff;
	expect_refused(mad, sizeof(mad), BLUE_IBCM_ERR_INFO_LEN, "SIDR_REP info 255");
}

Test(cm_mad, encode_refuses_what_does_not_fit)
{
	uint8_t mad[BLUE_IBCM_MAD_SIZE], priv[BLUE_IBCM_REQ_PRIV + 1];
	struct blue_ibcm_msg m;
	const char *bad = NULL;
	size_t cap = 0;

	blue__ibcm_init(&m, BLUE_IBCM_ATTR_REQ, 0);
	m.req.local_qpn = 0x1000000;
	cr_expect_eq(blue__ibcm_encode(&m, mad, &bad), -ERANGE);
	cr_expect_str_eq(bad ? bad : "", "local_qpn");
	m.req.local_qpn = 0xffffff;
	m.req.primary.sl = 16;
	cr_expect_eq(blue__ibcm_encode(&m, mad, &bad), -ERANGE);
	cr_expect_str_eq(bad ? bad : "", "primary.sl");

	blue__ibcm_init(&m, BLUE_IBCM_ATTR_REJ, 0);
	m.rej.ari_len = 73;
	cr_expect_eq(blue__ibcm_encode(&m, mad, &bad), -ERANGE, "ARI 73 fits 7 bits, not 72 bytes");
	cr_expect_str_eq(bad ? bad : "", "ari_len");
	blue__ibcm_init(&m, BLUE_IBCM_ATTR_REP, 0);
	m.rep.vendor_id = 0x1000000;
	cr_expect_eq(blue__ibcm_encode(&m, mad, &bad), -ERANGE);
	cr_expect_str_eq(bad ? bad : "", "vendor_id");

	blue__ibcm_init(&m, BLUE_IBCM_ATTR_CLASS_PORT_INFO, 0);
	cr_expect_eq(blue__ibcm_encode(&m, mad, NULL), -EINVAL);
	blue__ibcm_init(&m, 0x0042, 0);
	cr_expect_eq(blue__ibcm_encode(&m, mad, NULL), -EINVAL);
	cr_expect_null(blue__ibcm_private_data(&m, &cap));
	cr_expect_eq(cap, 0);

	/* private data: 92 bytes in a REQ and no more; the rest is zeroed */
	blue__ibcm_init(&m, BLUE_IBCM_ATTR_REQ, 0);
	memset(priv, 0xee, sizeof(priv));
	cr_expect_eq(blue__ibcm_set_private_data(&m, priv, sizeof(priv)), -EMSGSIZE);
	cr_expect_eq(m.req.private_data[0], 0, "refused data left the message alone");
	cr_expect_eq(blue__ibcm_set_private_data(&m, priv, BLUE_IBCM_REQ_PRIV), 0);
	cr_expect_eq(m.req.private_data[BLUE_IBCM_REQ_PRIV - 1], 0xee);
	cr_expect_eq(blue__ibcm_set_private_data(&m, "x", 1), 0);
	cr_expect_eq(m.req.private_data[0], 'x');
	cr_expect_eq(m.req.private_data[1], 0, "the tail is zeroed");
	cr_expect_eq(blue__ibcm_private_data(&m, &cap), m.req.private_data);
	cr_expect_eq(cap, 92);
}

Test(cm_mad, private_data_sizes)
{
	static const struct {
		uint16_t attr;
		size_t cap;
	} want[] = {
		{ BLUE_IBCM_ATTR_REQ, 92 }, { BLUE_IBCM_ATTR_MRA, 222 }, { BLUE_IBCM_ATTR_REJ, 148 },
		{ BLUE_IBCM_ATTR_REP, 196 }, { BLUE_IBCM_ATTR_RTU, 224 }, { BLUE_IBCM_ATTR_DREQ, 220 },
		{ BLUE_IBCM_ATTR_DREP, 224 }, { BLUE_IBCM_ATTR_SIDR_REQ, 216 },
		{ BLUE_IBCM_ATTR_SIDR_REP, 136 }, { BLUE_IBCM_ATTR_LAP, 168 },
		{ BLUE_IBCM_ATTR_APR, 148 },
	};
	struct blue_ibcm_msg m;

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		size_t cap = 0;

		blue__ibcm_init(&m, want[i].attr, 0);
		cr_expect_not_null(blue__ibcm_private_data(&m, &cap));
		cr_expect_eq(cap, want[i].cap, "%s private data %zu, want %zu",
			     blue__ibcm_attr_str(want[i].attr), cap, want[i].cap);
	}
}

Test(cm_mad, ip_cm_header)
{
	uint8_t p[BLUE_IBCM_IP_HDR_LEN + 4];
	struct blue_ibcm_ip_hdr h = { .ip_version = 4, .src_port = 0x1234 }, d;
	static const uint8_t want4[BLUE_IBCM_IP_HDR_LEN] = {
		0x00, 0x40, 0x12, 0x34,		/* version 0, IPv4 in 7:4, source port */
		[4 + 12] = 192, 168, 1, 2,	/* source: the last 4 of 16, zeros before */
		[20 + 12] = 192, 168, 1, 3,
	};
	char a[INET6_ADDRSTRLEN];

	inet_pton(AF_INET, "192.168.1.2", &h.src.v4);
	inet_pton(AF_INET, "192.168.1.3", &h.dst.v4);
	memset(p, 0xee, sizeof(p));
	cr_assert_eq(blue__ibcm_ip_hdr_encode(&h, p, sizeof(p)), 36);
	cr_expect_eq(memcmp(p, want4, sizeof(want4)), 0, "IPv4 header bytes");
	cr_expect_eq(p[36], 0xee, "nothing written past 36");
	cr_assert_eq(blue__ibcm_ip_hdr_decode(p, sizeof(p), &d), BLUE_IBCM_OK);
	cr_expect_eq(memcmp(&d, &h, sizeof(h)), 0, "IPv4 round trip");

	/* an IPv4-mapped form in the 16 bytes reads the same: only the last 4 count */
	p[4 + 10] = p[4 + 11] = 0xff;
	cr_assert_eq(blue__ibcm_ip_hdr_decode(p, sizeof(p), &d), BLUE_IBCM_OK);
	cr_expect_str_eq(inet_ntop(AF_INET, &d.src.v4, a, sizeof(a)), "192.168.1.2");

	h.ip_version = 6;
	inet_pton(AF_INET6, "fe80::1:2:3:4", &h.src.v6);
	inet_pton(AF_INET6, "2001:db8::abcd", &h.dst.v6);
	cr_assert_eq(blue__ibcm_ip_hdr_encode(&h, p, sizeof(p)), 36);
	cr_expect_eq(p[1], 0x60);
	cr_expect_eq(memcmp(p + 4, &h.src.v6, 16), 0);
	cr_expect_eq(memcmp(p + 20, &h.dst.v6, 16), 0);
	cr_assert_eq(blue__ibcm_ip_hdr_decode(p, sizeof(p), &d), BLUE_IBCM_OK);
	cr_expect_eq(memcmp(&d, &h, sizeof(h)), 0, "IPv6 round trip");

	cr_expect_eq(blue__ibcm_ip_hdr_decode(p, 35, &d), BLUE_IBCM_ERR_IP_SHORT);
	p[0] = 1;
	cr_expect_eq(blue__ibcm_ip_hdr_decode(p, sizeof(p), &d), BLUE_IBCM_ERR_IP_CM_VERSION);
	p[0] = 0;
	p[1] = 0x50;
	cr_expect_eq(blue__ibcm_ip_hdr_decode(p, sizeof(p), &d), BLUE_IBCM_ERR_IP_VERSION);
	p[1] = 0x4f;	/* the reserved low nibble is not looked at */
	cr_expect_eq(blue__ibcm_ip_hdr_decode(p, sizeof(p), &d), BLUE_IBCM_OK);

	cr_expect_eq(blue__ibcm_ip_hdr_encode(&h, p, 35), -EMSGSIZE);
	h.ip_version = 5;
	cr_expect_eq(blue__ibcm_ip_hdr_encode(&h, p, sizeof(p)), -EAFNOSUPPORT);
}

Test(cm_mad, ip_service_ids)
{
	uint16_t ps = 0, port = 0;

	cr_expect_eq(blue__ibcm_ip_service_id(BLUE_IBCM_PS_TCP, 4791), 0x00000000010612b7ull);
	cr_expect_eq(blue__ibcm_ip_service_id(BLUE_IBCM_PS_UDP, 0xffff), 0x000000000111ffffull);
	cr_expect_eq(blue__ibcm_ip_service_id(BLUE_IBCM_PS_IB, 1), 0x00000000013f0001ull);

	cr_expect_eq(blue__ibcm_ip_service_parse(0x00000000010612b7ull, &ps, &port), 0);
	cr_expect_eq(ps, BLUE_IBCM_PS_TCP);
	cr_expect_eq(port, 4791);
	cr_expect_eq(blue__ibcm_ip_service_parse(0x0000000001110000ull, &ps, &port), 0);
	cr_expect_eq(ps, BLUE_IBCM_PS_UDP);
	cr_expect_eq(port, 0);
	cr_expect_eq(blue__ibcm_ip_service_parse(0x00000000013fabcdull, &ps, &port), 0);
	cr_expect_eq(ps, BLUE_IBCM_PS_IB);

	ps = port = 7;
	cr_expect_eq(blue__ibcm_ip_service_parse(0x0000000002060001ull, &ps, &port), -EINVAL);
	cr_expect_eq(blue__ibcm_ip_service_parse(0x0000000101060001ull, &ps, &port), -EINVAL);
	cr_expect_eq(blue__ibcm_ip_service_parse(0x8000000001060001ull, &ps, &port), -EINVAL);
	cr_expect_eq(blue__ibcm_ip_service_parse(0x0000000001840001ull, &ps, &port), -EINVAL,
		     "SCTP is no rdma_cm port space");
	cr_expect_eq(blue__ibcm_ip_service_parse(0x0000000000020001ull, &ps, &port), -EINVAL,
		     "IPoIB's port space is no IP CM service");
	cr_expect_eq(ps, 7, "a refused ID leaves the outputs alone");
}

Test(cm_mad, name_tables)
{
	static const struct {
		uint16_t reason;
		const char *name;
	} rej[] = {
		{ 1, "no QP" }, { 2, "no EEC" }, { 3, "no resources" }, { 4, "timeout" },
		{ 5, "unsupported request" }, { 6, "invalid comm ID" },
		{ 7, "invalid comm instance" }, { 8, "invalid service ID" },
		{ 9, "invalid transport type" }, { 10, "stale connection" },
		{ 28, "consumer reject" }, { 30, "duplicate local comm ID" },
		{ 32, "invalid primary flow label" }, { 0, "unknown reason" },
		{ 34, "unknown reason" }, { 0xffff, "unknown reason" },
	};

	for (size_t i = 0; i < sizeof(rej) / sizeof(rej[0]); i++)
		cr_expect_str_eq(blue__ibcm_rej_reason_str(rej[i].reason), rej[i].name, "reason %u",
				 rej[i].reason);
	for (uint16_t r = 1; r <= 35; r++)
		if (r != 34)
			cr_expect_str_neq(blue__ibcm_rej_reason_str(r), "unknown reason", "%u", r);

	cr_expect_str_eq(blue__ibcm_attr_str(BLUE_IBCM_ATTR_REQ), "REQ");
	cr_expect_str_eq(blue__ibcm_attr_str(BLUE_IBCM_ATTR_SIDR_REP), "SIDR_REP");
	cr_expect_str_eq(blue__ibcm_attr_str(BLUE_IBCM_ATTR_APR), "APR");
	cr_expect_str_eq(blue__ibcm_attr_str(BLUE_IBCM_ATTR_CLASS_PORT_INFO), "ClassPortInfo");
	cr_expect_str_eq(blue__ibcm_attr_str(0x0020), "unknown");

	/* one distinct name per reason: a drop counter is labelled by it */
	for (int a = 0; a < BLUE_IBCM_ERR_MAX; a++) {
		cr_expect_str_neq(blue__ibcm_err_str(a), "unknown", "err %d has no name", a);
		for (int b = 0; b < a; b++)
			cr_expect_str_neq(blue__ibcm_err_str(a), blue__ibcm_err_str(b), "%d/%d", a, b);
	}
	cr_expect_str_eq(blue__ibcm_err_str(BLUE_IBCM_ERR_MAX), "unknown");
}
