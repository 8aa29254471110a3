// SPDX-License-Identifier: MIT
/*
 * The responder's side of ATOMIC WRITE and FLUSH (IBA 1.5; aw.h has the wire format),
 * stepped from resp.c's request path: QP rights (CHECK_OP_VALID), lengths and R_Key
 * (CHECK_RKEY), the store or the flush (EXECUTE), and duplicates. What rxe does:
 *
 *  - ATOMIC WRITE needs REMOTE_WRITE, on the QP and on the MR (rxe's check_rkey treats
 *    it as a write); RETH length and payload are both 8; an unaligned va is an invalid
 *    request; the 8 bytes land as sent (no byte swap) in one 64-bit store.
 *  - FLUSH needs FLUSH_GLOBAL and/or FLUSH_PERSISTENT (each type it asks for) on the QP
 *    and on the MR; at level RANGE the range must be inside the MR.
 *  - Host memory has no persistence domain to flush to: rxe refuses to register an MR
 *    with FLUSH_PERSISTENT unless its pages are pmem, and so does blue (mr.c), so a
 *    PERSISTENT FLUSH always meets an MR without the right and is NAKed. A GLOBAL FLUSH
 *    is a full memory barrier: every earlier WRITE and ATOMIC WRITE was executed in PSN
 *    order before it, and the fence makes them visible to every CPU before the answer.
 */
#include <stdio.h>
#include <string.h>

#include "runtime/aw.h"
#include "runtime/codec.h"
#include "runtime/log.h"
#include "runtime/mr.h"
#include "runtime/mw.h"
#include "runtime/qp.h"

/* The BLUE_ACCESS_FLUSH_* rights a FLUSH with placement type @feth needs. */
static unsigned int flush_need(uint32_t feth)
{
	unsigned int need = 0;

	if (feth & BLUE_FLUSH_GLOBAL)
		need |= BLUE_ACCESS_FLUSH_GLOBAL;
	if (feth & BLUE_FLUSH_PERSISTENT)
		need |= BLUE_ACCESS_FLUSH_PERSISTENT;
	return need;
}

bool blue__resp_aw_qp_allows(const struct blue_qp *qp, const struct blue_pkt *p)
{
	unsigned int need = p->opcode == BLUE_OP_RC_ATOMIC_WRITE ? BLUE_ACCESS_REMOTE_WRITE :
			    flush_need(p->feth);

	return (qp->access_flags & need) == need;
}

static uint8_t atomic_write_check(struct blue_qp *qp, const struct blue_pkt *p,
			    struct blue_mem_at *mem,
				  char *why, size_t whylen)
{
	enum blue_mr_verdict v;

	if (p->reth.len != 8 || p->payload_len != 8) {
		snprintf(why, whylen, "ATOMIC WRITE at PSN 0x%x: RETH length %u, %u bytes: both "
			 "must be 8", p->psn, p->reth.len, p->payload_len);
		return BLUE_NAK_INVALID_REQ;
	}
	if (p->reth.va & 7) {
		snprintf(why, whylen, "ATOMIC WRITE at unaligned 0x%llx",
			 (unsigned long long)p->reth.va);
		return BLUE_NAK_INVALID_REQ;
	}
	v = blue__rkey_check(qp, p->reth.rkey, p->reth.va, 8, BLUE_ACCESS_REMOTE_WRITE, mem);
	if (v != BLUE_MR_OK) {
		snprintf(why, whylen, "ATOMIC WRITE at PSN 0x%x refused: %s", p->psn,
			 blue__mr_verdict_str(v));
		return BLUE_NAK_REM_ACCESS_ERR;
	}
	return 0;
}

static uint8_t flush_check(struct blue_qp *qp, const struct blue_pkt *p, char *why,
			   size_t whylen)
{
	uint32_t level = (p->feth & BLUE_FETH_SEL_MASK) >> BLUE_FETH_SEL_SHIFT;
	unsigned int need = flush_need(p->feth);
	enum blue_mr_verdict v;

	if (!need || level > BLUE_FLUSH_MR) {
		snprintf(why, whylen, "FLUSH at PSN 0x%x: FETH 0x%08x names no placement type "
			 "or a reserved level", p->psn, p->feth);
		return BLUE_NAK_INVALID_REQ;
	}
	/*
	 * Level MR flushes the whole region: only the key and the rights matter (rxe skips
	 * the range). The va must still fall inside the MR here, a stricter reading that
	 * costs nothing to a requester naming its region by its address.
	 */
	v = blue__rkey_check(qp, p->reth.rkey, p->reth.va,
			     level == BLUE_FLUSH_RANGE ? p->reth.len : 0, need, NULL);
	if (v != BLUE_MR_OK) {
		snprintf(why, whylen, "FLUSH at PSN 0x%x refused: %s", p->psn,
			 blue__mr_verdict_str(v));
		return BLUE_NAK_REM_ACCESS_ERR;
	}
	return 0;
}

uint8_t blue__resp_aw_check(struct blue_qp *qp, const struct blue_pkt *p,
			    struct blue_mem_at *mem,
			    char *why, size_t whylen)
{
	if (p->opcode == BLUE_OP_RC_ATOMIC_WRITE)
		return atomic_write_check(qp, p, mem, why, whylen);
	return flush_check(qp, p, why, whylen);
}

void blue__resp_aw_execute(struct blue_qp *qp, const struct blue_pkt *p,
			   struct blue_mem_at mem)
{
	struct blue_resp_res *res;
	uint64_t v;

	if (p->opcode == BLUE_OP_RC_ATOMIC_WRITE) {
		/* the bytes as sent (rxe stores the payload's u64 unswapped), in one store */
		memcpy(&v, p->payload, sizeof(v));
		if (blue__mem_store64(mem, v))
			blue__logf("QP 0x%x: ATOMIC WRITE at PSN 0x%x: the application no longer "
				   "maps 0x%llx; nothing was written", qp->qpn, p->psn,
				   (unsigned long long)p->reth.va);
	} else {
		/* GLOBAL: earlier placements are visible before we answer (see the top) */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	}
	res = blue__resp_res_new(qp);
	res->type = BLUE_RES_AW;
	res->first_psn = res->last_psn = p->psn;
	/* the MSN the response carries counts this message, as a READ's does */
	blue__resp_queue_aw(qp, p->psn, (qp->live->msn + 1) & BLUE_PSN_MASK, false);
}

void blue__resp_aw_dup(struct blue_qp *qp, const struct blue_pkt *p)
{
	if (blue__resp_res_find(qp, p->psn, BLUE_RES_AW))
		blue__resp_queue_aw(qp, p->psn, qp->live->msn, true);
}
