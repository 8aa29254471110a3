# shellcheck shell=bash
# RoCEv2 over IPv6 between two namespaces: IPv6 addresses on the veth (nodad), no static
# neighbours (the kernel's neighbour discovery, which blue triggers, finds the peer), the
# GID table read from the netdev (index 2 = its global IPv6 address), RC between IPv6
# GIDs with every byte verified, the frames counted by blue's XDP program as redirected
# (and the neighbour discovery passed to the kernel), an IPv6-only netdev that opens and
# works, and the CM over IPv6 TCP.
# Run: B=build bash tests/lib/runner.sh tests/netns/test_ipv6.sh
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh

BLUECTL=$PWD/$B/bin/bluectl
XFER=$PWD/$B/bin/blue_xfer
SMOKE=$PWD/$B/tests/netns/rc_smoke
IP_A=10.201.66.1
IP_B=10.201.66.2
IP6_A=fd00:b10e:66::1
IP6_B=fd00:b10e:66::2

# ip6_setup [v6only]: the pair with IPv6, blue attached on both ends.
ip6_setup() {
	netns_setup ip6 "$IP_A" "$IP_B"
	need_bins "$BLUECTL" "$XFER" "$SMOKE"
	netns_ipv6 "$IP6_A" "$IP6_B" "${1:-}"
	blue_attach "$NS_A" "$IF_A" || fail "attach $IF_A"
	blue_attach "$NS_B" "$IF_B" || fail "attach $IF_B"
	SRV_OUT=$(mktemp)
	CLI_OUT=$(mktemp)
	on_exit "rm -f $SRV_OUT $CLI_OUT"
}

# The GID table as the device reports it: index 2 is the netdev's IPv6 address.
test_gid_table_has_the_ipv6_address() {
	ip6_setup
	local out
	out=$(ns_exec "$NS_A" timeout 20 "$SMOKE" probe "$IF_A" 2>&1) || { echo "$out"; fail "probe"; }
	echo "$out"
	echo "$out" | grep -q "gid2 $IP6_A" || fail "GID index 2 is not $IP6_A"
	echo "$out" | grep -q "gid1 ::ffff:$IP_A" || fail "GID index 1 is not ::ffff:$IP_A"
}

# RC WRITE and READ between IPv6 GIDs (-g 2), the CM over IPv6 TCP, bytes verified.
test_rc_over_ipv6_gid() {
	ip6_setup
	local red0 red1 nd
	red0=$(ctl_stat "$NS_A" "$IF_A" redirect)
	IP_A=$IP6_A xfer_ab -g 2 -- -g 2 --op write --size 1M --iters 2 --verify
	[ "$SRC" -eq 0 ] && [ "$CRC" -eq 0 ] || fail "blue_xfer over IPv6: server $SRC client $CRC"
	grep -q "$IP6_A\|$IP6_B" "$SRV_OUT" "$CLI_OUT" || fail "the peers' GIDs are not the IPv6 ones"
	IP_A=$IP6_A xfer_ab -g 2 -- -g 2 --op read --size 256K --iters 2 --verify
	[ "$SRC" -eq 0 ] && [ "$CRC" -eq 0 ] || fail "READ over IPv6: server $SRC client $CRC"
	red1=$(ctl_stat "$NS_A" "$IF_A" redirect)
	[ "$((red1 - red0))" -gt 100 ] || fail "XDP redirected only $((red1 - red0)) frames"
	# the peer's MAC came from the kernel's IPv6 neighbour table
	nd=$(ip -n "$NS_B" -6 neigh show "$IP6_A" dev "$IF_B")
	echo "neighbour: $nd"
	echo "$nd" | grep -q "lladdr $MAC_A" || fail "no IPv6 neighbour entry for $IP6_A"
}

# An IPv6-only netdev (no IPv4 address) opens, and RC over its IPv6 GID works.
test_ipv6_only_netdev() {
	ip6_setup v6only
	IP_A=$IP6_A xfer_ab -g 2 -- -g 2 --op write --size 256K --iters 1 --verify
	[ "$SRC" -eq 0 ] && [ "$CRC" -eq 0 ] || fail "IPv6-only: server $SRC client $CRC"
}

# Neighbour discovery: with no entry for the peer in the kernel's IPv6 table (no static
# one, no traffic yet), INIT -> RTR toward it makes the kernel solicit it (blue's
# datagram to the discard port) and takes the MAC from the answer; the solicitation and
# advertisement pass blue's XDP program to the kernel (ICMPv6: pass_non_udp).
test_neighbour_discovery() {
	ip6_setup
	local out nd pass0 pass1
	ip -n "$NS_B" -6 neigh flush dev "$IF_B"
	nd=$(ip -n "$NS_B" -6 neigh show "$IP6_A" dev "$IF_B" | grep lladdr || true)
	[ -z "$nd" ] || fail "the test needs no entry for $IP6_A yet: $nd"
	pass0=$(ctl_stat "$NS_B" "$IF_B" pass_non_udp)
	out=$(ns_exec "$NS_B" timeout 20 "$SMOKE" probe "$IF_B" --peer "$IP6_A" 2>&1) ||
		{ echo "$out"; fail "probe --peer $IP6_A"; }
	echo "$out"
	echo "$out" | grep -q "ok rtr toward $IP6_A" || fail "no RTR toward $IP6_A"
	nd=$(ip -n "$NS_B" -6 neigh show "$IP6_A" dev "$IF_B")
	echo "neighbour: $nd"
	echo "$nd" | grep -q "lladdr $MAC_A" || fail "the kernel did not resolve $IP6_A"
	pass1=$(ctl_stat "$NS_B" "$IF_B" pass_non_udp)
	[ "$pass1" -gt "$pass0" ] || fail "no ICMPv6 passed to the kernel ($pass0 -> $pass1)"
	# an address nobody has: refused within the bound, naming the address
	out=$(ns_exec "$NS_B" timeout 20 "$SMOKE" probe "$IF_B" --peer fd00:b10e:66::99 2>&1) &&
		{ echo "$out"; fail "RTR toward a missing peer succeeded"; }
	echo "$out"
	echo "$out" | grep -q "no MAC address for fd00:b10e:66::99" ||
		fail "the refusal does not name the address"
}

# bluectl shows the peer of a QP over IPv6: `qp list` and `qp show` give its IPv6
# address (peer_ip6; peer_ip is 0.0.0.0).
test_bluectl_shows_ipv6_peer() {
	ip6_setup
	local spid cpid crc=0 qpn list show
	ns_bg "$NS_A" spid "$XFER" -d "$IF_A" -T 20 -g 2 --hold 30 >"$SRV_OUT" 2>&1
	ns_bg "$NS_B" cpid "$XFER" -d "$IF_B" -T 20 -g 2 --op write --size 64K --iters 1 \
		--lat-iters 0 --hold 30 "$IP6_A" >"$CLI_OUT" 2>&1
	on_exit "kill -USR1 $cpid $spid 2>/dev/null"
	wait_for_line "$CLI_OUT" '^HOLDING' 60 "$cpid" ||
		{ cat "$SRV_OUT" "$CLI_OUT"; fail "the client did not finish"; }
	list=$(ns_exec "$NS_B" "$BLUECTL" qp list "$IF_B")
	echo "$list"
	qpn=$(awk 'NR == 2 { print $1 }' <<<"$list")
	show=$(ns_exec "$NS_B" "$BLUECTL" qp show "$IF_B" "$qpn")
	echo "$show"
	kill -USR1 "$cpid" "$spid"
	wait "$cpid" || crc=$?
	wait "$spid" || true
	[ "$crc" -eq 0 ] || { cat "$CLI_OUT"; fail "client exited $crc"; }
	grep -q "$IP6_A:0x" <<<"$list" || fail "qp list does not show the peer $IP6_A"
	grep -qE "^peer_ip6: +$IP6_A$" <<<"$show" || fail "qp show: no peer_ip6 $IP6_A"
	grep -qE "^peer_ip: +0\.0\.0\.0$" <<<"$show" || fail "qp show: peer_ip should be 0.0.0.0"
}
