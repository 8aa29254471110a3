// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * Test-only: an XDP program that passes everything. The loader tests attach it first to
 * play "another XDP program is already on this netdev".
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int test_pass(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
