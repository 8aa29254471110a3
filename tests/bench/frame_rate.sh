#!/usr/bin/env bash
# Raw frame rate: RoCEv2 frames steered by blue's XDP program into one AF_XDP socket of
# the HAL, against a plain UDP socket pair, over one veth link between two fresh
# namespaces, at 64-byte and 1 KiB frames. Each case runs BENCH_SECS seconds (default
# 3); the sender is pinned to CPU 0 and the receiver to CPU 1 (veth runs the receive
# path, XDP included, on the sender's CPU: ARCHITECTURE.md "facts").
# Usage: B=build bash tests/bench/frame_rate.sh (make bench runs it)
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
SECS=${BENCH_SECS:-3}
RATE=$PWD/$B/tests/bench/hal_rate
BLUECTL=$PWD/$B/bin/bluectl
IP_A=10.201.92.1
IP_B=10.201.92.2
QPN=0x77
PORT=5555

# shellcheck source=tests/bench/lib.sh
source tests/bench/lib.sh

{ [ -x "$RATE" ] && [ -x "$BLUECTL" ]; } || die "build first: make B=$B all"
NCPU=$(nproc)
CPU_TX=0
CPU_RX=$((NCPU > 1 ? 1 : 0))

NS_A=blue-hb-$$-a
NS_B=blue-hb-$$-b
IF_A=hb0p$$
IF_B=hb1p$$
netns_pair "$NS_A" "$NS_B" "$IF_A" "$IF_B" "$IP_A" "$IP_B"
ns_exec "$NS_A" sysctl -qw "net.ipv6.conf.$IF_A.disable_ipv6=1"
ns_exec "$NS_B" sysctl -qw "net.ipv6.conf.$IF_B.disable_ipv6=1"
MAC_A=$(mac_of "$NS_A" "$IF_A")
MAC_B=$(mac_of "$NS_B" "$IF_B")
LOG=$(mktemp -d)
on_exit "rm -rf $LOG"

attach() {
	blue_attach "$NS_B" "$IF_B" >/dev/null || die "attach failed"
}
detach() { ns_exec "$NS_B" "$BLUECTL" detach "$IF_B" >/dev/null 2>&1 || true; }

# run_case NAME RECV_ARGS -- SEND_ARGS: start the receiver in B, wait for READY, run the
# sender in A, collect both rates into $LOG/NAME.{recv,send}.
run_case() {
	local name=$1 rpid; shift
	local -a rargs=() sargs=()
	while [ "$1" != "--" ]; do rargs+=("$1"); shift; done
	shift
	sargs=("$@")
	ns_bg "$NS_B" rpid timeout $((SECS + 15)) taskset -c "$CPU_RX" "$RATE" "${rargs[@]}" \
		--duration "$SECS" >"$LOG/$name.recv" 2>&1
	wait_for_line "$LOG/$name.recv" '^READY' 5 || { cat "$LOG/$name.recv"; die "$name: receiver not ready"; }
	ns_exec "$NS_A" timeout $((SECS + 10)) taskset -c "$CPU_TX" "$RATE" "${sargs[@]}" \
		--duration "$SECS" >"$LOG/$name.send" 2>&1 || { cat "$LOG/$name.send"; die "$name: sender failed"; }
	wait "$rpid" || { cat "$LOG/$name.recv"; die "$name: receiver failed"; }
}

field() { awk -v k="$2" '/^(RESULT|SENT)/ { for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }' "$1"; }
frame_len() { sed -nE 's/.*sending ([0-9]+)-byte frames.*/\1/p' "$1"; }

SIZES="64 1024"
echo "bench: $SECS s per case, sender on CPU $CPU_TX, receiver on CPU $CPU_RX"

# UDP baseline first, on the plain link: the kernel stack at its best, no XDP at all.
for size in $SIZES; do
	run_case "udp-$size" udp-recv --bind "$IP_B" --port "$PORT" -- \
		udp-send --dst-ip "$IP_B" --port "$PORT" --size "$size"
done

attach
mode=""
for size in $SIZES; do
	run_case "xsk-$size" xsk-recv "$IF_B" --qpn "$QPN" -- \
		xsk-send "$IF_A" --qpn "$QPN" --size "$size" --src-mac "$MAC_A" \
		--dst-mac "$MAC_B" --src-ip "$IP_A" --dst-ip "$IP_B"
	mode=$(sed -nE 's/^hal_rate: (.*) mode$/\1/p' "$LOG/xsk-$size.recv")
done
# UDP again with blue attached: its packets take XDP_PASS (pass_non_roce) first.
for size in $SIZES; do
	run_case "udpx-$size" udp-recv --bind "$IP_B" --port "$PORT" -- \
		udp-send --dst-ip "$IP_B" --port "$PORT" --size "$size"
done
redirect=$(ctl_stat "$NS_B" "$IF_B" redirect)
detach

printf '\n%-6s  %-34s  %12s  %12s  %10s\n' frame path "sent/s" "received/s" "vs UDP"
for size in $SIZES; do
	udp=$(awk -v n="$(field "$LOG/udp-$size.recv" frames)" \
		-v t="$(field "$LOG/udp-$size.send" seconds)" 'BEGIN { print (t > 0 ? n / t : 0) }')
	for c in "xsk-$size|AF_XDP HAL, blue XDP steering ($mode)" \
		 "udp-$size|UDP socket -> UDP socket" \
		 "udpx-$size|UDP socket, blue attached (XDP_PASS)"; do
		name=${c%%|*}
		label=${c#*|}
		# Received frames over the sender's run time: a receiver that fell behind and
		# caught up later would otherwise look faster than the sender.
		rx=$(awk -v n="$(field "$LOG/$name.recv" frames)" \
			-v t="$(field "$LOG/$name.send" seconds)" 'BEGIN { print (t > 0 ? n / t : 0) }')
		tx=$(field "$LOG/$name.send" rate)
		ratio=$(awk -v a="$rx" -v b="$udp" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }')
		printf '%-6s  %-34s  %12.0f  %12.0f  %10s\n' "$(frame_len "$LOG/$name.send")B" \
			"$label" "$tx" "$rx" "$ratio"
	done
done
for size in $SIZES; do
	sent=$(field "$LOG/xsk-$size.send" frames)
	got=$(field "$LOG/xsk-$size.recv" frames)
	drops=$(sed -nE 's/^DROPS socket ([0-9]+)/\1/p' "$LOG/xsk-$size.recv")
	echo "AF_XDP $size: $got of $sent frames received; lost: $drops at the socket (RX ring" \
	     "full or no fill frame), $((sent - got - drops)) before it (veth)"
done
echo "blue counted $redirect XDP redirects in the AF_XDP cases"
