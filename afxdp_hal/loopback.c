// SPDX-License-Identifier: MIT
/*
 * The in-process loopback HAL: two ends with heap "UMEM" frames and software rings.
 * tx_flush on one end delivers each frame to the other end, steered by its BTH
 * destination QPN through the receiving end's own QP-context table with the XDP
 * program's rules (lb_steer.c). It exists so that the transport can be unit-tested,
 * with deterministic loss, duplication and reordering, without a netdev.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include "afxdp_hal/hal.h"
#include "afxdp_hal/flow.h"
#include "afxdp_hal/lb_steer.h"
#include "afxdp_hal/umem.h"

#define LB_DEF_FRAMES		1024u
#define LB_DEF_FRAME_SIZE	2048u
#define LB_DEF_RING		256u
#define LB_MAX_HELD		64u

struct lb_desc {
	uint64_t addr;
	uint32_t len;
};

/* A single-producer single-consumer ring; the pair mutex serialises both sides. */
struct lb_ring {
	struct lb_desc *d;
	uint32_t mask;
	uint32_t prod;
	uint32_t cons;
};

struct lb_sock {
	struct blue_hal_sock base;
	struct lb_hal *lb;
	bool open;
	int efd;		/* readable while rx is not empty */
	struct lb_ring rx;
	struct lb_ring tx;	/* submitted, not yet flushed */
};

struct lb_pair;

struct lb_hal {
	struct blue_hal base;
	struct lb_pair *pair;
	bool alive;
	uint32_t ring_size;
	struct blue_umem umem;
	struct blue_qp_ctx *ctx;	/* BLUE_MAX_QP entries, like the BPF map */
	struct blue_lb_group groups[BLUE_MAX_MCAST_GRP];	/* the multicast map's */
	struct lb_sock socks[BLUE_XSK_PER_QUEUE];	/* queue 0 only */
	struct blue_hal_stats st;
	uint64_t reason[BLUE_STAT__MAX + 1];	/* [BLUE_STAT__MAX]: filter drops */
	blue_lb_filter_fn filter;
	void *filter_arg;
	uint64_t filter_seq;
	struct lb_desc held[LB_MAX_HELD];
	unsigned int nheld;
};

struct lb_pair {
	pthread_mutex_t lock;
	struct lb_hal end[2];
};

static const struct blue_hal_ops lb_ops;

static struct lb_hal *to_lb(struct blue_hal *h)
{
	return (struct lb_hal *)h;
}

static struct lb_sock *to_lbs(struct blue_hal_sock *s)
{
	return (struct lb_sock *)s;
}

static struct lb_hal *peer_of(struct lb_hal *lb)
{
	struct lb_hal *p = &lb->pair->end[lb == &lb->pair->end[0] ? 1 : 0];

	return p->alive ? p : NULL;
}

static void lock(struct lb_hal *lb)
{
	pthread_mutex_lock(&lb->pair->lock);
}

static void unlock(struct lb_hal *lb)
{
	pthread_mutex_unlock(&lb->pair->lock);
}

static uint32_t ring_count(const struct lb_ring *r)
{
	return r->prod - r->cons;
}

static uint32_t ring_room(const struct lb_ring *r)
{
	return r->mask + 1 - ring_count(r);
}

static void ring_push(struct lb_ring *r, uint64_t addr, uint32_t len)
{
	r->d[r->prod++ & r->mask] = (struct lb_desc){ .addr = addr, .len = len };
}

static struct lb_desc ring_pop(struct lb_ring *r)
{
	return r->d[r->cons++ & r->mask];
}

static void put_frame(struct lb_hal *lb, uint64_t addr)
{
	blue_fpool_put(&lb->umem.pool, blue_umem_frame_base(&lb->umem, addr));
}

static void efd_signal(int efd)
{
	uint64_t one = 1;

	/* Cannot fail short of a counter overflow at 2^64 - 1 signals. */
	if (write(efd, &one, sizeof(one)) < 0)
		return;
}

static void efd_drain(int efd)
{
	uint64_t v;

	if (read(efd, &v, sizeof(v)) < 0)
		return;	/* EAGAIN: nothing was signalled */
}

/*
 * Hand one of @src's frames to the peer, as the XDP program and AF_XDP copy mode would:
 * steer, count the verdict, copy into a receiver frame, post it on the RX ring. The
 * source frame stays with the caller.
 */
static void deliver(struct lb_hal *src, const struct lb_desc *d)
{
	struct lb_hal *dst = peer_of(src);
	const uint8_t *data = blue_umem_data(&src->umem, d->addr);
	struct lb_sock *s;
	uint32_t slot, qpn;
	uint64_t addr;
	int reason;

	if (!dst)
		return;	/* the wire is cut: the other end is gone */
	reason = blue_lb_steer(dst->ctx, dst->groups, data, d->len, &qpn, &slot);
	if (reason == BLUE_STAT_REDIRECT && !dst->socks[slot].open)
		reason = BLUE_STAT_DROP_NO_SOCKET;
	dst->reason[reason]++;
	if (reason != BLUE_STAT_REDIRECT)
		return;
	if (qpn)	/* a multicast frame is for a group, no one QP */
		dst->ctx[blue_qpn_slot(qpn)].xdp_rx_pkts++;
	s = &dst->socks[slot];
	if (!ring_room(&s->rx)) {
		dst->st.rx_dropped++;
		return;
	}
	if (!blue_fpool_get(&dst->umem.pool, &addr, 1)) {
		dst->st.fill_empty++;
		dst->st.rx_dropped++;
		return;
	}
	memcpy(blue_umem_data(&dst->umem, addr), data, d->len);
	if (!ring_count(&s->rx))
		efd_signal(s->efd);
	ring_push(&s->rx, addr, d->len);
}

static void release_held(struct lb_hal *lb)
{
	unsigned int i;

	for (i = 0; i < lb->nheld; i++) {
		deliver(lb, &lb->held[i]);
		put_frame(lb, lb->held[i].addr);
	}
	lb->nheld = 0;
}

/* One sent frame through the filter; the source frame is freed unless held. */
static void send_one(struct lb_hal *lb, const struct lb_desc *d)
{
	enum blue_lb_verdict v = BLUE_LB_PASS;

	if (lb->filter) {
		struct blue_frame f = {
			.addr = d->addr,
			.data = blue_umem_data(&lb->umem, d->addr),
			.len = d->len,
		};

		v = lb->filter(lb->filter_arg, &f, lb->filter_seq++);
	}
	switch (v) {
	case BLUE_LB_DROP:
		lb->reason[BLUE_STAT__MAX]++;
		put_frame(lb, d->addr);
		return;
	case BLUE_LB_HOLD:
		if (lb->nheld < LB_MAX_HELD) {
			lb->held[lb->nheld++] = *d;
			return;
		}
		break;	/* too many held: let this one through */
	case BLUE_LB_DUP:
		deliver(lb, d);
		break;
	case BLUE_LB_PASS:
	default:
		break;
	}
	deliver(lb, d);
	put_frame(lb, d->addr);
	release_held(lb);
}

static int lb_sock_open(struct blue_hal *hal, struct blue_hal_sock **out)
{
	struct lb_hal *lb = to_lb(hal);
	struct lb_sock *s = NULL;
	uint32_t i;
	int err = 0;

	lock(lb);
	for (i = 0; i < BLUE_XSK_PER_QUEUE && !s; i++)
		if (!lb->socks[i].open)
			s = &lb->socks[i];
	if (!s) {
		err = -EMFILE;
		goto out;
	}
	memset(s, 0, sizeof(*s));
	s->base.hal = hal;
	s->base.slot = (uint32_t)(s - lb->socks);
	s->lb = lb;
	s->rx.mask = s->tx.mask = lb->ring_size - 1;
	s->rx.d = calloc(lb->ring_size, sizeof(*s->rx.d));
	s->tx.d = calloc(lb->ring_size, sizeof(*s->tx.d));
	s->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!s->rx.d || !s->tx.d || s->efd < 0) {
		err = s->efd < 0 ? -errno : -ENOMEM;
		free(s->rx.d);
		free(s->tx.d);
		if (s->efd >= 0)
			close(s->efd);
		goto out;
	}
	s->open = true;
	*out = &s->base;
out:
	unlock(lb);
	return err;
}

/* Called with the lock held. Frames still on the rings go back to the pool. */
static void sock_teardown(struct lb_sock *s)
{
	struct lb_hal *lb = s->lb;
	unsigned int i;

	blue_flow_unbind_slot(lb->ctx, s->base.slot);
	for (i = 0; i < BLUE_MAX_MCAST_GRP; i++)
		if (lb->groups[i].xsk_slot == s->base.slot)
			lb->groups[i].used = false;
	while (ring_count(&s->rx))
		put_frame(lb, ring_pop(&s->rx).addr);
	while (ring_count(&s->tx))
		put_frame(lb, ring_pop(&s->tx).addr);
	free(s->rx.d);
	free(s->tx.d);
	close(s->efd);
	s->open = false;
}

static void lb_sock_close(struct blue_hal_sock *bs)
{
	struct lb_sock *s = to_lbs(bs);
	struct lb_hal *lb = s->lb;

	lock(lb);
	sock_teardown(s);
	unlock(lb);
}

static int lb_tx_alloc(struct blue_hal *hal, struct blue_frame *f, unsigned int n)
{
	struct lb_hal *lb = to_lb(hal);
	uint64_t addr;
	unsigned int i;

	lock(lb);
	for (i = 0; i < n && blue_fpool_get(&lb->umem.pool, &addr, 1); i++) {
		f[i].addr = addr + hal->headroom;
		f[i].data = blue_umem_data(&lb->umem, f[i].addr);
		f[i].len = 0;
	}
	unlock(lb);
	return (int)i;
}

static void lb_tx_free(struct blue_hal *hal, const struct blue_frame *f, unsigned int n)
{
	struct lb_hal *lb = to_lb(hal);
	unsigned int i;

	lock(lb);
	for (i = 0; i < n; i++)
		put_frame(lb, f[i].addr);
	unlock(lb);
}

static int lb_tx_submit(struct blue_hal_sock *bs, const struct blue_frame *f, unsigned int n)
{
	struct lb_sock *s = to_lbs(bs);
	struct lb_hal *lb = s->lb;
	unsigned int i, k;

	lock(lb);
	k = ring_room(&s->tx);
	if (k < n)
		lb->st.tx_ring_full++;
	else
		k = n;
	/* Refuse what the kernel would count as tx_invalid_descs, before queuing any. */
	for (i = 0; i < k; i++) {
		uint64_t off = f[i].addr - blue_umem_frame_base(&lb->umem, f[i].addr);

		if (f[i].addr >= lb->umem.size || f[i].len == 0 ||
		    off + f[i].len > lb->umem.frame_size) {
			unlock(lb);
			return -EINVAL;
		}
	}
	for (i = 0; i < k; i++)
		ring_push(&s->tx, f[i].addr, f[i].len);
	lb->st.tx_frames += k;
	unlock(lb);
	return (int)k;
}

static int lb_tx_flush(struct blue_hal_sock *bs)
{
	struct lb_sock *s = to_lbs(bs);
	struct lb_hal *lb = s->lb;

	lock(lb);
	if (ring_count(&s->tx))
		lb->st.tx_kicks++;
	while (ring_count(&s->tx)) {
		struct lb_desc d = ring_pop(&s->tx);

		send_one(lb, &d);
	}
	unlock(lb);
	return 0;
}

/* Called with the lock held. */
static unsigned int rx_take(struct lb_sock *s, struct blue_frame *f, unsigned int max)
{
	struct lb_hal *lb = s->lb;
	unsigned int n = 0;

	while (n < max && ring_count(&s->rx)) {
		struct lb_desc d = ring_pop(&s->rx);

		f[n].addr = d.addr;
		f[n].data = blue_umem_data(&lb->umem, d.addr);
		f[n].len = d.len;
		n++;
	}
	if (n && !ring_count(&s->rx))
		efd_drain(s->efd);
	lb->st.rx_frames += n;
	return n;
}

static int lb_rx_burst(struct blue_hal_sock *bs, struct blue_frame *f, unsigned int max,
		       int timeout_ms)
{
	struct lb_sock *s = to_lbs(bs);
	struct lb_hal *lb = s->lb;
	struct pollfd pfd = { .fd = s->efd, .events = POLLIN };
	unsigned int n;

	lock(lb);
	n = rx_take(s, f, max);
	if (n || !timeout_ms || !max) {
		unlock(lb);
		return (int)n;
	}
	lb->st.rx_wakeups++;
	unlock(lb);
	/* The peer may be another thread: sleep outside the lock. */
	if (poll(&pfd, 1, timeout_ms) < 0 && errno != EINTR)
		return -errno;
	lock(lb);
	n = rx_take(s, f, max);
	unlock(lb);
	return (int)n;
}

static void lb_rx_release(struct blue_hal *hal, const struct blue_frame *f, unsigned int n)
{
	struct lb_hal *lb = to_lb(hal);
	unsigned int i;

	lock(lb);
	for (i = 0; i < n; i++)
		put_frame(lb, f[i].addr);
	unlock(lb);
}

static int lb_flow_bind(struct blue_hal_sock *bs, uint32_t qpn)
{
	struct lb_hal *lb = to_lbs(bs)->lb;
	int err;

	lock(lb);
	err = blue_flow_bind(lb->ctx, qpn, bs->slot);
	unlock(lb);
	return err;
}

static int lb_flow_unbind(struct blue_hal *hal, uint32_t qpn)
{
	struct lb_hal *lb = to_lb(hal);
	int err;

	lock(lb);
	err = blue_flow_unbind(lb->ctx, qpn);
	unlock(lb);
	return err;
}

/* The group's entry in @lb's table, or (@make) a free one; NULL: none. */
static struct blue_lb_group *lb_group(struct lb_hal *lb, const uint8_t gid[16], bool make)
{
	struct blue_lb_group *free_g = NULL;
	unsigned int i;

	for (i = 0; i < BLUE_MAX_MCAST_GRP; i++) {
		if (lb->groups[i].used && !memcmp(lb->groups[i].gid, gid, 16))
			return &lb->groups[i];
		if (!lb->groups[i].used && !free_g)
			free_g = &lb->groups[i];
	}
	return make ? free_g : NULL;
}

static int lb_mcast_bind(struct blue_hal_sock *bs, const uint8_t gid[16], uint32_t nqp)
{
	struct lb_hal *lb = to_lbs(bs)->lb;
	struct blue_lb_group *g;
	int err = 0;

	(void)nqp;
	if (!blue_gid_is_mcast(gid))
		return -EINVAL;
	lock(lb);
	g = lb_group(lb, gid, true);
	if (g) {
		memcpy(g->gid, gid, 16);
		g->xsk_slot = bs->slot;
		g->used = true;
	} else {
		err = -ENOSPC;
	}
	unlock(lb);
	return err;
}

static int lb_mcast_unbind(struct blue_hal *hal, const uint8_t gid[16])
{
	struct lb_hal *lb = to_lb(hal);
	struct blue_lb_group *g;

	lock(lb);
	g = lb_group(lb, gid, false);
	if (g)
		g->used = false;
	unlock(lb);
	return g ? 0 : -ENOENT;
}

static struct blue_qp_ctx *lb_qp_ctx_table(struct blue_hal *hal)
{
	return to_lb(hal)->ctx;
}

static int lb_sock_fd(struct blue_hal_sock *bs)
{
	return to_lbs(bs)->efd;
}

static void lb_get_stats(struct blue_hal *hal, struct blue_hal_stats *st)
{
	struct lb_hal *lb = to_lb(hal);

	lock(lb);
	*st = lb->st;
	st->frames_total = lb->umem.frame_count;
	st->frames_free = blue_fpool_avail(&lb->umem.pool);
	st->frame_errors = lb->umem.pool.bad_frees;
	unlock(lb);
}

static void lb_destroy(struct blue_hal *hal)
{
	struct lb_hal *lb = to_lb(hal);
	struct lb_pair *pair = lb->pair;
	bool last;
	uint32_t i;

	lock(lb);
	for (i = 0; i < BLUE_XSK_PER_QUEUE; i++)
		if (lb->socks[i].open)
			sock_teardown(&lb->socks[i]);
	free(lb->ctx);
	blue_umem_fini(&lb->umem);
	lb->ctx = NULL;
	lb->nheld = 0;
	lb->filter = NULL;
	lb->alive = false;
	last = !pair->end[0].alive && !pair->end[1].alive;
	unlock(lb);
	if (last) {
		pthread_mutex_destroy(&pair->lock);
		free(pair);
	}
}

static const struct blue_hal_ops lb_ops = {
	.name = "loopback",
	.sock_open = lb_sock_open,
	.sock_close = lb_sock_close,
	.tx_alloc = lb_tx_alloc,
	.tx_free = lb_tx_free,
	.tx_submit = lb_tx_submit,
	.tx_flush = lb_tx_flush,
	.rx_burst = lb_rx_burst,
	.rx_release = lb_rx_release,
	.flow_bind = lb_flow_bind,
	.flow_unbind = lb_flow_unbind,
	.mcast_bind = lb_mcast_bind,
	.mcast_unbind = lb_mcast_unbind,
	.qp_ctx_table = lb_qp_ctx_table,
	.sock_fd = lb_sock_fd,
	.get_stats = lb_get_stats,
	.destroy = lb_destroy,
};

static int end_init(struct lb_pair *pair, struct lb_hal *lb,
		    const struct blue_loopback_config *cfg)
{
	int err;

	lb->base.ops = &lb_ops;
	lb->base.frame_size = cfg->frame_size;
	lb->base.headroom = 0;
	lb->base.max_pkt = cfg->frame_size;
	lb->pair = pair;
	lb->ring_size = cfg->ring_size;
	lb->ctx = calloc(BLUE_MAX_QP, sizeof(*lb->ctx));
	if (!lb->ctx)
		return -ENOMEM;
	err = blue_umem_init(&lb->umem, cfg->frame_count, cfg->frame_size);
	if (err) {
		free(lb->ctx);
		lb->ctx = NULL;
		return err;
	}
	lb->alive = true;
	return 0;
}

int blue_hal_loopback_pair_cfg(struct blue_hal **a, struct blue_hal **b,
			       const struct blue_loopback_config *ucfg)
{
	struct blue_loopback_config cfg = {
		.frame_count = LB_DEF_FRAMES,
		.frame_size = LB_DEF_FRAME_SIZE,
		.ring_size = LB_DEF_RING,
	};
	struct lb_pair *pair;
	int err;

	if (ucfg) {
		if (ucfg->frame_count)
			cfg.frame_count = ucfg->frame_count;
		if (ucfg->frame_size)
			cfg.frame_size = ucfg->frame_size;
		if (ucfg->ring_size)
			cfg.ring_size = ucfg->ring_size;
	}
	if (cfg.ring_size & (cfg.ring_size - 1))
		return -EINVAL;
	pair = calloc(1, sizeof(*pair));
	if (!pair)
		return -ENOMEM;
	pthread_mutex_init(&pair->lock, NULL);
	err = end_init(pair, &pair->end[0], &cfg);
	if (!err) {
		err = end_init(pair, &pair->end[1], &cfg);
		if (err) {
			free(pair->end[0].ctx);
			blue_umem_fini(&pair->end[0].umem);
		}
	}
	if (err) {
		pthread_mutex_destroy(&pair->lock);
		free(pair);
		return err;
	}
	*a = &pair->end[0].base;
	*b = &pair->end[1].base;
	return 0;
}

int blue_hal_loopback_pair(struct blue_hal **a, struct blue_hal **b)
{
	return blue_hal_loopback_pair_cfg(a, b, NULL);
}

void blue_hal_loopback_set_filter(struct blue_hal *hal, blue_lb_filter_fn fn, void *arg)
{
	struct lb_hal *lb = to_lb(hal);

	if (!hal || hal->ops != &lb_ops)
		return;
	lock(lb);
	lb->filter = fn;
	lb->filter_arg = arg;
	lb->filter_seq = 0;
	unlock(lb);
}

unsigned int blue_hal_loopback_release_held(struct blue_hal *hal)
{
	struct lb_hal *lb = to_lb(hal);
	unsigned int n;

	if (!hal || hal->ops != &lb_ops)
		return 0;
	lock(lb);
	n = lb->nheld;
	release_held(lb);
	unlock(lb);
	return n;
}

uint64_t blue_hal_loopback_stat(struct blue_hal *hal, enum blue_stat_reason r)
{
	struct lb_hal *lb = to_lb(hal);
	uint64_t v;

	if (!hal || hal->ops != &lb_ops || (unsigned int)r > BLUE_STAT__MAX)
		return 0;
	lock(lb);
	v = lb->reason[r];
	unlock(lb);
	return v;
}
