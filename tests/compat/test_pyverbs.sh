# shellcheck shell=bash
# rdma-core's own provider test suite (Debian's python3-pyverbs ships it in
# /usr/share/doc/rdma-core/tests/) run unmodified on blue: a copy under $B (the .py.gz
# unpacked; the installed files are never touched), `/usr/bin/python3 run_tests.py --dev IF
# --gid 1 -v` in a namespace whose veth end has blue attached, loading $B/compat through
# LD_LIBRARY_PATH. The verbose log is tallied by tests/lib/pyverbs_tally.py into
# ran/ok/fail/error/skip and every skip reason with its count, written to
# $B/test-logs/pyverbs.md (the table the README quotes), and judged by PV_RULES below.
# Run: B=build bash tests/lib/runner.sh tests/compat/test_pyverbs.sh
#      (PV_K='-k test_device' passes unittest's -k to run a part)
#
# Test functions:
#   test_pyverbs_tally   the tally and the rules on canned logs: a FAIL, an ERROR, a required
#                        or an unknown skip (a vendor's reason outside the vendor's modules
#                        too), and a log that does not add up each fail it
#   test_pyverbs_hugepages  the shared 2 MiB page pool (tests/lib/hugepages.sh) on a stand-in
#   test_pyverbs_suite   the suite itself
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh
# shellcheck source=tests/lib/compat.sh
source tests/lib/compat.sh
# shellcheck source=tests/lib/hugepages.sh
source tests/lib/hugepages.sh

PV_SRC=/usr/share/doc/rdma-core/tests
PV_LIB=${PV_LIB:-$PWD/$B/compat}	# another build of the compat libraries
PV_TALLY=$PWD/tests/lib/pyverbs_tally.py
PV_IP_A=10.201.96.1
PV_IP_B=10.201.96.2
# the whole suite takes about 5 s here (2 cores shared; 75 s while every traffic test still
# waited a second for ARP); the bound leaves room for a slow machine
PV_TIMEOUT=400

# The judgement of every skip, in one place: "KIND<TAB>REGEX<TAB>WHY", first match wins.
# The regex is matched against "TEST: REASON" (TEST is module.Class.test_name), so a rule
# names the tests it allows as well as the reason. "required": blue must do this, so such a
# skip fails the run. "allowed": accepted, for the reason given; issue 15's rule allows
# only what rxe does not have either: vendor-specific (mlx5/EFA), device memory, CUDA and
# dma-buf, and ODP and XRC, left out (README) - plus raw packet QPs and tag matching, which
# rxe has not (rxe_qp_chk_init takes SMI, GSI, RC, UC and UD QPs only, EOPNOTSUPP for the
# rest; rxe reports no tm_caps and has no TM SRQ), and rdma_cm, the next issue's. Any other
# skip fails the run.
PV_RULES=$(cat <<'EOF'
allowed	^tests\.test_(mlx5|efa)[a-z0-9_]*\.	vendor-specific: mlx5/EFA direct verbs (mlx5dv/efadv, DevX, VFIO, their timestamps); blue is neither
allowed	^tests\.test_(device|mr)\.[A-Za-z]*DM[A-Za-z]*Test\.[a-z0-9_]*: Device memory is not supported$|^tests\.test_mr\.DeviceMemory[A-Za-z]*\.[a-z0-9_]*: Device memory is not supported$	device memory: blue has no on-device memory (nor has rxe)
allowed	^tests\.test_odp\.[A-Za-z]*\.[a-z0-9_]*: ODP is not supported - No ODP caps$	on-demand paging: left out (README)
allowed	^tests\.(test_cuda_dmabuf\.[A-Za-z]*\.[a-z0-9_]*: cuda-python|test_mr\.DmaBuf[A-Za-z]*\.[a-z0-9_]*: Allocating dmabuf is not supported)	CUDA/dma-buf memory: no GPU here; blue registers host memory
allowed	: Create XRCD is not supported$	XRC: left out (README)
allowed	: (Create QP type 8 is not supported|Create Raw Packet QP (with|without) (extended )?attrs is not supported)$	raw packet QPs (flow steering, RSS): not an rxe feature (rxe_qp_chk_init refuses IB_QPT_RAW_PACKET)
allowed	^tests\.test_tag_matching\.TMTest\.[a-z0-9_]*: Extended CQ is not supported$	tag matching (its CQs ask for IBV_WC_EX_WITH_TM_INFO): not an rxe feature (no tm_caps, no TM SRQ)
allowed	^tests\.test_rdmacm\.CMTestCase\.[a-z0-9_]*: Device IF doesn't have net interface$	rdma_cm: each test forks a passive and an active process that both use the one device's one IP (the active connects to its own address, across two processes); blue's engine serves one process per device (compat/compat.h; its loopback path is within one process), so these are not run on blue yet (the skip itself: no /sys/class/infiniband/IF/device/net for a userspace device)
required	Create QP type 4 is not|UD QP|with attrs ud|ud is not supported	UD QPs (issue 14)
required	AH is not supported|can not create AH	address handles (issue 14)
required	SRQ is not supported	SRQs (issue 14)
required	Create MW is not supported|[Mm]emory [Ww]indow|MW access|Reg MR with MW	memory windows (issue 15)
required	Extended QP|extended attrs|Create player with|Create qp with attrs	extended QP creation (issue 14)
required	Extended CQ|CQ with completion channel	extended CQ creation (issue 14)
required	Create QP type 3 is not|Create UC QP|UC QP	UC QPs (issue 15, w-uc)
required	Importing a device|object imports	ibv_import_device/pd/mr within the process (issue 15)
required	All gid indices populated	the GID table has empty entries past the netdev's addresses (16 entries, as rxe's are 1024)
EOF
)

# The suite's huge-page tests (test_parent_domain's test_huge_page_traffic; test_odp's two
# then skip as ODP) need 2 MiB pages in the pool: the run reserves PV_HUGE of them
# (tests/lib/hugepages.sh). Only when the machine cannot is their skip allowed, saying why.
PV_HUGE=16
PV_HUGE_RX='There are no huge pages|Huge pages of size'

pv_rules() {	# FILE [WHY]: the rules, as the tally reads them; WHY: no huge pages here
	printf '%s\n' "$PV_RULES" >"$1"
	[ -z "${2:-}" ] || printf 'allowed\t%s\tthis machine: %s\n' "$PV_HUGE_RX" "$2" >>"$1"
}

# A canned log in unittest's verbose format; $1 is the one line that differs.
_pv_log() {
	cat <<EOF
test_a (tests.test_x.X.test_a) ... ok
test_b (tests.test_x.X.test_b)
A docstring line ... libblue: a message between the dots and the outcome
ok
test_c (tests.test_x.X.test_c) ... skipped 'Create XRCD is not supported'
$1
----------------------------------------------------------------------
Ran 4 tests in 0.100s

$2
EOF
}

test_pyverbs_tally() {
	local d rc out
	d=$(mktemp -d)
	on_exit "rm -rf $d"
	pv_rules "$d/rules"
	_pv_log "test_d (tests.test_x.X.test_d) ... ok" "OK (skipped=1)" >"$d/ok.log"
	python3 "$PV_TALLY" "$d/ok.log" "$d/rules" "$d/ok.md" || fail "a clean log was judged failed"
	grep -qF '| 4 | 3 | 0 | 0 | 1 |' "$d/ok.md" || { cat "$d/ok.md"; fail "counts in the table"; }
	grep -qF '| Create XRCD is not supported | 1 | allowed |' "$d/ok.md" || fail "skip row"
	# each of these must fail the judgement, saying why
	local -a cases=(
		"test_d (tests.test_x.X.test_d) ... FAIL|FAILED (failures=1, skipped=1)|FAIL: tests.test_x.X.test_d"
		"test_d (tests.test_x.X.test_d) ... ERROR|FAILED (errors=1, skipped=1)|ERROR: tests.test_x.X.test_d"
		"test_d (tests.test_x.X.test_d) ... skipped 'Create SRQ is not supported'|OK (skipped=2)|required skip"
		"test_d (tests.test_x.X.test_d) ... skipped 'Something new'|OK (skipped=2)|unknown skip"
		"test_d (tests.test_x.X.test_d) ... skipped 'Can not run the test over non MLX5 device'|OK (skipped=2)|unknown skip"
		"test_d (tests.test_x.X.test_d) ... ok|OK (skipped=2)|1 skip lines, unittest's summary 2"
		"test_d (tests.test_x.X.test_d) ... ok||no unittest summary"
	)
	local c line sum want
	for c in "${cases[@]}"; do
		IFS='|' read -r line sum want <<<"$c"
		_pv_log "$line" "$sum" >"$d/bad.log"
		if [ -z "$sum" ]; then	# cut before "Ran": the suite died
			head -6 "$d/bad.log" >"$d/bad2.log"
			mv "$d/bad2.log" "$d/bad.log"
		fi
		rc=0
		out=$(python3 "$PV_TALLY" "$d/bad.log" "$d/rules" "$d/bad.md") || rc=$?
		[ "$rc" -eq 1 ] || { echo "$out"; fail "'$line' / '$sum': exit $rc, want 1"; }
		grep -qF "$want" <<<"$out" || { echo "$out"; fail "'$line': no '$want' in the verdict"; }
	done
}

# the shared huge-page pool on a stand-in file: grown by the first claim, kept while
# another live process claims it, put back by the last release
test_pyverbs_hugepages() {
	local d other
	d=$(mktemp -d)
	on_exit "rm -rf $d"
	HP_SYS=$d/nr HP_DIR=$d/claims
	HP_FREE=$HP_SYS	# the stand-in pool: every page free
	echo 0 >"$HP_SYS"
	hugepages_reserve 4 || fail "reserve: $HP_WHY"
	[ "$(cat "$HP_SYS")" -eq 4 ] || fail "the pool is $(cat "$HP_SYS"), want 4"
	sleep 30 &
	other=$!
	on_exit "kill $other 2>/dev/null"
	: >"$HP_DIR/claim.$other"	# another run holds it too
	hugepages_release
	[ "$(cat "$HP_SYS")" -eq 4 ] || fail "released under another's claim: $(cat "$HP_SYS")"
	kill "$other"
	wait "$other" 2>/dev/null || true
	hugepages_reserve 2 || fail "reserve again: $HP_WHY"
	[ "$(cat "$HP_SYS")" -eq 4 ] || fail "a smaller claim shrank the pool to $(cat "$HP_SYS")"
	hugepages_release
	[ "$(cat "$HP_SYS")" -eq 0 ] || fail "the last release left the pool at $(cat "$HP_SYS")"
	[ ! -e "$HP_DIR/orig" ] || fail "the recorded size outlived the last claim"
	HP_SPARE_KB=$((1 << 40))
	if hugepages_reserve 1; then fail "reserved with no memory to spare"; fi
	grep -q "no room" <<<"$HP_WHY" || fail "why not: '$HP_WHY'"
}

test_pyverbs_suite() {
	local dir log rc=0 t0 t1
	[ -r "$PV_SRC/run_tests.py" ] || skip "$PV_SRC missing (make deps: python3-pyverbs)"
	need_bins "$PV_LIB/libibverbs.so.1" "$PV_LIB/librdmacm.so.1" "$PV_LIB/libmlx5.so.1" \
		"$PV_LIB/libefa.so.1"
	compat_env "$PV_LIB"
	netns_setup pv "$PV_IP_A" "$PV_IP_B"
	BLUECTL=$PWD/$B/bin/bluectl
	need_bins "$BLUECTL"
	blue_attach "$NS_A" "$IF_A"
	blue_attach "$NS_B" "$IF_B"
	# a fresh copy: the suite writes nothing into it, but nothing of ours goes into /usr
	mkdir -p "$B/test-logs"
	dir=$(mktemp -d "$PWD/$B/pyverbs.XXXXXX")
	on_exit "rm -rf $dir"
	cp -r "$PV_SRC" "$dir/tests"
	gunzip "$dir"/tests/*.py.gz
	log=$PWD/$B/test-logs/pyverbs.log
	hugepages_reserve "$PV_HUGE" || echo "huge pages not reserved: $HP_WHY"
	t0=$(date +%s)
	# shellcheck disable=SC2086 # PV_K is unittest's words
	(cd "$dir/tests" && ns_exec "$NS_A" timeout --kill-after=10 "$PV_TIMEOUT" \
		"${COMPAT_ENV[@]}" /usr/bin/python3 run_tests.py --dev "$IF_A" --gid 1 -v \
		${PV_K:-}) >"$log" 2>&1 || rc=$?
	t1=$(date +%s)
	echo "run_tests.py exited $rc after $((t1 - t0)) s; the log: $log"
	case $rc in
	124 | 137) fail "the suite did not finish in ${PV_TIMEOUT}s" ;;
	esac
	pv_rules "$dir/rules" "$HP_WHY"
	# the interface name carries our PID: say "IF" in the table, so runs compare
	sed "s/$IF_A/IF/g" "$log" >"$dir/log"
	python3 "$PV_TALLY" "$dir/log" "$dir/rules" "$PWD/$B/test-logs/pyverbs.md" ||
		fail "the suite's run does not pass (see above and $log)"
	echo "took $((t1 - t0)) s" >>"$PWD/$B/test-logs/pyverbs.md"
	# a clean tally with a failing exit: the process died after unittest's summary
	[ "$rc" -eq 0 ] || fail "run_tests.py exited $rc after a passing run (see $log)"
}
