# shellcheck shell=bash
# The CM agent (compat/rdmacm/agent.c, driven by $B/tests/compat/cm_agent_probe) against
# the kernel's IB CM: Linux Soft-RoCE in the QEMU guest of tests/interop/guest.sh runs the
# unmodified rping of rdmacm-utils over rdma-core's librdmacm and the kernel's rdma_cm /
# ib_cm, and blue's agent speaks the IB CM to it on QP1 over XDP/AF_XDP. One boot:
#   1. the guest serves (rping -s -p 7174); the probe sends a REQ for service
#      0x0106 << 16 | 7174 with the IP CM header and gets the kernel's REP, sends the RTU,
#      then a DREQ, and gets the DREP: the guest's rping sees ESTABLISHED, then
#      DISCONNECTED. A REQ that comes before rping listens is answered REJ 8 by the
#      kernel; the probe then tries again (bounded).
#   2. the probe listens on 0x0106 << 16 | 7175 and rejects (REJ 28, consumer reject);
#      the guest's rping -c reaches it (our agent sees the kernel's REQ, with the guest's
#      IP in the IP CM header) and reports RDMA_CM_EVENT_REJECTED, error 28.
# Run: B=build-<you> bash tests/lib/runner.sh tests/compat/test_cm_agent_rxe.sh
#
# Test functions: test_cm_agent_rxe
# shellcheck source=tests/interop/guest.sh
source tests/interop/guest.sh
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh
# shellcheck source=tests/lib/compat.sh
source tests/lib/compat.sh

CR_LIB=$PWD/$B/compat
CR_BLUECTL=$PWD/$B/bin/bluectl
CR_PROBE=$PWD/$B/tests/compat/cm_agent_probe
CR_SID1=$((0x0106 << 16 | 7174))
CR_SID2=$((0x0106 << 16 | 7175))
CR_KEEP=$PWD/$B/test-logs/cm-agent-rxe	# the last run's probe outputs and guest console

test_cm_agent_rxe() {
	local why out lpid lout i rc gcmd
	why=$(rxe_missing)
	[ -z "$why" ] || skip "$why"
	need_bins "$CR_PROBE" "$CR_LIB/libibverbs.so.1" "$CR_BLUECTL"
	rxe_images || {
		[ $? -eq 2 ] && skip "guest image inputs missing; run scripts/deps.sh"
		fail "initramfs build failed (see above)"
	}
	compat_env "$CR_LIB"
	rxe_blue_up vbl0 "$CR_BLUECTL" || fail "cannot attach blue to vbl0"
	out=$(mktemp); lout=$(mktemp)
	on_exit "rm -f $out $lout"
	mkdir -p "$CR_KEEP"
	on_exit "cp $out $CR_KEEP/connect.txt; cp $lout $CR_KEEP/listen.txt"
	# step 2: the guest cannot see when the host's listener is up, so its rping -c tries
	# again (bounded) while it is answered REJ 8 (no listener: step 1's agent, still in
	# TIMEWAIT, or none yet); the kernel CM itself re-sends a REQ that finds no agent
	gcmd="echo CR-S1-BEGIN; timeout 60 rping -s -a $RXE_GUEST_IP -p 7174 -C 1 -v -d; \
echo CR-S1-END rc=\$?; echo CR-S2-BEGIN; i=0; while :; do \
timeout 60 rping -c -a $RXE_BLUE_IP -p 7175 -C 1 -v -d >/tmp/r 2>&1; c=\$?; \
grep -q 'REJECTED, error 8\$' /tmp/r && [ \$i -lt 40 ] || break; i=\$((i + 1)); sleep 0.5; \
done; cat /tmp/r; echo CR-S2-END rc=\$c tries=\$i"
	rxe_guest_start "$gcmd"
	on_exit "cp $RXE_LOG $CR_KEEP/console.txt"	# runs before the log's removal
	rxe_guest_wait READY 90 || fail "guest never became READY"
	rxe_console_wait '^CR-S1-BEGIN' 30 || fail "the guest did not start rping -s"
	# 1. blue connects to the guest's rping -s
	rc=1
	for ((i = 0; i < 20; i++)); do
		rxe_blue timeout 40 "${COMPAT_ENV[@]}" BLUE_RDMACM_STATS=1 "$CR_PROBE" connect \
			"$RXE_GUEST_IP" "$CR_SID1" --time 30 >"$out" 2>&1 || true
		grep -q '^event REP_RECEIVED' "$out" && { rc=0; break; }
		grep -qE '^event REJECTED reason=8 ' "$out" || break	# only "no listener" is retried
		sleep 0.5
	done
	echo "--- probe, connecting (attempt $((i + 1)))"; cat "$out"
	[ "$rc" -eq 0 ] || fail "no REP from the kernel CM"
	[ "$(awk '$1 == "event" { printf "%s ", $2 } $1 == "sent" { printf "sent_%s ", $2 }' "$out")" = \
	  "REP_RECEIVED sent_RTU sent_DREQ DISCONNECTED TIMEWAIT_EXIT " ] ||
		fail "the probe's events are not REP, RTU, DREQ, DREP (DISCONNECTED), TIMEWAIT_EXIT"
	grep -qx 'result TIMEWAIT_EXIT' "$out" || fail "the connection did not end in TIMEWAIT_EXIT"
	rxe_console_wait '^CR-S1-END' 60 || fail "the guest's rping -s did not end"
	tr -d '\r' <"$RXE_LOG" | sed -n '/^CR-S1-BEGIN/,/^CR-S1-END/p'
	tr -d '\r' <"$RXE_LOG" | sed -n '/^CR-S1-BEGIN/,/^CR-S1-END/p' |
		grep -q 'RDMA_CM_EVENT_ESTABLISHED' || fail "the guest's rping saw no ESTABLISHED"
	tr -d '\r' <"$RXE_LOG" | sed -n '/^CR-S1-BEGIN/,/^CR-S1-END/p' |
		grep -q 'RDMA_CM_EVENT_DISCONNECTED' || fail "the guest's rping saw no DISCONNECTED"
	# 2. the guest's rping -c to blue's listener, which rejects it
	rxe_bg "$RXE_NS_BLUE" lpid timeout 60 "${COMPAT_ENV[@]}" BLUE_RDMACM_STATS=1 "$CR_PROBE" \
		listen "$CR_SID2" --reject 28 --time 50 >"$lout" 2>&1
	rxe_console_wait '^CR-S2-END' 60 || { cat "$lout"; fail "the guest's rping -c did not end"; }
	wait "$lpid" || true
	echo "--- probe, listening"; cat "$lout"
	tr -d '\r' <"$RXE_LOG" | sed -n '/^CR-S2-BEGIN/,/^CR-S2-END/p'
	grep -qE "^event REQ_RECEIVED service_id=0x$(printf %x "$CR_SID2") .*ip_src=$RXE_GUEST_IP\$" \
		"$lout" || fail "the kernel's REQ did not reach the probe with its IP CM header"
	grep -qx 'sent REJ reason=28' "$lout" || fail "the probe did not reject"
	grep -qx 'result REJ_SENT' "$lout" || fail "the listener did not end on its REJ"
	tr -d '\r' <"$RXE_LOG" | sed -n '/^CR-S2-BEGIN/,/^CR-S2-END/p' |
		grep -q 'RDMA_CM_EVENT_REJECTED, error 28' || fail "the guest's rping did not see REJ 28"
	rxe_guest_wait EXIT 30 || true
}
