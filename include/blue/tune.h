/* SPDX-License-Identifier: MIT */
/*
 * Tuning while it runs (`bluectl set|get`): the pinned, mmapable array `tune` of
 * BLUE_TUNE_ENTRIES entries, written by bluectl and read by every engine on the netdev.
 *
 *   entry 0          the interface's defaults: applied to every QP the engines have, and
 *                    to each QP they create from then on; its `seq` is the one word an
 *                    engine loads per pass (runtime/tune.c), bumped after any request
 *   entry 1 + slot   a per-QP override for the QP in that slot of qp_ctx, applied over
 *                    the defaults; the engine that owns the QP publishes in it what the
 *                    QP runs now (eff), whether or not anybody asked for a change
 *
 * Protocol (one writer at a time: bluectl; the engines answer):
 *   writer: req.* and mask (the keys set so far, OR-ed), req_qpn, then gen += 1
 *           (release), then entry 0's seq += 1 (release);
 *   engine: sees seq move, finds every entry whose gen moved, applies the masked keys
 *           through blue_qp_set_cc()/blue_qp_set_retx(), writes eff, refused/err,
 *           changes += 1 and, last, applied_gen = gen (release);
 *   writer: waits (bounded) for applied_gen == gen and reports refused/err.
 *
 * The key table is generated from the parameter structs below and include/blue/cc.h
 * (BLUE_TUNE_KEYS): a key is named as the struct member it sets.
 */
#ifndef BLUE_TUNE_H
#define BLUE_TUNE_H

#include <linux/types.h>
#include <blue/cc.h>
#include <blue/qp_ctx.h>

#define BLUE_TUNE_ENTRIES	(1u + BLUE_MAX_QP)

/* The retransmission settings as blue_qp_set_retx() takes them (blue.h). */
struct blue_tune_retx {
	__u32	policy;		/* enum blue_retx_policy */
	__u32	timer;		/* enum blue_retx_timer */
	__u32	base_us;	/* LINEAR only */
	__u32	k_us;		/* LINEAR only */
};

/* Every value a key can set. */
struct blue_tune_vals {
	struct blue_cc_params	cc;
	struct blue_tune_retx	retx;
	__u32	diag;		/* BLUE_DIAG_* (entry 0 only: it is the diag map's switch) */
	__u32	pad;
};

_Static_assert(sizeof(struct blue_tune_vals) == 144, "blue_tune_vals layout changed");

struct blue_tune_entry {
	/* entry 0 only: bumped by the writer after any request, read by engines per pass */
	__u64	seq;
	/* writer */
	__u64	gen;		/* bumped after each request is written */
	__u64	mask;		/* keys requested so far: bit (1 << enum blue_tune_key) */
	__u32	req_qpn;	/* per QP: the QPN the request is for (a reused slot ignores it) */
	__u32	pad0;
	struct blue_tune_vals req;
	/* engine */
	__u64	applied_gen;	/* gen of the last request applied (or refused) */
	__u64	refused;	/* keys of that request the engine refused */
	__s32	err;		/* errno of the first refusal; 0 */
	__u32	qpn;		/* per QP: the QP eff describes (0: none) */
	__u64	changes;	/* requests applied (entry 0: by any engine, to any QP) */
	__u64	applied_ns;	/* CLOCK_MONOTONIC when applied_gen was written */
	struct blue_tune_vals eff;	/* per QP: what it runs now */
	__u64	reserved[3];
};

_Static_assert(sizeof(struct blue_tune_entry) == 384, "blue_tune_entry layout changed");

/*
 * The keys: X(ID, kind, path in struct blue_tune_vals, name, min, max). The key's name is the
 * path, less the "cc." in front of "dcqcn." and "window." (cc.algo, cc.ecn,
 * dcqcn.rai_mbps, window.target_delay_us, retx.policy, diag). The ranges are each
 * value's own bounds, as the algorithms' checks have them (runtime/cc_dcqcn.c,
 * cc_window.c: rates up to 1 Tbit/s, times up to 1 s, factors in 1/1024); bounds that
 * depend on another value (min_rate_mbps at most the line rate, init_cwnd within
 * min_cwnd..max_cwnd, the LINEAR timer's base and k) are the setters' checks, and a
 * value that fails them comes back from the engine as a refusal.
 */
#define BLUE_TUNE_KEYS(X)							\
	X(RETX_POLICY,	BLUE_TK_RETX_POLICY, retx.policy, "retx.policy", 0, 1)			\
	X(RETX_TIMER,	BLUE_TK_RETX_TIMER, retx.timer, "retx.timer", 0, 1)			\
	X(RETX_BASE_US,	BLUE_TK_U, retx.base_us, "retx.base_us", 0, 60000000)			\
	X(RETX_K_US,	BLUE_TK_U, retx.k_us, "retx.k_us", 0, 1000000)			\
	X(CC_ALGO,	BLUE_TK_CC_ALGO, cc.algo, "cc.algo", 0, BLUE_CC__MAX - 1)		\
	X(CC_ECN,	BLUE_TK_BOOL, cc.ecn, "cc.ecn", 0, 1)				\
	X(DCQCN_LINE_RATE,	BLUE_TK_U, cc.dcqcn.line_rate_mbps, "dcqcn.line_rate_mbps", 0, 1000000)	\
	X(DCQCN_MIN_RATE,	BLUE_TK_U, cc.dcqcn.min_rate_mbps, "dcqcn.min_rate_mbps", 1, 1000000)	\
	X(DCQCN_RAI,		BLUE_TK_U, cc.dcqcn.rai_mbps, "dcqcn.rai_mbps", 1, 1000000)	\
	X(DCQCN_RHAI,		BLUE_TK_U, cc.dcqcn.rhai_mbps, "dcqcn.rhai_mbps", 1, 1000000)	\
	X(DCQCN_G,		BLUE_TK_U, cc.dcqcn.g, "dcqcn.g", 1, 1024)			\
	X(DCQCN_ALPHA_INIT,	BLUE_TK_U, cc.dcqcn.alpha_init, "dcqcn.alpha_init", 0, 1024)	\
	X(DCQCN_ALPHA_TIMER,	BLUE_TK_U, cc.dcqcn.alpha_timer_us, "dcqcn.alpha_timer_us", 1, 1000000)	\
	X(DCQCN_RATE_TIMER,	BLUE_TK_U, cc.dcqcn.rate_timer_us, "dcqcn.rate_timer_us", 1, 1000000)	\
	X(DCQCN_BYTE_COUNTER,	BLUE_TK_U, cc.dcqcn.byte_counter_kb, "dcqcn.byte_counter_kb", 0, 4194304) \
	X(DCQCN_FAST_RECOVERY,	BLUE_TK_U, cc.dcqcn.fast_recovery_steps, "dcqcn.fast_recovery_steps", 1, 31)	\
	X(DCQCN_MIN_DEC,	BLUE_TK_U, cc.dcqcn.min_dec_pct, "dcqcn.min_dec_pct", 0, 100)	\
	X(DCQCN_CNP_INTERVAL,	BLUE_TK_U, cc.dcqcn.cnp_interval_us, "dcqcn.cnp_interval_us", 0, 1000000) \
	X(WINDOW_TARGET_DELAY,	BLUE_TK_U, cc.window.target_delay_us, "window.target_delay_us", 1, 1000000) \
	X(WINDOW_AI,		BLUE_TK_U, cc.window.ai_pkts, "window.ai_pkts", 1, 256)		\
	X(WINDOW_BETA,		BLUE_TK_U, cc.window.beta, "window.beta", 0, 1024)		\
	X(WINDOW_MAX_MDF,	BLUE_TK_U, cc.window.max_mdf, "window.max_mdf", 0, 1024)		\
	X(WINDOW_MIN_CWND,	BLUE_TK_U, cc.window.min_cwnd, "window.min_cwnd", 1, 256)		\
	X(WINDOW_MAX_CWND,	BLUE_TK_U, cc.window.max_cwnd, "window.max_cwnd", 1, 256)		\
	X(WINDOW_INIT_CWND,	BLUE_TK_U, cc.window.init_cwnd, "window.init_cwnd", 1, 256)		\
	X(WINDOW_RTT_GAIN,	BLUE_TK_U, cc.window.rtt_gain, "window.rtt_gain", 1, 1024)		\
	X(DIAG,		BLUE_TK_DIAG, diag, "diag", 0, 3)

enum blue_tune_key {
#define BLUE_TUNE_ENUM(id, kind, path, name, lo, hi) BLUE_TUNE_##id,
	BLUE_TUNE_KEYS(BLUE_TUNE_ENUM)
#undef BLUE_TUNE_ENUM
	BLUE_TUNE__MAX
};

_Static_assert(BLUE_TUNE__MAX <= 64, "the key mask is one __u64");

#define BLUE_TUNE_BIT(k)	(1ull << (k))
#define BLUE_TUNE_RETX_KEYS	(BLUE_TUNE_BIT(BLUE_TUNE_RETX_POLICY) |			\
				 BLUE_TUNE_BIT(BLUE_TUNE_RETX_TIMER) |			\
				 BLUE_TUNE_BIT(BLUE_TUNE_RETX_BASE_US) |		\
				 BLUE_TUNE_BIT(BLUE_TUNE_RETX_K_US))
#define BLUE_TUNE_CC_KEYS	(((1ull << (BLUE_TUNE_WINDOW_RTT_GAIN + 1)) - 1) &		\
				 ~((1ull << BLUE_TUNE_CC_ALGO) - 1))

/* How a key's value is spelled. */
enum blue_tune_kind {
	BLUE_TK_U,		/* a whole number */
	BLUE_TK_BOOL,		/* 0|1|off|on */
	BLUE_TK_CC_ALGO,	/* none|dcqcn|window */
	BLUE_TK_RETX_POLICY,	/* go-back-n|selective */
	BLUE_TK_RETX_TIMER,	/* iba|linear */
	BLUE_TK_DIAG,		/* off|on|drops,lat (BLUE_DIAG_*) */
};

#ifndef __bpf__
#include <stddef.h>
#include <stdint.h>

struct blue_tune_keydef {
	const char *name;	/* "dcqcn.rai_mbps" */
	enum blue_tune_kind kind;
	unsigned int off;	/* of the __u32 in struct blue_tune_vals */
	uint32_t lo, hi;
};

/* The key table, indexed by enum blue_tune_key (runtime/tune_keys.c). */
extern const struct blue_tune_keydef blue_tune_keys[BLUE_TUNE__MAX];

/* The key named @name; -1 when there is none. */
int blue_tune_key_find(const char *name);

/*
 * blue_tune_parse() - parse one "key=value" into @v and its bit into @mask.
 * @err: on failure, a sentence naming the key and what it takes (the valid keys, the
 *	range, the names), for a person.
 * Return: 0, or -EINVAL.
 */
int blue_tune_parse(const char *kv, struct blue_tune_vals *v, uint64_t *mask, char *err,
		    size_t errlen);

/* The value of key @k in @v as `bluectl get` prints it ("dcqcn", "go-back-n", "40"). */
void blue_tune_format(int k, const struct blue_tune_vals *v, char *buf, size_t len);

/* What a QP or an interface starts with: algorithm none with the documented DCQCN and
 * window parameters, go-back-N with the IBA timer, diagnostics off. */
void blue_tune_defaults(struct blue_tune_vals *v);

/* Copy the keys of @mask from @src into @dst. */
void blue_tune_merge(struct blue_tune_vals *dst, const struct blue_tune_vals *src,
		     uint64_t mask);

/* The value of key @k in @v, and a store of @val into it. */
uint32_t blue_tune_get(const struct blue_tune_vals *v, int k);
void blue_tune_put(struct blue_tune_vals *v, int k, uint32_t val);

/*
 * blue_tune_request() - the writer's half of the protocol on @map (the mapped array):
 * merge @v's keys of @mask into entry @idx's request (for @qpn; 0 for entry 0), bump
 * its gen and then entry 0's seq. Return: the gen to wait for.
 */
uint64_t blue_tune_request(struct blue_tune_entry *map, unsigned int idx, uint32_t qpn,
			   const struct blue_tune_vals *v, uint64_t mask);
#endif /* __bpf__ */

#endif /* BLUE_TUNE_H */
