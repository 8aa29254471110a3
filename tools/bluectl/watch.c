// SPDX-License-Identifier: MIT
/*
 * bluectl watch: stats and the busiest QPs, refreshed every --interval like top, for
 * --count refreshes or until Ctrl-C. Rates are the difference between two snapshots.
 * On a terminal the screen is redrawn; otherwise (and with --json, one object per
 * refresh) each refresh is appended, which is what a test or a log wants.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tools/bluectl/bluectl.h"

#define WATCH_QP_ROWS	20

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double rate(uint64_t now, uint64_t before, double secs)
{
	return now >= before && secs > 0 ? (double)(now - before) / secs : 0;
}

/* Per-slot packet counts of the previous refresh, to rank QPs by what they just did. */
struct activity {
	uint32_t qpn[BLUE_MAX_QP];
	uint64_t pkts[BLUE_MAX_QP];
};

static uint64_t qp_pkts(const struct blue_qp_ctx *q)
{
	return q->tx_pkts + q->rx_pkts;
}

static const struct activity *act_cmp_ctx;

static uint64_t qp_delta(const struct blue_qp_ctx *q)
{
	uint32_t slot = blue_qpn_slot(q->qpn);

	if (act_cmp_ctx->qpn[slot] != q->qpn)
		return qp_pkts(q);
	return qp_pkts(q) - act_cmp_ctx->pkts[slot];
}

static int busiest_first(const void *a, const void *b)
{
	uint64_t x = qp_delta(a), y = qp_delta(b);

	return x > y ? -1 : x < y;
}

static void act_save(struct activity *act, const struct snap *s)
{
	unsigned int i;

	memset(act->qpn, 0, sizeof(act->qpn));
	for (i = 0; i < s->nqps; i++) {
		uint32_t slot = blue_qpn_slot(s->qps[i].qpn);

		act->qpn[slot] = s->qps[i].qpn;
		act->pkts[slot] = qp_pkts(&s->qps[i]);
	}
}

static void print_text(const struct snap *s, const struct snap *prev, unsigned long it,
		       const struct opts *o)
{
	double secs = prev ? (double)(s->t_ns - prev->t_ns) / 1e9 : 0;
	unsigned int r;

	if (isatty(STDOUT_FILENO))
		fputs("\033[H\033[2J", stdout);
	printf("bluectl watch %s: refresh %lu every %.2f s; device %s%u; diag %s\n", s->ifname,
	       it, o->interval, s->ds.owner_pid ? "open by pid " : "not open, pid ",
	       s->ds.owner_pid, s->diag.flags ? "on" : "off");
	printf("%-20s %14s %14s %16s\n", "xdp verdict", "pkts/s", "MB/s", "pkts");
	for (r = 0; r < BLUE_STAT__MAX; r++) {
		if (!s->xdp[r].pkts)
			continue;
		printf("%-20s %14.0f %14.2f %16llu\n", blue_stat_name(r),
		       prev ? rate(s->xdp[r].pkts, prev->xdp[r].pkts, secs) : 0,
		       prev ? rate(s->xdp[r].bytes, prev->xdp[r].bytes, secs) / 1e6 : 0,
		       (unsigned long long)s->xdp[r].pkts);
	}
	if (prev)
		printf("hal/s: rx %.0f tx %.0f kicks %.0f rx_batches %.0f fill_empty %.0f "
		       "rx_dropped %.0f; engine/s: passes %.0f\n",
		       rate(s->ds.hal.rx_frames, prev->ds.hal.rx_frames, secs),
		       rate(s->ds.hal.tx_frames, prev->ds.hal.tx_frames, secs),
		       rate(s->ds.hal.tx_kicks, prev->ds.hal.tx_kicks, secs),
		       rate(s->ds.hal.rx_batches, prev->ds.hal.rx_batches, secs),
		       rate(s->ds.hal.fill_empty, prev->ds.hal.fill_empty, secs),
		       rate(s->ds.hal.rx_dropped, prev->ds.hal.rx_dropped, secs),
		       rate(s->ds.eng.passes, prev->ds.eng.passes, secs));
	printf("\n");
	qp_list_print_text(s, stdout, WATCH_QP_ROWS);
	fflush(stdout);
}

static void print_json(const struct snap *s, const struct snap *prev, unsigned long it)
{
	double secs = prev ? (double)(s->t_ns - prev->t_ns) / 1e9 : 0;
	unsigned int r;
	struct jw w;

	jw_init(&w, stdout);
	jw_obj(&w, NULL);
	jw_u64(&w, "refresh", it);
	jw_u64(&w, "t_ns", s->t_ns);
	jw_obj(&w, "stats");
	stats_json_body(&w, s);
	jw_obj_end(&w);
	jw_obj(&w, "xdp_pkts_per_s");
	for (r = 0; r < BLUE_STAT__MAX; r++)
		jw_dbl(&w, blue_stat_name(r),
		       prev ? rate(s->xdp[r].pkts, prev->xdp[r].pkts, secs) : 0);
	jw_obj_end(&w);
	jw_obj(&w, "qps");
	qp_list_json_body(&w, s);
	jw_obj_end(&w);
	jw_obj_end(&w);
	jw_end(&w);
}

int cmd_watch(const char *ifname, const struct opts *o)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct snap cur, prev;
	struct activity *act;
	struct timespec ts;
	unsigned long it;
	bool have_prev = false;

	act = calloc(1, sizeof(*act));
	if (!act)
		return 1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	for (it = 1; !stop; it++) {
		if (snap_take(ifname, &cur)) {
			if (have_prev)
				snap_free(&prev);
			free(act);
			return 1;
		}
		if (have_prev) {
			act_cmp_ctx = act;
			qsort(cur.qps, cur.nqps, sizeof(*cur.qps), busiest_first);
		}
		if (o->json)
			print_json(&cur, have_prev ? &prev : NULL, it);
		else
			print_text(&cur, have_prev ? &prev : NULL, it, o);
		act_save(act, &cur);
		if (have_prev)
			snap_free(&prev);
		prev = cur;
		have_prev = true;
		if (o->count && it >= (unsigned long)o->count)
			break;
		ts.tv_sec = (time_t)o->interval;
		ts.tv_nsec = (long)((o->interval - (double)ts.tv_sec) * 1e9);
		nanosleep(&ts, NULL);	/* a signal cuts it short, and the loop ends */
	}
	if (have_prev)
		snap_free(&prev);
	free(act);
	return 0;
}
