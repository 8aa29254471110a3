# shellcheck shell=bash
# libblue over a real netdev: blue_open_device() on both ends of a veth pair between two
# namespaces, blue attached natively on both, RC traffic through XDP and AF_XDP (copy
# mode), the QP contexts living in the pinned qp_ctx map. tests/netns/rc_smoke does the
# work (SEND, WRITE, WRITE with immediate, READ, both atomics, every byte compared on
# the side that can see it); this file checks its verdicts, what `bluectl qp list` shows
# while the server is live and after both have exited, the XDP counters, that the kernel
# never answered a RoCE frame with ICMP, neighbour resolution through ARP, and the
# errors of blue_open_device() where blue is not attached.
# Run: B=build bash tests/lib/runner.sh tests/netns/test_rc_device.sh
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh

BLUECTL=$PWD/$B/bin/bluectl
SMOKE=$PWD/$B/tests/netns/rc_smoke
XSK_SEND=$PWD/$B/tests/netns/xsk_send
PY=/usr/bin/python3
IP_A=10.201.97.1	# server
IP_B=10.201.97.2	# client

# rcd_setup [attach-b]: namespaces blue-rcd-<pid>-a/b joined by a veth pair (interface
# names carry the PID too, netns_setup), blue attached on A, and on B unless "no" is
# given.
# Sets NS_A NS_B IF_A IF_B MAC_A MAC_B.
rcd_setup() {
	netns_setup rcd "$IP_A" "$IP_B"
	need_bins "$BLUECTL" "$SMOKE"
	blue_attach "$NS_A" "$IF_A"
	if [ "${1:-}" != no ]; then
		blue_attach "$NS_B" "$IF_B"
	fi
}


# icmp_unreach NS: ICMP destination-unreachables sent plus UDP datagrams to no port.
icmp_unreach() {
	ns_exec "$1" nstat -saz IcmpOutDestUnreachs UdpNoPorts | awk '/^(Icmp|Udp)/ { s += $2 } END { print s + 0 }'
}

# qp_lines NS IF: the QP rows of `bluectl qp list` (none: empty).
qp_lines() {
	ns_exec "$1" "$BLUECTL" qp list "$2" | grep -E '^0x' || true
}

# start_server OUTFILE HOLDFILE ARGS...: rc_smoke server in A; waits for READY. Sets SPID.
start_server() {
	local out=$1 hold=$2; shift 2
	ns_bg "$NS_A" SPID timeout 30 "$SMOKE" server "$IF_A" --hold-file "$hold" \
		--hold-ms 15000 --timeout-ms 10000 "$@" >"$out" 2>&1
	wait_for_line "$out" '^READY' 10 || { cat "$out"; fail "the server did not get ready"; }
}

test_rc_device_all_ops() {
	rcd_setup
	local srv cli hold rc=0 qpn n rows unreach_a unreach_b redirect_a pass_a
	srv=$(mktemp) cli=$(mktemp) hold=$(mktemp -u)
	on_exit "rm -f $srv $cli $hold"
	unreach_a=$(icmp_unreach "$NS_A")
	unreach_b=$(icmp_unreach "$NS_B")
	redirect_a=$(ctl_stat "$NS_A" "$IF_A" redirect)
	pass_a=$(ctl_stat "$NS_A" "$IF_A" pass_non_udp)

	start_server "$srv" "$hold"
	ns_exec "$NS_B" timeout 40 "$SMOKE" client "$IF_B" "$IP_A" --timeout-ms 10000 \
		--bench >"$cli" 2>&1 || rc=$?
	echo "--- client:"; cat "$cli"
	[ "$rc" -eq 0 ] || { echo "--- server:"; cat "$srv"; fail "client exited $rc"; }
	grep -q '^RESULT PASS$' "$cli" || fail "client: no RESULT PASS"
	# every operation at every size was checked
	n=$(grep -cE '^ok (send [0-9]+ bytes completed|write [0-9]+ bytes completed|read [0-9]+ bytes)$' "$cli")
	[ "$n" -eq $((8 + 7 + 7)) ] || fail "client: $n of 22 SEND/WRITE/READ checks"
	n=$(grep -cE '^ok (fetch_add|cmp_swap)' "$cli")
	[ "$n" -eq 4 ] || fail "client: $n of 4 atomic checks"
	grep -q '^ok write verified by the server$' "$cli" || fail "WRITEs not verified"
	grep -q '^ok atomic word reads 0xfeedface00c0ffef$' "$cli" || fail "atomic word"
	grep -q "^ok server's final checks passed$" "$cli" || fail "server's checks"
	grep -q '^ok connected: .* mtu 1024$' "$cli" || fail "path MTU is not 1024 on a 1500-byte link"

	# the server is live: its QP is in the pinned map, in RTS, with its PSNs
	wait_for_line "$srv" '^HOLD' 10 || { cat "$srv"; fail "the server did not reach HOLD"; }
	qpn=$(sed -nE 's/^HOLD qpn (0x[0-9a-f]+)$/\1/p' "$srv")
	rows=$(qp_lines "$NS_A" "$IF_A")
	echo "qp list while the server holds:"; echo "$rows"
	[ "$(wc -l <<<"$rows")" -eq 1 ] || fail "want exactly one QP listed"
	awk -v q="$qpn" '$1 == q && $2 == "RTS" && $3 == "RC" && $8 > 0 { ok = 1 } END { exit !ok }' \
		<<<"$rows" || fail "QP $qpn is not listed in RTS with packets steered"
	ns_exec "$NS_A" "$BLUECTL" qp show "$IF_A" "$qpn" | grep -E '^(peer_ip|local_ip|path_mtu):' |
		tee /dev/stderr | tr -s ' ' | sort | paste -sd' ' |
		grep -q "local_ip: $IP_A path_mtu: 1024 (3) peer_ip: $IP_B" || fail "qp show fields"

	touch "$hold"
	rc=0
	wait "$SPID" || rc=$?
	echo "--- server:"; cat "$srv"
	[ "$rc" -eq 0 ] || fail "server exited $rc"
	grep -q '^RESULT PASS$' "$srv" || fail "server: no RESULT PASS"
	n=$(grep -cE '^ok send [0-9]+ bytes$' "$srv")
	[ "$n" -eq 8 ] || fail "server: $n of 8 SENDs verified"
	grep -q '^ok write_imm 4096 bytes, imm 0xb1000006$' "$srv" || fail "WRITE with immediate"

	# everything released: no QP left in either map
	[ -z "$(qp_lines "$NS_A" "$IF_A")" ] || fail "QPs left on $IF_A after the server exited"
	[ -z "$(qp_lines "$NS_B" "$IF_B")" ] || fail "QPs left on $IF_B after the client exited"
	ns_exec "$NS_A" "$BLUECTL" qp list "$IF_A" | grep -q 'no QPs in use' || fail "qp list"

	# XDP steered the RoCE frames and passed the CM's TCP to the kernel
	echo "server side: redirect +$(($(ctl_stat "$NS_A" "$IF_A" redirect) - redirect_a))," \
		"pass_non_udp +$(($(ctl_stat "$NS_A" "$IF_A" pass_non_udp) - pass_a))"
	[ "$(($(ctl_stat "$NS_A" "$IF_A" redirect) - redirect_a))" -gt 1000 ] || fail "few redirects"
	[ "$(($(ctl_stat "$NS_A" "$IF_A" pass_non_udp) - pass_a))" -gt 5 ] || fail "TCP not passed"

	# RoCE frames for the QPN that is gone are dropped in XDP and counted
	if [ -x "$XSK_SEND" ]; then
		local unknown_a
		unknown_a=$(ctl_stat "$NS_A" "$IF_A" drop_unknown_qpn)
		ns_exec "$NS_B" timeout 15 "$XSK_SEND" "$IF_B" --src-mac "$MAC_B" --dst-mac "$MAC_A" \
			--src-ip "$IP_B" --dst-ip "$IP_A" --qpns "$qpn" --count 25 --payload 64 \
			|| fail "xsk_send failed"
		n=$(($(ctl_stat "$NS_A" "$IF_A" drop_unknown_qpn) - unknown_a))
		echo "frames to the destroyed QPN $qpn: drop_unknown_qpn +$n"
		[ "$n" -eq 25 ] || fail "drop_unknown_qpn counted $n, want 25"
	fi
	# and the kernels never saw RoCE: no port unreachable for UDP 4791, either way
	[ "$(icmp_unreach "$NS_A")" -eq "$unreach_a" ] || fail "$NS_A sent ICMP unreachable"
	[ "$(icmp_unreach "$NS_B")" -eq "$unreach_b" ] || fail "$NS_B sent ICMP unreachable"
}

test_rc_device_probe() {
	rcd_setup
	local out want0
	out=$(ns_exec "$NS_A" timeout 10 "$SMOKE" probe "$IF_A" 2>&1) || { echo "$out"; fail "probe"; }
	echo "$out"
	want0=$($PY -c 'import ipaddress, sys
m = bytes.fromhex(sys.argv[1].replace(":", ""))
print(ipaddress.IPv6Address(bytes([0xfe, 0x80, 0, 0, 0, 0, 0, 0, m[0] ^ 2, m[1], m[2],
      0xff, 0xfe, m[3], m[4], m[5]])))' "$MAC_A")
	grep -qx "device $IF_A active_mtu 1024 max_mtu 1024 gid_tbl_len 16 gid0 $want0 gid1 ::ffff:$IP_A" \
		<<<"$out" || fail "want active_mtu 1024, gid0 $want0, gid1 ::ffff:$IP_A"
	# a larger netdev MTU lifts the path MTU (veth with XDP takes at most ~3.5 KB; a
	# 4 KiB AF_XDP frame could not carry a 4096-byte payload with its headers anyway)
	ip -n "$NS_A" link set "$IF_A" mtu 3000
	out=$(ns_exec "$NS_A" timeout 10 "$SMOKE" probe "$IF_A" 2>&1) || { echo "$out"; fail "probe"; }
	echo "$out"
	grep -q "active_mtu 2048 " <<<"$out" || fail "MTU 3000: want active_mtu 2048"
	[ -z "$(qp_lines "$NS_A" "$IF_A")" ] || fail "probe left a QP behind"
}

test_rc_device_arp_resolution() {
	rcd_setup
	local srv cli hold rc=0 out
	srv=$(mktemp) cli=$(mktemp) hold=$(mktemp -u)
	on_exit "rm -f $srv $cli $hold"
	# no static neighbours and the CM's MACs ignored: each side must ARP for the other
	ip -n "$NS_A" neigh flush dev "$IF_A"
	ip -n "$NS_B" neigh flush dev "$IF_B"
	start_server "$srv" "$hold" --no-cm-mac
	touch "$hold"
	ns_exec "$NS_B" timeout 40 "$SMOKE" client "$IF_B" "$IP_A" --no-cm-mac >"$cli" 2>&1 || rc=$?
	cat "$cli"
	[ "$rc" -eq 0 ] || { cat "$srv"; fail "client exited $rc"; }
	wait "$SPID" || { cat "$srv"; fail "server failed"; }
	grep -q '^RESULT PASS$' "$srv" || fail "server: no RESULT PASS"
	ip -n "$NS_B" neigh show "$IP_A" dev "$IF_B" | grep -qi "lladdr $MAC_A" ||
		fail "$NS_B has no neighbour entry for $IP_A"
	ip -n "$NS_A" neigh show "$IP_B" dev "$IF_A" | grep -qi "lladdr $MAC_B" ||
		fail "$NS_A has no neighbour entry for $IP_B"

	# nobody at .99: a bounded wait, then an error that names the address
	rc=0
	out=$(ns_exec "$NS_B" timeout 10 "$SMOKE" probe "$IF_B" --peer 10.201.97.99 2>&1) || rc=$?
	echo "$out"
	[ "$rc" -eq 1 ] || fail "probe toward a missing peer exited $rc, want 1"
	grep -q "no MAC address for 10.201.97.99 on $IF_B" <<<"$out" || fail "no message naming the IP"
}

test_rc_device_not_attached() {
	rcd_setup no
	local out rc=0 other=rcdxp$BASHPID
	# B has no blue: a clear error, exit 1, no QP slot touched anywhere
	out=$(ns_exec "$NS_B" timeout 10 "$SMOKE" probe "$IF_B" 2>&1) || rc=$?
	echo "$out"
	[ "$rc" -eq 1 ] || fail "probe exited $rc, want 1"
	grep -qF "libblue: $IF_B: blue is not attached; run 'bluectl attach $IF_B'" <<<"$out" ||
		fail "no clear 'not attached' message"
	# pins for a same-named netdev elsewhere do not count: A's pins, a netdev in B
	# called $IF_A without blue
	ip -n "$NS_B" link add "$IF_A" type veth peer name "$other"
	ip -n "$NS_B" link set "$IF_A" up
	rc=0
	out=$(ns_exec "$NS_B" timeout 10 "$SMOKE" probe "$IF_A" 2>&1) || rc=$?
	echo "$out"
	[ "$rc" -eq 1 ] || fail "probe on the namesake exited $rc, want 1"
	grep -qF "$IF_A: blue is not attached; run 'bluectl attach $IF_A'" <<<"$out" ||
		fail "namesake: no clear 'not attached' message"
	# after a detach, A is refused too
	ns_exec "$NS_A" "$BLUECTL" detach "$IF_A"
	rc=0
	out=$(ns_exec "$NS_A" timeout 10 "$SMOKE" probe "$IF_A" 2>&1) || rc=$?
	echo "$out"
	[ "$rc" -eq 1 ] || fail "probe after detach exited $rc, want 1"
	grep -qF "$IF_A: blue is not attached; run 'bluectl attach $IF_A'" <<<"$out" ||
		fail "after detach: no clear message"
}

test_rc_device_reclaims_after_kill() {
	rcd_setup
	local srv hold out
	srv=$(mktemp) hold=$(mktemp -u)
	on_exit "rm -f $srv $hold"
	# no `timeout` wrapper: SPID must be rc_smoke itself (it bounds its own waits)
	ns_bg "$NS_A" SPID "$SMOKE" server "$IF_A" --hold-file "$hold" --timeout-ms 10000 \
		>"$srv" 2>&1
	wait_for_line "$srv" '^READY' 10 || { cat "$srv"; fail "the server did not get ready"; }
	# while it lives, a second open of the netdev is refused (one UMEM per queue) and
	# leaves its QP alone: that is what makes the reclaim below safe
	local rc=0
	out=$(ns_exec "$NS_A" timeout 10 "$SMOKE" probe "$IF_A" 2>&1) || rc=$?
	echo "$out"
	[ "$rc" -eq 1 ] || fail "a second open of a busy netdev exited $rc, want 1"
	grep -q "freed" <<<"$out" && fail "a live process's QP slot was freed"
	[ "$(qp_lines "$NS_A" "$IF_A" | wc -l)" -eq 1 ] || fail "the live server's QP is gone"
	# killed without closing: its QP slot stays claimed in the pinned map ...
	kill -9 "$SPID"
	wait "$SPID" 2>/dev/null || true
	[ "$(qp_lines "$NS_A" "$IF_A" | wc -l)" -eq 1 ] || fail "want the dead server's QP listed"
	# ... until the next blue_open_device on the netdev frees it
	out=$(ns_exec "$NS_A" timeout 10 "$SMOKE" probe "$IF_A" 2>&1) || { echo "$out"; fail "probe"; }
	echo "$out"
	grep -q "freed 1 QP slot left by a process that exited" <<<"$out" || fail "no reclaim message"
	[ -z "$(qp_lines "$NS_A" "$IF_A")" ] || fail "QPs still listed after the reclaim"
}
