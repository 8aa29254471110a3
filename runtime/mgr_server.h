/* SPDX-License-Identifier: MIT */
/*
 * blue-manager's side of daemon mode: one engine (a library-mode context with its rings
 * in memfds) serving any number of processes over the command channel (mgr_proto.h).
 * One thread runs both: engine passes, and between them the commands, the new
 * connections and the ones that closed. Idle, it sleeps on the AF_XDP socket, the
 * engine's timer, the doorbell and the sockets.
 */
#ifndef BLUE_RUNTIME_MGR_SERVER_H
#define BLUE_RUNTIME_MGR_SERVER_H

#include <signal.h>
#include <stdint.h>

#define BLUE_MGR_SRV_HIDDEN __attribute__((visibility("hidden")))

struct blue_context;
struct blue_mgr_server;

struct blue_mgr_server_cfg {
	const char *ifname;
	unsigned int queue;
	/* how long the engine spins with nothing to do before it sleeps; ~0u: never */
	uint32_t spin_us;
	const char *tenants_path;	/* the tenants' config file (tenant.h), or NULL */
	volatile sig_atomic_t *reload;	/* set (SIGHUP): read it again */
};

/*
 * blue__mgr_server_open() - serve @ctx (a library-mode context on @cfg->ifname, with
 * ctx->shared_rings set before any object is made) on the channel's address
 * (blue__mgr_addr). Return: the server, or NULL with errno after a message
 * (EADDRINUSE: a blue-manager serves this netdev already).
 */
struct blue_mgr_server *blue__mgr_server_open(struct blue_context *ctx,
					      const struct blue_mgr_server_cfg *cfg)
	BLUE_MGR_SRV_HIDDEN;

/* Run until *@stop is set (a signal handler's). Return: 0, or -errno of a failure. */
int blue__mgr_server_run(struct blue_mgr_server *s, volatile sig_atomic_t *stop)
	BLUE_MGR_SRV_HIDDEN;

/* How many processes connected since the server opened. */
unsigned int blue__mgr_server_sessions(const struct blue_mgr_server *s) BLUE_MGR_SRV_HIDDEN;

/* Close every connection (destroying what each made) and the socket; not the context. */
void blue__mgr_server_close(struct blue_mgr_server *s) BLUE_MGR_SRV_HIDDEN;

#endif /* BLUE_RUNTIME_MGR_SERVER_H */
