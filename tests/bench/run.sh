#!/usr/bin/env bash
# make bench: every benchmark, one after another (they share the 2 cores, so never at
# once). Figures only: nothing here passes or fails on a time.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
rc=0
for b in frame_rate rc_vs_tcp diag_cost retx_goodput; do
	echo
	echo "=== bench: $b"
	bash "tests/bench/$b.sh" || rc=1
done
exit $rc
