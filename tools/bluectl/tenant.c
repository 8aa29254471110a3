// SPDX-License-Identifier: MIT
/*
 * bluectl tenant: blue-manager's tenants (runtime/tenant.h), asked over its command
 * channel (runtime/mgr_proto.h) without opening the device: list, show one, change one
 * (root), read the config file again (root, as SIGHUP does). Also the tenants' series
 * for `bluectl metrics` when a blue-manager serves the netdev.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "runtime/mgr_proto.h"
#include "runtime/mgr_sock.h"
#include "tools/bluectl/bluectl.h"

/* The channel to @ifname's blue-manager, or -1 (with @quiet: nothing said). */
static int mgr_open(const char *ifname, bool quiet)
{
	struct sockaddr_un sa;
	socklen_t len;
	int fd;

	if (blue__mgr_addr(ifname, &sa, &len))
		return -1;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, len) == 0)
		return fd;
	if (!quiet)
		fprintf(stderr, "bluectl: no blue-manager serves %s in this network namespace "
			"(start `blue-manager -d %s --tenants FILE`)\n", ifname, ifname);
	if (fd >= 0)
		close(fd);
	return -1;
}

/* One request and its reply. Return: the reply's errno (0), or EPIPE. */
static int mgr_ask(int fd, struct blue_mgr_req *req, struct blue_mgr_rep *rep)
{
	int fds[BLUE_MGR_MAX_FDS], nfds = 0;
	long n;

	memset(rep, 0, sizeof(*rep));
	if (blue__mgr_send(fd, req, sizeof(*req), NULL, 0))
		return EPIPE;
	n = blue__mgr_recv(fd, rep, sizeof(*rep), fds, &nfds);
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
	if (n != (long)sizeof(*rep))
		return EPIPE;
	return rep->err;
}

/* "held/allowed", "-" for no limit */
static void held(char *buf, size_t len, uint64_t used, uint64_t max)
{
	if (max)
		snprintf(buf, len, "%llu/%llu", (unsigned long long)used, (unsigned long long)max);
	else
		snprintf(buf, len, "%llu/-", (unsigned long long)used);
}

static void print_row(const struct blue_mgr_rep *r, bool head)
{
	const typeof(r->u.tenant) *t = &r->u.tenant;
	char rate[24] = "-", q[24], m[24], b[48], c[24];

	if (head)
		printf("%-16s %-8s %6s %12s %9s %9s %14s %9s %5s %14s %14s %10s %6s\n", "TENANT",
		       "CLASS", "WEIGHT", "RATE(bit/s)", "QPS", "MRS", "MR_BYTES", "CQS", "PROCS",
		       "TX_BYTES", "RX_BYTES", "THROTTLED", "EDQUOT");
	if (t->lim.rate_bps)
		snprintf(rate, sizeof(rate), "%llu", (unsigned long long)t->lim.rate_bps);
	held(q, sizeof(q), t->use.qps, t->lim.qps);
	held(m, sizeof(m), t->use.mrs, t->lim.mrs);
	held(b, sizeof(b), t->use.mr_bytes, t->lim.mr_bytes);
	held(c, sizeof(c), t->use.cqs, t->lim.cqs);
	printf("%-16s %-8s %6u %12s %9s %9s %14s %9s %5u %14llu %14llu %10llu %6llu%s\n",
	       t->name, blue__tenant_class_str(t->lim.klass), t->lim.weight, rate, q, m, b, c,
	       t->use.sessions, (unsigned long long)t->use.tx_bytes,
	       (unsigned long long)t->use.rx_bytes, (unsigned long long)t->use.throttled,
	       (unsigned long long)t->use.over_quota, t->in_config ? "" : "  (not in the file)");
}

/* Each tenant in turn, to @fn. Return: 0, or 1 after saying why. */
static int for_each(const char *ifname, int (*fn)(const struct blue_mgr_rep *r, unsigned int i,
						  void *arg), void *arg, bool quiet)
{
	struct blue_mgr_req req = { .op = BLUE_MGR_TENANT_GET };
	struct blue_mgr_rep rep;
	int fd = mgr_open(ifname, quiet), err, ret = 0;

	if (fd < 0)
		return 1;
	for (unsigned int i = 0;; i++) {
		req.u.tenant.index = i;
		err = mgr_ask(fd, &req, &rep);
		if (err == ENOENT)
			break;
		if (err) {
			if (!quiet)
				fprintf(stderr, "bluectl: tenant: %s\n", rep.msg[0] ? rep.msg :
					strerror(err));
			ret = 1;
			break;
		}
		ret = fn(&rep, i, arg);
		if (ret)
			break;
	}
	close(fd);
	return ret;
}

static int list_one(const struct blue_mgr_rep *r, unsigned int i, void *arg)
{
	const char *only = arg;

	if (only && strcmp(only, r->u.tenant.name))
		return 0;
	print_row(r, i == 0 || only);
	if (only)
		return -1;	/* found: stop */
	return 0;
}

static int cmd_tenant_list(const char *ifname, const char *only)
{
	int ret = for_each(ifname, list_one, (void *)only, false);

	if (ret == -1)
		return 0;
	if (only && ret == 0) {
		fprintf(stderr, "bluectl: tenant show: %s's blue-manager has no tenant \"%s\"\n",
			ifname, only);
		return 1;
	}
	return ret;
}

static int cmd_tenant_change(const char *ifname, uint32_t op, const char *name, int argc,
			     char **argv)
{
	struct blue_mgr_req req = { .op = op };
	struct blue_mgr_rep rep;
	size_t used = 0;
	int fd, err;

	if (name)
		snprintf(req.u.tenant.name, sizeof(req.u.tenant.name), "%s", name);
	for (int i = 0; i < argc; i++) {
		int n = snprintf(req.u.tenant.items + used, sizeof(req.u.tenant.items) - used,
				 "%s%s", i ? " " : "", argv[i]);

		if (n < 0 || (size_t)n >= sizeof(req.u.tenant.items) - used)
			return usage_error("tenant set: the changes are longer than %zu characters",
					   sizeof(req.u.tenant.items) - 1);
		used += (size_t)n;
	}
	fd = mgr_open(ifname, false);
	if (fd < 0)
		return 1;
	err = mgr_ask(fd, &req, &rep);
	close(fd);
	if (err) {
		fprintf(stderr, "bluectl: tenant: %s\n", rep.msg[0] ? rep.msg : strerror(err));
		return 1;
	}
	return cmd_tenant_list(ifname, name);
}

int cmd_tenant(int argc, char **argv)
{
	/* argv[0] is "tenant" */
	if (argc == 3 && !strcmp(argv[1], "list"))
		return cmd_tenant_list(argv[2], NULL);
	if (argc == 4 && !strcmp(argv[1], "show"))
		return cmd_tenant_list(argv[2], argv[3]);
	if (argc >= 5 && !strcmp(argv[1], "set"))
		return cmd_tenant_change(argv[2], BLUE_MGR_TENANT_SET, argv[3], argc - 4, argv + 4);
	if (argc == 3 && !strcmp(argv[1], "reload")) {
		if (cmd_tenant_change(argv[2], BLUE_MGR_TENANT_RELOAD, NULL, 0, NULL))
			return 1;
		return 0;
	}
	return usage_error("usage: 'tenant list IFNAME', 'tenant show IFNAME NAME', "
			   "'tenant set IFNAME NAME KEY=VALUE...' or 'tenant reload IFNAME'");
}

struct metric_arg {
	FILE *f;
	const char *ifname;
	int pass;
};

static int metric_one(const struct blue_mgr_rep *r, unsigned int i, void *arg)
{
	static const struct {
		const char *name, *type, *help;
	} series[] = {
		{ "blue_tenant_tx_bytes_total", "counter", "payload bytes the tenant's QPs sent" },
		{ "blue_tenant_rx_bytes_total", "counter", "payload bytes the tenant's QPs received" },
		{ "blue_tenant_tx_packets_total", "counter", "request packets the tenant's QPs sent" },
		{ "blue_tenant_rx_packets_total", "counter", "packets the tenant's QPs received" },
		{ "blue_tenant_throttled_total", "counter", "sends its rate held back" },
		{ "blue_tenant_over_quota_total", "counter", "creations refused with EDQUOT" },
		{ "blue_tenant_qps", "gauge", "QPs the tenant holds" },
		{ "blue_tenant_mr_bytes", "gauge", "MR bytes the tenant holds" },
		{ "blue_tenant_processes", "gauge", "processes of the tenant connected" },
	};
	const typeof(r->u.tenant) *t = &r->u.tenant;
	struct metric_arg *m = arg;
	const uint64_t v[] = { t->use.tx_bytes, t->use.rx_bytes, t->use.tx_pkts, t->use.rx_pkts,
			       t->use.throttled, t->use.over_quota, t->use.qps, t->use.mr_bytes,
			       t->use.sessions };

	if (i == 0 && m->pass < (int)(sizeof(series) / sizeof(series[0])))
		fprintf(m->f, "# HELP %s %s\n# TYPE %s %s\n", series[m->pass].name,
			series[m->pass].help, series[m->pass].name, series[m->pass].type);
	fprintf(m->f, "%s{ifname=\"%s\",tenant=\"%s\",class=\"%s\"} %llu\n", series[m->pass].name,
		m->ifname, t->name, blue__tenant_class_str(t->lim.klass),
		(unsigned long long)v[m->pass]);
	return 0;
}

void tenant_metrics(FILE *f, const char *ifname)
{
	struct metric_arg m = { .f = f, .ifname = ifname };
	int fd = mgr_open(ifname, true);

	if (fd < 0)
		return;	/* library mode: no tenants to show */
	close(fd);
	for (m.pass = 0; m.pass < 9; m.pass++)
		if (for_each(ifname, metric_one, &m, true))
			return;
}
