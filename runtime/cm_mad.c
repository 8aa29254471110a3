// SPDX-License-Identifier: MIT
/*
 * The IB CM MAD codec (cm_mad.h). Each message is one table of fields, {wire byte, bit,
 * width} against a struct member, and the one encoder and the one decoder walk it, so a
 * field's position is written down exactly once. Positions are IBA vol. 1 release 1.3
 * ch. 12.6 (tables 106-120), cross-read against the kernel's ibta_vol1_c12.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "runtime/cm_mad.h"

/*
 * One wire field. Integer fields: @width bits starting at bit @bit (Byte[Bit], 0 = MSB)
 * of message byte @byte, holding (member >> @shift); @total is the member's width in bits,
 * checked on encode (it differs from @width only for a value split over several fields,
 * as the REP's vendor ID is). Byte fields (@width 0): @len bytes at @byte.
 */
struct ibcm_field {
	const char	*name;
	uint16_t	byte;
	uint8_t		bit;
	uint8_t		width;
	uint8_t		total;
	uint8_t		shift;
	uint16_t	len;
	uint16_t	off;		/* offsetof the member in its message struct */
	uint8_t		size;		/* sizeof the member (integer fields) */
};

#define MSZ(st, m) sizeof(((st *)0)->m)
/* an integer field */
#define FI(st, m, by, bi, w)						\
	{ #m, (by), (bi), (w), (w), 0, 0, offsetof(st, m), MSZ(st, m) }
/* @w bits of a @tot-bit value split over several fields, this one holding bits >> @sh */
#define FSPLIT(st, m, by, bi, w, tot, sh)				\
	{ #m, (by), (bi), (w), (tot), (sh), 0, offsetof(st, m), MSZ(st, m) }
/* a byte array */
#define FB(st, m, by)							\
	{ #m, (by), 0, 0, 0, 0, MSZ(st, m), offsetof(st, m), 0 }

/* A REQ path (IBA 12.6.5 table 106: primary at 52, alternate at 96). */
#define REQ_PATH(p, b)							\
	FI(struct blue_ibcm_req, p.local_lid, (b) + 0, 0, 16),		\
	FI(struct blue_ibcm_req, p.remote_lid, (b) + 2, 0, 16),	\
	FB(struct blue_ibcm_req, p.local_gid, (b) + 4),		\
	FB(struct blue_ibcm_req, p.remote_gid, (b) + 20),		\
	FI(struct blue_ibcm_req, p.flow_label, (b) + 36, 0, 20),	\
	FI(struct blue_ibcm_req, p.packet_rate, (b) + 39, 2, 6),	\
	FI(struct blue_ibcm_req, p.traffic_class, (b) + 40, 0, 8),	\
	FI(struct blue_ibcm_req, p.hop_limit, (b) + 41, 0, 8),		\
	FI(struct blue_ibcm_req, p.sl, (b) + 42, 0, 4),		\
	FI(struct blue_ibcm_req, p.subnet_local, (b) + 42, 4, 1),	\
	FI(struct blue_ibcm_req, p.local_ack_timeout, (b) + 43, 0, 5)

/* IBA 12.6.5 table 106 */
static const struct ibcm_field req_fields[] = {
#define S struct blue_ibcm_req
	FI(S, local_comm_id, 0, 0, 32),
	FI(S, vendor_id, 5, 0, 24),
	FI(S, service_id, 8, 0, 64),
	FI(S, local_ca_guid, 16, 0, 64),
	FI(S, local_qkey, 28, 0, 32),
	FI(S, local_qpn, 32, 0, 24),
	FI(S, responder_resources, 35, 0, 8),
	FI(S, local_eecn, 36, 0, 24),
	FI(S, initiator_depth, 39, 0, 8),
	FI(S, remote_eecn, 40, 0, 24),
	FI(S, remote_cm_response_timeout, 43, 0, 5),
	FI(S, transport_type, 43, 5, 2),
	FI(S, e2e_flow_control, 43, 7, 1),
	FI(S, starting_psn, 44, 0, 24),
	FI(S, local_cm_response_timeout, 47, 0, 5),
	FI(S, retry_count, 47, 5, 3),
	FI(S, pkey, 48, 0, 16),
	FI(S, path_mtu, 50, 0, 4),
	FI(S, rdc_exists, 50, 4, 1),
	FI(S, rnr_retry_count, 50, 5, 3),
	FI(S, max_cm_retries, 51, 0, 4),
	FI(S, srq, 51, 4, 1),
	FI(S, ext_transport_type, 51, 5, 3),
	REQ_PATH(primary, 52),
	REQ_PATH(alternate, 96),
	FI(S, sap_supported, 139, 5, 1),
	FB(S, private_data, 140),
#undef S
};

/* IBA 12.6.6 table 107 */
static const struct ibcm_field mra_fields[] = {
#define S struct blue_ibcm_mra
	FI(S, local_comm_id, 0, 0, 32),
	FI(S, remote_comm_id, 4, 0, 32),
	FI(S, msg_mraed, 8, 0, 2),
	FI(S, service_timeout, 9, 0, 5),
	FB(S, private_data, 10),
#undef S
};

/* IBA 12.6.7 table 108 */
static const struct ibcm_field rej_fields[] = {
#define S struct blue_ibcm_rej
	FI(S, local_comm_id, 0, 0, 32),
	FI(S, remote_comm_id, 4, 0, 32),
	FI(S, msg_rejected, 8, 0, 2),
	FI(S, ari_len, 9, 0, 7),
	FI(S, reason, 10, 0, 16),
	FB(S, ari, 12),
	FB(S, private_data, 84),
#undef S
};

/* IBA 12.6.8 table 110 (vendor ID: the kernel's CM_REP_VENDOR_ID_H/M/L) */
static const struct ibcm_field rep_fields[] = {
#define S struct blue_ibcm_rep
	FI(S, local_comm_id, 0, 0, 32),
	FI(S, remote_comm_id, 4, 0, 32),
	FI(S, local_qkey, 8, 0, 32),
	FI(S, local_qpn, 12, 0, 24),
	FSPLIT(S, vendor_id, 15, 0, 8, 24, 16),
	FI(S, local_eecn, 16, 0, 24),
	FSPLIT(S, vendor_id, 19, 0, 8, 24, 8),
	FI(S, starting_psn, 20, 0, 24),
	FSPLIT(S, vendor_id, 23, 0, 8, 24, 0),
	FI(S, responder_resources, 24, 0, 8),
	FI(S, initiator_depth, 25, 0, 8),
	FI(S, target_ack_delay, 26, 0, 5),
	FI(S, failover_accepted, 26, 5, 2),
	FI(S, e2e_flow_control, 26, 7, 1),
	FI(S, rnr_retry_count, 27, 0, 3),
	FI(S, srq, 27, 3, 1),
	FI(S, local_ca_guid, 28, 0, 64),
	FB(S, private_data, 36),
#undef S
};

/* IBA 12.6.9 table 111 */
static const struct ibcm_field rtu_fields[] = {
	FI(struct blue_ibcm_rtu, local_comm_id, 0, 0, 32),
	FI(struct blue_ibcm_rtu, remote_comm_id, 4, 0, 32),
	FB(struct blue_ibcm_rtu, private_data, 8),
};

/* IBA 12.6.10 table 112 */
static const struct ibcm_field dreq_fields[] = {
	FI(struct blue_ibcm_dreq, local_comm_id, 0, 0, 32),
	FI(struct blue_ibcm_dreq, remote_comm_id, 4, 0, 32),
	FI(struct blue_ibcm_dreq, remote_qpn_eecn, 8, 0, 24),
	FB(struct blue_ibcm_dreq, private_data, 12),
};

/* IBA 12.6.11 table 113 */
static const struct ibcm_field drep_fields[] = {
	FI(struct blue_ibcm_drep, local_comm_id, 0, 0, 32),
	FI(struct blue_ibcm_drep, remote_comm_id, 4, 0, 32),
	FB(struct blue_ibcm_drep, private_data, 8),
};

/* IBA 12.8.1 table 115: the alternate path, packed unlike a REQ's */
static const struct ibcm_field lap_fields[] = {
#define S struct blue_ibcm_lap
	FI(S, local_comm_id, 0, 0, 32),
	FI(S, remote_comm_id, 4, 0, 32),
	FI(S, remote_qpn_eecn, 12, 0, 24),
	FI(S, remote_cm_response_timeout, 15, 0, 5),
	FI(S, alternate.local_lid, 20, 0, 16),
	FI(S, alternate.remote_lid, 22, 0, 16),
	FB(S, alternate.local_gid, 24),
	FB(S, alternate.remote_gid, 40),
	FI(S, alternate.flow_label, 56, 0, 20),
	FI(S, alternate.traffic_class, 59, 0, 8),
	FI(S, alternate.hop_limit, 60, 0, 8),
	FI(S, alternate.packet_rate, 61, 2, 6),
	FI(S, alternate.sl, 62, 0, 4),
	FI(S, alternate.subnet_local, 62, 4, 1),
	FI(S, alternate.local_ack_timeout, 63, 0, 5),
	FB(S, private_data, 64),
#undef S
};

/* IBA 12.8.2 table 116 */
static const struct ibcm_field apr_fields[] = {
	FI(struct blue_ibcm_apr, local_comm_id, 0, 0, 32),
	FI(struct blue_ibcm_apr, remote_comm_id, 4, 0, 32),
	FI(struct blue_ibcm_apr, info_len, 8, 0, 8),
	FI(struct blue_ibcm_apr, ar_status, 9, 0, 8),
	FB(struct blue_ibcm_apr, info, 12),
	FB(struct blue_ibcm_apr, private_data, 84),
};

/* IBA 12.11.1 table 119 */
static const struct ibcm_field sidr_req_fields[] = {
	FI(struct blue_ibcm_sidr_req, request_id, 0, 0, 32),
	FI(struct blue_ibcm_sidr_req, pkey, 4, 0, 16),
	FI(struct blue_ibcm_sidr_req, service_id, 8, 0, 64),
	FB(struct blue_ibcm_sidr_req, private_data, 16),
};

/* IBA 12.11.2 table 120 (vendor ID: the kernel's CM_SIDR_REP_VENDOR_ID_H/L) */
static const struct ibcm_field sidr_rep_fields[] = {
#define S struct blue_ibcm_sidr_rep
	FI(S, request_id, 0, 0, 32),
	FI(S, status, 4, 0, 8),
	FI(S, info_len, 5, 0, 8),
	FSPLIT(S, vendor_id, 6, 0, 16, 24, 8),
	FI(S, qpn, 8, 0, 24),
	FSPLIT(S, vendor_id, 11, 0, 8, 24, 0),
	FI(S, service_id, 12, 0, 64),
	FI(S, qkey, 20, 0, 32),
	FB(S, class_port_info, 24),
	FB(S, private_data, 96),
#undef S
};

struct ibcm_layout {
	uint16_t			attr;
	const char			*name;
	const struct ibcm_field		*fields;	/* NULL: known, but not laid out */
	size_t				n;
	uint16_t			priv_off;	/* offsetof private_data in the struct */
	uint16_t			priv_len;
};

#define LAYOUT(a, nm, t, st)						\
	{ BLUE_IBCM_ATTR_##a, nm, t, sizeof(t) / sizeof((t)[0]),	\
	  offsetof(st, private_data), MSZ(st, private_data) }

static const struct ibcm_layout layouts[] = {
	{ BLUE_IBCM_ATTR_CLASS_PORT_INFO, "ClassPortInfo", NULL, 0, 0, 0 },
	LAYOUT(REQ, "REQ", req_fields, struct blue_ibcm_req),
	LAYOUT(MRA, "MRA", mra_fields, struct blue_ibcm_mra),
	LAYOUT(REJ, "REJ", rej_fields, struct blue_ibcm_rej),
	LAYOUT(REP, "REP", rep_fields, struct blue_ibcm_rep),
	LAYOUT(RTU, "RTU", rtu_fields, struct blue_ibcm_rtu),
	LAYOUT(DREQ, "DREQ", dreq_fields, struct blue_ibcm_dreq),
	LAYOUT(DREP, "DREP", drep_fields, struct blue_ibcm_drep),
	LAYOUT(SIDR_REQ, "SIDR_REQ", sidr_req_fields, struct blue_ibcm_sidr_req),
	LAYOUT(SIDR_REP, "SIDR_REP", sidr_rep_fields, struct blue_ibcm_sidr_rep),
	LAYOUT(LAP, "LAP", lap_fields, struct blue_ibcm_lap),
	LAYOUT(APR, "APR", apr_fields, struct blue_ibcm_apr),
};

static const struct ibcm_layout *layout_of(uint16_t attr)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].attr == attr)
			return &layouts[i];
	return NULL;
}

/* @width bits of @v, most significant first, from absolute bit @pos of @d (zeroed). */
static void put_bits(uint8_t *d, unsigned int pos, unsigned int width, uint64_t v)
{
	for (unsigned int i = 0; i < width; i++, pos++)
		if ((v >> (width - 1 - i)) & 1)
			d[pos / 8] |= 0x80 >> (pos % 8);
}

static uint64_t get_bits(const uint8_t *d, unsigned int pos, unsigned int width)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < width; i++, pos++)
		v = (v << 1) | ((d[pos / 8] >> (7 - pos % 8)) & 1);
	return v;
}

static uint64_t member_get(const void *s, const struct ibcm_field *f)
{
	const uint8_t *p = (const uint8_t *)s + f->off;
	uint64_t v8;
	uint32_t v4;
	uint16_t v2;

	switch (f->size) {
	case 1:
		return *p;
	case 2:
		memcpy(&v2, p, 2);
		return v2;
	case 4:
		memcpy(&v4, p, 4);
		return v4;
	default:
		memcpy(&v8, p, 8);
		return v8;
	}
}

/* OR @v into the member (a split value arrives in parts). */
static void member_or(void *s, const struct ibcm_field *f, uint64_t v)
{
	uint8_t *p = (uint8_t *)s + f->off;
	uint64_t v8 = member_get(s, f) | v;
	uint32_t v4 = (uint32_t)v8;
	uint16_t v2 = (uint16_t)v8;

	switch (f->size) {
	case 1:
		*p = (uint8_t)v8;
		break;
	case 2:
		memcpy(p, &v2, 2);
		break;
	case 4:
		memcpy(p, &v4, 4);
		break;
	default:
		memcpy(p, &v8, 8);
		break;
	}
}

/* The bounds beyond a field's width: the three 72-byte information areas. */
static bool info_len_ok(uint16_t attr, const void *s)
{
	switch (attr) {
	case BLUE_IBCM_ATTR_REJ:
		return ((const struct blue_ibcm_rej *)s)->ari_len <= BLUE_IBCM_INFO_MAX;
	case BLUE_IBCM_ATTR_APR:
		return ((const struct blue_ibcm_apr *)s)->info_len <= BLUE_IBCM_INFO_MAX;
	case BLUE_IBCM_ATTR_SIDR_REP:
		return ((const struct blue_ibcm_sidr_rep *)s)->info_len <= BLUE_IBCM_INFO_MAX;
	default:
		return true;
	}
}

void blue__ibcm_init(struct blue_ibcm_msg *m, uint16_t attr_id, uint64_t tid)
{
	memset(m, 0, sizeof(*m));
	m->hdr.base_version = BLUE_IBCM_BASE_VERSION;
	m->hdr.mgmt_class = BLUE_IBCM_MGMT_CLASS;
	m->hdr.class_version = BLUE_IBCM_CLASS_VERSION;
	m->hdr.method = BLUE_IBCM_METHOD_SEND;
	m->hdr.attr_id = attr_id;
	m->hdr.tid = tid;
}

/* IBA 13.4.3: the common MAD header; bytes 18-19 are reserved. */
static void hdr_put(uint8_t *mad, const struct blue_ibcm_mad_hdr *h)
{
	mad[0] = h->base_version;
	mad[1] = h->mgmt_class;
	mad[2] = h->class_version;
	mad[3] = h->method;
	put_bits(mad, 4 * 8, 16, h->status);
	put_bits(mad, 6 * 8, 16, h->class_specific);
	put_bits(mad, 8 * 8, 64, h->tid);
	put_bits(mad, 16 * 8, 16, h->attr_id);
	put_bits(mad, 20 * 8, 32, h->attr_mod);
}

static void hdr_get(const uint8_t *mad, struct blue_ibcm_mad_hdr *h)
{
	h->base_version = mad[0];
	h->mgmt_class = mad[1];
	h->class_version = mad[2];
	h->method = mad[3];
	h->status = (uint16_t)get_bits(mad, 4 * 8, 16);
	h->class_specific = (uint16_t)get_bits(mad, 6 * 8, 16);
	h->tid = get_bits(mad, 8 * 8, 64);
	h->attr_id = (uint16_t)get_bits(mad, 16 * 8, 16);
	h->attr_mod = (uint32_t)get_bits(mad, 20 * 8, 32);
}

int blue__ibcm_encode(const struct blue_ibcm_msg *m, uint8_t mad[BLUE_IBCM_MAD_SIZE],
		      const char **field)
{
	const struct ibcm_layout *l = layout_of(m->hdr.attr_id);
	const void *s = &m->req;	/* every union member starts here */
	uint8_t *data = mad + BLUE_IBCM_MAD_HDR_SIZE;

	if (!l || !l->fields)
		return -EINVAL;
	for (size_t i = 0; i < l->n; i++) {
		const struct ibcm_field *f = &l->fields[i];
		uint64_t v;

		if (!f->width)
			continue;
		v = member_get(s, f);
		if (f->total < 64 && v >> f->total) {
			if (field)
				*field = f->name;
			return -ERANGE;
		}
	}
	if (!info_len_ok(l->attr, s)) {
		if (field)
			*field = l->attr == BLUE_IBCM_ATTR_REJ ? "ari_len" : "info_len";
		return -ERANGE;
	}

	memset(mad, 0, BLUE_IBCM_MAD_SIZE);
	hdr_put(mad, &m->hdr);
	for (size_t i = 0; i < l->n; i++) {
		const struct ibcm_field *f = &l->fields[i];

		if (!f->width) {
			memcpy(data + f->byte, (const uint8_t *)s + f->off, f->len);
			continue;
		}
		put_bits(data, f->byte * 8u + f->bit, f->width,
			 (member_get(s, f) >> f->shift) & ((2ull << (f->width - 1)) - 1));
	}
	return 0;
}

/* cm_msgs.h cm_req_get_qp_type: RC, UC, or XRC under "extended"; anything else is 0. */
static enum blue_ibcm_err check_req(const struct blue_ibcm_req *r)
{
	if (r->transport_type == BLUE_IBCM_TRANSPORT_RC ||
	    r->transport_type == BLUE_IBCM_TRANSPORT_UC)
		return BLUE_IBCM_OK;
	if (r->transport_type == BLUE_IBCM_TRANSPORT_EXTENDED &&
	    r->ext_transport_type == BLUE_IBCM_EXT_TRANSPORT_XRC)
		return BLUE_IBCM_OK;
	return BLUE_IBCM_ERR_TRANSPORT;
}

/* The checks after the fields are read: the kernel's, and the spec's reserved values. */
static enum blue_ibcm_err check_msg(const struct blue_ibcm_msg *m)
{
	switch (m->hdr.attr_id) {
	case BLUE_IBCM_ATTR_REQ:
		return check_req(&m->req);
	case BLUE_IBCM_ATTR_MRA:
		/* cm_mra_handler drops a message MRAed that is not REQ, REP or other */
		return m->mra.msg_mraed > BLUE_IBCM_MSG_OTHER ? BLUE_IBCM_ERR_MSG_RESPONSE
							       : BLUE_IBCM_OK;
	case BLUE_IBCM_ATTR_REJ:
		if (m->rej.msg_rejected > BLUE_IBCM_MSG_OTHER)
			return BLUE_IBCM_ERR_MSG_RESPONSE;
		break;
	default:
		break;
	}
	return info_len_ok(m->hdr.attr_id, &m->req) ? BLUE_IBCM_OK : BLUE_IBCM_ERR_INFO_LEN;
}

enum blue_ibcm_err blue__ibcm_decode(const uint8_t *buf, size_t len, struct blue_ibcm_msg *m)
{
	const uint8_t *data = buf + BLUE_IBCM_MAD_HDR_SIZE;
	const struct ibcm_layout *l;
	void *s = &m->req;

	memset(m, 0, sizeof(*m));
	if (len < BLUE_IBCM_MAD_SIZE)
		return BLUE_IBCM_ERR_SHORT;
	hdr_get(buf, &m->hdr);
	if (m->hdr.base_version != BLUE_IBCM_BASE_VERSION)
		return BLUE_IBCM_ERR_BASE_VERSION;
	if (m->hdr.mgmt_class != BLUE_IBCM_MGMT_CLASS)
		return BLUE_IBCM_ERR_MGMT_CLASS;
	if (m->hdr.class_version != BLUE_IBCM_CLASS_VERSION)
		return BLUE_IBCM_ERR_CLASS_VERSION;
	if (m->hdr.method != BLUE_IBCM_METHOD_SEND)
		return BLUE_IBCM_ERR_METHOD;
	l = layout_of(m->hdr.attr_id);
	if (!l)
		return BLUE_IBCM_ERR_UNKNOWN_ATTR;
	if (!l->fields)
		return BLUE_IBCM_ERR_UNSUPPORTED_ATTR;

	for (size_t i = 0; i < l->n; i++) {
		const struct ibcm_field *f = &l->fields[i];

		if (!f->width) {
			memcpy((uint8_t *)s + f->off, data + f->byte, f->len);
			continue;
		}
		member_or(s, f, get_bits(data, f->byte * 8u + f->bit, f->width) << f->shift);
	}
	return check_msg(m);
}

uint8_t *blue__ibcm_private_data(struct blue_ibcm_msg *m, size_t *cap)
{
	const struct ibcm_layout *l = layout_of(m->hdr.attr_id);

	if (!l || !l->fields) {
		*cap = 0;
		return NULL;
	}
	*cap = l->priv_len;
	return (uint8_t *)&m->req + l->priv_off;
}

int blue__ibcm_set_private_data(struct blue_ibcm_msg *m, const void *data, size_t len)
{
	size_t cap;
	uint8_t *p = blue__ibcm_private_data(m, &cap);

	if (len > cap)
		return -EMSGSIZE;
	if (len)
		memcpy(p, data, len);
	if (p)
		memset(p + len, 0, cap - len);
	return 0;
}

const char *blue__ibcm_attr_str(uint16_t attr_id)
{
	const struct ibcm_layout *l = layout_of(attr_id);

	return l ? l->name : "unknown";
}

static const char *const rej_reason_names[] = {
	[BLUE_IBCM_REJ_NO_QP]			= "no QP",
	[BLUE_IBCM_REJ_NO_EEC]			= "no EEC",
	[BLUE_IBCM_REJ_NO_RESOURCES]		= "no resources",
	[BLUE_IBCM_REJ_TIMEOUT]			= "timeout",
	[BLUE_IBCM_REJ_UNSUPPORTED]		= "unsupported request",
	[BLUE_IBCM_REJ_INVALID_COMM_ID]		= "invalid comm ID",
	[BLUE_IBCM_REJ_INVALID_COMM_INSTANCE]	= "invalid comm instance",
	[BLUE_IBCM_REJ_INVALID_SERVICE_ID]	= "invalid service ID",
	[BLUE_IBCM_REJ_INVALID_TRANSPORT_TYPE]	= "invalid transport type",
	[BLUE_IBCM_REJ_STALE_CONN]		= "stale connection",
	[BLUE_IBCM_REJ_RDC_NOT_EXIST]		= "RDC does not exist",
	[BLUE_IBCM_REJ_INVALID_GID]		= "primary remote port GID rejected",
	[BLUE_IBCM_REJ_INVALID_LID]		= "primary remote port LID rejected",
	[BLUE_IBCM_REJ_INVALID_SL]		= "primary SL rejected",
	[BLUE_IBCM_REJ_INVALID_TRAFFIC_CLASS]	= "primary traffic class rejected",
	[BLUE_IBCM_REJ_INVALID_HOP_LIMIT]	= "primary hop limit rejected",
	[BLUE_IBCM_REJ_INVALID_PACKET_RATE]	= "primary packet rate rejected",
	[BLUE_IBCM_REJ_INVALID_ALT_GID]		= "alternate remote port GID rejected",
	[BLUE_IBCM_REJ_INVALID_ALT_LID]		= "alternate remote port LID rejected",
	[BLUE_IBCM_REJ_INVALID_ALT_SL]		= "alternate SL rejected",
	[BLUE_IBCM_REJ_INVALID_ALT_TRAFFIC_CLASS] = "alternate traffic class rejected",
	[BLUE_IBCM_REJ_INVALID_ALT_HOP_LIMIT]	= "alternate hop limit rejected",
	[BLUE_IBCM_REJ_INVALID_ALT_PACKET_RATE]	= "alternate packet rate rejected",
	[BLUE_IBCM_REJ_PORT_CM_REDIRECT]	= "port CM redirection",
	[BLUE_IBCM_REJ_PORT_REDIRECT]		= "port redirection",
	[BLUE_IBCM_REJ_INVALID_MTU]		= "invalid path MTU",
	[BLUE_IBCM_REJ_INSUFFICIENT_RESP_RESOURCES] = "insufficient responder resources",
	[BLUE_IBCM_REJ_CONSUMER_DEFINED]	= "consumer reject",
	[BLUE_IBCM_REJ_INVALID_RNR_RETRY]	= "RNR retry count rejected",
	[BLUE_IBCM_REJ_DUPLICATE_LOCAL_COMM_ID]	= "duplicate local comm ID",
	[BLUE_IBCM_REJ_INVALID_CLASS_VERSION]	= "unsupported class version",
	[BLUE_IBCM_REJ_INVALID_FLOW_LABEL]	= "invalid primary flow label",
	[BLUE_IBCM_REJ_INVALID_ALT_FLOW_LABEL]	= "invalid alternate flow label",
	[BLUE_IBCM_REJ_VENDOR_OPTION_NOT_SUPPORTED] = "vendor option not supported",
};

const char *blue__ibcm_rej_reason_str(uint16_t reason)
{
	if (reason < sizeof(rej_reason_names) / sizeof(rej_reason_names[0]) &&
	    rej_reason_names[reason])
		return rej_reason_names[reason];
	return "unknown reason";
}

static const char *const err_names[BLUE_IBCM_ERR_MAX] = {
	[BLUE_IBCM_OK]			= "ok",
	[BLUE_IBCM_ERR_SHORT]		= "short",
	[BLUE_IBCM_ERR_BASE_VERSION]	= "base_version",
	[BLUE_IBCM_ERR_MGMT_CLASS]	= "mgmt_class",
	[BLUE_IBCM_ERR_CLASS_VERSION]	= "class_version",
	[BLUE_IBCM_ERR_METHOD]		= "method",
	[BLUE_IBCM_ERR_UNKNOWN_ATTR]	= "unknown_attr",
	[BLUE_IBCM_ERR_UNSUPPORTED_ATTR] = "unsupported_attr",
	[BLUE_IBCM_ERR_TRANSPORT]	= "transport",
	[BLUE_IBCM_ERR_MSG_RESPONSE]	= "msg_response",
	[BLUE_IBCM_ERR_INFO_LEN]	= "info_len",
	[BLUE_IBCM_ERR_IP_SHORT]	= "ip_short",
	[BLUE_IBCM_ERR_IP_CM_VERSION]	= "ip_cm_version",
	[BLUE_IBCM_ERR_IP_VERSION]	= "ip_version",
};

const char *blue__ibcm_err_str(enum blue_ibcm_err err)
{
	if ((unsigned int)err < BLUE_IBCM_ERR_MAX && err_names[err])
		return err_names[err];
	return "unknown";
}

int blue__ibcm_ip_hdr_encode(const struct blue_ibcm_ip_hdr *h, uint8_t *priv, size_t cap)
{
	if (cap < BLUE_IBCM_IP_HDR_LEN)
		return -EMSGSIZE;
	if (h->ip_version != 4 && h->ip_version != 6)
		return -EAFNOSUPPORT;
	memset(priv, 0, BLUE_IBCM_IP_HDR_LEN);
	priv[0] = BLUE_IBCM_IP_CM_VERSION;
	priv[1] = (uint8_t)(h->ip_version << 4);
	priv[2] = (uint8_t)(h->src_port >> 8);
	priv[3] = (uint8_t)h->src_port;
	if (h->ip_version == 4) {
		/* the last 4 bytes of each 16, the 12 before them zero (cma_format_hdr) */
		memcpy(priv + 4 + 12, &h->src.v4, 4);
		memcpy(priv + 20 + 12, &h->dst.v4, 4);
	} else {
		memcpy(priv + 4, &h->src.v6, 16);
		memcpy(priv + 20, &h->dst.v6, 16);
	}
	return BLUE_IBCM_IP_HDR_LEN;
}

enum blue_ibcm_err blue__ibcm_ip_hdr_decode(const uint8_t *priv, size_t len,
					    struct blue_ibcm_ip_hdr *h)
{
	memset(h, 0, sizeof(*h));
	if (len < BLUE_IBCM_IP_HDR_LEN)
		return BLUE_IBCM_ERR_IP_SHORT;
	if (priv[0] != BLUE_IBCM_IP_CM_VERSION)
		return BLUE_IBCM_ERR_IP_CM_VERSION;
	h->ip_version = priv[1] >> 4;
	h->src_port = (uint16_t)(priv[2] << 8 | priv[3]);
	switch (h->ip_version) {
	case 4:
		/* cma_save_ip4_info reads only the last 4 bytes: the 12 before are not checked */
		memcpy(&h->src.v4, priv + 4 + 12, 4);
		memcpy(&h->dst.v4, priv + 20 + 12, 4);
		return BLUE_IBCM_OK;
	case 6:
		memcpy(&h->src.v6, priv + 4, 16);
		memcpy(&h->dst.v6, priv + 20, 16);
		return BLUE_IBCM_OK;
	default:
		return BLUE_IBCM_ERR_IP_VERSION;
	}
}

int blue__ibcm_ip_service_parse(uint64_t sid, uint16_t *ps, uint16_t *port)
{
	uint16_t space = (uint16_t)(sid >> 16);

	if (sid >> 24 != 0x01)
		return -EINVAL;
	if (space != BLUE_IBCM_PS_TCP && space != BLUE_IBCM_PS_UDP && space != BLUE_IBCM_PS_IB)
		return -EINVAL;
	*ps = space;
	*port = (uint16_t)sid;
	return 0;
}
