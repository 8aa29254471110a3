// SPDX-License-Identifier: MIT
/*
 * bluectl metrics: everything a snapshot holds as Prometheus metrics (the text
 * exposition format 0.0.4), or the same families as JSON with --json. Per device: the
 * XDP verdicts, the HAL's ring counters, the engine's counters, the diagnostics switch,
 * QPs by state, and two histograms, one per plane: connection setup (control) and
 * post-to-completion latency per opcode (data, with diag on). Per QP: every numeric
 * field of its context, labelled with its QPN.
 *
 * Left out unless asked for, because they are what a forged packet needs to be taken
 * by a QP (a scrape endpoint is easier to reach than the pins): the sequence numbers
 * (sq/una/rq/last-NAK PSN and the MSN, --expose-psn) and the peer's address and QPN
 * (--expose-peers). The local QPN stays: it names the series, as in `bluectl qp show`,
 * and without a PSN in the receive window and the peer's address it forges nothing.
 *
 * Names follow Prometheus practice: base units (seconds, bytes), counters end in _total.
 */
#include <string.h>
#include <arpa/inet.h>

#include "tools/bluectl/bluectl.h"

/* One label set: up to 6 key/value pairs. */
struct labels {
	const char *k[6], *v[6];
	unsigned int n;
};

struct mw {
	FILE *f;
	bool json;
	bool open_family;
	struct jw jw;
	const struct snap *s;
	const struct opts *o;
};

static void lbl(struct labels *l, const char *k, const char *v)
{
	if (l->n < 6) {
		l->k[l->n] = k;
		l->v[l->n] = v;
		l->n++;
	}
}

/* Label values escape backslash, double quote and newline (the format's rule). */
static void put_label_value(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fprintf(f, "\\%c", *v);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

static void family(struct mw *m, const char *name, const char *type, const char *help)
{
	if (m->json) {
		if (m->open_family) {
			jw_arr_end(&m->jw);
			jw_obj_end(&m->jw);
		}
		jw_obj(&m->jw, NULL);
		jw_str(&m->jw, "name", name);
		jw_str(&m->jw, "type", type);
		jw_str(&m->jw, "help", help);
		jw_arr(&m->jw, "samples");
		m->open_family = true;
		return;
	}
	fprintf(m->f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One sample: ifname always, then @l. Integers exact (@is_int), the rest as %.9g. */
static void sample(struct mw *m, const char *name, const struct labels *l, bool is_int,
		   uint64_t u, double d)
{
	unsigned int i;

	if (m->json) {
		jw_obj(&m->jw, NULL);
		jw_str(&m->jw, "name", name);
		jw_obj(&m->jw, "labels");
		jw_str(&m->jw, "ifname", m->s->ifname);
		for (i = 0; l && i < l->n; i++)
			jw_str(&m->jw, l->k[i], l->v[i]);
		jw_obj_end(&m->jw);
		if (is_int)
			jw_u64(&m->jw, "value", u);
		else
			jw_dbl(&m->jw, "value", d);
		jw_obj_end(&m->jw);
		return;
	}
	fprintf(m->f, "%s{ifname=\"", name);
	put_label_value(m->f, m->s->ifname);
	fputc('"', m->f);
	for (i = 0; l && i < l->n; i++) {
		fprintf(m->f, ",%s=\"", l->k[i]);
		put_label_value(m->f, l->v[i]);
		fputc('"', m->f);
	}
	if (is_int)
		fprintf(m->f, "} %llu\n", (unsigned long long)u);
	else
		fprintf(m->f, "} %.9g\n", d);
}

static void sample_u(struct mw *m, const char *name, const struct labels *l, uint64_t v)
{
	sample(m, name, l, true, v, 0);
}

static const char *reason_action(unsigned int r)
{
	if (r < BLUE_STAT_REDIRECT)
		return "pass";
	return r == BLUE_STAT_REDIRECT ? "redirect" : "drop";
}

static void xdp_metrics(struct mw *m)
{
	struct labels l;
	unsigned int r, pass;

	for (pass = 0; pass < 2; pass++) {
		family(m, pass ? "blue_xdp_bytes_total" : "blue_xdp_packets_total", "counter",
		       pass ? "bytes the XDP program saw, by verdict reason" :
			      "packets the XDP program saw, by verdict reason");
		for (r = 0; r < BLUE_STAT__MAX; r++) {
			memset(&l, 0, sizeof(l));
			lbl(&l, "reason", blue_stat_name(r));
			lbl(&l, "action", reason_action(r));
			sample_u(m, pass ? "blue_xdp_bytes_total" : "blue_xdp_packets_total", &l,
				 pass ? m->s->xdp[r].bytes : m->s->xdp[r].pkts);
		}
	}
}

/* A table of device fields; consecutive entries of one metric share its family. */
static void dev_metrics(struct mw *m, const struct dev_field *t, unsigned int n, const void *base)
{
	const char *help = NULL;
	struct labels l;
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (!i || strcmp(t[i].metric, t[i - 1].metric)) {
			help = t[i].help ? t[i].help : t[i].name;
			family(m, t[i].metric, t[i].gauge ? "gauge" : "counter", help);
		}
		memset(&l, 0, sizeof(l));
		if (t[i].reason)
			lbl(&l, "reason", t[i].reason);
		sample_u(m, t[i].metric, &l, dev_field_value(&t[i], base));
	}
}

static void device_metrics(struct mw *m)
{
	const struct snap *s = m->s;
	unsigned int counts[7] = { 0 }, i;
	struct labels l;

	family(m, "blue_device_owner_pid", "gauge",
	       "pid of the process that has the device open; 0 when none");
	sample_u(m, "blue_device_owner_pid", NULL, s->ds.owner_pid);
	family(m, "blue_device_opens_total", "counter", "blue_open_device() calls since attach");
	sample_u(m, "blue_device_opens_total", NULL, s->ds.opens);

	family(m, "blue_diag_enabled", "gauge", "costly diagnostics switched on (bluectl diag)");
	memset(&l, 0, sizeof(l));
	lbl(&l, "what", "drops");
	sample_u(m, "blue_diag_enabled", &l, !!(s->diag.flags & BLUE_DIAG_DROPS));
	memset(&l, 0, sizeof(l));
	lbl(&l, "what", "latency");
	sample_u(m, "blue_diag_enabled", &l, !!(s->diag.flags & BLUE_DIAG_LAT));
	family(m, "blue_diag_drop_events_total", "counter",
	       "XDP drop events written to the drop_events ring buffer");
	sample_u(m, "blue_diag_drop_events_total", NULL, s->diag.drop_events);
	family(m, "blue_diag_drop_events_lost_total", "counter",
	       "XDP drop events lost because the ring buffer was full");
	sample_u(m, "blue_diag_drop_events_lost_total", NULL, s->diag.drop_events_lost);

	for (i = 0; i < s->nqps; i++)
		if (s->qps[i].state < 7)
			counts[s->qps[i].state]++;
	family(m, "blue_tune_changes_total", "counter",
	       "`bluectl set` changes of the interface's defaults the engines applied");
	sample_u(m, "blue_tune_changes_total", NULL, s->tune_changes);

	family(m, "blue_qps", "gauge", "queue pairs in the QP-context map, by state");
	for (i = 0; i < 7; i++) {
		memset(&l, 0, sizeof(l));
		lbl(&l, "state", qp_state_name(i));
		sample_u(m, "blue_qps", &l, counts[i]);
	}
}

static void qp_labels(const struct mw *m, const struct blue_qp_ctx *q, struct labels *l,
		      char *qpn, char *peer, char *peer_qpn)
{
	memset(l, 0, sizeof(*l));
	snprintf(qpn, 12, "0x%06x", q->qpn);
	lbl(l, "qpn", qpn);
	if (m->o->expose_peers) {
		snprintf(peer_qpn, 12, "0x%06x", q->peer_qpn);
		peer_addr_str(q, peer);
		lbl(l, "peer", peer);
		lbl(l, "peer_qpn", peer_qpn);
	}
	lbl(l, "type", qp_type_name(q->type));
}

static void qp_metrics(struct mw *m)
{
	const struct snap *s = m->s;
	char qpn[12], peer[INET6_ADDRSTRLEN], peer_qpn[12], name[96], mtu[8];
	struct labels l;
	unsigned int i, k;

	if (!s->nqps)
		return;	/* no families without samples */
	family(m, "blue_qp_info", "gauge", "one per live QP: its state and path MTU as labels");
	for (k = 0; k < s->nqps; k++) {
		const struct blue_qp_ctx *q = &s->qps[k];

		qp_labels(m, q, &l, qpn, peer, peer_qpn);
		lbl(&l, "state", qp_state_name(q->state));
		snprintf(mtu, sizeof(mtu), "%u", q->path_mtu >= 1 && q->path_mtu <= 5 ?
			 128u << q->path_mtu : 0);
		lbl(&l, "path_mtu", mtu);
		sample_u(m, "blue_qp_info", &l, 1);
	}
	for (i = 0; i < qp_nfields; i++) {
		const struct qp_field *f = &qp_fields[i];

		if (f->metric == QM_NONE || (qf_is_seq(f) && !m->o->expose_psn))
			continue;
		snprintf(name, sizeof(name), "blue_qp_%s", f->metric_name);
		family(m, name, f->metric == QM_COUNTER ? "counter" : "gauge", f->help);
		for (k = 0; k < s->nqps; k++) {
			uint64_t v = qf_value(f, &s->qps[k]);

			qp_labels(m, &s->qps[k], &l, qpn, peer, peer_qpn);
			if (f->scale == 1.0)
				sample_u(m, name, &l, v);
			else
				sample(m, name, &l, false, 0, (double)v * f->scale);
		}
	}
	family(m, "blue_qp_tune_changes_total", "counter",
	       "`bluectl set IFNAME qp QPN` changes its engine applied");
	for (k = 0; k < s->nqps; k++) {
		qp_labels(m, &s->qps[k], &l, qpn, peer, peer_qpn);
		sample_u(m, "blue_qp_tune_changes_total", &l, snap_tune_changes(s, &s->qps[k]));
	}
}

/* A Prometheus histogram: cumulative buckets up to +Inf, _sum and _count. */
static void hist_samples(struct mw *m, const char *name, const struct blue_hist *h,
			 const char *op)
{
	char bname[96], le[32];
	uint64_t cum = 0;
	struct labels l;
	unsigned int b;

	snprintf(bname, sizeof(bname), "%s_bucket", name);
	for (b = 0; b < BLUE_HIST_BUCKETS; b++) {
		cum += h->bucket[b];
		memset(&l, 0, sizeof(l));
		if (op)
			lbl(&l, "opcode", op);
		if (b == BLUE_HIST_BUCKETS - 1)
			snprintf(le, sizeof(le), "+Inf");
		else
			snprintf(le, sizeof(le), "%.9g", (double)blue_hist_le_ns(b) / 1e9);
		lbl(&l, "le", le);
		sample_u(m, bname, &l, cum);
	}
	memset(&l, 0, sizeof(l));
	if (op)
		lbl(&l, "opcode", op);
	snprintf(bname, sizeof(bname), "%s_sum", name);
	sample(m, bname, &l, false, 0, (double)h->sum_ns / 1e9);
	snprintf(bname, sizeof(bname), "%s_count", name);
	sample_u(m, bname, &l, cum);
}

static void hist_metrics(struct mw *m)
{
	unsigned int op;

	family(m, "blue_conn_setup_seconds", "histogram",
	       "control plane: blue_cm_info_from_qp() to RTS in blue_cm_connect_qp(), per QP");
	hist_samples(m, "blue_conn_setup_seconds", &m->s->ds.conn_setup, NULL);
	family(m, "blue_op_latency_seconds", "histogram",
	       "data plane: blue_post_send() to its completion, by opcode (while diag is on)");
	for (op = 0; op < BLUE_LAT_OPS; op++)
		if (blue_lat_op_name(op))
			hist_samples(m, "blue_op_latency_seconds", &m->s->ds.lat[op],
				     blue_lat_op_name(op));
}

void metrics_write(const struct snap *s, const struct opts *o, FILE *f)
{
	struct mw m = { .f = f, .s = s, .o = o };

	xdp_metrics(&m);
	dev_metrics(&m, hal_fields, n_hal_fields, &s->ds.hal);
	dev_metrics(&m, eng_fields, n_eng_fields, &s->ds.eng);
	device_metrics(&m);
	hist_metrics(&m);
	qp_metrics(&m);
	tenant_metrics(f, s->ifname);	/* blue-manager's, when one serves the netdev */
}

static void metrics_json(const struct snap *s, const struct opts *o, FILE *f)
{
	struct mw m = { .f = f, .s = s, .o = o, .json = true };

	jw_init(&m.jw, f);
	jw_obj(&m.jw, NULL);
	jw_str(&m.jw, "ifname", s->ifname);
	jw_arr(&m.jw, "metrics");
	xdp_metrics(&m);
	dev_metrics(&m, hal_fields, n_hal_fields, &s->ds.hal);
	dev_metrics(&m, eng_fields, n_eng_fields, &s->ds.eng);
	device_metrics(&m);
	hist_metrics(&m);
	qp_metrics(&m);
	if (m.open_family) {
		jw_arr_end(&m.jw);
		jw_obj_end(&m.jw);
	}
	jw_arr_end(&m.jw);
	jw_obj_end(&m.jw);
	jw_end(&m.jw);
}

int cmd_metrics(const char *ifname, const struct opts *o)
{
	struct snap s;

	if (o->listen)
		return metrics_serve(ifname, o->listen, o);
	if (snap_take(ifname, &s))
		return 1;
	if (o->json)
		metrics_json(&s, o, stdout);
	else
		metrics_write(&s, o, stdout);
	snap_free(&s);
	return 0;
}
