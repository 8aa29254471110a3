# shellcheck shell=bash
# UCX 1.13 (Debian's ucx-utils, unmodified) on blue, blue <-> blue between two namespaces:
# ucx_info lists blue's device with rc_verbs and ud_verbs, and ucx_perftest runs at the UCT
# level over rc_verbs (am_lat, put_bw) and at the UCP level over rc_v (tag_lat, and tag_bw
# with messages large enough for UCX's rendezvous, which moves the data by RDMA READ or
# WRITE). Each run must exit 0 on both sides and print its "Final:" row with the iteration
# count asked for; the UCP runs must say (UCX_LOG_LEVEL=info) that their lanes are
# rc_verbs on blue's device, and tag_bw's rendezvous is seen posting RDMA READ/WRITE work
# requests for all its payload (bpftrace on libblue's USDT probe). UCX_TLS is restricted:
# UCX takes shared memory (posix, sysv, cma) for reachable between two namespaces of one
# host; the other UCX settings and why: tests/lib/ucx.sh ucx_rc_v_env.
# The figures go to $B/test-logs/ucx.md beside blue's own tools (blue_send_lat,
# blue_write_lat, blue_write_bw, blue_read_bw) in the same namespaces; they are reported,
# never asserted.
# Run: B=build bash tests/lib/runner.sh tests/ucx/test_ucx.sh
#
# Test functions:
#   test_ucx_info test_uct_am_lat test_uct_put_bw test_ucp_tag_lat test_ucp_tag_bw
#   test_ucp_sockaddr_rdmacm test_native_figures
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh
# shellcheck source=tests/lib/compat.sh
source tests/lib/compat.sh
# shellcheck source=tests/lib/ucx.sh
source tests/lib/ucx.sh

# each run's figures replace the last run's
ucx_figures_reset

UX_IP_A=10.201.95.1	# ucx_perftest's server
UX_IP_B=10.201.95.2	# its client
UCX_PORT=13337

ux_setup() {
	ucx_setup ucx "$UX_IP_A" "$UX_IP_B"
	UX_OUT=$(mktemp -d)
	on_exit "rm -rf $UX_OUT"
}

# ux_md_transports LOG MD: the "Transport: X / Device: Y" pairs ucx_info -d prints under
# "Memory domain: MD", one "X Y" per line
ux_md_transports() {
	awk -v md="$2" '
		/^# Memory domain:/ { in_md = ($4 == md); next }
		/^# Connection manager:/ { in_md = 0 }
		in_md && /^#      Transport:/ { t = $3 }
		in_md && /^#         Device:/ { print t, $3 }' "$1"
}

test_ucx_info() {
	local log=
	ux_setup
	log=$UX_OUT/info
	ucx_in "$UCX_NS_A" ucxa timeout 30 ucx_info -d >"$log" 2>&1 || { cat "$log"; fail "ucx_info -d exited $?"; }
	grep -E '^# +(Memory domain|Component|Transport|Device):' "$log"
	grep -qx "# Memory domain: $UCX_IF" "$log" || fail "ucx_info lists no memory domain $UCX_IF"
	ux_md_transports "$log" "$UCX_IF" | grep -qx "rc_verbs $UCX_IF:1" ||
		fail "no rc_verbs on $UCX_IF:1"
	ux_md_transports "$log" "$UCX_IF" | grep -qx "ud_verbs $UCX_IF:1" ||
		fail "no ud_verbs on $UCX_IF:1"
	# UCX's rdmacm connection manager opens on blue's librdmacm (issue 16; the stand-in
	# before it failed rdma_create_event_channel with EOPNOTSUPP, allowed then)
	grep -qx '# Connection manager: rdmacm' "$log" || fail "ucx_info lists no rdmacm connection manager"
	if grep -E 'UCX +(ERROR|WARN)' "$log"; then
		fail "ucx_info printed errors or warnings"
	fi
}

# ux_perf WHAT ITERS CLIENT_ARGS...: ucx_perftest's client in B with CLIENT_ARGS and -n
# ITERS against its server in A; both must pass and the client print its Final row for
# ITERS. The figure goes to $BLUE_UCX_FIGURES as WHAT.
ux_perf() {
	local what=$1 iters=$2
	shift 2
	ucx_perf_run "$UX_OUT/srv" "$UX_OUT/cli" -- "$@" -n "$iters"
	ucx_perf_check "$UX_OUT/cli" "$iters" || fail "$what: no result for $iters iterations"
	! grep -qE 'UCX +ERROR' "$UX_OUT/srv" "$UX_OUT/cli" || fail "$what: UCX printed errors"
	echo "$what: $(ucx_perf_figure "$UX_OUT/cli" "$what")"
	ucx_figure_record "ucx_perftest $what" "$(ucx_perf_figure "$UX_OUT/cli" "$what")"
}

# UCT level: the transport is named (-x), the device is blue's
test_uct_am_lat() {
	ux_setup
	ux_perf "UCT rc_verbs am_lat 8 B" 5000 -d "$UCX_IF:1" -x rc_verbs -t am_lat -s 8
}

test_uct_put_bw() {
	ux_setup
	ux_perf "UCT rc_verbs put_bw 64 KiB zcopy" 2000 -d "$UCX_IF:1" -x rc_verbs -t put_bw \
		-D zcopy -s 65536
}

# ux_lanes_rc_verbs: the client's UCP endpoint configuration (ucs_info "ep_cfg[N]: ..."
# from ucp_worker_print_used_tls) puts its tag lanes on rc_verbs over blue's device
ux_lanes_rc_verbs() {
	local cfg
	cfg=$(grep -E 'ep_cfg\[[0-9]+\]: ' "$UX_OUT/cli" | head -5)
	[ -n "$cfg" ] || fail "the client printed no ep_cfg line (UCX_LOG_LEVEL=info)"
	grep -qE "tag\([^)]*rc_verbs/$UCX_IF:1" <<<"$cfg" || fail "the tag lanes are not rc_verbs/$UCX_IF:1: $cfg"
}

# UCP level, UCX_TLS=rc_v: rc_verbs, with ud_verbs for the wireup (ucp_context.c's alias)
test_ucp_tag_lat() {
	ux_setup
	ucx_rc_v_env
	ux_perf "UCP rc_v tag_lat 8 B" 5000 -t tag_lat -s 8
	ux_lanes_rc_verbs
}

# 1 MiB messages are far past the rendezvous threshold (UCX_RNDV_THRESH, auto: some KiB on
# rc), so UCX moves their data by RDMA READ (its default get_zcopy scheme) or WRITE. That
# is checked on blue's side of the verbs: libblue's USDT probe blue:post_send (qpn, wr_id,
# opcode, length, flags; runtime/probes.h) counts the READ and WRITE work requests UCX
# posts and their bytes, which must add up to at least every message's payload.
test_ucp_tag_bw() {
	local iters=200 size=1048576 bt rd wr
	ux_setup
	ucx_rc_v_env
	# shellcheck source=tests/lib/trace.sh
	source tests/lib/trace.sh
	bt_start bt "$UX_OUT/bt" -e "
		BEGIN { printf(\"Tracing blue post_send\\n\"); }
		usdt:$PWD/$B/compat/libibverbs.so.1:blue:post_send { @n[arg2] = count(); @b[arg2] = sum(arg3); }"
	ux_perf "UCP rc_v tag_bw 1 MiB (rendezvous)" "$iters" -t tag_bw -s "$size"
	ux_lanes_rc_verbs
	bt_halt "$bt" || true
	cat "$UX_OUT/bt"
	# enum blue_wr_opcode: 0 WRITE, 1 WRITE with immediate, 4 READ
	rd=$(awk -F'[][]' '/^@b\[/ && $2 == 4 { sub(/.*: /, ""); print }' "$UX_OUT/bt")
	wr=$(awk -F'[][]' '/^@b\[/ && ($2 == 0 || $2 == 1) { sub(/.*: /, ""); s += $0 } END { print s + 0 }' "$UX_OUT/bt")
	echo "RDMA READ bytes posted: ${rd:-0}, RDMA WRITE bytes posted: $wr"
	[ $(( ${rd:-0} + wr )) -ge $((iters * size)) ] ||
		fail "the rendezvous posted $(( ${rd:-0} + wr )) bytes of RDMA READ/WRITE, want >= $((iters * size))"
}

# blue's own tools in the same namespaces, for the figures beside UCX's
# UCP's sockaddr connection establishment over UCX's rdmacm CM on blue's librdmacm: UCX's
# io_demo (ucx-utils) listens on a socket address and its client connects to one
# (ucp_listener / ucp_ep_create by sockaddr), with UCX_SOCKADDR_TLS_PRIORITY=rdmacm the
# IB CM REQ/REP/RTU over QP1 carry the UCP wireup; then 200 IO requests (reads and
# writes, -q: data and transaction checked) on rc_verbs.
test_ucp_sockaddr_rdmacm() {
	local spid crc=0 port=13401 io i
	command -v io_demo >/dev/null || skip "io_demo missing (make deps: ucx-utils)"
	ux_setup
	ucx_rc_v_env
	UCX_ENV=${UCX_ENV/UCX_SOCKADDR_TLS_PRIORITY=tcp/UCX_SOCKADDR_TLS_PRIORITY=rdmacm}
	# the server never ends by itself, and takes SIGTERM as a request to stop in its own
	# time: its timeout (20 s, then KILL 2 s later) ends it, well after the client's run
	ucx_bg spid "$UCX_NS_A" ucxa timeout -k 2 20 io_demo -p "$port" -q >"$UX_OUT/srv" 2>&1
	# an rdma_cm listener, no TCP socket: the server's own line says when it listens
	for ((i = 0; i < 200; i++)); do
		grep -q "started listener .*:$port" "$UX_OUT/srv" 2>/dev/null && break
		sleep 0.1
	done
	grep -q "started listener .*:$port" "$UX_OUT/srv" ||
		{ cat "$UX_OUT/srv"; fail "io_demo's server did not listen on $port"; }
	ucx_in "$UCX_NS_B" ucxb timeout -k 5 "$BLUE_UCX_TIMEOUT" io_demo -p "$port" -q -i 200 \
		-o read,write -c 2 "$UX_IP_A" >"$UX_OUT/cli" 2>&1 || crc=$?
	wait "$spid" 2>/dev/null || true
	echo "--- server: io_demo"; grep -v 'active: 0/0' "$UX_OUT/srv" | tail -20
	echo "--- client: io_demo"; cat "$UX_OUT/cli"
	[ "$crc" -eq 0 ] || fail "io_demo's client exited $crc$(ucx_perf_why "$UX_OUT/cli")"
	grep -q "Client exit with status 'OK'" "$UX_OUT/cli" || fail "io_demo's client: no status OK"
	grep -q "got new connection request" "$UX_OUT/srv" || fail "io_demo's server: no connection request"
	io=$(grep -m1 -oE 'total min:200 max:200 total:200 \| read [0-9.]+ MBs.*\| write [0-9.]+ MBs' \
		"$UX_OUT/cli") || fail "io_demo's client: no report of 200 IOs"
	grep -q "rdmacm" <<<"$(grep -i 'ERROR' "$UX_OUT/cli" "$UX_OUT/srv")" &&
		fail "UCX's rdmacm CM reported an error"
	echo "io_demo over the rdmacm CM: $io"
	ucx_figure_record "io_demo sockaddr (rdmacm CM) 200 IOs" "$io"
}

test_native_figures() {
	local t args log spid src crc
	ux_setup
	# beside am_lat and tag_lat (SENDs), put_bw (WRITEs) and tag_bw (the rendezvous' READs)
	for t in "send_lat -s 8 -n 5000" "write_lat -s 8 -n 5000" "write_bw -s 65536 -n 2000" \
		 "read_bw -s 1048576 -n 200"; do
		read -r t args <<<"$t"
		need_bins "$PWD/$B/bin/blue_$t"
		log=$UX_OUT/$t
		# shellcheck disable=SC2086 # args: options, split on purpose
		ns_bg "$UCX_NS_A" spid timeout 60 "$PWD/$B/bin/blue_$t" -d "$UCX_IF" --timeout 20 $args \
			>"$log.srv" 2>&1
		crc=0
		# shellcheck disable=SC2086
		ns_exec "$UCX_NS_B" timeout 60 "$PWD/$B/bin/blue_$t" -d "$UCX_IF" --timeout 20 $args \
			"$UX_IP_A" >"$log" 2>&1 || crc=$?
		src=0
		wait "$spid" || src=$?
		cat "$log"
		[ "$src" -eq 0 ] || { cat "$log.srv"; fail "blue_$t's server exited $src"; }
		[ "$crc" -eq 0 ] || fail "blue_$t's client exited $crc"
		compat_perftest_check "$log" "${args##* }" || fail "blue_$t: no result row"
		ucx_figure_record "blue_$t $args" "$(compat_perftest_figure "$log")"
	done
}
