# shellcheck shell=bash
# Compatibility matrix against Linux Soft-RoCE: the unmodified Debian binaries
# (ibv_rc_pingpong and perftest's ib_{write,read,send}_{bw,lat}, ib_atomic_{bw,lat} over
# RC; ibv_ud_pingpong and ib_send_{bw,lat} -c UD over UD; ibv_srq_pingpong's RC QPs on an
# SRQ) run
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
# Blue's side of a step is guest.sh's rxe_run_step, as in test_rdmacm_rxe.sh. Logs of
# every step stay in $B/test-logs/compat-rxe/ (NAME.blue, NAME.tries, NAME.guest).
#
# test_compat_rxe_matrix gives the RC steps' verdict; test_compat_rxe_ud and
# test_compat_rxe_srq, which run after it, give the UD and SRQ steps' from the verdicts
# file it leaves ($CM_KEEP/verdicts), and skip (saying why) while libblue has no UD or SRQ.
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

# NAME GROUP TOOL BLUE_ROLE ITERS [EXTRA FLAGS]. Atomics have a fixed size of 8 bytes; the
# latency tools keep perftest's default of 2 bytes. GROUP is the test function that gives
# the step's verdict: rc (test_compat_rxe_matrix), ud (test_compat_rxe_ud), srq
# (test_compat_rxe_srq). A UD message is at most the path MTU (1024 on both sides), and
# ibv_ud_pingpong refuses a larger -s; ibv_srq_pingpong keeps its 16 RC QPs on one SRQ.
# Issue 15: uc (test_compat_rxe_uc: ibv_uc_pingpong, ib_write_bw -c UC), mw
# (test_compat_rxe_mw: tests/interop/mw_probe.c; blue as the server is the window side, as
# the client the writer), ip6 (test_compat_rxe_ip6: RC over both sides' IPv6 GIDs; the
# TCP exchange stays on IPv4).
CM_STEPS=()
for _t in "rc rc_pingpong ibv_rc_pingpong 100 -s 4096" \
	"rc write_bw ib_write_bw 200 -s 4096 --report_gbits" "rc write_lat ib_write_lat 100" \
	"rc read_bw ib_read_bw 200 -s 4096 --report_gbits" "rc read_lat ib_read_lat 100" \
	"rc send_bw ib_send_bw 200 -s 4096 --report_gbits" "rc send_lat ib_send_lat 100" \
	"rc atomic_bw ib_atomic_bw 200 --report_gbits" "rc atomic_lat ib_atomic_lat 100" \
	"ud ud_pingpong ibv_ud_pingpong 100 -s 1024" \
	"ud send_bw_ud ib_send_bw 200 -c UD -s 1024 --report_gbits" \
	"ud send_lat_ud ib_send_lat 100 -c UD" \
	"ud ud_probe ud_probe 1" \
	"srq srq_pingpong ibv_srq_pingpong 100 -s 4096" \
	"uc uc_pingpong ibv_uc_pingpong 100 -s 4096" \
	"uc write_bw_uc ib_write_bw 200 -c UC -s 4096 --report_gbits" \
	"mw mw_probe mw_probe 1" \
	"ip6 rc_pingpong6 ibv_rc_pingpong 100 -s 4096" \
	"ip6 write_bw6 ib_write_bw 200 -s 4096 --report_gbits"; do
	read -r _g _name _tool _n _x <<<"$_t"
	CM_STEPS+=("$_name-bcli $_g $_tool client $_n $_x" "$_name-bsrv $_g $_tool server $_n $_x")
done
unset _t _g _name _tool _n _x

# _cm_group_missing GROUP: why blue cannot run GROUP's steps yet (empty = it can). UD and
# SRQ came in issue 14 on their own branches: until libblue exports their calls, the steps
# are not run, and their test functions skip saying so. The built library is asked, not
# the source, so that a stale build does not pass for a new one.
_cm_group_missing() {
	local so=$PWD/$B/lib/libblue.so sym
	# CM_RUN_ALL=1 runs them anyway (to see how they fail)
	[ "${CM_RUN_ALL:-0}" = 0 ] || return 0
	case $1 in
	ud) sym=blue_create_ah ;;
	srq) sym=blue_create_srq ;;
	uc | mw | ip6)
		# asked of blue's device itself by _cm_blue_caps, once blue is up
		if [ -f "$CM_KEEP/caps" ]; then
			awk -v g="$1" '$1 == g { sub(/^[^ ]+ /, ""); print; exit }' "$CM_KEEP/caps"
		else
			echo "blue's device was not probed for ${1^^} (test_compat_rxe_matrix did not get that far)"
		fi
		return 0 ;;
	*) return 0 ;;
	esac
	# nm names a versioned symbol NAME@@VERSION
	nm -D --defined-only "$so" 2>/dev/null | awk '{ sub(/@.*/, "", $NF); print $NF }' | grep -qx "$sym" ||
		echo "$so exports no $sym: libblue has no ${1^^} yet"
}

# _cm_host_bin TOOL: the program blue's side runs (the probes are ours, built with the image)
_cm_host_bin() {
	case $1 in
	ud_probe | mw_probe) echo "$RXE_OUT/$1" ;;
	*) echo "$1" ;;
	esac
}

# _cm_row_tool TOOL EXTRA [GROUP]: the tool column of the results table (the transport
# when not RC, the network when IPv6)
_cm_row_tool() {
	local t=$1
	case " $2 " in
	*" -c UD "*) t="$1 -c UD" ;;
	*" -c UC "*) t="$1 -c UC" ;;
	esac
	[ "${3:-}" != ip6 ] || t="$t (IPv6 GIDs)"
	echo "$t"
}

# _cm_gidx blue|guest GROUP: the GID index a step of GROUP uses on that side (the IPv6
# GID for ip6, the IPv4-mapped one otherwise)
_cm_gidx() {
	case $1:$2 in
	blue:ip6) echo "$CM_BLUE_GIDX6" ;;
	blue:*) echo "$CM_BLUE_GIDX" ;;
	guest:ip6) echo "$CM_GUEST_GIDX6" ;;
	*) echo "$CM_GUEST_GIDX" ;;
	esac
}

# _cm_peer_addr blue|guest GROUP: the address that side's GID carries in GROUP's steps
_cm_peer_addr() {
	case $1:$2 in
	blue:ip6) echo "$RXE_BLUE_IP6" ;;
	blue:*) echo "$RXE_BLUE_IP" ;;
	guest:ip6) echo "$RXE_GUEST_IP6" ;;
	*) echo "$RXE_GUEST_IP" ;;
	esac
}

# _cm_args TOOL ITERS PORT GIDX DEV EXTRA: the command-line words common to both sides
_cm_args() {
	case $1 in
	ibv_*_pingpong)
		echo "-d $5 -g $4 -n $2 -p $3 $6" ;;
	ud_probe | mw_probe)
		echo "-d $5 -g $4 -p $3" ;;
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
	local st name group tool brole n x port=$((CM_PORT0 - 1)) args
	echo f=0
	rxe_step_fn "timeout $CM_RUN_T" "$CM_TRIES"
	_cm_guest_probe_ref_fn
	for st in "${CM_STEPS[@]}"; do
		read -r name group tool brole n x <<<"$st"
		port=$((port + 1))
		# rxe to itself first: the reference the probe steps are compared with. The
		# memory-window one runs even when blue cannot (test_compat_rxe_mw checks the
		# probe on it then)
		[ "$name" = mw_probe-bcli ] && echo "pref mw_ref mw_probe $((CM_PORT0 + 101)) $RXE_GUEST_IP"
		[ "$name" = rc_pingpong6-bcli ] && _cm_ip6_ref_guest
		[ -z "$(_cm_group_missing "$group")" ] || continue
		[ "$name" = ud_probe-bcli ] && echo "pref ud_ref ud_probe $((CM_PORT0 + 100)) $RXE_GUEST_IP"
		args=$(_cm_args "$tool" "$n" "$port" "$(_cm_gidx guest "$group")" rxe0 "$x")
		if [ "$brole" = client ]; then
			echo "s $name server $tool $args"
		else
			echo "s $name client $tool $args $RXE_BLUE_IP"
		fi
	done
	# shellcheck disable=SC2016 # $f is the guest's
	echo 'exit $f'
}

# _cm_ip6_ref_guest: the guest's lines of the ip6_ref step: rxe's RoCEv2-over-IPv6 frames
# for the wire check (test_compat_rxe_rc_ip6), with or without blue's IPv6. rxe's
# ibv_rc_pingpong connects to a stand-in on blue's side (pp_exch.py --serve, no verbs) and
# sends its first SEND to blue's IPv6 GID, where nothing answers: it retries and fails,
# which is expected (its status is not the step's verdict; f stays as it is)
_cm_ip6_ref_guest() {
	# shellcheck disable=SC2016 # $? is the guest's
	# rxe resends for as long as it runs (~10 frames a second): 4 s of it, one packet each
	echo "echo 'BLUE-STEP BEGIN ip6_ref'; i=0; while :; do timeout 4 ibv_rc_pingpong -d rxe0" \
		"-g $CM_GUEST_GIDX6 -n 1 -s 1024 -p $((CM_PORT0 + 102)) $RXE_BLUE_IP >/tmp/o 2>&1; c=\$?;" \
		"[ \$c != 0 ] && [ \$i -lt $CM_TRIES ] && grep -q 't connect to' /tmp/o || break;" \
		"i=\$((i + 1)); sleep 0.1; done; cat /tmp/o; echo \"BLUE-STEP END ip6_ref rc=\$c tries=\$i\""
}

# _cm_ip6_ref_host: blue's side of ip6_ref (the stand-in), its log in $CM_KEEP/ip6_ref.blue
_cm_ip6_ref_host() {
	local ref_pid
	rxe_step_wait ip6_ref BEGIN 60 || { echo "ip6_ref: the guest never began it"; return 0; }
	rxe_bg "$RXE_NS_BLUE" ref_pid timeout "$((CM_RUN_T + 10))" python3 "$RXE_ROOT/tests/interop/pp_exch.py" \
		--serve --port "$((CM_PORT0 + 102))" --timeout "$CM_RUN_T" - "$RXE_BLUE_IP6" >"$CM_KEEP/ip6_ref.blue" 2>&1
	wait "$ref_pid" || echo "ip6_ref: the stand-in exited $? (see $CM_KEEP/ip6_ref.blue)"
	rxe_step_wait ip6_ref END "$((CM_RUN_T + 20))" || echo "ip6_ref: the guest never ended it"
	rxe_step_log ip6_ref >"$CM_KEEP/ip6_ref.guest"
}

# _cm_guest_probe_ref_fn: the guest's function `pref NAME PROBE PORT IP`: PROBE between
# rxe0 and itself, a server in the background and a client (retried while its connect is
# refused), between "BLUE-STEP BEGIN/END NAME" markers; the client's report after "---
# ref client", the server's after "--- ref server"
_cm_guest_probe_ref_fn() {
	cat <<EOF
pref() {
echo "BLUE-STEP BEGIN \$1"
timeout $CM_RUN_T \$2 -d rxe0 -g $CM_GUEST_GIDX -p \$3 >/tmp/ps 2>&1 & sp=\$!
n=0
while :; do
timeout $CM_RUN_T \$2 -d rxe0 -g $CM_GUEST_GIDX -p \$3 \$4 >/tmp/pc 2>&1; c=\$?
[ \$c != 0 ] && [ \$n -lt $CM_TRIES ] && grep -q "t connect to" /tmp/pc || break
n=\$((n + 1)); sleep 0.1
done
wait \$sp; d=\$?
echo "--- ref client rc=\$c"; cat /tmp/pc; echo "--- ref server rc=\$d"; cat /tmp/ps
[ \$c = 0 ] && [ \$d = 0 ]; c=\$?
echo "BLUE-STEP END \$1 rc=\$c tries=\$n"; [ \$c = 0 ] || f=1
}
EOF
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
	# ibv_devinfo prints a RoCE v2 GID with inet_ntop and a RoCE v1 one as eight groups
	# of four hex digits: either form is the address
	CM_BLUE_GIDX6=$(awk -v d="$CM_BLUE_DEV" -v ip="$RXE_BLUE_IP6," -v full="$(_cm_ip6_full "$RXE_BLUE_IP6")," '
		/^hca_id:/ { in_dev = ($2 == d) }
		in_dev && $1 ~ /^GID\[/ {
			for (i = 2; i <= NF; i++) if ($i == ip || $i == full) {
				s = $0; sub(/^.*GID\[ */, "", s); sub(/\].*/, "", s); print s; exit } }' "$out")
	echo "blue: IPv6 GID index ${CM_BLUE_GIDX6:-none} ($RXE_BLUE_IP6)"
}

# _cm_blue_caps: what blue's device can do of issue 15's groups, asked of the built
# library (mw_probe -C creates a UC QP / allocates a type 2 window; ibv_devinfo lists the
# IPv6 GID), into $CM_KEEP/caps: one "GROUP why-not" line per group it cannot run
_cm_blue_caps() {
	local caps=$CM_KEEP/caps what out
	: >"$caps"
	for what in uc mw; do
		# its own last line says why (libblue's notice before it says the same)
		out=$(rxe_blue "${COMPAT_ENV[@]}" timeout 20 "$RXE_OUT/mw_probe" -d "$CM_BLUE_DEV" -C $what 2>&1) ||
			echo "$what $(tail -1 <<<"$out" | tr '|' '/')" >>"$caps"
	done
	[ -n "$CM_BLUE_GIDX6" ] ||
		echo "ip6 $CM_BLUE_DEV lists no GID for $RXE_BLUE_IP6 (ibv_devinfo -v): blue has no IPv6 GIDs yet" >>"$caps"
	echo "blue's capabilities for uc, mw, ip6: $( [ -s "$caps" ] && tr '\n' ';' <"$caps" || echo all present)"
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

# _cm_ip6_full ADDR: the IPv6 address as sysfs and ibv_devinfo print GIDs (fd00:00c9:...)
_cm_ip6_full() {
	python3 -c 'import ipaddress, sys; print(ipaddress.ip_address(sys.argv[1]).exploded)' "$1"
}

# _cm_guest_gidx6: the guest's RoCEv2 GID for its IPv6 address, from the same table
_cm_guest_gidx6() {
	tr -d '\r' <"$RXE_LOG" | awk -v h="$(_cm_ip6_full "$RXE_GUEST_IP6")" '$1 == "gid" && $3 == "RoCE" && $4 == "v2" && $5 == h { print $2; exit }'
}

# _cm_run_step NAME TOOL BLUE_ROLE N EXTRA PORT GROUP: blue's side of one step
# (rxe_run_step): blue's output in $CM_KEEP/NAME.blue, the guest's (between its markers)
# in NAME.guest, blue's exit status in RXE_BRC. Blue's server outlives the guest's
# client's tries by 10 s.
_cm_run_step() {
	local name=$1 tool=$2 brole=$3 n=$4 x=$5 port=$6 group=$7 args bin
	args=$(_cm_args "$tool" "$n" "$port" "$(_cm_gidx blue "$group")" "$CM_BLUE_DEV" "$x")
	bin=$(_cm_host_bin "$tool")
	# shellcheck disable=SC2086 # $args: words
	if [ "$brole" = client ]; then
		rxe_run_step "$name" client "$CM_KEEP" 60 "$((CM_RUN_T + 20))" : _cm_again \
			"${COMPAT_ENV[@]}" timeout "$CM_RUN_T" "$bin" $args "$RXE_GUEST_IP"
	else
		rxe_run_step "$name" server "$CM_KEEP" 60 "$((CM_RUN_T + 20))" : _cm_again \
			"${COMPAT_ENV[@]}" timeout "$((CM_RUN_T + 10))" "$bin" $args
	fi
}

# _cm_again NAME LOG TRY: blue's client is run again only after a refused connect (the
# guest's server not listening yet), CM_TRIES times at most
_cm_again() {
	[ "$3" -lt "$CM_TRIES" ] && grep -q "t connect to" "$2" && sleep 0.1
}

# _cm_remote_gid LOG TOOL IP: LOG shows IP's GID as the remote GID (IPv4-mapped for an
# IPv4 address): the pingpongs (rc, ud, srq, uc) "  remote address: LID ..., GID
# ::ffff:A.B.C.D" (or the IPv6 address, both as inet_ntop writes them); perftest a " GID:"
# line of 16 decimal bytes (%02d) after " remote address:"
_cm_remote_gid() {
	local log=$1 tool=$2 ip=$3 gid bytes
	if [[ $ip == *:* ]]; then gid=$ip; else gid=::ffff:$ip; fi
	if [[ $tool == ibv_*_pingpong ]]; then
		tr -d '\r' <"$log" | awk -v g=", GID $gid" 'index($0, "  remote address: ") == 1 &&
			substr($0, length($0) - length(g) + 1) == g { f = 1 } END { exit !f }'
	else
		bytes=$(python3 -c 'import ipaddress, sys; print(":".join("%02d" % b for b in ipaddress.ip_address(sys.argv[1]).packed))' "$gid")
		# perftest prints each byte as %02d
		tr -d '\r' <"$log" | awk -v want="$bytes" '
			/^ remote address:/ { r = 1; next }
			r && /^ GID:/ { ok = ($2 == want); exit }
			END { exit !ok }'
	fi
}

# _cm_first_error LOG: the first line of LOG that says what went wrong (libblue's own
# notices first, then the tool's), for the results table
_cm_first_error() {
	local l
	l=$(tr -d '\r' <"$1" | grep -m1 -E '^libblue: .*(not supported|fail|error|invalid|refus)' ||
		tr -d '\r' <"$1" | grep -m1 -iE "couldn.t|failed|unable|error|not supported|timed out") || true
	echo "${l:-no error message}" | tr '|' '/'
}

# _cm_check_step NAME TOOL BLUE_ROLE N EXTRA BLUE_RC GROUP: the verdict of one step, in a
# subshell under `||` (set -e is off there: every check fails explicitly). Prints the
# client's figure on its last line as "figure: ...".
_cm_check_step() {
	local name=$1 tool=$2 brole=$3 n=$4 x=$5 brc=$6 group=$7
	local g=$CM_KEEP/$name.guest b=$CM_KEEP/$name.blue grc cli srv size gpeer bpeer
	echo "--- $name: guest $tool ($([ "$brole" = client ] && echo server || echo client)):"
	cat "$g"
	echo "--- $name: blue $tool ($brole):"
	cat "$b"
	if [ "$brole" = client ]; then cli=$b srv=$g; else cli=$g srv=$b; fi
	grc=$(rxe_step_rc "$g" "$name")
	# blue's side first: when both failed, blue's own words are the likelier cause
	[ "$brc" = 0 ] || fail "$name: blue's $tool exited $brc (guest: ${grc:-no END marker}): $(_cm_first_error "$b")"
	[ "$grc" = 0 ] || fail "$name: the guest's $tool exited ${grc:-? (no END marker)}: $(_cm_first_error "$g")"
	if [ "$tool" = ud_probe ]; then
		_cm_probe_check "$name" "$cli" "$srv"
		return
	fi
	if [ "$tool" = mw_probe ]; then
		_cm_mw_check "$name" "$brole" "$cli" "$srv"
		return
	fi
	# each side connected to the other, not to itself or a stray peer: the remote GID it
	# prints is the other side's GID (IPv4-mapped; its IPv6 one in the ip6 steps)
	gpeer=$(_cm_peer_addr guest "$group") bpeer=$(_cm_peer_addr blue "$group")
	_cm_remote_gid "$b" "$tool" "$gpeer" || fail "$name: blue's peer is not $gpeer"
	_cm_remote_gid "$g" "$tool" "$bpeer" || fail "$name: the guest's peer is not $bpeer"
	# perftest asked blue's QP for rxe's depth of 128 at RTS, and the library said it
	# used less. A BW server stays in RTR (perftest moves it no further): no notice
	case $brole:$tool in
	client:ib_read_*|client:ib_atomic_*|server:ib_read_lat|server:ib_atomic_lat)
		grep -qE "max_rd_atomic 128 is more than the device allows; using [0-9]+" "$b" ||
			fail "$name: no clamp notice for rxe's initiator depth of 128 in blue's log" ;;
	esac
	# ibv_srq_pingpong connects each of its 16 QPs (-q's default) to one of the peer's
	if [ "$tool" = ibv_srq_pingpong ]; then
		[ "$(compat_pingpong_remotes "$b")" = 16 ] || fail "$name: blue lists $(compat_pingpong_remotes "$b") remote QPs, want 16"
		[ "$(compat_pingpong_remotes "$g")" = 16 ] || fail "$name: the guest lists $(compat_pingpong_remotes "$g") remote QPs, want 16"
	fi
	# perftest ran the transport asked for, on both sides (it prints its connection type)
	local c
	for c in UD UC; do
		[[ " $x " == *" -c $c "* ]] || continue
		compat_perftest_conn "$b" $c || fail "$name: blue's $tool did not run $c"
		compat_perftest_conn "$g" $c || fail "$name: the guest's $tool did not run $c"
	done
	if [[ $tool == ibv_*_pingpong ]]; then
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

# _cm_probe_part LOG client|server: the "rx.*" lines of one side of the rxe-to-rxe
# reference (the ud_ref step in LOG); with LOG a ud_probe run's own output and no
# second word, its "rx.*" lines
_cm_probe_part() {
	tr -d '\r' <"$1" | awk -v part="${2:-}" '
		part == "" && /^rx\./ { print; next }
		/^--- ref / { in_part = ($3 == part) ; next }
		/^BLUE-STEP END/ { in_part = 0 }
		part != "" && in_part && /^rx\./ { print }'
}

# _cm_probe_diff REF HERE: the fields whose values differ, one "NAME: rxe X, here Y" line
# each (a field missing on one side shows as "-")
_cm_probe_diff() {
	awk -F= 'NR == FNR { r[$1] = $2; next } { h[$1] = $2 }
		END {
			for (k in r) if (!(k in h) || h[k] != r[k]) printf "%s: rxe %s, here %s\n", k, r[k], (k in h) ? h[k] : "-"
			for (k in h) if (!(k in r)) printf "%s: rxe -, here %s\n", k, h[k]
		}' "$1" "$2" | sort
}

# _cm_probe_check NAME CLIENT_LOG SERVER_LOG: what each side of the ud_probe step received
# (the server: the client's message sent with ibv_create_ah; the client: the answer sent
# with ibv_create_ah_from_wc) is field for field what rxe receives from rxe in the same
# exchange (the ud_ref step before it). One of the two receivers is blue, so a difference
# names blue's receive side (wc, GRH) or its send side (what rxe saw of blue's frame).
_cm_probe_check() {
	local name=$1 cli=$2 srv=$3 ref=$CM_KEEP/ud_ref.guest side d out=""
	rxe_step_log ud_ref >"$ref"
	[ "$(rxe_step_rc "$ref" ud_ref)" = 0 ] || fail "$name: the rxe-to-rxe reference (ud_ref) failed: $(cat "$ref")"
	for side in client server; do
		local log=$cli
		[ $side = server ] && log=$srv
		_cm_probe_part "$ref" $side >"$CM_KEEP/ud_ref.$side.rx"
		_cm_probe_part "$log" >"$CM_KEEP/$name.$side.rx"
		[ -s "$CM_KEEP/ud_ref.$side.rx" ] || fail "$name: the reference's $side printed no rx.* lines"
		[ -s "$CM_KEEP/$name.$side.rx" ] || fail "$name: the $side printed no rx.* lines"
		d=$(_cm_probe_diff "$CM_KEEP/ud_ref.$side.rx" "$CM_KEEP/$name.$side.rx")
		[ -z "$d" ] || out+="$side received: $(tr '\n' ';' <<<"$d") "
	done
	[ -z "$out" ] || fail "$name: not as rxe: $out"
	echo "figure: wc and GRH as rxe's ($(wc -l <"$CM_KEEP/ud_ref.server.rx") fields each way)"
}

# What each side of mw_probe must have printed (tests/interop/mw_probe.c): the window side
# saw the writer's bytes land in the window and nothing after each invalidation; the
# writer's WRITE after each invalidation was NAKed
CM_MW_WINDOW="mw.r0.bind=ok mw.r0.write=ok mw.r0.inv=local mw.r0.after=untouched
mw.r1.bind=ok mw.r1.write=ok mw.r1.recv_opcode=recv mw.r1.invalidated_rkey=window
mw.r1.inv=remote mw.r1.after=untouched"
CM_MW_WRITER="mw.r0.write=ok mw.r0.after=rem_access_err mw.r1.write=ok mw.r1.send_inv=ok
mw.r1.after=rem_access_err"

# _cm_mw_lines LOG WINDOW|WRITER SIDE: the expected lines missing from LOG, or a
# with_inv line that SIDE (blue, rxe) may not print; empty when all is there. blue must
# flag the invalidation as libibverbs defines it (IBV_WC_WITH_INV); rxe's provider passes
# the kernel's flag bit through (mw_probe.c says how), which is rxe's and is taken.
_cm_mw_lines() {
	local log=$1 want l miss="" wi
	if [ "$2" = WINDOW ]; then want=$CM_MW_WINDOW; else want=$CM_MW_WRITER; fi
	for l in $want; do
		tr -d '\r' <"$log" | grep -qx "$l" || miss+="$l "
	done
	tr -d '\r' <"$log" | grep -qx 'mw_probe: done' || miss+="'mw_probe: done' "
	if [ "$2" = WINDOW ]; then
		wi=$(tr -d '\r' <"$log" | sed -n 's/^mw\.r1\.with_inv=//p' | head -1)
		case $3:$wi in
		blue:ibv | rxe:ibv | rxe:kernel_bit2) ;;
		*) miss+="mw.r1.with_inv=${wi:-(none)} (want ibv$([ "$3" = rxe ] && echo " or kernel_bit2")) " ;;
		esac
	fi
	echo "$miss"
}

# _cm_mw_check NAME BLUE_ROLE CLIENT_LOG SERVER_LOG: the server is the window side, the
# client the writer; rxe to itself (the mw_ref step before) must pass the same checks, so
# that a failure names blue, not the probe
_cm_mw_check() {
	local name=$1 brole=$2 cli=$3 srv=$4 ref=$CM_KEEP/mw_ref.guest m bw=rxe bc=blue
	rxe_step_log mw_ref >"$ref"
	[ "$(rxe_step_rc "$ref" mw_ref)" = 0 ] || fail "$name: the rxe-to-rxe reference (mw_ref) failed: $(tr '\n' ' ' <"$ref")"
	m=$(_cm_mw_lines "$ref" WINDOW rxe)$(_cm_mw_lines "$ref" WRITER rxe)
	[ -z "$m" ] || fail "$name: the rxe-to-rxe reference lacks: $m"
	[ "$brole" = server ] && bw=blue bc=rxe
	m=$(_cm_mw_lines "$srv" WINDOW $bw)
	[ -z "$m" ] || fail "$name: the window side ($bw) lacks: $m"
	m=$(_cm_mw_lines "$cli" WRITER $bc)
	[ -z "$m" ] || fail "$name: the writer ($bc) lacks: $m"
	echo "figure: window on $bw, writer $bc: 2 rounds (LOCAL_INV, SEND_WITH_INV), each write through then NAKed"
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
	# UD and SRQ (rxe<->rxe samples): the pingpongs print rc_pingpong's summary lines
	compat_pingpong_check "$s/ud_pingpong-client.txt" 20 1024 || fail "ud_pingpong sample rejected"
	[ "$(compat_pingpong_figure "$s/ud_pingpong-client.txt")" = "13591.75 us/iter, 1.21 Mbit/s" ] ||
		fail "ud_pingpong figure: $(compat_pingpong_figure "$s/ud_pingpong-client.txt")"
	compat_pingpong_check "$s/srq_pingpong-server.txt" 20 4096 || fail "srq_pingpong sample rejected"
	[ "$(compat_pingpong_remotes "$s/srq_pingpong-server.txt")" = 16 ] ||
		fail "srq_pingpong remote QPs: $(compat_pingpong_remotes "$s/srq_pingpong-server.txt")"
	[ "$(compat_pingpong_remotes "$s/ud_pingpong-client.txt")" = 1 ] || fail "ud_pingpong remote QPs"
	_cm_remote_gid "$s/ud_pingpong-client.txt" ibv_ud_pingpong 10.201.77.10 || fail "ud_pingpong remote GID"
	! _cm_remote_gid "$s/ud_pingpong-client.txt" ibv_ud_pingpong 10.201.77.1 || fail "ud_pingpong: wrong GID passed"
	_cm_remote_gid "$s/srq_pingpong-server.txt" ibv_srq_pingpong 10.201.77.10 || fail "srq_pingpong remote GID"
	compat_perftest_check "$s/send_bw_ud-server.txt" 200 || fail "send_bw UD sample rejected"
	[ "$(compat_perftest_figure "$s/send_bw_ud-server.txt")" = "0.056447 Gb/s, 0.006890 Mpps" ] ||
		fail "send_bw UD figure: $(compat_perftest_figure "$s/send_bw_ud-server.txt")"
	compat_perftest_check "$s/send_lat_ud-client.txt" 100 || fail "send_lat UD sample rejected"
	[ "$(compat_perftest_figure "$s/send_lat_ud-client.txt")" = "t_typical 4018.10 us" ] ||
		fail "send_lat UD figure: $(compat_perftest_figure "$s/send_lat_ud-client.txt")"
	_cm_remote_gid "$s/send_lat_ud-client.txt" ib_send_lat 10.201.77.10 || fail "send_lat UD remote GID"
	compat_perftest_conn "$s/send_bw_ud-server.txt" UD || fail "send_bw UD sample: not UD"
	compat_perftest_conn "$s/send_lat_ud-client.txt" UD || fail "send_lat UD sample: not UD"
	! compat_perftest_conn "$s/send_bw-server.txt" UD 2>/dev/null || fail "an RC banner passed as UD"
	[ "$(_cm_row_tool ib_send_bw "-c UD -s 1024")" = "ib_send_bw -c UD" ] || fail "row name of a UD step"
	[ "$(_cm_row_tool ib_send_bw "-s 4096")" = "ib_send_bw" ] || fail "row name of an RC step"
	# issue 15: UC, IPv6 GIDs, memory windows
	compat_pingpong_check "$s/uc_pingpong-client.txt" 20 4096 || fail "uc_pingpong sample rejected"
	_cm_remote_gid "$s/uc_pingpong-client.txt" ibv_uc_pingpong 10.201.77.10 || fail "uc_pingpong remote GID"
	compat_perftest_check "$s/write_bw_uc-client.txt" 100 || fail "write_bw UC sample rejected"
	compat_perftest_conn "$s/write_bw_uc-client.txt" UC || fail "write_bw UC sample: not UC"
	! compat_perftest_conn "$s/write_bw6-client.txt" UC 2>/dev/null || fail "an RC banner passed as UC"
	[ "$(compat_perftest_figure "$s/write_bw_uc-client.txt")" = "0.30 Gb/s, 0.000563 Mpps" ] ||
		fail "write_bw UC figure: $(compat_perftest_figure "$s/write_bw_uc-client.txt")"
	[ "$(_cm_row_tool ib_write_bw "-c UC -s 4096")" = "ib_write_bw -c UC" ] || fail "row name of a UC step"
	[ "$(_cm_row_tool ib_write_bw "-s 4096" ip6)" = "ib_write_bw (IPv6 GIDs)" ] || fail "row name of an ip6 step"
	_cm_remote_gid "$s/rc_pingpong6-client.txt" ibv_rc_pingpong fd00:c9:4d::10 || fail "rc_pingpong IPv6 remote GID"
	! _cm_remote_gid "$s/rc_pingpong6-client.txt" ibv_rc_pingpong fd00:c9:4d::1 || fail "rc_pingpong: wrong IPv6 GID passed"
	! _cm_remote_gid "$s/rc_pingpong6-client.txt" ibv_rc_pingpong 10.201.77.10 || fail "rc_pingpong: IPv4 GID passed for IPv6"
	_cm_remote_gid "$s/write_bw6-client.txt" ib_write_bw fd00:c9:4d::10 || fail "write_bw IPv6 remote GID"
	! _cm_remote_gid "$s/write_bw6-client.txt" ib_write_bw fd00:c9:4d::1 || fail "write_bw: wrong IPv6 GID passed"
	_cm_remote_gid "$s/write_bw_uc-client.txt" ib_write_bw 10.201.77.10 || fail "write_bw UC remote GID"
	[ -z "$(_cm_mw_lines "$s/mw_probe-window.txt" WINDOW rxe)" ] ||
		fail "mw_probe window sample: $(_cm_mw_lines "$s/mw_probe-window.txt" WINDOW rxe)"
	[ -z "$(_cm_mw_lines "$s/mw_probe-writer.txt" WRITER rxe)" ] ||
		fail "mw_probe writer sample: $(_cm_mw_lines "$s/mw_probe-writer.txt" WRITER rxe)"
	# rxe's bit-2 flag is rxe's: blue as the window side must set IBV_WC_WITH_INV
	[[ "$(_cm_mw_lines "$s/mw_probe-window.txt" WINDOW blue)" == *"mw.r1.with_inv=kernel_bit2"* ]] ||
		fail "blue's window side passed with rxe's invalidation flag"
	f=$(mktemp); on_exit "rm -f $f"
	grep -v '^mw.r0.after=' "$s/mw_probe-window.txt" >"$f"
	[[ "$(_cm_mw_lines "$f" WINDOW rxe)" == "mw.r0.after=untouched "* ]] || fail "a window side without its after line passed"
	sed 's/^mw.r1.after=rem_access_err/mw.r1.after=success/' "$s/mw_probe-writer.txt" >"$f"
	[ -n "$(_cm_mw_lines "$f" WRITER rxe)" ] || fail "a writer whose WRITE after invalidation succeeded passed"
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

# _cm_capture VAR NAME FILTER: tcpdump on the guest's tap into $CM_KEEP/NAME.pcap (PID in
# VAR), started when it says it listens; -c bounds the file if something loops
_cm_capture() {
	local log=$CM_KEEP/tcpdump-$2.log i
	rxe_bg "$RXE_NS_BR" "$1" tcpdump -i "$RXE_TAP" -U -s 0 -c 20000 -w "$CM_KEEP/$2.pcap" "$3" 2>"$log"
	for ((i = 0; i < 50; i++)); do
		grep -q 'listening on' "$log" && return 0
		sleep 0.1
	done
	fail "tcpdump did not start: $(cat "$log")"
}

test_compat_rxe_matrix() {
	# the verdicts of an earlier run must not stand for this one (test_compat_rxe_ud/srq
	# read them)
	mkdir -p "$CM_KEEP"
	rm -f "$CM_KEEP/verdicts" "$CM_KEEP/caps"
	local why st name group tool brole n x port=$CM_PORT0 out fig lib t_end row dump_pid dump6_pid
	why=$(rxe_missing)
	[ -z "$why" ] || skip "$why"
	[ -e "$CM_LIB/libibverbs.so.1" ] || fail "$CM_LIB/libibverbs.so.1 not built (make B=$B compat)"
	[ -x "$CM_BLUECTL" ] || fail "$CM_BLUECTL not built"
	for tool in ibv_rc_pingpong ibv_uc_pingpong ibv_ud_pingpong ibv_srq_pingpong ibv_devinfo ib_write_bw ib_write_lat ib_read_bw ib_read_lat \
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
	rm -f "$CM_KEEP"/*.guest "$CM_KEEP"/*.blue "$CM_KEEP"/*.tries "$CM_KEEP/console.log"
	_cm_blue_dev
	_cm_blue_caps

	# rxe's GID table is fixed by the guest's /init (the address before rdma link add):
	# index 1 is the IPv4-mapped RoCEv2 GID; the console's table must say so
	CM_GUEST_GIDX=1
	# and index 2 the GID of the IPv6 address guest_init.sh adds after the IPv4 one
	CM_GUEST_GIDX6=2
	# blue's and rxe's UD frames (BTH opcodes 0x60-0x7f) on the guest's tap, for
	# test_compat_rxe_ud's wire checks; -c bounds the file if something loops
	rm -f "$CM_KEEP/ud.pcap" "$CM_KEEP/ip6.pcap"
	[ -z "$(_cm_group_missing ud)" ] &&
		_cm_capture dump_pid ud 'ip and udp dst port 4791 and (udp[8] & 0xe0) = 0x60'
	# every RoCEv2-over-IPv6 frame (rxe's ip6_ref, and the ip6 steps), for
	# test_compat_rxe_rc_ip6's wire checks
	_cm_capture dump6_pid ip6 'ip6 and udp dst port 4791' 
	rxe_guest_start "$(_cm_guest_cmd)"
	on_exit "tr -d '\r' <\"\$RXE_LOG\" >$CM_KEEP/console.log 2>/dev/null"
	rxe_guest_wait READY 120 || fail "guest never became READY"
	echo "boot: READY $(rxe_guest_elapsed) s after QEMU start"
	[ "$(_cm_guest_gidx)" = "$CM_GUEST_GIDX" ] ||
		fail "rxe0's RoCEv2 GID for $RXE_GUEST_IP is at index '$(_cm_guest_gidx)', not $CM_GUEST_GIDX"
	[ "$(_cm_guest_gidx6)" = "$CM_GUEST_GIDX6" ] ||
		fail "rxe0's RoCEv2 GID for $RXE_GUEST_IP6 is at index '$(_cm_guest_gidx6)', not $CM_GUEST_GIDX6"

	compat_record_reset rxe
	: >"$CM_KEEP/verdicts"
	t_end=$(($(date +%s) + CM_BUDGET))
	for st in "${CM_STEPS[@]}"; do
		read -r name group tool brole n x <<<"$st"
		port=$((port + 1))
		row=$(_cm_row_tool "$tool" "$x" "$group")
		[ "$name" != rc_pingpong6-bcli ] || _cm_ip6_ref_host
		[ "$name" != mw_probe-bcli ] || _cm_mw_ref_verdict
		why=$(_cm_group_missing "$group")
		if [ -n "$why" ]; then
			compat_record "$row" "$brole" rxe "not run" "$why"
			echo "$name $group notrun" >>"$CM_KEEP/verdicts"
			continue
		fi
		if [ "$(date +%s)" -ge "$t_end" ]; then
			compat_record "$row" "$brole" rxe FAIL "not run: the matrix took over ${CM_BUDGET} s"
			echo "$name $group FAIL" >>"$CM_KEEP/verdicts"
			continue
		fi
		_cm_run_step "$name" "$tool" "$brole" "$n" "$x" "$((port - 1))" "$group"
		# shellcheck disable=SC2030,SC2031 # the subshell only reads
		if out=$(_cm_check_step "$name" "$tool" "$brole" "$n" "$x" "$RXE_BRC" "$group" 2>&1); then
			fig=$(sed -n 's/^figure: //p' <<<"$out" | tail -1)
			compat_record "$row" "$brole" rxe pass "$fig"
			echo "$name: pass ($fig)"
			echo "$name $group pass" >>"$CM_KEEP/verdicts"
		else
			echo "$out"
			compat_record "$row" "$brole" rxe FAIL "$(grep '^failure:' <<<"$out" | tail -1 | sed 's/^failure: //')"
			echo "$name $group FAIL" >>"$CM_KEEP/verdicts"
		fi
	done
	echo "--- results ($COMPAT_RESULTS)"
	cat "$COMPAT_RESULTS"
	_cm_verdict rc || fail "RC steps failed"
	rxe_guest_wait EXIT 30 || fail "the guest script did not finish"
	echo "guest: script exited $(rxe_guest_rc), $(rxe_guest_elapsed) s after QEMU start"
	# the captures hold every frame now: stop them so the files are complete
	[ -z "${dump_pid:-}" ] || _rxe_kill_child "$dump_pid"
	[ -z "${dump6_pid:-}" ] || _rxe_kill_child "$dump6_pid"
	# a failed step of any group fails the guest script too; it is that group's verdict
	grep -q ' FAIL$' "$CM_KEEP/verdicts" || [ "$(rxe_guest_rc)" = 0 ] ||
		fail "the guest script exited $(rxe_guest_rc)"
}

# _cm_verdict GROUP: fail unless every step of GROUP that test_compat_rxe_matrix ran
# passed; skip (saying why) when it ran none of them
_cm_verdict() {
	local v=$CM_KEEP/verdicts bad
	_cm_verdict_ready "$1"
	[ -n "$(awk -v g="$1" '$2 == g' "$v")" ] || { echo "no $1 step in the matrix"; return 1; }
	bad=$(awk -v g="$1" '$2 == g && $3 != "pass" { printf "%s ", $1 }' "$v")
	[ -z "$bad" ] || { echo "$1 steps failed: $bad(see test_compat_rxe_matrix's log)"; return 1; }
}

# _cm_verdict_ready GROUP: skip, saying why, when test_compat_rxe_matrix ran none of
# GROUP's steps
_cm_verdict_ready() {
	local why
	[ -s "$CM_KEEP/verdicts" ] ||
		skip "test_compat_rxe_matrix ran no step (skipped or failed before; see its log)"
	why=$(_cm_group_missing "$1")
	[ -z "$why" ] || skip "$why; its steps were not run"
}

# The UD, SRQ, UC, MW and IPv6 rows run in test_compat_rxe_matrix's guest boot (one boot
# for all); their verdicts are these tests' own, so a gap in one feature does not hide
# behind another.
test_compat_rxe_srq() {
	_cm_verdict srq || fail "SRQ against rxe failed"
}

test_compat_rxe_uc() {
	_cm_verdict uc || fail "UC against rxe failed"
}

# _cm_mw_ref_verdict: mw_probe between rxe and itself (the guest's mw_ref step, which runs
# before the mw steps), checked as a blue step is, into the verdicts file as "mw_ref mwref
# pass|FAIL"
_cm_mw_ref_verdict() {
	local ref=$CM_KEEP/mw_ref.guest v=pass m
	rxe_step_wait mw_ref END "$((2 * CM_RUN_T + 20))" || echo "mw_ref: the guest never ended it"
	rxe_step_log mw_ref >"$ref"
	m=$(_cm_mw_lines "$ref" WINDOW rxe)$(_cm_mw_lines "$ref" WRITER rxe)
	if [ "$(rxe_step_rc "$ref" mw_ref)" != 0 ] || [ -n "$m" ]; then
		v=FAIL
		echo "mw_ref (mw_probe rxe to rxe): rc=$(rxe_step_rc "$ref" mw_ref) lacks: $m"
		cat "$ref"
	fi
	echo "mw_ref mwref $v" >>"$CM_KEEP/verdicts"
}

# the probe itself first: rxe to rxe in the guest must pass, with or without blue's steps
test_compat_rxe_mw() {
	local v
	[ -s "$CM_KEEP/verdicts" ] ||
		skip "test_compat_rxe_matrix ran no step (skipped or failed before; see its log)"
	v=$(awk '$1 == "mw_ref" { print $3 }' "$CM_KEEP/verdicts")
	[ "$v" = pass ] || fail "mw_probe between rxe and itself: ${v:-not run} (see $CM_KEEP/mw_ref.guest)"
	_cm_verdict mw || fail "memory windows against rxe failed"
}

# On top of the steps' verdicts, the wire (tests/interop/ip6_wire.py: ICRC with IPv6's
# masking, UDP checksum zero or right, lengths): rxe's own frames of the ip6_ref step
# first, which are there with or without blue's IPv6, then blue's when the steps ran
test_compat_rxe_rc_ip6() {
	local pc=$CM_KEEP/ip6.pcap out rc=0
	[ -s "$CM_KEEP/verdicts" ] ||
		skip "test_compat_rxe_matrix ran no step (skipped or failed before; see its log)"
	[ -s "$pc" ] || fail "no RoCEv2-over-IPv6 frame in $pc (rxe's ip6_ref sends some: see $CM_KEEP/ip6_ref.guest)"
	echo "--- ip6_wire.py $pc"
	out=$(python3 tests/interop/ip6_wire.py "$pc") || rc=$?
	echo "$out"
	grep -q "^pair $RXE_GUEST_IP6 $RXE_BLUE_IP6 " <<<"$out" || fail "no frame from rxe's $RXE_GUEST_IP6 to $RXE_BLUE_IP6"
	[ "$rc" = 0 ] || fail "RoCEv2 over IPv6 on the wire (ip6_wire.py, above)"
	python3 tests/interop/ip6_wire.py --mutate "$pc" >"$CM_KEEP/mutate6.log" ||
		{ cat "$CM_KEEP/mutate6.log"; fail "ip6_wire.py --mutate"; }
	tail -1 "$CM_KEEP/mutate6.log"
	_cm_verdict_ready ip6
	grep -q "^pair $RXE_BLUE_IP6 $RXE_GUEST_IP6 " <<<"$out" || fail "no frame from blue's $RXE_BLUE_IP6 to $RXE_GUEST_IP6"
	_cm_verdict ip6 || fail "RC over IPv6 GIDs against rxe failed"
}

# On top of the steps' verdicts, the wire: blue's UD frames against rxe's in the capture of
# the matrix (tests/interop/icrc_check.py recomputes every ICRC with zlib; ud_layout.py
# compares the header fields of the same tools run both ways)
test_compat_rxe_ud() {
	local bad=() pc=$CM_KEEP/ud.pcap
	_cm_verdict_ready ud
	if [ ! -s "$pc" ]; then
		bad+=("no UD frame captured")
	else
		echo "--- icrc_check.py $pc"
		python3 tests/interop/icrc_check.py "$pc" || bad+=("ICRC (icrc_check.py)")
		echo "--- ud_layout.py $pc"
		python3 tests/interop/ud_layout.py "$pc" "$RXE_BLUE_IP" "$RXE_GUEST_IP" ||
			bad+=("UD frame layout (ud_layout.py)")
		# the checkers can fail: a flipped bit and a changed field must be seen
		python3 tests/interop/icrc_check.py --mutate "$pc" >"$CM_KEEP/mutate.log" ||
			bad+=("icrc_check.py --mutate")
		tail -1 "$CM_KEEP/mutate.log"
		python3 tests/interop/ud_layout.py --mutate "$pc" "$RXE_BLUE_IP" "$RXE_GUEST_IP" \
			>"$CM_KEEP/mutate.log" || bad+=("ud_layout.py --mutate")
		tail -1 "$CM_KEEP/mutate.log"
	fi
	_cm_verdict ud || bad+=("steps")
	[ ${#bad[@]} -eq 0 ] || fail "UD against rxe: ${bad[*]}"
}
