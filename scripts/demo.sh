#!/usr/bin/env bash
# make demo: the whole stack, as a newcomer would run it.
#  1. the raw data path: blue attached on one end of a veth pair; RoCEv2 frames for three
#     QPs (and some for a QP nobody owns) steered by XDP to one AF_XDP socket per QP;
#  2. the RC transport: blue attached on both ends, blue_xfer's server and client
#     connected through the connection manager, every RC operation (SEND, SEND with
#     immediate, WRITE, WRITE with immediate, READ, compare-and-swap, fetch-and-add) on
#     two QPs at 1 B, 4 KiB and 1 MiB, every payload checked end to end; the live QP
#     table (`bluectl qp list`) while the server holds its QPs, and the XDP verdicts.
# Everything is torn down at the end, also on failure or Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${B:-build}
BLUECTL=$PWD/$B/bin/bluectl
XFER=$PWD/$B/bin/blue_xfer
[ "$(id -u)" -eq 0 ] || { echo "demo: run as root (it creates namespaces and attaches XDP)" >&2; exit 1; }
for f in "$BLUECTL" "$XFER" "$B/tests/netns/xsk_recv" "$B/tests/netns/xsk_send"; do
	[ -x "$f" ] || { echo "demo: $f is missing; run make B=$B first" >&2; exit 1; }
done

# names carry the PID, so two demos (or a test) never meet (each namespace's pins are
# in a directory of its own, bluectl pin-dir)
NS_A=blue-demo-$$-a NS_B=blue-demo-$$-b
IF_A=bdm0p$$ IF_B=bdm1p$$
IP_A=10.201.77.1 IP_B=10.201.77.2
QPNS=0x11,0x1012,0x2ff3 UNKNOWN=0x1011 COUNT=200 PAYLOAD=1024
rpid='' spid='' PIN_A='' PIN_B=''
out=$(mktemp) srv=$(mktemp)

cleanup() {
	set +e
	[ -n "$rpid" ] && kill "$rpid" 2>/dev/null && wait "$rpid" 2>/dev/null
	[ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
	nsenter --net=/run/netns/$NS_A "$BLUECTL" detach $IF_A >/dev/null 2>&1
	nsenter --net=/run/netns/$NS_B "$BLUECTL" detach $IF_B >/dev/null 2>&1
	[ -n "${PIN_A:-}" ] && rm -rf "$PIN_A"
	[ -n "${PIN_B:-}" ] && rm -rf "$PIN_B"
	ip netns del $NS_A 2>/dev/null
	ip netns del $NS_B 2>/dev/null
	rm -f "$out" "$srv"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
# (background jobs below call nsenter directly, so that $! is the program's own PID)
in_a() { nsenter --net=/run/netns/$NS_A "$@"; }
in_b() { nsenter --net=/run/netns/$NS_B "$@"; }
wait_line() {	# FILE PATTERN SECONDS
	for _ in $(seq $(($3 * 10))); do grep -q "$2" "$1" && return 0; sleep 0.1; done
	return 1
}

step "namespaces $NS_A and $NS_B joined by veth $IF_A ($IP_A) <-> $IF_B ($IP_B)"
ip netns add $NS_A
ip netns add $NS_B
ip link add $IF_A netns $NS_A type veth peer name $IF_B netns $NS_B
ip -n $NS_A addr add $IP_A/24 dev $IF_A
ip -n $NS_B addr add $IP_B/24 dev $IF_B
ip -n $NS_A link set lo up
ip -n $NS_B link set lo up
ip -n $NS_A link set $IF_A up
ip -n $NS_B link set $IF_B up
MAC_A=$(ip -n $NS_A -j link show $IF_A | sed -nE 's/.*"address":"([^"]+)".*/\1/p')
MAC_B=$(ip -n $NS_B -j link show $IF_B | sed -nE 's/.*"address":"([^"]+)".*/\1/p')
ip -n $NS_A neigh replace $IP_B lladdr "$MAC_B" dev $IF_A nud permanent
ip -n $NS_B neigh replace $IP_A lladdr "$MAC_A" dev $IF_B nud permanent
# where each end's pins go: its namespace's own directory
PIN_A=$(in_a "$BLUECTL" pin-dir $IF_A)
PIN_B=$(in_b "$BLUECTL" pin-dir $IF_B)

# --- 1. the raw data path -----------------------------------------------------------
step "1. the data path: bluectl attach $IF_B; $COUNT frames to each of QPs $QPNS, 50 to $UNKNOWN"
in_b "$BLUECTL" attach $IF_B --mode native
nsenter --net=/run/netns/$NS_B timeout 30 "$B/tests/netns/xsk_recv" $IF_B --qpns $QPNS --count $COUNT \
	--payload $PAYLOAD --timeout-ms 10000 >"$out" 2>&1 &
rpid=$!
wait_line "$out" '^READY' 5 || { cat "$out"; exit 1; }
in_a timeout 20 "$B/tests/netns/xsk_send" $IF_A --src-mac "$MAC_A" --dst-mac "$MAC_B" \
	--src-ip $IP_A --dst-ip $IP_B --qpns $QPNS --count $COUNT \
	--unknown $UNKNOWN --unknown-count 50 --payload $PAYLOAD --sockets 2 >/dev/null
wait "$rpid"; rpid=
grep '^qpn ' "$out"
echo "(each QP's socket got exactly its frames; the unknown QPN was dropped by XDP)"

# --- 2. the RC transport ---------------------------------------------------------------
step "2. the RC transport: bluectl attach $IF_A too"
in_a "$BLUECTL" attach $IF_A --mode native

step "server on $IF_B: blue_xfer -d $IF_B --hold 60 (holds its QPs when the client is done)"
# nsenter execs blue_xfer, so $! is its PID (for SIGUSR1 below)
nsenter --net=/run/netns/$NS_B "$XFER" -d $IF_B --hold 60 >"$srv" 2>&1 &
spid=$!
wait_line "$srv" '^server: listening' 5 || { cat "$srv"; exit 1; }
cat "$srv"

step "client on $IF_A: every RC operation on 2 QPs at 1 B, 4 KiB and 1 MiB, verified"
echo "blue_xfer -d $IF_A --qps 2 --op all --size 1,4K,1M --iters 128 --verify --progress $IP_B"
in_a timeout 120 "$XFER" -d $IF_A --qps 2 --op all --size 1,4K,1M --iters 128 --verify \
	--progress $IP_B

wait_line "$srv" '^HOLDING' 10 || { cat "$srv"; exit 1; }
step "what the server checked on its side"
grep -E '^server: (round|PASS|FAIL)' "$srv"

step "bluectl qp list $IF_B, in the server's namespace, while its QPs are live"
in_b "$BLUECTL" qp list $IF_B
qpn=$(in_b "$BLUECTL" qp list $IF_B | awk 'NR == 2 { print $1 }')
step "bluectl qp show $IF_B $qpn (the live context of one QP, from the pinned BPF map)"
in_b "$BLUECTL" qp show $IF_B "$qpn"

step "bluectl stats $IF_B (every XDP verdict, by reason)"
in_b "$BLUECTL" stats $IF_B

step "releasing the server (kill -USR1 $spid)"
kill -USR1 "$spid"
wait "$spid"; spid=
tail -2 "$srv"

step "bluectl detach $IF_A $IF_B"
in_a "$BLUECTL" detach $IF_A
in_b "$BLUECTL" detach $IF_B
if ls "$PIN_A" "$PIN_B" >/dev/null 2>&1; then
	echo "pins left behind" >&2
	exit 1
fi
echo "demo: OK — the data path steered every frame, and every RC operation moved verified data"
