# shellcheck shell=bash
# The fault injector (tools/blue_fault) and libblue's RC transport under its faults.
# Topology (tests/lib/fault.sh): A — veth — M — veth — B, blue attached on A and B,
# blue_fault forwarding in M. Each fault test runs tests/netns/rc_smoke (SEND, WRITE,
# WRITE with immediate, READ, both atomics; every byte compared) through the forwarder,
# reads the forwarder's counters back to show the fault happened, and requires the
# transfer to complete intact. The replay tests show that a seed fixes the decisions:
# over a fixed AF_XDP traffic pattern (xsk_send -> xsk_recv, whose counts must also
# agree with the forwarder's), and offline over a captured pcap (--dry-run).
# Run: B=build bash tests/lib/runner.sh tests/netns/test_fault.sh [test_name...]
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh
# shellcheck source=tests/lib/fault.sh
source tests/lib/fault.sh

BLUECTL=$PWD/$B/bin/bluectl
SMOKE=$PWD/$B/tests/netns/rc_smoke
XSK_SEND=$PWD/$B/tests/netns/xsk_send
XSK_RECV=$PWD/$B/tests/netns/xsk_recv
ICRC_CHECK=$PWD/tests/interop/icrc_check.py
PY=/usr/bin/python3
IP_A=10.201.98.1	# rc_smoke server
IP_B=10.201.98.2	# rc_smoke client

# ft_setup [attach-a] [attach-b]: the topology, with blue attached on A and B unless
# "no" is given for a side.
ft_setup() {
	[ "$(id -u)" -eq 0 ] || skip "needs root"
	need_bins "$BLUECTL" "$SMOKE" "$FAULT_BIN" "$XSK_SEND" "$XSK_RECV"
	fault_topo "$IP_A" "$IP_B"
	if [ "${1:-yes}" != no ]; then
		blue_attach "$FT_NS_A" "$FT_IF_A" >/dev/null || fail "attach $FT_IF_A"
	fi
	if [ "${2:-yes}" != no ]; then
		blue_attach "$FT_NS_B" "$FT_IF_B" >/dev/null || fail "attach $FT_IF_B"
	fi
}

# ft_transfer: rc_smoke server in A, client in B, through the forwarder; both must
# report RESULT PASS with every check made. Prints the time it took.
# Both sides hold their QP (still answering) until both are done: the last ACK of each
# side can be lost too, and the resend needs a live peer to be answered, or the sender
# ends in retry-exceeded although its message arrived (IBA semantics, not a bug).
ft_transfer() {
	local srv cli hold rc=0 i t0 n cpid
	srv=$(mktemp) cli=$(mktemp) hold=$(mktemp -u)
	on_exit "rm -f $srv $cli $hold"
	t0=$(date +%s%N)
	ns_bg "$FT_NS_A" SPID timeout 60 "$SMOKE" server "$FT_IF_A" --timeout-ms 20000 \
		--hold-file "$hold" --hold-ms 20000 >"$srv" 2>&1
	wait_for_line "$srv" '^READY' 10 || { cat "$srv"; fail "the rc_smoke server did not get ready"; }
	ns_bg "$FT_NS_B" cpid timeout 60 "$SMOKE" client "$FT_IF_B" "$IP_A" --timeout-ms 20000 \
		--hold-file "$hold" --hold-ms 20000 >"$cli" 2>&1
	# both done (HOLD) or one gone: at most 50 s
	for ((i = 0; i < 500; i++)); do
		grep -q '^HOLD' "$srv" && grep -q '^HOLD' "$cli" && break
		grep -q '^RESULT' "$srv" "$cli" && break
		sleep 0.1
	done
	touch "$hold"
	wait "$cpid" || rc=$?
	if [ "$rc" -ne 0 ] || ! grep -q '^RESULT PASS$' "$cli"; then
		echo "--- client (exit $rc):"; grep -v '^ok ' "$cli" | tail -30
		echo "--- server:"; wait "$SPID"; grep -v '^ok ' "$srv" | tail -30
		return 1
	fi
	rc=0
	wait "$SPID" || rc=$?
	[ "$rc" -eq 0 ] && grep -q '^RESULT PASS$' "$srv" ||
		{ cat "$srv"; echo "the rc_smoke server exited $rc"; return 1; }
	# every operation at every size was checked, on both sides
	n=$(grep -cE '^ok (send [0-9]+ bytes completed|write [0-9]+ bytes completed|read [0-9]+ bytes)$' "$cli")
	[ "$n" -eq 22 ] || { echo "client: $n of 22 SEND/WRITE/READ checks"; return 1; }
	[ "$(grep -cE '^ok (fetch_add|cmp_swap)' "$cli")" -eq 4 ] || { echo "atomics"; return 1; }
	grep -q '^ok write verified by the server$' "$cli" || { echo "WRITEs not verified"; return 1; }
	grep -q "^ok server's final checks passed$" "$cli" || { echo "server's checks"; return 1; }
	[ "$(grep -cE '^ok send [0-9]+ bytes$' "$srv")" -eq 8 ] || { echo "server SENDs"; return 1; }
	echo "rc_smoke: both sides RESULT PASS in $((($(date +%s%N) - t0) / 1000000)) ms"
}

# ft_case STATS [blue_fault options...]: forwarder with those faults, one rc_smoke
# transfer through it, forwarder stopped; its counters are left in STATS (and what
# it printed in STATS.out). A failed transfer fails the test, naming seed and faults.
ft_case() {
	local stats=$1 fpid
	shift
	ft_setup
	fault_start fpid "$stats" "$@"
	if ! ft_transfer; then
		fault_stop "$fpid"
		grep -E '\.(rx|tx|drop_[a-z]+|dup|reorder|corrupt|ecn|delay|overflow|sock_drop) [1-9]' "$stats"
		fail "rc_smoke failed through blue_fault $*"
	fi
	fault_stop "$fpid"
	echo "blue_fault $*:"
	grep -E '^all\.' "$stats" | awk '$2 != 0' | paste -sd' '
	grep -E '\.sock_drop ' "$stats" | paste -sd' '
	# the forwarder saw the transfer: over 800 RoCE frames each way
	[ "$(fault_stat "$stats" a2b.roce)" -gt 800 ] || fail "few RoCE frames a2b"
	[ "$(fault_stat "$stats" b2a.roce)" -gt 800 ] || fail "few RoCE frames b2a"
	[ "$(fault_stat "$stats" all.overflow)" -eq 0 ] || fail "frames lost for want of a buffer"
}

# expect_gt STATS KEY N: the counter must be above N.
expect_gt() {
	local v
	v=$(fault_stat "$1" "$2")
	[ "$v" -gt "$3" ] || fail "$2 is $v, want more than $3"
}

# tx_balance STATS DIR...: in each direction, frames out = frames in - dropped +
# duplicated (nothing is held after a clean stop: the forwarder flushes).
tx_balance() {
	local s=$1 d want
	shift
	for d in "$@"; do
		want=$(($(fault_stat "$s" "$d.rx") - $(fault_stat "$s" "$d.drop_random") -
			$(fault_stat "$s" "$d.drop_match") + $(fault_stat "$s" "$d.dup") -
			$(fault_stat "$s" "$d.overflow")))
		[ "$(fault_stat "$s" "$d.tx")" -eq "$want" ] ||
			fail "$d: tx $(fault_stat "$s" "$d.tx"), want $want (rx - drops + dups)"
	done
}

# --- plain forwarding ---------------------------------------------------------------

test_fault_passthrough() {
	ft_setup
	local stats fpid out
	stats=$(mktemp -u)
	fault_start fpid "$stats" --seed 1
	# ICMP and TCP across M, both ways
	ns_exec "$FT_NS_A" ping -c 3 -i 0.2 -W 2 "$IP_B" >/dev/null || fail "ping A -> B"
	ns_exec "$FT_NS_B" ping -c 3 -i 0.2 -W 2 "$IP_A" >/dev/null || fail "ping B -> A"
	# 1 MiB over TCP, B -> A; A answers with the length and a checksum of what it got
	local tcp tpid
	tcp=$(mktemp)
	on_exit "rm -f $tcp"
	ns_bg "$FT_NS_A" tpid timeout 10 $PY -c '
import socket, sys
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind((sys.argv[1], 18700)); ls.listen(1); ls.settimeout(8)
c, _ = ls.accept(); c.settimeout(8); buf = bytearray()
while True:
	d = c.recv(65536)
	if not d: break
	buf += d
c.sendall(b"%d %d" % (len(buf), sum(buf)))
' "$IP_A" >"$tcp" 2>&1
	out=$(ns_exec "$FT_NS_B" timeout 10 $PY -c '
import socket, sys, time
for i in range(50):
	try:
		s = socket.create_connection((sys.argv[1], 18700), timeout=5); break
	except OSError:
		time.sleep(0.1)
data = bytes(i * 7 & 0xff for i in range(1 << 20)); s.sendall(data); s.shutdown(socket.SHUT_WR)
print(s.recv(100).decode(), sum(data))
' "$IP_A" 2>&1) || fail "TCP across M: $out $(cat "$tcp")"
	wait "$tpid" || fail "TCP server: $(cat "$tcp")"
	echo "TCP: A got (length, sum) $out"
	awk '{ exit !($1 == 1048576 && $2 == $3) }' <<<"$out" || fail "TCP: 1 MiB not intact ($out)"
	ft_transfer || fail "rc_smoke through the forwarder without faults"
	fault_stop "$fpid"
	grep -E '^(a2b|b2a)\.(rx|non_roce|roce|tx|sock_drop) ' "$stats" | paste -sd' '
	# everything was forwarded, untouched, in both directions
	local k
	for k in drop_match drop_random corrupt ecn dup reorder delay overflow; do
		[ "$(fault_stat "$stats" "all.$k")" -eq 0 ] || fail "all.$k is not 0 without faults"
	done
	tx_balance "$stats" a2b b2a
	[ "$(fault_stat "$stats" a2b.tx)" -eq "$(fault_stat "$stats" a2b.rx)" ] || fail "a2b lost frames"
	[ "$(fault_stat "$stats" a2b.sock_drop)" -eq 0 ] || fail "frames dropped at the a2b socket"
	[ "$(fault_stat "$stats" b2a.sock_drop)" -eq 0 ] || fail "frames dropped at the b2a socket"
	expect_gt "$stats" a2b.non_roce 10	# ICMP and TCP were seen, and not counted as RoCE
	expect_gt "$stats" b2a.non_roce 10
	expect_gt "$stats" a2b.roce 800
	expect_gt "$stats" b2a.roce 800
}

# Counters on demand (SIGUSR1), --duration, and a clean exit: XDP detached from M.
test_fault_controls() {
	ft_setup no no
	local s fpid i rc=0 out
	s=$(mktemp -u)
	fault_start fpid "$s" --duration 3 --seed 5
	# a second forwarder on the same netdevs is refused, and leaves the first alone
	out=$(ns_exec "$FT_NS_M" timeout 10 "$FAULT_BIN" --if-a "$FT_IF_MA" --if-b "$FT_IF_MB" 2>&1) &&
		fail "a second blue_fault started on the same netdevs"
	echo "second forwarder: $out"
	grep -q 'another program is attached' <<<"$out" || fail "no clear refusal"
	ns_exec "$FT_NS_A" ping -c 2 -i 0.2 -W 2 "$IP_B" >/dev/null || fail "ping after a refused start"
	[ ! -e "$s" ] || fail "stats file written before it was asked for"
	kill -USR1 "$fpid"
	for ((i = 0; i < 50; i++)); do
		[ -s "$s" ] && break
		sleep 0.1
	done
	[ -s "$s" ] || fail "SIGUSR1 wrote no stats file"
	[ "$(fault_stat "$s" a2b.rx)" -ge 2 ] || fail "a2b.rx $(fault_stat "$s" a2b.rx) after 2 pings"
	grep -q '^a2b.rx ' "$s.out" || fail "SIGUSR1 printed no counters"
	# --duration: it stops by itself, within a bounded time, with exit 0
	for ((i = 0; i < 60; i++)); do
		kill -0 "$fpid" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$fpid" 2>/dev/null && fail "still running after --duration 3"
	wait "$fpid" || rc=$?
	[ "$rc" -eq 0 ] || fail "exited $rc"
	# and took its XDP programs with it
	ip -n "$FT_NS_M" link show "$FT_IF_MA" | grep -q xdp && fail "XDP left on $FT_IF_MA"
	ip -n "$FT_NS_M" link show "$FT_IF_MB" | grep -q xdp && fail "XDP left on $FT_IF_MB"
	ns_exec "$FT_NS_A" ping -c 1 -W 1 "$IP_B" >/dev/null && fail "frames cross M without the forwarder"
	return 0
}

# --- each fault under a real transfer -------------------------------------------------

test_fault_loss_1pct() {
	local s
	s=$(mktemp -u)
	ft_case "$s" --seed 101 --loss 0.01
	expect_gt "$s" a2b.drop_random 0
	expect_gt "$s" b2a.drop_random 0
	tx_balance "$s" a2b b2a
}

test_fault_loss_5pct() {
	local s
	s=$(mktemp -u)
	ft_case "$s" --seed 105 --loss 0.05
	expect_gt "$s" all.drop_random 100
	tx_balance "$s" a2b b2a
}

test_fault_duplication() {
	local s
	s=$(mktemp -u)
	ft_case "$s" --seed 202 --dup 0.05
	expect_gt "$s" a2b.dup 20
	expect_gt "$s" b2a.dup 20
	tx_balance "$s" a2b b2a
}

test_fault_reorder() {
	local s
	s=$(mktemp -u)
	ft_case "$s" --seed 303 --reorder 0.03 --reorder-window 8
	expect_gt "$s" a2b.reorder 10
	expect_gt "$s" b2a.reorder 10
	tx_balance "$s" a2b b2a
}

test_fault_corrupt() {
	local s
	s=$(mktemp -u)
	ft_case "$s" --seed 404 --corrupt 0.02 --corrupt-where any
	expect_gt "$s" a2b.corrupt 5
	expect_gt "$s" b2a.corrupt 5
}

# Half of the ACKs, at most 6 (the run has only a dozen or so: ACKs coalesce, and
# READ and atomic responses acknowledge by themselves). A lost ACK is covered by a
# later coalesced one, or costs an ACK timeout (67 ms at timeout 14) and a resend that
# the responder answers as a duplicate. The cap keeps 8 losses in a row (retry_cnt 7
# + 1, retry-exceeded by design) out of reach.
test_fault_ack_loss() {
	local s n acks
	s=$(mktemp -u)
	ft_case "$s" --seed 505 --drop-opcode ack --drop-rate 0.5 --drop-first 6 --log "$s.log"
	on_exit "rm -f $s.log"
	n=$(fault_stat "$s" all.drop_match)
	acks=$(($(fault_stat "$s" a2b.op_0x11) + $(fault_stat "$s" b2a.op_0x11)))
	echo "$n of $acks ACKs dropped"
	[ "$n" -ge 1 ] && [ "$n" -le 6 ] || fail "want 1..6 ACKs dropped"
	[ "$(wc -l <"$s.log")" -eq "$n" ] || fail "log and counter disagree"
	awk '$7 != "drop_match" || $4 != "0x11" { bad = 1 } END { exit bad }' "$s.log" ||
		fail "something other than an ACK was dropped: $(head -3 "$s.log")"
}

# The first 4 ACKs: the first acknowledged message loses its ACK and the re-ACKs of
# three resends, so the requester times out 4 times (of retry_cnt 7) and then completes.
test_fault_ack_loss_repeated() {
	local s
	s=$(mktemp -u)
	ft_case "$s" --seed 506 --drop-opcode ack --drop-first 4 --log "$s.log"
	on_exit "rm -f $s.log"
	[ "$(fault_stat "$s" all.drop_match)" -eq 4 ] || fail "want exactly 4 ACKs dropped"
	cat "$s.log"
	[ "$(awk '$4 == "0x11"' "$s.log" | wc -l)" -eq 4 ] || fail "not all ACKs"
}

# READ responses travel server (A) -> client (B).
test_fault_read_response_loss() {
	local s
	s=$(mktemp -u)
	ft_case "$s" --seed 606 --drop-opcode read-resp --drop-rate 0.05 --drop-first 10 \
		--log "$s.log"
	on_exit "rm -f $s.log"
	[ "$(fault_stat "$s" a2b.drop_match)" -eq 10 ] || fail "want 10 READ responses dropped a2b"
	awk '$1 != "a2b" || !($4 ~ /^0x(0d|0e|0f|10)$/) { bad = 1 } END { exit bad }' "$s.log" ||
		fail "something other than a READ response was dropped: $(head -3 "$s.log")"
}

# The last packet of multi-packet messages (SEND/WRITE Last, READ Response Last): the
# responder sees no end of message until the resend.
test_fault_last_packet_loss() {
	local s
	s=$(mktemp -u)
	ft_case "$s" --seed 707 --drop-opcode last --drop-first 6
	[ "$(fault_stat "$s" all.drop_match)" -eq 6 ] || fail "want 6 Last packets dropped"
}

test_fault_delay() {
	local s
	s=$(mktemp -u)
	ft_case "$s" --seed 808 --delay-us 300
	# every RoCE frame was held 300 us, both ways
	[ "$(fault_stat "$s" a2b.delay)" -eq "$(fault_stat "$s" a2b.roce)" ] || fail "a2b: not all delayed"
	[ "$(fault_stat "$s" b2a.delay)" -eq "$(fault_stat "$s" b2a.roce)" ] || fail "b2a: not all delayed"
	tx_balance "$s" a2b b2a
}

test_fault_ecn() {
	local s
	s=$(mktemp -u)
	ft_case "$s" --seed 909 --ecn 0.2
	expect_gt "$s" a2b.ecn 100
	expect_gt "$s" b2a.ecn 100
	tx_balance "$s" a2b b2a
}

# --- replay: the same seed gives the same decisions ----------------------------------

# ft_pattern STATS LOG [blue_fault options]: xsk_send sends 2 x 600 SEND-Only frames
# A -> B through the forwarder; xsk_recv in B receives them. Leaves xsk_recv's
# output in STATS.recv.
ft_pattern() {
	local stats=$1 log=$2 fpid rpid rc=0
	shift 2
	fault_start fpid "$stats" --log "$log" "$@"
	on_exit "rm -f $log $stats.recv"
	ns_bg "$FT_NS_B" rpid "$XSK_RECV" "$FT_IF_B" --qpns 0x300,0x301 --count 600 --payload 512 \
		--timeout-ms 1500 >"$stats.recv" 2>&1
	wait_for_line "$stats.recv" '^READY' 10 || { cat "$stats.recv"; fail "xsk_recv not ready"; }
	ns_exec "$FT_NS_A" timeout 15 "$XSK_SEND" "$FT_IF_A" --src-mac "$FT_MAC_A" \
		--dst-mac "$FT_MAC_B" --src-ip "$IP_A" --dst-ip "$IP_B" --qpns 0x300,0x301 \
		--count 600 --payload 512 >/dev/null || fail "xsk_send"
	wait "$rpid" || rc=$?	# 1 when frames are missing: expected under faults
	[ "$rc" -le 1 ] || { cat "$stats.recv"; fail "xsk_recv exited $rc"; }
	fault_stop "$fpid"
}

# recv_sum STATS FIELD: a field of xsk_recv's per-QPN lines, summed.
recv_sum() {
	awk -v f="$2" '/^qpn / { for (i = 1; i < NF; i++) if ($i == f) s += $(i + 1) } END { print s + 0 }' \
		"$1.recv"
}

test_fault_replay_live() {
	ft_setup no yes
	local s1 s2 s3 faults
	s1=$(mktemp -u) s2=$(mktemp -u) s3=$(mktemp -u)
	faults="--loss 0.05 --dup 0.05 --reorder 0.05 --ecn 0.1 --delay-us 50 --delay-rate 0.5"
	# shellcheck disable=SC2086
	ft_pattern "$s1" "$s1.log" --seed 42 $faults
	# shellcheck disable=SC2086
	ft_pattern "$s2" "$s2.log" --seed 42 $faults
	# shellcheck disable=SC2086
	ft_pattern "$s3" "$s3.log" --seed 43 $faults
	echo "seed 42: $(wc -l <"$s1.log") faults, again: $(wc -l <"$s2.log"), seed 43: $(wc -l <"$s3.log")"
	[ "$(fault_stat "$s1" a2b.roce)" -eq 1200 ] || fail "the forwarder saw $(fault_stat "$s1" a2b.roce) of 1200 frames"
	[ -s "$s1.log" ] || fail "no faults logged"
	cmp "$s1.log" "$s2.log" || fail "the same seed gave different decisions"
	cmp -s "$s1.log" "$s3.log" && fail "another seed gave the same decisions"
	local k
	for k in drop_random dup reorder ecn delay; do
		[ "$(fault_stat "$s1" "a2b.$k")" -eq "$(fault_stat "$s2" "a2b.$k")" ] ||
			fail "a2b.$k differs between two runs with seed 42"
		expect_gt "$s1" "a2b.$k" 0
	done
	# what B received agrees with what the forwarder says it did: the lost frames are
	# missing, each duplicate arrived twice, and ECN and reordering spoiled nothing
	local got dup bad
	got=$(recv_sum "$s1" received) dup=$(recv_sum "$s1" dup)
	bad=$(($(recv_sum "$s1" bad_parse) + $(recv_sum "$s1" bad_payload) + $(recv_sum "$s1" bad_psn)))
	echo "xsk_recv: received $got dup $dup bad $bad; blue_fault: drop_random $(fault_stat "$s1" a2b.drop_random) dup $(fault_stat "$s1" a2b.dup)"
	[ "$got" -eq $((1200 - $(fault_stat "$s1" a2b.drop_random))) ] ||
		{ head -5 "$s1.recv"; fail "B received $got frames"; }
	[ "$dup" -eq "$(fault_stat "$s1" a2b.dup)" ] || fail "B saw $dup duplicates"
	[ "$bad" -eq 0 ] || fail "B got $bad damaged frames"
}

# Corrupted frames reach B and fail its ICRC check, one for one.
test_fault_corrupt_detected() {
	ft_setup no yes
	local s
	s=$(mktemp -u)
	ft_pattern "$s" "$s.log" --seed 7 --corrupt 0.05 --corrupt-where payload
	local bad got
	bad=$(recv_sum "$s" bad_parse) got=$(recv_sum "$s" received)
	echo "corrupt $(fault_stat "$s" a2b.corrupt): xsk_recv bad_parse $bad received $got"
	expect_gt "$s" a2b.corrupt 10
	[ "$bad" -eq "$(fault_stat "$s" a2b.corrupt)" ] || fail "B found $bad bad frames"
	[ "$got" -eq $((1200 - bad)) ] || fail "B received $got good frames"
	grep -q 'bad_icrc\|ICRC' "$s.recv" || fail "xsk_recv did not name the ICRC"
}

# Offline: the same capture and seed give byte-identical output; the damage is what
# the counters say, checked by an independent ICRC checker.
test_fault_replay_pcap() {
	[ -x "$FAULT_BIN" ] || fail "$FAULT_BIN not built"
	local cap=$VECTORS/ib_write_bw-4096.pcap d out nfr psn0 psns
	[ -r "$cap" ] || skip "no rxe vectors at $VECTORS (set BLUE_VECTORS)"
	# the capture's own numbers: its frames (counted by the independent checker), and
	# the PSN of its first frame, a request of side A, as tshark decoded it (fields.tsv)
	nfr=$($PY "$ICRC_CHECK" "$cap" | awk '$1 == "total" { print $2 }')
	psn0=$(awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$c["file"] == "ib_write_bw-4096.pcap" && $c["frame"] == 1 {
			print $c["infiniband.bth.psn"] }' "$VECTORS/fields.tsv")
	[ "${nfr:-0}" -gt 10 ] || fail "$cap: $nfr frames per icrc_check"
	[ -n "$psn0" ] || fail "$VECTORS/fields.tsv: no PSN for frame 1 of $cap"
	[ $((psn0 + 10)) -le $((0xffffff)) ] || fail "$cap: PSNs wrap in the first 10; recapture"
	psns=$(seq -s, $((psn0 + 6)) $((psn0 + 10)))
	d=$(mktemp -d)
	on_exit "rm -rf $d"
	local faults="--loss 0.05 --dup 0.05 --reorder 0.1 --corrupt 0.05 --ecn 0.2 --delay-us 100"
	# shellcheck disable=SC2086
	"$FAULT_BIN" --dry-run "$cap" --out "$d/1.pcap" --log "$d/1.log" --stats-file "$d/1.st" \
		--seed 9 $faults >/dev/null 2>&1 || fail "dry run"
	# shellcheck disable=SC2086
	"$FAULT_BIN" --dry-run "$cap" --out "$d/2.pcap" --log "$d/2.log" --stats-file "$d/2.st" \
		--seed 9 $faults >/dev/null 2>&1 || fail "dry run 2"
	# shellcheck disable=SC2086
	"$FAULT_BIN" --dry-run "$cap" --out "$d/3.pcap" --log "$d/3.log" --stats-file "$d/3.st" \
		--seed 10 $faults >/dev/null 2>&1 || fail "dry run 3"
	cmp "$d/1.pcap" "$d/2.pcap" || fail "same seed, different output"
	cmp "$d/1.log" "$d/2.log" || fail "same seed, different decisions"
	cmp "$d/1.st" "$d/2.st" || fail "same seed, different counters"
	cmp -s "$d/1.log" "$d/3.log" && fail "another seed, the same decisions"
	grep -E '^all\.' "$d/1.st" | awk '$2 != 0' | paste -sd' '
	out=$($PY "$ICRC_CHECK" "$d/1.pcap" | tail -1) || true
	echo "icrc_check: $out"
	# every corrupted frame (twice if it was also duplicated), and only those, fails
	# the ICRC; ECN marks broke nothing
	local nbad ntot want
	nbad=$(awk '{ print $4 }' <<<"$out") ntot=$(awk '{ print $2 }' <<<"$out")
	want=$(awk '$7 == "corrupt" { c[$1 " " $2] = 1 } $7 == "dup" { d[$1 " " $2] = 1 }
		END { for (k in c) n += 1 + (k in d); print n + 0 }' "$d/1.log")
	[ "$want" -ge "$(fault_stat "$d/1.st" all.corrupt)" ] && [ "$want" -gt 0 ] || fail "log and counters disagree"
	[ "$nbad" -eq "$want" ] || fail "ICRC bad $nbad, want $want"
	[ "$ntot" -eq "$(fault_stat "$d/1.st" all.tx)" ] || fail "output has $ntot frames"
	out=$($PY "$ICRC_CHECK" "$d/1.pcap") || true
	grep -q '^pair .* ipcsum_bad 0 ' <<<"$out" || fail "no checker output: $out"
	grep -qE 'ipcsum_bad [1-9]' <<<"$out" && fail "an IP checksum is wrong: $out"

	# one fault at a time, at rate 1, checked frame by frame
	"$FAULT_BIN" --dry-run "$cap" --out "$d/ecn.pcap" --ecn 1 >/dev/null 2>&1 || fail "ecn run"
	$PY "$ICRC_CHECK" "$d/ecn.pcap" >/dev/null || fail "ECN marking broke an ICRC or IP checksum"
	$PY - "$d/ecn.pcap" "$nfr" <<-'EOF' || fail "not every frame is CE-marked"
	import struct, sys
	d = open(sys.argv[1], "rb").read(); off = 24; n = 0
	while off < len(d):
	    incl = struct.unpack("<I", d[off + 8:off + 12])[0]; fr = d[off + 16:off + 16 + incl]
	    off += 16 + incl; n += 1
	    assert fr[15] & 3 == 3, "frame %d: ECN %d" % (n, fr[15] & 3)
	assert n == int(sys.argv[2]), n
	EOF
	"$FAULT_BIN" --dry-run "$cap" --out "$d/hdr.pcap" --corrupt 1 --corrupt-where header \
		--stats-file "$d/hdr.st" >/dev/null 2>&1 || fail "header corruption run"
	out=$($PY "$ICRC_CHECK" "$d/hdr.pcap" | tail -1) || true
	[ "$out" = "total $nfr bad $nfr" ] || fail "header corruption: $out"
	# five requests, PSNs first+6 to first+10 (the capture's side A sends them); not the
	# ACKs coming back, which carry such PSNs too
	"$FAULT_BIN" --dry-run "$cap" --drop-psn "$((psn0 + 6))-$((psn0 + 10))" --direction a2b \
		--log "$d/drop.log" --stats-file "$d/drop.st" >/dev/null 2>&1 || fail "PSN drop run"
	[ "$(fault_stat "$d/drop.st" all.drop_match)" -eq 5 ] || fail "want PSNs $psns dropped"
	[ "$(awk '{ print $6 }' "$d/drop.log" | paste -sd,)" = "$psns" ] ||
		fail "dropped: $(cat "$d/drop.log"), want $psns"
	"$FAULT_BIN" --dry-run "$cap" --out "$d/reo.pcap" --reorder 0.2 --reorder-window 3 \
		--log "$d/reo.log" --stats-file "$d/reo.st" >/dev/null 2>&1 || fail "reorder run"
	# the same frames, in another order
	[ "$(fault_stat "$d/reo.st" all.reorder)" -gt 0 ] || fail "nothing reordered"
	$PY - "$cap" "$d/reo.pcap" <<-'EOF' || fail "reordering lost, changed or kept the frames"
	import struct, sys
	def frames(p):
	    d = open(p, "rb").read(); off = 24; r = []
	    while off < len(d):
	        incl = struct.unpack("<I", d[off + 8:off + 12])[0]
	        r.append(d[off + 16:off + 16 + incl]); off += 16 + incl
	    return r
	a, b = frames(sys.argv[1]), frames(sys.argv[2])
	assert sorted(a) == sorted(b) and a != b, (len(a), len(b))
	EOF
	# a delay shifts every frame by exactly that much, in order
	"$FAULT_BIN" --dry-run "$cap" --out "$d/delay.pcap" --delay-us 250 >/dev/null 2>&1 ||
		fail "delay run"
	$PY - "$cap" "$d/delay.pcap" "$nfr" <<-'EOF' || fail "frames not delayed by 250 us"
	import struct, sys
	def frames(p):
	    d = open(p, "rb").read(); off = 24; r = []
	    ns = struct.unpack("<I", d[:4])[0] == 0xa1b23c4d
	    while off < len(d):
	        sec, frac, incl = struct.unpack("<III", d[off:off + 12])
	        r.append((sec * 10**6 + (frac // 1000 if ns else frac), d[off + 16:off + 16 + incl]))
	        off += 16 + incl
	    return r
	a, b = frames(sys.argv[1]), frames(sys.argv[2])
	assert len(a) == len(b) == int(sys.argv[3]), (len(a), len(b))
	for (ta, fa), (tb, fb) in zip(a, b):
	    assert fa == fb and tb - ta == 250, (ta, tb)
	EOF
	# no buffer to hold a frame in: it is lost, and counted
	"$FAULT_BIN" --dry-run "$cap" --delay-us 1000000 --hold-frames 10 --stats-file "$d/ovf.st" \
		>/dev/null 2>&1 || fail "overflow run"
	[ "$(fault_stat "$d/ovf.st" all.overflow)" -eq $((nfr - 10)) ] ||
		fail "want $((nfr - 10)) of $nfr frames lost to overflow"
	# bad usage is refused
	"$FAULT_BIN" --dry-run "$cap" --loss 2 >/dev/null 2>&1 && fail "--loss 2 accepted"
	"$FAULT_BIN" --dry-run "$cap" --drop-opcode nosuch >/dev/null 2>&1 && fail "bad opcode name accepted"
	return 0
}
