// SPDX-License-Identifier: MIT
/*
 * The bottleneck switch's marker (bpf/switch_ecn.bpf.c) through BPF_PROG_RUN, on the
 * real object: the depth it reads is tbf's backlog, the RED rule (Kmin, Kmax, Pmax), CE
 * marking with a valid checksum, the tail drop at the buffer, the Not-ECT rule and the
 * depth record.
 *
 * A real queue is held still: in a private network namespace a veth carries a tbf at
 * 1 kbit/s, and HELD frames are sent into it from an AF_PACKET socket; the first leaves
 * on the bucket's initial tokens, the rest wait (the next would need ~8 s of tokens).
 * BPF_PROG_RUN with that veth's ifindex gives the program skb->dev = the veth, so every
 * run finds that backlog, which `tc -s qdisc` reads back too. The rows then move Kmin,
 * Kmax and the buffer around the held depth.
 */
#include <criterion/criterion.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/pkt_cls.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "blue/switch.h"
#include "bpf/switch_ecn.skel.h"
#include "pkt.h"

#define HELD		60	/* frames sent into the tbf */
#define HELD_LEN	1000	/* bytes each */
#define BUFFER		1000000u
#define PMAX_HALF	0x80000000u

#define ECT0	0x2
#define ECT1	0x1
#define CE	0x3

static struct switch_ecn *skel;
static int prog_fd, cfg_fd, st_fd, q_ifindex;
static uint64_t held;	/* tbf's backlog, bytes */

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

/* tbf's byte backlog on swq0, as tc reports it */
static uint64_t tc_backlog(void)
{
	FILE *f = popen("tc -s -j qdisc show dev swq0 root | python3 -c "
			"'import json,sys; print(json.load(sys.stdin)[0][\"backlog\"])'", "r");
	unsigned long long v = 0;

	cr_assert(f, "popen tc");
	cr_assert_eq(fscanf(f, "%llu", &v), 1, "tc -s qdisc show swq0: no backlog");
	pclose(f);
	return v;
}

/* HELD frames of HELD_LEN bytes into swq0's tbf */
static void hold_queue(void)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_ifindex = q_ifindex,
				   .sll_halen = ETH_ALEN };
	uint8_t f[HELD_LEN] = { 0 };
	int fd = socket(AF_PACKET, SOCK_RAW, 0);

	cr_assert(fd >= 0, "AF_PACKET socket: %s", strerror(errno));
	memset(f, 0xff, ETH_ALEN);
	f[12] = 0x88;
	f[13] = 0xb5;	/* local experimental ethertype: nobody answers it */
	for (int i = 0; i < HELD; i++)
		cr_assert_eq(sendto(fd, f, sizeof(f), 0, (struct sockaddr *)&sll, sizeof(sll)),
			     (ssize_t)sizeof(f), "send into tbf: %s", strerror(errno));
	close(fd);
}

static void setup(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root (BPF_PROG_RUN, netns, tc)");
	cr_assert_eq(unshare(CLONE_NEWNET), 0, "unshare(CLONE_NEWNET): %s", strerror(errno));
	/* IPv6 off first: a new link's MLD report would join the held queue */
	cr_assert_eq(system("sysctl -qw net.ipv6.conf.default.disable_ipv6=1 "
			    "net.ipv6.conf.all.disable_ipv6=1 && "
			    "ip link add swq0 type veth peer name swq1 && "
			    "ip link set swq0 up && ip link set swq1 up && "
			    "tc qdisc add dev swq0 root tbf rate 1kbit burst 1600 limit 1000000"),
		     0, "veth + tbf in the private namespace");
	q_ifindex = (int)if_nametoindex("swq0");
	cr_assert(q_ifindex > 0);
	hold_queue();
	held = tc_backlog();
	cr_assert_eq(held, (uint64_t)(HELD - 1) * HELD_LEN,
		     "tbf holds %llu bytes, want all but the first frame",
		     (unsigned long long)held);
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

/* config, and the counters zeroed */
static void set_cfg(uint32_t buffer, uint64_t kmin, uint64_t kmax, uint32_t pmax,
		    uint32_t flags, uint64_t epoch_ns)
{
	struct blue_sw_cfg c = {
		.buffer_bytes = buffer,
		.kmin_bytes = (uint32_t)kmin,
		.kmax_bytes = (uint32_t)kmax,
		.pmax = pmax,
		.flags = flags,
		.epoch_ns = epoch_ns,
	};
	struct blue_sw_state s = { .min_mark_depth = ~0ull, .min_drop_depth = ~0ull };
	__u32 key = 0;

	cr_assert_eq(bpf_map_update_elem(cfg_fd, &key, &c, 0), 0, "write sw_cfg");
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

/*
 * One BPF_PROG_RUN of @pkt as if leaving through swq0 (so it finds the held queue), or
 * through the namespace's loopback with @on_lo; the verdict, the frame as it left.
 */
static int run_on(const uint8_t *pkt, uint32_t len, uint8_t *out, uint32_t *out_len,
		  bool on_lo)
{
	struct __sk_buff ctx = { .ifindex = on_lo ? 0 : (__u32)q_ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, o,
		.ctx_in = &ctx,
		.ctx_size_in = sizeof(ctx),
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

static int run(const uint8_t *pkt, uint32_t len, uint8_t *out, uint32_t *out_len)
{
	return run_on(pkt, len, out, out_len, false);
}

struct outcome {
	unsigned int	pass, drop, ce, other;	/* verdicts, and the ECN bits of passed frames */
	struct blue_sw_state st;		/* after the last run */
};

/*
 * @runs packets with ECN bits @tos, each finding the held queue. Every frame that
 * passes is checked: all bytes but the TOS unchanged, the IPv4 checksum valid. The
 * counters are checked against what was seen.
 */
static struct outcome run_held(uint8_t tos, uint32_t payload, unsigned int runs)
{
	uint8_t in[2048], out[2048];
	struct outcome r = { 0 };
	uint32_t len = (uint32_t)frame(in, sizeof(in), tos, payload);

	for (unsigned int i = 0; i < runs; i++) {
		uint32_t out_len = sizeof(out);
		int v;

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
	cr_expect_eq(r.st.dropped, r.drop, "dropped counter");
	cr_expect_eq(r.st.pkts, r.pass, "passed counter");
	cr_expect_eq(r.st.max_depth, held, "the depth every run found");
	if ((tos & 3) != CE)
		cr_expect_eq(r.st.marked, r.ce, "marked counter");
	return r;
}

TestSuite(switch_ecn, .init = setup, .fini = teardown);

Test(switch_ecn, the_depth_is_tbfs_backlog)
{
	uint8_t in[2048], out[2048];
	uint32_t out_len = sizeof(out), len = (uint32_t)frame(in, sizeof(in), ECT0, 64);

	set_cfg(BUFFER, 0, 0, 0, 0, 0);
	cr_expect_eq(run(in, len, out, &out_len), TC_ACT_OK);
	cr_expect_eq(get_state().max_depth, tc_backlog(), "the program saw another depth than tc");
	set_cfg(BUFFER, 0, 0, 0, 0, 0);
	out_len = sizeof(out);
	cr_expect_eq(run_on(in, len, out, &out_len, true), TC_ACT_OK);
	cr_expect_eq(get_state().max_depth, 0, "loopback (noqueue) has no backlog");
}

Test(switch_ecn, red_marks_nothing_at_or_below_kmin)
{
	set_cfg(BUFFER, held, held + 10000, 0xffffffffu, BLUE_SW_F_MARK, 0);
	struct outcome at = run_held(ECT0, 1024, 200);

	cr_expect_eq(at.ce, 0, "%u marked at depth == kmin", at.ce);
	cr_expect_eq(at.pass, 200);
	set_cfg(BUFFER, held + 1, held + 10000, 0xffffffffu, BLUE_SW_F_MARK, 0);
	struct outcome below = run_held(ECT0, 1024, 200);

	cr_expect_eq(below.ce, 0, "%u marked below kmin", below.ce);
}

Test(switch_ecn, red_marks_everything_above_kmax)
{
	set_cfg(BUFFER, held - 1, held - 1, 0, BLUE_SW_F_MARK, 0);	/* pmax 0: only "above" */
	struct outcome r = run_held(ECT0, 1024, 200);

	cr_expect_eq(r.ce, 200, "%u of 200 marked above kmax", r.ce);
	cr_expect_eq(r.st.min_mark_depth, held, "depth at marking recorded");
	cr_expect_eq(r.st.max_mark_depth, held);
	set_cfg(BUFFER, held - 1000, held, 0, BLUE_SW_F_MARK, 0);
	struct outcome at = run_held(ECT0, 1024, 100);

	cr_expect_eq(at.ce, 0, "pmax 0 marks nothing at kmax itself (%u)", at.ce);
}

Test(switch_ecn, red_probability_rises_linearly_to_pmax)
{
	/*
	 * The held depth at 1/4, 1/2 and all of [kmin, kmax]. Of n = 2000 packets n p are
	 * expected marked; the bounds are 5 standard deviations of the binomial,
	 * sqrt(n p (1-p)) (a chance below 1e-6 of a false failure).
	 */
	const uint64_t range = 40000;
	const struct { uint64_t kmin; unsigned int mean, tol; } rows[] = {
		{ held - range / 4, 250, 74 },	/* p = pmax / 4 = 0.125 */
		{ held - range / 2, 500, 97 },	/* p = 0.25 */
		{ held - range, 1000, 112 },	/* p = pmax = 0.5 */
	};
	unsigned int n = 2000;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		set_cfg(BUFFER, rows[i].kmin, rows[i].kmin + range, PMAX_HALF, BLUE_SW_F_MARK, 0);
		struct outcome r = run_held(ECT0, 256, n);

		cr_expect_eq(r.pass, n, "row %zu: dropped", i);
		cr_expect(r.ce + rows[i].tol >= rows[i].mean && r.ce <= rows[i].mean + rows[i].tol,
			  "row %zu: %u of %u marked, want %u +- %u", i, r.ce, n, rows[i].mean,
			  rows[i].tol);
	}
}

Test(switch_ecn, ect1_becomes_ce_and_ce_stays)
{
	set_cfg(BUFFER, held - 1, held - 1, 0, BLUE_SW_F_MARK, 0);
	struct outcome e1 = run_held(ECT1, 64, 20);

	cr_expect_eq(e1.ce, 20);
	set_cfg(BUFFER, held - 1, held - 1, 0, BLUE_SW_F_MARK, 0);
	struct outcome ce = run_held(CE, 64, 5);

	cr_expect_eq(ce.ce, 5);
	cr_expect_eq(ce.st.marked, 0, "an arriving CE is not counted as our mark");
	cr_expect_eq(ce.st.ce_in, 5);
	set_cfg(BUFFER, held, held, 0, BLUE_SW_F_MARK, 0);
	struct outcome ce_low = run_held(CE, 64, 5);

	cr_expect_eq(ce_low.ce, 5, "CE is never cleared");
}

Test(switch_ecn, not_ect_is_never_marked)
{
	set_cfg(BUFFER, held - 1, held - 1, 0xffffffffu, BLUE_SW_F_MARK, 0);
	struct outcome r = run_held(0x00, 1024, 100);

	set_cfg(BUFFER, held - 1, held - 1, 0xffffffffu, BLUE_SW_F_MARK, 0);
	struct outcome dscp = run_held(0xb8, 1024, 100);	/* EF, Not-ECT */

	cr_expect_eq(r.ce + dscp.ce, 0, "Not-ECT marked");
	cr_expect_eq(r.pass, 100, "Not-ECT dropped instead (WRED drop is off)");
	cr_expect_eq(r.st.notect_hot, 100, "every Not-ECT RED chose is counted");
	cr_expect_eq(dscp.st.notect_hot, 100);
	cr_expect_eq(dscp.st.marked, 0);
}

Test(switch_ecn, marking_off_marks_nothing)
{
	set_cfg(BUFFER, held - 1, held - 1, 0xffffffffu, 0, 0);
	struct outcome r = run_held(ECT0, 1024, 100);

	cr_expect_eq(r.ce, 0);
	cr_expect_eq(r.st.notect_hot, 0);
}

Test(switch_ecn, tail_drop_exactly_when_the_buffer_would_overflow)
{
	uint8_t in[2048];
	uint32_t len = (uint32_t)frame(in, sizeof(in), ECT0, 1024);

	set_cfg((uint32_t)held + len, 0, 0, 0, 0, 0);
	struct outcome fits = run_held(ECT0, 1024, 10);

	cr_expect_eq(fits.drop, 0, "a packet that fills the buffer exactly was dropped");
	set_cfg((uint32_t)held + len - 1, 0, 0, 0, 0, 0);
	struct outcome over = run_held(ECT0, 1024, 10);

	cr_expect_eq(over.drop, 10, "%u of 10 overflowing packets dropped", over.drop);
	cr_expect_eq(over.st.dropped_bytes, 10ull * len);
	cr_expect_eq(over.st.min_drop_depth, held);
	cr_expect_eq(tc_backlog(), held, "nothing reached the queue");
}

Test(switch_ecn, non_ipv4_frames_pass_unmarked)
{
	uint8_t in[64] = { 0 }, out[128];
	uint32_t out_len = sizeof(out);

	memset(in, 0xff, 6);
	in[12] = 0x08;
	in[13] = 0x06;	/* ARP */
	set_cfg(BUFFER, held - 1, held - 1, 0, BLUE_SW_F_MARK, 0);
	cr_expect_eq(run(in, sizeof(in), out, &out_len), TC_ACT_OK);
	cr_expect_eq(memcmp(in, out, sizeof(in)), 0, "frame rewritten");
	struct blue_sw_state s = get_state();

	cr_expect_eq(s.pkts, 1);
	cr_expect_eq(s.notect_hot, 1);
	cr_expect_eq(s.marked, 0);
}

Test(switch_ecn, a_finished_slot_goes_to_the_record)
{
	struct blue_sw_state s = {
		.cur_slot = 1,
		.cur_max = 777,
		.min_mark_depth = ~0ull,
		.min_drop_depth = ~0ull,
	};
	uint8_t in[2048], out[2048];
	uint32_t out_len = sizeof(out), len = (uint32_t)frame(in, sizeof(in), ECT0, 64);
	struct blue_sw_sample e;
	__u32 key = 0, idx = 0;

	/* the epoch 1 s ago: the packet lands in slot ~10000, a later one than slot 1 */
	set_cfg(BUFFER, 0, 0, 0, 0, mono_ns() - BLUE_SW_NS);
	cr_assert_eq(bpf_map_update_elem(st_fd, &key, &s, BPF_F_LOCK), 0);
	cr_expect_eq(run(in, len, out, &out_len), TC_ACT_OK);
	cr_assert_eq(bpf_map_lookup_elem(bpf_map__fd(skel->maps.sw_ring), &idx, &e), 0);
	cr_expect_eq(e.slot, 1, "slot 1 written to ring entry 0");
	cr_expect_eq(e.max_depth, 777);
	s = get_state();
	cr_expect_geq(s.cur_slot, BLUE_SW_NS / BLUE_SW_SLOT_NS + 1, "new slot %llu",
		      (unsigned long long)s.cur_slot);
	cr_expect_eq(s.cur_max, held, "the new slot starts at the depth the packet found");
}
