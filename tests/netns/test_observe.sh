# shellcheck shell=bash
# Observability of a live transport, with standard tools, on real netdevs: two
# namespaces joined by a veth pair (or through the fault injector), blue attached on
# both ends, blue_xfer moving data between them.
#  - the USDT probes are in the binaries, each with one argument count at every site;
#  - `bpftool map dump` of the pinned qp_ctx shows the PSNs advancing mid-transfer;
#  - bluectl's --json (qp list, qp show, stats, watch, diag, metrics) parses and agrees
#    with what bpftool reads from the same maps, and names every field of the QP context;
#  - a scrape of `bluectl metrics --listen` over HTTP is valid Prometheus text (promtool
#    check metrics, and a strict parser) and agrees with the maps;
#  - `bluectl diag on` makes XDP drop events and latency histograms appear, `diag off`
#    stops them, at run time;
#  - each bpftrace script in tools/trace prints what it promises: qpstate.bt and lat.bt on
#    a clean transfer, retrans.bt and naks.bt under injected loss, xdpdrops.bt on
#    malformed frames.
# Run: B=build bash tests/lib/runner.sh tests/netns/test_observe.sh [test_name...]
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh
# shellcheck source=tests/lib/fault.sh
source tests/lib/fault.sh
# shellcheck source=tests/lib/trace.sh
source tests/lib/trace.sh

BLUECTL=$PWD/$B/bin/bluectl
XFER=$PWD/$B/bin/blue_xfer
TRACE=$PWD/tools/trace
PY=/usr/bin/python3
PROM_CHECK=$PWD/tests/lib/prom_check.py
IP_A=10.201.81.1	# server
IP_B=10.201.81.2	# client

# obs_setup: namespaces and interfaces named with the PID, blue attached natively on
# both ends. Sets NS_A NS_B IF_A IF_B PIN_A PIN_B SRV_OUT CLI_OUT.
obs_setup() {
	netns_setup obs "$IP_A" "$IP_B"
	need_bins "$BLUECTL" "$XFER"
	PIN_A=$(ns_exec "$NS_A" "$BLUECTL" pin-dir "$IF_A")
	PIN_B=$(ns_exec "$NS_B" "$BLUECTL" pin-dir "$IF_B")
	blue_attach "$NS_A" "$IF_A" >/dev/null
	blue_attach "$NS_B" "$IF_B" >/dev/null
	SRV_OUT=$(mktemp)
	CLI_OUT=$(mktemp)
	on_exit "rm -f $SRV_OUT $CLI_OUT"
}


show_logs() {
	echo "--- server:"
	tail -15 "$SRV_OUT"
	echo "--- client:"
	tail -15 "$CLI_OUT"
}

bluectl_a() { ns_exec "$NS_A" "$BLUECTL" "$@"; }
bluectl_b() { ns_exec "$NS_B" "$BLUECTL" "$@"; }

# xfer CLIENT_ARGS...: one bounded blue_xfer run, server in A and client in B
# (xfer_ab, tests/lib/netns.sh); both must pass.
xfer() {
	xfer_ab -- "$@"
	[ "$CRC" -eq 0 ] && [ "$SRC" -eq 0 ] || fail "blue_xfer $* exited $CRC (server $SRC)"
	grep -q '^RESULT: PASS' "$CLI_OUT" || fail "blue_xfer $*: no PASS"
}

# junk NS IP N: N UDP datagrams of 3 bytes to the RoCEv2 port: too short for a BTH, so
# XDP drops each as drop_trunc_bth (14 + 20 + 8 + 3 = 45 bytes).
junk() {
	local i
	for ((i = 0; i < $3; i++)); do
		ns_exec "$1" bash -c "echo hi >/dev/udp/$2/4791"
	done
}

# roce_unknown NS IP N: N well-formed RoCEv2 SEND-only packets (BTH + ICRC, no
# payload) for QPN 0x123456, which nobody owns: drop_unknown_qpn.
roce_unknown() {
	ns_exec "$1" "$PY" -c '
import socket, struct, sys
bth = struct.pack("!BBHII", 0x04, 0x00, 0xffff, 0x123456, 0x000001)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(int(sys.argv[2])):
    s.sendto(bth + b"\0\0\0\0", (sys.argv[1], 4791))
' "$2" "$3"
}

# json_check JSON PYTHON...: run the python code with `d` the parsed JSON (stdin).
json_check() {
	local code=$1
	shift
	"$PY" -c "import json, sys
d = json.load(sys.stdin)
$code" "$@"
}

# --- the probes ------------------------------------------------------------------

test_observe_probes_in_binaries() {
	[ -x "$XFER" ] && [ -x "$BLUECTL" ] || fail "build first"
	local want
	# name:arguments, as runtime/probes.h documents them
	want="qp_state:3 post_send:5 post_recv:3 completion:5 retransmit:4 nak_sent:3 \
nak_rcvd:3 rnr:4 cnp:3 timer:4 cm_connected:3 cc_rate:4 cc_window:4 cnp_sent:3 tune:4"
	"$PY" - "$XFER" "$want" "$BLUECTL" "xdp_drop:4" <<'EOF' || fail "USDT probes wrong"
import collections, re, subprocess, sys
ok = True
for binary, want in zip(sys.argv[1::2], sys.argv[2::2]):
    notes = subprocess.run(["readelf", "-n", binary], capture_output=True, text=True,
                           check=True).stdout
    sites = collections.defaultdict(list)
    for m in re.finditer(r"Provider: (\S+)\n\s+Name: (\S+)\n.*\n\s+Arguments: ?([^\n]*)", notes):
        if m.group(1) == "blue":
            sites[m.group(2)].append(len(m.group(3).split()))
    print(binary, {k: v for k, v in sorted(sites.items())})
    for item in want.split():
        name, n = item.split(":")
        got = set(sites.get(name, []))
        if got != {int(n)}:
            # bpftrace refuses an argument that one site of a probe lacks
            print("blue:%s: argument counts %s at %d sites, want %s everywhere"
                  % (name, sorted(got), len(sites.get(name, [])), n))
            ok = False
    for name, counts in sites.items():
        if len(set(counts)) != 1:
            print("blue:%s: sites disagree on the argument count: %s" % (name, counts))
            ok = False
sys.exit(0 if ok else 1)
EOF
	# xdpdrops.bt names the reasons of include/blue/stats.h, in its order
	obs_setup
	bluectl_a --json stats "$IF_A" | json_check '
import re
names = list(d["stats"])
bt = dict((int(n), s) for n, s in re.findall(r"@reason\[(\d+)\] = \"(\w+)\"",
                                              open(sys.argv[1]).read()))
assert [bt.get(i) for i in range(len(names))] == names, (bt, names)
print("xdpdrops.bt reasons match bluectl:", len(names))
' "$TRACE/xdpdrops.bt" || fail "xdpdrops.bt's reason table is out of date"
	# every script starts with its usage
	local s
	for s in qpstate retrans lat naks xdpdrops cc; do
		head -30 "$TRACE/$s.bt" | grep -q ' \* Usage:' || fail "$s.bt: no usage header"
	done
}

# --- the map, live -------------------------------------------------------------------

# map_dump PIN: the pinned qp_ctx's QPs in use as JSON lines {slot: value} via bpftool.
qp_dump() {
	bpftool -j map dump pinned "$1/qp_ctx" | "$PY" -c '
import json, sys
for e in json.load(sys.stdin):
    v = e.get("formatted", e)["value"]	# with BTF, bpftool adds the decoded entry
    if v["qpn"]:
        print(json.dumps(v))
'
}

test_observe_psns_advance_in_map() {
	obs_setup
	local spid cpid d1 d2
	ns_bg "$NS_A" spid "$XFER" -d "$IF_A" -T 20 >"$SRV_OUT" 2>&1
	ns_bg "$NS_B" cpid "$XFER" -d "$IF_B" -T 20 --op write --size 4K --iters 10000000 \
		--lat-iters 0 --progress "$IP_A" >"$CLI_OUT" 2>&1
	wait_for_line "$CLI_OUT" '^\[progress\] write' 15 || { show_logs; fail "no transfer"; }
	d1=$(mktemp) d2=$(mktemp)
	on_exit "rm -f $d1 $d1.a $d2 $d2.a"
	qp_dump "$PIN_B" >"$d1"
	qp_dump "$PIN_A" >"$d1.a"
	sleep 0.3
	qp_dump "$PIN_B" >"$d2"
	qp_dump "$PIN_A" >"$d2.a"
	kill "$cpid"
	echo "client QP, two bpftool dumps 0.3 s apart:"
	cat "$d1" "$d2"
	"$PY" - "$d1" "$d2" "$d1.a" "$d2.a" <<'EOF' || fail "the PSNs did not advance in the map"
import json, sys
def load(p):
    return {v["qpn"]: v for v in map(json.loads, open(p))}
def ahead(new, old):	# 24-bit PSN arithmetic
    d = (new - old) & 0xffffff
    return 0 < d < 0x800000
c1, c2, s1, s2 = map(load, sys.argv[1:5])
assert len(c1) == 1 and c1.keys() == c2.keys(), (c1.keys(), c2.keys())
assert len(s1) == 1 and s1.keys() == s2.keys(), (s1.keys(), s2.keys())
for q in c1:
    a, b = c1[q], c2[q]
    assert a["state"] == 3 and a["type"] == 2, a
    assert ahead(b["sq_psn"], a["sq_psn"]), ("sq_psn", a["sq_psn"], b["sq_psn"])
    assert ahead(b["una_psn"], a["una_psn"]), ("una_psn", a["una_psn"], b["una_psn"])
    assert b["tx_pkts"] > a["tx_pkts"] and b["tx_bytes"] > a["tx_bytes"]
    print("client QP 0x%06x: sq_psn 0x%06x -> 0x%06x, una_psn 0x%06x -> 0x%06x, tx_pkts %d -> %d"
          % (q, a["sq_psn"], b["sq_psn"], a["una_psn"], b["una_psn"], a["tx_pkts"], b["tx_pkts"]))
for q in s1:
    a, b = s1[q], s2[q]
    assert ahead(b["rq_psn"], a["rq_psn"]), ("rq_psn", a["rq_psn"], b["rq_psn"])
    assert ahead(b["msn"], a["msn"]), ("msn", a["msn"], b["msn"])
    assert b["xdp_rx_pkts"] > a["xdp_rx_pkts"]
    print("server QP 0x%06x: rq_psn 0x%06x -> 0x%06x, msn %d -> %d, xdp_rx_pkts %d -> %d"
          % (q, a["rq_psn"], b["rq_psn"], a["msn"], b["msn"], a["xdp_rx_pkts"], b["xdp_rx_pkts"]))
EOF
}

# Held QPs: nothing moves, so bluectl and bpftool must read the same numbers.
test_observe_bluectl_json_agrees_with_map() {
	obs_setup
	local spid crc=0 dump rows
	ns_bg "$NS_A" spid "$XFER" -d "$IF_A" -T 20 --hold 30 >"$SRV_OUT" 2>&1
	ns_exec "$NS_B" timeout 60 "$XFER" -d "$IF_B" -T 20 --qps 3 --op write,read --size 4K \
		--iters 300 --lat-iters 0 "$IP_A" >"$CLI_OUT" 2>&1 || crc=$?
	wait_for_line "$SRV_OUT" '^HOLDING: 3 QPs' 10 || { show_logs; fail "server not holding"; }
	[ "$crc" -eq 0 ] || { show_logs; fail "client exited $crc"; }
	dump=$(mktemp)
	on_exit "rm -f $dump $dump.*"
	qp_dump "$PIN_A" >"$dump"
	bluectl_a --json qp list "$IF_A" >"$dump.list"
	bluectl_a --json qp show "$IF_A" "$(head -1 "$dump" | json_check 'print(d["qpn"])')" \
		>"$dump.show"
	bluectl_a --json stats "$IF_A" >"$dump.stats"
	bpftool -j map dump pinned "$PIN_A/dev_stats" >"$dump.dev"
	bpftool -j map dump pinned "$PIN_A/stats" >"$dump.xdp"
	bpftool -j btf dump map pinned "$PIN_A/qp_ctx" value >"$dump.btf"
	bluectl_a --json watch "$IF_A" --count 2 --interval 0.2 >"$dump.watch"
	bluectl_a --json diag show "$IF_A" >"$dump.diag"
	bluectl_a --json metrics "$IF_A" >"$dump.metrics"
	bluectl_a --json metrics "$IF_A" --expose-psn --expose-peers >"$dump.metrics-all"
	bluectl_a qp list "$IF_A" | tee "$dump.text"
	"$PY" - "$dump" "$spid" "$IP_B" <<'EOF' || fail "bluectl --json disagrees with the maps"
import json, sys
base, spid, ip_b = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def load(suffix):
    return json.load(open(base + suffix))
m = {v["qpn"]: v for v in map(json.loads, open(base))}
lst, show, stats = load(".list"), load(".show"), load(".stats")
# every member of struct blue_qp_ctx (its BTF, from the map) but padding and spare room
btf = load(".btf")["types"]
ctx = next(t for t in btf if t.get("kind") == "STRUCT" and t.get("name") == "blue_qp_ctx")
members = [x["name"] for x in ctx["members"]
           if not x["name"].startswith(("reserved", "pad"))]
assert len(m) == 3, m.keys()
assert sorted(q["qpn"] for q in lst["qps"]) == sorted(m), "QPNs differ"
for q in lst["qps"] + [show]:
    v = m[q["qpn"]]
    missing = [k for k in members if k not in q]
    assert not missing, "bluectl does not show %s" % missing
    wrong = {k: (q[k], v[k]) for k in members if q[k] != v[k]}
    assert not wrong, "QP 0x%06x: bluectl vs bpftool %s" % (q["qpn"], wrong)
    assert q["state_name"] == "RTS" and q["peer_addr"] == ip_b, q
print("qp list/show: %d QPs, %d fields each, equal to bpftool's dump" % (len(m), len(members)))
# the peer view: one peer, three QPs, in RTS
assert len(lst["peers"]) == 1 and lst["peers"][0]["peer"] == ip_b, lst["peers"]
p = lst["peers"][0]
assert p["qps"] == 3 and p["states"] == {"RTS": 3}, p
assert p["tx_pkts"] == sum(v["tx_pkts"] for v in m.values())
assert p["rx_bytes"] == sum(v["rx_bytes"] for v in m.values())
# XDP verdicts: bpftool's per-CPU values summed
xdp = [e.get("formatted", e) for e in load(".xdp")]
for e in xdp:
    r = e["key"]
    pkts = sum(c["value"]["pkts"] for c in e["values"])
    name = list(stats["stats"])[r]
    assert stats["stats"][name]["pkts"] == pkts, (name, stats["stats"][name], pkts)
assert stats["stats"]["redirect"]["pkts"] >= sum(v["xdp_rx_pkts"] for v in m.values())
# dev_stats: the counters that do not move while the QPs are held
dev = load(".dev")[0]
dev = dev.get("formatted", dev)["value"]
for sect, keys in (("hal", ["rx_frames", "tx_frames", "tx_kicks", "rx_batches", "frames_total"]),
                   ("eng", ["rx_frames", "tx_frames", "rx_dup", "rx_seq_err"])):
    out = stats["hal" if sect == "hal" else "engine"]
    for k in keys:
        assert out[k] == dev[sect][k], (sect, k, out[k], dev[sect][k])
assert stats["device"]["owner_pid"] == dev["owner_pid"] == spid, (stats["device"], spid)
assert stats["engine"]["rx_frames"] >= sum(v["rx_pkts"] for v in m.values()) > 0
assert stats["conn_setup"]["count"] == sum(dev["conn_setup"]["bucket"]) == 3, stats["conn_setup"]
print("stats: XDP verdicts and dev_stats equal to bpftool's; owner pid", spid)
w = [json.loads(l) for l in open(base + ".watch")]
assert [x["refresh"] for x in w] == [1, 2] and len(w[1]["qps"]["qps"]) == 3, w
diag = load(".diag")
assert diag["flags"] == 0 and not diag["drops"] and not diag["latency"], diag
met, met_all = load(".metrics"), load(".metrics-all")
names = {f["name"] for f in met["metrics"]}
assert {"blue_qp_rx_packets_total", "blue_xdp_packets_total",
        "blue_op_latency_seconds"} <= names, names
assert "blue_qp_sq_psn" not in names, "PSNs without --expose-psn"
assert not any("peer" in x["labels"] for f in met["metrics"] for x in f["samples"])
names_all = {f["name"] for f in met_all["metrics"]}
assert {"blue_qp_sq_psn", "blue_qp_rq_psn", "blue_qp_msn"} <= names_all, names_all
assert all(x["labels"]["peer"] == ip_b for f in met_all["metrics"]
           if f["name"] == "blue_qp_info" for x in f["samples"])
print("watch, diag and metrics --json parse")
EOF
	# the text view: one row per QP, then one line for the peer
	rows=$(grep -cE "^0x[0-9a-f]{6} +RTS +RC .* $IP_B:0x[0-9a-f]{6} " "$dump.text")
	[ "$rows" -eq 3 ] || fail "qp list: $rows QP rows with the peer, want 3"
	grep -qE "^$IP_B +3 +3 +0 +0 " "$dump.text" || fail "qp list: no peer line"
	kill -USR1 "$spid"
	wait "$spid" || fail "server exited $?"
	bluectl_a --json stats "$IF_A" | json_check '
assert d["device"]["owner_pid"] == 0 and d["device"]["opens"] == 1, d["device"]
assert d["hal"]["rx_frames"] > 0, d["hal"]' || fail "dev_stats after the server closed"
}

# --- metrics over HTTP ---------------------------------------------------------------

test_observe_metrics_scrape() {
	obs_setup
	local spid mpid crc=0 body port=9464
	ns_bg "$NS_A" spid "$XFER" -d "$IF_A" -T 20 --hold 30 >"$SRV_OUT" 2>&1
	ns_exec "$NS_B" timeout 60 "$XFER" -d "$IF_B" -T 20 --qps 2 --op write --size 4K \
		--iters 200 --lat-iters 0 "$IP_A" >"$CLI_OUT" 2>&1 || crc=$?
	wait_for_line "$SRV_OUT" '^HOLDING: 2 QPs' 10 || { show_logs; fail "server not holding"; }
	[ "$crc" -eq 0 ] || { show_logs; fail "client exited $crc"; }
	body=$(mktemp)
	on_exit "rm -f $body $body.*"
	# the sequence numbers and peers too: the checks below compare them with the map
	ns_bg "$NS_A" mpid "$BLUECTL" metrics "$IF_A" --listen "$IP_A:$port" --max-requests 3 \
		--expose-psn --expose-peers >"$body.srv" 2>&1
	wait_for_line "$body.srv" '^serving' 5 || { cat "$body.srv"; fail "metrics server not up"; }
	# three requests from the other namespace: /metrics, a 404, /metrics again
	ns_exec "$NS_B" "$PY" - "http://$IP_A:$port" "$body" <<'EOF' || fail "scrape failed"
import sys, urllib.error, urllib.request
url, out = sys.argv[1], sys.argv[2]
r = urllib.request.urlopen(url + "/metrics", timeout=5)
assert r.status == 200, r.status
assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4"), r.headers
open(out, "wb").write(r.read())
try:
    urllib.request.urlopen(url + "/other", timeout=5)
    raise SystemExit("/other did not fail")
except urllib.error.HTTPError as e:
    assert e.code == 404, e.code
r = urllib.request.urlopen(url + "/metrics", timeout=5)
open(out + ".2", "wb").write(r.read())
print("scraped /metrics twice, /other 404")
EOF
	# the server stops after its 3 requests
	for ((i = 0; i < 50; i++)); do kill -0 "$mpid" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$mpid" 2>/dev/null && fail "bluectl metrics --listen did not stop after 3 requests"
	wait "$mpid" || fail "bluectl metrics exited $?"
	head -20 "$body"
	echo "... $(wc -l <"$body") lines"
	"$PY" "$PROM_CHECK" "$body" || fail "not valid Prometheus text"
	"$PY" "$PROM_CHECK" "$body.2" || fail "second scrape not valid Prometheus text"
	if command -v promtool >/dev/null; then
		promtool check metrics <"$body" || fail "promtool check metrics failed"
		echo "promtool check metrics: ok"
	else
		echo "promtool not installed (Debian package prometheus, not a dependency: it brings a server): the strict parser alone checked it"
	fi
	# the samples say what the map says
	bluectl_a --json qp list "$IF_A" >"$body.qps"
	"$PY" - "$body" "$body.qps" "$IF_A" <<'EOF' || fail "metrics disagree with the map"
import json, re, sys
text, qps, ifname = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))["qps"], sys.argv[3]
def value(name, **labels):
    want = dict(labels, ifname=ifname)
    for m in re.finditer(r"^%s\{([^}]*)\} (\S+)$" % re.escape(name), text, re.M):
        got = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        if all(got.get(k) == v for k, v in want.items()):
            return float(m.group(2))
    raise SystemExit("no sample %s%s" % (name, labels))
assert len(qps) == 2
for q in qps:
    qpn = "0x%06x" % q["qpn"]
    for field, metric in (("sq_psn", "blue_qp_sq_psn"), ("rq_psn", "blue_qp_rq_psn"),
                          ("rx_pkts", "blue_qp_rx_packets_total"),
                          ("xdp_rx_pkts", "blue_qp_xdp_rx_packets_total")):
        assert value(metric, qpn=qpn) == q[field], (metric, qpn)
    assert value("blue_qp_info", qpn=qpn, state="RTS", path_mtu="1024") == 1
assert value("blue_xdp_packets_total", reason="redirect", action="redirect") > 0
assert value("blue_qps", state="RTS") == 2
assert value("blue_conn_setup_seconds_count") == 2
assert value("blue_conn_setup_seconds_bucket", le="+Inf") == 2
assert value("blue_op_latency_seconds_count", opcode="write") == 0   # diag was off
for q in qps:
    assert value("blue_qp_info", qpn="0x%06x" % q["qpn"], peer=q["peer_addr"],
                 peer_qpn="0x%06x" % q["peer_qpn"]) == 1
print("metrics agree with the QP table")
EOF
	# by default, nothing a spoofer needs: no PSN or MSN series, no peer address or QPN
	ns_bg "$NS_A" mpid "$BLUECTL" metrics "$IF_A" --listen "$IP_A:$((port + 1))" \
		--max-requests 1 >"$body.srv2" 2>&1
	wait_for_line "$body.srv2" '^serving' 5 || { cat "$body.srv2"; fail "metrics server not up"; }
	ns_exec "$NS_B" "$PY" - "http://$IP_A:$((port + 1))/metrics" "$body.default" \
		"$body.qps" <<'EOF' || fail "the default exposition shows what a spoofer needs"
import json, re, sys, urllib.request
text = urllib.request.urlopen(sys.argv[1], timeout=5).read().decode()
open(sys.argv[2], "w").write(text)
qps = json.load(open(sys.argv[3]))["qps"]
names = set(re.findall(r"^(blue_\w+)", text, re.M))
seq = {"blue_qp_sq_psn", "blue_qp_una_psn", "blue_qp_rq_psn", "blue_qp_msn",
       "blue_qp_last_nak_psn"}
assert not names & seq, names & seq
assert not re.search(r'[{,](peer|peer_qpn)="', text), "peer labels in the default"
for q in qps:
    assert q["peer_addr"] not in text, q["peer_addr"]
    # the QP is still there, by its local QPN
    assert re.search(r'^blue_qp_rx_packets_total\{[^}]*qpn="0x%06x"' % q["qpn"], text, re.M)
print("default exposition: no sequence numbers, no peers; %d families" % len(names))
EOF
	wait "$mpid" || fail "bluectl metrics exited $?"
	"$PY" "$PROM_CHECK" "$body.default" || fail "the default exposition is not valid"
	kill -USR1 "$spid"
	wait "$spid" || fail "server exited $?"
}

# --- diag on / off -------------------------------------------------------------------

# drop_events NS IF SECONDS [COUNT]: the drop events `bluectl drops --json` reads within
# the time (one JSON line each) into $DROPS; starts it first and waits until it listens,
# then runs the command in $DROP_CMD.
drops_during() {
	local ns=$1 ifn=$2 secs=$3 count=${4:-} out dpid
	out=$(mktemp)
	on_exit "rm -f $out $out.err"
	ns_bg "$ns" dpid "$BLUECTL" --json drops "$ifn" --timeout "$secs" ${count:+--count $count} \
		>"$out" 2>"$out.err"
	wait_for_line "$out.err" 'waiting for XDP drop events' 5 || { cat "$out.err"; fail "drops"; }
	eval "$DROP_CMD"
	wait "$dpid" || fail "bluectl drops exited $?"
	DROPS=$(cat "$out")
}

lat_count() {	# NS IF OP: the latency histogram's count for OP in dev_stats
	ns_exec "$1" "$BLUECTL" --json stats "$2" | json_check 'print(d["latency"][sys.argv[1]]["count"])' "$3"
}

test_observe_diag_switch() {
	obs_setup
	local n
	bluectl_a --json diag show "$IF_A" | json_check 'assert d["flags"] == 0, d' ||
		fail "diagnostics are not off after attach"

	# off: XDP counts the drops, but emits no events; no latency is recorded
	DROP_CMD="junk $NS_B $IP_A 3"
	drops_during "$NS_A" "$IF_A" 1.5
	[ -z "$DROPS" ] || fail "drop events with diag off: $DROPS"
	bluectl_a --json stats "$IF_A" | json_check '
assert d["stats"]["drop_trunc_bth"]["pkts"] == 3, d["stats"]["drop_trunc_bth"]
assert d["diag"]["drop_events"] == 0, d["diag"]' || fail "counters with diag off"
	xfer --op write --size 64 --iters 200 --lat-iters 0
	[ "$(lat_count "$NS_B" "$IF_B" write)" -eq 0 ] || fail "latency recorded with diag off"
	bluectl_b --json stats "$IF_B" | json_check 'assert d["conn_setup"]["count"] == 1, d' ||
		fail "the connection setup was not timed"

	# on, at run time: events and histograms appear
	bluectl_a diag on "$IF_A"
	bluectl_b diag on "$IF_B"
	DROP_CMD="junk $NS_B $IP_A 3; roce_unknown $NS_B $IP_A 2"
	drops_during "$NS_A" "$IF_A" 10 5
	echo "$DROPS"
	"$PY" -c '
import json, sys
ev = [json.loads(l) for l in sys.argv[1].splitlines()]
r = [e["reason"] for e in ev]
assert r.count("drop_trunc_bth") == 3 and r.count("drop_unknown_qpn") == 2, r
assert all(e["len"] == 45 for e in ev if e["reason"] == "drop_trunc_bth"), ev
assert all(e["dqpn"] == 0x123456 for e in ev if e["reason"] == "drop_unknown_qpn"), ev
' "$DROPS" || fail "wrong drop events"
	xfer --op write,read --size 64 --iters 200 \
		--lat-iters 0
	n=$(lat_count "$NS_B" "$IF_B" write)
	echo "latency histogram (client): write $n, read $(lat_count "$NS_B" "$IF_B" read)"
	[ "$n" -eq 200 ] || fail "write latencies: $n, want 200"
	[ "$(lat_count "$NS_B" "$IF_B" read)" -eq 200 ] || fail "read latencies"
	[ "$(lat_count "$NS_A" "$IF_A" write)" -eq 0 ] || fail "the responder recorded latency"
	bluectl_b stats "$IF_B" | grep -E '^  (write|read) ' || fail "no timing lines in stats"

	# off again: both stop
	bluectl_a diag off "$IF_A"
	bluectl_b diag off "$IF_B"
	DROP_CMD="junk $NS_B $IP_A 2"
	drops_during "$NS_A" "$IF_A" 1.5
	[ -z "$DROPS" ] || fail "drop events after diag off: $DROPS"
	xfer --op write --size 64 --iters 100 --lat-iters 0
	[ "$(lat_count "$NS_B" "$IF_B" write)" -eq 200 ] || fail "latency recorded after diag off"
	bluectl_a --json stats "$IF_A" | json_check '
assert d["stats"]["drop_trunc_bth"]["pkts"] == 8, d["stats"]["drop_trunc_bth"]
assert d["diag"]["drop_events"] == 5 and d["diag"]["drop_events_lost"] == 0, d["diag"]' ||
		fail "drop counters"
}

# --- bpftrace ------------------------------------------------------------------------

test_observe_bpftrace_qpstate_and_lat() {
	obs_setup
	local qs lat qpid lpid n
	qs=$(mktemp) lat=$(mktemp)
	on_exit "rm -f $qs $lat"
	bt_start qpid "$qs" "$TRACE/qpstate.bt" "$XFER"
	bt_start lpid "$lat" "$TRACE/lat.bt" "$XFER"
	xfer --op write,read --size 64 --iters 500 \
		--lat-iters 100
	bt_stop "$qpid" "$qs"
	bt_stop "$lpid" "$lat"
	# both ends' QPs went RESET -> INIT -> RTR -> RTS, each line naming its QP
	for t in "RESET -> INIT" "INIT -> RTR" "RTR -> RTS"; do
		n=$(grep -cE "^[0-9]+ +[0-9]+ +blue_xfer +0x[0-9a-f]{6} $t$" "$qs")
		[ "$n" -eq 2 ] || fail "qpstate.bt: $n lines '$t', want 2"
	done
	grep -q '^@transitions\[RTR, RTS\]: 2$' "$qs" ||
		fail "qpstate.bt: no summary; it ended: $(bt_tail "$qs")"
	# every WR of the client timed, per opcode: 500 + 100 latency-round WRs each
	grep -q '^@completions\[write, 0\]: 600$' "$lat" || fail "lat.bt: write completions"
	grep -q '^@completions\[read, 0\]: 600$' "$lat" || fail "lat.bt: read completions"
	grep -q '^@lat_us\[write\]:' "$lat" || fail "lat.bt: no write histogram"
	grep -q '^@lat_us\[read\]:' "$lat" || fail "lat.bt: no read histogram"
	"$PY" - "$lat" <<'EOF' || fail "lat.bt histograms do not add up"
import re, sys
text = open(sys.argv[1]).read()
for op in ("write", "read"):
    block = text.split("@lat_us[%s]:" % op)[1].split("\n\n")[0]
    n = sum(int(c) for c in re.findall(r"^\[[^\]\n]+\)\s+(\d+) \|", block, re.M))
    assert n == 600, (op, n)
print("lat.bt: 600 writes and 600 reads in the histograms")
EOF
	grep -q '^@unmatched: [1-9]' "$lat" && fail "lat.bt: completions without their post"
	return 0
}

test_observe_bpftrace_retrans_and_naks_under_loss() {
	[ "$(id -u)" -eq 0 ] || skip "needs root"
	[ -x "$FAULT_BIN" ] || fail "$FAULT_BIN not built"
	local rt nk rpid npid fpid spid cpid stats crc=0 qpn show retx lines
	fault_topo 10.201.82.1 10.201.82.2
	blue_attach "$FT_NS_A" "$FT_IF_A" >/dev/null
	blue_attach "$FT_NS_B" "$FT_IF_B" >/dev/null
	rt=$(mktemp) nk=$(mktemp) stats=$(mktemp -u) SRV_OUT=$(mktemp) CLI_OUT=$(mktemp)
	on_exit "rm -f $rt $nk $SRV_OUT $CLI_OUT"
	bt_start rpid "$rt" "$TRACE/retrans.bt" "$XFER"
	bt_start npid "$nk" "$TRACE/naks.bt" "$XFER"
	# 2% of RoCE frames lost each way, seeded
	fault_start fpid "$stats" --loss 0.02 --seed 11
	# both hold their QPs, so a lost last ACK is still answered (see test_fault.sh)
	ns_bg "$FT_NS_A" spid "$XFER" -d "$FT_IF_A" -T 20 --hold 30 >"$SRV_OUT" 2>&1
	ns_bg "$FT_NS_B" cpid "$XFER" -d "$FT_IF_B" -T 20 --op write,read --size 4K --iters 1000 \
		--lat-iters 0 --hold 30 "$FT_IP_A" >"$CLI_OUT" 2>&1
	wait_for_line "$CLI_OUT" '^HOLDING' 60 || { show_logs; fail "the client did not finish"; }
	qpn=$(ns_exec "$FT_NS_B" "$BLUECTL" qp list "$FT_IF_B" | awk 'NR == 2 { print $1 }')
	show=$(ns_exec "$FT_NS_B" "$BLUECTL" --json qp show "$FT_IF_B" "$qpn")
	kill -USR1 "$cpid" "$spid"
	wait "$cpid" || crc=$?
	wait "$spid" || true
	fault_stop "$fpid"
	echo "blue_fault: $(grep -E '^all\.(rx|drop_random) ' "$stats" | paste -sd' ')"
	bt_stop "$rpid" "$rt"
	bt_stop "$npid" "$nk"
	[ "$crc" -eq 0 ] || { show_logs; fail "client exited $crc"; }
	grep -q '^RESULT: PASS' "$CLI_OUT" || { show_logs; fail "transfer failed under loss"; }
	[ "$(fault_stat "$stats" all.drop_random)" -gt 0 ] || fail "nothing was lost"
	# one line per retransmission, with a reason and a PSN range
	lines=$(grep -cE "^[0-9]+ +$cpid +$qpn (timeout|nak|rnr) +0x[0-9a-f]{6}\.\.0x[0-9a-f]{6} \([0-9]+\)$" "$rt")
	retx=$(json_check 'print(d["retransmits"])' <<<"$show")
	echo "client QP $qpn: $lines retransmit lines, the map counts $retx retransmits"
	[ "$lines" -gt 0 ] || fail "retrans.bt printed no retransmission of the client QP"
	# every retransmission the map counts fired the probe (selective retransmission also
	# fires it for each packet it resends, which the counter does not count)
	[ "$retx" -gt 0 ] && [ "$lines" -ge "$retx" ] || fail "retrans.bt saw $lines, qp_ctx counts $retx"
	grep -qE "^@retransmits\[$cpid, [0-9]+, (timeout|nak|rnr)\]: [0-9]+$" "$rt" ||
		fail "retrans.bt: no per-QP summary; it ended: $(bt_tail "$rt")"
	# the receiver NAKs the holes, the sender gets the NAKs
	grep -qE "^[0-9]+ +[0-9]+ +sent +0x[0-9a-f]{6} 0x[0-9a-f]{6} 0x[0-9a-f]{2} [a-z_]+$" "$nk" ||
		fail "naks.bt: no NAK sent"
	grep -qE "^[0-9]+ +[0-9]+ +rcvd +0x[0-9a-f]{6} 0x[0-9a-f]{6} 0x[0-9a-f]{2} [a-z_]+$" "$nk" ||
		fail "naks.bt: no NAK received"
	grep -qE '^@naks\[sent, [0-9]+\]: [0-9]+$' "$nk" ||
		fail "naks.bt: no summary; it ended: $(bt_tail "$nk")"
}

test_observe_bpftrace_xdpdrops() {
	obs_setup
	local out bpid dpid
	out=$(mktemp)
	on_exit "rm -f $out $out.drops"
	bluectl_a diag on "$IF_A" >/dev/null
	# bluectl drains the ring and fires blue:xdp_drop per event
	ns_bg "$NS_A" dpid "$BLUECTL" drops "$IF_A" --timeout 60 >"$out.drops" 2>&1
	wait_for_line "$out.drops" 'waiting for XDP drop events' 5 || fail "bluectl drops"
	bt_start bpid "$out" "$TRACE/xdpdrops.bt" "$BLUECTL"
	junk "$NS_B" "$IP_A" 3
	roce_unknown "$NS_B" "$IP_A" 2
	xfer --op write --size 64 --iters 100 --lat-iters 0
	# the events reach bluectl within its 200 ms poll
	wait_for_line "$out" 'drop_unknown_qpn' 5 || true
	sleep 0.5
	bt_stop "$bpid" "$out"
	kill "$dpid"
	[ "$(grep -cE '^[0-9]+ +drop_trunc_bth +0x000000 +45 +[0-9]+$' "$out")" -eq 3 ] ||
		fail "xdpdrops.bt: not 3 drop_trunc_bth lines"
	[ "$(grep -cE '^[0-9]+ +drop_unknown_qpn +0x123456 +[0-9]+ +[0-9]+$' "$out")" -eq 2 ] ||
		fail "xdpdrops.bt: not 2 drop_unknown_qpn lines"
	grep -q '^@drops\[drop_trunc_bth\]: 3$' "$out" || fail "xdpdrops.bt: no drop summary"
	# the kernel's tracepoint saw the transfer's frames redirected into AF_XDP
	grep -qE '^@redirects\[[0-9]+\]: [1-9][0-9]*$' "$out" || fail "xdpdrops.bt: no xdp:xdp_redirect"
}

# --- the command line ------------------------------------------------------------------

test_observe_bluectl_args() {
	[ -x "$BLUECTL" ] || fail "$BLUECTL not built"
	local rc args
	for args in "stats x --count 2" "qp list x --interval 1" "diag maybe x" "diag on" \
		"metrics x --max-requests 2" "metrics x --listen 1.2.3.4:5 --json" \
		"stats x --expose-psn" "qp list x --expose-peers" \
		"drops x --listen 1.2.3.4:5" "watch x --count 0" "watch x --interval -1" \
		"attach x --timeout 3"; do
		rc=0
		# shellcheck disable=SC2086
		"$BLUECTL" $args >/dev/null 2>&1 || rc=$?
		[ "$rc" -eq 2 ] || fail "'bluectl $args' exited $rc, want 2"
	done
	"$BLUECTL" --help | grep -q 'diag on|off|show IFNAME' || fail "--help lacks diag"
	# a netdev blue is not attached to: a clear error, exit 1, with --json too
	rc=0
	"$BLUECTL" --json stats blue-nonesuch >/dev/null 2>&1 || rc=$?
	[ "$rc" -eq 1 ] || fail "stats on a missing netdev exited $rc"
	obs_setup
	bluectl_a --json detach "$IF_A" | json_check 'assert d == {"ifname": sys.argv[1], "detached": True}, d' \
		"$IF_A" || fail "detach --json"
	bluectl_a --json attach "$IF_A" | json_check '
assert d["attached"] and d["mode"] == "native" and d["prog_id"] > 0, d' || fail "attach --json"
	# an unusable listen address is an error, not a hang
	rc=0
	bluectl_a metrics "$IF_A" --listen "$IP_A:notaport" >/dev/null 2>&1 || rc=$?
	[ "$rc" -eq 1 ] || fail "a bad --listen exited $rc"
}
