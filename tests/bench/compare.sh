#!/usr/bin/env bash
# make bench: libblue's figures next to TCP's and raw AF_XDP's, in one run on one veth
# pair between two fresh namespaces (blue attached natively on both ends throughout),
# and one table of ratios against the issue's targets (issue 6):
#
#   TCP       iperf3, 1 and 2 streams; tcp_pingpong 8 B, blocking and busy-poll
#   AF_XDP    hal_rate flood (64 B, 1 KiB, 4 KiB frames) and ping-pong through the HAL
#   libblue   blue_write_bw 1 MiB (path MTU 1024; and 4096 on a 4200-byte link),
#             blue_read_bw 1 MiB, blue_write_bw 64 B -t 128 -l 16 (message rate),
#             blue_write_lat 8 B (p50, busy-poll); scaling: the 64 B message rate over
#             64 QPs of one context; the 64 B message rate and the 1 MiB WRITE of one
#             process pair against two pairs at once, one per netdev queue (BLUE_QUEUE 0
#             and 1: a socket, UMEM and engine each), summed. These run in event mode
#             (-e, both sides): four busy-polling processes on two cores would measure
#             the scheduler, not the queues
#   cost      instructions per 4 KiB WRITE (valgrind --tool=callgrind at two iteration
#             counts, difference / difference of iterations), each side; CPU cores each
#             side used (utime + stime over wall time, /proc/PID/stat)
#
# Output: the tables on stdout and in $B/bench/results.md and results.json; every
# program's own output under $B/bench/logs/. Nothing here passes or fails on a time: the
# script fails only if a program fails (the 4 KiB-frame and path-MTU-4096 rows print
# "n/a: <reason>" instead when the link or the data path cannot carry them yet).
# Every timed case runs BENCH_REPS times (default 3), round-robin with the others so that
# each sees the machine at several moments; the median run counts, with its min-max
# (report.py), every run is
# kept in results.json. BENCH_SECS (default 3) is the length of each timed case,
# BENCH_PP_ITERS (default 20000) the round trips of each ping-pong. About 3 minutes.
# Usage: B=build bash tests/bench/compare.sh (make bench runs it)
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
SECS=${BENCH_SECS:-3}
PP_ITERS=${BENCH_PP_ITERS:-20000}
CG_N1=${BENCH_CG_N1:-2000}
CG_N2=${BENCH_CG_N2:-10000}
CG_RUNS=${BENCH_CG_RUNS:-3}
REPS=${BENCH_REPS:-3}	# every timed case this many times, round-robin; the best counts
BIN=$PWD/$B/bin
BLUECTL=$BIN/bluectl
RATE=$PWD/$B/tests/bench/hal_rate
TPP=$PWD/$B/tests/bench/tcp_pingpong
PY=/usr/bin/python3
IP_A=10.201.94.1	# servers, ponger
IP_B=10.201.94.2	# clients, pinger
QPN_A=0x71
QPN_B=0x72

# shellcheck source=tests/bench/lib.sh
source tests/bench/lib.sh

need_bins "$BLUECTL" "$RATE" "$TPP" "$BIN"/blue_{write_bw,read_bw,write_lat}
command -v iperf3 >/dev/null || die "iperf3 is missing: make deps"
have_vg=1
command -v valgrind >/dev/null || have_vg=0

OUT=$PWD/$B/bench
LOG=$OUT/logs
rm -rf "$LOG"
mkdir -p "$LOG"
FIG=$LOG/figures	# "key value" lines, read by report.py
: >"$FIG"
fig() { echo "$1 $2" >>"$FIG"; }
na() { local k=$1; shift; echo "$k n/a: $*" >>"$FIG"; echo "bench: $k: n/a: $*"; }
failed=0
R=1	# the repetition running now (log names carry it)
# known_na NAME: an earlier repetition found NAME cannot run here: don't try again
known_na() { grep -q "^$1 n/a" "$FIG"; }
prog_failed() { echo "bench: FAILED: $*" >&2; failed=1; }

NS_A=blue-bc-$$-a NS_B=blue-bc-$$-b
IF_A=bc0p$$ IF_B=bc1p$$
# two queues a side, for the scaling cases; a single flow uses one of them either way
VETH_QUEUES=2 netns_pair "$NS_A" "$NS_B" "$IF_A" "$IF_B" "$IP_A" "$IP_B"
blue_attach "$NS_A" "$IF_A" >/dev/null || die "attach $IF_A"
blue_attach "$NS_B" "$IF_B" >/dev/null || die "attach $IF_B"
MAC_A=$(mac_of "$NS_A" "$IF_A")
MAC_B=$(mac_of "$NS_B" "$IF_B")

set_mtu() {
	ip -n "$NS_A" link set "$IF_A" mtu "$1" && ip -n "$NS_B" link set "$IF_B" mtu "$1"
}

# --- TCP -----------------------------------------------------------------------------
# iperf3 NAME STREAMS: Gbit/s received, and both sides' CPU (iperf3's own utime+stime
# over wall time, in percent of one core).
iperf() {
	local name=$1 streams=$2 spid
	ns_bg "$NS_A" spid timeout $((SECS + 20)) iperf3 -s -1 -B "$IP_A" >/dev/null 2>&1
	sleep 0.3
	if ! ns_exec "$NS_B" timeout $((SECS + 15)) iperf3 -c "$IP_A" -t "$SECS" -P "$streams" \
		-J >"$LOG/$name.r$R.json" 2>"$LOG/$name.r$R.err"; then
		wait "$spid" 2>/dev/null
		prog_failed "iperf3 -P $streams"
		return
	fi
	wait "$spid" 2>/dev/null
	$PY - "$LOG/$name.r$R.json" "$name" >>"$FIG" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1])); n = sys.argv[2]; e = d["end"]
print(n, "%.3f" % (e["sum_received"]["bits_per_second"] / 1e9))
print(n + ".cpu_client", "%.2f" % (e["cpu_utilization_percent"]["host_total"] / 100))
print(n + ".cpu_server", "%.2f" % (e["cpu_utilization_percent"]["remote_total"] / 100))
EOF
}

# tcp_pp NAME [--busy]: 8 B ping-pong, RTT p50 in usec
tcp_pp() {
	local name=$1 spid; shift
	ns_bg "$NS_A" spid timeout 60 "$TPP" server --bind "$IP_A" --port 18600 "$@" \
		>"$LOG/$name.r$R.srv" 2>&1
	if ! ns_exec "$NS_B" timeout 60 "$TPP" client --host "$IP_A" --port 18600 --size 8 \
		--iters "$PP_ITERS" "$@" >"$LOG/$name.r$R.cli" 2>&1; then
		wait "$spid" 2>/dev/null
		prog_failed "tcp_pingpong $*"
		return
	fi
	wait "$spid" 2>/dev/null
	fig "$name" "$(awk '/^RESULT/ { print $5 }' "$LOG/$name.r$R.cli")"
	fig "$name.cpu_client" "$(awk '/^cpu_cores/ { print $2 }' "$LOG/$name.r$R.cli")"
	fig "$name.cpu_server" "$(awk '/^cpu_cores/ { print $2 }' "$LOG/$name.r$R.srv")"
}

# --- raw AF_XDP ------------------------------------------------------------------------
# flood SIZE [optional]: frames/s received (over the sender's time) and the frame length.
# Not pinned to CPUs: neither are the other cases, and on a shared machine a pinned
# process waits for its one core while the scheduler could have used the other.
# With "optional", a failure is an n/a row, not a failed program.
flood() {
	local size=$1 opt=${2:-} name=raw_flood_$1 spid
	known_na "$name" && return
	ns_bg "$NS_A" spid timeout $((SECS + 15)) "$RATE" xsk-recv "$IF_A" \
		--qpn "$QPN_A" --duration "$SECS" >"$LOG/$name.r$R.recv" 2>&1
	if ! wait_for_line "$LOG/$name.r$R.recv" '^READY' 5 "$spid"; then
		kill "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null
		if [ -n "$opt" ]; then
			na "$name" "hal_rate xsk-recv did not get ready:" \
				"$(tail -1 "$LOG/$name.r$R.recv")"
		else
			prog_failed "hal_rate xsk-recv $size did not get ready"
		fi
		return
	fi
	if ! ns_exec "$NS_B" timeout $((SECS + 10)) "$RATE" xsk-send "$IF_B" \
		--qpn "$QPN_A" --size "$size" --src-mac "$MAC_B" --dst-mac "$MAC_A" \
		--src-ip "$IP_B" --dst-ip "$IP_A" --duration "$SECS" >"$LOG/$name.r$R.send" 2>&1 ||
		! wait "$spid" || ! grep -q '^RESULT' "$LOG/$name.r$R.recv"; then
		kill "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null
		if [ -n "$opt" ]; then
			na "$name" "$(cat "$LOG/$name.r$R.send" "$LOG/$name.r$R.recv" |
				grep -v '^READY\|^hal_rate: .* mode' | tail -1)"
		else
			prog_failed "hal_rate flood $size"
		fi
		return
	fi
	local frames secs len
	frames=$(awk '/^RESULT/ { print $3 }' "$LOG/$name.r$R.recv")
	secs=$(awk '/^SENT/ { print $5 }' "$LOG/$name.r$R.send")
	len=$(sed -nE 's/.*sending ([0-9]+)-byte frames.*/\1/p' "$LOG/$name.r$R.send")
	if [ "${frames:-0}" -eq 0 ] && [ -n "$opt" ]; then
		local drops sent
		drops=$(awk '/^DROPS socket/ { print $3 }' "$LOG/$name.r$R.recv")
		sent=$(awk '/^SENT/ { print $3 }' "$LOG/$name.r$R.send")
		if [ "${drops:-0}" -gt 0 ]; then
			na "$name" "the AF_XDP socket dropped $drops of $sent $len-byte frames (a frame" \
				"longer than one UMEM frame needs multi-buffer AF_XDP, XDP_USE_SG)"
		else
			na "$name" "none of $sent $len-byte frames arrived (the link or XDP dropped them)"
		fi
		return
	fi
	fig "$name" "$(awk -v n="$frames" -v t="$secs" 'BEGIN { printf "%.0f", (t > 0 ? n / t : 0) }')"
	fig "$name.frame" "$len"
	fig "$name.cpu_client" "$(awk '/^cpu_cores/ { print $2 }' "$LOG/$name.r$R.send")"
	fig "$name.cpu_server" "$(awk '/^cpu_cores/ { print $2 }' "$LOG/$name.r$R.recv")"
}

# raw_pp SIZE [optional]: HAL ping-pong, RTT p50 in usec
raw_pp() {
	local size=$1 opt=${2:-} name=raw_pp_$1 spid
	known_na "$name" && return
	ns_bg "$NS_A" spid timeout 60 "$RATE" xsk-pong "$IF_A" --qpn "$QPN_A" --peer-qpn "$QPN_B" \
		--size "$size" --src-mac "$MAC_A" --dst-mac "$MAC_B" --src-ip "$IP_A" \
		--dst-ip "$IP_B" --duration 40 >"$LOG/$name.r$R.srv" 2>&1
	if ! wait_for_line "$LOG/$name.r$R.srv" '^READY' 5 "$spid"; then
		kill "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null
		if [ -n "$opt" ]; then
			na "$name" "hal_rate xsk-pong did not get ready:" \
				"$(tail -1 "$LOG/$name.r$R.srv")"
		else
			prog_failed "hal_rate xsk-pong $size did not get ready"
		fi
		return
	fi
	if ! ns_exec "$NS_B" timeout 60 "$RATE" xsk-ping "$IF_B" --qpn "$QPN_B" --peer-qpn "$QPN_A" \
		--size "$size" --src-mac "$MAC_B" --dst-mac "$MAC_A" --src-ip "$IP_B" \
		--dst-ip "$IP_A" --iters "$PP_ITERS" >"$LOG/$name.r$R.cli" 2>&1 || ! wait "$spid"; then
		kill "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null
		if [ -n "$opt" ]; then
			na "$name" "$(grep -v '^READY' "$LOG/$name.r$R.cli" | tail -1)" \
				"(the flood row above says what became of the frames)"
		else
			prog_failed "hal_rate ping-pong $size"
		fi
		return
	fi
	fig "$name" "$(awk '/^RESULT/ { print $5 }' "$LOG/$name.r$R.cli")"
	fig "$name.cpu_client" "$(awk '/^cpu_cores/ { print $2 }' "$LOG/$name.r$R.cli")"
	fig "$name.cpu_server" "$(awk '/^cpu_cores/ { print $2 }' "$LOG/$name.r$R.srv")"
}

# --- libblue ---------------------------------------------------------------------------
# blue NAME TEST [optional] -- ARGS...: server in A, client in B, --out_json; the figures
# from the JSON: bw (bytes/s), msg rate, t_typical, and both sides' CPU.
blue() {
	local name=$1 t=$2 opt="" spid rc=0
	shift 2
	[ "$1" = optional ] && { opt=1; shift; }
	[ "$1" = -- ] && shift
	known_na "$name" && return
	ns_bg "$NS_A" spid timeout 120 "$BIN/blue_$t" -d "$IF_A" --timeout 20 \
		>"$LOG/$name.r$R.srv" 2>&1
	ns_exec "$NS_B" timeout 120 "$BIN/blue_$t" -d "$IF_B" --timeout 20 "$@" --out_json \
		--out_json_file "$LOG/$name.r$R.json" "$IP_A" >"$LOG/$name.r$R.cli" 2>&1 || rc=$?
	wait "$spid" 2>/dev/null || [ "$rc" -ne 0 ] || rc=1
	if [ "$rc" -ne 0 ]; then
		if [ -n "$opt" ]; then
			na "$name" "$(grep -v 'FAILED$' "$LOG/$name.r$R.cli" | tail -1)"
		else
			prog_failed "blue_$t $*: $(grep -v 'FAILED$' "$LOG/$name.r$R.cli" | tail -1)"
		fi
		return
	fi
	$PY - "$LOG/$name.r$R.json" "$name" >>"$FIG" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1])); n = sys.argv[2]; r = d["results"][-1]
if "BW_average" in r:
    print(n, "%.0f" % r["bytes_per_sec"])
    print(n + ".msg_rate", "%.0f" % (r["MsgRate"] * 1e6))
else:
    print(n, "%.3f" % r["t_typical"])
print(n + ".cpu_client", "%.2f" % r["cpu_cores_client"])
print(n + ".cpu_server", "%.2f" % r["cpu_cores_server"])
EOF
}

# blue_queues NAME TEST NPAIRS -- ARGS...: NPAIRS (1 or 2) server/client pairs at
# once in event mode (-e), pair q on netdev queue q (BLUE_QUEUE) with its own TCP port;
# the figures are their sums (bytes/s, msg rate, cores).
blue_queues() {
	local name=$1 t=$2 n=$3 q rc=0 s0 s1 c0 c1 v
	shift 4
	known_na "$name" && return
	for ((q = 0; q < n; q++)); do
		ns_bg "$NS_A" "s$q" env BLUE_QUEUE=$q timeout 120 "$BIN/blue_$t" -d "$IF_A" \
			-p $((18530 + q)) --timeout 20 -e >"$LOG/$name.q$q.r$R.srv" 2>&1
	done
	for ((q = 0; q < n; q++)); do
		ns_bg "$NS_B" "c$q" env BLUE_QUEUE=$q timeout 120 "$BIN/blue_$t" -d "$IF_B" \
			-p $((18530 + q)) --timeout 20 -e "$@" --out_json \
			--out_json_file "$LOG/$name.q$q.r$R.json" "$IP_A" >"$LOG/$name.q$q.r$R.cli" 2>&1
	done
	for ((q = 0; q < n; q++)); do
		v=c$q; wait "${!v}" 2>/dev/null || rc=1
		v=s$q; wait "${!v}" 2>/dev/null || rc=1
	done
	if [ "$rc" -ne 0 ]; then
		prog_failed "blue_$t on $n queues $*: $(cat "$LOG/$name".q?.r$R.cli | grep -v 'FAILED$' | tail -1)"
		return
	fi
	$PY - "$name" "$LOG/$name".q?.r$R.json >>"$FIG" <<'EOF'
import json, sys
n = sys.argv[1]; rs = [json.load(open(f))["results"][-1] for f in sys.argv[2:]]
print(n, "%.0f" % sum(r["bytes_per_sec"] for r in rs))
print(n + ".msg_rate", "%.0f" % sum(r["MsgRate"] * 1e6 for r in rs))
print(n + ".cpu_client", "%.2f" % sum(r["cpu_cores_client"] for r in rs))
print(n + ".cpu_server", "%.2f" % sum(r["cpu_cores_server"] for r in rs))
EOF
}

# callgrind_ir SIDE N: total instructions of one side's blue_write_bw run of N 4 KiB
# WRITEs with that side under callgrind (the other native). The counted side runs with
# -e: it sleeps on its completion channel when a poll finds nothing, rather than spin,
# so the count is the work and not the empty polls while the other side was off the CPU
# (busy-polling, the same runs gave totals 2x apart on this shared machine).
callgrind_ir() {
	local side=$1 n=$2 spid rc=0 f=$LOG/cg.$1.$2 cg
	cg=(valgrind --tool=callgrind --callgrind-out-file="$f")
	local s_pre=() c_pre=() s_ev=() c_ev=()
	if [ "$side" = server ]; then
		s_pre=("${cg[@]}") s_ev=(-e)
	else
		c_pre=("${cg[@]}") c_ev=(-e)
	fi
	ns_bg "$NS_A" spid timeout 120 "${s_pre[@]}" "$BIN/blue_write_bw" -d "$IF_A" --timeout 30 \
		"${s_ev[@]}" >"$LOG/cg.$side.$n.srv" 2>&1
	ns_exec "$NS_B" timeout 120 "${c_pre[@]}" "$BIN/blue_write_bw" -d "$IF_B" --timeout 30 \
		"${c_ev[@]}" -s 4096 -n "$n" -t 16 -m 1024 "$IP_A" >"$LOG/cg.$side.$n.cli" 2>&1 ||
		rc=$?
	wait "$spid" 2>/dev/null || rc=1
	[ "$rc" -eq 0 ] || return 1
	awk '/^(summary|totals):/ { print $2; exit }' "$f"
}

fig load.start "$(cut -d' ' -f1 /proc/loadavg)"
fig ncpu "$(nproc)"
echo "bench: one veth pair ($IF_A <-> $IF_B), blue attached natively on both ends," \
     "AF_XDP copy mode; $SECS s per timed case"

for ((R = 1; R <= REPS; R++)); do
	echo "bench: round $R of $REPS: TCP (link MTU 1500)"
	iperf tcp_1 1
	iperf tcp_2 2
	tcp_pp tcp_pp_block
	tcp_pp tcp_pp_busy --busy
	echo "bench: round $R of $REPS: raw AF_XDP through the HAL (link MTU 1500)"
	flood 64
	flood 1024
	raw_pp 64
	raw_pp 1024
	echo "bench: round $R of $REPS: libblue (link MTU 1500)"
	blue write_1m_1024 write_bw -- -s 1M -m 1024 -t 16 -D "$SECS"
	blue read_1m_1024 read_bw -- -s 1M -m 1024 -t 16 -D "$SECS"
	blue write_64 write_bw -- -s 64 -m 1024 -t 128 -l 16 -D "$SECS"
	blue write_64_64qp write_bw -- -s 64 -m 1024 -t 128 -l 16 -q 64 -D "$SECS"
	blue write_lat_8 write_lat -- -s 8 -n "$PP_ITERS"
	echo "bench: round $R of $REPS: libblue in event mode, one queue, then two at once"
	blue_queues write_64_ev write_bw 1 -- -s 64 -m 1024 -t 128 -l 16 -D "$SECS"
	blue_queues write_64_ev_q2 write_bw 2 -- -s 64 -m 1024 -t 128 -l 16 -D "$SECS"
	blue_queues write_1m_1024_ev write_bw 1 -- -s 1M -m 1024 -t 16 -D "$SECS"
	blue_queues write_1m_1024_ev_q2 write_bw 2 -- -s 1M -m 1024 -t 16 -D "$SECS"
done

# min_ir SIDE N: the least total of CG_RUNS runs (what noise is left, a retransmission
# or a wakeup more, only adds), so the difference of two least totals is the cost per
# WRITE with the setup cancelled.
min_ir() {
	local best="" v i
	for ((i = 0; i < CG_RUNS; i++)); do
		v=$(callgrind_ir "$1" "$2") && [ -n "$v" ] || return 1
		echo "$1 $2 $v" >>"$LOG/cg.totals"
		if [ -z "$best" ] || [ "$v" -lt "$best" ]; then best=$v; fi
	done
	echo "$best"
}

R=cg
echo "bench: instructions per 4 KiB WRITE (callgrind, least of $CG_RUNS runs of $CG_N1 and" \
     "of $CG_N2 WRITEs)"
if [ "$have_vg" = 1 ]; then
	for side in client server; do
		a=$(min_ir "$side" "$CG_N1") && b=$(min_ir "$side" "$CG_N2") ||
			{ prog_failed "callgrind ($side)"; continue; }
		fig "ir_write_4k.$side" "$(( (b - a) / (CG_N2 - CG_N1) ))"
	done
else
	na ir_write_4k.client "valgrind is not installed (make deps)"
	na ir_write_4k.server "valgrind is not installed (make deps)"
fi

echo "bench: link MTU 4200 (4 KiB frames, path MTU 4096)"
if set_mtu 4200 2>"$LOG/mtu.err"; then
	for ((R = 1; R <= REPS; R++)); do
		echo "bench: round $R of $REPS: link MTU 4200"
		iperf tcp_1_mtu4200 1
		flood 4096 optional
		raw_pp 4096 optional
		blue write_1m_4096 write_bw optional -- -s 1M -m 4096 -t 16 -D "$SECS"
	done
	set_mtu 1500 || die "cannot set the link MTU back to 1500"
else
	reason="the veth refused MTU 4200: $(tail -1 "$LOG/mtu.err")"
	na raw_flood_4096 "$reason"
	na raw_pp_4096 "$reason"
	na write_1m_4096 "$reason"
fi

fig load.end "$(cut -d' ' -f1 /proc/loadavg)"
$PY tests/bench/report.py "$FIG" "$OUT" || failed=1
[ "$failed" -eq 0 ] || echo "bench: some programs failed (see above and $LOG)" >&2
exit $failed
