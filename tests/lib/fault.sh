# shellcheck shell=bash
# Fault-injection helpers for script tests (source after runner.sh and tests/lib/netns.sh).
#
#   A (FT_IF_A) ==veth== (FT_IF_MA) M (FT_IF_MB) ==veth== (FT_IF_B) B
#
# A and B share one /24 and have static neighbour entries for each other, so they talk
# directly at L2; M has no addresses and tools/blue_fault forwards every frame between
# its two ends, applying faults to RoCEv2 frames only. Names carry the shell's PID
# ($BASHPID): namespaces and interfaces never collide with another run's.

FAULT_BIN=${FAULT_BIN:-$PWD/$B/bin/blue_fault}

# fault_topo IP_A IP_B: build the three namespaces and register their teardown.
# Sets FT_NS_A FT_NS_M FT_NS_B FT_IF_A FT_IF_MA FT_IF_MB FT_IF_B FT_MAC_A FT_MAC_B
# FT_IP_A FT_IP_B.
fault_topo() {
	FT_IP_A=$1 FT_IP_B=$2
	FT_NS_A=blue-flt-$BASHPID-a
	FT_NS_M=blue-flt-$BASHPID-m
	FT_NS_B=blue-flt-$BASHPID-b
	FT_IF_A=flta$BASHPID
	FT_IF_MA=fltma$BASHPID
	FT_IF_MB=fltmb$BASHPID
	FT_IF_B=fltb$BASHPID
	local ns
	for ns in "$FT_NS_A" "$FT_NS_M" "$FT_NS_B"; do
		ip netns add "$ns"
		on_exit "ip netns del $ns 2>/dev/null"
		ip -n "$ns" link set lo up
	done
	ip link add "$FT_IF_A" netns "$FT_NS_A" type veth peer name "$FT_IF_MA" netns "$FT_NS_M"
	ip link add "$FT_IF_B" netns "$FT_NS_B" type veth peer name "$FT_IF_MB" netns "$FT_NS_M"
	# no IPv6 chatter: M must stay silent, and counters stay about our traffic
	ns_exec "$FT_NS_A" sysctl -qw "net.ipv6.conf.$FT_IF_A.disable_ipv6=1"
	ns_exec "$FT_NS_B" sysctl -qw "net.ipv6.conf.$FT_IF_B.disable_ipv6=1"
	ns_exec "$FT_NS_M" sysctl -qw "net.ipv6.conf.$FT_IF_MA.disable_ipv6=1"
	ns_exec "$FT_NS_M" sysctl -qw "net.ipv6.conf.$FT_IF_MB.disable_ipv6=1"
	ip -n "$FT_NS_A" addr add "$FT_IP_A/24" dev "$FT_IF_A"
	ip -n "$FT_NS_B" addr add "$FT_IP_B/24" dev "$FT_IF_B"
	ip -n "$FT_NS_A" link set "$FT_IF_A" up
	ip -n "$FT_NS_B" link set "$FT_IF_B" up
	ip -n "$FT_NS_M" link set "$FT_IF_MA" up
	ip -n "$FT_NS_M" link set "$FT_IF_MB" up
	# The endpoints must put whole checksums on the wire: with TX checksum offload a
	# veth hands its peer a TCP segment whose checksum is only a placeholder, which the
	# kernel finishes or ignores across one veth pair, but which no longer verifies once
	# the frame went through AF_XDP in M. (A NIC would fill it in.)
	ft_tx_csum_off "$FT_NS_A" "$FT_IF_A"
	ft_tx_csum_off "$FT_NS_B" "$FT_IF_B"
	FT_MAC_A=$(mac_of "$FT_NS_A" "$FT_IF_A")
	FT_MAC_B=$(mac_of "$FT_NS_B" "$FT_IF_B")
	ip -n "$FT_NS_A" neigh replace "$FT_IP_B" lladdr "$FT_MAC_B" dev "$FT_IF_A" nud permanent
	ip -n "$FT_NS_B" neigh replace "$FT_IP_A" lladdr "$FT_MAC_A" dev "$FT_IF_B" nud permanent
}

# fault_attach: blue attached natively on A and B (tests/lib/netns.sh blue_attach: the
# detach and the pins' removal registered with on_exit). Needs $BLUECTL.
fault_attach() {
	blue_attach "$FT_NS_A" "$FT_IF_A" >/dev/null || fail "attach $FT_IF_A"
	blue_attach "$FT_NS_B" "$FT_IF_B" >/dev/null || fail "attach $FT_IF_B"
}

# ft_tx_csum_off NS IF: `ethtool -K IF tx off` without ethtool (not installed here):
# the legacy SIOCETHTOOL ETHTOOL_STXCSUM request.
ft_tx_csum_off() {
	ns_exec "$1" /usr/bin/python3 -c '
import ctypes, fcntl, socket, struct, sys
SIOCETHTOOL, ETHTOOL_STXCSUM = 0x8946, 0x17
val = ctypes.create_string_buffer(struct.pack("II", ETHTOOL_STXCSUM, 0))
ifr = struct.pack("16sP", sys.argv[1].encode(), ctypes.addressof(val)) + bytes(16)
fcntl.ioctl(socket.socket(socket.AF_INET, socket.SOCK_DGRAM), SIOCETHTOOL, ifr)
' "$2" || fail "$2: cannot turn TX checksum offload off"
}

# fault_start VAR STATSFILE [blue_fault options...]: run blue_fault in M between the two
# middle ends, wait (bounded) for it to forward, store its PID in VAR and register its
# stop. Its stdout and stderr go to STATSFILE.out.
fault_start() {
	local var=$1 stats=$2 pid
	shift 2
	rm -f "$stats" "$stats.out"
	nsenter --net=/run/netns/"$FT_NS_M" "$FAULT_BIN" --if-a "$FT_IF_MA" --if-b "$FT_IF_MB" \
		--stats-file "$stats" "$@" >"$stats.out" 2>&1 &
	pid=$!
	on_exit "kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -f $stats $stats.out $stats.tmp"
	printf -v "$var" '%s' "$pid"
	wait_for_line "$stats.out" '^READY' 10 "$pid" && return 0
	cat "$stats.out" >&2
	fail "blue_fault did not get ready"
}

# fault_stop PID: stop blue_fault (SIGTERM), wait at most 10 s; it writes its stats
# file on the way out. Fails if it does not exit cleanly.
fault_stop() {
	local pid=$1 i rc=0
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < 100; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		fail "blue_fault $pid did not stop within 10 s"
	fi
	wait "$pid" || rc=$?
	[ "$rc" -eq 0 ] || fail "blue_fault exited $rc"
}

# fault_stat STATSFILE KEY: a counter, e.g. `fault_stat $s a2b.drop_random` (0 if absent).
fault_stat() {
	awk -v k="$2" '$1 == k { v = $2 } END { print v + 0 }' "$1"
}
