// SPDX-License-Identifier: MIT
/*
 * One read of everything a netdev's pins show: the XDP verdict counters, the device
 * statistics and the diagnostics switch, and the QP slots in use. The maps keep
 * changing underneath (the runtime and the XDP program write them), so each QP entry
 * and each 64-bit counter is copied once and the commands work on the copy.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "tools/bluectl/bluectl.h"

uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const char *qp_state_name(unsigned int s)
{
	static const char *const names[] = {
		[BLUE_QPS_RESET] = "RESET", [BLUE_QPS_INIT] = "INIT", [BLUE_QPS_RTR] = "RTR",
		[BLUE_QPS_RTS] = "RTS", [BLUE_QPS_SQD] = "SQD", [BLUE_QPS_SQE] = "SQE",
		[BLUE_QPS_ERR] = "ERR",
	};

	return s < sizeof(names) / sizeof(names[0]) && names[s] ? names[s] : "?";
}

const char *qp_type_name(unsigned int t)
{
	switch (t) {
	case BLUE_QPT_NONE:	return "-";
	case BLUE_QPT_RC:	return "RC";
	case BLUE_QPT_UC:	return "UC";
	case BLUE_QPT_UD:	return "UD";
	default:		return "?";
	}
}

const char *ip_str(uint32_t be_addr, char *buf)
{
	struct in_addr a = { .s_addr = be_addr };

	return inet_ntop(AF_INET, &a, buf, INET_ADDRSTRLEN);
}

const char *peer_addr_str(const struct blue_qp_ctx *q, char *buf)
{
	static const uint8_t zero[16];

	if (memcmp(q->peer_ip6, zero, sizeof(zero)))
		return inet_ntop(AF_INET6, q->peer_ip6, buf, INET6_ADDRSTRLEN);
	return ip_str(q->peer_ip, buf);
}

uint64_t hist_count(const struct blue_hist *h)
{
	uint64_t n = 0;
	unsigned int i;

	for (i = 0; i < BLUE_HIST_BUCKETS; i++)
		n += h->bucket[i];
	return n;
}

/* A slot is in use when it holds a QPN whose low bits name that very slot. */
static bool slot_in_use(const struct blue_qp_ctx *q, uint32_t slot)
{
	return q->qpn != 0 && blue_qpn_slot(q->qpn) == slot;
}

/* Like `ss`: the QPs of one peer together, in QPN order. */
static int by_peer(const void *a, const void *b)
{
	const struct blue_qp_ctx *x = a, *y = b;
	uint32_t px = ntohl(x->peer_ip), py = ntohl(y->peer_ip);

	if (px != py)
		return px < py ? -1 : 1;
	return x->qpn < y->qpn ? -1 : x->qpn > y->qpn;
}

/*
 * Is queue @q served? Its server holds the queue's mark on the pin directory
 * (include/blue/pins.h), which tells the truth where the owner's PID cannot (another
 * PID namespace, a PID reused). Without the directory (@probe < 0), a recorded owner
 * counts as serving.
 */
static bool queue_served(int probe, unsigned int q, __u32 owner_pid)
{
	if (probe < 0)
		return owner_pid != 0;
	return blue_pin_mark_held(probe, BLUE_PIN_MARK_QUEUE(q)) != 0;
}

/*
 * One dev_stats entry per netdev queue, each written by the context that serves it:
 * the device is their sum. Everything after published_ns is a __u64 counter (hal, eng,
 * histograms), so the sum runs over them as such. owner_pid is the first queue owner
 * still running, else the lowest queue's last owner (a crash leaves it set), else 0.
 */
static void ds_sum_queues(struct snap *s, const struct blue_dev_stats *ds, int probe)
{
	const size_t off = offsetof(struct blue_dev_stats, hal);
	const size_t n = (sizeof(*ds) - off) / sizeof(__u64);
	__u64 *sum = (__u64 *)((uint8_t *)&s->ds + off);
	unsigned int q;
	size_t i;

	_Static_assert((sizeof(struct blue_dev_stats) - offsetof(struct blue_dev_stats, hal)) %
		       sizeof(__u64) == 0, "dev_stats counters are __u64");
	memset(&s->ds, 0, sizeof(s->ds));
	_Static_assert(BLUE_MAX_QUEUES <= 32, "live_queues is a 32-bit mask");
	for (q = 0; q < BLUE_MAX_QUEUES; q++) {
		const struct blue_dev_stats *e = &ds[q];
		const __u64 *v = (const __u64 *)((const uint8_t *)e + off);

		s->queue_owner[q] = e->owner_pid;
		if (e->owner_pid && queue_served(probe, q, e->owner_pid)) {
			s->live_queues |= 1u << q;
			if (!s->owner_alive)
				s->ds.owner_pid = e->owner_pid;
			s->owner_alive = true;
		} else if (e->owner_pid && !s->ds.owner_pid) {
			s->ds.owner_pid = e->owner_pid;
		}
		s->ds.opens += e->opens;
		if (e->published_ns > s->ds.published_ns)
			s->ds.published_ns = e->published_ns;
		for (i = 0; i < n; i++)
			sum[i] += v[i];
	}
}

/* The change counters of the tune map; 0, or 1 after saying why. */
static int snap_tune(struct snap *s, int tune_fd)
{
	struct blue_tune_entry *t = blue_pins_mmap_tune(tune_fd);
	uint32_t slot;

	s->tune_slot_changes = calloc(BLUE_MAX_QP, sizeof(*s->tune_slot_changes));
	s->tune_slot_qpn = calloc(BLUE_MAX_QP, sizeof(*s->tune_slot_qpn));
	if (!t || !s->tune_slot_changes || !s->tune_slot_qpn) {
		fprintf(stderr, "bluectl: %s: cannot map the %s map: %s\n", s->ifname,
			BLUE_PIN_TUNE, strerror(t ? ENOMEM : errno));
		blue_pins_munmap_tune(t);
		return 1;
	}
	s->tune_changes = t[0].changes;
	for (slot = 0; slot < BLUE_MAX_QP; slot++) {
		s->tune_slot_qpn[slot] = __atomic_load_n(&t[1 + slot].qpn, __ATOMIC_ACQUIRE);
		s->tune_slot_changes[slot] = t[1 + slot].changes;
	}
	blue_pins_munmap_tune(t);
	return 0;
}

uint64_t snap_tune_changes(const struct snap *s, const struct blue_qp_ctx *q)
{
	uint32_t slot = blue_qpn_slot(q->qpn);

	return s->tune_slot_qpn && s->tune_slot_qpn[slot] == q->qpn ?
		s->tune_slot_changes[slot] : 0;
}

int snap_take(const char *ifname, struct snap *s)
{
	struct blue_qp_ctx *table = NULL;
	struct blue_dev_stats *ds = NULL;
	struct blue_diag_cfg *diag = NULL;
	struct blue_pins p;
	uint32_t slot;
	char dir[256];
	int ret, probe, rc = 1;

	memset(s, 0, sizeof(*s));
	s->ifname = ifname;
	if (blue_pins_open(ifname, &p))
		return 1;
	ret = blue_pins_read_stats(p.stats_fd, s->xdp);
	if (ret) {
		fprintf(stderr, "bluectl: %s: reading the %s map failed: %s\n", ifname,
			BLUE_PIN_STATS, strerror(-ret));
		goto out;
	}
	/* read-only: the runtime and the XDP program keep writing them */
	table = blue_pins_mmap_qp_ctx(p.qp_ctx_fd, false);
	ds = blue_pins_mmap_dev_stats(p.dev_stats_fd, false);
	diag = blue_pins_mmap_diag(p.diag_fd, false);
	if (!table || !ds || !diag) {
		fprintf(stderr, "bluectl: %s: cannot map the %s, %s and %s maps: %s\n", ifname,
			BLUE_PIN_QP_CTX, BLUE_PIN_DEV_STATS, BLUE_PIN_DIAG, strerror(errno));
		goto out;
	}
	s->t_ns = mono_ns();
	probe = blue_pin_path(dir, sizeof(dir), ifname, NULL) ? -1 :
		open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ds_sum_queues(s, ds, probe);
	if (probe >= 0)
		close(probe);
	memcpy(&s->diag, diag, sizeof(s->diag));
	s->qps = calloc(BLUE_MAX_QP, sizeof(*s->qps));
	if (!s->qps) {
		fprintf(stderr, "bluectl: out of memory\n");
		goto out;
	}
	for (slot = 0; slot < BLUE_MAX_QP; slot++) {
		struct blue_qp_ctx *q = &s->qps[s->nqps];

		memcpy(q, &table[slot], sizeof(*q));
		if (slot_in_use(q, slot))
			s->nqps++;
	}
	qsort(s->qps, s->nqps, sizeof(*s->qps), by_peer);
	if (snap_tune(s, p.tune_fd))
		goto out;
	rc = 0;
out:
	blue_pins_munmap_qp_ctx(table);
	blue_pins_munmap_dev_stats(ds);
	blue_pins_munmap_diag(diag);
	blue_pins_close(&p);
	if (rc)
		snap_free(s);
	return rc;
}

void snap_free(struct snap *s)
{
	free(s->qps);
	s->qps = NULL;
	free(s->tune_slot_changes);
	s->tune_slot_changes = NULL;
	free(s->tune_slot_qpn);
	s->tune_slot_qpn = NULL;
	s->nqps = 0;
}

int snap_show(const char *ifname, const struct opts *o,
	      void (*json_body)(struct jw *w, const struct snap *s),
	      void (*text)(const struct snap *s, FILE *f))
{
	struct snap s;

	if (snap_take(ifname, &s))
		return 1;
	if (o->json) {
		struct jw w;

		jw_init(&w, stdout);
		jw_obj(&w, NULL);
		json_body(&w, &s);
		jw_obj_end(&w);
		jw_end(&w);
	} else {
		text(&s, stdout);
	}
	snap_free(&s);
	return 0;
}
