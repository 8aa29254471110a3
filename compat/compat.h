/* SPDX-License-Identifier: MIT */
/*
 * libibverbs compatibility: the objects an unmodified ibverbs program holds, each an
 * rdma-core struct (from <infiniband/verbs.h>, for the ABI) with the libblue object it
 * stands for. The program's inline calls (ibv_post_send, ibv_poll_cq, verbs_get_ctx_op
 * dispatch) read the function pointers we put in struct ibv_context and struct
 * verbs_context, so those must be a real struct verbs_context with sz and abi_compat set.
 *
 * Several contexts, one core: a process may open a device any number of times (rdma-core's
 * tests open a server and a client context; UCX and Open MPI's osc ucx open their own),
 * but the netdev queue's AF_XDP socket serves one libblue context. So every verbs context
 * of one device shares that device's struct bv_core: the one libblue context (and its
 * engine), the lock and the progress thread. The first context that needs the engine
 * opens it; the core is freed, and the libblue context closed, with the last verbs
 * context of the device. Each verbs context keeps its own object lists (its close frees
 * only its own leftovers), async fd and comp vectors; objects of two contexts do not mix
 * (verbs forbids it: a QP's PD and CQs are its context's), even though libblue would
 * take them.
 *
 * Locking: libblue lets one thread drive a context at a time. A verbs program may block
 * in a TCP read while its peer writes into its memory (perftest's write/read servers),
 * so a progress thread (progress.c) runs the engine while the application does not;
 * every entry into libblue takes the core's lock (bv_lock/bv_unlock), whichever verbs
 * context it comes through.
 *
 * Lazy open: a libblue context binds the netdev's one AF_XDP queue, which serves one
 * process, yet ibv_devinfo must work while ib_write_bw serves on the same device. So
 * ibv_open_device() only reads what the queries answer (blue__netdev_query), and the
 * libblue context is opened by the first call that needs it: a PD, CQ or completion
 * channel (everything else hangs off those) - bv_ctx_open(). A context opened while
 * another context of the device has the core open starts with it.
 */
#ifndef BLUE_COMPAT_H
#define BLUE_COMPAT_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <net/if.h>
#include <sys/types.h>
#include <infiniband/verbs.h>

#include <blue/blue.h>
#include "runtime/device.h"
#include "runtime/log.h"
#include "runtime/verbs_ops.h"

#define BV_EXPORT __attribute__((visibility("default")))
#define BV_HIDDEN __attribute__((visibility("hidden")))

/* Verbs-side messages go through libblue's logger ("libblue: ...", BLUE_LOG=0 mutes). */
#define bv_log(...) blue__logf(__VA_ARGS__)

#define BV_MAX_DEVICES		32

/*
 * IBA 1.5 ATOMIC WRITE and FLUSH. rdma-core 44's headers (Debian's, which compat builds
 * against) have ibv_wr_atomic_write but not FLUSH; rdma-core 45 added these, with these
 * values (libibverbs/verbs.h, kernel-headers/rdma/ib_user_verbs.h), and a program built
 * against 45 passes them to us. blue's BLUE_ACCESS_FLUSH_* have the same numbers.
 */
#define BV_ACCESS_FLUSH_GLOBAL		(1 << 8)	/* IBV_ACCESS_FLUSH_GLOBAL */
#define BV_ACCESS_FLUSH_PERSISTENT	(1 << 9)	/* IBV_ACCESS_FLUSH_PERSISTENT */
#define BV_QP_EX_WITH_FLUSH		(1ull << 11)	/* IBV_QP_EX_WITH_FLUSH */
#define BV_DEVICE_FLUSH_GLOBAL		(1ull << 38)	/* IB_UVERBS_DEVICE_FLUSH_GLOBAL */
#define BV_DEVICE_ATOMIC_WRITE		(1ull << 40)	/* IB_UVERBS_DEVICE_ATOMIC_WRITE */

/* rdma-core 45's ibv_qp_ex.wr_flush, the member after 44's last (wr_atomic_write). */
typedef void (*bv_wr_flush_fn)(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr,
			       size_t len, uint8_t type, uint8_t level);

/*
 * Every object of a context is on one of its lists: ibv_close_device() frees what the
 * program left, as the kernel does for rdma-core (perftest leaves a CQ behind).
 */
struct bv_link {
	struct bv_link *prev, *next;
};

static inline void bv_list_init(struct bv_link *h) { h->prev = h->next = h; }
static inline void bv_list_add(struct bv_link *h, struct bv_link *l)
{
	l->next = h->next;
	l->prev = h;
	h->next->prev = l;
	h->next = l;
}
static inline void bv_list_del(struct bv_link *l)
{
	l->prev->next = l->next;
	l->next->prev = l->prev;
	l->prev = l->next = l;
}

/* What the verbs contexts of one device in this process share (see "Several contexts"). */
struct bv_core {
	pthread_mutex_t lock;		/* every entry into libblue, from any context */
	struct blue_context *bctx;	/* NULL until the first bv_ctx_open(); under lock */
	unsigned int refs;		/* verbs contexts on it; under device.c's devices_lock */
	pthread_t thread;		/* the progress thread (progress.c) */
	bool thread_started;		/* under lock */
	atomic_bool stop;
	char ifname[IF_NAMESIZE];	/* for messages */
	struct bv_link ctxs;		/* the contexts' bv_async.link; under lock */
	struct blue_port_watch pwatch;	/* the carrier while bctx is NULL (async.c) */
};

struct bv_device {
	struct ibv_device dev;		/* first: the program holds &dev */
	char ifname[IF_NAMESIZE];
	__be64 guid;
	bool used;
	struct bv_core *core;		/* NULL while no context is open; under devices_lock */
};

#define BV_ASYNC_MAX 64

/*
 * A verbs context's async events (async.c): routed to it from the core's libblue queue,
 * taken by ibv_get_async_event(). Its async_fd is readable while @count is non-zero.
 * Under the core's lock.
 */
struct bv_async {
	struct ibv_async_event q[BV_ASYNC_MAX];
	unsigned int head, count;
	uint64_t overflow;		/* dropped: the program did not take them */
	struct bv_link link;		/* in bv_core.ctxs: port events go to every one */
};

struct bv_context {
	struct bv_core *core;		/* shared with the device's other contexts */
	struct blue_context *bctx;	/* the core's, once this context needed it; under lock */
	struct blue_netdev_query attrs;	/* what the queries answer; under lock */
	struct bv_device *bdev;
	struct bv_link qps, cqs, mrs, pds, chs, srqs;	/* under lock */
	struct bv_link mws;		/* memory windows (mw.c); under lock */
	struct bv_async async;		/* under lock */
	/*
	 * What its cmd_fd is (a memfd: its own inode): ibv_import_device() on a dup of it
	 * makes a context with the same key, and contexts of one key import each other's
	 * PDs and MRs by handle (import.c), as rdma-core's share one kernel ucontext.
	 */
	dev_t cmd_dev;
	ino_t cmd_ino;
	struct bv_link all;		/* on device.c's list of every context; under its lock */
	struct verbs_context vctx;	/* last: ibv_context must be the final member */
};

struct bv_pd {
	struct ibv_pd pd;
	struct bv_link link;
	struct blue_pd *bpd;		/* a parent domain's is its PD's */
	struct bv_pd *parent_of;	/* a parent domain: the PD it stands on (else NULL) */
	unsigned int nparents;		/* parent domains on this PD; under lock */
	struct bv_pd *import_of;	/* imported (import.c): the PD it stands for */
	unsigned int nimports;		/* imports of this PD; under lock */
};

struct bv_mr {
	struct ibv_mr mr;
	struct bv_link link;
	struct blue_mr *bmr;
	struct bv_mr *import_of;	/* imported (import.c): the MR it stands for */
	unsigned int nimports;		/* imports of this MR; under lock */
};

struct bv_channel {
	struct ibv_comp_channel ch;
	struct bv_link link;
	struct blue_comp_channel *bch;
};

struct bv_srq {
	struct ibv_srq srq;
	struct bv_link link;
	struct blue_srq *bsrq;
};

/* An address handle (ah.c): the program holds &ah. */
struct bv_ah {
	struct ibv_ah ah;
	struct blue_ah *bah;
};

static inline struct blue_ah *bv_bah(struct ibv_ah *a)
{
	return a ? ((struct bv_ah *)a)->bah : NULL;
}

#define BV_CQ_BATCH 32

struct bv_cq {
	struct ibv_cq_ex cq;		/* ibv_cq is its prefix (ibv_cq_ex_to_cq is a cast) */
	struct bv_link link;
	struct blue_cq *bcq;
	/* the extended poll: a batch polled at start_poll, served one by one */
	struct blue_wc wc[BV_CQ_BATCH];
	int nwc, cur;
};

/* One work request of an ibv_wr_start()..ibv_wr_complete() batch. */
struct bv_wr {
	struct blue_send_wr wr;
	uint32_t sge_off;		/* into bv_qp.sges: pointers are fixed at complete */
	uint32_t nsge;
	uint32_t inl_off;		/* into bv_qp.inl, when inline */
	uint32_t inl_len;
	bool inl;
};

struct bv_qp {
	struct ibv_qp_ex qpx;		/* ibv_qp is its prefix */
	bv_wr_flush_fn wr_flush;	/* at rdma-core 45's offset: qpx's next member there */
	struct bv_link link;
	struct blue_qp *bqp;
	bool ex;			/* created with send_ops_flags */
	/* wr builder state, reset by wr_start */
	struct bv_wr *wrs;
	uint32_t nwr, cap_wr;
	struct blue_sge *sges;
	uint32_t nsges, cap_sges;
	uint8_t *inl;			/* inline bytes, copied when the program gives them */
	uint32_t ninl, cap_inl;
	int wr_err;			/* the batch's first error, returned by wr_complete */
};

static inline struct bv_context *bv_ctx(struct ibv_context *c)
{
	return (struct bv_context *)((char *)c - __builtin_offsetof(struct bv_context,
								     vctx.context));
}
static inline struct bv_pd *bv_pd(struct ibv_pd *p) { return (struct bv_pd *)p; }
static inline struct bv_cq *bv_cq(struct ibv_cq *c) { return (struct bv_cq *)c; }
static inline struct bv_qp *bv_qp(struct ibv_qp *q) { return (struct bv_qp *)q; }

static inline void bv_lock(struct bv_context *c) { pthread_mutex_lock(&c->core->lock); }
static inline void bv_unlock(struct bv_context *c) { pthread_mutex_unlock(&c->core->lock); }

/* progress.c: one thread per core, started by the first QP, stopped with the core */
/* Locking: bv_progress_start() with the core's lock held; bv_progress_stop() without. */
int bv_progress_start(struct bv_core *core) BV_HIDDEN;
void bv_progress_stop(struct bv_core *core) BV_HIDDEN;
/*
 * bv_doorbell() - send what was just posted: one engine pass. An RNIC's post rings a
 * doorbell and the packets leave; libblue's post only queues the WQE for the next pass,
 * and a verbs program may not poll for a while (ib_write_lat spins on memory).
 * Locking: with the context lock held.
 */
void bv_doorbell(struct bv_context *c) BV_HIDDEN;
/*
 * bv_idle_ns() - how long the progress thread may sleep at @now with nothing to do: until
 * the engine's next deadline @next (a paced QP's next departure, a timer; 0: none), at
 * most BV_IDLE_MS. A paced QP is then served at its rate, not once per BV_IDLE_MS.
 */
uint64_t bv_idle_ns(uint64_t now, uint64_t next) BV_HIDDEN;

/* device.c */
struct bv_device *bv_device_find(const char *name) BV_HIDDEN;
/*
 * bv_context_wrap() - a verbs context of @d over the open libblue context @bctx
 * (ibv_open_device's second half; unit tests wrap contexts over the loopback HAL with
 * it). @d must outlive it. Wrapping the same @bctx on the same @d again gives another
 * context sharing @d's core, as a second ibv_open_device() does; the last
 * ibv_close_device() of @d closes @bctx. Return: NULL with errno EBUSY when @d's core
 * runs another libblue context.
 */
struct ibv_context *bv_context_wrap(struct blue_context *bctx, struct bv_device *d) BV_HIDDEN;

/*
 * bv_ctx_open() - the libblue context, opened now on the core if no context of the
 * device has opened it yet (see "Lazy open"), and taken by @c.
 * Locking: with the core's lock held.
 * Return: 0, or an errno (errno set to it too) after libblue's message saying why.
 */
int bv_ctx_open(struct bv_context *c) BV_HIDDEN;

/* ops tables filled at open */
void bv_query_init_ops(struct bv_context *c) BV_HIDDEN;
void bv_pd_init_ops(struct bv_context *c) BV_HIDDEN;
void bv_cq_init_ops(struct bv_context *c) BV_HIDDEN;
void bv_qp_init_ops(struct bv_context *c) BV_HIDDEN;
void bv_qp_ex_init(struct bv_qp *q) BV_HIDDEN;
/* qp.c: ibv_create_qp_ex's body; @gsi: the QP is QP1 (compat/gsi.c) */
struct ibv_qp *bv_qp_create(struct ibv_context *context, struct ibv_qp_init_attr_ex *a,
			    bool gsi) BV_HIDDEN;

/*
 * async.c: bv_async_pump() routes the events the engine queued on the core's libblue
 * context to the verbs contexts owning their objects (a port event to every context);
 * bv_async_forget() drops the queued events naming @qp or @srq, about to be destroyed.
 * Locking: with the core's lock held.
 */
void bv_async_pump(struct bv_core *core) BV_HIDDEN;
void bv_async_forget(struct bv_context *c, const struct ibv_qp *qp, const struct ibv_srq *srq)
	BV_HIDDEN;
void bv_srq_init_ops(struct bv_context *c) BV_HIDDEN;

/*
 * mw.c: the window ops; bv_bmw() is a window's libblue object (NULL for NULL);
 * bv_mw_bind_info() translates what a bind names; bv_mw_leftovers() deallocates the
 * windows a closing context still has (before its MRs, which they hold).
 */
void bv_mw_init_ops(struct bv_context *c) BV_HIDDEN;
struct blue_mw *bv_bmw(struct ibv_mw *mw) BV_HIDDEN;
void bv_mw_bind_info(const struct ibv_mw_bind_info *in, struct blue_mw_bind_info *out)
	BV_HIDDEN;
void bv_mw_leftovers(struct bv_context *c) BV_HIDDEN;

/*
 * bv_cq_clean() - drop @qpn's completions from what an extended poll took from libblue
 * and has not served yet (libblue cleans its own ring: a QP going to RESET).
 * Locking: with the context lock held.
 */
void bv_cq_clean(struct bv_cq *cq, uint32_t qpn) BV_HIDDEN;

/*
 * import.c: bv_handle_new() numbers a PD or MR (ibv_pd.handle, ibv_mr.handle: what
 * ibv_import_pd/mr take; unique in the process). bv_unimport_pd/mr() free an import,
 * not the object it stands for (ibv_dealloc_pd/ibv_dereg_mr of an import do the same).
 * Locking: bv_unimport_* with the context lock held.
 */
uint32_t bv_handle_new(void) BV_HIDDEN;
void bv_unimport_pd(struct bv_pd *p) BV_HIDDEN;
void bv_unimport_mr(struct bv_mr *m) BV_HIDDEN;

/*
 * device.c: bv_context_import() - a new context of the device whose context has the
 * command fd @cmd_fd is a dup of, with that context's key; it owns @cmd_fd (closed with
 * it). Return: NULL with errno (EBADF; EOPNOTSUPP, said, when no context of this process
 * has it: blue's objects live in the process that made them).
 */
struct ibv_context *bv_context_import(int cmd_fd) BV_HIDDEN;

/* mr_pd.c: ibv access flags -> blue's (0, or -errno after a message) */
int bv_access(int ibv_access, const char *who) BV_HIDDEN;

/* An errno for a positive-errno return, as rdma-core's calls set both. */
static inline int bv_ret(int err)
{
	if (err)
		errno = err;
	return err;
}

/*
 * bv_mixed() - whether @what (an object of context @theirs) is refused for an object of
 * @ours: verbs has a QP's PD and CQs, and a CQ's channel, in the QP's (CQ's) own context.
 * Two contexts of one device share one libblue context, which would take them, so the
 * check is here. Says so, naming @who and @what, and sets errno EINVAL when refused.
 */
static inline bool bv_mixed(const struct ibv_context *ours, const struct ibv_context *theirs,
			    const char *who, const char *what)
{
	if (ours == theirs)
		return false;
	bv_log("%s: %s belongs to another verbs context (ibv_open_device() gave each its "
	       "own; objects of one context do not mix with another's)", who, what);
	errno = EINVAL;
	return true;
}

/* A NULL return with errno @err, as the calls returning a pointer fail. */
static inline void *bv_null(int err)
{
	errno = err;
	return NULL;
}

/*
 * A constructor's two ends: bv_obj_new() gives @size zeroed bytes (NULL with ENOMEM);
 * bv_obj_fail() frees @obj when its libblue object could not be made, keeping the errno
 * libblue set, and gives the NULL to return.
 */
static inline void *bv_obj_new(size_t size)
{
	void *obj = calloc(1, size);

	return obj ? obj : bv_null(ENOMEM);
}

static inline void *bv_obj_fail(void *obj)
{
	int err = errno;

	free(obj);
	return bv_null(err);
}

#endif /* BLUE_COMPAT_H */
