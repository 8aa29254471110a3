# shellcheck shell=bash
# blue-manager's tenants (issue 17): two blue-managers on a veth pair read a tenants file;
# processes run as uid 1000 map to tenant "slow" (class normal, 200 Mbit/s, 2 QPs, 4 CQs),
# root's to "fast" (the default, realtime). Checked with bluectl tenant and what the
# processes themselves say:
#  - a quota: a third QP is refused with EDQUOT, the message naming the tenant and the
#    limit; what the process held returns to the tenant when it exits;
#  - the rate: slow's 64 MiB of WRITEs take at least as long as 200 Mbit/s allows (the
#    bucket throttled sends; the figure is an upper bound noise cannot break) and its
#    traffic is counted for it, in bluectl and in bluectl metrics;
#  - SIGHUP reads the file again (more QPs allowed), a bad file changes nothing and the
#    log says which line; bluectl tenant set changes a limit as root, and is refused as
#    uid 1000; a process no map line or default takes is refused, saying why.
# Run: B=build bash tests/lib/runner.sh tests/netns/test_tenants.sh
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh
# shellcheck source=tests/lib/manager.sh
source tests/lib/manager.sh

BLUECTL=$PWD/$B/bin/bluectl
XFER=$PWD/$B/bin/blue_xfer
IP_A=10.201.99.1	# servers
IP_B=10.201.99.2	# clients
USER_ID=1000

# tn_setup: the pair, blue attached, the tenants file in $CONF, a blue-manager on each end.
tn_setup() {
	netns_setup tn "$IP_A" "$IP_B"
	need_bins "$BLUECTL" "$XFER"
	command -v setpriv >/dev/null || skip "setpriv missing (util-linux)"
	blue_attach "$NS_A" "$IF_A" || fail "attach $IF_A"
	blue_attach "$NS_B" "$IF_B" || fail "attach $IF_B"
	LOGS=$(mktemp -d)
	chmod 755 "$LOGS"
	on_exit "rm -rf $LOGS"
	# what uid 1000 runs, where it may read it whatever the clone's directory allows:
	# the programs (libblue is static in them) and the LeakSanitizer suppressions
	mkdir -m 755 "$LOGS/bin"
	cp "$XFER" "$BLUECTL" "$LOGS/bin/"
	UXFER=$LOGS/bin/blue_xfer
	UBLUECTL=$LOGS/bin/bluectl
	UENV=(env BLUE_MODE=daemon)
	if [ -n "${LSAN_OPTIONS:-}" ] && [ -r tests/lsan.supp ]; then
		cp tests/lsan.supp "$LOGS/lsan.supp"
		chmod 644 "$LOGS/lsan.supp"
		UENV+=(LSAN_OPTIONS="suppressions=$LOGS/lsan.supp:print_suppressions=0")
	fi
	CONF=$LOGS/tenants.conf
	cat >"$CONF" <<-EOF
		# the test's tenants
		tenant fast class=realtime
		tenant slow class=normal rate=200M qps=2 cqs=4
		map uid=$USER_ID slow
		default fast
	EOF
	mgr_start "$NS_A" "$IF_A" MGR_A "$LOGS/mgr-a" --tenants "$CONF"
	mgr_start "$NS_B" "$IF_B" MGR_B "$LOGS/mgr-b" --tenants "$CONF"
}

# tn_pair PORT SERVER_LOG CLIENT_LOG CLIENT_ARGS...: a daemon-mode blue_xfer pair, both as
# uid 1000; returns the client's status (the server's is checked when the client passed).
tn_pair() {
	local port=$1 slog=$2 clog=$3 spid rc=0
	shift 3
	ns_bg "$NS_A" spid timeout 60 setpriv --reuid=$USER_ID --regid=$USER_ID --clear-groups \
		"${UENV[@]}" "$UXFER" -d "$IF_A" -p "$port" -T 30 >"$slog" 2>&1
	sleep 0.3
	ns_exec "$NS_B" timeout 60 setpriv --reuid=$USER_ID --regid=$USER_ID --clear-groups \
		"${UENV[@]}" "$UXFER" -d "$IF_B" -p "$port" -T 30 "$@" "$IP_A" \
		>"$clog" 2>&1 || rc=$?
	if [ "$rc" -eq 0 ]; then
		wait "$spid" || { cat "$slog"; fail "the server exited non-zero"; }
	else
		kill "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null || true
	fi
	return "$rc"
}

# tenant_field NS IF NAME COLUMN: one column of `bluectl tenant show`
tenant_field() {
	ns_exec "$1" "$BLUECTL" tenant show "$2" "$3" | awk -v c="$4" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) col = i }
		NR == 2 && col { print $col }'
}

test_tenants_quota_refused_with_edquot() {
	tn_setup
	tn_pair 18741 "$LOGS/s1" "$LOGS/c1" --qps 3 --op write --size 4K -n 16 &&
		{ cat "$LOGS/c1"; fail "a third QP was allowed past qps=2"; }
	cat "$LOGS/c1"
	grep -q "tenant slow: its QP quota (qps=2) is reached" "$LOGS/c1" ||
		fail "the refusal did not name the tenant and the limit"
	grep -qi "quota exceeded\|EDQUOT" "$LOGS/c1" || fail "the error was not EDQUOT"
	[ "$(tenant_field "$NS_B" "$IF_B" slow EDQUOT)" -ge 1 ] || fail "bluectl counted no refusal"
	# the process has gone: what it held is the tenant's again
	local q
	for _ in $(seq 1 50); do
		q=$(tenant_field "$NS_B" "$IF_B" slow QPS)
		[ "$q" = "0/2" ] && break
		sleep 0.1
	done
	[ "$q" = "0/2" ] || fail "the tenant still holds QPs after its process exited: $q"
	# two QPs are within the quota
	tn_pair 18742 "$LOGS/s2" "$LOGS/c2" --qps 2 --op write --size 4K -n 64 --verify ||
		{ cat "$LOGS/c2"; fail "two QPs within qps=2 did not pass"; }
}

test_tenants_rate_limits_and_counts() {
	tn_setup
	local gbps tx thr
	tn_pair 18743 "$LOGS/s" "$LOGS/c" --op write --size 64K -n 1024 --lat-iters 0 --verify ||
		{ cat "$LOGS/c"; fail "the rate-limited transfer did not pass"; }
	cat "$LOGS/c"
	gbps=$(awk '$1 == "write" && $2 == 65536 && $NF == "OK" { print $5 }' "$LOGS/c")
	[ -n "$gbps" ] || fail "no write row in the client's report"
	# 64 MiB of payload at a 200 Mbit/s wire rate: above 0.2 Gbit/s is impossible
	awk -v g="$gbps" 'BEGIN { exit !(g <= 0.2) }' ||
		fail "slow moved $gbps Gbit/s past its 200 Mbit/s rate"
	tx=$(tenant_field "$NS_B" "$IF_B" slow TX_BYTES)
	thr=$(tenant_field "$NS_B" "$IF_B" slow THROTTLED)
	[ "$tx" -ge $((1024 * 65536)) ] || fail "slow's TX_BYTES $tx < the 64 MiB it wrote"
	[ "$thr" -gt 0 ] || fail "the bucket never held slow back"
	[ "$(tenant_field "$NS_B" "$IF_B" fast TX_BYTES)" = 0 ] ||
		fail "slow's bytes were counted for fast"
	ns_exec "$NS_B" "$BLUECTL" metrics "$IF_B" >"$LOGS/metrics"
	grep -E "^blue_tenant_tx_bytes_total\{ifname=\"$IF_B\",tenant=\"slow\",class=\"normal\"\} [0-9]+$" \
		"$LOGS/metrics" >/dev/null || { grep blue_tenant "$LOGS/metrics"; fail "no tenant series in bluectl metrics"; }
	echo "slow: $gbps Gbit/s payload at rate=200M; tx_bytes $tx, throttled $thr"
}

test_tenants_reload_set_and_refusals() {
	tn_setup
	local out
	# SIGHUP: slow may hold 4 QPs now
	sed -i 's/qps=2/qps=4/' "$CONF"
	mgr_signal HUP "$MGR_A"
	mgr_signal HUP "$MGR_B"
	wait_for_line "$LOGS/mgr-b" "tenants: $CONF read again" 10 "$MGR_B" ||
		{ cat "$LOGS/mgr-b"; fail "SIGHUP did not read the file again"; }
	wait_for_line "$LOGS/mgr-a" "tenants: $CONF read again" 10 "$MGR_A" ||
		fail "SIGHUP did not read the file again on $IF_A"
	tn_pair 18744 "$LOGS/s1" "$LOGS/c1" --qps 3 --op write --size 4K -n 32 --verify ||
		{ cat "$LOGS/c1"; fail "three QPs after the reload to qps=4 were refused"; }
	# a bad file changes nothing, and says where it is wrong
	echo "tenant broken class=fastest" >>"$CONF"
	mgr_signal HUP "$MGR_B"
	wait_for_line "$LOGS/mgr-b" "$CONF:6: class \"fastest\"" 10 "$MGR_B" ||
		{ cat "$LOGS/mgr-b"; fail "the bad line was not named"; }
	[ "$(tenant_field "$NS_B" "$IF_B" slow QPS)" = "0/4" ] || fail "a bad file changed the limits"
	# bluectl tenant set: root may, uid 1000 may not
	ns_exec "$NS_B" "$BLUECTL" tenant set "$IF_B" slow qps=1 rate=1G >/dev/null ||
		fail "root's tenant set failed"
	[ "$(tenant_field "$NS_B" "$IF_B" slow QPS)" = "0/1" ] || fail "tenant set did not apply"
	out=$(ns_exec "$NS_B" setpriv --reuid=$USER_ID --regid=$USER_ID --clear-groups \
		"${UENV[@]}" "$UBLUECTL" tenant set "$IF_B" slow qps=100 2>&1) &&
		fail "uid $USER_ID changed a tenant"
	grep -q "only root may" <<<"$out" || fail "the refusal did not say why: $out"
	# no map line and no default: refused, saying so
	printf 'tenant fast\nmap uid=0 fast\n' >"$CONF"
	mgr_signal HUP "$MGR_B"
	for _ in $(seq 1 100); do
		[ "$(grep -c "tenants: $CONF read again" "$LOGS/mgr-b")" -ge 2 ] && break
		sleep 0.1
	done
	[ "$(grep -c "tenants: $CONF read again" "$LOGS/mgr-b")" -ge 2 ] || fail "no second reload"
	out=$(ns_exec "$NS_B" timeout 20 setpriv --reuid=$USER_ID --regid=$USER_ID --clear-groups \
		"${UENV[@]}" "$UXFER" -d "$IF_B" -p 18745 -T 5 "$IP_A" 2>&1) &&
		fail "a process no tenant takes was served"
	grep -q "no tenant takes this process (uid $USER_ID" <<<"$out" ||
		fail "the refusal did not say why: $out"
}
