/* SPDX-License-Identifier: MIT */
/*
 * The verbs that differ between the two modes of a context, as an ops table (verbs.c
 * dispatches the public calls through it):
 *   library mode (blue__lib_ops): this process owns the netdev queue and runs the engine
 *     itself, inline in poll_cq and get_cq_event;
 *   daemon mode (mgr_client.c): blue-manager owns the queue and runs the engine; every
 *     call that writes engine state is a command over its socket, while the data path
 *     (post_send, post_recv, poll_cq) reads and writes rings the daemon shares.
 * The rest of the API is the same code in both modes (the rings, qp_num, the queries
 * that read what open filled in), or is served in library mode only so far and says so
 * (blue__local_only).
 */
#ifndef BLUE_RUNTIME_VERBS_OPS_H
#define BLUE_RUNTIME_VERBS_OPS_H

#include <stdbool.h>
#include <blue/blue.h>

struct blue_verbs_ops {
	const char *mode;		/* "library" or "daemon", for messages */
	/* poll_cq: run the engine (library), or nothing: the daemon's engine runs anyway */
	void (*progress)(struct blue_context *ctx);
	/* poll_cq found nothing: nothing (library), or give the core to the engine */
	void (*idle)(struct blue_context *ctx);
	/* after post_send/post_recv published WQEs: wake an engine that sleeps */
	void (*kick)(struct blue_context *ctx);
	int (*close_device)(struct blue_context *ctx);
	int (*query_device)(struct blue_context *ctx, struct blue_device_attr *attr);
	struct blue_pd *(*alloc_pd)(struct blue_context *ctx);
	int (*dealloc_pd)(struct blue_pd *pd);
	struct blue_mr *(*reg_mr)(struct blue_pd *pd, void *addr, size_t length,
				  unsigned int access);
	int (*dereg_mr)(struct blue_mr *mr);
	struct blue_cq *(*create_cq)(struct blue_context *ctx, int cqe, void *cq_context,
				     struct blue_comp_channel *channel, int comp_vector);
	int (*destroy_cq)(struct blue_cq *cq);
	/* event mode: the channel, arming a CQ, and one non-blocking take of an event */
	struct blue_srq *(*create_srq)(struct blue_pd *pd, struct blue_srq_attr *attr,
				       void *srq_context);
	int (*modify_srq)(struct blue_srq *srq, struct blue_srq_attr *attr, int attr_mask);
	int (*query_srq)(struct blue_srq *srq, struct blue_srq_attr *attr);
	int (*destroy_srq)(struct blue_srq *srq);
	struct blue_comp_channel *(*create_comp_channel)(struct blue_context *ctx);
	int (*destroy_comp_channel)(struct blue_comp_channel *ch);
	int (*req_notify_cq)(struct blue_cq *cq, int solicited_only);
	int (*get_cq_event_try)(struct blue_comp_channel *ch, struct blue_cq **cq,
				void **cq_context);
	struct blue_qp *(*create_qp)(struct blue_pd *pd, struct blue_qp_init_attr *attr);
	int (*modify_qp)(struct blue_qp *qp, struct blue_qp_attr *attr, int attr_mask);
	int (*query_qp)(struct blue_qp *qp, struct blue_qp_attr *attr, int attr_mask,
			struct blue_qp_init_attr *init_attr);
	int (*destroy_qp)(struct blue_qp *qp);
	int (*qp_set_retx)(struct blue_qp *qp, const struct blue_retx_attr *a);
	int (*qp_query_retx)(struct blue_qp *qp, struct blue_retx_attr *a);
	int (*qp_set_cc)(struct blue_qp *qp, const struct blue_cc_params *p);
	int (*qp_query_cc)(struct blue_qp *qp, struct blue_cc_params *p);
	int (*cm_info_from_qp)(struct blue_context *ctx, struct blue_qp *qp, int gid_index,
			       struct blue_cm_info *info);
	int (*cm_connect_qp)(struct blue_context *ctx, struct blue_qp *qp, uint32_t local_psn,
			     const struct blue_cm_info *remote, const struct blue_cm_qp_attr *attr);
};

#define BLUE_HIDDEN_OPS __attribute__((visibility("hidden")))

extern const struct blue_verbs_ops blue__lib_ops BLUE_HIDDEN_OPS;

/* The library-mode bodies (each in the file of its object). */
int blue__lib_close_device(struct blue_context *ctx) BLUE_HIDDEN_OPS;
int blue__lib_query_device(struct blue_context *ctx, struct blue_device_attr *attr)
	BLUE_HIDDEN_OPS;
struct blue_pd *blue__lib_alloc_pd(struct blue_context *ctx) BLUE_HIDDEN_OPS;
int blue__lib_dealloc_pd(struct blue_pd *pd) BLUE_HIDDEN_OPS;
struct blue_mr *blue__lib_reg_mr(struct blue_pd *pd, void *addr, size_t length,
				 unsigned int access) BLUE_HIDDEN_OPS;
int blue__lib_dereg_mr(struct blue_mr *mr) BLUE_HIDDEN_OPS;
struct blue_cq *blue__lib_create_cq(struct blue_context *ctx, int cqe, void *cq_context,
				    struct blue_comp_channel *channel, int comp_vector)
	BLUE_HIDDEN_OPS;
int blue__lib_destroy_cq(struct blue_cq *cq) BLUE_HIDDEN_OPS;
struct blue_srq *blue__lib_create_srq(struct blue_pd *pd, struct blue_srq_attr *attr,
				      void *srq_context) BLUE_HIDDEN_OPS;
int blue__lib_modify_srq(struct blue_srq *srq, struct blue_srq_attr *attr, int attr_mask)
	BLUE_HIDDEN_OPS;
int blue__lib_query_srq(struct blue_srq *srq, struct blue_srq_attr *attr) BLUE_HIDDEN_OPS;
int blue__lib_destroy_srq(struct blue_srq *srq) BLUE_HIDDEN_OPS;
struct blue_comp_channel *blue__lib_create_comp_channel(struct blue_context *ctx) BLUE_HIDDEN_OPS;
int blue__lib_destroy_comp_channel(struct blue_comp_channel *ch) BLUE_HIDDEN_OPS;
int blue__lib_req_notify_cq(struct blue_cq *cq, int solicited_only) BLUE_HIDDEN_OPS;
int blue__lib_get_cq_event_try(struct blue_comp_channel *ch, struct blue_cq **cq,
			       void **cq_context) BLUE_HIDDEN_OPS;
struct blue_qp *blue__lib_create_qp(struct blue_pd *pd, struct blue_qp_init_attr *attr)
	BLUE_HIDDEN_OPS;
int blue__lib_modify_qp(struct blue_qp *qp, struct blue_qp_attr *attr, int attr_mask)
	BLUE_HIDDEN_OPS;
int blue__lib_query_qp(struct blue_qp *qp, struct blue_qp_attr *attr, int attr_mask,
		       struct blue_qp_init_attr *init_attr) BLUE_HIDDEN_OPS;
int blue__lib_destroy_qp(struct blue_qp *qp) BLUE_HIDDEN_OPS;
int blue__lib_qp_set_retx(struct blue_qp *qp, const struct blue_retx_attr *a) BLUE_HIDDEN_OPS;
int blue__lib_qp_query_retx(struct blue_qp *qp, struct blue_retx_attr *a) BLUE_HIDDEN_OPS;
int blue__lib_qp_set_cc(struct blue_qp *qp, const struct blue_cc_params *p) BLUE_HIDDEN_OPS;
int blue__lib_qp_query_cc(struct blue_qp *qp, struct blue_cc_params *p) BLUE_HIDDEN_OPS;
int blue__lib_cm_info_from_qp(struct blue_context *ctx, struct blue_qp *qp, int gid_index,
			      struct blue_cm_info *info) BLUE_HIDDEN_OPS;
int blue__lib_cm_connect_qp(struct blue_context *ctx, struct blue_qp *qp, uint32_t local_psn,
			    const struct blue_cm_info *remote, const struct blue_cm_qp_attr *attr)
	BLUE_HIDDEN_OPS;

/*
 * blue__local_only() - for the calls daemon mode does not serve yet: 0 on a library
 * context; on a daemon one, a message naming @what and EOPNOTSUPP.
 */
int blue__local_only(const struct blue_context *ctx, const char *what) BLUE_HIDDEN_OPS;

/*
 * blue__engine_elsewhere() - whether @ctx's engine runs in another process (daemon
 * mode): then it runs whether or not this process calls in, and nothing here may drive
 * it (compat starts no progress thread).
 */
bool blue__engine_elsewhere(const struct blue_context *ctx) BLUE_HIDDEN_OPS;

#endif /* BLUE_RUNTIME_VERBS_OPS_H */
