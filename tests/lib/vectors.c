// SPDX-License-Identifier: MIT
/* The golden rxe vectors: where they are and what their generated tables say. */
#include "tests/lib/vectors.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TVEC_REL	"tests/vectors/rxe"

static int is_dir(const char *p)
{
	struct stat st;

	return !stat(p, &st) && S_ISDIR(st.st_mode);
}

/* append ", @what" (or @what first) to the list of places tried */
static void tried_add(char *tried, size_t cap, const char *what)
{
	size_t n = strlen(tried);

	snprintf(tried + n, cap - n, "%s%s", n ? ", " : "", what);
}

/* @cand if it is a directory (0), else -ENOENT with it added to @tried */
static int try_dir(const char *cand, char *dir, size_t cap, char *tried, size_t tcap)
{
	if (is_dir(cand)) {
		snprintf(dir, cap, "%s", cand);
		return 0;
	}
	tried_add(tried, tcap, cand);
	return -ENOENT;
}

int tvec_dir(char *dir, size_t cap)
{
	const char *env = getenv("BLUE_VECTORS");
	char exe[PATH_MAX], tried[3 * PATH_MAX + 64] = "", cand[PATH_MAX + 64];
	ssize_t n;

	if (env && *env) {
		snprintf(cand, sizeof(cand), "$BLUE_VECTORS=%s", env);
		if (is_dir(env)) {
			snprintf(dir, cap, "%s", env);
			return 0;
		}
		/* an override that names nothing is an error, not a reason to look elsewhere */
		snprintf(dir, cap, "%s (not a directory)", cand);
		return -ENOENT;
	}
	/* from the cwd: tests are run from the repo root */
	if (!try_dir(TVEC_REL, dir, cap, tried, sizeof(tried)))
		return 0;
	/* from the binary: <repo>/<B>/tests/unit (or <B>/fuzz/gen_seeds) -> <repo> */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		for (int i = 0; i < 3; i++) {
			char *s = strrchr(exe, '/');

			if (s)
				*s = 0;
		}
		snprintf(cand, sizeof(cand), "%s/" TVEC_REL, exe);
		if (!try_dir(cand, dir, cap, tried, sizeof(tried)))
			return 0;
	}
	snprintf(dir, cap, "%s", tried);
	return -ENOENT;
}

static int read_all(const char *path, char **out)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0, got;

	if (!f)
		return -errno;
	do {
		if (cap - len < 4096) {
			char *nb = realloc(buf, cap += 65536);

			if (!nb) {
				free(buf);
				fclose(f);
				return -ENOMEM;
			}
			buf = nb;
		}
		got = fread(buf + len, 1, cap - len - 1, f);
		len += got;
	} while (got);
	fclose(f);
	buf[len] = 0;
	*out = buf;
	return 0;
}

/* split @line at tabs into at most @max cells; return the count, or -1 if there are more */
static int split_tabs(char *line, char **cells, int max)
{
	int n = 0;

	for (;;) {
		char *tab = strchr(line, '\t');

		if (n == max)
			return -1;
		cells[n++] = line;
		if (!tab)
			return n;
		*tab = 0;
		line = tab + 1;
	}
}

int tvec_table_open(const char *dir, const char *file, struct tvec_table *t)
{
	char path[PATH_MAX + 256], *line, *next, *hdr[256];
	int err, rows = 0, n;

	memset(t, 0, sizeof(*t));
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	err = read_all(path, &t->buf);
	if (err)
		return err;
	for (char *p = t->buf; *p; p++)
		rows += *p == '\n';
	next = strchr(t->buf, '\n');
	if (!next)
		goto bad;
	*next++ = 0;
	t->ncol = split_tabs(t->buf, hdr, 256);
	if (t->ncol < 1)
		goto bad;
	t->name = calloc(t->ncol, sizeof(*t->name));
	t->cell = calloc((size_t)(rows + 1) * t->ncol, sizeof(*t->cell));
	if (!t->name || !t->cell) {
		tvec_table_close(t);
		return -ENOMEM;
	}
	memcpy(t->name, hdr, t->ncol * sizeof(*hdr));
	for (line = next; line && *line; line = next) {
		char **row = &t->cell[(size_t)t->nrow * t->ncol];

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		n = split_tabs(line, row, t->ncol);
		if (n < 0)
			goto bad;
		t->nrow++;
	}
	return 0;
bad:
	tvec_table_close(t);
	return -EPROTO;
}

void tvec_table_close(struct tvec_table *t)
{
	free(t->cell);
	free(t->name);
	free(t->buf);
	memset(t, 0, sizeof(*t));
}

int tvec_col(const struct tvec_table *t, const char *name)
{
	for (int c = 0; c < t->ncol; c++)
		if (!strcmp(t->name[c], name))
			return c;
	return -1;
}

const char *tvec_cell(const struct tvec_table *t, int row, int col)
{
	const char *s = t->cell[(size_t)row * t->ncol + col];

	return s ? s : "";
}

/* @s as a whole unsigned number; 0, or -1 if it is empty or has anything else */
static int parse_ul(const char *s, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 10);
	return end == s || *end || errno ? -1 : 0;
}

long tvec_opcode_counts(const char *dir, const char *file, unsigned long counts[256])
{
	struct tvec_table t;
	int cf, co, cn, err;
	long total = 0;

	memset(counts, 0, 256 * sizeof(*counts));
	err = tvec_table_open(dir, "opcodes.tsv", &t);
	if (err)
		return err;
	cf = tvec_col(&t, "file");
	co = tvec_col(&t, "opcode");
	cn = tvec_col(&t, "frames");
	if (cf < 0 || co < 0 || cn < 0) {
		tvec_table_close(&t);
		return -EPROTO;
	}
	for (int r = 0; r < t.nrow; r++) {
		unsigned long op, k;

		if (strcmp(tvec_cell(&t, r, cf), file))
			continue;
		if (parse_ul(tvec_cell(&t, r, co), &op) || op > 255 ||
		    parse_ul(tvec_cell(&t, r, cn), &k))
			goto bad;
		counts[op] += k;
		total += (long)k;
	}
	tvec_table_close(&t);
	return total;
bad:
	tvec_table_close(&t);
	return -EPROTO;
}
