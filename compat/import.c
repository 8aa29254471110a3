// SPDX-License-Identifier: MIT
/*
 * Importing verbs objects (IBVERBS_1.10, 1.13). rdma-core opens a second context on a dup
 * of a context's command fd, both on one kernel ucontext, and imports the PDs and MRs of
 * that ucontext by their kernel handle (rxe does it so). blue's objects live in the
 * process that made them, so the import works within that process, which is how
 * rdma-core's test_shared_pd uses it: ibv_import_device() on a dup of a context's cmd_fd
 * gives a context with the same key (compat.h, bv_context.cmd_ino), and ibv_import_pd/mr
 * find a PD or MR of any context of that key by its handle (bv_handle_new: unique in the
 * process). An import stands for the object, sharing its libblue PD or MR: it is used
 * wherever the object is, in its own context. Releasing it (ibv_unimport_*, and also
 * ibv_dealloc_pd/ibv_dereg_mr of an import) frees the import only; the object is freed
 * by its owner, which cannot free it while imports stand (EBUSY), where rdma-core would
 * leave the importers a stale handle. Device memory does not exist here (ibv_import_dm).
 */
#include <stddef.h>

#include "compat/unsup.h"

uint32_t bv_handle_new(void)
{
	static atomic_uint next = 1;

	return atomic_fetch_add(&next, 1);
}

BV_EXPORT struct ibv_context *ibv_import_device(int cmd_fd)
{
	return bv_context_import(cmd_fd);
}

#define bv_of_link(l, type) ((type *)((char *)(l) - offsetof(type, link)))

/*
 * The PD (with @pd) or MR (with @mr) numbered @handle of a context that shares @c's key,
 * @c included; NULL if none. Imports and parent domains are not found: they have no
 * handle of their own. Locking: with the core's lock held.
 */
static void *find_by_handle(struct bv_context *c, uint32_t handle, bool mr)
{
	struct bv_link *l, *o;

	for (l = c->core->ctxs.next; l != &c->core->ctxs; l = l->next) {
		struct bv_context *k = (struct bv_context *)
			((char *)l - offsetof(struct bv_context, async.link));
		struct bv_link *head = mr ? &k->mrs : &k->pds;

		if (k->cmd_dev != c->cmd_dev || k->cmd_ino != c->cmd_ino)
			continue;
		for (o = head->next; o != head; o = o->next) {
			if (mr) {
				struct bv_mr *m = bv_of_link(o, struct bv_mr);

				if (!m->import_of && m->mr.handle == handle)
					return m;
			} else {
				struct bv_pd *p = bv_of_link(o, struct bv_pd);

				if (!p->import_of && !p->parent_of && p->pd.handle == handle)
					return p;
			}
		}
	}
	return NULL;
}

BV_EXPORT struct ibv_pd *ibv_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	struct bv_context *c;
	struct bv_pd *base, *p;

	if (!context) {
		bv_log("ibv_import_pd: context is NULL");
		return bv_null(EINVAL);
	}
	c = bv_ctx(context);
	p = bv_obj_new(sizeof(*p));
	if (!p)
		return NULL;
	bv_lock(c);
	base = find_by_handle(c, pd_handle, false);
	if (base) {
		p->pd.context = context;
		p->pd.handle = pd_handle;
		p->bpd = base->bpd;
		p->import_of = base;
		base->nimports++;
		bv_list_add(&c->pds, &p->link);
	}
	bv_unlock(c);
	if (!base) {
		bv_log("ibv_import_pd: no PD with handle %u in this context or the one it was "
		       "imported from", pd_handle);
		free(p);
		return bv_null(EINVAL);
	}
	return &p->pd;
}

BV_EXPORT struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	struct bv_context *c;
	struct bv_mr *base, *m;
	bool other_pd = false;

	if (!pd) {
		bv_log("ibv_import_mr: pd is NULL");
		return bv_null(EINVAL);
	}
	c = bv_ctx(pd->context);
	m = bv_obj_new(sizeof(*m));
	if (!m)
		return NULL;
	bv_lock(c);
	base = find_by_handle(c, mr_handle, true);
	/* the MR's PD, or an import of it: the keys are checked against that PD */
	if (base && bv_pd(base->mr.pd)->bpd != bv_pd(pd)->bpd) {
		other_pd = true;
		base = NULL;
	}
	if (base) {
		m->mr = base->mr;
		m->mr.context = pd->context;
		m->mr.pd = pd;
		m->bmr = base->bmr;
		m->import_of = base;
		base->nimports++;
		bv_list_add(&c->mrs, &m->link);
	}
	bv_unlock(c);
	if (!base) {
		bv_log("ibv_import_mr: %s handle %u", other_pd ? "pd is not the PD of the MR with" :
		       "no MR in this context or the one it was imported from has", mr_handle);
		free(m);
		return bv_null(EINVAL);
	}
	return &m->mr;
}

void bv_unimport_pd(struct bv_pd *p)
{
	p->import_of->nimports--;
	bv_list_del(&p->link);
	free(p);
}

void bv_unimport_mr(struct bv_mr *m)
{
	m->import_of->nimports--;
	bv_list_del(&m->link);
	free(m);
}

BV_EXPORT void ibv_unimport_pd(struct ibv_pd *pd)
{
	struct bv_context *c;

	if (!pd || !bv_pd(pd)->import_of) {
		bv_log("ibv_unimport_pd: %s", pd ? "the PD was not imported" : "pd is NULL");
		errno = EINVAL;
		return;
	}
	c = bv_ctx(pd->context);
	bv_lock(c);
	bv_unimport_pd(bv_pd(pd));
	bv_unlock(c);
}

BV_EXPORT void ibv_unimport_mr(struct ibv_mr *mr)
{
	struct bv_mr *m = (struct bv_mr *)mr;
	struct bv_context *c;

	if (!m || !m->import_of) {
		bv_log("ibv_unimport_mr: %s", m ? "the MR was not imported" : "mr is NULL");
		errno = EINVAL;
		return;
	}
	c = bv_ctx(mr->context);
	bv_lock(c);
	bv_unimport_mr(m);
	bv_unlock(c);
}

#define WHY_DM "blue has no device memory"

BV_EXPORT struct ibv_dm *ibv_import_dm(struct ibv_context *context, uint32_t dm_handle)
{
	(void)context; (void)dm_handle;
	return BV_UNSUP_NULL(__func__, WHY_DM);
}

BV_EXPORT void ibv_unimport_dm(struct ibv_dm *dm)
{
	(void)dm;
	BV_UNSUP_VOID(__func__, WHY_DM);
}
