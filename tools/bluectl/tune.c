// SPDX-License-Identifier: MIT
/*
 * bluectl set|get IFNAME [qp QPN] key=value ...: the retransmission policy and timer,
 * the congestion control algorithm and each of its parameters, and the diagnostics
 * switch, changed under running engines through the pinned tune map
 * (include/blue/tune.h; the keys are its BLUE_TUNE_KEYS). `set` writes a request, then
 * waits (at most TUNE_WAIT_MS) for the engine to acknowledge it and says how long it
 * took, or what it refused, or that no engine answered. `get` prints what a QP runs
 * now (its engine publishes it), or the interface's defaults.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "tools/bluectl/bluectl.h"

/* Engines look once per pass; an engine asleep in event mode answers at its next
 * wake-up, which this does not wait for (runtime/tune.h). */
#define TUNE_WAIT_MS	200

/* What a command line names: the interface's defaults (qpn 0) or one QP. */
struct target {
	const char *ifname;
	__u32 qpn;
	int nkv;	/* key=value arguments from kv */
	char **kv;
};

/* IFNAME [qp QPN] then the rest: 0, or EXIT_USAGE after saying why. */
static int target_parse(const char *cmd, const char *ifname, int argc, char **args,
			struct target *t)
{
	int ret;

	memset(t, 0, sizeof(*t));
	t->ifname = ifname;
	if (argc >= 1 && !strcmp(args[0], "qp")) {
		if (argc < 2)
			return usage_error("'%s IFNAME qp' needs a QPN", cmd);
		if ((ret = qpn_parse(args[1], &t->qpn)))
			return ret;
		args += 2;
		argc -= 2;
	}
	t->nkv = argc;
	t->kv = args;
	return 0;
}

/* The map entry @t names, after checking that QP exists: NULL after saying why. */
static struct blue_tune_entry *target_entry(const struct target *t, struct blue_tune_entry *map,
					    const struct snap *s)
{
	if (!t->qpn)
		return &map[0];
	if (!snap_find_qp(s, t->qpn))
		return NULL;
	return &map[1 + blue_qpn_slot(t->qpn)];
}

/* Keys of @mask as "a=1 b=2" from @v into @buf. */
static void kv_list(uint64_t mask, const struct blue_tune_vals *v, char *buf, size_t len)
{
	size_t n = 0;
	char val[32];
	int k;

	buf[0] = '\0';
	for (k = 0; k < BLUE_TUNE__MAX && n < len; k++) {
		if (!(mask & BLUE_TUNE_BIT(k)))
			continue;
		blue_tune_format(k, v, val, sizeof(val));
		n += (size_t)snprintf(buf + n, len - n, "%s%s=%s", n ? " " : "",
				      blue_tune_keys[k].name, val);
	}
}

static void sleep_us(long us)
{
	struct timespec ts = { 0, us * 1000 };

	nanosleep(&ts, NULL);
}

/* Wait for @e to acknowledge @gen: the microseconds it took, or -1 after TUNE_WAIT_MS. */
static long wait_ack(struct blue_tune_entry *e, uint64_t gen, uint64_t t0)
{
	uint64_t end = t0 + TUNE_WAIT_MS * 1000000ull, now;

	for (;;) {
		now = mono_ns();
		if (__atomic_load_n(&e->applied_gen, __ATOMIC_ACQUIRE) >= gen)
			return (long)((now - t0) / 1000);
		if (now >= end)
			return -1;
		sleep_us(20);
	}
}

static void where(const struct target *t, char *buf, size_t len)
{
	if (t->qpn)
		snprintf(buf, len, "%s qp 0x%06x", t->ifname, t->qpn);
	else
		snprintf(buf, len, "%s", t->ifname);
}

/* The engines' answer to @gen, reported; the exit status. */
static int report(const struct target *t, const struct snap *s, struct blue_tune_entry *e,
		  uint64_t gen, uint64_t mask, const struct blue_tune_vals *v, long us,
		  const struct opts *o)
{
	char who[64], list[1024], bad[512];
	uint64_t refused = us >= 0 ? e->refused & mask : 0;
	bool served = s->live_queues != 0;

	where(t, who, sizeof(who));
	kv_list(mask & ~refused, v, list, sizeof(list));
	kv_list(refused, v, bad, sizeof(bad));
	if (o->json) {
		struct jw w;

		jw_init(&w, stdout);
		jw_obj(&w, NULL);
		jw_str(&w, "ifname", t->ifname);
		if (t->qpn)
			jw_u64(&w, "qpn", t->qpn);
		jw_u64(&w, "gen", gen);
		jw_bool(&w, "acknowledged", us >= 0);
		if (us >= 0)
			jw_u64(&w, "ack_us", (uint64_t)us);
		jw_str(&w, "applied", us >= 0 ? list : "");
		jw_str(&w, "refused", bad);
		if (refused)
			jw_str(&w, "error", strerror(e->err));
		jw_u64(&w, "changes", e->changes);
		jw_obj_end(&w);
		jw_end(&w);
	}
	if (us < 0) {
		if (!t->qpn && !served) {
			if (!o->json)
				printf("%s: no engine has %s open; stored as the defaults of the "
				       "QPs created from now on: %s\n", who, t->ifname, list);
			return 0;
		}
		fprintf(stderr, "bluectl: %s: no engine acknowledged within %d ms (%s); the "
			"change is stored and lands at its next pass: an engine idle in event "
			"mode makes one at its next packet, completion or timer\n", who,
			TUNE_WAIT_MS, t->qpn ? "the QP's owner is not running its engine"
					     : "is every engine on it asleep?");
		return 1;
	}
	if (t->qpn && e->err == ESRCH) {
		fprintf(stderr, "bluectl: %s: the QP went away before its engine applied the "
			"change\n", who);
		return 1;
	}
	if (!o->json && (mask & ~refused))
		printf("%s: applied in %ld us: %s\n", who, us, list);
	if (refused) {
		fprintf(stderr, "bluectl: %s: the engine refused %s: %s (its log says why)\n",
			who, bad, strerror(e->err));
		return 1;
	}
	return 0;
}

/* diag=... is the diag map's switch, as `bluectl diag` writes it. */
static int set_diag(const struct target *t, int diag_fd, uint32_t flags, const struct opts *o)
{
	struct blue_diag_cfg *d = blue_pins_mmap_diag(diag_fd, true);
	char val[32];
	struct blue_tune_vals v = { .diag = flags };

	if (!d) {
		fprintf(stderr, "bluectl: %s: cannot map the %s map: %s\n", t->ifname,
			BLUE_PIN_DIAG, strerror(errno));
		return 1;
	}
	__atomic_store_n(&d->flags, flags, __ATOMIC_RELEASE);
	blue_pins_munmap_diag(d);
	blue_tune_format(BLUE_TUNE_DIAG, &v, val, sizeof(val));
	if (!o->json)
		printf("%s: diag=%s (takes effect at once)\n", t->ifname, val);
	return 0;
}

int cmd_set(const char *ifname, int argc, char **args, const struct opts *o)
{
	struct blue_tune_entry *map, *e;
	struct blue_tune_vals v;
	uint64_t mask = 0, gen, t0;
	struct blue_pins p;
	struct target t;
	struct snap s;
	char err[1536];
	int i, ret;

	if ((ret = target_parse("set", ifname, argc, args, &t)))
		return ret;
	if (!t.nkv)
		return usage_error("'set %s' needs at least one key=value", ifname);
	memset(&v, 0, sizeof(v));
	for (i = 0; i < t.nkv; i++) {
		if (blue_tune_parse(t.kv[i], &v, &mask, err, sizeof(err))) {
			fprintf(stderr, "bluectl: set: %s\n", err);
			return EXIT_USAGE;
		}
	}
	if (t.qpn && (mask & BLUE_TUNE_BIT(BLUE_TUNE_DIAG))) {
		fprintf(stderr, "bluectl: set: diag is the interface's switch, not a QP's: "
			"'bluectl set %s diag=...'\n", ifname);
		return EXIT_USAGE;
	}
	if (snap_take(ifname, &s))
		return 1;
	if (blue_pins_open(ifname, &p)) {
		snap_free(&s);
		return 1;
	}
	ret = 1;
	map = blue_pins_mmap_tune(p.tune_fd);
	if (!map) {
		fprintf(stderr, "bluectl: %s: cannot map the %s map: %s\n", ifname,
			BLUE_PIN_TUNE, strerror(errno));
		goto out;
	}
	e = target_entry(&t, map, &s);
	if (!e)
		goto out;
	ret = 0;
	if (mask & BLUE_TUNE_BIT(BLUE_TUNE_DIAG))
		ret = set_diag(&t, p.diag_fd, v.diag, o);
	mask &= ~BLUE_TUNE_BIT(BLUE_TUNE_DIAG);
	if (mask && !ret) {
		t0 = mono_ns();
		gen = blue_tune_request(map, (unsigned int)(e - map), t.qpn, &v, mask);
		ret = report(&t, &s, e, gen, mask, &v, wait_ack(e, gen, t0), o);
	}
out:
	blue_pins_munmap_tune(map);
	blue_pins_close(&p);
	snap_free(&s);
	return ret;
}

/* What @t runs now (a QP's published values) or the interface's defaults, into @v. */
static int effective(const struct target *t, struct blue_tune_entry *e,
		     const struct blue_diag_cfg *d, struct blue_tune_vals *v)
{
	if (t->qpn) {
		if (__atomic_load_n(&e->qpn, __ATOMIC_ACQUIRE) != t->qpn) {
			fprintf(stderr, "bluectl: %s: QP 0x%06x has not published its settings "
				"(its engine is an older build, or the QP is being created)\n",
				t->ifname, t->qpn);
			return 1;
		}
		*v = e->eff;
	} else {
		blue_tune_defaults(v);
		blue_tune_merge(v, &e->req, e->mask);
	}
	v->diag = d->flags;
	return 0;
}

static void get_print(const struct target *t, const struct blue_tune_vals *v,
		      const struct blue_tune_entry *e, const struct opts *o)
{
	char val[32];
	int k;

	if (o->json) {
		struct jw w;

		jw_init(&w, stdout);
		jw_obj(&w, NULL);
		jw_str(&w, "ifname", t->ifname);
		if (t->qpn)
			jw_u64(&w, "qpn", t->qpn);
		jw_obj(&w, "values");
		for (k = 0; k < BLUE_TUNE__MAX; k++) {
			blue_tune_format(k, v, val, sizeof(val));
			if (blue_tune_keys[k].kind == BLUE_TK_U)
				jw_u64(&w, blue_tune_keys[k].name, blue_tune_get(v, k));
			else
				jw_str(&w, blue_tune_keys[k].name, val);
		}
		jw_obj_end(&w);
		jw_u64(&w, "changes", e->changes);
		jw_u64(&w, "gen", e->gen);
		jw_u64(&w, "applied_gen", e->applied_gen);
		jw_obj_end(&w);
		jw_end(&w);
		return;
	}
	for (k = 0; k < BLUE_TUNE__MAX; k++) {
		blue_tune_format(k, v, val, sizeof(val));
		printf("%s=%s\n", blue_tune_keys[k].name, val);
	}
	printf("changes=%llu\n", (unsigned long long)e->changes);
}

int cmd_get(const char *ifname, int argc, char **args, const struct opts *o)
{
	struct blue_tune_entry *map = NULL, *e;
	struct blue_tune_vals v;
	struct blue_pins p;
	struct target t;
	struct snap s;
	int ret;

	if ((ret = target_parse("get", ifname, argc, args, &t)))
		return ret;
	if (t.nkv)
		return usage_error("'get' takes IFNAME [qp QPN] only ('%s'?)", t.kv[0]);
	if (snap_take(ifname, &s))
		return 1;
	if (blue_pins_open(ifname, &p)) {
		snap_free(&s);
		return 1;
	}
	ret = 1;
	map = blue_pins_mmap_tune(p.tune_fd);
	if (!map)
		fprintf(stderr, "bluectl: %s: cannot map the %s map: %s\n", ifname,
			BLUE_PIN_TUNE, strerror(errno));
	else if ((e = target_entry(&t, map, &s)) && !effective(&t, e, &s.diag, &v)) {
		get_print(&t, &v, e, o);
		ret = 0;
	}
	blue_pins_munmap_tune(map);
	blue_pins_close(&p);
	snap_free(&s);
	return ret;
}
