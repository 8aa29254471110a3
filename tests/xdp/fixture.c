// SPDX-License-Identifier: MIT
/* The XDP test fixture; see fixture.h. */
#include "fixture.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "blue/mcast.h"
#include "blue/qp_ctx.h"
#include "blue/wire.h"
#include "bpf/blue_xdp.skel.h"

/* Private namespace: these names cannot collide with anyone else's. */
static const char *const fix_ifname[FIX_NSOCK] = { "bxdp0", "bxdp1" };

static int quiet_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int sock_open(struct fix_sock *s, const char *ifname, char *why, size_t why_len)
{
	const struct xsk_umem_config ucfg = {
		.fill_size = FIX_FRAMES,
		.comp_size = FIX_FRAMES,
		.frame_size = FIX_FRAME_SIZE,
	};
	/* No program load: the fixture owns the XSKMAP (ARCHITECTURE.md, facts). */
	const struct xsk_socket_config scfg = {
		.rx_size = FIX_FRAMES,
		.tx_size = FIX_FRAMES,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = XDP_COPY,	/* veth has no zero-copy */
	};
	size_t len = (size_t)FIX_FRAMES * FIX_FRAME_SIZE;
	struct xsk_ring_prod tx;
	__u32 idx;
	int err;

	s->ifindex = if_nametoindex(ifname);
	s->area = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->area == MAP_FAILED) {
		s->area = NULL;
		snprintf(why, why_len, "mmap UMEM: %s", strerror(errno));
		return -errno;
	}
	err = xsk_umem__create(&s->umem, s->area, len, &s->fill, &s->comp, &ucfg);
	if (err) {
		snprintf(why, why_len, "xsk_umem__create: %s", strerror(-err));
		return err;
	}
	err = xsk_socket__create(&s->xsk, ifname, 0, s->umem, &s->rx, &tx, &scfg);
	if (err) {
		snprintf(why, why_len, "xsk_socket__create on %s queue 0: %s", ifname,
			 strerror(-err));
		return err;
	}
	if (xsk_ring_prod__reserve(&s->fill, FIX_FRAMES, &idx) != FIX_FRAMES) {
		snprintf(why, why_len, "fill ring of %s refused %u frames", ifname, FIX_FRAMES);
		return -ENOSPC;
	}
	for (__u32 i = 0; i < FIX_FRAMES; i++)
		*xsk_ring_prod__fill_addr(&s->fill, idx + i) = (__u64)i * FIX_FRAME_SIZE;
	xsk_ring_prod__submit(&s->fill, FIX_FRAMES);
	return 0;
}

static void sock_close(struct fix_sock *s)
{
	if (s->xsk)
		xsk_socket__delete(s->xsk);
	if (s->umem)
		xsk_umem__delete(s->umem);
	if (s->area)
		munmap(s->area, (size_t)FIX_FRAMES * FIX_FRAME_SIZE);
	memset(s, 0, sizeof(*s));
}

enum fix_status fix_setup(struct xdp_fix *f, char *why, size_t why_len)
{
	char cmd[256];
	int err;

	memset(f, 0, sizeof(*f));
	if (geteuid() != 0) {
		snprintf(why, why_len, "needs root (BPF, netns, AF_XDP)");
		return FIX_SKIP;
	}
	if (unshare(CLONE_NEWNET)) {
		snprintf(why, why_len, "unshare(CLONE_NEWNET): %s", strerror(errno));
		return FIX_SKIP;
	}
	libbpf_set_print(quiet_libbpf);
	if (libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_XDP, NULL) != 1) {
		snprintf(why, why_len, "kernel cannot load XDP programs (BPF unavailable)");
		return FIX_SKIP;
	}

	/* Past the probe, the kernel can run BPF: a load failure is our bug. */
	f->skel = blue_xdp__open_and_load();
	if (!f->skel) {
		snprintf(why, why_len, "blue_xdp__open_and_load: %s (verifier log above)",
			 strerror(errno));
		return FIX_FAIL;
	}
	f->prog_fd = bpf_program__fd(f->skel->progs.blue_xdp);
	f->qp_fd = bpf_map__fd(f->skel->maps.qp_ctx);
	f->xsks_fd = bpf_map__fd(f->skel->maps.xsks);
	f->stats_fd = bpf_map__fd(f->skel->maps.stats);
	f->ncpu = libbpf_num_possible_cpus();
	if (f->ncpu <= 0) {
		snprintf(why, why_len, "libbpf_num_possible_cpus: %d", f->ncpu);
		return FIX_FAIL;
	}

	snprintf(cmd, sizeof(cmd),
		 "ip link add %s type veth peer name %s && ip link set %s up && "
		 "ip link set %s up", fix_ifname[0], fix_ifname[1], fix_ifname[0],
		 fix_ifname[1]);
	if (system(cmd) != 0) {
		snprintf(why, why_len, "cannot create a veth pair with ip(8): `%s` failed", cmd);
		return FIX_SKIP;
	}

	for (__u32 i = 0; i < FIX_NSOCK; i++) {
		int fd;

		err = sock_open(&f->sock[i], fix_ifname[i], why, why_len);
		if (err == -EAFNOSUPPORT)
			return FIX_SKIP;	/* kernel without AF_XDP */
		if (err)
			return FIX_FAIL;
		fd = xsk_socket__fd(f->sock[i].xsk);
		if (bpf_map_update_elem(f->xsks_fd, &i, &fd, BPF_ANY)) {
			snprintf(why, why_len, "xsks[%u] = socket on %s: %s", i, fix_ifname[i],
				 strerror(errno));
			return FIX_FAIL;
		}
	}
	return FIX_OK;
}

void fix_teardown(struct xdp_fix *f)
{
	for (int i = 0; i < FIX_NSOCK; i++)
		sock_close(&f->sock[i]);
	blue_xdp__destroy(f->skel);
	f->skel = NULL;
}

void fix_setup_or_skip(struct xdp_fix *f)
{
	char why[256] = "";
	enum fix_status st = fix_setup(f, why, sizeof(why));

	if (st == FIX_SKIP)
		cr_skip_test("XDP tests skipped: %s", why);
	cr_assert_eq(st, FIX_OK, "XDP fixture: %s", why);
}

int fix_stats(struct xdp_fix *f, struct blue_stat sum[BLUE_STAT__MAX])
{
	struct blue_stat v[f->ncpu];

	for (__u32 r = 0; r < BLUE_STAT__MAX; r++) {
		if (bpf_map_lookup_elem(f->stats_fd, &r, v))
			return -errno;
		sum[r].pkts = sum[r].bytes = 0;
		for (int c = 0; c < f->ncpu; c++) {
			sum[r].pkts += v[c].pkts;
			sum[r].bytes += v[c].bytes;
		}
	}
	return 0;
}

void fix_expect_counted(const struct blue_stat before[BLUE_STAT__MAX],
			const struct blue_stat after[BLUE_STAT__MAX],
			unsigned int want, uint32_t len, const char *what)
{
	for (unsigned int r = 0; r < BLUE_STAT__MAX; r++) {
		uint64_t dp = after[r].pkts - before[r].pkts;
		uint64_t db = after[r].bytes - before[r].bytes;

		if (r == want) {
			cr_expect(dp == 1 && db == len,
				  "%s: stats[%s] moved by %llu pkts / %llu bytes, want 1 / %u",
				  what, blue_stat_name(r), (unsigned long long)dp,
				  (unsigned long long)db, len);
		} else {
			cr_expect(dp == 0 && db == 0,
				  "%s: stats[%s] moved by %llu pkts / %llu bytes (want only %s)",
				  what, blue_stat_name(r), (unsigned long long)dp,
				  (unsigned long long)db, blue_stat_name(want));
		}
	}
}

int fix_qp_set(struct xdp_fix *f, uint32_t qpn, uint32_t xsk_slot, uint8_t state)
{
	return fix_qp_set_pkey(f, qpn, xsk_slot, state, BLUE_DEFAULT_PKEY);
}

int fix_qp_set_pkey(struct xdp_fix *f, uint32_t qpn, uint32_t xsk_slot, uint8_t state,
		    uint16_t pkey)
{
	struct blue_qp_ctx qp = {
		.qpn = qpn,
		.xsk_slot = xsk_slot,
		.state = state,
		.type = BLUE_QPT_RC,
		.path_mtu = 3,	/* 1024 */
		.pkey = pkey,
	};
	__u32 slot = blue_qpn_slot(qpn);

	return bpf_map_update_elem(f->qp_fd, &slot, &qp, BPF_ANY) ? -errno : 0;
}

int fix_mcast_set(struct xdp_fix *f, const uint8_t gid[16], uint32_t queue, uint32_t xsk_slot)
{
	struct blue_mcast_key k = { .queue = queue };
	struct blue_mcast_val v = { .xsk_slot = xsk_slot, .nqp = 1 };

	memcpy(k.gid, gid, 16);
	return bpf_map_update_elem(bpf_map__fd(f->skel->maps.mcast), &k, &v, BPF_ANY) ?
	       -errno : 0;
}

int fix_qp_clear(struct xdp_fix *f, uint32_t slot)
{
	struct blue_qp_ctx qp = { 0 };

	return bpf_map_update_elem(f->qp_fd, &slot, &qp, BPF_ANY) ? -errno : 0;
}

uint64_t fix_qp_rx(struct xdp_fix *f, uint32_t qpn)
{
	struct blue_qp_ctx qp;
	__u32 slot = blue_qpn_slot(qpn);

	if (bpf_map_lookup_elem(f->qp_fd, &slot, &qp))
		return UINT64_MAX;
	return qp.xdp_rx_pkts;
}

int fix_run(struct xdp_fix *f, const void *pkt, uint32_t len, uint32_t *retval,
	    void *out, uint32_t *out_len)
{
	LIBBPF_OPTS(bpf_test_run_opts, o,
		.data_in = pkt,
		.data_size_in = len,
		.data_out = out,
		.data_size_out = *out_len,
		.repeat = 1,
	);
	int err = bpf_prog_test_run_opts(f->prog_fd, &o);

	if (err)
		return -errno;
	*retval = o.retval;
	*out_len = o.data_size_out;
	return 0;
}

int fix_run_live(struct xdp_fix *f, int sock, const void *pkt, uint32_t len)
{
	/* ingress_ifindex puts the frame on that netdev's queue 0, where the socket sits. */
	struct xdp_md md = {
		.data_end = len,
		.ingress_ifindex = f->sock[sock].ifindex,
		.rx_queue_index = 0,
	};
	LIBBPF_OPTS(bpf_test_run_opts, o,
		.data_in = pkt,
		.data_size_in = len,
		.ctx_in = &md,
		.ctx_size_in = sizeof(md),
		.repeat = 1,
		.flags = BPF_F_TEST_XDP_LIVE_FRAMES,
	);

	return bpf_prog_test_run_opts(f->prog_fd, &o) ? -errno : 0;
}

int fix_sock_take(struct xdp_fix *f, int sock, void *buf, size_t cap, uint32_t *len,
		  int timeout_ms)
{
	struct fix_sock *s = &f->sock[sock];
	__u32 idx_rx, idx_fill, n;

	n = xsk_ring_cons__peek(&s->rx, FIX_FRAMES, &idx_rx);
	if (n == 0 && timeout_ms > 0) {
		struct pollfd pfd = { .fd = xsk_socket__fd(s->xsk), .events = POLLIN };

		if (poll(&pfd, 1, timeout_ms) < 0)
			return -errno;
		n = xsk_ring_cons__peek(&s->rx, FIX_FRAMES, &idx_rx);
	}
	if (n == 0)
		return 0;

	if (xsk_ring_prod__reserve(&s->fill, n, &idx_fill) != n)
		return -ENOSPC;	/* cannot happen: only n frames are out */
	for (__u32 i = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&s->rx, idx_rx + i);

		if (i == 0) {
			*len = d->len;
			memcpy(buf, xsk_umem__get_data(s->area, d->addr),
			       d->len < cap ? d->len : cap);
		}
		*xsk_ring_prod__fill_addr(&s->fill, idx_fill + i) =
			xsk_umem__extract_addr(d->addr);
	}
	xsk_ring_cons__release(&s->rx, n);
	xsk_ring_prod__submit(&s->fill, n);
	return n;
}
