#!/usr/bin/env bash
# Goodput of go-back-N against selective retransmission (issue 4, "Done when"): 1 MiB
# RDMA WRITEs on one QP (blue_xfer, 16 outstanding, payloads verified) through
# tools/blue_fault at 0%, 1%, 5% and 20% random loss (each way), both policies at each
# rate, in one run on one topology: A — veth — M — veth — B (tests/lib/fault.sh). The
# forwarder runs at 0% too, so every row crosses the same path.
# Per row: Gbit/s of verified data (blue_xfer's figure: first post to last completion),
# the requester's retransmission events and request packets resent (the pinned QP
# table, read while both sides hold their QPs), and the frames the forwarder dropped.
# RETX_MIB (default 32) sets the MiB per row at 0% and 1%; 5% moves a quarter of it,
# 20% an eighth (at least 2 MiB): go-back-N needs seconds per MiB there.
# RETX_TIMERS (default "iba lin") are the local ACK timers each policy runs with: "iba",
# blue_xfer's default IBA exponential timer (4.096 us * 2^timeout, 67 ms here), and "lin",
# --timeout-us RETX_LIN (default 1000,2: 1 ms + 2 us per PSN in flight, about twice the time
# the queue a 16 MiB window puts on the wire takes to drain here). The linear timer runs
# with selective retransmission only (IRN's pairing): go-back-N under it exhausts its 7
# retries at 5% loss and more (every sequence NAK and every early timeout uses one, and
# each resend puts the whole window back on the wire), and the row would only fail.
# Figures only: a row fails only if the transfer or its checks fail.
# Usage: B=build bash tests/bench/retx_goodput.sh (make bench runs it)
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
export B=${B:-build}
BLUECTL=$PWD/$B/bin/bluectl
XFER=$PWD/$B/bin/blue_xfer
PY=/usr/bin/python3
MIB=${RETX_MIB:-32}
TIMERS=${RETX_TIMERS:-iba lin}
LIN=${RETX_LIN:-1000,2}
IP_A=10.201.88.1	# server
IP_B=10.201.88.2	# client

# shellcheck source=tests/bench/lib.sh
source tests/bench/lib.sh
# shellcheck source=tests/lib/fault.sh
source tests/lib/fault.sh

need_bins "$BLUECTL" "$XFER" "$FAULT_BIN"
have_sr=1
"$XFER" --help | grep -q -- '--retx' || have_sr=0

fault_topo "$IP_A" "$IP_B"
fault_attach
out=$(mktemp -d)
on_exit "rm -rf $out"

# row LOSS POLICY TIMER ITERS: one measured transfer; prints a table row, returns 1 on
# failure.
row() {
	local loss=$1 policy=$2 timer=$3 iters=$4 fpid spid cpid crc=0 src=0 gbps secs qp drops seed
	local retx=(--retx "$policy")
	if [ "$policy" = sr ] && [ "$have_sr" -eq 0 ]; then
		printf '%-6s %-4s  %s\n' "$loss" "$policy" "n/a: blue_xfer has no --retx option"
		return 1
	fi
	[ "$have_sr" -eq 0 ] && retx=()
	[ "$timer" = lin ] && retx+=(--timeout-us "$LIN")
	case $loss in 0) seed=7000 ;; 0.01) seed=7001 ;; 0.05) seed=7005 ;; *) seed=7020 ;; esac
	# shellcheck disable=SC2046
	fault_start fpid "$out/fault" --seed "$seed" $( [ "$loss" != 0 ] && echo --loss "$loss")
	ns_bg "$FT_NS_A" spid "$XFER" -d "$FT_IF_A" -T 30 "${retx[@]}" --hold 60 >"$out/srv" 2>&1
	ns_bg "$FT_NS_B" cpid "$XFER" -d "$FT_IF_B" -T 30 "${retx[@]}" --hold 60 --op write \
		--size 1M --iters "$iters" --depth 16 --lat-iters 0 --verify "$IP_A" >"$out/cli" 2>&1
	if ! wait_for_line "$out/cli" '^HOLDING' 300 "$cpid"; then
		kill "$cpid" "$spid" 2>/dev/null
		fault_stop "$fpid" 2>/dev/null
		printf '%-6s %-4s %-4s  %s\n' "$loss" "$policy" "$timer" "FAILED: no end within 300 s"
		return 1
	fi
	wait_for_line "$out/srv" '^HOLDING' 10 "$spid" || true
	qp=$(ns_exec "$FT_NS_B" "$BLUECTL" --json qp list "$FT_IF_B" | $PY -c '
import json, sys
q = json.load(sys.stdin)["qps"][0]
print(q["retransmits"], q["retx_pkts"], q["tx_pkts"], q["retx_policy"])')
	kill -USR1 "$cpid" "$spid" 2>/dev/null
	wait "$cpid" || crc=$?
	wait "$spid" || src=$?
	fault_stop "$fpid"
	drops=$(fault_stat "$out/fault" all.drop_random)
	if [ "$crc" -ne 0 ] || [ "$src" -ne 0 ] || ! grep -q '^RESULT: PASS' "$out/cli"; then
		printf '%-6s %-4s %-4s  %s\n' "$loss" "$policy" "$timer" "FAILED (client $crc, server $src; seed $seed):"
		grep -v '^\[progress\]' "$out/cli" | grep -E 'failed|FAIL|ERROR' | head -3
		return 1
	fi
	read -r gbps secs < <(awk '$1 == "write" && $2 == 1048576 && /Gbit/ {
		for (i = 1; i <= NF; i++) { if ($i == "Gbit/s,") g = $(i - 1); if ($i == "s") s = $(i - 1) }
		print g, s }' "$out/cli")
	read -r ev pk tx pol <<<"$qp"
	if [ "$have_sr" -eq 1 ] && [ "$pol" -ne "$([ "$policy" = sr ] && echo 1 || echo 0)" ]; then
		printf '%-6s %-4s %-4s  %s\n' "$loss" "$policy" "$timer" "FAILED: the QP used policy $pol"
		return 1
	fi
	printf '%-6s %-4s %-4s %8s %6d %8s %8d %9d %9d %7.1f%% %9d\n' "$loss" "$policy" "$timer" \
		"$gbps" "$iters" \
		"$secs" "$ev" "$pk" "$tx" "$(awk -v p="$pk" -v t="$tx" 'BEGIN { print t ? 100 * p / t : 0 }')" \
		"$drops"
}

echo "1 MiB RDMA WRITEs, 1 QP, 16 outstanding, verified; blue_fault random loss each way"
printf '%-6s %-4s %-4s %8s %6s %8s %8s %9s %9s %8s %9s\n' loss pol tmr Gbit/s MiB secs \
	retx_ev pkts_resent pkts_sent resent fwd_drops
rc=0
for loss in 0 0.01 0.05 0.2; do
	case $loss in
	0 | 0.01) n=$MIB ;;
	0.05) n=$((MIB / 4)) ;;
	0.2) n=$((MIB / 8)) ;;
	esac
	[ "$n" -ge 2 ] || n=2
	for timer in $TIMERS; do
		for policy in gbn sr; do
			[ "$timer" = lin ] && [ "$policy" = gbn ] && continue
			row "$loss" "$policy" "$timer" "$n" || rc=1
		done
	done
done
echo "(tmr: iba = IBA exponential local ACK timer, lin = --timeout-us $LIN;"
echo " retx_ev: timeouts and NAKs that started a resend; pkts_resent: request packets sent"
echo " again; pkts_sent: all packets the requester sent; fwd_drops: frames blue_fault dropped)"
exit $rc
