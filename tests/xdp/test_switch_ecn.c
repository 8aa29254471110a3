// SPDX-License-Identifier: MIT
/*
 * The bottleneck switch's marker (bpf/switch_ecn.bpf.c) through BPF_PROG_RUN, on the
 * real object: the RED rule (Kmin, Kmax, Pmax), CE marking with a valid checksum, the
 * tail drop at the buffer, the Not-ECT rule and the depth record.
 *
 * The modelled queue is held at a chosen depth by writing its state with last_ns a
 * second ahead of the clock: the drain treats time that runs backwards (a clock read on
 * another CPU) as no time, so the packet finds exactly the depth written. Each row sets
 * config and state, runs a packet @runs times and counts outcomes.
 */
#include <criterion/criterion.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "blue/switch.h"
#include "bpf/switch_ecn.skel.h"
#include "pkt.h"

#define KMIN	20000u
#define KMAX	60000u
#define BUFFER	100000u
#define PMAX_HALF	0x80000000u

#define ECT0	0x2
#define ECT1	0x1
#define CE	0x3

static struct switch_ecn *skel;
static int prog_fd, cfg_fd, st_fd;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_DEBUG ? 0 : vfprintf(stderr, fmt, ap);
}

static void setup(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root (BPF_PROG_RUN)");
	libbpf_set_print(quiet);
	skel = switch_ecn__open_and_load();
	cr_assert(skel, "switch_ecn__open_and_load failed (verifier log above)");
	prog_fd = bpf_program__fd(skel->progs.switch_ecn);
	cfg_fd = bpf_map__fd(skel->maps.sw_cfg);
	st_fd = bpf_map__fd(skel->maps.sw_state);
}

static void teardown(void)
{
	switch_ecn__destroy(skel);
	skel = NULL;
}

static void set_cfg(uint32_t pmax, uint32_t flags, uint64_t epoch_ns)
{
	struct blue_sw_cfg c = {
		.rate_bps = 1000000000ull,
		.buffer_bytes = BUFFER,
		.kmin_bytes = KMIN,
		.kmax_bytes = KMAX,
		.pmax = pmax,
		.flags = flags,
		.epoch_ns = epoch_ns,
	};
	__u32 key = 0;

	cr_assert_eq(bpf_map_update_elem(cfg_fd, &key, &c, 0), 0, "write sw_cfg");
}

/* The queue held at @depth (see the top), counters zero. */
static void set_depth(uint64_t depth)
{
	struct blue_sw_state s = {
		.backlog_scaled = depth * BLUE_SW_NS,
		.last_ns = mono_ns() + BLUE_SW_NS,
		.min_mark_depth = ~0ull,
		.min_drop_depth = ~0ull,
	};
	__u32 key = 0;

	cr_assert_eq(bpf_map_update_elem(st_fd, &key, &s, BPF_F_LOCK), 0, "write sw_state");
}

static struct blue_sw_state get_state(void)
{
	struct blue_sw_state s;
	__u32 key = 0;

	cr_assert_eq(bpf_map_lookup_elem_flags(st_fd, &key, &s, BPF_F_LOCK), 0, "read sw_state");
	return s;
}

static uint16_t ip_csum(const uint8_t *ip, size_t len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)ip[i] << 8 | ip[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* A RoCEv2 SEND of @payload bytes with TOS @tos (ECN bits), header checksum valid. */
static size_t frame(uint8_t *buf, size_t cap, uint8_t tos, uint32_t payload)
{
	struct pkt_spec s;
	size_t n;

	pkt_spec_default(&s);
	s.payload_len = payload;
	n = pkt_build(&s, buf, cap);
	cr_assert(n > ETH_HLEN + 20, "pkt_build");
	buf[ETH_HLEN + 1] = tos;
	buf[ETH_HLEN + 10] = buf[ETH_HLEN + 11] = 0;
	uint16_t c = ip_csum(buf + ETH_HLEN, 20);
	buf[ETH_HLEN + 10] = c >> 8;
	buf[ETH_HLEN + 11] = c & 0xff;
	return n;
}

/* One BPF_PROG_RUN of @pkt; the program's verdict, the frame as it left in @out. */
static int run(const uint8_t *pkt, uint32_t len, uint8_t *out, uint32_t *out_len)
{
	LIBBPF_OPTS(bpf_test_run_opts, o,
		.data_in = pkt,
		.data_size_in = len,
		.data_out = out,
		.data_size_out = *out_len,
		.repeat = 1,
	);

	cr_assert_eq(bpf_prog_test_run_opts(prog_fd, &o), 0, "BPF_PROG_RUN: %s",
		     strerror(errno));
	*out_len = o.data_size_out;
	return (int)o.retval;
}

struct outcome {
	unsigned int	pass, drop, ce, other;	/* verdicts, and the ECN bits of passed frames */
	struct blue_sw_state st;		/* after the last run */
};

/*
 * @runs packets with ECN bits @tos, each finding the queue at @depth. Every frame that
 * passes is checked: all bytes but the TOS unchanged, the IPv4 checksum valid.
 */
static struct outcome run_at(uint64_t depth, uint8_t tos, uint32_t payload, unsigned int runs)
{
	uint8_t in[2048], out[2048];
	struct outcome r = { 0 };
	uint32_t len = (uint32_t)frame(in, sizeof(in), tos, payload);

	for (unsigned int i = 0; i < runs; i++) {
		uint32_t out_len = sizeof(out);
		int v;

		set_depth(depth);
		v = run(in, len, out, &out_len);
		if (v == TC_ACT_SHOT) {
			r.drop++;
			continue;
		}
		cr_assert_eq(v, TC_ACT_OK, "verdict %d", v);
		r.pass++;
		cr_assert_eq(out_len, len, "frame length changed");
		cr_assert_eq(ip_csum(out + ETH_HLEN, 20), 0, "IPv4 header checksum invalid");
		cr_assert_eq(out[ETH_HLEN + 1] & ~3, in[ETH_HLEN + 1] & ~3, "DSCP changed");
		cr_assert_eq(memcmp(out, in, ETH_HLEN + 1), 0, "bytes before the TOS changed");
		cr_assert_eq(memcmp(out + ETH_HLEN + 12, in + ETH_HLEN + 12, len - ETH_HLEN - 12),
			     0, "bytes after the checksum changed");
		if ((out[ETH_HLEN + 1] & 3) == CE)
			r.ce++;
		else
			r.other++;
		cr_assert((out[ETH_HLEN + 1] & 3) == CE || out[ETH_HLEN + 1] == in[ETH_HLEN + 1],
			  "the ECN field changed to something other than CE");
	}
	r.st = get_state();
	return r;
}

TestSuite(switch_ecn, .init = setup, .fini = teardown);

Test(switch_ecn, red_marks_nothing_at_or_below_kmin)
{
	set_cfg(0xffffffffu, BLUE_SW_F_MARK, 0);
	struct outcome a = run_at(0, ECT0, 1024, 50);
	struct outcome b = run_at(KMIN, ECT0, 1024, 200);

	cr_expect_eq(a.ce + b.ce, 0, "marked at depth 0 (%u) or kmin (%u)", a.ce, b.ce);
	cr_expect_eq(b.pass, 200);
	cr_expect_eq(b.st.marked, 0);
}

Test(switch_ecn, red_marks_everything_above_kmax)
{
	set_cfg(0, BLUE_SW_F_MARK, 0);	/* pmax 0: only the "above kmax" rule can mark */
	struct outcome r = run_at(KMAX + 1, ECT0, 1024, 200);

	cr_expect_eq(r.ce, 200, "%u of 200 marked above kmax", r.ce);
	cr_expect_eq(r.st.marked, 1, "the last run's state counts its one mark");
	cr_expect_eq(r.st.min_mark_depth, KMAX + 1, "depth at marking recorded");
	struct outcome at = run_at(KMAX, ECT0, 1024, 100);

	cr_expect_eq(at.ce, 0, "pmax 0 marks nothing at kmax itself (%u)", at.ce);
}

Test(switch_ecn, red_probability_rises_linearly_to_pmax)
{
	/*
	 * Of n = 2000 packets, n p are expected marked; the bounds are 5 standard deviations
	 * of the binomial, sqrt(n p (1-p)) (a chance below 1e-6 of a false failure).
	 */
	const struct { uint64_t depth; unsigned int mean, tol; } rows[] = {
		{ KMIN + (KMAX - KMIN) / 4, 250, 74 },	/* p = pmax / 4 = 0.125 */
		{ KMIN + (KMAX - KMIN) / 2, 500, 97 },	/* p = 0.25 */
		{ KMAX, 1000, 112 },			/* p = pmax = 0.5 */
	};
	unsigned int n = 2000;

	set_cfg(PMAX_HALF, BLUE_SW_F_MARK, 0);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct outcome r = run_at(rows[i].depth, ECT0, 256, n);
		char what[64];

		snprintf(what, sizeof(what), "depth %llu", (unsigned long long)rows[i].depth);
		cr_expect_eq(r.pass, n, "%s: dropped", what);
		cr_expect(r.ce + rows[i].tol >= rows[i].mean && r.ce <= rows[i].mean + rows[i].tol,
			  "%s: %u of %u marked, want %u +- %u", what, r.ce, n, rows[i].mean,
			  rows[i].tol);
	}
}

Test(switch_ecn, ect1_becomes_ce_and_ce_stays)
{
	set_cfg(0, BLUE_SW_F_MARK, 0);
	struct outcome e1 = run_at(KMAX + 1, ECT1, 64, 20);
	struct outcome ce = run_at(KMAX + 1, CE, 64, 1);
	struct outcome ce_low = run_at(0, CE, 64, 1);

	cr_expect_eq(e1.ce, 20);
	cr_expect_eq(ce.ce, 1);
	cr_expect_eq(ce.st.marked, 0, "an arriving CE is not counted as our mark");
	cr_expect_eq(ce.st.ce_in, 1);
	cr_expect_eq(ce_low.ce, 1, "CE is never cleared");
}

Test(switch_ecn, not_ect_is_never_marked)
{
	set_cfg(0xffffffffu, BLUE_SW_F_MARK, 0);
	struct outcome r = run_at(KMAX + 1, 0x00, 1024, 100);
	struct outcome dscp = run_at(KMAX + 1, 0xb8, 1024, 100);	/* EF, Not-ECT */

	cr_expect_eq(r.ce + dscp.ce, 0, "Not-ECT marked");
	cr_expect_eq(r.pass, 100, "Not-ECT dropped instead (WRED drop is off)");
	cr_expect_eq(r.st.notect_hot, 1, "the last run counts one Not-ECT RED chose");
	cr_expect_eq(r.st.marked, 0);
}

Test(switch_ecn, marking_off_marks_nothing)
{
	set_cfg(0xffffffffu, 0, 0);
	struct outcome r = run_at(KMAX + 1, ECT0, 1024, 100);

	cr_expect_eq(r.ce, 0);
	cr_expect_eq(r.st.notect_hot, 0);
}

Test(switch_ecn, tail_drop_exactly_when_the_buffer_would_overflow)
{
	uint8_t in[2048];
	uint32_t len = (uint32_t)frame(in, sizeof(in), ECT0, 1024);

	set_cfg(0, 0, 0);
	struct outcome fits = run_at(BUFFER - len, ECT0, 1024, 10);
	struct outcome over = run_at(BUFFER - len + 1, ECT0, 1024, 10);

	cr_expect_eq(fits.drop, 0, "a packet that fills the buffer exactly was dropped");
	cr_expect_eq(fits.st.pkts, 1);
	cr_expect_eq(fits.st.backlog_scaled, (uint64_t)BUFFER * BLUE_SW_NS, "joined the queue");
	cr_expect_eq(over.drop, 10, "%u of 10 overflowing packets dropped", over.drop);
	cr_expect_eq(over.st.dropped, 1);
	cr_expect_eq(over.st.dropped_bytes, len);
	cr_expect_eq(over.st.min_drop_depth, BUFFER - len + 1);
	cr_expect_eq(over.st.backlog_scaled, (uint64_t)(BUFFER - len + 1) * BLUE_SW_NS,
		     "a dropped packet left the queue as it was");
}

Test(switch_ecn, non_ipv4_frames_pass_unmarked)
{
	uint8_t in[64] = { 0 }, out[128];
	uint32_t out_len = sizeof(out);

	memset(in, 0xff, 6);
	in[12] = 0x08;
	in[13] = 0x06;	/* ARP */
	set_cfg(0, BLUE_SW_F_MARK, 0);
	set_depth(KMAX + 1);
	cr_expect_eq(run(in, sizeof(in), out, &out_len), TC_ACT_OK);
	cr_expect_eq(memcmp(in, out, sizeof(in)), 0, "frame rewritten");
	struct blue_sw_state s = get_state();

	cr_expect_eq(s.pkts, 1);
	cr_expect_eq(s.notect_hot, 1);
	cr_expect_eq(s.marked, 0);
}

Test(switch_ecn, a_second_idle_empties_the_queue)
{
	struct blue_sw_state s = {
		.backlog_scaled = (uint64_t)BUFFER * BLUE_SW_NS,
		.min_mark_depth = ~0ull,
		.min_drop_depth = ~0ull,
	};
	uint8_t in[2048], out[2048];
	uint32_t out_len = sizeof(out), len = (uint32_t)frame(in, sizeof(in), ECT0, 1024);
	__u32 key = 0;

	set_cfg(0, BLUE_SW_F_MARK, 0);
	s.last_ns = mono_ns() - 2 * BLUE_SW_NS;
	cr_assert_eq(bpf_map_update_elem(st_fd, &key, &s, BPF_F_LOCK), 0);
	cr_expect_eq(run(in, len, out, &out_len), TC_ACT_OK);
	s = get_state();
	cr_expect_eq(s.max_depth, 0, "the packet found %llu bytes", (unsigned long long)s.max_depth);
	cr_expect_eq(s.backlog_scaled, (uint64_t)len * BLUE_SW_NS);
	cr_expect_eq((out[ETH_HLEN + 1] & 3), ECT0);
}

Test(switch_ecn, a_finished_slot_goes_to_the_record)
{
	struct blue_sw_state s = {
		.backlog_scaled = 5000ull * BLUE_SW_NS,
		.cur_slot = 1,
		.cur_max = 777,
		.min_mark_depth = ~0ull,
		.min_drop_depth = ~0ull,
	};
	uint8_t in[2048], out[2048];
	uint32_t out_len = sizeof(out), len = (uint32_t)frame(in, sizeof(in), ECT0, 64);
	struct blue_sw_sample e;
	__u32 key = 0, idx = 0;
	uint64_t now = mono_ns();

	/* the epoch 1 s ago: the packet lands in slot ~10000, a later one than slot 1 */
	set_cfg(0, 0, now - BLUE_SW_NS);
	s.last_ns = now + BLUE_SW_NS;
	cr_assert_eq(bpf_map_update_elem(st_fd, &key, &s, BPF_F_LOCK), 0);
	cr_expect_eq(run(in, len, out, &out_len), TC_ACT_OK);
	cr_assert_eq(bpf_map_lookup_elem(bpf_map__fd(skel->maps.sw_ring), &idx, &e), 0);
	cr_expect_eq(e.slot, 1, "slot 1 written to ring entry 0");
	cr_expect_eq(e.max_depth, 777);
	s = get_state();
	cr_expect_geq(s.cur_slot, BLUE_SW_NS / BLUE_SW_SLOT_NS + 1, "new slot %llu",
		      (unsigned long long)s.cur_slot);
	cr_expect_eq(s.cur_max, 5000, "the new slot starts at the depth the packet found");
}
