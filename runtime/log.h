/* SPDX-License-Identifier: MIT */
/*
 * libblue's diagnostics: one line on stderr, prefixed "libblue: ", saying what failed on
 * which object and what to try (STYLE.md 11). Set BLUE_LOG=0 in the environment to
 * silence them (tests that provoke errors on purpose keep stderr readable that way).
 */
#ifndef BLUE_RUNTIME_LOG_H
#define BLUE_RUNTIME_LOG_H

void blue__logf(const char *fmt, ...) __attribute__((format(printf, 1, 2), visibility("hidden")));

#endif /* BLUE_RUNTIME_LOG_H */
