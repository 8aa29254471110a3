// SPDX-License-Identifier: MIT
/*
 * bluectl: attach blue to a netdev, detach it, and look at a live one through what the
 * loader pinned (loader/loader.h), so it works on a netdev whatever process attached
 * blue or runs the transport there.
 *
 * Exit status: 0 done, 1 the operation failed (the reason is on stderr), 2 usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bluectl/bluectl.h"

static const char usage_text[] =
	"usage: bluectl [-v] [--json] COMMAND ARGS\n"
	"\n"
	"  attach IFNAME [--mode native|generic]  load blue's XDP program, pin its maps\n"
	"                                         in this network namespace's directory\n"
	"                                         under " BLUE_PIN_ROOT " (see pin-dir),\n"
	"                                         attach it (default mode: native); pins of\n"
	"                                         netdevs that are gone are reclaimed\n"
	"  detach IFNAME                          detach it and remove the pins\n"
	"  pin-dir [IFNAME]                       where IFNAME's pins are (attached or not),\n"
	"                                         or this network namespace's directory\n"
	"  stats IFNAME                           XDP verdicts by reason (summed over CPUs),\n"
	"                                         HAL ring and engine counters, diagnostics\n"
	"  qp list IFNAME                         one row per QP, grouped by peer like `ss`,\n"
	"                                         then one line per peer\n"
	"  qp show IFNAME QPN                     every field of one queue pair\n"
	"  watch IFNAME [--interval SEC] [--count N]\n"
	"                                         refresh stats and the busiest QPs like top\n"
	"  metrics IFNAME [--listen ADDR:PORT [--max-requests N]] [--expose-psn]\n"
	"          [--expose-peers]               Prometheus text exposition on stdout, or\n"
	"                                         served over HTTP at /metrics (ADDR is\n"
	"                                         required: 127.0.0.1, or the address of a\n"
	"                                         management network). Per-QP PSNs and MSN\n"
	"                                         (--expose-psn), peers' addresses and QPNs\n"
	"                                         (--expose-peers) are left out unless asked\n"
	"                                         for: they are what a spoofer needs\n"
	"  tenant list|reload IFNAME              blue-manager's tenants: class, weight, rate,\n"
	"  tenant show IFNAME NAME                quotas held/allowed, processes, traffic,\n"
	"  tenant set IFNAME NAME KEY=VALUE...    throttling; set (root) changes a tenant's\n"
	"                                         limits as a config line's keys; reload\n"
	"                                         (root) reads the file again, as SIGHUP\n"
	"  diag on|off|show IFNAME                switch the costly diagnostics (XDP drop\n"
	"                                         events, post-to-completion latency\n"
	"                                         histograms) at run time; off after attach\n"
	"  drops IFNAME [--count N] [--timeout SEC]\n"
	"                                         print XDP drop events as they happen (needs\n"
	"                                         diag on); each also fires USDT blue:xdp_drop\n"
	"  set IFNAME [qp QPN] KEY=VALUE...       change retransmission, congestion control\n"
	"                                         or diagnostics under the running engines:\n"
	"                                         the interface's defaults (every QP, and\n"
	"                                         QPs created later) or one QP's; waits up\n"
	"                                         to 200 ms for the engine to apply it\n"
	"                                         (keys: retx.policy, retx.timer,\n"
	"                                         retx.base_us, retx.k_us, cc.algo, cc.ecn,\n"
	"                                         dcqcn.*, window.*, diag; 'get' lists all)\n"
	"  get IFNAME [qp QPN]                    every key=value a QP runs now, or the\n"
	"                                         interface's defaults\n"
	"\n"
	"  --json          one JSON value per line instead of text (every command)\n"
	"  -v, --verbose   show libbpf's messages (verifier log, kernel errors)\n"
	"  -h, --help      this text\n";

enum {
	O_MODE = 256, O_JSON, O_INTERVAL, O_COUNT, O_TIMEOUT, O_LISTEN, O_MAXREQ, O_EXPOSE_PSN,
	O_EXPOSE_PEERS,
};
/* the long options a command line used, as bits */
#define OBIT(o)	(1u << ((o) - O_MODE))

static void log_to_stderr(enum blue_loader_log_level level, const char *msg)
{
	switch (level) {
	case BLUE_LOADER_LOG_ERROR:
	case BLUE_LOADER_LOG_INFO:
		fprintf(stderr, "bluectl: %s\n", msg);
		break;
	case BLUE_LOADER_LOG_WARN:
		fprintf(stderr, "bluectl: warning: %s\n", msg);
		break;
	case BLUE_LOADER_LOG_DEBUG:
		fprintf(stderr, "%s\n", msg);
		break;
	}
}

int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bluectl: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%s", usage_text);
	return EXIT_USAGE;
}

static bool num_opt(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

/* Which options each command takes: the rest are refused, never ignored. */
static int check_opts(const char *cmd, const struct opts *o, unsigned int seen)
{
	static const struct { const char *cmd; unsigned int ok; } allowed[] = {
		{ "attach", OBIT(O_MODE) },
		{ "watch", OBIT(O_INTERVAL) | OBIT(O_COUNT) },
		{ "metrics", OBIT(O_LISTEN) | OBIT(O_MAXREQ) | OBIT(O_EXPOSE_PSN) |
			     OBIT(O_EXPOSE_PEERS) },
		{ "drops", OBIT(O_COUNT) | OBIT(O_TIMEOUT) },
	};
	unsigned int ok = 0, i;

	for (i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		if (!strcmp(cmd, allowed[i].cmd))
			ok = allowed[i].ok;
	seen &= ~ok;
	if (seen & OBIT(O_MODE))
		return usage_error("--mode applies to 'attach' only");
	if (seen & OBIT(O_INTERVAL))
		return usage_error("--interval applies to 'watch' only");
	if (seen & OBIT(O_COUNT))
		return usage_error("--count applies to 'watch' and 'drops' only");
	if (seen & OBIT(O_TIMEOUT))
		return usage_error("--timeout applies to 'drops' only");
	if (seen & (OBIT(O_LISTEN) | OBIT(O_MAXREQ) | OBIT(O_EXPOSE_PSN) | OBIT(O_EXPOSE_PEERS)))
		return usage_error("--listen, --max-requests, --expose-psn and --expose-peers "
				   "apply to 'metrics' only");
	if (o->max_requests && !o->listen)
		return usage_error("--max-requests needs --listen");
	if (o->listen && o->json)
		return usage_error("--listen serves the Prometheus text format; drop --json");
	return 0;
}

static int dispatch(int argc, char **argv, const struct opts *o, unsigned int seen)
{
	const char *cmd = argv[0];
	int ret;

	if (!strcmp(cmd, "help")) {
		fputs(usage_text, stdout);
		return 0;
	}
	ret = check_opts(cmd, o, seen);
	if (ret)
		return ret;
	if (!strcmp(cmd, "pin-dir")) {
		if (argc > 2)
			return usage_error("'pin-dir' takes at most one IFNAME");
		return cmd_pin_dir(argc == 2 ? argv[1] : NULL, o);
	}
	if (!strcmp(cmd, "attach") || !strcmp(cmd, "detach") || !strcmp(cmd, "stats") ||
	    !strcmp(cmd, "watch") || !strcmp(cmd, "metrics") || !strcmp(cmd, "drops")) {
		if (argc != 2)
			return usage_error("'%s' takes exactly one IFNAME", cmd);
		if (!strcmp(cmd, "attach"))
			return cmd_attach(argv[1], o);
		if (!strcmp(cmd, "detach"))
			return cmd_detach(argv[1], o);
		if (!strcmp(cmd, "stats"))
			return cmd_stats(argv[1], o);
		if (!strcmp(cmd, "watch"))
			return cmd_watch(argv[1], o);
		if (!strcmp(cmd, "metrics"))
			return cmd_metrics(argv[1], o);
		return cmd_drops(argv[1], o);
	}
	if (!strcmp(cmd, "qp")) {
		if (argc == 3 && !strcmp(argv[1], "list"))
			return cmd_qp_list(argv[2], o);
		if (argc == 4 && !strcmp(argv[1], "show"))
			return cmd_qp_show(argv[2], argv[3], o);
		return usage_error("usage: 'qp list IFNAME' or 'qp show IFNAME QPN'");
	}
	if (!strcmp(cmd, "set") || !strcmp(cmd, "get")) {
		if (argc < 2)
			return usage_error("'%s' needs an IFNAME", cmd);
		if (!strcmp(cmd, "set"))
			return cmd_set(argv[1], argc - 2, argv + 2, o);
		return cmd_get(argv[1], argc - 2, argv + 2, o);
	}
	if (!strcmp(cmd, "tenant"))
		return cmd_tenant(argc, argv);
	if (!strcmp(cmd, "diag")) {
		if (argc == 3 && (!strcmp(argv[1], "on") || !strcmp(argv[1], "off") ||
				  !strcmp(argv[1], "show")))
			return cmd_diag(argv[1], argv[2], o);
		return usage_error("usage: 'diag on|off|show IFNAME'");
	}
	return usage_error("unknown command '%s'", cmd);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "mode", required_argument, NULL, O_MODE },
		{ "json", no_argument, NULL, O_JSON },
		{ "interval", required_argument, NULL, O_INTERVAL },
		{ "count", required_argument, NULL, O_COUNT },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "listen", required_argument, NULL, O_LISTEN },
		{ "max-requests", required_argument, NULL, O_MAXREQ },
		{ "expose-psn", no_argument, NULL, O_EXPOSE_PSN },
		{ "expose-peers", no_argument, NULL, O_EXPOSE_PEERS },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .mode = BLUE_XDP_NATIVE, .interval = 1.0 };
	unsigned int seen = 0;
	double v;
	int c;

	blue_loader_set_log_fn(log_to_stderr);
	while ((c = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		if (c >= O_MODE && c != O_JSON)
			seen |= OBIT(c);
		switch (c) {
		case 'v':
			blue_loader_set_log_level(BLUE_LOADER_LOG_DEBUG);
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case O_MODE:
			if (!strcmp(optarg, "native"))
				o.mode = BLUE_XDP_NATIVE;
			else if (!strcmp(optarg, "generic"))
				o.mode = BLUE_XDP_GENERIC;
			else
				return usage_error("--mode '%s': expected native or generic",
						   optarg);
			o.mode_set = true;
			break;
		case O_JSON:
			o.json = true;
			break;
		case O_INTERVAL:
			if (!num_opt(optarg, 0.01, 3600, &o.interval))
				return usage_error("--interval '%s': seconds, 0.01 to 3600",
						   optarg);
			break;
		case O_COUNT:
			if (!num_opt(optarg, 1, 1e9, &v) || v != (long)v)
				return usage_error("--count '%s': a whole number from 1", optarg);
			o.count = (long)v;
			break;
		case O_TIMEOUT:
			if (!num_opt(optarg, 0.01, 86400, &o.timeout))
				return usage_error("--timeout '%s': seconds, 0.01 to 86400",
						   optarg);
			break;
		case O_LISTEN:
			o.listen = optarg;
			break;
		case O_EXPOSE_PSN:
			o.expose_psn = true;
			break;
		case O_EXPOSE_PEERS:
			o.expose_peers = true;
			break;
		case O_MAXREQ:
			if (!num_opt(optarg, 1, 1e9, &v) || v != (long)v)
				return usage_error("--max-requests '%s': a whole number from 1",
						   optarg);
			o.max_requests = (long)v;
			break;
		default:
			fputs(usage_text, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc)
		return usage_error("no command given");
	return dispatch(argc - optind, argv + optind, &o, seen);
}
