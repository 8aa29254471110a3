/* SPDX-License-Identifier: MIT */
/*
 * ATOMIC WRITE and FLUSH (IBA 1.5, annex A19), the two RC operations rxe has had since
 * Linux 6.2. On the wire, as rxe sends and answers them:
 *
 *   ATOMIC WRITE (0x1d)  BTH, RETH (va 8-byte aligned, length 8), 8 bytes of payload
 *                        that land at va as one 64-bit store, bytes as sent;
 *   FLUSH (0x1c)         BTH, FETH (placement type, selectivity level), RETH (the range;
 *                        ignored at level MR);
 *   the response to both is a zero-length RDMA READ Response Only carrying an ACK AETH,
 *   or a NAK (an Acknowledge packet) like any request's. Both take a responder resource
 *   like a READ, and a duplicate is answered from it, never executed again (rxe's
 *   duplicate_request; IBA oA19-14/15 for FLUSH, as rxe cites them).
 *
 * req_aw.c is the requester's side (post checks, WQE fields, headers, the response);
 * resp_aw.c the responder's.
 */
#ifndef BLUE_RUNTIME_AW_H
#define BLUE_RUNTIME_AW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <blue/blue.h>

#include "runtime/comp.h"
#include "runtime/mem_at.h"

struct blue_qp;
struct blue_pkt;
struct blue_send_wqe;
struct blue_swqe_eng;

/*
 * blue__aw_wr_check() - post_send's checks of an ATOMIC_WRITE or FLUSH work request;
 * *@total gets the WQE's length (8 or 0). Return: 0 or EINVAL (logged, naming the field).
 */
int blue__aw_wr_check(const struct blue_qp *qp, const struct blue_send_wr *wr,
		      uint64_t *total) __attribute__((visibility("hidden")));

/* blue__aw_wqe_fill() - the remote side of the WR into @w (the data is filled as ever). */
void blue__aw_wqe_fill(struct blue_send_wqe *w, const struct blue_send_wr *wr)
	__attribute__((visibility("hidden")));

/* blue__aw_flush_hdrs() - a FLUSH WQE's FETH and RETH length into @p. */
void blue__aw_flush_hdrs(const struct blue_send_wqe *w, struct blue_pkt *p)
	__attribute__((visibility("hidden")));

/*
 * blue__comp_aw_resp() - a READ response @p for the ATOMIC_WRITE/FLUSH WQE @e: the
 * completer's next state (COMPLETE, RETRY, or ERROR with *@status and @why).
 */
enum blue_comp_state blue__comp_aw_resp(struct blue_qp *qp, const struct blue_swqe_eng *e,
					const struct blue_pkt *p, char *why, size_t whylen,
					enum blue_wc_status *status)
	__attribute__((visibility("hidden")));

/*
 * The responder (resp_aw.c):
 *  blue__resp_aw_qp_allows() - whether the QP's access flags admit @p (rxe's
 *                              check_qp_attr_access: REMOTE_WRITE for ATOMIC WRITE,
 *                              FLUSH_GLOBAL/PERSISTENT for each type a FLUSH asks);
 *  blue__resp_aw_check()     - lengths, alignment and the R_Key; *@mem gets the word
 *                              an ATOMIC WRITE stores to. Return: 0, or the NAK
 *                              syndrome with @why;
 *  blue__resp_aw_execute()   - store or flush, record the responder resource, queue
 *                              the response;
 *  blue__resp_aw_dup()       - a duplicate: the response again from its resource, or
 *                              nothing (never ran, or too old: rxe drops it too).
 */
bool blue__resp_aw_qp_allows(const struct blue_qp *qp, const struct blue_pkt *p)
	__attribute__((visibility("hidden")));
uint8_t blue__resp_aw_check(struct blue_qp *qp, const struct blue_pkt *p,
			    struct blue_mem_at *mem,
			    char *why, size_t whylen) __attribute__((visibility("hidden")));
void blue__resp_aw_execute(struct blue_qp *qp, const struct blue_pkt *p,
			   struct blue_mem_at mem)
	__attribute__((visibility("hidden")));
void blue__resp_aw_dup(struct blue_qp *qp, const struct blue_pkt *p)
	__attribute__((visibility("hidden")));

#endif /* BLUE_RUNTIME_AW_H */
