/* SPDX-License-Identifier: MIT */
/*
 * libblue's diagnostics: one line on stderr, prefixed "libblue: ", saying what failed on
 * which object and what to try (STYLE.md 11). Set BLUE_LOG=0 in the environment to
 * silence them (tests that provoke errors on purpose keep stderr readable that way).
 */
#ifndef BLUE_RUNTIME_LOG_H
#define BLUE_RUNTIME_LOG_H

void blue__logf(const char *fmt, ...) __attribute__((format(printf, 1, 2), visibility("hidden")));

/*
 * blue__log_capture() - from now on, this thread's last line logged is also kept in
 * @buf (emptied now; BLUE_LOG=0 does not silence it): blue-manager hands a command's
 * message back to the process that sent it. @len 0: stop.
 */
#include <stddef.h>
void blue__log_capture(char *buf, size_t len) __attribute__((visibility("hidden")));

/*
 * blue__env_flag() - a yes/no knob from the environment: "0", "n..", "off" are no, any
 * other value is yes, and an unset variable gives @def.
 */
#include <stdbool.h>
bool blue__env_flag(const char *name, bool def) __attribute__((visibility("hidden")));

#endif /* BLUE_RUNTIME_LOG_H */
