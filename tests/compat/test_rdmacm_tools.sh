# shellcheck shell=bash
# Unmodified tools that set their connections up with rdma_cm, blue <-> blue, over blue's
# librdmacm.so.1 (compat/rdmacm/, issue 16): perftest with -R (the connection through
# rdma_cm instead of perftest's TCP exchange: RC REQ/REP/RTU, for UD SIDR), libfabric's
# fi_pingpong on its verbs provider (msg: rdma_cm RC; rdm: RXM over the same; dgram: UD,
# addresses exchanged over fi_pingpong's own TCP socket). Two namespaces joined by a veth
# pair, blue attached to both ends, every tool loading $B/compat/lib{ibverbs,rdmacm}.so.1
# through LD_LIBRARY_PATH (the setup and the server/client runner: tests/lib/rdmacm.sh).
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
# shellcheck source=tests/lib/rdmacm.sh
source tests/lib/rdmacm.sh

RT_IP_A=10.201.171.1	# server
RT_IP_B=10.201.171.2	# client

# rt_setup TOOL...: the namespaces, blue on both ends (tests/lib/rdmacm.sh)
rt_setup() { rdmacm_setup rtl "$RT_IP_A" "$RT_IP_B" "$@"; }

# Two races that are perftest's, not the CM's, each answered by running the pair again
# whole (tests/lib/rdmacm.sh rdmacm_pair_runs, up to RT_RUNS runs; any other failure
# fails the test at once):
#  - RC: its server listens anew for the test's QPs after the parameter exchange on its
#    first connection, and a client that comes first gets the IB CM's REJ, invalid
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
	local tool=$1 iters=$2 port=$3 label="$1 -R" ud=""
	shift 3
	[[ " $* " =~ \ -c\ (UD|UC)\  ]] && label="$label -c ${BASH_REMATCH[1]}"
	[[ " $* " =~ \ -c\ UD\  ]] && ud=1
	rt_setup "$tool"
	compat_record_at_exit "$label" both blue
	# perftest's server prints this as it starts, the listen follows
	RCM_READY='Waiting for client to connect' rdmacm_pair_runs "$RT_RUNS" "$RT_RACE" 60 \
		"$tool" -R -F -p "$port" -n "$iters" "$@" -- \
		"$tool" -R -F -p "$port" -n "$iters" "$@" "$RT_IP_A"
	rdmacm_both_ok "$tool -R"
	compat_perftest_check "$RCM_CLI" "$iters" || fail "$tool -R: the client's report"
	if compat_srv_prints_table "$tool"; then
		compat_perftest_check "$RCM_SRV" "$iters" || fail "$tool -R: the server's report"
	fi
	compat_perftest_conn "$RCM_CLI" "$([ -n "$ud" ] && echo UD || echo RC)" ||
		fail "$tool -R: the connection type"
	grep -q "Data ex. method : rdma_cm" "$RCM_CLI" || fail "$tool -R: not set up by rdma_cm"
	echo "$label: $(compat_perftest_figure "$RCM_CLI")"
	compat_passed "$(compat_perftest_figure "$RCM_CLI")"
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
	RCM_ENV="FI_VERBS_IFACE=rtl $*" rdmacm_pair 60 fi_pingpong -p verbs -e "$ep" -I "$RT_FI_ITERS" -S 1024 -c \
		-B "$RT_FI_PORT" -- \
		fi_pingpong -p verbs -e "$ep" -I "$RT_FI_ITERS" -S 1024 -c -P "$RT_FI_PORT" "$RT_IP_A"
	rdmacm_both_ok "fi_pingpong -e $ep"
	row=$(fi_pp_row "$RCM_CLI") || fail "fi_pingpong -e $ep: no result row for $RT_FI_ITERS iterations"
	echo "fi_pingpong -e $ep: $row"
	compat_passed "$row"
}

test_fi_pingpong_msg() { fi_pp msg; }
# rdm is RXM over verbs MSG endpoints; RXM sizes its CQ by the universe size (default
# 256 peers: 262144 entries), more than blue's max_cqe (65536): 64 peers here
test_fi_pingpong_rdm() { fi_pp rdm FI_UNIVERSE_SIZE=64; }
test_fi_pingpong_dgram() { fi_pp dgram FI_VERBS_GID_IDX=1; }
