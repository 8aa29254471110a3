# shellcheck shell=bash
# bpftrace helpers for script tests (source after runner.sh).
#
# bpftrace needs tracefs for kernel tracepoints, and these machines do not mount it, so
# each bpftrace runs in a private mount namespace that mounts tracefs when it is missing
# (nothing changes for the rest of the system). USDT probes need no tracefs.

# bt_start VAR OUT SCRIPT [ARGS...]: run `bpftrace SCRIPT ARGS` in the background,
# output to OUT, bounded by 300 s; wait (bounded) until the script's BEGIN has printed
# its "Tracing ..." line, which bpftrace runs only once every probe is attached. Stores
# the PID in VAR and registers a stop. Skips when bpftrace is missing.
bt_start() {
	local var=$1 out=$2 pid i
	shift 2
	command -v bpftrace >/dev/null || skip "bpftrace is not installed (make deps)"
	# -B line: flush each line, so the test sees the BEGIN line at once
	BT_KILL_AFTER=$BT_KILL_AFTER unshare -m --propagation private sh -c '
		[ -d /sys/kernel/tracing/events ] ||
			mount -t tracefs tracefs /sys/kernel/tracing || exit 97
		exec timeout -s INT -k $BT_KILL_AFTER 300 bpftrace -B line "$@"' bt "$@" >"$out" 2>&1 &
	pid=$!
	on_exit "bt_halt $pid"
	printf -v "$var" '%s' "$pid"
	for ((i = 0; i < 600; i++)); do	# compiling a script takes seconds on a busy machine
		grep -q '^Tracing' "$out" 2>/dev/null && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	cat "$out" >&2
	fail "bpftrace $* did not start"
}

# bt_halt PID [OUT]: stop a bt_start'ed bpftrace, bounded: SIGINT (bpftrace then prints its
# maps and exits), sent again every second. bpftrace 0.17 reads its exit flag only when
# epoll_wait is interrupted, so a SIGINT that lands between two waits is lost (seen here:
# one lost SIGINT left bpftrace polling for good); the next one is not. timeout(1), which is
# PID, kills bpftrace BT_KILL_AFTER s after the first SIGINT; bt_halt waits longer than that,
# so a bpftrace that timeout had to kill shows as timeout's status 137, never as a clean
# exit (the old equal bounds of 40 s let a killed bpftrace pass for one that had ended with
# no summary). Past its own bound it kills bpftrace (PID's child) and PID by PID. With OUT,
# appends '# bt_halt: exit N, S s after SIGINT' to it, for the failure line (bt_tail).
# Returns 0 only when bpftrace exited by itself with status 0.
BT_KILL_AFTER=90
bt_halt() {
	local pid=$1 out=${2:-} i kid rc t0=$SECONDS
	for ((i = 0; i < (BT_KILL_AFTER + 15) * 10; i++)); do
		((i % 10 == 0)) && { kill -INT "$pid" 2>/dev/null || true; }
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		for kid in $(ps -o pid= --ppid "$pid"); do kill -KILL "$kid" 2>/dev/null; done
		kill -KILL "$pid" 2>/dev/null
	fi
	wait "$pid" 2>/dev/null
	rc=$?
	[ -n "$out" ] && echo "# bt_halt: exit $rc, $((SECONDS - t0)) s after SIGINT" >>"$out"
	return "$rc"
}

# bt_tail OUT: bpftrace's last lines in OUT, joined, for a failure's one line (CI's summary
# shows a failing test's verdict lines, not the output printed before them)
bt_tail() {
	printf '%s' "$(grep -v RLIMIT_MEMLOCK "$1" | tail -4 | tr '\n' '|')"
}

# bt_stop PID OUT: bt_halt, then show what it printed.
bt_stop() {
	local pid=$1 out=$2
	bt_halt "$pid" "$out" || fail "bpftrace $pid did not end by itself: $(bt_tail "$out")"
	echo "--- bpftrace output ($out):"
	grep -v RLIMIT_MEMLOCK "$out"
}
