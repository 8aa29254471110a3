# shellcheck shell=bash
# The HTTP side of `bluectl metrics --listen`, against a device with blue attached (no
# transfer needed: the exposition is there as soon as the pins are):
#  - slow clients (one byte every 1.9 s) do not hold up another scrape: that one gets a
#    full, valid exposition within one request deadline, and each slow one is cut at its
#    own deadline (a 408, then the close) long before it has sent its request;
#  - more clients than connection slots: the oldest are dropped, a scrape gets through;
#  - malformed and oversized requests get their status (400, 405, 414, 431, 505), a log
#    line naming the client and the fault, and the close;
#  - the listen address is explicit: none, or a port alone, is refused with a message.
# The endpoint listens on 127.0.0.1 inside a namespace of the test's own.
# Run: B=build bash tests/lib/runner.sh tests/netns/test_metrics_http.sh [test_name...]
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh

BLUECTL=$PWD/$B/bin/bluectl
PY=/usr/bin/python3
PROM_CHECK=$PWD/tests/lib/prom_check.py
IP_A=10.201.82.1
IP_B=10.201.82.2
PORT=9465

# mh_setup: namespaces, blue attached on IF_A, and `bluectl metrics --listen` on
# 127.0.0.1:$PORT in NS_A (its PID in MPID, its output in MOUT, killed on exit).
mh_setup() {
	netns_setup mh "$IP_A" "$IP_B"
	need_bins "$BLUECTL"
	blue_attach "$NS_A" "$IF_A" >/dev/null
	MOUT=$(mktemp)
	on_exit "rm -f $MOUT $MOUT.*"
	ns_bg "$NS_A" MPID "$BLUECTL" metrics "$IF_A" --listen "127.0.0.1:$PORT" >"$MOUT" 2>&1
	wait_for_line "$MOUT" '^serving' 5 "$MPID" || { cat "$MOUT"; fail "metrics server not up"; }
}

# mh_stop: the server still runs, and SIGTERM ends it cleanly (exit 0: under ASan, also
# nothing leaked from the connections it served)
mh_stop() {
	kill -0 "$MPID" || fail "the server died"
	kill -TERM "$MPID"
	wait "$MPID" || { cat "$MOUT"; fail "bluectl metrics exited $? on SIGTERM"; }
}

test_metrics_http_slow_clients() {
	mh_setup
	ns_exec "$NS_A" "$PY" - "$PORT" "$MOUT.body" <<'EOF' || { cat "$MOUT"; fail "slow clients held up the scrape"; }
import socket, sys, threading, time, urllib.request
port, out = int(sys.argv[1]), sys.argv[2]
DEADLINE = 2.0      # the server's per-request deadline (BLUE_HTTP_DEADLINE_MS)
SLOW = 3            # served one at a time, three would hold a scrape three deadlines
req = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"

def trickle(st):
    # one byte every 1.9 s, each within the old per-recv timeout, until the server cuts
    # us off (bounded: the whole request would take about a minute)
    s = st["sock"]
    while st["sent"] < len(req):
        s.settimeout(1.9)
        try:
            data = s.recv(4096)
        except socket.timeout:
            data = None
        except ConnectionError:
            data = b""
        if data is not None:
            got = data
            s.settimeout(1)
            try:
                while data:
                    data = s.recv(4096)
                    got += data
            except (socket.timeout, ConnectionError):
                pass
            st["reply"], st["cut"] = got, True
            return
        try:
            s.sendall(req[st["sent"]:st["sent"] + 1])
            st["sent"] += 1
        except (BrokenPipeError, ConnectionError):
            st["cut"] = True
            return

slow = []
for i in range(SLOW):
    st = {"sock": socket.create_connection(("127.0.0.1", port), timeout=10),
          "sent": 1, "reply": None, "cut": False}
    st["sock"].sendall(req[:1])
    st["thread"] = threading.Thread(target=trickle, args=(st,))
    st["thread"].start()
    slow.append(st)
time.sleep(0.3)     # the slow ones are accepted first
try:
    # the scrape must finish within one deadline: the bound slow clients may add
    r = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=DEADLINE)
    body = r.read()
    status = r.status
except Exception as e:
    raise SystemExit("scrape beside %d slow clients failed: %r" % (SLOW, e))
for st in slow:
    st["thread"].join(120)
    assert not st["thread"].is_alive(), "a slow client never cut"
open(out, "wb").write(body)
assert status == 200, status
assert b"\n# TYPE blue_xdp_packets_total counter\n" in body, body[:200]
print("scrape beside %d slow clients: %d bytes" % (SLOW, len(body)))
for st in slow:
    # cut at its deadline: a couple of bytes in, nowhere near its whole request
    assert st["cut"] and st["sent"] < len(req), st
    assert st["reply"] is None or st["reply"].startswith(b"HTTP/1.1 408 "), st
    print("slow client cut after %d of %d bytes, reply %r" % (st["sent"], len(req),
          (st["reply"] or b"")[:30]))
EOF
	"$PY" "$PROM_CHECK" "$MOUT.body" || fail "the scrape is not valid Prometheus text"
	[ "$(grep -c '127.0.0.1:[0-9]*: request not complete within 2000 ms' "$MOUT")" -eq 3 ] ||
		{ cat "$MOUT"; fail "not one log line per slow client"; }
	mh_stop
}

# More idle clients than connection slots (8): each new one replaces the oldest, so a
# scrape still gets through, and the clients dropped are told so by the close.
test_metrics_http_slots_full() {
	mh_setup
	ns_exec "$NS_A" "$PY" - "$PORT" <<'EOF' || { cat "$MOUT"; fail "slots full"; }
import socket, sys, time, urllib.request
port, SLOTS = int(sys.argv[1]), 8
idle = []
for i in range(SLOTS + 2):
    idle.append(socket.create_connection(("127.0.0.1", port), timeout=5))
    time.sleep(0.05)    # accepted in this order
r = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=2)
assert r.status == 200 and b"blue_xdp_packets_total" in r.read()
# the three oldest were dropped when the newer ones came: EOF, no 408 (bounded wait)
for s in idle[:3]:
    s.settimeout(1.5)
    assert s.recv(100) == b"", "an old idle client still open"
print("%d idle clients, a scrape got through, the 3 oldest dropped" % len(idle))
EOF
	[ "$(grep -c 'dropped: every connection slot taken' "$MOUT")" -eq 3 ] ||
		{ cat "$MOUT"; fail "not one log line per dropped client"; }
	mh_stop
}

test_metrics_http_bad_requests() {
	mh_setup
	ns_exec "$NS_A" "$PY" - "$PORT" <<'EOF' || { cat "$MOUT"; fail "bad requests"; }
import socket, sys
port = int(sys.argv[1])
cases = [
    (b"GET /" + b"m" * 2000 + b" HTTP/1.1\r\n\r\n", 414),
    (b"GET /metrics HTTP/1.1\r\nX-Pad: " + b"p" * 9000 + b"\r\n\r\n", 431),
    (b"BREW /metrics HTTP/1.1\r\n\r\n", 405),
    (b"GET /metrics HTTP/1.1\r\nno colon here\r\n\r\n", 400),
    (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 400),
    (b"GET /metrics HTTP/2.0\r\n\r\n", 505),
    (b"GET /metrics\r\n\r\n", 400),
]
for req, want in cases:
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        s.sendall(req)
    except ConnectionError:
        pass
    got = b""
    while True:
        try:
            d = s.recv(65536)
        except ConnectionResetError:
            break
        if not d:
            break
        got += d
    s.close()
    line = got.split(b"\r\n", 1)[0]
    assert line.startswith(b"HTTP/1.1 %d " % want), (req[:40], line, want)
    assert b"\r\nConnection: close\r\n" in got, got
    print("%-45r -> %s, closed" % (req[:40], line.decode()))
EOF
	local code
	for code in 414 431 405 400 505; do
		grep -qE "127\.0\.0\.1:[0-9]+: $code " "$MOUT" || { cat "$MOUT"; fail "no log line for $code"; }
	done
	grep -E '127\.0\.0\.1:[0-9]+: [0-9]{3} ' "$MOUT"
	mh_stop
}

test_metrics_http_listen_explicit() {
	[ -x "$BLUECTL" ] || fail "$BLUECTL not built"
	local rc args out
	out=$(mktemp)
	on_exit "rm -f $out"
	# these fail on the address before anything else (no pins needed)
	for args in ":9464" "9464" "[]:9464" "10.0.0.1:"; do
		rc=0
		"$BLUECTL" metrics blue-nonesuch --listen "$args" >"$out" 2>&1 || rc=$?
		[ "$rc" -eq 1 ] || fail "--listen '$args' exited $rc, want 1"
		grep -qF "bluectl: --listen '$args': want ADDR:PORT" "$out" ||
			{ cat "$out"; fail "--listen '$args': no clear message"; }
	done
}
