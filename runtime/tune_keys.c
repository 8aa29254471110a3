// SPDX-License-Identifier: MIT
/*
 * The tuning keys (include/blue/tune.h): the table generated from BLUE_TUNE_KEYS, the
 * parser and formatter `bluectl set|get` use, and the writer's half of the tune map's
 * protocol. Linked into libblue (the engine merges requests with the same table) and
 * so into bluectl and the tests; not exported from libblue.so.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <stddef.h>
#include <blue/blue.h>
#include <blue/diag.h>
#include <blue/tune.h>

#include "runtime/cc.h"

/* a key's name is its path, but "cc.dcqcn.rai_mbps" is spelled "dcqcn.rai_mbps" */
#define BLUE_TUNE_DEF(id, k, path, nm, l, h)						\
	[BLUE_TUNE_##id] = { .name = nm, .kind = k,					\
			     .off = offsetof(struct blue_tune_vals, path), .lo = l, .hi = h },

/* every key sets one __u32 */
#define BLUE_TUNE_SIZE_CHECK(id, k, path, nm, l, h)						\
	_Static_assert(sizeof(((struct blue_tune_vals *)0)->path) == 4, #path " is a __u32");
BLUE_TUNE_KEYS(BLUE_TUNE_SIZE_CHECK)

const struct blue_tune_keydef blue_tune_keys[BLUE_TUNE__MAX] = {
	BLUE_TUNE_KEYS(BLUE_TUNE_DEF)
};

static const char *const algo_names[BLUE_CC__MAX] = { "none", "dcqcn", "window" };
static const char *const policy_names[] = { "go-back-n", "selective" };
static const char *const timer_names[] = { "iba", "linear" };

int blue_tune_key_find(const char *name)
{
	int k;

	for (k = 0; k < BLUE_TUNE__MAX; k++)
		if (!strcmp(blue_tune_keys[k].name, name))
			return k;
	return -1;
}

uint32_t blue_tune_get(const struct blue_tune_vals *v, int k)
{
	uint32_t x;

	memcpy(&x, (const char *)v + blue_tune_keys[k].off, sizeof(x));
	return x;
}

void blue_tune_put(struct blue_tune_vals *v, int k, uint32_t val)
{
	memcpy((char *)v + blue_tune_keys[k].off, &val, sizeof(val));
}

void blue_tune_defaults(struct blue_tune_vals *v)
{
	memset(v, 0, sizeof(*v));
	blue__cc_defaults(&v->cc, BLUE_CC_NONE);
	v->retx.policy = BLUE_RETX_GO_BACK_N;
	v->retx.timer = BLUE_RETX_TIMER_IBA_EXP;
}

void blue_tune_merge(struct blue_tune_vals *dst, const struct blue_tune_vals *src,
		     uint64_t mask)
{
	int k;

	for (k = 0; k < BLUE_TUNE__MAX; k++)
		if (mask & BLUE_TUNE_BIT(k))
			blue_tune_put(dst, k, blue_tune_get(src, k));
}

/* @s as one of @names (or its index as a number); -1 when neither. */
static long name_index(const char *s, const char *const *names, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!strcasecmp(s, names[i]))
			return i;
	return -1;
}

static int parse_diag(const char *s, uint32_t *out)
{
	char buf[64], *tok, *save = NULL;
	uint32_t f = 0;

	if (!strcmp(s, "off") || !strcmp(s, "none") || !strcmp(s, "0")) {
		*out = 0;
		return 0;
	}
	if (!strcmp(s, "on") || !strcmp(s, "all")) {
		*out = BLUE_DIAG_ALL;
		return 0;
	}
	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "drops"))
			f |= BLUE_DIAG_DROPS;
		else if (!strcmp(tok, "lat") || !strcmp(tok, "latency"))
			f |= BLUE_DIAG_LAT;
		else
			return -EINVAL;
	}
	if (!f)
		return -EINVAL;
	*out = f;
	return 0;
}

/* A whole number in [lo, hi]; -EINVAL otherwise. */
static int parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	unsigned long long v;
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v < lo || v > hi)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static int parse_value(int k, const char *s, uint32_t *out)
{
	const struct blue_tune_keydef *d = &blue_tune_keys[k];
	long i = -1;

	switch (d->kind) {
	case BLUE_TK_BOOL:
		if (!strcmp(s, "on") || !strcmp(s, "true"))
			i = 1;
		else if (!strcmp(s, "off") || !strcmp(s, "false"))
			i = 0;
		break;
	case BLUE_TK_CC_ALGO:
		i = name_index(s, algo_names, BLUE_CC__MAX);
		break;
	case BLUE_TK_RETX_POLICY:
		i = name_index(s, policy_names, 2);
		if (i < 0 && (!strcasecmp(s, "gbn") || !strcasecmp(s, "go-back-N")))
			i = 0;
		break;
	case BLUE_TK_RETX_TIMER:
		i = name_index(s, timer_names, 2);
		break;
	case BLUE_TK_DIAG:
		return parse_diag(s, out);
	case BLUE_TK_U:
		break;
	}
	if (i >= 0) {
		*out = (uint32_t)i;
		return 0;
	}
	return parse_u32(s, d->lo, d->hi, out);
}

/* What key @k takes, for an error message. */
static void describe(int k, char *buf, size_t len)
{
	const struct blue_tune_keydef *d = &blue_tune_keys[k];

	switch (d->kind) {
	case BLUE_TK_BOOL:
		snprintf(buf, len, "0 or 1 (off or on)");
		break;
	case BLUE_TK_CC_ALGO:
		snprintf(buf, len, "none, dcqcn or window (0 to %u)", d->hi);
		break;
	case BLUE_TK_RETX_POLICY:
		snprintf(buf, len, "go-back-n or selective (0 or 1)");
		break;
	case BLUE_TK_RETX_TIMER:
		snprintf(buf, len, "iba (4.096 us * 2^timeout) or linear (base_us + k_us * "
			 "in flight)");
		break;
	case BLUE_TK_DIAG:
		snprintf(buf, len, "off, on, or a list of drops,lat");
		break;
	case BLUE_TK_U:
		snprintf(buf, len, "a whole number from %u to %u", d->lo, d->hi);
		break;
	}
}

static void list_keys(char *buf, size_t len)
{
	size_t n = 0;
	int k;

	buf[0] = '\0';
	for (k = 0; k < BLUE_TUNE__MAX && n < len; k++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", k ? ", " : "",
				      blue_tune_keys[k].name);
}

int blue_tune_parse(const char *kv, struct blue_tune_vals *v, uint64_t *mask, char *err,
		    size_t errlen)
{
	const char *eq = strchr(kv, '=');
	char key[64], what[96], keys[1024];
	uint32_t val;
	int k;

	if (!eq || eq == kv || (size_t)(eq - kv) >= sizeof(key)) {
		list_keys(keys, sizeof(keys));
		snprintf(err, errlen, "'%s': expected key=value; the keys are: %s", kv, keys);
		return -EINVAL;
	}
	memcpy(key, kv, (size_t)(eq - kv));
	key[eq - kv] = '\0';
	k = blue_tune_key_find(key);
	if (k < 0) {
		list_keys(keys, sizeof(keys));
		snprintf(err, errlen, "unknown key '%s'; the keys are: %s", key, keys);
		return -EINVAL;
	}
	if (parse_value(k, eq + 1, &val)) {
		describe(k, what, sizeof(what));
		snprintf(err, errlen, "%s=%s: %s takes %s", key, eq + 1, key, what);
		return -EINVAL;
	}
	blue_tune_put(v, k, val);
	*mask |= BLUE_TUNE_BIT(k);
	return 0;
}

static void format_diag(uint32_t f, char *buf, size_t len)
{
	if (!f)
		snprintf(buf, len, "off");
	else
		snprintf(buf, len, "%s%s%s", f & BLUE_DIAG_DROPS ? "drops" : "",
			 (f & BLUE_DIAG_DROPS) && (f & BLUE_DIAG_LAT) ? "," : "",
			 f & BLUE_DIAG_LAT ? "lat" : "");
}

void blue_tune_format(int k, const struct blue_tune_vals *v, char *buf, size_t len)
{
	uint32_t x = blue_tune_get(v, k);

	switch (blue_tune_keys[k].kind) {
	case BLUE_TK_CC_ALGO:
		if (x < BLUE_CC__MAX) {
			snprintf(buf, len, "%s", algo_names[x]);
			return;
		}
		break;
	case BLUE_TK_RETX_POLICY:
		if (x < 2) {
			snprintf(buf, len, "%s", policy_names[x]);
			return;
		}
		break;
	case BLUE_TK_RETX_TIMER:
		if (x < 2) {
			snprintf(buf, len, "%s", timer_names[x]);
			return;
		}
		break;
	case BLUE_TK_DIAG:
		format_diag(x, buf, len);
		return;
	default:
		break;
	}
	snprintf(buf, len, "%u", x);
}

uint64_t blue_tune_request(struct blue_tune_entry *map, unsigned int idx, uint32_t qpn,
			   const struct blue_tune_vals *v, uint64_t mask)
{
	struct blue_tune_entry *e = &map[idx];
	uint64_t gen;

	if (idx && e->req_qpn != qpn) {
		/* a request left for the slot's previous QP is not this QP's */
		e->mask = 0;
		e->req_qpn = qpn;
	}
	/* keys the engine refused last time are not asked again with the next ones */
	if (__atomic_load_n(&e->applied_gen, __ATOMIC_ACQUIRE) == e->gen)
		e->mask &= ~e->refused;
	blue_tune_merge(&e->req, v, mask);
	e->mask |= mask;
	gen = __atomic_load_n(&e->gen, __ATOMIC_RELAXED) + 1;
	__atomic_store_n(&e->gen, gen, __ATOMIC_RELEASE);
	__atomic_fetch_add(&map[0].seq, 1, __ATOMIC_RELEASE);
	return gen;
}
