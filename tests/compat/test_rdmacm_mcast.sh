# shellcheck shell=bash
# UD multicast through blue's librdmacm.so.1 and libibverbs.so.1, blue <-> blue:
#   - unmodified mckey (rdmacm-utils): a receiver in A joins a group and waits for the
#     messages, a sender in B joins it and sends them; both exit 0 and the receiver says
#     it got them all; while the receiver runs its group is in the multicast map and
#     joined on the netdev (ip maddr), afterwards neither (it left); the frames went to
#     the group's MAC (XDP redirected them), A's engine counted one copy a message
#     (bluectl stats: rx_mcast_copies) and B's one loopback a message (tx_mcast_loop).
#     IPv4 and IPv6 groups.
#   - after the receiver left, the sender's frames are dropped at XDP and counted
#     (drop_mcast_unjoined);
#   - the join's event and the leave, field by field (tests/compat/mc_probe.c).
# Two namespaces joined by a veth pair, blue attached to both ends, the tools loading
# $B/compat through LD_LIBRARY_PATH (compat_env).
# Run: B=build-<you> bash tests/lib/runner.sh tests/compat/test_rdmacm_mcast.sh [test_name]
#
# Test functions:
#   test_mckey test_mckey_ipv6 test_mckey_after_leave test_join_leave_probe
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh
# shellcheck source=tests/lib/compat.sh
source tests/lib/compat.sh

BLUECTL=$PWD/$B/bin/bluectl
MC_LIB=$PWD/$B/compat
MC_PROBE=$PWD/$B/tests/compat/mc_probe
MC_IP_A=10.201.72.1	# receiver
MC_IP_B=10.201.72.2	# sender
MC_IP6_A=fd00:b10e:72::1
MC_IP6_B=fd00:b10e:72::2
MC_GROUP=239.7.2.1
MC_GROUP6=ff0e::7:2:1
MC_COUNT=20
MC_SIZE=512

mc_setup() {
	need_bins "$MC_LIB/libibverbs.so.1" "$MC_LIB/librdmacm.so.1" "$BLUECTL"
	[ -x /usr/bin/mckey ] || skip "/usr/bin/mckey missing (make deps: rdmacm-utils)"
	compat_env "$MC_LIB"
	netns_setup mc "$MC_IP_A" "$MC_IP_B"
	blue_attach "$NS_A" "$IF_A"
	blue_attach "$NS_B" "$IF_B"
	MC_PIN_A=$(ns_exec "$NS_A" "$BLUECTL" pin-dir "$IF_A")
}

# mc_map_groups: the groups in A's multicast map, one GID a line (bpftool's dump)
mc_map_groups() {
	bpftool -j map dump pinned "$MC_PIN_A/mcast" | python3 -c '
import json, sys, socket
for e in json.load(sys.stdin):
    k = e.get("formatted", {}).get("key") or e["key"]
    g = k["gid"] if isinstance(k, dict) else k[:16]
    print(socket.inet_ntop(socket.AF_INET6, bytes(int(b, 0) if isinstance(b, str) else b for b in g)))'
}

# mc_run GROUP SRC_A SRC_B [leave]: mckey's receiver in A (-b SRC_A), then, once it has
# joined, its sender in B (-b SRC_B -s); both bounded. Checks the group is in A's map
# and on A's netdev while the receiver waits. Sets MC_SRV/MC_CLI (their outputs),
# MC_RRC/MC_SRC (their exit statuses).
mc_run() {
	local grp=$1 a=$2 b=$3 rpid i
	MC_SRV=$(mktemp)
	MC_CLI=$(mktemp)
	on_exit "rm -f $MC_SRV $MC_CLI"
	ns_bg "$NS_A" rpid timeout 40 "${COMPAT_ENV[@]}" stdbuf -oL \
		/usr/bin/mckey -m "$grp" -b "$a" -C "$MC_COUNT" -S "$MC_SIZE" >"$MC_SRV" 2>&1
	wait_for_line "$MC_SRV" "mckey: joined dgid" 15 "$rpid" ||
		{ cat "$MC_SRV"; fail "mckey's receiver did not join"; }
	# joined: steered by XDP to its socket, and a member on the netdev (IGMP/MLD)
	mc_map_groups | grep -qx "$(mc_gid "$grp")" ||
		{ mc_map_groups; fail "$grp is not in A's multicast map while joined"; }
	ip -n "$NS_A" maddr show dev "$IF_A" | grep -qw "$grp" ||
		{ ip -n "$NS_A" maddr show dev "$IF_A"; fail "$grp is not joined on $IF_A"; }
	MC_SRC=0
	ns_exec "$NS_B" timeout 40 "${COMPAT_ENV[@]}" stdbuf -oL \
		/usr/bin/mckey -m "$grp" -b "$b" -s -C "$MC_COUNT" -S "$MC_SIZE" >"$MC_CLI" 2>&1 ||
		MC_SRC=$?
	MC_RRC=0
	for ((i = 0; i < 100; i++)); do
		kill -0 "$rpid" 2>/dev/null || break
		sleep 0.1
	done
	wait "$rpid" || MC_RRC=$?
	echo "--- receiver: mckey -m $grp -b $a -C $MC_COUNT -S $MC_SIZE"; cat "$MC_SRV"
	echo "--- sender: mckey -m $grp -b $b -s -C $MC_COUNT -S $MC_SIZE"; cat "$MC_CLI"
}

# mc_gid GROUP: the group as a GID, as inet_ntop prints it (mckey's "joined dgid")
mc_gid() {
	python3 -c '
import socket, sys
a = sys.argv[1]
b = socket.inet_pton(socket.AF_INET6, a) if ":" in a else \
    bytes(10) + b"\xff\xff" + socket.inet_pton(socket.AF_INET, a)
print(socket.inet_ntop(socket.AF_INET6, b))' "$1"
}

# mc_expect_ok GROUP: both exited 0, reported the transfers, the group left everywhere
mc_expect_ok() {
	local grp=$1 line
	[ "$MC_RRC" -eq 0 ] || fail "the receiver exited $MC_RRC"
	[ "$MC_SRC" -eq 0 ] || fail "the sender exited $MC_SRC"
	for line in "mckey: joined dgid: $(mc_gid "$grp")" "receiving data transfers" \
		    "data transfers complete" "return status 0"; do
		grep -qF "$line" "$MC_SRV" || fail "the receiver did not report '$line'"
	done
	for line in "mckey: joined dgid: $(mc_gid "$grp")" "initiating data transfers" \
		    "data transfers complete" "return status 0"; do
		grep -qF "$line" "$MC_CLI" || fail "the sender did not report '$line'"
	done
	grep -q "failure\|error" "$MC_SRV" "$MC_CLI" && fail "mckey reported a failure"
	# the receiver left: no entry in the map, no membership on the netdev
	[ -z "$(mc_map_groups)" ] || { mc_map_groups; fail "A's multicast map is not empty"; }
	ip -n "$NS_A" maddr show dev "$IF_A" | grep -qw "$grp" &&
		fail "$grp is still joined on $IF_A after mckey left"
	# XDP steered every message to the receiver's socket; none dropped as unjoined
	[ "$(ctl_stat "$NS_A" "$IF_A" redirect)" -ge "$MC_COUNT" ] ||
		fail "A's XDP redirected fewer than $MC_COUNT frames"
	[ "$(ctl_stat "$NS_A" "$IF_A" drop_mcast_unjoined)" -eq 0 ] ||
		fail "A dropped frames of a group it had joined"
	# A's engine handed each message to the one attached QP; B's sender, a full member
	# attached to the group too, had each one looped back to its own device
	line=$(ctl_stat "$NS_A" "$IF_A" rx_mcast_copies)
	[ "$line" = "$MC_COUNT" ] || fail "A's rx_mcast_copies is ${line:-not shown}, want $MC_COUNT"
	line=$(ctl_stat "$NS_B" "$IF_B" tx_mcast_loop)
	[ "$line" = "$MC_COUNT" ] || fail "B's tx_mcast_loop is ${line:-not shown}, want $MC_COUNT"
}

test_mckey() {
	mc_setup
	mc_run "$MC_GROUP" "$MC_IP_A" "$MC_IP_B"
	mc_expect_ok "$MC_GROUP"
}

test_mckey_ipv6() {
	mc_setup
	netns_ipv6 "$MC_IP6_A" "$MC_IP6_B"
	mc_run "$MC_GROUP6" "$MC_IP6_A" "$MC_IP6_B"
	mc_expect_ok "$MC_GROUP6"
}

# once the receiver has left, what the sender sends to the group is dropped at A's XDP
# and counted under drop_mcast_unjoined, one per message
test_mckey_after_leave() {
	local before after rc=0
	mc_setup
	mc_run "$MC_GROUP" "$MC_IP_A" "$MC_IP_B"
	mc_expect_ok "$MC_GROUP"
	before=$(ctl_stat "$NS_A" "$IF_A" drop_mcast_unjoined)
	ns_exec "$NS_B" timeout 40 "${COMPAT_ENV[@]}" /usr/bin/mckey -m "$MC_GROUP" \
		-b "$MC_IP_B" -s -C "$MC_COUNT" -S "$MC_SIZE" >"$MC_CLI" 2>&1 || rc=$?
	cat "$MC_CLI"
	[ "$rc" -eq 0 ] || fail "the sender exited $rc"
	after=$(ctl_stat "$NS_A" "$IF_A" drop_mcast_unjoined)
	echo "drop_mcast_unjoined: $before -> $after"
	[ "$((after - before))" -eq "$MC_COUNT" ] ||
		fail "A counted $((after - before)) unjoined drops, want $MC_COUNT"
}

# the JOIN event's fields, the QP attached at the event, leave detaches, the errors
test_join_leave_probe() {
	local out rc=0
	need_bins "$MC_PROBE"
	mc_setup
	out=$(ns_exec "$NS_A" timeout 20 "${COMPAT_ENV[@]}" "$MC_PROBE" "$MC_IP_A" "$MC_GROUP" \
		2>&1) || rc=$?
	echo "$out"
	[ "$rc" -eq 0 ] || fail "mc_probe exited $rc"
	diff <(cat <<EOF
join unicast: -1 22
join_ex flags 7: -1 22
join: 0 0
event: RDMA_CM_EVENT_MULTICAST_JOIN status 0
ud: qp_num 0xffffff qkey 0x1234567 is_global 1 dgid $(mc_gid "$MC_GROUP") sgid_index 1 hop_limit 64 dlid 0 context ok
attached: yes
leave: 0 0
detached: yes
leave again: -1 99
join_ex sendonly: 0 0
event: RDMA_CM_EVENT_MULTICAST_JOIN status 0
destroy with a group joined: 0
left at destroy: yes
EOF
) <(grep -v "^libblue" <<<"$out") || fail "the probe's answers differ"
	[ -z "$(mc_map_groups)" ] || { mc_map_groups; fail "a group is left in the map"; }
}
