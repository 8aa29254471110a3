// SPDX-License-Identifier: MIT
/*
 * librdmacm.so.1 stand-in: the RDMA connection manager is not provided (blue connects
 * over TCP exchanges, as perftest does without -R). Objects are opaque here.
 */
#include <stdint.h>

#include "compat/stub_log.h"

#define NS() stub_notsup("librdmacm", __func__)

STUB_EXPORT void *rdma_create_event_channel(void) { NS(); return NULL; }
STUB_EXPORT void rdma_destroy_event_channel(void *ch) { (void)ch; }
STUB_EXPORT int rdma_create_id(void *ch, void **id, void *ctx, int ps)
{ (void)ch; (void)id; (void)ctx; (void)ps; NS(); return -1; }
STUB_EXPORT int rdma_destroy_id(void *id) { (void)id; NS(); return -1; }
STUB_EXPORT int rdma_bind_addr(void *id, void *addr) { (void)id; (void)addr; NS(); return -1; }
STUB_EXPORT int rdma_resolve_addr(void *id, void *src, void *dst, int ms)
{ (void)id; (void)src; (void)dst; (void)ms; NS(); return -1; }
STUB_EXPORT int rdma_resolve_route(void *id, int ms) { (void)id; (void)ms; NS(); return -1; }
STUB_EXPORT int rdma_create_qp(void *id, void *pd, void *attr)
{ (void)id; (void)pd; (void)attr; NS(); return -1; }
STUB_EXPORT int rdma_create_qp_ex(void *id, void *attr) { (void)id; (void)attr; NS(); return -1; }
STUB_EXPORT void rdma_destroy_qp(void *id) { (void)id; }
STUB_EXPORT int rdma_connect(void *id, void *p) { (void)id; (void)p; NS(); return -1; }
STUB_EXPORT int rdma_listen(void *id, int backlog) { (void)id; (void)backlog; NS(); return -1; }
STUB_EXPORT int rdma_accept(void *id, void *p) { (void)id; (void)p; NS(); return -1; }
STUB_EXPORT int rdma_reject(void *id, const void *data, uint8_t len)
{ (void)id; (void)data; (void)len; NS(); return -1; }
STUB_EXPORT int rdma_disconnect(void *id) { (void)id; NS(); return -1; }
STUB_EXPORT int rdma_get_cm_event(void *ch, void **ev) { (void)ch; (void)ev; NS(); return -1; }
STUB_EXPORT int rdma_ack_cm_event(void *ev) { (void)ev; NS(); return -1; }
STUB_EXPORT int rdma_set_option(void *id, int level, int name, void *val, size_t len)
{ (void)id; (void)level; (void)name; (void)val; (void)len; NS(); return -1; }
STUB_EXPORT int rdma_getaddrinfo(const char *node, const char *svc, const void *hints,
				 void **res)
{ (void)node; (void)svc; (void)hints; if (res) *res = NULL; NS(); return -1; }
STUB_EXPORT void rdma_freeaddrinfo(void *res) { (void)res; }

/* The names of enum rdma_cm_event_type, as librdmacm prints them. */
STUB_EXPORT const char *rdma_event_str(int event)
{
	static const char *const names[] = {
		"RDMA_CM_EVENT_ADDR_RESOLVED", "RDMA_CM_EVENT_ADDR_ERROR",
		"RDMA_CM_EVENT_ROUTE_RESOLVED", "RDMA_CM_EVENT_ROUTE_ERROR",
		"RDMA_CM_EVENT_CONNECT_REQUEST", "RDMA_CM_EVENT_CONNECT_RESPONSE",
		"RDMA_CM_EVENT_CONNECT_ERROR", "RDMA_CM_EVENT_UNREACHABLE",
		"RDMA_CM_EVENT_REJECTED", "RDMA_CM_EVENT_ESTABLISHED",
		"RDMA_CM_EVENT_DISCONNECTED", "RDMA_CM_EVENT_DEVICE_REMOVAL",
		"RDMA_CM_EVENT_MULTICAST_JOIN", "RDMA_CM_EVENT_MULTICAST_ERROR",
		"RDMA_CM_EVENT_ADDR_CHANGE", "RDMA_CM_EVENT_TIMEWAIT_EXIT",
	};

	if (event >= 0 && event < (int)(sizeof(names) / sizeof(names[0])))
		return names[event];
	return "UNKNOWN EVENT";
}
