// SPDX-License-Identifier: MIT
/*
 * bluectl diag on|off|show: the switch for diagnostics that cost something (the XDP
 * program's drop events, the runtime's per-WR timestamps). Both read it through the
 * pinned diag map at every event, so it takes effect at once, with no restart.
 *
 * bluectl drops: the consumer of the drop_events ring buffer. Each event is printed and
 * also fires the USDT probe blue:xdp_drop (reason, QPN, length, ifindex) in this
 * process, which is how bpftrace sees XDP drop reasons on a kernel without kprobes
 * (tools/trace/xdpdrops.bt).
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "tools/bluectl/bluectl.h"

#if defined(__has_include) && __has_include(<sys/sdt.h>)
#include <sys/sdt.h>
#define XDP_DROP_PROBE(r, q, l, i)	DTRACE_PROBE4(blue, xdp_drop, r, q, l, i)
#else
#define XDP_DROP_PROBE(r, q, l, i)	do { } while (0)
#endif

static void diag_report(const char *ifname, const struct blue_diag_cfg *d, const struct opts *o)
{
	if (o->json) {
		struct jw w;

		jw_init(&w, stdout);
		jw_obj(&w, NULL);
		jw_str(&w, "ifname", ifname);
		jw_u64(&w, "flags", d->flags);
		jw_bool(&w, "drops", d->flags & BLUE_DIAG_DROPS);
		jw_bool(&w, "latency", d->flags & BLUE_DIAG_LAT);
		jw_u64(&w, "drop_events", d->drop_events);
		jw_u64(&w, "drop_events_lost", d->drop_events_lost);
		jw_obj_end(&w);
		jw_end(&w);
		return;
	}
	printf("%s: diagnostics %s (XDP drop events %s, latency histograms %s); %llu drop "
	       "events so far, %llu lost\n", ifname, d->flags ? "on" : "off",
	       d->flags & BLUE_DIAG_DROPS ? "on" : "off", d->flags & BLUE_DIAG_LAT ? "on" : "off",
	       (unsigned long long)d->drop_events, (unsigned long long)d->drop_events_lost);
}

int cmd_diag(const char *what, const char *ifname, const struct opts *o)
{
	bool write = strcmp(what, "show") != 0;
	struct blue_diag_cfg *d;
	struct blue_pins p;

	if (blue_pins_open(ifname, &p))
		return 1;
	d = blue_pins_mmap_diag(p.diag_fd, write);
	blue_pins_close(&p);
	if (!d) {
		fprintf(stderr, "bluectl: %s: cannot map the %s map: %s\n", ifname, BLUE_PIN_DIAG,
			strerror(errno));
		return 1;
	}
	/* only the flags word: the XDP program counts its events in the same entry */
	if (write)
		__atomic_store_n(&d->flags, strcmp(what, "on") ? 0u : BLUE_DIAG_ALL,
				 __ATOMIC_RELEASE);
	diag_report(ifname, d, o);
	blue_pins_munmap_diag(d);
	return 0;
}

/* --- drops ------------------------------------------------------------------------ */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct drops_ctx {
	const struct opts *o;
	long seen;
};

static int on_event(void *arg, void *data, size_t len)
{
	struct drops_ctx *c = arg;
	struct blue_drop_event ev;

	if (len < sizeof(ev))
		return 0;
	memcpy(&ev, data, sizeof(ev));
	XDP_DROP_PROBE(ev.reason, ev.dqpn, ev.len, ev.ifindex);
	if (c->o->json) {
		struct jw w;

		jw_init(&w, stdout);
		jw_obj(&w, NULL);
		jw_u64(&w, "ts_ns", ev.ts_ns);
		jw_str(&w, "reason", blue_stat_name(ev.reason));
		jw_u64(&w, "reason_id", ev.reason);
		jw_u64(&w, "len", ev.len);
		jw_u64(&w, "dqpn", ev.dqpn);
		jw_u64(&w, "ifindex", ev.ifindex);
		jw_u64(&w, "rx_queue", ev.rx_queue);
		jw_obj_end(&w);
		jw_end(&w);
	} else {
		printf("%17.6f %-20s %6u 0x%06x %7u %5u\n", (double)ev.ts_ns / 1e9,
		       blue_stat_name(ev.reason), ev.len, ev.dqpn, ev.ifindex, ev.rx_queue);
		fflush(stdout);
	}
	c->seen++;
	/* a negative return stops ring_buffer__poll: the --count bound */
	return c->o->count && c->seen >= c->o->count ? -1 : 0;
}

int cmd_drops(const char *ifname, const struct opts *o)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct drops_ctx c = { .o = o };
	struct ring_buffer *rb = NULL;
	struct blue_diag_cfg *d;
	struct blue_pins p;
	uint64_t end = o->timeout ? mono_ns() + (uint64_t)(o->timeout * 1e9) : 0;
	int ret = 0, ms;

	if (blue_pins_open(ifname, &p))
		return 1;
	d = blue_pins_mmap_diag(p.diag_fd, false);
	if (d && !(__atomic_load_n(&d->flags, __ATOMIC_ACQUIRE) & BLUE_DIAG_DROPS))
		fprintf(stderr, "bluectl: %s: drop events are off; none will arrive until "
			"'bluectl diag on %s'\n", ifname, ifname);
	blue_pins_munmap_diag(d);
	rb = ring_buffer__new(p.drops_fd, on_event, &c, NULL);
	if (!rb) {
		fprintf(stderr, "bluectl: %s: cannot read the %s ring buffer: %s\n", ifname,
			BLUE_PIN_DROPS, strerror(errno));
		blue_pins_close(&p);
		return 1;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (!o->json)
		printf("%17s %-20s %6s %8s %7s %5s\n", "time_s", "reason", "len", "qpn", "ifindex",
		       "queue");
	fprintf(stderr, "bluectl: waiting for XDP drop events on %s (Ctrl-C to stop)\n", ifname);
	while (!stop && !(o->count && c.seen >= o->count)) {
		ms = 200;
		if (end) {
			uint64_t now = mono_ns();

			if (now >= end)
				break;
			if ((end - now) / 1000000 < (uint64_t)ms)
				ms = (int)((end - now) / 1000000) + 1;
		}
		ret = ring_buffer__poll(rb, ms);
		if (ret < 0 && ret != -EINTR && !(o->count && c.seen >= o->count)) {
			fprintf(stderr, "bluectl: %s: reading drop events: %s\n", ifname,
				strerror(-ret));
			break;
		}
		ret = 0;
	}
	fprintf(stderr, "bluectl: %ld drop event%s\n", c.seen, c.seen == 1 ? "" : "s");
	ring_buffer__free(rb);
	blue_pins_close(&p);
	return ret ? 1 : 0;
}
