// SPDX-License-Identifier: MIT
/* One end of an RC test connection over a real netdev; see rc_end.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rc_end.h"
#include "tools/common/tool_common.h"

uint8_t rc_pat(uint64_t k, unsigned int seed)
{
	return (uint8_t)((k * 131u + seed * 17u + (k >> 8)) ^ (k >> 16) ^ seed);
}

void rc_fill(uint8_t *p, uint64_t base, uint32_t len, unsigned int seed)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = rc_pat(base + i, seed);
}

int64_t rc_mismatch(const uint8_t *p, uint64_t base, uint32_t len, unsigned int seed)
{
	for (uint32_t i = 0; i < len; i++)
		if (p[i] != rc_pat(base + i, seed))
			return i;
	return -1;
}

void rc_failf(struct rc_end *e, const char *fmt, ...)
{
	va_list ap;

	e->failures++;
	printf("FAIL ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

int rc_post_recv(struct rc_end *e, unsigned int slot)
{
	uint8_t *buf = e->rbuf + (size_t)slot * e->slot;
	struct blue_sge sge = { .addr = (uintptr_t)buf, .length = e->slot, .lkey = e->rmr->lkey };
	struct blue_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	memset(buf, 0xdd, e->slot);
	return blue_post_recv(e->qp, &wr, &bad);
}

int rc_post(struct rc_end *e, enum blue_wr_opcode op, uint64_t wr_id, void *addr, uint32_t len,
	    uint32_t imm, uint64_t raddr, uint32_t rkey, uint64_t cmp_add, uint64_t swap)
{
	struct blue_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = e->mr->lkey };
	struct blue_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = len ? 1 : 0,
		.opcode = op,
		.send_flags = BLUE_SEND_SIGNALED,
		.imm_data = htonl(imm),
	}, *bad;

	if (op == BLUE_WR_ATOMIC_CMP_AND_SWP || op == BLUE_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = cmp_add;
		wr.wr.atomic.swap = swap;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return blue_post_send(e->qp, &wr, &bad);
}

/* Take the first pending completion that the caller waits for into @out. */
static bool take_pending(struct rc_end *e, bool recv, uint64_t wr_id, struct blue_wc *out)
{
	for (unsigned int i = 0; i < e->npending; i++) {
		struct blue_wc *w = &e->pending[i];
		bool is_recv = w->opcode & BLUE_WC_RECV;

		if (is_recv == recv && (recv || w->wr_id == wr_id)) {
			*out = *w;
			memmove(w, w + 1, (e->npending - i - 1) * sizeof(*w));
			e->npending--;
			return true;
		}
	}
	return false;
}

int rc_wait_wc(struct rc_end *e, bool recv, uint64_t wr_id, struct blue_wc *out,
	       const char *what)
{
	uint64_t deadline = tool_now_ns() / 1000u + (uint64_t)e->timeout_ms * 1000u;
	struct blue_wc wc[16];
	int n;

	while (!take_pending(e, recv, wr_id, out)) {
		n = blue_poll_cq(e->cq, 16, wc);
		if (n < 0) {
			rc_failf(e, "%s: poll_cq: %s", what, strerror(-n));
			return -1;
		}
		for (int i = 0; i < n; i++) {
			if (e->npending == RC_PENDING_MAX) {
				rc_failf(e, "%s: more than %d unexpected completions", what,
					 RC_PENDING_MAX);
				return -1;
			}
			e->pending[e->npending++] = wc[i];
		}
		if (!n && tool_now_ns() / 1000u > deadline) {
			rc_failf(e, "%s: no completion within %d ms", what, e->timeout_ms);
			return -1;
		}
	}
	if (out->status != BLUE_WC_SUCCESS) {
		rc_failf(e, "%s: completion status %s (%d)", what,
			 blue_wc_status_str(out->status), out->status);
		return -1;
	}
	return 0;
}

int rc_wait_send(struct rc_end *e, uint64_t wr_id, const char *what)
{
	struct blue_wc wc;

	return rc_wait_wc(e, false, wr_id, &wc, what);
}

int rc_end_open(struct rc_end *e)
{
	size_t rlen = (size_t)e->nrecv * e->slot;
	struct blue_qp_init_attr qa = { 0 };
	struct blue_qp_attr ia = { 0 };

	e->ctx = e->queue >= 0 ? blue_open_device_queue(e->ifname, (unsigned int)e->queue)
			       : blue_open_device(e->ifname);
	if (!e->ctx) {
		printf("FAIL open_device %s: %s\n", e->ifname, strerror(errno));
		return -1;
	}
	e->pd = blue_alloc_pd(e->ctx);
	e->cq = e->pd ? blue_create_cq(e->ctx, e->cq_depth, NULL, NULL, 0) : NULL;
	e->rbuf = blue_buf_alloc(rlen, NULL);
	if (!e->cq || !e->rbuf || !e->mem) {
		printf("FAIL setup: PD, CQ or buffers: %s\n", strerror(errno));
		return -1;
	}
	e->mr = blue_reg_mr(e->pd, e->mem, e->mem_len, RC_ACCESS_ALL);
	e->rmr = blue_reg_mr(e->pd, e->rbuf, rlen, BLUE_ACCESS_LOCAL_WRITE);
	qa.send_cq = e->cq;
	qa.recv_cq = e->cq;
	qa.qp_type = BLUE_QPT_RC;
	qa.cap.max_send_wr = e->sq_depth;
	qa.cap.max_recv_wr = e->nrecv;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	e->qp = (e->mr && e->rmr) ? blue_create_qp(e->pd, &qa) : NULL;
	if (!e->qp) {
		printf("FAIL setup: MR or QP: %s\n", strerror(errno));
		return -1;
	}
	/* INIT now, so the receives are posted before the peer can send (IBA 10.3.1) */
	ia.qp_state = BLUE_QPS_INIT;
	ia.port_num = 1;
	ia.qp_access_flags = RC_ACCESS_ALL;
	if (blue_modify_qp(e->qp, &ia, BLUE_QP_STATE | BLUE_QP_PKEY_INDEX | BLUE_QP_PORT |
			   BLUE_QP_ACCESS_FLAGS)) {
		printf("FAIL modify_qp RESET -> INIT\n");
		return -1;
	}
	for (unsigned int i = 0; i < e->nrecv; i++)
		if (rc_post_recv(e, i)) {
			printf("FAIL post_recv\n");
			return -1;
		}
	return 0;
}

void rc_end_close(struct rc_end *e)
{
	int err;

	if (e->qp && (err = blue_destroy_qp(e->qp)))
		rc_failf(e, "destroy_qp: %s", strerror(err));
	if (e->mr && (err = blue_dereg_mr(e->mr)))
		rc_failf(e, "dereg_mr: %s", strerror(err));
	if (e->rmr && (err = blue_dereg_mr(e->rmr)))
		rc_failf(e, "dereg_mr: %s", strerror(err));
	if (e->cq && (err = blue_destroy_cq(e->cq)))
		rc_failf(e, "destroy_cq: %s", strerror(err));
	if (e->pd && (err = blue_dealloc_pd(e->pd)))
		rc_failf(e, "dealloc_pd: %s", strerror(err));
	if (e->ctx && (err = blue_close_device(e->ctx)))
		rc_failf(e, "close_device: %s", strerror(err));
	blue_buf_free(e->rbuf, (size_t)e->nrecv * e->slot);
	e->qp = NULL;
	e->mr = e->rmr = NULL;
	e->cq = NULL;
	e->pd = NULL;
	e->ctx = NULL;
	e->rbuf = NULL;
}

/* The server's side of the TCP rendezvous: the connected socket, or -1. */
static int cm_accept(struct rc_end *e)
{
	int lfd = blue_cm_listen(NULL, (uint16_t)e->port), fd;

	if (lfd < 0) {
		printf("FAIL cm listen on port %u: %s\n", e->port, blue_cm_last_error());
		return -1;
	}
	printf("READY qpn 0x%06x port %u\n", blue_qp_num(e->qp), e->port);
	fflush(stdout);
	fd = blue_cm_accept(lfd, e->timeout_ms);
	close(lfd);
	return fd;
}

int rc_end_connect(struct rc_end *e)
{
	struct blue_cm_qp_attr qa;
	int fd, err;

	if (blue_cm_info_from_qp(e->ctx, e->qp, 1, &e->local)) {
		printf("FAIL cm info: %s\n", blue_cm_last_error());
		return -1;
	}
	if (e->server)
		blue_cm_info_set_mr(&e->local, e->mr);
	fd = e->server ? cm_accept(e) : blue_cm_connect(e->host, (uint16_t)e->port, e->timeout_ms);
	if (fd < 0) {
		printf("FAIL cm connect/accept: %s\n", blue_cm_last_error());
		return -1;
	}
	err = blue_cm_exchange_qp(e->ctx, fd, &e->local, &e->remote, e->timeout_ms);
	close(fd);
	if (err) {
		printf("FAIL cm exchange: %s\n", blue_cm_last_error());
		return -1;
	}
	if (e->no_cm_mac)
		memset(e->remote.mac, 0, sizeof(e->remote.mac));
	if (!e->server && !e->remote.has_mr) {
		printf("FAIL cm exchange: the server sent no MR\n");
		return -1;
	}
	blue_cm_qp_attr_default(&qa);
	qa.access = RC_ACCESS_ALL;	/* only used from RESET: the QP is in INIT already */
	qa.max_rd_atomic = 4;
	qa.max_dest_rd_atomic = 4;
	if (blue_cm_connect_qp(e->ctx, e->qp, e->local.psn, &e->remote, &qa)) {
		printf("FAIL connect_qp: %s\n", blue_cm_last_error());
		return -1;
	}
	printf("ok connected: local qpn 0x%06x psn 0x%06x, peer qpn 0x%06x psn 0x%06x, "
	       "mtu %d\n", e->local.qpn, e->local.psn, e->remote.qpn, e->remote.psn,
	       blue_mtu_bytes(e->remote.mtu));
	fflush(stdout);
	return 0;
}
