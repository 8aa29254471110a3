// SPDX-License-Identifier: MIT
/*
 * The devices rdma_cm knows (cma.h): every verbs device opened once, with its GID table
 * (our libibverbs: index 0 the fe80 link-local GID, 1 ::ffff:IPv4, 2.. the IPv6
 * addresses), the port's active MTU and the limits connect/accept clamp to. An address
 * names a device by the GID it maps to. rdma_get_devices hands out these contexts.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compat/rdmacm/cma.h"

struct cma_dev *cma_dev_list[CMA_MAX_DEVICES];
int cma_ndevs;
static bool devs_done;

static struct cma_dev *dev_open(struct ibv_device *ibdev)
{
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	struct cma_dev *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->verbs = ibv_open_device(ibdev);
	if (!d->verbs) {
		cma_log("device %s: ibv_open_device: %s", ibv_get_device_name(ibdev),
			strerror(errno));
		free(d);
		return NULL;
	}
	d->port_num = 1;
	d->guid = ibv_get_device_guid(ibdev);
	if (ibv_query_port(d->verbs, 1, &pa)) {
		memset(&pa, 0, sizeof(pa));
		pa.active_mtu = IBV_MTU_1024;
		pa.gid_tbl_len = 16;
	}
	d->active_mtu = pa.active_mtu;
	if (ibv_query_device(d->verbs, &da))
		memset(&da, 0, sizeof(da));
	d->max_qp_rd_atom = da.max_qp_rd_atom;
	d->max_qp_init_rd_atom = da.max_qp_init_rd_atom;
	cma_dev_read_gids(d, pa.gid_tbl_len);
	return d;
}

int cma_devs_init(void)
{
	struct ibv_device **list;
	int n = 0;

	if (devs_done)
		return 0;
	list = ibv_get_device_list(&n);
	if (!list) {
		int e = errno ? errno : ENODEV;

		cma_log("no verbs devices: ibv_get_device_list: %s", strerror(e));
		return -e;
	}
	for (int i = 0; i < n && cma_ndevs < CMA_MAX_DEVICES; i++) {
		struct cma_dev *d = dev_open(list[i]);

		if (d)
			cma_dev_list[cma_ndevs++] = d;
	}
	ibv_free_device_list(list);
	if (!cma_ndevs) {
		cma_log("no verbs device could be opened (is blue attached to a netdev?)");
		return -ENODEV;
	}
	devs_done = true;
	return 0;
}

void cma_addr_gid(const struct sockaddr *addr, uint8_t gid[16])
{
	memset(gid, 0, 16);
	if (addr->sa_family == AF_INET) {
		gid[10] = 0xff;
		gid[11] = 0xff;
		memcpy(gid + 12, &((const struct sockaddr_in *)addr)->sin_addr, 4);
	} else if (addr->sa_family == AF_INET6) {
		memcpy(gid, &((const struct sockaddr_in6 *)addr)->sin6_addr, 16);
	}
}

int cma_dev_gid_index(const struct cma_dev *dev, const uint8_t gid[16])
{
	for (int i = 0; i < dev->ngid; i++)
		if (!memcmp(dev->gid[i].raw, gid, 16))
			return i;
	return -1;
}

struct cma_dev *cma_dev_by_addr(const struct sockaddr *addr)
{
	uint8_t gid[16];

	cma_addr_gid(addr, gid);
	for (int i = 0; i < cma_ndevs; i++) {
		struct cma_dev *d = cma_dev_list[i];

		if (cma_dev_gid_index(d, gid) >= 0)
			return d;
		/* an address added since the open: read the table again */
		cma_dev_read_gids(d, d->ngid ? d->ngid : 16);
		if (cma_dev_gid_index(d, gid) >= 0)
			return d;
	}
	return NULL;
}

struct cma_dev *cma_dev_by_verbs(const struct ibv_context *verbs)
{
	for (int i = 0; i < cma_ndevs; i++)
		if (cma_dev_list[i]->verbs == verbs)
			return cma_dev_list[i];
	return NULL;
}

int cma_dev_index(const struct cma_dev *dev)
{
	for (int i = 0; i < cma_ndevs; i++)
		if (cma_dev_list[i] == dev)
			return i;
	return -1;
}

CMA_EXPORT struct ibv_context **rdma_get_devices(int *num_devices)
{
	struct ibv_context **l = NULL;
	int err;

	cma_lock();
	err = cma_devs_init();
	if (!err) {
		l = calloc((size_t)cma_ndevs + 1, sizeof(*l));
		if (l)
			for (int i = 0; i < cma_ndevs; i++)
				l[i] = cma_dev_list[i]->verbs;
		else
			err = -ENOMEM;
	}
	if (num_devices)
		*num_devices = l ? cma_ndevs : 0;
	cma_unlock();
	if (!l) {
		cma_log("rdma_get_devices(): no device list: %s", strerror(-err));
		errno = -err;
	}
	return l;
}

CMA_EXPORT void rdma_free_devices(struct ibv_context **list)
{
	free(list);
}
