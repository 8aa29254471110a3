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
# bpf/switch_ecn.bpf.c on that port's clsact egress (tools/blue_switch; what it does with
# tbf's backlog is in include/blue/switch.h). Traffic toward the senders (ACKs, CNPs)
# is not limited. Names carry $BASHPID; everything is torn down by on_exit.

SW_BIN=${SW_BIN:-$PWD/$B/bin/blue_switch}

# switch_setup N PREFIX: N (1..64) sender namespaces, the switch and the receiver;
# the receiver is PREFIX.1, sender i PREFIX.(10+i). Skips unless root. Sets
#   SW_NS SW_NS_R SW_IF_R SW_PORT_R SW_IP_R SW_MAC_R SW_N SW_BR
#   SW_NS_S[i] SW_IF_S[i] SW_PORT_S[i] SW_IP_S[i] SW_MAC_S[i]   (i = 1..N)
# The switch is attached but not configured (it forwards at veth speed until switch_set).
# SW_MTU (default 1500) is every link's MTU: plain-traffic tests use 9000, so that a
# shared machine can offer a few Gbit/s (tbf and the marker count bytes either way).
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
	# no IPv6 chatter (router solicitations, MLD reports from the ports): counters and
	# the queue hold only the tests' traffic
	ns_exec "$SW_NS" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1
	ip -n "$SW_NS" link add "$SW_BR" mtu "${SW_MTU:-1500}" type bridge stp_state 0
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
	# Nothing but unicast toward the receiver (every endpoint's neighbours are static):
	# a flooded frame would count in the switch's and the receiver's tallies.
	bridge -n "$SW_NS" link set dev "$SW_PORT_R" mcast_flood off bcast_flood off
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

# switch_set [--rate R] [blue_switch config options]: the port's rate (R bits/s: 1G,
# 500M, 2500000000; put into a tbf on SW_PORT_R) and the marker's configuration (--buffer,
# --kmin, --kmax, --pmax, --mark on|off; unchanged options keep their values). tbf's byte
# limit is the buffer plus SW_TBF_SLACK: switch_ecn tail-drops at the buffer on tbf's own
# backlog, and tbf dropping anything would mean packets from several CPUs at once ran
# past it (test_switch.sh checks that never happens). tbf's bucket (burst) is
# SW_TBF_BURST_US of the rate, at least two 1514-byte frames: its timer runs late on a
# busy machine, and a late timer with a small bucket loses rate for good (measured at
# 1 Gbit/s with the load average at 11 on 2 cores: a 500 us bucket gave 816 Mbit/s, 5 ms
# 988). The price: after the queue was empty, up to a bucket of bytes passes at once
# before a queue builds. On an idle machine SW_TBF_BURST_US=500 is faithful too. Sets
# SW_RATE_BPS and SW_TBF_BURST (bytes).
SW_TBF_SLACK=${SW_TBF_SLACK:-65536}
SW_TBF_BURST_US=${SW_TBF_BURST_US:-5000}
switch_set() {
	local args=() buf burst
	while [ $# -gt 0 ]; do
		if [ "$1" = --rate ]; then
			SW_RATE_BPS=$(sw_rate_bps "$2") || return
			shift 2
		else
			args+=("$1")
			shift
		fi
	done
	[ -n "${SW_RATE_BPS:-}" ] || { echo "switch_set: no --rate given yet" >&2; return 1; }
	if [ ${#args[@]} -gt 0 ]; then
		ns_exec "$SW_NS" "$SW_BIN" config "$SW_PORT_R" "${args[@]}" || return
	fi
	buf=$(switch_stat buffer_bytes)
	[ "$buf" -gt 0 ] || { echo "switch_set: no --buffer given yet" >&2; return 1; }
	burst=$((SW_RATE_BPS * SW_TBF_BURST_US / 8000000))
	[ "$burst" -ge 3028 ] || burst=3028
	[ "$burst" -ge "${SW_MTU:-1500}" ] || burst=$((2 * ${SW_MTU:-1500} + 28))
	tc -n "$SW_NS" qdisc replace dev "$SW_PORT_R" root tbf rate "${SW_RATE_BPS}bit" \
		burst "$burst" limit $((buf + SW_TBF_SLACK))
	# shellcheck disable=SC2034 # for the callers
	SW_TBF_BURST=$burst
}

# sw_rate_bps R: bits/s of 1G, 500M, 100k, 2.5G, 1000000 (SI), else an error naming R
sw_rate_bps() {
	python3 - "$1" <<'PY'
import re, sys
m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)([kKmMgG]?)(?:bit)?", sys.argv[1])
if not m:
    sys.exit("switch_set: --rate %s: want bits/s like 1G, 500M, 2.5G" % sys.argv[1])
v = float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2).lower()]
if not 1e6 <= v <= 40e9:
    sys.exit("switch_set: --rate %s: outside 1M..40G" % sys.argv[1])
print(int(v))
PY
}

# switch_stat NAME: one line of `blue_switch stats` (pkts, bytes, marked, ce_in,
# notect_hot, dropped, dropped_bytes, max_depth, min_mark_depth (-1: none),
# max_mark_depth, min_drop_depth (-1: none), buffer_bytes, kmin_bytes, kmax_bytes, pmax,
# mark).
switch_stat() {
	ns_exec "$SW_NS" "$SW_BIN" stats "$SW_PORT_R" | awk -v k="$1" '$1 == k { print $2 }'
}

# switch_stats: all of them, "name value" per line.
switch_stats() {
	ns_exec "$SW_NS" "$SW_BIN" stats "$SW_PORT_R"
}

# switch_reset: counters and record to zero; the record's time 0 is now.
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

# switch_rx_rate WARMUP SECONDS: the rate the receiver's endpoint receives at, bits/s
# of frames from the Ethernet header on (what tbf meters). Start it in the background
# before the traffic, and start the traffic when it has printed READY: it waits (at
# most 20 s) for frames to arrive, lets WARMUP seconds pass (the queue fills), then
# measures over SECONDS and prints the rate. One process in the receiver's namespace
# reads its /proc/net/dev at both ends of the window, so no process start-up falls
# inside it.
switch_rx_rate() {
	ns_exec "$SW_NS_R" python3 -u - "$SW_IF_R" "$1" "$2" <<'PY'
import sys, time
def rx(ifname):
    for line in open("/proc/net/dev"):
        name, _, rest = line.partition(":")
        if name.strip() == ifname:
            return int(rest.split()[0])
    sys.exit("switch_rx_rate: no %s in /proc/net/dev" % ifname)
ifname, warm, secs = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
start, deadline = rx(ifname), time.monotonic() + 20
print("READY")
while rx(ifname) - start < 100000:
    if time.monotonic() > deadline:
        sys.exit("switch_rx_rate: no traffic reached %s within 20 s" % ifname)
    time.sleep(0.01)
time.sleep(warm)
b0, t0 = rx(ifname), time.monotonic()
time.sleep(secs)
b1, t1 = rx(ifname), time.monotonic()
print(int((b1 - b0) * 8 / (t1 - t0)))
PY
}
