// SPDX-License-Identifier: MIT
/*
 * The CM agent of one device (agent.h): QP1 through our libibverbs, the IB CM endpoint
 * (runtime/ibcm.h) and the thread that feeds it. Written from agent.h, IBA 13.5 (the
 * GSI) and the rxe/RoCEv2 GRH layout (annex A17.4.5.2); nothing copied.
 *
 * Steps, as named functions: agent_verbs_open (PD, channel, CQ, buffers, QP1 to RTS:
 * agent_qp.c), agent_cm_open, agent_thread (agent_reap -> agent_rx -> tick -> sleep);
 * agent_send is the IB CM's send op (address handles: agent_ah.c). Teardown mirrors it
 * (agent_free). The files' shared parts: agent_priv.h.
 *
 * Environment (for tests and people):
 *   BLUE_RDMACM_STATS=1         print the agent's and its IB CM's counters at the last
 *                               cma_agent_put and at exit (stderr, one line each)
 *   BLUE_RDMACM_CM_TIMEOUT=T    the CM response timeout exponent (4.096 us * 2^T) this
 *                               side asks for and waits, 0..31; default 20 (the kernel's)
 *   BLUE_RDMACM_CM_RETRIES=N    CM retries before TIMEOUT, 1..15; default 15
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/random.h>

#include "compat/rdmacm/agent_priv.h"
#include "runtime/thread.h"

static struct cma_agent *agents;		/* under the lock */
static bool atexit_done;

/* ---- counters ------------------------------------------------------------------ */

static void agent_stats_print(struct cma_agent *a)
{
	const struct blue_ibcm_stats *s = a->cm ? blue__ibcm_stats(a->cm) : NULL;
	char dec[512] = "";
	size_t off = 0;
	int i;

	if (a->stats_printed)
		return;
	a->stats_printed = true;
	fprintf(stderr, "librdmacm: agent %s: rx_mads=%llu rx_short=%llu rx_long=%llu "
		"rx_bad_grh=%llu rx_err=%llu qp_resets=%llu tx_mads=%llu tx_err=%llu ah_err=%llu\n",
		a->name,
		(unsigned long long)a->st.rx_mads, (unsigned long long)a->st.rx_short,
		(unsigned long long)a->st.rx_long, (unsigned long long)a->st.rx_bad_grh,
		(unsigned long long)a->st.rx_err, (unsigned long long)a->st.qp_resets,
		(unsigned long long)a->st.tx_mads,
		(unsigned long long)a->st.tx_err, (unsigned long long)a->st.ah_err);
	if (!s)
		return;
	for (i = 1; i < BLUE_IBCM_ERR_MAX && off < sizeof(dec); i++)
		off += (size_t)snprintf(dec + off, sizeof(dec) - off, " decode.%s=%llu",
					blue__ibcm_err_str((enum blue_ibcm_err)i),
					(unsigned long long)s->decode[i]);
	fprintf(stderr, "librdmacm: ibcm %s: rx=%llu tx=%llu tx_err=%llu no_conn=%llu "
		"wrong_state=%llu unhandled=%llu dup_req=%llu no_listener=%llu stale_conn=%llu "
		"table_full=%llu retransmits=%llu timeouts=%llu req_dropped=%llu%s\n", a->name,
		(unsigned long long)s->rx,
		(unsigned long long)s->tx, (unsigned long long)s->tx_err,
		(unsigned long long)s->no_conn, (unsigned long long)s->wrong_state,
		(unsigned long long)s->unhandled, (unsigned long long)s->dup_req,
		(unsigned long long)s->no_listener, (unsigned long long)s->stale_conn,
		(unsigned long long)s->table_full,
		(unsigned long long)s->retransmits, (unsigned long long)s->timeouts,
		(unsigned long long)s->req_dropped, dec);
}

static bool stats_wanted(void)
{
	const char *v = getenv("BLUE_RDMACM_STATS");

	return v && *v && strcmp(v, "0") != 0;
}

/* at exit, the agents nobody put: counters are read without the lock (a last look) */
static void agents_at_exit(void)
{
	struct cma_agent *a;

	for (a = agents; a; a = a->next)
		agent_stats_print(a);
}

const struct cma_agent_stats *cma_agent_stats(const struct cma_agent *a)
{
	return &a->st;
}

struct blue_ibcm *cma_agent_ibcm(struct cma_agent *a)
{
	return a->cm;
}

int cma_agent_listen(struct cma_agent *a, uint64_t service_id, bool on)
{
	int err;

	if (!on) {
		(void)blue_compat_gsi_listen(a->qp, service_id, 0);
		return blue__ibcm_unlisten(a->cm, service_id);
	}
	err = blue_compat_gsi_listen(a->qp, service_id, 1);
	if (err)
		return err;
	err = blue__ibcm_listen(a->cm, service_id);
	if (err == -EADDRINUSE)
		return 0;	/* another id of this process listens on it already */
	if (err)
		(void)blue_compat_gsi_listen(a->qp, service_id, 0);
	return err;
}

/* ---- the IB CM's ops ------------------------------------------------------------- */

/* ops.send: one MAD on QP1 to the peer's QP1 (Q_Key 0x80010000), from the send ring. */
static int agent_send(void *ctx, const uint8_t mad[BLUE_IBCM_MAD_SIZE],
		      const struct blue_ibcm_addr *to)
{
	struct cma_agent *a = ctx;
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_sge sge;
	struct ibv_ah *ah;
	unsigned int i;
	int err;

	if (a->tx_posted - a->tx_done >= AGENT_NSEND) {
		a->st.tx_err++;
		cma_log("agent %s: %u MADs in flight, the send ring is full", a->name,
			AGENT_NSEND);
		return -ENOBUFS;
	}
	err = agent_ah(a, to->gid, &ah, true);
	if (err)
		return err;
	i = (unsigned int)(a->tx_posted % AGENT_NSEND);
	memcpy(sbuf(a, i), mad, BLUE_IBCM_MAD_SIZE);
	sge.addr = (uintptr_t)sbuf(a, i);
	sge.length = BLUE_IBCM_MAD_SIZE;
	sge.lkey = a->mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = WR_SEND | i;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = CMA_GSI_QPN;
	wr.wr.ud.remote_qkey = CMA_GSI_QKEY;
	err = ibv_post_send(a->qp, &wr, &bad);
	if (err) {
		a->st.tx_err++;
		cma_log("agent %s: posting a MAD on QP1 failed: %s", a->name, strerror(err));
		return -err;
	}
	a->tx_posted++;
	a->st.tx_mads++;
	return 0;
}

static void agent_event(void *ctx, struct blue_ibcm_conn *conn, enum blue_ibcm_event type,
			const struct blue_ibcm_msg *msg)
{
	struct cma_agent *a = ctx;

	cma_ibcm_event(a->dev, conn, type, msg);
}

/*
 * Until compat/rdmacm/conn.c defines it (a strong definition wins), the IB CM's events
 * go nowhere: no listener exists without it, so a REQ is answered REJ 8 by the IB CM.
 */
__attribute__((weak)) void cma_ibcm_event(struct cma_dev *dev, struct blue_ibcm_conn *conn,
					  enum blue_ibcm_event type,
					  const struct blue_ibcm_msg *msg)
{
	(void)dev;
	(void)conn;
	(void)msg;
	cma_log("IB CM event %s dropped: no rdma_cm consumer in this build",
		blue__ibcm_event_str(type));
}

/* poll()'s timeout for a deadline @next (0: none), at most AGENT_SLEEP_MS. */
static int agent_sleep_ms(uint64_t now, uint64_t next)
{
	uint64_t ms;

	if (!next)
		return AGENT_SLEEP_MS;
	if (next <= now)
		return 0;
	ms = (next - now + 999999) / 1000000;
	return ms > AGENT_SLEEP_MS ? AGENT_SLEEP_MS : (int)ms;
}

static void agent_free(struct cma_agent *a);

static void *agent_thread(void *arg)
{
	struct cma_agent *a = arg;
	struct pollfd pfd[2];
	uint64_t now, next;
	struct ibv_cq *cq;
	void *cq_ctx;
	bool more;
	uint64_t v;

	for (;;) {
		cma_lock();
		if (a->stop && a->freed_by_thread) {
			/* the last put came from this thread (an IB CM event's consumer): it
			 * could not join itself, so the thread frees the agent and goes */
			if (stats_wanted())
				agent_stats_print(a);
			pthread_detach(pthread_self());
			agent_free(a);
			cma_unlock();
			break;
		}
		if (a->stop) {
			cma_unlock();
			break;
		}
		more = agent_reap(a);
		now = cma_now_ns();
		next = blue__ibcm_tick(a->cm, now);
		cma_unlock();
		if (more) {
			sched_yield();	/* a waiting API call may take the lock now */
			continue;
		}
		pfd[0].fd = a->ch->fd;
		pfd[0].events = POLLIN;
		pfd[1].fd = a->efd;
		pfd[1].events = POLLIN;
		if (poll(pfd, 2, agent_sleep_ms(now, next)) <= 0)
			continue;
		if ((pfd[0].revents & POLLIN) && ibv_get_cq_event(a->ch, &cq, &cq_ctx) == 0)
			ibv_ack_cq_events(cq, 1);
		if (pfd[1].revents & POLLIN)
			(void)!read(a->efd, &v, sizeof(v));
	}
	return NULL;
}

void cma_agent_kick(struct cma_agent *a)
{
	uint64_t one = 1;

	if (a && a->efd >= 0)
		(void)!write(a->efd, &one, sizeof(one));
}

/* ---- making and freeing ------------------------------------------------------------ */

static int agent_verbs_open(struct cma_agent *a)
{
	struct ibv_qp_init_attr qa;
	size_t len = (size_t)AGENT_NRECV * AGENT_RBUF + (size_t)AGENT_NSEND * BLUE_IBCM_MAD_SIZE;
	unsigned int i;
	int err;

	a->pd = ibv_alloc_pd(a->dev->verbs);
	a->ch = a->pd ? ibv_create_comp_channel(a->dev->verbs) : NULL;
	/* (w-ud) non-blocking: the channel's fd is readable for any of the engine's
	 * traffic (the application's QPs too), so poll() saying POLLIN does not mean a
	 * QP1 event; a blocking ibv_get_cq_event then sleeps until the next QP1 event and
	 * cma_agent_put's join hangs (udaddy's teardown, after its UD traffic) */
	if (a->ch && fcntl(a->ch->fd, F_SETFL, fcntl(a->ch->fd, F_GETFL) | O_NONBLOCK))
		cma_log("agent %s: completion channel fd %d: O_NONBLOCK: %s", a->name,
			a->ch->fd, strerror(errno));
	a->cq = a->ch ? ibv_create_cq(a->dev->verbs, AGENT_NRECV + AGENT_NSEND, a, a->ch, 0) :
			NULL;
	a->mem = a->cq ? calloc(1, len) : NULL;
	a->mr = a->mem ? ibv_reg_mr(a->pd, a->mem, len, IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!a->mr) {
		err = errno ? errno : ENOMEM;
		cma_log("agent %s: cannot make QP1's %s: %s", a->name,
			!a->pd ? "PD" : !a->ch ? "completion channel" : !a->cq ? "CQ" :
			!a->mem ? "buffers" : "MR", strerror(err));
		return -err;
	}
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = a->cq;
	qa.recv_cq = a->cq;
	qa.qp_type = IBV_QPT_UD;
	qa.cap.max_send_wr = AGENT_NSEND;
	qa.cap.max_recv_wr = AGENT_NRECV;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	a->qp = blue_compat_create_gsi_qp(a->pd, &qa);
	if (!a->qp) {
		err = errno ? errno : ENOMEM;
		if (err == EADDRINUSE)
			cma_log("agent %s: QP1 (the GSI) belongs to another process: one process "
				"per device runs rdma_cm over blue", a->name);
		else
			cma_log("agent %s: cannot make QP1: %s", a->name, strerror(err));
		return -err;
	}
	err = agent_qp_up(a);
	if (err)
		return err;
	for (i = 0; i < AGENT_NRECV; i++) {
		err = agent_recv_post(a, i);
		if (err) {
			cma_log("agent %s: cannot post QP1's receive buffers: %s", a->name,
				strerror(err));
			return -err;
		}
	}
	return 0;
}

/* An environment knob in [lo, hi], else 0 (the IB CM's default) after a message. */
static uint8_t env_knob(const char *name, unsigned int lo, unsigned int hi)
{
	const char *v = getenv(name);
	char *end;
	unsigned long x;

	if (!v || !*v)
		return 0;
	x = strtoul(v, &end, 0);
	if (*end || x < lo || x > hi) {
		cma_log("%s=%s: not a number in %u..%u, the default is used", name, v, lo, hi);
		return 0;
	}
	return (uint8_t)x;
}

static int agent_cm_open(struct cma_agent *a)
{
	struct blue_ibcm_cfg cfg;
	uint32_t seed;

	memset(&cfg, 0, sizeof(cfg));
	cfg.ops.send = agent_send;
	cfg.ops.event = agent_event;
	cfg.ctx = a;
	memcpy(cfg.local_gid, a->dev->gid[a->dev->gid_cm].raw, 16);
	cfg.local_ca_guid = be64toh(a->dev->guid);
	cfg.max_conns = AGENT_MAX_CONNS;
	cfg.cm_response_timeout = env_knob("BLUE_RDMACM_CM_TIMEOUT", 0, 31);
	cfg.max_cm_retries = env_knob("BLUE_RDMACM_CM_RETRIES", 1, 15);
	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed))
		seed = (uint32_t)getpid() ^ (uint32_t)cma_now_ns();
	cfg.seed = seed;
	/* daemon mode: QP1 is shared, the daemon hands us replies by this byte */
	cfg.id_prefix = (uint8_t)blue_compat_gsi_id_prefix(a->qp);
	a->cm = blue__ibcm_create(&cfg);
	if (!a->cm) {
		cma_log("agent %s: cannot make the IB CM endpoint: %s", a->name, strerror(errno));
		return -errno;
	}
	return 0;
}

/* Everything made, in reverse; the thread is stopped. Under the lock. */
static void agent_free(struct cma_agent *a)
{
	struct cma_agent **pp;

	for (pp = &agents; *pp; pp = &(*pp)->next) {
		if (*pp == a) {
			*pp = a->next;
			break;
		}
	}
	if (a->cm)
		blue__ibcm_destroy(a->cm);
	if (a->qp)
		ibv_destroy_qp(a->qp);
	agent_ah_fini(a);
	if (a->cq)
		ibv_destroy_cq(a->cq);
	if (a->ch)
		ibv_destroy_comp_channel(a->ch);
	if (a->mr)
		ibv_dereg_mr(a->mr);
	free(a->mem);
	if (a->pd)
		ibv_dealloc_pd(a->pd);
	if (a->efd >= 0)
		close(a->efd);
	free(a);
}

int cma_agent_get(struct cma_dev *dev, struct cma_agent **out)
{
	struct cma_agent *a;
	int err;

	if (!dev || !dev->verbs || !out)
		return -EINVAL;
	if (dev->agent) {
		dev->agent->refs++;
		*out = dev->agent;
		return 0;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->dev = dev;
	a->efd = -1;
	a->name = ibv_get_device_name(dev->verbs->device);
	if (!a->name)
		a->name = "?";
	if (dev->gid_cm < 0 || dev->gid_cm >= dev->ngid) {
		cma_log("agent %s: the device has no RoCEv2 GID (no IPv4 or global IPv6 "
			"address on its netdev): the IB CM needs one", a->name);
		free(a);
		return -EADDRNOTAVAIL;
	}
	a->next = agents;
	agents = a;
	err = agent_verbs_open(a);
	if (!err)
		err = agent_cm_open(a);
	if (!err) {
		a->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (a->efd < 0) {
			err = -errno;
			cma_log("agent %s: eventfd: %s", a->name, strerror(errno));
		}
	}
	if (!err) {
		err = -blue_thread_start(&a->thread, agent_thread, a);
		if (err)
			cma_log("agent %s: cannot start its thread: %s", a->name, strerror(-err));
		a->thread_started = !err;
	}
	if (err) {
		agent_free(a);
		return err;
	}
	if (stats_wanted() && !atexit_done) {
		atexit_done = true;
		atexit(agents_at_exit);
	}
	a->refs = 1;
	dev->agent = a;
	*out = a;
	return 0;
}

void cma_agent_put(struct cma_agent *a)
{
	if (!a || --a->refs)
		return;
	/* a new cma_agent_get meanwhile makes a new agent, which finds QP1 still ours
	 * (EADDRINUSE) until this one is freed */
	a->dev->agent = NULL;
	a->stop = true;
	cma_agent_kick(a);
	if (a->thread_started && pthread_equal(pthread_self(), a->thread)) {
		a->freed_by_thread = true;	/* from an event: agent_thread frees it */
		return;
	}
	if (a->thread_started) {
		cma_unlock();
		pthread_join(a->thread, NULL);
		cma_lock();
	}
	if (stats_wanted())
		agent_stats_print(a);
	agent_free(a);
}
