# shellcheck shell=bash
# Every RC operation end to end on real netdevs: two namespaces joined by a veth pair,
# `bluectl attach` on both ends, blue_xfer's server in A and its client in B, connected
# through the connection manager and moving data over RoCEv2 through XDP and AF_XDP.
#  - every op (SEND, SEND_IMM, WRITE, WRITE_IMM, READ, CAS, FAA) at 1 B, 4 KiB, 1 MiB
#    and 16 MiB (atomics: 8 B), every payload checked with CRC-32 on the other side;
#    the XDP redirect counters must account for the bytes;
#  - 256 QPs on one device at once, each moving verified data, each seen by XDP;
#  - the server killed (-9) mid-transfer: the client's QPs reach ERROR with
#    RETRY_EXC_ERR, every other WR is flushed, within a bound; the pinned QP table
#    shows them in ERROR with the retries spent;
#  - the checks themselves can fail (a corrupted WR per round must fail every round),
#    and --expect-peer-death fails when the peer lives.
# Run: B=build bash tests/lib/runner.sh tests/netns/test_rc_ops.sh
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh

BLUECTL=$PWD/$B/bin/bluectl
XFER=$PWD/$B/bin/blue_xfer
IP_A=10.201.95.1	# server
IP_B=10.201.95.2	# client

# ops_setup: namespaces and interfaces named with the PID (netns_setup), blue attached
# natively on both ends. Sets NS_A NS_B IF_A IF_B SRV_OUT CLI_OUT.
ops_setup() {
	netns_setup ops "$IP_A" "$IP_B"
	need_bins "$BLUECTL" "$XFER"
	blue_attach "$NS_A" "$IF_A"
	blue_attach "$NS_B" "$IF_B"
	SRV_OUT=$(mktemp)
	CLI_OUT=$(mktemp)
	on_exit "rm -f $SRV_OUT $CLI_OUT"
}


show_logs() {
	echo "--- server:"
	cat "$SRV_OUT"
	echo "--- client:"
	cat "$CLI_OUT"
}

# table_ok OP SIZE: the client's summary row for OP at SIZE says OK.
table_ok() {
	grep -Eq "^$1 +$2 +[0-9]+ +[0-9]+ .* OK$" "$CLI_OUT" || fail "no OK row for $1 at $2 B"
}

test_rc_ops_every_op_every_size() {
	ops_setup
	local op size bytes_a bytes_b sent read
	xfer_ab -- --op all --size 1,4K,1M,16M --verify --progress
	[ "$CRC" -eq 0 ] || fail "client exited $CRC"
	[ "$SRC" -eq 0 ] || fail "server exited $SRC"
	# 5 ops x 4 sizes + 2 atomics, and a latency round for each size up to 4 KiB
	grep -q '^RESULT: PASS (34 of 34 rounds passed)$' "$CLI_OUT" || fail "client: not 34 of 34"
	[ "$(grep -c '^server: round .*: verified$' "$SRV_OUT")" -eq 34 ] ||
		fail "the server did not verify all 34 rounds"
	grep -q '^server: PASS' "$SRV_OUT" || fail "server: no PASS"
	for op in send send_imm write write_imm read; do
		for size in 1 4096 1048576 16777216; do
			table_ok "$op" "$size"
		done
	done
	table_ok cas 8
	table_ok faa 8
	# The data really went through XDP: at 1 MiB and 16 MiB alone (64 + 8 WRs each,
	# see blue_xfer's default iterations) SEND, SEND_IMM, WRITE and WRITE_IMM carry
	# 4 x 192 MiB to the server and READ 192 MiB back to the client.
	bytes_a=$(ctl_stat "$NS_A" "$IF_A" redirect 3)
	bytes_b=$(ctl_stat "$NS_B" "$IF_B" redirect 3)
	sent=$((4 * 192 * 1048576))
	read=$((192 * 1048576))
	echo "XDP redirect bytes: server end $bytes_a (>= $sent), client end $bytes_b (>= $read)"
	[ "$bytes_a" -ge "$sent" ] || fail "server-end XDP redirected only $bytes_a bytes"
	[ "$bytes_b" -ge "$read" ] || fail "client-end XDP redirected only $bytes_b bytes"
}

test_rc_ops_256_qps() {
	ops_setup
	local spid crc=0 src=0 rows low
	# the server holds its QPs after the run, so the pinned table can be read; no
	# `timeout` around it (it would not pass SIGUSR1 on): -T and --hold bound it
	ns_bg "$NS_A" spid "$XFER" -d "$IF_A" -T 20 --hold 20 >"$SRV_OUT" 2>&1
	ns_exec "$NS_B" timeout 100 "$XFER" -d "$IF_B" -T 20 --qps 256 --op all --size 4K \
		--iters 64 --depth 4 --lat-iters 0 --verify "$IP_A" >"$CLI_OUT" 2>&1 || crc=$?
	wait_for_line "$SRV_OUT" '^HOLDING: 256 QPs' 10 || { show_logs; fail "server not holding"; }
	ns_exec "$NS_A" "$BLUECTL" qp list "$IF_A" >"$SRV_OUT.qps"
	on_exit "rm -f $SRV_OUT.qps"
	kill -USR1 "$spid"
	wait "$spid" || src=$?
	show_logs
	[ "$crc" -eq 0 ] || fail "client exited $crc"
	[ "$src" -eq 0 ] || fail "server exited $src"
	grep -q '^RESULT: PASS (7 of 7 rounds passed)$' "$CLI_OUT" || fail "client: not 7 of 7"
	grep -Eq '^read +4096 +64 +256 .* OK$' "$CLI_OUT" || fail "no 256-QP READ row"
	[ "$(grep -c '^server: round .* x 256 QPs: verified$' "$SRV_OUT")" -eq 7 ] ||
		fail "the server did not verify 7 rounds on 256 QPs"
	# XDP steered every QP's own packets to it: per QP at least 4 x 64 x 4 data packets
	# of the SEND and WRITE kinds, 64 READ requests and 2 x 64 atomics
	rows=$(awk '$2 == "RTS" && $3 == "RC"' "$SRV_OUT.qps" | wc -l)
	low=$(awk '$2 == "RTS" && $3 == "RC" && $8 < 1216' "$SRV_OUT.qps" | wc -l)
	echo "bluectl qp list (server): $rows QPs in RTS, $low with fewer than 1216 XDP packets"
	head -5 "$SRV_OUT.qps"
	[ "$rows" -eq 256 ] || fail "$rows QPs in RTS in the pinned table, want 256"
	[ "$low" -eq 0 ] || fail "$low QPs got fewer packets through XDP than their data needs"
}

test_rc_ops_peer_killed_mid_transfer() {
	ops_setup
	local spid cpid crc=0 t0 t1 qpn show
	# no `timeout` around either: the PID killed must be the server itself, and the
	# client must get SIGUSR1; -T and --hold bound both
	ns_bg "$NS_A" spid "$XFER" -d "$IF_A" -T 20 >"$SRV_OUT" 2>&1
	ns_bg "$NS_B" cpid "$XFER" -d "$IF_B" -T 10 --qps 4 --op write --size 64K \
		--iters 10000000 --verify --progress --expect-peer-death --hold 20 "$IP_A" \
		>"$CLI_OUT" 2>&1
	wait_for_line "$CLI_OUT" '^\[progress\] write' 15 || { show_logs; fail "no transfer"; }
	[ "$(cat /proc/"$spid"/comm)" = blue_xfer ] || fail "PID $spid is not the server"
	t0=$(date +%s%N)
	kill -9 "$spid"
	wait "$spid" 2>/dev/null || true
	wait_for_line "$CLI_OUT" '^HOLDING' 15 || { show_logs; fail "client did not finish"; }
	t1=$(date +%s%N)
	echo "the client accounted for every WR $(((t1 - t0) / 1000000)) ms after the kill"
	# the pinned QP table, read while the client holds its QPs: all in ERROR, the
	# retries spent (retry_cnt 7: 7 retransmits, then RETRY_EXC)
	ns_exec "$NS_B" "$BLUECTL" qp list "$IF_B" | tee "$CLI_OUT.qps"
	on_exit "rm -f $CLI_OUT.qps"
	qpn=$(awk '$2 == "ERR" { print $1; exit }' "$CLI_OUT.qps")
	show=$(ns_exec "$NS_B" "$BLUECTL" qp show "$IF_B" "$qpn")
	echo "$show" | grep -E '^(state|retry_left|retransmits|outstanding):'
	kill -USR1 "$cpid"
	wait "$cpid" || crc=$?
	show_logs
	[ "$crc" -eq 0 ] || fail "client exited $crc"
	grep -q '^PEER-DEATH OK: 4 of 4 QPs in ERROR with RETRY_EXC_ERR' "$CLI_OUT" ||
		fail "no PEER-DEATH OK for 4 QPs"
	[ "$(grep -c 'state ERROR, 1 RETRY_EXC_ERR, [0-9]* WRs flushed' "$CLI_OUT")" -eq 4 ] ||
		fail "not every QP reported ERROR with RETRY_EXC_ERR and flushes"
	[ $(((t1 - t0) / 1000000)) -lt 10000 ] || fail "it took longer than 10 s"
	[ "$(awk '$2 == "ERR"' "$CLI_OUT.qps" | wc -l)" -eq 4 ] ||
		fail "the pinned table does not show 4 QPs in ERROR"
	echo "$show" | grep -q '^retry_left: *0$' || fail "retry_left is not 0"
	echo "$show" | grep -q '^retransmits: *[7-9]' || fail "fewer than 7 retransmits counted"
}

test_rc_ops_checks_can_fail() {
	# one WR per round corrupted after its checksum (or expected value) was taken:
	# every round must fail, each on the side that owns the check
	ops_setup
	xfer_ab -- --op all --size 4K --iters 50 --lat-iters 0 --verify --inject-mismatch
	[ "$CRC" -eq 1 ] || fail "client exited $CRC, want 1"
	[ "$SRC" -eq 1 ] || fail "server exited $SRC, want 1"
	grep -q '^RESULT: FAIL (0 of 7 rounds passed)$' "$CLI_OUT" || fail "not 0 of 7"
	[ "$(grep -Ec '^[a-z_]+ +[0-9]+ +50 +1 .* FAIL$' "$CLI_OUT")" -eq 7 ] ||
		fail "not every row says FAIL"
	grep -q 'CRC-32 chain of the received messages' "$SRV_OUT" || fail "SEND not caught"
	[ "$(grep -c 'slot 0: CRC-32 0x[0-9a-f]*, the client wrote' "$SRV_OUT")" -eq 2 ] ||
		fail "WRITE and WRITE_IMM not both caught by the server"
	grep -q 'READ 0 of slot 0: CRC-32' "$CLI_OUT" || fail "READ not caught"
	grep -q 'cas target is' "$SRV_OUT" || fail "CAS final value not caught by the server"
	grep -q 'faa target is' "$SRV_OUT" || fail "FAA final value not caught by the server"
	grep -q 'QP 0 faa 1 returned' "$CLI_OUT" || fail "FAA originals not caught"
}

test_rc_ops_peer_that_lives_is_a_failure() {
	ops_setup
	xfer_ab -- --op write --size 4K --iters 100 --lat-iters 0 --expect-peer-death
	[ "$CRC" -eq 1 ] || fail "client exited $CRC, want 1"
	grep -q 'never died' "$CLI_OUT" || fail "no message saying the peer never died"
}

# cc_line FILE: the congestion control blue_xfer says its first QP runs
cc_line() {
	sed -n 's/^  congestion control: //p' "$1" | head -1
}

test_rc_ops_cc_choice() {
	# the CM's choice from both offers (runtime/cc_neg.c), over real netdevs, data checked
	ops_setup
	local run want_s want_c
	for run in "dcqcn dcqcn - dcqcn dcqcn" "window window - window window" \
		   "dcqcn none - none none" "window none - window none" \
		   "dcqcn env:none - none none"; do
		read -r s c _ want_s want_c <<<"$run"
		CLI_ENV=
		local cargs=(--cc "$c")
		if [ "${c#env:}" != "$c" ]; then
			CLI_ENV="BLUE_CC=${c#env:}"
			cargs=()
		fi
		xfer_ab --cc "$s" -- "${cargs[@]}" --op write --size 64K --iters 20 --lat-iters 0 \
			--verify
		[ "$CRC" -eq 0 ] || fail "$run: client exited $CRC"
		[ "$SRC" -eq 0 ] || fail "$run: server exited $SRC"
		[ "$(cc_line "$SRV_OUT")" = "$want_s" ] ||
			fail "$run: the server runs '$(cc_line "$SRV_OUT")', want $want_s"
		[ "$(cc_line "$CLI_OUT")" = "$want_c" ] ||
			fail "$run: the client runs '$(cc_line "$CLI_OUT")', want $want_c"
	done
	CLI_ENV=
}

test_rc_ops_args() {
	[ -x "$XFER" ] || fail "$XFER not built"
	local rc
	rc=0; "$XFER" --help >/dev/null || rc=$?
	[ "$rc" -eq 0 ] || fail "--help exited $rc"
	rc=0; "$XFER" -d lo --op bogus 10.0.0.1 2>/dev/null || rc=$?
	[ "$rc" -eq 2 ] || fail "a bad --op exited $rc, want 2"
	rc=0; "$XFER" -d lo --size 0 10.0.0.1 2>/dev/null || rc=$?
	[ "$rc" -eq 2 ] || fail "--size 0 exited $rc, want 2"
	rc=0; "$XFER" -d lo --expect-peer-death 2>/dev/null || rc=$?
	[ "$rc" -eq 2 ] || fail "--expect-peer-death on a server exited $rc, want 2"
	rc=0; "$XFER" 10.0.0.1 2>/dev/null || rc=$?
	[ "$rc" -eq 2 ] || fail "no -d exited $rc, want 2"
	rc=0; "$XFER" -d lo --cc reno 10.0.0.1 2>/dev/null || rc=$?
	[ "$rc" -eq 2 ] || fail "--cc reno exited $rc, want 2"
}
