# shellcheck shell=bash
# The unmodified Debian rdma-core tools on blue, blue <-> blue: ibv_devices, ibv_devinfo,
# ibv_rc_pingpong and perftest 4.5's ib_{write,read,send}_{bw,lat} and ib_atomic_{bw,lat},
# each loading $B/compat/libibverbs.so.1 (and the librdmacm/libmlx5/libefa stubs) through
# LD_LIBRARY_PATH, between two namespaces joined by a veth pair with blue attached to both
# ends. Also: every versioned import of those binaries resolves in the compat libraries.
# A run passes on exit status 0 of both sides and the tool's own report: perftest's result
# table with #iterations = -n (tests/lib/compat.sh), rc_pingpong's two summary lines.
# Run: B=build-<you> bash tests/lib/runner.sh tests/compat/test_compat_local.sh
#
# Test functions (the blue <-> blue half of the compatibility matrix):
#   test_imports test_stubs test_devices test_devinfo test_devinfo_while_serving
#   test_rc_pingpong_64 test_rc_pingpong_8192
#   test_rc_pingpong_events test_rc_pingpong_new_send test_rc_pingpong_unsupported
#   test_srq_pingpong_4096 test_srq_pingpong_events test_asyncwatch_port
#   test_write_bw test_write_lat test_read_bw test_read_lat
#   test_send_bw test_send_lat test_atomic_bw test_atomic_lat
#   test_ud_pingpong_1000 test_ud_pingpong_64 test_send_bw_ud test_send_lat_ud
#   test_uc_pingpong_4096 test_uc_pingpong_64 test_write_bw_uc test_send_bw_uc
#   test_write_lat_uc test_send_lat_uc
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh
# shellcheck source=tests/lib/compat.sh
source tests/lib/compat.sh
# each run's rows (peer "blue") replace the last run's in $B/test-logs/compat-matrix.md
compat_record_reset blue

BLUECTL=$PWD/$B/bin/bluectl
CL_LIB=$PWD/$B/compat
CL_IP_A=10.201.94.1	# server
CL_IP_B=10.201.94.2	# client
CL_IP6_A=fd00:b10e:94::1	# server, RoCEv2 over IPv6 (GID 2)
CL_IP6_B=fd00:b10e:94::2	# client
CL_TOOLS=(ibv_devices ibv_devinfo ibv_rc_pingpong ibv_ud_pingpong ibv_uc_pingpong ib_write_bw ib_write_lat
	  ib_read_bw ib_read_lat ib_send_bw ib_send_lat ib_atomic_bw ib_atomic_lat
	  ibv_srq_pingpong ibv_asyncwatch)

cl_need() {
	local t
	need_bins "$CL_LIB/libibverbs.so.1" "$CL_LIB/librdmacm.so.1" "$CL_LIB/libmlx5.so.1" \
		"$CL_LIB/libefa.so.1"
	for t in "${CL_TOOLS[@]}"; do
		[ -x "/usr/bin/$t" ] || skip "/usr/bin/$t missing (make deps: ibverbs-utils, perftest)"
	done
	compat_env "$CL_LIB"
}

cl_setup() {
	cl_need
	netns_setup cl "$CL_IP_A" "$CL_IP_B"
	need_bins "$BLUECTL"
	blue_attach "$NS_A" "$IF_A"
	blue_attach "$NS_B" "$IF_B"
}

# cl_wait_listen NS PORT SECONDS: 0 once a TCP socket listens on PORT in NS. The rdma-core
# clients connect once and give up on a refusal, so the server must be up first.
cl_wait_listen() {
	local i
	for ((i = 0; i < $3 * 20; i++)); do
		ns_exec "$1" ss -Hltn "sport = :$2" 2>/dev/null | grep -q LISTEN && return 0
		sleep 0.05
	done
	return 1
}

# cl_run TOOL PORT SERVER_ARGS -- CLIENT_ARGS: TOOL's server in A, its client in B, both
# bounded; both must exit 0. Leaves the logs in CL_SRV and CL_CLI.
cl_run() {
	local tool=$1 port=$2; shift 2
	cl_run_with "$tool" "$port" : "" "$@"
}

# cl_run_with TOOL PORT HOOK ARG SERVER_ARGS -- CLIENT_ARGS: the same, with `HOOK ARG`
# run once the server listens, before the client starts
cl_run_with() {
	local tool=$1 port=$2 hook=$3 harg=$4 spid rc=0 src=0; shift 4
	local sargs=() cargs=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do sargs+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	cargs=("$@")
	CL_SRV=$(mktemp)
	CL_CLI=$(mktemp)
	on_exit "rm -f $CL_SRV $CL_CLI"
	ns_bg "$NS_A" spid timeout 30 "${COMPAT_ENV[@]}" "/usr/bin/$tool" "${sargs[@]}" >"$CL_SRV" 2>&1
	cl_wait_listen "$NS_A" "$port" 10 || { cat "$CL_SRV"; fail "$tool: the server did not listen on $port"; }
	"$hook" "$harg"
	ns_exec "$NS_B" timeout 30 "${COMPAT_ENV[@]}" "/usr/bin/$tool" "${cargs[@]}" >"$CL_CLI" 2>&1 ||
		rc=$?
	wait "$spid" || src=$?
	echo "--- server: $tool ${sargs[*]}"; cat "$CL_SRV"
	echo "--- client: $tool ${cargs[*]}"; cat "$CL_CLI"
	[ "$src" -eq 0 ] || fail "$tool server exited $src"
	[ "$rc" -eq 0 ] || fail "$tool client exited $rc"
}

# Every IBVERBS_*/RDMACM/MLX5/EFA import of every tool is defined by our libraries at the
# same version, and the tools load with immediate binding (they are linked BIND_NOW).
test_imports() {
	local t lib defs missing="" out
	cl_need
	# objdump -T: "... DF .text SIZE VERSION NAME" (an import: "*UND* ... (VERSION) NAME")
	defs=$(for lib in "$CL_LIB"/lib{ibverbs,rdmacm,mlx5,efa}.so.1; do
		objdump -T "$lib" | awk '$0 !~ /\*UND\*/ && / DF / { print $(NF-1), $NF }'
	done | sort -u)
	for t in "${CL_TOOLS[@]}"; do
		while read -r ver sym; do
			grep -qxF "$ver $sym" <<<"$defs" || missing+=" $t:$sym$ver"
		done < <(objdump -T "/usr/bin/$t" |
			 awk '$0 ~ /\*UND\*/ && $(NF-1) ~ /IBVERBS|RDMACM|MLX5|EFA/ {
				v = $(NF-1); gsub(/[()]/, "", v); print v, $NF }')
		out=$(LD_BIND_NOW=1 "${COMPAT_ENV[@]}" "/usr/bin/$t" --help 2>&1) || true
		if grep -qE "symbol lookup error|version .* not found|cannot open shared" <<<"$out"; then
			echo "$out" | head -5
			fail "$t does not load with the compat libraries"
		fi
		LD_LIBRARY_PATH=$CL_LIB ldd "/usr/bin/$t" | grep -E "lib(ibverbs|rdmacm|mlx5|efa)" |
			grep -vqF "$CL_LIB" && fail "$t: ldd resolves a system rdma-core library"
	done
	[ -z "$missing" ] || fail "imports the compat libraries do not define:$missing"
}

# The provider stubs answer "not supported" cleanly: NULL or -1 with errno EOPNOTSUPP, and
# rdma_event_str() a name (perftest prints it); librdmacm refuses a NULL id with EINVAL. Called through ctypes, no build needed.
test_stubs() {
	cl_need
	"${COMPAT_ENV[@]}" /usr/bin/python3 - "$CL_LIB" <<'PY' || fail "a stub misbehaved"
import ctypes, errno, sys
lib = sys.argv[1]
cm = ctypes.CDLL(lib + "/librdmacm.so.1", use_errno=True)
cm.rdma_event_str.restype = ctypes.c_char_p
assert cm.rdma_event_str(0) == b"RDMA_CM_EVENT_ADDR_RESOLVED", cm.rdma_event_str(0)
assert cm.rdma_event_str(9) == b"RDMA_CM_EVENT_ESTABLISHED"
assert cm.rdma_event_str(99) == b"UNKNOWN EVENT"
# librdmacm is real now (tests/compat/test_rdmacm.sh): bad arguments fail with EINVAL
ctypes.set_errno(0)
assert cm.rdma_create_id(None, None, None, 0x0106) == -1
assert ctypes.get_errno() == errno.EINVAL, ctypes.get_errno()
mlx5 = ctypes.CDLL(lib + "/libmlx5.so.1", use_errno=True)
mlx5.mlx5dv_open_device.restype = ctypes.c_void_p
ctypes.set_errno(0)
assert mlx5.mlx5dv_open_device(None, None) is None
assert ctypes.get_errno() == errno.EOPNOTSUPP
efa = ctypes.CDLL(lib + "/libefa.so.1", use_errno=True)
assert efa.efadv_query_device(None, None, 0) == errno.EOPNOTSUPP
print("stubs: ok")
PY
}

test_devices() {
	local out guid
	compat_record_at_exit ibv_devices - blue
	cl_setup
	out=$(ns_exec "$NS_A" "${COMPAT_ENV[@]}" ibv_devices 2>&1)
	echo "$out"
	# node GUID: the MAC's EUI-64 (universal/local bit flipped, ff:fe in the middle)
	local m
	IFS=: read -ra m <<<"$MAC_A"
	guid=$(printf '%02x%s%sfffe%s%s%s' $((0x${m[0]} ^ 2)) "${m[1]}" "${m[2]}" "${m[3]}" \
		"${m[4]}" "${m[5]}")
	grep -qE "^[[:space:]]+${IF_A}[[:space:]]+${guid}$" <<<"$out" || fail "ibv_devices: no '$IF_A $guid' line"
	! grep -q "$IF_B" <<<"$out" || fail "ibv_devices lists $IF_B, which is in another namespace"
	compat_passed "lists $IF_A, GUID $guid (from the MAC)"
}

test_devinfo() {
	local out
	compat_record_at_exit "ibv_devinfo -v" - blue
	cl_setup
	_cl_query_ok "idle"
	out=$CL_DEVINFO
	echo "$out"
	# what _cl_query_ok does not check
	grep -qE "link_layer:[[:space:]]+Ethernet" <<<"$out" || fail "link_layer is not Ethernet"
	grep -qE "board_id:[[:space:]]+blue_$IF_A$" <<<"$out" || fail "no board_id"
	grep -qE "GID\[ +0\]:[[:space:]]+fe80:" <<<"$out" || fail "GID[0] is not link-local"
	grep -qE "vendor_id:[[:space:]]+0x424c55$" <<<"$out" || fail "vendor_id is not 0x424c55"
	grep -qE "vendor_part_id:[[:space:]]+1$" <<<"$out" || fail "vendor_part_id is not 1"
	out=$(ns_exec "$NS_A" "${COMPAT_ENV[@]}" ibv_devinfo -d nosuchdev 2>&1) &&
		fail "ibv_devinfo -d nosuchdev succeeded"
	grep -q "wasn't found" <<<"$out" || fail "ibv_devinfo -d nosuchdev: $out"
	compat_passed "PORT_ACTIVE, MTU 1024, Ethernet, GID[1] ::ffff:$CL_IP_A RoCE v2"
}

# _cl_query_ok WHAT: ibv_devinfo -v and ibv_devices on IF_A succeed and say the right
# things; leaves ibv_devinfo's output in CL_DEVINFO
_cl_query_ok() {
	local out
	out=$(ns_exec "$NS_A" timeout 20 "${COMPAT_ENV[@]}" ibv_devinfo -v -d "$IF_A" 2>&1) ||
		{ echo "$out"; fail "ibv_devinfo failed while $1"; }
	CL_DEVINFO=$out
	grep -qE "^hca_id:[[:space:]]+$IF_A$" <<<"$out" || fail "no hca_id $IF_A"
	grep -qE "state:[[:space:]]+PORT_ACTIVE \(4\)" <<<"$out" || fail "port not ACTIVE"
	grep -qE "active_mtu:[[:space:]]+1024 \(3\)" <<<"$out" || fail "active_mtu is not 1024"
	grep -qE "max_qp_rd_atom:[[:space:]]+16$" <<<"$out" || fail "no max_qp_rd_atom 16"
	grep -qE "GID\[ +1\]:[[:space:]]+::ffff:${CL_IP_A//./\\.}, RoCE v2$" <<<"$out" ||
		fail "GID[1] is not ::ffff:$CL_IP_A, RoCE v2"
	out=$(ns_exec "$NS_A" timeout 20 "${COMPAT_ENV[@]}" ibv_devices 2>&1) ||
		{ echo "$out"; fail "ibv_devices failed while $1"; }
	grep -qE "^[[:space:]]+${IF_A}[[:space:]]+[0-9a-f]{16}$" <<<"$out" || fail "ibv_devices: $out"
	echo "ibv_devinfo, ibv_devices: ok while $1"
}

# A user runs ibv_devinfo (and ibv_devices) while a server runs on the same device.
# ib_write_bw's server has the device open while it waits for its client (perftest
# creates its PD, CQ and QP once connected); ibv_rc_pingpong's server has created them
# before it listens, so its context holds the netdev's one AF_XDP queue: a second
# data-path user is refused (checked, so the test means something), and the queries,
# which need no queue, still work. Each server's run then completes with its client.
test_devinfo_while_serving() {
	cl_setup
	cl_run_with ib_write_bw 18599 _cl_query_ok "ib_write_bw waits for its client" \
		-d "$IF_A" -x 1 -p 18599 -n 200 --report_gbits -- \
		-d "$IF_B" -x 1 -p 18599 -n 200 --report_gbits "$CL_IP_A"
	compat_perftest_check "$CL_CLI" 200 || fail "ib_write_bw: the client's report"
	compat_perftest_check "$CL_SRV" 200 || fail "ib_write_bw: the server's report"
	cl_run_with ibv_rc_pingpong 18600 _cl_held "ibv_rc_pingpong serves" \
		-d "$IF_A" -g 1 -p 18600 -n 50 -- -d "$IF_B" -g 1 -p 18600 -n 50 "$CL_IP_A"
	compat_pingpong_check "$CL_CLI" 50 4096 || fail "rc_pingpong: client summary"
}

# _cl_held WHAT: IF_A's data path is taken (another user is refused, saying why), and
# the queries work
_cl_held() {
	local out rc=0
	out=$(ns_exec "$NS_A" timeout 20 "${COMPAT_ENV[@]}" ibv_rc_pingpong -d "$IF_A" -g 1 \
		-p 18601 2>&1) || rc=$?
	echo "a second data-path user: exit $rc: $out"
	if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then
		fail "a second data-path user of $IF_A was let in"
	fi
	grep -q "another process" <<<"$out" || fail "the refusal does not say why"
	_cl_query_ok "$1"
}

# pp SIZE ITERS PORT [FLAGS]: ibv_rc_pingpong with the IPv4 GID (-g 1) both ways.
pp() {
	local size=$1 iters=$2 port=$3; shift 3
	cl_setup
	compat_record_at_exit "ibv_rc_pingpong -s $size${*:+ $*}" both blue
	cl_run ibv_rc_pingpong "$port" -d "$IF_A" -g 1 -p "$port" -s "$size" -n "$iters" "$@" -- \
		-d "$IF_B" -g 1 -p "$port" -s "$size" -n "$iters" "$@" "$CL_IP_A"
	compat_pingpong_check "$CL_SRV" "$iters" "$size" || fail "server summary"
	compat_pingpong_check "$CL_CLI" "$iters" "$size" || fail "client summary"
	grep -qE "remote address: +LID 0x0000, QPN 0x[0-9a-f]{6}, PSN 0x[0-9a-f]{6}, GID ::ffff:${CL_IP_A//./\\.}$" \
		"$CL_CLI" || fail "the client's remote address is not the server's IPv4 GID"
	! grep -q "invalid data" "$CL_SRV" "$CL_CLI" || fail "rc_pingpong found invalid data"
	compat_passed "$(compat_pingpong_figure "$CL_CLI")"
}

# RoCEv2 over IPv6: the netdev's IPv6 address is GID 2 at both ends (tests/lib/netns.sh
# netns_ipv6). The tools' out-of-band TCP exchange stays on IPv4: their servers listen
# on the first address getaddrinfo gives, 0.0.0.0. The GIDs carry the IPv6 addresses,
# and the peer's MAC comes from the kernel's neighbour discovery (no static entry).
test_rc_pingpong_ipv6() {
	cl_setup
	netns_ipv6 "$CL_IP6_A" "$CL_IP6_B"
	compat_record_at_exit "ibv_rc_pingpong -g 2 (IPv6)" both blue
	cl_run ibv_rc_pingpong 18578 -d "$IF_A" -g 2 -p 18578 -s 4096 -n 200 -- \
		-d "$IF_B" -g 2 -p 18578 -s 4096 -n 200 "$CL_IP_A"
	compat_pingpong_check "$CL_SRV" 200 4096 || fail "server summary"
	compat_pingpong_check "$CL_CLI" 200 4096 || fail "client summary"
	grep -qE "remote address: .*GID ${CL_IP6_A}$" "$CL_CLI" ||
		fail "the client's remote address is not the server's IPv6 GID"
	! grep -q "invalid data" "$CL_SRV" "$CL_CLI" || fail "rc_pingpong found invalid data"
	compat_passed "$(compat_pingpong_figure "$CL_CLI")"
}

# UD over IPv6: each datagram lands behind its GRH, the IPv6 header (unit ip6/* checks
# its bytes); ud_pingpong's AHs use GID 2.
test_ud_pingpong_ipv6() {
	cl_setup
	netns_ipv6 "$CL_IP6_A" "$CL_IP6_B"
	compat_record_at_exit "ibv_ud_pingpong -g 2 (IPv6)" both blue
	cl_run ibv_ud_pingpong 18577 -d "$IF_A" -g 2 -p 18577 -s 1000 -n 200 -- \
		-d "$IF_B" -g 2 -p 18577 -s 1000 -n 200 "$CL_IP_A"
	compat_pingpong_check "$CL_SRV" 200 1000 || fail "server summary"
	compat_pingpong_check "$CL_CLI" 200 1000 || fail "client summary"
	grep -qE "remote address: .*GID ${CL_IP6_A}$" "$CL_CLI" ||
		fail "the client's remote address is not the server's IPv6 GID"
	compat_passed "$(compat_pingpong_figure "$CL_CLI")"
}

test_write_bw_ipv6() {
	cl_setup
	netns_ipv6 "$CL_IP6_A" "$CL_IP6_B"
	compat_record_at_exit "ib_write_bw -x 2 (IPv6)" both blue
	cl_run ib_write_bw 18579 -d "$IF_A" -x 2 --ipv6 -p 18579 -n 500 -s 16384 --report_gbits -- \
		-d "$IF_B" -x 2 --ipv6 -p 18579 -n 500 -s 16384 --report_gbits "$CL_IP_A"
	compat_perftest_check "$CL_CLI" 500 || fail "ib_write_bw: the client's report"
	compat_perftest_check "$CL_SRV" 500 || fail "ib_write_bw: the server's report"
	# perftest prints a GID as 16 decimal bytes: fd00:b10e:94::1
	grep -q "GID: 253:00:177:14:00:148:00:00:00:00:00:00:00:00:00:01" "$CL_CLI" ||
		fail "ib_write_bw: the remote GID is not $CL_IP6_A"
	compat_passed "$(compat_perftest_figure "$CL_CLI")"
}

test_rc_pingpong_64() { pp 64 200 18581; }
test_rc_pingpong_8192() { pp 8192 200 18582; }
test_rc_pingpong_events() { pp 4096 100 18583 -e; }	# completion channel mode
# -N: ibv_create_qp_ex with send_ops_flags and the ibv_wr_* builders; -c checks the bytes
test_rc_pingpong_new_send() { pp 4096 100 18584 -N -c; }

# ud_pp SIZE ITERS PORT: ibv_ud_pingpong with the IPv4 GID (-g 1) both ways: UD QPs,
# Q_Keys, address handles, the GRH at the head of each receive buffer. SIZE is at most
# the port MTU (1024 here), which ud_pingpong itself checks.
ud_pp() {
	local size=$1 iters=$2 port=$3; shift 3
	cl_setup
	compat_record_at_exit "ibv_ud_pingpong -s $size" both blue
	cl_run ibv_ud_pingpong "$port" -d "$IF_A" -g 1 -p "$port" -s "$size" -n "$iters" -- \
		-d "$IF_B" -g 1 -p "$port" -s "$size" -n "$iters" "$CL_IP_A"
	compat_pingpong_check "$CL_SRV" "$iters" "$size" || fail "server summary"
	compat_pingpong_check "$CL_CLI" "$iters" "$size" || fail "client summary"
	grep -qE "remote address: +LID 0x0000, QPN 0x[0-9a-f]{6}, PSN 0x[0-9a-f]{6}(:|,) GID ::ffff:${CL_IP_A//./\\.}$" \
		"$CL_CLI" || fail "the client's remote address is not the server's IPv4 GID"
	compat_passed "$(compat_pingpong_figure "$CL_CLI")"
}

test_ud_pingpong_1000() { ud_pp 1000 200 18586; }
test_ud_pingpong_64() { ud_pp 64 200 18587; }

# uc_pp SIZE ITERS PORT: ibv_uc_pingpong with the IPv4 GID (-g 1) both ways: UC QPs (no
# ACKs: each SEND completes as it leaves), several packets per message above 1024 bytes.
uc_pp() {
	local size=$1 iters=$2 port=$3; shift 3
	cl_setup
	compat_record_at_exit "ibv_uc_pingpong -s $size" both blue
	cl_run ibv_uc_pingpong "$port" -d "$IF_A" -g 1 -p "$port" -s "$size" -n "$iters" -- \
		-d "$IF_B" -g 1 -p "$port" -s "$size" -n "$iters" "$CL_IP_A"
	compat_pingpong_check "$CL_SRV" "$iters" "$size" || fail "server summary"
	compat_pingpong_check "$CL_CLI" "$iters" "$size" || fail "client summary"
	grep -qE "remote address: +LID 0x0000, QPN 0x[0-9a-f]{6}, PSN 0x[0-9a-f]{6}, GID ::ffff:${CL_IP_A//./\\.}$" \
		"$CL_CLI" || fail "the client's remote address is not the server's IPv4 GID"
	compat_passed "$(compat_pingpong_figure "$CL_CLI")"
}

test_uc_pingpong_4096() { uc_pp 4096 200 18603; }
test_uc_pingpong_64() { uc_pp 64 200 18604; }

# What blue lacks makes rc_pingpong give up at once, saying so, not crash or hang:
# completion timestamps (-t), on-demand paging (-o), device memory (-j).
test_rc_pingpong_unsupported() {
	local f rc out
	cl_setup
	for f in -t -o -j; do
		rc=0
		out=$(ns_exec "$NS_A" timeout 10 "${COMPAT_ENV[@]}" ibv_rc_pingpong -d "$IF_A" -g 1 \
			-p 18585 "$f" 2>&1) || rc=$?
		echo "ibv_rc_pingpong $f: exit $rc: $out"
		[ "$rc" -eq 1 ] || fail "ibv_rc_pingpong $f exited $rc, want 1 (refused)"
		grep -qiE "capable|support" <<<"$out" || fail "ibv_rc_pingpong $f: no reason given"
	done
}

# spp SIZE ITERS PORT [FLAGS]: ibv_srq_pingpong (16 RC QPs on one SRQ each side), IPv4 GID.
spp() {
	local size=$1 iters=$2 port=$3; shift 3
	cl_setup
	compat_record_at_exit "ibv_srq_pingpong -s $size${*:+ $*}" both blue
	cl_run ibv_srq_pingpong "$port" -d "$IF_A" -g 1 -p "$port" -s "$size" -n "$iters" "$@" -- \
		-d "$IF_B" -g 1 -p "$port" -s "$size" -n "$iters" "$@" "$CL_IP_A"
	compat_pingpong_check "$CL_SRV" "$iters" "$size" || fail "server summary"
	compat_pingpong_check "$CL_CLI" "$iters" "$size" || fail "client summary"
	# one "local address" line per QP on each side (srq_pingpong.c prints them all)
	[ "$(grep -c 'local address:' "$CL_CLI")" -eq 16 ] || fail "the client did not set up 16 QPs"
	! grep -qiE "invalid data|Couldn't|failed" "$CL_SRV" "$CL_CLI" || fail "srq_pingpong reported an error"
	compat_passed "$(compat_pingpong_figure "$CL_CLI")"
}

# -c: every received buffer is checked against what the peer sent
test_srq_pingpong_4096() { spp 4096 200 18588 -c; }
test_srq_pingpong_events() { spp 64 200 18589 -e; }

# ibv_asyncwatch sleeps in ibv_get_async_event on a device it only opened; the carrier
# going away and coming back reaches it as PORT_ERR, then PORT_ACTIVE.
test_asyncwatch_port() {
	local out pid i
	cl_setup
	compat_record_at_exit ibv_asyncwatch - blue
	out=$(mktemp)
	on_exit "rm -f $out"
	# line-buffered: the watcher never exits on its own and is stopped by its timeout
	ns_bg "$NS_A" pid timeout 20 "${COMPAT_ENV[@]}" stdbuf -oL ibv_asyncwatch -d "$IF_A" >"$out" 2>&1
	for ((i = 0; i < 100; i++)); do
		grep -q "async event FD" "$out" && break
		sleep 0.05
	done
	grep -q "async event FD" "$out" || { cat "$out"; fail "ibv_asyncwatch did not start"; }
	ns_exec "$NS_A" ip link set "$IF_A" down
	for ((i = 0; i < 100; i++)); do grep -q "PORT_ERR" "$out" && break; sleep 0.05; done
	ns_exec "$NS_A" ip link set "$IF_A" up
	for ((i = 0; i < 100; i++)); do grep -q "PORT_ACTIVE" "$out" && break; sleep 0.05; done
	kill "$pid" 2>/dev/null || true
	wait "$pid" || true
	cat "$out"
	grep -qE "event_type IBV_EVENT_PORT_ERR \(10\), port 1" "$out" || fail "no PORT_ERR event"
	grep -qE "event_type IBV_EVENT_PORT_ACTIVE \(9\), port 1" "$out" || fail "no PORT_ACTIVE event"
	compat_passed "PORT_ERR, then PORT_ACTIVE on carrier down/up"
}

# perf TOOL ITERS PORT [FLAGS]: perftest's server in A, client in B, GID index 1.
perf() {
	local tool=$1 iters=$2 port=$3 label=$1; shift 3
	# as the rxe rows name them
	[[ " $* " =~ \ -c\ (UD|UC)\  ]] && label="$tool -c ${BASH_REMATCH[1]}"
	cl_setup
	compat_record_at_exit "$label" both blue
	cl_run "$tool" "$port" -d "$IF_A" -x 1 -p "$port" -n "$iters" "$@" -- \
		-d "$IF_B" -x 1 -p "$port" -n "$iters" "$@" "$CL_IP_A"
	compat_perftest_check "$CL_CLI" "$iters" || fail "$tool: the client's report"
	# whenever the tool's server prints a table, not only when this one did: a server
	# that died before its report fails here
	if compat_srv_prints_table "$tool"; then
		compat_perftest_check "$CL_SRV" "$iters" || fail "$tool: the server's report"
	fi
	echo "$tool: $(compat_perftest_figure "$CL_CLI")"
	compat_passed "$(compat_perftest_figure "$CL_CLI")"
}

# perftest's defaults otherwise (no -o: the initiator depth is what perftest asks for,
# clamped by the library); the BW runs report Gb/s, as the rxe rows do
test_write_bw() { perf ib_write_bw 500 18591 -s 16384 --report_gbits; }
test_write_lat() { perf ib_write_lat 200 18592; }
test_read_bw() { perf ib_read_bw 500 18593 -s 16384 --report_gbits; }
test_read_lat() { perf ib_read_lat 200 18594; }
test_send_bw() { perf ib_send_bw 500 18595 -s 16384 --report_gbits; }
test_send_lat() { perf ib_send_lat 200 18596; }
# UD (-c UD): one message per MTU at most, address handles, the GRH in each receive
test_send_bw_ud() { perf ib_send_bw 500 18599 -c UD -s 1024 --report_gbits; }
test_send_lat_ud() { perf ib_send_lat 200 18600 -c UD -s 1024; }
# UC (-c UC): WRITE and SEND with no ACKs, messages of several packets. Nothing slows a
# UC sender down, and ib_send_bw's server waits for every SEND it counts: so the run
# fits what the server's AF_XDP RX ring holds (2048 frames; 300 x 4 packets) even when
# the server is not scheduled while the client sends (a lost WRITE only costs bytes).
test_write_bw_uc() { perf ib_write_bw 500 18605 -c UC -s 16384 --report_gbits; }
test_send_bw_uc() { perf ib_send_bw 300 18606 -c UC -s 4096 --report_gbits; }
test_write_lat_uc() { perf ib_write_lat 200 18607 -c UC -s 4096; }
test_send_lat_uc() { perf ib_send_lat 200 18608 -c UC -s 4096; }
test_atomic_bw() { perf ib_atomic_bw 500 18597 --report_gbits; }
test_atomic_lat() { perf ib_atomic_lat 200 18598; }
