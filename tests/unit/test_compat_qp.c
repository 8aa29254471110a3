// SPDX-License-Identifier: MIT
/*
 * ibv_modify_qp's READ/atomic depths. perftest asks for the peer's max_qp_rd_atom as
 * its initiator depth (128 against rxe): the compat layer uses the device's limit
 * instead, says so once on stderr, and ibv_query_qp reports what is used; READs beyond
 * that depth then wait their turn and all complete. The responder resources
 * (max_dest_rd_atomic) are never lowered behind the program's back: asking for more
 * than the device holds fails.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/rc_fixture.h"
#include "tests/unit/test_compat_fx.h"

#define NREADS	40	/* more than twice the device's depth of 16 */
#define RLEN	64

/* stderr into a temporary file between capture_begin() and capture_end(). */
struct capture {
	FILE *f;
	int saved;
};

static void capture_begin(struct capture *c)
{
	c->f = tmpfile();
	cr_assert_not_null(c->f);
	fflush(stderr);
	c->saved = dup(STDERR_FILENO);
	cr_assert_geq(c->saved, 0);
	cr_assert_geq(dup2(fileno(c->f), STDERR_FILENO), 0);
}

/* Return: what was written, NUL-terminated; free() it. */
static char *capture_end(struct capture *c)
{
	char *text = calloc(1, 8192);
	size_t n;

	cr_assert_not_null(text);
	fflush(stderr);
	cr_assert_geq(dup2(c->saved, STDERR_FILENO), 0);
	close(c->saved);
	rewind(c->f);
	n = fread(text, 1, 8191, c->f);
	text[n] = 0;
	fclose(c->f);
	return text;
}

static void logs_on(void)
{
	unsetenv("BLUE_LOG");
}

Test(compat_qp, initiator_depth_is_clamped_to_the_device, .init = logs_on)
{
	struct ibv_send_wr wr[NREADS], *bad = NULL;
	struct ibv_sge sge[NREADS];
	struct ibv_wc wc[NREADS];
	struct ibv_qp_init_attr ia;
	struct ibv_device_attr da;
	struct ibv_qp_attr qa;
	struct capture cap;
	struct cx_fx fx;
	char want[160], *err;
	int got = 0, i;

	cx_init_noqp(&fx);
	cr_assert_eq(ibv_query_device(fx.a.ctx, &da), 0);
	cr_assert_lt(da.max_qp_init_rd_atom, 128, "the test needs a depth below rxe's");
	fx.a.qp = cx_qp_create(&fx.a, 0);
	fx.b.qp = cx_qp_create(&fx.b, 0);
	fx.init_depth = 128;	/* what perftest asks for against rxe */
	/* and the responder resources it gives, its own device's (IBA 9.4.3: the
	 * initiator depth in use must not exceed them, or READs are refused) */
	fx.dest_depth = (uint8_t)da.max_qp_rd_atom;
	capture_begin(&cap);
	cx_connect(&fx);	/* asserts that RTR->RTS succeeds on both */
	err = capture_end(&cap);
	fputs(err, stderr);
	snprintf(want, sizeof(want), "QP 0x%x: max_rd_atomic 128 is more than the device "
		 "allows; using %d", fx.a.qp->qp_num, da.max_qp_init_rd_atom);
	cr_assert_not_null(strstr(err, want), "no notice '%s' in: %s", want, err);
	free(err);

	cr_assert_eq(ibv_query_qp(fx.a.qp, &qa, IBV_QP_MAX_QP_RD_ATOMIC |
				  IBV_QP_MAX_DEST_RD_ATOMIC, &ia), 0);
	cr_assert_eq(qa.max_rd_atomic, da.max_qp_init_rd_atom, "query says %u",
		     qa.max_rd_atomic);
	cr_assert_eq(qa.max_dest_rd_atomic, da.max_qp_rd_atom,
		     "the responder side is what was asked");

	/* more READs than the depth, posted at once: each completes with the bytes */
	/* a pattern that does not repeat every 256 bytes: a misplaced chunk shows */
	rc_fill(fx.b.buf, CX_BUF / 2, 401);
	memset(fx.a.buf, 0, CX_BUF);
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < NREADS; i++) {
		sge[i] = (struct ibv_sge){ (uintptr_t)fx.a.buf + (unsigned int)i * RLEN, RLEN,
					   fx.a.mr->lkey };
		wr[i].wr_id = 100 + (uint64_t)i;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_RDMA_READ;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].wr.rdma.remote_addr = (uintptr_t)fx.b.buf + (unsigned int)i * RLEN;
		wr[i].wr.rdma.rkey = fx.b.mr->rkey;
		wr[i].next = i + 1 < NREADS ? &wr[i + 1] : NULL;
	}
	cr_assert_eq(ibv_post_send(fx.a.qp, wr, &bad), 0);
	for (i = 0; i < 2000000 && got < NREADS; i++) {
		int n = ibv_poll_cq(ibv_cq_ex_to_cq(fx.a.cq), NREADS - got, wc + got);

		cr_assert_geq(n, 0);
		got += n;
		cr_assert_eq(ibv_poll_cq(ibv_cq_ex_to_cq(fx.b.cq), 0, NULL), 0);
	}
	cr_assert_eq(got, NREADS, "%d of %d READs completed", got, NREADS);
	for (i = 0; i < NREADS; i++) {
		cr_assert_eq(wc[i].status, IBV_WC_SUCCESS, "READ %d: %s", i,
			     ibv_wc_status_str(wc[i].status));
		cr_assert_eq(wc[i].wr_id, 100 + (uint64_t)i, "in order");
		cr_assert_eq(wc[i].opcode, IBV_WC_RDMA_READ);
	}
	cr_assert_arr_eq(fx.a.buf, fx.b.buf, NREADS * RLEN);
	cr_assert(rc_check(fx.a.buf, NREADS * RLEN, 401), "READ bytes out of place");
	cx_fini(&fx);
}

Test(compat_qp, responder_resources_are_not_clamped, .init = logs_on)
{
	struct ibv_qp_init_attr ia;
	struct ibv_device_attr da;
	struct ibv_qp_attr a;
	struct capture cap;
	struct cx_fx fx;
	char *err;

	cx_init_noqp(&fx);
	cr_assert_eq(ibv_query_device(fx.a.ctx, &da), 0);
	fx.a.qp = cx_qp_create(&fx.a, 0);
	fx.b.qp = cx_qp_create(&fx.b, 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_READ;
	cr_assert_eq(ibv_modify_qp(fx.a.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				   IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
	capture_begin(&cap);
	cr_assert_eq(cx_qp_rtr(&fx.a, &fx.b, 128), EINVAL);
	err = capture_end(&cap);
	fputs(err, stderr);
	cr_assert_not_null(strstr(err, "max_dest_rd_atomic 128"), "no reason given: %s", err);
	free(err);
	cr_assert_eq(ibv_query_qp(fx.a.qp, &a, IBV_QP_STATE, &ia), 0);
	cr_assert_eq(a.qp_state, IBV_QPS_INIT, "a refused modify changes nothing");
	/* the same at the device's limit is taken, and reported as given */
	cr_assert_eq(cx_qp_rtr(&fx.a, &fx.b, (uint8_t)da.max_qp_rd_atom), 0);
	cr_assert_eq(ibv_query_qp(fx.a.qp, &a, IBV_QP_MAX_DEST_RD_ATOMIC, &ia), 0);
	cr_assert_eq(a.max_dest_rd_atomic, da.max_qp_rd_atom);
	cx_fini(&fx);
}
