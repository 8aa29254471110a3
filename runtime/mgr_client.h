/* SPDX-License-Identifier: MIT */
/* Daemon mode in the application (mgr_client.c). */
#ifndef BLUE_RUNTIME_MGR_CLIENT_H
#define BLUE_RUNTIME_MGR_CLIENT_H

#include <stdbool.h>
#include <stdint.h>

struct blue_context;
struct blue_pd;
struct blue_qp;
struct blue_qp_init_attr;
union blue_gid;

#define BLUE_HIDDEN_MGRC __attribute__((visibility("hidden")))

/*
 * blue__mgr_open() - a context served by the blue-manager of @ifname.
 * @required: BLUE_MODE=daemon (no blue-manager is an error, said so); else *@absent
 * tells the caller to open in library mode instead.
 * Return: the context, or NULL with errno (after a message, unless *@absent).
 */
struct blue_context *blue__mgr_open(const char *ifname, bool required, bool *absent)
	__attribute__((visibility("hidden")));

/*
 * blue__mgr_create_gsi_qp() - this process's GSI (QP1): a member of the daemon's
 * shared one (gsi_hub.h). qp_num is 1; qp->gsi_prefix the first byte its IB CM's comm
 * IDs must have. Return: the QP, or NULL with errno.
 */
struct blue_qp *blue__mgr_create_gsi_qp(struct blue_pd *pd, struct blue_qp_init_attr *attr)
	BLUE_HIDDEN_MGRC;

/* blue__mgr_gsi_listen() - REQs for @service_id to this process's GSI @qp (@on), or not. */
int blue__mgr_gsi_listen(struct blue_qp *qp, uint64_t service_id, bool on) BLUE_HIDDEN_MGRC;

/* blue__mgr_mcast() - attach_mcast / detach_mcast through the daemon: 0 or a positive errno. */
int blue__mgr_mcast(struct blue_qp *qp, const union blue_gid *gid, uint16_t lid, bool attach)
	BLUE_HIDDEN_MGRC;

#endif /* BLUE_RUNTIME_MGR_CLIENT_H */
