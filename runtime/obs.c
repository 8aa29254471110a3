// SPDX-License-Identifier: MIT
/*
 * The device's statistics and diagnostics switch (see obs.h): opening the pinned maps,
 * publishing the HAL's and the engine's counters into dev_stats, and the histograms.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <blue/pins.h>

#include "runtime/device.h"
#include "runtime/log.h"
#include "runtime/obs.h"
#include "runtime/probes.h"
#include "runtime/qp.h"

/* A never-changing entry 0 for a context whose own copy could not be allocated. */
static struct blue_tune_entry tune_none;

/*
 * The contexts that publish into a pinned dev_stats entry, for one last publish at
 * exit: a process that exits without closing its device (librdmacm's tools do, as
 * over rdma-core) would leave its last BLUE_DEV_PUBLISH_NS of counters unpublished,
 * and a tool such as mckey takes all its messages and exits within that (rx 0 in
 * bluectl stats, 20 received). Linked through obs.next_mapped, under mapped_lock.
 */
static struct blue_context *mapped;
static pthread_mutex_t mapped_lock = PTHREAD_MUTEX_INITIALIZER;

static void mapped_add(struct blue_context *ctx)
{
	pthread_mutex_lock(&mapped_lock);
	ctx->obs.next_mapped = mapped;
	mapped = ctx;
	pthread_mutex_unlock(&mapped_lock);
}

static void mapped_del(struct blue_context *ctx)
{
	struct blue_context **pp;

	pthread_mutex_lock(&mapped_lock);
	for (pp = &mapped; *pp; pp = &(*pp)->obs.next_mapped)
		if (*pp == ctx) {
			*pp = ctx->obs.next_mapped;
			break;
		}
	pthread_mutex_unlock(&mapped_lock);
}

static void tune_use_local(struct blue_obs *o)
{
	if (!o->tune_local)
		o->tune_local = calloc(BLUE_TUNE_ENTRIES, sizeof(*o->tune_local));
	o->tune = o->tune_local ? o->tune_local : &tune_none;
	o->tune_entries = o->tune_local ? BLUE_TUNE_ENTRIES : 1;
	o->tune_seq = o->tune[0].seq;
	o->tune_if_gen = o->tune[0].gen;
}

void blue__obs_init(struct blue_context *ctx)
{
	struct blue_obs *o = &ctx->obs;

	memset(o, 0, sizeof(*o));
	o->ds = &o->ds_local;
	o->diag = &o->diag_local;
	o->ds->owner_pid = (__u32)getpid();
	o->ds->opens = 1;
	tune_use_local(o);
}

void blue__obs_init_bare(struct blue_context *ctx)
{
	struct blue_obs *o = &ctx->obs;

	memset(o, 0, sizeof(*o));
	o->ds = &o->ds_local;
	o->diag = &o->diag_local;
	o->tune = &tune_none;
	o->tune_entries = 1;
}

static size_t page_round(size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (n + page - 1) / page * page;
}

/* Open the mmapable array of @entries pinned as @name and map it; NULL after logging. */
static void *map_pin(const char *ifname, const char *name, __u32 value_size, __u32 entries,
		     int prot)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	void *p = NULL;
	int fd;

	if (blue_pin_dir(path, sizeof(path), ifname) ||
	    strlen(path) + 1 + strlen(name) >= sizeof(path))
		return NULL;
	strcat(strcat(path, "/"), name);
	fd = bpf_obj_get(path);
	if (fd < 0) {
		blue__logf("open_device: %s: %s: %s; device statistics stay in this process "
			   "(detach and attach again with this build to publish them)", ifname,
			   path, strerror(errno));
		return NULL;
	}
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len) || info.type != BPF_MAP_TYPE_ARRAY ||
	    info.value_size != value_size || info.max_entries != entries ||
	    !(info.map_flags & BPF_F_MMAPABLE)) {
		blue__logf("open_device: %s: %s is not an mmapable array of %u x %u bytes "
			   "(found %u x %u): detach and attach again with this build", ifname,
			   path, entries, value_size, info.max_entries, info.value_size);
		goto out;
	}
	p = mmap(NULL, page_round((size_t)value_size * entries), prot, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		blue__logf("open_device: %s: mmap of %s: %s", ifname, path, strerror(errno));
		p = NULL;
	}
out:
	close(fd);	/* the mapping holds the map */
	return p;
}

#define DS_MAP_LEN	page_round(sizeof(struct blue_dev_stats) * BLUE_MAX_QUEUES)
#define TUNE_MAP_LEN	page_round(sizeof(struct blue_tune_entry) * BLUE_TUNE_ENTRIES)

/*
 * The pinned tune map instead of the local copy. What is in it already (defaults set
 * before this engine started) is taken at QP creation, so the engine starts level with
 * its seq and gen rather than answering old requests.
 */
static void tune_open(struct blue_obs *o, const char *ifname)
{
	struct blue_tune_entry *t;

	t = map_pin(ifname, BLUE_PIN_TUNE, sizeof(*t), BLUE_TUNE_ENTRIES,
		    PROT_READ | PROT_WRITE);
	if (!t)
		return;	/* logged; `bluectl set` finds no engine to answer */
	free(o->tune_local);
	o->tune_local = NULL;
	o->tune_map = t;
	o->tune = t;
	o->tune_entries = BLUE_TUNE_ENTRIES;
	o->tune_seq = __atomic_load_n(&t[0].seq, __ATOMIC_ACQUIRE);
	o->tune_if_gen = __atomic_load_n(&t[0].gen, __ATOMIC_ACQUIRE);
}

int blue__obs_open(struct blue_context *ctx, const char *ifname, unsigned int queue)
{
	struct blue_obs *o = &ctx->obs;
	struct blue_dev_stats *ds;
	struct blue_diag_cfg *diag;

	ds = map_pin(ifname, BLUE_PIN_DEV_STATS, sizeof(*ds), BLUE_MAX_QUEUES,
		     PROT_READ | PROT_WRITE);
	if (!ds)
		return -ENOENT;
	/* the runtime only reads the switch: bluectl owns it */
	diag = map_pin(ifname, BLUE_PIN_DIAG, sizeof(*diag), 1, PROT_READ);
	if (!diag) {
		munmap(ds, DS_MAP_LEN);
		return -ENOENT;
	}
	tune_open(o, ifname);
	o->ds_map = ds;
	ds += queue;	/* this context's queue: its entry has one writer */
	o->ds = ds;
	o->diag = diag;
	o->base_hal = ds->hal;
	o->base_eng = ds->eng;
	ds->owner_pid = (__u32)getpid();
	ds->opens++;
	o->pid = getpid();
	mapped_add(ctx);
	return 0;
}

/* The HAL's and the engine's counters into dev_stats (base + this process's). */
static void publish_counters(struct blue_context *ctx)
{
	const struct blue_engine_stats *e = &ctx->eng.st;
	const struct blue_dev_engine *be = &ctx->obs.base_eng;
	const struct blue_dev_hal *bh = &ctx->obs.base_hal;
	struct blue_dev_stats *ds = ctx->obs.ds;
	struct blue_hal_stats h;

	memset(&h, 0, sizeof(h));
	blue_hal_get_stats(ctx->hal, &h);
	ds->hal.rx_frames = bh->rx_frames + h.rx_frames;
	ds->hal.tx_frames = bh->tx_frames + h.tx_frames;
	ds->hal.tx_kicks = bh->tx_kicks + h.tx_kicks;
	ds->hal.rx_wakeups = bh->rx_wakeups + h.rx_wakeups;
	ds->hal.fill_empty = bh->fill_empty + h.fill_empty;
	ds->hal.tx_ring_full = bh->tx_ring_full + h.tx_ring_full;
	ds->hal.rx_dropped = bh->rx_dropped + h.rx_dropped;
	ds->hal.frame_errors = bh->frame_errors + h.frame_errors;
	ds->hal.rx_multibuf = bh->rx_multibuf + h.rx_multibuf;
	ds->hal.tx_multibuf = bh->tx_multibuf + h.tx_multibuf;
	ds->hal.busy_polls = bh->busy_polls + h.busy_polls;
	ds->hal.rx_batches = bh->rx_batches + e->rx_batches;
	ds->hal.frames_total = h.frames_total;
	ds->hal.frames_free = h.frames_free;

	ds->eng.passes = be->passes + e->passes;
	ds->eng.rx_frames = be->rx_frames + e->rx_frames;
	ds->eng.rx_bad_icrc = be->rx_bad_icrc + e->rx_bad_icrc;
	ds->eng.rx_malformed = be->rx_malformed + e->rx_malformed;
	ds->eng.rx_no_qp = be->rx_no_qp + e->rx_no_qp;
	ds->eng.rx_bad_src = be->rx_bad_src + e->rx_bad_src;
	ds->eng.rx_wrong_transport = be->rx_wrong_transport + e->rx_wrong_transport;
	ds->eng.rx_dup = be->rx_dup + e->rx_dup;
	ds->eng.rx_seq_err = be->rx_seq_err + e->rx_seq_err;
	ds->eng.rx_inv_req = be->rx_inv_req + e->rx_inv_req;
	ds->eng.rx_access_err = be->rx_access_err + e->rx_access_err;
	ds->eng.rx_op_err = be->rx_op_err + e->rx_op_err;
	ds->eng.rx_cnp = be->rx_cnp + e->rx_cnp;
	ds->eng.tx_frames = be->tx_frames + e->tx_frames;
	ds->eng.tx_no_frame = be->tx_no_frame + e->tx_no_frame;
	ds->eng.tx_dropped = be->tx_dropped + e->tx_dropped;
	ds->eng.tx_loopback = be->tx_loopback + e->tx_loopback;
	ds->eng.rx_bad_qkey = be->rx_bad_qkey + e->rx_bad_qkey;
	ds->eng.rx_ud_no_wqe = be->rx_ud_no_wqe + e->rx_ud_no_wqe;
	ds->eng.rx_uc_dropped = be->rx_uc_dropped + e->rx_uc_dropped;
	ds->eng.tx_ud_too_long = be->tx_ud_too_long + e->tx_ud_too_long;
	ds->eng.rx_mcast_copies = be->rx_mcast_copies + e->rx_mcast_copies;
	ds->eng.rx_mcast_no_group = be->rx_mcast_no_group + e->rx_mcast_no_group;
	ds->eng.rx_mcast_bad_pkey = be->rx_mcast_bad_pkey + e->rx_mcast_bad_pkey;
	ds->eng.tx_mcast_loop = be->tx_mcast_loop + e->tx_mcast_loop;
	__atomic_store_n(&ds->published_ns, blue__now_ns(), __ATOMIC_RELEASE);
}

void blue__obs_publish(struct blue_context *ctx)
{
	publish_counters(ctx);
	ctx->obs.next_publish_ns = ctx->eng.now_ns + BLUE_DEV_PUBLISH_NS;
}

/*
 * At exit (or unload), the counters of every context still open, in this process only
 * (a forked child holds its parent's contexts but not their counters). Another thread
 * may be in a pass meanwhile: it counts on, and its next publish, if any, is as good;
 * next_publish_ns stays that thread's. Closes wait for the lock, so no entry is
 * unmapped under us.
 */
__attribute__((destructor)) static void publish_at_exit(void)
{
	struct blue_context *ctx;
	pid_t me = getpid();

	pthread_mutex_lock(&mapped_lock);
	for (ctx = mapped; ctx; ctx = ctx->obs.next_mapped)
		if (ctx->obs.pid == me)
			publish_counters(ctx);
	pthread_mutex_unlock(&mapped_lock);
}

void blue__obs_close(struct blue_context *ctx)
{
	struct blue_obs *o = &ctx->obs;

	blue__obs_publish(ctx);
	o->ds->owner_pid = 0;
	if (o->ds_map)
		mapped_del(ctx);
	if (o->tune_map)
		munmap(o->tune_map, TUNE_MAP_LEN);
	o->tune_map = NULL;
	free(o->tune_local);
	o->tune_local = NULL;
	o->tune = &tune_none;
	o->tune_entries = 1;
	if (!o->ds_map)
		return;
	munmap(o->ds_map, DS_MAP_LEN);
	o->ds_map = NULL;
	munmap(o->diag, page_round(sizeof(*o->diag)));
	o->ds = &o->ds_local;
	o->diag = &o->diag_local;
}

/* One writer (the context's thread); readers in other processes may see count and the
 * buckets one sample apart, so they derive the count from the buckets. */
static void hist_add(struct blue_hist *h, uint64_t ns)
{
	h->bucket[blue_hist_bucket(ns)]++;
	h->sum_ns += ns;
	h->count++;
}

void blue__obs_lat(struct blue_context *ctx, uint32_t op, uint64_t ns)
{
	if (op < BLUE_LAT_OPS)
		hist_add(&ctx->obs.ds->lat[op], ns);
}

void blue__obs_lat_done(struct blue_context *ctx, uint32_t op, uint64_t post_ns)
{
	uint64_t now = ctx->eng.now_ns;

	/* a post from another thread during this pass may be younger than its start */
	blue__obs_lat(ctx, op, now > post_ns ? now - post_ns : 0);
}

void blue__obs_conn_setup(struct blue_context *ctx, uint64_t ns)
{
	hist_add(&ctx->obs.ds->conn_setup, ns);
}

void blue__obs_conn_begin(struct blue_qp *qp)
{
	qp->cm_start_ns = blue__now_ns();
}

void blue__obs_conn_done(struct blue_qp *qp, uint32_t peer_qpn)
{
	uint64_t ns = qp->cm_start_ns ? blue__now_ns() - qp->cm_start_ns : 0;

	if (ns)
		blue__obs_conn_setup(qp->ctx, ns);
	qp->cm_start_ns = 0;
	BLUE_PROBE3(cm_connected, qp->qpn, peer_qpn, ns);
}

void blue__obs_set_diag(struct blue_context *ctx, uint32_t flags)
{
	__atomic_store_n(&ctx->obs.diag_local.flags, flags, __ATOMIC_RELAXED);
}
