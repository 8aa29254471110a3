# shellcheck shell=bash
# Helpers for the UCX and Open MPI tests (tests/ucx/): Debian's unmodified ucx_info,
# ucx_perftest and mpirun on blue through $B/compat (tests/lib/compat.sh compat_env),
# between two namespaces with blue attached on a veth pair. Source after netns.sh and
# compat.sh.
#
#   ucx_need                  skip (saying which) unless ucx_info, ucx_perftest, mpirun and
#                             mpicc are installed; fail unless the compat libraries are built
#   ucx_setup TAG IP_A IP_B   the namespaces UCX_NS_A/UCX_NS_B, joined by a veth pair whose
#                             two ends are both named UCX_IF (ucx_perftest's server takes the
#                             client's device name), blue attached on both ends; each host
#                             entered by ucx_in gets the /dev/infiniband node UCX wants
#   ucx_rc_v_env              UCX_ENV for UCP on blue's rc_verbs (the why: below)
#   ucx_in NS NAME CMD...     CMD in NS as a host of its own (tests/ucx/ns_enter.sh) with the
#                             compat libraries and UCX_ENV (NAME=VALUE words) in its env
#   ucx_perf_run LOG_S LOG_C SERVER_ARGS... -- CLIENT_ARGS...
#                             ucx_perftest's server in A and its client in B against A's
#                             address, both bounded; fails unless both exit 0
#   ucx_perf_check LOG ITERS  0 if LOG holds ucx_perftest's final result row, for ITERS
#   ucx_perf_figure LOG WHAT  "latency median 12.1 us, average 12.3 us" or "45.6 MB/s, 789 msg/s"
#   mpi_build OUT             tests/ucx/mpi_check.c built with mpicc into OUT
#   mpi_run LOG MPIRUN_ARGS...
#                             mpirun in A with one rank in A and one in B (a launch agent
#                             enters B: tests/ucx/ns_agent.sh), out-of-band traffic on the veth,
#                             bounded; the daemons it starts are ended by PID at the test's end
#   ucx_figure_record WHAT FIGURE
#                             a row of $BLUE_UCX_FIGURES (the figures for the closing note)
# The knobs a user may set (BLUE_UCX_FIGURES, BLUE_UCX_TIMEOUT) do not start with UCX_:
# UCX warns about every UCX_* variable in its environment that it does not know.
BLUE_UCX_FIGURES=${BLUE_UCX_FIGURES:-${B:-build}/test-logs/ucx.md}

# ucx_rc_v_env: UCX_ENV for UCP over blue (set after ucx_setup):
#  - UCX_TLS=rc_v: rc_verbs, with ud_verbs as the auxiliary transport of its wireup
#    (ucp_context.c's alias table); nothing else, since UCX takes posix/sysv/cma shared
#    memory for reachable between two namespaces of one host
#  - UCX_UD_VERBS_ETH_DGID_CHECK=n: UCX 1.13's ud_verbs takes the L3 type of a RoCE
#    datagram from wc.sl (mlx5's CQE: sl & 7 == 2 is IPv4) and, with sl 0 as rxe and blue
#    leave it, compares the GRH's last 16 bytes (IPv4 header bytes for RoCEv2/IPv4) with
#    its GIDs and drops every datagram: the wireup then times out (uct_ud_iface_check_grh;
#    UCX fixed it after 1.13, openucx/ucx#10209)
#  - UCX_SOCKADDR_TLS_PRIORITY=tcp: the sockaddr CM ucx_perftest's UCP wireup does not
#    need; tcp keeps these runs as they were measured (UCX's rdmacm CM opens on blue's
#    librdmacm since issue 16: test_ucx_info checks it is listed)
ucx_rc_v_env() {
	UCX_ENV="UCX_TLS=rc_v UCX_NET_DEVICES=$UCX_IF:1 UCX_UD_VERBS_ETH_DGID_CHECK=n"
	UCX_ENV+=" UCX_SOCKADDR_TLS_PRIORITY=tcp UCX_LOG_LEVEL=info"
}
BLUE_UCX_TIMEOUT=${BLUE_UCX_TIMEOUT:-60}

ucx_need() {
	local t
	for t in ucx_info ucx_perftest mpirun mpicc; do
		command -v "$t" >/dev/null ||
			skip "$t missing (make deps: ucx-utils, openmpi-bin, libopenmpi-dev)"
	done
	need_bins "$PWD/$B/compat/libibverbs.so.1" "$PWD/$B/compat/libmlx5.so.1" \
		"$PWD/$B/compat/librdmacm.so.1" "$PWD/$B/bin/bluectl"
	compat_env "$PWD/$B/compat"
}

ucx_setup() {
	local tag=$1
	[ "$(id -u)" -eq 0 ] || skip "needs root"
	ucx_need
	UCX_NS_A=blue-$tag-$BASHPID-a
	UCX_NS_B=blue-$tag-$BASHPID-b
	UCX_IF=${tag}$BASHPID
	UCX_IP_A=$2
	UCX_IP_B=$3
	# the device node UCX wants to see (tests/ucx/ns_enter.sh): "/dev/infiniband/" + the
	# dev_name the compat library gives the device (compat/device.c)
	export BLUE_NS_UVERBS=uverbs_blue_$UCX_IF
	netns_pair "$UCX_NS_A" "$UCX_NS_B" "$UCX_IF" "$UCX_IF" "$UCX_IP_A" "$UCX_IP_B"
	ns_exec "$UCX_NS_A" sysctl -qw "net.ipv6.conf.$UCX_IF.disable_ipv6=1"
	ns_exec "$UCX_NS_B" sysctl -qw "net.ipv6.conf.$UCX_IF.disable_ipv6=1"
	# shellcheck disable=SC2034 # blue_attach (netns.sh) reads it
	BLUECTL=$PWD/$B/bin/bluectl
	blue_attach "$UCX_NS_A" "$UCX_IF" || fail "bluectl attach $UCX_IF in $UCX_NS_A"
	blue_attach "$UCX_NS_B" "$UCX_IF" || fail "bluectl attach $UCX_IF in $UCX_NS_B"
}

ucx_in() {
	local ns=$1 name=$2; shift 2
	# shellcheck disable=SC2086 # UCX_ENV's words split on purpose
	tests/ucx/ns_enter.sh "$ns" "$name" "${COMPAT_ENV[@]}" ${UCX_ENV:-} "$@"
}

# ucx_bg VAR NS NAME CMD...: ucx_in in the background; its PID in VAR, ended at exit
ucx_bg() {
	local var=$1; shift
	ucx_in "$@" &
	printf -v "$var" '%s' $!
	on_exit "kill $! 2>/dev/null; wait $! 2>/dev/null"
}

# ucx_wait_listen NS PORT SECONDS: 0 once a TCP socket listens on PORT in NS
ucx_wait_listen() {
	local i
	for ((i = 0; i < $3 * 20; i++)); do
		ns_exec "$1" ss -Hltn "sport = :$2" 2>/dev/null | grep -q LISTEN && return 0
		sleep 0.05
	done
	return 1
}

ucx_perf_run() {
	local slog=$1 clog=$2 spid src=0 crc=0 port sargs=() cargs=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do sargs+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	cargs=("$@")
	port=$UCX_PORT
	ucx_bg spid "$UCX_NS_A" ucxa timeout -k 5 "$BLUE_UCX_TIMEOUT" ucx_perftest -p "$port" \
		"${sargs[@]}" >"$slog" 2>&1
	ucx_wait_listen "$UCX_NS_A" "$port" 20 ||
		{ cat "$slog"; fail "ucx_perftest's server did not listen on $port"; }
	ucx_in "$UCX_NS_B" ucxb timeout -k 5 "$BLUE_UCX_TIMEOUT" ucx_perftest -p "$port" \
		"${cargs[@]}" "$UCX_IP_A" >"$clog" 2>&1 || crc=$?
	wait "$spid" || src=$?
	echo "--- server: ucx_perftest ${sargs[*]}"; cat "$slog"
	echo "--- client: ucx_perftest ${cargs[*]}"; cat "$clog"
	[ "$src" -eq 0 ] || fail "ucx_perftest's server exited $src$(ucx_perf_why "$slog")"
	[ "$crc" -eq 0 ] || fail "ucx_perftest's client exited $crc$(ucx_perf_why "$clog")"
}

# ucx_perf_why LOG: ": " and LOG's first error lines, joined, for a failure's one line (CI
# shows a failing test's verdict lines, not always the logs printed before them)
ucx_perf_why() {
	local why
	why=$(grep -v 'UCX  DIAG' "$1" | grep -m3 -iE 'UCX +ERROR|error|failed|abort' | tr '\n' ' ')
	[ -z "$why" ] || printf ': %s' "$why"
}

# ucx_perftest 1.13 prints a table (src/tools/perf/perftest_run.c, print_header and
# print_progress) whose rows are
#   Stage | # iterations | latency (usec): 50.0%ile average overall |
#   bandwidth (MB/s): average overall | message rate (msg/s): average overall
# and, once the run is over, a "Final:" row with the same columns (the client's side):
#   Final:  ITERS  P50  LAT_AVG  LAT_OVERALL  BW_AVG  BW_OVERALL  MR_AVG  MR_OVERALL
# ucx_perf_check LOG ITERS: the Final row is there and reports ITERS.
ucx_perf_check() {
	local log=$1 iters=$2 row
	row=$(tr -d '\r' <"$log" | grep -E '^Final: ' | tail -1)
	[ -n "$row" ] || { echo "$log: no \"Final:\" result row" >&2; return 1; }
	[ "$(awk '{ print $2 }' <<<"$row")" = "$iters" ] ||
		{ echo "$log: the Final row reports $(awk '{ print $2 }' <<<"$row") iterations, want $iters" >&2; return 1; }
}

# ucx_perf_figure LOG WHAT: a latency test's (WHAT names *_lat) median and average, or a
# bandwidth test's overall bandwidth and message rate
ucx_perf_figure() {
	tr -d '\r' <"$1" | grep -E '^Final: ' | tail -1 | awk -v lat="$([[ $2 == *_lat* ]] && echo 1)" '{
		if (lat) printf "latency median %s us, average %s us\n", $3, $5
		else printf "%s MB/s, %s msg/s\n", $7, $9 }'
}

ucx_figure_record() {
	mkdir -p "$(dirname "$BLUE_UCX_FIGURES")"
	if [ ! -s "$BLUE_UCX_FIGURES" ]; then
		printf '| run | figure |\n|---|---|\n' >"$BLUE_UCX_FIGURES"
	fi
	printf '| %s | %s |\n' "$1" "$2" >>"$BLUE_UCX_FIGURES"
}

# ucx_figures_reset: the rows of the last run go (each test run writes its own)
ucx_figures_reset() {
	rm -f "$BLUE_UCX_FIGURES"
}

mpi_build() {
	mpicc -O2 -Wall -Wextra -Werror -o "$1" tests/ucx/mpi_check.c ||
		fail "mpicc could not build tests/ucx/mpi_check.c"
}

# mpi_run LOG ARGS...: `mpirun -np 2 --host IP_A,IP_B ARGS...` started in A (so the rank on
# IP_A runs there; mpirun recognizes its own address) whose daemon for IP_B is started in B
# by ns_agent.sh. The out-of-band channel (ORTE's oob tcp) is kept to the veth, so the two
# namespaces talk over nothing else. Open MPI refuses root unless told twice (the flag and
# the two variables). The exit status is mpirun's; its output goes to LOG and stdout.
mpi_run() {
	local log=$1 rc=0 pids fwd=(-x LD_LIBRARY_PATH)
	shift
	# under SAN=1 the ranks need the ASan runtime first, as the tools do (compat_env)
	[[ " ${COMPAT_ENV[*]} " == *" LD_PRELOAD="* ]] && fwd+=(-x LD_PRELOAD -x ASAN_OPTIONS)
	pids=$(mktemp)
	on_exit "_mpi_kill_daemons $pids"
	export BLUE_NS_HOSTS="$UCX_IP_A=$UCX_NS_A=ucxa $UCX_IP_B=$UCX_NS_B=ucxb"
	export BLUE_NS_PIDS=$pids
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	# two UCP runs one after the other in each rank, each as long as a ucx_perftest run
	ucx_in "$UCX_NS_A" ucxa timeout -k 5 $((2 * BLUE_UCX_TIMEOUT)) mpirun --allow-run-as-root \
		-np 2 --host "$UCX_IP_A,$UCX_IP_B" \
		--mca plm_rsh_agent "$PWD/tests/ucx/ns_agent.sh" \
		--mca oob_tcp_if_include "$UCX_IF" \
		"${fwd[@]}" "$@" >"$log" 2>&1 || rc=$?
	cat "$log"
	return "$rc"
}

_mpi_kill_daemons() {
	local p
	[ -f "$1" ] || return 0
	while read -r p; do
		kill "$p" 2>/dev/null || true
	done <"$1"
	rm -f "$1"
}
