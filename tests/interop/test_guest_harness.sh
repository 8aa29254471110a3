# shellcheck shell=bash
# guest.sh's own logic, without QEMU: the console wait and the bookkeeping of several
# guests (tests/interop/capture_vectors.sh boots two). QEMU is never started here:
# rxe_bg, which would start it, is replaced by a recorder.
#   B=build bash tests/lib/runner.sh tests/interop/test_guest_harness.sh
# shellcheck source=tests/interop/guest.sh
source tests/interop/guest.sh

# A guest that prints its marker and powers off between rxe_console_wait's look at the
# console and its liveness check: the wait must still see the marker, not report a
# guest that died first.
test_console_wait_marker_then_exit() {
	RXE_LOG=$(mktemp /tmp/guest-harness.XXXXXX.log)
	on_exit "rm -f $RXE_LOG"
	echo "BLUE-GUEST READY uptime=1.0" >"$RXE_LOG"
	RXE_QEMU_PID=1
	# the liveness check is where the guest's last line lands and QEMU is gone
	_rxe_child_alive() { echo "BLUE-GUEST EXIT rc=0 uptime=2.0" >>"$RXE_LOG"; return 1; }
	rxe_guest_wait EXIT 5 || fail "the EXIT marker on the console was missed"
	[ "$(rxe_guest_rc)" = 0 ] || fail "rxe_guest_rc: '$(rxe_guest_rc)'"
	# and a guest that really died without it is still reported
	_rxe_child_alive() { return 1; }
	if rxe_console_wait '^NEVER' 5 2>"$RXE_LOG.err"; then
		fail "a dead guest's missing line was reported as seen"
	fi
	on_exit "rm -f $RXE_LOG.err"
	grep -q 'QEMU exited before' "$RXE_LOG.err" || fail "no reason given: $(cat "$RXE_LOG.err")"
}

# Two guests: each boots on its own tap with its own address, MAC and static neighbour,
# and rxe_guest_use switches the waits between their consoles.
test_two_guests_settings() {
	local args=()
	rxe_bg() {
		local var=$2
		shift 2
		args+=("$*")
		printf -v "$var" '%s' "$((1000 + ${#args[@]}))"
	}
	rxe_guest_as srv 10.9.9.10 52:54:00:00:00:0a tap0 10.9.9.11 52:54:00:00:00:0b
	rxe_guest_start "echo one"
	rxe_guest_as cli 10.9.9.11 52:54:00:00:00:0b tap1 10.9.9.10 52:54:00:00:00:0a
	rxe_guest_start "echo two"
	on_exit "rm -f ${RXE_GUESTS[srv]#* } ${RXE_GUESTS[cli]#* }"
	[ "${#args[@]}" -eq 2 ] || fail "${#args[@]} QEMUs started"
	grep -q 'ifname=tap0,' <<<"${args[0]}" || fail "srv not on tap0: ${args[0]}"
	grep -q 'ifname=tap1,' <<<"${args[1]}" || fail "cli not on tap1: ${args[1]}"
	grep -q 'netdev=n0,mac=52:54:00:00:00:0b,' <<<"${args[1]}" || fail "cli MAC: ${args[1]}"
	grep -q 'blue.ip=10.9.9.10/24 blue.peer=10.9.9.11 blue.peermac=52:54:00:00:00:0b ' \
		<<<"${args[0]}" || fail "srv address or neighbour: ${args[0]}"
	grep -q 'blue.ip=10.9.9.11/24 blue.peer=10.9.9.10 blue.peermac=52:54:00:00:00:0a ' \
		<<<"${args[1]}" || fail "cli address or neighbour: ${args[1]}"
	grep -q "blue.cmd=$(printf 'echo two' | base64 -w0) " <<<"${args[1]}" || fail "cli command"
	local srv_log=${RXE_GUESTS[srv]#* } cli_log=${RXE_GUESTS[cli]#* }
	if [ -z "$srv_log" ] || [ "$srv_log" = "$cli_log" ]; then
		fail "consoles: '$srv_log' '$cli_log'"
	fi
	rxe_guest_use srv
	[ "$RXE_QEMU_PID $RXE_LOG" = "1001 $srv_log" ] || fail "use srv: $RXE_QEMU_PID $RXE_LOG"
	rxe_guest_use cli
	[ "$RXE_QEMU_PID $RXE_LOG" = "1002 $cli_log" ] || fail "use cli: $RXE_QEMU_PID $RXE_LOG"
}
