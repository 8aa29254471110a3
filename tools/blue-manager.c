// SPDX-License-Identifier: MIT
/*
 * blue-manager: the daemon of daemon mode. It owns one queue of a netdev where
 * `bluectl attach` has run, runs the transport engine for it, and serves every libblue
 * process of this network namespace that opens the netdev (runtime/mgr_server.c).
 *
 *   blue-manager -d IF [-q QUEUE] [--spin-us N | --busy] [--cpu N]
 *
 * It prints "blue-manager: serving IF queue Q" once it takes connections, and stops
 * on SIGINT or SIGTERM, dropping what every process made.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "runtime/device.h"
#include "runtime/mgr_server.h"
#include "tools/common/tool_common.h"

static volatile sig_atomic_t stop, reload;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		reload = 1;
	else
		stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: blue-manager -d IF [-q QUEUE] [--tenants FILE] [--spin-us N | --busy] [--cpu N]\n"
		"                    [--supervise]\n"
		"  -d IF         the netdev (bluectl attach IF first)\n"
		"  -q QUEUE      its queue (default 0)\n"
		"  --tenants FILE  who may use it, with what quotas, rates and classes (README,\n"
		"                \"Daemon mode and tenants\"); SIGHUP reads it again\n"
		"  --spin-us N   how long the idle engine spins before it sleeps (default 0: it sleeps\n"
		"                at once, and the socket, the timer or a post wakes it)\n"
		"  --busy        never sleep: lowest latency, one core kept busy\n"
		"  --cpu N       pin the engine thread to CPU N\n"
		"  --supervise   run the daemon in a child and start it again when it dies\n"
		"                (SIGKILL, a crash); what the systemd unit does not need\n");
}

/* The daemon itself: the device, the command channel, the engine until a signal. */
static int serve(struct blue_mgr_server_cfg *cfg_in)
{
	struct blue_mgr_server_cfg cfg = *cfg_in;
	struct sigaction sa = { .sa_handler = on_signal };
	struct blue_mgr_server *srv;
	struct blue_context *ctx;
	int err;

	cfg.reload = &reload;
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	ctx = blue__open_device_local(cfg.ifname, cfg.queue);	/* says why on failure */
	if (!ctx)
		return 1;
	ctx->shared_rings = true;
	srv = blue__mgr_server_open(ctx, &cfg);
	if (!srv) {
		blue_close_device(ctx);
		return 1;
	}
	printf("blue-manager: serving %s queue %u\n", cfg.ifname, cfg.queue);
	fflush(stdout);
	err = blue__mgr_server_run(srv, &stop);
	printf("blue-manager: stopped; sessions served: %u\n", blue__mgr_server_sessions(srv));
	blue__mgr_server_close(srv);
	if (ctx->timer_fd >= 0) {
		close(ctx->timer_fd);
		ctx->timer_fd = -1;
	}
	if (blue_close_device(ctx))
		fprintf(stderr, "blue-manager: the device would not close\n");
	return err ? 1 : 0;
}

/* The daemon's PID under the supervisor, for the signals it passes on. */
static volatile pid_t child;

static void on_supervisor_signal(int sig)
{
	if (sig != SIGHUP)
		stop = 1;
	if (child > 0)
		kill(child, sig);	/* SIGHUP: read the tenants again; the rest: stop */
}

/*
 * --supervise: the daemon runs in a child, and a child that dies other than by the
 * supervisor's own stop (SIGKILL, a crash) is started again, so that processes that
 * reopen the device find it served. More than SUP_BURST restarts within SUP_WINDOW_S
 * is a daemon that cannot start: the supervisor gives up, saying so.
 */
#define SUP_BURST	5
#define SUP_WINDOW_S	10

static int run_supervised(struct blue_mgr_server_cfg *cfg)
{
	struct sigaction sa = { .sa_handler = on_supervisor_signal };
	time_t window = time(NULL);
	unsigned int restarts = 0, burst = 0;
	int status;
	pid_t pid;

	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	for (;;) {
		fflush(stdout);
		pid = fork();
		if (pid < 0) {
			fprintf(stderr, "blue-manager: supervisor: fork: %s\n", strerror(errno));
			return 1;
		}
		if (pid == 0) {
			signal(SIGHUP, SIG_DFL);
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
			exit(serve(cfg));
		}
		child = pid;
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		child = 0;
		if (stop)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
		if (time(NULL) - window > SUP_WINDOW_S) {
			window = time(NULL);
			burst = 0;
		}
		if (++burst > SUP_BURST) {
			fprintf(stderr, "blue-manager: supervisor: the daemon ended %u times within "
				"%d s; giving up\n", burst, SUP_WINDOW_S);
			return 1;
		}
		restarts++;
		if (WIFSIGNALED(status))
			printf("blue-manager: supervisor: the daemon (pid %d) was killed by signal "
			       "%d; starting it again (restart %u)\n", (int)pid, WTERMSIG(status),
			       restarts);
		else
			printf("blue-manager: supervisor: the daemon (pid %d) exited %d; starting it "
			       "again (restart %u)\n", (int)pid, WEXITSTATUS(status), restarts);
		fflush(stdout);
		usleep(200000);	/* the kernel has closed its AF_XDP socket by now */
	}
}
int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "spin-us", required_argument, NULL, 's' },
		{ "busy", no_argument, NULL, 'b' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "tenants", required_argument, NULL, 't' },
		{ "supervise", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct blue_mgr_server_cfg cfg = { .spin_us = 0 };
	bool supervise = false;
	long long v;
	long cpu = -1;
	int opt;

	while ((opt = getopt_long(argc, argv, "d:q:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			cfg.ifname = optarg;
			break;
		case 'q':
			if ((v = tool_num_arg("queue", optarg, 0, 63, false)) < 0)
				return 2;
			cfg.queue = (unsigned int)v;
			break;
		case 's':
			if ((v = tool_num_arg("--spin-us", optarg, 0, 60000000, false)) < 0)
				return 2;
			cfg.spin_us = (uint32_t)v;
			break;
		case 'b':
			cfg.spin_us = ~0u;
			break;
		case 'c':
			if ((v = tool_num_arg("--cpu", optarg, 0, CPU_SETSIZE - 1, false)) < 0)
				return 2;
			cpu = (long)v;
			break;
		case 't':
			cfg.tenants_path = optarg;
			break;
		case 'S':
			supervise = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!cfg.ifname || optind != argc) {
		usage(stderr);
		return 2;
	}
	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET((int)cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			fprintf(stderr, "blue-manager: cannot pin to CPU %ld: %s\n", cpu,
				strerror(errno));
			return 1;
		}
	}
	return supervise ? run_supervised(&cfg) : serve(&cfg);
}
