// SPDX-License-Identifier: MIT
/*
 * The loader's logger. Its own errors are one actionable line each; libbpf's messages
 * (map creation, relocation, the verifier log) are routed here at debug level so a normal
 * run shows only our line and `bluectl -v` shows everything (STYLE.md point 3).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "loader/internal.h"

static enum blue_loader_log_level log_level = BLUE_LOADER_LOG_INFO;
static blue_loader_log_fn log_fn;
static __thread char last_error[512];

void blue_loader_set_log_fn(blue_loader_log_fn fn)
{
	log_fn = fn;
}

void blue_loader_set_log_level(enum blue_loader_log_level level)
{
	log_level = level;
	blue_ld__hook_libbpf();
}

const char *blue_loader_last_error(void)
{
	return last_error;
}

static void emit(enum blue_loader_log_level level, const char *msg)
{
	if (level > log_level)
		return;
	if (log_fn)
		log_fn(level, msg);
	else
		fprintf(stderr, "blue: %s\n", msg);
}

void blue_ld__log(enum blue_loader_log_level level, const char *fmt, ...)
{
	char buf[sizeof(last_error)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (level == BLUE_LOADER_LOG_ERROR)
		memcpy(last_error, buf, sizeof(buf));
	emit(level, buf);
}

/* libbpf hands over fragments that end in '\n'; strip it, our sink adds its own. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *buf;
	size_t n;

	(void)level;
	if (log_level < BLUE_LOADER_LOG_DEBUG)
		return 0;
	/* the verifier log arrives as one message of many kilobytes: no fixed buffer */
	if (vasprintf(&buf, fmt, ap) < 0)
		return 0;
	n = strlen(buf);
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	emit(BLUE_LOADER_LOG_DEBUG, buf);
	free(buf);
	return 0;
}

void blue_ld__hook_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}
