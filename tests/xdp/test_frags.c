// SPDX-License-Identifier: MIT
/*
 * Multi-buffer frames (xdp.frags). At IB path MTU 4096 a RoCEv2 frame is ~4.2 KB, more
 * than the linear part of an xdp_buff holds (a page less headroom and shared info), so
 * the payload tail and the ICRC arrive in a frag. BPF_PROG_RUN builds such a frame
 * the same way for a frags program. The verdict must be the one the headers earn, and
 * the length checks must see the whole frame: an IPv4 total length that covers the
 * frags is honest, one beyond them is still a lie.
 */
#include <criterion/criterion.h>
#include <string.h>
#include <linux/bpf.h>

#include "blue/qp_ctx.h"
#include "blue/stats.h"
#include "blue/wire.h"
#include "fixture.h"
#include "pkt.h"

#define QPN	0x000011u	/* RTS, socket 0 */

static struct xdp_fix fix;

static void fini(void)
{
	fix_teardown(&fix);
}

/* Run a SEND Only with @payload bytes (and @tot_adj on the IPv4 total length). */
static void run_big(uint32_t payload, int tot_adj, uint32_t want_verdict,
		    unsigned int want_reason, const char *what)
{
	static uint8_t pkt[8192], out[8192];
	struct blue_stat before[BLUE_STAT__MAX], after[BLUE_STAT__MAX];
	uint32_t len, out_len = sizeof(out), verdict = ~0u;
	uint64_t rx0;
	struct pkt_spec spec;
	int err;

	fix_setup_or_skip(&fix);
	cr_assert_eq(fix_qp_set(&fix, QPN, 0, BLUE_QPS_RTS), 0);
	pkt_spec_default(&spec);
	spec.dqpn = QPN;
	spec.payload_len = payload;
	spec.tot_len_adj = tot_adj;
	len = (uint32_t)pkt_build(&spec, pkt, sizeof(pkt));
	cr_assert_gt(len, 4096, "%s: a frame of %u bytes has no frag", what, len);
	cr_assert_eq(fix_stats(&fix, before), 0);
	rx0 = fix_qp_rx(&fix, QPN);

	err = fix_run(&fix, pkt, len, &verdict, out, &out_len);
	cr_assert_eq(err, 0, "%s: BPF_PROG_RUN of %u bytes: %s (loaded without xdp.frags?)",
		     what, len, strerror(-err));
	cr_expect_eq(verdict, want_verdict, "%s: verdict %u, want %u", what, verdict,
		     want_verdict);
	cr_expect(out_len == len && !memcmp(out, pkt, len), "%s: the frame changed", what);
	cr_assert_eq(fix_stats(&fix, after), 0);
	/* counted with the whole frame's length, frags included */
	fix_expect_counted(before, after, want_reason, len, what);
	cr_expect_eq(fix_qp_rx(&fix, QPN), rx0 + (want_verdict == XDP_REDIRECT),
		     "%s: xdp_rx_pkts", what);
}

Test(xdp, frags_full_mtu_4096_redirects, .fini = fini, .timeout = 20)
{
	run_big(4096, 0, XDP_REDIRECT, BLUE_STAT_REDIRECT, "SEND Only, 4096 B payload");
}

Test(xdp, frags_jumbo_7000_redirects, .fini = fini, .timeout = 20)
{
	/* parse does not judge the payload size: that is the responder's (path MTU) */
	run_big(7000, 0, XDP_REDIRECT, BLUE_STAT_REDIRECT, "SEND Only, 7000 B payload");
}

Test(xdp, frags_ip_len_beyond_frags_drops, .fini = fini, .timeout = 20)
{
	run_big(4096, 4, XDP_DROP, BLUE_STAT_DROP_BAD_IP_HDR, "IPv4 length 4 past the frags");
}
