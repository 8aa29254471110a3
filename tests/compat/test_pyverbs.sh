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
#                        or an unknown skip, and a log that does not add up each fail it
#   test_pyverbs_suite   the suite itself
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh
# shellcheck source=tests/lib/compat.sh
source tests/lib/compat.sh

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
# can name a test where one reason means two things. "required": blue must do this, so
# such a skip fails the run (issue 14: UD, SRQ, AH, extended QP and CQ creation).
# "allowed": accepted, for the reason given. Any other skip fails the run as new.
PV_RULES=$(cat <<'EOF'
allowed	^tests\.test_(mlx5|efa)	vendor-specific: mlx5/EFA direct verbs; blue is neither (mlx5dv_is_supported says no)
allowed	non (MLX5|EFA) device|This is not an MLX5 device|non EFA devices	vendor-specific: mlx5/EFA
allowed	Device memory is not supported|MEMIC	device memory: blue has no on-device memory
allowed	ODP is (not supported|unavailable)|ODP MR|ODP implicit	on-demand paging: not implemented (left out, README)
allowed	dmabuf|dma-buf|cuda-python|/dev/dri|GPU	dma-buf/CUDA memory: no GPU here, blue registers host memory
allowed	Create XRCD is not supported|XRC	XRC: not implemented (left out, README)
allowed	Create MW is not supported|memory window|Memory Window|MW access	memory windows: the next issue
allowed	test_qp_ex_rc_bind_mw: Extended QP is not supported	memory windows (bind MW send op): the next issue
allowed	test_qp_ex_rc_atomic_write: Extended QP is not supported	RDMA atomic write (IBTA 1.5 send op): not implemented
allowed	Create QP type 3 is not|Create UC QP|UC QP	UC: the next issue
allowed	Create QP type 8 is not|Raw Packet QP|RAW QP	raw packet QPs (flow steering, RSS): blue is a RoCE transport, not a NIC
allowed	^tests\.test_tag_matching\.|Tag matching is not supported	tag matching (its CQs ask for IBV_WC_EX_WITH_TM_INFO): an offload blue does not have
allowed	doesn't have net interface|SkipTest occurred on	rdma_cm: blue's librdmacm is a stub (no rdma_cm yet)
allowed	Importing a device is not supported|object imports are not supported	ibv_import_device on a dup of cmd_fd: blue has no kernel objects behind the fd to share (ibv_import_* say EOPNOTSUPP)
allowed	There are no huge pages|Huge pages of size	environment: no 2 MiB huge pages are reserved on this machine
allowed	All gid indices populated	blue's GID table holds exactly its two GIDs (link-local, IPv4), both valid
allowed	Query device real time|timestamp	completion timestamps: not implemented
allowed	Multicast is not supported	UD multicast: not implemented
allowed	PCI device must be passed	mlx5 VFIO: vendor-specific
required	Create QP type 4 is not|UD QP|with attrs ud|ud is not supported	UD QPs (issue 14)
required	AH is not supported|can not create AH	address handles (issue 14)
required	SRQ is not supported	SRQs (issue 14)
required	Extended QP|extended attrs|Create player with|Create qp with attrs	extended QP creation (issue 14)
required	Extended CQ|CQ with completion channel	extended CQ creation (issue 14)
EOF
)

pv_rules() {	# FILE: the rules, as the tally reads them
	printf '%s\n' "$PV_RULES" >"$1"
}

# A canned log in unittest's verbose format; $1 is the one line that differs.
_pv_log() {
	cat <<EOF
test_a (tests.test_x.X.test_a) ... ok
test_b (tests.test_x.X.test_b)
A docstring line ... libblue: a message between the dots and the outcome
ok
test_c (tests.test_x.X.test_c) ... skipped 'Create MW is not supported'
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
	grep -qF '| Create MW is not supported | 1 | allowed |' "$d/ok.md" || fail "skip row"
	# each of these must fail the judgement, saying why
	local -a cases=(
		"test_d (tests.test_x.X.test_d) ... FAIL|FAILED (failures=1, skipped=1)|FAIL: tests.test_x.X.test_d"
		"test_d (tests.test_x.X.test_d) ... ERROR|FAILED (errors=1, skipped=1)|ERROR: tests.test_x.X.test_d"
		"test_d (tests.test_x.X.test_d) ... skipped 'Create SRQ is not supported'|OK (skipped=2)|required skip"
		"test_d (tests.test_x.X.test_d) ... skipped 'Something new'|OK (skipped=2)|unknown skip"
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
	pv_rules "$dir/rules"
	# the interface name carries our PID: say "IF" in the table, so runs compare
	sed "s/$IF_A/IF/g" "$log" >"$dir/log"
	python3 "$PV_TALLY" "$dir/log" "$dir/rules" "$PWD/$B/test-logs/pyverbs.md" ||
		fail "the suite's run does not pass (see above and $log)"
	echo "took $((t1 - t0)) s" >>"$PWD/$B/test-logs/pyverbs.md"
	# a clean tally with a failing exit: the process died after unittest's summary
	[ "$rc" -eq 0 ] || fail "run_tests.py exited $rc after a passing run (see $log)"
}
