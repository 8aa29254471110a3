// SPDX-License-Identifier: MIT
/*
 * blue_fault: a seeded fault injector for RoCEv2, standing in the path between two
 * namespaces. The kernel here has no netem, so this is our own: a middle namespace
 * holds one veth end towards each endpoint, and blue_fault forwards every frame between
 * the two through AF_XDP (copy mode, our own XDP program bpf/fault_fwd.bpf.c), applying
 * faults to RoCEv2 frames only. tests/lib/fault.sh builds that topology.
 *
 *   blue_fault --if-a IF --if-b IF [fault options] [--stats-file F] [--log F]
 *              [--duration SEC]
 *   blue_fault --dry-run IN.pcap [--out OUT.pcap] [fault options] [--stats-file F] [--log F]
 *
 * Directions: a2b is what enters on --if-a (from A) and leaves on --if-b. In a dry run,
 * side A is the source MAC of the capture's first frame, and time is the capture's.
 *
 * Fault options (probabilities are per RoCEv2 frame, 0..1; see tools/fault/engine.h
 * for the order they apply in):
 *   --seed S                 PRNG seed (default 1); the same seed and the same frames
 *                            give the same faults
 *   --direction a2b|b2a|both where faults apply (default both)
 *   --loss P                 random loss
 *   --drop-opcode LIST       targeted drop by BTH opcode: numbers or names (ack,
 *                            atomic-ack, read-req, read-resp, last, atomic, cnp), "," sep.
 *   --drop-psn LIST          targeted drop by PSN: N or LO-HI ranges (with --drop-opcode:
 *                            both must match)
 *   --drop-first N           only the first N matches (their retransmissions pass)
 *   --drop-rate P            chance that a match is dropped (default 1)
 *   --dup P                  duplication
 *   --reorder P              hold a frame back until K later frames passed, K uniform
 *   --reorder-window W       in 1..W (default 8)
 *   --reorder-timeout-us T   or until T us passed (default 1000)
 *   --corrupt P              flip one bit the ICRC covers
 *   --corrupt-where any|header|payload   (default any)
 *   --ecn P                  set ECN CE (11) and fix the IP checksum
 *   --delay-us N             hold frames N us
 *   --delay-rate P           the fraction of frames delayed (default 1: all, in order)
 *   --hold-frames N          buffers for held frames, both directions (default 4096, 4 KiB
 *                            each); a frame that finds none is lost as "overflow"
 *
 * Counters: per direction and in total (and RoCEv2 frames per BTH opcode, "a2b.op_0x11"),
 * printed at exit (SIGTERM, SIGINT, --duration,
 * end of the capture) and on SIGUSR1, and written as "key value" lines to --stats-file
 * (replaced atomically). --log writes one line per fault ("a2b 17 op 0x0a psn 5
 * drop_random"), which carries no time, so two runs over the same frames compare equal.
 *
 * Prints "READY ..." on stdout once both netdevs forward. Exit 0, 1 on a setup error,
 * 2 on bad usage.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>

#include "tools/fault/engine.h"
#include "tools/fault/pcap.h"
#include "tools/fault/port.h"

#define RX_BATCH	64
#define MAX_WAIT_NS	100000000ull	/* poll at least every 100 ms: signals, duration */
#define TX_RETRY_NS	20000ull
#define POOL_FRAMES	4096u		/* default frames the engine may hold */

struct fwd {
	struct fault_engine e;
	struct fport port[FAULT_NDIR];	/* [FAULT_A2B]: --if-a, the ingress of a2b */
	uint64_t now;
	uint64_t sock_drop[FAULT_NDIR];	/* read from the sockets while they are open */
	/* dry run */
	FILE *out;
	uint8_t side_a[6];
	bool have_side_a;
	uint64_t out_errors;
};

static volatile sig_atomic_t g_stop, g_dump;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		g_dump = 1;
	else
		g_stop = 1;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* --- counters ------------------------------------------------------------------ */

/* Frames the kernel dropped at our ingress sockets: loss we did not choose. */
static void read_sock_drops(struct fwd *w)
{
	unsigned int d;

	for (d = 0; d < FAULT_NDIR; d++)
		if (w->port[d].xsk)
			w->sock_drop[d] = fport_rx_dropped(&w->port[d]);
}

static void print_stats(const struct fwd *w, FILE *f, bool live)
{
	unsigned int d, c;

	fprintf(f, "seed %" PRIu64 "\n", w->e.cfg.seed);
	for (d = 0; d < FAULT_NDIR; d++) {
		for (c = 0; c < FC_MAX; c++)
			fprintf(f, "%s.%s %" PRIu64 "\n", fault_dir_name[d], fault_ctr_name[c],
				w->e.dir[d].ctr[c]);
		if (live)
			fprintf(f, "%s.sock_drop %" PRIu64 "\n", fault_dir_name[d],
				w->sock_drop[d]);
		for (c = 0; c < 256; c++)
			if (w->e.dir[d].op[c])
				fprintf(f, "%s.op_0x%02x %" PRIu64 "\n", fault_dir_name[d], c,
					w->e.dir[d].op[c]);
	}
	for (c = 0; c < FC_MAX; c++)
		fprintf(f, "all.%s %" PRIu64 "\n", fault_ctr_name[c],
			w->e.dir[0].ctr[c] + w->e.dir[1].ctr[c]);
}

static void write_stats(const struct fwd *w, const char *path, bool live)
{
	char tmp[4096];
	FILE *f;

	if (!path)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "blue_fault: %s: %s\n", tmp, strerror(errno));
		return;
	}
	print_stats(w, f, live);
	if (fclose(f) || rename(tmp, path))
		fprintf(stderr, "blue_fault: writing %s: %s\n", path, strerror(errno));
}

/* --- option parsing ------------------------------------------------------------ */

static int parse_prob(const char *s, double *p)
{
	char *end;

	errno = 0;
	*p = strtod(s, &end);
	return errno || end == s || *end || !(*p >= 0.0 && *p <= 1.0) ? -EINVAL : 0;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || end == s || *end || *s == '-' ? -EINVAL : 0;
}

/* Opcode classes by name; a number selects one opcode. */
static int add_opcodes(struct fault_cfg *c, const char *name)
{
	uint64_t v;
	unsigned int op, f;
	int n = 0;

	for (op = 0; op < 256; op++) {
		f = blue_opcode_flags((uint8_t)op);
		if (!f)
			continue;
		if ((!strcmp(name, "ack") && op == BLUE_OP_RC_ACKNOWLEDGE) ||
		    (!strcmp(name, "atomic-ack") && op == BLUE_OP_RC_ATOMIC_ACKNOWLEDGE) ||
		    (!strcmp(name, "read-req") && op == BLUE_OP_RC_READ_REQUEST) ||
		    (!strcmp(name, "read-resp") && op >= BLUE_OP_RC_READ_RESPONSE_FIRST &&
		     op <= BLUE_OP_RC_READ_RESPONSE_ONLY) ||
		    /* the last packet of a multi-packet message */
		    (!strcmp(name, "last") && (f & BLUE_OPF_LAST) && !(f & BLUE_OPF_FIRST)) ||
		    (!strcmp(name, "atomic") && (f & BLUE_OPF_ATMETH)) ||
		    (!strcmp(name, "cnp") && (f & BLUE_OPF_CNP))) {
			c->drop_op[op] = true;
			n++;
		}
	}
	if (!n) {
		if (parse_u64(name, &v) || v > 255)
			return -EINVAL;
		c->drop_op[v] = true;
	}
	c->have_drop_op = true;
	return 0;
}

static int parse_list(struct fault_cfg *c, const char *list, bool psn)
{
	char buf[1024], *tok, *save = NULL, *dash;
	uint64_t lo, hi;

	if (strlen(list) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!psn) {
			if (add_opcodes(c, tok))
				return -EINVAL;
			continue;
		}
		dash = strchr(tok, '-');
		if (dash)
			*dash = '\0';
		if (parse_u64(tok, &lo) || (dash && parse_u64(dash + 1, &hi)))
			return -EINVAL;
		if (!dash)
			hi = lo;
		if (lo > BLUE_PSN_MASK || hi > BLUE_PSN_MASK ||
		    c->n_drop_psn == FAULT_MAX_PSN_RANGES)
			return -EINVAL;
		c->drop_psn[c->n_drop_psn].lo = (uint32_t)lo;
		c->drop_psn[c->n_drop_psn].hi = (uint32_t)hi;
		c->n_drop_psn++;
	}
	return 0;
}

struct opts {
	const char *if_a, *if_b;
	const char *dry_run, *out;
	const char *stats_file, *log_file;
	double duration;
	uint32_t hold_frames;
	struct fault_cfg cfg;
};

static void usage(void)
{
	fprintf(stderr,
		"usage: blue_fault --if-a IF --if-b IF [faults] [--stats-file F] [--log F] "
		"[--duration SEC]\n"
		"       blue_fault --dry-run IN.pcap [--out OUT.pcap] [faults] [--stats-file F] "
		"[--log F]\n"
		"faults: --seed S --direction a2b|b2a|both --loss P --drop-opcode LIST\n"
		"        --drop-psn LIST --drop-first N --drop-rate P --dup P --reorder P\n"
		"        --reorder-window W --reorder-timeout-us T --corrupt P\n"
		"        --corrupt-where any|header|payload --ecn P --delay-us N --delay-rate P\n"
		"        --hold-frames N\n"
		"opcode names: ack atomic-ack read-req read-resp last atomic cnp\n");
	exit(2);
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	enum {
		O_IFA = 256, O_IFB, O_DRY, O_OUT, O_STATS, O_LOG, O_DUR, O_SEED, O_DIR, O_LOSS,
		O_DOP, O_DPSN, O_DFIRST, O_DRATE, O_DUP, O_REO, O_REOW, O_REOT, O_COR, O_CORW,
		O_ECN, O_DELAY, O_DELAYR, O_HOLD,
	};
	static const struct option lo[] = {
		{ "if-a", required_argument, NULL, O_IFA },
		{ "if-b", required_argument, NULL, O_IFB },
		{ "dry-run", required_argument, NULL, O_DRY },
		{ "out", required_argument, NULL, O_OUT },
		{ "stats-file", required_argument, NULL, O_STATS },
		{ "log", required_argument, NULL, O_LOG },
		{ "duration", required_argument, NULL, O_DUR },
		{ "seed", required_argument, NULL, O_SEED },
		{ "direction", required_argument, NULL, O_DIR },
		{ "loss", required_argument, NULL, O_LOSS },
		{ "drop-opcode", required_argument, NULL, O_DOP },
		{ "drop-psn", required_argument, NULL, O_DPSN },
		{ "drop-first", required_argument, NULL, O_DFIRST },
		{ "drop-rate", required_argument, NULL, O_DRATE },
		{ "dup", required_argument, NULL, O_DUP },
		{ "reorder", required_argument, NULL, O_REO },
		{ "reorder-window", required_argument, NULL, O_REOW },
		{ "reorder-timeout-us", required_argument, NULL, O_REOT },
		{ "corrupt", required_argument, NULL, O_COR },
		{ "corrupt-where", required_argument, NULL, O_CORW },
		{ "ecn", required_argument, NULL, O_ECN },
		{ "delay-us", required_argument, NULL, O_DELAY },
		{ "delay-rate", required_argument, NULL, O_DELAYR },
		{ "hold-frames", required_argument, NULL, O_HOLD },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct fault_cfg *c = &o->cfg;
	uint64_t v;
	char *end;
	int opt, bad;

	memset(o, 0, sizeof(*o));
	o->hold_frames = POOL_FRAMES;
	fault_cfg_default(c);
	while ((opt = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		bad = 0;
		switch (opt) {
		case O_IFA: o->if_a = optarg; break;
		case O_IFB: o->if_b = optarg; break;
		case O_DRY: o->dry_run = optarg; break;
		case O_OUT: o->out = optarg; break;
		case O_STATS: o->stats_file = optarg; break;
		case O_LOG: o->log_file = optarg; break;
		case O_DUR:
			o->duration = strtod(optarg, &end);
			bad = *end || end == optarg || o->duration <= 0;
			break;
		case O_SEED: bad = parse_u64(optarg, &c->seed); break;
		case O_DIR:
			if (!strcmp(optarg, "a2b"))
				c->dir_mask = 1u << FAULT_A2B;
			else if (!strcmp(optarg, "b2a"))
				c->dir_mask = 1u << FAULT_B2A;
			else if (!strcmp(optarg, "both"))
				c->dir_mask = 1u << FAULT_A2B | 1u << FAULT_B2A;
			else
				bad = 1;
			break;
		case O_LOSS: bad = parse_prob(optarg, &c->loss); break;
		case O_DOP: bad = parse_list(c, optarg, false); break;
		case O_DPSN: bad = parse_list(c, optarg, true); break;
		case O_DFIRST: bad = parse_u64(optarg, &c->drop_first); break;
		case O_DRATE: bad = parse_prob(optarg, &c->drop_rate); break;
		case O_DUP: bad = parse_prob(optarg, &c->dup); break;
		case O_REO: bad = parse_prob(optarg, &c->reorder); break;
		case O_REOW:
			bad = parse_u64(optarg, &v) || !v || v > 1000000;
			c->reorder_window = (uint32_t)v;
			break;
		case O_REOT:
			bad = parse_u64(optarg, &v) || v > 60000000;
			c->reorder_timeout_ns = v * 1000;
			break;
		case O_COR: bad = parse_prob(optarg, &c->corrupt); break;
		case O_CORW:
			if (!strcmp(optarg, "any"))
				c->corrupt_where = FAULT_WHERE_ANY;
			else if (!strcmp(optarg, "header"))
				c->corrupt_where = FAULT_WHERE_HEADER;
			else if (!strcmp(optarg, "payload"))
				c->corrupt_where = FAULT_WHERE_PAYLOAD;
			else
				bad = 1;
			break;
		case O_ECN: bad = parse_prob(optarg, &c->ecn); break;
		case O_DELAY:
			bad = parse_u64(optarg, &v) || v > 60000000;
			c->delay_ns = v * 1000;
			break;
		case O_DELAYR: bad = parse_prob(optarg, &c->delay_rate); break;
		case O_HOLD:
			bad = parse_u64(optarg, &v) || !v || v > 1u << 20;
			o->hold_frames = (uint32_t)v;
			break;
		default: usage();
		}
		if (bad) {
			fprintf(stderr, "blue_fault: bad value for --%s: '%s'\n",
				lo[opt - O_IFA].name, optarg);
			usage();
		}
	}
	if (optind != argc || (!o->dry_run && (!o->if_a || !o->if_b)) ||
	    (o->dry_run && (o->if_a || o->if_b || o->duration > 0)) || (o->out && !o->dry_run))
		usage();
}

/* --- live forwarding ----------------------------------------------------------- */

static int emit_live(void *arg, enum fault_dir d, const uint8_t *data, uint32_t len)
{
	struct fwd *w = arg;

	/* a2b leaves through --if-b */
	return fport_tx(&w->port[d == FAULT_A2B ? FAULT_B2A : FAULT_A2B], data, len);
}

static void rx_a(void *arg, uint8_t *data, uint32_t len)
{
	struct fwd *w = arg;

	fault_input(&w->e, FAULT_A2B, data, len, w->now);
}

static void rx_b(void *arg, uint8_t *data, uint32_t len)
{
	struct fwd *w = arg;

	fault_input(&w->e, FAULT_B2A, data, len, w->now);
}

static void run_live(struct fwd *w, const struct opts *o)
{
	struct pollfd pfd[2] = {
		{ .fd = w->port[0].fd, .events = POLLIN },
		{ .fd = w->port[1].fd, .events = POLLIN },
	};
	uint64_t end = o->duration > 0 ? mono_ns() + (uint64_t)(o->duration * 1e9) : UINT64_MAX;

	while (!g_stop) {
		uint64_t now = mono_ns(), next, wait;
		unsigned int got;
		struct timespec ts;

		if (now >= end)
			break;
		w->now = now;
		got = fport_rx(&w->port[FAULT_A2B], RX_BATCH, rx_a, w);
		got += fport_rx(&w->port[FAULT_B2A], RX_BATCH, rx_b, w);
		next = fault_tick(&w->e, now);
		fport_kick(&w->port[0]);
		fport_kick(&w->port[1]);
		if (g_dump) {
			g_dump = 0;
			read_sock_drops(w);
			print_stats(w, stdout, true);
			fflush(stdout);
			write_stats(w, o->stats_file, true);
		}
		if (got)
			continue;
		if (next > end)
			next = end;
		if (next <= now)
			continue;
		wait = next - now < MAX_WAIT_NS ? next - now : MAX_WAIT_NS;
		/* the kernel left TX frames on a ring: retry soon, without spinning on a
		 * netdev that went away */
		if ((w->port[0].tx_queued || w->port[1].tx_queued) && wait > TX_RETRY_NS)
			wait = TX_RETRY_NS;
		ts.tv_sec = (time_t)(wait / 1000000000ull);
		ts.tv_nsec = (long)(wait % 1000000000ull);
		ppoll(pfd, 2, &ts, NULL);
	}
	/* what is still held goes out: stopping is not a fault */
	fault_flush(&w->e);
	fport_kick(&w->port[0]);
	fport_kick(&w->port[1]);
}

/* --- dry run over a capture ------------------------------------------------------ */

static int emit_pcap(void *arg, enum fault_dir d, const uint8_t *data, uint32_t len)
{
	struct fwd *w = arg;

	(void)d;
	if (w->out && fpcap_write(w->out, w->now, data, len))
		w->out_errors++;
	return 0;
}

static int run_dry(struct fwd *w, const struct opts *o)
{
	static uint8_t buf[FAULT_MAX_FRAME];
	struct fpcap_in in = { 0 };
	uint64_t ts = 0;
	int len, err;

	err = fpcap_open(&in, o->dry_run);
	if (err) {
		if (err != -EPROTO)
			fprintf(stderr, "blue_fault: %s: %s\n", o->dry_run, strerror(-err));
		return 1;
	}
	if (o->out) {
		w->out = fopen(o->out, "wb");
		if (!w->out || fpcap_write_header(w->out)) {
			fprintf(stderr, "blue_fault: %s: %s\n", o->out, strerror(errno));
			fpcap_close(&in);
			return 1;
		}
	}
	while ((len = fpcap_next(&in, buf, sizeof(buf), &ts)) > 0) {
		enum fault_dir d;

		if (len < BLUE_ETH_HLEN)
			continue;
		if (!w->have_side_a) {
			memcpy(w->side_a, buf + 6, 6);
			w->have_side_a = true;
		}
		d = memcmp(buf + 6, w->side_a, 6) ? FAULT_B2A : FAULT_A2B;
		/* what fell due before this frame goes out first, stamped when due */
		for (;;) {
			uint64_t next = fault_tick(&w->e, w->now);

			if (next > ts)
				break;
			w->now = next;
		}
		w->now = ts;
		fault_input(&w->e, d, buf, (uint32_t)len, ts);
	}
	fpcap_close(&in);
	if (len < 0) {
		fprintf(stderr, "blue_fault: %s: truncated or oversized record\n", o->dry_run);
		err = 1;
	}
	/* the rest falls due after the last frame, in time order */
	for (;;) {
		uint64_t next = fault_tick(&w->e, w->now);

		if (next == UINT64_MAX)
			break;
		w->now = next;
	}
	fault_flush(&w->e);
	if (w->out && (fclose(w->out) || w->out_errors)) {
		fprintf(stderr, "blue_fault: %s: write error\n", o->out);
		err = 1;
	}
	return err ? 1 : 0;
}

/* --- main ---------------------------------------------------------------------- */

static void log_config(const struct opts *o)
{
	const struct fault_cfg *c = &o->cfg;

	fprintf(stderr, "blue_fault: seed %" PRIu64 " dirs %s loss %g drop %s%s first %" PRIu64
		" rate %g dup %g reorder %g/%u/%" PRIu64 "us corrupt %g ecn %g delay %" PRIu64
		"us@%g\n", c->seed,
		c->dir_mask == 3 ? "both" : c->dir_mask == 1 ? "a2b" : "b2a", c->loss,
		c->have_drop_op ? "opcodes" : "-", c->n_drop_psn ? "+psns" : "",
		c->drop_first, c->drop_rate, c->dup, c->reorder, c->reorder_window,
		c->reorder_timeout_ns / 1000, c->corrupt, c->ecn, c->delay_ns / 1000,
		c->delay_rate);
}

int main(int argc, char **argv)
{
	static struct fwd w;
	struct sigaction sa = { .sa_handler = on_signal };
	struct opts o;
	FILE *log = NULL;
	int rc = 0;

	parse_args(argc, argv, &o);
	setvbuf(stdout, NULL, _IOLBF, 0);
	log_config(&o);
	if (o.log_file) {
		log = fopen(o.log_file, "w");
		if (!log) {
			fprintf(stderr, "blue_fault: %s: %s\n", o.log_file, strerror(errno));
			return 1;
		}
	}
	if (fault_engine_init(&w.e, &o.cfg, o.hold_frames,
			      o.dry_run ? emit_pcap : emit_live, &w)) {
		fprintf(stderr, "blue_fault: out of memory\n");
		return 1;
	}
	w.e.log = log;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);

	if (o.dry_run) {
		rc = run_dry(&w, &o);
	} else {
		/* delays are tens of us: the default 50 us timer slack would swamp them */
		prctl(PR_SET_TIMERSLACK, 1000UL);
		libbpf_set_print(NULL);
		if (fport_open(&w.port[FAULT_A2B], o.if_a) ||
		    fport_open(&w.port[FAULT_B2A], o.if_b)) {
			fport_close(&w.port[FAULT_A2B]);
			rc = 1;
			goto out;
		}
		printf("READY a %s b %s seed %" PRIu64 "\n", o.if_a, o.if_b, o.cfg.seed);
		run_live(&w, &o);
		read_sock_drops(&w);
		fport_close(&w.port[FAULT_A2B]);
		fport_close(&w.port[FAULT_B2A]);
	}
	print_stats(&w, stdout, !o.dry_run);
	write_stats(&w, o.stats_file, !o.dry_run);
out:
	if (log && fclose(log)) {
		fprintf(stderr, "blue_fault: %s: %s\n", o.log_file, strerror(errno));
		rc = 1;
	}
	fault_engine_fini(&w.e);
	return rc;
}
