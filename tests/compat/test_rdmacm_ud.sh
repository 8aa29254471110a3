# shellcheck shell=bash
# blue's librdmacm.so.1 for UD ids and the calls around them (issue 16):
#   - rdma_event_str: the strings of rdma-core's own librdmacm, compared line by line;
#   - rdma_getaddrinfo: rdma-core 44's results for IP addresses (rdma_getaddrinfo(3) and
#     its addrinfo.c), computed here independently: getaddrinfo(3) with the hints mapped
#     (python's socket.getaddrinfo in the same namespace), the route's source from
#     `ip route get`; errors as rdma-core's library gives them (run on both libraries
#     where no kernel device is needed);
#   - rdma_set_option, ports, ECE and a join of a unicast address on real ids
#     (tests/compat/rai_probe.c);
#   - unmodified udaddy (rdmacm-utils), blue <-> blue: SIDR over QP1, then UD sends;
#     its failures: no UDP listener at the peer (SIDR status 1), no peer agent (timeout);
#   - fi_info -p verbs (libfabric's verbs provider) finds blue's device for MSG and DGRAM.
# Two namespaces joined by a veth pair, blue attached to both ends, the tools loading
# $B/compat through LD_LIBRARY_PATH (compat_env; the setup: tests/lib/rdmacm.sh).
# Run: B=build-<you> bash tests/lib/runner.sh tests/compat/test_rdmacm_ud.sh [test_name]
#
# Test functions:
#   test_event_str test_getaddrinfo_no_device test_getaddrinfo test_options
#   test_udaddy test_udaddy_2 test_udaddy_ipv6 test_udaddy_bound_tos
#   test_udaddy_no_listener test_udaddy_timeout
#   test_udaddy_hostile_sidr test_reject_ece test_fi_info
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh
# shellcheck source=tests/lib/compat.sh
source tests/lib/compat.sh
# shellcheck source=tests/lib/rdmacm.sh
source tests/lib/rdmacm.sh

UD_PROBE=$PWD/$B/tests/compat/rai_probe
UD_IP_A=10.201.71.1	# server
UD_IP_B=10.201.71.2	# client
UD_IP6_A=fd00:b10e:71::1
UD_IP6_B=fd00:b10e:71::2
UD_SYS_RDMACM=/usr/lib/x86_64-linux-gnu/librdmacm.so.1

ud_need() {
	rdmacm_need "$UD_PROBE"
	[ -e "$UD_SYS_RDMACM" ] || skip "$UD_SYS_RDMACM is not installed (make deps: librdmacm1)"
}

# ud_setup [noattach]: the namespaces, blue attached to both ends (tests/lib/rdmacm.sh)
# unless told not to
ud_setup() {
	ud_need
	if [ "${1:-}" = noattach ]; then
		netns_setup ud "$UD_IP_A" "$UD_IP_B"
	else
		rdmacm_setup ud "$UD_IP_A" "$UD_IP_B"
	fi
}

# ud_blue NS ARGS...: the probe on blue's librdmacm in NS, bounded; ud_sys: on rdma-core's
ud_blue() { local ns=$1; shift; ns_exec "$ns" timeout 20 "${COMPAT_ENV[@]}" "$UD_PROBE" "$@"; }
ud_sys() { local ns=$1; shift; ns_exec "$ns" timeout 20 "$UD_PROBE" "$@"; }

# ud_is_standin NS: 0 if blue's librdmacm still answers rdma_create_event_channel with
# the stand-in's EOPNOTSUPP (the connected-id API, w-cma, not merged yet)
ud_is_standin() {
	local rc=0
	ud_blue "$1" opts "$UD_IP_A" >/dev/null 2>&1 || rc=$?
	[ "$rc" -eq 3 ]
}

# rdma_event_str for every event and a few out of range: rdma-core's strings, exactly
test_event_str() {
	local sys ours
	ud_need
	sys=$("$UD_PROBE" events)
	ours=$("${COMPAT_ENV[@]}" "$UD_PROBE" events)
	echo "$ours"
	[ "$(wc -l <<<"$ours")" -eq 20 ] || fail "expected 20 lines"
	grep -qx "9 RDMA_CM_EVENT_ESTABLISHED" <<<"$ours" || fail "no ESTABLISHED line"
	grep -qx "18 UNKNOWN EVENT" <<<"$ours" || fail "18 is not UNKNOWN EVENT"
	[ "$sys" = "$ours" ] || { diff <(echo "$sys") <(echo "$ours"); fail "differs from rdma-core's"; }
}

# Where no device is needed both libraries answer alike: no node, service or hints:
# -1 EINVAL; a lookup in a namespace without blue (rdma-core: without a kernel device):
# -1 ENODEV
test_getaddrinfo_no_device() {
	local args sys ours err
	ud_setup noattach
	err=$(mktemp)
	on_exit "rm -f $err"
	for args in "- - nohints" "$UD_IP_B 7471" "- 7471 flags=1"; do
		# shellcheck disable=SC2086 # the words of $args are the probe's arguments
		sys=$(ud_sys "$NS_A" gai $args 2>/dev/null)
		# shellcheck disable=SC2086
		ours=$(ud_blue "$NS_A" gai $args 2>"$err")
		echo "gai $args: rdma-core: $sys / blue: $ours"
		cat "$err"
		[ "$sys" = "$ours" ] || fail "gai $args: blue answers differently"
	done
	grep -q "rdma_getaddrinfo: no verbs device" "$err" || fail "no line names the fault"
}

# ud_expect NODE SERVICE ARGS...: what rdma-core 44's rdma_getaddrinfo returns for these
# arguments (the probe's output format), computed from getaddrinfo(3) in NS_A
ud_expect() {
	ns_exec "$NS_A" python3 - "$@" <<'PY'
import socket, subprocess, sys, json
node, svc, args = sys.argv[1], sys.argv[2], sys.argv[3:]
node = None if node == "-" else node
svc = None if svc == "-" else svc
h = dict(flags=0, family=0, qp=0, ps=0)
nohints, src = False, None
for a in args:
    if a == "nohints":
        nohints = True
    elif a.startswith("src="):
        src = a[4:]
    else:
        k, v = a.split("=")
        h[k] = int(v, 0)
RC, UC, UD, XRC_SEND, XRC_RECV = 2, 3, 4, 9, 10
PS_TCP, PS_UDP, PS_IB, PS_IPOIB = 0x106, 0x111, 0x13f, 0x2
PASSIVE, NUMERICHOST, NOROUTE = 1, 2, 4
if node is None and svc is None and nohints:
    print("ret=-1 errno=22"); sys.exit()
# rdma_getaddrinfo(3): the hints as getaddrinfo(3) hints
gflags = (socket.AI_PASSIVE if h["flags"] & PASSIVE else 0) | \
         (socket.AI_NUMERICHOST if h["flags"] & NUMERICHOST else 0)
st = {RC: socket.SOCK_STREAM, UC: socket.SOCK_STREAM, XRC_SEND: socket.SOCK_STREAM,
      XRC_RECV: socket.SOCK_STREAM, UD: socket.SOCK_DGRAM}.get(h["qp"], 0)
proto = {PS_TCP: socket.IPPROTO_TCP, PS_UDP: socket.IPPROTO_UDP,
         PS_IPOIB: socket.IPPROTO_UDP}.get(h["ps"], 0)
if h["ps"] == PS_IB:
    proto = {socket.SOCK_STREAM: socket.IPPROTO_TCP, socket.SOCK_DGRAM: socket.IPPROTO_UDP}.get(st, 0)
def sa(addr):
    return ("[%s]:%d" if ":" in addr[0] else "%s:%d") % (addr[0], addr[1])
def salen(addr):
    return 28 if ":" in addr[0] else 16
out = dict(flags=0, family=0, qp=0, ps=0, src="none", dst="none", sl=0, dl=0)
if node is not None or svc is not None:
    try:
        if nohints:
            ai = socket.getaddrinfo(node, svc)[0]
        else:
            ai = socket.getaddrinfo(node, svc, h["family"] if h["family"] != 27 else 0,
                                    st, proto, gflags)[0]
    except socket.gaierror as e:
        print("ret=-1 errno=%d" % e.errno); sys.exit()
    fam, ast, aproto, _, addr = ai
    qp = h["qp"] or {socket.SOCK_STREAM: RC, socket.SOCK_DGRAM: UD}.get(ast, 0)
    ps = h["ps"] or {socket.IPPROTO_TCP: PS_TCP, socket.IPPROTO_UDP: PS_UDP}.get(aproto, 0)
    out.update(family=int(fam), qp=qp, ps=ps)
    if h["flags"] & PASSIVE:
        out.update(flags=PASSIVE, src=sa(addr), sl=salen(addr))
    else:
        out.update(dst=sa(addr), dl=salen(addr))
else:
    out.update(flags=h["flags"], family=h["family"], qp=h["qp"], ps=h["ps"])
if out["src"] == "none" and src:
    out.update(src=src + ":0", sl=16)
# the source of an active lookup: the route's (blue's stand-in for ibacm's answer)
if not out["flags"] & PASSIVE and not h["flags"] & NOROUTE and out["src"] == "none" \
        and out["dst"] != "none":
    dst = out["dst"].rsplit(":", 1)[0].strip("[]")
    r = subprocess.run(["ip", "-j", "route", "get", dst], capture_output=True, text=True)
    pref = json.loads(r.stdout)[0].get("prefsrc") if r.returncode == 0 else None
    if pref:
        out.update(src=sa((pref, 0)), sl=salen((pref, 0)))
print("ret=0 errno=0")
print("flags=%d family=%d qp_type=%d port_space=0x%x src=%s dst=%s src_len=%d dst_len=%d "
      "route_len=0 connect_len=0 canon=-,- next=0" % (out["flags"], out["family"], out["qp"],
      out["ps"], out["src"], out["dst"], out["sl"], out["dl"]))
PY
}

# rdma_getaddrinfo for IPv4 lookups, active and passive, every hint it takes, its errors
test_getaddrinfo() {
	local c got want n=0
	local cases=(
		"$UD_IP_B 7471"
		"$UD_IP_B 7471 nohints"
		"$UD_IP_B 7471 qp=4"
		"$UD_IP_B 7471 ps=0x111"
		"$UD_IP_B 7471 ps=0x13f qp=2"
		"$UD_IP_B 7471 ps=0x13f qp=4"
		"$UD_IP_B 7471 family=2 flags=2"
		"$UD_IP_B 7471 flags=4"
		"$UD_IP_B 7471 src=$UD_IP_A"
		"- 7471 flags=1 family=2"
		"$UD_IP_A 7471 flags=1"
		"- 7471"
		"192.0.2.9 7471"
		"not-an-address 7471 flags=2"
		"$UD_IP_B 7471 qp=4 ps=0x106"
		"$UD_IP_B no-such-service-blue"
		"- - qp=4 ps=0x111 flags=0"
		"- - nohints"
	)
	ud_setup
	for c in "${cases[@]}"; do
		# shellcheck disable=SC2086 # the words of $c are the probe's arguments
		want=$(ud_expect $c)
		# shellcheck disable=SC2086
		got=$(ud_blue "$NS_A" gai $c 2>/dev/null)
		echo "gai $c"
		echo "  $got" | head -2
		[ "$got" = "$want" ] || { echo "  expected: $want"; fail "rdma_getaddrinfo $c"; }
		n=$((n + 1))
	done
	# the route's source really is filled for an active lookup, and not when told not to
	ud_blue "$NS_A" gai "$UD_IP_B" 7471 | grep -q "src=$UD_IP_A:0 " || fail "no route source"
	ud_blue "$NS_A" gai "$UD_IP_B" 7471 flags=4 | grep -q "src=none" || fail "NOROUTE ignored"
	echo "getaddrinfo: $n cases as rdma-core 44 answers"
}

# rdma_set_option (ID TOS/REUSEADDR/AFONLY/ACK_TIMEOUT, unknown ones, IB_PATH's length),
# the bound port, ECE and multicast on real ids
test_options() {
	local out want
	ud_setup
	ud_is_standin "$NS_A" && skip "rdma_create_event_channel is still the stand-in" \
		"(waits for w-cma's channel.c/id.c/addr.c)"
	local rc=0
	out=$(ud_blue "$NS_A" opts "$UD_IP_A" 2>&1) || rc=$?
	[ "$rc" -eq 0 ] || { echo "$out"; fail "opts exited $rc"; }
	echo "$out"
	want="create_id tcp: 0 0
create_id udp: 0 0
tos: 0 0
tos len 4: -1 22
reuseaddr: 0 0
afonly: 0 0
ack_timeout rc: 0 0
ack_timeout ud: -1 22
option 99: -1 38
level 7: -1 38
ib_path len 3: -1 22
bind: 0 0
src_port: 7399 dst_port: 0
afonly bound: 0 0
listen: 0 0
afonly listening: -1 22
set_local_ece: -1 95
get_remote_ece: 0 0
remote ece: vendor 0 options 0 comp_mask 0
join_multicast: -1 22
leave_multicast: -1 99"
	diff <(echo "$want") <(grep -v "^libblue" <<<"$out") || fail "options answer differently"
	# multicast itself is test_rdmacm_mcast.sh's; a unicast group is refused, saying why
	grep -q "is not a multicast address" <<<"$out" || fail "no line says why the join fails"
}

# ud_udaddy CONNS [DST [SERVER_ARGS [CLIENT_ARGS]]]: udaddy's server in A, its client in
# B (-s DST, default IP_A; -c CONNS), both bounded; both exit 0 and report the transfers
# as udaddy does. UD_V6=1: IPv6 addresses on the pair too (UD_IP6_A/B).
ud_udaddy() {
	local conns=$1 dst=${2:-$UD_IP_A} spid i rc=0 src=0 srv cli
	local sargs=() cargs=()
	read -ra sargs <<<"${3:-}"
	read -ra cargs <<<"${4:-}"
	ud_setup
	[ "${UD_V6:-0}" = 1 ] && netns_ipv6 "$UD_IP6_A" "$UD_IP6_B"
	ud_is_standin "$NS_A" && skip "librdmacm's connected-id API is still the stand-in" \
		"(udaddy waits for w-cma's channel/id/addr/conn/qp.c and w-agent's agent.c)"
	[ -x /usr/bin/udaddy ] || skip "/usr/bin/udaddy missing (make deps: rdmacm-utils)"
	srv=$(mktemp)
	cli=$(mktemp)
	on_exit "rm -f $srv $cli"
	ns_bg "$NS_A" spid timeout 40 "${COMPAT_ENV[@]}" BLUE_RDMACM_STATS=1 stdbuf -oL \
		/usr/bin/udaddy -c "$conns" "${sargs[@]}" >"$srv" 2>&1
	# listening: udaddy said so, and QP1 (the CM agent's) is in blue's QP table
	for ((i = 0; i < 100; i++)); do
		grep -q "udaddy: starting server" "$srv" &&
			ns_exec "$NS_A" "$BLUECTL" qp show "$IF_A" 1 >/dev/null 2>&1 && break
		sleep 0.1
	done
	[ "$i" -lt 100 ] || { cat "$srv"; fail "udaddy's server did not start its CM agent"; }
	sleep 0.5	# from QP1's creation to rdma_listen
	ns_exec "$NS_B" timeout 40 "${COMPAT_ENV[@]}" BLUE_RDMACM_STATS=1 stdbuf -oL \
		/usr/bin/udaddy -s "$dst" -c "$conns" "${cargs[@]}" >"$cli" 2>&1 || rc=$?
	wait "$spid" || src=$?
	echo "--- server: udaddy -c $conns ${sargs[*]}"; cat "$srv"
	echo "--- client: udaddy -s $dst -c $conns ${cargs[*]}"; cat "$cli"
	[ "$src" -eq 0 ] || fail "udaddy server exited $src"
	[ "$rc" -eq 0 ] || fail "udaddy client exited $rc"
	for i in "udaddy: starting client" "udaddy: connecting" "initiating data transfers" \
		 "receiving data transfers" "data transfers complete"; do
		grep -qxF "$i" "$cli" || fail "the client did not report '$i'"
	done
	for i in "udaddy: starting server" "receiving data transfers" \
		 "data transfers complete"; do
		grep -qF "$i" "$srv" || fail "the server did not report '$i'"
	done
	grep -q "error" "$srv" "$cli" && fail "udaddy reported an error"
	# on the wire: one SIDR_REQ per connection in, one SIDR_REP per connection out (the
	# agents' counters at exit, BLUE_RDMACM_STATS=1), nothing dropped
	ud_stat "$srv" agent rx_mads -ge "$conns"
	ud_stat "$srv" agent tx_mads -ge "$conns"
	ud_stat "$cli" agent rx_mads -ge "$conns"
	ud_stat "$cli" agent tx_mads -ge "$conns"
	ud_stat "$srv" ibcm no_listener -eq 0
	ud_stat "$cli" ibcm timeouts -eq 0
	# rdma_cm's side: a CONNECT_REQUEST and an accept per connection, a SIDR_REP with
	# status 0 per connection at the client
	ud_stat "$srv" sidr: requests -eq "$conns"
	ud_stat "$srv" sidr: accepted -eq "$conns"
	ud_stat "$cli" sidr: replies -eq "$conns"
	return 0
}

# ud_stat LOG agent|ibcm NAME OP N: the counter NAME on LOG's "librdmacm: agent|ibcm"
# line satisfies `test VALUE OP N`
ud_stat() {
	local v
	v=$(grep "^librdmacm: $2 " "$1" | grep -oE "(^| )$3=[0-9]+" | head -1 | cut -d= -f2)
	[ -n "$v" ] || { cat "$1"; fail "no $2 counter $3 in ${1##*/}"; }
	echo "$2 $3=$v"
	test "$v" "$4" "$5" || fail "$2 $3=$v, expected $4 $5"
}

# ud_wait_qp1 NS IF: 0 once QP1 (a CM agent's) is in blue's QP table on IF in NS (10 s)
ud_wait_qp1() {
	local i
	for ((i = 0; i < 100; i++)); do
		ns_exec "$1" "$BLUECTL" qp show "$2" 1 >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

# A SIDR_REQ for a UDP port nobody listens on, at a peer whose CM agent runs (an rping
# server on TCP port 7174 there): the agent answers status 1 (service ID not
# supported), which rdma_cm reports as UNREACHABLE with status 1, as the kernel does
test_udaddy_no_listener() {
	local spid cli rc=0
	ud_setup
	ud_is_standin "$NS_A" && skip "librdmacm's connected-id API is still the stand-in"
	{ [ -x /usr/bin/udaddy ] && [ -x /usr/bin/rping ]; } || skip "udaddy/rping missing (rdmacm-utils)"
	cli=$(mktemp)
	on_exit "rm -f $cli"
	ns_bg "$NS_A" spid timeout 40 "${COMPAT_ENV[@]}" /usr/bin/rping -s -a "$UD_IP_A" -p 7174 \
		-C 1 >/dev/null 2>&1
	ud_wait_qp1 "$NS_A" "$IF_A" || fail "rping's CM agent did not start"
	sleep 0.5
	ns_exec "$NS_B" timeout 20 "${COMPAT_ENV[@]}" BLUE_RDMACM_STATS=1 stdbuf -oL \
		/usr/bin/udaddy -s "$UD_IP_A" >"$cli" 2>&1 || rc=$?
	cat "$cli"
	[ "$rc" -ne 0 ] || fail "udaddy succeeded without a server"
	[ "$rc" -ne 124 ] || fail "udaddy hung (the SIDR_REP was not acted on)"
	grep -qxF "udaddy: event: RDMA_CM_EVENT_UNREACHABLE, error: 1" "$cli" ||
		fail "no UNREACHABLE with SIDR status 1"
	ud_stat "$cli" ibcm timeouts -eq 0
	ud_stat "$cli" sidr: unreachable -eq 1
}

# A SIDR_REQ nobody answers (no CM agent at the peer): after the IB CM's retries (here
# BLUE_RDMACM_CM_TIMEOUT=14: 67 ms, 2 retries) UNREACHABLE with -ETIMEDOUT (-110)
test_udaddy_timeout() {
	local cli rc=0 t0 t1
	ud_setup
	ud_is_standin "$NS_A" && skip "librdmacm's connected-id API is still the stand-in"
	[ -x /usr/bin/udaddy ] || skip "/usr/bin/udaddy missing (make deps: rdmacm-utils)"
	cli=$(mktemp)
	on_exit "rm -f $cli"
	t0=$(date +%s%N)
	ns_exec "$NS_B" timeout 20 "${COMPAT_ENV[@]}" BLUE_RDMACM_STATS=1 \
		BLUE_RDMACM_CM_TIMEOUT=14 BLUE_RDMACM_CM_RETRIES=2 stdbuf -oL \
		/usr/bin/udaddy -s "$UD_IP_A" >"$cli" 2>&1 || rc=$?
	t1=$(date +%s%N)
	cat "$cli"
	echo "udaddy exited $rc after $(((t1 - t0) / 1000000)) ms"
	{ [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]; } || fail "udaddy exited $rc"
	grep -qxF "udaddy: event: RDMA_CM_EVENT_UNREACHABLE, error: -110" "$cli" ||
		fail "no UNREACHABLE -ETIMEDOUT"
	ud_stat "$cli" ibcm timeouts -eq 1
	ud_stat "$cli" ibcm retransmits -eq 2
	ud_stat "$cli" sidr: timeouts -eq 1
	[ $(((t1 - t0) / 1000000)) -lt 5000 ] || fail "the timeout took over 5 s"
}

test_udaddy() { ud_udaddy 1; }
test_udaddy_2() { ud_udaddy 2; }
# RoCEv2 over IPv6: the SIDR_REQ's IP CM header says IPv6, the wildcard listener takes it
test_udaddy_ipv6() { UD_V6=1 ud_udaddy 1 "$UD_IP6_A"; }
# a server bound to its address, the client's TOS option (rdma_set_option TOS: the AH's
# traffic class), 50 messages of 512 bytes each way
test_udaddy_bound_tos() {
	ud_udaddy 1 "$UD_IP_A" "-b $UD_IP_A -C 50 -S 512" "-t 32 -C 50 -S 512"
}

# Malformed SIDR_REQs (tests/compat/sidr_hostile.py from B's namespace, scapy) at
# udaddy's listener: each one's IP CM header is refused, answered status 1 and counted
# (sidr bad_ip_hdr), no CONNECT_REQUEST is raised for it, and a real udaddy client
# connects and exchanges its messages afterwards
UD_NHOSTILE=3	# frames per kind
test_udaddy_hostile_sidr() {
	local spid srv cli out rc=0 src=0
	/usr/bin/python3 -c 'import scapy.contrib.roce' 2>/dev/null ||
		skip "/usr/bin/python3 cannot import scapy.contrib.roce (apt-get install python3-scapy)"
	ud_setup
	ud_is_standin "$NS_A" && skip "librdmacm's connected-id API is still the stand-in"
	[ -x /usr/bin/udaddy ] || skip "/usr/bin/udaddy missing (make deps: rdmacm-utils)"
	srv=$(mktemp)
	cli=$(mktemp)
	on_exit "rm -f $srv $cli"
	ns_bg "$NS_A" spid timeout 40 "${COMPAT_ENV[@]}" BLUE_RDMACM_STATS=1 stdbuf -oL \
		/usr/bin/udaddy >"$srv" 2>&1
	ud_wait_qp1 "$NS_A" "$IF_A" || { cat "$srv"; fail "udaddy's CM agent did not start"; }
	sleep 0.5
	out=$(ns_exec "$NS_B" timeout 60 /usr/bin/python3 tests/compat/sidr_hostile.py "$IF_B" \
		"$UD_IP_B" "$UD_IP_A" "$MAC_A" 7174 "$UD_NHOSTILE" 2>&1) ||
		{ echo "$out"; fail "sidr_hostile.py failed"; }
	echo "$out"
	sleep 0.5
	ns_exec "$NS_B" timeout 40 "${COMPAT_ENV[@]}" stdbuf -oL /usr/bin/udaddy -s "$UD_IP_A" \
		>"$cli" 2>&1 || rc=$?
	wait "$spid" || src=$?
	echo "--- server"; cat "$srv"
	echo "--- client"; cat "$cli"
	[ "$src" -eq 0 ] || fail "udaddy server exited $src"
	[ "$rc" -eq 0 ] || fail "udaddy client exited $rc"
	grep -qxF "data transfers complete" "$cli" || fail "the client's transfers did not complete"
	ud_stat "$srv" sidr: bad_ip_hdr -eq $((2 * UD_NHOSTILE))
	ud_stat "$srv" sidr: requests -eq 1
	ud_stat "$srv" sidr: accepted -eq 1
	ud_stat "$srv" ibcm rx -eq $((2 * UD_NHOSTILE + 1))
	[ "$(grep -c "IP CM header refused" "$srv")" -eq $((2 * UD_NHOSTILE)) ] ||
		fail "not one line per refused SIDR_REQ"
}

# rdma_reject_ece answers a connection request with the kernel's reason for it, REJ 35
# (vendor option not supported): an unmodified rping client reports it as REJECTED 35
test_reject_ece() {
	local spid srv out rc=0 src=0 i
	ud_setup
	ud_is_standin "$NS_A" && skip "librdmacm's connected-id API is still the stand-in"
	[ -x /usr/bin/rping ] || skip "/usr/bin/rping missing (make deps: rdmacm-utils)"
	srv=$(mktemp)
	on_exit "rm -f $srv"
	ns_bg "$NS_A" spid timeout 30 "${COMPAT_ENV[@]}" "$UD_PROBE" reject_ece "$UD_IP_A" 7391 \
		>"$srv" 2>&1
	for ((i = 0; i < 100; i++)); do
		grep -q "^listening" "$srv" && break
		sleep 0.1
	done
	[ "$i" -lt 100 ] || { cat "$srv"; fail "the probe did not listen"; }
	out=$(ns_exec "$NS_B" timeout 20 "${COMPAT_ENV[@]}" rping -c -a "$UD_IP_A" -p 7391 -C 1 \
		2>&1) || rc=$?
	wait "$spid" || src=$?
	echo "--- probe"; cat "$srv"
	echo "--- rping -c"; echo "$out"
	[ "$src" -eq 0 ] || fail "the probe exited $src"
	grep -qx "reject_ece: 0 0" "$srv" || fail "rdma_reject_ece failed"
	{ [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]; } || fail "rping exited $rc"
	grep -q "RDMA_CM_EVENT_REJECTED, error 35" <<<"$out" || fail "rping did not see REJ 35"
}

# libfabric's verbs provider maps interface addresses to devices through rdma_getaddrinfo,
# rdma_create_id and rdma_bind_addr: fi_info lists blue's device for MSG (RDMA CM RC)
# and, with FI_VERBS_GID_IDX=1 (the IPv4 GID), for DGRAM (UD), its domain named after
# the netdev
test_fi_info() {
	local out
	ud_setup
	ud_is_standin "$NS_A" && skip "librdmacm's connected-id API is still the stand-in"
	command -v fi_info >/dev/null || skip "fi_info missing (make deps: libfabric-bin)"
	out=$(ns_exec "$NS_A" timeout 30 "${COMPAT_ENV[@]}" BLUE_LOG=0 fi_info -p verbs \
		-t FI_EP_MSG -s "$UD_IP_A" 2>/dev/null) || { echo "$out"; fail "fi_info (MSG) failed"; }
	echo "$out"
	grep -qx "    domain: $IF_A" <<<"$out" || fail "no verbs MSG domain $IF_A"
	grep -qx "    protocol: FI_PROTO_RDMA_CM_IB_RC" <<<"$out" || fail "no RDMA CM RC protocol"
	out=$(ns_exec "$NS_A" timeout 30 "${COMPAT_ENV[@]}" BLUE_LOG=0 FI_VERBS_GID_IDX=1 \
		fi_info -p verbs -t FI_EP_DGRAM 2>/dev/null) || { echo "$out"; fail "fi_info (DGRAM) failed"; }
	echo "$out"
	grep -qx "    domain: $IF_A-dgram" <<<"$out" || fail "no verbs DGRAM domain $IF_A-dgram"
	grep -qx "    protocol: FI_PROTO_IB_UD" <<<"$out" || fail "no IB UD protocol"
}
