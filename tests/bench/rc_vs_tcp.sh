#!/usr/bin/env bash
# RDMA over blue against TCP, on one veth link between two fresh namespaces, in one run:
#  - latency: blue_rc_pingpong (64 B SEND/RECV ping-pong, usec per round trip) and a
#    64 B RDMA WRITE (post to completion, p50) against a TCP ping-pong of 64 B
#    (sockperf, p50 round trip);
#  - throughput: 1 MiB RDMA WRITEs (blue_xfer, 1 QP, 16 outstanding) against iperf3
#    (1 TCP stream).
# BENCH_SECS (default 3) bounds each TCP case. Prints a table and the ratios.
# Usage: B=build bash tests/bench/rc_vs_tcp.sh (make bench runs it)
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
SECS=${BENCH_SECS:-3}
BLUECTL=$PWD/$B/bin/bluectl
PP=$PWD/$B/bin/blue_rc_pingpong
XFER=$PWD/$B/bin/blue_xfer
IP_A=10.201.93.1
IP_B=10.201.93.2

# shellcheck source=tests/bench/lib.sh
source tests/bench/lib.sh

need_bins "$BLUECTL" "$PP" "$XFER"
for t in sockperf iperf3; do command -v $t >/dev/null || die "$t missing: make deps"; done

NS_A=blue-rb-$$-a NS_B=blue-rb-$$-b
IF_A=rb0p$$ IF_B=rb1p$$
netns_pair "$NS_A" "$NS_B" "$IF_A" "$IF_B" "$IP_A" "$IP_B"
blue_attach "$NS_A" "$IF_A" >/dev/null || die "attach $IF_A"
blue_attach "$NS_B" "$IF_B" >/dev/null || die "attach $IF_B"
out=$(mktemp -d)
on_exit "rm -rf $out"


# --- latency ---------------------------------------------------------------------
ns_bg "$NS_A" spid timeout 60 "$PP" -d "$IF_A" -g 1 -s 64 -n 20000 >"$out/pp_srv" 2>&1
ns_exec "$NS_B" timeout 60 "$PP" -d "$IF_B" -g 1 -s 64 -n 20000 "$IP_A" >"$out/pp_cli" 2>&1 ||
	{ cat "$out/pp_cli"; die "blue_rc_pingpong failed"; }
wait "$spid" 2>/dev/null
blue_lat=$(sed -nE 's/.*iters in .* seconds = ([0-9.]+) usec\/iter/\1/p' "$out/pp_cli")

sockperf_p50() {	# extra args for the client
	local pid
	ns_bg "$NS_A" pid timeout $((SECS + 10)) sockperf sr --tcp -i "$IP_A" -p 11111 >/dev/null 2>&1
	sleep 0.5
	ns_exec "$NS_B" timeout $((SECS + 10)) sockperf pp --tcp -i "$IP_A" -p 11111 -m 64 \
		-t "$SECS" "$@" >"$out/sp" 2>&1
	kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
	# sockperf reports half round trips; x2 gives the round trip
	awk '/percentile 50.000 =/ { printf "%.2f", $NF * 2 }' "$out/sp"
}
tcp_lat=$(sockperf_p50)

# --- throughput -------------------------------------------------------------------
ns_bg "$NS_A" spid timeout 60 "$XFER" -d "$IF_A" -T 30 >"$out/x_srv" 2>&1
ns_exec "$NS_B" timeout 60 "$XFER" -d "$IF_B" -T 30 --op write --size 64,1M --iters 512 \
	--lat-iters 5000 --lat-max 64 "$IP_A" >"$out/x_cli" 2>&1 || { cat "$out/x_cli"; die "blue_xfer failed"; }
wait "$spid" 2>/dev/null
blue_gbps=$(awk '$1 == "write" && $2 == 1048576 && /Gbit/ {
	for (i = 1; i <= NF; i++) if ($i == "Gbit/s,") print $(i - 1) }' "$out/x_cli")
blue_wlat=$(sed -nE 's/^write +64 B +latency.* p50 ([0-9.]+),.*/\1/p' "$out/x_cli")

ns_bg "$NS_A" ipid timeout $((SECS + 15)) iperf3 -s -1 -B "$IP_A" >/dev/null 2>&1
sleep 0.5
ns_exec "$NS_B" timeout $((SECS + 15)) iperf3 -c "$IP_A" -t "$SECS" -J >"$out/ip" 2>/dev/null ||
	die "iperf3 failed"
tcp_gbps=$(/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%.2f" % (d["end"]["sum_received"]["bits_per_second"]/1e9))' "$out/ip")

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }'; }
echo "bench: veth between two namespaces, blue attached natively on both ends (AF_XDP copy mode)"
printf '\n%-44s %12s %10s\n' "latency, 64 B round trip" "usec" "vs TCP"
printf '%-44s %12s %10s\n' "blue_rc_pingpong (SEND/RECV, busy poll)" "$blue_lat" "$(ratio "$tcp_lat" "$blue_lat")"
printf '%-44s %12s %10s\n' "blue_xfer 64 B RDMA WRITE, p50" "$blue_wlat" "$(ratio "$tcp_lat" "$blue_wlat")"
printf '%-44s %12s %10s\n' "TCP ping-pong, sockperf p50" "$tcp_lat" "1.00x"
printf '\n%-44s %12s %10s\n' "throughput" "Gbit/s" "vs TCP"
printf '%-44s %12s %10s\n' "blue_xfer 1 MiB RDMA WRITE, 1 QP" "$blue_gbps" "$(ratio "$blue_gbps" "$tcp_gbps")"
printf '%-44s %12s %10s\n' "iperf3, 1 TCP stream" "$tcp_gbps" "1.00x"
echo "(latency ratio: TCP time / blue time, above 1 means blue is faster)"
