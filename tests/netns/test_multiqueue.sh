# shellcheck shell=bash
# Multi-socket scaling: a netdev queue per context (blue_open_device_queue, BLUE_QUEUE).
# Over a veth pair with two queues a side, two independent blue_xfer pairs, one on
# queue 0 and one on queue 1, move verified data at the same time; the veth's own
# per-queue XDP counters show that both queues carried RoCE, and nothing was dropped
# as arriving on the wrong queue. A QP whose packets arrive on another queue is dropped
# and counted (drop_wrong_queue), a queue the netdev lacks and a queue already served
# are refused with a message saying so, and opening another queue never frees the QP
# slots of a live process on the first. One process may serve both queues too: a
# context per queue, each driven by its own thread (mq_threads).
# Run: B=build bash tests/lib/runner.sh tests/netns/test_multiqueue.sh
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh

BLUECTL=$PWD/$B/bin/bluectl
XFER=$PWD/$B/bin/blue_xfer
SMOKE=$PWD/$B/tests/netns/rc_smoke
THREADS=$PWD/$B/tests/netns/mq_threads
IP_A=10.201.83.1	# servers
IP_B=10.201.83.2	# clients

mq_setup() {
	VETH_QUEUES=2 netns_setup mq "$IP_A" "$IP_B"
	need_bins "$BLUECTL" "$XFER"
	blue_attach "$NS_A" "$IF_A" >/dev/null
	blue_attach "$NS_B" "$IF_B" >/dev/null
	OUT=$(mktemp -d)
	on_exit "rm -rf $OUT"
}

# xdp_queue_redirects NS IF Q: XDP redirects veth counted on its RX queue Q
xdp_queue_redirects() {
	ns_exec "$1" ethtool -S "$2" |
		awk -v k="rx_queue_$3_xdp_redirect:" '$1 == k { print $2; f = 1 } END { if (!f) print 0 }'
}

# xfer_pair TAG QUEUE PORT: a blue_xfer server (A) and client (B) on QUEUE, started in
# the background; the PIDs land in SPID_TAG and CPID_TAG
xfer_pair() {
	local tag=$1 q=$2 port=$3
	ns_bg "$NS_A" "SPID_$tag" env BLUE_QUEUE="$q" timeout 60 "$XFER" -d "$IF_A" -p "$port" \
		-T 30 >"$OUT/srv$tag" 2>&1
	ns_bg "$NS_B" "CPID_$tag" env BLUE_QUEUE="$q" timeout 60 "$XFER" -d "$IF_B" -p "$port" \
		-T 30 -o write,read,send -s 4K,256K -n 64 --verify --lat-iters 0 "$IP_A" \
		>"$OUT/cli$tag" 2>&1
}

# xfer_done TAG: both ends of pair TAG exited 0 (outputs printed either way)
xfer_done() {
	local tag=$1 rc=0 s c
	s=SPID_$tag c=CPID_$tag
	wait "${!c}" || rc=$?
	wait "${!s}" || rc=$((rc ? rc : $?))
	echo "--- client $tag:"; cat "$OUT/cli$tag"
	echo "--- server $tag:"; cat "$OUT/srv$tag"
	[ "$rc" -eq 0 ] || fail "pair $tag exited $rc"
}

test_multiqueue_two_queues_move_verified_data_at_once() {
	mq_setup
	command -v ethtool >/dev/null || skip "ethtool not installed (per-queue veth counters)"
	local a0 a1 b0 b1 wrong
	a0=$(xdp_queue_redirects "$NS_A" "$IF_A" 0)
	a1=$(xdp_queue_redirects "$NS_A" "$IF_A" 1)
	b0=$(xdp_queue_redirects "$NS_B" "$IF_B" 0)
	b1=$(xdp_queue_redirects "$NS_B" "$IF_B" 1)
	xfer_pair q0 0 18620
	xfer_pair q1 1 18621
	xfer_done q0
	xfer_done q1
	grep -q "RESULT: PASS (6 of 6 rounds passed)" "$OUT/cliq0" || fail "queue 0: not every round verified"
	grep -q "RESULT: PASS (6 of 6 rounds passed)" "$OUT/cliq1" || fail "queue 1: not every round verified"
	# each queue carried its pair's packets through XDP into its own socket
	[ "$(xdp_queue_redirects "$NS_A" "$IF_A" 0)" -gt "$a0" ] || fail "A queue 0 redirected nothing"
	[ "$(xdp_queue_redirects "$NS_A" "$IF_A" 1)" -gt "$a1" ] || fail "A queue 1 redirected nothing"
	[ "$(xdp_queue_redirects "$NS_B" "$IF_B" 0)" -gt "$b0" ] || fail "B queue 0 redirected nothing"
	[ "$(xdp_queue_redirects "$NS_B" "$IF_B" 1)" -gt "$b1" ] || fail "B queue 1 redirected nothing"
	wrong=$(ctl_stat "$NS_A" "$IF_A" drop_wrong_queue)
	[ "$wrong" -eq 0 ] || fail "A dropped $wrong packets as arriving on the wrong queue"
	wrong=$(ctl_stat "$NS_B" "$IF_B" drop_wrong_queue)
	[ "$wrong" -eq 0 ] || fail "B dropped $wrong packets as arriving on the wrong queue"
	# the device statistics add up both queues' contexts
	ns_exec "$NS_A" "$BLUECTL" stats "$IF_A" | tee "$OUT/stats"
	grep -q "opened 2 times since attach" "$OUT/stats" || fail "want 2 opens summed over queues"
}

test_multiqueue_one_process_a_thread_per_queue() {
	mq_setup
	need_bins "$THREADS"
	local spid rc=0 before
	before=$(ctl_stat "$NS_A" "$IF_A" redirect)
	ns_bg "$NS_A" spid timeout 40 "$THREADS" server "$IF_A" 18630 2 >"$OUT/srv" 2>&1
	wait_for_line "$OUT/srv" 'READY.*port 18631' 10 "$spid" ||
		{ cat "$OUT/srv"; fail "the server's two threads did not get ready"; }
	ns_exec "$NS_B" timeout 40 "$THREADS" client "$IF_B" "$IP_A" 18630 2 >"$OUT/cli" 2>&1 ||
		rc=$?
	wait "$spid" || rc=$((rc ? rc : $?))
	echo "--- client:"; cat "$OUT/cli"
	echo "--- server:"; cat "$OUT/srv"
	[ "$rc" -eq 0 ] || fail "mq_threads exited $rc"
	for q in 0 1; do
		grep -q "^ok queue $q: .* verified$" "$OUT/srv" || fail "server queue $q not verified"
		grep -q "^ok queue $q: .* verified by the server$" "$OUT/cli" ||
			fail "client queue $q not verified"
	done
	[ "$(ctl_stat "$NS_A" "$IF_A" drop_wrong_queue)" -eq 0 ] || fail "wrong-queue drops on A"
	[ "$(ctl_stat "$NS_A" "$IF_A" redirect)" -gt "$before" ] || fail "A redirected nothing"
}

test_multiqueue_wrong_queue_is_dropped_and_counted() {
	mq_setup
	local rc=0 before after spid
	before=$(ctl_stat "$NS_A" "$IF_A" drop_wrong_queue)
	# the server serves queue 0; the client sends from queue 1, so its packets come in
	# on A's queue 1 where no socket of the server's QP listens
	ns_bg "$NS_A" spid env BLUE_QUEUE=0 timeout 30 "$XFER" -d "$IF_A" -p 18622 -T 8 \
		>"$OUT/srv" 2>&1
	ns_exec "$NS_B" env BLUE_QUEUE=1 timeout 30 "$XFER" -d "$IF_B" -p 18622 -T 8 \
		-o write -s 4K -n 8 --lat-iters 0 --ack-timeout 10 --retry-cnt 1 "$IP_A" \
		>"$OUT/cli" 2>&1 || rc=$?
	kill "$spid" 2>/dev/null || true
	wait "$spid" 2>/dev/null || true
	cat "$OUT/cli"
	[ "$rc" -ne 0 ] || fail "a transfer across queues succeeded"
	grep -qi "retry" "$OUT/cli" || fail "the client did not report exhausted retries"
	after=$(ctl_stat "$NS_A" "$IF_A" drop_wrong_queue)
	[ "$after" -gt "$before" ] || fail "drop_wrong_queue did not move ($before -> $after)"
	echo "drop_wrong_queue: $before -> $after"
}

test_multiqueue_refusals_name_the_queue() {
	mq_setup
	need_bins "$SMOKE"
	local out rc hold spid
	hold=$(mktemp -u)
	on_exit "rm -f $hold"
	# a queue the veth does not have
	rc=0
	out=$(ns_exec "$NS_A" env BLUE_QUEUE=2 timeout 10 "$SMOKE" probe "$IF_A" 2>&1) || rc=$?
	echo "$out"
	[ "$rc" -ne 0 ] || fail "queue 2 of a two-queue veth opened"
	grep -q "queue 2 refused: does the netdev have 3 queues" <<<"$out" || fail "no clear message"
	# beyond what blue serves, and not a number
	rc=0
	out=$(ns_exec "$NS_A" env BLUE_QUEUE=16 timeout 10 "$SMOKE" probe "$IF_A" 2>&1) || rc=$?
	echo "$out"
	[ "$rc" -ne 0 ] && grep -q "BLUE_QUEUE=16 is not a queue number 0..15" <<<"$out" ||
		fail "BLUE_QUEUE=16 not refused clearly"
	rc=0
	out=$(ns_exec "$NS_A" env BLUE_QUEUE=one timeout 10 "$SMOKE" probe "$IF_A" 2>&1) || rc=$?
	[ "$rc" -ne 0 ] && grep -q "BLUE_QUEUE=one is not a queue number" <<<"$out" ||
		fail "BLUE_QUEUE=one not refused clearly"
	# a live server on queue 1 with a QP: queue 1 is refused to others, queue 0 opens,
	# and neither open frees the live server's QP slot
	ns_bg "$NS_A" spid env BLUE_QUEUE=1 "$SMOKE" server "$IF_A" --hold-file "$hold" \
		--timeout-ms 10000 >"$OUT/srv" 2>&1
	wait_for_line "$OUT/srv" '^READY' 10 || { cat "$OUT/srv"; fail "server not ready"; }
	rc=0
	out=$(ns_exec "$NS_A" env BLUE_QUEUE=1 timeout 10 "$SMOKE" probe "$IF_A" 2>&1) || rc=$?
	echo "$out"
	[ "$rc" -ne 0 ] || fail "a second open of queue 1 succeeded"
	grep -q "has blue open on queue 1 of this netdev" <<<"$out" || fail "EBUSY not explained"
	out=$(ns_exec "$NS_A" env BLUE_QUEUE=0 timeout 10 "$SMOKE" probe "$IF_A" 2>&1) ||
		{ echo "$out"; fail "queue 0 did not open beside a live queue 1"; }
	echo "$out"
	grep -q "freed" <<<"$out" && fail "opening queue 0 freed the live server's QP slot"
	[ "$(ns_exec "$NS_A" "$BLUECTL" qp list "$IF_A" | grep -cE "^0x")" -eq 1 ] ||
		{ ns_exec "$NS_A" "$BLUECTL" qp list "$IF_A"; fail "the live server's QP is gone"; }
	ns_exec "$NS_A" "$BLUECTL" stats "$IF_A" | grep "device:"
	ns_exec "$NS_A" "$BLUECTL" stats "$IF_A" | grep -q "device: queue 1 open by pid $spid" ||
		fail "bluectl stats does not name queue 1's owner"
}

# A container's process (another PID namespace, sharing the host's bpffs) serves queue 1:
# its owner_pid names a PID that no process has out here, yet it lives, so opening queue
# 0 must not free its QP slot, and bluectl shows the queue open; once it is killed, the
# next open frees the slot and bluectl shows it closed.
test_multiqueue_owner_in_another_pid_namespace() {
	command -v unshare >/dev/null || skip "unshare (util-linux) not installed"
	mq_setup
	need_bins "$SMOKE"
	local out hold spid qpn owner p i
	hold=$(mktemp -u)
	on_exit "rm -f $hold"
	# a PID free here, which the server is given inside its namespace (ns_last_pid)
	for ((p = 31000; p < 4000000; p += 7)); do [ -e "/proc/$p" ] || break; done
	# shellcheck disable=SC2016 # $1.. expand in the inner shell
	ns_bg "$NS_A" spid unshare -p -f --mount-proc --kill-child sh -c \
		'echo $(($1 - 1)) >/proc/sys/kernel/ns_last_pid || exit 90; shift; env BLUE_QUEUE=1 "$@"' \
		sh "$p" "$SMOKE" server "$IF_A" --hold-file "$hold" --timeout-ms 10000 >"$OUT/srv" 2>&1
	wait_for_line "$OUT/srv" '^READY' 10 "$spid" || { cat "$OUT/srv"; fail "server not ready"; }
	qpn=$(sed -nE 's/^READY qpn (0x[0-9a-f]+) .*/\1/p' "$OUT/srv")
	owner=$(ns_exec "$NS_A" "$BLUECTL" qp show "$IF_A" "$qpn" | awk '$1 == "owner_pid:" { print $2 }')
	echo "QP $qpn owned by pid $owner of its own PID namespace"
	[ "$owner" = "$p" ] || fail "owner_pid '$owner', want $p"
	[ ! -e "/proc/$p" ] || fail "PID $p exists out here too"
	out=$(ns_exec "$NS_A" env BLUE_QUEUE=0 timeout 10 "$SMOKE" probe "$IF_A" 2>&1) ||
		{ echo "$out"; fail "queue 0 did not open"; }
	echo "$out"
	grep -q "freed" <<<"$out" && fail "a live owner in another PID namespace lost its QP slot"
	[ "$(ns_exec "$NS_A" "$BLUECTL" qp list "$IF_A" | grep -cE "^$qpn ")" -eq 1 ] ||
		fail "the live server's QP is gone"
	# and bluectl, out here, sees queue 1 open (its owner holds the queue's mark)
	out=$(ns_exec "$NS_A" "$BLUECTL" stats "$IF_A" | grep '^device:')
	echo "$out"
	grep -qx "device: queue 1 open by pid $p" <<<"$out" ||
		fail "bluectl stats does not show queue 1 open by its owner"
	# unshare's death kills the namespace's init, and with it the server; the kernel
	# drops the server's marks as that process ends, which may come after unshare has
	# been reaped (seen on a loaded machine): up to 5 s for it
	kill -9 "$spid"
	wait "$spid" 2>/dev/null || true
	for ((i = 0; i < 50; i++)); do
		out=$(ns_exec "$NS_A" "$BLUECTL" stats "$IF_A" | grep '^device:')
		grep -q "open by pid" <<<"$out" || break
		sleep 0.1
	done
	echo "$out"
	grep -q "open by pid" <<<"$out" && fail "bluectl stats shows a dead owner's queue open (5 s after)"
	out=$(ns_exec "$NS_A" env BLUE_QUEUE=0 timeout 10 "$SMOKE" probe "$IF_A" 2>&1) ||
		{ echo "$out"; fail "probe after the kill"; }
	echo "$out"
	grep -q "freed 1 QP slot left by a process that exited" <<<"$out" || fail "no reclaim"
	[ "$(ns_exec "$NS_A" "$BLUECTL" qp list "$IF_A" | grep -cE "^$qpn ")" -eq 0 ] ||
		fail "the dead server's QP is still listed"
}
