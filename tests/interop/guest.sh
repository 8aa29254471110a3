#!/usr/bin/env bash
# guest.sh — a Linux Soft-RoCE (rdma_rxe) peer in a QEMU guest, on a bridge inside a
# network namespace we create. Source it (tests) or run it (by hand):
#
#   bash tests/interop/guest.sh [-t SECONDS] 'GUEST COMMAND'
#       boots the guest, runs the command in it once rxe0 is ACTIVE, prints the console,
#       tears everything down, and exits with the command's exit status.
#
# Topology (NS names carry a per-run prefix, default rxg<PID>):
#
#   ${P}br: br0 ── tap0 ══ QEMU virtio-net ══ guest eth0 10.201.77.10 fd00:c9:4d::10, rxe0
#            └──── vbr0 ─── veth ─── vbl0 10.201.77.1 fd00:c9:4d::1 in ${P}bl (where blue runs)
#
# The tap is created inside ${P}br and QEMU runs under `nsenter --net` so that it opens
# the tap there: no interface of the guest's is ever visible in the host namespace.
# Both ends hold permanent neighbour entries for each other (the guest's comes from the
# kernel command line), so neither ARP nor rxe's MAC resolution has to wait.
#
# Functions, for tests (tests/lib/runner.sh provides on_exit; without it, a local
# on_exit runs the cleanups on EXIT):
#   rxe_images             build or reuse the kernel + initramfs (RXE_OUT)
#   rxe_net_up             namespaces, bridge, tap, veth, addresses
#   rxe_bridge_up          only the bridge namespace, its bridge and tap0 (guests only)
#   rxe_tap_add TAP        one more tap on the bridge, for a second guest
#   rxe_guest_as NAME IP MAC TAP PEER_IP PEER_MAC
#                          the next rxe_guest_start boots guest NAME with these settings
#   rxe_guest_use NAME     point RXE_LOG/RXE_QEMU_PID (the waits, rxe_guest_rc) at NAME
#   rxe_blue_up IF BLUECTL rxe_net_up, blue's end named IF, blue attached there
#   rxe_guest_start CMD    boot QEMU in the background (RXE_QEMU_PID, console in RXE_LOG)
#   rxe_guest_wait WHAT T  wait up to T seconds for READY or EXIT; 1 on FAIL/death/timeout
#   rxe_guest_rc           the guest command's exit status from the EXIT marker
#   rxe_console_wait ERE T [FAIL_ERE]  wait up to T seconds for a console line
#   rxe_step_fn CMD TRIES  the guest-side step runner s() (BLUE-STEP markers)
#   rxe_step_wait NAME BEGIN|END T  wait up to T seconds for a step's console marker
#   rxe_step_log NAME      the step's console lines, BEGIN marker to END marker
#   rxe_step_rc FILE NAME  the guest's exit status from the step's END marker in FILE
#   rxe_run_step NAME ROLE DIR BEGIN_T END_T READY AGAIN CMD...
#                          blue's side of a step: CMD once the guest began it (a client
#                          after READY and tried again while AGAIN says so, a server
#                          followed by READY), logs in DIR, status RXE_BRC
#   rxe_guest_stop         kill QEMU by PID now (a kill is also registered with on_exit)
#   rxe_blue CMD...        run CMD in the blue-side namespace (rxe_br: the bridge one)
#   rxe_bg NS VAR CMD...   CMD in the background in NS, PID in VAR, kill on exit

RXE_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RXE_ROOT=$(cd "$RXE_HERE/../.." && pwd)
RXE_OUT=${RXE_OUT:-$RXE_ROOT/${B:-build}/interop}
RXE_PREFIX=${RXE_PREFIX:-rxg$$}
RXE_NS_BR=${RXE_PREFIX}br
RXE_NS_BLUE=${RXE_PREFIX}bl
RXE_SUBNET=${RXE_SUBNET:-10.201.77}
RXE_GUEST_IP=$RXE_SUBNET.10
RXE_BLUE_IP=$RXE_SUBNET.1
# IPv6 on the same link (ULA, static, no DAD): the guest's rxe0 and blue each get a GID for
# it. A guest booted with rxe_guest_as has none.
RXE_SUBNET6=${RXE_SUBNET6:-fd00:c9:4d}
RXE_GUEST_IP6=$RXE_SUBNET6::10
RXE_BLUE_IP6=$RXE_SUBNET6::1
RXE_GUEST_MAC=52:54:00:c9:4d:0a
RXE_BLUE_IF=vbl0
RXE_BLUE_MAC=
RXE_MTU=${RXE_MTU:-1500}
RXE_MEM=${RXE_MEM:-512}
RXE_QEMU_ARGS=${RXE_QEMU_ARGS:-}	# extra QEMU words, e.g. "-bios qboot.rom" (~0.5 s faster)
RXE_TAP=tap0
RXE_PEER_IP=	# the guest's static neighbour; empty = blue's end
RXE_PEER_MAC=
RXE_LOG=
RXE_QEMU_PID=
declare -gA RXE_GUESTS=()	# NAME -> "PID LOG" of each guest started by rxe_guest_as
RXE_GUEST_NAME=

if ! declare -F on_exit >/dev/null; then
	_rxe_cleanups=()
	on_exit() { _rxe_cleanups+=("$*"); }
	_rxe_run_cleanups() {
		local i
		for ((i = ${#_rxe_cleanups[@]} - 1; i >= 0; i--)); do
			eval "${_rxe_cleanups[$i]}" || true
		done
	}
	trap _rxe_run_cleanups EXIT
fi

# rxe_missing: print why the harness cannot run here (empty output = it can)
rxe_missing() {
	command -v qemu-system-x86_64 >/dev/null || { echo "qemu-system-x86_64 not installed (scripts/deps.sh)"; return; }
	[ -c /dev/net/tun ] || { echo "no /dev/net/tun"; return; }
	command -v nsenter >/dev/null || { echo "nsenter not installed"; return; }
	compgen -G "/lib/modules/*/kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko*" >/dev/null \
		|| { echo "no Debian kernel with rdma_rxe (linux-image-amd64, scripts/deps.sh)"; return; }
}

rxe_images() {
	bash "$RXE_HERE/build_initramfs.sh" "$RXE_OUT"
}

rxe_blue() { nsenter --net="/run/netns/$RXE_NS_BLUE" "$@"; }
rxe_br() { nsenter --net="/run/netns/$RXE_NS_BR" "$@"; }

# _rxe_child_state PID: set _rxe_state to the process state letter (R, S, Z...) if PID is
# still a child of this shell, else to "". Kills go through it, so a PID that was reaped
# and reused by someone else's process is never signalled. (No $(...) around these: a
# command substitution is a subshell with another $BASHPID.)
_rxe_child_state() {
	local st ppid
	_rxe_state=
	st=$(sed -E 's/^.*\) //' "/proc/$1/stat" 2>/dev/null) || return 0
	read -r st ppid _ <<<"$st"
	[ "${ppid:-}" = "$BASHPID" ] && _rxe_state=$st
	return 0
}
_rxe_child_alive() {
	_rxe_child_state "$1"
	[ -n "$_rxe_state" ] && [ "$_rxe_state" != Z ]
}
_rxe_kill_child() {
	_rxe_child_state "$1"
	[ -n "$_rxe_state" ] || return 0
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 0
}

# rxe_bg NS VAR CMD...: start CMD in namespace NS in the background, store its PID in VAR
# and register its kill. nsenter is started directly (not through a function, which
# would fork a subshell whose PID is not CMD's) and, with only --net, execs CMD: $! is
# CMD's own PID.
rxe_bg() {
	local ns=$1 var=$2 pid
	shift 2
	nsenter --net="/run/netns/$ns" "$@" &
	pid=$!
	printf -v "$var" '%s' "$pid"
	on_exit "_rxe_kill_child $pid"
}

# rxe_bridge_up: the bridge namespace with br0 and tap0 on it, up, at RXE_MTU
rxe_bridge_up() {
	ip netns add "$RXE_NS_BR"
	on_exit "ip netns del $RXE_NS_BR 2>/dev/null"
	ip -n "$RXE_NS_BR" link set lo up
	# STP stays off (the default), so ports forward as soon as they are up
	ip -n "$RXE_NS_BR" link add br0 type bridge
	ip -n "$RXE_NS_BR" link set br0 mtu "$RXE_MTU"
	ip -n "$RXE_NS_BR" link set br0 up
	rxe_tap_add tap0
}

# rxe_tap_add TAP: a tap on br0, for one more QEMU guest
rxe_tap_add() {
	rxe_br ip tuntap add dev "$1" mode tap
	ip -n "$RXE_NS_BR" link set "$1" mtu "$RXE_MTU"
	ip -n "$RXE_NS_BR" link set "$1" master br0
	ip -n "$RXE_NS_BR" link set "$1" up
}

rxe_net_up() {
	rxe_bridge_up
	ip netns add "$RXE_NS_BLUE"
	on_exit "ip netns del $RXE_NS_BLUE 2>/dev/null"
	ip -n "$RXE_NS_BLUE" link set lo up
	ip link add vbr0 netns "$RXE_NS_BR" type veth peer name "$RXE_BLUE_IF" netns "$RXE_NS_BLUE"
	ip -n "$RXE_NS_BR" link set vbr0 mtu "$RXE_MTU"
	ip -n "$RXE_NS_BR" link set vbr0 master br0
	ip -n "$RXE_NS_BR" link set vbr0 up
	ip -n "$RXE_NS_BLUE" link set "$RXE_BLUE_IF" mtu "$RXE_MTU"
	ip -n "$RXE_NS_BLUE" addr add "$RXE_BLUE_IP/24" dev "$RXE_BLUE_IF"
	ip -n "$RXE_NS_BLUE" link set "$RXE_BLUE_IF" up
	ip -n "$RXE_NS_BLUE" neigh replace "$RXE_GUEST_IP" lladdr "$RXE_GUEST_MAC" \
		dev "$RXE_BLUE_IF" nud permanent
	ip -n "$RXE_NS_BLUE" -6 addr add "$RXE_BLUE_IP6/64" dev "$RXE_BLUE_IF" nodad
	ip -n "$RXE_NS_BLUE" -6 neigh replace "$RXE_GUEST_IP6" lladdr "$RXE_GUEST_MAC" \
		dev "$RXE_BLUE_IF" nud permanent
	RXE_BLUE_MAC=$(ip -n "$RXE_NS_BLUE" -j link show "$RXE_BLUE_IF" \
		| sed -nE 's/.*"address":"([^"]+)".*/\1/p')
}

# rxe_blue_up IFNAME BLUECTL: rxe_net_up with blue's end called IFNAME (a test names it
# after itself, not guest.sh's fixed vbl0), and blue attached there natively, its detach
# (and the removal of its pins, in the namespace's own directory: bluectl pin-dir)
# registered with on_exit.
rxe_blue_up() {
	local dir
	RXE_BLUE_IF=$1
	rxe_net_up
	dir=$(rxe_blue "$2" pin-dir "$RXE_BLUE_IF")
	on_exit "rxe_blue $2 detach $RXE_BLUE_IF >/dev/null 2>&1; rm -rf $dir"
	rxe_blue "$2" attach "$RXE_BLUE_IF" --mode native
}

# rxe_guest_as NAME IP MAC TAP PEER_IP PEER_MAC: settings of the next rxe_guest_start,
# which then boots guest NAME (its own console log) instead of the single default guest
rxe_guest_as() {
	RXE_GUEST_NAME=$1 RXE_GUEST_IP=$2 RXE_GUEST_MAC=$3 RXE_TAP=$4
	RXE_PEER_IP=$5 RXE_PEER_MAC=$6 RXE_LOG='' RXE_QEMU_PID='' RXE_GUEST_IP6=''
}

# rxe_guest_use NAME: the waits and rxe_guest_rc now follow guest NAME
rxe_guest_use() {
	read -r RXE_QEMU_PID RXE_LOG <<<"${RXE_GUESTS[$1]}"
}

# rxe_guest_start CMD: boot the guest; CMD runs in it once rxe0 is ACTIVE
rxe_guest_start() {
	local cmd=$1 append
	if [ -z "$RXE_LOG" ]; then
		RXE_LOG=$(mktemp /tmp/rxe-guest.XXXXXX.log)
		on_exit "rm -f $RXE_LOG"
	fi
	: >"$RXE_LOG"
	# quiet + mitigations=off: under TCG every console byte and every retpoline costs
	# boot time; panic=-1 with -no-reboot turns a dead /init into a QEMU exit
	append="console=ttyS0 quiet mitigations=off panic=-1 rdinit=/init"
	append+=" blue.ip=$RXE_GUEST_IP/24 blue.peer=${RXE_PEER_IP:-$RXE_BLUE_IP}"
	append+=" blue.peermac=${RXE_PEER_MAC:-$RXE_BLUE_MAC}"
	[ -z "$RXE_GUEST_IP6" ] || append+=" blue.ip6=$RXE_GUEST_IP6/64 blue.peer6=$RXE_BLUE_IP6"
	append+=" blue.mtu=$RXE_MTU blue.cmd=$(printf '%s' "$cmd" | base64 -w0)"
	# shellcheck disable=SC2086 # RXE_QEMU_ARGS is a word list on purpose
	rxe_bg "$RXE_NS_BR" RXE_QEMU_PID qemu-system-x86_64 -accel tcg -cpu max -smp 1 -m "$RXE_MEM" \
		-nographic -nodefaults -monitor none -serial stdio -no-reboot $RXE_QEMU_ARGS \
		-kernel "$RXE_OUT/vmlinuz" -initrd "$RXE_OUT/initramfs.cpio.gz" \
		-append "$append" \
		-netdev tap,id=n0,ifname="$RXE_TAP",script=no,downscript=no \
		-device virtio-net-pci,netdev=n0,mac=$RXE_GUEST_MAC,romfile=  \
		</dev/null >"$RXE_LOG" 2>&1
	RXE_T0=$(date +%s.%N)
	[ -z "$RXE_GUEST_NAME" ] || RXE_GUESTS[$RXE_GUEST_NAME]="$RXE_QEMU_PID $RXE_LOG"
}

rxe_guest_stop() {
	[ -n "$RXE_QEMU_PID" ] || return 0
	_rxe_kill_child "$RXE_QEMU_PID"
	RXE_QEMU_PID=
}

# rxe_console_wait ERE SECONDS [FAIL_ERE]: 0 once a console line (\r stripped) matches
# ERE; 1 if one matches FAIL_ERE first, QEMU dies first, or the time runs out (the reason
# goes to stderr)
rxe_console_wait() {
	local re=$1 t=$2 bad=${3:-} end
	end=$(($(date +%s) + t))
	while :; do
		tr -d '\r' <"$RXE_LOG" 2>/dev/null | grep -qE "$re" && return 0
		if [ -n "$bad" ] && tr -d '\r' <"$RXE_LOG" | grep -qE "$bad"; then
			echo "guest: $(tr -d '\r' <"$RXE_LOG" | grep -m1 -E "$bad")" >&2
			return 1
		fi
		if ! _rxe_child_alive "$RXE_QEMU_PID"; then
			# the line may have come just before QEMU exited, after the look above
			tr -d '\r' <"$RXE_LOG" | grep -qE "$re" && return 0
			echo "guest: QEMU exited before /$re/; console tail:" >&2
			tail -20 "$RXE_LOG" >&2
			return 1
		fi
		if [ "$(date +%s)" -ge "$end" ]; then
			echo "guest: no /$re/ within ${t}s; console tail:" >&2
			tail -20 "$RXE_LOG" >&2
			return 1
		fi
		sleep 0.1
	done
}

# rxe_guest_wait READY|EXIT SECONDS: 0 once the marker is on the console; 1 if the guest
# reports FAIL, QEMU dies first, or the time runs out (the reason goes to stderr)
rxe_guest_wait() {
	rxe_console_wait "^BLUE-GUEST $1" "$2" '^BLUE-GUEST FAIL'
}

# rxe_step_fn CMD TRIES: the guest-side (busybox sh) function `s NAME ROLE ARGS...`: runs
# `CMD ARGS...` between the console markers "BLUE-STEP BEGIN NAME" and "BLUE-STEP END
# NAME rc=STATUS tries=N", its output in between; a client (ROLE) whose connect is
# refused (blue's server not listening yet) is started again, at most TRIES times. A
# failed step sets the guest's $f to 1. CMD is spliced in as it is.
rxe_step_fn() {
	cat <<EOF
s() {
n=\$1 r=\$2; shift 2; echo "BLUE-STEP BEGIN \$n"; i=0
while :; do
$1 "\$@" >/tmp/o 2>&1; c=\$?
[ \$r = client ] && [ \$c != 0 ] && [ \$i -lt $2 ] && grep -q "t connect to" /tmp/o || break
i=\$((i + 1)); sleep 0.1
done
cat /tmp/o; echo "BLUE-STEP END \$n rc=\$c tries=\$i"; [ \$c = 0 ] || f=1
}
EOF
}

# rxe_step_wait NAME BEGIN|END SECONDS: rxe_console_wait for the step's marker
rxe_step_wait() {
	if [ "$2" = BEGIN ]; then
		rxe_console_wait "^BLUE-STEP BEGIN $1\$" "$3"
	else
		rxe_console_wait "^BLUE-STEP END $1 " "$3"
	fi
}

# rxe_step_log NAME: the console from the step's BEGIN marker to its END marker, on stdout
rxe_step_log() {
	tr -d '\r' <"$RXE_LOG" | sed -n "/^BLUE-STEP BEGIN $1\$/,/^BLUE-STEP END $1 /p"
}

# rxe_step_rc FILE NAME: the STATUS of the step's END marker in FILE (empty without one)
rxe_step_rc() {
	sed -nE "s/^BLUE-STEP END $2 rc=([0-9]+).*/\1/p" "$1"
}

# rxe_run_step NAME ROLE DIR BEGIN_T END_T READY AGAIN CMD...: blue's side of the guest's
# step NAME, once the guest began it (BEGIN_T s at most): CMD (bounded by its own
# timeout) in the blue-side namespace. ROLE server: once, in the background, then
# `READY NAME LOG` (LOG: CMD's output so far; READY may wait in it for CMD to be up and
# tell the guest to go on, or be `:`), then waited for.
# ROLE client: after `READY NAME` (a function that waits for the guest's server, `:` for
# none), and again after each failed try for which `AGAIN NAME LOG TRY` returns 0 (it
# may pause or wait for the guest before it does; LOG holds that try's output). Logs in
# DIR: NAME.blue, the last run's output then "tries=N rc=STATUS" (client) or
# "rc=STATUS" (server); NAME.tries, each failed try before it ("--- try N rc=STATUS:"
# and its output); NAME.guest, the guest's lines of the step once it ended it (END_T s
# at most). CMD's status in RXE_BRC, 255 when the guest never began the step.
# shellcheck disable=SC2034 # RXE_BRC is the caller's
rxe_run_step() {
	local name=$1 role=$2 dir=$3 begin_t=$4 end_t=$5 ready=$6 again=$7
	local b=$3/$1.blue o=$3/$1.try i brc=0 bpid t0
	shift 7
	RXE_BRC=255
	: >"$b"
	rm -f "$dir/$name.tries"
	rxe_step_wait "$name" BEGIN "$begin_t" ||
		{ echo "$name: the guest never began it" | tee "$b"; return 0; }
	t0=$(date +%s.%N)
	if [ "$role" = client ]; then
		"$ready" "$name" || true
		for ((i = 0; ; i++)); do
			brc=0
			rxe_blue "$@" >"$o" 2>&1 || brc=$?
			{ [ "$brc" != 0 ] && "$again" "$name" "$o" "$i"; } || break
			{ echo "--- try $i rc=$brc:"; cat "$o"; } >>"$dir/$name.tries"
		done
		{ cat "$o"; echo "tries=$i rc=$brc"; } >>"$b"
	else
		rxe_bg "$RXE_NS_BLUE" bpid "$@" >"$o" 2>&1
		"$ready" "$name" "$o" || true
		wait "$bpid" || brc=$?
		{ cat "$o"; echo "rc=$brc"; } >>"$b"
	fi
	rm -f "$o"
	rxe_step_wait "$name" END "$end_t" || echo "$name: the guest never ended it"
	rxe_step_log "$name" >"$dir/$name.guest"
	echo "$name: ran in $(echo "$(date +%s.%N) $t0" | awk '{ printf "%.1f", $1 - $2 }') s"
	RXE_BRC=$brc
}

# seconds since rxe_guest_start, for boot-time reports
rxe_guest_elapsed() {
	echo "$(date +%s.%N) $RXE_T0" | awk '{ printf "%.1f", $1 - $2 }'
}

rxe_guest_rc() {
	sed -nE 's/^BLUE-GUEST EXIT rc=([0-9]+).*/\1/p' "$RXE_LOG" | head -1
}

# --- command-line use -----------------------------------------------------------------
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -euo pipefail
	timeout_s=60
	if [ "${1:-}" = "-t" ]; then timeout_s=$2; shift 2; fi
	cmd=${1:-ibv_devinfo -v -d rxe0}
	why=$(rxe_missing)
	[ -z "$why" ] || { echo "guest.sh: cannot run: $why" >&2; exit 77; }
	rxe_images
	rxe_net_up
	rxe_guest_start "$cmd"
	echo "guest.sh: blue side: nsenter --net=/run/netns/$RXE_NS_BLUE ($RXE_BLUE_IP)"
	rc=1
	if rxe_guest_wait READY 60; then
		echo "guest.sh: READY after $(rxe_guest_elapsed)s"
		rxe_guest_wait EXIT "$timeout_s" && rc=$(rxe_guest_rc)
	fi
	tr -d '\r' <"$RXE_LOG"
	exit "$rc"
fi
