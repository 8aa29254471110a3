// SPDX-License-Identifier: MIT
/*
 * The IPv4 TTL of RC frames: rxe sends the route's (64) whatever hop_limit the QP's
 * address vector asks, because the kernel resolves a RoCE AH's hop limit from the route
 * (tests/vectors/rxe: ibv_rc_pingpong asks hop_limit 1, its frames carry TTL 64). UD
 * does the same (test_ud.c, ud/ttl_is_the_routes_not_the_ah_hop_limit).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "runtime/codec.h"
#include "tests/unit/rc_fixture.h"

/* the TTL of the last request frame A sent */
static enum blue_lb_verdict ttl_fn(void *arg, const struct blue_frame *f, uint64_t seq)
{
	int *ttl = arg;
	struct blue_pkt p;

	(void)seq;
	if (blue_pkt_parse(f->data, f->len, &p) == 0 && p.opcode == BLUE_OP_RC_SEND_ONLY)
		*ttl = p.ttl;
	return BLUE_LB_PASS;
}

Test(rc_ttl, the_routes_not_the_av_hop_limit)
{
	static const uint8_t hops[] = { 1, 0xff };

	for (size_t i = 0; i < sizeof(hops); i++) {
		struct rc_opts o;
		struct rc_fx fx;
		struct rc_mem m;
		struct blue_sge sge;
		struct blue_send_wr wr;
		struct blue_wc wc;
		int ttl = -1;

		rc_opts_default(&o);
		o.hop_limit = hops[i];
		rc_fx_init(&fx, &o);
		rc_mem_init(&m, &fx.a, &fx.b, 64, 3, BLUE_ACCESS_LOCAL_WRITE);
		blue_hal_loopback_set_filter(fx.a.hal, ttl_fn, &ttl);
		rc_post_recv(&fx.b, 1, m.dst, m.len, m.dmr->lkey);
		sge = (struct blue_sge){ .addr = (uintptr_t)m.src, .length = m.len,
					 .lkey = m.smr->lkey };
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 2;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = BLUE_WR_SEND;
		wr.send_flags = BLUE_SEND_SIGNALED;
		rc_post_send(&fx.a, &wr);
		wc = rc_wait1(&fx, fx.b.rcq, RC_WAIT_MS);
		cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
		wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
		cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
		cr_expect_eq(ttl, 64, "AV hop_limit %u: TTL %d on the wire, rxe sends 64", hops[i],
			     ttl);
		rc_mem_fini(&m);
		rc_fx_fini(&fx);
	}
}
