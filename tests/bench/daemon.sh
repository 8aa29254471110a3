#!/usr/bin/env bash
# make bench BENCH=daemon: daemon mode (blue-manager, issue 17) beside library mode in one
# run on one veth pair between two fresh namespaces, blue attached to both ends:
#
#   latency    8 B RDMA WRITE, post to completion, p50 (blue_xfer): library mode; daemon
#              mode with the default daemon (sleeps when idle, an empty poll yields);
#              daemon mode with --busy daemons: on these 2 cores with both ends local
#              that is four spinners (two daemons, two busy-polling programs)
#   throughput 1 MiB RDMA WRITE, Gbit/s of payload (blue_xfer), library and daemon
#   aggregate  64 B RDMA WRITEs, Mop/s: four processes on one queue at once (the sum)
#              against one process alone, both in daemon mode
#   perftest   unmodified ib_write_lat -s 8 (t_typical) and ib_write_bw -s 65536 through
#              compat, library and daemon mode, against blue_xfer's own figures
#   events     ibv_rc_pingpong -e -s 8 (event mode: completion channels), us/iteration,
#              library and daemon
#   classes    a real-time tenant's 8 B WRITE latency (p50, p99) alone and while a
#              normal-class tenant (uid 1000) floods the same queue with 64 KiB WRITEs
#   TCP        tcp_pingpong 8 B p50 on the same veth, for the ratios
#
# Each case runs BENCH_REPS times (default 3), round-robin within its mode; the median
# counts, with its min-max. Figures only: the script fails only when a program fails.
# About 3 minutes. Usage: B=build bash tests/bench/daemon.sh
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
REPS=${BENCH_REPS:-3}
LIB=$PWD/$B/compat
XFER=$PWD/$B/bin/blue_xfer
MGR=$PWD/$B/bin/blue-manager
TPP=$PWD/$B/tests/bench/tcp_pingpong
IP_A=10.201.96.1	# servers
IP_B=10.201.96.2	# clients

# shellcheck source=tests/bench/lib.sh
source tests/bench/lib.sh
# shellcheck source=tests/lib/compat.sh
source tests/lib/compat.sh

need_bins "$LIB/libibverbs.so.1" "$XFER" "$MGR" "$TPP" "$PWD/$B/bin/bluectl"
for t in ib_write_lat ib_write_bw ibv_rc_pingpong; do
	command -v "$t" >/dev/null || die "$t missing: make deps (perftest, ibverbs-utils)"
done
command -v setpriv >/dev/null || die "setpriv missing (util-linux)"
compat_env "$LIB"

NS_A=blue-bd-$$-a NS_B=blue-bd-$$-b
IF_A=bd0p$$ IF_B=bd1p$$
netns_pair "$NS_A" "$NS_B" "$IF_A" "$IF_B" "$IP_A" "$IP_B"
BLUECTL=$PWD/$B/bin/bluectl
blue_attach "$NS_A" "$IF_A" >/dev/null || die "attach $IF_A"
blue_attach "$NS_B" "$IF_B" >/dev/null || die "attach $IF_B"
OUT=$PWD/$B/bench/daemon
rm -rf "$OUT"
mkdir -p "$OUT"
FIG=$OUT/figures	# "key value" per repetition
# uid 1000's copy of blue_xfer (libblue is static in it), wherever the clone is readable
UBIN=$(mktemp -d)
on_exit "rm -rf $UBIN"
chmod 755 "$UBIN"
cp "$XFER" "$UBIN/"
UXFER=$UBIN/blue_xfer
: >"$FIG"
failed=0
MODE=library

# daemons_start [ARGS]: a blue-manager on each end; daemons_stop ends them by PID
daemons_start() {
	ns_bg "$NS_A" DPID_A timeout 900 "$MGR" -d "$IF_A" "$@" >"$OUT/mgr-a.log" 2>&1
	ns_bg "$NS_B" DPID_B timeout 900 "$MGR" -d "$IF_B" "$@" >"$OUT/mgr-b.log" 2>&1
	wait_for_line "$OUT/mgr-a.log" "^blue-manager: serving" 10 "$DPID_A" || die "blue-manager on $IF_A"
	wait_for_line "$OUT/mgr-b.log" "^blue-manager: serving" 10 "$DPID_B" || die "blue-manager on $IF_B"
	MODE=daemon
}
daemons_stop() {
	kill "$DPID_A" "$DPID_B" 2>/dev/null
	wait "$DPID_A" "$DPID_B" 2>/dev/null
	MODE=library
}

# xfer TAG PORT CLIENT_ARGS...: one blue_xfer pair in $MODE; the client's report in
# $OUT/TAG.cli. Return: the client's status.
xfer() {
	local tag=$1 port=$2 spid rc=0
	shift 2
	ns_bg "$NS_A" spid timeout 120 env BLUE_MODE=$MODE "$XFER" -d "$IF_A" -p "$port" -T 60 \
		>"$OUT/$tag.srv" 2>&1
	sleep 0.3
	ns_exec "$NS_B" timeout 120 env BLUE_MODE=$MODE "$XFER" -d "$IF_B" -p "$port" -T 60 "$@" \
		"$IP_A" >"$OUT/$tag.cli" 2>&1 || rc=$?
	wait "$spid" 2>/dev/null || { [ "$rc" -ne 0 ] || rc=1; }
	[ "$rc" -eq 0 ] || { echo "bench: FAILED: $tag (exit $rc):"; tail -3 "$OUT/$tag.cli"; failed=1; }
	return "$rc"
}

lat_p50() { sed -nE 's/^write +8 B +latency.* p50 ([0-9.]+).*/\1/p' "$1" | head -1; }
lat_p99() { sed -nE 's/^write +8 B +latency.* p99 ([0-9.]+).*/\1/p' "$1" | head -1; }
row_col() {	# LOG SIZE COL: a column of blue_xfer's table row for a write of SIZE
	awk -v s="$2" -v c="$3" '$1 == "write" && $2 == s && $NF == "OK" { print $c; exit }' "$1"
}

xfer_lat() {	# KEY [XFER ARGS]
	local key=$1
	shift
	xfer "$key" 18760 --op write --size 8 -n 8 --lat-iters "${LAT_ITERS:-2000}" "$@" &&
		echo "$key $(lat_p50 "$OUT/$key.cli")" >>"$FIG"
}
# flood_start: a normal-class tenant's pair (uid 1000) writing 64 KiB until flood_stop
flood_start() {
	ns_bg "$NS_A" FSPID timeout 120 setpriv --reuid=1000 --regid=1000 --clear-groups \
		env BLUE_MODE=daemon "$UXFER" -d "$IF_A" -p 18790 -T 60 >"$OUT/flood.srv" 2>&1
	sleep 0.3
	ns_bg "$NS_B" FCPID timeout 120 setpriv --reuid=1000 --regid=1000 --clear-groups \
		env BLUE_MODE=daemon "$UXFER" -d "$IF_B" -p 18790 -T 60 --op write --size 64K \
		-n 1000000 --lat-iters 0 "$IP_A" >"$OUT/flood.cli" 2>&1
	wait_for_line "$OUT/flood.cli" "connected (RTS)" 10 "$FCPID" || { failed=1; return; }
	sleep 0.5
}
flood_stop() {
	kill "$FCPID" "$FSPID" 2>/dev/null
	wait "$FCPID" "$FSPID" 2>/dev/null
}

# rt_lat KEY: the real-time tenant's (root's) 8 B latency, p50 and p99
rt_lat() {
	xfer "$1" 18762 --op write --size 8 -n 8 --lat-iters 2000 && {
		echo "$1.p50 $(lat_p50 "$OUT/$1.cli")" >>"$FIG"
		echo "$1.p99 $(lat_p99 "$OUT/$1.cli")" >>"$FIG"
	}
}

xfer_bw() {	# KEY
	xfer "$1" 18761 --op write --size 1M -n 128 --lat-iters 0 &&
		echo "$1 $(row_col "$OUT/$1.cli" 1048576 5)" >>"$FIG"
}

# aggregate KEY N: N pairs at once, 64 B WRITEs; the sum of their Mop/s
aggregate() {
	local key=$1 n=$2 i pids=() sum
	for ((i = 0; i < n; i++)); do
		xfer "$key.$i" $((18770 + i)) --op write --size 64 -n 50000 --depth 32 --lat-iters 0 &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || failed=1; done
	sum=$(for ((i = 0; i < n; i++)); do row_col "$OUT/$key.$i.cli" 64 6; done |
		awk '{ s += $1; n++ } END { if (n) printf "%.4f", s }')
	echo "$key $sum" >>"$FIG"
}

# perftest TAG TOOL lat|bw ARGS...: a perftest pair in $MODE over compat
perftest() {
	local tag=$1 tool=$2 kind=$3 spid rc=0
	shift 3
	ns_bg "$NS_A" spid timeout 60 "${COMPAT_ENV[@]}" BLUE_MODE=$MODE "$tool" -d "$IF_A" -x 1 \
		-p 18780 "$@" >"$OUT/$tag.srv" 2>&1
	sleep 1
	ns_exec "$NS_B" timeout 60 "${COMPAT_ENV[@]}" BLUE_MODE=$MODE "$tool" -d "$IF_B" -x 1 \
		-p 18780 "$@" "$IP_A" >"$OUT/$tag.cli" 2>&1 || rc=$?
	wait "$spid" 2>/dev/null
	[ "$rc" -eq 0 ] || { echo "bench: FAILED: $tag (exit $rc)"; tail -3 "$OUT/$tag.cli"; failed=1; return; }
	awk -v k="$kind" -v t="$tag" '/^ *#bytes/ { h = 1; next }
		h && NF >= 4 && $1 ~ /^[0-9]+$/ {
			if (k == "lat") print t, $5; else print t, $4; exit }' "$OUT/$tag.cli" >>"$FIG"
}

pingpong_ev() {	# KEY
	local key=$1 spid rc=0
	ns_bg "$NS_A" spid timeout 60 "${COMPAT_ENV[@]}" BLUE_MODE=$MODE ibv_rc_pingpong -d "$IF_A" \
		-g 1 -p 18781 -s 8 -n 2000 -e >"$OUT/$key.srv" 2>&1
	sleep 0.5
	ns_exec "$NS_B" timeout 60 "${COMPAT_ENV[@]}" BLUE_MODE=$MODE ibv_rc_pingpong -d "$IF_B" \
		-g 1 -p 18781 -s 8 -n 2000 -e "$IP_A" >"$OUT/$key.cli" 2>&1 || rc=$?
	wait "$spid" 2>/dev/null
	[ "$rc" -eq 0 ] || { echo "bench: FAILED: $key (exit $rc)"; tail -3 "$OUT/$key.cli"; failed=1; return; }
	echo "$key $(sed -nE 's/.* = ([0-9.]+) usec\/iter/\1/p' "$OUT/$key.cli" | head -1)" >>"$FIG"
}

tcp_lat() {
	local spid
	ns_bg "$NS_A" spid timeout 60 "$TPP" server --bind "$IP_A" --port 18782 >"$OUT/tcp.srv" 2>&1
	ns_exec "$NS_B" timeout 60 "$TPP" client --host "$IP_A" --port 18782 --size 8 \
		--iters 20000 >"$OUT/tcp.cli" 2>&1 || { failed=1; return; }
	wait "$spid" 2>/dev/null
	echo "tcp_lat8 $(awk '/^RESULT/ { print $5 }' "$OUT/tcp.cli")" >>"$FIG"
}

for ((r = 1; r <= REPS; r++)); do
	echo "bench: daemon: library-mode round $r of $REPS"
	tcp_lat
	xfer_lat lib_lat8
	xfer_bw lib_bw1m
	perftest lib_pt_lat ib_write_lat lat -s 8 -n 5000
	perftest lib_pt_bw ib_write_bw bw -s 65536 -n 2000 --report_gbits
	pingpong_ev lib_ev
done
daemons_start
for ((r = 1; r <= REPS; r++)); do
	echo "bench: daemon: daemon-mode round $r of $REPS"
	xfer_lat dmn_lat8
	xfer_bw dmn_bw1m
	aggregate dmn_one64 1
	aggregate dmn_four64 4
	perftest dmn_pt_lat ib_write_lat lat -s 8 -n 5000
	perftest dmn_pt_bw ib_write_bw bw -s 65536 -n 2000 --report_gbits
	pingpong_ev dmn_ev
done
daemons_stop
printf 'tenant rt class=realtime\ntenant bulk class=normal\nmap uid=1000 bulk\ndefault rt\n' \
	>"$OUT/tenants.conf"
daemons_start --tenants "$OUT/tenants.conf"
for ((r = 1; r <= REPS; r++)); do
	echo "bench: daemon: priority classes, round $r of $REPS"
	rt_lat rt_alone
	flood_start
	rt_lat rt_flood
	flood_stop
done
daemons_stop
daemons_start --busy
for ((r = 1; r <= REPS; r++)); do
	echo "bench: daemon: --busy daemons, round $r of $REPS"
	LAT_ITERS=200 xfer_lat busy_lat8
done
daemons_stop
row() {	# LABEL LIB DAEMON TARGET
	echo "| $1 | $(cell "$2") | $(cell "$3") | $(ratio "$(med "$3")" "$(med "$2")") | $4 |"
}

{
	echo "| measure | library mode | daemon mode | daemon / library | target |"
	echo "|---|---|---|---|---|"
	row "8 B WRITE latency p50, us (blue_xfer)" lib_lat8 dmn_lat8 "<= library + 1 us"
	row "8 B WRITE latency p50, us, --busy daemons (4 spinners on 2 cores)" lib_lat8 busy_lat8 "-"
	row "1 MiB WRITE, Gbit/s (blue_xfer)" lib_bw1m dmn_bw1m ">= 0.9"
	row "ib_write_lat -s 8, t_typical us (compat)" lib_pt_lat dmn_pt_lat "-"
	row "ib_write_bw -s 65536, Gbit/s (compat)" lib_pt_bw dmn_pt_bw "-"
	row "ibv_rc_pingpong -e -s 8, us/iteration (event mode)" lib_ev dmn_ev "-"
	echo
	echo "| measure | figure | ratio | target |"
	echo "|---|---|---|---|"
	echo "| 64 B WRITE Mop/s, one process (daemon mode) | $(cell dmn_one64) | | |"
	echo "| 64 B WRITE Mop/s, four processes on one queue, summed | $(cell dmn_four64) | $(ratio "$(med dmn_four64)" "$(med dmn_one64)") of one | >= 0.9 |"
	echo "| ib_write_lat / blue_xfer 8 B latency, daemon mode | | $(ratio "$(med dmn_pt_lat)" "$(med dmn_lat8)") | <= 1.3 |"
	echo "| ib_write_lat / blue_xfer 8 B latency, library mode | | $(ratio "$(med lib_pt_lat)" "$(med lib_lat8)") | <= 1.3 |"
	echo "| real-time tenant 8 B WRITE p50, us: alone / under a normal-class 64 KiB flood | $(cell rt_alone.p50) / $(cell rt_flood.p50) | $(ratio "$(med rt_flood.p50)" "$(med rt_alone.p50)") | |"
	echo "| real-time tenant 8 B WRITE p99, us: alone / under the flood | $(cell rt_alone.p99) / $(cell rt_flood.p99) | $(ratio "$(med rt_flood.p99)" "$(med rt_alone.p99)") | <= 1.2 |"
	echo "| TCP 8 B ping-pong p50, us (tcp_pingpong) | $(cell tcp_lat8) | daemon 8 B WRITE / TCP: $(ratio "$(med dmn_lat8)" "$(med tcp_lat8)") | |"
	echo
	echo "median of $REPS runs (min-max); both ends and both daemons share this machine's"
	echo "cores; every run in $FIG, every program's output in $OUT. Raw AF_XDP on the same"
	echo "kind of veth: make bench (compare)."
} | tee "$OUT/results.md"
exit "$failed"
