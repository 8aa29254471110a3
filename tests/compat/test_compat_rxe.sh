# shellcheck shell=bash
# Compatibility matrix against Linux Soft-RoCE: the unmodified Debian binaries
# (ibv_rc_pingpong and perftest's ib_{write,read,send}_{bw,lat}, ib_atomic_{bw,lat}) run
# on blue through the compat library ($B/compat/libibverbs.so.1 on LD_LIBRARY_PATH) in
# the blue-side namespace, and the same binaries on the real rdma-core over rdma_rxe in
# the QEMU guest of tests/interop/guest.sh are the peer. Every tool runs twice: blue as
# the client (the guest serves) and blue as the server (the guest connects).
# Run: B=build-<you> bash tests/lib/runner.sh tests/compat/test_compat_rxe.sh
#
# A step passes when both sides exit 0 and the result is there: perftest's result table
# on the client (and on the server for the tools whose server prints one) with
# #iterations equal to -n; rc_pingpong's two summary lines on both sides. Each run's
# figure (BW average and message rate, t_typical, or usec/iter) goes to the results
# table $B/test-logs/compat-matrix.md (tests/lib/compat.sh), the client's report.
#
# One guest boot serves every step, as in test_rxe_pingpong.sh: the guest command runs
# the steps in order between BLUE-STEP BEGIN/END console markers, and the host starts
# blue's side of each step when it sees BEGIN. Whoever is the client retries a refused
# TCP connect (perftest and rc_pingpong connect once), so neither side has to start
# first. Each step uses its own TCP port, so no step meets the previous one's socket.
# Logs of every step stay in $B/test-logs/compat-rxe/.
#
# test_compat_helpers checks the parsers of tests/lib/compat.sh on real perftest and
# rc_pingpong output (tests/compat/samples/, captured from rxe in the guest).
# shellcheck source=tests/interop/guest.sh
source tests/interop/guest.sh
# shellcheck source=tests/lib/compat.sh
source tests/lib/compat.sh

CM_LIB=$PWD/$B/compat
CM_BLUECTL=$PWD/$B/bin/bluectl
CM_KEEP=$PWD/$B/test-logs/compat-rxe
CM_SAMPLES=$PWD/tests/compat/samples
CM_PORT0=18515
# The guest runs under TCG: small counts. A run takes ~1 s; every run is killed after
# CM_RUN_T s, and a client retries a refused connect CM_TRIES times (~15-25 s), so that a
# step that fails costs well under a minute and the matrix stays inside run.sh's bound.
CM_RUN_T=20
CM_TRIES=100
# steps not begun by then are recorded as not run: run.sh kills the script at 600 s
CM_BUDGET=420

# NAME TOOL BLUE_ROLE ITERS [EXTRA FLAGS]. Atomics have a fixed size of 8 bytes; the
# latency tools keep perftest's default of 2 bytes.
CM_STEPS=()
for _t in "ibv_rc_pingpong 100 -s 4096" \
	"ib_write_bw 200 -s 4096 --report_gbits" "ib_write_lat 100" \
	"ib_read_bw 200 -s 4096 --report_gbits" "ib_read_lat 100" \
	"ib_send_bw 200 -s 4096 --report_gbits" "ib_send_lat 100" \
	"ib_atomic_bw 200 --report_gbits" "ib_atomic_lat 100"; do
	read -r _tool _n _x <<<"$_t"
	CM_STEPS+=("${_tool#ib*_}-bcli $_tool client $_n $_x" "${_tool#ib*_}-bsrv $_tool server $_n $_x")
done
unset _t _tool _n _x

# _cm_args TOOL ITERS PORT GIDX DEV EXTRA: the command-line words common to both sides
_cm_args() {
	case $1 in
	ibv_rc_pingpong)
		echo "-d $5 -g $4 -n $2 -p $3 $6" ;;
	*)
		# -F: no CPU-frequency check (TCG and shared hosts fail it, and it aborts
		# latency runs). Otherwise perftest's defaults: READ and atomic runs ask
		# for the peer's max_qp_rd_atom as their initiator depth (rxe's 128 on
		# blue's side), which the compat library clamps to blue's 16
		echo "-d $5 -x $4 -F -n $2 -p $3 $6" ;;
	esac
}

# The guest command (busybox sh). s NAME ROLE TOOL ARGS...: one run between markers;
# a client whose connect is refused (blue's server not listening yet) is started again.
# The script's status is 1 if any run failed.
_cm_guest_script() {
	local st name tool brole n x port=$CM_PORT0 args
	echo f=0
	rxe_step_fn "timeout $CM_RUN_T" "$CM_TRIES"
	for st in "${CM_STEPS[@]}"; do
		read -r name tool brole n x <<<"$st"
		args=$(_cm_args "$tool" "$n" "$port" "$CM_GUEST_GIDX" rxe0 "$x")
		if [ "$brole" = client ]; then
			echo "s $name server $tool $args"
		else
			echo "s $name client $tool $args $RXE_BLUE_IP"
		fi
		port=$((port + 1))
	done
	# shellcheck disable=SC2016 # $f is the guest's
	echo 'exit $f'
}

# _cm_guest_cmd: the script above, gzipped: the guest gets its command through the kernel
# command line (guest.sh, blue.cmd=BASE64), which holds 2048 bytes on x86, and 18 steps
# spelled out do not fit. eval, not a pipe into sh: the tools keep /init's stdin.
_cm_guest_cmd() {
	echo "eval \"\$(echo $(_cm_guest_script | gzip -9n | base64 -w0) | base64 -d | gunzip)\""
}

# _cm_blue_dev: blue's device name and the index of its IPv4-mapped GID, as the compat
# library reports them to ibv_devinfo -v (CM_BLUE_DEV, CM_BLUE_GIDX). The device named
# after our interface wins; other engineers' devices may be listed too.
_cm_blue_dev() {
	local out=$CM_KEEP/blue-devinfo.txt devs
	rxe_blue "${COMPAT_ENV[@]}" timeout 20 ibv_devinfo -v >"$out" 2>&1 ||
		{ cat "$out"; fail "ibv_devinfo on the compat library failed"; }
	devs=$(sed -nE 's/^hca_id:[[:space:]]+([^[:space:]]+).*/\1/p' "$out")
	if grep -qx "$RXE_BLUE_IF" <<<"$devs"; then
		CM_BLUE_DEV=$RXE_BLUE_IF
	elif [ "$(wc -l <<<"$devs")" = 1 ] && [ -n "$devs" ]; then
		CM_BLUE_DEV=$devs
	else
		cat "$out"; fail "no compat device for $RXE_BLUE_IF (devices: $(tr '\n' ' ' <<<"$devs"))"
	fi
	# COMPAT_BLUE_GIDX=N overrides the lookup, for a library whose ibv_devinfo -v lists no GIDs
	CM_BLUE_GIDX=${COMPAT_BLUE_GIDX:-}
	[ -n "$CM_BLUE_GIDX" ] || CM_BLUE_GIDX=$(awk -v d="$CM_BLUE_DEV" -v ip="::ffff:$RXE_BLUE_IP" '
		/^hca_id:/ { in_dev = ($2 == d) }
		in_dev && $1 ~ /^GID\[/ && $0 ~ ip {
			s = $0; sub(/^.*GID\[ */, "", s); sub(/\].*/, "", s); print s; exit }' "$out")
	[ -n "$CM_BLUE_GIDX" ] || { cat "$out"; fail "$CM_BLUE_DEV: no GID ::ffff:$RXE_BLUE_IP"; }
	echo "blue: device $CM_BLUE_DEV, GID index $CM_BLUE_GIDX (::ffff:$RXE_BLUE_IP)"
}

# _cm_guest_gidx: the guest's RoCEv2 GID for its IPv4 address, from the GID table the
# guest's /init prints before READY ("gid N RoCE v2 ...:ffff:0ac9:4d0a")
_cm_guest_gidx() {
	local hex
	# shellcheck disable=SC2086 # the four octets as four words
	hex=$(printf '%02x%02x:%02x%02x' ${RXE_GUEST_IP//./ })
	tr -d '\r' <"$RXE_LOG" | awk -v h="ffff:$hex" '$1 == "gid" && $3 == "RoCE" &&
		$4 == "v2" && $5 ~ h"$" { print $2; exit }'
}

# _cm_run_step NAME TOOL BLUE_ROLE N EXTRA PORT: blue's side of one step; the guest's
# output (between its markers) goes to $CM_KEEP/NAME.guest, blue's to NAME.blue, blue's
# exit status to CM_BRC
_cm_run_step() {
	local name=$1 tool=$2 brole=$3 n=$4 x=$5 port=$6
	local b=$CM_KEEP/$name.blue args bpid i brc t0
	args=$(_cm_args "$tool" "$n" "$port" "$CM_BLUE_GIDX" "$CM_BLUE_DEV" "$x")
	CM_BRC=255
	rxe_step_wait "$name" BEGIN 60 || { echo "$name: the guest never began it"; return 0; }
	t0=$(date +%s.%N)
	# shellcheck disable=SC2086 # $args: words
	if [ "$brole" = client ]; then
		for ((i = 0; i <= CM_TRIES; i++)); do
			brc=0
			rxe_blue "${COMPAT_ENV[@]}" timeout "$CM_RUN_T" "$tool" $args \
				"$RXE_GUEST_IP" >"$b" 2>&1 || brc=$?
			# only a refused connect is worth another try
			if [ "$brc" = 0 ] || ! grep -q "t connect to" "$b"; then break; fi
			sleep 0.1
		done
		echo "tries=$i" >>"$b"
	else
		rxe_bg "$RXE_NS_BLUE" bpid "${COMPAT_ENV[@]}" \
			timeout "$((CM_RUN_T + 10))" "$tool" $args >"$b" 2>&1
		brc=0
		wait "$bpid" || brc=$?
	fi
	rxe_step_wait "$name" END "$((CM_RUN_T + 20))" ||
		echo "$name: the guest never ended it"
	rxe_step_log "$name" >"$CM_KEEP/$name.guest"
	echo "$name: ran in $(echo "$(date +%s.%N) $t0" | awk '{ printf "%.1f", $1 - $2 }') s"
	CM_BRC=$brc
}

# _cm_remote_gid LOG TOOL IP: LOG shows IP's IPv4-mapped GID as the remote GID:
# rc_pingpong "  remote address: LID ..., GID ::ffff:A.B.C.D"; perftest a " GID:" line of
# 16 decimal bytes (%02d) after " remote address:"
_cm_remote_gid() {
	local log=$1 tool=$2 ip=$3
	# shellcheck disable=SC2086 # ${ip//./ }: the four octets as four words
	if [ "$tool" = ibv_rc_pingpong ]; then
		tr -d '\r' <"$log" | grep -qE "^  remote address: .*, GID ::ffff:${ip//./\\.}\$"
	else
		# perftest prints each byte as %02d
		tr -d '\r' <"$log" | awk -v want="00:00:00:00:00:00:00:00:00:00:255:255:$(printf '%02d:%02d:%02d:%02d' ${ip//./ })" '
			/^ remote address:/ { r = 1; next }
			r && /^ GID:/ { ok = ($2 == want); exit }
			END { exit !ok }'
	fi
}

# _cm_check_step NAME TOOL BLUE_ROLE N EXTRA BLUE_RC: the verdict of one step, in a
# subshell under `||` (set -e is off there: every check fails explicitly). Prints the
# client's figure on its last line as "figure: ...".
_cm_check_step() {
	local name=$1 tool=$2 brole=$3 n=$4 x=$5 brc=$6
	local g=$CM_KEEP/$name.guest b=$CM_KEEP/$name.blue grc cli srv size
	echo "--- $name: guest $tool ($([ "$brole" = client ] && echo server || echo client)):"
	cat "$g"
	echo "--- $name: blue $tool ($brole):"
	cat "$b"
	if [ "$brole" = client ]; then cli=$b srv=$g; else cli=$g srv=$b; fi
	grc=$(rxe_step_rc "$g" "$name")
	[ "$grc" = 0 ] || fail "$name: the guest's $tool exited ${grc:-? (no END marker)}"
	[ "$brc" = 0 ] || fail "$name: blue's $tool exited $brc"
	# each side connected to the other, not to itself or a stray peer: the remote GID it
	# prints is the other side's IPv4-mapped GID
	_cm_remote_gid "$b" "$tool" "$RXE_GUEST_IP" || fail "$name: blue's peer is not $RXE_GUEST_IP"
	_cm_remote_gid "$g" "$tool" "$RXE_BLUE_IP" || fail "$name: the guest's peer is not $RXE_BLUE_IP"
	# perftest asked blue's QP for rxe's depth of 128 at RTS, and the library said it
	# used less. A BW server stays in RTR (perftest moves it no further): no notice
	case $brole:$tool in
	client:ib_read_*|client:ib_atomic_*|server:ib_read_lat|server:ib_atomic_lat)
		grep -qE "max_rd_atomic 128 is more than the device allows; using [0-9]+" "$b" ||
			fail "$name: no clamp notice for rxe's initiator depth of 128 in blue's log" ;;
	esac
	if [ "$tool" = ibv_rc_pingpong ]; then
		size=$(sed -nE 's/.*-s ([0-9]+).*/\1/p' <<<"$x")
		compat_pingpong_check "$cli" "$n" "${size:-4096}" || fail "$name: client summary"
		compat_pingpong_check "$srv" "$n" "${size:-4096}" || fail "$name: server summary"
		echo "figure: $(compat_pingpong_figure "$cli")"
	else
		compat_perftest_check "$cli" "$n" || fail "$name: client result table"
		if compat_srv_prints_table "$tool"; then
			compat_perftest_check "$srv" "$n" || fail "$name: server result table"
		fi
		echo "figure: $(compat_perftest_figure "$cli")"
	fi
}

test_compat_helpers() {
	local s=$CM_SAMPLES f
	# BW with --report_gbits (client, and send_bw's server which measures itself)
	compat_perftest_check "$s/write_bw-client-gbits.txt" 100 || fail "write_bw sample rejected"
	[ "$(compat_perftest_figure "$s/write_bw-client-gbits.txt")" = "0.24 Gb/s, 0.007179 Mpps" ] ||
		fail "write_bw figure: $(compat_perftest_figure "$s/write_bw-client-gbits.txt")"
	[ "$(compat_perftest_figure "$s/send_bw-server.txt")" = "0.11 Gb/s, 0.003213 Mpps" ] ||
		fail "send_bw figure: $(compat_perftest_figure "$s/send_bw-server.txt")"
	[ "$(compat_perftest_figure "$s/atomic_bw-server.txt")" = "0.000943 Gb/s, 0.014741 Mpps" ] ||
		fail "atomic_bw figure: $(compat_perftest_figure "$s/atomic_bw-server.txt")"
	# BW in perftest's default MB/sec, and a run of 50 iterations where 100 were asked
	[ "$(compat_perftest_figure "$s/write_bw-client-mbytes.txt")" = "47.15 MB/s, 0.000754 Mpps" ] ||
		fail "MB/sec figure: $(compat_perftest_figure "$s/write_bw-client-mbytes.txt")"
	compat_perftest_check "$s/write_bw-client-mbytes.txt" 50 || fail "50-iteration sample rejected"
	! compat_perftest_check "$s/write_bw-client-mbytes.txt" 100 2>/dev/null ||
		fail "a 50-iteration table passed as 100"
	# latency tables; read_lat's server prints none
	[ "$(compat_perftest_figure "$s/atomic_lat-client.txt")" = "t_typical 21.94 us" ] ||
		fail "atomic_lat figure: $(compat_perftest_figure "$s/atomic_lat-client.txt")"
	[ "$(compat_perftest_figure "$s/write_lat-server.txt")" = "t_typical 4042.37 us" ] ||
		fail "write_lat figure: $(compat_perftest_figure "$s/write_lat-server.txt")"
	compat_perftest_check "$s/write_lat-server.txt" 100 || fail "write_lat sample rejected"
	! compat_perftest_check "$s/read_lat-server.txt" 100 2>/dev/null ||
		fail "read_lat's server output has no table but passed"
	[ -z "$(compat_perftest_figure "$s/read_lat-server.txt")" ] || fail "figure from no table"
	# a table cut after its header (a run that died) fails
	f=$(mktemp); on_exit "rm -f $f"
	grep -v '^ 4096 ' "$s/write_bw-client-gbits.txt" >"$f"
	! compat_perftest_check "$f" 100 2>/dev/null || fail "a header without rows passed"
	# rc_pingpong
	compat_pingpong_check "$s/rc_pingpong-client.txt" 100 4096 || fail "rc_pingpong sample rejected"
	! compat_pingpong_check "$s/rc_pingpong-client.txt" 100 64 2>/dev/null ||
		fail "rc_pingpong summary of 4096 bytes passed as 64"
	! compat_pingpong_check "$s/rc_pingpong-client.txt" 99 4096 2>/dev/null ||
		fail "rc_pingpong summary of 100 iters passed as 99"
	[ "$(compat_pingpong_figure "$s/rc_pingpong-client.txt")" = "8027.18 us/iter, 8.16 Mbit/s" ] ||
		fail "rc_pingpong figure: $(compat_pingpong_figure "$s/rc_pingpong-client.txt")"
	# the results table: a reset drops only its peer's rows
	COMPAT_RESULTS=$(mktemp -u /tmp/compat-matrix.XXXXXX.md)
	on_exit "rm -f $COMPAT_RESULTS"
	compat_record ib_write_bw client rxe pass "1 Gb/s"
	compat_record ib_write_bw client blue pass "2 Gb/s"
	compat_record ib_read_lat server rxe FAIL ""
	compat_record_reset rxe
	compat_record ib_send_bw server rxe pass "3 Gb/s"
	cat "$COMPAT_RESULTS"
	[ "$(wc -l <"$COMPAT_RESULTS")" = 4 ] || fail "results table: $(wc -l <"$COMPAT_RESULTS") lines, want 4"
	grep -qx '| ib_write_bw | client | blue | pass | 2 Gb/s |' "$COMPAT_RESULTS" || fail "blue row lost"
	grep -qx '| ib_send_bw | server | rxe | pass | 3 Gb/s |' "$COMPAT_RESULTS" || fail "new rxe row missing"
	! grep -q '1 Gb/s\|ib_read_lat' "$COMPAT_RESULTS" || fail "old rxe rows survived the reset"
}

test_compat_rxe_matrix() {
	local why st name tool brole n x port=$CM_PORT0 failed=() out fig lib t_end
	why=$(rxe_missing)
	[ -z "$why" ] || skip "$why"
	[ -e "$CM_LIB/libibverbs.so.1" ] || fail "$CM_LIB/libibverbs.so.1 not built (make B=$B compat)"
	[ -x "$CM_BLUECTL" ] || fail "$CM_BLUECTL not built"
	for tool in ibv_rc_pingpong ibv_devinfo ib_write_bw ib_write_lat ib_read_bw ib_read_lat \
		ib_send_bw ib_send_lat ib_atomic_bw ib_atomic_lat; do
		command -v "$tool" >/dev/null || fail "$tool not installed (ibverbs-utils, perftest)"
	done
	compat_env "$CM_LIB"
	# the binaries are the distribution's: they must load our library, not rdma-core's
	lib=$(LD_LIBRARY_PATH="$CM_LIB" ldd "$(command -v ib_write_bw)" | awk '$1 == "libibverbs.so.1" { print $3 }')
	[ "$lib" -ef "$CM_LIB/libibverbs.so.1" ] || fail "ib_write_bw loads $lib, not $CM_LIB/libibverbs.so.1"
	rxe_images || {
		[ $? -eq 2 ] && skip "guest image inputs missing; run scripts/deps.sh"
		fail "initramfs build failed (see above)"
	}
	rxe_blue_up "cmx$BASHPID" "$CM_BLUECTL"
	mkdir -p "$CM_KEEP"
	rm -f "$CM_KEEP"/*.guest "$CM_KEEP"/*.blue "$CM_KEEP/console.log"
	_cm_blue_dev

	# rxe's GID table is fixed by the guest's /init (the address before rdma link add):
	# index 1 is the IPv4-mapped RoCEv2 GID; the console's table must say so
	CM_GUEST_GIDX=1
	rxe_guest_start "$(_cm_guest_cmd)"
	on_exit "tr -d '\r' <\"\$RXE_LOG\" >$CM_KEEP/console.log 2>/dev/null"
	rxe_guest_wait READY 60 || fail "guest never became READY"
	echo "boot: READY $(rxe_guest_elapsed) s after QEMU start"
	[ "$(_cm_guest_gidx)" = "$CM_GUEST_GIDX" ] ||
		fail "rxe0's RoCEv2 GID for $RXE_GUEST_IP is at index '$(_cm_guest_gidx)', not $CM_GUEST_GIDX"

	compat_record_reset rxe
	t_end=$(($(date +%s) + CM_BUDGET))
	for st in "${CM_STEPS[@]}"; do
		read -r name tool brole n x <<<"$st"
		port=$((port + 1))
		if [ "$(date +%s)" -ge "$t_end" ]; then
			compat_record "$tool" "$brole" rxe FAIL "not run: the matrix took over ${CM_BUDGET} s"
			failed+=("$name")
			continue
		fi
		_cm_run_step "$name" "$tool" "$brole" "$n" "$x" "$((port - 1))"
		# shellcheck disable=SC2030,SC2031 # the subshell only reads
		if out=$(_cm_check_step "$name" "$tool" "$brole" "$n" "$x" "$CM_BRC" 2>&1); then
			fig=$(sed -n 's/^figure: //p' <<<"$out" | tail -1)
			compat_record "$tool" "$brole" rxe pass "$fig"
			echo "$name: pass ($fig)"
		else
			echo "$out"
			compat_record "$tool" "$brole" rxe FAIL "$(grep '^failure:' <<<"$out" | tail -1 | sed 's/^failure: //')"
			failed+=("$name")
		fi
	done
	echo "--- results ($COMPAT_RESULTS)"
	cat "$COMPAT_RESULTS"
	[ ${#failed[@]} -eq 0 ] || fail "steps failed: ${failed[*]}"
	rxe_guest_wait EXIT 30 || fail "the guest script did not finish"
	echo "guest: script exited $(rxe_guest_rc), $(rxe_guest_elapsed) s after QEMU start"
	[ "$(rxe_guest_rc)" = 0 ] || fail "the guest script exited $(rxe_guest_rc)"
}
