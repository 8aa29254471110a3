#!/usr/bin/env bash
# The data-path cost of observability, measured in one run: RDMA WRITE message rate
# (64-byte WRITEs, 1 QP, 16 outstanding) with diagnostics off and on, the two
# interleaved (off, on, off, on, ...) so both see the same machine; the median of each,
# and the difference. Twice:
#  1. in one process over the loopback HAL (tests/bench/diag_rate.c): one thread, so
#     the figure is the CPU cost itself, with the least scheduling noise;
#  2. between two namespaces over veth, XDP and AF_XDP (blue_xfer, `bluectl diag off|on`
#     on both ends): the real path, where two busy-polling processes share the cores.
#
# "On" makes the requester read the clock at every post and every completion and fill
# the latency histograms in dev_stats; the XDP program then also emits an event per
# drop (there are none here: a WRITE stream drops nothing). "Off" costs one predictable
# branch per post and per completion. The USDT probes are in both (nops untraced).
#
# BENCH_DIAG_ROUNDS (default 5) pairs of runs, BENCH_DIAG_ITERS (default 20000) WRITEs
# per veth run. A veth run that fails (a busy machine can starve the two busy-polling
# processes past blue_xfer's timeouts) is reported and left out of the medians. Usage: B=build bash tests/bench/diag_cost.sh (make bench runs it)
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
ROUNDS=${BENCH_DIAG_ROUNDS:-5}
ITERS=${BENCH_DIAG_ITERS:-20000}
RATE=$PWD/$B/tests/bench/diag_rate
BLUECTL=$PWD/$B/bin/bluectl
XFER=$PWD/$B/bin/blue_xfer
IP_A=10.201.83.1
IP_B=10.201.83.2

# shellcheck source=tests/bench/lib.sh
source tests/bench/lib.sh

need_bins "$BLUECTL" "$XFER" "$RATE"

echo "--- 1. in one process, loopback HAL"
"$RATE" 200000 "$ROUNDS" || die "diag_rate failed"
echo
echo "--- 2. two namespaces, veth + XDP + AF_XDP (blue_xfer)"

NS_A=blue-dc-$$-a NS_B=blue-dc-$$-b
IF_A=dc0p$$ IF_B=dc1p$$
netns_pair "$NS_A" "$NS_B" "$IF_A" "$IF_B" "$IP_A" "$IP_B"
blue_attach "$NS_A" "$IF_A" >/dev/null || die "attach $IF_A"
blue_attach "$NS_B" "$IF_B" >/dev/null || die "attach $IF_B"
out=$(mktemp -d)
on_exit "rm -rf $out"

diag() {	# on|off
	ns_exec "$NS_A" "$BLUECTL" diag "$1" "$IF_A" >/dev/null &&
		ns_exec "$NS_B" "$BLUECTL" diag "$1" "$IF_B" >/dev/null || die "diag $1"
}

# One run: prints its WRITE Mop/s, or nothing when it failed (its log goes to stderr).
run_one() {
	local spid
	nsenter --net=/run/netns/"$NS_A" timeout 120 "$XFER" -d "$IF_A" -T 60 >"$out/srv" 2>&1 &
	spid=$!
	if ! ns_exec "$NS_B" timeout 120 "$XFER" -d "$IF_B" -T 60 --op write --size 64 \
		--iters "$ITERS" --depth 16 --lat-iters 0 "$IP_A" >"$out/cli" 2>&1; then
		echo "bench: this blue_xfer run failed:" >&2
		tail -5 "$out/cli" >&2
		kill "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null
		return
	fi
	wait "$spid" 2>/dev/null
	awk '$1 == "write" && $2 == 64 && /Mop\/s/ { for (i = 1; i <= NF; i++)
		if ($i == "Mop/s") print $(i - 1) }' "$out/cli"
}

lat_count() {	# WRITE latencies recorded on the client end
	ns_exec "$NS_B" "$BLUECTL" --json stats "$IF_B" |
		/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["latency"]["write"]["count"])'
}

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

off=() on=()
for ((r = 1; r <= ROUNDS; r++)); do
	diag off
	a=$(run_one)
	before=$(lat_count)
	diag on
	b=$(run_one)
	got=$(($(lat_count) - before))
	# the "on" runs really took their timestamps: one latency per WRITE
	[ -z "$b" ] || [ "$got" -eq "$ITERS" ] || die "diag on recorded $got latencies, want $ITERS"
	[ -n "$a" ] && off+=("$a")
	[ -n "$b" ] && on+=("$b")
	echo "round $r: diag off ${a:-failed} Mop/s, diag on ${b:-failed} Mop/s ($got latencies recorded)"
done
diag off
[ ${#off[@]} -gt 0 ] && [ ${#on[@]} -gt 0 ] || die "no run completed in both modes"
m_off=$(median "${off[@]}")
m_on=$(median "${on[@]}")
echo
printf '%-42s %s\n' "64 B RDMA WRITE over veth, 1 QP, depth 16" "Mop/s (median of ${#off[@]} and ${#on[@]})"
spread() { printf '%s\n' "$@" | sort -g | sed -n '1p;$p' | paste -sd' ' | sed 's/ / to /'; }
printf '%-42s %s   (runs: %s)\n' "  diagnostics off" "$m_off" "$(spread "${off[@]}")"
printf '%-42s %s   (runs: %s)\n' "  diagnostics on" "$m_on" "$(spread "${on[@]}")"
awk -v a="$m_off" -v b="$m_on" 'BEGIN { if (a > 0) printf "%-42s %.1f%%\n", "  cost of diag on", (a - b) / a * 100 }'
echo "(over veth the two processes busy-poll on shared cores: when the runs of one mode"
echo " spread wider than the gap between the medians, the gap is noise, not cost)"
