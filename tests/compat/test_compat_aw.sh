# shellcheck shell=bash
# IBA 1.5 ATOMIC WRITE and FLUSH through libibverbs, blue <-> blue: $B/tests/compat/aw_flush
# (a verbs program built against Debian's rdma-core 44 headers, declaring rdma-core 45's
# ibv_wr_flush itself) on $B/compat/libibverbs.so.1, server in one namespace and client in
# the other over a veth pair with blue attached to both ends.
# Run: B=build bash tests/lib/runner.sh tests/compat/test_compat_aw.sh
#
# Test functions:
#   test_aw_write_flush_read   atomic write of a pattern, flush, READ back: bytes compared on
#                              both sides
#   test_aw_write_nak          atomic write to an MR without REMOTE_WRITE: remote access
#                              error, the server's bytes unchanged
#   test_aw_flush_nak          flush of an MR without FLUSH_GLOBAL: remote access error
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh
# shellcheck source=tests/lib/compat.sh
source tests/lib/compat.sh

BLUECTL=$PWD/$B/bin/bluectl
AW_BIN=$PWD/$B/tests/compat/aw_flush
AW_LIB=$PWD/$B/compat
AW_IP_A=10.201.97.1	# server
AW_IP_B=10.201.97.2	# client

aw_setup() {
	need_bins "$AW_BIN" "$BLUECTL" "$AW_LIB/libibverbs.so.1"
	compat_env "$AW_LIB"
	netns_setup aw "$AW_IP_A" "$AW_IP_B"
	blue_attach "$NS_A" "$IF_A"
	blue_attach "$NS_B" "$IF_B"
}

# aw_wait_listen PORT: 0 once the server listens (bounded: 10 s)
aw_wait_listen() {
	local i
	for ((i = 0; i < 200; i++)); do
		ns_exec "$NS_A" ss -Hltn "sport = :$1" 2>/dev/null | grep -q LISTEN && return 0
		sleep 0.05
	done
	return 1
}

# aw_run PORT MODE: the server in A, the client in B with MODE; both must exit 0
aw_run() {
	local port=$1 mode=$2 spid rc=0 src=0 srv cli
	srv=$(mktemp)
	cli=$(mktemp)
	on_exit "rm -f $srv $cli"
	ns_bg "$NS_A" spid timeout 30 "${COMPAT_ENV[@]}" "$AW_BIN" -d "$IF_A" -g 1 server \
		"$port" >"$srv" 2>&1
	aw_wait_listen "$port" || { cat "$srv"; fail "aw_flush: the server did not listen on $port"; }
	ns_exec "$NS_B" timeout 30 "${COMPAT_ENV[@]}" "$AW_BIN" -d "$IF_B" -g 1 client "$AW_IP_A" \
		"$port" "$mode" >"$cli" 2>&1 || rc=$?
	wait "$spid" || src=$?
	echo "--- server"; cat "$srv"
	echo "--- client ($mode)"; cat "$cli"
	[ "$src" -eq 0 ] || fail "aw_flush server exited $src"
	[ "$rc" -eq 0 ] || fail "aw_flush client ($mode) exited $rc"
	AW_OUT=$(cat "$srv" "$cli")
}

test_aw_write_flush_read() {
	aw_setup
	aw_run 18710 ok
	grep -q "read back of 4096 bytes: all equal" <<<"$AW_OUT" || fail "client: no comparison line"
	grep -q "server: memory as expected" <<<"$AW_OUT" || fail "server: no memory check line"
}

test_aw_write_nak() {
	aw_setup
	aw_run 18711 nak-aw
	grep -q "nak-aw: remote access error" <<<"$AW_OUT" || fail "client: no remote access error"
	grep -q "server: memory as expected" <<<"$AW_OUT" || fail "server: bytes changed"
}

test_aw_flush_nak() {
	aw_setup
	aw_run 18712 nak-flush
	grep -q "nak-flush: remote access error" <<<"$AW_OUT" || fail "client: no remote access error"
}
