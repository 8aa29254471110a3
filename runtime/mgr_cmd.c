// SPDX-License-Identifier: MIT
/*
 * blue-manager's commands: each request of mgr_proto.h carried out on the daemon's one
 * context, with the verbs a library-mode process would call, on objects found by the
 * session's handles. A handle of another session, of another kind or freed names
 * nothing (EBADF). A process's PDs are its own, so the engine's PD check already keeps
 * its QPs off every other process's MRs, and a peer's guessed rkey off them too.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "runtime/cm.h"
#include "runtime/cq.h"
#include "runtime/device.h"
#include "runtime/gsi_hub.h"
#include "runtime/log.h"
#include "runtime/mcast.h"
#include "runtime/mgr_session.h"
#include "runtime/mr.h"
#include "runtime/qp.h"
#include "runtime/srq.h"

#define MGR_MAX_OBJS	65536	/* handles a session may hold */

static const char *const type_name[] = {
	[BLUE_MGR_OBJ_FREE] = "nothing", [BLUE_MGR_OBJ_PD] = "PD", [BLUE_MGR_OBJ_MR] = "MR",
	[BLUE_MGR_OBJ_CQ] = "CQ", [BLUE_MGR_OBJ_QP] = "QP", [BLUE_MGR_OBJ_SRQ] = "SRQ",
};

/* The object @h names in @ses, of @type; NULL after a message. */
static void *obj_get(struct blue_mgr_session *ses, uint32_t h, enum blue_mgr_obj_type type)
{
	if (h == 0 || h > ses->nobj || ses->obj[h - 1].type != type) {
		blue__logf("session %u: handle %u is not one of its %ss", ses->id, h,
			   type_name[type]);
		return NULL;
	}
	return ses->obj[h - 1].p;
}

/* A new handle for @p. Return: the handle, or 0 (ENOMEM, logged). */
static uint32_t obj_put(struct blue_mgr_session *ses, enum blue_mgr_obj_type type, void *p)
{
	uint32_t i;

	for (i = 0; i < ses->nobj; i++)
		if (ses->obj[i].type == BLUE_MGR_OBJ_FREE)
			break;
	if (i == ses->nobj) {
		struct blue_mgr_obj *n;

		if (ses->nobj >= MGR_MAX_OBJS) {
			blue__logf("session %u: %u objects at once is the limit", ses->id,
				   MGR_MAX_OBJS);
			return 0;
		}
		n = realloc(ses->obj, (ses->nobj + 16) * sizeof(*n));
		if (!n)
			return 0;
		memset(n + ses->nobj, 0, 16 * sizeof(*n));
		ses->obj = n;
		ses->nobj += 16;
	}
	ses->obj[i].type = type;
	ses->obj[i].p = p;
	ses->obj[i].map = NULL;
	ses->obj[i].map_len = 0;
	return i + 1;
}

static void obj_free(struct blue_mgr_session *ses, uint32_t h)
{
	struct blue_mgr_obj *o = &ses->obj[h - 1];

	if (o->map)
		munmap(o->map, o->map_len);
	memset(o, 0, sizeof(*o));
}

static int destroy_pd(void *p)
{
	return blue_dealloc_pd(p);
}

static int destroy_mr(void *p)
{
	return blue_dereg_mr(p);
}

static int destroy_cq(void *p)
{
	return blue_destroy_cq(p);
}

static int destroy_qp(void *p)
{
	return blue_destroy_qp(p);
}

static int destroy_srq(void *p)
{
	return blue_destroy_srq(p);
}

/* How each kind goes: a DESTROY request, and a session that ended. */
static int (*const destroy_fn[])(void *p) = {
	[BLUE_MGR_OBJ_PD] = destroy_pd, [BLUE_MGR_OBJ_MR] = destroy_mr,
	[BLUE_MGR_OBJ_CQ] = destroy_cq, [BLUE_MGR_OBJ_QP] = destroy_qp,
	[BLUE_MGR_OBJ_SRQ] = destroy_srq,
};

/* The quota an object kind counts against; PDs count against none. */
static bool quota_of(enum blue_mgr_obj_type type, enum blue_quota *q)
{
	switch (type) {
	case BLUE_MGR_OBJ_QP:	*q = BLUE_QUOTA_QP; return true;
	case BLUE_MGR_OBJ_MR:	*q = BLUE_QUOTA_MR; return true;
	case BLUE_MGR_OBJ_CQ:	*q = BLUE_QUOTA_CQ; return true;
	default:		return false;
	}
}

/*
 * Destroy what handle @h names; its handle (and an MR's mapping) goes with it, and its
 * tenant gets the quota back.
 */
static int obj_destroy(struct blue_mgr_session *ses, uint32_t h)
{
	struct blue_mgr_obj *o = &ses->obj[h - 1];
	uint64_t bytes = o->type == BLUE_MGR_OBJ_MR ? ((struct blue_mr *)o->p)->length : 0;
	enum blue_mgr_obj_type type = o->type;
	enum blue_quota q;
	int err = destroy_fn[type](o->p);

	if (err)
		return err;
	obj_free(ses, h);
	if (ses->tenant && quota_of(type, &q))
		blue__tenant_uncharge(ses->tenant, q, bytes);
	return 0;
}

/* Count a new object against the session's tenant. Return: 0 or EDQUOT (logged). */
static int charge(struct blue_mgr_call *c, enum blue_quota q, uint64_t bytes)
{
	return blue__tenant_charge(c->ses->tenant, q, bytes);
}

static uint32_t ring_log2(const struct blue_ring *r)
{
	return (uint32_t)__builtin_ctz(blue_ring_size(r));
}

/* Take a ring's memfd to send: the reply carries it, then the server closes it. */
static void hand_over(struct blue_mgr_call *c, int *fd)
{
	c->fds_out[c->nfds_out++] = *fd;
	*fd = -1;
}

static int cmd_hello(struct blue_mgr_call *c)
{
	const struct blue_context *ctx = c->ctx;
	struct blue_mgr_rep *r = c->rep;

	if (c->req->u.hello.proto != BLUE_MGR_PROTO ||
	    c->req->u.hello.req_size != sizeof(struct blue_mgr_req) ||
	    c->req->u.hello.rep_size != sizeof(struct blue_mgr_rep)) {
		blue__logf("session %u: protocol %u (messages of %u/%u bytes); this "
			   "blue-manager speaks %u (%zu/%zu): the same libblue build on both "
			   "sides", c->ses->id, c->req->u.hello.proto, c->req->u.hello.req_size,
			   c->req->u.hello.rep_size, BLUE_MGR_PROTO, sizeof(struct blue_mgr_req),
			   sizeof(struct blue_mgr_rep));
		return EPROTO;
	}
	if (!c->ses->tenant) {
		blue__logf("blue-manager: no tenant takes this process (uid %u, gid %u, cgroup "
			   "%s): its config file has no map line for it and no default",
			   (unsigned int)c->ses->uid, (unsigned int)c->ses->gid,
			   c->ses->cgroup[0] ? c->ses->cgroup : "unknown");
		return EACCES;
	}
	r->u.hello.proto = BLUE_MGR_PROTO;
	r->u.hello.queue = c->queue;
	snprintf(r->u.hello.ifname, sizeof(r->u.hello.ifname), "%s", c->ifname);
	memcpy(r->u.hello.mac, ctx->mac, 6);
	r->u.hello.ip = ctx->ip;
	r->u.hello.active_mtu = ctx->active_mtu;
	r->u.hello.link_mbps = ctx->link_mbps;
	_Static_assert(sizeof(r->u.hello.gid) == sizeof(ctx->gid), "GID table");
	memcpy(r->u.hello.gid, ctx->gid, sizeof(ctx->gid));
	blue_query_device((struct blue_context *)ctx, &r->u.hello.dev);
	c->fds_out[0] = dup(c->bell_efd);
	c->fds_out[1] = dup(c->bell_page_fd);
	if (c->fds_out[0] < 0 || c->fds_out[1] < 0) {
		if (c->fds_out[0] >= 0)
			close(c->fds_out[0]);
		if (c->fds_out[1] >= 0)
			close(c->fds_out[1]);
		return EMFILE;
	}
	c->nfds_out = 2;
	c->ses->hello = 1;
	/* a process of the tenant from now on (bluectl, which never says HELLO, is not) */
	c->ses->tenant->use.sessions++;
	c->ses->tenant->use.sessions_total++;
	return 0;
}

static int cmd_alloc_pd(struct blue_mgr_call *c)
{
	struct blue_pd *pd = blue_alloc_pd(c->ctx);

	if (!pd)
		return errno;
	c->rep->handle = obj_put(c->ses, BLUE_MGR_OBJ_PD, pd);
	if (!c->rep->handle) {
		blue_dealloc_pd(pd);
		return ENOMEM;
	}
	return 0;
}

/*
 * Map the part of the process's memfd that holds the MR. The memfd must be sealed
 * against shrinking (blue_buf_alloc seals it): else the process could cut it under
 * the mapping, and the engine's next copy would fault (SIGBUS) in the daemon.
 */
static void *map_mr(struct blue_mgr_call *c, uint64_t off, uint64_t len, size_t *map_len,
		    uint8_t **host)
{
	struct stat st;
	uint64_t align, moff;
	int seals;
	void *p;

	seals = fcntl(c->fd_in, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK)) {
		blue__logf("session %u: reg_mr: the memory is not in a memfd sealed against "
			   "shrinking (register memory from blue_buf_alloc)", c->ses->id);
		return NULL;
	}
	if (fstat(c->fd_in, &st) || off > (uint64_t)st.st_size ||
	    len > (uint64_t)st.st_size - off) {
		blue__logf("session %u: reg_mr: %llu bytes at %llu are past the memfd's end",
			   c->ses->id, (unsigned long long)len, (unsigned long long)off);
		return NULL;
	}
	/* hugetlb memfds map in whole huge pages: st_blksize is their size */
	align = st.st_blksize > 4096 ? (uint64_t)st.st_blksize : 4096;
	moff = off & ~(align - 1);
	*map_len = (size_t)((off - moff + len + align - 1) & ~(align - 1));
	if (moff + *map_len > (uint64_t)st.st_size)
		*map_len = (size_t)((uint64_t)st.st_size - moff);
	p = mmap(NULL, *map_len, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd_in, (off_t)moff);
	if (p == MAP_FAILED) {
		blue__logf("session %u: reg_mr: cannot map %zu bytes of the memfd: %s",
			   c->ses->id, *map_len, strerror(errno));
		return NULL;
	}
	*host = (uint8_t *)p + (off - moff);
	return p;
}

/*
 * Memory that stays in the application (no memfd came: its heap): the engine reaches it
 * with process_vm (mem_at.h). Its first and last byte must be readable there now.
 */
static int heap_mr(struct blue_mgr_call *c, struct blue_mem_at *at)
{
	const typeof(c->req->u.reg_mr) *a = &c->req->u.reg_mr;
	uint8_t byte;
	int err;

	*at = (struct blue_mem_at){ .p = (uint8_t *)(uintptr_t)a->addr, .pid = c->ses->pid };
	if (!a->length || a->addr + a->length < a->addr)
		return EINVAL;
	err = blue__mem_read(*at, &byte, 1);
	if (!err)
		err = blue__mem_read(blue_mem_off(*at, a->length - 1), &byte, 1);
	if (err) {
		blue__logf("reg_mr: 0x%llx + %llu is not memory of process %d that blue-manager "
			   "can reach (%s)", (unsigned long long)a->addr,
			   (unsigned long long)a->length, (int)c->ses->pid, strerror(-err));
		return err == -EFAULT ? EFAULT : EPERM;
	}
	return 0;
}

static int cmd_reg_mr(struct blue_mgr_call *c)
{
	const typeof(c->req->u.reg_mr) *a = &c->req->u.reg_mr;
	struct blue_pd *pd = obj_get(c->ses, a->pd, BLUE_MGR_OBJ_PD);
	struct blue_mem_at at;
	struct blue_mr *mr;
	size_t map_len = 0;
	void *map = NULL;
	uint32_t h;
	int err;

	if (!pd)
		return EBADF;
	if (c->fd_in < 0) {
		err = heap_mr(c, &at);
		if (err)
			return err;
	} else {
		map = map_mr(c, a->fd_off, a->length, &map_len, &at.p);
		if (!map)
			return EINVAL;
		at.pid = 0;
	}
	err = charge(c, BLUE_QUOTA_MR, a->length);
	mr = err ? NULL : blue__reg_mr_at(pd, (void *)(uintptr_t)a->addr, a->length, a->access,
					  at);
	h = mr ? obj_put(c->ses, BLUE_MGR_OBJ_MR, mr) : 0;
	if (!h) {
		if (!err)
			blue__tenant_uncharge(c->ses->tenant, BLUE_QUOTA_MR, a->length);
		err = err ? err : mr ? ENOMEM : errno;
		if (mr)
			blue_dereg_mr(mr);
		if (map)
			munmap(map, map_len);
		return err;
	}
	c->ses->obj[h - 1].map = map;
	c->ses->obj[h - 1].map_len = map_len;
	c->rep->handle = h;
	c->rep->u.mr.lkey = mr->lkey;
	c->rep->u.mr.rkey = mr->rkey;
	return 0;
}

static int cmd_create_cq(struct blue_mgr_call *c)
{
	struct blue_cq *cq;
	int err = charge(c, BLUE_QUOTA_CQ, 0);

	if (err)
		return err;
	cq = blue_create_cq(c->ctx, c->req->u.create_cq.cqe, NULL, NULL, 0);
	if (!cq) {
		err = errno;
		blue__tenant_uncharge(c->ses->tenant, BLUE_QUOTA_CQ, 0);
		return err;
	}
	/* made on a channel: its socket came along; events go to it (cq.c notify_far) */
	if (c->fd_in >= 0) {
		int type = 0;
		socklen_t len = sizeof(type);

		if (getsockopt(c->fd_in, SOL_SOCKET, SO_TYPE, &type, &len) || type != SOCK_DGRAM) {
			blue__logf("session %u: create_cq: the channel descriptor is not a datagram "
				   "socket", c->ses->id);
			err = EINVAL;
		} else {
			cq->notify_fd = c->fd_in;
			c->fd_in = -1;
		}
	}
	c->rep->handle = err ? 0 : obj_put(c->ses, BLUE_MGR_OBJ_CQ, cq);
	if (!c->rep->handle) {
		blue_destroy_cq(cq);
		blue__tenant_uncharge(c->ses->tenant, BLUE_QUOTA_CQ, 0);
		return err ? err : ENOMEM;
	}
	c->rep->u.cq.ring.log2_size = ring_log2(&cq->ring);
	c->rep->u.cq.ring.elem_size = cq->ring.elem_size;
	c->rep->u.cq.cqe = cq->cqe;
	hand_over(c, &cq->shm_fd);
	return 0;
}

static int cmd_create_qp(struct blue_mgr_call *c)
{
	const typeof(c->req->u.create_qp) *a = &c->req->u.create_qp;
	struct blue_pd *pd = obj_get(c->ses, a->pd, BLUE_MGR_OBJ_PD);
	struct blue_qp_init_attr init = { 0 };
	struct blue_qp *qp;
	int err;

	if (!pd)
		return EBADF;
	init.send_cq = obj_get(c->ses, a->send_cq, BLUE_MGR_OBJ_CQ);
	init.recv_cq = obj_get(c->ses, a->recv_cq, BLUE_MGR_OBJ_CQ);
	if (!init.send_cq || !init.recv_cq)
		return EBADF;
	if (a->srq && !(init.srq = obj_get(c->ses, a->srq, BLUE_MGR_OBJ_SRQ)))
		return EBADF;
	if (a->qp_type != BLUE_QPT_RC && a->qp_type != BLUE_QPT_UC &&
	    a->qp_type != BLUE_QPT_UD) {
		blue__logf("create_qp: QP type %u: daemon mode serves RC, UC and UD", a->qp_type);
		return EINVAL;
	}
	init.cap = a->cap;
	init.qp_type = (enum blue_qp_type)a->qp_type;
	init.sq_sig_all = a->sq_sig_all;
	err = charge(c, BLUE_QUOTA_QP, 0);
	if (err)
		return err;
	qp = a->gsi ? blue__gsi_member_create(pd, &init) : blue_create_qp(pd, &init);
	c->rep->handle = qp ? obj_put(c->ses, BLUE_MGR_OBJ_QP, qp) : 0;
	if (!c->rep->handle) {
		err = qp ? ENOMEM : errno;
		if (qp)
			blue_destroy_qp(qp);
		blue__tenant_uncharge(c->ses->tenant, BLUE_QUOTA_QP, 0);
		return err;
	}
	qp->tenant = c->ses->tenant;	/* its class and rate (progress.c) */
	c->rep->u.qp.qpn = blue__qp_wire_qpn(qp);
	c->rep->u.qp.gsi_prefix = qp->gsi_prefix;
	c->rep->u.qp.cap = init.cap;
	c->rep->u.qp.sq.log2_size = ring_log2(&qp->sq.ring);
	c->rep->u.qp.sq.elem_size = qp->sq.ring.elem_size;
	c->rep->u.qp.rq.log2_size = ring_log2(&qp->rq.ring);
	c->rep->u.qp.rq.elem_size = qp->rq.ring.elem_size;
	c->rep->u.qp.sq_max_wr = qp->sq.max_wr;
	c->rep->u.qp.rq_max_wr = qp->rq.max_wr;
	hand_over(c, &qp->sq.shm_fd);
	hand_over(c, &qp->rq.shm_fd);
	return 0;
}

static int cmd_gsi_listen(struct blue_mgr_call *c)
{
	struct blue_qp *qp = obj_get(c->ses, c->req->handle, BLUE_MGR_OBJ_QP);

	if (!qp)
		return EBADF;
	return -blue__gsi_listen(qp, c->req->u.gsi_listen.service_id,
				 c->req->u.gsi_listen.on != 0);
}

static int cmd_mcast(struct blue_mgr_call *c)
{
	struct blue_qp *qp = obj_get(c->ses, c->req->handle, BLUE_MGR_OBJ_QP);
	union blue_gid gid;

	if (!qp)
		return EBADF;
	gid = c->req->u.mcast.gid;
	return c->req->op == BLUE_MGR_ATTACH_MCAST ?
		blue_attach_mcast(qp, &gid, c->req->u.mcast.lid) :
		blue_detach_mcast(qp, &gid, c->req->u.mcast.lid);
}

static int cmd_modify_qp(struct blue_mgr_call *c)
{
	struct blue_qp *qp = obj_get(c->ses, c->req->handle, BLUE_MGR_OBJ_QP);
	struct blue_qp_attr attr;
	int err;

	if (!qp)
		return EBADF;
	attr = c->req->u.modify_qp.attr;
	err = blue_modify_qp(qp, &attr, c->req->u.modify_qp.mask);
	c->rep->u.modify_qp.state = __atomic_load_n(&qp->live->state, __ATOMIC_ACQUIRE);
	return err;
}

static int cmd_query_qp(struct blue_mgr_call *c)
{
	struct blue_qp *qp = obj_get(c->ses, c->req->handle, BLUE_MGR_OBJ_QP);
	int err;

	if (!qp)
		return EBADF;
	err = blue_query_qp(qp, &c->rep->u.query_qp.attr, c->req->u.query_qp.mask,
			    &c->rep->u.query_qp.init);
	/* no pointer of this process goes back: the caller fills in its own */
	c->rep->u.query_qp.init.qp_context = NULL;
	c->rep->u.query_qp.init.send_cq = c->rep->u.query_qp.init.recv_cq = NULL;
	c->rep->u.query_qp.init.srq = NULL;
	return err;
}

static int cmd_qp_policy(struct blue_mgr_call *c)
{
	struct blue_qp *qp = obj_get(c->ses, c->req->handle, BLUE_MGR_OBJ_QP);

	if (!qp)
		return EBADF;
	switch (c->req->op) {
	case BLUE_MGR_SET_RETX:
		return blue_qp_set_retx(qp, &c->req->u.retx);
	case BLUE_MGR_QUERY_RETX:
		return blue_qp_query_retx(qp, &c->rep->u.retx);
	case BLUE_MGR_SET_CC:
		return blue_qp_set_cc(qp, &c->req->u.cc);
	default:
		return blue_qp_query_cc(qp, &c->rep->u.cc);
	}
}

/* The CM calls return -errno and keep their message as the CM error. */
static int cm_result(struct blue_mgr_call *c, int ret)
{
	if (ret)
		snprintf(c->rep->msg, sizeof(c->rep->msg), "%s", blue_cm_last_error());
	return -ret;
}

static int cmd_cm_info(struct blue_mgr_call *c)
{
	struct blue_qp *qp = obj_get(c->ses, c->req->handle, BLUE_MGR_OBJ_QP);

	if (!qp)
		return EBADF;
	return cm_result(c, blue_cm_info_from_qp(c->ctx, qp, c->req->u.cm_info.gid_index,
						 &c->rep->u.cm_info));
}

static int cmd_cm_connect(struct blue_mgr_call *c)
{
	const typeof(c->req->u.cm_connect) *a = &c->req->u.cm_connect;
	struct blue_qp *qp = obj_get(c->ses, c->req->handle, BLUE_MGR_OBJ_QP);

	if (!qp)
		return EBADF;
	int ret = blue_cm_connect_qp(c->ctx, qp, a->psn, &a->remote,
				     a->has_attr ? &a->attr : NULL);

	/* the state it reached (RTS, or where it stopped), as modify_qp answers */
	c->rep->u.modify_qp.state = __atomic_load_n(&qp->live->state, __ATOMIC_ACQUIRE);
	return cm_result(c, ret);
}

/* DEALLOC_PD, DEREG_MR, DESTROY_CQ, DESTROY_QP: the kind the request names. */
static int cmd_destroy(struct blue_mgr_call *c)
{
	enum blue_mgr_obj_type type;

	switch (c->req->op) {
	case BLUE_MGR_DEALLOC_PD:
		type = BLUE_MGR_OBJ_PD;
		break;
	case BLUE_MGR_DEREG_MR:
		type = BLUE_MGR_OBJ_MR;
		break;
	case BLUE_MGR_DESTROY_CQ:
		type = BLUE_MGR_OBJ_CQ;
		break;
	case BLUE_MGR_DESTROY_SRQ:
		type = BLUE_MGR_OBJ_SRQ;
		break;
	default:
		type = BLUE_MGR_OBJ_QP;
		break;
	}
	if (!obj_get(c->ses, c->req->handle, type))
		return EBADF;
	return obj_destroy(c->ses, c->req->handle);
}

static int cmd_create_srq(struct blue_mgr_call *c)
{
	struct blue_pd *pd = obj_get(c->ses, c->req->u.srq.pd, BLUE_MGR_OBJ_PD);
	struct blue_srq_attr attr = c->req->u.srq.attr;
	struct blue_srq *srq;

	if (!pd)
		return EBADF;
	srq = blue_create_srq(pd, &attr, NULL);
	if (!srq)
		return errno;
	c->rep->handle = obj_put(c->ses, BLUE_MGR_OBJ_SRQ, srq);
	if (!c->rep->handle) {
		blue_destroy_srq(srq);
		return ENOMEM;
	}
	c->rep->u.srq.ring.log2_size = ring_log2(&srq->wq.ring);
	c->rep->u.srq.ring.elem_size = srq->wq.ring.elem_size;
	c->rep->u.srq.attr = attr;
	c->rep->u.srq.srqn = srq->srqn;
	hand_over(c, &srq->wq.shm_fd);
	return 0;
}

/* MODIFY_SRQ (the limit) and QUERY_SRQ */
static int cmd_srq_attr(struct blue_mgr_call *c)
{
	struct blue_srq *srq = obj_get(c->ses, c->req->handle, BLUE_MGR_OBJ_SRQ);
	struct blue_srq_attr attr = c->req->u.srq.attr;
	int err;

	if (!srq)
		return EBADF;
	err = c->req->op == BLUE_MGR_MODIFY_SRQ ? blue_modify_srq(srq, &attr, c->req->u.srq.mask) :
						  blue_query_srq(srq, &attr);
	c->rep->u.srq.attr = attr;
	return err;
}

static int cmd_tenant_get(struct blue_mgr_call *c)
{
	const struct blue_tenant_table *tt = c->tenants;
	uint32_t i = c->req->u.tenant.index;
	const struct blue_tenant *t;

	if (i >= tt->n)
		return ENOENT;	/* the end of the list, not an error to log */
	t = &tt->t[i];
	snprintf(c->rep->u.tenant.name, sizeof(c->rep->u.tenant.name), "%s", t->name);
	c->rep->u.tenant.in_config = t->in_config;
	c->rep->u.tenant.lim = t->lim;
	c->rep->u.tenant.use = t->use;
	c->rep->u.tenant.mine = t == c->ses->tenant;
	return 0;
}

/* What changes tenants is root's: bluectl run as root. */
static int admin_only(struct blue_mgr_call *c, const char *what)
{
	if (c->ses->uid == 0)
		return 0;
	blue__logf("tenant %s: only root may (uid %u asked)", what, (unsigned int)c->ses->uid);
	return EPERM;
}

static int cmd_tenant_set(struct blue_mgr_call *c)
{
	char name[BLUE_TENANT_NAME], items[sizeof(c->req->u.tenant.items)];
	struct blue_tenant *t;
	int err = admin_only(c, "set");

	if (err)
		return err;
	snprintf(name, sizeof(name), "%.*s", (int)sizeof(name) - 1, c->req->u.tenant.name);
	snprintf(items, sizeof(items), "%.*s", (int)sizeof(items) - 1, c->req->u.tenant.items);
	t = blue__tenant_find(c->tenants, name);
	if (!t) {
		blue__logf("tenant set: no tenant \"%s\"", name);
		return ENOENT;
	}
	return blue__tenant_set(t, items) ? EINVAL : 0;
}

static int cmd_tenant_reload(struct blue_mgr_call *c)
{
	int err = admin_only(c, "reload");

	if (err)
		return err;
	if (!c->tenants_path) {
		blue__logf("tenant reload: this blue-manager runs without --tenants");
		return ENOENT;
	}
	return blue__mgr_tenants_reload(c->tenants, c->tenants_path) ? EINVAL : 0;
}

int blue__mgr_tenants_reload(struct blue_tenant_table *tt, const char *path)
{
	int err;

	if (!path)
		return 0;
	err = blue__tenants_load(tt, path);
	blue__logf("blue-manager: tenants: %s %s", path,
		   err ? "not taken (the line above); the old ones stay" : "read again");
	return err;
}

typedef int (*mgr_cmd_fn)(struct blue_mgr_call *c);

static const mgr_cmd_fn cmds[BLUE_MGR_OP_MAX] = {
	[BLUE_MGR_HELLO] = cmd_hello,
	[BLUE_MGR_ALLOC_PD] = cmd_alloc_pd,
	[BLUE_MGR_DEALLOC_PD] = cmd_destroy,
	[BLUE_MGR_REG_MR] = cmd_reg_mr,
	[BLUE_MGR_DEREG_MR] = cmd_destroy,
	[BLUE_MGR_CREATE_CQ] = cmd_create_cq,
	[BLUE_MGR_DESTROY_CQ] = cmd_destroy,
	[BLUE_MGR_CREATE_QP] = cmd_create_qp,
	[BLUE_MGR_MODIFY_QP] = cmd_modify_qp,
	[BLUE_MGR_QUERY_QP] = cmd_query_qp,
	[BLUE_MGR_DESTROY_QP] = cmd_destroy,
	[BLUE_MGR_SET_RETX] = cmd_qp_policy,
	[BLUE_MGR_QUERY_RETX] = cmd_qp_policy,
	[BLUE_MGR_SET_CC] = cmd_qp_policy,
	[BLUE_MGR_QUERY_CC] = cmd_qp_policy,
	[BLUE_MGR_CM_INFO] = cmd_cm_info,
	[BLUE_MGR_CREATE_SRQ] = cmd_create_srq,
	[BLUE_MGR_MODIFY_SRQ] = cmd_srq_attr,
	[BLUE_MGR_QUERY_SRQ] = cmd_srq_attr,
	[BLUE_MGR_DESTROY_SRQ] = cmd_destroy,
	[BLUE_MGR_GSI_LISTEN] = cmd_gsi_listen,
	[BLUE_MGR_ATTACH_MCAST] = cmd_mcast,
	[BLUE_MGR_DETACH_MCAST] = cmd_mcast,
	[BLUE_MGR_TENANT_GET] = cmd_tenant_get,
	[BLUE_MGR_TENANT_SET] = cmd_tenant_set,
	[BLUE_MGR_TENANT_RELOAD] = cmd_tenant_reload,
	[BLUE_MGR_CM_CONNECT] = cmd_cm_connect,
};

void blue__mgr_call(struct blue_mgr_call *c)
{
	uint32_t op = c->req->op;
	int err;

	memset(c->rep, 0, sizeof(*c->rep));
	c->nfds_out = 0;
	blue__log_capture(c->rep->msg, sizeof(c->rep->msg));
	if (op == 0 || op >= BLUE_MGR_OP_MAX || !cmds[op]) {
		blue__logf("session %u: request %u is not one blue-manager knows", c->ses->id, op);
		err = EOPNOTSUPP;
	} else if (op != BLUE_MGR_HELLO && op < BLUE_MGR_TENANT_GET && !c->ses->hello) {
		/* the tenant commands need no device: bluectl's, whatever its tenant */
		blue__logf("session %u: request %u before HELLO", c->ses->id, op);
		err = EPROTO;
	} else {
		err = cmds[op](c);
	}
	blue__log_capture(NULL, 0);
	c->rep->err = err;
	if (!err)
		c->rep->msg[0] = 0;
}

void blue__mgr_session_drop(struct blue_context *ctx, struct blue_mgr_session *ses)
{
	/* what depends on others first: QPs, then SRQs, MRs, CQs and PDs */
	static const enum blue_mgr_obj_type order[] = {
		BLUE_MGR_OBJ_QP, BLUE_MGR_OBJ_SRQ, BLUE_MGR_OBJ_MR, BLUE_MGR_OBJ_CQ,
		BLUE_MGR_OBJ_PD,
	};

	(void)ctx;
	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
		for (uint32_t i = 0; i < ses->nobj; i++) {
			int err;

			if (ses->obj[i].type != order[k])
				continue;
			/* a process that ended attached (killed, say) leaves its groups */
			if (order[k] == BLUE_MGR_OBJ_QP)
				blue__mcast_detach_all(ses->obj[i].p);
			err = obj_destroy(ses, i + 1);
			if (err)
				blue__logf("session %u: its %s would not go: %s", ses->id,
					   type_name[order[k]], strerror(err));
		}
	}
	free(ses->obj);
	ses->obj = NULL;
	ses->nobj = 0;
}
