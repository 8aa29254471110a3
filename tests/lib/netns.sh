#!/usr/bin/env bash
# Namespace helpers for script tests (source after runner.sh has set on_exit).
# Names carry this shell's PID so parallel runs and leftovers never collide.

# netns_pair NS_A NS_B IF_A IF_B IP_A IP_B: two namespaces joined by a veth pair, with
# static neighbours (no ARP needed), and bpffs mounted in a private mount namespace is
# done per command by ns_exec. Registers teardown with on_exit.
netns_pair() {
	local a=$1 b=$2 ia=$3 ib=$4 ipa=$5 ipb=$6
	ip netns add "$a"
	on_exit "ip netns del $a 2>/dev/null"
	ip netns add "$b"
	on_exit "ip netns del $b 2>/dev/null"
	ip link add "$ia" netns "$a" type veth peer name "$ib" netns "$b"
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
	local pid=$!
	printf -v "$var" '%s' "$pid"
	on_exit "kill $pid 2>/dev/null; wait $pid 2>/dev/null"
}

# mac_of NS IF
mac_of() {
	ip -n "$1" -j link show "$2" | sed -nE 's/.*"address":"([^"]+)".*/\1/p'
}

# blue_attach NS IF: `bluectl attach IF --mode native` inside NS, with the detach (and the
# pins, should detach fail) registered with on_exit. Needs $BLUECTL.
blue_attach() {
	local ns=$1 ifname=$2
	ns_exec "$ns" "$BLUECTL" attach "$ifname" --mode native
	on_exit "ns_exec $ns $BLUECTL detach $ifname >/dev/null 2>&1; rm -rf /sys/fs/bpf/blue/$ifname"
}
