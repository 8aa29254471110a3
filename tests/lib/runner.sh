#!/usr/bin/env bash
# The one script-test runner. Usage: runner.sh tests/<suite>/test_X.sh [test_name...]
# The file defines functions named test_*; each runs in its own subshell with `set -e`,
# so a failing command fails that test. Exit 0 = PASS, 77 = SKIP (print why first),
# anything else = FAIL. Tests register cleanup with `on_exit CMD`; it runs even on failure.
# Helpers for namespaces live in tests/lib/netns.sh.
set -uo pipefail
cd "$(dirname "$0")/../.."
export B=${B:-build}
# the golden rxe captures (tests/interop/capture_vectors.sh); BLUE_VECTORS overrides, as
# for the C tests (tests/lib/vectors.c)
# shellcheck disable=SC2034 # used by the suites this file sources
VECTORS=${BLUE_VECTORS:-$PWD/tests/vectors/rxe}
file=$1; shift
SKIP=77

on_exit() { _cleanups+=("$*"); }
_run_cleanups() {
	local i
	for ((i = ${#_cleanups[@]} - 1; i >= 0; i--)); do eval "${_cleanups[$i]}" || true; done
}
_skipfile=$(mktemp)
_sedpid=$(mktemp)
trap 'rm -f "$_skipfile" "$_sedpid"' EXIT
# _await_output TEST: wait (at most 5 s) for the sed that prefixes TEST's output to
# drain, so the verdict line starts a line of its own (run.sh counts ^PASS/^FAIL). A
# process the test left running that still holds its output would keep that sed open
# for good (seen here: an orphaned bpftrace; its FAIL landed mid-line and was not
# counted): it is ended, and the test fails for leaving it.
_await_output() {
	local i p=
	for ((i = 0; i < 50; i++)); do
		p=$(cat "$_sedpid" 2>/dev/null)
		[ -n "$p" ] && ! kill -0 "$p" 2>/dev/null && { : >"$_sedpid"; return 0; }
		sleep 0.1
	done
	[ -n "$p" ] && kill "$p" 2>/dev/null
	: >"$_sedpid"
	echo
	echo "  [$1] failure: a process it started still holds its output after it ended"
	return 1
}
skip() { echo "$*" >"$_skipfile"; exit $SKIP; }
fail() { echo "failure: $*" >&2; exit 1; }

# shellcheck source=/dev/null
source "$file"
tests=("$@")
if [ ${#tests[@]} -eq 0 ]; then
	mapfile -t tests < <(declare -F | awk '{print $3}' | grep '^test_')
fi
for t in "${tests[@]}"; do
	(
		_cleanups=()
		trap _run_cleanups EXIT
		set -e
		# No pipefail inside tests: with it, `cmd | grep -q X` fails whenever grep
		# matches before cmd has written everything (cmd dies of SIGPIPE), and that
		# idiom is everywhere. A pipeline's status is its last command's.
		set +o pipefail
		"$t"
	) > >(echo "$BASHPID" >"$_sedpid"; exec sed "s/^/  [$t] /") 2>&1
	rc=$?
	_await_output "$t" || { [ "$rc" -eq 0 ] && rc=1; }
	case $rc in
	0) echo "PASS: $t" ;;
	"$SKIP") echo "SKIP: $t ($(cat "$_skipfile"))"; : >"$_skipfile" ;;
	*) echo "FAIL: $t (exit $rc)" ;;
	esac
done
