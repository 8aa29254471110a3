# shellcheck shell=bash
# bpftrace helpers for script tests (source after runner.sh).
#
# bpftrace needs tracefs for kernel tracepoints, and these machines do not mount it, so
# each bpftrace runs in a private mount namespace that mounts tracefs when it is missing
# (nothing changes for the rest of the system). USDT probes need no tracefs.

# bt_start VAR OUT SCRIPT [ARGS...]: run `bpftrace SCRIPT ARGS` in the background,
# output to OUT, bounded by 120 s; wait (bounded) until the script's BEGIN has printed
# its "Tracing ..." line, which bpftrace runs only once every probe is attached. Stores
# the PID in VAR and registers a stop. Skips when bpftrace is missing.
bt_start() {
	local var=$1 out=$2 pid i
	shift 2
	command -v bpftrace >/dev/null || skip "bpftrace is not installed (make deps)"
	# -B line: flush each line, so the test sees the BEGIN line at once
	unshare -m --propagation private sh -c '
		[ -d /sys/kernel/tracing/events ] ||
			mount -t tracefs tracefs /sys/kernel/tracing || exit 97
		exec timeout -s INT -k 10 120 bpftrace -B line "$@"' bt "$@" >"$out" 2>&1 &
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

# bt_halt PID: stop a bt_start'ed bpftrace, bounded: SIGINT (bpftrace then prints its
# maps and exits), sent again every second for 20 s. bpftrace 0.17 checks its exit flag
# between epoll_wait calls, so a signal that lands just before it sleeps is seen only at
# the next event, and once the traced program has exited there is none (seen here: one
# lost SIGINT left bpftrace waiting for good, holding the test's output pipe open). Past
# that, bpftrace itself (the child of PID, which is timeout(1)) and PID are killed by PID;
# killing timeout alone would leave bpftrace running. Returns 1 if it had to kill.
bt_halt() {
	local pid=$1 i kid
	for ((i = 0; i < 200; i++)); do
		((i % 10 == 0)) && { kill -INT "$pid" 2>/dev/null || true; }
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		for kid in $(ps -o pid= --ppid "$pid"); do kill -KILL "$kid" 2>/dev/null; done
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		return 1
	fi
	wait "$pid" 2>/dev/null
	return 0
}

# bt_stop PID OUT: bt_halt, then show what it printed.
bt_stop() {
	local pid=$1 out=$2
	bt_halt "$pid" || fail "bpftrace $pid did not stop"
	echo "--- bpftrace output ($out):"
	grep -v RLIMIT_MEMLOCK "$out"
}
