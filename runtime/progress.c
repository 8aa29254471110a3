// SPDX-License-Identifier: MIT
/*
 * The progress engine (see progress.h). One pass:
 *   1. drain up to BLUE_RX_PASS frames from the context's HAL socket; parse each
 *      (ICRC and header checks: a bad frame is dropped and counted, never acted on);
 *      requests go to the QP's responder, responses to its completer;
 *   2. per QP: the completer's timers and deferred completions, the responder's queued
 *      responses, then the requester; a QP in ERROR is flushed instead;
 *   3. one doorbell (tx_flush) for everything the pass queued, unless a full batch
 *      forced one earlier; a pass that queued nothing but plain ACKs may hold them over
 *      to the next pass's doorbell instead (ack_hold()).
 * Time is read once per pass (CLOCK_MONOTONIC); timers fire only here.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "runtime/cc_wire.h"
#include "runtime/cq.h"
#include "runtime/device.h"
#include "runtime/events.h"
#include "runtime/log.h"
#include "runtime/gsi_hub.h"
#include "runtime/loopback.h"
#include "runtime/probes.h"
#include "runtime/progress.h"
#include "runtime/qp.h"
#include "runtime/tenant.h"
#include "runtime/tune.h"

uint64_t blue__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const struct blue_engine_stats *blue__engine_stats(struct blue_context *ctx)
{
	return &ctx->eng.st;
}

/* ---- TX ------------------------------------------------------------------------- */

static void tx_submit(struct blue_context *ctx)
{
	struct blue_engine *eng = &ctx->eng;
	unsigned int done = 0;
	bool kicked = false;
	int n;

	while (done < eng->nbatch) {
		n = blue_hal_tx_submit(ctx->sock, eng->batch + done, eng->nbatch - done);
		if (n > 0) {
			done += (unsigned int)n;
			eng->submitted = true;
			kicked = false;
			continue;
		}
		if (n == 0 && !kicked) {
			/* the TX ring is full: ring the doorbell to drain it, then retry */
			blue_hal_tx_flush(ctx->sock);
			eng->submitted = false;
			kicked = true;
			continue;
		}
		/* refused, or still full after a kick: the frames are lost, and the
		 * transport's retransmission covers them like any loss on the wire */
		blue_hal_tx_free(ctx->hal, eng->batch + done, eng->nbatch - done);
		eng->st.tx_dropped += eng->nbatch - done;
		break;
	}
	eng->nbatch = 0;
}

/*
 * Queue the ACKs the last pass held (ack_hold()) behind what this pass queued so far.
 * Done before this pass queues a response of its own, so that a QP's responses still
 * leave in the order they were built (a later ACK never overtakes an earlier one).
 */
static void dack_release(struct blue_context *ctx)
{
	struct blue_engine *eng = &ctx->eng;

	if (eng->nbatch + eng->ndack > BLUE_TX_BATCH)
		tx_submit(ctx);
	memcpy(eng->batch + eng->nbatch, eng->dack, eng->ndack * sizeof(eng->dack[0]));
	eng->nbatch += eng->ndack;
	eng->ndack = 0;
	eng->pass_released = true;	/* never held twice: this pass rings for them */
	if (eng->nbatch == BLUE_TX_BATCH)
		tx_submit(ctx);
}

bool blue__tx_room(struct blue_context *ctx)
{
	struct blue_engine *eng = &ctx->eng;
	unsigned int want;
	int n;

	if (!eng->budget)
		return false;
	if (eng->nstash)
		return true;
	/*
	 * The stash grows from a few frames to a batch within a pass: what a pass does not
	 * use goes back at its end, and a pass that sends one packet (a ping-pong's, an
	 * ACK's) should not take and return a whole batch of frames.
	 */
	want = eng->stash_want;
	if (want < BLUE_TX_STASH_MIN)
		want = BLUE_TX_STASH_MIN;
	eng->stash_want = want * 2 < BLUE_TX_BATCH ? want * 2 : BLUE_TX_BATCH;
	n = blue_hal_tx_alloc(ctx->hal, eng->stash, want);
	if (n <= 0 && (eng->nbatch || eng->submitted || eng->ndack)) {
		/* frames are tied up in our own queue: send it, then ask again */
		if (eng->ndack)
			dack_release(ctx);
		if (eng->nbatch)
			tx_submit(ctx);
		blue_hal_tx_flush(ctx->sock);
		eng->submitted = false;
		n = blue_hal_tx_alloc(ctx->hal, eng->stash, want);
	}
	if (n <= 0) {
		eng->st.tx_no_frame++;
		return false;
	}
	eng->nstash = (unsigned int)n;
	return true;
}

int blue__tx_pkt(struct blue_context *ctx, const struct blue_pkt *p)
{
	struct blue_engine *eng = &ctx->eng;
	struct blue_frame *f;
	int len;

	if (!blue__tx_room(ctx))
		return -EAGAIN;
	f = &eng->stash[eng->nstash - 1];
	len = blue_pkt_build(p, f->data, ctx->hal->max_pkt);
	if (len < 0) {
		blue__logf("cannot build a packet (opcode 0x%02x, PSN 0x%x, %u bytes): %s",
			   p->opcode, p->psn, p->payload_len, strerror(-len));
		return len;
	}
	f->len = (uint32_t)len;
	if (p->opcode != BLUE_OP_RC_ACKNOWLEDGE ||
	    (p->aeth.syndrome & BLUE_AETH_TYPE_MASK) != BLUE_AETH_ACK)
		eng->pass_other++;
	eng->nstash--;
	eng->budget--;
	eng->st.tx_frames++;
	/* to a group this device has attached: the wire's copy, and ours next pass */
	if (p->dqpn == BLUE_MCAST_QPN)
		blue__loopback_mcast(ctx, p, f);
	/* for this device itself (a QP connected to one of ours): received next pass */
	if (blue__loopback_dst(ctx, p)) {
		if (blue__loopback_push(&ctx->lb, f)) {
			blue_hal_tx_free(ctx->hal, f, 1);
			eng->st.tx_dropped++;
		} else {
			eng->st.tx_loopback++;
		}
		return 0;
	}
	if (eng->ndack && (blue_opcode_flags(p->opcode) & BLUE_OPF_RESPONSE))
		dack_release(ctx);
	eng->batch[eng->nbatch++] = *f;
	if (eng->nbatch == BLUE_TX_BATCH)
		tx_submit(ctx);
	return 0;
}

/* The frames the pass took for packets and did not use go back to the HAL. */
static void stash_return(struct blue_engine *eng, struct blue_context *ctx)
{
	if (eng->nstash) {
		blue_hal_tx_free(ctx->hal, eng->stash, eng->nstash);
		eng->nstash = 0;
	}
}

void blue__tx_flush(struct blue_context *ctx)
{
	struct blue_engine *eng = &ctx->eng;

	/* the held ACKs go after this pass's requests: the peer sees those first */
	if (eng->ndack)
		dack_release(ctx);
	if (eng->nbatch)
		tx_submit(ctx);
	if (eng->submitted) {
		blue_hal_tx_flush(ctx->sock);
		eng->submitted = false;
	}
	stash_return(eng, ctx);
}

int blue__qp_tx(struct blue_qp *qp, const struct blue_pkt *p)
{
	bool req = blue_opcode_flags(p->opcode) & BLUE_OPF_REQUEST;
	int err;

	/* pacing (cc_gate.c): requests only; an unpaced QP pays one predictable branch */
	if (req && qp->live->rate_mbps && !blue__cc_gate_open(qp))
		return -EAGAIN;
	/* blue-manager: the tenant's share of the pass and its rate (tenant_sched.c) */
	if (req && qp->tenant && blue__sched_tx(qp, p))
		return -EAGAIN;
	err = blue__tx_pkt(qp->ctx, p);
	if (err)
		return err == -EAGAIN ? err : -EAGAIN;
	qp->live->tx_pkts++;
	qp->live->tx_bytes += p->payload_len;
	if (req)
		blue__cc_sent(qp, p);
	if (req && qp->tenant)
		blue__sched_sent(qp, p);
	return 0;
}

/* ---- RX ------------------------------------------------------------------------- */

/* Is @p from the peer of connected @qp, its source address the QP's destination GID? */
static bool from_peer(const struct blue_qp *qp, const struct blue_pkt *p)
{
	uint8_t sgid[16];

	blue_pkt_sgid(p, sgid);
	return !memcmp(sgid, qp->ah.dgid.raw, 16);
}

/*
 * A frame for a UD QP: no peer to check the source against (a datagram QP hears from
 * anyone who knows its QPN and Q_Key), and only the UD SEND opcodes (IBA 9.8.3; rxe's
 * check_type_state). A CNP needs no answer from a QP that does no congestion control.
 */
static void rx_ud(struct blue_context *ctx, struct blue_qp *qp, const struct blue_frame *f,
		  const struct blue_pkt *p)
{
	if (p->opcode != BLUE_OP_UD_SEND_ONLY && p->opcode != BLUE_OP_UD_SEND_ONLY_IMM) {
		if (p->opcode == BLUE_OP_CNP)
			ctx->eng.st.rx_cnp++;
		else
			ctx->eng.st.rx_wrong_transport++;
		return;
	}
	blue__resp_ud_rx(qp, p, f->data + p->l3_off);
}

/*
 * A datagram to a group (DestQP 0xFFFFFF): a copy to every UD QP of the context that is
 * attached to it (IBA 10.5.2; rxe_rcv_mcast_pkt), each with its own checks: the P_Key
 * (XDP checked no QP's), then rx_ud's opcode, state, Q_Key and receive WQE. A group no
 * QP holds any more (detached while the frame was on its way) is dropped and counted.
 */
static void rx_mcast(struct blue_context *ctx, const struct blue_frame *f,
		     const struct blue_pkt *p)
{
	const struct blue_mcast_grp *g;
	uint8_t dgid[16];
	unsigned int i;

	blue_pkt_dgid(p, dgid);
	g = blue__mcast_find(ctx, dgid);
	if (!g) {
		ctx->eng.st.rx_mcast_no_group++;
		return;
	}
	for (i = 0; i < g->nqp; i++) {
		if (!blue_pkey_match(p->pkey, g->qp[i]->live->pkey)) {
			ctx->eng.st.rx_mcast_bad_pkey++;
			continue;
		}
		ctx->eng.st.rx_mcast_copies++;
		rx_ud(ctx, g->qp[i], f, p);
	}
}

/* A request for a UC QP: its own SEND/WRITE opcodes only (IBA table 36; rxe check_type_state). */
static void rx_uc(struct blue_context *ctx, struct blue_qp *qp, const struct blue_pkt *p)
{
	if (p->opcode < BLUE_OP_UC_SEND_FIRST || p->opcode > BLUE_OP_UC_WRITE_ONLY_IMM)
		ctx->eng.st.rx_wrong_transport++;
	else
		blue__resp_uc_rx(qp, p);
}

void blue__rx_frame(struct blue_context *ctx, const struct blue_frame *f)
{
	struct blue_engine_stats *st = &ctx->eng.st;
	struct blue_qp *qp;
	struct blue_pkt p;
	uint32_t fl;

	st->rx_frames++;
	if (blue_pkt_parse(f->data, f->len, &p)) {
		st->parse_err[p.parse_err < BLUE_PARSE_ERR_MAX ? p.parse_err : 0]++;
		if (p.parse_err == BLUE_PARSE_BAD_ICRC)
			st->rx_bad_icrc++;
		else
			st->rx_malformed++;
		return;
	}
	if (p.dqpn == BLUE_MCAST_QPN) {
		rx_mcast(ctx, f, &p);
		return;
	}
	if (p.dqpn == BLUE_GSI_SLOT && ctx->gsi_hub)
		qp = blue__gsi_pick(ctx->gsi_hub, &p);	/* one process's CM agent */
	else
		qp = ctx->qp_by_slot[blue_qpn_slot(p.dqpn)];
	/* by the QPN it is known by: a member of the shared GSI takes only what the hub
	 * hands it, nothing sent to its own slot */
	if (!qp || blue__qp_wire_qpn(qp) != p.dqpn) {
		st->rx_no_qp++;
		return;
	}
	if (qp->tenant) {
		qp->tenant->use.rx_pkts++;
		qp->tenant->use.rx_bytes += p.payload_len;
	}
	if (qp->type == BLUE_QPT_UD) {
		rx_ud(ctx, qp, f, &p);
		return;
	}
	/* a connected QP talks to one peer: anything else is not for it (rxe check_addr) */
	if (!from_peer(qp, &p)) {
		st->rx_bad_src++;
		return;
	}
	fl = blue_opcode_flags(p.opcode);
	if (qp->type == BLUE_QPT_UC && p.opcode != BLUE_OP_CNP) {
		rx_uc(ctx, qp, &p);
		return;
	}
	if (p.opcode == BLUE_OP_CNP) {
		/* congestion notification for this QP's sends (annex A17.9.3) */
		st->rx_cnp++;
		qp->live->cnp_rcvd++;
		BLUE_PROBE3(cnp, qp->qpn, p.saddr, p.psn);
		blue__cc_cnp_rx(qp);
		return;
	}
	if (p.opcode > BLUE_OP_RC_ATOMIC_WRITE) {	/* RC opcodes are 0x00-0x1f; UD to RC too */
		st->rx_wrong_transport++;
		return;
	}
	if ((p.tos & BLUE_ECN_MASK) == BLUE_ECN_CE)
		blue__cc_ce_rx(qp, &p);	/* a switch on the way is congested (cc_ecn.c) */
	if (fl & BLUE_OPF_REQUEST)
		blue__resp_rx(qp, &p);
	else if (fl & BLUE_OPF_RESPONSE)
		blue__comp_rx(qp, &p);
}

/*
 * The headers of the frame after the one being handled: Eth/IPv4/UDP/BTH and the
 * extended headers fit in the first two cache lines. In copy mode the kernel wrote the
 * frame into the UMEM on the CPU that ran the receive NAPI (on veth, the sender's), so
 * the lines are usually in another core's cache; asking for them one frame ahead
 * overlaps that miss with the work on the current frame.
 */
static inline void rx_prefetch(const struct blue_frame *f)
{
	__builtin_prefetch(f->data);
	__builtin_prefetch(f->data + BLUE_CACHELINE);
}

static unsigned int rx_drain(struct blue_context *ctx)
{
	struct blue_frame f[BLUE_RX_BURST];
	unsigned int got = 0;
	int n, i;

	while (got < BLUE_RX_PASS) {
		n = blue_hal_rx_burst(ctx->sock, f, BLUE_RX_BURST, 0);
		if (n <= 0)
			break;
		ctx->eng.st.rx_batches++;
		rx_prefetch(&f[0]);
		for (i = 0; i < n; i++) {
			if (i + 1 < n)
				rx_prefetch(&f[i + 1]);
			blue__rx_frame(ctx, &f[i]);
		}
		blue_hal_rx_release(ctx->hal, f, (unsigned int)n);
		got += (unsigned int)n;
		if (n < BLUE_RX_BURST)
			break;
	}
	return got;
}

/* ---- the pass ------------------------------------------------------------------- */

/*
 * Whether to hold this pass's frames, all plain ACKs, for the next pass's doorbell.
 *
 * In copy mode a doorbell (sendto) runs the peer's whole receive path for every frame
 * it carries, so it costs microseconds; rung at the end of the pass that received a
 * request, the ACK's doorbell delays the moment the application sees the request's
 * effect (blue_poll_cq returns after the pass), and an application that answers (a
 * ping-pong) pays it on every half trip. Held over, the ACK leaves with the next pass's
 * doorbell, behind the answer. An ACK covers every earlier PSN (IBA 9.7.5.1.1: the
 * responder may coalesce them), so a late one loses nothing.
 *
 * Bounded: the next pass always rings (held ACKs are never held twice), and a held ACK
 * counts as work in the return value, so a caller that loops while progress() > 0
 * (blue_get_cq_event, compat's progress thread) makes that pass at once. No timer can
 * ring for an application that stops calling in, so ACKs are held only when the next
 * pass is due soon:
 *  - some QP of the context has send WRs outstanding: the application polls for their
 *    completions;
 *  - or the application posted sends since the last pass that sent ACKs: it answers
 *    what arrives (a ping-pong), and will poll for the answer's completion.
 * A receiver that only receives (a WRITE sink, a READ target) never holds: its
 * application may stop polling as soon as the data is in while the peer waits for the
 * ACK. blue_destroy_qp and blue_close_device ring too. BLUE_ACK_DEFER=0 switches this
 * off.
 */
static bool ack_hold(struct blue_context *ctx, bool sq_busy)
{
	struct blue_engine *eng = &ctx->eng;
	uint64_t posts;
	bool answering;

	if (!eng->defer_acks || eng->pass_other || !eng->nbatch ||
	    eng->submitted || eng->ndack || eng->pass_released)
		return false;
	posts = __atomic_load_n(&eng->posts, __ATOMIC_RELAXED);
	answering = posts != eng->posts_seen;
	eng->posts_seen = posts;
	if (!sq_busy && !answering)
		return false;
	memcpy(eng->dack, eng->batch, eng->nbatch * sizeof(eng->batch[0]));
	eng->ndack = eng->nbatch;
	eng->nbatch = 0;
	stash_return(eng, ctx);
	eng->st.ack_deferred++;
	return true;
}

/* What a walk over the QPs gathers: the next deadline, whether a send queue has work. */
struct walk {
	uint64_t next;
	bool sq_busy;
};

/* One QP's turn in a pass: its completer, timers, responder and requester. */
static void qp_step(struct blue_context *ctx, struct blue_qp *qp, struct walk *w)
{
	struct blue_engine *eng = &ctx->eng;
	struct blue_qp_ctx *live = qp->live;

	if (qp->type == BLUE_QPT_UD) {
		/* no ACKs, timers or congestion control: the requester only */
		blue__req_ud_run(qp);
	} else if (qp->type == BLUE_QPT_UC) {
		blue__req_uc_run(qp);	/* the same: UC is never acknowledged */
	} else {
		blue__comp_run(qp, eng->now_ns);
		blue__cc_run(qp, eng->now_ns);
		blue__resp_tx(qp);
		blue__req_run(qp);
	}
	if (live->state == BLUE_QPS_ERR)
		blue__qp_flush(qp);
	live->outstanding = blue__sq_count(qp);
	if (live->outstanding && live->state != BLUE_QPS_ERR)
		w->sq_busy = true;
	if (live->timer_deadline_ns && (!w->next || live->timer_deadline_ns < w->next))
		w->next = live->timer_deadline_ns;
	w->next = blue__cc_deadline(qp, w->next, eng->now_ns);
}

/*
 * The pass's walk over all @nqp QPs from @first, round the list; with @klass >= 0
 * only the QPs of tenants of that class (blue-manager: tenant_sched.c).
 */
static void qp_walk(struct blue_context *ctx, struct blue_qp *qp, unsigned int nqp, int klass,
		    struct walk *w)
{
	for (unsigned int i = 0; i < nqp; i++, qp = qp->next ? qp->next : ctx->qps)
		if (klass < 0 || (qp->tenant ? (int)qp->tenant->lim.klass : BLUE_CLASS_NORMAL) ==
				 klass)
			qp_step(ctx, qp, w);
}

int blue__progress(struct blue_context *ctx)
{
	struct blue_engine *eng = &ctx->eng;
	struct walk w = { 0 };
	uint64_t next, tx0;
	unsigned int got, nqp = 0, start, i;
	struct blue_qp *first = NULL;
	int k;

	if (eng->running)
		return 0;	/* called back from inside a pass: the pass is doing it */
	eng->running = true;
	eng->pass_other = 0;
	eng->pass_released = false;
	eng->stash_want = BLUE_TX_STASH_MIN;
	eng->now_ns = blue__now_ns();
	eng->budget = BLUE_TX_PASS;
	eng->st.passes++;
	tx0 = eng->st.tx_frames;
	blue__tune_check(ctx, &ctx->obs);	/* bluectl set: one word per pass */
	blue__events_port_check(ctx, eng->now_ns);	/* one ioctl per 100 ms at most */

	got = rx_drain(ctx);
	/* what the last pass sent to this device itself, before this pass sends more */
	got += blue__loopback_drain(ctx);
	/*
	 * The TX budget is shared, so the walk starts one QP further on each pass: from a
	 * fixed head, QPs at the tail of a long list starved behind a READ backlog for
	 * longer than their peers' ACK timeout (256 QPs of 64 KiB READs hit
	 * RETRY_EXC_ERR at a 67 ms timeout).
	 */
	nqp = ctx->nqp;	/* the length of ctx->qps */
	if (nqp) {
		start = eng->rotor++ % nqp;
		for (first = ctx->qps, i = 0; i < start; i++)
			first = first->next;
	}
	if (!ctx->tenants) {
		qp_walk(ctx, first, nqp, -1, &w);
	} else {
		/* blue-manager: strict priority between the classes, shares within one */
		blue__sched_begin(ctx);
		for (k = 0; k < BLUE_CLASS_COUNT; k++)
			qp_walk(ctx, first, nqp, k, &w);
		if (eng->share_held && eng->budget) {
			eng->share_lifted = true;	/* what is left of the pass, for anyone */
			for (k = 0; k < BLUE_CLASS_COUNT; k++)
				qp_walk(ctx, first, nqp, k, &w);
		}
		eng->share_held = false;
	}
	next = w.next;
	if (!ack_hold(ctx, w.sq_busy))
		blue__tx_flush(ctx);
	__atomic_store_n(&eng->next_ns, next, __ATOMIC_RELAXED);	/* compat's thread */
	blue__channels_timer(ctx, next);
	/* dev_stats for other processes: a copy every BLUE_DEV_PUBLISH_NS, not per event */
	if (eng->now_ns >= ctx->obs.next_publish_ns)
		blue__obs_publish(ctx);
	eng->running = false;
	return (int)(got + (unsigned int)(eng->st.tx_frames - tx0) + eng->ndack);
}
