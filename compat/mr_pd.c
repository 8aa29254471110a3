// SPDX-License-Identifier: MIT
/* Protection domains and memory regions over blue_alloc_pd() and blue_reg_mr(). */
#include <stdlib.h>
#include <string.h>

#include "compat/compat.h"
#include "runtime/mr.h"

_Static_assert((int)IBV_REREG_MR_CHANGE_TRANSLATION == (int)BLUE_REREG_TRANSLATION &&
	       (int)IBV_REREG_MR_CHANGE_PD == (int)BLUE_REREG_PD &&
	       (int)IBV_REREG_MR_CHANGE_ACCESS == (int)BLUE_REREG_ACCESS, "rereg flags");

BV_EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct bv_context *c;
	struct bv_pd *p;

	if (!context) {
		bv_log("ibv_alloc_pd: context is NULL");
		return bv_null(EINVAL);
	}
	c = bv_ctx(context);
	p = bv_obj_new(sizeof(*p));
	if (!p)
		return NULL;
	bv_lock(c);
	if (!bv_ctx_open(c))
		p->bpd = blue_alloc_pd(c->bctx);
	if (p->bpd)
		bv_list_add(&c->pds, &p->link);
	bv_unlock(c);
	if (!p->bpd)
		return bv_obj_fail(p);
	p->pd.context = context;
	p->pd.handle = bv_handle_new();	/* what ibv_import_pd takes (import.c) */
	return &p->pd;
}

/*
 * A parent domain (ibv_alloc_parent_domain(3)): a PD that stands for the one it is
 * given wherever a PD is taken, so it shares that PD's libblue object. The allocators
 * are hints a provider may use for its buffers; libblue's queues are its own rings, so
 * they are kept but not called (IBV_ALLOCATOR_USE_DEFAULT, in effect). Thread domains
 * do not exist here: one with a td is refused.
 */
static struct ibv_pd *bv_alloc_parent_domain(struct ibv_context *context,
					     struct ibv_parent_domain_init_attr *attr)
{
	uint32_t known = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			 IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	struct bv_context *c = bv_ctx(context);
	struct bv_pd *base, *p;

	if (!attr || !attr->pd || attr->pd->context != context ||
	    bv_pd(attr->pd)->parent_of || (attr->comp_mask & ~known)) {
		bv_log("ibv_alloc_parent_domain: %s", !attr ? "attr is NULL" :
		       !attr->pd ? "attr->pd is NULL" :
		       attr->pd->context != context ? "attr->pd is of another context" :
		       bv_pd(attr->pd)->parent_of ? "attr->pd is a parent domain itself" :
		       "unknown comp_mask bits");
		return bv_null(EINVAL);
	}
	if (attr->td) {
		bv_log("ibv_alloc_parent_domain: thread domains are not supported");
		return bv_null(EOPNOTSUPP);
	}
	base = bv_pd(attr->pd);
	p = bv_obj_new(sizeof(*p));
	if (!p)
		return NULL;
	p->pd.context = context;
	p->bpd = base->bpd;
	p->parent_of = base;
	bv_lock(c);
	base->nparents++;
	bv_list_add(&c->pds, &p->link);
	bv_unlock(c);
	return &p->pd;
}

void bv_pd_init_ops(struct bv_context *c)
{
	c->vctx.alloc_parent_domain = bv_alloc_parent_domain;
}

BV_EXPORT int ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct bv_context *c;
	struct bv_pd *p;
	int err;

	if (!pd) {
		bv_log("ibv_dealloc_pd: pd is NULL");
		return bv_ret(EINVAL);
	}
	p = bv_pd(pd);
	c = bv_ctx(pd->context);
	bv_lock(c);
	if (p->import_of) {	/* the PD stays with its owner (import.c) */
		bv_unimport_pd(p);
		bv_unlock(c);
		return 0;
	}
	if (p->nimports) {
		bv_unlock(c);
		bv_log("ibv_dealloc_pd: %u imports of the PD (ibv_import_pd) still stand; "
		       "unimport them first", p->nimports);
		return bv_ret(EBUSY);
	}
	if (p->parent_of) {	/* its objects are its PD's: nothing of libblue's to free */
		p->parent_of->nparents--;
		bv_list_del(&p->link);
		bv_unlock(c);
		free(p);
		return 0;
	}
	if (p->nparents) {
		bv_unlock(c);
		bv_log("ibv_dealloc_pd: %u parent domains still stand on the PD; dealloc them "
		       "first", p->nparents);
		return bv_ret(EBUSY);
	}
	err = blue_dealloc_pd(bv_pd(pd)->bpd);
	if (!err)
		bv_list_del(&bv_pd(pd)->link);
	bv_unlock(c);
	if (err)
		return bv_ret(err);
	free(bv_pd(pd));
	return 0;
}

/*
 * ibv access flags to blue's. The first four bits, MW_BIND (compat/mw.c) and rdma-core
 * 45's FLUSH_GLOBAL/FLUSH_PERSISTENT are the same bits in blue; the hints (HUGETLB and
 * the optional range, e.g. RELAXED_ORDERING, which a device may ignore by definition) are
 * dropped. Zero-based and on-demand regions change what an address means: refused.
 */
int bv_access(int ibv_access, const char *who)
{
	unsigned int a = (unsigned int)ibv_access;
	unsigned int known = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
			     IBV_ACCESS_MW_BIND;	/* the same bit in blue (compat/mw.c) */

	known |= BV_ACCESS_FLUSH_GLOBAL | BV_ACCESS_FLUSH_PERSISTENT;	/* rdma-core 45 */

	a &= ~(unsigned int)(IBV_ACCESS_HUGETLB | IBV_ACCESS_OPTIONAL_RANGE);
	if (a & ~known) {
		bv_log("%s: access flags 0x%x are not supported (zero-based, on-demand and "
		       "the like); blue takes LOCAL_WRITE, REMOTE_WRITE, REMOTE_READ, "
		       "REMOTE_ATOMIC, MW_BIND, FLUSH_GLOBAL, FLUSH_PERSISTENT", who, a & ~known);
		return -EOPNOTSUPP;
	}
	return (int)a;
}

BV_EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length,
					  uint64_t iova, unsigned int access)
{
	struct bv_context *c;
	struct bv_mr *m;
	int a;

	if (!pd) {
		bv_log("ibv_reg_mr: pd is NULL");
		return bv_null(EINVAL);
	}
	if (iova != (uintptr_t)addr) {
		bv_log("ibv_reg_mr_iova: iova 0x%llx differs from addr %p: blue addresses "
		       "remote memory by virtual address only", (unsigned long long)iova, addr);
		return bv_null(EOPNOTSUPP);
	}
	a = bv_access((int)access, "ibv_reg_mr");
	if (a < 0)
		return bv_null(-a);
	m = bv_obj_new(sizeof(*m));
	if (!m)
		return NULL;
	c = bv_ctx(pd->context);
	bv_lock(c);
	m->bmr = blue_reg_mr(bv_pd(pd)->bpd, addr, length, (unsigned int)a);
	if (m->bmr)
		bv_list_add(&c->mrs, &m->link);
	bv_unlock(c);
	if (!m->bmr)
		return bv_obj_fail(m);
	m->mr.context = pd->context;
	m->mr.pd = pd;
	m->mr.addr = addr;
	m->mr.length = length;
	m->mr.lkey = m->bmr->lkey;
	m->mr.rkey = m->bmr->rkey;
	m->mr.handle = bv_handle_new();	/* what ibv_import_mr takes (import.c) */
	return &m->mr;
}

#undef ibv_reg_mr
BV_EXPORT struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, (uintptr_t)addr, (unsigned int)access);
}

#undef ibv_reg_mr_iova
BV_EXPORT struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length,
					 uint64_t iova, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, iova, (unsigned int)access);
}

BV_EXPORT struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
					   uint64_t iova, int fd, int access)
{
	(void)pd; (void)offset; (void)length; (void)iova; (void)fd; (void)access;
	bv_log("ibv_reg_dmabuf_mr: dma-buf memory is not supported");
	return bv_null(EOPNOTSUPP);
}

/*
 * In place, keeping the keys (runtime/mr.h, blue__rereg_mr). rdma-core's answer on
 * failure: IBV_REREG_MR_ERR_INPUT with errno for what the program asked wrongly.
 */
BV_EXPORT int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr,
			   size_t length, int access)
{
	struct bv_mr *m = (struct bv_mr *)mr;
	struct bv_context *c;
	int a = 0, err;

	if (!mr || !flags || (flags & ~IBV_REREG_MR_FLAGS_SUPPORTED) ||
	    ((flags & IBV_REREG_MR_CHANGE_PD) && (!pd || pd->context != mr->context))) {
		bv_log("ibv_rereg_mr: %s", !mr ? "mr is NULL" : !flags ? "flags are 0" :
		       (flags & ~IBV_REREG_MR_FLAGS_SUPPORTED) ? "unknown flags" :
		       "the new PD is NULL or of another context");
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if (flags & IBV_REREG_MR_CHANGE_ACCESS) {
		a = bv_access(access, "ibv_rereg_mr");
		if (a < 0) {
			errno = -a;
			return IBV_REREG_MR_ERR_INPUT;
		}
	}
	c = bv_ctx(mr->context);
	bv_lock(c);
	/* the IBV_REREG_MR_CHANGE_* values are blue's (runtime/mr.h) */
	err = blue__rereg_mr(m->bmr, (unsigned int)flags,
			     (flags & IBV_REREG_MR_CHANGE_PD) ? bv_pd(pd)->bpd : NULL, addr,
			     length, (unsigned int)a);
	bv_unlock(c);
	if (err) {
		errno = err;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if (flags & IBV_REREG_MR_CHANGE_PD)
		mr->pd = pd;
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		mr->addr = addr;
		mr->length = length;
	}
	return 0;
}

BV_EXPORT int ibv_dereg_mr(struct ibv_mr *mr)
{
	struct bv_context *c;
	struct bv_mr *m = (struct bv_mr *)mr;
	int err;

	if (!mr) {
		bv_log("ibv_dereg_mr: mr is NULL");
		return bv_ret(EINVAL);
	}
	c = bv_ctx(mr->context);
	bv_lock(c);
	if (m->import_of) {	/* the MR stays with its owner (import.c) */
		bv_unimport_mr(m);
		bv_unlock(c);
		return 0;
	}
	if (m->nimports) {
		bv_unlock(c);
		bv_log("ibv_dereg_mr: %u imports of the MR (ibv_import_mr) still stand; "
		       "unimport them first", m->nimports);
		return bv_ret(EBUSY);
	}
	err = blue_dereg_mr(m->bmr);
	if (!err)
		bv_list_del(&m->link);
	bv_unlock(c);
	if (err)
		return bv_ret(err);
	free(m);
	return 0;
}
