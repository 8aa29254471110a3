// SPDX-License-Identifier: MIT
/*
 * The queries: device (plain and extended), port (the verbs_context op the program's
 * inline ibv_query_port() calls, and the exported fallback), the GID table with its
 * types as rxe lays it out, and P_Keys (async events: async.c). They answer from the
 * context's attributes (compat.h, "Lazy open"), never needing the AF_XDP socket.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "compat/compat.h"
#include "runtime/srq.h"

static void fill_device_attr(struct bv_context *c, const struct blue_device_attr *b,
			     struct ibv_device_attr *a)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "%s", b->fw_ver);
	a->node_guid = c->bdev->guid;
	a->sys_image_guid = c->bdev->guid;
	a->max_mr_size = b->max_mr_size;
	a->page_size_cap = 0xfffff000;	/* any 4 KiB multiple: blue does not pin pages */
	a->vendor_id = b->vendor_id;	/* libblue's, so the two APIs agree */
	a->vendor_part_id = b->vendor_part_id;
	a->hw_ver = 0;
	a->max_qp = b->max_qp;
	a->max_qp_wr = b->max_qp_wr;
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_PORT_ACTIVE_EVENT;
	/* windows of type 1 and 2B, as rxe (runtime/mw.c) */
	a->device_cap_flags |= IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B;
	a->max_mw = b->max_mw;
	a->max_sge = b->max_sge;
	a->max_sge_rd = b->max_sge;
	a->max_cq = b->max_cq;
	a->max_cqe = b->max_cqe;
	a->max_mr = b->max_mr;
	a->max_pd = b->max_pd;
	a->max_qp_rd_atom = b->max_qp_rd_atom;
	a->max_res_rd_atom = b->max_qp_rd_atom * b->max_qp;
	a->max_qp_init_rd_atom = b->max_qp_init_rd_atom;
	a->atomic_cap = b->atomic_cap ? IBV_ATOMIC_HCA : IBV_ATOMIC_NONE;
	a->max_srq = BLUE_MAX_SRQ;
	a->max_srq_wr = BLUE_MAX_SRQ_WR;
	a->max_srq_sge = BLUE_MAX_SRQ_SGE;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 15;
	a->phys_port_cnt = b->phys_port_cnt;
	a->max_mcast_grp = b->max_mcast_grp;
	a->max_mcast_qp_attach = b->max_mcast_qp_attach;
	a->max_total_mcast_qp_attach = b->max_total_mcast_qp_attach;
}

BV_EXPORT int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *attr)
{
	struct blue_device_attr b;
	struct bv_context *c;

	if (!context || !attr) {
		bv_log("ibv_query_device: %s is NULL", context ? "device_attr" : "context");
		return bv_ret(EINVAL);
	}
	c = bv_ctx(context);
	bv_lock(c);
	b = c->attrs.dev;
	bv_unlock(c);
	fill_device_attr(c, &b, attr);
	return 0;
}

static int bv_query_device_ex(struct ibv_context *context,
			      const struct ibv_query_device_ex_input *input,
			      struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex ex;
	int err;

	if (input && input->comp_mask) {
		bv_log("ibv_query_device_ex: input comp_mask 0x%x is not supported",
		       input->comp_mask);
		return bv_ret(EINVAL);
	}
	if (!attr || attr_size < sizeof(struct ibv_device_attr)) {
		bv_log("ibv_query_device_ex: attr is NULL or attr_size %zu too small", attr_size);
		return bv_ret(EINVAL);
	}
	memset(&ex, 0, sizeof(ex));
	err = ibv_query_device(context, &ex.orig_attr);
	if (err)
		return err;
	ex.phys_port_cnt_ex = ex.orig_attr.phys_port_cnt;
	/* IBA 1.5, as rxe reports them; no FLUSH_PERSISTENT: there is no pmem (mr.c) */
	ex.device_cap_flags_ex = BV_DEVICE_ATOMIC_WRITE | BV_DEVICE_FLUSH_GLOBAL;
	/* everything else (ODP, TSO, RSS, timestamps, DM) is absent: zero */
	memcpy(attr, &ex, attr_size < sizeof(ex) ? attr_size : sizeof(ex));
	if (attr_size > sizeof(ex))
		memset((char *)attr + sizeof(ex), 0, attr_size - sizeof(ex));
	return 0;
}

static int bv_query_port(struct ibv_context *context, uint8_t port_num,
			 struct ibv_port_attr *port_attr, size_t port_attr_len)
{
	struct ibv_port_attr a;
	struct blue_port_attr b;
	struct bv_context *c;

	if (!context || !port_attr) {
		bv_log("ibv_query_port: %s is NULL", context ? "port_attr" : "context");
		return bv_ret(EINVAL);
	}
	c = bv_ctx(context);
	if (port_num != 1) {
		bv_log("ibv_query_port: %s has port 1 only, not port_num %u",
		       c->bdev->dev.name, port_num);
		return bv_ret(EINVAL);
	}
	bv_lock(c);
	b = c->attrs.port;
	bv_unlock(c);
	memset(&a, 0, sizeof(a));
	a.state = (enum ibv_port_state)b.state;
	a.max_mtu = (enum ibv_mtu)b.max_mtu;
	a.active_mtu = (enum ibv_mtu)b.active_mtu;
	a.gid_tbl_len = b.gid_tbl_len;
	a.port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS;
	a.max_msg_sz = 1u << 31;	/* IBA: a message is at most 2^31 bytes */
	a.pkey_tbl_len = 1;
	a.max_vl_num = 1;
	a.active_width = 2;	/* 4X */
	a.active_speed = 32;	/* EDR: the numbers mean nothing for a veth */
	a.phys_state = 5;	/* LinkUp */
	a.link_layer = IBV_LINK_LAYER_ETHERNET;
	memcpy(port_attr, &a, port_attr_len < sizeof(a) ? port_attr_len : sizeof(a));
	return 0;
}

/*
 * The exported entry, reached when a program's verbs_context lookup fails: the same
 * answer in the older, shorter struct (up to link_layer and one reserved byte).
 */
#undef ibv_query_port
BV_EXPORT int ibv_query_port(struct ibv_context *context, uint8_t port_num,
			     struct _compat_ibv_port_attr *port_attr)
{
	return bv_query_port(context, port_num, (struct ibv_port_attr *)port_attr,
			     offsetof(struct ibv_port_attr, port_cap_flags2));
}

BV_EXPORT int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index,
			    union ibv_gid *gid)
{
	struct bv_context *c;

	if (!context || !gid) {
		bv_log("ibv_query_gid: %s is NULL", context ? "gid" : "context");
		errno = EINVAL;
		return -1;
	}
	if (port_num != 1 || index < 0 || index >= BLUE_GID_TBL_LEN) {
		errno = EINVAL;	/* quietly: programs walk the table until this */
		return -1;
	}
	c = bv_ctx(context);
	bv_lock(c);
	/* an empty entry reads as zeros: rdma-core's ibv_query_gid turns ENODATA into that */
	memcpy(gid->raw, c->attrs.gid[index].raw, sizeof(gid->raw));
	bv_unlock(c);
	return 0;
}

/* Is entry @index of @context's table in use? */
static bool gid_valid(struct ibv_context *context, int index)
{
	struct bv_context *c = bv_ctx(context);
	bool v;

	bv_lock(c);
	v = blue__gid_valid(c->attrs.gid, index);
	bv_unlock(c);
	return v;
}

/* rdma-core's private enum ibv_gid_type_sysfs, as ibv_devinfo and perftest use it. */
enum bv_gid_type_sysfs {
	BV_GID_TYPE_SYSFS_IB_ROCE_V1,
	BV_GID_TYPE_SYSFS_ROCE_V2,
};

/*
 * blue's GID table, laid out as rxe's for one GID type: index 0 the link-local default
 * GID (RoCE v1, as rxe lists its index 0; blue sends RoCEv2 only, so it is not usable as
 * a source), index 1 the IPv4-mapped GID (annex A17.4.1), 2.. the netdev's global IPv6
 * addresses, all RoCE v2. rxe lists each address twice, RoCE v1 then v2; blue once.
 */
static int gid_type(int index)
{
	return index == 0 ? IBV_GID_TYPE_ROCE_V1 : IBV_GID_TYPE_ROCE_V2;
}

BV_EXPORT int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
				 unsigned int index, enum bv_gid_type_sysfs *type)
{
	union ibv_gid gid;

	if (!type) {
		bv_log("ibv_query_gid_type: type is NULL");
		errno = EINVAL;
		return -1;
	}
	if (ibv_query_gid(context, port_num, (int)index, &gid))
		return -1;
	*type = gid_type((int)index) == IBV_GID_TYPE_ROCE_V2 ? BV_GID_TYPE_SYSFS_ROCE_V2 :
								BV_GID_TYPE_SYSFS_IB_ROCE_V1;
	return 0;
}

BV_EXPORT int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num,
				uint32_t gid_index, struct ibv_gid_entry *entry, uint32_t flags,
				size_t entry_size)
{
	struct ibv_gid_entry e;
	struct bv_context *c;

	if (!entry || flags || entry_size < sizeof(e)) {
		bv_log("ibv_query_gid_ex: %s", !entry ? "entry is NULL" :
		       flags ? "flags must be 0" : "entry_size too small");
		return bv_ret(EINVAL);
	}
	/* rdma-core says ENODATA for an index with no GID */
	if (port_num > 255 || gid_index > 255 ||
	    ibv_query_gid(context, (uint8_t)port_num, (int)gid_index, &e.gid) ||
	    !gid_valid(context, (int)gid_index))
		return bv_ret(ENODATA);
	c = bv_ctx(context);
	e.gid_index = gid_index;
	e.port_num = port_num;
	e.gid_type = (uint32_t)gid_type((int)gid_index);
	e.ndev_ifindex = if_nametoindex(c->bdev->ifname);
	memcpy(entry, &e, sizeof(e));
	return 0;
}

BV_EXPORT ssize_t _ibv_query_gid_table(struct ibv_context *context,
				       struct ibv_gid_entry *entries, size_t max_entries,
				       uint32_t flags, size_t entry_size)
{
	size_t i, n = 0, valid = 0;

	if (!context || !entries || flags || entry_size < sizeof(*entries)) {
		bv_log("ibv_query_gid_table: bad context, entries, flags or entry_size");
		errno = EINVAL;
		return -EINVAL;
	}
	for (i = 0; i < BLUE_GID_TBL_LEN; i++)
		valid += gid_valid(context, (int)i);
	/* every valid GID must fit, or it is EINVAL, as the kernel answers rdma-core */
	if (max_entries < valid) {
		bv_log("ibv_query_gid_table: room for %zu entries, the table holds %zu GIDs",
		       max_entries, valid);
		errno = EINVAL;
		return -EINVAL;
	}
	/* the valid entries only, each with its own index, as the kernel lists them */
	for (i = 0; i < BLUE_GID_TBL_LEN && n < valid; i++) {
		int err;

		if (!gid_valid(context, (int)i))
			continue;
		err = _ibv_query_gid_ex(context, 1, (uint32_t)i,
					(struct ibv_gid_entry *)((char *)entries + n * entry_size),
					0, entry_size);
		if (err)
			return -err;
		n++;
	}
	return (ssize_t)n;
}

BV_EXPORT int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index,
			     __be16 *pkey)
{
	if (!context || !pkey || port_num != 1 || index != 0) {
		bv_log("ibv_query_pkey: the table holds index 0 of port 1 only (asked "
		       "port %u index %d)", port_num, index);
		errno = EINVAL;
		return -1;
	}
	*pkey = htobe16(0xffff);	/* the default P_Key, full membership (IBA 10.9.1.2) */
	return 0;
}

BV_EXPORT int ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num, __be16 pkey)
{
	__be16 p;

	if (ibv_query_pkey(context, port_num, 0, &p))
		return -1;
	return p == pkey ? 0 : (errno = ENOENT, -1);
}

void bv_query_init_ops(struct bv_context *c)
{
	c->vctx.query_port = bv_query_port;
	c->vctx.query_device_ex = bv_query_device_ex;
}
