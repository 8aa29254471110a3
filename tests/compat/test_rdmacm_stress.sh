# shellcheck shell=bash
# blue's librdmacm.so.1 under load and failure (issue 16): many connections to one
# listener (rdmacm-utils' cmtime), the IB CM's unlisten (a destroyed listener's port is
# free again; a REQ to it gets REJ 8), and the failure cases each ending as the event
# librdmacm gives in bounded time: a consumer reject with private data, a server killed
# mid-handshake, a peer gone while traffic flows. Two namespaces joined by a veth pair,
# blue attached to both ends, every program loading $B/compat/lib{ibverbs,rdmacm}.so.1
# (the setup: tests/lib/rdmacm.sh).
# Run: B=build-<you> bash tests/lib/runner.sh tests/compat/test_rdmacm_stress.sh [test_name]
#
# Test functions: test_cmtime_256 test_relisten test_reject_private_data
#   test_server_dies_mid_handshake test_disconnect_under_traffic
#   test_server_disconnects_under_traffic test_backlog_full
#   test_peer_killed_under_traffic test_migrate_id
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh
# shellcheck source=tests/lib/compat.sh
source tests/lib/compat.sh
# shellcheck source=tests/lib/rdmacm.sh
source tests/lib/rdmacm.sh

ST_PROBE=$PWD/$B/tests/compat/cm_fail_probe
ST_IP_A=10.201.181.1	# server
ST_IP_B=10.201.181.2	# client

# st_setup TOOL...: the namespaces, blue on both ends (tests/lib/rdmacm.sh)
st_setup() { rdmacm_setup rst "$ST_IP_A" "$ST_IP_B" "$@"; }

# 256 connections at once to one listener. cmtime 44's server never exits by design
# (run_server loops in process_events); it is ended by PID once the client is done, and
# must still be running then (no crash, no assertion) with no error line. The client
# exits 0 only when every connection reached ESTABLISHED and then DISCONNECTED (its
# disconnect step waits for all 256 DISCONNECTED events: the server's DREPs). Both sides
# print "destroy_cq: 255 QPs still complete into it": cmtime passes one static
# ibv_qp_init_attr to every rdma_create_qp, which writes the first id's CQs back into it,
# so 255 QPs share the first id's CQ, whose destroy is refused (EBUSY, as the kernel's is).
test_cmtime_256() {
	local spid srv cli rc=0 t0 t1
	st_setup cmtime
	srv=$(mktemp); cli=$(mktemp)
	on_exit "rm -f $srv $cli"
	ns_bg "$NS_A" spid timeout 120 "${COMPAT_ENV[@]}" cmtime -b "$ST_IP_A" -p 7201 >"$srv" 2>&1
	on_exit "kill $spid 2>/dev/null"
	sleep 1
	t0=$(date +%s)
	ns_exec "$NS_B" timeout 90 "${COMPAT_ENV[@]}" cmtime -s "$ST_IP_A" -p 7201 -c 256 \
		>"$cli" 2>&1 || rc=$?
	t1=$(date +%s)
	echo "--- client (exit $rc, $((t1 - t0)) s)"; cat "$cli"
	kill -0 "$spid" 2>/dev/null || { echo "--- server"; cat "$srv"; fail "cmtime server died"; }
	kill "$spid"; wait "$spid" 2>/dev/null || true
	echo "--- server"; cat "$srv"
	[ "$rc" -eq 0 ] || fail "cmtime -c 256 client exited $rc"
	grep -qE "^disconnect " "$cli" || fail "cmtime client printed no disconnect timing"
	! grep -qiE "error|fail|event: " "$cli" "$srv" || fail "cmtime reported an error"
	grep -E "^(connect|disconnect) " "$cli" | sed 's/^/# cmtime -c 256: /'
}

# st_server LOG ARGS...: the probe's server in A, in the background (ST_SPID), bounded;
# returns once it printed "probe: ready" (its listen is up)
st_server() {
	local log=$1; shift
	ns_bg "$NS_A" ST_SPID timeout 60 "${COMPAT_ENV[@]}" "${ST_SENV[@]}" \
		"$ST_PROBE" server "$ST_IP_A" "$@" >"$log" 2>&1
	on_exit "kill $ST_SPID 2>/dev/null"
	wait_for_line "$log" "probe: ready" 10 || { cat "$log"; fail "the probe server did not listen"; }
}

# st_client LOG ARGS...: the probe's client in B, bounded; sets ST_CRC and ST_SECS
st_client() {
	local log=$1 t0 t1; shift
	ST_CRC=0
	t0=$(date +%s%N)
	ns_exec "$NS_B" timeout 60 "${COMPAT_ENV[@]}" "${ST_CENV[@]}" \
		"$ST_PROBE" client "$ST_IP_A" "$@" >"$log" 2>&1 || ST_CRC=$?
	t1=$(date +%s%N)
	ST_MS=$(((t1 - t0) / 1000000))
	echo "--- client (exit $ST_CRC, $ST_MS ms): $*"; cat "$log"
}

ST_SENV=()
ST_CENV=()

# a destroyed listener's port: bindable and listenable again by a new id; a REQ to a
# port whose listener was destroyed gets REJ 8 from the IB CM itself (its no_listener
# counter, read at the server's exit with BLUE_RDMACM_STATS=1), while the same process
# keeps a listener elsewhere (its CM agent up); the port listened again accepts
test_relisten() {
	local srv cli src=0
	st_setup "$ST_PROBE"
	srv=$(mktemp); cli=$(mktemp)
	on_exit "rm -f $srv $cli"
	ST_SENV=(BLUE_RDMACM_STATS=1)
	st_server "$srv" 7301 relisten 7302
	st_client "$cli" 7302 expect RDMA_CM_EVENT_REJECTED 8
	[ "$ST_CRC" -eq 0 ] || fail "a REQ to a destroyed listener's port: not REJECTED 8"
	[ "$ST_MS" -lt 5000 ] || fail "the REJ took $ST_MS ms"
	st_client "$cli" 7301 expect RDMA_CM_EVENT_ESTABLISHED 0
	[ "$ST_CRC" -eq 0 ] || fail "the port listened again by a new id did not accept"
	grep -q "probe: DISCONNECTED" "$cli" || fail "client: no DISCONNECTED"
	wait "$ST_SPID" || src=$?
	echo "--- server (exit $src)"; cat "$srv"
	[ "$src" -eq 0 ] || fail "the relisten server exited $src"
	grep -q "probe: listening again on 7301" "$srv" || fail "server: no second listen"
	grep -qE "ibcm .*no_listener=[1-9]" "$srv" ||
		fail "server: the IB CM did not count the REQ as for no listener (no unlisten?)"
}

# rdma_migrate_id: the server moves a CONNECT_REQUEST's id to a channel of its own before
# it accepts; the id's ESTABLISHED and DISCONNECTED arrive there and nothing more on the
# listener's channel; it then goes synchronous (NULL) and back
test_migrate_id() {
	local srv cli src=0
	st_setup "$ST_PROBE"
	srv=$(mktemp); cli=$(mktemp)
	on_exit "rm -f $srv $cli"
	st_server "$srv" 7321 migrate
	st_client "$cli" 7321 expect RDMA_CM_EVENT_ESTABLISHED 0
	wait "$ST_SPID" || src=$?
	echo "--- server (exit $src)"; cat "$srv"
	[ "$ST_CRC" -eq 0 ] || fail "client: no ESTABLISHED with a server that migrated its id"
	grep -q "probe: DISCONNECTED" "$cli" || fail "client: no DISCONNECTED"
	[ "$src" -eq 0 ] || fail "the migrating server exited $src"
	grep -q "probe: DISCONNECTED on the migrated channel" "$srv" ||
		fail "server: the migrated id's events did not come to its new channel"
	grep -q "probe: migrated to synchronous and back" "$srv" || fail "server: no migrate to NULL"
}

# the server's rdma_reject with 20 bytes of private data: the client's REJECTED has
# status 28 (IB_CM_REJ_CONSUMER_DEFINED) and its private data starts with those bytes
test_reject_private_data() {
	local srv cli src=0
	st_setup "$ST_PROBE"
	srv=$(mktemp); cli=$(mktemp)
	on_exit "rm -f $srv $cli"
	st_server "$srv" 7311 reject
	st_client "$cli" 7311 expect RDMA_CM_EVENT_REJECTED 28 20
	wait "$ST_SPID" || src=$?
	echo "--- server (exit $src)"; cat "$srv"
	[ "$ST_CRC" -eq 0 ] || fail "client: not REJECTED 28 with the 20 bytes"
	grep -q "probe: private data: the 20 bytes sent" "$cli" || fail "client: private data unchecked"
	[ "$ST_MS" -lt 5000 ] || fail "the REJ took $ST_MS ms"
	[ "$src" -eq 0 ] || fail "the rejecting server exited $src"
}

# the server is killed (by PID) after its CONNECT_REQUEST, before it accepts: the
# client's REQ goes unanswered and it gets UNREACHABLE -ETIMEDOUT (-110) once its CM
# retries run out: BLUE_RDMACM_CM_TIMEOUT=16 (268 ms) x (1 + 3 retries) ~ 1.1 s
test_server_dies_mid_handshake() {
	local srv cli cpid crc=0 t0 t1
	st_setup "$ST_PROBE"
	srv=$(mktemp); cli=$(mktemp)
	on_exit "rm -f $srv $cli"
	st_server "$srv" 7321 hold
	t0=$(date +%s%N)
	ns_bg "$NS_B" cpid timeout 60 "${COMPAT_ENV[@]}" BLUE_RDMACM_CM_TIMEOUT=16 \
		BLUE_RDMACM_CM_RETRIES=3 "$ST_PROBE" client "$ST_IP_A" 7321 \
		expect RDMA_CM_EVENT_UNREACHABLE -110 >"$cli" 2>&1
	on_exit "kill $cpid 2>/dev/null"
	wait_for_line "$srv" "probe: CONNECT_REQUEST held" 10 || { cat "$srv"; fail "no CONNECT_REQUEST"; }
	kill -9 "$(pgrep -P "$ST_SPID" -x cm_fail_probe || echo "$ST_SPID")" 2>/dev/null || true
	wait "$ST_SPID" 2>/dev/null || true
	wait "$cpid" || crc=$?
	t1=$(date +%s%N)
	echo "--- server (killed)"; cat "$srv"
	echo "--- client (exit $crc, $(((t1 - t0) / 1000000)) ms)"; cat "$cli"
	[ "$crc" -eq 0 ] || fail "client: not UNREACHABLE -110 (exit $crc)"
	[ $(((t1 - t0) / 1000000)) -lt 10000 ] || fail "UNREACHABLE took over 10 s"
}

# st_traffic SERVER_ROLE CLIENT_ROLE [KILL]: the probe's ping-pong between A and B;
# KILL=client: the client is killed by PID (SIGKILL) 2 s into the traffic. Sets
# ST_SRV/ST_CLI (logs), ST_SRC/ST_CRC (exits).
st_traffic() {
	local cpid t0
	ST_SRV=$(mktemp); ST_CLI=$(mktemp)
	on_exit "rm -f $ST_SRV $ST_CLI"
	st_server "$ST_SRV" 7331 traffic "$1"
	ns_bg "$NS_B" cpid timeout 60 "${COMPAT_ENV[@]}" "${ST_CENV[@]}" \
		"$ST_PROBE" client "$ST_IP_A" 7331 traffic "$2" >"$ST_CLI" 2>&1
	on_exit "kill $cpid 2>/dev/null"
	if [ "${3:-}" = client ]; then
		wait_for_line "$ST_CLI" "probe: traffic" 10 || { cat "$ST_CLI"; fail "no traffic"; }
		sleep 2
		kill -9 "$(pgrep -P "$cpid" -x cm_fail_probe || echo "$cpid")" 2>/dev/null || true
		echo "# killed the client 2 s into the traffic"
	fi
	t0=$(date +%s)
	ST_SRC=0; ST_CRC=0
	wait "$ST_SPID" || ST_SRC=$?
	wait "$cpid" || ST_CRC=$?
	ST_SECS=$(($(date +%s) - t0))
	echo "--- server (exit $ST_SRC)"; cat "$ST_SRV"
	echo "--- client (exit $ST_CRC)"; cat "$ST_CLI"
}

# messages counted by a side's DISCONNECTED line
st_msgs() { sed -n 's/^probe: DISCONNECTED after \([0-9]*\) messages.*/\1/p' "$1"; }

# the client calls rdma_disconnect 2 s into the ping-pong; the server, busy in its
# traffic loop, gets DISCONNECTED (the client's DREQ) and both exit 0; traffic flowed
test_disconnect_under_traffic() {
	local n
	st_setup "$ST_PROBE"
	st_traffic stay disconnect:2000
	[ "$ST_SRC" -eq 0 ] || fail "server exited $ST_SRC"
	[ "$ST_CRC" -eq 0 ] || fail "client exited $ST_CRC"
	grep -q "probe: DISCONNECTED after [0-9]* messages (we disconnected) status 0" "$ST_CLI" ||
		fail "client: no DISCONNECTED after its rdma_disconnect"
	grep -q "probe: DISCONNECTED after [0-9]* messages (the peer's DREQ) status 0" "$ST_SRV" ||
		fail "server: no DISCONNECTED from the peer's DREQ"
	n=$(st_msgs "$ST_SRV")
	[ "${n:-0}" -ge 100 ] || fail "only ${n:-0} messages before the disconnect"
	echo "# $n messages before the DREQ"
}

# the same the other way: the server disconnects mid-traffic, the client survives
test_server_disconnects_under_traffic() {
	local n
	st_setup "$ST_PROBE"
	st_traffic disconnect:2000 stay
	[ "$ST_SRC" -eq 0 ] || fail "server exited $ST_SRC"
	[ "$ST_CRC" -eq 0 ] || fail "client exited $ST_CRC"
	grep -q "probe: DISCONNECTED after [0-9]* messages (the peer's DREQ) status 0" "$ST_CLI" ||
		fail "client: no DISCONNECTED from the server's DREQ"
	grep -q "probe: DISCONNECTED after [0-9]* messages (we disconnected)" "$ST_SRV" ||
		fail "server: no DISCONNECTED after its rdma_disconnect"
	n=$(st_msgs "$ST_CLI")
	[ "${n:-0}" -ge 100 ] || fail "only ${n:-0} messages before the disconnect"
}

# the client is killed (SIGKILL, by PID) mid-traffic: no DREQ comes (the IB CM lived in
# the dead process). The server's next send fails (ACK timeout 14 = 67 ms, retry count
# 1), it calls rdma_disconnect, its DREQ goes unanswered and times out into
# DISCONNECTED (BLUE_RDMACM_CM_TIMEOUT=16, 3 retries: ~1.1 s); bounded, exit 0
test_peer_killed_under_traffic() {
	local n
	st_setup "$ST_PROBE"
	ST_SENV=(BLUE_RDMACM_CM_TIMEOUT=16 BLUE_RDMACM_CM_RETRIES=3)
	st_traffic stay stay client
	[ "$ST_SRC" -eq 0 ] || fail "server exited $ST_SRC"
	grep -qE "probe: completion .* after [0-9]+ messages" "$ST_SRV" ||
		fail "server: no failed completion after the peer died"
	grep -q "probe: DISCONNECTED after [0-9]* messages (a send failed, our DREQ) status 0" "$ST_SRV" ||
		fail "server: no DISCONNECTED after its DREQ to the dead peer"
	[ "$ST_SECS" -lt 20 ] || fail "the survivor took $ST_SECS s"
	n=$(st_msgs "$ST_SRV")
	[ "${n:-0}" -ge 100 ] || fail "only ${n:-0} messages before the peer died"
	echo "# the survivor's DISCONNECTED came $ST_SECS s after the kill, $n messages"
}

# the listen backlog (as the kernel's ucma keeps it): a server listening with backlog 1
# reads no event for 1.5 s while one client process connects two ids. The first REQ is
# queued; the second is dropped unanswered, as the kernel does ("do not reject to allow
# future retries": the IB CM's req_dropped, one log line), and its retransmissions
# (BLUE_RDMACM_CM_TIMEOUT=17, 537 ms) are dropped too until the server has read the
# first; then one is queued and accepted: both ids connected, the second after >= 1 s
test_backlog_full() {
	local srv cli ms
	st_setup "$ST_PROBE"
	srv=$(mktemp); cli=$(mktemp)
	on_exit "rm -f $srv $cli"
	ST_SENV=(BLUE_RDMACM_STATS=1)
	st_server "$srv" 7341 backlog 1 1500
	ST_CENV=(BLUE_RDMACM_CM_TIMEOUT=17)
	st_client "$cli" 7341 multi 2
	ST_CENV=()
	wait "$ST_SPID" || true
	echo "--- server"; cat "$srv"
	[ "$ST_CRC" -eq 0 ] || fail "client: not both connections ESTABLISHED and DISCONNECTED"
	grep -q "probe: backlog: 2 CONNECT_REQUEST, 2 ESTABLISHED, 2 DISCONNECTED" "$srv" ||
		fail "server: not the two requests, each once"
	grep -q "backlog (1) is full" "$srv" || fail "server: the drop was not logged"
	grep -qE "ibcm .*req_dropped=[1-9]" "$srv" || fail "server: no REQ counted as dropped"
	# no QPs: each id's connect completes with CONNECT_RESPONSE and rdma_establish's RTU
	ms=$(sed -n 's/^probe: connection .*CONNECT_RESPONSE status 0 after \([0-9]*\) ms/\1/p' "$cli" |
		sort -n | tail -1)
	[ "${ms:-0}" -ge 1000 ] || fail "the second connection did not wait for the backlog (${ms:-0} ms)"
}
