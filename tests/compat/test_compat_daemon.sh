# shellcheck shell=bash
# Unmodified libibverbs programs in daemon mode (issue 17): the Debian perftest and
# ibv_rc_pingpong binaries load $B/compat/libibverbs.so.1 with BLUE_MODE=daemon, so each
# opens the device through the blue-manager of its namespace (a library-mode fallback
# would fail: daemon mode is forced), and register the memory they allocate themselves
# (posix_memalign, malloc), which the engine reaches with process_vm. No progress thread
# runs in the programs: the daemon's engine answers perftest's servers while they sleep
# in a TCP read. Each run passes on both exit statuses and the tool's own report; the
# pingpongs also check every byte they receive (-c): RC polling and in event mode (-e),
# and SRQ; UD runs ibv_ud_pingpong and ib_send_bw -c UD. Then three processes per namespace at once, MPI-style: two ib_write_bw pairs
# and an rc_pingpong pair on one queue each end. And rdma_cm (the daemon's shared QP1):
# rping across two daemons, and between processes of one.
# Run: B=build bash tests/lib/runner.sh tests/compat/test_compat_daemon.sh
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh
# shellcheck source=tests/lib/compat.sh
source tests/lib/compat.sh
# shellcheck source=tests/lib/manager.sh
source tests/lib/manager.sh

BLUECTL=$PWD/$B/bin/bluectl
CD_LIB=$PWD/$B/compat
CD_IP_A=10.201.98.1	# servers
CD_IP_B=10.201.98.2	# clients

cd_setup() {
	local t
	need_bins "$CD_LIB/libibverbs.so.1" "$BLUECTL"
	for t in ib_write_bw ib_write_lat ib_read_bw ib_send_lat ib_atomic_bw ibv_rc_pingpong \
		 ibv_srq_pingpong ibv_ud_pingpong; do
		[ -x "/usr/bin/$t" ] || skip "/usr/bin/$t missing (make deps: ibverbs-utils, perftest)"
	done
	compat_env "$CD_LIB"
	COMPAT_ENV+=(BLUE_MODE=daemon)
	netns_setup cd "$CD_IP_A" "$CD_IP_B"
	blue_attach "$NS_A" "$IF_A" || fail "attach $IF_A"
	blue_attach "$NS_B" "$IF_B" || fail "attach $IF_B"
	LOGS=$(mktemp -d)
	on_exit "rm -rf $LOGS"
	mgr_start "$NS_A" "$IF_A" MGR_A "$LOGS/mgr-a"
	mgr_start "$NS_B" "$IF_B" MGR_B "$LOGS/mgr-b"
}

# cd_wait_listen NS PORT: 0 once a TCP socket listens on PORT in NS (10 s at most).
cd_wait_listen() {
	local i
	for ((i = 0; i < 200; i++)); do
		ns_exec "$1" ss -Hltn "sport = :$2" 2>/dev/null | grep -q LISTEN && return 0
		sleep 0.05
	done
	return 1
}

# cd_server NAME TOOL PORT ARGS...: TOOL's server in NS_A, in the background (PID in
# SPID_NAME, log in $LOGS/NAME.srv), up and listening on PORT when this returns.
cd_server() {
	local name=$1 tool=$2 port=$3
	shift 3
	ns_bg "$NS_A" "SPID_$name" timeout 60 "${COMPAT_ENV[@]}" "/usr/bin/$tool" -d "$IF_A" "$@" \
		>"$LOGS/$name.srv" 2>&1
	cd_wait_listen "$NS_A" "$port" || { cat "$LOGS/$name.srv"; fail "$tool did not listen on $port"; }
}

# cd_client NAME TOOL ARGS...: its client in NS_B, in the background (CPID_NAME).
cd_client() {
	local name=$1 tool=$2
	shift 2
	ns_bg "$NS_B" "CPID_$name" timeout 60 "${COMPAT_ENV[@]}" "/usr/bin/$tool" -d "$IF_B" "$@" \
		"$CD_IP_A" >"$LOGS/$name.cli" 2>&1
}

# cd_done NAME: both sides exited 0 (their logs shown either way).
cd_done() {
	local name=$1 c s rc=0 src=0
	c=CPID_$name
	s=SPID_$name
	wait "${!c}" || rc=$?
	wait "${!s}" || src=$?
	echo "--- $name: server"; cat "$LOGS/$name.srv"
	echo "--- $name: client"; cat "$LOGS/$name.cli"
	[ "$src" -eq 0 ] || fail "$name: the server exited $src"
	[ "$rc" -eq 0 ] || fail "$name: the client exited $rc"
}

# cd_perf TOOL ITERS PORT ARGS...: one perftest pair, both reports checked.
cd_perf() {
	local tool=$1 iters=$2 port=$3
	shift 3
	cd_setup
	cd_server p "$tool" "$port" -x 1 -p "$port" -n "$iters" "$@"
	cd_client p "$tool" -x 1 -p "$port" -n "$iters" "$@"
	cd_done p
	compat_perftest_check "$LOGS/p.cli" "$iters" || fail "$tool: the client's report"
	if compat_srv_prints_table "$tool"; then
		compat_perftest_check "$LOGS/p.srv" "$iters" || fail "$tool: the server's report"
	fi
	cd_served_by_daemons
	echo "$tool (daemon mode): $(compat_perftest_figure "$LOGS/p.cli")"
}

# The programs were the daemons' clients: each blue-manager saw sessions come and go.
cd_served_by_daemons() {
	kill -TERM "$MGR_A" "$MGR_B"
	wait "$MGR_A" || fail "blue-manager on $IF_A exited non-zero"
	wait "$MGR_B" || fail "blue-manager on $IF_B exited non-zero"
	grep -qE "sessions served: [1-9]" "$LOGS/mgr-a" || { cat "$LOGS/mgr-a"; fail "$IF_A's daemon served no session"; }
	grep -qE "sessions served: [1-9]" "$LOGS/mgr-b" || { cat "$LOGS/mgr-b"; fail "$IF_B's daemon served no session"; }
}

test_daemon_write_bw() { cd_perf ib_write_bw 500 18721 -s 65536 --report_gbits; }
test_daemon_write_lat() { cd_perf ib_write_lat 500 18722; }
test_daemon_read_bw() { cd_perf ib_read_bw 500 18723 -s 16384 --report_gbits; }
test_daemon_send_lat() { cd_perf ib_send_lat 500 18724; }
test_daemon_atomic_bw() { cd_perf ib_atomic_bw 500 18725 --report_gbits; }

# ibv_rc_pingpong -c: every received buffer compared with what the other side sent.
test_daemon_rc_pingpong_checked() {
	cd_setup
	cd_server pp ibv_rc_pingpong 18726 -g 1 -p 18726 -s 4096 -n 200 -c
	cd_client pp ibv_rc_pingpong -g 1 -p 18726 -s 4096 -n 200 -c
	cd_done pp
	compat_pingpong_check "$LOGS/pp.srv" 200 4096 || fail "server summary"
	compat_pingpong_check "$LOGS/pp.cli" 200 4096 || fail "client summary"
	cd_served_by_daemons
}

# ibv_rc_pingpong -e: completion channels, the daemon raising each event on the socket
# the program's channel handed it, the program asleep in ibv_get_cq_event between them.
test_daemon_rc_pingpong_events() {
	cd_setup
	cd_server ev ibv_rc_pingpong 18730 -g 1 -p 18730 -s 4096 -n 200 -e -c
	cd_client ev ibv_rc_pingpong -g 1 -p 18730 -s 4096 -n 200 -e -c
	cd_done ev
	compat_pingpong_check "$LOGS/ev.srv" 200 4096 || fail "server summary"
	compat_pingpong_check "$LOGS/ev.cli" 200 4096 || fail "client summary"
	cd_served_by_daemons
}

# ibv_srq_pingpong -c: 16 QPs taking their receives from one SRQ, in the daemon
test_daemon_srq_pingpong_checked() {
	cd_setup
	cd_server srq ibv_srq_pingpong 18731 -g 1 -p 18731 -s 4096 -n 200 -c
	cd_client srq ibv_srq_pingpong -g 1 -p 18731 -s 4096 -n 200 -c
	cd_done srq
	compat_pingpong_check "$LOGS/srq.srv" 200 4096 || fail "server summary"
	compat_pingpong_check "$LOGS/srq.cli" 200 4096 || fail "client summary"
	cd_served_by_daemons
}

# UD in the daemon: ibv_ud_pingpong (address handles made in the process, the GRH in each
# receive buffer) and ib_send_bw -c UD
test_daemon_ud_pingpong() {
	cd_setup
	cd_server ud ibv_ud_pingpong 18732 -g 1 -p 18732 -s 1000 -n 200
	cd_client ud ibv_ud_pingpong -g 1 -p 18732 -s 1000 -n 200
	cd_done ud
	compat_pingpong_check "$LOGS/ud.srv" 200 1000 || fail "server summary"
	compat_pingpong_check "$LOGS/ud.cli" 200 1000 || fail "client summary"
	cd_served_by_daemons
}
test_daemon_send_bw_ud() { cd_perf ib_send_bw 500 18733 -c UD -s 1024 --report_gbits; }

# Three processes per namespace on one queue at once: two ib_write_bw pairs and a
# checked rc_pingpong pair, each passing on its own report.
test_daemon_three_ranks_per_namespace() {
	cd_setup
	cd_server w1 ib_write_bw 18727 -x 1 -p 18727 -n 2000 -s 16384 --report_gbits
	cd_server w2 ib_write_bw 18728 -x 1 -p 18728 -n 2000 -s 16384 --report_gbits
	cd_server pp ibv_rc_pingpong 18729 -g 1 -p 18729 -s 1024 -n 500 -c
	cd_client w1 ib_write_bw -x 1 -p 18727 -n 2000 -s 16384 --report_gbits
	cd_client w2 ib_write_bw -x 1 -p 18728 -n 2000 -s 16384 --report_gbits
	cd_client pp ibv_rc_pingpong -g 1 -p 18729 -s 1024 -n 500 -c
	cd_done w1
	cd_done w2
	cd_done pp
	compat_perftest_check "$LOGS/w1.cli" 2000 || fail "ib_write_bw 1: the client's report"
	compat_perftest_check "$LOGS/w2.cli" 2000 || fail "ib_write_bw 2: the client's report"
	compat_pingpong_check "$LOGS/pp.cli" 500 1024 || fail "rc_pingpong: the client's summary"
	compat_pingpong_check "$LOGS/pp.srv" 500 1024 || fail "rc_pingpong: the server's summary"
	cd_served_by_daemons
}

# rdma_cm in daemon mode (the daemon's shared QP1, runtime/gsi_hub.h): rping pairs whose
# ends are processes of one daemon, and of two; each ping's payload is verified (-V).
# cd_rping_srv NAME NS PORT: a server in the background, PID in RPID_NAME.
cd_rping_srv() {
	ns_bg "$2" "RPID_$1" timeout 60 "${COMPAT_ENV[@]}" /usr/bin/rping -s -a "$CD_IP_A" \
		-p "$3" -V -C 20 >"$LOGS/$1.rping" 2>&1
}

# cd_rping_cli NAME NS PORT: a client to it, in the foreground; while the server is not
# listening yet (REJ 8: rping says so and exits), it tries again, 20 times at most.
cd_rping_cli() {
	local i rc
	for ((i = 0; i < 20; i++)); do
		rc=0
		ns_exec "$2" timeout 60 "${COMPAT_ENV[@]}" /usr/bin/rping -c -a "$CD_IP_A" -p "$3" \
			-V -C 20 >"$LOGS/$1.rping" 2>&1 || rc=$?
		grep -q REJECTED "$LOGS/$1.rping" || break
		sleep 0.25
	done
	echo "--- rping $1"; cat "$LOGS/$1.rping"
	[ "$rc" -eq 0 ] || fail "rping $1 exited $rc"
}

# cd_rping_done NAME: the server exited 0 after its 20 pings.
cd_rping_done() {
	local v=RPID_$1 rc=0
	wait "${!v}" || rc=$?
	echo "--- rping $1"; cat "$LOGS/$1.rping"
	[ "$rc" -eq 0 ] || fail "rping $1 exited $rc"
}

test_daemon_rping_two_daemons() {
	[ -x /usr/bin/rping ] || skip "/usr/bin/rping missing (make deps: rdmacm-utils)"
	cd_setup
	cd_rping_srv srv "$NS_A" 7180
	cd_rping_cli cli "$NS_B" 7180
	cd_rping_done srv
	cd_served_by_daemons
}

# Processes of one daemon: the clients' REQs loop back in the engine, and the hub hands
# each to the process listening on the service, the REP back to the client. A persistent
# server (-P) listens throughout: once a client has reached it, a second server on its
# port must be refused (EADDRINUSE, the daemon's message names the service), and a
# second client reaches the first server still. The server is ended by its PID.
test_daemon_rping_one_daemon() {
	local rc=0 served
	[ -x /usr/bin/rping ] || skip "/usr/bin/rping missing (make deps: rdmacm-utils)"
	cd_setup
	ns_bg "$NS_A" RPID_srv timeout 60 "${COMPAT_ENV[@]}" /usr/bin/rping -s -P \
		-a "$CD_IP_A" -p 7181 -V -C 20 >"$LOGS/srv.rping" 2>&1
	cd_rping_cli cli "$NS_A" 7181
	ns_exec "$NS_A" timeout 20 "${COMPAT_ENV[@]}" /usr/bin/rping -s -a "$CD_IP_A" -p 7181 \
		-C 1 >"$LOGS/srv2.rping" 2>&1 || rc=$?
	cat "$LOGS/srv2.rping"
	[ "$rc" -ne 0 ] || fail "a second rping -s on port 7181 of one daemon was not refused"
	grep -q "service ID 0x1061c0d is listened on by another process" "$LOGS/srv2.rping" ||
		fail "the second server's refusal does not name the service"
	cd_rping_cli cli2 "$NS_A" 7181
	kill "$RPID_srv"
	wait "$RPID_srv" || true
	kill -TERM "$MGR_A"
	wait "$MGR_A" || fail "blue-manager on $IF_A exited non-zero"
	served=$(sed -n 's/.*sessions served: \([0-9]*\).*/\1/p' "$LOGS/mgr-a")
	[ "${served:-0}" -ge 4 ] || { cat "$LOGS/mgr-a"; fail "$IF_A's daemon served ${served:-no} sessions, not the four processes"; }
}
