// SPDX-License-Identifier: MIT
/*
 * bluectl qp list / qp show: the live QP-context table. `qp list` is shaped like `ss`:
 * one row per QP, the QPs of one peer together, then one line per peer adding up its
 * QPs (a connection between two libblue processes is one QP per peer pair; many QPs to
 * one peer are one application's connection set).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <blue/wire.h>

#include "tools/bluectl/bluectl.h"

struct peer_sum {
	uint32_t ip;		/* network order */
	unsigned int nqps, by_state[8];
	uint64_t outstanding, retransmits, naks_sent, naks_rcvd;
	uint64_t tx_pkts, rx_pkts, tx_bytes, rx_bytes;
};

/* One entry per peer, in the order the peers first appear (by peer after snap_take). */
static unsigned int peers_sum(const struct snap *s, struct peer_sum *out)
{
	unsigned int i, j, n = 0;

	for (i = 0; i < s->nqps; i++) {
		const struct blue_qp_ctx *q = &s->qps[i];
		struct peer_sum *p;

		for (j = n; j > 0 && out[j - 1].ip != q->peer_ip; j--)
			;
		if (!j) {
			memset(&out[n], 0, sizeof(out[n]));
			out[n].ip = q->peer_ip;
			j = ++n;
		}
		p = &out[j - 1];
		p->nqps++;
		p->by_state[q->state < 7 ? q->state : 7]++;
		p->outstanding += q->outstanding;
		p->retransmits += q->retransmits;
		p->naks_sent += q->naks_sent;
		p->naks_rcvd += q->naks_rcvd;
		p->tx_pkts += q->tx_pkts;
		p->rx_pkts += q->rx_pkts;
		p->tx_bytes += q->tx_bytes;
		p->rx_bytes += q->rx_bytes;
	}
	return n;
}

void qp_list_print_text(const struct snap *s, FILE *f, unsigned int max_rows)
{
	struct peer_sum *peers;
	unsigned int i, n;
	char ip[INET6_ADDRSTRLEN], peer[INET6_ADDRSTRLEN + 16];

	if (!s->nqps) {
		fprintf(f, "%s: no QPs in use\n", s->ifname);
		return;
	}
	/* the first eight columns keep their places: scripts read them by number */
	fprintf(f, "%-8s %-5s %-4s %4s %-8s %-8s %-8s %12s  %-21s %6s %6s %6s %6s %12s %12s\n",
		"qpn", "state", "type", "xsk", "sq_psn", "una_psn", "rq_psn", "xdp_rx_pkts",
		"peer", "outst", "retx", "nak_tx", "nak_rx", "tx_pkts", "rx_pkts");
	for (i = 0; i < s->nqps && (!max_rows || i < max_rows); i++) {
		const struct blue_qp_ctx *q = &s->qps[i];

		snprintf(peer, sizeof(peer), "%s:0x%06x", peer_addr_str(q, ip), q->peer_qpn);
		fprintf(f, "0x%06x %-5s %-4s %4u 0x%06x 0x%06x 0x%06x %12llu  %-21s %6u %6llu "
			"%6llu %6llu %12llu %12llu\n", q->qpn, qp_state_name(q->state),
			qp_type_name(q->type), q->xsk_slot, q->sq_psn, q->una_psn, q->rq_psn,
			(unsigned long long)q->xdp_rx_pkts, peer, q->outstanding,
			(unsigned long long)q->retransmits, (unsigned long long)q->naks_sent,
			(unsigned long long)q->naks_rcvd, (unsigned long long)q->tx_pkts,
			(unsigned long long)q->rx_pkts);
	}
	if (i < s->nqps)
		fprintf(f, "... %u more\n", s->nqps - i);
	peers = calloc(s->nqps, sizeof(*peers));
	if (!peers)
		return;
	n = peers_sum(s, peers);
	fprintf(f, "\n%-15s %5s %5s %5s %5s %7s %8s %7s %7s %12s %12s %14s %14s\n", "peer", "qps",
		"rts", "err", "other", "outst", "retx", "nak_tx", "nak_rx", "tx_pkts", "rx_pkts",
		"tx_bytes", "rx_bytes");
	for (i = 0; i < n; i++) {
		const struct peer_sum *p = &peers[i];

		fprintf(f, "%-15s %5u %5u %5u %5u %7llu %8llu %7llu %7llu %12llu %12llu %14llu "
			"%14llu\n", ip_str(p->ip, ip), p->nqps, p->by_state[BLUE_QPS_RTS],
			p->by_state[BLUE_QPS_ERR],
			p->nqps - p->by_state[BLUE_QPS_RTS] - p->by_state[BLUE_QPS_ERR],
			(unsigned long long)p->outstanding, (unsigned long long)p->retransmits,
			(unsigned long long)p->naks_sent, (unsigned long long)p->naks_rcvd,
			(unsigned long long)p->tx_pkts, (unsigned long long)p->rx_pkts,
			(unsigned long long)p->tx_bytes, (unsigned long long)p->rx_bytes);
	}
	free(peers);
}

void qp_list_json_body(struct jw *w, const struct snap *s)
{
	struct peer_sum *peers = NULL;
	unsigned int i, n = 0, st;
	char ip[16];

	jw_str(w, "ifname", s->ifname);
	jw_arr(w, "qps");
	for (i = 0; i < s->nqps; i++) {
		jw_obj(w, NULL);
		qf_json(w, &s->qps[i]);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	if (s->nqps)
		peers = calloc(s->nqps, sizeof(*peers));
	if (peers)
		n = peers_sum(s, peers);
	jw_arr(w, "peers");
	for (i = 0; i < n; i++) {
		const struct peer_sum *p = &peers[i];

		jw_obj(w, NULL);
		jw_str(w, "peer", ip_str(p->ip, ip));
		jw_u64(w, "qps", p->nqps);
		jw_obj(w, "states");
		for (st = 0; st < 7; st++)
			if (p->by_state[st])
				jw_u64(w, qp_state_name(st), p->by_state[st]);
		jw_obj_end(w);
		jw_u64(w, "outstanding", p->outstanding);
		jw_u64(w, "retransmits", p->retransmits);
		jw_u64(w, "naks_sent", p->naks_sent);
		jw_u64(w, "naks_rcvd", p->naks_rcvd);
		jw_u64(w, "tx_pkts", p->tx_pkts);
		jw_u64(w, "rx_pkts", p->rx_pkts);
		jw_u64(w, "tx_bytes", p->tx_bytes);
		jw_u64(w, "rx_bytes", p->rx_bytes);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	free(peers);
}

static void qp_list_text_all(const struct snap *s, FILE *f)
{
	qp_list_print_text(s, f, 0);
}

int cmd_qp_list(const char *ifname, const struct opts *o)
{
	return snap_show(ifname, o, qp_list_json_body, qp_list_text_all);
}

int qpn_parse(const char *arg, __u32 *qpn)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(arg, &end, 0);
	if (errno || *end || end == arg || v == 0 || v > BLUE_QPN_MASK) {
		fprintf(stderr, "bluectl: '%s': not a QPN (1 to 0x%x, decimal or 0x-hex)\n",
			arg, BLUE_QPN_MASK);
		return EXIT_USAGE;
	}
	*qpn = (__u32)v;
	return 0;
}

const struct blue_qp_ctx *snap_find_qp(const struct snap *s, __u32 qpn)
{
	const struct blue_qp_ctx *q = NULL;
	__u32 slot = blue_qpn_slot(qpn);
	unsigned int i;

	for (i = 0; i < s->nqps; i++)
		if (blue_qpn_slot(s->qps[i].qpn) == slot)
			q = &s->qps[i];
	if (q && q->qpn == qpn)
		return q;
	if (q)
		fprintf(stderr, "bluectl: %s: QP 0x%06x not found (its slot %u holds QP 0x%06x)\n",
			s->ifname, qpn, slot, q->qpn);
	else
		fprintf(stderr, "bluectl: %s: QP 0x%06x not found (slot %u is free)\n",
			s->ifname, qpn, slot);
	return NULL;
}

int cmd_qp_show(const char *ifname, const char *qpn_arg, const struct opts *o)
{
	const struct blue_qp_ctx *q;
	unsigned int i;
	struct snap s;
	char val[48];
	__u32 qpn, slot;
	int ret;

	if ((ret = qpn_parse(qpn_arg, &qpn)))
		return ret;
	if (snap_take(ifname, &s))
		return 1;
	slot = blue_qpn_slot(qpn);
	q = snap_find_qp(&s, qpn);
	if (!q) {
		snap_free(&s);
		return 1;
	}
	if (o->json) {
		struct jw w;

		jw_init(&w, stdout);
		jw_obj(&w, NULL);
		jw_str(&w, "ifname", ifname);
		jw_u64(&w, "slot", slot);
		qf_json(&w, q);
		jw_obj_end(&w);
		jw_end(&w);
	} else {
		for (i = 0; i < qp_nfields; i++) {
			char key[40];

			qf_format(&qp_fields[i], q, val, sizeof(val));
			snprintf(key, sizeof(key), "%s:", qp_fields[i].name);
			if (!strcmp(qp_fields[i].name, "qpn"))
				printf("%-18s %s (%u), slot %u\n", key, val, q->qpn, slot);
			else
				printf("%-18s %s\n", key, val);
		}
	}
	snap_free(&s);
	return 0;
}
