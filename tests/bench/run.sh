#!/usr/bin/env bash
# make bench: the benchmarks named in BENCH (default "compare"), one after another (they
# share the 2 cores, so never at once). Figures only: nothing here passes or fails on a
# time; a benchmark fails only when one of its programs fails.
#
#   compare       libblue against TCP and raw AF_XDP, one table of ratios against the
#                 targets, $B/bench/results.{md,json} (tests/bench/compare.sh)
#   diag_cost     the data-path cost of diagnostics, off against on
#   retx_goodput  go-back-N against selective retransmission under loss
#   frame_rate    raw frame rate: AF_XDP HAL against a UDP socket pair
#   rc_vs_tcp     the older, smaller blue-against-TCP comparison (blue_xfer, sockperf)
#   cc            congestion control through a bottleneck switch: incast 2/4/8 flows, 64
#                 QPs, a flow joining and leaving, none/DCQCN/window, the cost of pacing,
#                 $B/bench/cc/results.{md,json} and the chart $B/bench/cc.png (cc.sh)
#   rdmacm        rdma_cm against raw verbs and TCP: qperf -cm1, perftest -R, rping
#                 against ibv_rc_pingpong, cmtime; $B/bench/rdmacm/results.md (rdmacm.sh)
#   daemon        blue-manager's daemon mode beside library mode: latency, throughput, four
#                 processes on one queue, perftest through compat, event mode, --busy
#                 daemons; $B/bench/daemon/results.md (daemon.sh)
#
# Usage: make bench [BENCH="compare diag_cost retx_goodput"]   (BENCH=all: every one)
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
BENCH=${BENCH:-compare}
[ "$BENCH" = all ] && BENCH="compare diag_cost retx_goodput frame_rate rc_vs_tcp cc rdmacm daemon"
rc=0
for b in $BENCH; do
	[ -f "tests/bench/$b.sh" ] || { echo "bench: no benchmark '$b' (tests/bench/$b.sh)" >&2; rc=1; continue; }
	echo
	echo "=== bench: $b"
	bash "tests/bench/$b.sh" || rc=1
done
exit $rc
