// SPDX-License-Identifier: MIT
/*
 * Options of the perftest-style benchmarks: perftest's letters and defaults where blue has
 * the same notion (-d is the netdev blue is attached to, -x the GID index, default 1:
 * the IPv4-mapped GID RoCEv2 needs), plus --timeout, which bounds every wait.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "tools/perf/perf.h"

static void usage(FILE *f, const char *argv0, const struct perf_test_desc *t)
{
	fprintf(f,
		"Usage:\n"
		"  %s -d IF [options]        start a server and wait for a client\n"
		"  %s -d IF [options] HOST   connect to the server at HOST\n"
		"\n%s over libblue; the client's options are sent to the server.\n\n"
		"  -d, --ib-dev=IF          the netdev blue is attached to (`bluectl attach IF`)\n"
		"  -x, --gid-index=N        local GID index (default 1, the IPv4 GID)\n"
		"  -p, --port=PORT          TCP port of the control connection (default %d)\n"
		"  -s, --size=BYTES         message size (default %u)\n"
		"  -a, --all                every size 2 .. 2^23\n"
		"  -n, --iters=N            iterations per size and QP (default %u)\n"
		"  -D, --duration=SEC       run for SEC seconds instead of -n iterations\n"
		"  -q, --qp=N               QPs (bandwidth tests; default 1)\n"
		"  -t, --tx-depth=N         WRs outstanding per QP (default %u)\n"
		"  -l, --post_list=N        WRs per post_send call (bandwidth tests; default 1)\n"
		"  -I, --inline_size=BYTES  send messages up to BYTES inline (max 512; default %u)\n"
		"  -m, --mtu=BYTES          path MTU 256..4096 (default: the port's active MTU)\n"
		"%s"
		"  -e, --events             sleep on the completion channel when idle instead of\n"
		"                           busy-polling (this side only; for instruction counts)\n"
		"      --cc=none|dcqcn|window  congestion control this side offers (default:\n"
		"                           all built; DCQCN when both offer it; BLUE_CC)\n"
		"      --report_gbits       bandwidth in Gb/sec instead of MB/sec\n"
		"      --out_json           also write the results as JSON\n"
		"      --out_json_file=F    ... to F (default perftest_out.json)\n"
		"      --timeout=SEC        bound on every wait (default 30)\n"
		"      --cq-mod=N           signal every N-th WR (bandwidth tests; default %u, at\n"
		"                           most -t)\n"
		"      --report-interval-us=US  (bandwidth client) every US microseconds, one CSV\n"
		"                           row per QP: t_us,qp,qpn,bytes (bytes retired since its\n"
		"                           last row; t_us CLOCK_MONOTONIC); with --cq-mod 1 for\n"
		"                           a fine grain\n"
		"      --report-file=F      ... to F (default flows.csv)\n"
		"      --linger-ms=MS       after the run, keep this side's QPs MS ms before\n"
		"                           destroying them (for `bluectl qp list` of the counters)\n"
		"      --inject-mismatch    (client, for tests of the data check) corrupt the data\n"
		"                           after its CRC-32 was taken: the run must then fail\n"
		"  -h, --help               this text\n",
		argv0, argv0, t->title, PERF_DEF_PORT, t->op >= BLUE_WR_ATOMIC_CMP_AND_SWP ? 8 :
		t->lat ? 2 : 65536, t->def_iters, t->def_depth, t->lat && t->op != BLUE_WR_RDMA_READ &&
		t->op < BLUE_WR_ATOMIC_CMP_AND_SWP ? PERF_LAT_INLINE : 0,
		t->op >= BLUE_WR_ATOMIC_CMP_AND_SWP ?
		"  -A, --atomic_type=T      FETCH_AND_ADD (default) or CMP_AND_SWAP\n" : "",
		PERF_CQ_MOD);
}

int perf_parse(int argc, char **argv, enum perf_test test, struct perf_opts *o)
{
	enum { O_GBITS = 256, O_JSON, O_JSON_FILE, O_TIMEOUT, O_INJECT, O_CQ_MOD, O_REPORT_US,
	       O_REPORT_FILE, O_LINGER, O_CC = 300 };
	static const struct option lopts[] = {
		{ "ib-dev", 1, NULL, 'd' }, { "gid-index", 1, NULL, 'x' },
		{ "port", 1, NULL, 'p' }, { "size", 1, NULL, 's' }, { "all", 0, NULL, 'a' },
		{ "iters", 1, NULL, 'n' }, { "duration", 1, NULL, 'D' }, { "qp", 1, NULL, 'q' },
		{ "tx-depth", 1, NULL, 't' }, { "post_list", 1, NULL, 'l' },
		{ "inline_size", 1, NULL, 'I' }, { "mtu", 1, NULL, 'm' },
		{ "atomic_type", 1, NULL, 'A' }, { "report_gbits", 0, NULL, O_GBITS },
		{ "out_json", 0, NULL, O_JSON }, { "out_json_file", 1, NULL, O_JSON_FILE },
		{ "timeout", 1, NULL, O_TIMEOUT }, { "inject-mismatch", 0, NULL, O_INJECT },
		{ "events", 0, NULL, 'e' }, { "cq-mod", 1, NULL, O_CQ_MOD },
		{ "report-interval-us", 1, NULL, O_REPORT_US },
		{ "report-file", 1, NULL, O_REPORT_FILE }, { "linger-ms", 1, NULL, O_LINGER },
		{ "cc", 1, NULL, O_CC },
		{ "help", 0, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const struct perf_test_desc *t = &perf_tests[test];
	bool atomic = t->op >= BLUE_WR_ATOMIC_CMP_AND_SWP;
	long long v;
	int c;

	memset(o, 0, sizeof(*o));
	o->test = test;
	o->port = PERF_DEF_PORT;
	o->gidx = 1;
	o->size = atomic ? 8 : t->lat ? 2 : 65536;
	o->iters = t->def_iters;
	o->nqps = 1;
	o->tx_depth = t->def_depth;
	o->post_list = 1;
	/* perftest's latency tests send small messages inline by default; READ cannot */
	o->inline_size = t->lat && t->op != BLUE_WR_RDMA_READ && !atomic ? PERF_LAT_INLINE : 0;
	o->json_file = "perftest_out.json";
	o->timeout_s = 30;
	o->report_file = "flows.csv";
	while ((c = getopt_long(argc, argv, "d:x:p:s:an:D:q:t:l:I:m:A:eh", lopts, NULL)) != -1) {
		v = 0;
		switch (c) {
		case 'd': o->ifname = optarg; break;
		case 'x':
			v = tool_num_arg("GID index", optarg, 0, 255, false);
			o->gidx = (int)v;
			break;
		case 'p':
			v = tool_num_arg("port", optarg, 1, 65535, false);
			o->port = (uint16_t)v;
			break;
		case 's':
			v = tool_num_arg("size", optarg, 1, 1ll << 30, true);
			o->size = (uint32_t)v;
			break;
		case 'a': o->all_sizes = true; break;
		case 'n':
			v = tool_num_arg("iterations", optarg, 1, 1ll << 31, true);
			o->iters = (uint32_t)v;
			break;
		case 'D':
			v = tool_num_arg("duration", optarg, 1, 3600, false);
			o->duration = (uint32_t)v;
			break;
		case 'q':
			v = tool_num_arg("QP count", optarg, 1, PERF_MAX_QPS, false);
			o->nqps = (uint32_t)v;
			break;
		case 't':
			v = tool_num_arg("TX depth", optarg, 1, 8192, false);
			o->tx_depth = (uint32_t)v;
			break;
		case 'l':
			v = tool_num_arg("post list", optarg, 1, 8192, false);
			o->post_list = (uint32_t)v;
			break;
		case 'I':
			v = tool_num_arg("inline size", optarg, 0, 512, false);
			o->inline_size = (uint32_t)v;
			break;
		case 'm':
			v = tool_mtu_arg(optarg);
			if (v > 0)
				o->mtu = (enum blue_mtu)v;
			break;
		case 'A':
			if (!atomic || (strcmp(optarg, "CMP_AND_SWAP") &&
					strcmp(optarg, "FETCH_AND_ADD"))) {
				fprintf(stderr, "-A takes CMP_AND_SWAP or FETCH_AND_ADD (atomic tests)\n");
				v = -1;
			}
			o->cas = !strcmp(optarg, "CMP_AND_SWAP");
			break;
		case 'e': o->events = true; break;
		case O_CC:
			o->cc_given = true;
			v = tool_cc_arg(optarg, &o->cc_caps);
			break;
		case O_GBITS: o->gbits = true; break;
		case O_JSON: o->json = true; break;
		case O_JSON_FILE: o->json = true; o->json_file = optarg; break;
		case O_TIMEOUT:
			v = tool_num_arg("timeout", optarg, 1, 3600, false);
			o->timeout_s = (int)v;
			break;
		case O_INJECT:
			if (t->lat) {
				fprintf(stderr, "--inject-mismatch: bandwidth tests only\n");
				return 1;
			}
			o->inject = true;
			break;
		case O_CQ_MOD:
			v = tool_num_arg("CQ moderation", optarg, 1, 8192, false);
			o->cq_mod = (uint32_t)v;
			break;
		case O_REPORT_US:
			v = tool_num_arg("report interval", optarg, 100, 10000000, false);
			o->report_us = (uint32_t)v;
			break;
		case O_REPORT_FILE: o->report_file = optarg; break;
		case O_LINGER:
			v = tool_num_arg("linger", optarg, 0, 600000, false);
			o->linger_ms = (uint32_t)v;
			break;
		case 'h':
			usage(stdout, argv[0], t);
			return 2;
		default:
			usage(stderr, argv[0], t);
			return 1;
		}
		if (v < 0)
			return 1;
	}
	if (optind == argc - 1)
		o->server = argv[optind];
	else if (optind < argc) {
		usage(stderr, argv[0], t);
		return 1;
	}
	if (!o->ifname) {
		fprintf(stderr, "-d IF is required: the netdev blue is attached to\n");
		return 1;
	}
	if (atomic && o->size != 8) {
		fprintf(stderr, "atomics move 8 bytes: -s %u is not possible\n", o->size);
		return 1;
	}
	if (atomic && o->all_sizes) {
		fprintf(stderr, "-a: atomics have one size (8 bytes)\n");
		return 1;
	}
	if (o->size > PERF_MAX_SIZE) {
		fprintf(stderr, "-s %u: at most %u bytes\n", o->size, PERF_MAX_SIZE);
		return 1;
	}
	if (t->lat && (o->nqps > 1 || o->post_list > 1)) {
		fprintf(stderr, "latency tests run one QP with one WR at a time (-q 1, -l 1)\n");
		return 1;
	}
	if (o->report_us && (t->lat || o->all_sizes)) {
		fprintf(stderr, "--report-interval-us: bandwidth tests at one size only (no -a)\n");
		return 1;
	}
	if (o->post_list > o->tx_depth) {
		fprintf(stderr, "-l %u is more than -t %u WRs outstanding\n", o->post_list,
			o->tx_depth);
		return 1;
	}
	return 0;
}
