// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for bluectl's HTTP request-head parser (tools/bluectl/http_req.c),
 * the first code of the metrics endpoint a remote client reaches (issue 12, item 13).
 *
 * The input is the bytes a client sent, copied into a buffer of exactly its size so
 * ASan sees any read past it. What must hold (a failure aborts):
 *  - no crash, and nothing ASan/UBSan object to;
 *  - the verdict is one of enum http_verdict; every refusal carries a reason and a
 *    status line, and HTTP_MORE only while under the head limit;
 *  - an accepted request: its target lies within the buffer and inside the request
 *    line, starts with '/', its path is a prefix of it, the head ends inside the
 *    buffer with an LF, and the method is GET or HEAD as the bytes say;
 *  - the verdict does not depend on how the bytes arrive: fed one byte at a time,
 *    stopping at the first verdict, the parser gives the all-at-once verdict (and, for
 *    an accepted request, the same target and head length).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bluectl/http_req.h"

#define CHECK(c)							\
	do {								\
		if (!(c)) {						\
			fprintf(stderr, "fuzz_http: %s:%d: %s\n", __FILE__, __LINE__, #c); \
			abort();					\
		}							\
	} while (0)

static void check_accepted(const char *buf, size_t len, const struct http_req *r)
{
	CHECK(r->target > buf && r->target + r->target_len <= buf + len);
	CHECK(r->target_len > 0 && r->target[0] == '/');
	CHECK(r->path_len <= r->target_len);
	CHECK(!memchr(r->target, '\n', r->target_len));
	CHECK(r->head_len > 0 && r->head_len <= len && r->head_len <= HTTP_REQ_MAX_HEAD);
	CHECK(buf[r->head_len - 1] == '\n');
	CHECK((size_t)(r->target - buf) < HTTP_REQ_MAX_LINE);
	if (r->method == HTTP_GET)
		CHECK(!memcmp(buf, "GET ", 4));
	else
		CHECK(r->method == HTTP_HEAD && !memcmp(buf, "HEAD ", 5));
}

static void check_verdict(const char *buf, size_t len, enum http_verdict v,
			  const struct http_req *r)
{
	CHECK((unsigned int)v < HTTP__VERDICTS);
	if (v == HTTP_OK)
		check_accepted(buf, len, r);
	else if (v == HTTP_MORE)
		CHECK(len < HTTP_REQ_MAX_HEAD);
	else
		CHECK(r->why && *r->why && *http_verdict_status(v));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum http_verdict all, step = HTTP_MORE;
	struct http_req r_all, r_step;
	char *buf = malloc(size ? size : 1);
	size_t n;

	CHECK(buf);
	memcpy(buf, data, size);
	all = http_req_parse(buf, size, &r_all);
	check_verdict(buf, size, all, &r_all);
	for (n = 0; n <= size && step == HTTP_MORE; n++) {
		step = http_req_parse(buf, n, &r_step);
		check_verdict(buf, n, step, &r_step);
	}
	CHECK(step == all);
	if (all == HTTP_OK)
		CHECK(r_step.target == r_all.target && r_step.target_len == r_all.target_len &&
		      r_step.head_len == r_all.head_len);
	free(buf);
	return 0;
}
