# shellcheck shell=bash
# Self-test of the interop harness: Linux Soft-RoCE (rdma_rxe) in a QEMU guest as the
# peer, reached from a namespace of ours across a bridge. Run with
#   B=build-<you> bash tests/lib/runner.sh tests/interop/test_rxe_guest.sh
# One guest boot (~7 s under TCG) serves every check, to keep the suite short.
# shellcheck source=tests/interop/guest.sh
source tests/interop/guest.sh

# wire form of ::ffff:A.B.C.D, as rc_pingpong prints GIDs (32 hex digits)
_wire_gid() {
	local IFS=.
	# shellcheck disable=SC2086
	set -- $1
	printf '00000000000000000000ffff%02x%02x%02x%02x' "$1" "$2" "$3" "$4"
}

# _sysfs_gid WIRE: the same GID as sysfs prints it (groups of 4, colons)
_sysfs_gid() { sed -E 's/(....)/\1:/g; s/:$//' <<<"$1"; }

# The guest boots with rxe0 ACTIVE and its IPv4 GID at index 1 (what `-g 1` selects);
# it answers ping across the bridge; its stock ibv_rc_pingpong server accepts a
# LID:QPN:PSN:GID string over TCP 18515, moves its QP to RTR/RTS and answers with a
# well-formed string of its own; then it runs 10 real RC SEND rounds against
# roce_pingpong.py (hand-built RoCEv2 frames from the blue-side namespace), echoes our
# bytes intact and exits 0. tcpdump on the bridge sees all of it.
test_rxe_guest_pingpong() {
	local why pcap tdlog tpid out reply boot rc guest_gid blue_gid i n
	why=$(rxe_missing)
	[ -z "$why" ] || skip "$why"
	rxe_images || {
		# 2: a package the image needs is not installed (the message names it)
		[ $? -eq 2 ] && skip "guest image inputs missing; run scripts/deps.sh"
		fail "initramfs build failed (see above)"
	}
	rxe_net_up
	guest_gid=$(_wire_gid "$RXE_GUEST_IP")
	blue_gid=$(_wire_gid "$RXE_BLUE_IP")

	pcap=$(mktemp /tmp/rxe-bridge.XXXXXX.pcap)
	tdlog=$(mktemp /tmp/rxe-tcpdump.XXXXXX.log)
	on_exit "rm -f $pcap $tdlog"
	# -Z root: Debian's tcpdump otherwise drops to user tcpdump and cannot write the file.
	# --immediate-mode: without it libpcap hands packets over per ring block (up to 1 s
	# late), and a SIGINT in that window loses them; this whole test fits in 1 s.
	rxe_bg "$RXE_NS_BR" tpid tcpdump -i br0 -n -U --immediate-mode -Z root -w "$pcap" \
		'icmp or tcp port 18515 or udp port 4791' >/dev/null 2>"$tdlog"
	for ((i = 0; i < 50; i++)); do
		grep -q 'listening on' "$tdlog" && break
		sleep 0.1
	done
	grep -q 'listening on' "$tdlog" || fail "tcpdump did not start: $(cat "$tdlog")"

	rxe_guest_start "timeout 40 ibv_rc_pingpong -g 1 -d rxe0 -n 10 -s 64"
	rxe_guest_wait READY 60 || fail "guest never became READY"
	boot=$(rxe_guest_elapsed)
	echo "boot: READY ${boot}s after QEMU start ($(grep -m1 -o 'READY uptime=[0-9.]*' "$RXE_LOG" | tr -d '\r') in the guest)"
	tr -d '\r' <"$RXE_LOG" | sed -n '/init: loading modules/,/^BLUE-GUEST READY/p' | sed 's/^.*init: loading/init: loading/'

	grep -q 'link rxe0/1 state ACTIVE' "$RXE_LOG" || fail "rdma link: rxe0 not ACTIVE"
	grep -q 'state:.*PORT_ACTIVE' "$RXE_LOG" || fail "ibv_devinfo: port not PORT_ACTIVE"
	grep -q 'active_mtu:.*1024' "$RXE_LOG" || fail "ibv_devinfo: active_mtu is not 1024"
	grep -q "^gid 1 RoCE v2 $(_sysfs_gid "$guest_gid")" "$RXE_LOG" \
		|| fail "GID index 1 is not the IPv4 GID of $RXE_GUEST_IP (ibv_rc_pingpong -g 1 would pick another)"

	rxe_blue ping -c 3 -i 0.2 -W 2 "$RXE_GUEST_IP" || fail "guest does not answer ping"

	out=$(rxe_blue timeout 40 /usr/bin/python3 tests/interop/roce_pingpong.py \
		"$RXE_GUEST_IP" "$RXE_BLUE_IP" "$RXE_BLUE_IF" "$RXE_GUEST_MAC" \
		--qpn 0xb1 --psn 0x123456 --rounds 10 --size 64) \
		|| { echo "$out"; fail "roce_pingpong.py failed"; }
	echo "$out"
	reply=$(sed -nE "s/^reply (0000:[0-9a-f]{6}:[0-9a-f]{6}:$guest_gid)\$/\1/p" <<<"$out")
	[ -n "$reply" ] || fail "guest reply is not LID 0 with GID ::ffff:$RXE_GUEST_IP"
	grep -q '^pingpong: 10 rounds of 64 bytes echoed intact' <<<"$out" || fail "data rounds incomplete"

	rxe_guest_wait EXIT 30 || fail "guest command did not finish"
	rc=$(rxe_guest_rc)
	echo "guest: ibv_rc_pingpong exited $rc, $(rxe_guest_elapsed)s after QEMU start"
	tr -d '\r' <"$RXE_LOG" | sed -n '/^BLUE-GUEST RUN/,/^BLUE-GUEST EXIT/p'
	[ "$rc" = 0 ] || fail "guest ibv_rc_pingpong exited $rc"
	grep -q "remote address: LID 0x0000, QPN 0x0000b1, PSN 0x123456, GID ::ffff:$RXE_BLUE_IP" \
		"$RXE_LOG" || fail "guest did not parse our LID:QPN:PSN:GID string"

	# stop the capture (SIGINT flushes it), bounded; the on_exit kill covers a hang
	kill -INT "$tpid"
	for ((i = 0; i < 50; i++)); do _rxe_child_alive "$tpid" || break; sleep 0.1; done

	# the capture, decoded independently by tshark
	n=$(tshark -r "$pcap" -Y "icmp.type == 0 && ip.src == $RXE_GUEST_IP" 2>/dev/null | wc -l)
	echo "capture: $n ICMP echo replies from the guest"
	[ "$n" -ge 3 ] || fail "capture: expected >= 3 echo replies, got $n"
	out=$(tshark -r "$pcap" -Y 'tcp.port == 18515 && tcp.len > 0' -T fields \
		-e ip.src -e tcp.payload 2>/dev/null | tr -d ':')
	grep -Eq "^$RXE_BLUE_IP\s$(printf '0000:0000b1:123456:%s' "$blue_gid" | xxd -p -c 256)00\$" <<<"$out" \
		|| fail "capture: our 52-byte string is not on the wire as one segment"
	grep -Eq "^$RXE_GUEST_IP\s$(printf '%s' "$reply" | xxd -p -c 256)00\$" <<<"$out" \
		|| fail "capture: the guest's 52-byte reply ($reply) is not on the wire"
	out=$(tshark -r "$pcap" -Y 'udp.dstport == 4791' -T fields \
		-e ip.src -e infiniband.bth.opcode 2>/dev/null | sort | uniq -c)
	echo "capture: RoCEv2 packets (count, source, BTH opcode):"
	echo "$out"
	n=$(awk -v g="$RXE_GUEST_IP" '$2 == g && $3 == 4 { print $1 }' <<<"$out")
	[ "${n:-0}" -eq 10 ] || fail "capture: expected 10 SEND_ONLY from the guest, got ${n:-0}"
	n=$(awk -v g="$RXE_GUEST_IP" '$2 == g && $3 == 17 { print $1 }' <<<"$out")
	[ "${n:-0}" -ge 10 ] || fail "capture: expected >= 10 ACKs from the guest, got ${n:-0}"
}
