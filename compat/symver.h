/* SPDX-License-Identifier: MIT */
/*
 * SYMVER(impl, "name@VER"), at file scope: the library exports function @impl as
 * "name" at version node VER ("name@@VER": as its default version), beside whatever
 * the version script gives. An assembler directive rather than GCC's symver attribute,
 * which clang lacks; without LTO (this build has none) the two are the same thing.
 */
#ifndef BLUE_COMPAT_SYMVER_H
#define BLUE_COMPAT_SYMVER_H

#define SYMVER(impl, ver) __asm__(".symver " #impl ", " ver)

#endif /* BLUE_COMPAT_SYMVER_H */
