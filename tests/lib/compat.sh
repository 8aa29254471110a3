# shellcheck shell=bash
# Helpers for the compatibility tests (tests/compat/): unmodified rdma-core tools
# (ibv_rc_pingpong, perftest) run on libblue through $B/compat/libibverbs.so.1.
# Source it from a test script; it needs only bash, awk and sed.
#
#   compat_perftest_check LOG ITERS   0 if LOG holds perftest's result table and every
#                                     row reports ITERS iterations (why not: stderr)
#   compat_perftest_figure LOG        the headline figure of that table, one line:
#                                     "0.24 Gb/s, 0.007179 Mpps" (BW) or
#                                     "t_typical 21.94 us" (latency)
#   compat_srv_prints_table TOOL      0 if perftest's TOOL prints the result table on the
#                                     server side too (COMPAT_SRV_TABLE), so that the
#                                     server's report must be checked as well
#   compat_pingpong_check LOG ITERS SIZE
#                                     0 if LOG holds ibv_rc_pingpong's two summary lines
#                                     for ITERS round trips of SIZE bytes
#   compat_pingpong_figure LOG        "12.34 us/iter, 56.78 Mbit/s"
#                                     (both: ibv_ud_pingpong and ibv_srq_pingpong print
#                                     the same two lines)
#   compat_pingpong_remotes LOG       how many "remote address:" lines LOG has (one per
#                                     peer QP: ibv_srq_pingpong connects 16)
#   compat_perftest_conn LOG TYPE     0 if perftest's banner in LOG says "Connection
#                                     type : TYPE" (RC, UD)
#   compat_record_reset PEER          drop PEER's rows from the results table (a run
#                                     replaces its own rows, never the other script's)
#   compat_record TOOL ROLE PEER STATUS FIGURE
#                                     append one row to the results table
#   compat_record_at_exit TOOL ROLE PEER
#                                     in a runner.sh test: at the test's end, record a
#   compat_passed FIGURE              "pass" row with the FIGURE given to compat_passed
#                                     (called once every check has passed), else "FAIL"
#   compat_env LIBDIR                 COMPAT_ENV=(env ...): what an unmodified binary needs
#                                     to load the compat library in LIBDIR
#
# The results table is $COMPAT_RESULTS (default $B/test-logs/compat-matrix.md), a
# markdown table the README quotes: tool, blue's role, the peer stack, pass/fail, and the
# figure the run printed. Both tests/compat scripts write to it, one row per tool run.
COMPAT_RESULTS=${COMPAT_RESULTS:-${B:-build}/test-logs/compat-matrix.md}

# perftest servers that print the result table too; ib_read_lat's and ib_atomic_lat's
# print none, the client alone measures (rxe's own output, tests/compat/samples)
COMPAT_SRV_TABLE=" ib_write_bw ib_read_bw ib_send_bw ib_atomic_bw ib_write_lat ib_send_lat "

compat_srv_prints_table() {
	[[ "$COMPAT_SRV_TABLE" == *" $1 "* ]]
}

# _compat_table LOG: perftest's result rows as "HEADER|ROW", one per row. The table
# is a header line that starts with "#bytes #iterations", then one row per message size,
# closed by a dashed line (perftest_parameters.h, RESULT_LINE / REPORT_FMT*)
_compat_table() {
	tr -d '\r' <"$1" | awk '
		/^ *#bytes +#iterations/ { hdr = $0; intab = 1; next }
		intab && /^ *[0-9]+ +[0-9]+ / { print hdr "|" $0; next }
		{ intab = 0 }'
}

compat_perftest_check() {
	local log=$1 iters=$2 rows bad
	[ -r "$log" ] || { echo "compat_perftest_check: $log: no such file" >&2; return 1; }
	rows=$(_compat_table "$log")
	if [ -z "$rows" ]; then
		echo "$log: no perftest result table (#bytes #iterations ...)" >&2
		return 1
	fi
	bad=$(awk -F'|' -v n="$iters" '{ split($2, f, " "); if (f[2] != n) print f[2] }' <<<"$rows")
	if [ -n "$bad" ]; then
		echo "$log: result table reports $(tr '\n' ' ' <<<"$bad")iterations, want $iters" >&2
		return 1
	fi
	return 0
}

# The columns are fixed per kind of test (perftest_parameters.h REPORT_FMT, REPORT_FMT_LAT):
# BW: #bytes #iterations peak average MsgRate; latency: #bytes #iterations t_min t_max
# t_typical ... The units come from the header ("BW average[Gb/sec]" with --report_gbits,
# "[MB/sec]" without).
compat_perftest_figure() {
	_compat_table "$1" | tail -1 | awk -F'|' '
		{
			split($2, f, " ")
			if (match($1, /BW average\[[^]]*\]/)) {
				u = substr($1, RSTART + 11, RLENGTH - 12); sub(/sec$/, "s", u)
				r = "Mpps"
				if (match($1, /MsgRate\[[^]]*\]/))
					r = substr($1, RSTART + 8, RLENGTH - 9)
				print f[4] " " u ", " f[5] " " r
			} else if ($1 ~ /t_typical\[usec\]/) {
				print "t_typical " f[5] " us"
			}
		}'
}

# rc_pingpong prints "<2*SIZE*ITERS> bytes in S seconds = M Mbit/sec" and
# "<ITERS> iters in S seconds = U usec/iter" (rdma-core libibverbs/examples/rc_pingpong.c)
compat_pingpong_check() {
	local log=$1 iters=$2 size=$3
	tr -d '\r' <"$log" | grep -qE "^$((2 * size * iters)) bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec$" ||
		{ echo "$log: no \"$((2 * size * iters)) bytes in ... Mbit/sec\" line" >&2; return 1; }
	tr -d '\r' <"$log" | grep -qE "^$iters iters in [0-9.]+ seconds = [0-9.]+ usec/iter$" ||
		{ echo "$log: no \"$iters iters in ... usec/iter\" line" >&2; return 1; }
}

compat_pingpong_figure() {
	tr -d '\r' <"$1" | awk '
		/ bytes in .* Mbit\/sec$/ { mb = $(NF - 1) }
		/ iters in .* usec\/iter$/ { us = $(NF - 1) }
		END { if (us != "") print us " us/iter, " mb " Mbit/s" }'
}

compat_pingpong_remotes() {
	tr -d '\r' <"$1" | grep -c '^  remote address: '
}

compat_perftest_conn() {
	tr -d '\r' <"$1" | grep -qE "^ Connection type : $2([[:space:]]|\$)" ||
		{ echo "$1: no \"Connection type : $2\" in perftest's banner" >&2; return 1; }
}

compat_record_reset() {
	local peer=$1 tmp
	[ -f "$COMPAT_RESULTS" ] || return 0
	tmp=$(mktemp "$COMPAT_RESULTS.XXXXXX")
	awk -F'|' -v p="$peer" '{ x = $4; gsub(/^ +| +$/, "", x) } NR <= 2 || x != p' \
		"$COMPAT_RESULTS" >"$tmp"
	mv "$tmp" "$COMPAT_RESULTS"
}

compat_record() {
	local tool=$1 role=$2 peer=$3 status=$4 figure=${5:-}
	mkdir -p "$(dirname "$COMPAT_RESULTS")"
	if [ ! -s "$COMPAT_RESULTS" ]; then
		printf '| tool | blue role | peer | result | figure |\n' >"$COMPAT_RESULTS"
		printf '|---|---|---|---|---|\n' >>"$COMPAT_RESULTS"
	fi
	printf '| %s | %s | %s | %s | %s |\n' "$tool" "$role" "$peer" "$status" \
		"${figure:--}" >>"$COMPAT_RESULTS"
}

# runner.sh runs a test's on_exit commands in the test's own subshell, so they see
# COMPAT_PASS_FIGURE as the test left it: set only if the test got to compat_passed
compat_record_at_exit() {
	COMPAT_PASS_FIGURE=
	on_exit "_compat_record_exit $(printf '%q ' "$1" "$2" "$3")"
}

compat_passed() {
	COMPAT_PASS_FIGURE=${1:--}
}

_compat_record_exit() {
	if [ -n "${COMPAT_PASS_FIGURE:-}" ]; then
		compat_record "$1" "$2" "$3" pass "$COMPAT_PASS_FIGURE"
	else
		compat_record "$1" "$2" "$3" FAIL "see the test log"
	fi
}

# Under SAN=1 the library is built with ASan, whose runtime must come first in a process
# that was not built with it: preload it. Leak checking stays off: it would report the
# tools' own leaks (perftest frees little at exit), not ours.
compat_env() {
	COMPAT_ENV=(env LD_LIBRARY_PATH="$1")
	if ldd "$1/libibverbs.so.1" 2>/dev/null | grep -q libasan; then
		COMPAT_ENV+=(LD_PRELOAD="$(gcc -print-file-name=libasan.so)" ASAN_OPTIONS=detect_leaks=0)
	fi
}
