// SPDX-License-Identifier: MIT
/*
 * From a QP to the CM's blue_cm_info and back: what a side tells its peer, and moving a
 * QP to RTS with what the peer told. Written against the public verbs (blue_query_*,
 * blue_modify_qp, blue_qp_set_retx) so it does not depend on the QP's internals; the
 * internal calls are blue__neigh_hold/put(), to hold the MAC the peer sent as a static
 * neighbour for the QP (qp->neigh_ip records which, so destroy gives it back), and
 * blue__qp_set_peer_caps(), to record what the two sides negotiated.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/random.h>

#include "runtime/verbs_ops.h"
#include "runtime/cc_wire.h"
#include "runtime/cm.h"
#include "runtime/device.h"
#include "runtime/qp.h"
#include "runtime/retx.h"

static bool gid_is_zero(const union blue_gid *g)
{
	for (int i = 0; i < 16; i++)
		if (g->raw[i])
			return false;
	return true;
}


/*
 * fe80::/64 with a modified EUI-64 interface ID -> the MAC it was made from (RFC 4291
 * appendix A): bytes 11-12 are ff:fe and the universal/local bit is flipped back.
 */
static bool gid_mac(const union blue_gid *gid, uint8_t mac[6])
{
	const uint8_t *g = gid->raw;

	if (g[0] != 0xfe || (g[1] & 0xc0) != 0x80 || g[11] != 0xff || g[12] != 0xfe)
		return false;
	mac[0] = g[8] ^ 0x02;
	mac[1] = g[9];
	mac[2] = g[10];
	mac[3] = g[13];
	mac[4] = g[14];
	mac[5] = g[15];
	return true;
}

static uint32_t random_psn(void)
{
	uint32_t v;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v)) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		v = (uint32_t)ts.tv_nsec ^ (uint32_t)getpid() << 8;
	}
	return v & 0xffffff;
}

int blue__lib_cm_info_from_qp(struct blue_context *ctx, struct blue_qp *qp, int gid_index,
			 struct blue_cm_info *info)
{
	struct blue_qp_init_attr init;
	struct blue_port_attr port;
	struct blue_qp_attr attr;
	union blue_gid g;
	int err;

	blue__cm_clear_error();
	if (!ctx || !qp || !info)
		return -blue__cm_fail(EINVAL, "info_from_qp: no context, QP or info");
	memset(info, 0, sizeof(*info));
	err = blue_query_qp(qp, &attr, 0, &init);
	if (!err)
		err = blue_query_port(ctx, 1, &port);
	if (err)
		return -blue__cm_fail(err, "info_from_qp: cannot query QP 0x%x or its port: %s",
				      blue_qp_num(qp), strerror(err));
	if (gid_index < 0 || gid_index > 255 || blue_query_gid(ctx, 1, gid_index, &info->gid) ||
	    gid_is_zero(&info->gid))
		return -blue__cm_fail(EINVAL, "info_from_qp: no GID at index %d (blue's table: "
				      "0 = IPv6 link-local, 1 = IPv4-mapped, 2.. = the netdev's "
				      "IPv6 addresses)", gid_index);
	info->qpn = blue_qp_num(qp);
	info->psn = random_psn();
	info->mtu = port.active_mtu;
	info->transport = init.qp_type;
	info->caps = blue__cc_caps_offer();	/* congestion control, on by default */
	/* the device's addresses, read back from its GID table (see blue_query_gid) */
	if (blue_query_gid(ctx, 1, 1, &g) == 0)
		blue__gid_ipv4(&g, &info->ipv4);
	if (blue_query_gid(ctx, 1, 0, &g) == 0)
		gid_mac(&g, info->mac);
	blue__obs_conn_begin(qp);
	return 0;
}

void blue_cm_info_set_mr(struct blue_cm_info *info, const struct blue_mr *mr)
{
	if (!info)
		return;
	info->has_mr = mr != NULL;
	memset(&info->mr, 0, sizeof(info->mr));
	if (mr) {
		info->mr.addr = (uint64_t)(uintptr_t)mr->addr;
		info->mr.length = mr->length;
		info->mr.rkey = mr->rkey;
	}
}

void blue_cm_qp_attr_default(struct blue_cm_qp_attr *a)
{
	if (!a)
		return;
	memset(a, 0, sizeof(*a));
	a->access = BLUE_ACCESS_LOCAL_WRITE;
	a->sgid_index = 1;
	a->timeout = 14;	/* 4.096 us * 2^14 = 67 ms */
	a->retry_cnt = 7;
	a->rnr_retry = 7;
	a->min_rnr_timer = 12;	/* 0.64 ms (IBA table 45) */
	a->max_rd_atomic = 1;
	a->max_dest_rd_atomic = 1;
	a->caps = blue__cc_caps_offer();	/* as blue_cm_info_from_qp() offers */
}

static void mac_str(const uint8_t m[6], char buf[18])
{
	snprintf(buf, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

/* The address and MAC @remote asks for; false when it asks for no entry. */
static bool peer_neigh(const struct blue_cm_info *remote, union blue_gid *addr)
{
	static const uint8_t no_mac[6];

	return blue__cm_claimed_gid(remote, addr) && memcmp(remote->mac, no_mac, 6);
}

/* The words for a neighbour entry refused (@err from blue__neigh_hold/check). */
static int neigh_fail(int err, const char *who, const union blue_gid *addr,
		      const uint8_t mac[6], const struct blue_neigh *cur)
{
	char ipstr[INET6_ADDRSTRLEN], old[18], new[18], use[48];

	blue__gid_str(addr, ipstr, sizeof(ipstr));
	if (err == -EADDRINUSE) {
		mac_str(cur->mac, old);
		mac_str(mac, new);
		if (cur->refs)
			snprintf(use, sizeof(use), "%sin use by %u QP(s)",
				 cur->pinned ? "set by hand, " : "", cur->refs);
		else
			snprintf(use, sizeof(use), "set by hand");
		/* short: the exchange's copy travels in the verdict's 112-byte reason */
		return blue__cm_fail(EADDRINUSE, "%s: MAC %s for %s refused: the entry has %s "
				     "(%s)", who, new, ipstr, old, use);
	}
	return blue__cm_fail(-err, "%s: no room for the peer %s: the static neighbour table "
			     "is full (%d entries, each in use)", who, ipstr, BLUE_MAX_NEIGH);
}

int blue__cm_neigh_check(const struct blue_context *ctx, const struct blue_cm_info *remote)
{
	struct blue_neigh cur;
	union blue_gid addr;
	int err;

	if (!peer_neigh(remote, &addr))
		return 0;
	err = blue__neigh_check(ctx, &addr, remote->mac, &cur);
	return err ? neigh_fail(err, "exchange", &addr, remote->mac, &cur) : 0;
}

/*
 * The peer's MAC as the static neighbour for the address it claims (the exchange checked
 * that claim against the TCP peer), held for the QP in *@addr. Return: 1 when held, 0
 * for none (the peer sent no MAC), or a negative errno with the CM error set.
 */
static int hold_peer_neigh(struct blue_context *ctx, const struct blue_cm_info *remote,
			   union blue_gid *addr)
{
	struct blue_neigh cur;
	int err;

	if (!peer_neigh(remote, addr))
		return 0;
	err = blue__neigh_hold(ctx, addr, remote->mac, &cur);
	if (err)
		return neigh_fail(err, "connect_qp", addr, remote->mac, &cur);
	return 1;
}

/* IBA 10.3.1 / rc_pingpong: RESET -> INIT -> RTR -> RTS; Return: 0 or a negative errno. */
static int move_to_rts(struct blue_qp *qp, uint32_t local_psn,
		       const struct blue_cm_info *remote, const struct blue_cm_qp_attr *attr)
{
	struct blue_qp_init_attr init;
	uint32_t rtr_rc, rts_rc;
	struct blue_qp_attr a;
	int err;

	memset(&a, 0, sizeof(a));
	err = blue_query_qp(qp, &a, BLUE_QP_STATE, &init);
	if (err)
		return blue__cm_fail(err, "connect_qp: cannot query QP 0x%x", blue_qp_num(qp));
	if (a.qp_state == BLUE_QPS_RESET) {
		memset(&a, 0, sizeof(a));
		a.qp_state = BLUE_QPS_INIT;
		a.pkey_index = 0;
		a.port_num = 1;
		a.qp_access_flags = attr->access;
		err = blue_modify_qp(qp, &a, BLUE_QP_STATE | BLUE_QP_PKEY_INDEX | BLUE_QP_PORT |
				     BLUE_QP_ACCESS_FLAGS);
		if (err)
			return blue__cm_fail(err, "connect_qp: QP 0x%x RESET -> INIT failed",
					     blue_qp_num(qp));
	} else if (a.qp_state != BLUE_QPS_INIT) {
		return blue__cm_fail(EINVAL, "connect_qp: QP 0x%x is not in RESET or INIT "
				     "(state %d)", blue_qp_num(qp), (int)a.qp_state);
	}

	/* what only RC takes: a UC QP has no responder resources, RNR, timeout or retries */
	rtr_rc = init.qp_type == BLUE_QPT_UC ? 0 :
		 BLUE_QP_MAX_DEST_RD_ATOMIC | BLUE_QP_MIN_RNR_TIMER;
	rts_rc = init.qp_type == BLUE_QPT_UC ? 0 :
		 BLUE_QP_TIMEOUT | BLUE_QP_RETRY_CNT | BLUE_QP_RNR_RETRY |
		 BLUE_QP_MAX_QP_RD_ATOMIC;

	/* INIT -> RTR with the responder's attributes */
	memset(&a, 0, sizeof(a));
	a.qp_state = BLUE_QPS_RTR;
	a.path_mtu = remote->mtu;
	a.dest_qp_num = remote->qpn;
	a.rq_psn = remote->psn;
	a.max_dest_rd_atomic = attr->max_dest_rd_atomic;
	a.min_rnr_timer = attr->min_rnr_timer;
	a.ah_attr.dgid = remote->gid;
	a.ah_attr.sgid_index = attr->sgid_index;
	a.ah_attr.port_num = 1;
	err = blue_modify_qp(qp, &a, (int)(BLUE_QP_STATE | BLUE_QP_AV | BLUE_QP_PATH_MTU |
				       BLUE_QP_DEST_QPN | BLUE_QP_RQ_PSN | rtr_rc));
	if (err)
		return blue__cm_fail(err, "connect_qp: QP 0x%x INIT -> RTR failed (peer QPN "
				     "0x%06x, PSN 0x%06x, MTU %d)", blue_qp_num(qp),
				     remote->qpn, remote->psn, blue_mtu_bytes(remote->mtu));

	/* RTR -> RTS with the requester's */
	memset(&a, 0, sizeof(a));
	a.qp_state = BLUE_QPS_RTS;
	a.sq_psn = local_psn & 0xffffff;
	a.timeout = attr->timeout;
	a.retry_cnt = attr->retry_cnt;
	a.rnr_retry = attr->rnr_retry;
	a.max_rd_atomic = attr->max_rd_atomic;
	err = blue_modify_qp(qp, &a, (int)(BLUE_QP_STATE | BLUE_QP_SQ_PSN | rts_rc));
	if (err)
		return blue__cm_fail(err, "connect_qp: QP 0x%x RTR -> RTS failed",
				     blue_qp_num(qp));
	return 0;
}

/*
 * What both sides offered is what both use: the peer computes the same AND, so
 * selective retransmission is on at both ends or at neither, and both run the same
 * congestion control (blue__cc_choose(); the window alone when this side offered only
 * it). Return: 0 or -errno.
 */
static int set_negotiated(struct blue_qp *qp, const struct blue_cm_info *remote,
			  const struct blue_cm_qp_attr *attr)
{
	struct blue_retx_attr retx;
	uint32_t caps = attr->caps & remote->caps;
	int err;

	blue__qp_set_peer_caps(qp, caps);
	err = blue_qp_query_retx(qp, &retx);
	if (!err) {
		retx.policy = (caps & BLUE_CM_CAP_SELECTIVE_RETX) ? BLUE_RETX_SELECTIVE :
			      BLUE_RETX_GO_BACK_N;
		err = blue_qp_set_retx(qp, &retx);
	}
	if (err)
		return blue__cm_fail(err, "connect_qp: QP 0x%x: cannot set the "
				     "retransmission policy", blue_qp_num(qp));
	err = blue__cc_use(qp, blue__cc_choose(attr->caps, remote->caps));
	if (err)
		return blue__cm_fail(err, "connect_qp: QP 0x%x: cannot set the congestion "
				     "control", blue_qp_num(qp));
	return 0;
}

int blue__lib_cm_connect_qp(struct blue_context *ctx, struct blue_qp *qp, uint32_t local_psn,
		       const struct blue_cm_info *remote, const struct blue_cm_qp_attr *attr)
{
	struct blue_cm_qp_attr def;
	union blue_gid addr;
	int held, err;

	blue__cm_clear_error();
	if (!ctx || !qp || !remote)
		return -blue__cm_fail(EINVAL, "connect_qp: no context, QP or peer info");
	if (!attr) {
		blue_cm_qp_attr_default(&def);
		attr = &def;
	}
	if (gid_is_zero(&remote->gid))
		return -blue__cm_fail(EINVAL, "connect_qp: the peer sent no GID; RoCEv2 needs "
				      "one (with ibv_rc_pingpong, pass -g with the index of its "
				      "IPv4 GID, e.g. -g 1)");
	/* before RTR, which resolves the peer's MAC through this entry */
	held = hold_peer_neigh(ctx, remote, &addr);
	if (held < 0)
		return -held;
	err = move_to_rts(qp, local_psn, remote, attr);
	/* UC: nothing is retransmitted and nothing ACKs, so neither policy applies */
	if (!err && qp->type != BLUE_QPT_UC)
		err = set_negotiated(qp, remote, attr);
	if (err) {
		if (held)
			blue__neigh_put(ctx, &addr);	/* nothing half-installed */
		return -err;
	}
	/* a QP connected again gives up the entry of its former peer */
	if (qp->neigh_held)
		blue__neigh_put(ctx, &qp->neigh_addr);
	qp->neigh_held = held;
	qp->neigh_addr = addr;
	blue__obs_conn_done(qp, remote->qpn);
	return 0;
}
