# shellcheck shell=bash
# The perftest-style benchmarks (blue_write_bw ... blue_atomic_lat, tools/perf/) between
# two namespaces over a veth pair with blue attached on both ends: each program runs a
# short round (small -n) and must exit 0 on both sides, print its result line in
# perftest's column layout with #iterations equal to -n, and write --out_json as valid
# JSON with the fields. Also: -a (every size), several QPs with a post list, a server
# of another test, and a path MTU the link cannot carry. No timing is asserted.
# Run: B=build bash tests/lib/runner.sh tests/netns/test_perf_tools.sh
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh

BLUECTL=$PWD/$B/bin/bluectl
PY=/usr/bin/python3
IP_A=10.201.97.1	# server
IP_B=10.201.97.2	# client

perf_setup() {
	netns_setup pt "$IP_A" "$IP_B"
	need_bins "$BLUECTL"
	blue_attach "$NS_A" "$IF_A" >/dev/null || fail "attach $IF_A"
	blue_attach "$NS_B" "$IF_B" >/dev/null || fail "attach $IF_B"
	OUT=$(mktemp -d)
	on_exit "rm -rf $OUT"
}

# perf_run TEST ARGS...: server in A (with SRV_ARGS, if set), client in B with ARGS and
# --out_json; sets SRC and CRC (exit statuses) and leaves the outputs in
# $OUT/{srv,cli,json}.
perf_run() {
	local t=$1 bin=$PWD/$B/bin/blue_$1 spid
	shift
	need_bins "$bin"
	rm -f "$OUT/json"
	# shellcheck disable=SC2086 # SRV_ARGS: options, split on purpose
	ns_bg "$NS_A" spid timeout 60 "$bin" -d "$IF_A" --timeout 20 ${SRV_ARGS:-} \
		>"$OUT/srv" 2>&1
	# the client retries a refused connect until the server listens: no sleep needed
	CRC=0
	ns_exec "$NS_B" timeout 60 "$bin" -d "$IF_B" --timeout 20 "$@" --out_json \
		--out_json_file "$OUT/json" "$IP_A" >"$OUT/cli" 2>&1 || CRC=$?
	SRC=0
	wait "$spid" || SRC=$?
	echo "--- server ($t):"; cat "$OUT/srv"
	echo "--- client ($t):"; cat "$OUT/cli"
}

# result_lines KIND: the result rows of the client's table (KIND bw: 5 numbers, lat: 9).
result_lines() {
	local nf=9
	[ "$1" = bw ] && nf=5
	awk -v nf="$nf" 'NF == nf && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ {
		for (i = 3; i <= NF; i++) if ($i !~ /^[0-9]+(\.[0-9]+)?$/) next; print }' "$OUT/cli"
}

# check_run KIND SIZE ITERS: both sides passed, one result row of SIZE with ITERS, JSON.
check_run() {
	local kind=$1 size=$2 iters=$3 row
	[ "$SRC" -eq 0 ] || fail "server exited $SRC"
	[ "$CRC" -eq 0 ] || fail "client exited $CRC"
	# perftest's headers, spacing included (scripts written for ib_*_bw/lat split them)
	local hdr_bw=' #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]'
	local hdr_lat=' #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    '
	hdr_lat+='t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]'
	if [ "$kind" = bw ]; then
		grep -qF "$hdr_bw" "$OUT/cli" || fail "no bandwidth header"
	else
		grep -qF "$hdr_lat" "$OUT/cli" || fail "no latency header"
	fi
	row=$(result_lines "$kind")
	[ "$(wc -l <<<"$row")" -eq 1 ] || fail "expected one result row, got: $row"
	read -r -a f <<<"$row"
	[ "${f[0]}" -eq "$size" ] || fail "row size ${f[0]}, expected $size"
	[ "${f[1]}" -eq "$iters" ] || fail "row iterations ${f[1]}, expected $iters"
	# a figure of zero would mean nothing was measured
	awk -v v="${f[3]}" 'BEGIN { exit !(v > 0) }' || fail "a zero figure: $row"
	grep -q 'server: .*data verified' "$OUT/srv" || fail "the server verified no data"
	check_json "$kind" "$size" "$iters"
}

check_json() {
	local kind=$1 size=$2 iters=$3
	[ -s "$OUT/json" ] || fail "--out_json wrote nothing"
	$PY - "$OUT/json" "$kind" "$size" "$iters" <<'EOF' || fail "bad --out_json"
import json, sys
d = json.load(open(sys.argv[1]))
kind, size, iters = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
fields = (["BW_peak", "BW_average", "MsgRate"] if kind == "bw" else
          ["t_min", "t_max", "t_typical", "t_avg", "t_stdev", "percentile_99",
           "percentile_99_9"]) + ["MsgSize", "n_iterations", "cpu_cores_client",
                                  "cpu_cores_server"]
assert d["verified"] is True and d["test"], d
r = d["results"][-1]
for k in fields:
    assert isinstance(r[k], (int, float)), (k, r)
assert r["MsgSize"] == size and r["n_iterations"] == iters, r
print("json ok:", r)
EOF
}

test_write_bw() {
	perf_setup
	perf_run write_bw -s 65536 -n 200
	check_run bw 65536 200
}

test_read_bw() {
	perf_setup
	perf_run read_bw -s 65536 -n 200
	check_run bw 65536 200
}

test_send_bw() {
	perf_setup
	perf_run send_bw -s 4096 -n 1000
	check_run bw 4096 1000
}

test_write_lat() {
	perf_setup
	perf_run write_lat -s 8 -n 300
	check_run lat 8 300
	grep -q 'latency is round trip / 2' "$OUT/cli" || fail "write_lat does not say RTT/2"
	grep -q '"lat_kind": "half_round_trip"' "$OUT/json" || fail "JSON lat_kind"
}

test_read_lat() {
	perf_setup
	perf_run read_lat -s 64 -n 300
	check_run lat 64 300
	grep -q '"lat_kind": "round_trip"' "$OUT/json" || fail "JSON lat_kind"
}

test_send_lat() {
	perf_setup
	perf_run send_lat -s 8 -n 300
	check_run lat 8 300
}

test_atomic_lat() {
	perf_setup
	perf_run atomic_lat -n 300
	check_run lat 8 300
	perf_run atomic_lat -n 100 -A CMP_AND_SWAP
	check_run lat 8 100
}

# Several QPs, a post list, inline data, Gb/sec: the options reach the data path.
test_write_bw_qps_post_list() {
	perf_setup
	perf_run write_bw -s 64 -n 4000 -q 2 -t 64 -l 8 -I 64 --report_gbits
	[ "$SRC" -eq 0 ] && [ "$CRC" -eq 0 ] || fail "exit: server $SRC, client $CRC"
	grep -q 'BW peak\[Gb/sec\]' "$OUT/cli" || fail "no Gb/sec header"
	# -n per QP, as perftest prints it (the rates count every QP's messages)
	awk '$1 == 64 && $2 == 4000 { ok = 1 } END { exit !ok }' "$OUT/cli" ||
		fail "no row of 4000 iterations"
	grep -q 'Number of qps   : 2' "$OUT/cli" || fail "banner: QPs"
	# a window that is no multiple of the post list, with the signaled WR in its last
	# slot: the loop must post a short chain rather than wait forever
	perf_run write_bw -s 64 -n 1000 -t 100 -l 16
	[ "$SRC" -eq 0 ] && [ "$CRC" -eq 0 ] || fail "-t 100 -l 16: server $SRC, client $CRC"
}

# -a: every size from 2 to 2^23, in order, one row each.
test_write_bw_all_sizes() {
	perf_setup
	perf_run write_bw -a -n 4
	[ "$SRC" -eq 0 ] && [ "$CRC" -eq 0 ] || fail "exit: server $SRC, client $CRC"
	local sizes
	sizes=$(result_lines bw | awk '{ printf "%s ", $1 }')
	local want="" s
	for ((s = 2; s <= 8388608; s *= 2)); do want+="$s "; done
	[ "$sizes" = "$want" ] || fail "sizes: $sizes"
	$PY -c 'import json,sys; assert len(json.load(open(sys.argv[1]))["results"]) == 23' \
		"$OUT/json" || fail "JSON: not 23 results"
}

# -D: a run by time reports what it completed (iterations vary; at least one).
test_send_bw_duration() {
	perf_setup
	perf_run send_bw -s 1024 -D 1
	[ "$SRC" -eq 0 ] && [ "$CRC" -eq 0 ] || fail "exit: server $SRC, client $CRC"
	result_lines bw | awk '$1 == 1024 && $2 > 0 { ok = 1 } END { exit !ok }' ||
		fail "no -D row"
}

# A client of another test, and a path MTU the link cannot carry: refused, in words.
test_refusals() {
	perf_setup
	local spid rc=0
	ns_bg "$NS_A" spid timeout 30 "$PWD/$B/bin/blue_write_bw" -d "$IF_A" --timeout 10 \
		>"$OUT/srv" 2>&1
	ns_exec "$NS_B" timeout 30 "$PWD/$B/bin/blue_read_bw" -d "$IF_B" --timeout 10 -n 10 \
		"$IP_A" >"$OUT/cli" 2>&1 || rc=$?
	cat "$OUT/cli"
	[ "$rc" -ne 0 ] || fail "a read_bw client of a write_bw server succeeded"
	grep -q 'this server runs write_bw, the client asked for read_bw' "$OUT/cli" ||
		fail "no reason given"
	wait "$spid" && fail "the server succeeded"
	rc=0
	ns_exec "$NS_B" timeout 30 "$PWD/$B/bin/blue_write_bw" -d "$IF_B" --timeout 5 -m 4096 \
		-n 10 "$IP_A" >"$OUT/cli" 2>&1 || rc=$?
	cat "$OUT/cli"
	[ "$rc" -ne 0 ] || fail "path MTU 4096 on a 1500-byte link succeeded"
	grep -q 'path MTU 4096 is more than' "$OUT/cli" || fail "no reason given"
}

# The data check can fail: a byte changed after its CRC-32 was taken (WRITE and SEND: in
# the source; READ: in what arrived) fails the run on both sides, with no figure.
test_data_check_fails() {
	perf_setup
	local t
	for t in write_bw send_bw read_bw; do
		perf_run "$t" -s 4096 -n 50 --inject-mismatch
		[ "$CRC" -ne 0 ] || fail "$t: a corrupted run passed on the client"
		grep -q 'data check failed' "$OUT/cli" "$OUT/srv" || fail "$t: no 'data check failed'"
		[ -z "$(result_lines bw)" ] || fail "$t: a corrupted run printed a figure"
		if [ "$t" != read_bw ]; then
			[ "$SRC" -ne 0 ] || fail "$t: the server passed corrupted data"
		fi
	done
}

# -e: both sides sleep on their completion channel when idle instead of busy-polling
# (what make bench counts instructions with); the data must still flow and check out.
test_events() {
	perf_setup
	SRV_ARGS=-e perf_run write_bw -s 4096 -n 500 -t 16 -e
	check_run bw 4096 500
	SRV_ARGS=-e perf_run send_lat -s 8 -n 200 -e
	check_run lat 8 200
}

# --report-interval-us (the congestion-control bench's per-flow goodput): one CSV row per
# QP per interval whose bytes add up, per QP, to exactly what that QP wrote (-n x -s);
# times CLOCK_MONOTONIC and never going back; --cq-mod 1 signals every WR; --linger-ms
# keeps the QPs in the table after the run (test_write_bw_linger).
test_write_bw_flow_report() {
	perf_setup
	perf_run write_bw -s 4096 -n 3000 -q 3 -t 16 --cq-mod 1 \
		--report-interval-us 1000 --report-file "$OUT/flows.csv"
	[ "$SRC" -eq 0 ] && [ "$CRC" -eq 0 ] || fail "exit: server $SRC, client $CRC"
	grep -q 'CQ Moderation   : 1' "$OUT/cli" || fail "banner: CQ moderation not 1"
	head -1 "$OUT/flows.csv" | grep -qx 't_us,qp,qpn,bytes' || fail "no CSV header"
	$PY - "$OUT/flows.csv" 3 $((3000 * 4096)) <<'PYEOF' || fail "flow report is wrong"
import sys, time
path, nq, want = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = [l.strip().split(",") for l in open(path).readlines()[1:]]
per, last_t, qpns = {}, {}, {}
now_us = time.clock_gettime(time.CLOCK_MONOTONIC) * 1e6
for t, q, qpn, b in rows:
    t, q, b = int(t), int(q), int(b)
    assert t <= now_us, "a time after now: %d (monotonic now %d)" % (t, now_us)
    assert t >= last_t.get(q, 0), "QP %d: time went back at %d" % (q, t)
    last_t[q] = t
    per[q] = per.get(q, 0) + b
    qpns.setdefault(q, qpn)
    assert qpns[q] == qpn, "QP %d changed its QPN" % q
print("per-QP bytes:", per, "rows:", len(rows))
assert sorted(per) == list(range(nq)), "QPs %s, expected 0..%d" % (sorted(per), nq - 1)
for q, b in per.items():
    assert b == want, "QP %d: %d bytes in the report, it wrote %d" % (q, b, want)
# more than the start and the end row per QP: the intervals were written as it ran
assert len(rows) > 2 * nq, "only %d rows" % len(rows)
PYEOF
}

# --linger-ms: after the run the server's QPs stay in the QP table, counters and all, so
# a bench can read them (bluectl qp list --json); then the program exits 0 by itself.
test_write_bw_linger() {
	local spid rc=0
	perf_setup
	ns_bg "$NS_A" spid timeout 60 "$PWD/$B/bin/blue_write_bw" -d "$IF_A" --timeout 20 \
		--linger-ms 4000 >"$OUT/srv" 2>&1
	ns_exec "$NS_B" timeout 60 "$PWD/$B/bin/blue_write_bw" -d "$IF_B" --timeout 20 -s 4096 \
		-n 1000 -q 2 "$IP_A" >"$OUT/cli" 2>&1 || fail "client failed: $(tail -3 "$OUT/cli")"
	wait_for_line "$OUT/srv" 'LINGER' 10 "$spid" || fail "no LINGER line: $(cat "$OUT/srv")"
	ns_exec "$NS_A" "$BLUECTL" qp list "$IF_A" --json >"$OUT/qps.json"
	kill -0 "$spid" || fail "the server did not stay"
	$PY - "$OUT/qps.json" $((1000 * 4096)) <<'PYEOF' || fail "QPs not kept"
import json, sys
qps = json.load(open(sys.argv[1]))["qps"]
print([(q["qpn"], q["state"], q["rx_bytes"]) for q in qps])
assert len(qps) == 2, "%d QPs in the table during the linger, expected 2" % len(qps)
for q in qps:
    assert q["rx_bytes"] >= int(sys.argv[2]), "QP %s: rx_bytes %s" % (q["qpn"], q["rx_bytes"])
PYEOF
	wait "$spid" || rc=$?
	[ "$rc" -eq 0 ] || fail "the server exited $rc after its linger"
	grep -q 'data verified' "$OUT/srv" || fail "the server verified no data"
}
