# shellcheck shell=bash
# The data path end to end: blue attached in native mode on one end of a veth pair,
# the AF_XDP HAL (afxdp_hal/) receiving there, an AF_XDP sender on the other end.
# Each QPN's frames must reach exactly its own socket with every byte and the ICRC
# intact; frames for an unknown QPN must be dropped and counted; ordinary IP (ping,
# TCP) must keep working on the same link while blue is attached.
# Run: B=build bash tests/lib/runner.sh tests/netns/test_datapath.sh
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh

BLUECTL=$PWD/$B/bin/bluectl
XSK_SEND=$PWD/$B/tests/netns/xsk_send
XSK_RECV=$PWD/$B/tests/netns/xsk_recv
IP_A=10.201.91.1
IP_B=10.201.91.2
QPNS=0x11,0x1012,0x2ff3		# three slots, three sockets
UNKNOWN=0x1011			# lands in 0x11's slot but is not its owner
COUNT=200			# frames per QPN
UNKNOWN_COUNT=37
PAYLOAD=1024

# dp_setup: namespaces blue-dp-<pid>-a/b joined by a veth pair, blue attached natively
# on the B end. Interface names carry the PID as well (netns_setup). Sets NS_A NS_B IF_A
# IF_B MAC_B.
dp_setup() {
	netns_setup dp "$IP_A" "$IP_B"
	need_bins "$BLUECTL" "$XSK_SEND" "$XSK_RECV"
	blue_attach "$NS_B" "$IF_B"
}



test_datapath_steers_by_qpn() {
	dp_setup
	local out rc n redirect_before unknown_before rpid
	out=$(mktemp)
	on_exit "rm -f $out"
	redirect_before=$(ctl_stat "$NS_B" "$IF_B" redirect)
	unknown_before=$(ctl_stat "$NS_B" "$IF_B" drop_unknown_qpn)

	ns_bg "$NS_B" rpid timeout 20 "$XSK_RECV" "$IF_B" --qpns "$QPNS" --count "$COUNT" \
		--payload "$PAYLOAD" --timeout-ms 8000 >"$out" 2>&1
	wait_for_line "$out" '^READY' 5 || { cat "$out"; fail "xsk_recv did not get ready"; }

	ns_exec "$NS_A" timeout 15 "$XSK_SEND" "$IF_A" --src-mac "$MAC_A" --dst-mac "$MAC_B" \
		--src-ip "$IP_A" --dst-ip "$IP_B" --qpns "$QPNS" --count "$COUNT" \
		--unknown "$UNKNOWN" --unknown-count "$UNKNOWN_COUNT" --payload "$PAYLOAD" \
		--sockets 2 \
		|| fail "xsk_send failed"

	rc=0
	wait "$rpid" || rc=$?
	cat "$out"
	[ "$rc" -eq 0 ] || fail "xsk_recv exited $rc"
	n=$(grep -c '^qpn .* received '"$COUNT"' expected '"$COUNT"' dup 0 wrong_qpn 0 .* OK$' "$out")
	[ "$n" -eq 3 ] || fail "$n of 3 QPNs got exactly their frames"
	# The XDP program counted each QP's frames in its own map entry, too.
	n=$(grep -c "xdp_rx_pkts $COUNT OK" "$out")
	[ "$n" -eq 3 ] || fail "qp_ctx.xdp_rx_pkts disagrees on $((3 - n)) QPNs"

	local redirect unknown
	redirect=$(($(ctl_stat "$NS_B" "$IF_B" redirect) - redirect_before))
	unknown=$(($(ctl_stat "$NS_B" "$IF_B" drop_unknown_qpn) - unknown_before))
	echo "bluectl stats: redirect +$redirect, drop_unknown_qpn +$unknown"
	[ "$redirect" -eq $((3 * COUNT)) ] || fail "redirect counted $redirect, want $((3 * COUNT))"
	[ "$unknown" -eq "$UNKNOWN_COUNT" ] ||
		fail "drop_unknown_qpn counted $unknown, want $UNKNOWN_COUNT"
}

test_datapath_ip_still_works() {
	dp_setup
	local got srv pass_before
	pass_before=$(ctl_stat "$NS_B" "$IF_B" pass_non_udp)
	ns_exec "$NS_A" ping -c 3 -i 0.2 -W 2 "$IP_B" >/dev/null || fail "ping through blue failed"

	# TCP: a listener on B, a client on A sending a known blob; both bounded in time.
	got=$(mktemp)
	on_exit "rm -f $got"
	ns_bg "$NS_B" srv timeout 10 nc -l "$IP_B" 5001 >"$got"
	local i
	for ((i = 0; i < 50; i++)); do
		ns_exec "$NS_B" ss -ltn 2>/dev/null | grep -q ":5001 " && break
		sleep 0.1
	done
	seq 1 20000 | ns_exec "$NS_A" timeout 10 nc -N -w 5 "$IP_B" 5001 || fail "nc client failed"
	wait "$srv" || true
	cmp -s <(seq 1 20000) "$got" || fail "TCP data differs ($(wc -c <"$got") bytes arrived)"

	# ICMP and TCP are not UDP: blue passed them on and counted them.
	local passed=$(($(ctl_stat "$NS_B" "$IF_B" pass_non_udp) - pass_before))
	echo "pass_non_udp +$passed"
	[ "$passed" -ge 6 ] || fail "pass_non_udp counted only $passed packets"
}
