// SPDX-License-Identifier: MIT
/*
 * The QP context (include/blue/qp_ctx.h) field by field: how `qp show` prints each,
 * how --json carries it, and which Prometheus sample it becomes. One table, so the
 * three never disagree; tests/netns/test_observe.sh checks that every member the map's
 * BTF names (but padding and reserved room) is here.
 */
#include <arpa/inet.h>
#include <stddef.h>
#include <string.h>

#include "tools/bluectl/bluectl.h"

#define FS(m, kind, metric, mname, scale, help) \
	{ #m, kind, offsetof(struct blue_qp_ctx, m), sizeof(((struct blue_qp_ctx *)0)->m), \
	  metric, mname, scale, help }
#define F(m, kind, metric, mname, help)	FS(m, kind, metric, mname, 1.0, help)

const struct qp_field qp_fields[] = {
	F(qpn, QF_HEX, QM_NONE, NULL, NULL),
	F(xsk_slot, QF_U, QM_GAUGE, "xsk_slot",
	  "XSKMAP index of the AF_XDP socket the QP is steered to"),
	F(state, QF_STATE, QM_GAUGE, "state",
	  "QP state (0 RESET, 1 INIT, 2 RTR, 3 RTS, 4 SQD, 5 SQE, 6 ERR)"),
	F(type, QF_TYPE, QM_NONE, NULL, NULL),
	F(path_mtu, QF_MTU, QM_NONE, NULL, NULL),
	F(last_nak_syndrome, QF_HEX8, QM_GAUGE, "last_nak_syndrome",
	  "AETH syndrome of the last NAK sent"),
	F(peer_qpn, QF_HEX, QM_NONE, NULL, NULL),
	F(peer_ip, QF_IP, QM_NONE, NULL, NULL),
	F(local_ip, QF_IP, QM_NONE, NULL, NULL),
	F(peer_ip6, QF_IP6, QM_NONE, NULL, NULL),
	F(sq_psn, QF_HEX, QM_GAUGE, "sq_psn", "next PSN to send"),
	F(una_psn, QF_HEX, QM_GAUGE, "una_psn", "oldest unacknowledged PSN"),
	F(outstanding, QF_U, QM_GAUGE, "outstanding_wrs", "send WRs posted and not completed"),
	F(retry_left, QF_U, QM_GAUGE, "retry_left", "transport retries left"),
	F(rq_psn, QF_HEX, QM_GAUGE, "rq_psn", "expected receive PSN"),
	F(msn, QF_HEX, QM_GAUGE, "msn", "message sequence number"),
	F(last_nak_psn, QF_HEX, QM_GAUGE, "last_nak_psn", "PSN of the last NAK sent"),
	F(rnr_left, QF_U, QM_GAUGE, "rnr_retry_left", "RNR retries left"),
	F(timer_inflight, QF_U, QM_GAUGE, "timer_inflight_packets",
	  "PSNs in flight when the ACK timer was last armed"),
	/* metrics in base units (Prometheus naming): Mbit/s -> bytes/s, ns -> s */
	FS(rate_mbps, QF_MBPS, QM_GAUGE, "rate_bytes_per_second", 125000.0,
	   "paced send rate; 0 when unpaced"),
	FS(timer_deadline_ns, QF_U, QM_GAUGE, "timer_deadline_seconds", 1e-9,
	   "CLOCK_MONOTONIC deadline of the retransmit or RNR timer; 0 when disarmed"),
	F(retransmits, QF_U, QM_COUNTER, "retransmits_total",
	  "go-back-N and selective retransmissions started"),
	F(naks_sent, QF_U, QM_COUNTER, "naks_sent_total", "NAKs sent"),
	F(naks_rcvd, QF_U, QM_COUNTER, "naks_received_total", "NAKs received"),
	F(rnr_events, QF_U, QM_COUNTER, "rnr_events_total", "RNR NAKs received"),
	F(cnp_rcvd, QF_U, QM_COUNTER, "cnps_received_total",
	  "RoCEv2 congestion notification packets received"),
	F(tx_pkts, QF_U, QM_COUNTER, "tx_packets_total", "packets sent"),
	F(tx_bytes, QF_U, QM_COUNTER, "tx_bytes_total", "payload bytes sent"),
	F(rx_pkts, QF_U, QM_COUNTER, "rx_packets_total", "packets received"),
	F(rx_bytes, QF_U, QM_COUNTER, "rx_bytes_total", "payload bytes received"),
	F(xdp_rx_pkts, QF_U, QM_COUNTER, "xdp_rx_packets_total",
	  "packets the XDP program steered to the QP"),
	F(retx_pkts, QF_U, QM_COUNTER, "retx_packets_total", "request packets sent again"),
	F(sr_held, QF_U, QM_GAUGE, "sr_held_packets",
	  "requests held past a hole (selective retransmission)"),
	F(retx_policy, QF_U, QM_GAUGE, "retx_policy",
	  "retransmission policy (0 go-back-N, 1 selective)"),
	F(retx_timer, QF_U, QM_GAUGE, "retx_timer",
	  "retransmit timer (0 IBA exponential, 1 base + k * in flight)"),
	F(pkey, QF_HEX16, QM_NONE, NULL, NULL),
	F(owner_pid, QF_U, QM_NONE, NULL, NULL),
	F(qkey, QF_HEX, QM_NONE, NULL, NULL),
	F(cc_algo, QF_CC_ALGO, QM_GAUGE, "cc_algo",
	  "congestion control (0 none, 1 DCQCN, 2 window)"),
	F(ecn, QF_ONOFF, QM_GAUGE, "ecn", "1 when the QP sends ECT and answers CE with CNPs"),
	F(cwnd, QF_PKTS, QM_GAUGE, "cwnd_packets", "congestion window in packets; 0: none"),
	FS(alpha, QF_FRAC1024, QM_GAUGE, "dcqcn_alpha", 1.0 / 1024, "DCQCN alpha"),
	FS(target_rate_mbps, QF_MBPS, QM_GAUGE, "target_rate_bytes_per_second", 125000.0,
	   "DCQCN target rate"),
	FS(srtt_ns, QF_NS_US, QM_GAUGE, "srtt_seconds", 1e-9, "smoothed RTT (send to ACK)"),
	FS(rtt_ns, QF_NS_US, QM_GAUGE, "rtt_seconds", 1e-9, "last RTT sample"),
	F(cnp_sent, QF_U, QM_COUNTER, "cnps_sent_total", "CNPs sent, answering ECN CE"),
	F(ecn_ce_rcvd, QF_U, QM_COUNTER, "ecn_ce_received_total",
	  "packets received with ECN CE"),
	F(cc_cuts, QF_U, QM_COUNTER, "cc_cuts_total", "rate or window decreases"),
	F(ud_bad_qkey, QF_U, QM_COUNTER, "ud_bad_qkey_total",
	  "UD requests dropped for a Q_Key not the QP's"),
	F(ud_no_wqe, QF_U, QM_COUNTER, "ud_no_wqe_total",
	  "UD requests dropped with no receive WQE posted"),
	F(uc_drop_seq, QF_U, QM_COUNTER, "uc_drop_seq_total",
	  "UC requests dropped for a PSN gap or an opcode out of sequence"),
	F(uc_no_wqe, QF_U, QM_COUNTER, "uc_no_wqe_total",
	  "UC requests dropped with no receive WQE posted (or no CQ room)"),
	F(uc_drop_access, QF_U, QM_COUNTER, "uc_drop_access_total",
	  "UC WRITEs dropped for the QP's rights or an R_Key"),
	F(uc_drop_len, QF_U, QM_COUNTER, "uc_drop_len_total",
	  "UC requests dropped for a length that does not fit"),
};

const unsigned int qp_nfields = sizeof(qp_fields) / sizeof(qp_fields[0]);

const char *cc_algo_name(unsigned int a)
{
	static const char *const names[BLUE_CC__MAX] = { "none", "dcqcn", "window" };

	return a < BLUE_CC__MAX ? names[a] : "?";
}

uint64_t qf_value(const struct qp_field *f, const struct blue_qp_ctx *q)
{
	const unsigned char *p = (const unsigned char *)q + f->off;
	uint8_t v8;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (f->size) {
	case 1:
		memcpy(&v8, p, 1);
		return v8;
	case 2:
		memcpy(&v16, p, 2);
		return v16;
	case 4:
		memcpy(&v32, p, 4);
		return v32;
	default:
		memcpy(&v64, p, 8);
		return v64;
	}
}

/* The QPNs are QF_HEX too, but identities (QM_NONE): every sampled QF_HEX field is a
 * PSN or the MSN. */
bool qf_is_seq(const struct qp_field *f)
{
	return f->kind == QF_HEX && f->metric != QM_NONE;
}

void qf_format(const struct qp_field *f, const struct blue_qp_ctx *q, char *buf, size_t len)
{
	uint64_t v = qf_value(f, q);
	char ip[16];

	switch (f->kind) {
	case QF_HEX:
		snprintf(buf, len, "0x%06llx", (unsigned long long)v);
		break;
	case QF_HEX8:
		snprintf(buf, len, "0x%02llx", (unsigned long long)v);
		break;
	case QF_HEX16:
		snprintf(buf, len, "0x%04llx", (unsigned long long)v);
		break;
	case QF_IP:
		snprintf(buf, len, "%s", ip_str((uint32_t)v, ip));
		break;
	case QF_IP6: {
		static const uint8_t zero[16];
		char s6[INET6_ADDRSTRLEN];
		const uint8_t *a6 = (const uint8_t *)q + f->off;

		if (memcmp(a6, zero, sizeof(zero)))
			snprintf(buf, len, "%s", inet_ntop(AF_INET6, a6, s6, sizeof(s6)));
		else
			snprintf(buf, len, "- (IPv4 peer)");
		break;
	}
	case QF_STATE:
		snprintf(buf, len, "%s (%llu)", qp_state_name((unsigned int)v),
			 (unsigned long long)v);
		break;
	case QF_TYPE:
		snprintf(buf, len, "%s (%llu)", qp_type_name((unsigned int)v),
			 (unsigned long long)v);
		break;
	case QF_CC_ALGO:
		snprintf(buf, len, "%s (%llu)", cc_algo_name((unsigned int)v),
			 (unsigned long long)v);
		break;
	case QF_ONOFF:
		snprintf(buf, len, "%s (%llu)", v ? "on" : "off", (unsigned long long)v);
		break;
	case QF_MBPS:
		if (v)
			snprintf(buf, len, "%llu Mbit/s", (unsigned long long)v);
		else
			snprintf(buf, len, "0 (unpaced)");
		break;
	case QF_FRAC1024:
		snprintf(buf, len, "%.3f (%llu/1024)", (double)v / 1024, (unsigned long long)v);
		break;
	case QF_NS_US:
		snprintf(buf, len, "%.1f us", (double)v / 1000);
		break;
	case QF_PKTS:
		if (v)
			snprintf(buf, len, "%llu packets", (unsigned long long)v);
		else
			snprintf(buf, len, "0 (no window)");
		break;
	case QF_MTU:
		if (v >= 1 && v <= 5)
			snprintf(buf, len, "%u (%llu)", 128u << v, (unsigned long long)v);
		else
			snprintf(buf, len, "? (%llu)", (unsigned long long)v);
		break;
	default:
		snprintf(buf, len, "%llu", (unsigned long long)v);
		break;
	}
}

void qf_json(struct jw *w, const struct blue_qp_ctx *q)
{
	char buf[INET6_ADDRSTRLEN];
	unsigned int i;

	for (i = 0; i < qp_nfields; i++) {
		if (qp_fields[i].kind == QF_IP6) {
			/* the bytes, as bpftool prints a __u8[16]; as text in peer_addr */
			const uint8_t *a6 = (const uint8_t *)q + qp_fields[i].off;

			jw_arr(w, qp_fields[i].name);
			for (unsigned int k = 0; k < qp_fields[i].size; k++)
				jw_u64(w, NULL, a6[k]);
			jw_arr_end(w);
			continue;
		}
		jw_u64(w, qp_fields[i].name, qf_value(&qp_fields[i], q));
	}
	jw_str(w, "state_name", qp_state_name(q->state));
	jw_str(w, "type_name", qp_type_name(q->type));
	jw_str(w, "cc_algo_name", cc_algo_name(q->cc_algo));
	jw_str(w, "peer_addr", peer_addr_str(q, buf));
	jw_str(w, "local_addr", ip_str(q->local_ip, buf));
	jw_u64(w, "path_mtu_bytes", q->path_mtu >= 1 && q->path_mtu <= 5 ? 128u << q->path_mtu : 0);
}
