# shellcheck shell=bash
# IB path MTU 4096 over a veth pair that carries it. With the netdev MTU at 9000 (and at
# 4200, just above the 4096 + headers a full packet needs), blue's XDP program attaches
# as xdp.frags and libblue's AF_XDP HAL binds with XDP_USE_SG, so a ~4.2 KB RoCEv2
# frame goes out as two descriptors and comes back in as two. Checks:
#  - the port offers MTU 4096 and the QP runs at it (blue_xfer prints it);
#  - a 16 MiB WRITE and a 16 MiB READ move verified data (CRC-32 on the other side);
#  - XDP on each receiver counted the data packets as full 4096-byte payloads: the
#    count is 4096 per 16 MiB (not the 16384 of MTU 1024), and the bytes per packet
#    are those of a 4096-byte payload plus headers;
#  - at netdev MTU 1500 the same tool still gets 1024 (the clamp to what the link
#    carries), also when asked for 4096;
#  - with 2 MiB pages reserved the UMEM sits in them (the open logs which pages it got)
#    and data still moves; BLUE_HUGEPAGES=0 falls back to 4 KiB pages.
# Run: B=build bash tests/lib/runner.sh tests/netns/test_mtu4096.sh
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh

BLUECTL=$PWD/$B/bin/bluectl
XFER=$PWD/$B/bin/blue_xfer
IP_A=10.201.96.1	# server
IP_B=10.201.96.2	# client
# Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 around a 4096-byte payload; a WRITE
# First adds a RETH (16), a READ Response First/Last/Only an AETH (4)
FULL_FRAME=$((14 + 20 + 8 + 12 + 4 + 4096))

# mtu_setup NETDEV_MTU: namespaces and veth at that MTU, blue attached on both ends.
mtu_setup() {
	netns_setup m4k "$IP_A" "$IP_B"
	need_bins "$BLUECTL" "$XFER"
	ip -n "$NS_A" link set "$IF_A" mtu "$1"
	ip -n "$NS_B" link set "$IF_B" mtu "$1"
	blue_attach "$NS_A" "$IF_A"
	blue_attach "$NS_B" "$IF_B"
	SRV_OUT=$(mktemp)
	CLI_OUT=$(mktemp)
	on_exit "rm -f $SRV_OUT $CLI_OUT"
}

# blue_xfer says which pages and frames its UMEM got (xfer_ab, tests/lib/netns.sh)
SRV_ENV=BLUE_VERBOSE=1
CLI_ENV=BLUE_VERBOSE=1

# mark NS IF: remember the redirect counters, so full_payloads sees one transfer only
mark() {
	P0=$(ctl_stat "$1" "$2" redirect 2)
	B0=$(ctl_stat "$1" "$2" redirect 3)
}

# full_payloads NS IF MIN_PKTS: since mark, at least MIN_PKTS packets reached the
# socket, and on average each was a full-size frame (4096-byte payload). A loss on this
# busy box resends full packets, which keeps the average; payloads of 2048 or 1024
# would halve or quarter it. The bound on the count only catches a storm.
full_payloads() {
	local pkts bytes
	pkts=$(($(ctl_stat "$1" "$2" redirect 2) - P0))
	bytes=$(($(ctl_stat "$1" "$2" redirect 3) - B0))
	echo "$1: $pkts packets, $bytes bytes redirected to AF_XDP"
	[ "$pkts" -ge "$3" ] || fail "$1: $pkts packets, want >= $3"
	[ "$pkts" -le $(($3 * 3)) ] || fail "$1: $pkts packets for $3: a retransmission storm"
	[ "$bytes" -ge $((pkts * (FULL_FRAME - 8))) ] ||
		fail "$1: $((bytes / pkts)) B per packet on average, want ~$FULL_FRAME: payloads < 4096"
}

run_16m() {
	local pkts=$((16 * 1024 * 1024 / 4096))
	# one WRITE: the server receives 4096 full packets
	mark "$NS_A" "$IF_A"
	xfer_ab -- --op write --size 16M --iters 1 --verify -m 4096
	[ "$CRC" -eq 0 ] && [ "$SRC" -eq 0 ] || fail "write: client $CRC, server $SRC"
	grep -q 'MTU 4096$' "$CLI_OUT" || fail "the QP did not run at MTU 4096"
	grep -q '^RESULT: PASS' "$CLI_OUT" || fail "write: no PASS"
	full_payloads "$NS_A" "$IF_A" "$pkts"
	# ... each a frame beyond one 4 KiB chunk: AF_XDP multi-buffer on both ends (the
	# first transfer since attach, so the device counters are this WRITE's)
	[ "$(ctl_stat "$NS_B" "$IF_B" tx_multibuf)" -ge "$pkts" ] ||
		fail "the client sent fewer than $pkts multi-buffer packets"
	[ "$(ctl_stat "$NS_A" "$IF_A" rx_multibuf)" -ge "$pkts" ] ||
		fail "the server received fewer than $pkts multi-buffer packets"
	# one READ: the client receives 4096 full responses
	mark "$NS_B" "$IF_B"
	xfer_ab -- --op read --size 16M --iters 1 --verify -m 4096
	[ "$CRC" -eq 0 ] && [ "$SRC" -eq 0 ] || fail "read: client $CRC, server $SRC"
	grep -q '^RESULT: PASS' "$CLI_OUT" || fail "read: no PASS"
	full_payloads "$NS_B" "$IF_B" "$pkts"
}

test_mtu4096_write_read_16m_veth9000() {
	mtu_setup 9000
	run_16m
}

test_mtu4096_write_read_16m_veth4200() {
	mtu_setup 4200
	run_16m
}

test_mtu4096_refused_on_1500() {
	mtu_setup 1500
	xfer_ab -- --op write --size 64K --iters 1 --verify
	[ "$CRC" -eq 0 ] || fail "default MTU at 1500: client exited $CRC"
	grep -q 'MTU 1024$' "$CLI_OUT" || fail "a 1500-byte link must give path MTU 1024"
	xfer_ab -- --op write --size 64K --iters 1 --verify -m 4096
	grep -q 'MTU 1024$' "$CLI_OUT" || fail "-m 4096 on a 1500-byte link must clamp to 1024"
}

test_umem_hugepages_and_fallback() {
	local old want
	old=$(cat /proc/sys/vm/nr_hugepages)
	# 8 pages per UMEM (16 MiB); room for both ends and for anyone else's device
	want=$((old + 32))
	on_exit "echo $old > /proc/sys/vm/nr_hugepages"
	echo "$want" >/proc/sys/vm/nr_hugepages 2>/dev/null
	[ "$(cat /proc/sys/vm/nr_hugepages)" -ge "$want" ] ||
		skip "cannot reserve $want 2 MiB pages (memory too fragmented?)"
	mtu_setup 9000
	SRV_ENV="BLUE_VERBOSE=1 BLUE_HUGEPAGES=0" xfer_ab -- --op write,read --size 1M --iters 2 --verify
	[ "$CRC" -eq 0 ] && [ "$SRC" -eq 0 ] || fail "client $CRC, server $SRC"
	grep -q '^RESULT: PASS' "$CLI_OUT" || fail "no PASS"
	grep -q 'UMEM of 2 MiB pages, 8192-byte frames' "$CLI_OUT" ||
		fail "client: UMEM not in 2 MiB pages with pages reserved"
	grep -q 'UMEM of 4 KiB pages, 8192-byte frames' "$SRV_OUT" ||
		fail "server: BLUE_HUGEPAGES=0 did not fall back to 4 KiB pages"
}
