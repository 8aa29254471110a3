/* SPDX-License-Identifier: MIT */
/*
 * Who owns a QP slot of a netdev's shared QP-context table, and freeing the slots of
 * owners that died without closing their device.
 */
#ifndef BLUE_RUNTIME_SLOT_OWNER_H
#define BLUE_RUNTIME_SLOT_OWNER_H

#include <stdbool.h>
#include <blue/qp_ctx.h>

/*
 * blue__slot_owner_open() - the fd a context marks its slots through, on @dir (the
 * netdev's pin directory). Return: the fd, or -errno.
 */
int blue__slot_owner_open(const char *dir);

/* Mark @slot as owned through @fd (claimed; -1: the loopback HAL, nothing to mark), and
 * unmark it. Return: 0 or -errno. */
int blue__slot_own(int fd, unsigned int slot);
void blue__slot_disown(int fd, unsigned int slot);

/*
 * blue__slots_reclaim() - free the slots of @tbl whose mark nobody holds (their owner is
 * dead), probing @fd's directory through a file description of its own, so slots @fd
 * itself marks count as owned. A slot being claimed (no owner_pid yet) is left alone.
 * Return: how many.
 */
unsigned int blue__slots_reclaim(struct blue_qp_ctx *tbl, int fd);

#endif /* BLUE_RUNTIME_SLOT_OWNER_H */
