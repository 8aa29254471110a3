#!/usr/bin/env bash
# Runs every test suite and prints one closing line: "N passed, N failed, N skipped".
#  - Criterion binaries (unit, xdp): their Synthesis line is added up.
#  - Script suites (install, oracle, netns, interop, compat, ucx): each tests/<suite>/test_*.sh is run by
#    tests/lib/runner.sh, which prints PASS:/FAIL:/SKIP: per test function.
# Every suite has a time bound, so a hang fails instead of stalling CI.
set -uo pipefail
cd "$(dirname "$0")/.."
B=${B:-build}
export B
# third-party leaks only; see the file
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
pass=0 fail=0 skip=0
log_dir=$B/test-logs
mkdir -p "$log_dir"

run_criterion() {	# name binary timeout
	local name=$1 bin=$2 t=$3 out rc line
	echo "== $name: $bin"
	if [ ! -x "$bin" ]; then
		echo "FAIL: $name: $bin was not built"; fail=$((fail + 1)); return
	fi
	out=$log_dir/$name.log
	timeout --kill-after=10 "$t" "$bin" -j2 --verbose >"$out" 2>&1
	rc=$?
	grep -E '^\[(FAIL|----)\]|Synthesis|SKIP' "$out" | tail -40
	line=$(grep -a 'Synthesis' "$out" | tail -1)
	if [ -z "$line" ]; then
		echo "FAIL: $name: no Criterion synthesis (exit $rc, timeout ${t}s?); see $out"
		tail -20 "$out"
		fail=$((fail + 1)); return
	fi
	local tested passing failing crashing skipped
	tested=$(sed -nE 's/.*Tested: ([0-9]+).*/\1/p' <<<"$line")
	passing=$(sed -nE 's/.*Passing: ([0-9]+).*/\1/p' <<<"$line")
	failing=$(sed -nE 's/.*Failing: ([0-9]+).*/\1/p' <<<"$line")
	crashing=$(sed -nE 's/.*Crashing: ([0-9]+).*/\1/p' <<<"$line")
	skipped=$(grep -ac '\[SKIP\]' "$out")
	pass=$((pass + passing))
	fail=$((fail + failing + crashing))
	skip=$((skip + skipped))
	# a non-zero exit with no failing test (a sanitizer abort, a timeout) still fails
	if [ "$rc" -ne 0 ] && [ $((failing + crashing)) -eq 0 ]; then
		echo "FAIL: $name exited $rc"; fail=$((fail + 1))
	fi
	echo "   $name: tested $tested, passing $passing, failing $failing, crashing $crashing, skipped $skipped"
}

run_scripts() {	# suite timeout
	local suite=$1 t=$2 f out
	for f in tests/$suite/test_*.sh; do
		[ -e "$f" ] || continue
		echo "== $suite: $f"
		out=$log_dir/$suite-$(basename "$f" .sh).log
		timeout --kill-after=10 "$t" bash tests/lib/runner.sh "$f" 2>&1 | tee "$out" \
			| grep -E '^(PASS|FAIL|SKIP):|failure:'
		if ! grep -qE '^(PASS|FAIL|SKIP):' "$out"; then
			echo "FAIL: $f produced no result (timeout ${t}s?); see $out"
			tail -20 "$out"
			fail=$((fail + 1))
		fi
		pass=$((pass + $(grep -c '^PASS:' "$out")))
		fail=$((fail + $(grep -c '^FAIL:' "$out")))
		skip=$((skip + $(grep -c '^SKIP:' "$out")))
	done
}

run_criterion unit "$B/tests/unit" 300
run_criterion xdp "$B/tests/xdp" 300
run_scripts install 300
run_scripts oracle 300
run_scripts netns 600
run_scripts interop 600
run_scripts compat 600
run_scripts ucx 300

echo
echo "tests: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
