// SPDX-License-Identifier: MIT
/*
 * mpi_check: a verified MPI ping-pong and allreduce for two ranks (tests/ucx/test_mpi.sh).
 *
 * Ping-pong: for each size (eager sizes and ones past 64 KiB, which UCX's pml sends by
 * rendezvous, over RDMA READ/WRITE on rc_verbs) rank 0 sends a buffer whose bytes are a
 * function of (size, iteration, rank); rank 1 checks every byte, answers with its own
 * pattern, and rank 0 checks that. Allreduce: each rank contributes a vector whose element
 * i is (rank + 1) * (i + 1); the sum over ranks has a closed form and is checked element by
 * element on every rank. The error count is itself reduced, so every rank exits 1 when any
 * check failed anywhere, and rank 0 prints one line per check ("pingpong SIZE: ok").
 * With the argument "rma", one-sided too: rank 0 MPI_Puts a pattern into rank 1's window
 * and MPI_Gets rank 1's own pattern back, both checked (osc ucx serves a window with a
 * UCP context of its own, a second one in the process).
 * MPI_CHECK_CORRUPT=1 in rank 1's environment makes it flip one byte of its last answer
 * at the largest size, so that a test can see the check fail.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ITERS 10
#define ALLREDUCE_N (256 * 1024)	/* 2 MiB of int64: a large, rendezvous reduction */

static const size_t sizes[] = { 1, 64, 1000, 4096, 16384, 65536, 65537, 262144, 1 << 20, 4 << 20 };

static uint8_t pattern(size_t size, int iter, int rank, size_t i)
{
	return (uint8_t)(i * 131 + size * 7 + (size_t)iter * 17 + (size_t)rank * 101 + (i >> 8));
}

static void fill(uint8_t *buf, size_t size, int iter, int rank)
{
	for (size_t i = 0; i < size; i++)
		buf[i] = pattern(size, iter, rank, i);
}

/* the number of wrong bytes (the first one reported) */
static long check(const uint8_t *buf, size_t size, int iter, int rank, int me)
{
	long bad = 0;

	for (size_t i = 0; i < size; i++) {
		if (buf[i] == pattern(size, iter, rank, i))
			continue;
		if (!bad)
			fprintf(stderr, "rank %d: size %zu iter %d: byte %zu is 0x%02x, want 0x%02x\n",
				me, size, iter, i, buf[i], pattern(size, iter, rank, i));
		bad++;
	}
	return bad;
}

static long pingpong(int me, size_t size, uint8_t *buf, int corrupt)
{
	long bad = 0;
	int peer = 1 - me;

	for (int it = 0; it < ITERS; it++) {
		if (me == 0) {
			fill(buf, size, it, 0);
			MPI_Send(buf, (int)size, MPI_BYTE, peer, it, MPI_COMM_WORLD);
			memset(buf, 0, size);
			MPI_Recv(buf, (int)size, MPI_BYTE, peer, it, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			bad += check(buf, size, it, 1, me);
		} else {
			memset(buf, 0, size);
			MPI_Recv(buf, (int)size, MPI_BYTE, peer, it, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			bad += check(buf, size, it, 0, me);
			fill(buf, size, it, 1);
			if (corrupt && it == ITERS - 1)
				buf[size / 2] ^= 0x01;
			MPI_Send(buf, (int)size, MPI_BYTE, peer, it, MPI_COMM_WORLD);
		}
	}
	return bad;
}

static long allreduce(int me, int nranks)
{
	int64_t *in = malloc(ALLREDUCE_N * sizeof(*in)), *out = calloc(ALLREDUCE_N, sizeof(*out));
	/* sum over r of (r + 1) = n (n + 1) / 2 */
	int64_t ranks_sum = (int64_t)nranks * (nranks + 1) / 2;
	long bad = 0;

	if (!in || !out) {
		fprintf(stderr, "rank %d: out of memory\n", me);
		exit(2);
	}
	for (int64_t i = 0; i < ALLREDUCE_N; i++)
		in[i] = (me + 1) * (i + 1);
	MPI_Allreduce(in, out, ALLREDUCE_N, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	for (int64_t i = 0; i < ALLREDUCE_N; i++) {
		if (out[i] == ranks_sum * (i + 1))
			continue;
		if (!bad)
			fprintf(stderr, "rank %d: allreduce element %lld is %lld, want %lld\n", me,
				(long long)i, (long long)out[i], (long long)(ranks_sum * (i + 1)));
		bad++;
	}
	free(in);
	free(out);
	return bad;
}

#define RMA_LEN (1 << 20)

/* one-sided: the window is RMA_LEN bytes on each rank; rank 1 fills its second half */
static long rma(int me)
{
	uint8_t *win_buf, *local = malloc(RMA_LEN);
	long bad = 0;
	MPI_Win win;

	if (!local || MPI_Alloc_mem(RMA_LEN, MPI_INFO_NULL, &win_buf) != MPI_SUCCESS) {
		fprintf(stderr, "rank %d: out of memory\n", me);
		exit(2);
	}
	memset(win_buf, 0, RMA_LEN);
	if (me == 1)
		fill(win_buf + RMA_LEN / 2, RMA_LEN / 2, 7, 1);
	MPI_Win_create(win_buf, RMA_LEN, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	MPI_Win_fence(0, win);
	if (me == 0) {
		fill(local, RMA_LEN / 2, 5, 0);
		MPI_Put(local, RMA_LEN / 2, MPI_BYTE, 1, 0, RMA_LEN / 2, MPI_BYTE, win);
	}
	MPI_Win_fence(0, win);
	if (me == 1)
		bad += check(win_buf, RMA_LEN / 2, 5, 0, me);
	if (me == 0) {
		memset(local, 0, RMA_LEN);
		MPI_Get(local, RMA_LEN / 2, MPI_BYTE, 1, RMA_LEN / 2, RMA_LEN / 2, MPI_BYTE, win);
	}
	MPI_Win_fence(0, win);
	if (me == 0)
		bad += check(local, RMA_LEN / 2, 7, 1, me);
	MPI_Win_free(&win);
	MPI_Free_mem(win_buf);
	free(local);
	return bad;
}

int main(int argc, char **argv)
{
	int me, nranks, len;
	long bad, total_bad = 0, sum;
	char name[MPI_MAX_PROCESSOR_NAME];
	uint8_t *buf;
	const char *corrupt = getenv("MPI_CHECK_CORRUPT");
	size_t nsizes = sizeof(sizes) / sizeof(sizes[0]);

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	MPI_Get_processor_name(name, &len);
	printf("rank %d of %d on %s\n", me, nranks, name);
	fflush(stdout);
	if (nranks != 2) {
		if (me == 0)
			fprintf(stderr, "mpi_check: needs exactly 2 ranks, got %d\n", nranks);
		MPI_Finalize();
		return 2;
	}
	buf = malloc(sizes[nsizes - 1]);
	if (!buf) {
		fprintf(stderr, "rank %d: out of memory\n", me);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	for (size_t s = 0; s < nsizes; s++) {
		bad = pingpong(me, sizes[s], buf, corrupt && *corrupt == '1' && s == nsizes - 1);
		MPI_Allreduce(&bad, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
		if (me == 0)
			printf("pingpong %zu x %d: %s (%ld bad bytes)\n", sizes[s], ITERS,
			       sum ? "FAIL" : "ok", sum);
		total_bad += sum;
	}
	free(buf);
	bad = allreduce(me, nranks);
	MPI_Allreduce(&bad, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	if (me == 0)
		printf("allreduce %d x int64: %s (%ld bad elements)\n", ALLREDUCE_N,
		       sum ? "FAIL" : "ok", sum);
	total_bad += sum;
	if (argc > 1 && !strcmp(argv[1], "rma")) {
		bad = rma(me);
		MPI_Allreduce(&bad, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
		if (me == 0)
			printf("rma put+get %d B: %s (%ld bad bytes)\n", RMA_LEN / 2,
			       sum ? "FAIL" : "ok", sum);
		total_bad += sum;
	}
	if (me == 0)
		printf("mpi_check: %s\n", total_bad ? "FAIL" : "PASS");
	MPI_Finalize();
	return total_bad ? 1 : 0;
}
