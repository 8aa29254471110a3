// SPDX-License-Identifier: MIT
/*
 * The small calls around the verbs objects: names for enum values, fork support, the
 * sysfs reader that ibv_devinfo uses for board_id, and rate conversions.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compat/compat.h"

BV_EXPORT const char *ibv_wc_status_str(enum ibv_wc_status status)
{
	/* blue.h numbers its statuses as verbs.h does, and libblue already names them */
	return blue_wc_status_str((enum blue_wc_status)status);
}

BV_EXPORT const char *ibv_node_type_str(enum ibv_node_type node_type)
{
	switch (node_type) {
	case IBV_NODE_CA:		return "InfiniBand channel adapter";
	case IBV_NODE_SWITCH:		return "InfiniBand switch";
	case IBV_NODE_ROUTER:		return "InfiniBand router";
	case IBV_NODE_RNIC:		return "iWARP NIC";
	case IBV_NODE_USNIC:		return "usNIC";
	case IBV_NODE_USNIC_UDP:	return "usNIC UDP";
	case IBV_NODE_UNSPECIFIED:	return "unspecified";
	default:			return "unknown";
	}
}

BV_EXPORT const char *ibv_port_state_str(enum ibv_port_state port_state)
{
	switch (port_state) {
	case IBV_PORT_NOP:		return "PORT_NOP";
	case IBV_PORT_DOWN:		return "PORT_DOWN";
	case IBV_PORT_INIT:		return "PORT_INIT";
	case IBV_PORT_ARMED:		return "PORT_ARMED";
	case IBV_PORT_ACTIVE:		return "PORT_ACTIVE";
	case IBV_PORT_ACTIVE_DEFER:	return "PORT_ACTIVE_DEFER";
	default:			return "invalid state";
	}
}

BV_EXPORT const char *ibv_event_type_str(enum ibv_event_type event)
{
	switch (event) {
	case IBV_EVENT_CQ_ERR:			return "CQ error";
	case IBV_EVENT_QP_FATAL:		return "local work queue catastrophic error";
	case IBV_EVENT_QP_REQ_ERR:		return "invalid request local work queue error";
	case IBV_EVENT_QP_ACCESS_ERR:		return "local access violation work queue error";
	case IBV_EVENT_COMM_EST:		return "communication established";
	case IBV_EVENT_SQ_DRAINED:		return "send queue drained";
	case IBV_EVENT_PATH_MIG:		return "path migrated";
	case IBV_EVENT_PATH_MIG_ERR:		return "path migration request error";
	case IBV_EVENT_DEVICE_FATAL:		return "local catastrophic error";
	case IBV_EVENT_PORT_ACTIVE:		return "port active";
	case IBV_EVENT_PORT_ERR:		return "port error";
	case IBV_EVENT_LID_CHANGE:		return "LID change";
	case IBV_EVENT_PKEY_CHANGE:		return "P_Key change";
	case IBV_EVENT_SM_CHANGE:		return "SM change";
	case IBV_EVENT_SRQ_ERR:			return "SRQ catastrophic error";
	case IBV_EVENT_SRQ_LIMIT_REACHED:	return "SRQ limit reached";
	case IBV_EVENT_QP_LAST_WQE_REACHED:	return "last WQE reached";
	case IBV_EVENT_CLIENT_REREGISTER:	return "client reregistration";
	case IBV_EVENT_GID_CHANGE:		return "GID table change";
	case IBV_EVENT_WQ_FATAL:		return "WQ fatal";
	default:				return "unknown";
	}
}

/* libblue registers memory without pinning it, so fork() needs nothing from us. */
BV_EXPORT int ibv_fork_init(void)
{
	return 0;
}

BV_EXPORT enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

BV_EXPORT int ibv_dontfork_range(void *base, size_t size)
{
	(void)base;
	(void)size;
	return 0;
}

BV_EXPORT int ibv_dofork_range(void *base, size_t size)
{
	(void)base;
	(void)size;
	return 0;
}

BV_EXPORT int ibv_get_sysfs_path(char *buf, size_t size)
{
	const char *env = getenv("SYSFS_PATH");

	if (!buf || !size)
		return -1;
	snprintf(buf, size, "%s", env && env[0] ? env : "/sys");
	return 0;
}

/*
 * A blue device has no kernel sysfs directory; the attributes programs read from it
 * are answered here (ibv_devinfo prints board_id). Other paths are read as files.
 */
static int synth_attr(const char *dir, const char *file, char *buf, size_t size)
{
	const char *name = strrchr(dir, '/');
	struct bv_device *d;
	int n;

	if (strncmp(dir, "/sys/class/infiniband", 21) || !name)
		return -2;
	d = bv_device_find(name + 1);
	if (!d)
		return -2;
	if (!strcmp(file, "board_id"))
		n = snprintf(buf, size, "blue_%s", d->ifname);
	else if (!strcmp(file, "node_type"))
		n = snprintf(buf, size, "1: CA");
	else if (!strcmp(file, "ports/1/link_layer"))
		n = snprintf(buf, size, "Ethernet");
	else if (!strcmp(file, "ports/1/gid_attrs/types/0"))
		n = snprintf(buf, size, "IB/RoCE v1");
	else if (!strcmp(file, "ports/1/gid_attrs/types/1"))
		n = snprintf(buf, size, "RoCE v2");
	else if (!strcmp(file, "ports/1/gid_attrs/ndevs/0") ||
		 !strcmp(file, "ports/1/gid_attrs/ndevs/1"))
		n = snprintf(buf, size, "%s", d->ifname);
	else {
		errno = ENOENT;
		return -1;
	}
	return n < (int)size ? n : (int)size;
}

BV_EXPORT int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	char path[512];
	ssize_t len;
	int fd, n;

	if (!dir || !file || !buf || !size) {
		bv_log("ibv_read_sysfs_file: %s is NULL or empty",
		       !dir ? "dir" : !file ? "file" : "buf");
		errno = EINVAL;
		return -1;
	}
	n = synth_attr(dir, file, buf, size);
	if (n != -2)
		return n;
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = read(fd, buf, size);
	close(fd);
	if (len > 0 && (size_t)len < size && buf[len - 1] == '\n')
		buf[--len] = '\0';
	else if (len > 0 && (size_t)len < size)
		buf[len] = '\0';
	return (int)len;
}

BV_EXPORT int ibv_rate_to_mult(enum ibv_rate rate)
{
	switch (rate) {
	case IBV_RATE_2_5_GBPS:	return 1;
	case IBV_RATE_5_GBPS:	return 2;
	case IBV_RATE_10_GBPS:	return 4;
	case IBV_RATE_20_GBPS:	return 8;
	case IBV_RATE_30_GBPS:	return 12;
	case IBV_RATE_40_GBPS:	return 16;
	case IBV_RATE_60_GBPS:	return 24;
	case IBV_RATE_80_GBPS:	return 32;
	case IBV_RATE_120_GBPS:	return 48;
	default:		return -1;
	}
}

BV_EXPORT enum ibv_rate mult_to_ibv_rate(int mult)
{
	switch (mult) {
	case 1:		return IBV_RATE_2_5_GBPS;
	case 2:		return IBV_RATE_5_GBPS;
	case 4:		return IBV_RATE_10_GBPS;
	case 8:		return IBV_RATE_20_GBPS;
	case 12:	return IBV_RATE_30_GBPS;
	case 16:	return IBV_RATE_40_GBPS;
	case 24:	return IBV_RATE_60_GBPS;
	case 32:	return IBV_RATE_80_GBPS;
	case 48:	return IBV_RATE_120_GBPS;
	default:	return IBV_RATE_MAX;
	}
}
