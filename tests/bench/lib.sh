# shellcheck shell=bash
# What every benchmark script starts with (source it from the repository root): the
# cleanups of tests/lib/runner.sh without its test framing (on_exit, run in reverse at
# exit, even on ^C), die, the namespace helpers of tests/lib/netns.sh, and the root check.
_cleanups=()
on_exit() { _cleanups+=("$*"); }
_run_cleanups() {
	local i
	for ((i = ${#_cleanups[@]} - 1; i >= 0; i--)); do eval "${_cleanups[$i]}" || true; done
}
trap _run_cleanups EXIT
trap 'exit 130' INT TERM
die() { echo "bench: $*" >&2; exit 1; }
fail() { die "$@"; }	# what tests/lib/*.sh call on failure
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh

[ "$(id -u)" -eq 0 ] || die "needs root"
