# shellcheck shell=bash
# The ABI of blue's four stand-in libraries ($B/compat/lib{ibverbs,rdmacm,mlx5,efa}.so.1)
# against the INSTALLED Debian rdma-core originals of the same names: every version node
# and every (symbol, version, default-or-not) that `nm -D --defined-only` shows for the
# original must be in blue's ("name@@VER" is the default version a new link binds,
# "name@VER" an old one that only binaries linked long ago import), and beyond Debian's
# version nodes blue's export exactly their private node (ABI_EXTRA: libibverbs'
# BLUE_PRIVATE_1.0, for our librdmacm's CM agent) and nothing else. Then three loaders
# that bind versioned imports: pyverbs, UCX's IB module, libfabric's fi_info.
# Run: B=build-<you> bash tests/lib/runner.sh tests/compat/test_abi.sh
#
# Test functions:
#   test_abi_libibverbs test_abi_librdmacm test_abi_libmlx5 test_abi_libefa
#   test_stubs_fail_cleanly
#   test_load_pyverbs test_load_ucx test_load_fi_info
# shellcheck source=tests/lib/compat.sh
source tests/lib/compat.sh

ABI_LIB=${ABI_LIB:-$PWD/$B/compat}	# or another build of the four: ABI_LIB=DIR
ABI_SYS=${ABI_SYS:-/usr/lib/x86_64-linux-gnu}

# _abi_set LIB: one line per version node ("node VER") and per defined symbol
# ("name@VER" or "name@@VER"), sorted
_abi_set() {
	nm -D --defined-only "$1" | awk '
		$2 == "A" { print "node " $3; next }
		$NF ~ /@/ { print $NF }' | sort -u
}

# abi_check NAME: what Debian's NAME exports that blue's does not, listed; fails if any
abi_check() {
	local name=$1 sys=$ABI_SYS/$1 ours=$ABI_LIB/$1 missing n
	[ -e "$sys" ] || skip "$sys is not installed (make deps: rdma-core, ibverbs-providers)"
	[ -e "$ours" ] || fail "$ours was not built (make compat)"
	missing=$(comm -23 <(_abi_set "$sys") <(_abi_set "$ours"))
	n=$(_abi_set "$sys" | wc -l)
	if [ -n "$missing" ]; then
		echo "$name: $(wc -l <<<"$missing") of Debian's $n are missing from blue's:"
		sed 's/^/    /' <<<"$missing"
		fail "$name: blue's $ours lacks $(wc -l <<<"$missing") of $(readlink -f "$sys")'s symbols"
	fi
	echo "$name: all $n of $(readlink -f "$sys")'s version nodes and symbols are in blue's"
	abi_extra_check "$name" "$sys" "$ours"
}

# What blue's libraries may export beyond Debian's, per library: its own private node
# and the symbols in it (compat/libibverbs.map: BLUE_PRIVATE_1.0, what our librdmacm
# needs of our libibverbs). Nothing else outside Debian's version nodes.
declare -A ABI_EXTRA=(
	[libibverbs.so.1]="node BLUE_PRIVATE_1.0
blue_compat_create_gsi_qp@@BLUE_PRIVATE_1.0
blue_compat_gsi_id_prefix@@BLUE_PRIVATE_1.0
blue_compat_gsi_listen@@BLUE_PRIVATE_1.0"
)

# abi_extra_check NAME SYS OURS: the version nodes and symbols at versions Debian's NAME
# has not are exactly ABI_EXTRA[NAME] (a new symbol at one of Debian's own versions is
# allowed: rdma-core newer than Debian's adds those)
abi_extra_check() {
	local name=$1 extra want
	extra=$(comm -13 <(_abi_set "$2" | awk '$1 == "node" { print $2 }') \
			 <(_abi_set "$3" | awk '$1 == "node" { print $2 }') |
		while read -r node; do
			echo "node $node"
			_abi_set "$3" | grep -E "@@?${node//./\\.}$"
		done | sort)
	want=$(sort <<<"${ABI_EXTRA[$name]:-}" | sed '/^$/d')
	if [ "$extra" != "$want" ]; then
		echo "$name: beyond Debian's version nodes, blue's exports:"
		sed 's/^/    /' <<<"${extra:-(nothing)}"
		echo "  and may export exactly:"
		sed 's/^/    /' <<<"${want:-(nothing)}"
		fail "$name: blue's private ABI is not what test_abi.sh allows"
	fi
	[ -z "$want" ] || echo "$name: beyond Debian's, exactly its private node: $(tr '\n' ' ' <<<"$want")"
}

test_abi_libibverbs() { abi_check libibverbs.so.1; }
test_abi_librdmacm() { abi_check librdmacm.so.1; }
test_abi_libmlx5() { abi_check libmlx5.so.1; }
test_abi_libefa() { abi_check libefa.so.1; }

# What the new symbols answer, called at their versions (dlvsym) through ctypes: the
# old and the provider-facing calls fail cleanly, with errno and one line naming the
# call; mlx5dv_is_supported() says no; the rate table answers.
test_stubs_fail_cleanly() {
	local out
	compat_env "$ABI_LIB"
	out=$("${COMPAT_ENV[@]}" /usr/bin/python3 - "$ABI_LIB" 2>&1 <<'PY'
import ctypes, errno, sys
lib = sys.argv[1]
libc = ctypes.CDLL(None)
libc.dlvsym.restype = ctypes.c_void_p
libc.dlvsym.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]

def at(dll, name, ver, restype, *argtypes):
    addr = libc.dlvsym(dll._handle, name.encode(), ver.encode())
    assert addr, "%s@%s is not defined" % (name, ver)
    return ctypes.CFUNCTYPE(restype, *argtypes, use_errno=True)(addr)

def fails_with(err, what, f, want, *args):
    ctypes.set_errno(0)
    got = f(*args)
    assert got == want, "%s returned %r, want %r" % (what, got, want)
    assert ctypes.get_errno() == err, "%s: errno %d" % (what, ctypes.get_errno())

def fails(what, f, want, *args):
    fails_with(errno.EOPNOTSUPP, what, f, want, *args)

ibv = ctypes.CDLL(lib + "/libibverbs.so.1")
n = ctypes.c_int(7)
fails("ibv_get_device_list@IBVERBS_1.0",
      at(ibv, "ibv_get_device_list", "IBVERBS_1.0", ctypes.c_void_p,
         ctypes.POINTER(ctypes.c_int)), None, ctypes.byref(n))
assert n.value == 0, "1.0 device count %d" % n.value
fails("ibv_open_device@IBVERBS_1.0",
      at(ibv, "ibv_open_device", "IBVERBS_1.0", ctypes.c_void_p, ctypes.c_void_p), None, None)
fails("ibv_cmd_alloc_pd", at(ibv, "ibv_cmd_alloc_pd", "IBVERBS_PRIVATE_34", ctypes.c_int),
      errno.EOPNOTSUPP)
# imports work within the process (compat/import.c); an open fd that is no blue
# context's command fd (stdin here) is refused so
fails("ibv_import_device", at(ibv, "ibv_import_device", "IBVERBS_1.10", ctypes.c_void_p,
      ctypes.c_int), None, 0)
rate = at(ibv, "ibv_rate_to_mbps", "IBVERBS_1.1", ctypes.c_int, ctypes.c_int)
mbps = at(ibv, "mbps_to_ibv_rate", "IBVERBS_1.1", ctypes.c_int, ctypes.c_int)
assert rate(11) == 14062 and rate(2) == 2500 and rate(0) == 0, "ibv_rate_to_mbps"
assert mbps(25781) == 15 and mbps(1234) == 0, "mbps_to_ibv_rate"

cm = ctypes.CDLL(lib + "/librdmacm.so.1")
# librdmacm is real (compat/rdmacm/): no device here (ENODEV, as rdma-core's answers
# without one), a NULL id refused (EINVAL); rsocket is still a stand-in
fails_with(errno.ENODEV, "rdma_get_devices", at(cm, "rdma_get_devices", "RDMACM_1.0",
           ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)), None, ctypes.byref(n))
assert n.value == 0, "rdma_get_devices count %d" % n.value
fails_with(errno.EINVAL, "rdma_establish", at(cm, "rdma_establish", "RDMACM_1.2",
           ctypes.c_int, ctypes.c_void_p), -1, None)
fails("rsocket", at(cm, "rsocket", "RDMACM_1.0", ctypes.c_int, ctypes.c_int, ctypes.c_int,
      ctypes.c_int), -1, 2, 1, 0)

mlx5 = ctypes.CDLL(lib + "/libmlx5.so.1")
sup = at(mlx5, "mlx5dv_is_supported", "MLX5_1.8", ctypes.c_bool, ctypes.c_void_p)
assert sup(None) is False, "mlx5dv_is_supported said yes"
for ver in ("MLX5_1.0", "MLX5_1.2"):
    fails("mlx5dv_init_obj@" + ver, at(mlx5, "mlx5dv_init_obj", ver, ctypes.c_int,
          ctypes.c_void_p, ctypes.c_uint64), errno.EOPNOTSUPP, None, 0)
fails("mlx5dv_devx_obj_create", at(mlx5, "mlx5dv_devx_obj_create", "MLX5_1.7",
      ctypes.c_void_p, ctypes.c_void_p), None, None)

efa = ctypes.CDLL(lib + "/libefa.so.1")
fails("efadv_query_device", at(efa, "efadv_query_device", "EFA_1.1", ctypes.c_int,
      ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint32), errno.EOPNOTSUPP, None, None, 0)
fails("efadv_create_cq", at(efa, "efadv_create_cq", "EFA_1.2", ctypes.c_void_p,
      ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint32), None,
      None, None, None, 0)
print("stubs: ok")
PY
) || { echo "$out"; fail "a stub misbehaved"; }
	echo "$out"
	grep -q "stubs: ok" <<<"$out" || fail "the stub checks did not finish"
	# each refusal is said once, naming the call at its version
	for call in "ibv_get_device_list@IBVERBS_1.0" "ibv_cmd_alloc_pd" "ibv_import_device" \
		    "rdma_get_devices()" "rsocket()" "mlx5dv_init_obj()" "efadv_create_cq()"; do
		[ "$(grep -cF "$call" <<<"$out")" -eq 1 ] || fail "no one line naming $call"
	done
	! grep -q "mlx5dv_is_supported" <<<"$out" || fail "mlx5dv_is_supported() complained"
}

# pyverbs (python3-pyverbs) links libibverbs and librdmacm with versioned imports
# (ibv_import_dm@IBVERBS_1.13, RDMACM_1.1..1.3); the import fails if one is missing.
test_load_pyverbs() {
	local out
	[ -d /usr/lib/python3/dist-packages/pyverbs ] || skip "python3-pyverbs is not installed"
	compat_env "$ABI_LIB"
	out=$("${COMPAT_ENV[@]}" LD_BIND_NOW=1 /usr/bin/python3 -c \
		'import pyverbs.device, pyverbs.cmid; print("pyverbs loads")' 2>&1) ||
		{ echo "$out"; fail "pyverbs does not import over blue's libraries"; }
	echo "$out"
	grep -q "pyverbs loads" <<<"$out" || fail "pyverbs: $out"
}

# UCX's IB transports are one module, libuct_ib.so, linked against libibverbs and
# libmlx5 with versioned imports (MLX5_1.1, 1.2, 1.8, 1.11): if one is missing, the
# module's dlopen fails and UCX drops it without a word unless UCX_MODULE_LOG_LEVEL
# says so ("dlopen('.../libuct_ib.so.0') failed: ... version `MLX5_1.2' not found").
test_load_ucx() {
	local out
	command -v ucx_info >/dev/null || skip "ucx_info is not installed (ucx-utils)"
	compat_env "$ABI_LIB"
	out=$("${COMPAT_ENV[@]}" UCX_MODULE_LOG_LEVEL=debug UCX_LOG_LEVEL=debug \
		timeout 60 ucx_info -v 2>&1) || { echo "$out"; fail "ucx_info -v failed"; }
	grep -q "^# Version" <<<"$out" || { echo "$out"; fail "ucx_info -v printed no version"; }
	out=$("${COMPAT_ENV[@]}" UCX_MODULE_LOG_LEVEL=debug UCX_LOG_LEVEL=debug \
		timeout 60 ucx_info -d 2>&1) || { echo "$out"; fail "ucx_info -d failed"; }
	grep -E "module|dlopen" <<<"$out" | sed -E 's/^\[[^]]*\] +//'
	if grep -qE "dlopen\(.*failed|version .* not found|undefined symbol" <<<"$out"; then
		fail "ucx_info -d: a UCX module does not load over blue's libraries"
	fi
	grep -qE "loaded .*/libuct_ib\.so" <<<"$out" || fail "UCX did not load its ib module"
}

# libfabric (fi_info, libfabric-bin) links librdmacm and libefa, needing RDMACM_1.2 and
# EFA_1.2; without them the dynamic loader stops fi_info before main.
test_load_fi_info() {
	local out
	command -v fi_info >/dev/null || skip "fi_info is not installed (libfabric-bin)"
	compat_env "$ABI_LIB"
	out=$("${COMPAT_ENV[@]}" timeout 60 fi_info -l 2>&1) ||
		{ echo "$out"; fail "fi_info -l failed over blue's libraries"; }
	echo "$out" | head -20
	! grep -qE "version .* not found|symbol lookup error" <<<"$out" ||
		fail "fi_info: the loader refused blue's libraries"
	grep -qE "^[a-z_0-9]+:$" <<<"$out" || fail "fi_info -l listed no provider"
}
