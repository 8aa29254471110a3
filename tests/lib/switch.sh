# shellcheck shell=bash
# The bottleneck switch for congestion-control tests and benches (source after
# tests/lib/runner.sh, or anything else that defines on_exit CMD and runs the registered
# commands on exit, and tests/lib/netns.sh).
#
#   S1 (SW_IF_S[1]) ==veth== (SW_PORT_S[1]) \
#   ...                                       SW bridge (SW_PORT_R) ==veth== (SW_IF_R) R
#   SN (SW_IF_S[N]) ==veth== (SW_PORT_S[N]) /        ^ tbf at the rate + switch_ecn
#
# Senders and receiver share one /24 with static neighbours (and the bridge static
# forwarding entries), so RoCEv2 between them needs no ARP, and blue attaches on the
# endpoints (SW_IF_S[i], SW_IF_R) as on any veth. The switch namespace has no addresses
# and runs only the kernel bridge, the tbf qdisc on its receiver-facing port and
# bpf/switch_ecn.bpf.c on that port's clsact egress (tools/blue_switch; the model and
# why it is one are in include/blue/switch.h). Traffic toward the senders (ACKs, CNPs)
# is not limited. Names carry $BASHPID; everything is torn down by on_exit.

SW_BIN=${SW_BIN:-$PWD/$B/bin/blue_switch}

# switch_setup N PREFIX: N (1..64) sender namespaces, the switch and the receiver;
# the receiver is PREFIX.1, sender i PREFIX.(10+i). Skips unless root. Sets
#   SW_NS SW_NS_R SW_IF_R SW_PORT_R SW_IP_R SW_MAC_R SW_N SW_BR
#   SW_NS_S[i] SW_IF_S[i] SW_PORT_S[i] SW_IP_S[i] SW_MAC_S[i]   (i = 1..N)
# The switch is attached but not configured (it forwards at veth speed until switch_set).
# SW_MTU (default 1500) is every link's MTU: plain-traffic tests use 9000, so that a
# shared machine can offer a few Gbit/s (the queue model and tbf count bytes either way).
switch_setup() {
	[ "$(id -u)" -eq 0 ] || skip "needs root"
	[ -x "$SW_BIN" ] || fail "$SW_BIN not built"
	local n=$1 prefix=$2 i ns
	[[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 64 ] ||
		fail "switch_setup: sender count $n: want 1..64"
	SW_N=$n
	SW_NS=blue-sw-$BASHPID-sw
	SW_NS_R=blue-sw-$BASHPID-r
	SW_IF_R=swrp$BASHPID
	SW_PORT_R=swop$BASHPID
	SW_BR=swbp$BASHPID
	SW_IP_R=$prefix.1
	SW_NS_S=() SW_IF_S=() SW_PORT_S=() SW_IP_S=() SW_MAC_S=()
	for ((i = 1; i <= n; i++)); do
		SW_NS_S[i]=blue-sw-$BASHPID-s$i
		SW_IF_S[i]=swe${i}p$BASHPID
		SW_PORT_S[i]=swi${i}p$BASHPID
		SW_IP_S[i]=$prefix.$((10 + i))
	done
	for ns in "$SW_NS" "$SW_NS_R" "${SW_NS_S[@]}"; do
		ip netns add "$ns"
		on_exit "ip netns del $ns 2>/dev/null"
		ip -n "$ns" link set lo up
	done
	ip -n "$SW_NS" link add "$SW_BR" mtu "${SW_MTU:-1500}" type bridge stp_state 0
	# no IPv6 chatter: counters and the queue hold only the tests' traffic
	ns_exec "$SW_NS" sysctl -qw "net.ipv6.conf.all.disable_ipv6=1"
	SW_PORT_QUEUES=${SW_QUEUES_R:-1} sw_port "$SW_NS_R" "$SW_IF_R" "$SW_PORT_R" "$SW_IP_R"
	for ((i = 1; i <= n; i++)); do
		sw_port "${SW_NS_S[i]}" "${SW_IF_S[i]}" "${SW_PORT_S[i]}" "${SW_IP_S[i]}"
	done
	ip -n "$SW_NS" link set "$SW_BR" up
	SW_MAC_R=$(mac_of "$SW_NS_R" "$SW_IF_R")
	for ((i = 1; i <= n; i++)); do
		SW_MAC_S[i]=$(mac_of "${SW_NS_S[i]}" "${SW_IF_S[i]}")
	done
	sw_static_l2
	local dir
	dir=$(ns_exec "$SW_NS" "$SW_BIN" pin-dir "$SW_PORT_R") || fail "blue_switch pin-dir"
	on_exit "ns_exec $SW_NS $SW_BIN detach $SW_PORT_R >/dev/null 2>&1; rm -rf $dir; rmdir ${dir%/*} 2>/dev/null"
	ns_exec "$SW_NS" "$SW_BIN" attach "$SW_PORT_R" >/dev/null || fail "blue_switch attach $SW_PORT_R"
}

# sw_port NS IF PORT IP: a veth from endpoint NS (IF, address IP) to the switch (PORT, a
# bridge port).
# SW_PORT_QUEUES=N: N RX and TX queues on both ends (switch_setup gives the receiver's
# link SW_QUEUES_R, for one libblue process per receiver queue: tests/lib/cc_bench.sh
# rxq_steer picks each sender port's queue).
sw_port() {
	local ns=$1 ifname=$2 port=$3 ip=$4 q=()
	[ "${SW_PORT_QUEUES:-1}" -gt 1 ] &&
		q=(numtxqueues "$SW_PORT_QUEUES" numrxqueues "$SW_PORT_QUEUES")
	ip link add "$ifname" netns "$ns" mtu "${SW_MTU:-1500}" "${q[@]}" type veth peer \
		name "$port" netns "$SW_NS" mtu "${SW_MTU:-1500}" "${q[@]}"
	ns_exec "$ns" sysctl -qw "net.ipv6.conf.$ifname.disable_ipv6=1"
	ip -n "$ns" addr add "$ip/24" dev "$ifname"
	ip -n "$ns" link set "$ifname" up
	ip -n "$SW_NS" link set "$port" master "$SW_BR"
	ip -n "$SW_NS" link set "$port" up
}

# sw_static_l2: every endpoint knows every other's MAC, and the bridge knows each MAC's
# port, so nothing floods and nothing waits for ARP.
sw_static_l2() {
	local i j
	for ((i = 1; i <= SW_N; i++)); do
		ip -n "$SW_NS_R" neigh replace "${SW_IP_S[i]}" lladdr "${SW_MAC_S[i]}" \
			dev "$SW_IF_R" nud permanent
		ip -n "${SW_NS_S[i]}" neigh replace "$SW_IP_R" lladdr "$SW_MAC_R" \
			dev "${SW_IF_S[i]}" nud permanent
		for ((j = 1; j <= SW_N; j++)); do
			[ "$i" -eq "$j" ] && continue
			ip -n "${SW_NS_S[i]}" neigh replace "${SW_IP_S[j]}" lladdr "${SW_MAC_S[j]}" \
				dev "${SW_IF_S[i]}" nud permanent
		done
		bridge -n "$SW_NS" fdb replace "${SW_MAC_S[i]}" dev "${SW_PORT_S[i]}" master static
	done
	bridge -n "$SW_NS" fdb replace "$SW_MAC_R" dev "$SW_PORT_R" master static
}

# switch_set [blue_switch config options]: configure the model (--rate, --buffer,
# --kmin, --kmax, --pmax, --mark on|off; unchanged options keep their values), then put
# the tbf on SW_PORT_R at the rate the model now has. tbf's byte limit is the buffer plus
# SW_TBF_SLACK: the model tail-drops at the buffer, and tbf dropping anything means the
# model ran behind the real queue (test_switch.sh checks it never does). tbf's burst is
# SW_TBF_BURST_US of the rate (at least two 1514-byte frames): its timer runs late on a
# busy machine, and a late timer with too small a bucket loses rate.
SW_TBF_SLACK=${SW_TBF_SLACK:-32768}
SW_TBF_BURST_US=${SW_TBF_BURST_US:-200}
switch_set() {
	ns_exec "$SW_NS" "$SW_BIN" config "$SW_PORT_R" "$@" || return
	local rate buf burst
	rate=$(switch_stat rate_bps)
	buf=$(switch_stat buffer_bytes)
	burst=$((rate / 8 * SW_TBF_BURST_US / 1000000))
	[ "$burst" -ge 3028 ] || burst=3028
	tc -n "$SW_NS" qdisc replace dev "$SW_PORT_R" root tbf rate "${rate}bit" \
		burst "$burst" limit $((buf + SW_TBF_SLACK))
	SW_TBF_BURST=$burst
}

# switch_stat NAME: one line of `blue_switch stats` (pkts, bytes, marked, ce_in,
# notect_hot, dropped, dropped_bytes, max_depth, min_mark_depth (-1: none),
# max_mark_depth, min_drop_depth (-1: none), depth_now, rate_bps, buffer_bytes, ...).
switch_stat() {
	ns_exec "$SW_NS" "$SW_BIN" stats "$SW_PORT_R" | awk -v k="$1" '$1 == k { print $2 }'
}

# switch_stats: all of them, "name value" per line.
switch_stats() {
	ns_exec "$SW_NS" "$SW_BIN" stats "$SW_PORT_R"
}

# switch_reset: model, counters and record to zero; the record's time 0 is now.
switch_reset() {
	ns_exec "$SW_NS" "$SW_BIN" reset "$SW_PORT_R"
}

# switch_record FILE: the queue-depth record as CSV (time_us,depth_bytes: the largest
# depth a packet found in each 100 us slot since the last reset; slots without arrivals
# are absent).
switch_record() {
	ns_exec "$SW_NS" "$SW_BIN" record "$SW_PORT_R" >"$1"
}

# switch_tbf_stat FIELD: tbf's own counter on SW_PORT_R: backlog (bytes queued now),
# qlen, drops, overlimits, bytes, packets.
switch_tbf_stat() {
	tc -n "$SW_NS" -s -j qdisc show dev "$SW_PORT_R" root |
		python3 -c 'import json,sys; print(json.load(sys.stdin)[0][sys.argv[1]])' "$1"
}

# switch_rx_bytes: bytes the receiver's endpoint has received (what tbf meters: frames
# from the Ethernet header on).
switch_rx_bytes() {
	ip -n "$SW_NS_R" -s -j link show "$SW_IF_R" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["rx"]["bytes"])'
}
