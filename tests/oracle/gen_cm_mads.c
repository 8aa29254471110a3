// SPDX-License-Identifier: MIT
/*
 * Oracle input for the IB CM MAD codec (driven by tests/oracle/test_cm_mad_oracle.sh).
 *
 *   gen_cm_mads OUT.pcap OUT.expect
 *
 * Writes one RoCEv2 frame per CM message that Wireshark's dissector decodes (REQ with
 * the IP CM header, REP, RTU, REJ, DREQ, DREP): a UD SEND_ONLY from QP1 to QP1 with DETH
 * Q_Key 0x80010000, the 256-byte MAD from blue__ibcm_encode() as payload, and the ICRC,
 * all built by runtime/codec.c. OUT.expect has one line per checked field,
 * "<frame number> <tshark field> <value>", the value as the encoder was given it.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "runtime/cm_mad.h"
#include "runtime/codec.h"

static FILE *pcap, *expect;
static unsigned int frame_no;

static void pcap_write(const uint8_t *frame, uint32_t len)
{
	const uint32_t r[4] = { 1700000000u + frame_no, 0, len, len };

	fwrite(r, sizeof(r), 1, pcap);
	fwrite(frame, len, 1, pcap);
}

static int emit(const struct blue_ibcm_msg *m)
{
	uint8_t mad[BLUE_IBCM_MAD_SIZE], frame[512];
	const char *bad = NULL;
	struct blue_pkt p;
	int len;

	if (blue__ibcm_encode(m, mad, &bad)) {
		fprintf(stderr, "gen_cm_mads: encode %s failed (%s)\n",
			blue__ibcm_attr_str(m->hdr.attr_id), bad ? bad : "-");
		return -1;
	}
	blue_pkt_init(&p, BLUE_OP_UD_SEND_ONLY);
	memcpy(p.dst_mac, "\x02\x00\x00\x00\x00\x02", 6);
	memcpy(p.src_mac, "\x02\x00\x00\x00\x00\x01", 6);
	p.saddr = htonl(0x0a000001);
	p.daddr = htonl(0x0a000002);
	p.sport = 0xc001;
	p.dqpn = BLUE_IBCM_GSI_QPN;
	p.psn = frame_no;
	p.deth.qkey = BLUE_IBCM_GSI_QKEY;
	p.deth.sqpn = BLUE_IBCM_GSI_QPN;
	p.payload = mad;
	p.payload_len = sizeof(mad);
	len = blue_pkt_build(&p, frame, sizeof(frame));
	if (len < 0) {
		fprintf(stderr, "gen_cm_mads: blue_pkt_build: %d\n", len);
		return -1;
	}
	frame_no++;
	pcap_write(frame, (uint32_t)len);
	fprintf(expect, "%u infiniband.mad.mgmtclass %u\n", frame_no, m->hdr.mgmt_class);
	fprintf(expect, "%u infiniband.mad.classversion %u\n", frame_no, m->hdr.class_version);
	fprintf(expect, "%u infiniband.mad.method %u\n", frame_no, m->hdr.method);
	fprintf(expect, "%u infiniband.mad.transactionid %llu\n", frame_no,
		(unsigned long long)m->hdr.tid);
	fprintf(expect, "%u infiniband.mad.attributeid %u\n", frame_no, m->hdr.attr_id);
	return 0;
}

#define X(name, v) fprintf(expect, "%u infiniband.cm." name " %llu\n", frame_no,	\
			   (unsigned long long)(v))
#define XS(name, s) fprintf(expect, "%u infiniband.cm." name " %s\n", frame_no, (s))

static void gid_v4(uint8_t gid[16], const char *a)
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	inet_pton(AF_INET, a, gid + 12);
}

static int req(void)
{
	struct blue_ibcm_msg m;
	struct blue_ibcm_req *r = &m.req;
	struct blue_ibcm_ip_hdr ip = { .ip_version = 4, .src_port = 0xc123 };

	blue__ibcm_init(&m, BLUE_IBCM_ATTR_REQ, 0x0000abcd12345678ull);
	r->local_comm_id = 0x12345678;
	r->service_id = blue__ibcm_ip_service_id(BLUE_IBCM_PS_TCP, 7471);
	r->local_ca_guid = 0x0002c9fffe123456ull;
	r->local_qkey = 0x01234567;
	r->local_qpn = 0xabcdef;
	r->responder_resources = 0x9e;
	r->local_eecn = 0x345678;
	r->initiator_depth = 0x7d;
	r->remote_eecn = 0x876543;
	r->remote_cm_response_timeout = 0x17;
	r->transport_type = BLUE_IBCM_TRANSPORT_UC;
	r->e2e_flow_control = 1;
	r->starting_psn = 0xfedcba;
	r->local_cm_response_timeout = 0x19;
	r->retry_count = 6;
	r->pkey = 0xfffe;
	r->path_mtu = 3;
	r->rnr_retry_count = 5;
	r->max_cm_retries = 0xe;
	r->srq = 1;
	r->primary.local_lid = 0xfffe;
	r->primary.remote_lid = 0x1234;
	gid_v4(r->primary.local_gid, "10.0.0.1");
	gid_v4(r->primary.remote_gid, "10.0.0.2");
	r->primary.flow_label = 0xabcde;
	r->primary.packet_rate = 0x2b;
	r->primary.traffic_class = 0xb8;
	r->primary.hop_limit = 64;
	r->primary.sl = 0xd;
	r->primary.subnet_local = 1;
	r->primary.local_ack_timeout = 0x13;
	inet_pton(AF_INET, "10.0.0.1", &ip.src.v4);
	inet_pton(AF_INET, "10.0.0.2", &ip.dst.v4);
	if (blue__ibcm_ip_hdr_encode(&ip, r->private_data, sizeof(r->private_data)) < 0)
		return -1;
	if (emit(&m))
		return -1;
	X("req", r->local_comm_id);
	X("req.serviceid", r->service_id);
	X("req.localcaguid", r->local_ca_guid);
	X("req.localqkey", r->local_qkey);
	X("req.localqpn", r->local_qpn);
	X("req.responderres", r->responder_resources);
	X("req.localeecn", r->local_eecn);
	X("req.initdepth", r->initiator_depth);
	X("req.remoteeecn", r->remote_eecn);
	X("req.remoteresptout", r->remote_cm_response_timeout);
	X("req.transpsvctype", r->transport_type);
	X("req.e2eflowctrl", r->e2e_flow_control);
	X("req.startpsn", r->starting_psn);
	X("req.localresptout", r->local_cm_response_timeout);
	X("req.retrcount", r->retry_count);
	X("req.pkey", r->pkey);
	X("req.pppmtu", r->path_mtu);
	X("req.rnrretrcount", r->rnr_retry_count);
	X("req.maxcmretr", r->max_cm_retries);
	X("req.srq", r->srq);
	X("req.prim_locallid", r->primary.local_lid);
	X("req.prim_remotelid", r->primary.remote_lid);
	/* an IPv4-mapped GID is shown as IPv4 */
	XS("req.prim_localgid_ipv4", "10.0.0.1");
	XS("req.prim_remotegid_ipv4", "10.0.0.2");
	/*
	 * Not req.prim_flowlabel: Wireshark 4.0 shows 0x00abc for the 0xabcde that sits in
	 * 88[0..19] as IBA table 106 (and the kernel's CM_REQ_PRIMARY_FLOW_LABEL) place it;
	 * the unit test's goldens check that field.
	 */
	X("req.prim_pktrate", r->primary.packet_rate);
	X("req.prim_tfcclass", r->primary.traffic_class);
	X("req.prim_hoplim", r->primary.hop_limit);
	X("req.prim_sl", r->primary.sl);
	X("req.prim_subnetlocal", r->primary.subnet_local);
	X("req.prim_localacktout", r->primary.local_ack_timeout);
	X("req.ip_cm.ipv", 4);
	X("req.ip_cm.sport", ip.src_port);
	XS("req.ip_cm.sip4", "10.0.0.1");
	XS("req.ip_cm.dip4", "10.0.0.2");
	return 0;
}

static int rep(void)
{
	struct blue_ibcm_msg m;
	struct blue_ibcm_rep *r = &m.rep;

	blue__ibcm_init(&m, BLUE_IBCM_ATTR_REP, 0x0000abcd12345678ull);
	r->local_comm_id = 0x9abcdef0;
	r->remote_comm_id = 0x12345678;
	r->local_qkey = 0x89abcdef;
	r->local_qpn = 0xbcdef1;
	r->local_eecn = 0x456789;
	r->starting_psn = 0xcdef12;
	r->responder_resources = 0xa5;
	r->initiator_depth = 0x5a;
	r->target_ack_delay = 0x1b;
	r->failover_accepted = 2;
	r->e2e_flow_control = 1;
	r->rnr_retry_count = 6;
	r->srq = 1;
	r->local_ca_guid = 0x0002c9fffe654321ull;
	if (emit(&m))
		return -1;
	X("rep", r->local_comm_id);
	X("rep.remotecommid", r->remote_comm_id);
	X("rep.localqkey", r->local_qkey);
	X("rep.localqpn", r->local_qpn);
	X("rep.localeecn", r->local_eecn);
	X("rep.startpsn", r->starting_psn);
	X("rep.respres", r->responder_resources);
	X("rep.initdepth", r->initiator_depth);
	X("rep.tgtackdelay", r->target_ack_delay);
	X("rep.failoveracc", r->failover_accepted);
	X("rep.e2eflowctrl", r->e2e_flow_control);
	X("rep.rnrretrcount", r->rnr_retry_count);
	X("rep.srq", r->srq);
	X("rep.localcaguid", r->local_ca_guid);
	return 0;
}

static int others(void)
{
	struct blue_ibcm_msg m;

	blue__ibcm_init(&m, BLUE_IBCM_ATTR_RTU, 0x0000abcd12345678ull);
	m.rtu.local_comm_id = 0x11223344;
	m.rtu.remote_comm_id = 0x55667788;
	if (emit(&m))
		return -1;
	X("rtu.localcommid", m.rtu.local_comm_id);
	X("rtu.remotecommid", m.rtu.remote_comm_id);

	blue__ibcm_init(&m, BLUE_IBCM_ATTR_REJ, 0x0000abcd12345679ull);
	m.rej.local_comm_id = 0x99aabbcc;
	m.rej.remote_comm_id = 0xddeeff00;
	m.rej.msg_rejected = BLUE_IBCM_MSG_REP;
	m.rej.ari_len = 0x45;
	m.rej.reason = BLUE_IBCM_REJ_CONSUMER_DEFINED;
	if (emit(&m))
		return -1;
	X("rej.localcommid", m.rej.local_comm_id);
	X("rej.remotecommid", m.rej.remote_comm_id);
	X("rej.msgrej", m.rej.msg_rejected);
	X("rej.rejinfolen", m.rej.ari_len);
	X("rej.reason", m.rej.reason);

	blue__ibcm_init(&m, BLUE_IBCM_ATTR_DREQ, 0x0000abcd1234567aull);
	m.dreq.local_comm_id = 0x0badf00d;
	m.dreq.remote_comm_id = 0xfeedface;
	m.dreq.remote_qpn_eecn = 0xabcdef;
	if (emit(&m))
		return -1;
	X("dreq.localcommid", m.dreq.local_comm_id);
	X("dreq.remotecommid", m.dreq.remote_comm_id);
	X("req.remoteqpneecn", m.dreq.remote_qpn_eecn);	/* Wireshark 4.0 files it so */

	blue__ibcm_init(&m, BLUE_IBCM_ATTR_DREP, 0x0000abcd1234567aull);
	m.drep.local_comm_id = 0xfeedface;
	m.drep.remote_comm_id = 0x0badf00d;
	if (emit(&m))
		return -1;
	X("drsp.localcommid", m.drep.local_comm_id);
	X("drsp.remotecommid", m.drep.remote_comm_id);
	return 0;
}

int main(int argc, char **argv)
{
	/* classic pcap, microseconds, snaplen 65535, LINKTYPE_ETHERNET */
	const uint32_t h[6] = { 0xa1b2c3d4, 0x00040002, 0, 0, 65535, 1 };
	int rc;

	if (argc != 3) {
		fprintf(stderr, "usage: %s OUT.pcap OUT.expect\n", argv[0]);
		return 2;
	}
	pcap = fopen(argv[1], "wb");
	expect = fopen(argv[2], "w");
	if (!pcap || !expect) {
		perror("gen_cm_mads: open");
		return 1;
	}
	fwrite(h, sizeof(h), 1, pcap);
	rc = req() || rep() || others();
	if (fclose(pcap) || fclose(expect))
		rc = 1;
	return rc ? 1 : 0;
}
