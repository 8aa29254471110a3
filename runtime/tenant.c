// SPDX-License-Identifier: MIT
/* Tenants of blue-manager: the config file, who maps where, quotas, the token bucket (tenant.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/log.h"
#include "runtime/tenant.h"

#define LINE_MAX_LEN	512
#define BUCKET_NS	1000000ull	/* the bucket holds 1 ms of the rate */
#define BUCKET_MIN	9216u		/* and at least one jumbo frame */

static const char *const class_names[BLUE_CLASS_COUNT] = { "realtime", "priority", "normal" };

const char *blue__tenant_class_str(uint32_t klass)
{
	return klass < BLUE_CLASS_COUNT ? class_names[klass] : "?";
}

static void limits_default(struct blue_tenant_limits *l)
{
	memset(l, 0, sizeof(*l));
	l->klass = BLUE_CLASS_NORMAL;
	l->weight = 1;
}

static struct blue_tenant *tenant_add(struct blue_tenant_table *tt, const char *name)
{
	struct blue_tenant *t;

	if (tt->n == BLUE_MAX_TENANTS)
		return NULL;
	t = &tt->t[tt->n++];
	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "%s", name);
	limits_default(&t->lim);
	return t;
}

void blue__tenants_init(struct blue_tenant_table *tt)
{
	memset(tt, 0, sizeof(*tt));
	tenant_add(tt, "default")->in_config = true;
	tt->deflt = 0;
}

struct blue_tenant *blue__tenant_find(struct blue_tenant_table *tt, const char *name)
{
	for (unsigned int i = 0; i < tt->n; i++)
		if (!strcmp(tt->t[i].name, name))
			return &tt->t[i];
	return NULL;
}

/* "123", "64K", "1G": @binary picks 1024 (bytes) or 1000 (rates). Return: 0 or -EINVAL. */
static int parse_num(const char *s, bool binary, uint64_t *out)
{
	uint64_t unit = 1, k = binary ? 1024 : 1000;
	unsigned long long v;
	char *end;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (toupper((unsigned char)*end)) {
	case 'K': unit = k; end++; break;
	case 'M': unit = k * k; end++; break;
	case 'G': unit = k * k * k; end++; break;
	case 'T': unit = k * k * k * k; end++; break;
	default: break;
	}
	if (*end || (unit > 1 && v > UINT64_MAX / unit))
		return -EINVAL;
	*out = v * unit;
	return 0;
}

/* One "key=value" of a tenant line into @l. Return: 0 or -EINVAL after a message. */
static int limit_item(struct blue_tenant_limits *l, const char *item, const char *where)
{
	const char *eq = strchr(item, '=');
	char key[32];
	uint64_t v = 0;
	size_t klen;
	int err = 0;

	if (!eq || eq == item || (klen = (size_t)(eq - item)) >= sizeof(key)) {
		blue__logf("%s: \"%s\" is not key=value", where, item);
		return -EINVAL;
	}
	memcpy(key, item, klen);
	key[klen] = 0;
	if (!strcmp(key, "class")) {
		for (uint32_t c = 0; c < BLUE_CLASS_COUNT; c++) {
			if (!strcmp(eq + 1, class_names[c])) {
				l->klass = c;
				return 0;
			}
		}
		blue__logf("%s: class \"%s\": it is realtime, priority or normal", where, eq + 1);
		return -EINVAL;
	}
	err = parse_num(eq + 1, strcmp(key, "rate") != 0, &v);
	if (err) {
		blue__logf("%s: %s=\"%s\" is not a number (K, M, G suffixes)", where, key, eq + 1);
		return err;
	}
	if (!strcmp(key, "weight") && v >= 1 && v <= 1000)
		l->weight = (uint32_t)v;
	else if (!strcmp(key, "rate"))
		l->rate_bps = v;
	else if (!strcmp(key, "mr_bytes"))
		l->mr_bytes = v;
	else if ((!strcmp(key, "qps") || !strcmp(key, "mrs") || !strcmp(key, "cqs")) &&
		 v <= UINT32_MAX)
		*(key[0] == 'q' ? &l->qps : key[0] == 'm' ? &l->mrs : &l->cqs) = (uint32_t)v;
	else {
		blue__logf("%s: %s=%s: the keys are class, weight (1..1000), rate, qps, mrs, "
			   "mr_bytes, cqs", where, key, eq + 1);
		return -EINVAL;
	}
	return 0;
}

/* The next whitespace-separated word of *@s (NUL-terminated in place), or NULL. */
static char *word(char **s)
{
	char *w = *s;

	while (*w && isspace((unsigned char)*w))
		w++;
	if (!*w)
		return NULL;
	*s = w;
	while (**s && !isspace((unsigned char)**s))
		(*s)++;
	if (**s)
		*(*s)++ = 0;
	return w;
}

static int line_tenant(struct blue_tenant_table *tt, char *rest, const char *where)
{
	struct blue_tenant_limits l;
	struct blue_tenant *t;
	char *name = word(&rest), *item;
	int err;

	if (!name || strlen(name) >= BLUE_TENANT_NAME) {
		blue__logf("%s: tenant needs a name of at most %d characters", where,
			   BLUE_TENANT_NAME - 1);
		return -EINVAL;
	}
	limits_default(&l);
	while ((item = word(&rest))) {
		err = limit_item(&l, item, where);
		if (err)
			return err;
	}
	t = blue__tenant_find(tt, name);
	if (t && t->in_config) {
		blue__logf("%s: tenant %s is named twice", where, name);
		return -EINVAL;
	}
	if (!t)
		t = tenant_add(tt, name);
	if (!t) {
		blue__logf("%s: more than %d tenants", where, BLUE_MAX_TENANTS);
		return -EINVAL;
	}
	t->lim = l;
	t->in_config = true;
	return 0;
}

static int named(struct blue_tenant_table *tt, const char *name, const char *where)
{
	struct blue_tenant *t = name ? blue__tenant_find(tt, name) : NULL;

	if (!t || !t->in_config) {
		blue__logf("%s: no tenant \"%s\" above this line", where, name ? name : "");
		return -EINVAL;
	}
	return (int)(t - tt->t);
}

static int line_map(struct blue_tenant_table *tt, char *rest, const char *where)
{
	char *what = word(&rest), *name = word(&rest);
	struct blue_tenant_map m = { 0 };
	uint64_t id;
	int idx;

	if (!what || !name || word(&rest)) {
		blue__logf("%s: map takes uid=N, gid=N or cgroup=PATH and a tenant", where);
		return -EINVAL;
	}
	if (!strncmp(what, "cgroup=", 7) && what[7] == '/' && strlen(what + 7) < BLUE_TENANT_CGROUP) {
		m.kind = BLUE_MAP_CGROUP;
		snprintf(m.cgroup, sizeof(m.cgroup), "%s", what + 7);
	} else if ((!strncmp(what, "uid=", 4) || !strncmp(what, "gid=", 4)) &&
		   !parse_num(what + 4, false, &id) && id <= UINT32_MAX) {
		m.kind = what[0] == 'u' ? BLUE_MAP_UID : BLUE_MAP_GID;
		m.id = (uint32_t)id;
	} else {
		blue__logf("%s: \"%s\": uid=N, gid=N or cgroup=/PATH", where, what);
		return -EINVAL;
	}
	idx = named(tt, name, where);
	if (idx < 0)
		return idx;
	if (tt->nmap == BLUE_TENANT_MAPS) {
		blue__logf("%s: more than %d map lines", where, BLUE_TENANT_MAPS);
		return -EINVAL;
	}
	m.tenant = (unsigned int)idx;
	tt->map[tt->nmap++] = m;
	return 0;
}

static int parse_line(struct blue_tenant_table *tt, char *line, const char *where)
{
	char *hash = strchr(line, '#'), *rest = line, *kw;
	int idx;

	if (hash)
		*hash = 0;
	kw = word(&rest);
	if (!kw)
		return 0;
	if (!strcmp(kw, "tenant"))
		return line_tenant(tt, rest, where);
	if (!strcmp(kw, "map"))
		return line_map(tt, rest, where);
	if (!strcmp(kw, "default")) {
		idx = named(tt, word(&rest), where);
		if (idx < 0)
			return idx;
		tt->deflt = idx;
		return 0;
	}
	blue__logf("%s: \"%s\": a line is tenant, map or default", where, kw);
	return -EINVAL;
}

int blue__tenants_parse(struct blue_tenant_table *tt, const char *text, const char *what)
{
	struct blue_tenant_table *nt = malloc(sizeof(*nt));
	char line[LINE_MAX_LEN], where[300];
	const char *p = text, *nl;
	unsigned int lineno = 0;
	size_t len;
	int err = 0;

	if (!nt)
		return -ENOMEM;
	/* what stays: every tenant, what it holds and did; what the file says is new */
	*nt = *tt;
	for (unsigned int i = 0; i < nt->n; i++)
		nt->t[i].in_config = false;
	nt->nmap = 0;
	nt->deflt = -1;
	while (!err && *p) {
		nl = strchr(p, '\n');
		len = nl ? (size_t)(nl - p) : strlen(p);
		lineno++;
		snprintf(where, sizeof(where), "%s:%u", what, lineno);
		if (len >= sizeof(line)) {
			blue__logf("%s: a line longer than %d characters", where, LINE_MAX_LEN - 1);
			err = -EINVAL;
			break;
		}
		memcpy(line, p, len);
		line[len] = 0;
		err = parse_line(nt, line, where);
		p += len + (nl ? 1 : 0);
	}
	if (!err)
		*tt = *nt;
	free(nt);
	return err;
}

int blue__tenants_load(struct blue_tenant_table *tt, const char *path)
{
	FILE *f = fopen(path, "re");
	char *text = NULL;
	size_t cap = 0;
	ssize_t n;
	int err;

	if (!f) {
		err = -errno;
		blue__logf("tenants: %s: %s", path, strerror(errno));
		return err;
	}
	n = getdelim(&text, &cap, '\0', f);
	fclose(f);
	if (n < 0) {
		free(text);
		text = strdup("");
	}
	err = text ? blue__tenants_parse(tt, text, path) : -ENOMEM;
	free(text);
	return err;
}

int blue__tenant_set(struct blue_tenant *t, const char *items)
{
	struct blue_tenant_limits l = t->lim;
	char buf[LINE_MAX_LEN], *rest = buf, *item, where[64];
	int err;

	if (strlen(items) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", items);
	snprintf(where, sizeof(where), "tenant %s", t->name);
	while ((item = word(&rest))) {
		err = limit_item(&l, item, where);
		if (err)
			return err;
	}
	t->lim = l;
	return 0;
}

struct blue_tenant *blue__tenant_of(struct blue_tenant_table *tt, uid_t uid, gid_t gid,
				    const char *cgroup)
{
	for (unsigned int i = 0; i < tt->nmap; i++) {
		const struct blue_tenant_map *m = &tt->map[i];
		size_t n = strlen(m->cgroup);
		bool hit = m->kind == BLUE_MAP_UID ? m->id == uid :
			   m->kind == BLUE_MAP_GID ? m->id == gid :
			   /* the cgroup or one below it */
			   (!strncmp(cgroup, m->cgroup, n) &&
			    (cgroup[n] == 0 || cgroup[n] == '/' || m->cgroup[n - 1] == '/'));

		if (hit)
			return &tt->t[m->tenant];
	}
	return tt->deflt >= 0 ? &tt->t[tt->deflt] : NULL;
}

void blue__cgroup_of(pid_t pid, char *buf, size_t len)
{
	char path[64], line[512];
	FILE *f;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	/* cgroup v2: the line "0::/path" */
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(buf, len, "%s", line + 3);
			break;
		}
	}
	fclose(f);
}

static const char *const quota_names[] = { "QP", "MR", "CQ" };

int blue__tenant_charge(struct blue_tenant *t, enum blue_quota kind, uint64_t bytes)
{
	struct blue_tenant_usage *u = &t->use;
	const struct blue_tenant_limits *l = &t->lim;
	uint32_t *have = kind == BLUE_QUOTA_QP ? &u->qps : kind == BLUE_QUOTA_MR ? &u->mrs : &u->cqs;
	uint32_t max = kind == BLUE_QUOTA_QP ? l->qps : kind == BLUE_QUOTA_MR ? l->mrs : l->cqs;

	if (max && *have >= max) {
		blue__logf("tenant %s: its %s quota (%s=%u) is reached", t->name, quota_names[kind],
			   kind == BLUE_QUOTA_QP ? "qps" : kind == BLUE_QUOTA_MR ? "mrs" : "cqs", max);
		u->over_quota++;
		return EDQUOT;
	}
	if (kind == BLUE_QUOTA_MR && l->mr_bytes && bytes > l->mr_bytes - u->mr_bytes) {
		blue__logf("tenant %s: %llu more MR bytes would pass its quota (mr_bytes=%llu, "
			   "%llu registered)", t->name, (unsigned long long)bytes,
			   (unsigned long long)l->mr_bytes, (unsigned long long)u->mr_bytes);
		u->over_quota++;
		return EDQUOT;
	}
	(*have)++;
	if (kind == BLUE_QUOTA_MR)
		u->mr_bytes += bytes;
	return 0;
}

void blue__tenant_uncharge(struct blue_tenant *t, enum blue_quota kind, uint64_t bytes)
{
	struct blue_tenant_usage *u = &t->use;

	if (kind == BLUE_QUOTA_QP)
		u->qps--;
	else if (kind == BLUE_QUOTA_CQ)
		u->cqs--;
	else {
		u->mrs--;
		u->mr_bytes -= bytes;
	}
}

uint64_t blue__tenant_send_wait(struct blue_tenant *t, uint32_t bytes, uint64_t now_ns)
{
	/* tokens are byte-nanoseconds (bytes x 10^9): no rounding lost at any rate */
	uint64_t rate = t->lim.rate_bps / 8, cap, dt, need = (uint64_t)bytes * 1000000000ull;

	if (!rate)
		return 0;
	cap = rate * BUCKET_NS;		/* 1 ms of the rate */
	if (cap < (uint64_t)BUCKET_MIN * 1000000000ull)
		cap = (uint64_t)BUCKET_MIN * 1000000000ull;
	if (now_ns > t->refill_ns) {
		/* a full bucket after 1 ms: a longer idle adds nothing more (and no overflow) */
		dt = now_ns - t->refill_ns;
		t->tokens += (dt > BUCKET_NS ? BUCKET_NS : dt) * rate;
		t->refill_ns = now_ns;
	}
	if (t->tokens > cap)
		t->tokens = cap;	/* also when the rate went down (bluectl, SIGHUP) */
	if (t->tokens < need) {
		t->use.throttled++;
		return (need - t->tokens) / rate + 1;
	}
	t->tokens -= need;
	return 0;
}
