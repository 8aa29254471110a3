/* SPDX-License-Identifier: MIT */
/* Daemon mode in the application (mgr_client.c). */
#ifndef BLUE_RUNTIME_MGR_CLIENT_H
#define BLUE_RUNTIME_MGR_CLIENT_H

#include <stdbool.h>

struct blue_context;

/*
 * blue__mgr_open() - a context served by the blue-manager of @ifname.
 * @required: BLUE_MODE=daemon (no blue-manager is an error, said so); else *@absent
 * tells the caller to open in library mode instead.
 * Return: the context, or NULL with errno (after a message, unless *@absent).
 */
struct blue_context *blue__mgr_open(const char *ifname, bool required, bool *absent)
	__attribute__((visibility("hidden")));

#endif /* BLUE_RUNTIME_MGR_CLIENT_H */
