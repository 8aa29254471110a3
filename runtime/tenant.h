/* SPDX-License-Identifier: MIT */
/*
 * Tenants of blue-manager (daemon mode): who a connecting process is (uid, gid or
 * cgroup, from SO_PEERCRED and /proc), what it may hold (quotas on QPs, MRs, MR bytes
 * and CQs), how fast it may send (a token bucket), and which transmit class it is in
 * (real-time before priority before normal, weighted within a class: progress.c).
 *
 * The config file, read at start (blue-manager --tenants FILE) and again on SIGHUP:
 *
 *   # one line per item; '#' starts a comment
 *   tenant NAME [class=realtime|priority|normal] [weight=N] [rate=BITS/s]
 *               [qps=N] [mrs=N] [mr_bytes=BYTES] [cqs=N]
 *   map uid=N NAME | map gid=N NAME | map cgroup=PATH NAME
 *   default NAME
 *
 * Numbers take K, M, G (and T for bytes): binary for bytes, decimal for rates; 0 or a
 * missing key is "no limit" (weight: 1). The first map line that matches a process
 * decides its tenant, else `default`; with no default such a process is refused. A
 * reload keeps every tenant that still exists with what it holds and its counters, and
 * applies the new limits to it; a tenant the file no longer names serves the sessions it
 * has and takes no new ones. Mapping applies to new connections.
 */
#ifndef BLUE_RUNTIME_TENANT_H
#define BLUE_RUNTIME_TENANT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define BLUE_TENANT_NAME	32
#define BLUE_MAX_TENANTS	32
#define BLUE_TENANT_MAPS	64
#define BLUE_TENANT_CGROUP	128

enum blue_tenant_class {
	BLUE_CLASS_REALTIME = 0,
	BLUE_CLASS_PRIORITY = 1,
	BLUE_CLASS_NORMAL = 2,
	BLUE_CLASS_COUNT = 3,
};

/* What a tenant may hold and do: the config's keys. 0 is "no limit" (weight: 1). */
struct blue_tenant_limits {
	uint32_t klass;		/* enum blue_tenant_class */
	uint32_t weight;
	uint64_t rate_bps;	/* bits per second on the wire */
	uint32_t qps, mrs, cqs;
	uint64_t mr_bytes;
};

/* What a tenant holds now, and what it did (counters never go back). */
struct blue_tenant_usage {
	uint32_t sessions, qps, mrs, cqs;
	uint64_t mr_bytes;
	uint64_t tx_pkts, tx_bytes, rx_pkts, rx_bytes;
	uint64_t throttled;	/* packets the token bucket held back (a pass each) */
	uint64_t over_quota;	/* creations refused with EDQUOT */
	uint64_t sessions_total;
};

struct blue_tenant {
	char name[BLUE_TENANT_NAME];
	bool in_config;		/* the last read of the file named it */
	struct blue_tenant_limits lim;
	struct blue_tenant_usage use;
	/* the token bucket (byte-nanoseconds), refilled at lim.rate_bps */
	uint64_t tokens;
	uint64_t refill_ns;
	uint32_t pass_sent;	/* frames this engine pass (the weighted share) */
	uint32_t pass_share;
};

struct blue_tenant_map {
	enum { BLUE_MAP_UID, BLUE_MAP_GID, BLUE_MAP_CGROUP } kind;
	uint32_t id;
	char cgroup[BLUE_TENANT_CGROUP];
	unsigned int tenant;	/* index in the table */
};

struct blue_tenant_table {
	struct blue_tenant t[BLUE_MAX_TENANTS];
	unsigned int n;
	struct blue_tenant_map map[BLUE_TENANT_MAPS];
	unsigned int nmap;
	int deflt;		/* index, or -1: unmatched processes are refused */
};

/*
 * blue__tenants_init() - the table with no file: one tenant "default", no limits,
 * normal class, that every process maps to.
 */
void blue__tenants_init(struct blue_tenant_table *tt) __attribute__((visibility("hidden")));

/*
 * blue__tenants_load() - read @path into @tt: a first read, or a reload that keeps the
 * tenants still named (see the top). On an error nothing changes.
 * Return: 0, or -errno / -EINVAL after a message naming the file, line and item.
 */
int blue__tenants_load(struct blue_tenant_table *tt, const char *path)
	__attribute__((visibility("hidden")));

/*
 * blue__tenants_parse() - blue__tenants_load() from a string (@what names it in
 * messages): the unit tests' way in.
 */
int blue__tenants_parse(struct blue_tenant_table *tt, const char *text, const char *what)
	__attribute__((visibility("hidden")));

/*
 * blue__tenant_set() - change @t's limits from "key=value" items, as a config line's
 * (bluectl tenant set). Return: 0 or -EINVAL after a message.
 */
int blue__tenant_set(struct blue_tenant *t, const char *items) __attribute__((visibility("hidden")));

/*
 * blue__tenant_of() - the tenant of a process with @uid and @gid in cgroup @cgroup
 * (its /proc/PID/cgroup v2 path, or ""), or NULL (refused: no map and no default).
 */
struct blue_tenant *blue__tenant_of(struct blue_tenant_table *tt, uid_t uid, gid_t gid,
				    const char *cgroup) __attribute__((visibility("hidden")));

/* blue__tenant_find() - by name, or NULL. */
struct blue_tenant *blue__tenant_find(struct blue_tenant_table *tt, const char *name)
	__attribute__((visibility("hidden")));

/* blue__cgroup_of() - the cgroup v2 path of @pid into @buf ("" when unknown). */
void blue__cgroup_of(pid_t pid, char *buf, size_t len) __attribute__((visibility("hidden")));

enum blue_quota {
	BLUE_QUOTA_QP,
	BLUE_QUOTA_MR,
	BLUE_QUOTA_CQ,
};

/*
 * blue__tenant_charge() - count one more object of @kind (and @bytes for an MR) against
 * @t, or refuse. Return: 0, or EDQUOT after a message naming the tenant and the limit.
 */
int blue__tenant_charge(struct blue_tenant *t, enum blue_quota kind, uint64_t bytes)
	__attribute__((visibility("hidden")));
/* blue__tenant_uncharge() - the object went. */
void blue__tenant_uncharge(struct blue_tenant *t, enum blue_quota kind, uint64_t bytes)
	__attribute__((visibility("hidden")));

/*
 * blue__tenant_send_wait() - may @t put @bytes on the wire now (@now_ns)? The token
 * bucket holds up to 1 ms of its rate (at least one 9 KiB frame); a tenant without a
 * rate always may. Charges the bytes when it says yes.
 * Return: 0 (sent), or the nanoseconds until the bucket holds @bytes.
 */
uint64_t blue__tenant_send_wait(struct blue_tenant *t, uint32_t bytes, uint64_t now_ns)
	__attribute__((visibility("hidden")));

struct blue_context;
struct blue_qp;
struct blue_pkt;

/*
 * The transmit scheduler of blue-manager's engine (tenant_sched.c), called by
 * blue__progress() and blue__qp_tx() only when the context has tenants:
 * blue__sched_begin() - a pass begins: each tenant's share of the pass's frames, by its
 *     weight among the tenants of its class that hold QPs;
 * blue__sched_tx() - may @qp's request @p go: the tenant's rate, then its share (lifted
 *     on the pass's second round). Return: 0, or -EAGAIN (the QP waits: its pacing
 *     deadline says when the rate allows it);
 * blue__sched_sent() - @p went: the tenant's counters and share.
 */
void blue__sched_begin(struct blue_context *ctx) __attribute__((visibility("hidden")));
int blue__sched_tx(struct blue_qp *qp, const struct blue_pkt *p) __attribute__((visibility("hidden")));
void blue__sched_sent(struct blue_qp *qp, const struct blue_pkt *p)
	__attribute__((visibility("hidden")));

/*
 * blue__sched_window() - @qp's requester window @win, capped while a higher class than
 * its tenant's holds QPs: BLUE_SCHED_WIN_LOW PSNs in flight per QP, so that the frames
 * queued ahead of a real-time packet (the TX ring, the veth, the peer's RX ring) stay
 * few. Strict priority in one pass cannot reach those queues; this bounds them.
 */
#define BLUE_SCHED_WIN_LOW	16
uint32_t blue__sched_window(const struct blue_qp *qp, uint32_t win)
	__attribute__((visibility("hidden")));

/* The class's name in the config ("realtime", ...). */
const char *blue__tenant_class_str(uint32_t klass) __attribute__((visibility("hidden")));

#endif /* BLUE_RUNTIME_TENANT_H */
