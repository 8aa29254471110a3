// SPDX-License-Identifier: MIT
/*
 * cm_agent_probe: the CM agent (compat/rdmacm/agent.c) alone, over our libibverbs.so.1,
 * with its own cma_ibcm_event (what compat/rdmacm/conn.c is to librdmacm). It drives the
 * IB CM directly, so tests/compat/test_cm_agent.sh sees QP1 and the CM on the wire
 * without the rdma_cm API on top:
 *
 *   cm_agent_probe listen SERVICE [--count N] [--time S] [--reject REASON]
 *       accept every REQ for SERVICE (a REP), or reject it with REASON; exit 0 after
 *       N connections (default 1) ended (TIMEWAIT_EXIT, or the REJ sent), 1 after S s
 *   cm_agent_probe connect IP SERVICE [--time S] [--no-ip-hdr] [--put-in-event]
 *       REQ to IP's QP1 for SERVICE (with the IP CM header in the private data unless
 *       --no-ip-hdr); on the REP: RTU, then DREQ; exit 0 at the end of the connection
 *       (TIMEWAIT_EXIT), a REJ or a TIMEOUT ("result ..." says which), 1 after S s;
 *       --put-in-event: the last cma_agent_put from the event callback (the agent's
 *       thread) at that end
 *   cm_agent_probe idle --time S
 *       the agent only, for S seconds (a target for hostile MADs)
 *
 * Output, one line each: "event NAME ..." for every IB CM event, "result NAME" at the
 * end, then "counter agent.NAME VALUE" and "counter ibcm.NAME VALUE" for every counter.
 * SERVICE is a number (0x... ok). The device is the first verbs device, or PROBE_DEV.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compat/rdmacm/agent.h"

static struct cma_dev dev;
static struct cma_agent *agent;

/* what the events ask the main loop to do (under the lock) */
static struct blue_ibcm_conn *to_accept, *to_finish;
static uint64_t finish_at;
static unsigned int ended;
static const char *result;
static int reject_reason = -1;
static struct in_addr peer_ip;
static bool mode_connect;
static bool put_in_event;	/* --put-in-event: the last cma_agent_put from the callback */

static void counters(void);

/* a terminal event: with --put-in-event, the counters and the last put happen here, on
 * the agent's own thread (as rdma_cm's consumer may drop the device there) */
static void ended_here(void)
{
	ended++;
	if (!put_in_event || !agent)
		return;
	counters();
	cma_agent_put(agent);
	agent = NULL;
	printf("put from the event callback\n");
	fflush(stdout);
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* the IB CM's events, under the lock, from the agent's thread */
void cma_ibcm_event(struct cma_dev *d, struct blue_ibcm_conn *conn,
		    enum blue_ibcm_event type, const struct blue_ibcm_msg *msg)
{
	struct blue_ibcm_ip_hdr ip;
	char a[INET6_ADDRSTRLEN] = "-";

	(void)d;
	switch (type) {
	case BLUE_IBCM_EV_REQ_RECEIVED:
		if (blue__ibcm_ip_hdr_decode(msg->req.private_data, sizeof(msg->req.private_data),
					     &ip) == BLUE_IBCM_OK && ip.ip_version == 4)
			inet_ntop(AF_INET, &ip.src.v4, a, sizeof(a));
		say("event REQ_RECEIVED service_id=0x%llx remote_qpn=0x%x ip_src=%s",
		    (unsigned long long)conn->service_id, conn->remote_qpn, a);
		to_accept = conn;
		break;
	case BLUE_IBCM_EV_REP_RECEIVED:
		say("event REP_RECEIVED remote_qpn=0x%x", conn->remote_qpn);
		to_finish = conn;
		break;
	case BLUE_IBCM_EV_REJECTED:
		say("event REJECTED reason=%u (%s)", msg ? msg->rej.reason : 0,
		    msg ? blue__ibcm_rej_reason_str(msg->rej.reason) : "-");
		result = "REJECTED";
		ended_here();
		break;
	case BLUE_IBCM_EV_TIMEOUT:
		say("event TIMEOUT state=%s", blue__ibcm_state_str(conn->state));
		result = "TIMEOUT";
		ended_here();
		break;
	case BLUE_IBCM_EV_TIMEWAIT_EXIT:
		say("event TIMEWAIT_EXIT");
		result = "TIMEWAIT_EXIT";
		ended_here();
		break;
	default:
		say("event %s", blue__ibcm_event_str(type));
		break;
	}
}

static int dev_open(void)
{
	struct ibv_device **list;
	struct ibv_port_attr pa;
	const char *want = getenv("PROBE_DEV");
	int n, i;

	list = ibv_get_device_list(&n);
	if (!list || n < 1) {
		fprintf(stderr, "cm_agent_probe: no verbs device\n");
		return -1;
	}
	for (i = 0; i < n && want && strcmp(ibv_get_device_name(list[i]), want); i++)
		;
	if (i == n) {
		fprintf(stderr, "cm_agent_probe: no device %s\n", want);
		return -1;
	}
	dev.verbs = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!dev.verbs) {
		fprintf(stderr, "cm_agent_probe: ibv_open_device: %s\n", strerror(errno));
		return -1;
	}
	dev.port_num = 1;
	dev.guid = ibv_get_device_guid(dev.verbs->device);
	if (ibv_query_port(dev.verbs, 1, &pa) == 0)
		dev.active_mtu = pa.active_mtu;
	/* as the library reads it: the agent speaks from dev.gid_cm */
	cma_dev_read_gids(&dev, pa.gid_tbl_len ? pa.gid_tbl_len : 16);
	return 0;
}

static void counters(void)
{
	const struct cma_agent_stats *s = cma_agent_stats(agent);
	const struct blue_ibcm_stats *c = blue__ibcm_stats(cma_agent_ibcm(agent));
	int i;

	say("counter agent.rx_mads %llu", (unsigned long long)s->rx_mads);
	say("counter agent.rx_short %llu", (unsigned long long)s->rx_short);
	say("counter agent.rx_long %llu", (unsigned long long)s->rx_long);
	say("counter agent.rx_bad_grh %llu", (unsigned long long)s->rx_bad_grh);
	say("counter agent.rx_err %llu", (unsigned long long)s->rx_err);
	say("counter agent.qp_resets %llu", (unsigned long long)s->qp_resets);
	say("counter agent.tx_mads %llu", (unsigned long long)s->tx_mads);
	say("counter agent.tx_err %llu", (unsigned long long)s->tx_err);
	say("counter agent.ah_err %llu", (unsigned long long)s->ah_err);
	say("counter ibcm.rx %llu", (unsigned long long)c->rx);
	say("counter ibcm.tx %llu", (unsigned long long)c->tx);
	say("counter ibcm.tx_err %llu", (unsigned long long)c->tx_err);
	for (i = 1; i < BLUE_IBCM_ERR_MAX; i++)
		say("counter ibcm.decode.%s %llu", blue__ibcm_err_str((enum blue_ibcm_err)i),
		    (unsigned long long)c->decode[i]);
	say("counter ibcm.no_conn %llu", (unsigned long long)c->no_conn);
	say("counter ibcm.wrong_state %llu", (unsigned long long)c->wrong_state);
	say("counter ibcm.unhandled %llu", (unsigned long long)c->unhandled);
	say("counter ibcm.dup_req %llu", (unsigned long long)c->dup_req);
	say("counter ibcm.no_listener %llu", (unsigned long long)c->no_listener);
	say("counter ibcm.table_full %llu", (unsigned long long)c->table_full);
	say("counter ibcm.retransmits %llu", (unsigned long long)c->retransmits);
	say("counter ibcm.timeouts %llu", (unsigned long long)c->timeouts);
}

static int do_connect(uint64_t sid, bool ip_hdr)
{
	uint8_t priv[BLUE_IBCM_IP_HDR_LEN];
	struct blue_ibcm_conn_param p;
	struct blue_ibcm_ip_hdr h;

	memset(&p, 0, sizeof(p));
	memset(p.peer.gid + 10, 0xff, 2);
	memcpy(p.peer.gid + 12, &peer_ip, 4);
	p.peer.qpn = BLUE_IBCM_GSI_QPN;
	p.service_id = sid;
	p.local_qpn = 0x1234;	/* no data QP: the probe tests the CM only */
	p.starting_psn = 0x10203;
	p.responder_resources = 1;
	p.initiator_depth = 1;
	p.path_mtu = 3;
	p.retry_count = 7;
	p.rnr_retry_count = 7;
	if (ip_hdr) {
		memset(&h, 0, sizeof(h));
		h.ip_version = 4;
		h.src_port = 40000;
		memcpy(&h.src.v4, dev.gid[dev.gid_v4].raw + 12, 4);
		h.dst.v4 = peer_ip;
		if (blue__ibcm_ip_hdr_encode(&h, priv, sizeof(priv)) < 0)
			return -EINVAL;
		p.private_data = priv;
		p.private_data_len = sizeof(priv);
	}
	if (!blue__ibcm_connect(cma_agent_ibcm(agent), &p, cma_now_ns())) {
		fprintf(stderr, "cm_agent_probe: connect: %s\n", strerror(errno));
		return -errno;
	}
	cma_agent_kick(agent);
	return 0;
}

/* what the events asked for; under the lock */
static void act(void)
{
	struct blue_ibcm *cm;

	if (!agent)
		return;		/* put from the event callback (--put-in-event) */
	cm = cma_agent_ibcm(agent);

	if (to_accept) {
		struct blue_ibcm_rep_param r = {
			.local_qpn = 0x4321, .starting_psn = 0x30201,
			.responder_resources = 1, .initiator_depth = 1, .rnr_retry_count = 7,
		};

		if (reject_reason >= 0) {
			if (blue__ibcm_reject(cm, to_accept, (uint16_t)reject_reason, NULL, 0) == 0) {
				say("sent REJ reason=%d", reject_reason);
				result = "REJ_SENT";
				ended++;
			}
		} else if (blue__ibcm_accept(cm, to_accept, &r, cma_now_ns()) == 0) {
			say("sent REP");
		}
		to_accept = NULL;
		cma_agent_kick(agent);
	}
	if (to_finish && !finish_at) {
		if (blue__ibcm_send_rtu(cm, to_finish) == 0)
			say("sent RTU");
		finish_at = cma_now_ns() + 100000000ull;	/* DREQ 100 ms later */
		cma_agent_kick(agent);
	} else if (to_finish && cma_now_ns() >= finish_at) {
		if (blue__ibcm_disconnect(cm, to_finish, cma_now_ns()) == 0)
			say("sent DREQ");
		to_finish = NULL;
		cma_agent_kick(agent);
	}
}

int main(int argc, char **argv)
{
	unsigned int count = 1, limit_s = 20;
	uint64_t sid = 0, deadline;
	bool ip_hdr = true, done = false;
	const char *mode;
	int i, err, rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		goto usage;
	mode = argv[1];
	i = 2;
	if (!strcmp(mode, "listen") && argc >= 3) {
		sid = strtoull(argv[2], NULL, 0);
		i = 3;
	} else if (!strcmp(mode, "connect") && argc >= 4) {
		if (inet_pton(AF_INET, argv[2], &peer_ip) != 1)
			goto usage;
		sid = strtoull(argv[3], NULL, 0);
		mode_connect = true;
		i = 4;
	} else if (strcmp(mode, "idle")) {
		goto usage;
	}
	for (; i < argc; i++) {
		if (!strcmp(argv[i], "--count") && i + 1 < argc)
			count = (unsigned int)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--time") && i + 1 < argc)
			limit_s = (unsigned int)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--reject") && i + 1 < argc)
			reject_reason = (int)strtol(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--no-ip-hdr"))
			ip_hdr = false;
		else if (!strcmp(argv[i], "--put-in-event"))
			put_in_event = true;
		else
			goto usage;
	}
	if (dev_open())
		return 2;
	cma_lock();
	err = cma_agent_get(&dev, &agent);
	if (err) {
		cma_unlock();
		fprintf(stderr, "cm_agent_probe: cma_agent_get: %s\n", strerror(-err));
		say("result AGENT_%s", err == -EADDRINUSE ? "EADDRINUSE" : "FAILED");
		return 3;
	}
	say("agent up: %s QP1 gid_index %d pid %d", ibv_get_device_name(dev.verbs->device),
	    dev.gid_v4, (int)getpid());
	if (!strcmp(mode, "listen")) {
		err = blue__ibcm_listen(cma_agent_ibcm(agent), sid);
		if (err)
			fprintf(stderr, "cm_agent_probe: listen: %s\n", strerror(-err));
		else
			say("listening service_id=0x%llx", (unsigned long long)sid);
	} else if (mode_connect) {
		err = do_connect(sid, ip_hdr);
	}
	cma_unlock();
	if (err)
		return 3;
	deadline = cma_now_ns() + (uint64_t)limit_s * 1000000000ull;
	while (!done && cma_now_ns() < deadline) {
		usleep(5000);
		cma_lock();
		act();
		done = strcmp(mode, "idle") && ended >= (mode_connect ? 1 : count) &&
		       !to_accept && !to_finish;
		cma_unlock();
	}
	cma_lock();
	say("result %s", done && result ? result : !strcmp(mode, "idle") ? "IDLE_END" :
	    "TIME_LIMIT");
	rc = done || !strcmp(mode, "idle") ? 0 : 1;
	if (agent) {
		counters();
		cma_agent_put(agent);
	}
	cma_unlock();
	ibv_close_device(dev.verbs);
	return rc;
usage:
	fprintf(stderr, "usage: cm_agent_probe listen SERVICE [--count N] [--time S] "
		"[--reject REASON]\n       cm_agent_probe connect IP SERVICE [--time S] "
		"[--no-ip-hdr] [--put-in-event]\n       cm_agent_probe idle [--time S]\n");
	return 2;
}
