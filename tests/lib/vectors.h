/* SPDX-License-Identifier: MIT */
/*
 * The golden rxe vectors (tests/vectors/rxe, made by tests/interop/capture_vectors.sh):
 * where they are, and the expectations their generated files hold (opcodes.tsv: frames
 * per BTH opcode; fields.tsv: tshark's decoding of a few frames). Test-only.
 */
#ifndef BLUE_TESTS_LIB_VECTORS_H
#define BLUE_TESTS_LIB_VECTORS_H

#include <stddef.h>

/*
 * Find the vectors: $BLUE_VECTORS, else tests/vectors/rxe from the repo root (found from
 * the cwd, then from the test binary's path, <repo>/<B>/tests/unit and the like).
 * Writes the directory to @dir and returns 0, or returns -ENOENT and writes the places
 * tried to @dir, for the skip message.
 */
int tvec_dir(char *dir, size_t cap);

/*
 * A tab-separated file of @dir with a header line: cell(r, c) is row r's column c
 * ("" when the row is short). Rows do not count the header.
 */
struct tvec_table {
	char	*buf;		/* the file, cut into cells in place; owned */
	char	**cell;		/* nrow * ncol, owned */
	char	**name;		/* the header's ncol column names, owned */
	int	ncol;
	int	nrow;
};

/* Read @dir/@file. Return 0, or -errno (-EPROTO: no header, or a row has too many cells). */
int tvec_table_open(const char *dir, const char *file, struct tvec_table *t);
void tvec_table_close(struct tvec_table *t);
/* The index of column @name, or -1. */
int tvec_col(const struct tvec_table *t, const char *name);
const char *tvec_cell(const struct tvec_table *t, int row, int col);

/*
 * opcodes.tsv's counts for capture @file: @counts[opcode] = frames. Return the file's
 * frames in all (0: not listed), or -errno.
 */
long tvec_opcode_counts(const char *dir, const char *file, unsigned long counts[256]);

#endif
