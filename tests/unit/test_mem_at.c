// SPDX-License-Identifier: MIT
/*
 * Registered memory that stays in the application's process (runtime/mem_at.c): what
 * blue-manager does with memory an unmodified program registers from its heap. The
 * primitives are checked against a forked child (reads, writes, CAS, FETCH_ADD, an
 * 8-byte store, and EFAULT for a range the child does not map); then the whole engine
 * runs over MRs whose bytes are reached through process_vm (this process's own pid,
 * the same system calls a daemon makes): SEND, WRITE, READ of 1 B to 1 MiB with every
 * byte compared, atomics with their original values, and a region unmapped after
 * registration that fails with a remote access error instead of a crash.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/mem_at.h"
#include "runtime/mr.h"
#include "runtime/qp.h"
#include "tests/unit/rc_fixture.h"

#define WAIT_MS 5000
#define MiB (1u << 20)

/* A child that waits to be killed, holding our pages at the same addresses. */
static pid_t child_start(void)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

static void child_end(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

Test(mem_at, another_process_read_write_and_atomics)
{
	uint8_t *page = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			     -1, 0);
	uint8_t out[64], in[64];
	uint64_t orig, word;
	struct blue_mem_at at;
	pid_t pid;

	cr_assert_neq(page, MAP_FAILED);
	cr_assert_eq(munmap(page + 4096, 4096), 0, "the page after it is mapped in no one");
	memset(page, 0x5a, 4096);
	memcpy(page + 64, &(uint64_t){ 40 }, 8);
	pid = child_start();
	at = (struct blue_mem_at){ .p = page, .pid = pid };
	/* private pages: from here the child's copy and ours differ */
	memset(page, 0, 4096);
	cr_assert_eq(blue__mem_read(at, in, sizeof(in)), 0);
	for (size_t i = 0; i < sizeof(in); i++)
		cr_assert_eq(in[i], 0x5a, "byte %zu read from the child", i);
	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (uint8_t)i;
	cr_assert_eq(blue__mem_write(blue_mem_off(at, 128), out, sizeof(out)), 0);
	cr_assert_eq(blue__mem_read(blue_mem_off(at, 128), in, sizeof(in)), 0);
	cr_assert_arr_eq(in, out, sizeof(out));
	cr_assert(!page[128 + 1], "the write went to the child, not to us");

	cr_assert_eq(blue__mem_fetch_add(blue_mem_off(at, 64), 2, &orig), 0);
	cr_assert_eq(orig, 40);
	cr_assert_eq(blue__mem_cas(blue_mem_off(at, 64), 41, 7, &orig), 0);
	cr_assert_eq(orig, 42, "CAS returns the value before");
	cr_assert_eq(blue__mem_read(blue_mem_off(at, 64), &word, 8), 0);
	cr_assert_eq(word, 42, "a CAS whose compare fails changes nothing");
	cr_assert_eq(blue__mem_cas(blue_mem_off(at, 64), 42, 7, &orig), 0);
	cr_assert_eq(blue__mem_store64(blue_mem_off(at, 72), 99), 0);
	cr_assert_eq(blue__mem_read(blue_mem_off(at, 64), &word, 8), 0);
	cr_assert_eq(word, 7);
	cr_assert_eq(blue__mem_read(blue_mem_off(at, 72), &word, 8), 0);
	cr_assert_eq(word, 99);

	/* across the page's end: the next page is mapped nowhere */
	cr_assert_eq(blue__mem_read(blue_mem_off(at, 4090), in, 64), -EFAULT);
	child_end(pid);
	cr_assert_eq(blue__mem_read(at, in, 8), -ESRCH, "a process that is gone");
	munmap(page, 4096);
}

struct far {
	uint8_t *buf;
	size_t len;
	struct blue_mr *mr;
};

/* An MR whose bytes the engine reaches with process_vm, as blue-manager's heap MRs. */
static void far_reg(struct far *m, struct rc_side *s, size_t len, int fill)
{
	m->len = len;
	m->buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(m->buf, MAP_FAILED);
	if (fill >= 0)
		rc_fill(m->buf, len, (unsigned int)fill);
	m->mr = blue__reg_mr_at(s->pd, m->buf, len, BLUE_ACCESS_LOCAL_WRITE |
				BLUE_ACCESS_REMOTE_WRITE | BLUE_ACCESS_REMOTE_READ |
				BLUE_ACCESS_REMOTE_ATOMIC,
				(struct blue_mem_at){ .p = m->buf, .pid = getpid() });
	cr_assert_not_null(m->mr);
}

static void far_unreg(struct far *m)
{
	cr_assert_eq(blue_dereg_mr(m->mr), 0);
	if (m->buf)
		munmap(m->buf, m->len);
}

static struct blue_wc rdma(struct rc_fx *fx, enum blue_wr_opcode op, struct far *l,
			   uint32_t len, struct far *r, uint64_t roff)
{
	struct blue_sge sge = { .addr = (uintptr_t)l->buf, .length = len, .lkey = l->mr->lkey };
	struct blue_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = BLUE_SEND_SIGNALED,
	};

	wr.wr.rdma.remote_addr = (uintptr_t)r->buf + roff;
	wr.wr.rdma.rkey = r->mr->rkey;
	rc_post_send(&fx->a, &wr);
	return rc_wait1(fx, fx->a.scq, WAIT_MS);
}

Test(mem_at, engine_over_memory_in_a_process)
{
	static const uint32_t sizes[] = { 1, 8, 4096, 65536, MiB };
	struct far src, dst, back, rb;
	struct blue_sge sge;
	struct blue_send_wr wr;
	struct rc_fx fx;
	struct blue_wc wc;

	rc_fx_init(&fx, NULL);
	far_reg(&src, &fx.a, MiB, 11);
	far_reg(&back, &fx.a, MiB, -1);
	far_reg(&dst, &fx.b, MiB, -1);
	far_reg(&rb, &fx.b, MiB, -1);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t n = sizes[i];

		memset(dst.buf, 0, MiB);
		wc = rdma(&fx, BLUE_WR_RDMA_WRITE, &src, n, &dst, 0);
		cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "WRITE %u: %d", n, wc.status);
		cr_assert_arr_eq(dst.buf, src.buf, n, "WRITE %u bytes", n);
		memset(back.buf, 0, MiB);
		wc = rdma(&fx, BLUE_WR_RDMA_READ, &back, n, &dst, 0);
		cr_assert_eq(wc.status, BLUE_WC_SUCCESS, "READ %u: %d", n, wc.status);
		cr_assert_arr_eq(back.buf, src.buf, n, "READ %u bytes", n);
		/* SEND into a receive WQE whose buffer is reached the same way */
		memset(rb.buf, 0, MiB);
		rc_post_recv(&fx.b, 9, rb.buf, MiB, rb.mr->lkey);
		sge = (struct blue_sge){ .addr = (uintptr_t)src.buf, .length = n,
					 .lkey = src.mr->lkey };
		wr = (struct blue_send_wr){ .wr_id = 2, .sg_list = &sge, .num_sge = 1,
					    .opcode = BLUE_WR_SEND,
					    .send_flags = BLUE_SEND_SIGNALED };
		rc_post_send(&fx.a, &wr);
		wc = rc_wait1(&fx, fx.a.scq, WAIT_MS);
		cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
		wc = rc_wait1(&fx, fx.b.rcq, WAIT_MS);
		cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
		cr_assert_eq(wc.byte_len, n);
		cr_assert_arr_eq(rb.buf, src.buf, n, "SEND %u bytes", n);
	}

	/* atomics: the original value lands in the requester's far memory */
	memcpy(dst.buf + 256, &(uint64_t){ 1000 }, 8);
	sge = (struct blue_sge){ .addr = (uintptr_t)back.buf, .length = 8, .lkey = back.mr->lkey };
	wr = (struct blue_send_wr){ .wr_id = 3, .sg_list = &sge, .num_sge = 1,
				    .opcode = BLUE_WR_ATOMIC_FETCH_AND_ADD,
				    .send_flags = BLUE_SEND_SIGNALED };
	wr.wr.atomic.remote_addr = (uintptr_t)dst.buf + 256;
	wr.wr.atomic.rkey = dst.mr->rkey;
	wr.wr.atomic.compare_add = 24;
	rc_post_send(&fx.a, &wr);
	wc = rc_wait1(&fx, fx.a.scq, WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	cr_assert_eq(*(uint64_t *)back.buf, 1000);
	cr_assert_eq(*(uint64_t *)(dst.buf + 256), 1024);
	wr.opcode = BLUE_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.compare_add = 1024;
	wr.wr.atomic.swap = 5;
	rc_post_send(&fx.a, &wr);
	wc = rc_wait1(&fx, fx.a.scq, WAIT_MS);
	cr_assert_eq(wc.status, BLUE_WC_SUCCESS);
	cr_assert_eq(*(uint64_t *)back.buf, 1024);
	cr_assert_eq(*(uint64_t *)(dst.buf + 256), 5);

	/* the application unmaps its buffer and keeps the MR: a NAK, not a daemon crash */
	munmap(dst.buf + 65536, 65536);
	wc = rdma(&fx, BLUE_WR_RDMA_WRITE, &src, 4096, &dst, 65536);
	cr_assert_eq(wc.status, BLUE_WC_REM_ACCESS_ERR, "status %d", wc.status);
	cr_assert_eq(fx.b.qp->live->last_nak_syndrome, BLUE_NAK_REM_ACCESS_ERR);
	far_unreg(&src);
	far_unreg(&back);
	far_unreg(&rb);
	cr_assert_eq(blue_dereg_mr(dst.mr), 0);
	munmap(dst.buf, 65536);
	munmap(dst.buf + 131072, MiB - 131072);
	rc_fx_fini(&fx);
}
