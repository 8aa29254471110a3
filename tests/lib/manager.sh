# shellcheck shell=bash
# blue-manager for script tests: start one on a netdev of a namespace and wait until it
# serves. Needs tests/lib/netns.sh (ns_bg, wait_for_line, fail) sourced first.
MGR=${MGR:-$PWD/$B/bin/blue-manager}

# mgr_start NS IF PIDVAR LOG [ARGS...]: blue-manager -d IF in NS, bounded by a timeout,
# its output in LOG; PIDVAR gets its PID (ended by netns.sh's cleanup, by PID).
mgr_start() {
	local ns=$1 ifname=$2 var=$3 log=$4
	shift 4
	need_bins "$MGR"
	ns_bg "$ns" "$var" timeout 600 "$MGR" -d "$ifname" "$@" >"$log" 2>&1
	wait_for_line "$log" "^blue-manager: serving $ifname queue 0" 10 "${!var}" ||
		{ cat "$log"; fail "blue-manager did not start on $ifname"; }
}

# mgr_signal SIG PID: SIG to the blue-manager that mgr_start's PID runs (the timeout
# wrapper's child: timeout relays only the signals that end a process)
mgr_signal() {
	local child
	child=$(pgrep -P "$2" | head -n 1)
	[ -n "$child" ] || fail "blue-manager (under PID $2) is not running"
	kill "-$1" "$child"
}
