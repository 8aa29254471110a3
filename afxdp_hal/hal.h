/* SPDX-License-Identifier: MIT */
/*
 * The HAL: frames in, frames out. It owns the UMEM and its frame pool, the AF_XDP
 * sockets (one fill and one completion ring shared by all sockets of a netdev queue, and
 * one RX and one TX ring per socket), and the flow table that steers a QPN to a socket.
 * It knows frames, not RDMA: the only RoCE fact it uses is "a QPN selects a socket".
 *
 * Two implementations share these ops: AF_XDP on a real netdev (afxdp.c) and an
 * in-process loopback pair for unit tests (loopback.c).
 *
 * Threading: a blue_hal and its sockets are used from one thread at a time (the
 * progress path); the AF_XDP HAL takes no locks. (The loopback pair has one mutex, so
 * that its two ends may be driven from two threads.)
 */
#ifndef BLUE_HAL_H
#define BLUE_HAL_H

#include <stdbool.h>
#include <stdint.h>
#include <blue/qp_ctx.h>
#include <blue/stats.h>

struct blue_hal;
struct blue_hal_sock;

/*
 * One frame: @addr is its UMEM offset, @data points at it, @len is the bytes used. A TX
 * frame from tx_alloc starts at @data with max_pkt bytes of room; the caller sets @len
 * before tx_submit. A received frame's @data is valid until rx_release or the next
 * rx_burst on the same socket, whichever comes first (a multi-buffer packet is
 * gathered into a per-socket buffer that the next burst reuses).
 */
struct blue_frame {
	uint64_t addr;
	uint8_t *data;
	uint32_t len;
};

struct blue_hal_stats {
	uint64_t rx_frames;
	uint64_t tx_frames;
	uint64_t tx_kicks;	/* doorbells: sendto() calls */
	uint64_t rx_wakeups;	/* poll() calls that slept */
	uint64_t fill_empty;	/* times the fill ring could not be topped up */
	uint64_t tx_ring_full;	/* tx_submit found no room */
	uint64_t rx_dropped;	/* steered to a socket but lost there: RX ring full or no
				 * fill frame (AF_XDP: the kernel's XDP_STATISTICS) */
	uint64_t frames_total;	/* frames in the UMEM */
	uint64_t frames_free;	/* in the pool now: not on a ring (AF_XDP: the fill ring's
				 * frames count as used), not held by the user */
	uint64_t frame_errors;	/* double frees and foreign addresses refused */
	uint64_t rx_multibuf;	/* packets that came in several descriptors (gathered) */
	uint64_t tx_multibuf;	/* packets sent as several descriptors */
	uint64_t busy_polls;	/* syscalls that ran the NAPI loop instead of sleeping */
};

struct blue_hal_ops {
	const char *name;
	/* Open a socket (its own RX/TX rings) on the HAL's queue. */
	int (*sock_open)(struct blue_hal *hal, struct blue_hal_sock **out);
	void (*sock_close)(struct blue_hal_sock *s);
	/*
	 * Take up to @n free frames for building packets; returns how many (0 when the
	 * pool is empty: flush, reap and release, then retry), or -errno.
	 */
	int (*tx_alloc)(struct blue_hal *hal, struct blue_frame *f, unsigned int n);
	/* Give back frames taken with tx_alloc and never submitted. */
	void (*tx_free)(struct blue_hal *hal, const struct blue_frame *f, unsigned int n);
	/*
	 * Queue @n built frames on @s's TX ring without ringing the doorbell. Returns how
	 * many were queued (the rest stay owned by the caller), or -errno.
	 */
	int (*tx_submit)(struct blue_hal_sock *s, const struct blue_frame *f, unsigned int n);
	/*
	 * The doorbell: kick the kernel for everything queued since the last flush, and
	 * reap completed frames back to the pool. Returns 0, or -EAGAIN when some frames
	 * are still on the TX ring (the kernel was busy: call again), or -errno.
	 */
	int (*tx_flush)(struct blue_hal_sock *s);
	/*
	 * Receive up to @max frames. @timeout_ms 0 busy-polls once, > 0 sleeps in poll()
	 * for at most that long, < 0 sleeps without limit. Returns the count or -errno.
	 */
	int (*rx_burst)(struct blue_hal_sock *s, struct blue_frame *f, unsigned int max,
			int timeout_ms);
	/* Hand received frames back to the fill ring. */
	void (*rx_release)(struct blue_hal *hal, const struct blue_frame *f, unsigned int n);
	/*
	 * Flow table: steer packets for @qpn to @s by writing the xsk_slot and qpn fields
	 * of @qpn's QP-context slot (never its state: that is the runtime's). Returns 0,
	 * -EBUSY if the slot is owned by another QPN, -EINVAL for QPN 0, 1 or > 24 bits.
	 * Binding a QPN again moves it to @s. flow_unbind returns -ENOENT if @qpn does not
	 * own its slot.
	 */
	int (*flow_bind)(struct blue_hal_sock *s, uint32_t qpn);
	int (*flow_unbind)(struct blue_hal *hal, uint32_t qpn);
	/*
	 * Multicast steering (include/blue/mcast.h): frames to group @gid (a multicast GID)
	 * that arrive on the HAL's queue go to @s, whatever QP they are for; @nqp, the
	 * engine's QPs attached, is kept beside it for people. Binding again updates it.
	 * Returns 0, -ENOSPC when the table is full, -EOPNOTSUPP when the netdev's pins
	 * hold no multicast map (attached by an older blue: re-attach) or the HAL is TX
	 * only. mcast_unbind returns 0 or -ENOENT. Closing @s unbinds its groups.
	 */
	int (*mcast_bind)(struct blue_hal_sock *s, const uint8_t gid[16], uint32_t nqp);
	int (*mcast_unbind)(struct blue_hal *hal, const uint8_t gid[16]);
	/* The QP-context table the flow table writes: the mmapped BPF map, or heap memory. */
	struct blue_qp_ctx *(*qp_ctx_table)(struct blue_hal *hal);
	/* An fd that polls readable when @s has frames, for event mode. */
	int (*sock_fd)(struct blue_hal_sock *s);
	void (*get_stats)(struct blue_hal *hal, struct blue_hal_stats *st);
	void (*destroy)(struct blue_hal *hal);
};

/* Every HAL starts with this, so the inline wrappers below can dispatch. */
struct blue_hal {
	const struct blue_hal_ops *ops;
	uint32_t frame_size;
	uint32_t headroom;
	/*
	 * The largest frame (bytes from @data) a TX frame holds and rx_burst delivers:
	 * frame_size - headroom, or up to two chunks in AF_XDP multi-buffer mode.
	 */
	uint32_t max_pkt;
	bool hugepages;		/* the UMEM sits in 2 MiB pages */
};

struct blue_hal_sock {
	struct blue_hal *hal;
	uint32_t slot;	/* XSKMAP index */
};

struct blue_afxdp_config {
	const char *ifname;
	uint32_t queue_id;	/* < BLUE_MAX_QUEUES; its sockets take that queue's XSKMAP slots */
	uint32_t frame_count;	/* UMEM frames; power of two; 0 = default 4096 */
	uint32_t frame_size;	/* 2048 or 4096; 0 = default 4096 */
	uint32_t ring_size;	/* descriptors per ring; 0 = default 2048 */
	bool force_copy;	/* skip the zero-copy attempt */
	bool busy_poll;		/* set SO_PREFER_BUSY_POLL/SO_BUSY_POLL on sockets */
	/*
	 * Frames larger than one chunk (0: frame_size). Above frame_size the HAL binds
	 * with XDP_USE_SG (kernel 6.6+, AF_XDP multi-buffer): TX frames are two adjacent
	 * chunks sent as two descriptors, and a packet that arrives in several
	 * descriptors is gathered into one buffer. max_pkt is then 2 x frame_size. A
	 * kernel that refuses XDP_USE_SG leaves single-chunk frames (hal->max_pkt says).
	 */
	uint32_t max_pkt;
	bool hugepages;		/* try a UMEM of 2 MiB pages first (falls back quietly) */
	/*
	 * TX only: no pinned maps are needed (a netdev without blue attached). Sockets get
	 * no RX ring, nothing is put on the fill ring, flow_bind/flow_unbind fail with
	 * -EOPNOTSUPP and qp_ctx_table returns NULL.
	 */
	bool tx_only;
	const char *pin_dir;	/* NULL: blue_pin_dir(ifname) (include/blue/pins.h) */
};

/*
 * Open the AF_XDP HAL on a netdev where `bluectl attach` has run: it finds the pinned
 * maps in blue_pin_dir(ifname). Tries zero-copy first, then copy mode.
 * Returns NULL with errno set, after printing what failed to stderr.
 *
 * Socket slots (XSKMAP indexes, from @queue_id's range) are handed out lowest free
 * first. Closing a socket
 * removes it from the XSKMAP and unbinds every QPN still steered to it.
 */
struct blue_hal *blue_hal_afxdp_open(const struct blue_afxdp_config *cfg);

/* Whether the last open got zero-copy (true) or fell back to copy mode. */
bool blue_hal_afxdp_zerocopy(const struct blue_hal *hal);

/*
 * An in-process loopback pair: frames sent on one HAL arrive on the other, steered by
 * the destination QPN through the peer's flow table exactly as the XDP program would
 * (a multicast frame by its group, through the peer's own group table).
 * Delivery copies the frame into one of the receiver's own frames (as AF_XDP copy mode
 * does) during the sender's tx_flush; the sender's frame is then free again. Frames
 * that are not Eth/IPv4/UDP:4791/BTH, or whose QPN does not steer, are dropped and
 * counted under the receiver's blue_stat_reason (blue_hal_loopback_stat), since there
 * is no kernel stack to pass them to.
 *
 * Unlike the AF_XDP HAL, the two ends of a pair may be driven from two threads: one
 * mutex per pair serialises them, and rx_burst sleeps outside it.
 */
struct blue_loopback_config {
	uint32_t frame_count;	/* per end; power of two; 0 = default 1024 */
	uint32_t frame_size;	/* 2048 or 4096; 0 = default 2048 */
	uint32_t ring_size;	/* RX/TX descriptors per socket; power of two; 0 = 256 */
};

int blue_hal_loopback_pair(struct blue_hal **a, struct blue_hal **b);
/* The same with explicit sizes (@cfg NULL: defaults). Returns 0 or -errno. */
int blue_hal_loopback_pair_cfg(struct blue_hal **a, struct blue_hal **b,
			       const struct blue_loopback_config *cfg);

/*
 * Fault injection. A filter set on one end sees every frame that end sends, in order,
 * at tx_flush, with @seq counting the frames offered to it from 0 (reset by every
 * set_filter call; deterministic: no clock, no randomness). It returns what happens to the frame:
 *   PASS  deliver it;
 *   DROP  lose it (counted in blue_hal_loopback_stat(sender, BLUE_STAT__MAX));
 *   DUP   deliver it twice;
 *   HOLD  keep it back and deliver it right after the next frame this end delivers
 *         (so it arrives out of order), or at blue_hal_loopback_release_held().
 * The filter must not call back into the HAL. @fn NULL removes the filter.
 */
enum blue_lb_verdict {
	BLUE_LB_PASS = 0,
	BLUE_LB_DROP,
	BLUE_LB_DUP,
	BLUE_LB_HOLD,
};

typedef enum blue_lb_verdict (*blue_lb_filter_fn)(void *arg, const struct blue_frame *f,
						  uint64_t seq);

void blue_hal_loopback_set_filter(struct blue_hal *hal, blue_lb_filter_fn fn, void *arg);
/* Deliver every held frame now, oldest first. Returns how many were held. */
unsigned int blue_hal_loopback_release_held(struct blue_hal *hal);

/*
 * Per-reason counters of a loopback end, as the XDP stats map counts them: frames this
 * end received (REDIRECT) or dropped, by reason. @r == BLUE_STAT__MAX reads the frames
 * this end's filter dropped on send.
 */
uint64_t blue_hal_loopback_stat(struct blue_hal *hal, enum blue_stat_reason r);

static inline int blue_hal_sock_open(struct blue_hal *h, struct blue_hal_sock **s)
{ return h->ops->sock_open(h, s); }
static inline void blue_hal_sock_close(struct blue_hal_sock *s)
{ s->hal->ops->sock_close(s); }
static inline int blue_hal_tx_alloc(struct blue_hal *h, struct blue_frame *f, unsigned int n)
{ return h->ops->tx_alloc(h, f, n); }
static inline void blue_hal_tx_free(struct blue_hal *h, const struct blue_frame *f, unsigned int n)
{ h->ops->tx_free(h, f, n); }
static inline int blue_hal_tx_submit(struct blue_hal_sock *s, const struct blue_frame *f,
				     unsigned int n)
{ return s->hal->ops->tx_submit(s, f, n); }
static inline int blue_hal_tx_flush(struct blue_hal_sock *s)
{ return s->hal->ops->tx_flush(s); }
static inline int blue_hal_rx_burst(struct blue_hal_sock *s, struct blue_frame *f,
				    unsigned int max, int timeout_ms)
{ return s->hal->ops->rx_burst(s, f, max, timeout_ms); }
static inline void blue_hal_rx_release(struct blue_hal *h, const struct blue_frame *f,
				       unsigned int n)
{ h->ops->rx_release(h, f, n); }
static inline int blue_hal_flow_bind(struct blue_hal_sock *s, uint32_t qpn)
{ return s->hal->ops->flow_bind(s, qpn); }
static inline int blue_hal_flow_unbind(struct blue_hal *h, uint32_t qpn)
{ return h->ops->flow_unbind(h, qpn); }
static inline int blue_hal_mcast_bind(struct blue_hal_sock *s, const uint8_t gid[16],
				      uint32_t nqp)
{ return s->hal->ops->mcast_bind(s, gid, nqp); }
static inline int blue_hal_mcast_unbind(struct blue_hal *h, const uint8_t gid[16])
{ return h->ops->mcast_unbind(h, gid); }
static inline struct blue_qp_ctx *blue_hal_qp_ctx_table(struct blue_hal *h)
{ return h->ops->qp_ctx_table(h); }
static inline int blue_hal_sock_fd(struct blue_hal_sock *s)
{ return s->hal->ops->sock_fd(s); }
static inline void blue_hal_get_stats(struct blue_hal *h, struct blue_hal_stats *st)
{ h->ops->get_stats(h, st); }
static inline void blue_hal_destroy(struct blue_hal *h)
{ if (h) h->ops->destroy(h); }

#endif /* BLUE_HAL_H */
