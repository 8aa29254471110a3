# shellcheck shell=bash
# blue's librdmacm.so.1 (compat/rdmacm/) against the kernel's rdma_cm / IB CM: the
# unmodified Debian rdmacm-utils (rping, ucmatose, udaddy, rdma_server/rdma_client) and
# perftest's ib_send_bw -R run on blue in the blue-side namespace
# (LD_LIBRARY_PATH=$B/compat), and the same tools over rdma-core's librdmacm, the
# kernel's rdma_ucm and rdma_rxe in the QEMU guest of tests/interop/guest.sh are the peer.
# Every tool runs both ways: blue as the client (the guest serves) and blue as the server
# (the guest connects). The IB CM (REQ/REP/RTU, DREQ/DREP; SIDR_REQ/REP for udaddy) goes
# over QP1 between blue's CM agent and the guest's kernel. mckey (UD multicast, an IPv4
# group: the kernel's cma refuses IPv6 groups on RoCEv2) has no CM exchange: its
# "client" is the sender, its "server" the receiver, which joins first; when blue
# receives, the guest's sender waits until blue's side connects to it over TCP
# (_rr_server_ready), since a sender to a group has nobody to be refused by.
# Run: B=build-<you> bash tests/lib/runner.sh tests/compat/test_rdmacm_rxe.sh
#
# One guest boot serves every step, as in test_compat_rxe.sh: the guest runs the steps in
# order between BLUE-STEP BEGIN/END console markers, and the host starts blue's side of
# each step when it sees BEGIN. The client tries again while the server does not listen
# yet (the IB CM answers REJ 8, or SIDR_REP status 1), at most RR_DEADLINE s, so that a
# step that fails costs under a minute. Blue's side of a step is guest.sh's
# rxe_run_step, as in test_compat_rxe.sh. Logs of every step stay in
# $B/test-logs/rdmacm-rxe/ (NAME.blue, NAME.tries: blue's failed tries before it,
# NAME.guest, and rdmacm.pcap: every RoCEv2 and IGMP frame on the guest's tap).
#
# test_rdmacm_rxe_boot (first by name: runner.sh runs them in name order) boots the
# guest, runs every step and leaves one verdict per step ($RR_KEEP/verdicts) and one row
# per step in the results table (tests/lib/compat.sh); test_rdmacm_rxe_rping, _ucmatose,
# _udaddy, _send_bw, _server_client and _mckey give each tool's verdict, the failure
# naming what both sides printed last.
#
# Test functions: test_rdmacm_rxe_boot test_rdmacm_rxe_rping test_rdmacm_rxe_ucmatose
#   test_rdmacm_rxe_udaddy test_rdmacm_rxe_send_bw test_rdmacm_rxe_server_client
#   test_rdmacm_rxe_mckey
#   test_rdmacm_rxe_wire (the capture: no NAK in any RC stream, the CM MADs counted, the
#   multicast frames to the group's MAC and QPN 0xFFFFFF, both sides' IGMP reports)
# own subnets (guest.sh's defaults are test_compat_rxe.sh's)
RXE_SUBNET=${RXE_SUBNET:-10.201.83}
RXE_SUBNET6=${RXE_SUBNET6:-fd00:c9:53}
# shellcheck source=tests/interop/guest.sh
source tests/interop/guest.sh
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh
# shellcheck source=tests/lib/compat.sh
source tests/lib/compat.sh

RR_LIB=$PWD/$B/compat
RR_BLUECTL=$PWD/$B/bin/bluectl
BLUECTL=$RR_BLUECTL	# netns.sh's ctl_stat
RR_KEEP=$PWD/$B/test-logs/rdmacm-rxe
# TCG is slow: each run is killed after RR_RUN_T s; a client tries again for at most
# RR_DEADLINE s
RR_RUN_T=30
RR_DEADLINE=35
RR_PINGS=10	# rping -C
RR_CONNS=2	# ucmatose -c, udaddy -c
RR_ITERS=20	# ib_send_bw -n
RR_MC_GROUP=239.${RXE_SUBNET#*.}.7	# mckey -m: one group, the steps run one after the other
RR_MC_COUNT=10	# mckey -C
RR_MC_SIZE=256	# mckey -S
RR_MC_WAIT=20	# s the guest's mckey sender waits for blue's receiver to have joined
# what a client prints when nobody listens yet (the IB CM's REJ 8, SIDR_REP status 1:
# rping, ucmatose, udaddy; perftest's "Unexpected CM event bl blka 8"; rdma_client's
# synchronous rdma_connect: ECONNREFUSED): blue's client
# tries again on that only, so a real failure ends its step at once. (The guest's client,
# whose output goes straight to the console, tries again on any failure.)
RR_RETRY='REJECTED|UNREACHABLE|CM event bl blka 8|rdma_connect: Connection refused'
# perftest's race with a slow server (ib_send_bw -R, blue the client): its client sends
# the REQ of its second connection ~100 ms after the first one's RTU (seen in the
# capture), before the guest's server listens for it: REJ 8, and perftest's client fails
# while its server waits on for good. The guest runs that server as "rserver": each run
# bounded by RR_SRV_T s and started again while it fails; blue's client then tries again
# on any failure, each time once the new server has said it waits (and 4 s more), until
# RR_SRV_DEADLINE s have passed.
RR_SRV_T=15
RR_SRV_DEADLINE=70

# NAME TOOL BLUE_ROLE PORT: one step each. udaddy has no port option (7174, rdma_cm's
# default for it); the others get their own, so no step meets the previous one's id.
# mckey has none either: its PORT is where the guest's sender waits for blue's receiver
# (mckey-brcv, _rr_guest_script; unused in mckey-bsnd).
RR_STEPS=(
	"rping-bcli rping client 7180" "rping-bsrv rping server 7181"
	"ucmatose-bcli ucmatose client 7182" "ucmatose-bsrv ucmatose server 7183"
	"udaddy-bcli udaddy client 7174" "udaddy-bsrv udaddy server 7174"
	"send_bw-bcli ib_send_bw client 18610" "send_bw-bsrv ib_send_bw server 18611"
	"rdma_cs-bcli rdma_server client 7184" "rdma_cs-bsrv rdma_server server 7185"
	"mckey-bsnd mckey client 7186" "mckey-brcv mckey server 7187"
)

# _rr_args TOOL ROLE PORT SERVER_IP DEV: the tool's words for that role (a server binds
# SERVER_IP where the tool needs an address)
_rr_args() {
	local tool=$1 role=$2 port=$3 ip=$4 dev=$5
	case $tool:$role in
	# the receiver binds its own address (SERVER_IP), the sender its own (the other one)
	mckey:server) echo "mckey -m $RR_MC_GROUP -b $ip -C $RR_MC_COUNT -S $RR_MC_SIZE" ;;
	mckey:client) echo "mckey -m $RR_MC_GROUP -b $(_rr_other_ip "$ip") -s -C $RR_MC_COUNT -S $RR_MC_SIZE" ;;
	rping:server) echo "rping -s -a $ip -p $port -v -V -d -C $RR_PINGS" ;;
	rping:client) echo "rping -c -a $ip -p $port -v -V -d -C $RR_PINGS" ;;
	ucmatose:server) echo "ucmatose -p $port -c $RR_CONNS" ;;
	ucmatose:client) echo "ucmatose -s $ip -p $port -c $RR_CONNS" ;;
	udaddy:server) echo "udaddy -c $RR_CONNS" ;;
	udaddy:client) echo "udaddy -s $ip -c $RR_CONNS" ;;
	# -R: rdma_cm sets the connection up (no TCP exchange); -F: no CPU-frequency check
	# Known race (2 runs in 7 here, blue as the client): perftest's client sends its data
	# QPs' REQs right after the rdma_cm channel's RTU; the guest's server, slow under
	# TCG, does not listen for them yet and its kernel answers REJ 8; perftest's client
	# then fails (and segfaults in its error path), the server waits on until killed
	ib_send_bw:server) echo "ib_send_bw -d $dev -R -F -n $RR_ITERS -p $port" ;;
	ib_send_bw:client) echo "ib_send_bw -d $dev -R -F -n $RR_ITERS -p $port $ip" ;;
	# librdmacm's examples: rdma_getaddrinfo, rdma_create_ep on synchronous ids, an
	# inline SEND each way
	rdma_server:server) echo "rdma_server -s $ip -p $port" ;;
	rdma_server:client) echo "rdma_client -s $ip -p $port" ;;
	esac
}

# _rr_other_ip IP: the address of the other side of the link
_rr_other_ip() {
	if [ "$1" = "$RXE_GUEST_IP" ]; then echo "$RXE_BLUE_IP"; else echo "$RXE_GUEST_IP"; fi
}

# The guest command (busybox sh). g NAME ROLE ARGS...: one run between markers; a client
# tries again while it fails, for at most RR_DEADLINE s (an rserver, RR_SRV_T s a run, for
# at most RR_SRV_DEADLINE s), each failed try followed by a "--- try N rc=STATUS" line. The tools write to the console itself (a tty: line
# buffered), so that a run killed by timeout still shows how far it got. ROLE once: run
# once, like a server (mckey's sender, which waits for blue's receiver first).
_rr_guest_script() {
	local st name tool brole port grole ip
	echo f=0
	cat <<EOF
g() {
n=\$1 r=\$2; shift 2; echo "BLUE-STEP BEGIN \$n"; i=0; e=\$((\$(date +%s) + $RR_DEADLINE))
[ \$r = rserver ] && e=\$((\$(date +%s) + $RR_SRV_DEADLINE))
while :; do
t=$RR_RUN_T; [ \$r = rserver ] && t=$RR_SRV_T
timeout \$t "\$@" 2>&1; c=\$?
[ \$r != server ] && [ \$r != once ] && [ \$c != 0 ] && [ \$(date +%s) -lt \$e ] || break
echo "--- try \$i rc=\$c"; i=\$((i + 1)); sleep 0.5
done
echo "BLUE-STEP END \$n rc=\$c tries=\$i"; [ \$c = 0 ] || f=1
}
EOF
	for st in "${RR_STEPS[@]}"; do
		read -r name tool brole port <<<"$st"
		if [ "$brole" = client ]; then grole=server ip=$RXE_GUEST_IP; else grole=client ip=$RXE_BLUE_IP; fi
		# perftest's server, blue the client: restarted when it fails (_rr_again)
		if [ "$tool" = ib_send_bw ] && [ "$grole" = server ]; then
			echo "g $name rserver $(_rr_args "$tool" server "$port" "$ip" rxe0)"
		elif [ "$tool" = mckey ] && [ "$grole" = client ]; then
			# the sender, once blue's receiver has joined and said so (a TCP
			# connection to PORT, _rr_server_ready): nobody would refuse it before
			echo "g $name once sh -c 'timeout $RR_MC_WAIT nc -l -p $port </dev/null >/dev/null && exec $(_rr_args "$tool" client "$port" "$ip" rxe0)'"
		else
			echo "g $name $grole $(_rr_args "$tool" "$grole" "$port" "$ip" rxe0)"
		fi
	done
	# shellcheck disable=SC2016 # $f is the guest's
	echo 'exit $f'
}

# the script above, gzipped (the kernel command line holds 2048 bytes)
_rr_guest_cmd() {
	echo "eval \"\$(echo $(_rr_guest_script | gzip -9n | base64 -w0) | base64 -d | gunzip)\""
}

# _rr_stats TOOL: BLUE_RDMACM_STATS for blue's TOOL: librdmacm's counters at exit (CM
# agent, IB CM, SIDR), except for perftest, whose result table they would cut into
# (stdout and stderr share the log), and mckey, which has no CM exchange to count
_rr_stats() {
	case $1 in ib_send_bw | mckey) echo 0 ;; *) echo 1 ;; esac
}

# _rr_guest_ready NAME TOOL: wait (at most 20 s) for the guest's server of step NAME to
# print the line it prints when it listens or is about to
_rr_guest_ready() {
	local re
	case $2 in
	rping) re='^rdma_listen' ;;
	ucmatose) re='^cmatose: starting server' ;;
	udaddy) re='^udaddy: starting server' ;;
	ib_send_bw) re='Waiting for client to connect' ;;
	rdma_server) re='^rdma_server: start' ;;
	mckey) re='^mckey: joined dgid' ;;
	esac
	rxe_console_wait "^BLUE-STEP BEGIN $1\$" 1 || return 1
	tr -d '\r' <"$RXE_LOG" | sed -n "/^BLUE-STEP BEGIN $1\$/,\$p" | grep -qE "$re" && return 0
	local i
	for ((i = 0; i < 200; i++)); do
		tr -d '\r' <"$RXE_LOG" | sed -n "/^BLUE-STEP BEGIN $1\$/,\$p" | grep -qE "$re" && return 0
		sleep 0.1
	done
	return 1
}

# _rr_server_again NAME N: wait (at most RR_SRV_T + 10 s) until the guest's perftest
# server of step NAME has said N times that it waits for a client (its restart, rserver)
_rr_server_again() {
	local i
	for ((i = 0; i < (RR_SRV_T + 10) * 10; i++)); do
		[ "$(tr -d '\r' <"$RXE_LOG" | sed -n "/^BLUE-STEP BEGIN $1\$/,\$p" |
			grep -c 'Waiting for client to connect')" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# _rr_client_ready NAME: before blue's client's first try (rxe_run_step's READY): the
# guest's server says it is about to listen (TCG: seconds after BEGIN); a REJ 8 is still
# tried again (_rr_again), but rarely needed. perftest prints "Waiting for client to
# connect" before its rdma_listen, and a retry after a REJ 8 meets a guest server that
# its first client's failure left confused (it waits on until killed: 2 runs in 3 failed
# so): under TCG give it time to listen before the first try. Sets RR_END, when blue's
# client stops trying.
_rr_client_ready() {
	_rr_guest_ready "$1" "$RR_TOOL" || true
	[ "$RR_TOOL" != ib_send_bw ] || sleep 4
	RR_END=$(($(date +%s) + RR_DEADLINE))
	[ "$RR_TOOL" != ib_send_bw ] || RR_END=$(($(date +%s) + RR_SRV_DEADLINE))
}

# _rr_server_ready NAME LOG: after blue's server started (rxe_run_step's READY): for
# mckey's receiver, once it has joined (at most 15 s), connect to the guest's sender,
# which waits in `nc -l` for that before it sends; the other servers need nothing
_rr_server_ready() {
	[ "$RR_TOOL" = mckey ] || return 0
	wait_for_line "$2" '^mckey: joined dgid' 15 || { echo "$1: blue's receiver did not join"; return 1; }
	_rr_poke "$RXE_GUEST_IP" "$(_rr_step_port "$1")"
}

# _rr_poke IP PORT: one TCP connection from the blue side to IP:PORT, tried again while
# refused (nobody listens yet), for at most 15 s
_rr_poke() {
	local end=$(($(date +%s) + 15))
	# shellcheck disable=SC2016 # $0 $1: the inner shell's
	until rxe_blue timeout 2 bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$1" "$2" 2>/dev/null; do
		[ "$(date +%s)" -lt "$end" ] || { echo "nobody listened on $1:$2 within 15 s"; return 1; }
		sleep 0.2
	done
}

# _rr_step_port NAME: the PORT of step NAME in RR_STEPS
_rr_step_port() {
	local st name tool brole port
	for st in "${RR_STEPS[@]}"; do
		read -r name tool brole port <<<"$st"
		[ "$name" != "$1" ] || { echo "$port"; return 0; }
	done
}

# _rr_again NAME LOG TRY: run blue's client again (rxe_run_step's AGAIN) while RR_END
# has not passed: after a failure that says nobody listened yet (RR_RETRY); perftest's
# after any failure, once the guest's restarted server (rserver) says it waits
_rr_again() {
	[ "$(date +%s)" -lt "$RR_END" ] || return 1
	if [ "$RR_TOOL" = ib_send_bw ]; then
		_rr_server_again "$1" "$(($3 + 2))" || return 1
		sleep 4
	else
		grep -qE "$RR_RETRY" "$2" || return 1
	fi
	sleep 0.5
}

# _rr_run_step NAME TOOL BLUE_ROLE PORT: blue's side of one step (rxe_run_step): its
# output in $RR_KEEP/NAME.blue (the last try's; every failed try's status and output in
# NAME.tries), the guest's in NAME.guest; blue's exit status in RXE_BRC. For mckey, blue's
# multicast counters before and after the step in NAME.mcstats (_rr_mc_counters).
_rr_run_step() {
	local name=$1 tool=$2 brole=$3 port=$4 args t ready=_rr_client_ready buf=()
	RR_TOOL=$tool
	if [ "$brole" = client ]; then
		args=$(_rr_args "$tool" client "$port" "$RXE_GUEST_IP" "$RR_DEV")
		t=$RR_RUN_T
	else
		args=$(_rr_args "$tool" server "$port" "$RXE_BLUE_IP" "$RR_DEV")
		t=$((RR_DEADLINE + RR_RUN_T))
		ready=_rr_server_ready
	fi
	# mckey's receiver says it joined on stdout, which _rr_server_ready reads meanwhile
	[ "$tool" != mckey ] || { buf=(stdbuf -oL); _rr_mc_counters >"$RR_KEEP/$name.mcstats"; }
	# shellcheck disable=SC2086 # $args: words
	rxe_run_step "$name" "$brole" "$RR_KEEP" 90 "$((RR_SRV_DEADLINE + RR_SRV_T + 10))" \
		"$ready" _rr_again \
		"${COMPAT_ENV[@]}" "BLUE_RDMACM_STATS=$(_rr_stats "$tool")" timeout "$t" "${buf[@]}" $args
	[ "$tool" != mckey ] || _rr_mc_counters >>"$RR_KEEP/$name.mcstats"
}

# the counters of blue's device that tell where multicast frames went, one line of
# NAME=VALUE words: XDP's drop_mcast_unjoined, the engine's rx_mcast_* and tx_mcast_loop
_rr_mc_counters() {
	local c out=
	for c in drop_mcast_unjoined rx_mcast_copies rx_mcast_no_group rx_mcast_bad_pkey tx_mcast_loop; do
		out+="$c=$(ctl_stat "$RXE_NS_BLUE" "$RXE_BLUE_IF" "$c") "
	done
	echo "$out"
}

# _rr_mc_delta FILE NAME: how much counter NAME grew between FILE's two lines
_rr_mc_delta() {
	awk -v k="$2" '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) v[NR] = kv[2] } }
		END { if (NR == 2 && v[1] != "" && v[2] != "") print v[2] - v[1] }' "$1"
}

# _rr_said FILE...: what the tools printed in FILEs, \r stripped, without blue's own
# counter lines (BLUE_RDMACM_STATS: "librdmacm: ibcm ... wrong_state=0 ...")
_rr_said() {
	cat "$@" | tr -d '\r' | grep -v '^librdmacm: '
}

# _rr_last FILE: the last lines of a side's log that are the tool's (not markers), on one line
_rr_last() {
	tr -d '\r' <"$1" | grep -vE '^(BLUE-STEP|tries=|rc=[0-9])' | tail -3 | tr '\n|' '; /'
}

# _rr_check_step NAME TOOL BLUE_ROLE BLUE_RC: the verdict of one step (in a subshell under
# ||, every check fails explicitly); the figure on the last line as "figure: ..."
_rr_check_step() {
	local name=$1 tool=$2 brole=$3 brc=$4 g=$RR_KEEP/$1.guest b=$RR_KEEP/$1.blue
	local grc cli srv n l side
	echo "--- $name: guest $tool ($([ "$brole" = client ] && echo server || echo client)):"
	cat "$g"
	echo "--- $name: blue $tool ($brole):"
	[ ! -s "$RR_KEEP/$name.tries" ] || cat "$RR_KEEP/$name.tries"
	cat "$b"
	if [ "$brole" = client ]; then cli=$b srv=$g; else cli=$g srv=$b; fi
	grc=$(rxe_step_rc "$g" "$name")
	if [ "$brc" != 0 ] || [ "$grc" != 0 ]; then
		fail "$name: blue's $tool exited $brc, the guest's ${grc:-? (no END marker)}; blue: $(_rr_last "$b") guest: $(_rr_last "$g")"
	fi
	# blue's IB CM decoded every MAD of the kernel's, knew what to do with each, and
	# nothing timed out (its counters at exit, BLUE_RDMACM_STATS=1; the last try's)
	if [ "$(_rr_stats "$tool")" = 1 ]; then
		l=$(grep '^librdmacm: ibcm ' "$b" | tail -1)
		[ -n "$l" ] || fail "$name: blue printed no IB CM counters (BLUE_RDMACM_STATS=1)"
		n=$(tr ' ' '\n' <<<"$l" | grep -E '^(timeouts|unhandled|wrong_state|no_conn|decode\.[a-z_]+)=' |
			grep -v '=0$' | tr '\n' ' ')
		[ -z "$n" ] || fail "$name: blue's IB CM counted $n(want 0)"
	fi
	case $tool in
	rping)
		# -v: the client prints each ping's payload, the server each one it got; -V:
		# both compare what came back
		n=$(tr -d '\r' <"$cli" | grep -cE '^ping data: rdma-ping-[0-9]+: ')
		[ "$n" = "$RR_PINGS" ] || fail "$name: the client printed $n ping lines, want $RR_PINGS: $(_rr_last "$cli")"
		n=$(tr -d '\r' <"$srv" | grep -cE '^server ping data: rdma-ping-[0-9]+: ')
		[ "$n" = "$RR_PINGS" ] || fail "$name: the server printed $n ping lines, want $RR_PINGS: $(_rr_last "$srv")"
		tr -d '\r' <"$cli" | grep -q "^ping data: rdma-ping-0: ABCDEFGHIJKLMNOPQRSTUVWXYZ" ||
			fail "$name: the first payload is not rdma-ping-0: ABC..."
		! _rr_said "$cli" "$srv" | grep -qiE 'data mismatch|wrong|error' ||
			fail "$name: rping reported an error: $(_rr_said "$cli" "$srv" | grep -m1 -iE 'data mismatch|wrong|error')"
		# the client's DREQ reached the server's CM: it saw DISCONNECTED. rping's client
		# itself exits right after rdma_disconnect (rping_run_client joins its CQ
		# thread, not its CM thread), so whether it prints the DISCONNECTED that the
		# DREP brings is a race it loses against the slow guest: not asked of it
		tr -d '\r' <"$srv" | grep -q 'DISCONNECT EVENT' ||
			fail "$name: the server ($([ "$srv" = "$b" ] && echo blue || echo the guest)) saw no DISCONNECTED: $(_rr_last "$srv")"
		echo "figure: $RR_PINGS pings of 64 bytes, each verified (-V)" ;;
	ucmatose)
		for side in "$cli" "$srv"; do
			tr -d '\r' <"$side" | grep -q 'data transfers complete' ||
				fail "$name: $([ "$side" = "$b" ] && echo blue || echo the guest) did not complete the transfers: $(_rr_last "$side")"
		done
		echo "figure: $RR_CONNS connections, data transfers complete" ;;
	udaddy)
		for l in "udaddy: starting client" "udaddy: connecting" "initiating data transfers" \
			"receiving data transfers" "data transfers complete"; do
			tr -d '\r' <"$cli" | grep -qxF "$l" || fail "$name: the client did not report '$l': $(_rr_last "$cli")"
		done
		for l in "udaddy: starting server" "receiving data transfers" "data transfers complete"; do
			tr -d '\r' <"$srv" | grep -qF "$l" || fail "$name: the server did not report '$l': $(_rr_last "$srv")"
		done
		! _rr_said "$cli" "$srv" | grep -q 'error' || fail "$name: udaddy reported an error: $(_rr_said "$cli" "$srv" | grep -m1 error)"
		echo "figure: $RR_CONNS SIDR-resolved UD connections, data transfers complete" ;;
	rdma_server)
		tr -d '\r' <"$cli" | grep -qx 'rdma_client: end 0' || fail "$name: rdma_client did not end 0: $(_rr_last "$cli")"
		tr -d '\r' <"$srv" | grep -qx 'rdma_server: end 0' || fail "$name: rdma_server did not end 0: $(_rr_last "$srv")"
		echo "figure: rdma_client: end 0, rdma_server: end 0" ;;
	ib_send_bw)
		compat_perftest_check "$cli" "$RR_ITERS" || fail "$name: client result table: $(_rr_last "$cli")"
		compat_perftest_check "$srv" "$RR_ITERS" || fail "$name: server result table: $(_rr_last "$srv")"
		echo "figure: $(compat_perftest_figure "$cli")" ;;
	mckey) _rr_check_mckey "$name" "$brole" "$cli" "$srv" ;;
	esac
}

# _rr_check_mckey NAME BLUE_ROLE SENDER_LOG RECEIVER_LOG: both joined the group's MGID
# (::ffff:GROUP, the kernel's for a RoCEv2 IPv4 group) and completed; the receiver's
# "data transfers complete" comes only once it has polled RR_MC_COUNT receive
# completions. On blue's side no frame of the group was dropped unjoined or for its
# P_Key; when blue received, the engine handed out one copy per message, and when it
# sent, looped one back per message.
_rr_check_mckey() {
	local name=$1 brole=$2 cli=$3 srv=$4 mc=$RR_KEEP/$1.mcstats l c d
	for l in "mckey: joined dgid: ::ffff:$RR_MC_GROUP" "initiating data transfers" \
		"data transfers complete" "return status 0"; do
		tr -d '\r' <"$cli" | grep -qF "$l" || fail "$name: the sender did not report '$l': $(_rr_last "$cli")"
	done
	for l in "mckey: joined dgid: ::ffff:$RR_MC_GROUP" "receiving data transfers" \
		"data transfers complete" "return status 0"; do
		tr -d '\r' <"$srv" | grep -qF "$l" || fail "$name: the receiver did not report '$l': $(_rr_last "$srv")"
	done
	! _rr_said "$cli" "$srv" | grep -qiE 'fail|error' ||
		fail "$name: mckey reported $(_rr_said "$cli" "$srv" | grep -m1 -iE 'fail|error')"
	echo "blue's counters before / after: $(tr '\n' '/' <"$mc")"
	for c in drop_mcast_unjoined rx_mcast_bad_pkey; do
		d=$(_rr_mc_delta "$mc" "$c")
		[ "$d" = 0 ] || fail "$name: blue's $c grew by ${d:-? (not read)} during the step, want 0"
	done
	if [ "$brole" = server ]; then
		# blue receives: each of rxe's messages went to the one attached QP
		for c in rx_mcast_copies:$RR_MC_COUNT rx_mcast_no_group:0; do
			d=$(_rr_mc_delta "$mc" "${c%:*}")
			[ "$d" = "${c#*:}" ] ||
				fail "$name: blue's ${c%:*} grew by ${d:-? (not read)}, want ${c#*:}"
		done
	else
		# blue sends as a full member: its device got its own copies (the kernel's
		# IP loopback gives rxe its own). Not asked: where the last copies went, since
		# mckey leaves right after its send completions and a copy the engine takes
		# after that finds no group (rx_mcast_no_group, 1 in 2 runs here)
		d=$(_rr_mc_delta "$mc" tx_mcast_loop)
		[ "$d" = "$RR_MC_COUNT" ] ||
			fail "$name: blue's tx_mcast_loop grew by ${d:-? (not read)}, want $RR_MC_COUNT"
	fi
	echo "figure: $RR_MC_COUNT messages of $RR_MC_SIZE bytes to $RR_MC_GROUP, all received"
}

# _rr_row_tool TOOL: the tool column of the results table
_rr_row_tool() {
	case $1 in
	rping) echo "rping -C $RR_PINGS (rdma_cm)" ;;
	ucmatose) echo "ucmatose -c $RR_CONNS (rdma_cm)" ;;
	udaddy) echo "udaddy -c $RR_CONNS (rdma_cm, SIDR)" ;;
	ib_send_bw) echo "ib_send_bw -R (rdma_cm)" ;;
	rdma_server) echo "rdma_server / rdma_client (rdma_cm)" ;;
	mckey) echo "mckey -C $RR_MC_COUNT (rdma_cm, UD multicast: the client sends)" ;;
	esac
}

# _rr_record_reset: drop this script's rows (peer rxe) from the results table; the
# matrix's rxe rows (test_compat_rxe.sh) stay
_rr_record_reset() {
	local tmp
	[ -f "$COMPAT_RESULTS" ] || return 0
	tmp=$(mktemp "$COMPAT_RESULTS.XXXXXX")
	awk -F'|' '{ t = $2; p = $4; gsub(/^ +| +$/, "", p) } NR <= 2 || p != "rxe" || t !~ /\(rdma_cm/' \
		"$COMPAT_RESULTS" >"$tmp"
	mv "$tmp" "$COMPAT_RESULTS"
}

# _rr_capture: tcpdump on the guest's tap, started once it says it listens (PID: RR_DUMP);
# IGMP too, for mckey's joins. --immediate-mode: each frame is written as it comes, not
# when the kernel's capture block fills or times out (1 s): the last step's frames, a
# moment before the kill at the end, were otherwise lost (12 "received by filter" and
# not captured, the 10 datagrams of mckey-brcv among them). -B: with it, the default
# 2 MiB buffer overflowed during ib_send_bw (600 "dropped by kernel")
_rr_capture() {
	local log=$RR_KEEP/tcpdump.log i
	rm -f "$RR_KEEP/rdmacm.pcap"
	rxe_bg "$RXE_NS_BR" RR_DUMP tcpdump -i "$RXE_TAP" --immediate-mode -B 65536 -U -s 0 -c 50000 -w "$RR_KEEP/rdmacm.pcap" \
		'udp port 4791 or igmp' 2>"$log"
	for ((i = 0; i < 50; i++)); do
		grep -q 'listening on' "$log" && return 0
		sleep 0.1
	done
	fail "tcpdump did not start: $(cat "$log")"
}

test_rdmacm_rxe_boot() {
	mkdir -p "$RR_KEEP"
	rm -f "$RR_KEEP"/verdicts "$RR_KEEP"/*.guest "$RR_KEEP"/*.blue "$RR_KEEP"/*.tries \
		"$RR_KEEP"/*.mcstats "$RR_KEEP/console.log"
	local why st name tool brole port out fig row t
	why=$(rxe_missing)
	[ -z "$why" ] || skip "$why"
	need_bins "$RR_LIB/libibverbs.so.1" "$RR_LIB/librdmacm.so.1" "$RR_BLUECTL"
	for t in rping ucmatose udaddy ib_send_bw rdma_server rdma_client mckey; do
		command -v "$t" >/dev/null || skip "$t not installed (rdmacm-utils, perftest)"
	done
	compat_env "$RR_LIB"
	# the binaries are the distribution's: they must load our librdmacm
	t=$(LD_LIBRARY_PATH="$RR_LIB" ldd "$(command -v rping)" | awk '$1 == "librdmacm.so.1" { print $3 }')
	[ "$t" -ef "$RR_LIB/librdmacm.so.1" ] || fail "rping loads $t, not $RR_LIB/librdmacm.so.1"
	rxe_images || {
		[ $? -eq 2 ] && skip "guest image inputs missing; run scripts/deps.sh"
		fail "initramfs build failed (see above)"
	}
	rxe_blue_up "rrx$BASHPID" "$RR_BLUECTL" || fail "cannot attach blue to rrx$BASHPID"
	# blue's device is named after its interface (perftest's -d)
	RR_DEV=$RXE_BLUE_IF
	rxe_blue "${COMPAT_ENV[@]}" timeout 20 ibv_devices 2>&1 | grep -qw "$RR_DEV" ||
		fail "ibv_devices on the compat library does not list $RR_DEV: $(rxe_blue "${COMPAT_ENV[@]}" timeout 20 ibv_devices 2>&1 | tr '\n' ' ')"
	# every RoCEv2 frame on the guest's tap (the MADs on QP1, the data; IGMP), for diagnosis:
	# $RR_KEEP/rdmacm.pcap; -c bounds it if something loops
	_rr_capture
	rxe_guest_start "$(_rr_guest_cmd)"
	on_exit "tr -d '\r' <\"\$RXE_LOG\" >$RR_KEEP/console.log 2>/dev/null"
	rxe_guest_wait READY 150 || fail "guest never became READY"
	echo "boot: READY $(rxe_guest_elapsed) s after QEMU start"
	_rr_record_reset
	: >"$RR_KEEP/verdicts"
	for st in "${RR_STEPS[@]}"; do
		read -r name tool brole port <<<"$st"
		row=$(_rr_row_tool "$tool")
		_rr_run_step "$name" "$tool" "$brole" "$port"
		# shellcheck disable=SC2030,SC2031 # the subshell only reads
		if out=$(_rr_check_step "$name" "$tool" "$brole" "$RXE_BRC" 2>&1); then
			fig=$(sed -n 's/^figure: //p' <<<"$out" | tail -1)
			compat_record "$row" "$brole" rxe pass "$fig"
			echo "$name: pass ($fig)"
			echo "$name $tool pass" >>"$RR_KEEP/verdicts"
		else
			echo "$out"
			fig=$(grep '^failure:' <<<"$out" | tail -1 | sed 's/^failure: //')
			compat_record "$row" "$brole" rxe FAIL "$fig"
			echo "$name $tool FAIL $fig" >>"$RR_KEEP/verdicts"
		fi
	done
	echo "--- results ($COMPAT_RESULTS)"
	grep -F '(rdma_cm' "$COMPAT_RESULTS" || true
	rxe_guest_wait EXIT 60 || fail "the guest script did not finish"
	echo "guest: script exited $(rxe_guest_rc), $(rxe_guest_elapsed) s after QEMU start"
}

# _rr_verdict TOOL: fail unless both of TOOL's steps passed in test_rdmacm_rxe_boot
_rr_verdict() {
	local v=$RR_KEEP/verdicts bad
	[ -s "$v" ] || skip "test_rdmacm_rxe_boot ran no step (skipped or failed before; see its log)"
	[ "$(awk -v t="$1" '$2 == t' "$v" | wc -l)" = 2 ] || fail "$1: not both steps in $v"
	bad=$(awk -v t="$1" '$2 == t && $3 != "pass" { $2 = ""; $3 = "failed:"; print }' "$v")
	[ -z "$bad" ] || fail "$(tr '\n' ' ' <<<"$bad")"
	awk -v t="$1" '$2 == t { print $1 ": pass" }' "$v"
}

test_rdmacm_rxe_rping() { _rr_verdict rping; }
test_rdmacm_rxe_ucmatose() { _rr_verdict ucmatose; }
test_rdmacm_rxe_udaddy() { _rr_verdict udaddy; }
test_rdmacm_rxe_send_bw() { _rr_verdict ib_send_bw; }
test_rdmacm_rxe_server_client() { _rr_verdict rdma_server; }
test_rdmacm_rxe_mckey() { _rr_verdict mckey; }

# The capture of the whole boot (tshark reads it): no RC NAK either way (the PSN reading of
# a REQ/REP, cm_mad.h, showed as a PSN sequence error NAK from rxe), and the IB CM's MADs
# of every kind the tools exchanged, counted per direction
test_rdmacm_rxe_wire() {
	local pc=$RR_KEEP/rdmacm.pcap naks counts
	[ -s "$RR_KEEP/verdicts" ] || skip "test_rdmacm_rxe_boot ran no step (skipped or failed before; see its log)"
	command -v tshark >/dev/null || skip "tshark not installed"
	[ -s "$pc" ] || fail "no capture at $pc"
	# AETH syndrome: 0x00-0x1f ACK, 0x20-0x3f RNR NAK, 0x60-0x7f NAK
	naks=$(tshark -r "$pc" -d udp.port==4791,infiniband -T fields -e ip.src -e infiniband.aeth.syndrome \
		-Y infiniband.aeth 2>/dev/null | awk '$2 >= 32 { n[$1 " syndrome " $2]++ }
			END { for (k in n) printf "%s x%d; ", k, n[k] }')
	counts=$(tshark -r "$pc" -d udp.port==4791,infiniband -T fields -e ip.src -e _ws.col.Info 2>/dev/null |
		awk -F'\t' -v b="$RXE_BLUE_IP" '$2 ~ /^CM: / { sub(/^CM: /, "", $2); n[($1 == b ? "blue " : "rxe ") $2]++ }
			END { for (k in n) printf "%s %d\n", k, n[k] }' | sort)
	echo "--- CM MADs in $pc (sender, kind, count)"
	echo "$counts"
	[ -n "$counts" ] || fail "no CM MAD in the capture"
	local k side
	for k in ConnectRequest ConnectReply ReadyToUse DisconnectRequest DisconnectReply \
		ServiceIDResReq ServiceIDResReqResp; do
		for side in blue rxe; do
			grep -q "^$side $k " <<<"$counts" || fail "$side sent no $k"
		done
	done
	[ -z "$naks" ] || fail "NAKs in the RC streams: $naks"
	_rr_wire_mckey "$pc"
}

# _rr_mc_mac GROUP: the Ethernet address of an IPv4 group (01:00:5e and its low 23 bits)
_rr_mc_mac() {
	local a b c d
	IFS=. read -r a b c d <<<"$1"
	printf '01:00:5e:%02x:%02x:%02x\n' $((b & 127)) "$c" "$d"
}

# _rr_wire_mckey PCAP: mckey's steps on the wire. Each side sent RR_MC_COUNT datagrams
# to the group, every one to its MAC and DestQP 0xFFFFFF with Q_Key 0x01234567
# (RDMA_UDP_QKEY); each side's kernel reported its membership (IGMP: the guest's cma
# on its join, blue's IP_ADD_MEMBERSHIP on its first attach).
_rr_wire_mckey() {
	local pc=$1 mac rows side n bad
	mac=$(_rr_mc_mac "$RR_MC_GROUP")
	rows=$(tshark -r "$pc" -d udp.port==4791,infiniband -T fields -e ip.src -e eth.dst \
		-e infiniband.bth.destqp -e infiniband.deth.q_key \
		-Y "ip.dst == $RR_MC_GROUP && udp.port == 4791" 2>/dev/null)
	echo "--- datagrams to $RR_MC_GROUP (sender, count)"
	awk -v b="$RXE_BLUE_IP" '{ n[$1 == b ? "blue" : "rxe"]++ } END { for (k in n) print k, n[k] }' <<<"$rows"
	for side in "$RXE_BLUE_IP" "$RXE_GUEST_IP"; do
		n=$(awk -v s="$side" '$1 == s' <<<"$rows" | wc -l)
		[ "$n" = "$RR_MC_COUNT" ] || fail "$side sent $n datagrams to $RR_MC_GROUP, want $RR_MC_COUNT"
	done
	# tshark prints the QPN and the Q_Key in hex of its own widths (0xffffff,
	# 0x0000000001234567): compared without the 0x and leading zeros
	bad=$(awk -v m="$mac" '{ q = $3; k = $4; sub(/^0x0*/, "", q); sub(/^0x0*/, "", k) }
		$2 != m || q != "ffffff" || k != "1234567"' <<<"$rows" | head -3)
	[ -z "$bad" ] || fail "datagrams to $RR_MC_GROUP not to $mac / QPN 0xFFFFFF / Q_Key 0x01234567: $bad"
	rows=$(tshark -r "$pc" -T fields -e ip.src -e igmp.maddr -Y igmp 2>/dev/null)
	for side in "$RXE_BLUE_IP" "$RXE_GUEST_IP"; do
		awk -v s="$side" -v g="$RR_MC_GROUP" '$1 == s && index("," $2 ",", "," g ",")' <<<"$rows" |
			grep -q . || fail "$side sent no IGMP report for $RR_MC_GROUP: $(tr '\n' ';' <<<"$rows")"
	done
}
