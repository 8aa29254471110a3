/* SPDX-License-Identifier: MIT */
/*
 * Observability of a device context: the dev_stats entry (include/blue/dev_stats.h) the
 * runtime keeps current for other processes, and the diagnostics switch
 * (include/blue/diag.h) it obeys. On a netdev both are the pinned maps, mmapped at
 * blue_open_device(); over the loopback HAL they are memory of the context, so the
 * code paths are the same.
 */
#ifndef BLUE_RUNTIME_OBS_H
#define BLUE_RUNTIME_OBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <blue/dev_stats.h>
#include <blue/diag.h>
#include <blue/tune.h>

#define BLUE_OBS_HIDDEN __attribute__((visibility("hidden")))

struct blue_context;
struct blue_qp;

struct blue_obs {
	struct blue_dev_stats *ds;	/* the queue's pinned entry (mmapped), or &ds_local */
	struct blue_dev_stats *ds_map;	/* the mapping of all queues' entries; NULL: local */
	struct blue_diag_cfg *diag;	/* the pinned switch (mmapped), or &diag_local */
	uint64_t next_publish_ns;
	/* with ds_map: the process that mapped it, and the next context that has one
	 * (obs.c's list for the publish at exit) */
	pid_t pid;
	struct blue_context *next_mapped;
	/* what earlier processes left in the map: published counters are base + ours */
	struct blue_dev_hal base_hal;
	struct blue_dev_engine base_eng;
	struct blue_dev_stats ds_local;
	struct blue_diag_cfg diag_local;
	/*
	 * The tune map (include/blue/tune.h): the pinned one (mmapped), or the context's
	 * own heap copy over the loopback HAL (tests write it as bluectl would); a single
	 * never-changing entry if that allocation failed (tune_entries 1).
	 */
	struct blue_tune_entry *tune;
	struct blue_tune_entry *tune_map;	/* the pinned mapping; NULL: local */
	struct blue_tune_entry *tune_local;
	unsigned int tune_entries;		/* BLUE_TUNE_ENTRIES, or 1 */
	uint64_t tune_seq;			/* entry 0's seq when the engine last looked */
	uint64_t tune_if_gen;			/* entry 0's gen it last applied */
};

/* Point @ctx's observability at its own memory (diag off). Cannot fail. */
void blue__obs_init(struct blue_context *ctx) BLUE_OBS_HIDDEN;

/* The same with no tune table and nothing to free: a context whose engine runs in
 * blue-manager (daemon mode), where only the diag switch is read (post_send). */
void blue__obs_init_bare(struct blue_context *ctx) BLUE_OBS_HIDDEN;

/*
 * blue__obs_open() - use @queue's entry of the pinned dev_stats and the diag switch of
 * @ifname instead. Missing pins
 * (an attach by an older build) are logged once and leave the local memory in use.
 * Return: 0, or -errno after logging (the context still works).
 */
int blue__obs_open(struct blue_context *ctx, const char *ifname, unsigned int queue)
	BLUE_OBS_HIDDEN;

/* Publish one last time, give up ownership and unmap. A context still open when the
 * process exits publishes once more then (obs.c publish_at_exit). */
void blue__obs_close(struct blue_context *ctx) BLUE_OBS_HIDDEN;

/* Copy the HAL's and the engine's counters into dev_stats now. */
void blue__obs_publish(struct blue_context *ctx) BLUE_OBS_HIDDEN;

/* Record one latency of @ns for WR opcode @op, and one connection setup. */
void blue__obs_lat(struct blue_context *ctx, uint32_t op, uint64_t ns) BLUE_OBS_HIDDEN;

/*
 * A send WR posted at @post_ns completes now. "Now" is the start of the engine pass
 * that completes it (eng.now_ns, read once per pass anyway): a second clock read per WR
 * cost 45-50 ns here, a third of what diag on costs a 64-byte WRITE stream, and the
 * error, part of one pass, is below the histogram's resolution. The CQE becomes visible
 * at the end of that pass.
 */
void blue__obs_lat_done(struct blue_context *ctx, uint32_t op, uint64_t post_ns)
	BLUE_OBS_HIDDEN;
void blue__obs_conn_setup(struct blue_context *ctx, uint64_t ns) BLUE_OBS_HIDDEN;

/*
 * Connection setup on the control plane, timed per QP from blue_cm_info_from_qp() (what
 * a side tells its peer is ready) to RTS in blue_cm_connect_qp(): the exchange, the
 * neighbour lookup and the state changes. A QP connected without info_from_qp is not
 * timed (setup ns 0 in the probe). Fires blue:cm_connected.
 */
void blue__obs_conn_begin(struct blue_qp *qp) BLUE_OBS_HIDDEN;
void blue__obs_conn_done(struct blue_qp *qp, uint32_t peer_qpn) BLUE_OBS_HIDDEN;

/* Set the local switch (loopback contexts; tests). */
void blue__obs_set_diag(struct blue_context *ctx, uint32_t flags) BLUE_OBS_HIDDEN;

/* Whether @flag (BLUE_DIAG_*) is on: one load through a cached pointer, one branch. */
static inline bool blue__obs_diag(const struct blue_obs *o, uint32_t flag)
{
	return __builtin_expect(__atomic_load_n(&o->diag->flags, __ATOMIC_RELAXED) & flag, 0);
}

#endif /* BLUE_RUNTIME_OBS_H */
