/* SPDX-License-Identifier: MIT */
/*
 * The request head of bluectl's metrics endpoint, parsed: bytes in, a verdict out, no
 * I/O and no allocation, so the server, the unit tests and the fuzz target
 * (tests/fuzz/fuzz_http.c) all run the same code.
 *
 * The verdict of a buffer depends only on its bytes up to the point where the parser
 * decides: feeding a request one byte at a time and stopping at the first verdict
 * other than HTTP_MORE gives the verdict of the whole buffer at once.
 */
#ifndef BLUECTL_HTTP_REQ_H
#define BLUECTL_HTTP_REQ_H

#include <stddef.h>

/* A request line longer than this (its LF included) is refused with 414. */
#define HTTP_REQ_MAX_LINE	1024
/* A head (request line, header lines, the empty line) longer than this: 431. */
#define HTTP_REQ_MAX_HEAD	8192

enum http_verdict {
	HTTP_MORE,		/* no decision yet: the head is not complete */
	HTTP_OK,		/* a complete, well-formed GET or HEAD */
	HTTP_BAD,		/* 400: not an HTTP/1.x request head */
	HTTP_BAD_METHOD,	/* 405: a method other than GET and HEAD */
	HTTP_URI_TOO_LONG,	/* 414: the request line exceeds HTTP_REQ_MAX_LINE */
	HTTP_HEAD_TOO_LARGE,	/* 431: the head exceeds HTTP_REQ_MAX_HEAD */
	HTTP_BAD_VERSION,	/* 505: HTTP/x.y other than 1.0 and 1.1 */
	HTTP__VERDICTS
};

enum http_method {
	HTTP_GET,
	HTTP_HEAD,
};

struct http_req {
	enum http_method method;	/* HTTP_OK only */
	const char *target;		/* HTTP_OK: the request target, inside the buffer */
	size_t target_len;
	size_t path_len;		/* of target, up to its '?' (the query) */
	size_t head_len;		/* HTTP_OK: bytes of the head, its empty line included */
	const char *why;		/* not HTTP_OK or HTTP_MORE: what was wrong, for a log */
};

/**
 * http_req_parse() - judge the first @len bytes a client sent.
 * @buf: the bytes (need not be NUL-terminated; NULs in them are a 400)
 * @len: how many
 * @r: filled as each verdict says; may be partly written on any verdict
 *
 * Return: HTTP_MORE while the head could still turn out well-formed within the
 * limits, else the verdict.
 */
enum http_verdict http_req_parse(const char *buf, size_t len, struct http_req *r);

/* "400 Bad Request" and so on; the empty string for HTTP_MORE and HTTP_OK. */
const char *http_verdict_status(enum http_verdict v);

#endif
