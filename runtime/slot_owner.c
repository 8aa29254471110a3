// SPDX-License-Identifier: MIT
/*
 * QP slot ownership (slot_owner.h). The QP-context table of a netdev is shared by every
 * process that serves one of its queues, and a process that dies without closing its
 * device leaves its slots claimed. owner_pid cannot tell whether the owner still runs:
 * the owner may live in another PID namespace (a container sharing the host's bpffs),
 * where its PID means another process or none, and a dead owner's PID may have been
 * given to somebody else. So the owner holds the slot's mark (include/blue/pins.h, a
 * lock on byte <slot> of the pin directory) from its claim to its destroy, and the
 * kernel drops it when the owner dies, whatever namespace it ran in: a slot whose mark
 * nobody holds has a dead owner. owner_pid stays, for people (bluectl qp show). The
 * probe is a file description of its own, so the caller's own marks count as held.
 *
 * A child that forks without exec shares its parent's file description and so keeps
 * the marks alive until it exits too: a slot is then freed late, never early.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <blue/pins.h>

#include "runtime/log.h"
#include "runtime/slot_owner.h"

int blue__slot_owner_open(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int blue__slot_own(int fd, unsigned int slot)
{
	return fd < 0 ? 0 : blue_pin_mark_take(fd, BLUE_PIN_MARK_SLOT(slot));
}

void blue__slot_disown(int fd, unsigned int slot)
{
	if (fd >= 0)
		blue_pin_mark_drop(fd, BLUE_PIN_MARK_SLOT(slot));
}

/* An error counts as held: a slot is freed only when its owner is known to be dead. */
static bool slot_held(int probe, unsigned int slot)
{
	return blue_pin_mark_held(probe, BLUE_PIN_MARK_SLOT(slot)) != 0;
}

/* Not a QPN (those are 24 bits), and not 0: no claimer takes it, and XDP's owner check
 * matches no packet against it. */
#define SLOT_FREEING	UINT32_MAX

/*
 * Free @c if it still holds @qpn. The compare-and-swap leaves a slot freed and claimed
 * again under a new QPN (a new generation) since we looked to its new owner, and nothing
 * of the slot is written before it succeeds. It parks qpn at SLOT_FREEING rather than 0
 * while the rest is cleared, so that no claimer can take the slot until the clearing is
 * done: clearing after qpn went to 0 could wipe a new owner's claim.
 */
static bool slot_free(struct blue_qp_ctx *c, uint32_t qpn)
{
	_Static_assert(offsetof(struct blue_qp_ctx, qpn) == 0, "qpn leads the context");

	if (!__atomic_compare_exchange_n(&c->qpn, &qpn, SLOT_FREEING, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return false;
	__atomic_store_n(&c->state, BLUE_QPS_RESET, __ATOMIC_RELEASE);
	memset((uint8_t *)c + sizeof(c->qpn), 0, sizeof(*c) - sizeof(c->qpn));
	__atomic_store_n(&c->qpn, 0, __ATOMIC_RELEASE);
	return true;
}

unsigned int blue__slots_reclaim(struct blue_qp_ctx *tbl, int fd)
{
	unsigned int slot, n = 0;
	int probe;

	if (fd < 0)
		return 0;
	probe = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (probe < 0) {
		blue__logf("open_device: cannot check the owners of QP slots: %s", strerror(errno));
		return 0;
	}
	for (slot = 0; slot < BLUE_MAX_QP; slot++) {
		struct blue_qp_ctx *c = &tbl[slot];
		uint32_t qpn = __atomic_load_n(&c->qpn, __ATOMIC_ACQUIRE);

		/* owner_pid is stored after the mark: a slot without one is being claimed;
		 * SLOT_FREEING: another process is freeing it */
		if (!qpn || qpn == SLOT_FREEING ||
		    !__atomic_load_n(&c->owner_pid, __ATOMIC_ACQUIRE) || slot_held(probe, slot))
			continue;
		n += slot_free(c, qpn);
	}
	close(probe);
	return n;
}
