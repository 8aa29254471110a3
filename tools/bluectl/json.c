// SPDX-License-Identifier: MIT
/*
 * A JSON writer for one value per line: objects and arrays nest, commas are placed by
 * depth, strings are escaped (interface names may hold any byte but '/' and
 * whitespace). Enough for bluectl's --json, which python's json module reads back.
 */
#include <math.h>

#include "tools/bluectl/bluectl.h"

void jw_init(struct jw *w, FILE *f)
{
	w->f = f;
	w->depth = 0;
	w->need_comma[0] = false;
}

static void put_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* The comma before a member, and its key when inside an object. */
static void member(struct jw *w, const char *key)
{
	if (w->need_comma[w->depth])
		fputs(", ", w->f);
	w->need_comma[w->depth] = true;
	if (key) {
		put_str(w->f, key);
		fputs(": ", w->f);
	}
}

static void open_(struct jw *w, const char *key, char c)
{
	member(w, key);
	fputc(c, w->f);
	if (w->depth < 15)
		w->depth++;
	w->need_comma[w->depth] = false;
}

static void close_(struct jw *w, char c)
{
	fputc(c, w->f);
	if (w->depth > 0)
		w->depth--;
}

void jw_obj(struct jw *w, const char *key) { open_(w, key, '{'); }
void jw_obj_end(struct jw *w) { close_(w, '}'); }
void jw_arr(struct jw *w, const char *key) { open_(w, key, '['); }
void jw_arr_end(struct jw *w) { close_(w, ']'); }

void jw_u64(struct jw *w, const char *key, uint64_t v)
{
	member(w, key);
	fprintf(w->f, "%llu", (unsigned long long)v);
}

void jw_i64(struct jw *w, const char *key, int64_t v)
{
	member(w, key);
	fprintf(w->f, "%lld", (long long)v);
}

void jw_dbl(struct jw *w, const char *key, double v)
{
	member(w, key);
	if (isfinite(v))
		fprintf(w->f, "%.6g", v);
	else
		fputs("null", w->f);	/* JSON has no NaN or infinity */
}

void jw_str(struct jw *w, const char *key, const char *s)
{
	member(w, key);
	put_str(w->f, s);
}

void jw_bool(struct jw *w, const char *key, bool v)
{
	member(w, key);
	fputs(v ? "true" : "false", w->f);
}

void jw_end(struct jw *w)
{
	fputc('\n', w->f);
	fflush(w->f);
}
