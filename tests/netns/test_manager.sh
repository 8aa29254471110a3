# shellcheck shell=bash
# Daemon mode (issue 17, first slice): blue-manager owns the one queue of each end of a
# veth pair, and several libblue processes share it at once.
#  - three blue_xfer pairs at once through the two daemons, every payload checked with
#    CRC-32 on the other side (WRITE, READ, SEND at 1 B, 4 KiB, 64 KiB, and the atomics);
#    while the daemon holds the queue, a library-mode process is refused it, with a
#    message; BLUE_MODE=daemon where no daemon runs fails, saying what to start;
#  - a client killed with SIGKILL mid-transfer: the transfer beside it still passes, and
#    a new process is served afterwards;
#  - the daemon stops on SIGTERM and a library-mode process gets the queue back.
# Run: B=build bash tests/lib/runner.sh tests/netns/test_manager.sh
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh
# shellcheck source=tests/lib/manager.sh
source tests/lib/manager.sh

BLUECTL=$PWD/$B/bin/bluectl
XFER=$PWD/$B/bin/blue_xfer
IP_A=10.201.97.1	# servers
IP_B=10.201.97.2	# clients
PORT0=18710

# mgr_setup [ARGS]: the pair, blue attached on both ends, a blue-manager on each (with
# ARGS). Sets NS_A
# NS_B IF_A IF_B MGR_A MGR_B (their PIDs) and LOGS (a directory, removed at exit).
mgr_setup() {
	netns_setup mgr "$IP_A" "$IP_B"
	need_bins "$BLUECTL" "$XFER"
	blue_attach "$NS_A" "$IF_A" || fail "attach $IF_A"
	blue_attach "$NS_B" "$IF_B" || fail "attach $IF_B"
	LOGS=$(mktemp -d)
	on_exit "rm -rf $LOGS"
	mgr_start "$NS_A" "$IF_A" MGR_A "$LOGS/mgr-a" "$@"
	mgr_start "$NS_B" "$IF_B" MGR_B "$LOGS/mgr-b" "$@"
}

# held_qps NS IF: the QPs blue-manager's default tenant holds now
held_qps() {
	ns_exec "$1" "$BLUECTL" tenant show "$2" default | awk 'NR == 2 { split($5, q, "/"); print q[1] }'
}

# xfer_server I: a daemon-mode blue_xfer server in NS_A on port PORT0+I; sets SPID_I.
xfer_server() {
	ns_bg "$NS_A" "SPID_$1" timeout 120 env BLUE_MODE=daemon "$XFER" -d "$IF_A" \
		-p $((PORT0 + $1)) -T 30 >"$LOGS/srv-$1" 2>&1
}

# xfer_client I ARGS...: its client in NS_B, in the background; sets CPID_I.
xfer_client() {
	local i=$1
	shift
	ns_bg "$NS_B" "CPID_$i" timeout 120 env BLUE_MODE=daemon "$XFER" -d "$IF_B" \
		-p $((PORT0 + i)) -T 30 "$@" "$IP_A" >"$LOGS/cli-$i" 2>&1
}

# pair_passed I: both sides of pair I exited 0 and said PASS.
pair_passed() {
	local i=$1 cpid spid
	cpid=CPID_$i
	spid=SPID_$i
	wait "${!cpid}" || { cat "$LOGS/cli-$i" "$LOGS/srv-$i"; fail "client $i exited non-zero"; }
	wait "${!spid}" || { cat "$LOGS/srv-$i"; fail "server $i exited non-zero"; }
	grep -q '^RESULT: PASS' "$LOGS/cli-$i" || { cat "$LOGS/cli-$i"; fail "client $i: no PASS"; }
	grep -q '^server: PASS' "$LOGS/srv-$i" || { cat "$LOGS/srv-$i"; fail "server $i: no PASS"; }
}

test_manager_three_processes_share_one_queue() {
	mgr_setup
	local i out
	for i in 1 2 3; do
		xfer_server $i
	done
	sleep 0.5
	for i in 1 2 3; do
		xfer_client $i --op write,read,send,cas,faa --size 1,4K,64K --verify
	done
	# while they run: the queue is the daemon's, and a library-mode process says so
	out=$(ns_exec "$NS_B" timeout 20 env BLUE_MODE=library "$XFER" -d "$IF_B" -p $((PORT0 + 9)) \
		-T 2 "$IP_A" 2>&1) && fail "a library-mode process got the daemon's queue"
	grep -q "another process (or context) has blue open on queue 0" <<<"$out" ||
		fail "the refusal did not say why: $out"
	for i in 1 2 3; do
		pair_passed $i
		echo "pair $i: $(grep -c ' OK$' "$LOGS/cli-$i") rounds OK"
		# 3 ops x 3 sizes + 2 atomics, and the latency rounds at 1 B and 4 KiB
		[ "$(grep -c ' OK$' "$LOGS/cli-$i")" -ge 11 ] || fail "pair $i: rounds missing"
	done
	kill -0 "$MGR_A" && kill -0 "$MGR_B" || fail "a daemon died"
}

test_manager_daemon_mode_without_a_daemon_says_what_to_start() {
	netns_setup mgrn "$IP_A" "$IP_B"
	need_bins "$BLUECTL" "$XFER"
	blue_attach "$NS_B" "$IF_B" || fail "attach"
	local out
	out=$(ns_exec "$NS_B" timeout 20 env BLUE_MODE=daemon "$XFER" -d "$IF_B" -T 2 "$IP_A" 2>&1) &&
		fail "BLUE_MODE=daemon opened without a daemon"
	grep -q "no blue-manager serves it here.*start \`blue-manager -d $IF_B\`" <<<"$out" ||
		fail "no message naming blue-manager: $out"
	out=$(ns_exec "$NS_B" timeout 20 env BLUE_MODE=bogus "$XFER" -d "$IF_B" -T 2 "$IP_A" 2>&1) &&
		fail "BLUE_MODE=bogus opened"
	grep -q "BLUE_MODE=bogus: not a mode" <<<"$out" || fail "no message for BLUE_MODE=bogus: $out"
}

test_manager_killed_client_leaves_the_others_served() {
	mgr_setup
	xfer_server 1
	xfer_server 2
	sleep 0.5
	# pair 1 runs long enough to be killed in the middle; pair 2 beside it
	xfer_client 1 --op write --size 64K --iters 200000
	xfer_client 2 --op write,read --size 4K,64K --verify
	wait_for_line "$LOGS/cli-1" "connected (RTS)" 20 "$CPID_1" || fail "client 1 never connected"
	sleep 0.5
	# the process itself, not the timeout(1) above it (which would not pass SIGKILL on)
	local victim
	victim=$(ps -o pid= --ppid "$CPID_1" | tr -d ' ')
	[ -n "$victim" ] || fail "client 1 has no process under its timeout"
	kill -9 "$victim"
	wait "$CPID_1" 2>/dev/null || true
	grep -q '^RESULT' "$LOGS/cli-1" && fail "client 1 finished before it was killed"
	# its peer sees it fail, in bounded time, on its own
	for _ in $(seq 1 200); do
		kill -0 "$SPID_1" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$SPID_1" 2>/dev/null && fail "the killed client's peer did not notice within 20 s"
	wait "$SPID_1" && fail "the killed client's peer reported success"
	pair_passed 2
	# what the killed one made is gone, and a new process is served
	xfer_server 3
	sleep 0.5
	xfer_client 3 --op write --size 4K --verify
	pair_passed 3
	kill -0 "$MGR_A" && kill -0 "$MGR_B" || fail "a daemon died"
	# every process has gone: their QPs are the pool's again
	[ "$(held_qps "$NS_A" "$IF_A")" = 0 ] || fail "$IF_A's daemon still holds QPs"
	[ "$(held_qps "$NS_B" "$IF_B")" = 0 ] || fail "$IF_B's daemon still holds QPs"
}

# blue-manager --supervise killed with SIGKILL in the middle of a transfer: the process
# on that side gets WR_FLUSH_ERR completions and a message at once (never a hang: it
# must be gone well within its own 30 s timeout), the supervisor starts the daemon again,
# and a new pair is served and verified.
test_manager_daemon_killed_is_restarted() {
	mgr_setup --supervise
	local daemon
	xfer_server 1
	sleep 0.5
	xfer_client 1 --op write --size 64K --iters 200000 --lat-iters 0
	wait_for_line "$LOGS/cli-1" "connected (RTS)" 20 "$CPID_1" || fail "client 1 never connected"
	sleep 0.5
	# timeout(1) -> the supervisor -> the daemon
	daemon=$(pgrep -P "$(pgrep -P "$MGR_B" | head -n 1)" | head -n 1)
	[ -n "$daemon" ] || fail "no daemon under the supervisor"
	kill -9 "$daemon"
	for _ in $(seq 1 100); do
		kill -0 "$CPID_1" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$CPID_1" 2>/dev/null && fail "a client of the killed daemon still runs after 10 s"
	wait "$CPID_1" && fail "a client of the killed daemon reported success"
	cat "$LOGS/cli-1"
	grep -q "blue-manager has gone" "$LOGS/cli-1" || fail "the client was not told the daemon went"
	grep -q "Work Request Flushed Error" "$LOGS/cli-1" || fail "no flushed completions"
	kill "$SPID_1" 2>/dev/null || true	# its server may have ended already
	wait "$SPID_1" 2>/dev/null || true
	wait_for_line "$LOGS/mgr-b" "killed by signal 9; starting it again (restart 1)" 10 "$MGR_B" ||
		{ cat "$LOGS/mgr-b"; fail "the supervisor did not restart the daemon"; }
	for _ in $(seq 1 100); do
		[ "$(grep -c "^blue-manager: serving $IF_B queue 0" "$LOGS/mgr-b")" -ge 2 ] && break
		sleep 0.1
	done
	[ "$(grep -c "^blue-manager: serving $IF_B queue 0" "$LOGS/mgr-b")" -ge 2 ] ||
		{ cat "$LOGS/mgr-b"; fail "the restarted daemon does not serve"; }
	xfer_server 2
	sleep 0.5
	xfer_client 2 --op write,read,send --size 4K,64K --verify
	pair_passed 2
}

test_manager_stops_and_gives_the_queue_back() {
	mgr_setup
	kill -TERM "$MGR_A" "$MGR_B"
	wait "$MGR_A" || fail "blue-manager on $IF_A exited non-zero"
	wait "$MGR_B" || fail "blue-manager on $IF_B exited non-zero"
	SRV_OUT=$LOGS/srv-lib
	CLI_OUT=$LOGS/cli-lib
	SRV_ENV=BLUE_MODE=auto CLI_ENV=BLUE_MODE=auto xfer_ab -- --op write --size 4K --verify
	[ "$CRC" -eq 0 ] && [ "$SRC" -eq 0 ] || fail "library mode after the daemon: $CRC/$SRC"
	grep -q '^RESULT: PASS' "$CLI_OUT" || fail "no PASS in library mode"
}
