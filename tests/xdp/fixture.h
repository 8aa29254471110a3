/* SPDX-License-Identifier: MIT */
/*
 * The XDP test fixture: the real blue_xdp object loaded through its skeleton, inside a
 * private network namespace that holds one veth pair with an AF_XDP socket (copy mode)
 * on queue 0 of each end. Socket i sits in XSKMAP slot i.
 *
 * Everything lives in the test process (Criterion forks one per test), so when it
 * exits the kernel frees the namespace, the veth pair, the sockets and the maps, also
 * when an assertion ends the test early. Nothing is pinned.
 */
#ifndef BLUE_TEST_XDP_FIXTURE_H
#define BLUE_TEST_XDP_FIXTURE_H

#include <stddef.h>
#include <stdint.h>
#include <xdp/xsk.h>

#include "blue/stats.h"

#define FIX_NSOCK	2
#define FIX_FRAMES	64
#define FIX_FRAME_SIZE	XSK_UMEM__DEFAULT_FRAME_SIZE

struct fix_sock {
	void			*area;
	struct xsk_umem		*umem;
	struct xsk_ring_prod	fill;
	struct xsk_ring_cons	comp;
	struct xsk_ring_cons	rx;
	struct xsk_socket	*xsk;
	int			ifindex;
};

struct xdp_fix {
	struct blue_xdp		*skel;
	int			prog_fd;
	int			qp_fd;
	int			xsks_fd;
	int			stats_fd;
	int			ncpu;
	struct fix_sock		sock[FIX_NSOCK];
};

enum fix_status {
	FIX_OK = 0,
	FIX_SKIP = 1,	/* the machine cannot run these tests; @why says why */
	FIX_FAIL = -1,	/* it should, and something broke; @why says what */
};

enum fix_status fix_setup(struct xdp_fix *f, char *why, size_t why_len);
void fix_teardown(struct xdp_fix *f);

/* Set up or end the calling test with cr_skip_test / cr_assert. */
void fix_setup_or_skip(struct xdp_fix *f);

/* Per-CPU stats summed over CPUs. */
int fix_stats(struct xdp_fix *f, struct blue_stat sum[BLUE_STAT__MAX]);

/*
 * Criterion expectations that between @before and @after the reason @want went up by
 * exactly one packet of @len bytes and no other reason moved. @what names the case.
 */
void fix_expect_counted(const struct blue_stat before[BLUE_STAT__MAX],
			const struct blue_stat after[BLUE_STAT__MAX],
			unsigned int want, uint32_t len, const char *what);

/* A QP context with the default P_Key 0xffff, as the runtime writes for pkey_index 0. */
int fix_qp_set(struct xdp_fix *f, uint32_t qpn, uint32_t xsk_slot, uint8_t state);
int fix_qp_set_pkey(struct xdp_fix *f, uint32_t qpn, uint32_t xsk_slot, uint8_t state,
		    uint16_t pkey);
int fix_qp_clear(struct xdp_fix *f, uint32_t slot);
/* A multicast map entry: group @gid arriving on @queue goes to XSKMAP slot @xsk_slot. */
int fix_mcast_set(struct xdp_fix *f, const uint8_t gid[16], uint32_t queue, uint32_t xsk_slot);
/* xdp_rx_pkts of the QP context in @qpn's slot. */
uint64_t fix_qp_rx(struct xdp_fix *f, uint32_t qpn);

/* BPF_PROG_RUN once; @out receives the frame as the program left it. */
int fix_run(struct xdp_fix *f, const void *pkt, uint32_t len, uint32_t *retval,
	    void *out, uint32_t *out_len);

/*
 * BPF_PROG_RUN once with live frames, arriving on queue 0 of socket @sock's veth, so a
 * redirect really lands in an AF_XDP RX ring.
 */
int fix_run_live(struct xdp_fix *f, int sock, const void *pkt, uint32_t len);

/*
 * Take every frame waiting on socket @sock's RX ring, waiting up to @timeout_ms for the
 * first. Copies the first into @buf (*@len set). Returns the number of frames or -errno.
 * Frames go back to the fill ring.
 */
int fix_sock_take(struct xdp_fix *f, int sock, void *buf, size_t cap, uint32_t *len,
		  int timeout_ms);

#endif /* BLUE_TEST_XDP_FIXTURE_H */
