#!/usr/bin/env bash
# make bench BENCH=rdmacm: what connecting through rdma_cm (blue's librdmacm.so.1, the IB
# CM on QP1) costs against the same verbs with the QPs exchanged by hand, and both against
# TCP, in one run on one veth pair between two fresh namespaces, blue attached to both
# ends, every program an unmodified Debian binary over $B/compat:
#
#   latency   RC SEND 1 B: qperf -cm1 rc_lat and ib_send_lat -R (rdma_cm) against
#             ib_send_lat (perftest's TCP exchange of QP numbers: raw verbs; qperf itself
#             cannot address a RoCE peer without rdma_cm, it sets no GID) and qperf
#             tcp_lat (the kernel's TCP on the same veth)
#   bandwidth RC SEND 64 KiB: qperf -cm1 rc_bw and ib_send_bw -R against ib_send_bw and
#             qperf tcp_bw
#   rping     -C 1000 -S 64 (each ping a SEND, an RDMA READ, a SEND, an RDMA WRITE and a
#             SEND) against ibv_rc_pingpong -n 1000 -s 64 (one SEND each way per
#             iteration, its QPs exchanged over TCP); rping's time includes its connect
#             and teardown
#   cmtime    -c 64: rdma_cm's 64 connects at once, and the disconnects, in all
#
# Each case runs BENCH_REPS times (default 3), round-robin; the median counts, with its
# min-max. Figures only: the script fails only if a program fails. About 2 minutes.
# Usage: B=build bash tests/bench/rdmacm.sh
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
REPS=${BENCH_REPS:-3}
LIB=$PWD/$B/compat
IP_A=10.201.95.1	# servers
IP_B=10.201.95.2	# clients

# shellcheck source=tests/bench/lib.sh
source tests/bench/lib.sh
# shellcheck source=tests/lib/compat.sh
source tests/lib/compat.sh

need_bins "$LIB/libibverbs.so.1" "$LIB/librdmacm.so.1" "$PWD/$B/bin/bluectl"
for t in qperf rping ibv_rc_pingpong cmtime; do
	command -v "$t" >/dev/null || die "$t missing: make deps (qperf, rdmacm-utils, ibverbs-utils)"
done
compat_env "$LIB"

NS_A=blue-bm-$$-a NS_B=blue-bm-$$-b
IF_A=bm0p$$ IF_B=bm1p$$
netns_pair "$NS_A" "$NS_B" "$IF_A" "$IF_B" "$IP_A" "$IP_B"
BLUECTL=$PWD/$B/bin/bluectl
blue_attach "$NS_A" "$IF_A" >/dev/null || die "attach $IF_A"
blue_attach "$NS_B" "$IF_B" >/dev/null || die "attach $IF_B"
OUT=$PWD/$B/bench/rdmacm
rm -rf "$OUT"
mkdir -p "$OUT"
FIG=$OUT/figures	# "key value" per repetition
: >"$FIG"
failed=0

# server_client TAG SECS SERVER... -- CLIENT...: the server in A in the background, the
# client in B after 1 s, both bounded; the client's output in $OUT/TAG.cli, the server's
# in $OUT/TAG.srv; the server is ended by PID when it outlives its client by 3 s
server_client() {
	local tag=$1 secs=$2 spid s=() rc=0 i; shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do s+=("$1"); shift; done
	shift
	ns_bg "$NS_A" spid timeout "$secs" "${COMPAT_ENV[@]}" "${s[@]}" >"$OUT/$tag.srv" 2>&1
	sleep 1
	ns_exec "$NS_B" timeout "$secs" "${COMPAT_ENV[@]}" "$@" >"$OUT/$tag.cli" 2>&1 || rc=$?
	for ((i = 0; i < 30 && rc == 0; i++)); do
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	[ "$rc" -eq 0 ] || { echo "bench: FAILED: $tag (exit $rc):"; tail -5 "$OUT/$tag.cli"; failed=1; }
	return "$rc"
}

# qperf's figure VALUE UNIT as microseconds or MB/s (10^6 bytes)
qperf_fig() {	# LOG LINE_REGEX
	awk -v re="$2" '$0 ~ re {
		v = $3; u = $4
		if (u == "ns") v /= 1000; else if (u == "ms") v *= 1000
		else if (u == "GB/sec") v *= 1000; else if (u == "KB/sec") v /= 1000
		print v; exit }' "$1"
}

run_qperf() {	# TAG QPERF_ARGS...
	local tag=$1; shift
	ns_bg "$NS_A" qpid timeout 60 "${COMPAT_ENV[@]}" qperf >"$OUT/$tag.srv" 2>&1
	sleep 1
	if ns_exec "$NS_B" timeout 50 "${COMPAT_ENV[@]}" qperf "$@" >"$OUT/$tag.cli" 2>&1; then
		echo "${tag}_lat $(qperf_fig "$OUT/$tag.cli" "latency *=")" >>"$FIG"
		echo "${tag}_bw $(qperf_fig "$OUT/$tag.cli" "bw *=")" >>"$FIG"
	else
		echo "bench: FAILED: qperf $* :"; tail -5 "$OUT/$tag.cli"; failed=1
	fi
	kill "$qpid" 2>/dev/null
	wait "$qpid" 2>/dev/null
}

# perftest's result row of LOG: t_avg (latency, us) or BW average (MB/s of 10^6 bytes;
# perftest's MB are 2^20)
perftest_fig() {	# LOG lat|bw
	awk -v k="$2" '/^ *#bytes/ { h = 1; next }
		h && NF >= 4 && $1 ~ /^[0-9]+$/ {
			if (k == "lat") print $6; else printf "%.1f\n", $4 * 1.048576; exit }' "$1"
}

# perftest -R's own race (tests/lib/rdmacm.sh rdmacm_pair_runs: its client's second
# connection before its server listens again, REJ 8) runs the pair again, 3 times at most
run_perftest() {	# KEY lat|bw TOOL ARGS...
	local key=$1 kind=$2 tool=$3 try f0=$failed; shift 3
	for ((try = 1; try <= 3; try++)); do
		if server_client "$key" 60 "$tool" -F "$@" -- "$tool" -F "$@" "$IP_A"; then
			echo "$key $(perftest_fig "$OUT/$key.cli" "$kind")" >>"$FIG"
			return
		fi
		grep -q 'RDMA_CM_EVENT_REJECTED; error: 8\.' "$OUT/$key.cli" || return
		[ "$try" -lt 3 ] || return	# the third REJ stays a failure
		echo "bench: $key: that was perftest's REJ 8 race: the pair again"
		failed=$f0
	done
}

one_round() {
	local t0 t1
	run_qperf qperf_cm -t 3 -cm1 "$IP_A" rc_lat rc_bw
	run_qperf qperf_tcp -t 3 "$IP_A" tcp_lat tcp_bw
	run_perftest pt_lat_cm lat ib_send_lat -R -s 1 -n 10000
	run_perftest pt_lat_raw lat ib_send_lat -s 1 -n 10000
	run_perftest pt_bw_cm bw ib_send_bw -R -s 65536 -n 2000
	run_perftest pt_bw_raw bw ib_send_bw -s 65536 -n 2000
	t0=$(date +%s%N)
	if server_client rping 60 rping -s -a "$IP_A" -C 1000 -S 64 -- rping -c -a "$IP_A" -C 1000 -S 64; then
		t1=$(date +%s%N)
		echo "rping_us_per_ping $(awk -v d=$((t1 - t0 - 1000000000)) 'BEGIN { printf "%.1f", d / 1000 / 1000 }')" >>"$FIG"
	fi
	if server_client pingpong 60 ibv_rc_pingpong -g 1 -n 1000 -s 64 -- \
			ibv_rc_pingpong -g 1 -n 1000 -s 64 "$IP_A"; then
		echo "pingpong_us_per_iter $(sed -nE 's/.* = ([0-9.]+) usec\/iter/\1/p' "$OUT/pingpong.cli" | head -1)" >>"$FIG"
	fi
	# cmtime's rows: "step : total ms, max ms, min us, us / conn" (all 64 at once)
	if server_client cmtime 60 cmtime -b "$IP_A" -- cmtime -s "$IP_A" -c 64; then
		echo "cmtime_connect_ms $(awk '$1 == "connect" { print $3; exit }' "$OUT/cmtime.cli")" >>"$FIG"
		echo "cmtime_disconnect_ms $(awk '$1 == "disconnect" { print $3; exit }' "$OUT/cmtime.cli")" >>"$FIG"
	fi
}

for ((r = 1; r <= REPS; r++)); do
	echo "bench: rdmacm round $r of $REPS"
	one_round
done
row() {	# LABEL CM RAW TCP: keys (or "-")
	local c r t
	c=$([ "$2" = - ] || cell "$2"); r=$([ "$3" = - ] || cell "$3"); t=$([ "$4" = - ] || cell "$4")
	echo "| $1 | ${c:--} | ${r:--} | ${t:--} | $(ratio "$(med "$2")" "$(med "$3")") | $(ratio "$(med "$2")" "$(med "$4")") |"
}

{
	echo "| measure | rdma_cm | raw verbs | TCP | rdma_cm / raw | rdma_cm / TCP |"
	echo "|---|---|---|---|---|---|"
	row "RC SEND latency 1 B, µs: qperf -cm1 rc_lat; raw: ib_send_lat; TCP: qperf tcp_lat" \
		qperf_cm_lat pt_lat_raw qperf_tcp_lat
	row "RC SEND latency 1 B, µs: ib_send_lat -R; raw: ib_send_lat" pt_lat_cm pt_lat_raw qperf_tcp_lat
	row "RC SEND 64 KiB, MB/s: qperf -cm1 rc_bw; raw: ib_send_bw; TCP: qperf tcp_bw" \
		qperf_cm_bw pt_bw_raw qperf_tcp_bw
	row "RC SEND 64 KiB, MB/s: ib_send_bw -R; raw: ib_send_bw" pt_bw_cm pt_bw_raw qperf_tcp_bw
	row "rping -C 1000 -S 64, µs per ping incl. connect; raw: ibv_rc_pingpong -n 1000 -s 64, µs per iteration" \
		rping_us_per_ping pingpong_us_per_iter -
	row "cmtime -c 64, ms for all 64 connects at once" cmtime_connect_ms - -
	row "cmtime -c 64, ms for all 64 disconnects" cmtime_disconnect_ms - -
	echo
	echo "median of $REPS runs (min-max); an rping ping is five messages (SEND, RDMA READ, SEND,"
	echo "RDMA WRITE, SEND), an ibv_rc_pingpong iteration two; every run in $FIG, every"
	echo "program's output in $OUT"
} | tee "$OUT/results.md"
exit "$failed"
