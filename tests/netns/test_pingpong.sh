# shellcheck shell=bash
# blue_rc_pingpong end to end: two namespaces joined by a veth pair, blue attached
# natively on both ends, the server in one and the client in the other, SEND/RECV
# ping-pong over RoCEv2 through XDP and AF_XDP. Exit status and the summary lines are
# checked on both sides (each side's "remote address" must be the other's "local
# address"). Also: the option parsing (no namespace needed), the "LID:QPN:PSN:GID"
# exchange against peers that behave on the socket exactly as rdma-core 44's
# ibv_rc_pingpong client and server do, and a path MTU the link cannot carry.
# Run: B=build bash tests/lib/runner.sh tests/netns/test_pingpong.sh
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh

BLUECTL=$PWD/$B/bin/bluectl
PP=$PWD/$B/bin/blue_rc_pingpong
PY=/usr/bin/python3
IP_A=10.201.93.1	# server
IP_B=10.201.93.2	# client

# pp_setup: namespaces and interfaces named with the PID (netns_setup), blue attached on
# both ends.
# Sets NS_A NS_B IF_A IF_B.
pp_setup() {
	netns_setup pp "$IP_A" "$IP_B"
	need_bins "$BLUECTL" "$PP"
	blue_attach "$NS_A" "$IF_A"
	blue_attach "$NS_B" "$IF_B"
}

# addr_line FILE WHICH: the "local address:" or "remote address:" line, normalised.
addr_line() {
	grep -E "^  $2 address: +LID" "$1" | sed -E 's/^  (local|remote) address: +//'
}

# check_summary FILE SIZE ITERS: the two summary lines, with the right byte count.
check_summary() {
	local f=$1 size=$2 iters=$3
	grep -qE "^$((size * iters * 2)) bytes in [0-9]+\.[0-9]{2} seconds = [0-9]+\.[0-9]{2} Mbit/sec$" "$f" ||
		fail "$f: no \"$((size * iters * 2)) bytes in ... Mbit/sec\" line"
	grep -qE "^$iters iters in [0-9]+\.[0-9]{2} seconds = [0-9]+\.[0-9]{2} usec/iter$" "$f" ||
		fail "$f: no \"$iters iters in ... usec/iter\" line"
}

# run_pingpong ARGS...: server in A, client in B with the same ARGS; both must exit 0
# and agree on each other's addresses.
run_pingpong() {
	local srv_out cli_out spid rc=0 size=4096 iters=1000 prev="" a
	for a in "$@"; do
		case $prev in
		-s) size=$a ;;
		-n) iters=$a ;;
		esac
		prev=$a
	done
	srv_out=$(mktemp)
	cli_out=$(mktemp)
	on_exit "rm -f $srv_out $cli_out"
	ns_bg "$NS_A" spid timeout 30 "$PP" -d "$IF_A" --timeout 10 "$@" >"$srv_out" 2>&1
	# the client retries a refused connect until the server listens: no sleep needed
	ns_exec "$NS_B" timeout 30 "$PP" -d "$IF_B" --timeout 10 "$@" "$IP_A" >"$cli_out" 2>&1 ||
		rc=$?
	local src=0
	wait "$spid" || src=$?
	echo "--- server:"; cat "$srv_out"
	echo "--- client:"; cat "$cli_out"
	[ "$src" -eq 0 ] || fail "server exited $src"
	[ "$rc" -eq 0 ] || fail "client exited $rc"

	local re='^LID 0x0000, QPN 0x[0-9a-f]{6}, PSN 0x[0-9a-f]{6}, GID ::ffff:'
	addr_line "$srv_out" local | grep -qE "${re}${IP_A//./\\.}$" || fail "server: bad local address"
	addr_line "$cli_out" local | grep -qE "${re}${IP_B//./\\.}$" || fail "client: bad local address"
	[ "$(addr_line "$srv_out" remote)" = "$(addr_line "$cli_out" local)" ] ||
		fail "the server's remote address is not the client's local address"
	[ "$(addr_line "$cli_out" remote)" = "$(addr_line "$srv_out" local)" ] ||
		fail "the client's remote address is not the server's local address"
	check_summary "$srv_out" "$size" "$iters"
	check_summary "$cli_out" "$size" "$iters"
	! grep -q "invalid data" "$srv_out" || fail "the server found invalid data"
}

test_pingpong_64() {
	pp_setup
	run_pingpong -s 64 -n 1000
}

test_pingpong_8192() {
	# 8 packets per message at the default path MTU of 1024
	pp_setup
	run_pingpong -s 8192 -n 500
}

test_pingpong_events_chk_mtu2048() {
	# event mode, every received byte checked (-c), a smaller RX depth that must be
	# reposted during the run, and a non-default port on both sides
	pp_setup
	ip -n "$NS_A" link set "$IF_A" mtu 3000
	ip -n "$NS_B" link set "$IF_B" mtu 3000
	run_pingpong -e -c -s 5000 -n 300 -r 16 -m 2048 -p 18600
}

test_pingpong_mtu_the_link_cannot_carry() {
	# a 1500-byte link carries IB MTU 1024 at most: both sides must fail, clearly
	pp_setup
	local srv_out cli_out spid rc=0 src=0
	srv_out=$(mktemp)
	cli_out=$(mktemp)
	on_exit "rm -f $srv_out $cli_out"
	ns_bg "$NS_A" spid timeout 20 "$PP" -d "$IF_A" --timeout 5 -m 4096 >"$srv_out" 2>&1
	ns_exec "$NS_B" timeout 20 "$PP" -d "$IF_B" --timeout 5 -m 4096 "$IP_A" >"$cli_out" 2>&1 ||
		rc=$?
	wait "$spid" || src=$?
	echo "--- server:"; cat "$srv_out"
	echo "--- client:"; cat "$cli_out"
	[ "$src" -eq 1 ] || fail "server exited $src, want 1"
	[ "$rc" -eq 1 ] || fail "client exited $rc, want 1"
	grep -q "path_mtu 5 is not an MTU this port carries" "$srv_out" ||
		fail "the server did not say why"
	grep -q "Couldn't read/write remote address" "$cli_out" ||
		fail "the client did not fail in the exchange"
}

# A peer that does on the socket what rdma-core 44's ibv_rc_pingpong does, with the
# pingpong string of (QPN 0xabcdef, PSN 0x123456, GID ::ffff:IP). It prints what it
# read from the other side, and its own message, on stdout.
stock_peer_script() {
	cat <<'EOF'
import socket, sys, time
role, host, ip = sys.argv[1], sys.argv[2], sys.argv[3]
gid = bytes(10) + b"\xff\xff" + socket.inet_aton(ip)
msg = ("%04x:%06x:%06x:%s" % (0, 0xabcdef, 0x123456, gid.hex())).encode() + b"\0"
assert len(msg) == 52
if role == "client":
    end = time.time() + 10
    while True:
        try:
            s = socket.create_connection((host, 18515), timeout=5)
            break
        except ConnectionRefusedError:
            if time.time() > end:
                raise
            time.sleep(0.05)
    s.settimeout(10)
    s.sendall(msg)                      # one write() of 52
    got = b""
    while len(got) < 52:
        chunk = s.recv(52 - len(got))
        if not chunk:
            break
        got += chunk
    s.sendall(b"done\0")                # sizeof "done"
else:
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", 18515))
    ls.listen(1)
    ls.settimeout(10)
    print("LISTENING", flush=True)
    s, _ = ls.accept()
    s.settimeout(10)
    got = b""
    while len(got) < 52:
        chunk = s.recv(52 - len(got))
        if not chunk:
            break
        got += chunk
    s.sendall(msg)
    done = s.recv(52)                   # rdma-core 44 wants exactly 5 bytes here
    print("DONE " + done.hex(), flush=True)
print("GOT " + got.hex(), flush=True)
print("SENT " + msg.hex(), flush=True)
EOF
}

# expect_pp_message HEX IP: HEX is a 52-byte rc_pingpong message from IP.
expect_pp_message() {
	local msg
	msg=$(printf '%s' "$1" | xxd -r -p | tr -d '\0')
	[ "$(printf '%s' "$1" | xxd -r -p | wc -c)" -eq 52 ] || fail "message is not 52 bytes"
	[ "${1: -2}" = "00" ] || fail "message does not end with its NUL"
	local gid
	gid=$(printf '00000000000000000000ffff%02x%02x%02x%02x' ${2//./ })
	echo "message: $msg"
	[[ $msg =~ ^0000:[0-9a-f]{6}:[0-9a-f]{6}:${gid}$ ]] || fail "bad message '$msg'"
}

test_pingpong_server_with_stock_client_exchange() {
	pp_setup
	[ -x "$PY" ] || skip "$PY not found"
	local script srv_out py_out spid src=0
	script=$(mktemp)
	srv_out=$(mktemp)
	py_out=$(mktemp)
	on_exit "rm -f $script $srv_out $py_out"
	stock_peer_script >"$script"
	# the exchange completes; then no SEND ever comes, and the bounded loop gives up
	ns_bg "$NS_A" spid timeout 20 "$PP" -d "$IF_A" --timeout 2 -n 5 >"$srv_out" 2>&1
	ns_exec "$NS_B" timeout 20 "$PY" "$script" client "$IP_A" "$IP_B" >"$py_out" 2>&1 ||
		{ cat "$py_out"; fail "the stock-like client failed"; }
	wait "$spid" || src=$?
	echo "--- server:"; cat "$srv_out"
	echo "--- stock-like client:"; cat "$py_out"
	expect_pp_message "$(sed -n 's/^GOT //p' "$py_out")" "$IP_A"
	grep -qxF "  remote address: LID 0x0000, QPN 0xabcdef, PSN 0x123456, GID ::ffff:$IP_B" \
		"$srv_out" || fail "the server did not read the client's address"
	# its QP went to RTS with that address before it answered, so the loop ran
	[ "$src" -eq 1 ] || fail "server exited $src; want 1 (no peer QP)"
	grep -q "No completion for 2 s (sent 0, received 0 of 5)" "$srv_out" ||
		fail "the server did not time out in the ping-pong loop"
}

test_pingpong_client_with_stock_server_exchange() {
	pp_setup
	[ -x "$PY" ] || skip "$PY not found"
	local script cli_out py_out ppid rc=0
	script=$(mktemp)
	cli_out=$(mktemp)
	py_out=$(mktemp)
	on_exit "rm -f $script $cli_out $py_out"
	stock_peer_script >"$script"
	ns_bg "$NS_A" ppid timeout 20 "$PY" "$script" server "$IP_A" "$IP_A" >"$py_out" 2>&1
	# the client connects, sends to a QPN nobody owns, and fails on its retry count
	ns_exec "$NS_B" timeout 20 "$PP" -d "$IF_B" --timeout 5 -n 5 "$IP_A" >"$cli_out" 2>&1 ||
		rc=$?
	wait "$ppid" || true
	echo "--- client:"; cat "$cli_out"
	echo "--- stock-like server:"; cat "$py_out"
	expect_pp_message "$(sed -n 's/^GOT //p' "$py_out")" "$IP_B"
	grep -qx "DONE 646f6e6500" "$py_out" || fail "the client did not send exactly \"done\\0\""
	grep -qxF "  remote address: LID 0x0000, QPN 0xabcdef, PSN 0x123456, GID ::ffff:$IP_A" \
		"$cli_out" || fail "the client did not read the server's address"
	[ "$rc" -eq 1 ] || fail "client exited $rc; want 1 (no peer QP)"
	grep -qE "Failed status .* for wr_id 2" "$cli_out" ||
		fail "the client's SEND did not fail with a completion error"
}

# A peer whose GID claims an address that is not its TCP address is refused before
# anything is connected: blue_cm_connect_qp() would make the MAC it sends the neighbour
# entry for that address (runtime/cm_peer.c). IP_C is on the link, but nobody's.
IP_C=10.201.93.3

test_pingpong_server_refuses_a_spoofed_client() {
	pp_setup
	[ -x "$PY" ] || skip "$PY not found"
	local script srv_out py_out spid src=0
	script=$(mktemp)
	srv_out=$(mktemp)
	py_out=$(mktemp)
	on_exit "rm -f $script $srv_out $py_out"
	stock_peer_script >"$script"
	unset BLUE_CM_ALLOW
	ns_bg "$NS_A" spid timeout 20 "$PP" -d "$IF_A" --timeout 2 -n 5 >"$srv_out" 2>&1
	# from IP_B, claiming IP_C; it may see a reset when it writes "done" to the closed socket
	ns_exec "$NS_B" timeout 20 "$PY" "$script" client "$IP_A" "$IP_C" >"$py_out" 2>&1 || true
	wait "$spid" || src=$?
	echo "--- server:"; cat "$srv_out"
	echo "--- stock-like client:"; cat "$py_out"
	[ "$src" -eq 1 ] || fail "server exited $src; want 1 (refused)"
	grep -qF "peer claims $IP_C but connects from $IP_B: refused" "$srv_out" ||
		fail "the server did not name the claimed and the TCP address"
	grep -q "^  remote address:" "$srv_out" && fail "the server used the spoofed address"
	if grep -q '^GOT ' "$py_out"; then
		grep -qx 'GOT ' "$py_out" || fail "the server answered a refused client"
	fi
	true
}

test_pingpong_client_refuses_a_spoofed_server() {
	pp_setup
	[ -x "$PY" ] || skip "$PY not found"
	local script cli_out py_out ppid rc=0
	script=$(mktemp)
	cli_out=$(mktemp)
	py_out=$(mktemp)
	on_exit "rm -f $script $cli_out $py_out"
	stock_peer_script >"$script"
	unset BLUE_CM_ALLOW
	# at IP_A, claiming IP_C
	ns_bg "$NS_A" ppid timeout 20 "$PY" "$script" server "$IP_A" "$IP_C" >"$py_out" 2>&1
	ns_exec "$NS_B" timeout 20 "$PP" -d "$IF_B" --timeout 5 -n 5 "$IP_A" >"$cli_out" 2>&1 ||
		rc=$?
	wait "$ppid" || true
	echo "--- client:"; cat "$cli_out"
	echo "--- stock-like server:"; cat "$py_out"
	[ "$rc" -eq 1 ] || fail "client exited $rc; want 1 (refused)"
	grep -qF "peer claims $IP_C but connects from $IP_A: refused" "$cli_out" ||
		fail "the client did not name the claimed and the TCP address"
	grep -q "^  remote address:" "$cli_out" && fail "the client used the spoofed address"
	grep -qx "DONE " "$py_out" || fail "the client sent \"done\" to a refused server"
}

test_pingpong_allow_list_admits_a_multihomed_client() {
	pp_setup
	[ -x "$PY" ] || skip "$PY not found"
	local script srv_out py_out spid src=0
	script=$(mktemp)
	srv_out=$(mktemp)
	py_out=$(mktemp)
	on_exit "rm -f $script $srv_out $py_out"
	stock_peer_script >"$script"
	# a multi-homed client: IP_C is its too (so it answers ARP), its CM leaves from IP_B
	ip -n "$NS_B" addr add "$IP_C/32" dev "$IF_B"
	# listed, it is accepted (the namespace, and the address with it, go at teardown)
	BLUE_CM_ALLOW="10.9.9.9=10.9.9.8,$IP_C=$IP_B" ns_bg "$NS_A" spid timeout 20 "$PP" \
		-d "$IF_A" --timeout 2 -n 5 >"$srv_out" 2>&1
	ns_exec "$NS_B" timeout 20 "$PY" "$script" client "$IP_A" "$IP_C" >"$py_out" 2>&1 ||
		{ cat "$py_out"; fail "the stock-like client failed"; }
	wait "$spid" || src=$?
	echo "--- server:"; cat "$srv_out"
	grep -qxF "  remote address: LID 0x0000, QPN 0xabcdef, PSN 0x123456, GID ::ffff:$IP_C" \
		"$srv_out" || fail "the server did not take the listed client's address"
	expect_pp_message "$(sed -n 's/^GOT //p' "$py_out")" "$IP_A"
	# no QP answers at IP_C, so the loop times out: exit 1, as with any absent peer
	[ "$src" -eq 1 ] || fail "server exited $src; want 1 (no peer QP)"
	grep -q "No completion for 2 s" "$srv_out" || fail "the server did not run its loop"
}

test_pingpong_no_device() {
	# a namespace where blue is attached nowhere: a clear message, exit 1
	[ "$(id -u)" -eq 0 ] || skip "needs root"
	need_bins "$PP"
	local ns=blue-pp-$BASHPID-n out rc=0
	ip netns add "$ns"
	on_exit "ip netns del $ns 2>/dev/null"
	out=$(ns_exec "$ns" timeout 10 "$PP" 2>&1) || rc=$?
	echo "$out"
	[ "$rc" -eq 1 ] || fail "exit $rc, want 1"
	grep -q "No blue devices found" <<<"$out" || fail "no message naming the cause"
	out=$(ns_exec "$ns" timeout 10 "$PP" -d lo 2>&1) && fail "opened lo without blue"
	echo "$out"
	grep -q "Couldn't get context for lo" <<<"$out" || fail "no message for -d lo"
}

test_pingpong_args() {
	need_bins "$PP"
	local out
	# the defaults are ibv_rc_pingpong's (and -g 1: RoCEv2 needs a GID)
	out=$("$PP" --dry-run)
	[ "$out" = "$(printf '%s\n' mode=server server= port=18515 ib_dev= ib_port=1 size=4096 \
		mtu=1024 rx_depth=500 iters=1000 sl=0 events=0 gid_idx=1 chk=0 timeout=60)" ] ||
		fail "defaults: $out"
	out=$("$PP" --dry-run -p 20000 -d veth7 -i 1 -s 64 -m 256 -r 16 -n 7 -l 3 -e -g 0 -c \
		--timeout 5 10.201.93.1)
	[ "$out" = "$(printf '%s\n' mode=client server=10.201.93.1 port=20000 ib_dev=veth7 \
		ib_port=1 size=64 mtu=256 rx_depth=16 iters=7 sl=3 events=1 gid_idx=0 chk=1 \
		timeout=5)" ] || fail "short options: $out"
	out=$("$PP" --dry-run --port=1 --ib-dev=x --size=8192 --mtu=4096 --rx-depth=2 \
		--iters=1 --sl=0 --events --gid-idx=1 --chk host)
	grep -qx "size=8192" <<<"$out" && grep -qx "mtu=4096" <<<"$out" &&
		grep -qx "server=host" <<<"$out" && grep -qx "chk=1" <<<"$out" ||
		fail "long options: $out"
	"$PP" --help | grep -q -- "--ib-dev=<dev>" || fail "--help"

	# refused, with exit 1 and a reason
	local bad
	for bad in "-m 1000:invalid MTU 1000" "-m 8192:invalid MTU '8192'" \
		"-p 0:invalid port '0'" "-p 70000:invalid port" "-s 0:invalid size '0'" \
		"-s 12x:invalid size '12x'" "-i 2:a blue device has port 1 only" \
		"-n 0:invalid iterations" "-l 16:invalid service level" \
		"-o:on-demand paging) is not supported" "-t:completion timestamps" \
		"-j:device memory" "-N:new post-send API"; do
		out=$("$PP" --dry-run ${bad%%:*} 2>&1) && fail "accepted ${bad%%:*}"
		grep -qF -- "${bad#*:}" <<<"$out" || fail "${bad%%:*}: no '${bad#*:}' in: $out"
	done
	out=$("$PP" --dry-run host1 host2 2>&1) && fail "accepted two server names"
	grep -q "^Usage:" <<<"$out" || fail "no usage for two server names"
	true
}
