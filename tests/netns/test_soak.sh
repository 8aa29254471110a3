# shellcheck shell=bash
# Soak (issue 4, §3): at least 2 GiB over 64 QPs through tools/blue_fault at 1% loss with
# reordering, every byte verified. A separate file from the fault matrix so CI can run
# it on its own, without holding up the faster suites.
# Topology (tests/lib/fault.sh): A — veth — M — veth — B; blue_xfer's server in A, its
# client in B, 64 QPs moving data at once on one device each side:
#  - SEND: every message stamped per (QP, iteration), its CRC-32 chained in order on
#    both sides, so every byte of every message is compared;
#  - READ: every destination poisoned before its READ and its CRC-32 compared with the
#    source's on completion; the server checks its sources stayed unchanged;
#  - plus the run's CAS and FAA chains, so atomics are soaked too.
# Each of SEND and READ moves 64 QPs x SOAK_ITERS x 64 KiB (default 256: 1 GiB each,
# 2 GiB in all). Exactly one completion per WR, as in the fault matrix. Soaked with
# selective retransmission only (see below).
# The local ACK timeout is longer than blue_xfer's default (14: 67 ms): 64 QPs x 16 WRs
# x 64 KiB is 64 MiB in flight, which this software path (about 1 Gbit/s through the
# forwarder on 2 cores) needs most of a second to drain; with 67 ms every QP times out,
# resends, overflows the AF_XDP RX rings, and ends retry-exceeded (measured). Selective:
# timeout 16 (268 ms), 16 WRs per QP; measured here 19-36 s. Go-back-N is not soaked:
# it resends whole windows and, with no congestion control yet, collapses at this load
# (at 16 WRs per QP 7.5 million packets resent for 2 million sent; even at timeout 18
# and 2 WRs per QP, 1 run in a few overflowed the RX rings and ended retry-exceeded).
# `soak gbn TIMEOUT DEPTH` still runs it by hand; it belongs back here with congestion
# control (pacing or DCQCN).
# Run: B=build bash tests/lib/runner.sh tests/netns/test_soak.sh
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh
# shellcheck source=tests/lib/fault.sh
source tests/lib/fault.sh

BLUECTL=$PWD/$B/bin/bluectl
XFER=$PWD/$B/bin/blue_xfer
PY=/usr/bin/python3
IP_A=10.201.87.1	# blue_xfer server
IP_B=10.201.87.2	# blue_xfer client
SOAK_QPS=64
SOAK_SIZE=65536
SOAK_ITERS=${SOAK_ITERS:-256}
SOAK_BOUND=${SOAK_BOUND:-480}	# seconds for the whole transfer

# soak POLICY ACK_TIMEOUT DEPTH
soak() {
	local policy=$1 tmo=$2 depth=$3 f d fpid spid cpid crc=0 src=0 t0 secs bytes wrs gib
	[ "$(id -u)" -eq 0 ] || skip "needs root"
	need_bins "$BLUECTL" "$XFER" "$FAULT_BIN"
	"$XFER" --help | grep -q -- '--retx' ||
		fail "blue_xfer has no --retx option: the retransmission policy cannot be chosen"
	fault_topo "$IP_A" "$IP_B"
	fault_attach
	d=$(mktemp -d)
	on_exit "rm -rf $d"
	fault_start fpid "$d/fault" --seed 9001 --loss 0.01 --reorder 0.02 --reorder-window 8
	t0=$(date +%s%N)
	# both sides hold their QPs until both are done; -T bounds each wait without progress
	ns_bg "$FT_NS_A" spid "$XFER" -d "$FT_IF_A" -T 30 --retx "$policy" --hold 60 \
		--ack-timeout "$tmo" \
		>"$d/srv" 2>&1
	ns_bg "$FT_NS_B" cpid "$XFER" -d "$FT_IF_B" -T 30 --retx "$policy" --hold 60 \
		--ack-timeout "$tmo" --depth "$depth" \
		--qps "$SOAK_QPS" --op send,read,cas,faa --size "$SOAK_SIZE" --iters "$SOAK_ITERS" \
		--lat-iters 0 --verify --progress "$IP_A" >"$d/cli" 2>&1
	if ! wait_for_line "$d/cli" '^HOLDING' "$SOAK_BOUND" "$cpid"; then
		grep '^\[progress\]' "$d/cli" | tail -3
		grep -v '^\[progress\]' "$d/cli" | tail -30
		tail -10 "$d/srv"
		fault_stop "$fpid"
		fail "the soak did not end within $SOAK_BOUND s"
	fi
	secs=$((($(date +%s%N) - t0) / 1000000))
	wait_for_line "$d/srv" '^HOLDING' 10 "$spid" || true
	ns_exec "$FT_NS_B" "$BLUECTL" --json qp list "$FT_IF_B" | $PY -c '
import json, sys
q = json.load(sys.stdin)["qps"]
print("client QPs: %d in %s; %d retransmission events, %d packets resent, %d NAKs received; "
      "policy %s" % (len(q), ",".join(sorted({x["state_name"] for x in q})),
      sum(x["retransmits"] for x in q), sum(x["retx_pkts"] for x in q),
      sum(x["naks_rcvd"] for x in q), ",".join(sorted({str(x["retx_policy"]) for x in q}))))' |
		tee "$d/qps"
	kill -USR1 "$cpid" "$spid" 2>/dev/null || true
	wait "$cpid" || crc=$?
	wait "$spid" || src=$?
	fault_stop "$fpid"
	grep -E '^(send|read|cas|faa) +[0-9]+ B x' "$d/cli"
	echo "blue_fault: $(grep -E '^all\.|sock_drop' "$d/fault" | awk '$2 != 0' | paste -sd' ')"
	echo "rx lost at the sockets: server $(ctl_stat "$FT_NS_A" "$FT_IF_A" rx_dropped)," \
		"client $(ctl_stat "$FT_NS_B" "$FT_IF_B" rx_dropped)"
	bytes=$((2 * SOAK_QPS * SOAK_ITERS * SOAK_SIZE))
	gib=$(awk -v b="$bytes" 'BEGIN { printf "%.2f", b / 2^30 }')
	if [ "$crc" -ne 0 ] || [ "$src" -ne 0 ]; then
		grep -v '^\[progress\]' "$d/cli" | tail -40
		tail -20 "$d/srv"
		fail "$policy: client exited $crc, server $src after $secs ms (seed 9001, --loss 0.01 --reorder 0.02)"
	fi
	grep -q '^RESULT: PASS (4 of 4 rounds passed)$' "$d/cli" || fail "not 4 of 4 rounds"
	[ "$(grep -c "^server: round [0-9]*: .* x $SOAK_QPS QPs: verified\$" "$d/srv")" -eq 4 ] ||
		fail "the server did not verify all 4 rounds on $SOAK_QPS QPs"
	grep -Eq "^send +$SOAK_SIZE +$SOAK_ITERS +$SOAK_QPS .* OK\$" "$d/cli" || fail "no SEND row OK"
	grep -Eq "^read +$SOAK_SIZE +$SOAK_ITERS +$SOAK_QPS .* OK\$" "$d/cli" || fail "no READ row OK"
	wrs=$((4 * SOAK_QPS * SOAK_ITERS))
	grep -q "^COMPLETIONS: $wrs signaled WRs posted, $wrs completions: exactly one each\$" \
		"$d/cli" || fail "not $wrs completions for $wrs WRs"
	[ "$bytes" -ge $((2 << 30)) ] || fail "only $bytes bytes: the soak must move 2 GiB"
	grep -q "^client QPs: $SOAK_QPS in RTS;" "$d/qps" || fail "not every QP in RTS at the end"
	local want=0
	[ "$policy" = sr ] && want=1
	grep -q "policy $want\$" "$d/qps" || fail "not every QP uses $policy"
	# the faults happened, both ways, and the transport repaired them
	[ "$(fault_stat "$d/fault" a2b.drop_random)" -gt 100 ] || fail "few losses a2b"
	[ "$(fault_stat "$d/fault" b2a.drop_random)" -gt 100 ] || fail "few losses b2a"
	[ "$(fault_stat "$d/fault" all.reorder)" -gt 100 ] || fail "little reordering"
	[ "$(fault_stat "$d/fault" all.overflow)" -eq 0 ] || fail "frames lost for want of a buffer"
	grep -Eq ' [1-9][0-9]* packets resent' "$d/qps" || fail "nothing was resent"
	echo "soak ($policy): $gib GiB verified over $SOAK_QPS QPs in $((secs / 1000)).$((secs % 1000 / 100)) s"
}

test_soak_selective_2gib_64qps() { soak sr 16 16; }
