// SPDX-License-Identifier: MIT
/*
 * Golden input: every packet of the Soft-RoCE captures (tests/vectors/rxe, see its
 * README) must be accepted and steered to the socket of its destination QP.
 *
 * Each rxe host numbers its QPs on its own (both ends of a run may have the same QPN), so
 * one QP table cannot hold both ends of a capture: each direction is a host of its own.
 * The test plays them in turn: for a packet to host h it installs host h's table (the
 * QPNs seen going to h, on socket h) and runs the packet through BPF_PROG_RUN, then
 * again with live frames arriving on socket h's netdev, and checks the frame lands in
 * socket h's RX ring unchanged.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blue/qp_ctx.h"
#include "blue/stats.h"
#include "blue/wire.h"
#include "fixture.h"
#include "tests/lib/pcap_read.h"
#include "tests/lib/vectors.h"
#include "pkt.h"

#define MAX_PKTS	1024
#define MAX_QPS_PER_DIR	8

struct frame {
	uint8_t		*data;
	uint32_t	len;
	uint32_t	dst_ip;		/* host order */
	uint32_t	dqpn;
	uint32_t	ip_off;
	uint32_t	icrc_off;	/* from the IP header */
};

struct host {
	uint32_t	ip;
	uint32_t	qpn[MAX_QPS_PER_DIR];
	int		nqpn;
};

static struct xdp_fix fix;

static void fini(void)
{
	fix_teardown(&fix);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

/*
 * Our own reading of the frame, independent of the program under test: where the IP
 * header and the ICRC are, who it is for. Returns 0, or -1 if it is not IPv4 RoCEv2.
 */
static int frame_facts(struct frame *fr)
{
	const uint8_t *p = fr->data;
	uint32_t off = 12, ihl, ulen;
	uint16_t et = p[off] << 8 | p[off + 1];

	if (fr->len < 14)
		return -1;
	if (et == ETH_P_8021Q || et == ETH_P_8021AD) {
		off += 4;
		et = p[off] << 8 | p[off + 1];
	}
	off += 2;
	if (et != ETH_P_IP || fr->len < off + 20)
		return -1;
	fr->ip_off = off;
	ihl = (p[off] & 0x0f) * 4;
	fr->dst_ip = be32(p + off + 16);
	if (fr->len < off + ihl + 8 + 12)
		return -1;
	ulen = p[off + ihl + 4] << 8 | p[off + ihl + 5];
	fr->icrc_off = ihl + ulen - BLUE_ICRC_LEN;
	fr->dqpn = be32(p + off + ihl + 8 + 4) & BLUE_QPN_MASK;
	return 0;
}


static struct host *host_of(struct host *h, int *nh, uint32_t ip)
{
	for (int i = 0; i < *nh; i++)
		if (h[i].ip == ip)
			return &h[i];
	if (*nh == FIX_NSOCK)
		return NULL;
	memset(&h[*nh], 0, sizeof(h[*nh]));
	h[*nh].ip = ip;
	return &h[(*nh)++];
}

static void host_add_qpn(struct host *h, uint32_t qpn, const char *file)
{
	for (int i = 0; i < h->nqpn; i++)
		if (h->qpn[i] == qpn)
			return;
	cr_assert_lt(h->nqpn, MAX_QPS_PER_DIR, "%s: too many QPNs to one host", file);
	for (int i = 0; i < h->nqpn; i++)
		cr_assert_neq(blue_qpn_slot(h->qpn[i]), blue_qpn_slot(qpn),
			      "%s: QPNs %#x and %#x share a slot on one host", file, h->qpn[i],
			      qpn);
	h->qpn[h->nqpn++] = qpn;
}

/* Make the map hold host @hi's QPs, on socket @hi; clear the other host's slots. */
static void become_host(struct host *hosts, int nh, int hi)
{
	for (int i = 0; i < nh; i++)
		for (int q = 0; q < hosts[i].nqpn; q++)
			cr_assert_eq(fix_qp_clear(&fix, blue_qpn_slot(hosts[i].qpn[q])), 0);
	for (int q = 0; q < hosts[hi].nqpn; q++)
		cr_assert_eq(fix_qp_set(&fix, hosts[hi].qpn[q], hi, BLUE_QPS_RTS), 0);
}

/* Runs one capture; returns the number of packets checked. */
static int run_capture(const char *path)
{
	static uint8_t store[MAX_PKTS][FIX_FRAME_SIZE];
	static struct frame fr[MAX_PKTS];
	struct host hosts[FIX_NSOCK];
	struct tpcap pc;
	int nh = 0, npkt = 0, cur = -1;
	uint64_t redirected[FIX_NSOCK] = { 0 };

	cr_assert_eq(tpcap_open(path, &pc), 0, "%s: not a readable classic pcap", path);
	cr_assert_eq(pc.linktype, 1, "%s: link type %u, want Ethernet", path, pc.linktype);
	cr_assert_leq(pc.n, MAX_PKTS, "%s: more than %d packets", path, MAX_PKTS);
	for (size_t k = 0; k < pc.n; k++, npkt++) {
		const struct tpcap_rec *rec = &pc.recs[k];
		struct frame *f = &fr[npkt];
		struct host *h;

		cr_assert_eq(rec->orig_len, rec->len, "%s #%d: captured %u of %u bytes", path,
			     npkt + 1, rec->len, rec->orig_len);
		cr_assert_leq(rec->len, sizeof(store[npkt]), "%s #%d: %u bytes", path, npkt + 1,
			      rec->len);
		memcpy(store[npkt], rec->data, rec->len);
		f->data = store[npkt];
		f->len = rec->len;
		cr_assert_eq(frame_facts(f), 0, "%s #%d: not IPv4 RoCEv2", path, npkt + 1);
		h = host_of(hosts, &nh, f->dst_ip);
		cr_assert_not_null(h, "%s: more than %d destination hosts", path, FIX_NSOCK);
		host_add_qpn(h, f->dqpn, path);
	}
	tpcap_close(&pc);
	cr_assert_gt(npkt, 0, "%s: no packets", path);

	for (int i = 0; i < npkt; i++) {
		struct blue_stat before[BLUE_STAT__MAX], after[BLUE_STAT__MAX];
		uint8_t out[FIX_FRAME_SIZE], got[FIX_FRAME_SIZE];
		uint32_t out_len = sizeof(out), got_len = 0, verdict = ~0u;
		const uint8_t *ip = fr[i].data + fr[i].ip_off;
		char what[PATH_MAX + 32];
		uint32_t icrc;
		uint64_t rx0;
		int hi = host_of(hosts, &nh, fr[i].dst_ip) - hosts, got_n;

		snprintf(what, sizeof(what), "%s #%d (QPN %#x)", path, i + 1, fr[i].dqpn);
		if (hi != cur) {
			become_host(hosts, nh, hi);
			cur = hi;
		}

		/* The builder's ICRC must agree with rxe's: it vouches for every table row. */
		memcpy(&icrc, ip + fr[i].icrc_off, 4);
		cr_expect_eq(pkt_icrc(ip, fr[i].icrc_off), le32toh(icrc),
			     "%s: pkt_icrc disagrees with the ICRC on the wire", what);

		cr_assert_eq(fix_stats(&fix, before), 0);
		rx0 = fix_qp_rx(&fix, fr[i].dqpn);
		cr_assert_eq(fix_run(&fix, fr[i].data, fr[i].len, &verdict, out, &out_len), 0,
			     "%s: BPF_PROG_RUN failed", what);
		cr_expect_eq(verdict, XDP_REDIRECT, "%s: verdict %u, want XDP_REDIRECT", what,
			     verdict);
		cr_assert_eq(fix_stats(&fix, after), 0);
		fix_expect_counted(before, after, BLUE_STAT_REDIRECT, fr[i].len, what);
		cr_expect_eq(fix_qp_rx(&fix, fr[i].dqpn), rx0 + 1, "%s: xdp_rx_pkts", what);

		cr_assert_eq(fix_run_live(&fix, hi, fr[i].data, fr[i].len), 0,
			     "%s: live BPF_PROG_RUN failed", what);
		got_n = fix_sock_take(&fix, hi, got, sizeof(got), &got_len, 500);
		cr_expect_eq(got_n, 1, "%s: socket %d received %d frames, want 1", what, hi,
			     got_n);
		cr_expect(got_n == 1 && got_len == fr[i].len &&
			  memcmp(got, fr[i].data, got_len) == 0,
			  "%s: frame in socket %d differs from the capture", what, hi);
		cr_expect_eq(fix_sock_take(&fix, 1 - hi, got, sizeof(got), &got_len, 0), 0,
			     "%s: the other host's socket received it", what);
		if (got_n == 1)
			redirected[hi]++;
	}
	cr_expect_eq(redirected[0] + redirected[1], (uint64_t)npkt,
		     "%s: %llu + %llu of %d packets reached their sockets", path,
		     (unsigned long long)redirected[0], (unsigned long long)redirected[1], npkt);
	return npkt;
}

Test(xdp, golden_rxe_captures, .fini = fini, .timeout = 60)
{
	char dir[PATH_MAX], pattern[PATH_MAX + 8];
	glob_t g;
	int total = 0;

	if (tvec_dir(dir, sizeof(dir)))
		cr_skip_test("golden vectors missing: looked in %s (set BLUE_VECTORS)", dir);
	snprintf(pattern, sizeof(pattern), "%s/*.pcap", dir);
	if (glob(pattern, 0, NULL, &g) != 0)
		cr_skip_test("golden vectors missing: no %s", pattern);

	fix_setup_or_skip(&fix);
	for (size_t i = 0; i < g.gl_pathc; i++)
		total += run_capture(g.gl_pathv[i]);
	cr_log_info("golden: %d packets from %zu captures steered", total, g.gl_pathc);
	globfree(&g);
}
