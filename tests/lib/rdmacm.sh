# shellcheck shell=bash
# Helpers for the script tests that run programs on blue's librdmacm.so.1, blue <-> blue
# (tests/compat/test_rdmacm*.sh): two namespaces joined by a veth pair, blue attached to
# both ends, every program loading $B/compat/lib{ibverbs,rdmacm}.so.1 (compat_env).
# Source it after tests/lib/netns.sh and tests/lib/compat.sh.
#
#   rdmacm_need [TOOL...]        the compat libraries and bluectl built, each TOOL there
#                                (a path: built by make all; a name: installed, else a
#                                skip naming its package); sets COMPAT_ENV
#   rdmacm_setup TAG IP_A IP_B [TOOL...]
#                                rdmacm_need, then netns_setup TAG IP_A IP_B and blue
#                                attached to both ends (NS_A/NS_B, IF_A/IF_B)
#   rdmacm_pair SECS SERVER_CMD... -- CLIENT_CMD...
#                                the server in A, the client in B (below); sets
#                                RCM_SRC/RCM_CRC (exit codes), RCM_SRV/RCM_CLI (logs);
#                                reads RCM_READY, RCM_ENV, RCM_RETRY
#   rdmacm_pair_runs RUNS RACE SECS SERVER_CMD... -- CLIENT_CMD...
#                                rdmacm_pair run again whole while the client fails
#                                matching RACE (a tool's own race: perftest -R)
#   rdmacm_both_ok WHAT          fail unless both sides of the last pair exited 0
BLUECTL=$PWD/$B/bin/bluectl
RCM_LIB=$PWD/$B/compat

# rdmacm_pkg TOOL: the Debian package that has TOOL (make deps installs it)
rdmacm_pkg() {
	case $1 in
	ib_*) echo perftest ;;
	fi_*) echo libfabric-bin ;;
	qperf) echo qperf ;;
	*) echo rdmacm-utils ;;
	esac
}

rdmacm_need() {
	local t
	need_bins "$RCM_LIB/libibverbs.so.1" "$RCM_LIB/librdmacm.so.1" "$BLUECTL"
	for t in "$@"; do
		case $t in
		/*) need_bins "$t" ;;
		*) command -v "$t" >/dev/null || skip "$t missing (make deps: $(rdmacm_pkg "$t"))" ;;
		esac
	done
	compat_env "$RCM_LIB"
}

rdmacm_setup() {
	local tag=$1 ipa=$2 ipb=$3
	shift 3
	rdmacm_need "$@"
	netns_setup "$tag" "$ipa" "$ipb"
	blue_attach "$NS_A" "$IF_A"
	blue_attach "$NS_B" "$IF_B"
}

# _rdmacm_wait_ready LOG: until the server's LOG matches RCM_READY (a regex), 10 s at
# most, then half a second's grace (the line may come just before the listen); without
# RCM_READY one second
_rdmacm_wait_ready() {
	local i
	if [ -z "${RCM_READY:-}" ]; then sleep 1; return 0; fi
	for ((i = 0; i < 100; i++)); do
		grep -qE "$RCM_READY" "$1" 2>/dev/null && break
		sleep 0.1
	done
	sleep 0.5
}

# rdmacm_pair SECS SERVER_CMD... -- CLIENT_CMD...: the server in A (line-buffered, so that
# its log shows how far it got), once ready (_rdmacm_wait_ready: RCM_READY) the client in
# B, each bounded by SECS. RCM_ENV: NAME=VALUE words for both sides
# (BLUE_RDMACM_STATS=1 to look closer). rdma_cm listens on no socket that could be
# waited for, so a client that came before the server's rdma_listen (REJECTED with
# reason 8, invalid service ID: the server's CM agent answered, its listener was not
# there yet) is run again, 1 s apart, while the server runs and for at most half of SECS
# in all: a loaded machine (CI) has taken more than 6 s to bring perftest's server to
# rdma_listen, and a fixed 5 tries left that server waiting to its bound. RCM_RETRY=0:
# no such retry, the pair ends on the first REJ (the caller runs it again whole). A
# server whose client failed is ended (by PID) 2 s later, not left to its timeout. Both
# logs are printed with their exit codes.
rdmacm_pair() {
	local secs=$1 spid sargs=() cargs=() try=0 end; shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do sargs+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	cargs=("$@")
	RCM_SRV=$(mktemp)
	RCM_CLI=$(mktemp)
	on_exit "rm -f $RCM_SRV $RCM_CLI"
	# shellcheck disable=SC2086 # RCM_ENV: NAME=VALUE words
	ns_bg "$NS_A" spid timeout "$secs" "${COMPAT_ENV[@]}" ${RCM_ENV:-} stdbuf -oL "${sargs[@]}" \
		>"$RCM_SRV" 2>&1
	_rdmacm_wait_ready "$RCM_SRV"
	RCM_SRC=0
	end=$((SECONDS + secs / 2))
	while :; do
		try=$((try + 1))
		RCM_CRC=0
		# shellcheck disable=SC2086
		ns_exec "$NS_B" timeout "$secs" "${COMPAT_ENV[@]}" ${RCM_ENV:-} "${cargs[@]}" \
			>"$RCM_CLI" 2>&1 || RCM_CRC=$?
		if [ "$RCM_CRC" -eq 0 ] || [ "${RCM_RETRY:-1}" = 0 ] ||
		   ! grep -qE "REJECTED[^0-9]*8([^0-9]|$)" "$RCM_CLI" ||
		   ! kill -0 "$spid" 2>/dev/null || [ "$SECONDS" -ge "$end" ]; then
			break
		fi
		echo "# client attempt $try: REJECTED 8 (the server was not listening yet); again in 1 s"
		sleep 1
	done
	if [ "$RCM_CRC" -ne 0 ]; then
		sleep 2
		kill "$spid" 2>/dev/null || true
	fi
	wait "$spid" || RCM_SRC=$?
	echo "--- server (exit $RCM_SRC): ${sargs[*]}"; cat "$RCM_SRV"
	echo "--- client (exit $RCM_CRC): ${cargs[*]}"; cat "$RCM_CLI"
}

# rdmacm_pair_runs RUNS RACE_REGEX SECS SERVER_CMD... -- CLIENT_CMD...: rdmacm_pair with
# no client-only retry (RCM_RETRY=0), run again whole, up to RUNS times, while the client
# fails with output matching RACE_REGEX; any other outcome ends it. For perftest -R:
# after the parameter exchange on its first rdma_cm connection its server destroys that
# listener and listens anew on the same port for the test's QPs, while its client
# connects at once; a client that comes first gets REJ 8 for that second connection
# (BLUE_IBCM_TRACE=1 shows its first connection ESTABLISHED on both sides). The server
# then holds the first connection of a client that has gone, so a new client against it
# hung with it to their bound (3 in 3 here): only a new pair recovers.
rdmacm_pair_runs() {
	local runs=$1 race=$2 run; shift 2
	for ((run = 1; run <= runs; run++)); do
		RCM_RETRY=0 rdmacm_pair "$@"
		if [ "$RCM_CRC" -eq 0 ] || ! grep -qE "$race" "$RCM_CLI"; then
			return 0
		fi
		echo "# run $run: the race of the tool's own (see rdmacm_pair_runs): the pair again"
	done
}

rdmacm_both_ok() {
	[ "$RCM_SRC" -eq 0 ] || fail "$1 server exited $RCM_SRC"
	[ "$RCM_CRC" -eq 0 ] || fail "$1 client exited $RCM_CRC"
}
