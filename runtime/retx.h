/* SPDX-License-Identifier: MIT */
/*
 * Retransmission policies, per QP (blue_qp_set_retx() in blue.h), each an ops table
 * (struct blue_retx_ops) that the IBA paths call at a few named events:
 *  - go-back-N, IBA 9.7: the requester (req.c), responder (resp.c) and completer
 *    (comp.c) as they are; it adds nothing at any event (retx.c); the default, and the
 *    only policy a standard peer sees;
 *  - selective (IRN-style), between two libblue peers that negotiated it: the
 *    responder's reorder buffer (resp_sr.c) and the requester's per-PSN bookkeeping of
 *    what the responder has, what must be resent and what was (req_sr.c); its table is
 *    in retx_sr.c;
 * and the local ACK timeout formula, IBA's exponential or base + k * (PSNs in flight) (retx.c).
 */
#ifndef BLUE_RUNTIME_RETX_H
#define BLUE_RUNTIME_RETX_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/codec.h"

struct blue_qp;

/*
 * PSNs the requester tracks from una_psn on. It covers the request window (256 in
 * req.c) and a 1 MiB READ at MTU 1024; a response further ahead is dropped and asked
 * for again later, so a larger READ only recovers more slowly.
 */
#define BLUE_SR_WIN		1024u
#define BLUE_SR_WORDS		(BLUE_SR_WIN / 64)
/* Requests the responder holds past a hole: its window from the expected PSN on. */
#define BLUE_SR_SLOTS		256u

_Static_assert((BLUE_SR_WIN & (BLUE_SR_WIN - 1)) == 0, "SR window is a power of two");
_Static_assert((BLUE_SR_SLOTS & (BLUE_SR_SLOTS - 1)) == 0, "SR slots are a power of two");

/*
 * The requester's view, one bit per PSN, indexed by PSN modulo BLUE_SR_WIN and valid
 * for [una_psn, una_psn + BLUE_SR_WIN):
 *  rcvd    the responder has it: a SEND/WRITE packet executed or held, a READ response
 *          or atomic ACK arrived (and was placed);
 *  want    to be resent (the requester's next run sends it);
 *  resent  resent since the last timeout: not resent again on another report of the
 *          same hole, only after a timeout.
 */
struct blue_sr_req {
	uint32_t base;			/* the PSN bit 0.. was last synced to (una_psn) */
	bool pending;			/* some want bit may be set */
	uint64_t rcvd[BLUE_SR_WORDS];
	uint64_t want[BLUE_SR_WORDS];
	uint64_t resent[BLUE_SR_WORDS];
};

/* One request held by the responder: the parsed packet, its payload in buf. */
struct blue_sr_slot {
	struct blue_pkt pkt;
	bool valid;
};

struct blue_sr_resp {
	struct blue_sr_slot *slot;	/* BLUE_SR_SLOTS, allocated at the first hold */
	uint8_t *buf;			/* BLUE_SR_SLOTS payloads of buf_len bytes */
	uint32_t buf_len;		/* the path MTU when allocated */
	uint32_t nheld;
	bool draining;			/* re-entrancy guard */
	bool stalled;			/* a drain stopped for want of room: resume */
};

/*
 * What a policy adds at each event of the IBA paths (comp.c, req.c, resp.c), shaped as
 * congestion control's tables are (runtime/cc.h: name, init, the events; a table per
 * policy, blue__retx_ops() to look one up). An entry left NULL adds nothing there and
 * the IBA path goes on as it is (go-back-N leaves them all NULL, as cc's "none" does),
 * so that a QP without a policy's extras pays no call for them. The events are named
 * by the path and step that asks (comp_, req_, resp_), since most return a verdict that
 * decides that path's next step, where cc's on_* only hear of an event. Every function
 * gets the QP: a policy works on struct blue_retx, and on the rest of the QP only
 * through the completer's, requester's and responder's named interfaces (comp.h,
 * req.h, resp.h) and the live context.
 */
struct blue_retx_ops {
	const char *name;	/* "go-back-n", "selective": as blue_xfer --retx spells them */
	/* the policy was chosen (QP create, RESET, blue_qp_set_retx()): start clean */
	void (*init)(struct blue_qp *qp);
	/* the policy is left (another chosen, RESET, destroy): forget and free its state */
	void (*fini)(struct blue_qp *qp);
	/* anything the responder holds, so that the policy must not change under it */
	bool (*resp_holds)(const struct blue_qp *qp);

	/* completer: a response arrived. Return: true when the policy used it up */
	bool (*comp_rx)(struct blue_qp *qp, const struct blue_pkt *p);
	/*
	 * completer: the local ACK timer fired with PSNs unacknowledged. Return: true when
	 * the policy handled it; false for IBA's retry (go back N, one of retry_cnt)
	 */
	bool (*comp_timeout)(struct blue_qp *qp);
	/* requester: a pass's first step, before anything new. Return: packets sent */
	int (*req_resend)(struct blue_qp *qp);
	/*
	 * responder: a request ahead of the expected PSN. Return: true when the policy
	 * took it; false for IBA's sequence-error NAK
	 */
	bool (*resp_ahead)(struct blue_qp *qp, const struct blue_pkt *p);
	/*
	 * responder: a duplicate SEND/WRITE packet. Return: true when the policy answered
	 * it; false for IBA's ACK of how far the responder got
	 */
	bool (*resp_duplicate)(struct blue_qp *qp, const struct blue_pkt *p);
	/* responder: a request that arrived went through its checks */
	void (*resp_after_rx)(struct blue_qp *qp);
	/* responder: a pass of its responses begins */
	void (*resp_tx_resume)(struct blue_qp *qp);
	/*
	 * responder: whether a duplicate READ cancels the READ responses queued after its
	 * PSN. Under go-back-N it does: the requester went back and asks for all of them
	 * again. Under selective it does not: each asks for a part still missing.
	 */
	bool resp_dup_read_supersedes;
};

struct blue_retx {
	const struct blue_retx_ops *ops;	/* the policy's table; never NULL */
	uint8_t policy;			/* enum blue_retx_policy */
	uint8_t timer;			/* enum blue_retx_timer */
	uint32_t base_us, k_us;		/* LINEAR */
	uint32_t peer_caps;		/* what blue_cm_connect_qp() negotiated */
	struct blue_sr_req req;
	struct blue_sr_resp resp;
};

extern const struct blue_retx_ops blue__retx_gbn_ops __attribute__((visibility("hidden")));
extern const struct blue_retx_ops blue__retx_sr_ops __attribute__((visibility("hidden")));

/* ---- retx.c ---- */

/* The table of @policy (enum blue_retx_policy), NULL when out of range. */
const struct blue_retx_ops *blue__retx_ops(uint32_t policy) __attribute__((visibility("hidden")));

/*
 * blue__retx_timeout_ns() - the local ACK timeout to arm now: 4.096 us * 2^timeout, or
 * base + k * (PSNs in flight), which it records in the live context.
 * Return: nanoseconds, 0 for no timer (IBA timeout 0).
 */
uint64_t blue__retx_timeout_ns(struct blue_qp *qp) __attribute__((visibility("hidden")));

/* blue__qp_set_peer_caps() - the capabilities the CM negotiated for @qp (local & peer). */
void blue__qp_set_peer_caps(struct blue_qp *qp, uint32_t caps)
	__attribute__((visibility("hidden")));

/*
 * blue__retx_reset() - QP created or to RESET: go-back-N, IBA timer, nothing negotiated
 * or held.
 */
void blue__retx_reset(struct blue_qp *qp) __attribute__((visibility("hidden")));

/*
 * blue__retx_fini() - the policy's fini: forget and free what it holds (QP destroy,
 * while the QP still owns its live context).
 */
void blue__retx_fini(struct blue_qp *qp) __attribute__((visibility("hidden")));

/* ---- resp_sr.c: the responder's reorder buffer (the selective table's resp_*) ---- */

/* blue__sr_resp_ahead() - @p is ahead of the expected PSN: hold it, report the hole. */
bool blue__sr_resp_ahead(struct blue_qp *qp, const struct blue_pkt *p)
	__attribute__((visibility("hidden")));

/* blue__sr_resp_duplicate() - a resend while a hole is open: report the hole again. */
bool blue__sr_resp_duplicate(struct blue_qp *qp, const struct blue_pkt *p)
	__attribute__((visibility("hidden")));

/* blue__sr_resp_drain() - run the held requests that are next in PSN order. */
void blue__sr_resp_drain(struct blue_qp *qp) __attribute__((visibility("hidden")));

/* blue__sr_resp_resume() - go on with a drain that found no room to answer. */
void blue__sr_resp_resume(struct blue_qp *qp) __attribute__((visibility("hidden")));

/* blue__sr_resp_drop() - forget every held request (RESET, ERROR, policy change). */
void blue__sr_resp_drop(struct blue_qp *qp) __attribute__((visibility("hidden")));

/* blue__sr_resp_fini() - forget every held request and free the buffer. */
void blue__sr_resp_fini(struct blue_qp *qp) __attribute__((visibility("hidden")));

/* ---- req_sr.c: the requester's side (the selective table's comp_* and req_*) ---- */

/*
 * blue__sr_comp_rx() - a response for a QP with the selective policy.
 * Return: true when it was used up here; false for what the IBA completer handles as
 * under go-back-N (RNR NAKs, sequence-error and error NAKs).
 */
bool blue__sr_comp_rx(struct blue_qp *qp, const struct blue_pkt *p)
	__attribute__((visibility("hidden")));

/*
 * blue__sr_timeout() - the local ACK timer fired: probe with the newest unacknowledged
 * packet. Return: false when go-back-N must handle it (a rewind is under way).
 */
bool blue__sr_timeout(struct blue_qp *qp) __attribute__((visibility("hidden")));

/*
 * blue__sr_req_resend() - send what is wanted, within this pass's budget, while the QP
 * may send and no RNR wait holds it. Return: packets.
 */
int blue__sr_req_resend(struct blue_qp *qp) __attribute__((visibility("hidden")));

/* blue__sr_req_reset() - forget the requester's bookkeeping. */
void blue__sr_req_reset(struct blue_qp *qp) __attribute__((visibility("hidden")));

#endif /* BLUE_RUNTIME_RETX_H */
