# shellcheck shell=bash
# Unmodified tools that set their connections up with rdma_cm, blue <-> blue, over blue's
# librdmacm.so.1 (compat/rdmacm/, issue 16): perftest with -R (the connection through
# rdma_cm instead of perftest's TCP exchange: RC REQ/REP/RTU, for UD SIDR), libfabric's
# fi_pingpong on its verbs provider (msg: rdma_cm RC; rdm: RXM over the same; dgram: UD,
# addresses exchanged over fi_pingpong's own TCP socket). Two namespaces joined by a veth
# pair, blue attached to both ends, every tool loading $B/compat/lib{ibverbs,rdmacm}.so.1 through LD_LIBRARY_PATH.
# A run passes on both sides' exit status 0 and the tool's own report: perftest's result
# table with #iterations = -n on each side that prints one (tests/lib/compat.sh), recorded
# in the results table; fi_pingpong's result row for the -I iterations asked, each
# message answered (-c: its data checked), recorded too.
# Run: B=build-<you> bash tests/lib/runner.sh tests/compat/test_rdmacm_tools.sh [test_name]
#
# Test functions:
#   test_send_bw_R test_write_bw_R test_read_lat_R test_send_bw_R_ud
#   test_fi_pingpong_msg test_fi_pingpong_rdm test_fi_pingpong_dgram
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh
# shellcheck source=tests/lib/compat.sh
source tests/lib/compat.sh

BLUECTL=$PWD/$B/bin/bluectl
RT_LIB=$PWD/$B/compat
RT_IP_A=10.201.171.1	# server
RT_IP_B=10.201.171.2	# client

rt_setup() {
	need_bins "$RT_LIB/libibverbs.so.1" "$RT_LIB/librdmacm.so.1" "$BLUECTL"
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null || skip "$t missing (make deps: perftest, libfabric-bin)"
	done
	compat_env "$RT_LIB"
	netns_setup rtl "$RT_IP_A" "$RT_IP_B"
	blue_attach "$NS_A" "$IF_A"
	blue_attach "$NS_B" "$IF_B"
}

# rt_wait_ready LOG: until the server's log matches RT_READY (a regex), 10 s at most,
# then half a second's grace (the line may come just before the listen); without
# RT_READY one second
rt_wait_ready() {
	local i
	if [ -z "${RT_READY:-}" ]; then sleep 1; return 0; fi
	for ((i = 0; i < 100; i++)); do
		grep -qE "$RT_READY" "$1" 2>/dev/null && break
		sleep 0.1
	done
	sleep 0.5
}

# rt_pair SECS SERVER_CMD... -- CLIENT_CMD...: the server in A, once ready (rt_wait_ready)
# the client in B, each bounded by SECS; a server whose client failed is ended (by PID)
# 2 s later, not left to its timeout. Sets RT_SRC/RT_CRC (exit codes) and RT_SRV/RT_CLI
# (logs). RT_ENV: NAME=VALUE words for both sides (BLUE_RDMACM_STATS=1 to look closer).
rt_pair() {
	local secs=$1 spid sargs=() cargs=(); shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do sargs+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	cargs=("$@")
	RT_SRV=$(mktemp)
	RT_CLI=$(mktemp)
	on_exit "rm -f $RT_SRV $RT_CLI"
	# shellcheck disable=SC2086 # RT_ENV: NAME=VALUE words
	ns_bg "$NS_A" spid timeout "$secs" "${COMPAT_ENV[@]}" ${RT_ENV:-} stdbuf -oL "${sargs[@]}" \
		>"$RT_SRV" 2>&1
	rt_wait_ready "$RT_SRV"
	RT_CRC=0
	RT_SRC=0
	# shellcheck disable=SC2086
	ns_exec "$NS_B" timeout "$secs" "${COMPAT_ENV[@]}" ${RT_ENV:-} "${cargs[@]}" >"$RT_CLI" 2>&1 ||
		RT_CRC=$?
	if [ "$RT_CRC" -ne 0 ]; then
		sleep 2
		kill "$spid" 2>/dev/null || true
	fi
	wait "$spid" || RT_SRC=$?
	echo "--- server (exit $RT_SRC): ${sargs[*]}"; cat "$RT_SRV"
	echo "--- client (exit $RT_CRC): ${cargs[*]}"; cat "$RT_CLI"
}

rt_both_ok() {
	[ "$RT_SRC" -eq 0 ] || fail "$1 server exited $RT_SRC"
	[ "$RT_CRC" -eq 0 ] || fail "$1 client exited $RT_CRC"
}

# Two races that are perftest's, not the CM's, retried (up to RT_RUNS runs; any other
# failure fails the test at once):
#  - its server prints "Waiting for client to connect" before its rdma_listen: a client
#    that comes first (a loaded machine: 2 cores shared) gets the IB CM's REJ, invalid
#    service ID (8), as from a kernel CM: "RDMA_CM_EVENT_REJECTED; error: 8";
#  - UD -R: after their rdma_cm control connection (RC, PS_TCP) each side sets its UD
#    resources up, then the server listens on PS_UDP while the client sends its SIDR_REQ at
#    once; one that comes first finds no listener: SIDR status 1 (the kernel's
#    cm_sidr_req_handler answers so too), "RDMA_CM_EVENT_UNREACHABLE; error: 1"
#    (BLUE_RDMACM_STATS showed the SIDR_REQ answered before the server's PS_UDP listen).
RT_RACE='RDMA_CM_EVENT_REJECTED; error: 8\.|RDMA_CM_EVENT_UNREACHABLE; error: 1\.'
RT_RUNS=5

# perf_R TOOL ITERS PORT [FLAGS]: perftest with -R, the server in A (no -d: its
# rdma_cm listener on the wildcard address picks the device of the CONNECT_REQUEST), the
# client in B against A's address; both reports checked, the row recorded.
perf_R() {
	local tool=$1 iters=$2 port=$3 label="$1 -R" ud="" run
	shift 3
	[[ " $* " =~ \ -c\ (UD|UC)\  ]] && label="$label -c ${BASH_REMATCH[1]}"
	[[ " $* " =~ \ -c\ UD\  ]] && ud=1
	rt_setup "$tool"
	compat_record_at_exit "$label" both blue
	for ((run = 1; run <= RT_RUNS; run++)); do
		# perftest's server prints this as it starts, the listen follows
		RT_READY='Waiting for client to connect' rt_pair 60 "$tool" -R -F -p "$port" -n "$iters" "$@" -- \
			"$tool" -R -F -p "$port" -n "$iters" "$@" "$RT_IP_A"
		if [ "$RT_CRC" -eq 0 ] || ! grep -qE "$RT_RACE" "$RT_CLI"; then
			break
		fi
		echo "run $run: perftest's race (the client's request before the server's listen): again"
	done
	rt_both_ok "$tool -R"
	compat_perftest_check "$RT_CLI" "$iters" || fail "$tool -R: the client's report"
	if compat_srv_prints_table "$tool"; then
		compat_perftest_check "$RT_SRV" "$iters" || fail "$tool -R: the server's report"
	fi
	compat_perftest_conn "$RT_CLI" "$([ -n "$ud" ] && echo UD || echo RC)" ||
		fail "$tool -R: the connection type"
	grep -q "Data ex. method : rdma_cm" "$RT_CLI" || fail "$tool -R: not set up by rdma_cm"
	echo "$label: $(compat_perftest_figure "$RT_CLI")"
	compat_passed "$(compat_perftest_figure "$RT_CLI")"
}

test_send_bw_R() { perf_R ib_send_bw 200 18711 -s 16384 --report_gbits; }
test_write_bw_R() { perf_R ib_write_bw 200 18712 -s 16384 --report_gbits; }
test_read_lat_R() { perf_R ib_read_lat 100 18713; }
test_send_bw_R_ud() { perf_R ib_send_bw 200 18714 -c UD -s 1024 --report_gbits; }

# fi_pp_row LOG: fi_pingpong's result row (util/pingpong.c show_perf: bytes, #sent, #ack,
# total, time, MB/sec, usec/xfer, Mxfers/sec) as "MB/sec MB/s, usec/xfer us/xfer" if
# #sent is RT_FI_ITERS and #ack "=RT_FI_ITERS" (every message answered)
fi_pp_row() {
	tr -d '\r' <"$1" | awk -v n="$RT_FI_ITERS" '
		/^bytes +#sent +#ack/ { hdr = 1; next }
		hdr && $2 == n && $3 == "=" n { print $6 " MB/s, " $7 " us/xfer"; ok = 1; exit }
		{ hdr = 0 }
		END { exit !ok }'
}

# fi_pingpong EP [ENV...]: libfabric's verbs provider, endpoint type EP, the server in A,
# the client in B against A's address; fi_pingpong's own TCP socket (port RT_FI_PORT)
# carries its out-of-band exchange, the fabric traffic is blue's. Both must exit 0 and the
# client print its result row for RT_FI_ITERS iterations. FI_VERBS_IFACE=rtl: the verbs
# provider maps only interfaces whose names start with it (default "ib") to devices, by
# rdma_bind_addr on each of their addresses; our veths are rtl0p<pid>/rtl1p<pid>. Without
# the map a passive endpoint's name is its "localhost" bind, 127.0.0.1, and the client
# connects to itself.
RT_FI_ITERS=100
RT_FI_PORT=47611
fi_pp() {
	local ep=$1 row; shift
	rt_setup fi_pingpong
	compat_record_at_exit "fi_pingpong -p verbs -e $ep" both blue
	RT_ENV="FI_VERBS_IFACE=rtl $*" rt_pair 60 fi_pingpong -p verbs -e "$ep" -I "$RT_FI_ITERS" -S 1024 -c \
		-B "$RT_FI_PORT" -- \
		fi_pingpong -p verbs -e "$ep" -I "$RT_FI_ITERS" -S 1024 -c -P "$RT_FI_PORT" "$RT_IP_A"
	rt_both_ok "fi_pingpong -e $ep"
	row=$(fi_pp_row "$RT_CLI") || fail "fi_pingpong -e $ep: no result row for $RT_FI_ITERS iterations"
	echo "fi_pingpong -e $ep: $row"
	compat_passed "$row"
}

test_fi_pingpong_msg() { fi_pp msg; }
# rdm is RXM over verbs MSG endpoints; RXM sizes its CQ by the universe size (default
# 256 peers: 262144 entries), more than blue's max_cqe (65536): 64 peers here
test_fi_pingpong_rdm() { fi_pp rdm FI_UNIVERSE_SIZE=64; }
test_fi_pingpong_dgram() { fi_pp dgram FI_VERBS_GID_IDX=1; }
