// SPDX-License-Identifier: MIT
/*
 * bluectl: attach blue to a netdev, detach it, and look at what it pinned there.
 *
 *   bluectl [-v] attach IFNAME [--mode native|generic]
 *   bluectl [-v] detach IFNAME
 *   bluectl [-v] stats IFNAME [--json]
 *   bluectl [-v] qp list IFNAME
 *   bluectl [-v] qp show IFNAME QPN
 *
 * Exit status: 0 done, 1 the operation failed (the reason is on stderr), 2 usage error.
 * Everything here goes through the loader's pins (loader/loader.h), so bluectl works on
 * a netdev whose program was attached by any process.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>

#include <blue/wire.h>

#include "loader/loader.h"

#define EXIT_USAGE 2

static const char usage_text[] =
	"usage: bluectl [-v] COMMAND ARGS\n"
	"\n"
	"  attach IFNAME [--mode native|generic]  load blue's XDP program, pin its maps\n"
	"                                         under " BLUE_PIN_ROOT "/IFNAME, attach it\n"
	"                                         (default mode: native)\n"
	"  detach IFNAME                          detach it and remove the pins\n"
	"  stats IFNAME [--json]                  XDP verdicts by reason, summed over CPUs\n"
	"  qp list IFNAME                         the queue pairs in the QP-context map\n"
	"  qp show IFNAME QPN                     every field of one queue pair\n"
	"\n"
	"  -v, --verbose   show libbpf's messages (verifier log, kernel errors)\n"
	"  -h, --help      this text\n";

struct opts {
	enum blue_xdp_mode mode;
	bool mode_set;
	bool json;
};

static void log_to_stderr(enum blue_loader_log_level level, const char *msg)
{
	switch (level) {
	case BLUE_LOADER_LOG_ERROR:
		fprintf(stderr, "bluectl: %s\n", msg);
		break;
	case BLUE_LOADER_LOG_WARN:
		fprintf(stderr, "bluectl: warning: %s\n", msg);
		break;
	case BLUE_LOADER_LOG_INFO:
		fprintf(stderr, "bluectl: %s\n", msg);
		break;
	case BLUE_LOADER_LOG_DEBUG:
		fprintf(stderr, "%s\n", msg);
		break;
	}
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bluectl: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%s", usage_text);
	return EXIT_USAGE;
}

/* --- attach / detach ------------------------------------------------------------- */

static int cmd_attach(const char *ifname, const struct opts *o)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	struct blue_pins p;
	char dir[256];

	if (blue_loader_attach(ifname, o->mode, 0))
		return 1;
	/* read it back through the pins, as every other user will */
	if (blue_pins_open(ifname, &p))
		return 1;
	bpf_obj_get_info_by_fd(p.prog_fd, &info, &len);
	blue_pin_path(dir, sizeof(dir), ifname, NULL);
	printf("%s: blue attached in %s mode (prog id %u), pinned at %s\n", ifname,
	       o->mode == BLUE_XDP_NATIVE ? "native" : "generic", info.id, dir);
	blue_pins_close(&p);
	return 0;
}

static int cmd_detach(const char *ifname)
{
	if (blue_loader_detach(ifname))
		return 1;
	printf("%s: blue detached\n", ifname);
	return 0;
}

/* --- stats ------------------------------------------------------------------------- */

/* Interface names may hold any byte but '/', ':' and whitespace, so escape them. */
static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", (unsigned char)*s);
		else
			putchar(*s);
	}
	putchar('"');
}

static int cmd_stats(const char *ifname, const struct opts *o)
{
	struct blue_stat st[BLUE_STAT__MAX];
	struct blue_pins p;
	__u32 r;
	int ret;

	if (blue_pins_open(ifname, &p))
		return 1;
	ret = blue_pins_read_stats(p.stats_fd, st);
	blue_pins_close(&p);
	if (ret) {
		fprintf(stderr, "bluectl: %s: reading the stats map failed: %s\n", ifname,
			strerror(-ret));
		return 1;
	}
	if (o->json) {
		printf("{\"ifname\": ");
		json_str(ifname);
		printf(", \"stats\": {");
		for (r = 0; r < BLUE_STAT__MAX; r++)
			printf("%s\"%s\": {\"pkts\": %llu, \"bytes\": %llu}", r ? ", " : "",
			       blue_stat_name(r), (unsigned long long)st[r].pkts,
			       (unsigned long long)st[r].bytes);
		printf("}}\n");
		return 0;
	}
	printf("%-20s %14s %16s\n", "reason", "pkts", "bytes");
	for (r = 0; r < BLUE_STAT__MAX; r++)
		printf("%-20s %14llu %16llu\n", blue_stat_name(r),
		       (unsigned long long)st[r].pkts, (unsigned long long)st[r].bytes);
	return 0;
}

/* --- qp ---------------------------------------------------------------------------- */

static const char *qp_state_name(__u8 s)
{
	static const char *const names[] = {
		[BLUE_QPS_RESET] = "RESET", [BLUE_QPS_INIT] = "INIT", [BLUE_QPS_RTR] = "RTR",
		[BLUE_QPS_RTS] = "RTS", [BLUE_QPS_SQD] = "SQD", [BLUE_QPS_SQE] = "SQE",
		[BLUE_QPS_ERR] = "ERR",
	};

	return s < sizeof(names) / sizeof(names[0]) && names[s] ? names[s] : "?";
}

static const char *qp_type_name(__u8 t)
{
	switch (t) {
	case BLUE_QPT_NONE:	return "-";
	case BLUE_QPT_RC:	return "RC";
	case BLUE_QPT_UC:	return "UC";
	case BLUE_QPT_UD:	return "UD";
	default:		return "?";
	}
}

/* A slot is in use when it holds a QPN whose low bits name that very slot. */
static bool slot_in_use(const struct blue_qp_ctx *q, __u32 slot)
{
	return q->qpn != 0 && blue_qpn_slot(q->qpn) == slot;
}

/* Map the table read-only; the runtime and the XDP program keep writing it. */
static int qp_table_open(const char *ifname, struct blue_qp_ctx **table)
{
	struct blue_pins p;

	if (blue_pins_open(ifname, &p))
		return 1;
	*table = blue_pins_mmap_qp_ctx(p.qp_ctx_fd, false);
	blue_pins_close(&p);
	if (!*table) {
		fprintf(stderr, "bluectl: %s: cannot map the %s map: %s\n", ifname,
			BLUE_PIN_QP_CTX, strerror(errno));
		return 1;
	}
	return 0;
}

static int cmd_qp_list(const char *ifname)
{
	struct blue_qp_ctx *table, q;
	unsigned int n = 0;
	__u32 slot;

	if (qp_table_open(ifname, &table))
		return 1;
	for (slot = 0; slot < BLUE_MAX_QP; slot++) {
		memcpy(&q, &table[slot], sizeof(q));
		if (!slot_in_use(&q, slot))
			continue;
		if (!n++)
			printf("%-8s %-5s %-4s %4s %-8s %-8s %-8s %12s\n", "qpn", "state", "type",
			       "xsk", "sq_psn", "una_psn", "rq_psn", "xdp_rx_pkts");
		printf("0x%06x %-5s %-4s %4u 0x%06x 0x%06x 0x%06x %12llu\n", q.qpn,
		       qp_state_name(q.state), qp_type_name(q.type), q.xsk_slot, q.sq_psn,
		       q.una_psn, q.rq_psn, (unsigned long long)q.xdp_rx_pkts);
	}
	if (!n)
		printf("%s: no QPs in use\n", ifname);
	blue_pins_munmap_qp_ctx(table);
	return 0;
}

static void print_ip(const char *key, __u32 be_addr)
{
	char buf[INET_ADDRSTRLEN];
	struct in_addr a = { .s_addr = be_addr };

	printf("%-18s %s\n", key, inet_ntop(AF_INET, &a, buf, sizeof(buf)));
}

#define SHOW_U(key, v)	printf("%-18s %llu\n", key ":", (unsigned long long)(v))
#define SHOW_X(key, v)	printf("%-18s 0x%06x\n", key ":", (unsigned int)(v))

static void show_qp(const struct blue_qp_ctx *q, __u32 slot)
{
	printf("%-18s 0x%06x (%u), slot %u\n", "qpn:", q->qpn, q->qpn, slot);
	printf("%-18s %s (%u)\n", "state:", qp_state_name(q->state), q->state);
	printf("%-18s %s (%u)\n", "type:", qp_type_name(q->type), q->type);
	if (q->path_mtu >= 1 && q->path_mtu <= 5)
		printf("%-18s %u (%u)\n", "path_mtu:", 128u << q->path_mtu, q->path_mtu);
	else
		printf("%-18s ? (%u)\n", "path_mtu:", q->path_mtu);
	SHOW_U("xsk_slot", q->xsk_slot);
	SHOW_X("peer_qpn", q->peer_qpn);
	print_ip("peer_ip:", q->peer_ip);
	print_ip("local_ip:", q->local_ip);
	SHOW_X("sq_psn", q->sq_psn);
	SHOW_X("una_psn", q->una_psn);
	SHOW_U("outstanding", q->outstanding);
	SHOW_U("retry_left", q->retry_left);
	SHOW_X("rq_psn", q->rq_psn);
	SHOW_X("msn", q->msn);
	SHOW_X("last_nak_psn", q->last_nak_psn);
	printf("%-18s 0x%02x\n", "last_nak_syndrome:", q->last_nak_syndrome);
	SHOW_U("rnr_left", q->rnr_left);
	SHOW_U("cwnd", q->cwnd);
	SHOW_U("rate_mbps", q->rate_mbps);
	SHOW_U("timer_deadline_ns", q->timer_deadline_ns);
	SHOW_U("retransmits", q->retransmits);
	SHOW_U("naks_sent", q->naks_sent);
	SHOW_U("naks_rcvd", q->naks_rcvd);
	SHOW_U("rnr_events", q->rnr_events);
	SHOW_U("cnps", q->cnps);
	SHOW_U("tx_pkts", q->tx_pkts);
	SHOW_U("tx_bytes", q->tx_bytes);
	SHOW_U("rx_pkts", q->rx_pkts);
	SHOW_U("rx_bytes", q->rx_bytes);
	SHOW_U("xdp_rx_pkts", q->xdp_rx_pkts);
}

static int cmd_qp_show(const char *ifname, const char *qpn_arg)
{
	struct blue_qp_ctx *table, q;
	unsigned long qpn;
	char *end;
	__u32 slot;

	errno = 0;
	qpn = strtoul(qpn_arg, &end, 0);
	if (errno || *end || end == qpn_arg || qpn == 0 || qpn > BLUE_QPN_MASK) {
		fprintf(stderr, "bluectl: '%s': not a QPN (1 to 0x%x, decimal or 0x-hex)\n",
			qpn_arg, BLUE_QPN_MASK);
		return EXIT_USAGE;
	}
	if (qp_table_open(ifname, &table))
		return 1;
	slot = blue_qpn_slot((__u32)qpn);
	memcpy(&q, &table[slot], sizeof(q));
	blue_pins_munmap_qp_ctx(table);
	if (q.qpn != qpn) {
		if (slot_in_use(&q, slot))
			fprintf(stderr, "bluectl: %s: QP 0x%06lx not found (its slot %u holds QP 0x%06x)\n",
				ifname, qpn, slot, q.qpn);
		else
			fprintf(stderr, "bluectl: %s: QP 0x%06lx not found (slot %u is free)\n", ifname,
				qpn, slot);
		return 1;
	}
	show_qp(&q, slot);
	return 0;
}

/* --- main ------------------------------------------------------------------------ */

static int dispatch(int argc, char **argv, const struct opts *o)
{
	const char *cmd = argv[0];

	if (!strcmp(cmd, "help")) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (o->json && strcmp(cmd, "stats"))
		return usage_error("--json applies to 'stats' only");
	if (o->mode_set && strcmp(cmd, "attach"))
		return usage_error("--mode applies to 'attach' only");
	if (!strcmp(cmd, "attach") || !strcmp(cmd, "detach") || !strcmp(cmd, "stats")) {
		if (argc != 2)
			return usage_error("'%s' takes exactly one IFNAME", cmd);
		if (cmd[0] == 'a')
			return cmd_attach(argv[1], o);
		if (cmd[0] == 'd')
			return cmd_detach(argv[1]);
		return cmd_stats(argv[1], o);
	}
	if (!strcmp(cmd, "qp")) {
		if (argc == 3 && !strcmp(argv[1], "list"))
			return cmd_qp_list(argv[2]);
		if (argc == 4 && !strcmp(argv[1], "show"))
			return cmd_qp_show(argv[2], argv[3]);
		return usage_error("usage: 'qp list IFNAME' or 'qp show IFNAME QPN'");
	}
	return usage_error("unknown command '%s'", cmd);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "mode", required_argument, NULL, 'm' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .mode = BLUE_XDP_NATIVE };
	int c;

	blue_loader_set_log_fn(log_to_stderr);
	while ((c = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'v':
			blue_loader_set_log_level(BLUE_LOADER_LOG_DEBUG);
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'm':
			if (!strcmp(optarg, "native"))
				o.mode = BLUE_XDP_NATIVE;
			else if (!strcmp(optarg, "generic"))
				o.mode = BLUE_XDP_GENERIC;
			else
				return usage_error("--mode '%s': expected native or generic", optarg);
			o.mode_set = true;
			break;
		case 'j':
			o.json = true;
			break;
		default:
			fputs(usage_text, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc)
		return usage_error("no command given");
	return dispatch(argc - optind, argv + optind, &o);
}
