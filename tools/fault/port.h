/* SPDX-License-Identifier: MIT */
/*
 * One side of tools/blue_fault's AF_XDP forwarder: a netdev of the middle namespace with
 * our own XDP program (bpf/fault_fwd.bpf.c) attached natively, one AF_XDP socket on
 * queue 0 in copy mode (veth has no zero-copy), and its UMEM.
 *
 * Each port has its own UMEM, and a forwarded frame is copied from the ingress port's
 * RX frame into an egress TX frame. A UMEM shared across the two netdevs would save
 * that copy, but at veth rates (~1 Mpps copy mode, ARCHITECTURE.md "facts") a 1.5 KB
 * memcpy is not the bottleneck, and separate pools keep each port's frame accounting
 * trivially right while the engine holds copies for reordering and delay.
 *
 * libxdp is used for the rings only: its own XDP program and dispatcher are inhibited
 * (the dispatcher fails on these machines) and we attach with bpf_xdp_attach().
 * Header-only, one user (tools/blue_fault.c).
 */
#ifndef BLUE_TOOLS_FAULT_PORT_H
#define BLUE_TOOLS_FAULT_PORT_H

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <xdp/xsk.h>

#include "afxdp_hal/umem.h"
#include "bpf/fault_fwd.skel.h"

/*
 * Deep RX rings: the endpoints busy-poll on a 2-core machine, so the forwarder can be
 * off-CPU for a while under a go-back-N resend burst, and what its RX ring cannot hold
 * is loss nobody chose (counted as sock_drop). Half the frames feed the fill ring.
 */
#define FPORT_FRAMES		8192u
#define FPORT_FRAME_SIZE	4096u
#define FPORT_RX_RING		4096u
#define FPORT_TX_RING		2048u
#define FPORT_BUSY_RETRY_MS	2000
#define FPORT_TX_KICKS		(FPORT_TX_RING / 32u + 4u)	/* copy mode: 32 frames a sendto */

struct fport {
	char ifname[IF_NAMESIZE];
	int ifindex;
	struct fault_fwd *skel;
	bool attached;
	struct blue_umem umem;
	struct xsk_socket *xsk;
	int fd;
	struct xsk_ring_cons rx;
	struct xsk_ring_prod tx;
	uint32_t tx_queued;		/* descriptors put on the TX ring since the last kick */
	uint64_t kicks;
	uint64_t tx_no_frame;		/* no free UMEM frame or TX slot */
};

static inline void fport_err(const struct fport *p, const char *what, int err)
{
	fprintf(stderr, "blue_fault: %s: %s: %s\n", p->ifname, what,
		strerror(err < 0 ? -err : err));
}

/* Load our XDP program and attach it natively; refuse to replace another program. */
static inline int fport_attach(struct fport *p)
{
	int err;

	p->skel = fault_fwd__open_and_load();
	if (!p->skel) {
		err = -errno;
		fport_err(p, "loading bpf/fault_fwd.bpf.o", err);
		return err;
	}
	err = bpf_xdp_attach(p->ifindex, bpf_program__fd(p->skel->progs.fault_fwd),
			     XDP_FLAGS_DRV_MODE | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	if (err) {
		fport_err(p, err == -EBUSY || err == -EEXIST ?
			  "attaching XDP: another program is attached" : "attaching XDP", err);
		return err;
	}
	p->attached = true;
	return 0;
}

/* The socket, with the EBUSY retry a just-closed socket's deferred release needs. */
static inline int fport_socket(struct fport *p)
{
	struct xsk_socket_config cfg = {
		.rx_size = FPORT_RX_RING,
		.tx_size = FPORT_TX_RING,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.xdp_flags = 0,
		.bind_flags = XDP_COPY,
	};
	int err, waited = 0;
	__u32 key = 0;

	for (;;) {
		err = blue_umem_register(&p->umem, FPORT_RX_RING, FPORT_TX_RING,
					 FPORT_RX_RING);
		if (err) {
			fport_err(p, "UMEM registration", err);
			return err;
		}
		err = xsk_socket__create(&p->xsk, p->ifname, 0, p->umem.xumem, &p->rx, &p->tx,
					 &cfg);
		if (!err)
			break;
		p->xsk = NULL;
		blue_umem_unregister(&p->umem);
		if (err != -EBUSY || waited >= FPORT_BUSY_RETRY_MS) {
			fport_err(p, "AF_XDP socket (copy mode, queue 0)", err);
			return err;
		}
		usleep(20000);
		waited += 20;
	}
	p->fd = xsk_socket__fd(p->xsk);
	if (bpf_map_update_elem(bpf_map__fd(p->skel->maps.fault_xsks), &key, &p->fd, 0)) {
		err = -errno;
		fport_err(p, "XSKMAP insert", err);
		return err;
	}
	blue_umem_fill_topup(&p->umem);
	return 0;
}

static inline void fport_close(struct fport *p)
{
	if (p->attached) {
		LIBBPF_OPTS(bpf_xdp_attach_opts, o,
			    .old_prog_fd = bpf_program__fd(p->skel->progs.fault_fwd));

		/* only if it is still ours */
		bpf_xdp_detach(p->ifindex, XDP_FLAGS_DRV_MODE | XDP_FLAGS_REPLACE, &o);
		p->attached = false;
	}
	if (p->xsk)
		xsk_socket__delete(p->xsk);
	p->xsk = NULL;
	blue_umem_fini(&p->umem);
	fault_fwd__destroy(p->skel);
	p->skel = NULL;
}

static inline int fport_open(struct fport *p, const char *ifname)
{
	int err;

	memset(p, 0, sizeof(*p));
	snprintf(p->ifname, sizeof(p->ifname), "%s", ifname);
	p->fd = -1;
	p->ifindex = (int)if_nametoindex(ifname);
	if (!p->ifindex) {
		err = -errno;
		fport_err(p, "no such netdev in this namespace", err);
		return err;
	}
	err = blue_umem_init(&p->umem, FPORT_FRAMES, FPORT_FRAME_SIZE);
	if (err) {
		fport_err(p, "UMEM area", err);
		return err;
	}
	err = fport_attach(p);
	if (!err)
		err = fport_socket(p);
	if (err)
		fport_close(p);
	return err;
}

static inline void fport_kick(struct fport *p);

/*
 * Put a copy of one frame on the TX ring; the doorbell waits for fport_kick(), unless
 * the ring or the pool ran out (a burst of delayed frames falling due at once), when
 * it is rung here first. 0 or -ENOBUFS.
 */
static inline int fport_tx(struct fport *p, const uint8_t *data, uint32_t len)
{
	uint64_t addr;
	uint32_t idx;
	struct xdp_desc *d;

	if (len > FPORT_FRAME_SIZE)
		return -ENOBUFS;
	if (!blue_fpool_avail(&p->umem.pool) || !xsk_prod_nb_free(&p->tx, 1))
		fport_kick(p);
	if (!blue_fpool_get(&p->umem.pool, &addr, 1)) {
		p->tx_no_frame++;
		return -ENOBUFS;
	}
	if (xsk_ring_prod__reserve(&p->tx, 1, &idx) != 1) {
		blue_fpool_put(&p->umem.pool, addr);
		p->tx_no_frame++;
		return -ENOBUFS;
	}
	memcpy(blue_umem_data(&p->umem, addr), data, len);
	d = xsk_ring_prod__tx_desc(&p->tx, idx);
	d->addr = addr;
	d->len = len;
	d->options = 0;
	xsk_ring_prod__submit(&p->tx, 1);
	p->tx_queued++;
	return 0;
}

/*
 * The doorbell. In copy mode each sendto() transmits at most 32 descriptors and returns
 * EAGAIN while more wait (net/xdp/xsk.c), so kick until the ring is empty, a bounded
 * number of times, then take the completions back.
 */
static inline void fport_kick(struct fport *p)
{
	unsigned int i;

	for (i = 0; p->tx_queued && i < FPORT_TX_KICKS; i++) {
		p->kicks++;
		if (sendto(p->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 &&
		    errno != EAGAIN && errno != EBUSY && errno != ENOBUFS)
			break;
		if (*p->tx.producer == __atomic_load_n(p->tx.consumer, __ATOMIC_ACQUIRE))
			p->tx_queued = 0;
	}
	blue_umem_reap(&p->umem);
}

/*
 * Receive up to @max frames and hand each to @fn (which must not keep the pointer),
 * then return the frames to the fill ring. Returns how many.
 */
static inline unsigned int fport_rx(struct fport *p, unsigned int max,
				    void (*fn)(void *arg, uint8_t *data, uint32_t len), void *arg)
{
	uint32_t idx = 0, n, i;

	n = xsk_ring_cons__peek(&p->rx, max, &idx);
	for (i = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&p->rx, idx + i);

		fn(arg, blue_umem_data(&p->umem, d->addr), d->len);
		blue_fpool_put(&p->umem.pool, d->addr);
	}
	if (n) {
		xsk_ring_cons__release(&p->rx, n);
		p->umem.in_fill -= n < p->umem.in_fill ? n : p->umem.in_fill;
		blue_umem_fill_topup(&p->umem);
	}
	return n;
}

/* Frames the kernel dropped at this socket (RX ring full or no fill frame). */
static inline uint64_t fport_rx_dropped(const struct fport *p)
{
	struct xdp_statistics st;
	socklen_t len = sizeof(st);

	if (!p->xsk || getsockopt(p->fd, SOL_XDP, XDP_STATISTICS, &st, &len))
		return 0;
	return st.rx_dropped + st.rx_ring_full;
}

#endif /* BLUE_TOOLS_FAULT_PORT_H */
