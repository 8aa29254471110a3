# shellcheck shell=bash
# The loader and bluectl against a real veth pair: attach in both modes, every refusal
# (twice, missing interface, no privileges, another program), attaching from inside
# `ip netns exec`, stats counting real traffic, and the QP table read back.
# Run: B=build bash tests/lib/runner.sh tests/netns/test_loader.sh
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh

BLUECTL=$PWD/$B/bin/bluectl
TEST_PASS_O=$PWD/$B/bpf/test_pass.bpf.o
PY=/usr/bin/python3
IP_A=10.201.77.1
IP_B=10.201.77.2

# Reasons as include/blue/stats.h defines them, written out here so that the test
# notices a reason bluectl forgets to print.
REASONS="pass_non_ip pass_ipv6 pass_non_udp pass_non_roce redirect drop_trunc_eth
drop_trunc_ip drop_bad_ip_hdr drop_ip_fragment drop_trunc_udp drop_bad_udp_len
drop_trunc_bth drop_bad_version drop_bad_opcode drop_bad_length drop_unknown_qpn
drop_qp_state drop_no_socket drop_wrong_queue drop_bad_pkey drop_mcast_unjoined"

# ld_setup: two namespaces and a veth pair named after this test's own PID, so a
# leftover from one test never meets the next. Sets NS_A NS_B IF_A IF_B PIN.
ld_setup() {
	command -v bpftool >/dev/null || skip "bpftool not installed"
	netns_setup ld "$IP_A" "$IP_B"
	need_bins "$BLUECTL"
	PIN=$(ns_exec "$NS_A" "$BLUECTL" pin-dir "$IF_A")
	# runs before the namespaces go: detach if still attached, then drop any pins
	on_exit "ns_exec $NS_A $BLUECTL detach $IF_A >/dev/null 2>&1; rm -rf $PIN; rmdir ${PIN%/*} /sys/fs/bpf/blue 2>/dev/null"
}

bluectl_a() { ns_exec "$NS_A" "$BLUECTL" "$@"; }

# xdp_of NS IF: "MODE ID" of the XDP program on IF (mode 1 native, 2 generic), "0 0"
# when none.
xdp_of() {
	ip -n "$1" -j link show "$2" | $PY -c '
import json, sys
x = json.load(sys.stdin)[0].get("xdp")
print(x["mode"], x["prog"]["id"]) if x and x.get("prog") else print(0, 0)'
}

pinned_prog_id() {
	bpftool -j prog show pinned "$PIN/prog" | $PY -c 'import json,sys; print(json.load(sys.stdin)["id"])'
}


# expect_fail OUT_FILE CMD...: CMD must exit non-zero; its stderr goes to OUT_FILE.
expect_fail() {
	local out=$1; shift
	if "$@" >/dev/null 2>"$out"; then
		fail "'$*' succeeded, expected an error"
	fi
	echo "refused as expected: $(cat "$out")"
}

assert_grep() {	# FILE FIXED-STRING
	grep -qF -- "$2" "$1" || fail "expected '$2' in: $(cat "$1")"
}

assert_not_attached() {
	[ ! -e "$PIN" ] || fail "pins left at $PIN: $(ls "$PIN")"
	[ "$(xdp_of "$NS_A" "$IF_A")" = "0 0" ] || fail "$IF_A still has XDP: $(xdp_of "$NS_A" "$IF_A")"
}

# wait_prog_gone ID: the kernel frees an unreferenced program after an RCU grace period.
wait_prog_gone() {
	local _
	for _ in $(seq 50); do
		bpftool prog show id "$1" >/dev/null 2>&1 || return 0
		sleep 0.1
	done
	fail "program id $1 still loaded after detach"
}

test_attach_native_and_detach() {
	ld_setup
	local out id mode name
	out=$(bluectl_a attach "$IF_A")
	echo "$out"
	grep -q "native mode" <<<"$out" || fail "attach did not report native mode: $out"

	case $PIN in /sys/fs/bpf/blue/netns-[0-9]*/"$IF_A") ;; *) fail "pin dir $PIN";; esac
	for name in prog link qp_ctx xsks stats dev_stats diag drop_events tune; do
		[ -e "$PIN/$name" ] || fail "missing pin $PIN/$name"
	done
	read -r mode id < <(xdp_of "$NS_A" "$IF_A")
	[ "$mode" = 1 ] || fail "expected native (mode 1) XDP on $IF_A, got mode $mode"
	[ "$id" = "$(pinned_prog_id)" ] || fail "attached prog $id is not the pinned $(pinned_prog_id)"
	ns_exec "$NS_A" ip link show "$IF_A" | grep -qw xdp || fail "ip link does not show xdp"
	bpftool prog show | grep -E "^$id: xdp +name blue_xdp" || fail "bpftool prog show lacks id $id"
	bpftool map show pinned "$PIN/qp_ctx" | grep -E 'array +name qp_ctx +flags 0x400' \
		|| fail "qp_ctx is not an mmapable array"
	bpftool map show pinned "$PIN/xsks" | grep -E 'xskmap +name xsks' || fail "xsks wrong"
	bpftool map show pinned "$PIN/stats" | grep -E 'percpu_array +name stats' || fail "stats wrong"
	bpftool map show pinned "$PIN/dev_stats" | grep -E 'array +name dev_stats +flags 0x400' \
		|| fail "dev_stats is not an mmapable array"
	bpftool map show pinned "$PIN/diag" | grep -E 'array +name diag +flags 0x400' || fail "diag wrong"
	bpftool map show pinned "$PIN/drop_events" | grep -E 'ringbuf +name drop_events' \
		|| fail "drop_events is not a ring buffer"
	bpftool map show pinned "$PIN/tune" | grep -E 'array +name tune +flags 0x400' || fail "tune wrong"

	out=$(bluectl_a detach "$IF_A")
	echo "$out"
	assert_not_attached
	wait_prog_gone "$id"
}

test_attach_generic() {
	ld_setup
	local mode id
	bluectl_a attach "$IF_A" --mode generic
	read -r mode id < <(xdp_of "$NS_A" "$IF_A")
	[ "$mode" = 2 ] || fail "expected generic (mode 2) XDP, got mode $mode"
	[ "$id" = "$(pinned_prog_id)" ] || fail "attached prog $id is not the pinned one"
	ns_exec "$NS_A" ip link show "$IF_A" | grep -qw xdpgeneric || fail "ip link does not show xdpgeneric"
	bluectl_a detach "$IF_A"
	assert_not_attached
}

test_attach_twice_refused() {
	ld_setup
	local err before after; err=$(mktemp)
	on_exit "rm -f $err"
	bluectl_a attach "$IF_A"
	before="$(xdp_of "$NS_A" "$IF_A") $(pinned_prog_id)"
	expect_fail "$err" bluectl_a attach "$IF_A"
	assert_grep "$err" "$IF_A: blue is already attached (pinned at $PIN)"
	assert_grep "$err" "bluectl detach $IF_A"
	# generic on top of native is the same refusal, not a second program
	expect_fail "$err" bluectl_a attach "$IF_A" --mode generic
	assert_grep "$err" "already attached"
	after="$(xdp_of "$NS_A" "$IF_A") $(pinned_prog_id)"
	[ "$before" = "$after" ] || fail "state changed: before '$before', after '$after'"
	bluectl_a detach "$IF_A"
	assert_not_attached
	# and detaching what is not attached is an error too
	expect_fail "$err" bluectl_a detach "$IF_A"
	assert_grep "$err" "$IF_A: blue is not attached"
}

test_missing_interface() {
	ld_setup
	local err ghost=blnx$BASHPID; err=$(mktemp)
	on_exit "rm -f $err"
	expect_fail "$err" bluectl_a attach "$ghost"
	assert_grep "$err" "$ghost: no such network interface"
	[ ! -e "$(bluectl_a pin-dir "$ghost")" ] || fail "pins made for a missing interface"
	expect_fail "$err" bluectl_a stats "$ghost"
	assert_grep "$err" "$ghost: blue is not attached"
	expect_fail "$err" bluectl_a detach "$ghost"
	assert_grep "$err" "$ghost"
}

test_unprivileged_refused() {
	ld_setup
	command -v setpriv >/dev/null || skip "setpriv not installed"
	local err id; err=$(mktemp)
	on_exit "rm -f $err"
	local nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	# The tree may sit where user 65534 cannot reach (CI clones under /root), so that
	# user runs a copy in a world-readable directory.
	local bin_dir; bin_dir=$(mktemp -d)
	on_exit "rm -rf $bin_dir"
	chmod 755 "$bin_dir"
	install -m 755 "$BLUECTL" "$bin_dir/bluectl"
	local BLUECTL=$bin_dir/bluectl
	"${nobody[@]}" test -x "$BLUECTL" || fail "user 65534 cannot execute $BLUECTL"

	expect_fail "$err" ns_exec "$NS_A" "${nobody[@]}" "$BLUECTL" attach "$IF_A"
	assert_grep "$err" "permission denied: attaching XDP needs CAP_NET_ADMIN and CAP_BPF"
	assert_not_attached

	# attached by root: an unprivileged detach changes nothing either
	bluectl_a attach "$IF_A"
	id=$(pinned_prog_id)
	expect_fail "$err" ns_exec "$NS_A" "${nobody[@]}" "$BLUECTL" detach "$IF_A"
	assert_grep "$err" "permission denied"
	[ "$(xdp_of "$NS_A" "$IF_A")" = "1 $id" ] || fail "unprivileged detach changed $IF_A"
	expect_fail "$err" ns_exec "$NS_A" "${nobody[@]}" "$BLUECTL" stats "$IF_A"
	assert_grep "$err" "permission denied"
	bluectl_a detach "$IF_A"
	assert_not_attached
}

test_other_program_attached() {
	ld_setup
	[ -f "$TEST_PASS_O" ] || fail "$TEST_PASS_O not built"
	local err mode id; err=$(mktemp)
	on_exit "rm -f $err"
	ns_exec "$NS_A" ip link set dev "$IF_A" xdpdrv obj "$TEST_PASS_O" sec xdp
	read -r mode id < <(xdp_of "$NS_A" "$IF_A")
	[ "$id" != 0 ] || fail "test_pass did not attach"

	expect_fail "$err" bluectl_a attach "$IF_A"
	assert_grep "$err" "$IF_A: another XDP program (id $id, name test_pass) is attached; detach it first"
	expect_fail "$err" bluectl_a attach "$IF_A" --mode generic
	assert_grep "$err" "another XDP program (id $id"
	[ "$(xdp_of "$NS_A" "$IF_A")" = "$mode $id" ] || fail "test_pass was replaced"
	[ ! -e "$PIN" ] || fail "refused attach left pins at $PIN"
	# bluectl never detaches a program it does not own
	expect_fail "$err" bluectl_a detach "$IF_A"
	[ "$(xdp_of "$NS_A" "$IF_A")" = "$mode $id" ] || fail "detach removed test_pass"
	ns_exec "$NS_A" ip link set dev "$IF_A" xdpdrv off
}

# A native attach on a netdev without native XDP fails after the pins were made: they
# must be rolled back.
test_failed_attach_rolls_back() {
	ld_setup
	local err; err=$(mktemp)
	on_exit "rm -f $err"
	# the namespace's own lo has no ndo_bpf, so native XDP is refused by the kernel; its
	# pins would be in this namespace's directory, which no other run shares
	local lo_pin; lo_pin=$(bluectl_a pin-dir lo)
	on_exit "rm -rf $lo_pin"
	expect_fail "$err" bluectl_a attach lo
	assert_grep "$err" "lo: the driver does not support native XDP; try '--mode generic'"
	[ ! -e "$lo_pin" ] || fail "pins left after a failed attach"
	[ "$(xdp_of "$NS_A" lo)" = "0 0" ] || fail "lo has XDP after a failed attach"
}

# The interface is deleted while attached: the kernel drops the program with the device
# (the XDP link then reports no interface), and detach must still clean the pins.
# (A deleted namespace: tests/netns/test_netns_pins.sh.)
test_detach_after_netdev_deleted() {
	ld_setup
	local err ifx; err=$(mktemp)
	on_exit "rm -f $err"
	bluectl_a attach "$IF_A" --mode generic
	ns_exec "$NS_A" ip link del "$IF_A"
	ifx=$(pin_link_ifindex "$PIN")
	[ "$ifx" = 0 ] || fail "the link of the deleted $IF_A reports ifindex '$ifx'"
	[ -e "$PIN/prog" ] || fail "pins vanished with the netdev"
	bluectl_a detach "$IF_A" 2>"$err" || { cat "$err"; fail "detach"; }
	cat "$err"
	assert_grep "$err" "$IF_A: its netdev is gone"
	[ ! -e "$PIN" ] || fail "pins left at $PIN"
}

# `ip netns exec` remounts /sys, hiding the host's bpffs: bluectl must mount one itself.
# The pins then live in that private mount, so everything runs in one context.
test_attach_inside_ip_netns_exec() {
	ld_setup
	local out
	out=$(ip netns exec "$NS_A" bash -ec "
		echo fs before: \$(stat -f -c %T /sys/fs/bpf)
		$BLUECTL attach $IF_A
		echo fs after: \$(stat -f -c %T /sys/fs/bpf)
		ls $PIN
		$BLUECTL stats $IF_A >/dev/null
		ip link show $IF_A | grep -qw xdp
		$BLUECTL detach $IF_A
		ls $PIN 2>/dev/null && exit 9
		echo done")
	echo "$out"
	grep -q '^fs after: bpf_fs' <<<"$out" || fail "no bpffs after attach"
	grep -qx stats <<<"$out" || fail "pins not listed inside"
	grep -qx "done" <<<"$out" || fail "the ip netns exec sequence did not finish"
	# the host never saw those pins, and nothing is left on the link
	assert_not_attached
}

test_stats_count_traffic() {
	ld_setup
	local r json
	bluectl_a attach "$IF_A"

	# right after attach: every reason, nothing counted
	for r in $REASONS; do
		[ "$(ctl_stat "$NS_A" "$IF_A" "$r")" = 0 ] || fail "$r: not listed or not 0"
	done
	json=$(bluectl_a stats "$IF_A" --json)
	REASONS="$REASONS" $PY -c '
import json, os, sys
d = json.loads(sys.argv[1])
want = os.environ["REASONS"].split()
assert list(d["stats"]) == want, list(d["stats"])
assert all(v == {"pkts": 0, "bytes": 0} for v in d["stats"].values()), d
' "$json" || fail "bad --json: $json"

	# 3 ICMP echo requests of 98 bytes (14 Ethernet + 20 IP + 8 ICMP + 56 data); with
	# static neighbours there is no ARP, and the replies leave by TX where XDP is not
	ns_exec "$NS_B" ping -c 3 -i 0.2 -W 1 "$IP_A" >/dev/null
	[ "$(ctl_stat "$NS_A" "$IF_A" pass_non_udp)" = 3 ] || fail "pass_non_udp: $(bluectl_a stats "$IF_A")"
	[ "$(ctl_stat "$NS_A" "$IF_A" pass_non_udp 3)" = 294 ] || fail "pass_non_udp bytes: $(bluectl_a stats "$IF_A")"
	# one UDP datagram to a port that is not 4791: 14 + 20 + 8 + 3 bytes ("hi\n");
	# nothing answers it, so wait for the receiver's NAPI to have run
	ns_exec "$NS_B" bash -c "echo hi >/dev/udp/$IP_A/9999"
	for r in $(seq 20); do
		[ "$(ctl_stat "$NS_A" "$IF_A" pass_non_roce)" = 0 ] || break
		sleep 0.1
	done
	[ "$(ctl_stat "$NS_A" "$IF_A" pass_non_roce)" = 1 ] || fail "pass_non_roce: $(bluectl_a stats "$IF_A")"
	[ "$(ctl_stat "$NS_A" "$IF_A" pass_non_roce 3)" = 45 ] || fail "pass_non_roce bytes: $(bluectl_a stats "$IF_A")"
	[ "$(ctl_stat "$NS_A" "$IF_A" redirect)" = 0 ] || fail "redirect counted without a QP"
	bluectl_a detach "$IF_A"
}

# qp_ctx_value FIELD=VALUE...: hex bytes of one struct blue_qp_ctx for `bpftool map
# update`, laid out from the pinned map's own BTF so the test follows the header.
qp_ctx_value() {
	bpftool -j btf dump map pinned "$PIN/qp_ctx" value | $PY -c '
import json, sys
t = [t for t in json.load(sys.stdin)["types"] if t.get("name") == "blue_qp_ctx"][0]
off = {m["name"]: m["bits_offset"] // 8 for m in t["members"]}
names = [m["name"] for m in t["members"]] + [None]
buf = bytearray(t["size"])
for kv in sys.argv[1:]:
    k, v = kv.split("=")
    i = names.index(k)
    end = off[names[i + 1]] if names[i + 1] else t["size"]
    size = min(end - off[k], 8)
    buf[off[k]:off[k] + size] = int(v, 0).to_bytes(size, "little")
print(" ".join("0x%02x" % b for b in buf))
' "$@"
}

test_qp_list_and_show() {
	ld_setup
	local out err; err=$(mktemp)
	on_exit "rm -f $err"
	bluectl_a attach "$IF_A"
	out=$(bluectl_a qp list "$IF_A")
	echo "$out"
	[ "$out" = "$IF_A: no QPs in use" ] || fail "empty table printed: $out"

	# one RC QP in RTS in slot 0x11, written as the runtime would (peer_ip is network
	# order, so 10.201.77.2 reads as 0x024dc90a little-endian)
	# shellcheck disable=SC2046
	bpftool map update pinned "$PIN/qp_ctx" key 0x11 0 0 0 value $(qp_ctx_value \
		qpn=0x11 xsk_slot=3 state=3 type=2 path_mtu=3 peer_qpn=0x22 peer_ip=0x024dc90a \
		sq_psn=0x123456 una_psn=0x123450 rq_psn=0xabcdef xdp_rx_pkts=7 retransmits=5)
	out=$(bluectl_a qp list "$IF_A")
	echo "$out"
	[ "$(grep -c '^0x' <<<"$out")" = 1 ] || fail "expected one QP row"
	grep -qE '^0x000011 +RTS +RC +3 +0x123456 +0x123450 +0xabcdef +7 +10\.201\.77\.2:0x000022 ' <<<"$out" \
		|| fail "QP row wrong: $out"

	out=$(bluectl_a qp show "$IF_A" 0x11)
	echo "$out"
	grep -qE '^state: +RTS \(3\)$' <<<"$out" || fail "state"
	grep -qE '^path_mtu: +1024 \(3\)$' <<<"$out" || fail "path_mtu"
	grep -qE '^peer_ip: +10\.201\.77\.2$' <<<"$out" || fail "peer_ip"
	grep -qE '^retransmits: +5$' <<<"$out" || fail "retransmits"
	[ "$(bluectl_a qp show "$IF_A" 17 | head -1)" = "$(head -1 <<<"$out")" ] || fail "decimal QPN"

	# same slot, other QPN: the owner check must say no
	expect_fail "$err" bluectl_a qp show "$IF_A" 0x1011
	assert_grep "$err" "QP 0x001011 not found (its slot 17 holds QP 0x000011)"
	expect_fail "$err" bluectl_a qp show "$IF_A" 0x12
	assert_grep "$err" "QP 0x000012 not found (slot 18 is free)"
	bluectl_a detach "$IF_A"
}
