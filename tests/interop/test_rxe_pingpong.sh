# shellcheck shell=bash
# Interop: blue_rc_pingpong against the stock ibv_rc_pingpong on Linux Soft-RoCE (rdma_rxe
# in the QEMU guest of guest.sh), in both directions, over RoCEv2 across a bridge:
#   gsrv-*  the guest is the server, blue_rc_pingpong the client (connecting to the guest)
#   gcli-*  blue_rc_pingpong is the server, the guest's ibv_rc_pingpong the client
# at 64 bytes (one SEND_ONLY per message) and 8 KiB (SEND_FIRST, 6 MIDDLE, LAST at the
# path MTU of 1024), and at 8 KiB with -c on both sides (the received buffer is checked).
# Run: B=build-<you> bash tests/lib/runner.sh tests/interop/test_rxe_pingpong.sh
#
# Both sides must exit 0, print rc_pingpong's two summary lines, and agree on each other's
# LID:QPN:PSN:GID. tcpdump on the bridge captures every RoCEv2 packet of each step; an
# independent checker (icrc_check.py, zlib CRC-32) verifies the ICRC of every one, in
# both directions, and the opcode counts must cover all N messages each way; tshark,
# another independent decoder, must count the same packets and reports the opcode mix.
#
# One guest boot serves every step: the guest command is a script that runs the steps in
# order and brackets each with console markers (BLUE-STEP BEGIN/END). The host follows
# the console: it starts the capture and blue's side of a step, then waits for the step's
# END. Neither side has to start first: blue's client retries a refused connect, and the
# guest script retries ibv_rc_pingpong's client (which connects only once) while the
# connect is refused. Each step's capture and the guest console stay in
# $B/test-logs/rxe-pingpong/ for inspection (tshark -r FILE -V).
# shellcheck source=tests/interop/guest.sh
source tests/interop/guest.sh

IOP_PP=$PWD/$B/bin/blue_rc_pingpong
IOP_BLUECTL=$PWD/$B/bin/bluectl
IOP_PY=/usr/bin/python3
IOP_CHECK=$PWD/tests/interop/icrc_check.py
IOP_KEEP=$PWD/$B/test-logs/rxe-pingpong

# NAME GUEST_ROLE ITERS SIZE [EXTRA FLAGS]: N is modest, the guest runs under TCG
IOP_STEPS=(
	"gsrv-64 server 200 64"
	"gsrv-8192 server 100 8192"
	"gsrv-8192-chk server 100 8192 -c"
	"gcli-64 client 200 64"
	"gcli-8192 client 100 8192"
	"gcli-8192-chk client 100 8192 -c"
)

# The guest command (busybox sh). s NAME ROLE ARGS...: one ibv_rc_pingpong run between
# markers; a client whose connect is refused (blue's server not listening yet) is started
# again, at most 200 times. The script's status is 1 if any run failed.
_iop_guest_script() {
	local st name role n size flags
	echo f=0
	rxe_step_fn 'timeout 40 ibv_rc_pingpong -d rxe0 -g 1' 200
	for st in "${IOP_STEPS[@]}"; do
		read -r name role n size flags <<<"$st"
		if [ "$role" = client ]; then
			echo "s $name client -n $n -s $size $flags $RXE_BLUE_IP"
		else
			echo "s $name server -n $n -s $size $flags"
		fi
	done
	# shellcheck disable=SC2016 # $f is the guest's
	echo 'exit $f'
}

# _iop_cap_start PCAP: tcpdump on the bridge, every RoCEv2 packet whole; PID in IOP_TPID
_iop_cap_start() {
	local log=$1.log i
	# -Z root: Debian's tcpdump otherwise drops to user tcpdump and cannot write the
	# file; --immediate-mode: the SIGINT at the end loses nothing buffered; -B: a step
	# puts ~2 MB on the wire in 0.2 s while QEMU and blue's poller hold both CPUs, and
	# the default 2 MiB ring then drops packets
	rxe_bg "$RXE_NS_BR" IOP_TPID tcpdump -i br0 -n -s 0 -B 32768 -U --immediate-mode \
		-Z root -w "$1" 'udp port 4791' >/dev/null 2>"$log"
	for ((i = 0; i < 50; i++)); do
		grep -q 'listening on' "$log" && return 0
		sleep 0.1
	done
	fail "tcpdump did not start: $(cat "$log")"
}

# _iop_cap_stop: SIGINT (tcpdump flushes and prints its counts), bounded
_iop_cap_stop() {
	local i
	kill -INT "$IOP_TPID" 2>/dev/null
	for ((i = 0; i < 50; i++)); do
		_rxe_child_alive "$IOP_TPID" || break
		sleep 0.1
	done
	_rxe_kill_child "$IOP_TPID"
}

# _iop_addr FILE local|remote: the address line of an rc_pingpong output, normalised
_iop_addr() {
	grep -E "^  $2 address: +LID" "$1" | sed -E 's/^  (local|remote) address: +//'
}

# _iop_summary FILE SIZE ITERS WHO: rc_pingpong's two summary lines, right byte count
_iop_summary() {
	grep -qE "^$(($2 * $3 * 2)) bytes in [0-9]+\.[0-9]{2} seconds = [0-9.]+ Mbit/sec$" "$1" ||
		fail "$4: no \"$(($2 * $3 * 2)) bytes in ... Mbit/sec\" line"
	grep -qE "^$3 iters in [0-9]+\.[0-9]{2} seconds = [0-9.]+ usec/iter$" "$1" ||
		fail "$4: no \"$3 iters in ... usec/iter\" line"
}

# _iop_count CHECKOUT SRC DST OPCODE: packets of OPCODE from SRC to DST per icrc_check.py
_iop_count() {
	awk -v s="$2" -v d="$3" -v op="$4" '$1 == "pair" && $2 == s && $3 == d {
		n = split($NF, a, ","); for (i = 1; i <= n; i++) { split(a[i], kv, ":");
		if (kv[1] == op) c = kv[2] } } END { print c + 0 }' "$1"
}

# _iop_check_step NAME ROLE N SIZE FLAGS BLUE_RC: every assertion about one step, on the
# files in $IOP_DIR. Runs in a subshell under `||`, where set -e is off: every check
# fails explicitly.
_iop_check_step() {
	local name=$1 role=$2 n=$3 size=$4 flags=$5 brc=$6
	local g=$IOP_DIR/$name.guest b=$IOP_DIR/$name.blue p=$IOP_DIR/$name.pcap
	local grc ck=$IOP_DIR/$name.icrc re gip=$RXE_GUEST_IP bip=$RXE_BLUE_IP
	local o got want mix
	echo "--- $name: guest ibv_rc_pingpong ($role):"; cat "$g"
	echo "--- $name: blue_rc_pingpong ($([ "$role" = server ] && echo client || echo server)):"
	cat "$b"
	grc=$(rxe_step_rc "$g" "$name")
	[ "$grc" = 0 ] || fail "$name: guest ibv_rc_pingpong exited ${grc:-?}"
	[ "$brc" = 0 ] || fail "$name: blue_rc_pingpong exited $brc"

	re='^LID 0x0000, QPN 0x[0-9a-f]{6}, PSN 0x[0-9a-f]{6}, GID ::ffff:'
	_iop_addr "$g" local | grep -qE "${re}${gip//./\\.}$" || fail "$name: guest: bad local address"
	_iop_addr "$b" local | grep -qE "${re}${bip//./\\.}$" || fail "$name: blue: bad local address"
	[ "$(_iop_addr "$g" remote)" = "$(_iop_addr "$b" local)" ] ||
		fail "$name: the guest's remote address is not blue's local address"
	[ "$(_iop_addr "$b" remote)" = "$(_iop_addr "$g" local)" ] ||
		fail "$name: blue's remote address is not the guest's local address"
	_iop_summary "$g" "$size" "$n" "$name: guest" || return 1
	_iop_summary "$b" "$size" "$n" "$name: blue" || return 1
	! grep -q "invalid data" "$g" "$b" || fail "$name: a side found invalid data (-c)"

	# the capture is whole: the counts below mean nothing if tcpdump lost packets
	sed -n "s/^/$name tcpdump: /; /captured\|dropped/p" "$p.log"
	grep -q '^0 packets dropped by kernel' "$p.log" || fail "$name: tcpdump lost packets"

	# every RoCEv2 packet on the bridge, both ways, has a good ICRC
	"$IOP_PY" "$IOP_CHECK" "$p" >"$ck" || { cat "$ck"; fail "$name: ICRC check failed"; }
	grep '^pair\|^total' "$ck" | sed "s/^/$name icrc: /"
	grep -qE "^pair $gip $bip packets [1-9]" "$ck" || fail "$name: no packet guest->blue"
	grep -qE "^pair $bip $gip packets [1-9]" "$ck" || fail "$name: no packet blue->guest"
	# ... and the opcodes account for every message each way (retransmissions may add)
	local src dst
	for src in "$gip $bip" "$bip $gip"; do
		read -r src dst <<<"$src"
		if [ "$size" -le 1024 ]; then
			o=("0x04 $n")				# SEND_ONLY
		else
			local pk=$(((size + 1023) / 1024))
			o=("0x00 $n" "0x01 $((n * (pk - 2)))" "0x02 $n")	# FIRST, MIDDLE, LAST
		fi
		o+=("0x11 1")			# and src acknowledges dst's messages
		for want in "${o[@]}"; do
			got=$(_iop_count "$ck" "$src" "$dst" "${want% *}")
			[ "$got" -ge "${want#* }" ] ||
				fail "$name: $src->$dst: $got packets of opcode ${want% *}, want >= ${want#* }"
		done
	done

	# tshark, decoding on its own, sees the same packets and nothing malformed
	mix=$(tshark -r "$p" -Y 'udp.dstport == 4791' -T fields -e ip.src -e ip.dst \
		-e infiniband.bth.opcode 2>/dev/null | sort | uniq -c)
	# shellcheck disable=SC2001 # a prefix on every line
	sed "s/^ */$name tshark: /" <<<"$mix"
	got=$(awk '{ s += $1 } END { print s + 0 }' <<<"$mix")
	want=$(sed -nE 's/^total ([0-9]+) .*/\1/p' "$ck")
	[ "$got" = "$want" ] || fail "$name: tshark decoded $got RoCEv2 packets, the checker $want"
	! awk '$4 == ""' <<<"$mix" | grep -q . || fail "$name: tshark found packets without a BTH"
	got=$(tshark -r "$p" -Y '_ws.malformed' 2>/dev/null | wc -l)
	[ "$got" -eq 0 ] || fail "$name: tshark marks $got packets malformed"
	return 0
}

# _iop_run_step NAME ROLE N SIZE [FLAGS]: capture, blue's side, the guest's END marker
_iop_run_step() {
	local name=$1 role=$2 n=$3 size=$4 flags=${5:-} brc=0 bpid t0
	local b=$IOP_DIR/$name.blue
	rxe_step_wait "$name" BEGIN 60 || fail "$name: the guest never began it"
	t0=$(date +%s.%N)
	_iop_cap_start "$IOP_DIR/$name.pcap"
	# shellcheck disable=SC2086 # $flags: zero or more words
	if [ "$role" = server ]; then
		rxe_blue timeout 60 "$IOP_PP" -d "$RXE_BLUE_IF" -g 1 --timeout 20 -n "$n" \
			-s "$size" $flags "$RXE_GUEST_IP" >"$b" 2>&1 || brc=$?
	else
		rxe_bg "$RXE_NS_BLUE" bpid timeout 60 "$IOP_PP" -d "$RXE_BLUE_IF" -g 1 \
			--timeout 20 -n "$n" -s "$size" $flags >"$b" 2>&1
		wait "$bpid" || brc=$?
	fi
	rxe_step_wait "$name" END 60 || fail "$name: the guest never ended it"
	_iop_cap_stop
	rxe_step_log "$name" >"$IOP_DIR/$name.guest"
	cp "$IOP_DIR/$name.pcap" "$IOP_KEEP/"
	tr -d '\r' <"$RXE_LOG" >"$IOP_KEEP/console.log"
	echo "$name: ran in $(echo "$(date +%s.%N) $t0" | awk '{ printf "%.1f", $1 - $2 }') s"
	IOP_BRC=$brc
}

test_rxe_pingpong_both_directions() {
	local why st name role n size flags failed=() boot
	why=$(rxe_missing)
	[ -z "$why" ] || skip "$why"
	command -v tcpdump >/dev/null || skip "tcpdump not installed"
	command -v tshark >/dev/null || skip "tshark not installed"
	[ -x "$IOP_PY" ] || skip "$IOP_PY not found"
	[ -x "$IOP_PP" ] || fail "$IOP_PP not built"
	[ -x "$IOP_BLUECTL" ] || fail "$IOP_BLUECTL not built"
	rxe_images || {
		[ $? -eq 2 ] && skip "guest image inputs missing; run scripts/deps.sh"
		fail "initramfs build failed (see above)"
	}
	rxe_blue_up "rxb$BASHPID" "$IOP_BLUECTL"

	IOP_DIR=$(mktemp -d /tmp/rxe-pp.XXXXXX)
	on_exit "rm -rf $IOP_DIR"
	mkdir -p "$IOP_KEEP"
	rm -f "$IOP_KEEP"/*.pcap "$IOP_KEEP/console.log"
	rxe_guest_start "$(_iop_guest_script)"
	rxe_guest_wait READY 60 || fail "guest never became READY"
	boot=$(rxe_guest_elapsed)
	echo "boot: READY ${boot} s after QEMU start"

	for st in "${IOP_STEPS[@]}"; do
		read -r name role n size flags <<<"$st"
		_iop_run_step "$name" "$role" "$n" "$size" "$flags"
		# shellcheck disable=SC2030,SC2031 # the subshell only reads
		(_iop_check_step "$name" "$role" "$n" "$size" "$flags" "$IOP_BRC") ||
			failed+=("$name")
	done
	rxe_guest_wait EXIT 30 || fail "the guest script did not finish"
	echo "guest: script exited $(rxe_guest_rc), $(rxe_guest_elapsed) s after QEMU start"

	# the checker itself can fail: flipped bits in covered bytes must break the ICRC,
	# flipped bits in masked ones must not (on a real capture of both stacks)
	"$IOP_PY" "$IOP_CHECK" --mutate "$IOP_DIR/gsrv-8192.pcap" ||
		fail "icrc_check.py --mutate: the checker misjudges mutated frames"

	[ ${#failed[@]} -eq 0 ] || fail "steps failed: ${failed[*]}"
	[ "$(rxe_guest_rc)" = 0 ] || fail "the guest script exited $(rxe_guest_rc)"
}
