# shellcheck shell=bash
# Containers: blue's pins are keyed by network namespace as well as interface name.
# Two namespaces that each have an eth0 (the usual container case) attach blue at the
# same time and move verified RC traffic at once, each bluectl and libibverbs (compat)
# seeing its own device;
# and the pins of a namespace deleted without a detach are reclaimed, with a notice, by
# the next attach (their XDP link reports no interface any more).
# Run: B=build bash tests/lib/runner.sh tests/netns/test_netns_pins.sh
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh
# shellcheck source=tests/lib/compat.sh
source tests/lib/compat.sh

BLUECTL=$PWD/$B/bin/bluectl
XFER=$PWD/$B/bin/blue_xfer
PY=/usr/bin/python3
IP_C=10.201.55.1	# the container's eth0, the same in every pair: they never meet
IP_H=10.201.55.2	# its peer

# np_pair TAG: namespaces blue-np-TAG-<pid>-c (with an interface named eth0) and
# blue-np-TAG-<pid>-h (its peer, np<TAG>h<pid>), blue attached on both. Sets NSC NSH PEER.
np_pair() {
	NSC=blue-np-$1-$BASHPID-c
	NSH=blue-np-$1-$BASHPID-h
	PEER=np$1h$BASHPID
	netns_pair "$NSC" "$NSH" eth0 "$PEER" "$IP_C" "$IP_H"
	ns_exec "$NSC" sysctl -qw net.ipv6.conf.eth0.disable_ipv6=1
	ns_exec "$NSH" sysctl -qw "net.ipv6.conf.$PEER.disable_ipv6=1"
}

test_two_eth0_attached_at_once() {
	[ "$(id -u)" -eq 0 ] || skip "needs root"
	need_bins "$BLUECTL" "$XFER" "$B/compat/libibverbs.so.1"
	command -v ibv_devices >/dev/null || skip "ibv_devices (rdma-core) not installed"
	local out c1 h1 p1 c2 h2 p2 s1 s2 k1 k2 rc1=0 rc2=0 src1=0 src2=0 d1 d2 r1 r2
	np_pair 1; c1=$NSC h1=$NSH p1=$PEER
	np_pair 2; c2=$NSC h2=$NSH p2=$PEER
	blue_attach "$c1" eth0 || fail "attach eth0 in $c1"
	blue_attach "$c2" eth0 || fail "attach eth0 in $c2 (with eth0 of $c1 attached)"
	blue_attach "$h1" "$p1" || fail "attach $p1"
	blue_attach "$h2" "$p2" || fail "attach $p2"
	d1=$(ns_exec "$c1" "$BLUECTL" pin-dir eth0)
	d2=$(ns_exec "$c2" "$BLUECTL" pin-dir eth0)
	echo "pins: $d1 and $d2"
	[ -n "$d1" ] && [ "$d1" != "$d2" ] || fail "both eth0s pin at '$d1'"

	s1=$(mktemp) s2=$(mktemp) k1=$(mktemp) k2=$(mktemp)
	on_exit "rm -f $s1 $s2 $k1 $k2"
	# both servers, then both clients, all four at once
	local sp1 sp2 cp1 cp2
	ns_bg "$c1" sp1 timeout 100 "$XFER" -d eth0 -T 20 >"$s1" 2>&1
	ns_bg "$c2" sp2 timeout 100 "$XFER" -d eth0 -T 20 >"$s2" 2>&1
	ns_bg "$h1" cp1 timeout 100 "$XFER" -d "$p1" -T 20 --op write,read,send --size 4K,64K \
		--iters 200 --verify "$IP_C" >"$k1" 2>&1
	ns_bg "$h2" cp2 timeout 100 "$XFER" -d "$p2" -T 20 --op write,read,send --size 4K,64K \
		--iters 200 --verify "$IP_C" >"$k2" 2>&1
	wait "$cp1" || rc1=$?
	wait "$cp2" || rc2=$?
	wait "$sp1" || src1=$?
	wait "$sp2" || src2=$?
	for f in "$s1" "$k1" "$s2" "$k2"; do echo "--- $f:"; cat "$f"; done
	[ "$rc1" -eq 0 ] && [ "$src1" -eq 0 ] || fail "pair 1: client $rc1, server $src1"
	[ "$rc2" -eq 0 ] && [ "$src2" -eq 0 ] || fail "pair 2: client $rc2, server $src2"
	grep -q '^RESULT: PASS' "$k1" || fail "pair 1: client did not pass"
	grep -q '^RESULT: PASS' "$k2" || fail "pair 2: client did not pass"
	grep -q '^server: PASS' "$s1" || fail "pair 1: server did not pass"
	grep -q '^server: PASS' "$s2" || fail "pair 2: server did not pass"

	# each namespace's bluectl reads its own eth0: both counted the traffic they steered
	r1=$(ctl_stat "$c1" eth0 redirect)
	r2=$(ctl_stat "$c2" eth0 redirect)
	echo "redirects: $c1 eth0 $r1, $c2 eth0 $r2"
	[ "${r1:-0}" -gt 0 ] && [ "${r2:-0}" -gt 0 ] || fail "redirect counters '$r1' '$r2'"
	# libibverbs (compat) in each namespace lists its own eth0 only: one device, the
	# GUID of that namespace's MAC
	local ns mac guid m
	compat_env "$PWD/$B/compat"
	for ns in "$c1" "$c2"; do
		mac=$(mac_of "$ns" eth0)
		IFS=: read -ra m <<<"$mac"
		guid=$(printf '%02x%s%sfffe%s%s%s' $((0x${m[0]} ^ 2)) "${m[1]}" "${m[2]}" "${m[3]}" \
			"${m[4]}" "${m[5]}")
		out=$(ns_exec "$ns" "${COMPAT_ENV[@]}" ibv_devices 2>&1)
		echo "$ns: $out"
		[ "$(grep -cE '^[[:space:]]+eth0[[:space:]]' <<<"$out")" -eq 1 ] &&
			grep -qE "^[[:space:]]+eth0[[:space:]]+$guid$" <<<"$out" ||
			fail "ibv_devices in $ns does not list its own eth0 ($guid) alone"
	done
	# and the pinned maps are two different maps
	[ "$(bpftool -j map show pinned "$d1/qp_ctx" | $PY -c 'import json,sys; print(json.load(sys.stdin)["id"])')" != \
	  "$(bpftool -j map show pinned "$d2/qp_ctx" | $PY -c 'import json,sys; print(json.load(sys.stdin)["id"])')" ] ||
		fail "both eth0s share one qp_ctx map"
	# a detach in one namespace leaves the other attached
	ns_exec "$c1" "$BLUECTL" detach eth0 || fail "detach eth0 in $c1"
	[ ! -e "$d1" ] || fail "$d1 left after detach"
	ns_exec "$c2" "$BLUECTL" stats eth0 >/dev/null || fail "eth0 of $c2 lost with $c1's detach"
}

test_attach_after_namespace_deleted() {
	[ "$(id -u)" -eq 0 ] || skip "needs root"
	command -v bpftool >/dev/null || skip "bpftool not installed"
	need_bins "$BLUECTL"
	local out stale n ifx
	out=$(mktemp)
	on_exit "rm -f $out"
	np_pair d
	ns_exec "$NSC" "$BLUECTL" attach eth0 --mode native >"$out" 2>&1 || { cat "$out"; fail "first attach"; }
	cat "$out"
	stale=$(sed -nE 's/.* pinned at (.*)$/\1/p' "$out")
	[ -n "$stale" ] && [ -d "$stale" ] || fail "no pin directory in: $(cat "$out")"
	# should the reclaim not happen, do not leave this run's debris behind
	on_exit "rm -rf $stale; rmdir ${stale%/*} 2>/dev/null"
	# the container goes away without a detach
	ip netns del "$NSC"
	ip netns del "$NSH"
	# namespace teardown runs in a kernel worker: wait (bounded) until it let go of eth0
	ifx=$(pin_link_ifindex "$stale")
	[ "${ifx:-0}" = 0 ] || fail "the XDP link of the deleted eth0 still reports ifindex $ifx"

	np_pair e
	blue_attach "$NSC" eth0 >"$out" 2>&1 || { cat "$out"; fail "attach after the deleted namespace"; }
	cat "$out"
	grep -qF "reclaimed $stale" "$out" || fail "no reclaim notice naming $stale"
	[ ! -e "$stale" ] || fail "$stale is still there"
	# the fresh attach works: its own pins are there and read back
	ns_exec "$NSC" "$BLUECTL" stats eth0 >/dev/null || fail "stats of the new eth0"
	n=$(ls "$(ns_exec "$NSC" "$BLUECTL" pin-dir eth0)" | wc -l)
	[ "$n" -ge 8 ] || fail "the new eth0 has $n pins"
}

test_live_pins_never_reclaimed() {
	# a live attach elsewhere (another namespace's eth0) and a directory that is not
	# ours survive an attach's reclaim pass
	[ "$(id -u)" -eq 0 ] || skip "needs root"
	need_bins "$BLUECTL"
	local c1 d1 foreign out
	out=$(mktemp)
	on_exit "rm -f $out"
	np_pair l; c1=$NSC
	blue_attach "$c1" eth0 || fail "attach in $c1"
	d1=$(ns_exec "$c1" "$BLUECTL" pin-dir eth0)
	foreign=/sys/fs/bpf/blue/npforeign$BASHPID
	mkdir -p "$foreign"
	on_exit "rmdir $foreign"
	np_pair m
	blue_attach "$NSC" eth0 >"$out" 2>&1 || { cat "$out"; fail "attach in $NSC"; }
	cat "$out"
	! grep -q "reclaimed $d1" "$out" || fail "the live pins of $c1 were reclaimed"
	[ -e "$d1/qp_ctx" ] || fail "$d1 lost its pins"
	[ -d "$foreign" ] || fail "$foreign (not blue's layout) was removed"
	ns_exec "$c1" "$BLUECTL" stats eth0 >/dev/null || fail "eth0 of $c1 no longer attached"
}
