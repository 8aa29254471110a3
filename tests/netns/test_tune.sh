# shellcheck shell=bash
# Tuning while it runs (`bluectl set|get`, include/blue/tune.h) on real netdevs: two
# namespaces joined by a veth pair, blue attached on both ends, blue_xfer moving data.
#  - a per-QP change mid-transfer is acknowledged by the running engine (bluectl says how
#    long it took), `bluectl get` shows it, the change counter counts it and the USDT
#    probe blue:tune fires (tools/trace/cc.bt prints it); the transfer still passes;
#  - switching the algorithm mid-transfer: DCQCN at line_rate_mbps=200 makes the QP's
#    live rate 200 and the goodput over the next second about that; window gives a cwnd
#    and rate 0 (only where this tree has the algorithms: a refusal as "not supported" is
#    reported and that part skipped, said so);
#  - an interface default set before any engine runs is stored and taken by QPs created
#    later; one set while engines run reaches their QPs;
#  - refusals and bad input: the engine's refusal is reported with the key; an unknown
#    key, a value out of range, an unknown QP or interface each get an error naming it.
# Run: B=build bash tests/lib/runner.sh tests/netns/test_tune.sh [test_name...]
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh
# shellcheck source=tests/lib/trace.sh
source tests/lib/trace.sh

BLUECTL=$PWD/$B/bin/bluectl
XFER=$PWD/$B/bin/blue_xfer
TRACE=$PWD/tools/trace
PY=/usr/bin/python3
IP_A=10.201.83.1	# server
IP_B=10.201.83.2	# client

tune_setup() {
	netns_setup tune "$IP_A" "$IP_B"
	need_bins "$BLUECTL" "$XFER"
	blue_attach "$NS_A" "$IF_A" >/dev/null
	blue_attach "$NS_B" "$IF_B" >/dev/null
	SRV_OUT=$(mktemp)
	CLI_OUT=$(mktemp)
	OUT=$(mktemp)
	on_exit "rm -f $SRV_OUT $CLI_OUT $OUT $OUT.*"
}

show_logs() {
	echo "--- server:"
	tail -15 "$SRV_OUT"
	echo "--- client:"
	tail -15 "$CLI_OUT"
}

bluectl_b() { ns_exec "$NS_B" "$BLUECTL" "$@"; }

# get_val QPN KEY: one value `bluectl get IF_B qp QPN` prints
get_val() {
	bluectl_b get "$IF_B" qp "$1" | awk -F= -v k="$2" '$1 == k { print $2 }'
}

# live QPN FIELD: one field of the live QP context (bluectl qp show --json)
live() {
	bluectl_b --json qp show "$IF_B" "$1" | "$PY" -c "import json, sys; print(json.load(sys.stdin)['$2'])"
}

# start_transfer [CLIENT_ARGS...]: a long WRITE stream from B to A; sets SPID CPID QPN
# (the client's QP)
start_transfer() {
	ns_bg "$NS_A" SPID "$XFER" -d "$IF_A" -T 30 >"$SRV_OUT" 2>&1
	ns_bg "$NS_B" CPID "$XFER" -d "$IF_B" -T 30 --op write --size 4K --iters 100000000 \
		--lat-iters 0 --progress "$@" "$IP_A" >"$CLI_OUT" 2>&1
	wait_for_line "$CLI_OUT" '^\[progress\] write' 15 || { show_logs; fail "no transfer"; }
	QPN=$(bluectl_b --json qp list "$IF_B" | "$PY" -c '
import json, sys
q = json.load(sys.stdin)["qps"]
assert len(q) == 1, q
print("0x%06x" % q[0]["qpn"])')
	echo "client QP $QPN"
}

# tx_rate_mbps QPN SECONDS: the QP's payload rate over SECONDS, from its tx_bytes
tx_rate_mbps() {
	local b0 b1
	b0=$(live "$1" tx_bytes)
	sleep "$2"
	b1=$(live "$1" tx_bytes)
	echo $(( (b1 - b0) * 8 / 1000000 / $2 ))
}

# set_or_unsupported ARGS...: `bluectl set`; 0 when applied, 1 when refused as not
# supported by this tree (printed), anything else fails the test
set_or_unsupported() {
	local rc=0
	bluectl_b set "$@" >"$OUT.set" 2>&1 || rc=$?
	cat "$OUT.set"
	[ "$rc" -eq 0 ] && return 0
	grep -q "refused .*Operation not supported" "$OUT.set" && return 1
	fail "bluectl set $* exited $rc"
}

test_tune_qp_change_mid_transfer() {
	tune_setup
	local bpid bt n
	bt=$(mktemp)
	on_exit "rm -f $bt"
	bt_start bpid "$bt" "$TRACE/cc.bt" "$XFER"
	start_transfer --cc none
	# what it runs before: the documented defaults
	[ "$(get_val "$QPN" dcqcn.rai_mbps)" = 40 ] || fail "default rai_mbps: $(get_val "$QPN" dcqcn.rai_mbps)"
	[ "$(get_val "$QPN" changes)" = 0 ] || fail "changes before any set"
	bluectl_b set "$IF_B" qp "$QPN" dcqcn.rai_mbps=80 window.target_delay_us=300 \
		| tee "$OUT.1"
	grep -qE "^$IF_B qp $QPN: applied in [0-9]+ us: dcqcn.rai_mbps=80 window.target_delay_us=300$" \
		"$OUT.1" || fail "set did not report the engine's acknowledgement"
	bluectl_b set "$IF_B" qp "$QPN" retx.timer=linear retx.base_us=20000 retx.k_us=100 \
		| tee "$OUT.2"
	grep -q "applied in" "$OUT.2" || fail "retx change not acknowledged"
	# get prints what the QP runs now, and the live context agrees
	bluectl_b get "$IF_B" qp "$QPN" | tee "$OUT.get"
	grep -qx "dcqcn.rai_mbps=80" "$OUT.get" || fail "get: rai_mbps"
	grep -qx "window.target_delay_us=300" "$OUT.get" || fail "get: target_delay_us"
	grep -qx "retx.timer=linear" "$OUT.get" || fail "get: retx.timer"
	grep -qx "retx.k_us=100" "$OUT.get" || fail "get: retx.k_us"
	grep -qx "dcqcn.g=4" "$OUT.get" || fail "get: a key not set changed"
	grep -qx "changes=2" "$OUT.get" || fail "get: the change counter is not 2"
	[ "$(live "$QPN" retx_timer)" = 1 ] || fail "live retx_timer is not LINEAR"
	bluectl_b --json get "$IF_B" qp "$QPN" | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
v = d["values"]
assert v["dcqcn.rai_mbps"] == 80 and v["retx.timer"] == "linear" and v["cc.algo"] == "none", v
assert d["changes"] == 2 and d["applied_gen"] == d["gen"], d
print("get --json:", len(v), "keys")' || fail "get --json"
	# the counter is in the metrics too
	bluectl_b metrics "$IF_B" | grep -E "^blue_qp_tune_changes_total\{.*qpn=\"$QPN\".*\} 2$" \
		|| fail "metrics: no blue_qp_tune_changes_total 2 for $QPN"
	# the probe fired once per change, naming the QP
	sleep 0.2
	bt_stop "$bpid" "$bt"
	n=$(grep -cE "^[0-9]+ +[0-9]+ +$QPN +tune +keys 0x[0-9a-f]+ refused 0x0 gen [12]$" "$bt")
	[ "$n" -eq 2 ] || fail "cc.bt: $n tune lines for $QPN, want 2"
	# the transfer kept running through both changes
	kill -0 "$CPID" || { show_logs; fail "the client died"; }
	grep -q "error\|FAIL" "$CLI_OUT" && { show_logs; fail "the client reported an error"; }
	return 0
}

test_tune_switch_algorithm_mid_transfer() {
	tune_setup
	local rate cw base line bpid bt dcqcn=0 window=0
	bt=$(mktemp)
	on_exit "rm -f $bt"
	bt_start bpid "$bt" "$TRACE/cc.bt" "$XFER"
	start_transfer --cc none	# unpaced, so that the switch to DCQCN shows
	# the pacer has to show against what the link does unpaced here: 200 Mbit/s when
	# that is well below the unpaced rate, else a quarter of it (a loaded machine)
	base=$(tx_rate_mbps "$QPN" 1)
	line=200
	[ "$base" -ge 400 ] || line=$(( base / 4 > 2 ? base / 4 : 2 ))
	echo "unpaced goodput $base Mbit/s; pacing at $line Mbit/s"
	if set_or_unsupported "$IF_B" qp "$QPN" cc.algo=dcqcn dcqcn.line_rate_mbps=$line \
		dcqcn.rhai_mbps=$line dcqcn.rai_mbps=$(( line < 40 ? line : 40 )) \
		dcqcn.min_rate_mbps=$(( line < 10 ? line : 10 )); then
		dcqcn=1
		[ "$(live "$QPN" cc_algo)" = 1 ] || fail "live cc_algo is not DCQCN"
		[ "$(live "$QPN" rate_mbps)" = "$line" ] ||
			fail "live rate_mbps $(live "$QPN" rate_mbps), want $line"
		bluectl_b qp show "$IF_B" "$QPN" | grep -E "^(cc_algo|rate_mbps):"
		rate=$(tx_rate_mbps "$QPN" 1)
		echo "goodput over the next 1 s: $rate Mbit/s"
		# payload under a $line Mbit/s wire rate: at most that (it was at least 4x that
		# unpaced), and still moving. How close below it comes depends on how often a
		# loaded machine schedules the engine (measured here at load 13 on 2 cores:
		# 10 Mbit/s paced at 40), so that is reported, not asserted.
		[ "$rate" -le $(( line * 11 / 10 + 1 )) ] && [ "$rate" -gt 0 ] ||
			fail "goodput $rate Mbit/s paced at $line (unpaced $base)"
	else
		echo "part skipped: DCQCN is not in this tree (cc-algo/cc-wire)"
	fi
	if set_or_unsupported "$IF_B" qp "$QPN" cc.algo=window; then
		window=1
		cw=$(live "$QPN" cwnd)
		[ "$cw" -gt 0 ] || fail "window: cwnd $cw"
		[ "$(live "$QPN" rate_mbps)" = 0 ] || fail "window: rate_mbps not 0"
		[ "$(get_val "$QPN" cc.algo)" = window ] || fail "get: cc.algo"
	else
		echo "part skipped: the window algorithm is not in this tree (cc-algo)"
	fi
	# a refusal leaves the QP as it was, and get still shows what it runs
	[ "$(get_val "$QPN" cc.algo)" = "$(bluectl_b --json qp show "$IF_B" "$QPN" |
		"$PY" -c 'import json, sys; print(["none", "dcqcn", "window"][json.load(sys.stdin)["cc_algo"]])')" ] \
		|| fail "get and the live context disagree on the algorithm"
	kill -0 "$CPID" || { show_logs; fail "the client died"; }
	# cc.bt saw the rate set and the window open, on this QP
	sleep 0.2
	bt_stop "$bpid" "$bt"
	[ "$dcqcn" = 0 ] || grep -qE "^[0-9]+ +[0-9]+ +$QPN +rate +0 -> $line Mbit/s" "$bt" ||
		fail "cc.bt: no rate line 0 -> $line for $QPN"
	[ "$window" = 0 ] || grep -qE "^[0-9]+ +[0-9]+ +$QPN +window +0 -> [1-9][0-9]* pkts" "$bt" ||
		fail "cc.bt: no window line for $QPN"
}

test_tune_interface_defaults() {
	tune_setup
	local rc=0
	# no engine yet: stored, and said so
	bluectl_b set "$IF_B" dcqcn.g=8 window.init_cwnd=32 | tee "$OUT.1"
	grep -q "no engine has $IF_B open; stored" "$OUT.1" || fail "set without an engine"
	bluectl_b get "$IF_B" | tee "$OUT.get"
	grep -qx "dcqcn.g=8" "$OUT.get" && grep -qx "window.init_cwnd=32" "$OUT.get" &&
		grep -qx "dcqcn.rai_mbps=40" "$OUT.get" || fail "get IF: the defaults"
	# a QP created later starts with them
	start_transfer
	[ "$(get_val "$QPN" dcqcn.g)" = 8 ] || fail "new QP: dcqcn.g $(get_val "$QPN" dcqcn.g)"
	[ "$(get_val "$QPN" window.init_cwnd)" = 32 ] || fail "new QP: init_cwnd"
	# a default set now reaches the running QP, acknowledged by its engine
	bluectl_b set "$IF_B" dcqcn.alpha_timer_us=110 | tee "$OUT.2"
	grep -qE "^$IF_B: applied in [0-9]+ us: dcqcn.alpha_timer_us=110$" "$OUT.2" ||
		fail "interface set not acknowledged"
	[ "$(get_val "$QPN" dcqcn.alpha_timer_us)" = 110 ] || fail "running QP lacks the default"
	# diag is the interface's switch
	bluectl_b set "$IF_B" diag=drops,lat
	bluectl_b --json diag show "$IF_B" | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
assert d["drops"] and d["latency"] and d["flags"] == 3, d' ||
		fail "diag=drops,lat did not switch diagnostics on"
	[ "$(bluectl_b get "$IF_B" | awk -F= '$1 == "diag" { print $2 }')" = drops,lat ] ||
		fail "get: diag"
	bluectl_b set "$IF_B" diag=off
	bluectl_b --json diag show "$IF_B" | "$PY" -c '
import json, sys
assert json.load(sys.stdin)["flags"] == 0' || fail "diag=off"
	bluectl_b set "$IF_B" qp "$QPN" diag=on 2>"$OUT.e" || rc=$?
	[ "$rc" -eq 2 ] && grep -q "diag is the interface's switch" "$OUT.e" ||
		fail "diag on a QP: exit $rc, $(cat "$OUT.e")"
}

# expect_err RC PATTERN ARGS...: `bluectl ARGS` exits RC with PATTERN on stderr
expect_err() {
	local want=$1 pat=$2 rc=0
	shift 2
	bluectl_b "$@" >/dev/null 2>"$OUT.e" || rc=$?
	echo "bluectl $*: exit $rc: $(head -c 300 "$OUT.e")"
	[ "$rc" -eq "$want" ] || fail "bluectl $*: exit $rc, want $want"
	grep -q -- "$pat" "$OUT.e" || fail "bluectl $*: stderr lacks '$pat'"
}

test_tune_refusals_and_bad_input() {
	tune_setup
	start_transfer
	expect_err 2 "unknown key 'dcqcn.bogus'; the keys are: retx.policy, .*dcqcn.rai_mbps" \
		set "$IF_B" qp "$QPN" dcqcn.bogus=1
	expect_err 2 "dcqcn.g=5000: dcqcn.g takes a whole number from 1 to 1024" \
		set "$IF_B" qp "$QPN" dcqcn.g=5000
	expect_err 2 "cc.algo takes none, dcqcn or window" set "$IF_B" cc.algo=cubic
	expect_err 1 "QP 0x000fff not found" set "$IF_B" qp 0xfff dcqcn.g=8
	expect_err 1 "QP 0x000fff not found" get "$IF_B" qp 0xfff
	expect_err 1 "nosuch0: " set nosuch0 dcqcn.g=8
	expect_err 2 "needs at least one key=value" set "$IF_B" qp "$QPN"
	# the engine refuses: base_us belongs to the LINEAR timer (blue_qp_set_retx)
	expect_err 1 "the engine refused retx.base_us=500: Invalid argument" \
		set "$IF_B" qp "$QPN" retx.base_us=500
	[ "$(get_val "$QPN" retx.base_us)" = 0 ] || fail "a refused value shows in get"
	grep -q "tune: QP $(printf 0x%x "$QPN"): refused retx.base_us=500" "$CLI_OUT" ||
		fail "the engine did not log the refused key and value"
	kill -0 "$CPID" || { show_logs; fail "the client died"; }
}

# The congestion-control and tuning series over HTTP: valid Prometheus text, and the
# values those of the QP context and the tune map.
test_tune_metrics_scrape() {
	tune_setup
	local mpid port=9466
	start_transfer
	bluectl_b set "$IF_B" qp "$QPN" window.init_cwnd=24 >/dev/null
	bluectl_b set "$IF_B" dcqcn.g=8 >/dev/null
	ns_bg "$NS_B" mpid "$BLUECTL" metrics "$IF_B" --listen "127.0.0.1:$port" --max-requests 1 \
		>"$OUT.srv" 2>&1
	wait_for_line "$OUT.srv" '^serving' 5 "$mpid" || { cat "$OUT.srv"; fail "metrics server not up"; }
	ns_exec "$NS_B" "$PY" -c '
import sys, urllib.request
r = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=10)
assert r.status == 200, r.status
open(sys.argv[2], "wb").write(r.read())' "$port" "$OUT.body" || fail "scrape failed"
	wait "$mpid" || fail "bluectl metrics exited $?"
	"$PY" tests/lib/prom_check.py "$OUT.body" || fail "not valid Prometheus text"
	bluectl_b --json qp show "$IF_B" "$QPN" >"$OUT.show"
	"$PY" - "$OUT.body" "$OUT.show" "$QPN" <<'PYEOF' || fail "the CC series disagree with the QP context"
import json, re, sys
body, show, qpn = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), sys.argv[3]
def val(name, qp=True):
    pat = r'^%s\{[^}]*qpn="%s"[^}]*\} (\S+)$' % (name, qpn) if qp else r"^%s(?:\{[^}]*\})? (\S+)$" % name
    m = re.search(pat, body, re.M)
    assert m, "no %s sample" % name
    return float(m.group(1))
# rate, window, RTT and CNPs, each in its base unit (bytes/s, packets, seconds)
assert val("blue_qp_cc_algo") == show["cc_algo"]
assert val("blue_qp_rate_bytes_per_second") == show["rate_mbps"] * 125000
assert val("blue_qp_cwnd_packets") == show["cwnd"]
assert val("blue_qp_dcqcn_alpha") == show["alpha"] / 1024
# RTT samples keep coming between the scrape and qp show: seconds, and there or not
srtt = val("blue_qp_srtt_seconds")
assert srtt < 1 and (srtt > 0) == (show["srtt_ns"] > 0), (srtt, show["srtt_ns"])
assert val("blue_qp_cnps_sent_total") <= show["cnp_sent"]
assert val("blue_qp_cnps_received_total") <= show["cnp_rcvd"]
assert val("blue_qp_tune_changes_total") == 1, val("blue_qp_tune_changes_total")
assert val("blue_tune_changes_total", qp=False) >= 1
print("CC and tune series agree with qp show for", qpn)
PYEOF
}
