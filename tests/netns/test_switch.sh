# shellcheck shell=bash
# The bottleneck switch (tests/lib/switch.sh: senders -> bridge -> tbf + switch_ecn ->
# receiver) is faithful: its rate is the setting, it marks only above Kmin, drops only
# when the buffer is full, never marks Not-ECT, and its record is its queue.
# Plain UDP from tests/netns/udp_flood, two senders (so two CPUs enqueue at once), 9000-
# byte links so that a shared 2-core machine can offer more than the rate (tbf and the
# marker count bytes, so the frame size does not change what is checked).
# What the receiver got is read from its own stack: the interface's byte counter for
# the rate, and IpExt In{NoECT,ECT0,CE}Pkts (per-namespace /proc/net/netstat) for the
# ECN codepoints that arrived.
# Run: B=build bash tests/lib/runner.sh tests/netns/test_switch.sh [test_name...]
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh
# shellcheck source=tests/lib/switch.sh
source tests/lib/switch.sh

FLOOD=$PWD/$B/tests/netns/udp_flood
FRAME=9014		# the largest frame on a 9000-byte link, Ethernet header included
ECT0=2
NOT_ECT=0
# packets of the kernel's own that may share the port with a flood (see below_rate)
NON_FLOOD=2

# sws_setup: the topology with two senders, 9000-byte links.
sws_setup() {
	[ "$(id -u)" -eq 0 ] || skip "needs root"
	need_bins "$FLOOD" "$SW_BIN"
	command -v tc >/dev/null || skip "no tc"
	SW_MTU=9000
	switch_setup 2 10.203.7
	SWS_DIR=$(mktemp -d)
	on_exit "rm -rf $SWS_DIR"
}

# sws_flood I RATE TOS SECONDS: udp_flood from sender I toward the receiver in the
# background, output in $SWS_DIR/flood.I; its PID in SWS_PID[I].
sws_flood() {
	local pid
	ns_bg "${SW_NS_S[$1]}" pid timeout 30 "$FLOOD" --dst "$SW_IP_R" --rate "$2" \
		--size $((SW_MTU - 28)) --tos "$3" --seconds "$4" >"$SWS_DIR/flood.$1"
	SWS_PID[$1]=$pid
}

# sws_wait I: wait for sender I; SWS_SENT[I] is the packets it sent.
sws_wait() {
	wait "${SWS_PID[$1]}" || fail "udp_flood in sender $1 failed: $(cat "$SWS_DIR/flood.$1")"
	SWS_SENT[$1]=$(awk '$1 == "SENT" { print $3 }' "$SWS_DIR/flood.$1")
}

# sws_receiver: what arrived, by ECN codepoint, and the switch's counters
sws_receiver() {
	echo "receiver: NoECT $(rx_ecn InNoECTPkts) ECT0 $(rx_ecn InECT0Pkts) CE $(rx_ecn InCEPkts)"
}

# rx_ecn_now NAME: the receiver's IpExt counter NAME (InNoECTPkts, InECT0Pkts, InCEPkts)
rx_ecn_now() {
	ns_exec "$SW_NS_R" awk -v k="$1" '
		$1 == "IpExt:" && !n { for (i = 2; i <= NF; i++) f[i] = $i; n = 1; next }
		$1 == "IpExt:" { for (i = 2; i <= NF; i++) if (f[i] == k) print $i }' /proc/net/netstat
}

# sws_reset: the switch's counters to zero, and the receiver's taken as the base of
# rx_ecn (they count from the namespace's start: the senders' IGMP reports when their
# links came up were counted there before the switch was reset)
declare -A RX0
sws_reset() {
	local k
	switch_reset
	for k in InNoECTPkts InECT0Pkts InCEPkts; do
		RX0[$k]=$(rx_ecn_now $k)
	done
}

# rx_ecn NAME: how much the receiver's counter NAME went up since sws_reset
rx_ecn() {
	echo $(($(rx_ecn_now "$1") - RX0[$1]))
}

# rate_case RATE_BPS OFFERED_PER_SENDER: two senders above RATE; the rate the receiver
# measures over 3 s must be within 5% of it. A deep buffer (4 MiB, 32 ms at 1 Gbit/s)
# keeps tbf busy while both senders happen to be descheduled on a loaded machine.
rate_case() {
	local want=$1 got rp
	switch_set --rate "$want" --buffer 4M
	sws_reset
	switch_rx_rate 1 3 >"$SWS_DIR/rate" &
	rp=$!
	on_exit "kill $rp 2>/dev/null"
	wait_for_line "$SWS_DIR/rate" READY 20 "$rp" || fail "the rate meter did not start"
	sws_flood 1 "$2" $ECT0 8
	sws_flood 2 "$2" $ECT0 8
	wait "$rp" || fail "no rate measured: $(cat "$SWS_DIR/rate")"
	sws_wait 1
	sws_wait 2
	got=$(tail -1 "$SWS_DIR/rate")
	echo "set $want bit/s, receiver measured $got bit/s (tbf bucket $SW_TBF_BURST bytes)"
	switch_stats | grep -E '^(pkts|dropped|max_depth) '
	[ "$(switch_stat dropped)" -gt 0 ] || fail "the queue never filled: offered load below the rate"
	python3 -c 'import sys; w, g = int(sys.argv[1]), int(sys.argv[2]); sys.exit(abs(g - w) > 0.05 * w)' \
		"$want" "$got" || fail "rate $got is not within 5% of $want"
	[ "$(switch_tbf_stat drops)" -eq 0 ] || fail "tbf dropped: the marker let the queue run past the buffer"
}

test_switch_rate_1g() {
	sws_setup
	rate_case 1000000000 750000000
}

test_switch_rate_500m() {
	sws_setup
	rate_case 500000000 400000000
}

# Below the rate, ECT and Not-ECT together at half of it: every packet passes, none is
# marked, none dropped, and each arrives with the codepoint it was sent with. Below the
# rate a queue still forms while a sender's batch (udp_flood: 8 frames per sendmmsg,
# 72 KB at veth speed) arrives, and both at once is 144 KB: Kmin is well above that.
test_switch_below_rate_no_marks_no_drops() {
	sws_setup
	local sent1 sent2 extra
	switch_set --rate 1G --buffer 1M --kmin 400K --kmax 800K --pmax 0.2 --mark on
	sws_reset
	sws_flood 1 250000000 $ECT0 3
	sws_flood 2 250000000 $NOT_ECT 3
	sws_wait 1
	sws_wait 2
	sent1=${SWS_SENT[1]} sent2=${SWS_SENT[2]}
	sws_receiver
	switch_stats | grep -E '^(pkts|marked|dropped|max_depth) '
	echo "sent: $sent1 ECT(0), $sent2 Not-ECT"
	[ "$sent1" -gt 1000 ] && [ "$sent2" -gt 1000 ] || fail "too little traffic sent"
	# what passed is what was sent, plus at most NON_FLOOD packets of the kernel's own
	# (Not-ECT IPv4; CI saw one per test now and then, from a sender toward the receiver)
	extra=$(($(switch_stat pkts) - sent1 - sent2))
	[ "$extra" -ge 0 ] && [ "$extra" -le $NON_FLOOD ] ||
		fail "the switch passed $(switch_stat pkts), $((sent1 + sent2)) were sent"
	[ "$(switch_stat marked)" -eq 0 ] || fail "marks below the rate"
	[ "$(switch_stat dropped)" -eq 0 ] || fail "drops below the rate"
	[ "$(switch_tbf_stat drops)" -eq 0 ] || fail "tbf dropped"
	[ "$(rx_ecn InCEPkts)" -eq 0 ] || fail "CE arrived"
	[ "$(rx_ecn InECT0Pkts)" -eq "$sent1" ] || fail "ECT(0) arrived $(rx_ecn InECT0Pkts), sent $sent1"
	# the kernel's packets need not be IPv4 (IPv6 neighbour and MLD frames pass the switch
	# too, and the receiver's IPv4 ECN counters never see them: CI saw 10408 arrive of
	# 10408 sent with one such frame passed), so they may or may not be counted here
	local noect
	noect=$(rx_ecn InNoECTPkts)
	[ "$noect" -ge "$sent2" ] && [ "$noect" -le $((sent2 + extra)) ] ||
		fail "Not-ECT arrived $noect, sent $sent2 (+$extra not ours)"
}

# Above the rate with marking on: marks appear, each made when the queue was deeper
# than Kmin, and the receiver gets exactly the packets marked as CE.
test_switch_marks_only_above_kmin() {
	sws_setup
	local kmin=150000 min
	switch_set --rate 500M --buffer 1M --kmin $kmin --kmax 600K --pmax 0.5 --mark on
	sws_reset
	sws_flood 1 400000000 $ECT0 3
	sws_flood 2 400000000 $ECT0 3
	sws_wait 1
	sws_wait 2
	sws_receiver
	switch_stats | grep -E '^(pkts|marked|dropped|max_depth|min_mark_depth|max_mark_depth) '
	[ "$(switch_stat marked)" -gt 0 ] || fail "no marks above the rate"
	min=$(switch_stat min_mark_depth)
	[ "$min" -gt "$kmin" ] || fail "a packet was marked at depth $min, kmin is $kmin"
	[ "$(rx_ecn InCEPkts)" -eq "$(switch_stat marked)" ] ||
		fail "receiver got $(rx_ecn InCEPkts) CE, switch marked $(switch_stat marked)"
	[ "$(rx_ecn InNoECTPkts)" -le $NON_FLOOD ] || fail "$(rx_ecn InNoECTPkts) Not-ECT arrived"
	[ $(($(rx_ecn InCEPkts) + $(rx_ecn InECT0Pkts) + $(rx_ecn InNoECTPkts))) -eq \
	  "$(switch_stat pkts)" ] || fail "the receiver got another count than the switch passed"
}

# Marking off, Not-ECT above the rate: drops, each of a packet that did not fit, the
# queue reaching the buffer less one frame, tbf itself never dropping; the record holds
# that queue.
test_switch_drops_only_when_buffer_full() {
	sws_setup
	local buf=300000 min max rec
	switch_set --rate 500M --buffer $buf --mark off
	sws_reset
	sws_flood 1 400000000 $NOT_ECT 3
	sws_flood 2 400000000 $NOT_ECT 3
	sws_wait 1
	sws_wait 2
	sws_receiver
	switch_stats | grep -E '^(pkts|marked|dropped|max_depth|min_drop_depth) '
	[ "$(switch_stat dropped)" -gt 0 ] || fail "no drops above the rate"
	min=$(switch_stat min_drop_depth)
	[ $((min + FRAME)) -gt $buf ] || fail "a packet was dropped at depth $min with room for it"
	max=$(switch_stat max_depth)
	[ "$max" -ge $((buf - FRAME)) ] || fail "the queue peaked at $max, the buffer is $buf"
	[ "$(switch_tbf_stat drops)" -eq 0 ] || fail "tbf dropped: the queue ran past buffer + slack"
	[ "$(switch_stat marked)" -eq 0 ] || fail "marked with marking off"
	# what arrived is what the switch passed, less at most NON_FLOOD frames of the
	# kernel's that the receiver's IPv4 counters do not see (as below_rate's)
	local passed noect
	passed=$(switch_stat pkts) noect=$(rx_ecn InNoECTPkts)
	[ "$noect" -le "$passed" ] && [ "$noect" -ge $((passed - NON_FLOOD)) ] ||
		fail "receiver count: $noect Not-ECT arrived, the switch passed $passed"
	switch_record "$SWS_DIR/rec.csv"
	rec=$(python3 - "$SWS_DIR/rec.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert rows[0] == ["time_us", "depth_bytes"], rows[0]
t = [int(r[0]) for r in rows[1:]]
d = [int(r[1]) for r in rows[1:]]
assert t and t == sorted(t) and len(set(t)) == len(t), "times not increasing"
assert all(x % 100 == 0 for x in t), "times not on 100 us slots"
print(len(t), max(d))
PY
	) || fail "the record is malformed"
	echo "record: ${rec% *} slots, max depth ${rec#* }"
	[ "${rec#* }" -eq "$max" ] || fail "the record's max ${rec#* } is not the queue's max $max"
}

# Not-ECT above the rate with every packet above Kmax: RED chooses each, none is marked.
test_switch_not_ect_never_marked() {
	sws_setup
	switch_set --rate 500M --buffer 1M --kmin 0 --kmax 0 --pmax 1 --mark on
	sws_reset
	sws_flood 1 400000000 $NOT_ECT 3
	sws_flood 2 400000000 $NOT_ECT 3
	sws_wait 1
	sws_wait 2
	sws_receiver
	switch_stats | grep -E '^(pkts|marked|notect_hot|dropped|max_depth) '
	[ "$(switch_stat notect_hot)" -gt 0 ] || fail "the queue never built: nothing to test"
	[ "$(switch_stat marked)" -eq 0 ] || fail "Not-ECT marked"
	[ "$(rx_ecn InCEPkts)" -eq 0 ] || fail "CE arrived"
	# what arrived is what the switch passed, less at most NON_FLOOD frames of the
	# kernel's that the receiver's IPv4 counters do not see (as below_rate's)
	local passed noect
	passed=$(switch_stat pkts) noect=$(rx_ecn InNoECTPkts)
	[ "$noect" -le "$passed" ] && [ "$noect" -ge $((passed - NON_FLOOD)) ] ||
		fail "receiver count: $noect Not-ECT arrived, the switch passed $passed"
}

# RoCEv2 through the switch, as the congestion-control tests and the bench use it: blue
# attached on a sender and the receiver (1500-byte links, switch_setup's default),
# rc_smoke (SEND, WRITE, READ, atomics; every byte compared) passes through the
# bottleneck at 500 Mbit/s with marking on, and the switch saw the RoCEv2 frames.
test_switch_carries_rocev2() {
	[ "$(id -u)" -eq 0 ] || skip "needs root"
	local smoke=$PWD/$B/tests/netns/rc_smoke srv cli spid rc=0
	BLUECTL=$PWD/$B/bin/bluectl
	need_bins "$smoke" "$BLUECTL" "$SW_BIN"
	switch_setup 1 10.203.8
	switch_set --rate 500M --buffer 256K --kmin 32K --kmax 128K --pmax 0.2 --mark on
	switch_reset
	blue_attach "$SW_NS_R" "$SW_IF_R" >/dev/null || fail "attach $SW_IF_R"
	blue_attach "${SW_NS_S[1]}" "${SW_IF_S[1]}" >/dev/null || fail "attach ${SW_IF_S[1]}"
	srv=$(mktemp) cli=$(mktemp)
	on_exit "rm -f $srv $cli"
	ns_bg "$SW_NS_R" spid timeout 60 "$smoke" server "$SW_IF_R" --timeout-ms 20000 >"$srv" 2>&1
	wait_for_line "$srv" '^READY' 10 "$spid" || { cat "$srv"; fail "rc_smoke server not ready"; }
	ns_exec "${SW_NS_S[1]}" timeout 60 "$smoke" client "${SW_IF_S[1]}" "$SW_IP_R" \
		--timeout-ms 20000 >"$cli" 2>&1 || rc=$?
	wait "$spid" || true
	grep -v '^ok ' "$cli" | tail -5
	[ "$rc" -eq 0 ] && grep -q '^RESULT PASS$' "$cli" || { cat "$srv"; fail "rc_smoke client exit $rc"; }
	grep -q '^RESULT PASS$' "$srv" || { cat "$srv"; fail "rc_smoke server"; }
	switch_stats | grep -E '^(pkts|bytes|marked|dropped|max_depth) '
	# the CM's TCP and every RoCEv2 request went through the switch port
	[ "$(switch_stat pkts)" -gt 50 ] || fail "the switch saw $(switch_stat pkts) frames"
	[ "$(switch_stat dropped)" -eq 0 ] || fail "drops on an uncongested run"
}

# The tool names what is wrong: a bad option, thresholds out of order, a port without
# the switch; and detach removes its pins.
test_switch_tool_errors() {
	sws_setup
	local out dir
	out=$(ns_exec "$SW_NS" "$SW_BIN" config "$SW_PORT_R" --buffer 100K --kmin 50K --kmax 20K 2>&1) &&
		fail "kmin > kmax accepted"
	echo "$out"
	grep -q -- '--kmin (51200) <= --kmax (20480)' <<<"$out" || fail "unclear: $out"
	out=$(ns_exec "$SW_NS" "$SW_BIN" config "$SW_PORT_R" --pmax 2 2>&1) && fail "pmax 2 accepted"
	grep -q -- '--pmax 2' <<<"$out" || fail "unclear: $out"
	out=$(ns_exec "$SW_NS" "$SW_BIN" config "$SW_PORT_R" --mark maybe 2>&1) && fail "--mark maybe accepted"
	grep -q -- '--mark maybe' <<<"$out" || fail "unclear: $out"
	out=$(ns_exec "$SW_NS" "$SW_BIN" stats "${SW_PORT_S[1]}" 2>&1) && fail "stats of a bare port"
	grep -q "attached to ${SW_PORT_S[1]}" <<<"$out" || fail "unclear: $out"
	out=$(ns_exec "$SW_NS" "$SW_BIN" attach "$SW_PORT_R" 2>&1) && fail "attached twice"
	grep -q "attached to $SW_PORT_R already" <<<"$out" || fail "unclear: $out"
	out=$(switch_set --rate 3x --buffer 1M 2>&1) && fail "rate 3x accepted"
	grep -q -- '--rate 3x' <<<"$out" || fail "unclear: $out"
	dir=$(ns_exec "$SW_NS" "$SW_BIN" pin-dir "$SW_PORT_R")
	[ -e "$dir/sw_cfg" ] || fail "no pins in $dir"
	ns_exec "$SW_NS" "$SW_BIN" detach "$SW_PORT_R" || fail "detach"
	[ ! -e "$dir" ] || fail "$dir left after detach"
	tc -n "$SW_NS" filter show dev "$SW_PORT_R" egress | grep -q bpf && fail "filter left after detach"
	true
}
