/* SPDX-License-Identifier: MIT */
/*
 * bluectl's files share this: the options, a snapshot of everything a netdev's pins
 * show, a small JSON writer, the QP-context field table and the commands.
 */
#ifndef BLUECTL_H
#define BLUECTL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "loader/loader.h"

#define EXIT_USAGE 2

struct opts {
	enum blue_xdp_mode mode;
	bool mode_set;
	bool json;
	double interval;	/* watch: seconds between refreshes */
	long count;		/* watch: refreshes; drops: events; 0 = no bound */
	double timeout;		/* drops: seconds; 0 = no bound */
	long max_requests;	/* metrics --listen: requests served; 0 = no bound */
	const char *listen;	/* metrics --listen ADDR:PORT */
	bool expose_psn;	/* metrics: the per-QP PSN and MSN series too */
	bool expose_peers;	/* metrics: per-QP peer address and QPN labels too */
};

int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* --- snapshot (snap.c) --------------------------------------------------------------- */

/* Everything the pins of one netdev show, read at one moment. */
struct snap {
	const char *ifname;
	uint64_t t_ns;				/* CLOCK_MONOTONIC when taken */
	struct blue_stat xdp[BLUE_STAT__MAX];	/* summed over CPUs */
	struct blue_dev_stats ds;		/* summed over queues (ds_sum_queues) */
	__u32 queue_owner[BLUE_MAX_QUEUES];	/* the pid serving each queue, or 0 */
	__u32 live_queues;			/* bit q: queue_owner[q] still runs */
	bool owner_alive;			/* ds.owner_pid still runs */
	struct blue_diag_cfg diag;
	struct blue_qp_ctx *qps;		/* the slots in use, sorted by peer, then QPN */
	unsigned int nqps;
	/* `bluectl set` changes applied (include/blue/tune.h): the interface's defaults,
	 * and per slot the count of the QP its entry describes (0 for any other QP) */
	uint64_t tune_changes;
	uint64_t *tune_slot_changes;
	__u32 *tune_slot_qpn;
};

/* How many `bluectl set` changes @q's engine applied to it. */
uint64_t snap_tune_changes(const struct snap *s, const struct blue_qp_ctx *q);
/* Read it all; 0, or 1 after saying why on stderr. */
int snap_take(const char *ifname, struct snap *s);
void snap_free(struct snap *s);
/* The QP @qpn in @s, or NULL after saying on stderr what its slot holds (qp.c). */
const struct blue_qp_ctx *snap_find_qp(const struct snap *s, __u32 qpn);
/* A QPN argument (decimal or 0x-hex): 0, or EXIT_USAGE after saying why. */
int qpn_parse(const char *arg, __u32 *qpn);
struct jw;
/* A command that shows one snapshot: @json_body inside a top-level JSON object with
 * --json, else @text on stdout. 0, or 1 when the snapshot could not be taken. */
int snap_show(const char *ifname, const struct opts *o,
	      void (*json_body)(struct jw *w, const struct snap *s),
	      void (*text)(const struct snap *s, FILE *f));
uint64_t mono_ns(void);

const char *qp_state_name(unsigned int s);
const char *qp_type_name(unsigned int t);
/* "none", "dcqcn", "window" (the names `bluectl set cc.algo=` takes), "?" (qpfields.c). */
const char *cc_algo_name(unsigned int a);
/* "a.b.c.d" of a network-order IPv4 address, in @buf (16 bytes). */
const char *ip_str(uint32_t be_addr, char *buf);
/* The QP's peer address: its IPv6 one (peer_ip6) when it has one, else peer_ip. @buf
 * holds INET6_ADDRSTRLEN bytes. */
const char *peer_addr_str(const struct blue_qp_ctx *q, char *buf);
/* A histogram's count as the sum of its buckets (see blue__obs hist_add). */
uint64_t hist_count(const struct blue_hist *h);

/* --- JSON (json.c): one compact line, keys in the order written --------------------- */

struct jw {
	FILE *f;
	int depth;
	bool need_comma[16];
};

void jw_init(struct jw *w, FILE *f);
void jw_obj(struct jw *w, const char *key);	/* key NULL: at top level or in an array */
void jw_obj_end(struct jw *w);
void jw_arr(struct jw *w, const char *key);
void jw_arr_end(struct jw *w);
void jw_u64(struct jw *w, const char *key, uint64_t v);
void jw_i64(struct jw *w, const char *key, int64_t v);
void jw_dbl(struct jw *w, const char *key, double v);
void jw_str(struct jw *w, const char *key, const char *s);
void jw_bool(struct jw *w, const char *key, bool v);
/* Finish the top-level value with a newline. */
void jw_end(struct jw *w);

/* --- the QP context, field by field (qpfields.c) ------------------------------------- */

enum qf_kind {
	QF_U,		/* a number */
	QF_HEX,		/* a QPN or PSN, printed 0x%06x */
	QF_HEX8,	/* a syndrome, 0x%02x */
	QF_HEX16,	/* a P_Key, 0x%04x */
	QF_IP,		/* IPv4 in network order */
	QF_IP6,		/* 16 bytes of IPv6 address; all zeros shown as "-" */
	QF_STATE,
	QF_TYPE,
	QF_MTU,		/* IB MTU enum */
	QF_CC_ALGO,	/* enum blue_cc_algo, by name */
	QF_ONOFF,	/* 0/1 as off/on */
	QF_MBPS,	/* Mbit/s; 0 unpaced */
	QF_FRAC1024,	/* a fraction in 1/1024 */
	QF_NS_US,	/* nanoseconds, shown in microseconds */
	QF_PKTS,	/* a window in packets; 0 none */
};

enum qf_metric {
	QM_NONE,	/* identity: a label, not a sample */
	QM_GAUGE,
	QM_COUNTER,
};

struct qp_field {
	const char *name;	/* the struct member, as BTF names it */
	enum qf_kind kind;
	unsigned int off, size;
	enum qf_metric metric;
	const char *metric_name;	/* blue_qp_<this>; counters end in _total */
	double scale;			/* to the metric's base unit */
	const char *help;
};

extern const struct qp_field qp_fields[];
extern const unsigned int qp_nfields;
uint64_t qf_value(const struct qp_field *f, const struct blue_qp_ctx *q);
/* A sequence number (a PSN or the MSN): what a forged packet must carry to be taken. */
bool qf_is_seq(const struct qp_field *f);
/* The value as `qp show` prints it. */
void qf_format(const struct qp_field *f, const struct blue_qp_ctx *q, char *buf, size_t len);
/* Every field into the open JSON object: numbers as in the map, plus decoded names. */
void qf_json(struct jw *w, const struct blue_qp_ctx *q);

/* --- device counters (stats.c) ------------------------------------------------------ */

struct dev_field {
	const char *name;	/* the member of struct blue_dev_hal or blue_dev_engine */
	unsigned int off;
	bool gauge;
	const char *metric;	/* Prometheus family */
	const char *reason;	/* its "reason" label, or NULL */
	const char *help;	/* NULL: the family's first member has it */
};

extern const struct dev_field hal_fields[], eng_fields[];
extern const unsigned int n_hal_fields, n_eng_fields;
uint64_t dev_field_value(const struct dev_field *f, const void *base);
/* Upper bound in ns of the bucket holding quantile @q (0 empty, ~0 beyond the last). */
uint64_t hist_quantile_le(const struct blue_hist *h, double q);

/* --- commands -------------------------------------------------------------------------- */

int cmd_attach(const char *ifname, const struct opts *o);
int cmd_pin_dir(const char *ifname, const struct opts *o);	/* NULL: the namespace's */
int cmd_detach(const char *ifname, const struct opts *o);
int cmd_stats(const char *ifname, const struct opts *o);
int cmd_qp_list(const char *ifname, const struct opts *o);
int cmd_qp_show(const char *ifname, const char *qpn, const struct opts *o);
int cmd_watch(const char *ifname, const struct opts *o);
int cmd_metrics(const char *ifname, const struct opts *o);
int cmd_diag(const char *what, const char *ifname, const struct opts *o);
/* tenant.c: blue-manager's tenants; the metrics' per-tenant series (none without a daemon) */
int cmd_tenant(int argc, char **argv);
void tenant_metrics(FILE *f, const char *ifname);
int cmd_drops(const char *ifname, const struct opts *o);
/* bluectl set|get IFNAME [qp QPN] key=value... (tune.c); @args after IFNAME. */
int cmd_set(const char *ifname, int argc, char **args, const struct opts *o);
int cmd_get(const char *ifname, int argc, char **args, const struct opts *o);

/* The pieces `watch` reuses. */
void stats_print_text(const struct snap *s, FILE *f);
void stats_json_body(struct jw *w, const struct snap *s);
void qp_list_print_text(const struct snap *s, FILE *f, unsigned int max_rows);
void qp_list_json_body(struct jw *w, const struct snap *s);

/* Prometheus text exposition of @s into @f (metrics.c). */
void metrics_write(const struct snap *s, const struct opts *o, FILE *f);
/* Serve /metrics at @addr ("HOST:PORT") until a signal or @o->max_requests (http.c). */
int metrics_serve(const char *ifname, const char *addr, const struct opts *o);

#endif /* BLUECTL_H */
