// SPDX-License-Identifier: MIT
/*
 * The AF_XDP HAL on a real netdev queue. One UMEM (umem.c) with its fill and completion
 * rings; socket slot 0 is the UMEM's owner socket, created at open (that is where the
 * zero-copy or copy decision is made), and every further socket joins it with
 * XDP_SHARED_UMEM on the same queue. Steering goes through the maps `bluectl attach`
 * pinned: the XSKMAP (slot -> socket) and the mmapped QP-context array (QPN -> slot).
 * A HAL hands out the XSKMAP slots of its own queue only (include/blue/qp_ctx.h), so
 * HALs on different queues of one netdev, in one process or several, never meet.
 *
 * libxdp is used for the rings only: its default XDP program and its multi-program
 * dispatcher are never loaded (XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD; the dispatcher
 * fails on these machines, ARCHITECTURE.md "facts"), and libxdp's own
 * xsk_socket__update_xskmap keys the map by queue id, so we write the XSKMAP ourselves.
 */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <linux/if_xdp.h>
#include <blue/mcast.h>
#include <blue/pins.h>
#include "afxdp_hal/hal.h"
#include "afxdp_hal/flow.h"
#include "afxdp_hal/mcast_map.h"
#include "afxdp_hal/umem.h"

#ifndef SOL_XDP
#define SOL_XDP 283
#endif
#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL 69
#endif
#ifndef SO_BUSY_POLL_BUDGET
#define SO_BUSY_POLL_BUDGET 70
#endif
/*
 * AF_XDP multi-buffer (kernel 6.6, Documentation/networking/af_xdp.rst "Multi-Buffer
 * Support"): the bind flag and the descriptor option that says "more of this packet
 * follows". Debian 12's linux-libc-dev (6.1) and libxdp 1.3.1 predate them.
 */
#ifndef XDP_USE_SG
#define XDP_USE_SG (1 << 4)
#endif
#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD (1 << 0)
#endif
/*
 * Kernel 6.17 (net/xdp/xsk.c, "XDP_MAX_TX_SKB_BUDGET"): how many descriptors one
 * copy-mode sendto() may transmit, 32 (TX_BATCH_SIZE) unless raised. Not in these
 * headers either; an older kernel refuses the option and keeps 32.
 */
#ifndef XDP_MAX_TX_SKB_BUDGET
#define XDP_MAX_TX_SKB_BUDGET 9
#endif

#define AX_DEF_FRAMES		4096u
#define AX_DEF_FRAME_SIZE	4096u
#define AX_DEF_RING		2048u
/*
 * In copy mode one sendto() transmits at most 32 descriptors (TX_BATCH_SIZE in
 * net/xdp/xsk.c) and then fails with EAGAIN, so a flush of a full ring needs up to
 * ring/32 kicks. The bound on retries stops a flush from spinning when the netdev is
 * really busy.
 */
#define AX_KERNEL_TX_BATCH	32u
#define AX_BUSY_POLL_US		20
#define AX_BUSY_POLL_BUDGET	64
/* Gather buffers per socket for multi-buffer RX: one rx_burst gathers at most this
 * many packets (the runtime asks for BLUE_RX_BURST = 64 at a time). */
#define AX_GATHER_SLOTS		64u

struct ax_hal;

struct ax_sock {
	struct blue_hal_sock base;
	struct ax_hal *ax;
	bool open;		/* handed out by sock_open */
	struct xsk_socket *xsk;	/* kept while closed for slot 0, the UMEM owner */
	int fd;
	struct xsk_ring_cons rx;
	struct xsk_ring_prod tx;
	uint8_t *gather;	/* multi-buffer mode: AX_GATHER_SLOTS x max_pkt bytes */
};

struct ax_hal {
	struct blue_hal base;
	char ifname[IF_NAMESIZE];
	uint32_t queue_id;
	uint32_t ring_size;
	bool zerocopy;
	bool tx_only;
	bool busy_poll;
	bool sg;		/* bound with XDP_USE_SG: frames of two chunks */
	uint32_t tx_budget;	/* descriptors one copy-mode sendto() sends */
	struct blue_umem umem;
	int xsks_fd;
	int qp_ctx_fd;
	int mcast_fd;		/* the multicast map (mcast_map.h); -1: pins without one */
	struct blue_qp_ctx *ctx;
	size_t ctx_len;
	struct ax_sock socks[BLUE_XSK_PER_QUEUE];	/* XSKMAP slots of queue_id */
	struct blue_hal_stats st;
};

static const struct blue_hal_ops ax_ops;

static struct ax_hal *to_ax(struct blue_hal *h)
{
	return (struct ax_hal *)h;
}

static struct ax_sock *to_axs(struct blue_hal_sock *s)
{
	return (struct ax_sock *)s;
}

static void ax_err(const struct ax_hal *ax, const char *what, int err)
{
	fprintf(stderr, "blue afxdp: %s queue %u: %s: %s\n", ax->ifname, ax->queue_id,
		what, strerror(err < 0 ? -err : err));
}

/* --- pinned maps ------------------------------------------------------------- */

static int open_pin(struct ax_hal *ax, const char *dir, const char *name, int *fd,
		    struct bpf_map_info *info)
{
	char path[PATH_MAX];
	__u32 len = sizeof(*info);
	int err;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	*fd = bpf_obj_get(path);
	if (*fd < 0) {
		err = -errno;
		fprintf(stderr, "blue afxdp: %s: cannot open pinned map %s: %s "
			"(has `bluectl attach %s` run?)\n",
			ax->ifname, path, strerror(-err), ax->ifname);
		return err;
	}
	memset(info, 0, sizeof(*info));
	if (bpf_obj_get_info_by_fd(*fd, info, &len)) {
		err = -errno;
		fprintf(stderr, "blue afxdp: %s: %s: %s\n", ax->ifname, path, strerror(-err));
		return err;
	}
	return 0;
}

/* The multicast map if the pins have one; -EINVAL when it is there but not ours. */
static int open_mcast(struct ax_hal *ax, const char *dir)
{
	struct bpf_map_info info;
	char path[PATH_MAX + sizeof(BLUE_PIN_MCAST) + 1];
	__u32 len = sizeof(info);

	snprintf(path, sizeof(path), "%s/%s", dir, BLUE_PIN_MCAST);
	ax->mcast_fd = bpf_obj_get(path);
	if (ax->mcast_fd < 0)
		return 0;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(ax->mcast_fd, &info, &len) ||
	    info.type != BPF_MAP_TYPE_HASH || info.key_size != sizeof(struct blue_mcast_key) ||
	    info.value_size != sizeof(struct blue_mcast_val)) {
		fprintf(stderr, "blue afxdp: %s: %s does not match include/blue/mcast.h: "
			"rebuild and re-attach\n", ax->ifname, path);
		return -EINVAL;
	}
	return 0;
}

static int open_maps(struct ax_hal *ax, const char *pin_dir)
{
	char dir[PATH_MAX];
	struct bpf_map_info info;
	long page = sysconf(_SC_PAGESIZE);
	int err;

	if (pin_dir) {
		snprintf(dir, sizeof(dir), "%s", pin_dir);
	} else if ((err = blue_pin_dir(dir, sizeof(dir), ax->ifname))) {
		ax_err(ax, "naming the pin directory", err);
		return err;
	}

	err = open_pin(ax, dir, BLUE_PIN_XSKS, &ax->xsks_fd, &info);
	if (err)
		return err;
	if (info.type != BPF_MAP_TYPE_XSKMAP || info.max_entries < BLUE_MAX_XSK) {
		fprintf(stderr, "blue afxdp: %s: %s/%s is not an XSKMAP of %u entries "
			"(type %u, %u entries): rebuild bpf/ and re-attach\n", ax->ifname,
			dir, BLUE_PIN_XSKS, BLUE_MAX_XSK, info.type, info.max_entries);
		return -EINVAL;
	}

	err = open_pin(ax, dir, BLUE_PIN_QP_CTX, &ax->qp_ctx_fd, &info);
	if (err)
		return err;
	if (info.type != BPF_MAP_TYPE_ARRAY || info.value_size != sizeof(struct blue_qp_ctx) ||
	    info.max_entries != BLUE_MAX_QP || !(info.map_flags & BPF_F_MMAPABLE)) {
		fprintf(stderr, "blue afxdp: %s: %s/%s does not match include/blue/qp_ctx.h: "
			"want an mmapable array of %u x %zu bytes, found type %u, %u x %u bytes, "
			"flags %#x: rebuild and re-attach\n", ax->ifname, dir, BLUE_PIN_QP_CTX,
			BLUE_MAX_QP, sizeof(struct blue_qp_ctx), info.type, info.max_entries,
			info.value_size, info.map_flags);
		return -EINVAL;
	}
	/* optional: pins made before multicast existed lack it, and unicast works there */
	if (open_mcast(ax, dir))
		return -EINVAL;
	ax->ctx_len = ((size_t)BLUE_MAX_QP * sizeof(struct blue_qp_ctx) + (size_t)page - 1) &
		      ~((size_t)page - 1);
	ax->ctx = mmap(NULL, ax->ctx_len, PROT_READ | PROT_WRITE, MAP_SHARED, ax->qp_ctx_fd, 0);
	if (ax->ctx == MAP_FAILED) {
		err = -errno;
		ax->ctx = NULL;
		ax_err(ax, "mmap of the qp_ctx map", err);
		return err;
	}
	return 0;
}

/* --- sockets ----------------------------------------------------------------- */

static void set_busy_poll(struct ax_hal *ax, int fd)
{
	int one = 1, us = AX_BUSY_POLL_US, budget = AX_BUSY_POLL_BUDGET;

	if (setsockopt(fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &us, sizeof(us)) ||
	    setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL_BUDGET, &budget, sizeof(budget)))
		ax_err(ax, "busy poll not enabled (needs CAP_NET_ADMIN)", errno);
}

/*
 * Measured here (strace -c on a 1 MiB WRITE stream at path MTU 4096): with the default
 * budget of 32 descriptors a multi-buffer packet's two descriptors meant a sendto()
 * per 16 packets, 9 of 10 of them failing with EAGAIN. A budget of the TX ring's size
 * lets one doorbell send a whole batch.
 */
static void set_tx_budget(struct ax_hal *ax, int fd)
{
	int budget = (int)ax->ring_size;

	ax->tx_budget = AX_KERNEL_TX_BATCH;
	if (!setsockopt(fd, SOL_XDP, XDP_MAX_TX_SKB_BUDGET, &budget, sizeof(budget)))
		ax->tx_budget = ax->ring_size;
}

/*
 * Create the xsk for slot @s. The first socket of the UMEM is made with
 * xsk_socket__create and @bind_flags; later ones join with XDP_SHARED_UMEM (libxdp
 * sets that flag and the kernel refuses any other with it, so they inherit the owner's
 * copy/zero-copy mode and need_wakeup).
 */
static int xsk_make(struct ax_hal *ax, struct ax_sock *s, bool first, __u16 bind_flags)
{
	struct xsk_socket_config cfg = {
		.rx_size = ax->ring_size,
		.tx_size = ax->ring_size,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.xdp_flags = 0,
		.bind_flags = bind_flags,
	};
	struct xsk_ring_cons *rx = ax->tx_only ? NULL : &s->rx;
	int err;

	if (first)
		err = xsk_socket__create(&s->xsk, ax->ifname, ax->queue_id, ax->umem.xumem,
					 rx, &s->tx, &cfg);
	else
		err = xsk_socket__create_shared(&s->xsk, ax->ifname, ax->queue_id,
						ax->umem.xumem, rx, &s->tx, &ax->umem.fill,
						&ax->umem.comp, &cfg);
	if (err) {
		s->xsk = NULL;
		return err;
	}
	if (ax->sg && !ax->tx_only && !s->gather) {
		s->gather = malloc((size_t)AX_GATHER_SLOTS * ax->base.max_pkt);
		if (!s->gather) {
			xsk_socket__delete(s->xsk);
			s->xsk = NULL;
			return -ENOMEM;
		}
	}
	s->fd = xsk_socket__fd(s->xsk);
	s->ax = ax;
	s->base.hal = &ax->base;
	s->base.slot = ax->queue_id * BLUE_XSK_PER_QUEUE + (uint32_t)(s - ax->socks);
	if (ax->busy_poll)
		set_busy_poll(ax, s->fd);
	set_tx_budget(ax, s->fd);
	return 0;
}

static bool query_zerocopy(int fd)
{
	struct xdp_options opts = { 0 };
	socklen_t len = sizeof(opts);

	if (getsockopt(fd, SOL_XDP, XDP_OPTIONS, &opts, &len))
		return false;
	return opts.flags & XDP_OPTIONS_ZEROCOPY;
}

/*
 * Register the UMEM and create the owner socket: zero-copy first, then copy mode. A
 * failed bind leaves libxdp's UMEM half set up (its TX ring is already configured and
 * cannot be configured twice), so each attempt starts from a fresh registration.
 */
static int try_modes(struct ax_hal *ax, bool force_copy, uint32_t fill_target)
{
	static const __u16 modes[] = { XDP_ZEROCOPY, XDP_COPY };
	__u16 sg = ax->sg ? XDP_USE_SG : 0;
	unsigned int i;
	int err = -EINVAL;

	for (i = force_copy ? 1 : 0; i < 2; i++) {
		err = blue_umem_register(&ax->umem, ax->ring_size, ax->ring_size, fill_target);
		if (err) {
			ax_err(ax, "UMEM registration (xsk_umem__create)", err);
			return err;
		}
		err = xsk_make(ax, &ax->socks[0], true, modes[i] | XDP_USE_NEED_WAKEUP | sg);
		if (!err)
			return 0;
		blue_umem_unregister(&ax->umem);
	}
	return err;
}

/*
 * The kernel frees a closed AF_XDP socket's hold on its queue from a workqueue
 * (xp_release_deferred), so a queue a process has just let go of can refuse a new
 * bind with EBUSY for a few milliseconds. Retry that, for at most AX_BUSY_RETRY_MS.
 */
#define AX_BUSY_RETRY_MS	2000
#define AX_BUSY_STEP_MS		20

static int create_owner(struct ax_hal *ax, bool force_copy, uint32_t fill_target)
{
	int err, waited = 0;

	while ((err = try_modes(ax, force_copy, fill_target)) == -EBUSY &&
	       waited < AX_BUSY_RETRY_MS) {
		usleep(AX_BUSY_STEP_MS * 1000);
		waited += AX_BUSY_STEP_MS;
	}
	if (err == -EINVAL && ax->sg) {
		/* a kernel before 6.6 knows no XDP_USE_SG: frames of one chunk, then */
		fprintf(stderr, "blue afxdp: %s queue %u: AF_XDP multi-buffer (XDP_USE_SG) "
			"refused; frames stay within one %u-byte chunk\n", ax->ifname,
			ax->queue_id, ax->base.frame_size);
		ax->sg = false;
		ax->base.max_pkt = ax->base.frame_size - ax->base.headroom;
		err = try_modes(ax, force_copy, fill_target);
	}
	if (err) {
		if (err == -EINVAL && ax->queue_id)
			fprintf(stderr, "blue afxdp: %s: AF_XDP bind to queue %u refused: does "
				"the netdev have %u queues? (ethtool -l %s; a veth takes "
				"numrxqueues/numtxqueues at creation)\n", ax->ifname,
				ax->queue_id, ax->queue_id + 1, ax->ifname);
		ax_err(ax, err == -EBUSY ? "AF_XDP bind: the queue has another AF_XDP socket"
			   : "AF_XDP bind, copy mode included", err);
		return err;
	}
	ax->zerocopy = query_zerocopy(ax->socks[0].fd);
	return 0;
}

static int ax_sock_open(struct blue_hal *hal, struct blue_hal_sock **out)
{
	struct ax_hal *ax = to_ax(hal);
	struct ax_sock *s = NULL;
	uint32_t i;
	int err;

	for (i = 0; i < BLUE_XSK_PER_QUEUE && !s; i++)
		if (!ax->socks[i].open)
			s = &ax->socks[i];
	if (!s)
		return -EMFILE;
	if (!s->xsk) {
		err = xsk_make(ax, s, false, 0);
		if (err) {
			ax_err(ax, "shared AF_XDP socket", err);
			return err;
		}
	}
	if (!ax->tx_only && bpf_map_update_elem(ax->xsks_fd, &s->base.slot, &s->fd, 0)) {
		err = -errno;
		ax_err(ax, "XSKMAP insert", err);
		if (s != ax->socks) {
			xsk_socket__delete(s->xsk);
			s->xsk = NULL;
		}
		return err;
	}
	s->open = true;
	*out = &s->base;
	return 0;
}

/* Descriptors the kernel has not yet taken off @s's TX ring. */
static uint32_t tx_outstanding(const struct ax_sock *s)
{
	return *s->tx.producer - __atomic_load_n(s->tx.consumer, __ATOMIC_ACQUIRE);
}

static int ax_tx_flush(struct blue_hal_sock *bs);

/* RX frames still on @s's ring go back to the pool; the UMEM's RX budget shrinks. */
static void rx_drain(struct ax_sock *s)
{
	struct ax_hal *ax = s->ax;
	uint32_t n, idx = 0, i;

	if (ax->tx_only)
		return;
	while ((n = xsk_ring_cons__peek(&s->rx, 64, &idx)) > 0) {
		for (i = 0; i < n; i++)
			blue_fpool_put(&ax->umem.pool,
				       xsk_ring_cons__rx_desc(&s->rx, idx + i)->addr);
		xsk_ring_cons__release(&s->rx, n);
		ax->umem.in_fill -= n < ax->umem.in_fill ? n : ax->umem.in_fill;
	}
}

static void ax_sock_close(struct blue_hal_sock *bs)
{
	struct ax_sock *s = to_axs(bs);
	struct ax_hal *ax = s->ax;
	int tries;

	if (!s->open)
		return;
	if (!ax->tx_only) {
		bpf_map_delete_elem(ax->xsks_fd, &s->base.slot);
		blue_flow_unbind_slot(ax->ctx, s->base.slot);
		if (ax->mcast_fd >= 0)
			blue_mcast_map_clear(ax->mcast_fd, ax->queue_id, s->base.slot);
	}
	/* Let queued TX frames leave, so their frames come back through completions. */
	for (tries = 0; tries < 8 && tx_outstanding(s); tries++)
		if (ax_tx_flush(bs) && tries)
			usleep(1000);
	blue_umem_reap(&ax->umem);
	rx_drain(s);
	if (s != ax->socks) {
		xsk_socket__delete(s->xsk);
		s->xsk = NULL;
		free(s->gather);
		s->gather = NULL;
	}
	s->open = false;
}

/* --- TX ---------------------------------------------------------------------- */

static int ax_tx_alloc(struct blue_hal *hal, struct blue_frame *f, unsigned int n)
{
	struct ax_hal *ax = to_ax(hal);
	uint64_t addr;
	unsigned int i;

	if (blue_fpool_avail(ax->umem.txpool) < n)
		blue_umem_reap(&ax->umem);
	for (i = 0; i < n && blue_fpool_get(ax->umem.txpool, &addr, 1); i++) {
		f[i].addr = addr + hal->headroom;
		f[i].data = blue_umem_data(&ax->umem, f[i].addr);
		f[i].len = 0;
	}
	return (int)i;
}

static void ax_tx_free(struct blue_hal *hal, const struct blue_frame *f, unsigned int n)
{
	struct ax_hal *ax = to_ax(hal);
	unsigned int i;

	for (i = 0; i < n; i++)
		blue_umem_tx_put(&ax->umem, f[i].addr);
}

/* Descriptors frame @f needs: one per chunk it touches (two at most: tx_alloc frames
 * are one chunk, or an aligned pair in multi-buffer mode). */
static uint32_t tx_ndesc(const struct ax_hal *ax, const struct blue_frame *f)
{
	uint64_t off = f->addr & (ax->umem.frame_size - 1);

	return off + f->len > ax->umem.frame_size ? 2 : 1;
}

static int ax_tx_submit(struct blue_hal_sock *bs, const struct blue_frame *f, unsigned int n)
{
	struct ax_sock *s = to_axs(bs);
	struct ax_hal *ax = s->ax;
	uint32_t k, idx = 0, i, need = 0, room, unit;

	unit = ax->sg ? 2 * ax->umem.frame_size : ax->umem.frame_size;
	/* The kernel would drop a bad descriptor silently (tx_invalid_descs) and the
	 * frame would never complete: refuse it here instead, before queuing any. A
	 * frame may span two chunks only if they are a pair from tx_alloc. */
	for (i = 0; i < n; i++) {
		uint64_t off = f[i].addr & (unit - 1);

		if (f[i].addr >= ax->umem.size || f[i].len == 0 || off + f[i].len > unit ||
		    (ax->sg && f[i].addr < ax->umem.tx_pairs.base &&
		     off + f[i].len > ax->umem.frame_size))
			return -EINVAL;
		need += tx_ndesc(ax, &f[i]);
	}
	room = xsk_prod_nb_free(&s->tx, need);
	k = n;
	if (room < need) {	/* the ring is short: as many whole frames as fit */
		for (k = 0, need = 0; k < n; k++) {
			uint32_t d = tx_ndesc(ax, &f[k]);

			if (need + d > room)
				break;
			need += d;
		}
		ax->st.tx_ring_full++;
	}
	if (!k)
		return 0;
	xsk_ring_prod__reserve(&s->tx, need, &idx);
	for (i = 0; i < k; i++) {
		struct xdp_desc *d = xsk_ring_prod__tx_desc(&s->tx, idx++);
		uint32_t first = ax->umem.frame_size -
				 (uint32_t)(f[i].addr & (ax->umem.frame_size - 1));

		d->addr = f[i].addr;
		if (f[i].len <= first) {
			d->len = f[i].len;
			d->options = 0;
			continue;
		}
		/* Multi-buffer TX: the pair's second chunk carries the rest, and every
		 * descriptor but a packet's last says so (XDP_PKT_CONTD). */
		d->len = first;
		d->options = XDP_PKT_CONTD;
		d = xsk_ring_prod__tx_desc(&s->tx, idx++);
		d->addr = f[i].addr + first;
		d->len = f[i].len - first;
		d->options = 0;
		ax->st.tx_multibuf++;
	}
	xsk_ring_prod__submit(&s->tx, need);
	ax->st.tx_frames += k;
	return (int)k;
}

static int ax_tx_flush(struct blue_hal_sock *bs)
{
	struct ax_sock *s = to_axs(bs);
	struct ax_hal *ax = s->ax;
	uint32_t before, tries, max_tries = ax->ring_size / ax->tx_budget + 2;
	int err = 0;

	blue_umem_reap(&ax->umem);
	/* Zero-copy drivers clear need_wakeup while their NAPI is draining the ring. In
	 * copy mode the syscall is what transmits (xsk_generic_xmit), so every batch
	 * needs it whatever the flag says. */
	if (!tx_outstanding(s) || (ax->zerocopy && !xsk_ring_prod__needs_wakeup(&s->tx)))
		return 0;
	for (tries = 0; tries < max_tries && tx_outstanding(s); tries++) {
		before = tx_outstanding(s);
		ax->st.tx_kicks++;
		if (sendto(s->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0) {
			err = errno;
			if (err != EAGAIN && err != EBUSY && err != ENOBUFS) {
				ax_err(ax, "TX doorbell (sendto)", err);
				return -err;
			}
		}
		/* A full completion ring stops the kernel: make room before retrying. */
		blue_umem_reap(&ax->umem);
		if (tx_outstanding(s) == before)
			break;	/* no progress: the netdev is busy, the caller retries */
	}
	return tx_outstanding(s) ? -EAGAIN : 0;
}

/* --- RX ---------------------------------------------------------------------- */

/* @ndesc descriptors taken off the RX ring (they left the fill ring's count), @npkt
 * packets handed up. */
static void rx_consumed(struct ax_sock *s, uint32_t ndesc, uint32_t npkt)
{
	struct ax_hal *ax = s->ax;

	if (!ndesc)
		return;
	xsk_ring_cons__release(&s->rx, ndesc);
	ax->umem.in_fill -= ndesc < ax->umem.in_fill ? ndesc : ax->umem.in_fill;
	ax->st.rx_frames += npkt;
}

/*
 * Multi-buffer RX: the descriptors of one packet follow each other on the ring, all but
 * the last flagged XDP_PKT_CONTD, and the kernel publishes a packet whole. The runtime
 * parses contiguous bytes, so a packet of several descriptors is copied into a gather
 * slot; its first chunk stays the frame's @addr (freed by rx_release), the others go
 * back to the pool at once. A packet cut off by the end of what was peeked is left on
 * the ring for the next call. Returns the packets taken.
 */
static unsigned int rx_take_sg(struct ax_sock *s, struct blue_frame *f, unsigned int max)
{
	struct ax_hal *ax = s->ax;
	uint32_t n, idx = 0, i = 0, used = 0, slot = 0, out = 0;

	n = xsk_ring_cons__peek(&s->rx, max < 2 * AX_GATHER_SLOTS ? 2 * AX_GATHER_SLOTS : max,
				&idx);
	while (i < n && out < max) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&s->rx, idx + i);
		uint32_t j = i, len = 0;
		uint8_t *g;

		if (!(d->options & XDP_PKT_CONTD)) {
			f[out].addr = d->addr;
			f[out].data = blue_umem_data(&ax->umem, d->addr);
			f[out].len = d->len;
			out++;
			used = ++i;
			continue;
		}
		while (j < n && (xsk_ring_cons__rx_desc(&s->rx, idx + j)->options & XDP_PKT_CONTD))
			j++;
		if (j == n || slot == AX_GATHER_SLOTS)
			break;	/* the rest of it is not in view, or no slot: next call */
		g = s->gather + (size_t)slot * ax->base.max_pkt;
		for (; i <= j; i++) {
			const struct xdp_desc *e = xsk_ring_cons__rx_desc(&s->rx, idx + i);

			if (len + e->len <= ax->base.max_pkt)
				memcpy(g + len, blue_umem_data(&ax->umem, e->addr), e->len);
			len += e->len;
			if (e != d)
				blue_fpool_put(&ax->umem.pool, e->addr);
		}
		used = i;
		if (len > ax->base.max_pkt) {
			/* bigger than any frame we send or accept: not ours to parse */
			blue_fpool_put(&ax->umem.pool, d->addr);
			ax->st.rx_dropped++;
			continue;
		}
		f[out].addr = d->addr;
		f[out].data = g;
		f[out].len = len;
		out++;
		slot++;
		ax->st.rx_multibuf++;
	}
	/* give back what was peeked but not used (libxdp 1.3 has no cancel) */
	s->rx.cached_cons -= n - used;
	rx_consumed(s, used, out);
	return out;
}

static unsigned int rx_take(struct ax_sock *s, struct blue_frame *f, unsigned int max)
{
	struct ax_hal *ax = s->ax;
	uint32_t n, idx = 0, i;

	if (ax->sg)
		return rx_take_sg(s, f, max);
	n = xsk_ring_cons__peek(&s->rx, max, &idx);
	for (i = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&s->rx, idx + i);

		f[i].addr = d->addr;
		f[i].data = blue_umem_data(&ax->umem, d->addr);
		f[i].len = d->len;
	}
	rx_consumed(s, n, n);
	return n;
}

static int ax_rx_burst(struct blue_hal_sock *bs, struct blue_frame *f, unsigned int max,
		       int timeout_ms)
{
	struct ax_sock *s = to_axs(bs);
	struct ax_hal *ax = s->ax;
	struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
	unsigned int n;

	if (ax->tx_only)
		return -EOPNOTSUPP;
	blue_umem_fill_topup(&ax->umem);
	n = rx_take(s, f, max);
	if (n || !max)
		return (int)n;
	/* Empty. The driver asks for a syscall when it stopped for lack of fill frames
	 * (need_wakeup); with busy polling, the syscall is what runs the NAPI loop. */
	if (xsk_ring_prod__needs_wakeup(&ax->umem.fill) || ax->busy_poll) {
		ax->st.busy_polls += ax->busy_poll;
		recvfrom(s->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
	}
	if (!timeout_ms)
		return (int)rx_take(s, f, max);
	ax->st.rx_wakeups++;
	if (poll(&pfd, 1, timeout_ms) < 0 && errno != EINTR)
		return -errno;
	return (int)rx_take(s, f, max);
}

static void ax_rx_release(struct blue_hal *hal, const struct blue_frame *f, unsigned int n)
{
	struct ax_hal *ax = to_ax(hal);
	unsigned int i;

	for (i = 0; i < n; i++)
		blue_fpool_put(&ax->umem.pool, f[i].addr);
	blue_umem_fill_topup(&ax->umem);
}

/* --- flow table -------------------------------------------------------------- */

static int ax_flow_bind(struct blue_hal_sock *bs, uint32_t qpn)
{
	struct ax_sock *s = to_axs(bs);

	if (s->ax->tx_only)
		return -EOPNOTSUPP;
	if (!s->open)
		return -EBADF;
	return blue_flow_bind(s->ax->ctx, qpn, bs->slot);
}

static int ax_flow_unbind(struct blue_hal *hal, uint32_t qpn)
{
	struct ax_hal *ax = to_ax(hal);

	if (ax->tx_only)
		return -EOPNOTSUPP;
	return blue_flow_unbind(ax->ctx, qpn);
}

static int ax_mcast_bind(struct blue_hal_sock *bs, const uint8_t gid[16], uint32_t nqp)
{
	struct ax_sock *s = to_axs(bs);

	if (s->ax->tx_only || s->ax->mcast_fd < 0)
		return -EOPNOTSUPP;
	if (!s->open)
		return -EBADF;
	return blue_mcast_map_put(s->ax->mcast_fd, s->ax->queue_id, gid, bs->slot, nqp);
}

static int ax_mcast_unbind(struct blue_hal *hal, const uint8_t gid[16])
{
	struct ax_hal *ax = to_ax(hal);

	if (ax->tx_only || ax->mcast_fd < 0)
		return -EOPNOTSUPP;
	return blue_mcast_map_del(ax->mcast_fd, ax->queue_id, gid);
}

static struct blue_qp_ctx *ax_qp_ctx_table(struct blue_hal *hal)
{
	return to_ax(hal)->ctx;
}

static int ax_sock_fd(struct blue_hal_sock *bs)
{
	return to_axs(bs)->fd;
}

static void ax_get_stats(struct blue_hal *hal, struct blue_hal_stats *st)
{
	struct ax_hal *ax = to_ax(hal);
	uint32_t i;

	*st = ax->st;
	st->fill_empty = ax->umem.fill_empty;
	st->frames_total = ax->umem.frame_count;
	st->frames_free = blue_fpool_avail(&ax->umem.pool);
	st->frames_free += blue_umem_split(&ax->umem) ? 2 * blue_fpool_avail(&ax->umem.tx_pairs) : 0;
	st->frame_errors = ax->umem.pool.bad_frees + ax->umem.tx_pairs.bad_frees;
	for (i = 0; i < BLUE_XSK_PER_QUEUE; i++) {
		struct xdp_statistics xs = { 0 };
		socklen_t len = sizeof(xs);

		if (!ax->socks[i].xsk ||
		    getsockopt(ax->socks[i].fd, SOL_XDP, XDP_STATISTICS, &xs, &len))
			continue;
		/* Copy mode counts a frame lost for want of a fill frame in rx_dropped and
		 * again in rx_fill_ring_empty_descs (measured: the two always moved
		 * together), so the latter is left out. */
		st->rx_dropped += xs.rx_dropped + xs.rx_ring_full;
	}
}

static void ax_destroy(struct blue_hal *hal)
{
	struct ax_hal *ax = to_ax(hal);
	uint32_t i;

	for (i = 0; i < BLUE_XSK_PER_QUEUE; i++)
		if (ax->socks[i].open)
			ax_sock_close(&ax->socks[i].base);
	/* The owner socket last: the others share its UMEM registration. */
	for (i = BLUE_XSK_PER_QUEUE; i-- > 0;) {
		if (ax->socks[i].xsk)
			xsk_socket__delete(ax->socks[i].xsk);
		free(ax->socks[i].gather);
	}
	blue_umem_fini(&ax->umem);
	if (ax->ctx)
		munmap(ax->ctx, ax->ctx_len);
	if (ax->qp_ctx_fd >= 0)
		close(ax->qp_ctx_fd);
	if (ax->xsks_fd >= 0)
		close(ax->xsks_fd);
	if (ax->mcast_fd >= 0)
		close(ax->mcast_fd);
	free(ax);
}

static const struct blue_hal_ops ax_ops = {
	.name = "afxdp",
	.sock_open = ax_sock_open,
	.sock_close = ax_sock_close,
	.tx_alloc = ax_tx_alloc,
	.tx_free = ax_tx_free,
	.tx_submit = ax_tx_submit,
	.tx_flush = ax_tx_flush,
	.rx_burst = ax_rx_burst,
	.rx_release = ax_rx_release,
	.flow_bind = ax_flow_bind,
	.flow_unbind = ax_flow_unbind,
	.mcast_bind = ax_mcast_bind,
	.mcast_unbind = ax_mcast_unbind,
	.qp_ctx_table = ax_qp_ctx_table,
	.sock_fd = ax_sock_fd,
	.get_stats = ax_get_stats,
	.destroy = ax_destroy,
};

/* --- open -------------------------------------------------------------------- */

static int check_config(const struct blue_afxdp_config *c, uint32_t *frames, uint32_t *fsize,
			uint32_t *ring)
{
	*frames = c->frame_count ? c->frame_count : AX_DEF_FRAMES;
	*fsize = c->frame_size ? c->frame_size : AX_DEF_FRAME_SIZE;
	*ring = c->ring_size ? c->ring_size : AX_DEF_RING;
	/*
	 * Multi-buffer packets take two chunks each, on RX (fill ring) as on TX (pairs):
	 * the defaults double so that as many full-size packets fit in flight. Measured
	 * here: a 16 MiB READ at path MTU 4096 lost 10-25% of its responses for want of
	 * fill frames (XDP_STATISTICS rx_dropped) with 2048 fill entries, and went back N.
	 */
	if (c->max_pkt > *fsize) {
		if (!c->frame_count)
			*frames *= 2;
		if (!c->ring_size)
			*ring *= 2;
	}
	if (!c->ifname || !*c->ifname || strlen(c->ifname) >= IF_NAMESIZE)
		return -EINVAL;
	if ((*frames & (*frames - 1)) || (*ring & (*ring - 1)) ||
	    (*fsize != 2048 && *fsize != 4096) || *ring > *frames)
		return -EINVAL;
	return 0;
}

struct blue_hal *blue_hal_afxdp_open(const struct blue_afxdp_config *cfg)
{
	uint32_t frames, fsize, ring, fill_target;
	struct ax_hal *ax;
	int err;

	if (cfg && cfg->queue_id >= BLUE_MAX_QUEUES) {
		fprintf(stderr, "blue afxdp: %s: queue %u: blue serves queues 0..%u\n",
			cfg->ifname ? cfg->ifname : "?", cfg->queue_id, BLUE_MAX_QUEUES - 1);
		errno = EINVAL;
		return NULL;
	}
	if (!cfg || check_config(cfg, &frames, &fsize, &ring)) {
		fprintf(stderr, "blue afxdp: bad config: want an interface name, power-of-two "
			"frame and ring counts (ring <= frames) and 2048- or 4096-byte frames\n");
		errno = EINVAL;
		return NULL;
	}
	ax = calloc(1, sizeof(*ax));
	if (!ax) {
		errno = ENOMEM;
		return NULL;
	}
	ax->base.ops = &ax_ops;
	ax->base.frame_size = fsize;
	ax->base.headroom = 0;
	ax->base.max_pkt = fsize;
	if (cfg->max_pkt > fsize) {
		ax->sg = true;
		ax->base.max_pkt = 2 * fsize;
	}
	ax->xsks_fd = -1;
	ax->qp_ctx_fd = -1;
	ax->mcast_fd = -1;
	snprintf(ax->ifname, sizeof(ax->ifname), "%s", cfg->ifname);
	ax->queue_id = cfg->queue_id;
	ax->ring_size = ring;
	ax->tx_only = cfg->tx_only;
	ax->busy_poll = cfg->busy_poll;

	if (!if_nametoindex(ax->ifname)) {
		err = -errno;
		ax_err(ax, "no such interface in this network namespace", err);
		goto fail;
	}
	if (!ax->tx_only) {
		err = open_maps(ax, cfg->pin_dir);
		if (err)
			goto fail;
	}
	err = blue_umem_init_ex(&ax->umem, frames, fsize, cfg->hugepages);
	if (err) {
		ax_err(ax, "UMEM allocation", err);
		goto fail;
	}
	ax->base.hugepages = ax->umem.hugepages;
	/* Half the frames wait on the fill ring for RX; the other half serve TX (in
	 * multi-buffer mode as pairs: a 4 KiB IB MTU needs ~4.2 KB frames). */
	fill_target = ax->tx_only ? 0 : (frames / 2 < ring ? frames / 2 : ring);
	if (ax->sg) {
		err = blue_umem_split_tx(&ax->umem, ax->tx_only ? 0 : frames / 2);
		if (err) {
			ax_err(ax, "UMEM split for multi-buffer TX", err);
			goto fail;
		}
	}
	err = create_owner(ax, cfg->force_copy, fill_target);
	if (err)
		goto fail;
	/* the queue is ours now: groups a dead owner left steer to nobody */
	if (ax->mcast_fd >= 0)
		blue_mcast_map_clear(ax->mcast_fd, ax->queue_id, UINT32_MAX);
	blue_umem_fill_topup(&ax->umem);
	return &ax->base;
fail:
	ax_destroy(&ax->base);
	errno = -err;
	return NULL;
}

bool blue_hal_afxdp_zerocopy(const struct blue_hal *hal)
{
	if (!hal || hal->ops != &ax_ops)
		return false;
	return ((const struct ax_hal *)hal)->zerocopy;
}
