#!/usr/bin/env bash
# capture_vectors.sh [OUTDIR] — the golden rxe vectors: real RoCEv2 frames that Linux
# Soft-RoCE (rdma_rxe) built on both ends of a connection. A developer step (`make
# vectors`), not part of `make test`; the tests read the result from tests/vectors/rxe.
#
# Two guests of guest.sh (QEMU TCG, Debian's kernel with rdma_rxe) on one bridge inside a
# network namespace of ours:
#
#   ${P}br: br0 ── tap0 ══ guest "srv" eth0 $SUBNET.10, rxe0
#            └──── tap1 ══ guest "cli" eth0 $SUBNET.11, rxe0
#
# Each guest runs the same stock programs in the same order (ibverbs-utils'
# ibv_rc_pingpong, perftest's ib_*), srv as the server, cli as the client; tcpdump on br0
# keeps every UDP 4791 frame at full length. One boot serves all runs; each run's frames
# are told apart by their destination QPNs (each run opens a new QP on either side, and
# both programs print its QPN), and written to OUTDIR/<run>.pcap. Then OUTDIR/README.md
# (what each file holds), OUTDIR/opcodes.tsv (frames per BTH opcode, per file) and
# OUTDIR/fields.tsv (tshark's decoding of each file's first frames) are generated: the
# tests take their expected counts and fields from those, not from constants.
#
# Needs root, qemu-system-x86_64, linux-image-amd64, perftest, ibverbs-utils, tcpdump,
# tshark (scripts/deps.sh). Exit 77 = cannot run here (the reason is printed).
set -euo pipefail
trap 'echo "capture_vectors: failed at line $LINENO: $BASH_COMMAND" >&2' ERR
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$root/tests/vectors/rxe}
RXE_SUBNET=${RXE_SUBNET:-10.201.79}
RXE_PREFIX=${RXE_PREFIX:-rxv$$}
# shellcheck source=tests/interop/guest.sh
source "$here/guest.sh"

SRV_IP=$RXE_SUBNET.10 SRV_MAC=52:54:00:c9:4f:0a
CLI_IP=$RXE_SUBNET.11 CLI_MAC=52:54:00:c9:4f:0b
STEP_S=180	# one run under TCG takes seconds; a hung one is cut here
# NAME|PROGRAM AND ARGUMENTS (the client adds the server's address). N is small: the
# files stay a few hundred KB, and every opcode of the run is still there.
RUNS=(
	"pp-64|ibv_rc_pingpong -g 1 -n 20 -s 64"
	"pp-4096|ibv_rc_pingpong -g 1 -n 10 -s 4096"
	"ib_send_bw-2048|ib_send_bw -x 1 -s 2048 -n 20 -F"
	"ib_write_bw-4096|ib_write_bw -x 1 -s 4096 -n 20 -F"
	"ib_write_lat-64|ib_write_lat -x 1 -s 64 -n 10 -F"
	"ib_read_bw-4096|ib_read_bw -x 1 -s 4096 -n 20 -F"
	"ib_read_lat-64|ib_read_lat -x 1 -s 64 -n 10 -F"
	"ib_atomic_bw-8|ib_atomic_bw -x 1 -n 20 -F"
	"ib_atomic_lat-8|ib_atomic_lat -x 1 -n 10 -F"
)
# BTH opcodes of RC, for the README (IBTA vol. 1, 9.2)
declare -A OPNAME=(
	[0]=SEND_FIRST [1]=SEND_MIDDLE [2]=SEND_LAST [3]=SEND_LAST_IMM [4]=SEND_ONLY
	[5]=SEND_ONLY_IMM [6]=RDMA_WRITE_FIRST [7]=RDMA_WRITE_MIDDLE [8]=RDMA_WRITE_LAST
	[9]=RDMA_WRITE_LAST_IMM [10]=RDMA_WRITE_ONLY [11]=RDMA_WRITE_ONLY_IMM
	[12]=RDMA_READ_REQUEST [13]=RDMA_READ_RESPONSE_FIRST [14]=RDMA_READ_RESPONSE_MIDDLE
	[15]=RDMA_READ_RESPONSE_LAST [16]=RDMA_READ_RESPONSE_ONLY [17]=ACKNOWLEDGE
	[18]=ATOMIC_ACKNOWLEDGE [19]=CMP_SWAP [20]=FETCH_ADD
)
# the columns of fields.tsv, tshark's names (an empty cell: the frame has no such header)
declare -A RUN_QPNS=()	# run -> "server QPN, client QPN", for the README
FIELDS=(frame.len eth.dst eth.src ip.src ip.dst ip.id ip.flags.df ip.ttl ip.dsfield
	udp.srcport infiniband.bth.opcode infiniband.bth.se infiniband.bth.m
	infiniband.bth.padcnt infiniband.bth.p_key infiniband.bth.destqp infiniband.bth.a
	infiniband.bth.psn infiniband.reth.va infiniband.reth.r_key infiniband.reth.dmalen
	infiniband.aeth.syndrome infiniband.aeth.msn infiniband.atomiceth.swapdt
	infiniband.atomiceth.cmpdt
	infiniband.atomicacketh.origremdt infiniband.invariant.crc)

die() { echo "capture_vectors: $*" >&2; exit 1; }

# cannot_run: why this host cannot capture (empty = it can)
cannot_run() {
	[ "$(id -u)" -eq 0 ] || { echo "needs root (namespaces, taps)"; return; }
	rxe_missing
	local b
	for b in tcpdump tshark ib_send_bw ib_atomic_lat ibv_rc_pingpong; do
		command -v "$b" >/dev/null || { echo "$b not installed (scripts/deps.sh)"; return; }
	done
}

# guest_script ROLE: the busybox sh program guest ROLE (server|client) runs: every run in
# order, each between BLUE-STEP markers; the client retries a refused connect (its server
# may not listen yet), at most 600 times
guest_script() {
	local r name cmd
	rxe_step_fn "timeout $STEP_S" 600
	echo "f=0"
	for r in "${RUNS[@]}"; do
		name=${r%%|*} cmd=${r#*|}
		if [ "$1" = client ]; then
			echo "s $name client $cmd $SRV_IP"
		else
			echo "s $name server $cmd"
		fi
	done
	# shellcheck disable=SC2016 # the guest's $f
	echo 'exit $f'
}

# run_qpn LOG NAME: the local QPN (decimal) the run's program printed in guest LOG
run_qpn() {
	local q
	q=$(tr -d '\r' <"$1" | sed -n "/^BLUE-STEP BEGIN $2\$/,/^BLUE-STEP END $2 /p" \
		| sed -nE 's/.*local address: +LID [0-9a-fx]+,? +QPN (0x[0-9a-fA-F]+).*/\1/p' | head -1)
	[ -n "$q" ] || die "$2: no 'local address ... QPN' line in the guest's output"
	echo $((q))
}

# split_runs ALL: ALL's frames into OUTDIR/<run>.pcap. A run's frames are those to its
# server QP at the server's address and to its client QP at the client's: a QPN alone is
# not enough, as each side numbers its QPs on its own (a client's refused connects cost
# it QPNs), so one run's client QPN can be the next run's server QPN.
split_runs() {
	local all=$1 r name qs qc n total=0 seen_s=" " seen_c=" "
	for r in "${RUNS[@]}"; do
		name=${r%%|*}
		qs=$(run_qpn "$SRV_LOG" "$name") qc=$(run_qpn "$CLI_LOG" "$name")
		case $seen_s$seen_c in *" s$qs "*|*" c$qc "*)
			die "$name: QPN $qs or $qc reused on its side; the runs cannot be told apart" ;;
		esac
		seen_s+="s$qs " seen_c+="c$qc "
		tshark -r "$all" -F pcap -w "$stage/$name.pcap" -Y "(ip.dst == $SRV_IP && \
infiniband.bth.destqp == $qs) || (ip.dst == $CLI_IP && infiniband.bth.destqp == $qc)" 2>/dev/null
		n=$(tshark -r "$stage/$name.pcap" 2>/dev/null | wc -l)
		[ "$n" -gt 0 ] || die "$name: no frames to QPNs $qs/$qc in the capture"
		echo "capture_vectors: $name.pcap: $n frames (QPNs server $qs, client $qc)"
		RUN_QPNS[$name]=$(printf '0x%x, 0x%x' "$qs" "$qc")
		total=$((total + n))
	done
	n=$(tshark -r "$all" 2>/dev/null | wc -l)
	echo "capture_vectors: $n frames on the bridge, $total of them in the runs' files"
	[ "$n" -eq "$total" ] || die "$((n - total)) frames on the bridge belong to no run"
}

# describe: README.md, opcodes.tsv and fields.tsv of OUTDIR, from tshark's decoding
describe() {
	local r name cmd f ops kver pkgs
	kver=$(cat "$RXE_OUT/kver")
	pkgs=$(dpkg-query -W -f '${Package} ${Version}, ' ibverbs-utils perftest rdma-core 2>/dev/null \
		| sed 's/, $//') || pkgs="(dpkg-query failed)"
	{
		printf 'file\topcode\tframes\n'
		for r in "${RUNS[@]}"; do
			name=${r%%|*}
			tshark -r "$stage/$name.pcap" -T fields -e infiniband.bth.opcode 2>/dev/null \
				| sort -n | uniq -c | awk -v f="$name.pcap" '{ printf "%s\t%d\t%d\n", f, $2, $1 }'
		done
	} >"$stage/opcodes.tsv"
	{
		local IFS=$'\t'
		printf 'file\tframe\t%s\n' "${FIELDS[*]}"
		unset IFS
		local args=()
		for f in "${FIELDS[@]}"; do args+=(-e "$f"); done
		# $12: the opcode (frame.number, then FIELDS in order)
		for r in "${RUNS[@]}"; do
			name=${r%%|*}
			tshark -r "$stage/$name.pcap" -T fields -E occurrence=f \
				-e frame.number "${args[@]}" 2>/dev/null \
				| awk -F'\t' -v f="$name.pcap" '!seen[$12]++ { print f "\t" $0 }'
		done
	} >"$stage/fields.tsv"
	{
		cat <<-EOF
		# Golden RoCEv2 vectors from Linux Soft-RoCE

		Generated by \`tests/interop/capture_vectors.sh\` (\`make vectors\`); do not edit.
		Real traffic between two instances of Linux Soft-RoCE (\`rdma_rxe\` of kernel $kver),
		each in a QEMU guest, both on one bridge inside a network namespace: server $SRV_IP
		(MAC $SRV_MAC), client $CLI_IP (MAC $CLI_MAC), Ethernet MTU 1500, so path MTU
		1024. Both guests ran the host's stock programs ($pkgs), one
		boot each, every run below in order, the server guest as the server. tcpdump on the
		bridge kept every UDP 4791 frame, full length; a file holds the frames of one run:
		those to its server QP at the server and to its client QP at the client. Every
		frame was built by rxe, on one side or the other.

		| file | run (the client adds the server's address) | QPNs (server, client) | frames | BTH opcodes seen (opcode: frames) |
		|---|---|---|---|---|
		EOF
		for r in "${RUNS[@]}"; do
			name=${r%%|*} cmd=${r#*|}
			ops=$(awk -F'\t' -v f="$name.pcap" '$1 == f { printf "%s0x%02x %s: %d", s, $2, $4, $3; s = ", " }' \
				<(while IFS=$'\t' read -r a o n; do
					[ "$a" = file ] && continue
					printf '%s\t%s\t%s\t%s\n' "$a" "$o" "$n" "${OPNAME[$o]:-?}"
				done <"$stage/opcodes.tsv"))
			# shellcheck disable=SC2016 # markdown's backquotes
			printf '| %s.pcap | `%s` | %s | %d | %s |\n' "$name" "$cmd" "${RUN_QPNS[$name]}" \
				"$(awk -F'\t' -v f="$name.pcap" '$1 == f { n += $3 } END { print n + 0 }' "$stage/opcodes.tsv")" "$ops"
		done
		cat <<-EOF

		\`opcodes.tsv\`: the same counts, one line per file and opcode (decimal), for tests.
		\`fields.tsv\`: the fields \`tshark -T fields\` decodes in the first frame of each opcode in
		each file (one column per tshark field, named in the header; empty = no such header;
		an atomic's VA and R_Key are in the reth columns, as tshark names them), so that
		tests compare their own decoding with an independent one.
		\`tshark -r FILE -V\` shows every field.
		EOF
	} >"$stage/README.md"
}

main() {
	local why all tdlog tpid rc=0 i
	why=$(cannot_run)
	[ -z "$why" ] || { echo "capture_vectors: cannot run: $why" >&2; exit 77; }
	rxe_images
	# everything is written to a stage first and moves into OUTDIR only when complete:
	# a failed capture leaves the vectors there as they were
	mkdir -p "$(dirname "$out")"
	stage=$(mktemp -d "$out.new.XXXXXX")
	on_exit "rm -rf $stage"
	rxe_bridge_up
	rxe_tap_add tap1

	all=$(mktemp /tmp/rxe-vectors.XXXXXX.pcap)
	tdlog=$(mktemp /tmp/rxe-vectors.XXXXXX.log)
	on_exit "rm -f $all $tdlog"
	# -Z root: Debian's tcpdump otherwise drops to user tcpdump and cannot write the file;
	# --immediate-mode: the SIGINT at the end loses nothing buffered
	rxe_bg "$RXE_NS_BR" tpid tcpdump -i br0 -n -s 0 -B 32768 -U --immediate-mode -Z root \
		-w "$all" 'udp port 4791' >/dev/null 2>"$tdlog"
	for ((i = 0; i < 50; i++)); do
		grep -q 'listening on' "$tdlog" && break
		sleep 0.1
	done
	grep -q 'listening on' "$tdlog" || die "tcpdump did not start: $(cat "$tdlog")"

	rxe_guest_as srv "$SRV_IP" "$SRV_MAC" tap0 "$CLI_IP" "$CLI_MAC"
	rxe_guest_start "$(guest_script server)"
	rxe_guest_as cli "$CLI_IP" "$CLI_MAC" tap1 "$SRV_IP" "$SRV_MAC"
	rxe_guest_start "$(guest_script client)"
	SRV_LOG=${RXE_GUESTS[srv]#* } CLI_LOG=${RXE_GUESTS[cli]#* }

	local g t=$((STEP_S * ${#RUNS[@]}))
	for g in srv cli; do
		rxe_guest_use "$g"
		rxe_guest_wait READY 120 || die "guest $g never became READY"
	done
	for g in srv cli; do
		rxe_guest_use "$g"
		rxe_guest_wait EXIT "$t" || die "guest $g did not finish its runs"
		echo "capture_vectors: guest $g: runs exited $(rxe_guest_rc), $(rxe_guest_elapsed)s"
		[ "$(rxe_guest_rc)" = 0 ] || rc=1
	done
	kill -INT "$tpid"
	for ((i = 0; i < 50; i++)); do _rxe_child_alive "$tpid" || break; sleep 0.1; done
	if [ "$rc" != 0 ]; then
		for g in srv cli; do
			echo "--- guest $g console"
			tr -d '\r' <"${RXE_GUESTS[$g]#* }" | sed -n '/^BLUE-GUEST RUN/,$p'
		done
		die "a run failed in a guest (console above)"
	fi
	split_runs "$all"
	describe
	mkdir -p "$out"
	rm -f "$out"/*.pcap "$out"/*.tsv "$out"/README.md
	mv "$stage"/* "$out"/
	echo "capture_vectors: wrote $out ($(du -sh "$out" | cut -f1))"
}

main "$@"
