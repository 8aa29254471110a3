# shellcheck shell=bash
# The demo's RC transfer (blue_xfer server and client over blue on both ends of a veth
# pair, every RC operation, payloads verified) with both programs under
# valgrind --leak-check=full (issue 4, "Sanitizers and leaks"): no definite leak and no
# memcheck error on either side, over AF_XDP and the pinned maps.
# Run: B=build bash tests/lib/runner.sh tests/netns/test_valgrind.sh
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh

BLUECTL=$PWD/$B/bin/bluectl
XFER=$PWD/$B/bin/blue_xfer
IP_A=10.201.99.1	# client
IP_B=10.201.99.2	# server
VG=(valgrind --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=99)


test_valgrind_demo_xfer() {
	[ "$(id -u)" -eq 0 ] || skip "needs root"
	[ "${SAN:-0}" != 1 ] || skip "valgrind cannot run ASan binaries (SAN=1 checks leaks with LeakSanitizer)"
	command -v valgrind >/dev/null || skip "valgrind is not installed (make deps)"
	[ -x "$XFER" ] && [ -x "$BLUECTL" ] || fail "$XFER or $BLUECTL not built"
	local srv cli vgs vgc rc=0 f
	srv=$(mktemp) cli=$(mktemp) vgs=$(mktemp) vgc=$(mktemp)
	on_exit "rm -f $srv $cli $vgs $vgc"
	netns_setup vg "$IP_A" "$IP_B"
	blue_attach "$NS_A" "$IF_A"
	blue_attach "$NS_B" "$IF_B"

	ns_bg "$NS_B" SPID timeout 180 "${VG[@]}" --log-file="$vgs" "$XFER" -d "$IF_B" >"$srv" 2>&1
	wait_for_line "$srv" '^server: listening' 60 || { cat "$srv" "$vgs"; fail "the server did not listen"; }
	ns_exec "$NS_A" timeout 180 "${VG[@]}" --log-file="$vgc" "$XFER" -d "$IF_A" --qps 2 \
		--op all --size 1,4K --iters 8 --verify "$IP_B" >"$cli" 2>&1 || rc=$?
	cat "$cli"
	[ "$rc" -eq 0 ] || { cat "$vgc"; fail "client exited $rc"; }
	grep -q '^RESULT: PASS' "$cli" || fail "client: no RESULT: PASS"
	rc=0
	wait "$SPID" || rc=$?
	[ "$rc" -eq 0 ] || { cat "$srv" "$vgs"; fail "server exited $rc"; }
	for f in "$vgc" "$vgs"; do
		grep -E 'definitely lost|in use at exit|ERROR SUMMARY' "$f"
		grep -q 'ERROR SUMMARY: 0 errors' "$f" || { cat "$f"; fail "valgrind reported errors"; }
		if grep -q 'definitely lost: [1-9]' "$f"; then cat "$f"; fail "a definite leak"; fi
	done
}
