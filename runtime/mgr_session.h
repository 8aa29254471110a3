/* SPDX-License-Identifier: MIT */
/*
 * One process connected to blue-manager: who it is (SO_PEERCRED) and the objects it
 * made, by handle. The server loop (mgr_server.c) owns the sessions; the commands
 * (mgr_cmd.c) act on one.
 */
#ifndef BLUE_RUNTIME_MGR_SESSION_H
#define BLUE_RUNTIME_MGR_SESSION_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "runtime/mgr_proto.h"

#define BLUE_MGR_SES_HIDDEN __attribute__((visibility("hidden")))

enum blue_mgr_obj_type {
	BLUE_MGR_OBJ_FREE = 0,
	BLUE_MGR_OBJ_PD,
	BLUE_MGR_OBJ_MR,
	BLUE_MGR_OBJ_CQ,
	BLUE_MGR_OBJ_QP,
	BLUE_MGR_OBJ_SRQ,
};

/* A handle is its index + 1 in the session's table: 0 names nothing. */
struct blue_mgr_obj {
	enum blue_mgr_obj_type type;
	void *p;		/* struct blue_pd, blue_mr, blue_cq or blue_qp */
	void *map;		/* an MR's mapping of the process's memfd */
	size_t map_len;
};

struct blue_mgr_session {
	int fd;
	unsigned int id;	/* for messages: session N */
	pid_t pid;
	uid_t uid;
	gid_t gid;
	int hello;		/* HELLO done: other requests are taken */
	struct blue_tenant *tenant;	/* NULL: no map line or default takes it (refused) */
	char cgroup[BLUE_TENANT_CGROUP];	/* its cgroup v2 path at connect (messages, maps) */
	struct blue_mgr_obj *obj;
	uint32_t nobj;
	struct blue_mgr_session *next;
};

struct blue_context;

/* What a command has to work with, and what it answers. */
struct blue_mgr_call {
	struct blue_context *ctx;
	struct blue_mgr_session *ses;
	const struct blue_mgr_req *req;
	int fd_in;			/* a descriptor that came with the request, or -1 */
	struct blue_mgr_rep *rep;
	int fds_out[BLUE_MGR_MAX_FDS];	/* to send with the reply (the server closes them) */
	int nfds_out;
	/* HELLO's answer besides the device: what the server shares with every process */
	int bell_efd, bell_page_fd;
	const char *ifname;
	unsigned int queue;
	struct blue_tenant_table *tenants;	/* bluectl tenant's commands */
	const char *tenants_path;		/* the config file, or NULL */
};

/* blue__mgr_call() - carry out one request. Return: nothing; the reply says. */
void blue__mgr_call(struct blue_mgr_call *c) BLUE_MGR_SES_HIDDEN;

/*
 * blue__mgr_tenants_reload() - read @path again into @tt (SIGHUP, bluectl tenant
 * reload); a file that does not parse changes nothing. Return: 0 or -errno (logged).
 */
int blue__mgr_tenants_reload(struct blue_tenant_table *tt, const char *path) BLUE_MGR_SES_HIDDEN;

/* blue__mgr_session_drop() - destroy every object @ses made (it went away). */
void blue__mgr_session_drop(struct blue_context *ctx, struct blue_mgr_session *ses)
	BLUE_MGR_SES_HIDDEN;

#endif /* BLUE_RUNTIME_MGR_SESSION_H */
