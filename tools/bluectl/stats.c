// SPDX-License-Identifier: MIT
/*
 * bluectl stats: the XDP verdicts by reason (the per-CPU stats map), then what the
 * runtime publishes in dev_stats: the HAL's ring counters, the engine's counters, the
 * diagnostics switch and the timing histograms.
 */
#include <stddef.h>
#include <string.h>

#include "tools/bluectl/bluectl.h"

#define H(m, g, metric, help) \
	{ #m, offsetof(struct blue_dev_hal, m), g, metric, NULL, help }
#define E(m, metric, reason, help) \
	{ #m, offsetof(struct blue_dev_engine, m), false, metric, reason, help }

const struct dev_field hal_fields[] = {
	H(rx_frames, false, "blue_hal_rx_frames_total", "frames taken from the AF_XDP RX rings"),
	H(tx_frames, false, "blue_hal_tx_frames_total", "frames put on the AF_XDP TX rings"),
	H(tx_kicks, false, "blue_hal_tx_kicks_total", "TX doorbells (sendto calls)"),
	H(rx_batches, false, "blue_hal_rx_batches_total", "RX bursts that returned frames"),
	H(rx_wakeups, false, "blue_hal_rx_wakeups_total", "poll() calls that slept for RX"),
	H(fill_empty, false, "blue_hal_fill_ring_empty_total",
	  "times the fill ring could not be topped up"),
	H(tx_ring_full, false, "blue_hal_tx_ring_full_total",
	  "TX submits that found the ring full"),
	H(rx_dropped, false, "blue_hal_rx_dropped_total",
	  "frames lost at the socket: RX ring full or no fill frame"),
	H(frame_errors, false, "blue_hal_frame_errors_total",
	  "double frees and foreign frames refused"),
	H(rx_multibuf, false, "blue_hal_rx_multibuf_total",
	  "packets that came in several descriptors (AF_XDP multi-buffer)"),
	H(tx_multibuf, false, "blue_hal_tx_multibuf_total",
	  "packets sent as several descriptors (AF_XDP multi-buffer)"),
	H(busy_polls, false, "blue_hal_busy_polls_total",
	  "syscalls that ran the NAPI loop instead of sleeping (BLUE_BUSY_POLL)"),
	H(frames_total, true, "blue_hal_umem_frames", "frames in the UMEM"),
	H(frames_free, true, "blue_hal_umem_frames_free", "UMEM frames in the free pool"),
};
const unsigned int n_hal_fields = sizeof(hal_fields) / sizeof(hal_fields[0]);

const struct dev_field eng_fields[] = {
	E(passes, "blue_engine_passes_total", NULL, "progress-engine passes"),
	E(rx_frames, "blue_engine_rx_frames_total", NULL, "frames the engine parsed"),
	E(rx_bad_icrc, "blue_engine_rx_dropped_total", "bad_icrc", "frames the engine dropped"),
	E(rx_malformed, "blue_engine_rx_dropped_total", "malformed", NULL),
	E(rx_no_qp, "blue_engine_rx_dropped_total", "no_qp", NULL),
	E(rx_bad_src, "blue_engine_rx_dropped_total", "bad_src", NULL),
	E(rx_wrong_transport, "blue_engine_rx_dropped_total", "wrong_transport", NULL),
	E(rx_bad_qkey, "blue_engine_rx_dropped_total", "ud_bad_qkey", NULL),
	E(rx_ud_no_wqe, "blue_engine_rx_dropped_total", "ud_no_wqe", NULL),
	E(rx_uc_dropped, "blue_engine_rx_dropped_total", "uc", NULL),
	E(rx_mcast_no_group, "blue_engine_rx_dropped_total", "mcast_no_group", NULL),
	E(rx_mcast_bad_pkey, "blue_engine_rx_dropped_total", "mcast_bad_pkey", NULL),
	E(rx_mcast_copies, "blue_engine_rx_mcast_copies_total", NULL,
	  "multicast datagrams handed to the QPs attached to their group (one per QP)"),
	E(rx_dup, "blue_engine_requests_refused_total", "duplicate",
	  "requests the responder did not execute"),
	E(rx_seq_err, "blue_engine_requests_refused_total", "sequence_error", NULL),
	E(rx_inv_req, "blue_engine_requests_refused_total", "invalid_request", NULL),
	E(rx_access_err, "blue_engine_requests_refused_total", "remote_access", NULL),
	E(rx_op_err, "blue_engine_requests_refused_total", "remote_operation", NULL),
	E(rx_cnp, "blue_engine_rx_cnps_total", NULL, "RoCEv2 CNPs received"),
	E(tx_frames, "blue_engine_tx_frames_total", NULL, "frames the engine sent"),
	E(tx_ud_too_long, "blue_engine_tx_ud_too_long_total", NULL,
	  "UD sends over the MTU, completed without a packet (IBA C10-93.1.1)"),
	E(tx_no_frame, "blue_engine_tx_waits_total", NULL,
	  "sends that waited for a frame or the pass budget"),
	E(tx_dropped, "blue_engine_tx_dropped_total", NULL,
	  "frames built but refused by a full TX ring"),
	E(tx_loopback, "blue_engine_tx_loopback_total", NULL,
	  "frames to the device itself, looped back in the engine"),
	E(tx_mcast_loop, "blue_engine_tx_mcast_loop_total", NULL,
	  "multicast sent to a group a QP of the device is attached to: looped back too"),
};
const unsigned int n_eng_fields = sizeof(eng_fields) / sizeof(eng_fields[0]);

uint64_t dev_field_value(const struct dev_field *f, const void *base)
{
	uint64_t v;

	memcpy(&v, (const char *)base + f->off, sizeof(v));
	return v;
}

/* The upper bound (ns) of the bucket holding quantile @q; 0 when empty, ~0 past the last. */
uint64_t hist_quantile_le(const struct blue_hist *h, double q)
{
	uint64_t n = hist_count(h), want, seen = 0;
	unsigned int b;

	if (!n)
		return 0;
	want = (uint64_t)(q * (double)n + 0.999999);
	if (!want)
		want = 1;
	for (b = 0; b < BLUE_HIST_BUCKETS; b++) {
		seen += h->bucket[b];
		if (seen >= want)
			return b == BLUE_HIST_BUCKETS - 1 ? ~0ull : blue_hist_le_ns(b);
	}
	return ~0ull;
}

static void hist_text(FILE *f, const char *name, const struct blue_hist *h)
{
	uint64_t n = hist_count(h), p50 = hist_quantile_le(h, 0.5), p99 = hist_quantile_le(h, 0.99);

	if (!n)
		return;
	fprintf(f, "  %-12s %10llu  avg %10.1f us  p50 <= %9.1f us  p99 <= %9.1f us\n", name,
		(unsigned long long)n, (double)h->sum_ns / (double)n / 1e3,
		p50 == ~0ull ? 1e99 : (double)p50 / 1e3, p99 == ~0ull ? 1e99 : (double)p99 / 1e3);
}

static bool hists_empty(const struct snap *s)
{
	unsigned int op;

	if (hist_count(&s->ds.conn_setup))
		return false;
	for (op = 0; op < BLUE_LAT_OPS; op++)
		if (hist_count(&s->ds.lat[op]))
			return false;
	return true;
}

void stats_print_text(const struct snap *s, FILE *f)
{
	const struct blue_dev_stats *ds = &s->ds;
	unsigned int r, i, op;

	fprintf(f, "%-20s %14s %16s\n", "reason", "pkts", "bytes");
	for (r = 0; r < BLUE_STAT__MAX; r++)
		fprintf(f, "%-20s %14llu %16llu\n", blue_stat_name(r),
			(unsigned long long)s->xdp[r].pkts, (unsigned long long)s->xdp[r].bytes);

	fputc('\n', f);
	if (ds->owner_pid && !s->owner_alive)
		fprintf(f, "device: not open (pid %u exited without closing it); counters as last "
			"published\n", ds->owner_pid);
	else if (ds->owner_pid)
		fprintf(f, "device: open by pid %u; counters published %.2f s ago\n", ds->owner_pid,
			(double)(s->t_ns - ds->published_ns) / 1e9);
	else if (ds->opens)
		fprintf(f, "device: not open (opened %u times since attach); counters as last "
			"published\n", ds->opens);
	else
		fprintf(f, "device: never opened since attach\n");
	/* beyond queue 0 (BLUE_QUEUE, blue_open_device_queue): who serves each queue */
	for (i = 0; i < BLUE_MAX_QUEUES && (s->live_queues & ~1u); i++)
		if (s->live_queues & (1u << i))
			fprintf(f, "device: queue %u open by pid %u\n", i, s->queue_owner[i]);
	fprintf(f, "hal (AF_XDP rings)\n");
	for (i = 0; i < n_hal_fields; i++)
		fprintf(f, "  %-20s %14llu\n", hal_fields[i].name,
			(unsigned long long)dev_field_value(&hal_fields[i], &ds->hal));
	fprintf(f, "engine\n");
	for (i = 0; i < n_eng_fields; i++)
		fprintf(f, "  %-20s %14llu\n", eng_fields[i].name,
			(unsigned long long)dev_field_value(&eng_fields[i], &ds->eng));
	fprintf(f, "diagnostics: %s (drop events %s, latency %s); %llu drop events, %llu lost\n",
		s->diag.flags ? "on" : "off", s->diag.flags & BLUE_DIAG_DROPS ? "on" : "off",
		s->diag.flags & BLUE_DIAG_LAT ? "on" : "off",
		(unsigned long long)s->diag.drop_events,
		(unsigned long long)s->diag.drop_events_lost);
	if (hists_empty(s))
		return;
	fprintf(f, "timing          count\n");
	hist_text(f, "conn_setup", &ds->conn_setup);
	for (op = 0; op < BLUE_LAT_OPS; op++)
		if (blue_lat_op_name(op))
			hist_text(f, blue_lat_op_name(op), &ds->lat[op]);
}

static void hist_json(struct jw *w, const char *key, const struct blue_hist *h)
{
	unsigned int b;

	jw_obj(w, key);
	jw_u64(w, "count", hist_count(h));
	jw_u64(w, "sum_ns", h->sum_ns);
	jw_arr(w, "buckets");
	for (b = 0; b < BLUE_HIST_BUCKETS; b++)
		jw_u64(w, NULL, h->bucket[b]);
	jw_arr_end(w);
	jw_obj_end(w);
}

void stats_json_body(struct jw *w, const struct snap *s)
{
	const struct blue_dev_stats *ds = &s->ds;
	unsigned int r, i, op;

	jw_str(w, "ifname", s->ifname);
	jw_obj(w, "stats");
	for (r = 0; r < BLUE_STAT__MAX; r++) {
		jw_obj(w, blue_stat_name(r));
		jw_u64(w, "pkts", s->xdp[r].pkts);
		jw_u64(w, "bytes", s->xdp[r].bytes);
		jw_obj_end(w);
	}
	jw_obj_end(w);
	jw_obj(w, "device");
	jw_u64(w, "owner_pid", ds->owner_pid);
	jw_bool(w, "owner_alive", s->owner_alive);
	jw_u64(w, "opens", ds->opens);
	jw_u64(w, "published_ns", ds->published_ns);
	jw_obj_end(w);
	jw_obj(w, "hal");
	for (i = 0; i < n_hal_fields; i++)
		jw_u64(w, hal_fields[i].name, dev_field_value(&hal_fields[i], &ds->hal));
	jw_obj_end(w);
	jw_obj(w, "engine");
	for (i = 0; i < n_eng_fields; i++)
		jw_u64(w, eng_fields[i].name, dev_field_value(&eng_fields[i], &ds->eng));
	jw_obj_end(w);
	jw_obj(w, "diag");
	jw_u64(w, "flags", s->diag.flags);
	jw_bool(w, "drops", s->diag.flags & BLUE_DIAG_DROPS);
	jw_bool(w, "latency", s->diag.flags & BLUE_DIAG_LAT);
	jw_u64(w, "drop_events", s->diag.drop_events);
	jw_u64(w, "drop_events_lost", s->diag.drop_events_lost);
	jw_obj_end(w);
	jw_u64(w, "hist_shift", BLUE_HIST_SHIFT);
	hist_json(w, "conn_setup", &ds->conn_setup);
	jw_obj(w, "latency");
	for (op = 0; op < BLUE_LAT_OPS; op++)
		if (blue_lat_op_name(op))
			hist_json(w, blue_lat_op_name(op), &ds->lat[op]);
	jw_obj_end(w);
}

int cmd_stats(const char *ifname, const struct opts *o)
{
	return snap_show(ifname, o, stats_json_body, stats_print_text);
}
