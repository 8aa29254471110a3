// SPDX-License-Identifier: MIT
/*
 * The request head, checked in the order its bytes arrive (RFC 9112 section 2-5): the
 * request line once its LF is in, then each header line once its LF is in, then the
 * empty line that ends the head. Every step looks only at complete lines within the
 * limits, which is what makes a verdict independent of how the bytes were split into
 * reads (http_req.h). Each step returns a verdict or GO_ON.
 *
 * What is refused, and why it is not simply tolerated: anything but origin-form targets
 * (the endpoint is no proxy), control bytes (a NUL or a bare CR is how request smuggling
 * starts), obsolete line folding (RFC 9112 section 5.2 lets a server reject it), and
 * versions other than HTTP/1.0 and 1.1.
 */
#include <stdbool.h>
#include <string.h>

#include "tools/bluectl/http_req.h"

#define GO_ON	HTTP__VERDICTS
#define STR_(x)	#x
#define STR(x)	STR_(x)

/* RFC 9110 section 5.6.2 tchar: the bytes of a method or a header name. */
static bool is_tchar(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool is_vchar(unsigned char c)
{
	return c > 0x20 && c < 0x7f;
}

/* A header value: visible bytes, spaces, tabs and obs-text (0x80-0xff). */
static bool is_field_char(unsigned char c)
{
	return c == ' ' || c == '\t' || is_vchar(c) || c >= 0x80;
}

static enum http_verdict refuse(struct http_req *r, enum http_verdict v, const char *why)
{
	r->why = why;
	return v;
}

/* The length of a line without its LF, nor the CR before it. */
static size_t line_body(const char *p, size_t n_before_lf)
{
	return n_before_lf && p[n_before_lf - 1] == '\r' ? n_before_lf - 1 : n_before_lf;
}

/* The first LF in buf[from, min(len, cap)), or NULL. */
static const char *find_lf(const char *buf, size_t from, size_t len, size_t cap)
{
	size_t lim = len < cap ? len : cap;

	return from < lim ? memchr(buf + from, '\n', lim - from) : NULL;
}

/* Method, target and version: "GET /metrics HTTP/1.1". @n excludes the line end. */
static enum http_verdict check_request_line(const char *p, size_t n, struct http_req *r)
{
	size_t m = 0, t, tn = 0;
	const char *v;

	while (m < n && is_tchar((unsigned char)p[m]))
		m++;
	if (!m || m == n || p[m] != ' ')
		return refuse(r, HTTP_BAD, "request line: no method followed by one space");
	t = m + 1;
	while (t + tn < n && is_vchar((unsigned char)p[t + tn]))
		tn++;
	if (!tn)
		return refuse(r, HTTP_BAD, "request line: no target");
	if (t + tn == n || p[t + tn] != ' ')
		return refuse(r, HTTP_BAD, "request line: no HTTP version after the target");
	if (p[t] != '/')
		return refuse(r, HTTP_BAD, "request line: the target is not a path");
	v = p + t + tn + 1;
	if (n - (size_t)(v - p) != 8 || memcmp(v, "HTTP/", 5) || v[5] < '0' || v[5] > '9' ||
	    v[6] != '.' || v[7] < '0' || v[7] > '9')
		return refuse(r, HTTP_BAD, "request line: the version is not HTTP/digit.digit");
	if (v[5] != '1' || (v[7] != '0' && v[7] != '1'))
		return refuse(r, HTTP_BAD_VERSION, "only HTTP/1.0 and HTTP/1.1 are served");
	if (m == 3 && !memcmp(p, "GET", 3))
		r->method = HTTP_GET;
	else if (m == 4 && !memcmp(p, "HEAD", 4))
		r->method = HTTP_HEAD;
	else
		return refuse(r, HTTP_BAD_METHOD, "only GET and HEAD are served");
	r->target = p + t;
	r->target_len = tn;
	v = memchr(r->target, '?', tn);
	r->path_len = v ? (size_t)(v - r->target) : tn;
	return GO_ON;
}

/* "Name: value" (RFC 9112 section 5): a token, a colon, field bytes. */
static enum http_verdict check_header_line(const char *p, size_t n, struct http_req *r)
{
	size_t i = 0;

	if (p[0] == ' ' || p[0] == '\t')
		return refuse(r, HTTP_BAD, "header: obsolete line folding");
	while (i < n && is_tchar((unsigned char)p[i]))
		i++;
	if (!i || i == n || p[i] != ':')
		return refuse(r, HTTP_BAD, "header: no name followed by a colon");
	for (i++; i < n; i++)
		if (!is_field_char((unsigned char)p[i]))
			return refuse(r, HTTP_BAD, "header: a control byte in the value");
	return GO_ON;
}

/* The request line, if its LF is in: GO_ON with @*next at the byte after it. */
static enum http_verdict request_line(const char *buf, size_t len, size_t *next,
				      struct http_req *r)
{
	const char *lf = find_lf(buf, 0, len, HTTP_REQ_MAX_LINE);

	if (!lf)
		return len < HTTP_REQ_MAX_LINE ? HTTP_MORE :
		       refuse(r, HTTP_URI_TOO_LONG,
			      "request line over " STR(HTTP_REQ_MAX_LINE) " bytes");
	*next = (size_t)(lf - buf) + 1;
	return check_request_line(buf, line_body(buf, (size_t)(lf - buf)), r);
}

/* Header lines from @pos up to the empty line. */
static enum http_verdict header_lines(const char *buf, size_t len, size_t pos,
				      struct http_req *r)
{
	enum http_verdict v;
	const char *lf;
	size_t n;

	for (;;) {
		lf = find_lf(buf, pos, len, HTTP_REQ_MAX_HEAD);
		if (!lf)
			return len < HTTP_REQ_MAX_HEAD ? HTTP_MORE :
			       refuse(r, HTTP_HEAD_TOO_LARGE,
				      "request head over " STR(HTTP_REQ_MAX_HEAD) " bytes");
		n = line_body(buf + pos, (size_t)(lf - buf) - pos);
		if (!n) {
			r->head_len = (size_t)(lf - buf) + 1;
			return HTTP_OK;
		}
		v = check_header_line(buf + pos, n, r);
		if (v != GO_ON)
			return v;
		pos = (size_t)(lf - buf) + 1;
	}
}

enum http_verdict http_req_parse(const char *buf, size_t len, struct http_req *r)
{
	enum http_verdict v;
	size_t next = 0;

	memset(r, 0, sizeof(*r));
	v = request_line(buf, len, &next, r);
	if (v != GO_ON)
		return v;
	return header_lines(buf, len, next, r);
}

const char *http_verdict_status(enum http_verdict v)
{
	static const char *const status[HTTP__VERDICTS] = {
		[HTTP_MORE] = "",
		[HTTP_OK] = "",
		[HTTP_BAD] = "400 Bad Request",
		[HTTP_BAD_METHOD] = "405 Method Not Allowed",
		[HTTP_URI_TOO_LONG] = "414 URI Too Long",
		[HTTP_HEAD_TOO_LARGE] = "431 Request Header Fields Too Large",
		[HTTP_BAD_VERSION] = "505 HTTP Version Not Supported",
	};

	return (unsigned int)v < HTTP__VERDICTS ? status[v] : "";
}
