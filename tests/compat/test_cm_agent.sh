# shellcheck shell=bash
# The CM agent of one device (compat/rdmacm/agent.c) on the wire: QP1 (QPN 1, made by our
# libibverbs' blue_compat_create_gsi_qp) steered by blue's XDP program to the agent's
# AF_XDP socket, the IB CM's MADs between two namespaces joined by a veth pair with blue
# attached to both ends. $B/tests/compat/cm_agent_probe drives the IB CM directly (no
# rdma_cm API on top) and prints the events and the agent's and IB CM's counters, which
# the tests read back.
# Run: B=build-<you> bash tests/lib/runner.sh tests/compat/test_cm_agent.sh [test_name]
#
# Test functions:
#   test_connect_disconnect   REQ -> REP -> RTU -> DREQ -> DREP, events on both sides
#   test_reject_no_listener   REQ for a service nobody listens on: REJ 8
#   test_reject_consumer      the listener rejects (REJ 28): the active side sees it
#   test_timeout_agent_gone   the peer's agent was killed: REQ retried, TIMEOUT in
#                             bounded time; a new agent there takes QP1 back
#   test_gsi_in_use           a second agent on the same device: EADDRINUSE
#   test_hostile_mads         truncated, wrong base/class/class version, unknown attribute, REP for
#                             no connection, oversized: dropped, counted per reason
#   test_hostile_jumbo        a datagram longer than QP1's buffers puts QP1 in ERROR: the
#                             agent resets it and answers the next REQ
#   test_hostile_spoofed      REQs from a source with no neighbour: the REJ's address
#                             handle fails once (~1 s), then at once; a real REQ is
#                             answered within a bound
#   test_put_from_event       the last cma_agent_put from an event callback (the agent's
#                             thread): the thread frees the agent, no self-join
#
# Knobs the probe's agent reads (compat/rdmacm/agent.c): BLUE_RDMACM_CM_TIMEOUT and
# BLUE_RDMACM_CM_RETRIES, set here only for the TIMEOUT test (a short response timeout,
# few retries), so it ends in about a second instead of the kernel's ~70 s.
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh
# shellcheck source=tests/lib/compat.sh
source tests/lib/compat.sh

BLUECTL=$PWD/$B/bin/bluectl
CA_LIB=$PWD/$B/compat
CA_PROBE=$PWD/$B/tests/compat/cm_agent_probe
CA_IP_A=10.201.161.1	# listener
CA_IP_B=10.201.161.2	# connector
CA_SID=$((0x0106 << 16 | 7174))	# PS_TCP, port 7174 (rping's)

ca_need() {
	need_bins "$CA_PROBE" "$CA_LIB/libibverbs.so.1" "$BLUECTL"
	compat_env "$CA_LIB"
}

ca_setup() {
	ca_need
	netns_setup ca "$CA_IP_A" "$CA_IP_B"
	blue_attach "$NS_A" "$IF_A"
	blue_attach "$NS_B" "$IF_B"
}

# _ca_cmd ARGS...: CA_CMD, the one command line of a probe run: bounded, on the compat
# library, its librdmacm counters printed at exit, CA_ENV's NAME=VALUE words (the knobs
# above, BLUE_QUEUE) in its environment
_ca_cmd() {
	# shellcheck disable=SC2206 # CA_ENV: NAME=VALUE words
	CA_CMD=(timeout 40 "${COMPAT_ENV[@]}" BLUE_RDMACM_STATS=1 ${CA_ENV:-} "$CA_PROBE" "$@")
}

# ca_bg NS VAR OUT ARGS...: the probe in NS in the background, output to OUT
ca_bg() {
	local ns=$1 var=$2 out=$3; shift 3
	_ca_cmd "$@"
	ns_bg "$ns" "$var" "${CA_CMD[@]}" >"$out" 2>&1
}

# ca_run NS OUT ARGS...: the probe in NS in the foreground; its status
ca_run() {
	local ns=$1 out=$2; shift 2
	_ca_cmd "$@"
	ns_exec "$ns" "${CA_CMD[@]}" >"$out" 2>&1
}

# ca_start VAR OUT READY WHAT ARGS...: the probe in A in the background (ca_bg), back
# once OUT has a line matching READY (10 s at most); else OUT is shown and the test fails
# saying WHAT did not happen
ca_start() {
	local var=$1 out=$2 ready=$3 what=$4; shift 4
	ca_bg "$NS_A" "$var" "$out" "$@"
	ca_wait_line "$out" "$ready" 10 || { cat "$out"; fail "$what"; }
}

# ca_wait_line FILE REGEX SECONDS: 0 once FILE has a line matching REGEX
ca_wait_line() {
	local i
	for ((i = 0; i < $3 * 20; i++)); do
		grep -qE "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# ca_counter FILE NAME: the probe's "counter NAME VALUE"
ca_counter() {
	awk -v k="$2" '$1 == "counter" && $2 == k { print $3 }' "$1"
}

# ca_events FILE: the probe's event and action names, one line, in order
ca_events() {
	awk '$1 == "event" { printf "%s ", $2 } $1 == "sent" { printf "sent_%s ", $2 }' "$1" |
		sed 's/ $//'
}

ca_tmp() {
	local f
	f=$(mktemp)
	on_exit "rm -f $f"
	echo "$f"
}

test_connect_disconnect() {
	local srv cli spid rc=0 src=0 ev
	ca_setup
	srv=$(ca_tmp); cli=$(ca_tmp)
	ca_start spid "$srv" '^listening' "the listener did not start" listen "$CA_SID" --count 1 --time 30
	ca_run "$NS_B" "$cli" connect "$CA_IP_A" "$CA_SID" --time 30 || rc=$?
	wait "$spid" || src=$?
	echo "--- listener"; cat "$srv"; echo "--- connector"; cat "$cli"
	[ "$rc" -eq 0 ] || fail "the connector exited $rc"
	[ "$src" -eq 0 ] || fail "the listener exited $src"
	ev=$(ca_events "$cli")
	[ "$ev" = "REP_RECEIVED sent_RTU sent_DREQ DISCONNECTED TIMEWAIT_EXIT" ] ||
		fail "connector events: '$ev'"
	ev=$(ca_events "$srv")
	[ "$ev" = "REQ_RECEIVED sent_REP ESTABLISHED DISCONNECTED TIMEWAIT_EXIT" ] ||
		fail "listener events: '$ev'"
	grep -qE "^event REQ_RECEIVED service_id=0x$(printf %x "$CA_SID") .*ip_src=$CA_IP_B$" \
		"$srv" || fail "the REQ's service ID or IP CM header is not what was sent"
	# the connector sent REQ, RTU, DREQ; the listener REP, DREP
	[ "$(ca_counter "$cli" agent.tx_mads)" = 3 ] || fail "connector tx_mads"
	[ "$(ca_counter "$cli" agent.rx_mads)" = 2 ] || fail "connector rx_mads"
	[ "$(ca_counter "$srv" agent.tx_mads)" = 2 ] || fail "listener tx_mads"
	[ "$(ca_counter "$srv" agent.rx_mads)" = 3 ] || fail "listener rx_mads"
	for f in "$srv" "$cli"; do
		[ "$(ca_counter "$f" ibcm.retransmits)" = 0 ] || fail "a MAD was retransmitted"
		[ "$(ca_counter "$f" agent.tx_err)" = 0 ] || fail "a send failed"
	done
	# XDP steered dqpn 1 to the agents' sockets
	local n
	n=$(ctl_stat "$NS_A" "$IF_A" redirect)
	[ "${n:-0}" -ge 3 ] || fail "XDP in A redirected ${n:-none} frames, want >= 3"
}

test_reject_no_listener() {
	local srv cli spid rc=0
	ca_setup
	srv=$(ca_tmp); cli=$(ca_tmp)
	ca_start spid "$srv" '^agent up' "the agent did not start" idle --time 30
	ca_run "$NS_B" "$cli" connect "$CA_IP_A" "$CA_SID" --time 20 || rc=$?
	kill -INT "$spid" 2>/dev/null || true
	cat "$cli"
	[ "$rc" -eq 0 ] || fail "the connector exited $rc"
	grep -qE "^event REJECTED reason=8 " "$cli" || fail "no REJ with reason 8"
	grep -qx "result REJECTED" "$cli" || fail "the connector did not end on the REJ"
}

test_reject_consumer() {
	local srv cli spid rc=0 src=0
	ca_setup
	srv=$(ca_tmp); cli=$(ca_tmp)
	ca_start spid "$srv" '^listening' "the listener did not start" listen "$CA_SID" --reject 28 --time 30
	ca_run "$NS_B" "$cli" connect "$CA_IP_A" "$CA_SID" --time 20 || rc=$?
	wait "$spid" || src=$?
	echo "--- listener"; cat "$srv"; echo "--- connector"; cat "$cli"
	[ "$rc" -eq 0 ] || fail "the connector exited $rc"
	[ "$src" -eq 0 ] || fail "the listener exited $src"
	[ "$(ca_events "$srv")" = "REQ_RECEIVED sent_REJ" ] || fail "listener: $(ca_events "$srv")"
	grep -qE "^event REJECTED reason=28 " "$cli" || fail "no REJ with reason 28"
}

test_timeout_agent_gone() {
	local srv cli spid rc=0 t0 t1 ppid
	ca_setup
	srv=$(ca_tmp); cli=$(ca_tmp)
	ca_start spid "$srv" '^listening' "the listener did not start" listen "$CA_SID" --time 30
	# the peer's agent dies holding QP1: its socket is gone, XDP finds no one
	ppid=$(sed -nE 's/^agent up: .* pid ([0-9]+)$/\1/p' "$srv")
	[ -n "$ppid" ] || fail "the probe did not say its PID"
	kill -KILL "$ppid"
	wait "$spid" 2>/dev/null || true
	t0=$(date +%s%N)
	# 4.096 us * 2^14 = 67 ms per try, 3 retries: ~0.3 s (the kernel's 20/15: ~70 s)
	CA_ENV="BLUE_RDMACM_CM_TIMEOUT=14 BLUE_RDMACM_CM_RETRIES=3" \
		ca_run "$NS_B" "$cli" connect "$CA_IP_A" "$CA_SID" --time 20 || rc=$?
	t1=$(date +%s%N)
	cat "$cli"
	[ "$rc" -eq 0 ] || fail "the connector exited $rc"
	grep -q "^event TIMEOUT" "$cli" || fail "no TIMEOUT event"
	[ "$(ca_counter "$cli" ibcm.retransmits)" = 3 ] || fail "retransmits != 3"
	[ "$(ca_counter "$cli" agent.tx_mads)" = 4 ] || fail "REQ + 3 retries != tx_mads"
	[ $(((t1 - t0) / 1000000)) -lt 5000 ] || fail "the TIMEOUT took $(((t1 - t0) / 1000000)) ms"
	# a new agent in A takes the dead one's QP1 (its slot mark is free) and answers
	ca_start spid "$srv" '^listening' "a new agent could not take QP1" listen "$CA_SID" --count 1 --time 30
	rc=0
	ca_run "$NS_B" "$cli" connect "$CA_IP_A" "$CA_SID" --time 30 || rc=$?
	cat "$cli"
	[ "$rc" -eq 0 ] || fail "the connector exited $rc through the new agent"
	grep -qx "result TIMEWAIT_EXIT" "$cli" || fail "no connection through the new agent"
}

test_gsi_in_use() {
	local srv out spid rc=0
	# two queues: a second process serves queue 1 of the same netdev, sharing its
	# QP-context table (one AF_XDP queue serves one process)
	VETH_QUEUES=2 ca_setup
	srv=$(ca_tmp); out=$(ca_tmp)
	ca_start spid "$srv" '^agent up' "the agent did not start" idle --time 30
	CA_ENV=BLUE_QUEUE=1 ca_run "$NS_A" "$out" idle --time 1 || rc=$?
	kill -INT "$spid" 2>/dev/null || true
	cat "$out"
	[ "$rc" -eq 3 ] || fail "the second agent exited $rc, want 3"
	grep -qx "result AGENT_EADDRINUSE" "$out" || fail "not EADDRINUSE"
	grep -q "QP1 (the GSI) belongs to another process" "$out" || fail "no message naming QP1"
}

# Hostile MADs from B's namespace (an AF_PACKET socket, python3-scapy) at A's agent, which
# must drop and count each kind under its own reason, and still answer afterwards (a REQ
# for an unlistened service gets its REJ 8).
CA_HOSTILE=$PWD/tests/compat/cm_hostile.py
CA_NHOSTILE=5	# frames per kind

ca_need_scapy() {
	/usr/bin/python3 -c 'import scapy.contrib.roce' 2>/dev/null ||
		skip "/usr/bin/python3 cannot import scapy.contrib.roce (apt-get install python3-scapy)"
}

# ca_hostile SRC_IP ARGS...: cm_hostile.py in B, its frames from SRC_IP to A's agent
# (ARGS: how many per kind, which kinds); its output shown, the test failed if it fails
ca_hostile() {
	local out src=$1; shift
	out=$(ns_exec "$NS_B" timeout 60 /usr/bin/python3 "$CA_HOSTILE" "$IF_B" "$src" \
		"$CA_IP_A" "$MAC_A" "$@" 2>&1) || { echo "$out"; fail "cm_hostile.py failed"; }
	echo "$out"
}
test_hostile_mads() {
	local srv cli spid rc=0 src=0 kv k v
	ca_need_scapy
	ca_setup
	srv=$(ca_tmp); cli=$(ca_tmp)
	ca_start spid "$srv" '^listening' "the agent did not start" listen "$CA_SID" --time 12
	ca_hostile "$CA_IP_B" "$CA_NHOSTILE"
	# the agent still works: a REQ for another service is answered REJ 8
	ca_run "$NS_B" "$cli" connect "$CA_IP_A" $((CA_SID + 1)) --time 10 || rc=$?
	grep -qE "^event REJECTED reason=8 " "$cli" || { cat "$cli"; fail "no REJ 8 after the hostile MADs"; }
	wait "$spid" || src=$?
	cat "$srv"
	[ "$src" -eq 1 ] || fail "the listener exited $src, want 1 (its time limit, no connection)"
	# every kind under its reason, exactly; the REQ counted as no listener
	for kv in agent.rx_short agent.rx_long ibcm.decode.short ibcm.decode.base_version \
		  ibcm.decode.mgmt_class ibcm.decode.class_version ibcm.decode.unknown_attr \
		  ibcm.no_conn; do
		v=$(ca_counter "$srv" "$kv")
		[ "$v" = "$CA_NHOSTILE" ] || fail "$kv is '${v:-none}', want $CA_NHOSTILE"
	done
	[ "$(ca_counter "$srv" ibcm.no_listener)" = 1 ] || fail "no_listener != 1"
	# what reached the IB CM: 6 kinds x N hostile (all but hdr_short and oversized) + the REQ
	k=$((6 * CA_NHOSTILE + 1))
	[ "$(ca_counter "$srv" ibcm.rx)" = "$k" ] || fail "ibcm.rx != $k"
	[ "$(ca_counter "$srv" agent.rx_err)" = 0 ] || fail "receive errors on QP1"
	for kv in agent.rx_bad_grh ibcm.wrong_state ibcm.dup_req; do
		[ "$(ca_counter "$srv" "$kv")" = 0 ] || fail "$kv is not 0"
	done
}

# A datagram longer than QP1's receive buffers (8000 bytes on a 9000-byte link) fails its
# receive, which moves QP1 to ERROR (IBA: a local length error); the agent resets QP1 to
# RTS with its buffers posted again, says so once, and answers the next REQ.
test_hostile_jumbo() {
	local srv cli spid rc=0 src=0
	ca_need_scapy
	ca_need
	netns_setup ca "$CA_IP_A" "$CA_IP_B"
	ip -n "$NS_A" link set "$IF_A" mtu 9000
	ip -n "$NS_B" link set "$IF_B" mtu 9000
	blue_attach "$NS_A" "$IF_A"
	blue_attach "$NS_B" "$IF_B"
	srv=$(ca_tmp); cli=$(ca_tmp)
	ca_start spid "$srv" '^listening' "the agent did not start" listen "$CA_SID" --time 10
	ca_hostile "$CA_IP_B" 1 jumbo
	ca_wait_line "$srv" 'QP1 went to ERROR' 5 || true
	ca_run "$NS_B" "$cli" connect "$CA_IP_A" $((CA_SID + 1)) --time 8 || rc=$?
	grep -qE "^event REJECTED reason=8 " "$cli" || { cat "$cli"; fail "no REJ 8 after the jumbo datagram"; }
	wait "$spid" || src=$?
	cat "$srv"
	[ "$(ca_counter "$srv" agent.rx_err)" = 1 ] || fail "rx_err != 1"
	[ "$(ca_counter "$srv" agent.qp_resets)" = 1 ] || fail "qp_resets != 1"
	[ "$(ca_counter "$srv" ibcm.no_listener)" = 1 ] || fail "the REQ after it was not handled"
	[ "$(grep -c 'QP1 went to ERROR' "$srv")" = 1 ] || fail "not one line saying QP1 was reset"
}

# REQs whose source IP is spoofed (in the subnet, but nobody has it): answering each with
# a REJ 8 needs an address handle, whose neighbour does not resolve (our libibverbs
# waits ~1 s, with the cma lock held). The agent remembers the failure, so the next
# ones fail at once, and a real peer's REQ right after is answered in bounded time.
CA_IP_SPOOF=10.201.161.99
test_hostile_spoofed() {
	local srv cli spid rc=0 src=0 t0 t1 ms
	ca_need_scapy
	ca_setup
	srv=$(ca_tmp); cli=$(ca_tmp)
	ca_start spid "$srv" '^listening' "the agent did not start" listen "$CA_SID" --time 12
	ca_hostile "$CA_IP_SPOOF" "$CA_NHOSTILE" req
	t0=$(date +%s%N)
	ca_run "$NS_B" "$cli" connect "$CA_IP_A" $((CA_SID + 1)) --time 10 || rc=$?
	t1=$(date +%s%N)
	ms=$(((t1 - t0) / 1000000))
	echo "the real REQ was answered $ms ms after it was started"
	grep -qE "^event REJECTED reason=8 " "$cli" || { cat "$cli"; fail "no REJ 8 for the real REQ"; }
	wait "$spid" || src=$?
	cat "$srv"
	# one neighbour wait (~1 s), not one per spoofed REQ ($CA_NHOSTILE s)
	[ "$ms" -lt 3500 ] || fail "the real REQ took $ms ms: the spoofed ones stalled the agent"
	[ "$(ca_counter "$srv" agent.ah_err)" = "$CA_NHOSTILE" ] || fail "ah_err != $CA_NHOSTILE"
	[ "$(ca_counter "$srv" ibcm.no_listener)" = $((CA_NHOSTILE + 1)) ] || fail "no_listener"
	[ "$(ca_counter "$srv" ibcm.tx_err)" = "$CA_NHOSTILE" ] || fail "tx_err (REJs not sent)"
	[ "$(ca_counter "$srv" agent.tx_mads)" = 1 ] || fail "tx_mads: only the real REJ leaves"
}

# The last cma_agent_put may come from an IB CM event's consumer, on the agent's own
# thread (rdma_cm drops a device when its last id goes): the thread cannot join itself,
# so it frees the agent when the pass is over. The probe ends cleanly, with its counters
# and the BLUE_RDMACM_STATS line the thread prints as it frees; the next process's agent
# gets QP1.
test_put_from_event() {
	local srv cli spid rc=0
	ca_setup
	srv=$(ca_tmp); cli=$(ca_tmp)
	ca_start spid "$srv" '^agent up' "the agent did not start" idle --time 20
	ca_run "$NS_B" "$cli" connect "$CA_IP_A" "$CA_SID" --time 10 --put-in-event || rc=$?
	cat "$cli"
	[ "$rc" -eq 0 ] || fail "the connector exited $rc"
	grep -qx "put from the event callback" "$cli" || fail "the put did not happen in the callback"
	grep -qx "result REJECTED" "$cli" || fail "no REJ"
	grep -q "^librdmacm: agent .*: rx_mads=1 " "$cli" || fail "no stats line from the thread's free"
	rc=0
	ca_run "$NS_B" "$cli" connect "$CA_IP_A" "$CA_SID" --time 10 || rc=$?
	[ "$rc" -eq 0 ] || { cat "$cli"; fail "the second connector exited $rc"; }
	grep -qx "result REJECTED" "$cli" || { cat "$cli"; fail "QP1 not usable again"; }
	kill -INT "$spid" 2>/dev/null || true
}
