// SPDX-License-Identifier: MIT
/*
 * bluectl's HTTP request-head parser (tools/bluectl/http_req.c): the verdict of real
 * scrape requests and of each kind of malformed one, the limits at their edges, and a
 * verdict that does not depend on how the bytes were split.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bluectl/http_req.h"

static enum http_verdict parse_str(const char *s, struct http_req *r)
{
	return http_req_parse(s, strlen(s), r);
}

/* Byte by byte, stopping at the first verdict; must equal the all-at-once one. */
static enum http_verdict parse_bytewise(const char *buf, size_t len)
{
	struct http_req r;
	enum http_verdict v = HTTP_MORE;
	size_t n;

	for (n = 1; n <= len && v == HTTP_MORE; n++)
		v = http_req_parse(buf, n, &r);
	return v;
}

Test(http_req, prometheus_scrape)
{
	static const char req[] =
		"GET /metrics HTTP/1.1\r\nHost: 10.0.0.1:9464\r\nUser-Agent: Prometheus/2.45.0\r\n"
		"Accept: application/openmetrics-text;version=1.0.0,"
		"text/plain;version=0.0.4;q=0.5\r\n"
		"Accept-Encoding: gzip\r\nX-Prometheus-Scrape-Timeout-Seconds: 10\r\n\r\n";
	struct http_req r;

	cr_assert_eq(parse_str(req, &r), HTTP_OK);
	cr_expect_eq(r.method, HTTP_GET);
	cr_expect_eq(r.target, req + 4, "the target points into the buffer");
	cr_expect_eq(r.target_len, 8);
	cr_expect_eq(r.path_len, 8);
	cr_expect_eq(r.head_len, strlen(req));
}

Test(http_req, head_query_and_bare_lf)
{
	static const char req[] = "HEAD /metrics?x=1 HTTP/1.0\n\n";
	struct http_req r;

	cr_assert_eq(parse_str(req, &r), HTTP_OK);
	cr_expect_eq(r.method, HTTP_HEAD);
	cr_expect_eq(r.target_len, 12);
	cr_expect_eq(r.path_len, 8, "the path stops at the query");
	cr_expect(!memcmp(r.target, "/metrics?x=1", 12));
}

Test(http_req, incomplete_is_more)
{
	struct http_req r;

	cr_expect_eq(parse_str("", &r), HTTP_MORE);
	cr_expect_eq(parse_str("GET /metrics HT", &r), HTTP_MORE);
	cr_expect_eq(parse_str("GET /metrics HTTP/1.1\r\n", &r), HTTP_MORE);
	cr_expect_eq(parse_str("GET /metrics HTTP/1.1\r\nHost: x\r\n\r", &r), HTTP_MORE);
}

Test(http_req, malformed)
{
	static const struct { const char *req; enum http_verdict v; } rows[] = {
		{ "BREW /metrics HTTP/1.1\r\n\r\n", HTTP_BAD_METHOD },
		/* methods are case-sensitive */
		{ "get /metrics HTTP/1.1\r\n\r\n", HTTP_BAD_METHOD },
		{ "GET /metrics HTTP/2.0\r\n\r\n", HTTP_BAD_VERSION },
		{ "GET /metrics HTTP/1.2\r\n\r\n", HTTP_BAD_VERSION },
		{ "GET /metrics\r\n\r\n", HTTP_BAD },			/* HTTP/0.9 */
		{ "GET  /metrics HTTP/1.1\r\n\r\n", HTTP_BAD },		/* two spaces */
		{ "GET http://h/metrics HTTP/1.1\r\n\r\n", HTTP_BAD },	/* absolute form */
		{ "GET /metrics HTTP/1.1 \r\n\r\n", HTTP_BAD },
		{ "GET /metrics HTTP/1.x\r\n\r\n", HTTP_BAD },
		{ "GET /met\rrics HTTP/1.1\r\n\r\n", HTTP_BAD },		/* bare CR */
		{ "\r\nGET /metrics HTTP/1.1\r\n\r\n", HTTP_BAD },
		{ "GET /metrics HTTP/1.1\r\nno colon\r\n\r\n", HTTP_BAD },
		{ "GET /metrics HTTP/1.1\r\n: empty name\r\n\r\n", HTTP_BAD },
		/* a space before the colon */
		{ "GET /metrics HTTP/1.1\r\nHost : x\r\n\r\n", HTTP_BAD },
		{ "GET /metrics HTTP/1.1\r\nA: b\r\n folded\r\n\r\n", HTTP_BAD },
		{ "GET /metrics HTTP/1.1\r\nA: b\x01\r\n\r\n", HTTP_BAD },
	};
	struct http_req r;
	unsigned int i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		cr_expect_eq(parse_str(rows[i].req, &r), rows[i].v, "row %u: %s", i, rows[i].req);
		cr_expect(r.why && *r.why, "row %u: a reason for the log", i);
		cr_expect_eq(parse_bytewise(rows[i].req, strlen(rows[i].req)), rows[i].v,
			     "row %u byte by byte", i);
	}
}

Test(http_req, nul_in_head_is_bad)
{
	static const char req[] = "GET /metrics HTTP/1.1\r\nA: \0b\r\n\r\n";
	struct http_req r;

	cr_expect_eq(http_req_parse(req, sizeof(req) - 1, &r), HTTP_BAD);
}

/* A request line of exactly the limit (its LF included) passes; one byte more is 414. */
Test(http_req, line_limit_edges)
{
	char *buf = malloc(HTTP_REQ_MAX_LINE + 8);
	struct http_req r;
	size_t fixed = strlen("GET / HTTP/1.1\r\n"), n;

	cr_assert(buf);
	for (n = HTTP_REQ_MAX_LINE; n <= HTTP_REQ_MAX_LINE + 1; n++) {
		size_t pad = n - fixed;

		memcpy(buf, "GET /", 5);
		memset(buf + 5, 'a', pad);
		memcpy(buf + 5 + pad, " HTTP/1.1\r\n\r\n", 13);
		cr_expect_eq(http_req_parse(buf, n + 2, &r),
			     n == HTTP_REQ_MAX_LINE ? HTTP_OK : HTTP_URI_TOO_LONG, "line %zu", n);
		cr_expect_eq(parse_bytewise(buf, n + 2),
			     n == HTTP_REQ_MAX_LINE ? HTTP_OK : HTTP_URI_TOO_LONG,
			     "bytewise %zu", n);
	}
	/* no LF yet, but the limit reached: no need to wait for more */
	memset(buf, 'a', HTTP_REQ_MAX_LINE);
	cr_expect_eq(http_req_parse(buf, HTTP_REQ_MAX_LINE - 1, &r), HTTP_MORE);
	cr_expect_eq(http_req_parse(buf, HTTP_REQ_MAX_LINE, &r), HTTP_URI_TOO_LONG);
	free(buf);
}

Test(http_req, head_limit_edges)
{
	char *buf = malloc(HTTP_REQ_MAX_HEAD + 8);
	struct http_req r;
	size_t n, pad, at;

	cr_assert(buf);
	for (n = HTTP_REQ_MAX_HEAD; n <= HTTP_REQ_MAX_HEAD + 1; n++) {
		/* request line, one header "X: ppp...\r\n", the empty line: n bytes */
		at = (size_t)sprintf(buf, "GET /metrics HTTP/1.1\r\nX: ");
		pad = n - at - 4;
		memset(buf + at, 'p', pad);
		memcpy(buf + at + pad, "\r\n\r\n", 4);
		cr_expect_eq(http_req_parse(buf, n, &r),
			     n == HTTP_REQ_MAX_HEAD ? HTTP_OK : HTTP_HEAD_TOO_LARGE, "head %zu", n);
		if (n == HTTP_REQ_MAX_HEAD)
			cr_expect_eq(r.head_len, n);
	}
	free(buf);
}

Test(http_req, status_lines)
{
	cr_expect_str_eq(http_verdict_status(HTTP_BAD), "400 Bad Request");
	cr_expect_str_eq(http_verdict_status(HTTP_BAD_METHOD), "405 Method Not Allowed");
	cr_expect_str_eq(http_verdict_status(HTTP_URI_TOO_LONG), "414 URI Too Long");
	cr_expect_str_eq(http_verdict_status(HTTP_HEAD_TOO_LARGE),
			 "431 Request Header Fields Too Large");
	cr_expect_str_eq(http_verdict_status(HTTP_BAD_VERSION), "505 HTTP Version Not Supported");
	cr_expect_str_eq(http_verdict_status(HTTP_OK), "");
	cr_expect_str_eq(http_verdict_status(HTTP__VERDICTS), "");
}
