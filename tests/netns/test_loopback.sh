# shellcheck shell=bash
# Several verbs contexts of one device in one process, and loopback (issue 14 item 2):
# a python3-pyverbs program (tests/netns/two_contexts.py) opens the blue device twice,
# connects an RC QP of each context to the other's, and moves data both ways with every
# byte checked (SEND, WRITE, READ, atomics), over libblue's libibverbs.so.1. Only one end
# of the veth pair has blue: nothing leaves the engine, and bluectl stats shows the
# frames as looped back (tx_loopback) with none on the wire (the HAL sent none).
# ibv_rc_pingpong's server and client are two processes, and one netdev queue serves one
# process, so rdma-core's pingpong cannot loop back on blue; the pyverbs program stands in.
# Run: B=build bash tests/lib/runner.sh tests/netns/test_loopback.sh
#
# Test functions: test_two_contexts_one_process
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh
# shellcheck source=tests/lib/compat.sh
source tests/lib/compat.sh

BLUECTL=$PWD/$B/bin/bluectl
LB_LIB=$PWD/$B/compat

test_two_contexts_one_process() {
	local out hal_tx lb stats
	need_bins "$BLUECTL" "$LB_LIB/libibverbs.so.1"
	/usr/bin/python3 -c 'import pyverbs.device' 2>/dev/null ||
		skip "python3-pyverbs is not installed (make deps)"
	compat_env "$LB_LIB"
	netns_setup lo2 10.201.96.1 10.201.96.2
	blue_attach "$NS_A" "$IF_A"
	out=$(mktemp)
	on_exit "rm -f $out"
	ns_exec "$NS_A" timeout 60 "${COMPAT_ENV[@]}" /usr/bin/python3 \
		tests/netns/two_contexts.py "$IF_A" 1 >"$out" 2>&1 || { cat "$out"; fail "two_contexts.py"; }
	cat "$out"
	grep -q ': ok$' "$out" || fail "two_contexts.py did not report ok"
	stats=$(ns_exec "$NS_A" "$BLUECTL" stats "$IF_A")
	lb=$(ctl_stat "$NS_A" "$IF_A" tx_loopback)
	# the hal section comes first: its tx_frames are the frames put on the TX ring
	hal_tx=$(awk '$1 == "tx_frames" { print $2; exit }' <<<"$stats")
	echo "tx_loopback $lb, HAL tx_frames $hal_tx"
	# both contexts on one libblue context: the device was opened once
	grep -q 'opened 1 times since attach' <<<"$stats" ||
		{ echo "$stats"; fail "the process opened libblue on $IF_A more than once"; }
	[ "${lb:-0}" -gt 0 ] || fail "no frame counted as looped back (tx_loopback '$lb')"
	[ "$hal_tx" = 0 ] || fail "$hal_tx frames went to the HAL's TX ring"
}
