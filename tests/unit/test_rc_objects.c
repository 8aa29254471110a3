// SPDX-License-Identifier: MIT
/*
 * The verbs objects without traffic: device queries and the GID table, QPN allocation in
 * the QP-context table, MR registration and the access check, CQ and WQ rings, and the
 * post-time checks.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cq.h"
#include "runtime/mr.h"
#include "runtime/mr_key.h"
#include "runtime/qp.h"
#include "runtime/ring.h"
#include "tests/unit/rc_fixture.h"

/* flips the lowest bit of a key's MR-table slot (runtime/mr_key.h), not of its tag */
#define KEY_SLOT_BIT	(1u << BLUE_MR_KEY_TAG_BITS)

Test(rc_objects, device_port_and_gids)
{
	struct rc_fx fx;
	struct blue_device_attr da;
	struct blue_port_attr pa;
	union blue_gid g;
	const uint8_t ll[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
				 0x00, 0xb1, 0x0e, 0xff, 0xfe, 0, 0, 1 };
	const uint8_t v4[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 201, 0, 1 };

	rc_fx_init_noqp(&fx, NULL);
	cr_assert_eq(blue_query_device(fx.a.ctx, &da), 0);
	/* "BLU", no assigned vendor's id; device rev 1 (rdma-core's tests want non-zero) */
	cr_assert_eq(da.vendor_id, 0x424c55, "vendor_id 0x%x", da.vendor_id);
	cr_assert_eq(da.vendor_part_id, 1, "vendor_part_id %u", da.vendor_part_id);
	cr_assert_eq(da.phys_port_cnt, 1);
	cr_assert_gt(da.max_qp, 1000);
	cr_assert_eq(da.atomic_cap, 1);
	cr_assert_eq(blue_query_port(fx.a.ctx, 1, &pa), 0);
	cr_assert_eq(pa.state, 4);
	cr_assert_eq(pa.link_layer, 2);
	/* a 2048-byte loopback frame holds a 1024-byte IB MTU and its headers, not 2048 */
	cr_assert_eq(pa.active_mtu, BLUE_MTU_1024);
	cr_assert_eq(pa.gid_tbl_len, 16, "0 fe80, 1 IPv4, 2..15 the netdev's IPv6 addresses");
	cr_assert_eq(blue_query_port(fx.a.ctx, 2, &pa), EINVAL);
	/* MAC 02:b1:0e:00:00:01 -> modified EUI-64 00b1:0eff:fe00:0001 */
	cr_assert_eq(blue_query_gid(fx.a.ctx, 1, 0, &g), 0);
	cr_assert_eq(memcmp(g.raw, ll, 16), 0, "link-local GID");
	cr_assert_eq(blue_query_gid(fx.a.ctx, 1, 1, &g), 0);
	cr_assert_eq(memcmp(g.raw, v4, 16), 0, "IPv4-mapped GID");
	cr_assert_eq(blue_query_gid(fx.a.ctx, 1, 16, &g), EINVAL);
	cr_assert_eq(blue_query_gid(fx.a.ctx, 2, 0, &g), EINVAL);
	rc_fx_fini(&fx);
}

Test(rc_objects, mtu_for_frame_and_netdev)
{
	cr_assert_eq(blue__mtu_for(2048, 0), BLUE_MTU_1024);
	cr_assert_eq(blue__mtu_for(4096, 0), BLUE_MTU_2048);
	cr_assert_eq(blue__mtu_for(4096, 1500), BLUE_MTU_1024, "rxe's choice on 1500");
	cr_assert_eq(blue__mtu_for(8192, 9000), BLUE_MTU_4096);
	cr_assert_eq(blue__mtu_for(4096, 1200), BLUE_MTU_1024);
	cr_assert_eq(blue__mtu_for(4096, 1000), BLUE_MTU_512);
}

/*
 * A QPN is claimed in the HAL's QP-context table: its low 12 bits are the slot, the
 * slot's qpn field holds it, it is never 0 or 1, and no QPN repeats across reuse.
 */
Test(rc_objects, qpn_allocation)
{
	struct rc_fx fx;
	struct blue_qp_ctx *tbl;
	uint32_t seen[200];
	int i, j;

	rc_fx_init_noqp(&fx, NULL);
	tbl = blue_hal_qp_ctx_table(fx.a.hal);
	for (i = 0; i < 200; i++) {
		struct blue_qp *qp = rc_qp_create(&fx, &fx.a);
		uint32_t qpn = blue_qp_num(qp), slot = blue_qpn_slot(qpn);

		cr_assert_gt(qpn, 1);
		cr_assert_leq(qpn, 0xffffff);
		cr_assert_geq(slot, 2, "slots 0 and 1 would alias QP0/QP1");
		cr_assert_eq(tbl[slot].qpn, qpn, "the table holds the QPN");
		cr_assert_eq(tbl[slot].state, BLUE_QPS_RESET);
		cr_assert_eq(tbl[slot].type, BLUE_QPT_RC);
		cr_assert_eq(tbl[slot].local_ip, fx.a.ip);
		cr_assert_eq(qp->live, &tbl[slot], "the QP works on the table entry itself");
		for (j = 0; j < i; j++)
			cr_assert_neq(seen[j], qpn, "QPN 0x%x handed out twice", qpn);
		seen[i] = qpn;
		cr_assert_eq(blue_destroy_qp(qp), 0);
		cr_assert_eq(tbl[slot].qpn, 0, "destroy frees the slot");
	}
	fx.a.qp = NULL;
	rc_fx_fini(&fx);
}

/* A slot another process holds (qpn != 0) is never taken. */
Test(rc_objects, qpn_skips_claimed_slots)
{
	struct rc_fx fx;
	struct blue_qp_ctx *tbl;
	struct blue_qp *qp;
	uint32_t i;

	rc_fx_init_noqp(&fx, NULL);
	tbl = blue_hal_qp_ctx_table(fx.a.hal);
	for (i = 0; i < BLUE_MAX_QP; i++)
		tbl[i].qpn = i == 777 ? 0 : 0x5000 | i;	/* all but one are someone else's */
	qp = rc_qp_create(&fx, &fx.a);
	cr_assert_eq(blue_qpn_slot(blue_qp_num(qp)), 777, "the one free slot");
	cr_assert_eq(blue_destroy_qp(qp), 0);
	fx.a.qp = NULL;
	/* now full: create fails cleanly */
	tbl[777].qpn = 0x5000 | 777;
	{
		struct blue_qp_init_attr ia = {
			.send_cq = fx.a.scq, .recv_cq = fx.a.rcq, .qp_type = BLUE_QPT_RC,
			.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1,
				 .max_recv_sge = 1 },
		};

		cr_assert_null(blue_create_qp(fx.a.pd, &ia));
		cr_assert_eq(errno, ENOMEM);
	}
	for (i = 0; i < BLUE_MAX_QP; i++)
		tbl[i].qpn = 0;
	rc_fx_fini(&fx);
}

Test(rc_objects, create_qp_checks)
{
	struct rc_fx fx;
	struct blue_qp_init_attr ia;

	rc_fx_init_noqp(&fx, NULL);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = fx.a.scq;
	ia.recv_cq = fx.a.rcq;
	ia.qp_type = (enum blue_qp_type)8;	/* IBV_QPT_RAW_PACKET: not served (RC, UC, UD are) */
	ia.cap.max_send_wr = 4;
	cr_assert_null(blue_create_qp(fx.a.pd, &ia));
	cr_assert_eq(errno, EOPNOTSUPP);
	ia.qp_type = BLUE_QPT_RC;
	ia.cap.max_send_sge = 33;
	cr_assert_null(blue_create_qp(fx.a.pd, &ia));
	cr_assert_eq(errno, EINVAL);
	ia.cap.max_send_sge = 2;
	ia.recv_cq = fx.b.rcq;	/* another context's CQ */
	cr_assert_null(blue_create_qp(fx.a.pd, &ia));
	cr_assert_eq(errno, EINVAL);
	ia.recv_cq = fx.a.rcq;
	ia.cap.max_send_wr = 5;
	ia.cap.max_inline_data = 100;
	fx.a.qp = blue_create_qp(fx.a.pd, &ia);
	cr_assert_not_null(fx.a.qp);
	/* the caps come back as allocated: rounded up, never less */
	cr_assert_eq(ia.cap.max_send_wr, 8);
	cr_assert_geq(ia.cap.max_inline_data, 100);
	/* objects in use cannot go */
	cr_assert_eq(blue_dealloc_pd(fx.a.pd), EBUSY);
	cr_assert_eq(blue_destroy_cq(fx.a.scq), EBUSY);
	cr_assert_eq(blue_close_device(fx.a.ctx), EBUSY);
	rc_fx_fini(&fx);
}

/* ---- memory regions ------------------------------------------------------------------- */

Test(rc_objects, reg_mr_checks)
{
	struct rc_fx fx;
	uint8_t buf[64];
	struct blue_mr *a, *b;

	rc_fx_init_noqp(&fx, NULL);
	errno = 0;
	cr_assert_null(blue_reg_mr(fx.a.pd, buf, sizeof(buf), BLUE_ACCESS_REMOTE_WRITE));
	cr_assert_eq(errno, EINVAL, "remote write needs local write");
	cr_assert_null(blue_reg_mr(fx.a.pd, buf, sizeof(buf), BLUE_ACCESS_REMOTE_ATOMIC));
	cr_assert_null(blue_reg_mr(fx.a.pd, buf, 0, 0));
	cr_assert_eq(errno, EINVAL, "zero length");
	/* an unknown bit (0x100 and 0x200 are IBA 1.5's FLUSH rights since issue 15) */
	cr_assert_null(blue_reg_mr(fx.a.pd, buf, sizeof(buf), 0x400));
	a = blue_reg_mr(fx.a.pd, buf, sizeof(buf), BLUE_ACCESS_REMOTE_READ);
	b = blue_reg_mr(fx.a.pd, buf, sizeof(buf), 0);
	cr_assert(a && b);
	cr_assert_neq(a->lkey, b->lkey);
	cr_assert_eq(a->lkey, a->rkey);
	cr_assert_eq(a->addr, buf);
	cr_assert_eq(a->length, sizeof(buf));
	cr_assert_eq(blue_dealloc_pd(fx.a.pd), EBUSY, "MRs still in the PD");
	cr_assert_eq(blue_dereg_mr(a), 0);
	cr_assert_eq(blue_dereg_mr(b), 0);
	rc_fx_fini(&fx);
}

/* The access check the responder runs (IBA 10.6): key, PD, bounds, rights. */
Test(rc_objects, mr_access_check)
{
	struct rc_fx fx;
	static uint8_t buf[4096];
	struct blue_pd *other;
	struct blue_mr *mr;
	uint64_t va = (uintptr_t)buf;
	uint32_t stale;
	struct blue_mem_at at = { 0 };
	const unsigned int rw = BLUE_ACCESS_REMOTE_WRITE;

	rc_fx_init_noqp(&fx, NULL);
	other = blue_alloc_pd(fx.a.ctx);
	mr = blue_reg_mr(fx.a.pd, buf, sizeof(buf), BLUE_ACCESS_LOCAL_WRITE | rw);
	cr_assert(other && mr);
	cr_assert_eq(blue__mr_check(fx.a.ctx, fx.a.pd, mr->rkey, va + 100, 50, rw, &at),
		     BLUE_MR_OK);
	cr_assert_eq(at.p, buf + 100);
	cr_assert_eq(at.pid, 0, "library mode: the bytes are in this process");
	cr_assert_eq(blue__mr_check(fx.a.ctx, fx.a.pd, mr->rkey, va, 4096, rw, NULL), BLUE_MR_OK,
		     "the whole region");
	cr_assert_eq(blue__mr_check(fx.a.ctx, fx.a.pd, mr->rkey, va + 4096, 0, rw, NULL),
		     BLUE_MR_OK, "an empty range at the end");
	cr_assert_eq(blue__mr_check(fx.a.ctx, fx.a.pd, mr->rkey ^ KEY_SLOT_BIT, va, 8, rw, NULL),
		     BLUE_MR_BAD_KEY, "another slot's key");
	cr_assert_eq(blue__mr_check(fx.a.ctx, fx.a.pd, 0, va, 8, rw, NULL), BLUE_MR_BAD_KEY);
	cr_assert_eq(blue__mr_check(fx.a.ctx, other, mr->rkey, va, 8, rw, NULL), BLUE_MR_BAD_PD);
	cr_assert_eq(blue__mr_check(fx.a.ctx, fx.a.pd, mr->rkey, va - 1, 8, rw, NULL),
		     BLUE_MR_BOUNDS, "starts before");
	cr_assert_eq(blue__mr_check(fx.a.ctx, fx.a.pd, mr->rkey, va + 4090, 7, rw, NULL),
		     BLUE_MR_BOUNDS, "ends after");
	cr_assert_eq(blue__mr_check(fx.a.ctx, fx.a.pd, mr->rkey, va + 8, UINT64_MAX - 4, rw,
				    NULL), BLUE_MR_BOUNDS, "va + len wraps around");
	cr_assert_eq(blue__mr_check(fx.a.ctx, fx.a.pd, mr->rkey, UINT64_MAX - 2, 8, rw, NULL),
		     BLUE_MR_BOUNDS, "va near the top");
	cr_assert_eq(blue__mr_check(fx.a.ctx, fx.a.pd, mr->rkey, va, 8, BLUE_ACCESS_REMOTE_READ,
				    NULL), BLUE_MR_PERM);
	cr_assert_eq(blue__mr_check(fx.a.ctx, fx.a.pd, mr->rkey, va, 8,
				    BLUE_ACCESS_REMOTE_ATOMIC, NULL), BLUE_MR_PERM);
	stale = mr->rkey;
	cr_assert_eq(blue_dereg_mr(mr), 0);
	cr_assert_eq(blue__mr_check(fx.a.ctx, fx.a.pd, stale, va, 8, rw, NULL), BLUE_MR_BAD_KEY,
		     "a deregistered key");
	mr = blue_reg_mr(fx.a.pd, buf, sizeof(buf), BLUE_ACCESS_LOCAL_WRITE | rw);
	cr_assert_neq(mr->rkey, stale, "a reused index gets a new key");
	cr_assert_eq(blue__mr_check(fx.a.ctx, fx.a.pd, stale, va, 8, rw, NULL), BLUE_MR_BAD_KEY);
	cr_assert_eq(blue_dereg_mr(mr), 0);
	cr_assert_eq(blue_dealloc_pd(other), 0);
	rc_fx_fini(&fx);
}

/* ---- rings ---------------------------------------------------------------------------- */

Test(rc_objects, ring_indices_wrap)
{
	struct blue_ring r;
	uint32_t i, v;

	cr_assert_eq(blue_ring_init(&r, 5, 4), 0);
	cr_assert_eq(blue_ring_size(&r), 8, "rounded up to a power of two");
	cr_assert_eq(r.elem_size, 16, "entries rounded up to 16 bytes");
	cr_assert_eq((uintptr_t)&r.hdr->cons - (uintptr_t)&r.hdr->prod, 64,
		     "producer and consumer on separate cache lines");
	/* start near 2^32 so the free-running indices wrap */
	r.hdr->prod = r.hdr->cons = r.prod = r.cons = UINT32_MAX - 3;
	for (i = 0; i < 100; i++) {
		cr_assert_eq(blue_ring_room(&r), 8);
		v = i * 3;
		memcpy(blue_ring_elem(&r, blue_ring_prod_own(&r)), &v, 4);
		v++;
		memcpy(blue_ring_elem(&r, blue_ring_prod_own(&r) + 1), &v, 4);
		blue_ring_produce(&r, 2);
		cr_assert_eq(blue_ring_count(&r), 2);
		memcpy(&v, blue_ring_elem(&r, blue_ring_cons_own(&r)), 4);
		cr_assert_eq(v, i * 3);
		memcpy(&v, blue_ring_elem(&r, blue_ring_cons_own(&r) + 1), 4);
		cr_assert_eq(v, i * 3 + 1);
		blue_ring_consume(&r, 2);
	}
	cr_assert_eq(blue_ring_count(&r), 0);
	blue_ring_fini(&r);
	cr_assert_eq(blue_ring_init(&r, 0, 4), -EINVAL);
}

Test(rc_objects, cq_ring_full_and_poll)
{
	struct rc_fx fx;
	struct blue_cq *cq;
	struct blue_wc wc = { .status = BLUE_WC_SUCCESS }, out[8];
	int i;

	rc_fx_init_noqp(&fx, NULL);
	cq = blue_create_cq(fx.a.ctx, 3, NULL, NULL, 0);
	cr_assert_not_null(cq);
	cr_assert_null(blue_create_cq(fx.a.ctx, 0, NULL, NULL, 0));
	cr_assert_eq(blue_poll_cq(cq, 4, out), 0, "empty");
	cr_assert_eq(blue_poll_cq(cq, -1, out), -EINVAL);
	for (i = 0; i < 4; i++) {
		wc.wr_id = (uint64_t)i;
		cr_assert_eq(blue__cq_push(cq, &wc, false), 0);
	}
	cr_assert_eq(blue__cq_room(cq), 0);
	cr_assert_eq(blue__cq_push(cq, &wc, false), -ENOSPC, "full: nothing overwritten");
	cr_assert_eq(blue_poll_cq(cq, 3, out), 3);
	for (i = 0; i < 3; i++)
		cr_assert_eq(out[i].wr_id, (uint64_t)i);
	cr_assert_eq(blue_poll_cq(cq, 8, out), 1);
	cr_assert_eq(out[0].wr_id, 3);
	cr_assert_eq(blue_destroy_cq(cq), 0);
	rc_fx_fini(&fx);
}

/* ---- posting ---------------------------------------------------------------------------- */

Test(rc_objects, post_checks)
{
	struct rc_fx fx;
	uint8_t buf[16];
	struct blue_sge sge[5];
	struct blue_send_wr swr[3], *sbad;
	struct blue_recv_wr rwr[3], *rbad;
	struct blue_qp_attr a;
	int i;

	rc_fx_init_noqp(&fx, NULL);
	fx.o.max_send_wr = 2;
	fx.o.max_recv_wr = 2;
	rc_qp_create(&fx, &fx.a);
	rc_qp_create(&fx, &fx.b);
	for (i = 0; i < 5; i++)
		sge[i] = (struct blue_sge){ .addr = (uintptr_t)buf, .length = 1 };
	memset(swr, 0, sizeof(swr));
	memset(rwr, 0, sizeof(rwr));
	for (i = 0; i < 3; i++) {
		swr[i].wr_id = (uint64_t)i;
		swr[i].sg_list = sge;
		swr[i].num_sge = 1;
		swr[i].opcode = BLUE_WR_SEND;
		swr[i].next = i < 2 ? &swr[i + 1] : NULL;
		rwr[i].wr_id = (uint64_t)i;
		rwr[i].sg_list = sge;
		rwr[i].num_sge = 1;
		rwr[i].next = i < 2 ? &rwr[i + 1] : NULL;
	}
	/* RESET: neither sends nor receives */
	cr_assert_eq(blue_post_send(fx.a.qp, swr, &sbad), EINVAL);
	cr_assert_eq(sbad, &swr[0]);
	cr_assert_eq(blue_post_recv(fx.a.qp, rwr, &rbad), EINVAL);
	cr_assert_eq(rbad, &rwr[0]);
	/* INIT: receives yes, sends no */
	memset(&a, 0, sizeof(a));
	a.qp_state = BLUE_QPS_INIT;
	a.port_num = 1;
	cr_assert_eq(blue_modify_qp(fx.a.qp, &a, BLUE_QP_STATE | BLUE_QP_PKEY_INDEX |
				    BLUE_QP_PORT | BLUE_QP_ACCESS_FLAGS), 0);
	cr_assert_eq(blue_post_send(fx.a.qp, swr, &sbad), EINVAL);
	/* the queue holds 2: the third is refused with ENOMEM and named */
	cr_assert_eq(blue_post_recv(fx.a.qp, rwr, &rbad), ENOMEM);
	cr_assert_eq(rbad, &rwr[2]);
	cr_assert_eq(blue_ring_count(&fx.a.qp->rq.ring), 2, "the first two were posted");
	/* too many SGEs (the QP was created for 4) */
	rwr[2].next = NULL;
	rwr[2].num_sge = 5;
	cr_assert_eq(blue_post_recv(fx.a.qp, &rwr[2], &rbad), EINVAL);
	/* in RTS a send chain also stops at the first bad WR */
	cr_assert_eq(blue_modify_qp(fx.a.qp, &(struct blue_qp_attr){ .qp_state = BLUE_QPS_RESET },
				    BLUE_QP_STATE), 0);
	cr_assert_eq(blue_ring_count(&fx.a.qp->rq.ring), 0, "RESET empties the queues");
	rc_qp_connect(&fx, &fx.a, &fx.b, 1, 1);
	swr[1].opcode = 17;
	cr_assert_eq(blue_post_send(fx.a.qp, swr, &sbad), EINVAL);
	cr_assert_eq(sbad, &swr[1]);
	cr_assert_eq(blue_ring_count(&fx.a.qp->sq.ring), 1);
	swr[1].opcode = BLUE_WR_ATOMIC_FETCH_AND_ADD;	/* an atomic needs one 8-byte SGE */
	cr_assert_eq(blue_post_send(fx.a.qp, &swr[1], &sbad), EINVAL);
	rc_fx_fini(&fx);
}

/* ---- completion channel ------------------------------------------------------------------ */

#include <fcntl.h>
#include <poll.h>

Test(rc_objects, completion_channel_event)
{
	struct rc_fx fx;
	struct blue_comp_channel *ch;
	struct blue_cq *cq, *evcq;
	void *evctx;
	uint8_t src[32], dst[32];
	struct blue_mr *smr, *dmr;
	struct blue_sge sge;
	struct blue_send_wr wr;
	struct blue_wc wc;
	struct pollfd pfd;
	int tag = 5;

	rc_fx_init_noqp(&fx, NULL);
	ch = blue_create_comp_channel(fx.b.ctx);
	cr_assert_not_null(ch);
	cq = blue_create_cq(fx.b.ctx, 16, &tag, ch, 0);
	cr_assert_not_null(cq);
	cr_assert_eq(blue_destroy_comp_channel(ch), EBUSY);
	/* B's receives complete into the channel's CQ */
	cr_assert_eq(blue_destroy_cq(fx.b.rcq), 0);
	fx.b.rcq = cq;
	rc_qp_create(&fx, &fx.a);
	rc_qp_create(&fx, &fx.b);
	rc_qp_connect(&fx, &fx.a, &fx.b, 1, 2);
	rc_qp_connect(&fx, &fx.b, &fx.a, 2, 1);
	smr = blue_reg_mr(fx.a.pd, src, sizeof(src), 0);
	dmr = blue_reg_mr(fx.b.pd, dst, sizeof(dst), BLUE_ACCESS_LOCAL_WRITE);
	rc_post_recv(&fx.b, 3, dst, sizeof(dst), dmr->lkey);
	cr_assert_eq(blue_req_notify_cq(cq, 0), 0);
	fcntl(blue_comp_channel_fd(ch), F_SETFL, O_NONBLOCK);
	cr_assert_eq(blue_get_cq_event(ch, &evcq, &evctx), -1, "nothing yet");
	cr_assert_eq(errno, EAGAIN);

	sge = (struct blue_sge){ .addr = (uintptr_t)src, .length = sizeof(src), .lkey = smr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = BLUE_WR_SEND;
	wr.send_flags = BLUE_SEND_SIGNALED;
	rc_post_send(&fx.a, &wr);
	blue_poll_cq(fx.a.scq, 0, NULL);	/* A sends; B is asleep */
	/* the frames for B make its channel fd readable: it wakes up for them */
	pfd = (struct pollfd){ .fd = blue_comp_channel_fd(ch), .events = POLLIN };
	cr_assert_eq(poll(&pfd, 1, 1000), 1, "channel fd readable on arrival");
	cr_assert_eq(blue_get_cq_event(ch, &evcq, &evctx), 0);
	cr_assert_eq(evcq, cq);
	cr_assert_eq(evctx, &tag);
	blue_ack_cq_events(cq, 1);
	cr_assert_eq(blue_poll_cq(cq, 1, &wc), 1);
	cr_assert_eq(wc.wr_id, 3);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	/* not re-armed: the next completion raises no event */
	rc_post_recv(&fx.b, 4, dst, sizeof(dst), dmr->lkey);
	rc_post_send(&fx.a, &wr);
	wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
	wc = rc_wait1(&fx, cq, RC_WAIT_MS);
	cr_assert_eq(blue_get_cq_event(ch, &evcq, &evctx), -1);
	cr_assert_eq(errno, EAGAIN);

	cr_assert_eq(blue_dereg_mr(smr), 0);
	cr_assert_eq(blue_dereg_mr(dmr), 0);
	cr_assert_eq(blue_destroy_qp(fx.b.qp), 0);
	fx.b.qp = NULL;
	cr_assert_eq(blue_destroy_cq(cq), 0);
	fx.b.rcq = blue_create_cq(fx.b.ctx, 4, NULL, NULL, 0);
	cr_assert_eq(blue_destroy_comp_channel(ch), 0);
	rc_fx_fini(&fx);
}

/* blue_open_device() on a netdev: a missing interface fails cleanly with ENODEV. */
Test(rc_objects, open_device_missing_interface)
{
	errno = 0;
	cr_assert_null(blue_open_device("blue-nosuch0"));
	cr_assert_eq(errno, ENODEV);
	errno = 0;
	cr_assert_null(blue_open_device(""));
	cr_assert_eq(errno, ENODEV);
	cr_assert_null(blue_open_device("a-name-longer-than-ifnamsiz"));
	cr_assert_eq(errno, ENODEV);
}

/*
 * A receive-only QP (qperf's rc_bw server asks max_send_wr 0, as the kernel's drivers
 * take): created with an empty send queue that reports 0 and refuses every send
 * (ENOMEM, the queue is full), while it receives and ACKs a SEND from its peer.
 */
Test(rc_objects, receive_only_qp)
{
	struct rc_fx fx;
	struct blue_qp_attr a;
	struct blue_qp_init_attr ia;
	struct blue_send_wr wr, *bad;
	struct blue_sge sge;
	struct blue_mr *smr, *dmr;
	struct blue_wc wc;
	uint8_t src[256], dst[256];

	rc_fx_init_noqp(&fx, NULL);
	rc_qp_create(&fx, &fx.a);
	fx.o.max_send_wr = 0;
	memset(&ia, 0, sizeof(ia));
	rc_qp_create(&fx, &fx.b);
	cr_assert_eq(blue_query_qp(fx.b.qp, &a, 0, &ia), 0);
	cr_assert_eq(ia.cap.max_send_wr, 0, "an empty send queue reports 0, got %u",
		     ia.cap.max_send_wr);
	cr_assert_gt(ia.cap.max_recv_wr, 0);
	rc_qp_connect(&fx, &fx.a, &fx.b, fx.o.sq_psn_a, fx.o.sq_psn_b);
	rc_qp_connect(&fx, &fx.b, &fx.a, fx.o.sq_psn_b, fx.o.sq_psn_a);
	rc_fill(src, sizeof(src), 5);
	memset(dst, 0, sizeof(dst));
	smr = blue_reg_mr(fx.a.pd, src, sizeof(src), BLUE_ACCESS_LOCAL_WRITE);
	dmr = blue_reg_mr(fx.b.pd, dst, sizeof(dst), BLUE_ACCESS_LOCAL_WRITE);
	cr_assert(smr && dmr);
	sge = (struct blue_sge){ .addr = (uintptr_t)src, .length = sizeof(src),
				 .lkey = smr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 7;
	wr.opcode = BLUE_WR_SEND;
	wr.send_flags = BLUE_SEND_SIGNALED | BLUE_SEND_INLINE;
	cr_assert_eq(blue_post_send(fx.b.qp, &wr, &bad), ENOMEM, "nothing fits an empty SQ");
	cr_assert_eq(bad, &wr);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = BLUE_SEND_SIGNALED;
	rc_post_recv(&fx.b, 8, dst, sizeof(dst), dmr->lkey);
	rc_post_send(&fx.a, &wr);
	wc = rc_wait1(&fx, fx.a.scq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "send: %s", blue_wc_status_str(wc.status));
	wc = rc_wait1(&fx, fx.b.rcq, RC_WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	cr_assert_eq(wc.byte_len, sizeof(src));
	cr_assert(rc_check(dst, sizeof(dst), 5), "the bytes arrived");
	cr_assert_eq(blue_dereg_mr(smr), 0);
	cr_assert_eq(blue_dereg_mr(dmr), 0);
	rc_fx_fini(&fx);
}
