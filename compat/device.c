// SPDX-License-Identifier: MIT
/*
 * Devices: every netdev of this network namespace that blue is attached to is one
 * verbs device named after the netdev (`bluectl attach veth0` makes device "veth0").
 * Its node GUID is the MAC's EUI-64, as rxe derives it. Opening a device reads its
 * attributes and fills a struct verbs_context whose ops reach libblue; libblue itself is
 * opened on the netdev by the first object that needs it (compat.h, "Lazy open"), once
 * per process: every context of the device shares one core (compat.h, "Several
 * contexts").
 */
#include <dirent.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <blue/pins.h>

#include "compat/compat.h"

static struct bv_device devices[BV_MAX_DEVICES];
static pthread_mutex_t devices_lock = PTHREAD_MUTEX_INITIALIZER;
/* every open context, for ibv_import_device (bv_context.all); under devices_lock */
static struct bv_link all_contexts = { &all_contexts, &all_contexts };

static struct bv_device *device_slot(const char *ifname)
{
	struct bv_device *free_slot = NULL;
	int i;

	for (i = 0; i < BV_MAX_DEVICES; i++) {
		if (devices[i].used && !strcmp(devices[i].ifname, ifname))
			return &devices[i];
		if (!devices[i].used && !free_slot)
			free_slot = &devices[i];
	}
	return free_slot;
}

/* Fill @d for @ifname (its MAC may have changed since the last scan). */
static void device_fill(struct bv_device *d, const char *ifname, const uint8_t mac[6])
{
	union blue_gid g[BLUE_GID_TBL_LEN];

	/* the GUID is the interface ID of the link-local GID libblue builds in gid[0] */
	blue__fill_gids(g, mac, 0);

	if (!d->used) {
		memset(d, 0, sizeof(*d));
		snprintf(d->ifname, sizeof(d->ifname), "%s", ifname);
		d->dev.node_type = IBV_NODE_CA;
		d->dev.transport_type = IBV_TRANSPORT_IB;
		snprintf(d->dev.name, sizeof(d->dev.name), "%s", ifname);
		snprintf(d->dev.dev_name, sizeof(d->dev.dev_name), "uverbs_blue_%s", ifname);
		snprintf(d->dev.dev_path, sizeof(d->dev.dev_path),
			 "/sys/class/infiniband_verbs/uverbs_blue_%s", ifname);
		snprintf(d->dev.ibdev_path, sizeof(d->dev.ibdev_path),
			 "/sys/class/infiniband/%s", ifname);
		d->used = true;
	}
	memcpy(&d->guid, g[0].raw + 8, 8);	/* already in network order */
}

struct bv_device *bv_device_find(const char *name)
{
	int i;

	for (i = 0; i < BV_MAX_DEVICES; i++)
		if (devices[i].used && !strcmp(devices[i].dev.name, name))
			return &devices[i];
	return NULL;
}

#undef ibv_get_device_list
BV_EXPORT struct ibv_device **ibv_get_device_list(int *num_devices)
{
	struct ibv_device **list;
	struct dirent *de;
	int n = 0, cap = BV_MAX_DEVICES;
	uint8_t mac[6] = { 0 };
	char nsdir[PATH_MAX];
	unsigned int ifindex;
	uint32_t mtu;
	DIR *dir;

	list = calloc((size_t)cap + 1, sizeof(*list));
	if (!list)
		return bv_null(ENOMEM);
	/* this namespace's directory: one entry per netdev blue is attached to here */
	dir = blue_pin_dir(nsdir, sizeof(nsdir), NULL) ? NULL : opendir(nsdir);
	pthread_mutex_lock(&devices_lock);
	while (dir && (de = readdir(dir)) && n < cap) {
		struct bv_device *d;

		if (de->d_name[0] == '.' || strlen(de->d_name) >= IF_NAMESIZE)
			continue;
		if (!(ifindex = if_nametoindex(de->d_name)) ||
		    blue__netdev_attached(de->d_name, ifindex, false) ||
		    blue__netdev_l2(de->d_name, mac, &mtu))
			continue;
		d = device_slot(de->d_name);
		if (!d)
			break;
		device_fill(d, de->d_name, mac);
		list[n++] = &d->dev;
	}
	pthread_mutex_unlock(&devices_lock);
	if (dir)
		closedir(dir);
	if (!n)
		bv_log("no blue device: no netdev of this network namespace has blue attached "
		       "(bluectl attach IFNAME; under `ip netns exec` %s is hidden, use "
		       "nsenter --net=...)", BLUE_PIN_ROOT);
	if (num_devices)
		*num_devices = n;
	return list;
}

BV_EXPORT void ibv_free_device_list(struct ibv_device **list)
{
	/* the devices themselves live on: an open context still points at its device */
	free(list);
}

BV_EXPORT const char *ibv_get_device_name(struct ibv_device *device)
{
	if (!device)
		return bv_null(EINVAL);
	return device->name;
}

BV_EXPORT __be64 ibv_get_device_guid(struct ibv_device *device)
{
	if (!device) {
		errno = EINVAL;
		return 0;
	}
	return ((struct bv_device *)device)->guid;
}

BV_EXPORT int ibv_get_device_index(struct ibv_device *device)
{
	struct bv_device *d = (struct bv_device *)device;

	if (!d)
		return -1;
	return (int)if_nametoindex(d->ifname) ?: -1;
}

/* The answers of an open libblue context to the queries. */
static void attrs_of(struct blue_context *bctx, struct blue_netdev_query *q)
{
	int i;

	memset(q, 0, sizeof(*q));
	(void)blue_query_device(bctx, &q->dev);
	(void)blue_query_port(bctx, 1, &q->port);
	for (i = 0; i < BLUE_GID_TBL_LEN; i++)
		(void)blue_query_gid(bctx, 1, i, &q->gid[i]);
}

/*
 * The core of @d, made by its first context (see compat.h "Several contexts").
 * Locking: with devices_lock held.
 */
static struct bv_core *core_get(struct bv_device *d)
{
	struct bv_core *core = d->core;

	if (!core) {
		core = bv_obj_new(sizeof(*core));
		if (!core)
			return NULL;
		pthread_mutex_init(&core->lock, NULL);
		bv_list_init(&core->ctxs);
		blue__port_watch_init(&core->pwatch);
		snprintf(core->ifname, sizeof(core->ifname), "%s", d->ifname);
		d->core = core;
	}
	core->refs++;
	return core;
}

/*
 * Drop a context's reference on @d's core; the last one stops the progress thread and
 * closes the libblue context (which must then hold no object: the contexts freed theirs).
 * Return: 0, or a positive errno from blue_close_device(), the reference then kept.
 * Locking: with devices_lock held.
 */
static int core_put(struct bv_device *d)
{
	struct bv_core *core = d->core;
	int err;

	if (core->refs > 1) {
		core->refs--;
		return 0;
	}
	bv_progress_stop(core);
	err = core->bctx ? blue_close_device(core->bctx) : 0;	/* none: queries only */
	if (err)
		return err;
	blue__port_watch_fini(&core->pwatch);
	pthread_mutex_destroy(&core->lock);
	free(core);
	d->core = NULL;
	return 0;
}

/*
 * @ctx's command fd: @cmd_fd (an import's, a dup of another context's), or when it is -1
 * a new memfd. There is no kernel command channel, but programs dup the fd to hand the
 * context on (rdma-core's test_shared_pd, then ibv_import_device), so it is an open
 * descriptor of the context's own, and a memfd, whose inode is its own, so that the
 * import finds the context from the dup (@c's key). Return: 0 or an errno.
 */
static int context_cmd_fd(struct bv_context *c, struct ibv_context *ctx, int cmd_fd)
{
	struct stat st;

	ctx->cmd_fd = cmd_fd >= 0 ? cmd_fd : memfd_create("blue-cmd", MFD_CLOEXEC);
	if (ctx->cmd_fd < 0 || fstat(ctx->cmd_fd, &st))
		return errno;
	c->cmd_dev = st.st_dev;
	c->cmd_ino = st.st_ino;
	return 0;
}

/*
 * A verbs context on @d, sharing its core; with the core's libblue context when another
 * context has opened it (its answers to the queries then), else @q's answers (NULL: none
 * yet, bv_context_wrap fills them). @cmd_fd: its command fd (-1: a new one; see
 * context_cmd_fd), owned by it from here on.
 */
static struct bv_context *context_new(struct bv_device *d, const struct blue_netdev_query *q,
				      int cmd_fd)
{
	struct bv_context *c;
	struct ibv_context *ctx;

	c = bv_obj_new(sizeof(*c));
	if (!c)
		return NULL;
	ctx = &c->vctx.context;
	ctx->async_fd = -1;
	if (context_cmd_fd(c, ctx, cmd_fd)) {
		bv_log("%s: no command fd for a context: %s", d->ifname, strerror(errno));
		if (cmd_fd < 0 && ctx->cmd_fd >= 0)
			close(ctx->cmd_fd);
		return bv_obj_fail(c);
	}
	pthread_mutex_lock(&devices_lock);
	c->core = core_get(d);
	if (c->core)
		bv_list_add(&all_contexts, &c->all);
	pthread_mutex_unlock(&devices_lock);
	if (!c->core) {
		if (cmd_fd < 0)	/* a failed import leaves the caller's fd open */
			close(ctx->cmd_fd);
		return bv_obj_fail(c);
	}
	c->bdev = d;
	if (q)
		c->attrs = *q;
	bv_lock(c);
	if (c->core->bctx) {
		c->bctx = c->core->bctx;
		attrs_of(c->bctx, &c->attrs);
	}
	bv_unlock(c);
	bv_list_init(&c->qps);
	bv_list_init(&c->cqs);
	bv_list_init(&c->mrs);
	bv_list_init(&c->pds);
	bv_list_init(&c->chs);
	bv_list_init(&c->srqs);
	bv_list_init(&c->mws);
	bv_lock(c);
	bv_list_add(&c->core->ctxs, &c->async.link);
	bv_unlock(c);
	ctx->device = &d->dev;
	ctx->async_fd = eventfd(0, EFD_CLOEXEC);	/* readable while c->async holds events */
	ctx->num_comp_vectors = 1;
	pthread_mutex_init(&ctx->mutex, NULL);
	/* what makes the program's verbs_get_ctx_op() find the ops below */
	ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
	c->vctx.sz = sizeof(c->vctx);
	bv_query_init_ops(c);
	bv_pd_init_ops(c);
	bv_cq_init_ops(c);
	bv_qp_init_ops(c);
	bv_srq_init_ops(c);
	bv_mw_init_ops(c);
	return c;
}

/* Free @c, which holds no object any more, and drop its core. */
static int context_free(struct bv_context *c)
{
	struct ibv_context *ctx = &c->vctx.context;
	int err;

	bv_lock(c);
	bv_list_del(&c->async.link);
	bv_unlock(c);
	pthread_mutex_lock(&devices_lock);
	err = core_put(c->bdev);
	if (!err)
		bv_list_del(&c->all);
	pthread_mutex_unlock(&devices_lock);
	if (err) {
		bv_lock(c);	/* still open: it takes port events again */
		bv_list_add(&c->core->ctxs, &c->async.link);
		bv_unlock(c);
		return err;
	}
	if (ctx->async_fd >= 0)
		close(ctx->async_fd);
	if (ctx->cmd_fd >= 0)
		close(ctx->cmd_fd);
	pthread_mutex_destroy(&ctx->mutex);
	free(c);
	return 0;
}

struct ibv_context *bv_context_wrap(struct blue_context *bctx, struct bv_device *d)
{
	struct bv_context *c = context_new(d, NULL, -1);
	int err = 0;

	if (!c)
		return NULL;
	bv_lock(c);
	if (!c->core->bctx)
		c->core->bctx = bctx;
	if (c->core->bctx == bctx) {
		c->bctx = bctx;
		attrs_of(bctx, &c->attrs);
	} else {
		bv_log("%s: another libblue context serves this device in this process",
		       d->ifname);
		err = EBUSY;
	}
	bv_unlock(c);
	if (err) {
		(void)context_free(c);
		return bv_null(err);
	}
	return &c->vctx.context;
}

BV_EXPORT struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct bv_device *d = (struct bv_device *)device;
	struct blue_netdev_query q;
	struct bv_context *c;
	int err;

	if (!d || !d->used) {
		bv_log("ibv_open_device: device is not one of ibv_get_device_list()'s");
		return bv_null(EINVAL);
	}
	err = blue__netdev_query(d->ifname, &q);	/* says why on failure */
	if (err)
		return bv_null(-err);
	c = context_new(d, &q, -1);
	if (!c)
		return NULL;
	return &c->vctx.context;
}

/*
 * The context whose command fd is @st's file, its device and its answers to the queries
 * into @d and @q. Locking: with devices_lock held (it takes the context's core lock).
 */
static struct bv_context *context_of_cmd(const struct stat *st, struct bv_device **d,
					 struct blue_netdev_query *q)
{
	struct bv_link *l;

	for (l = all_contexts.next; l != &all_contexts; l = l->next) {
		struct bv_context *c = (struct bv_context *)
			((char *)l - offsetof(struct bv_context, all));

		if (c->cmd_dev == st->st_dev && c->cmd_ino == st->st_ino) {
			*d = c->bdev;
			bv_lock(c);
			*q = c->attrs;
			bv_unlock(c);
			return c;
		}
	}
	return NULL;
}

struct ibv_context *bv_context_import(int cmd_fd)
{
	struct blue_netdev_query q;
	struct bv_context *c;
	struct bv_device *d = NULL;
	struct stat st;

	if (cmd_fd < 0 || fstat(cmd_fd, &st)) {
		bv_log("ibv_import_device: cmd_fd %d is not an open descriptor", cmd_fd);
		return bv_null(EBADF);
	}
	pthread_mutex_lock(&devices_lock);
	c = context_of_cmd(&st, &d, &q);
	pthread_mutex_unlock(&devices_lock);
	if (!c) {
		bv_log("ibv_import_device: cmd_fd %d is no blue context's command fd in this "
		       "process (blue's objects live in the process that made them: a context "
		       "is imported from a dup of its cmd_fd in the same process)", cmd_fd);
		return bv_null(EOPNOTSUPP);
	}
	/*
	 * The device cannot go away meanwhile: a context of a device keeps its slot, and the
	 * import is the program's, which holds that context open while it imports.
	 */
	c = context_new(d, &q, cmd_fd);
	return c ? &c->vctx.context : NULL;
}

int bv_ctx_open(struct bv_context *c)
{
	enum blue_mtu said = c->attrs.port.active_mtu;
	struct bv_core *core = c->core;

	if (c->bctx)
		return 0;
	if (!core->bctx) {
		core->bctx = blue_open_device(c->bdev->ifname);	/* says why on failure */
		if (!core->bctx)
			return bv_ret(errno ?: EIO);
	}
	c->bctx = core->bctx;
	attrs_of(c->bctx, &c->attrs);
	/* only a kernel without AF_XDP multi-buffer makes them differ (blue__netdev_query) */
	if (c->attrs.port.active_mtu != said)
		bv_log("%s: the port's active MTU is %d, not the %d ibv_query_port() said "
		       "before the device opened; ask for the smaller path MTU",
		       c->bdev->ifname, blue_mtu_bytes(c->attrs.port.active_mtu),
		       blue_mtu_bytes(said));
	return 0;
}

#define bv_first(head, type) \
	((type *)((char *)(head)->next - __builtin_offsetof(type, link)))

/*
 * What the program did not destroy, in dependency order (QPs hold CQs and PDs, MRs hold
 * PDs, CQs hold channels). rdma-core leaves this to the kernel; here it is ours.
 */
static void free_leftovers(struct bv_context *c)
{
	while (c->qps.next != &c->qps)
		if (ibv_destroy_qp(&bv_first(&c->qps, struct bv_qp)->qpx.qp_base))
			break;
	while (c->srqs.next != &c->srqs)
		if (ibv_destroy_srq(&bv_first(&c->srqs, struct bv_srq)->srq))
			break;
	bv_mw_leftovers(c);	/* windows hold their MRs */
	while (c->mrs.next != &c->mrs)
		if (ibv_dereg_mr(&bv_first(&c->mrs, struct bv_mr)->mr))
			break;
	while (c->cqs.next != &c->cqs)
		if (ibv_destroy_cq(ibv_cq_ex_to_cq(&bv_first(&c->cqs, struct bv_cq)->cq)))
			break;
	while (c->chs.next != &c->chs)
		if (ibv_destroy_comp_channel(&bv_first(&c->chs, struct bv_channel)->ch))
			break;
	while (c->pds.next != &c->pds)
		if (ibv_dealloc_pd(&bv_first(&c->pds, struct bv_pd)->pd))
			break;
}

BV_EXPORT int ibv_close_device(struct ibv_context *context)
{
	if (!context)
		return bv_ret(EINVAL);
	/* this context's objects only: the device's other contexts keep theirs */
	free_leftovers(bv_ctx(context));
	return bv_ret(context_free(bv_ctx(context)));
}
