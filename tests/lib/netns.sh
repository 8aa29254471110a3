#!/usr/bin/env bash
# Namespace helpers for script tests (source after runner.sh has set on_exit).
# Names carry this shell's PID so parallel runs and leftovers never collide.

# netns_pair NS_A NS_B IF_A IF_B IP_A IP_B: two namespaces joined by a veth pair, with
# static neighbours (no ARP needed), and bpffs mounted in a private mount namespace is
# done per command by ns_exec. Registers teardown with on_exit. VETH_QUEUES=N gives
# each end N RX and N TX queues (default: the kernel's one).
netns_pair() {
	local a=$1 b=$2 ia=$3 ib=$4 ipa=$5 ipb=$6 q=()
	[ -n "${VETH_QUEUES:-}" ] && q=(numtxqueues "$VETH_QUEUES" numrxqueues "$VETH_QUEUES")
	ip netns add "$a"
	on_exit "ip netns del $a 2>/dev/null"
	ip netns add "$b"
	on_exit "ip netns del $b 2>/dev/null"
	ip link add "$ia" netns "$a" "${q[@]}" type veth peer name "$ib" netns "$b" "${q[@]}"
	ip -n "$a" addr add "$ipa/24" dev "$ia"
	ip -n "$b" addr add "$ipb/24" dev "$ib"
	ip -n "$a" link set lo up
	ip -n "$b" link set lo up
	ip -n "$a" link set "$ia" up
	ip -n "$b" link set "$ib" up
	local maca macb
	maca=$(ip -n "$a" -j link show "$ia" | sed -nE 's/.*"address":"([^"]+)".*/\1/p')
	macb=$(ip -n "$b" -j link show "$ib" | sed -nE 's/.*"address":"([^"]+)".*/\1/p')
	ip -n "$a" neigh replace "$ipb" lladdr "$macb" dev "$ia" nud permanent
	ip -n "$b" neigh replace "$ipa" lladdr "$maca" dev "$ib" nud permanent
}

# ns_exec NS CMD...: run in NS's network namespace without `ip netns exec`, which
# remounts /sys and hides /sys/fs/bpf (ARCHITECTURE.md, facts).
ns_exec() {
	local ns=$1; shift
	nsenter --net=/run/netns/"$ns" "$@"
}

# ns_bg NS VAR CMD...: start CMD in NS in the background, store its PID in VAR, and
# register a kill of that PID (never by name) with on_exit.
ns_bg() {
	local ns=$1 var=$2; shift 2
	nsenter --net=/run/netns/"$ns" "$@" &
	# $! itself, no local copy: a caller's VAR may well be called pid
	printf -v "$var" '%s' $!
	on_exit "kill $! 2>/dev/null; wait $! 2>/dev/null"
}

# mac_of NS IF
mac_of() {
	ip -n "$1" -j link show "$2" | sed -nE 's/.*"address":"([^"]+)".*/\1/p'
}

# blue_attach NS IF: `bluectl attach IF --mode native` inside NS, with the detach (and the
# pins, should detach fail) registered with on_exit first, so that the attach is the last
# command and its status is the function's (callers write `blue_attach ... || fail`).
# Needs $BLUECTL.
# The pins are in NS's own directory (bluectl pin-dir), named while NS still exists.
blue_attach() {
	local ns=$1 ifname=$2 dir
	dir=$(ns_exec "$ns" "$BLUECTL" pin-dir "$ifname") || return
	on_exit "ns_exec $ns $BLUECTL detach $ifname >/dev/null 2>&1; rm -rf $dir; rmdir ${dir%/*} 2>/dev/null"
	ns_exec "$ns" "$BLUECTL" attach "$ifname" --mode native
}

# pin_link_ifindex DIR: the ifindex the XDP link pinned in DIR reports, waiting (bounded)
# while it still names one: 0 once its netdev is gone, which the kernel notices in a
# worker after `ip link del` or `ip netns del`. Empty without a link pin. Needs bpftool.
pin_link_ifindex() {
	local i ifx
	[ -e "$1/link" ] || return 0
	for ((i = 0; i < 200; i++)); do
		ifx=$(bpftool -j link show pinned "$1/link" |
			python3 -c 'import json,sys; print(json.load(sys.stdin).get("ifindex", 0))')
		[ "$ifx" = 0 ] && break
		sleep 0.1
	done
	echo "$ifx"
}

# netns_setup TAG IP_A IP_B: the topology most suites use. Namespaces blue-TAG-<pid>-a/b
# joined by a veth pair TAG0p<pid>/TAG1p<pid> (interface names carry the PID too, as
# builds before pins were keyed by namespace shared /sys/fs/bpf/blue/<ifname> across
# namespaces, and other runs may use them), IPv6 off on both ends (router and neighbour
# solicitations would land in the counters at random times; with static neighbours the
# only traffic is ours).
# Skips unless root. Sets NS_A NS_B IF_A IF_B MAC_A MAC_B.
netns_setup() {
	[ "$(id -u)" -eq 0 ] || skip "needs root"
	local tag=$1
	NS_A=blue-$tag-$BASHPID-a
	NS_B=blue-$tag-$BASHPID-b
	IF_A=${tag}0p$BASHPID
	IF_B=${tag}1p$BASHPID
	netns_pair "$NS_A" "$NS_B" "$IF_A" "$IF_B" "$2" "$3"
	ns_exec "$NS_A" sysctl -qw "net.ipv6.conf.$IF_A.disable_ipv6=1"
	ns_exec "$NS_B" sysctl -qw "net.ipv6.conf.$IF_B.disable_ipv6=1"
	MAC_A=$(mac_of "$NS_A" "$IF_A")
	MAC_B=$(mac_of "$NS_B" "$IF_B")
}

# netns_ipv6 IP6_A IP6_B [v6only]: IPv6 on the netns_setup pair: addresses /64 on each
# end, `nodad` so they are usable at once (no duplicate address detection wait). No
# static neighbours: the kernel's neighbour discovery finds the peer, as blue asks it to.
# With v6only, the IPv4 addresses go: an IPv6-only netdev.
netns_ipv6() {
	ns_exec "$NS_A" sysctl -qw "net.ipv6.conf.$IF_A.disable_ipv6=0"
	ns_exec "$NS_B" sysctl -qw "net.ipv6.conf.$IF_B.disable_ipv6=0"
	ip -n "$NS_A" -6 addr add "$1/64" dev "$IF_A" nodad
	ip -n "$NS_B" -6 addr add "$2/64" dev "$IF_B" nodad
	if [ "${3:-}" = v6only ]; then
		ip -n "$NS_A" -4 addr flush dev "$IF_A"
		ip -n "$NS_B" -4 addr flush dev "$IF_B"
	fi
}

# ctl_stat NS IF NAME [FIELD]: a counter `bluectl stats` prints in a row named NAME (an
# XDP reason, a HAL or engine counter): FIELD 2 (the default) is packets or the value, 3
# is bytes. A name in two sections (rx_frames) gives the last, the engine's. Prints
# nothing when no row has that name, so a test that compares notices. Needs $BLUECTL.
ctl_stat() {
	ns_exec "$1" "$BLUECTL" stats "$2" |
		awk -v k="$3" -v f="${4:-2}" '$1 == k { v = $f; n = 1 } END { if (n) print v }'
}

# xfer_ab [SERVER_ARGS...] -- CLIENT_ARGS...: a blue_xfer server in NS_A on IF_A (in
# the background) and its client in NS_B on IF_B against IP_A, both bounded; sets SRC
# and CRC (their exit statuses) and prints their outputs, kept in SRV_OUT and CLI_OUT.
# SRV_ENV / CLI_ENV: NAME=VALUE words for either side's environment. Needs $XFER.
xfer_ab() {
	local sargs=() spid
	while [ "$1" != "--" ]; do
		sargs+=("$1")
		shift
	done
	shift
	# shellcheck disable=SC2086 # the *_ENV words split on purpose
	ns_bg "$NS_A" spid timeout 100 env ${SRV_ENV:-} "$XFER" -d "$IF_A" -T 20 "${sargs[@]}" \
		>"$SRV_OUT" 2>&1
	CRC=0
	# shellcheck disable=SC2086
	ns_exec "$NS_B" timeout 100 env ${CLI_ENV:-} "$XFER" -d "$IF_B" -T 20 "$@" "$IP_A" \
		>"$CLI_OUT" 2>&1 || CRC=$?
	SRC=0
	wait "$spid" || SRC=$?
	echo "--- server:"; cat "$SRV_OUT"
	echo "--- client:"; cat "$CLI_OUT"
}

# need_bins FILE...: fail naming the first that was not built
need_bins() {
	local f
	for f in "$@"; do
		[ -x "$f" ] || fail "$f not built"
	done
}

# wait_for_line FILE PATTERN SECONDS [PID]: 0 as soon as a line of FILE matches PATTERN,
# 1 when SECONDS pass first. With PID, stops early once PID has exited (then 0 only if the
# line is there after all).
wait_for_line() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		[ -n "${4:-}" ] && ! kill -0 "$4" 2>/dev/null && { grep -q "$2" "$1"; return; }
		sleep 0.1
	done
	return 1
}
