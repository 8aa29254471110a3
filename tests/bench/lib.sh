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

# The figures of a script that writes "KEY VALUE" lines, one per repetition, to $FIG:
# stat KEY: "median min max" of KEY's repetitions, nothing when it has none; med KEY;
# cell KEY: "median (min-max)"; ratio A B: A / B to 2 places, n/a without both
stat() {
	awk -v k="$1" '$1 == k && $2 != "" { print $2 }' "$FIG" | sort -g | awk '
		{ a[NR] = $1 }
		END { if (NR) print ((NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2), a[1], a[NR] }'
}
med() { stat "$1" | awk '{ print $1 }'; }
cell() { stat "$1" | awk '{ print $1 " (" $2 "-" $3 ")" }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "n/a"; else printf "%.2f", a / b }'; }

[ "$(id -u)" -eq 0 ] || die "needs root"
