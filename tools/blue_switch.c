// SPDX-License-Identifier: MIT
/*
 * blue_switch: the bottleneck switch's control tool (test and bench equipment). It puts
 * bpf/switch_ecn.bpf.c on clsact egress of a port, configures its queue model, and reads
 * back its counters and its queue-depth record. The tbf qdisc that holds and paces the
 * port's queue (the rate) is set with tc by tests/lib/switch.sh; what the program does
 * with tbf's backlog is in include/blue/switch.h.
 *
 *   blue_switch attach IF          load, pin under `pin-dir IF`, attach, reset
 *   blue_switch detach IF          take it off and remove the pins
 *   blue_switch config IF [--buffer B] [--kmin B] [--kmax B] [--pmax P] [--mark on|off]
 *   blue_switch reset IF           counters and record to zero; record time 0 = now
 *   blue_switch stats IF           "name value" lines
 *   blue_switch record IF          CSV time_us,depth_bytes (max depth per 100 us slot)
 *   blue_switch pin-dir IF
 * B: bytes with an optional K or M (binary). P: a fraction (0.2) or a percentage (20%).
 * Pins: /sys/fs/bpf/blue_switch/netns-<cookie>/IF/{prog,sw_cfg,sw_state,sw_ring}, keyed
 * by network namespace as blue's own pins are (include/blue/pins.h).
 */
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "blue/pins.h"
#include "blue/switch.h"
#include "bpf/switch_ecn.skel.h"
#include "tools/common/tool_common.h"

#define SW_PIN_ROOT	BLUE_BPFFS "/blue_switch"
/* our tc filter on clsact egress, so detach removes it and nothing else */
#define SW_TC_HANDLE	0xb5
#define SW_TC_PRIO	1
#define RING_BYTES	((size_t)BLUE_SW_RING_SLOTS * sizeof(struct blue_sw_sample))

struct sw_maps {
	int cfg_fd, st_fd, ring_fd;
};

static const char *const pin_names[] = { "prog", "sw_cfg", "sw_state", "sw_ring" };

static int usage(void)
{
	fprintf(stderr,
		"usage: blue_switch attach|detach|reset|stats|record|pin-dir IF\n"
		"       blue_switch config IF [--buffer B] [--kmin B] [--kmax B] [--pmax P]\n"
		"                             [--mark on|off]\n"
		"  B bytes (150000, 128K), P 0.2 or 20%%\n");
	return 2;
}

static int quiet_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_DEBUG && !getenv("BLUE_SWITCH_VERBOSE") ? 0 :
	       vfprintf(stderr, fmt, ap);
}

/* The pin directory of @ifname: blue's netns-<cookie> component under our own root. */
static int pin_dir(char *buf, size_t len, const char *ifname)
{
	char ns[256];
	const char *leaf;
	int err = blue_pin_dir(ns, sizeof(ns), NULL), n;

	if (err) {
		fprintf(stderr, "blue_switch: cannot name this network namespace: %s\n",
			strerror(-err));
		return err;
	}
	leaf = strrchr(ns, '/') + 1;
	n = snprintf(buf, len, "%s/%s/%s", SW_PIN_ROOT, leaf, ifname);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int pin_path(char *buf, size_t len, const char *dir, const char *name)
{
	int n = snprintf(buf, len, "%s/%s", dir, name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* mkdir -p for the two levels under SW_PIN_ROOT */
static int make_dirs(const char *dir)
{
	char p[512];

	snprintf(p, sizeof(p), "%s", dir);
	for (char *s = p + strlen(BLUE_BPFFS) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		if (mkdir(p, 0700) && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	return mkdir(p, 0700) && errno != EEXIST ? -errno : 0;
}

static int map_check(int fd, const char *name, __u32 value_size, __u32 entries)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	if (info.value_size != value_size || info.max_entries != entries) {
		fprintf(stderr, "blue_switch: pinned %s has value size %u x %u entries, this "
			"build wants %u x %u: detach and attach again\n", name, info.value_size,
			info.max_entries, value_size, entries);
		return -EPROTO;
	}
	return 0;
}

static int maps_open(const char *ifname, struct sw_maps *m)
{
	const struct { const char *name; int *fd; __u32 vs, n; } tab[] = {
		{ "sw_cfg", &m->cfg_fd, sizeof(struct blue_sw_cfg), 1 },
		{ "sw_state", &m->st_fd, sizeof(struct blue_sw_state), 1 },
		{ "sw_ring", &m->ring_fd, sizeof(struct blue_sw_sample), BLUE_SW_RING_SLOTS },
	};
	char dir[512], p[600];
	int err = pin_dir(dir, sizeof(dir), ifname);

	m->cfg_fd = m->st_fd = m->ring_fd = -1;
	if (err)
		return err;
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		if ((err = pin_path(p, sizeof(p), dir, tab[i].name)))
			return err;
		*tab[i].fd = bpf_obj_get(p);
		if (*tab[i].fd < 0) {
			err = -errno;
			fprintf(stderr, "blue_switch: %s: %s (is the switch attached to %s in this "
				"namespace? blue_switch attach %s)\n", p, strerror(-err), ifname,
				ifname);
			return err;
		}
		if ((err = map_check(*tab[i].fd, p, tab[i].vs, tab[i].n)))
			return err;
	}
	return 0;
}

static void maps_close(struct sw_maps *m)
{
	if (m->cfg_fd >= 0)
		close(m->cfg_fd);
	if (m->st_fd >= 0)
		close(m->st_fd);
	if (m->ring_fd >= 0)
		close(m->ring_fd);
}

static int cfg_read(const struct sw_maps *m, struct blue_sw_cfg *c)
{
	__u32 key = 0;

	return bpf_map_lookup_elem(m->cfg_fd, &key, c) ? -errno : 0;
}

static int cfg_write(const struct sw_maps *m, const struct blue_sw_cfg *c)
{
	__u32 key = 0;

	return bpf_map_update_elem(m->cfg_fd, &key, c, 0) ? -errno : 0;
}

static int state_read(const struct sw_maps *m, struct blue_sw_state *s)
{
	__u32 key = 0;

	return bpf_map_lookup_elem_flags(m->st_fd, &key, s, BPF_F_LOCK) ? -errno : 0;
}

/*
 * Everything measured starts again: the record's time 0 is now (CLOCK_MONOTONIC, the
 * clock bpf_ktime_get_ns reads), the counters are zero, the ring is cleared.
 * In that order, so a packet racing the reset can leave at most an entry the clearing
 * of the ring then removes.
 */
static int sw_reset(const struct sw_maps *m)
{
	struct blue_sw_state s = { .min_mark_depth = ~0ull, .min_drop_depth = ~0ull };
	struct blue_sw_cfg c;
	__u32 key = 0;
	void *ring;
	int err;

	if ((err = cfg_read(m, &c)))
		return err;
	c.epoch_ns = tool_now_ns();
	if ((err = cfg_write(m, &c)))
		return err;
	if (bpf_map_update_elem(m->st_fd, &key, &s, BPF_F_LOCK))
		return -errno;
	ring = mmap(NULL, RING_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, m->ring_fd, 0);
	if (ring == MAP_FAILED)
		return -errno;
	memset(ring, 0, RING_BYTES);
	munmap(ring, RING_BYTES);
	return 0;
}

static int cmd_pin_dir(const char *ifname)
{
	char dir[512];
	int err = pin_dir(dir, sizeof(dir), ifname);

	if (!err)
		printf("%s\n", dir);
	return err;
}

static int pins_remove(const char *dir)
{
	char p[600];

	for (size_t i = 0; i < sizeof(pin_names) / sizeof(pin_names[0]); i++)
		if (!pin_path(p, sizeof(p), dir, pin_names[i]))
			unlink(p);
	if (rmdir(dir) && errno != ENOENT)
		return -errno;
	return 0;
}

static int cmd_attach(const char *ifname)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .attach_point = BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = SW_TC_HANDLE, .priority = SW_TC_PRIO);
	struct switch_ecn *skel = NULL;
	struct sw_maps m = { -1, -1, -1 };
	char dir[512], p[600];
	bool pinned = false;
	int err;

	hook.ifindex = (int)if_nametoindex(ifname);
	if (!hook.ifindex) {
		fprintf(stderr, "blue_switch: no interface %s in this namespace\n", ifname);
		return -ENODEV;
	}
	if ((err = pin_dir(dir, sizeof(dir), ifname)))
		return err;
	if (!access(dir, F_OK)) {
		fprintf(stderr, "blue_switch: %s exists: the switch is attached to %s already "
			"(blue_switch detach %s first)\n", dir, ifname, ifname);
		return -EEXIST;
	}
	skel = switch_ecn__open_and_load();
	if (!skel) {
		err = -errno;
		fprintf(stderr, "blue_switch: loading switch_ecn failed: %s (BLUE_SWITCH_VERBOSE=1 "
			"shows the verifier log)\n", strerror(-err));
		goto cleanup;
	}
	if ((err = make_dirs(dir))) {
		fprintf(stderr, "blue_switch: mkdir %s: %s\n", dir, strerror(-err));
		goto cleanup;
	}
	pinned = true;
	struct { const char *name; int fd; } pins[] = {
		{ "prog", bpf_program__fd(skel->progs.switch_ecn) },
		{ "sw_cfg", bpf_map__fd(skel->maps.sw_cfg) },
		{ "sw_state", bpf_map__fd(skel->maps.sw_state) },
		{ "sw_ring", bpf_map__fd(skel->maps.sw_ring) },
	};
	for (size_t i = 0; i < sizeof(pins) / sizeof(pins[0]); i++) {
		if ((err = pin_path(p, sizeof(p), dir, pins[i].name)))
			goto cleanup;
		if (bpf_obj_pin(pins[i].fd, p)) {
			err = -errno;
			fprintf(stderr, "blue_switch: pin %s: %s\n", p, strerror(-err));
			goto cleanup;
		}
	}
	m.cfg_fd = pins[1].fd;
	m.st_fd = pins[2].fd;
	m.ring_fd = pins[3].fd;
	if ((err = sw_reset(&m))) {
		fprintf(stderr, "blue_switch: reset: %s\n", strerror(-err));
		goto cleanup;
	}
	err = bpf_tc_hook_create(&hook);
	if (err && err != -EEXIST) {
		fprintf(stderr, "blue_switch: clsact on %s: %s\n", ifname, strerror(-err));
		goto cleanup;
	}
	opts.prog_fd = pins[0].fd;
	if ((err = bpf_tc_attach(&hook, &opts))) {
		fprintf(stderr, "blue_switch: attaching to %s egress: %s (a filter with handle "
			"%#x prio %d there already?)\n", ifname, strerror(-err), SW_TC_HANDLE,
			SW_TC_PRIO);
		goto cleanup;
	}
	printf("attached to %s egress, pins in %s (not configured: blue_switch config %s "
	       "--buffer B)\n", ifname, dir, ifname);
	err = 0;
cleanup:
	if (err && pinned)
		pins_remove(dir);
	switch_ecn__destroy(skel);	/* the tc filter and the pins hold what stays */
	return err;
}

static int cmd_detach(const char *ifname)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .attach_point = BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = SW_TC_HANDLE, .priority = SW_TC_PRIO);
	char dir[512];
	int err, ret = 0;

	if ((err = pin_dir(dir, sizeof(dir), ifname)))
		return err;
	if (access(dir, F_OK)) {
		fprintf(stderr, "blue_switch: %s: no switch attached to %s in this namespace\n",
			dir, ifname);
		return -ENOENT;
	}
	hook.ifindex = (int)if_nametoindex(ifname);
	if (hook.ifindex) {
		err = bpf_tc_detach(&hook, &opts);
		if (err && err != -ENOENT) {
			fprintf(stderr, "blue_switch: detaching from %s: %s\n", ifname,
				strerror(-err));
			ret = err;
		}
	} else {
		fprintf(stderr, "blue_switch: %s is gone; removing its pins\n", ifname);
	}
	if ((err = pins_remove(dir))) {
		fprintf(stderr, "blue_switch: rmdir %s: %s\n", dir, strerror(-err));
		ret = ret ? ret : err;
	}
	return ret;
}

/* a probability: 0.2 or 20%, as a fraction of 2^32 (1 stored as 0xffffffff) */
static int parse_prob(const char *s, __u32 *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end != s && *end == '%' && !end[1])
		v /= 100;
	else if (end == s || *end)
		v = -1;
	if (v < 0 || v > 1) {
		fprintf(stderr, "blue_switch: --pmax %s: want a probability, 0..1 or 0%%..100%%\n", s);
		return -EINVAL;
	}
	*out = v >= 1 ? 0xffffffffu : (__u32)(v * 4294967296.0);
	return 0;
}

static int parse_bytes(const char *what, const char *s, __u32 *out)
{
	long long v = tool_num_arg(what, s, 0, UINT32_MAX, true);

	if (v < 0)
		return -EINVAL;
	*out = (__u32)v;
	return 0;
}

/* The model's preconditions (include/blue/switch.h), each error naming the option. */
static int cfg_check(const struct blue_sw_cfg *c)
{
	if (!c->buffer_bytes || c->buffer_bytes > BLUE_SW_BUFFER_MAX) {
		fprintf(stderr, "blue_switch: --buffer %u: want 1 byte up to %u (64M)\n",
			c->buffer_bytes, BLUE_SW_BUFFER_MAX);
		return -EINVAL;
	}
	if (c->kmin_bytes > c->kmax_bytes || c->kmax_bytes > c->buffer_bytes) {
		fprintf(stderr, "blue_switch: want --kmin (%u) <= --kmax (%u) <= --buffer (%u)\n",
			c->kmin_bytes, c->kmax_bytes, c->buffer_bytes);
		return -EINVAL;
	}
	return 0;
}

static int cmd_config(const char *ifname, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "buffer", required_argument, NULL, 'b' },
		{ "kmin", required_argument, NULL, 'k' },
		{ "kmax", required_argument, NULL, 'K' },
		{ "pmax", required_argument, NULL, 'p' },
		{ "mark", required_argument, NULL, 'm' },
		{ 0 },
	};
	struct sw_maps m;
	struct blue_sw_cfg c;
	int err, o;

	if ((err = maps_open(ifname, &m)) || (err = cfg_read(&m, &c)))
		goto out;
	optind = 1;
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'b': err = parse_bytes("--buffer", optarg, &c.buffer_bytes); break;
		case 'k': err = parse_bytes("--kmin", optarg, &c.kmin_bytes); break;
		case 'K': err = parse_bytes("--kmax", optarg, &c.kmax_bytes); break;
		case 'p': err = parse_prob(optarg, &c.pmax); break;
		case 'm':
			if (!strcmp(optarg, "on"))
				c.flags |= BLUE_SW_F_MARK;
			else if (!strcmp(optarg, "off"))
				c.flags &= ~BLUE_SW_F_MARK;
			else {
				fprintf(stderr, "blue_switch: --mark %s: want on or off\n", optarg);
				err = -EINVAL;
			}
			break;
		default:
			err = -EINVAL;
		}
		if (err)
			goto out;
	}
	if (optind != argc) {
		fprintf(stderr, "blue_switch: config: unexpected argument %s\n", argv[optind]);
		err = -EINVAL;
		goto out;
	}
	if (!(err = cfg_check(&c)))
		err = cfg_write(&m, &c);
out:
	maps_close(&m);
	return err;
}

static int cmd_reset(const char *ifname)
{
	struct sw_maps m;
	int err = maps_open(ifname, &m);

	if (!err)
		err = sw_reset(&m);
	maps_close(&m);
	return err;
}

static int cmd_stats(const char *ifname)
{
	struct sw_maps m;
	struct blue_sw_state s;
	struct blue_sw_cfg c;
	int err;

	if ((err = maps_open(ifname, &m)) || (err = cfg_read(&m, &c)) ||
	    (err = state_read(&m, &s)))
		goto out;
	/* "none" for the min depths until something was marked or dropped */
#define MIN_OR_NONE(v) ((v) == ~0ull ? -1ll : (long long)(v))
	printf("buffer_bytes %u\nkmin_bytes %u\nkmax_bytes %u\npmax %.6f\nmark %s\n",
	       c.buffer_bytes, c.kmin_bytes, c.kmax_bytes,
	       c.pmax / 4294967296.0, c.flags & BLUE_SW_F_MARK ? "on" : "off");
	printf("pkts %llu\nbytes %llu\nmarked %llu\nce_in %llu\nnotect_hot %llu\n"
	       "dropped %llu\ndropped_bytes %llu\nmax_depth %llu\n"
	       "min_mark_depth %lld\nmax_mark_depth %llu\nmin_drop_depth %lld\n",
	       (unsigned long long)s.pkts, (unsigned long long)s.bytes,
	       (unsigned long long)s.marked, (unsigned long long)s.ce_in,
	       (unsigned long long)s.notect_hot, (unsigned long long)s.dropped,
	       (unsigned long long)s.dropped_bytes, (unsigned long long)s.max_depth,
	       MIN_OR_NONE(s.min_mark_depth), (unsigned long long)s.max_mark_depth,
	       MIN_OR_NONE(s.min_drop_depth));
out:
	maps_close(&m);
	return err;
}

static int cmp_slot(const void *a, const void *b)
{
	const struct blue_sw_sample *x = a, *y = b;

	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

static int cmd_record(const char *ifname)
{
	struct blue_sw_sample *ring, *rows;
	struct blue_sw_state s;
	struct sw_maps m;
	size_t n = 0;
	int err;

	if ((err = maps_open(ifname, &m)) || (err = state_read(&m, &s)))
		goto out;
	ring = mmap(NULL, RING_BYTES, PROT_READ, MAP_SHARED, m.ring_fd, 0);
	if (ring == MAP_FAILED) {
		err = -errno;
		goto out;
	}
	rows = malloc(RING_BYTES + sizeof(*rows));
	if (!rows) {
		err = -ENOMEM;
		munmap(ring, RING_BYTES);
		goto out;
	}
	for (size_t i = 0; i < BLUE_SW_RING_SLOTS; i++)
		if (ring[i].slot && ring[i].slot != s.cur_slot)
			rows[n++] = ring[i];
	munmap(ring, RING_BYTES);
	/* the slot still being filled is in the state, not yet in the ring */
	if (s.cur_slot)
		rows[n++] = (struct blue_sw_sample){ s.cur_slot, s.cur_max };
	qsort(rows, n, sizeof(*rows), cmp_slot);
	printf("time_us,depth_bytes\n");
	for (size_t i = 0; i < n; i++)
		printf("%llu,%llu\n", (unsigned long long)((rows[i].slot - 1) *
		       (BLUE_SW_SLOT_NS / 1000)), (unsigned long long)rows[i].max_depth);
	free(rows);
out:
	maps_close(&m);
	return err;
}

int main(int argc, char **argv)
{
	const char *cmd, *ifname;
	int err;

	if (argc < 3)
		return usage();
	cmd = argv[1];
	ifname = argv[2];
	if (strlen(ifname) >= IF_NAMESIZE || strchr(ifname, '/')) {
		fprintf(stderr, "blue_switch: %s: not an interface name\n", ifname);
		return 2;
	}
	libbpf_set_print(quiet_libbpf);
	if (!strcmp(cmd, "config"))
		err = cmd_config(ifname, argc - 2, argv + 2);
	else if (argc != 3)
		return usage();
	else if (!strcmp(cmd, "attach"))
		err = cmd_attach(ifname);
	else if (!strcmp(cmd, "detach"))
		err = cmd_detach(ifname);
	else if (!strcmp(cmd, "reset"))
		err = cmd_reset(ifname);
	else if (!strcmp(cmd, "stats"))
		err = cmd_stats(ifname);
	else if (!strcmp(cmd, "record"))
		err = cmd_record(ifname);
	else if (!strcmp(cmd, "pin-dir"))
		err = cmd_pin_dir(ifname);
	else
		return usage();
	if (err && err != -EINVAL && err != -ENOENT && err != -EEXIST && err != -ENODEV &&
	    err != -EPROTO)
		fprintf(stderr, "blue_switch %s %s: %s\n", cmd, ifname, strerror(-err));
	return err ? 1 : 0;
}
