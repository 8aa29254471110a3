# shellcheck shell=bash
# Hostile input against a live QP (issue 4): while hostile_peer moves data between two
# namespaces (blue attached on both ends; WRITE, READ back, SEND and Fetch&Add, every
# byte checked), hostile_tx in the client's namespace sends crafted frames at the server
# from an AF_PACKET socket. What must hold:
#  - the transfer completes intact, and the server's canary pages around its MR are
#    untouched (guard pages beyond them would fault);
#  - every hostile frame is counted under its reason: bluectl stats for what XDP drops,
#    the server engine's counters for what the runtime drops, and the victim QPs' own
#    context (bluectl qp show: NAK syndrome, state, packets) for the requests a responder
#    must NAK, which go to victim QPs so that the main QP only ever sees frames that are
#    dropped silently;
#  - nothing crashes; both processes exit cleanly (under SAN=1 with no leak reported).
# It runs twice: at path MTU 1024 (netdev MTU 1500) and at 4096 (netdev MTU 9000), where
# frames beyond ~3.5 KB reach XDP as frags and AF_XDP as several descriptors; there
# hostile_tx adds the multi-buffer kinds (mb_*), the HAL's rx_multibuf counts at least
# the hostile ones that reached the socket, and rx_dropped the ones too big to gather.
# The table printed at the end gives, per kind, the frames sent and how each was counted.
# Run: B=build bash tests/lib/runner.sh tests/netns/test_hostile.sh
# shellcheck source=tests/lib/netns.sh
source tests/lib/netns.sh

BLUECTL=$PWD/$B/bin/bluectl
PEER=$PWD/$B/tests/netns/hostile_peer
HTX=$PWD/$B/tests/netns/hostile_tx
IP_A=10.201.98.1	# server: the target
IP_B=10.201.98.2	# client, and the hostile sender
COUNT=32		# frames per kind
FLOOD=1000		# frames to unknown QPNs

NVICTIMS=8		# victim 0 for PSNs, one per transport-rule kind of hostile_tx

# hst_setup NETDEV_MTU: namespaces and veth at that MTU, blue attached on both ends
hst_setup() {
	netns_setup hst "$IP_A" "$IP_B"
	need_bins "$BLUECTL" "$PEER" "$HTX"
	ip -n "$NS_A" link set "$IF_A" mtu "$1"
	ip -n "$NS_B" link set "$IF_B" mtu "$1"
	blue_attach "$NS_A" "$IF_A"
	blue_attach "$NS_B" "$IF_B"
}


# xdp_snapshot NS IF ARRAY: every reason's packet count into the associative ARRAY.
xdp_snapshot() {
	local -n _arr=$3
	local r n
	while read -r r n _; do
		[[ $n =~ ^[0-9]+$ ]] && _arr[$r]=$n
	done < <(ns_exec "$1" "$BLUECTL" stats "$2")
}

# qp_field NS IF QPN FIELD: one field of `bluectl qp show` (first word of its value).
qp_field() {
	ns_exec "$1" "$BLUECTL" qp show "$2" "$3" | awk -v k="$4:" '$1 == k { print $2 }'
}

# hostile_run NETDEV_MTU PATH_MTU: the transfer at that path MTU (what the link carries),
# the hostile frames at it, every check below; at 4096 the frames beyond one page
# arrive as multi-buffer frames, and hostile_tx adds the kinds that exist only there
hostile_run() {
	local path_mtu=$2
	hst_setup "$1"
	local srv cli htx hold until rc=0 info kind n where part i mb0 mb1 hd0 hd1
	srv=$(mktemp) cli=$(mktemp) htx=$(mktemp) hold=$(mktemp -u) until=$(mktemp -u)
	on_exit "rm -f $srv $cli $htx $hold $until"

	ns_bg "$NS_A" SPID timeout 90 "$PEER" server "$IF_A" --victims "$NVICTIMS" --hold-file "$hold" \
		--hold-ms 30000 --timeout-ms 20000 >"$srv" 2>&1
	wait_for_line "$srv" '^READY' 10 || { cat "$srv"; fail "the server did not get ready"; }
	ns_bg "$NS_B" CPID timeout 90 "$PEER" client "$IF_B" "$IP_A" --until-file "$until" \
		--min-rounds 5 --max-ms 40000 --timeout-ms 20000 >"$cli" 2>&1
	wait_for_line "$srv" '^INFO' 10 || { cat "$srv" "$cli"; fail "no INFO from the server"; }
	wait_for_line "$cli" '^RUNNING' 10 || { cat "$srv" "$cli"; fail "the transfer did not start"; }
	info=$(sed -n 's/^INFO //p' "$srv")
	echo "server: $info"
	local -a vq=()
	IFS=, read -r -a vq <<<"$(sed -nE 's/.* victims ([^ ]+).*/\1/p' <<<"$info")"
	local main_qpn
	main_qpn=$(sed -nE 's/.*main_qpn (0x[0-9a-f]+).*/\1/p' <<<"$info")
	[ "$(sed -nE 's/.* mtu ([0-9]+) .*/\1/p' <<<"$info")" = "$path_mtu" ] ||
		fail "the QPs do not run at path MTU $path_mtu on a netdev MTU of $1"

	declare -A x0=() x1=()
	xdp_snapshot "$NS_A" "$IF_A" x0
	mb0=$(ctl_stat "$NS_A" "$IF_A" rx_multibuf)
	hd0=$(ctl_stat "$NS_A" "$IF_A" rx_dropped)
	# the hostile frames, while the transfer runs: first everything but the repeats at
	# the victims, then, once each victim is in ERROR, the repeats
	local htx_args=("$IF_B" --src-mac "$MAC_B" --dst-mac "$MAC_A" --src-ip "$IP_B"
			--dst-ip "$IP_A" --info "$info" --count "$COUNT" --flood "$FLOOD")
	ns_exec "$NS_B" timeout 60 "$HTX" "${htx_args[@]}" --part main >"$htx" 2>&1 ||
		{ cat "$htx"; fail "hostile_tx failed"; }
	for ((i = 1; i < NVICTIMS; i++)); do
		local k
		for ((k = 0; k < 100; k++)); do
			[ "$(qp_field "$NS_A" "$IF_A" "${vq[$i]%%:*}" state)" = ERR ] && break
			sleep 0.1
		done
	done
	ns_exec "$NS_B" timeout 60 "$HTX" "${htx_args[@]}" --part rest >>"$htx" 2>&1 ||
		{ cat "$htx"; fail "hostile_tx failed"; }
	cat "$htx"
	grep -q "^RUNNING" "$cli" && ! grep -q '^RESULT' "$cli" ||
		{ cat "$cli"; fail "the transfer was not running all along"; }
	touch "$until"
	wait_for_line "$srv" '^HOLD' 40 || { cat "$srv" "$cli"; fail "the server did not finish"; }
	xdp_snapshot "$NS_A" "$IF_A" x1
	mb1=$(ctl_stat "$NS_A" "$IF_A" rx_multibuf)
	hd1=$(ctl_stat "$NS_A" "$IF_A" rx_dropped)

	# the victims, while the server holds them
	local -a vstate=() vnaks=() vsyn=() vrx=() vrq=()
	for ((i = 0; i < ${#vq[@]}; i++)); do
		local q=${vq[$i]%%:*}
		vstate[i]=$(qp_field "$NS_A" "$IF_A" "$q" state)
		vnaks[i]=$(qp_field "$NS_A" "$IF_A" "$q" naks_sent)
		vsyn[i]=$(qp_field "$NS_A" "$IF_A" "$q" last_nak_syndrome)
		vrx[i]=$(qp_field "$NS_A" "$IF_A" "$q" rx_pkts)
		vrq[i]=$(qp_field "$NS_A" "$IF_A" "$q" rq_psn)
		echo "victim $i ($q): state ${vstate[i]} naks_sent ${vnaks[i]}" \
			"last_nak_syndrome ${vsyn[i]} rx_pkts ${vrx[i]} rq_psn ${vrq[i]}"
	done
	echo "main QP $main_qpn: state $(qp_field "$NS_A" "$IF_A" "$main_qpn" state)," \
		"naks_sent $(qp_field "$NS_A" "$IF_A" "$main_qpn" naks_sent)"
	[ "$(qp_field "$NS_A" "$IF_A" "$main_qpn" state)" = RTS ] || fail "the main QP left RTS"

	touch "$hold"
	wait "$SPID" || rc=$?
	echo "--- server:"; cat "$srv"
	[ "$rc" -eq 0 ] || fail "server exited $rc"
	rc=0
	wait "$CPID" || rc=$?
	echo "--- client:"; cat "$cli"
	[ "$rc" -eq 0 ] || fail "client exited $rc"
	grep -q '^RESULT PASS$' "$srv" || fail "server: no RESULT PASS"
	grep -q '^RESULT PASS$' "$cli" || fail "client: no RESULT PASS"
	grep -q "^ok the server's checks passed$" "$cli" || fail "the server's checks"
	grep -q '^ok canaries intact after the transfer' "$srv" || fail "canaries after the transfer"
	grep -q '^ok canaries intact at exit' "$srv" || fail "canaries at exit"
	grep -qE '^ok [0-9]+ rounds: every SEND intact' "$srv" || fail "server: SENDs"

	# what each kind should have moved, from hostile_tx's own account
	declare -A want_x=() want_e=()
	local sent=0 table="" got
	while read -r _ kind n where; do
		sent=$((sent + n))
		IFS=+ read -r -a parts <<<"$where"
		for part in "${parts[@]}"; do
			case $part in
			xdp.*) want_x[${part#xdp.}]=$((${want_x[${part#xdp.}]:-0} + n)) ;;
			engine.*) want_e[${part#engine.}]=$((${want_e[${part#engine.}]:-0} + n)) ;;
			victim*.nak_0x61) want_e[rx_inv_req]=$((${want_e[rx_inv_req]:-0} + n)) ;;
			victim*.nak_0x62) want_e[rx_access_err]=$((${want_e[rx_access_err]:-0} + n)) ;;
			esac
		done
		table+=$(printf '%-26s %5s  %s' "$kind" "$n" "$where")$'\n'
	done < <(grep '^SENT ' "$htx")
	[ "$sent" -eq "$(awk '/^TOTAL / { t += $2 } END { print t + 0 }' "$htx")" ] ||
		fail "SENT lines do not add up to TOTAL"

	# XDP: each drop reason moved by exactly the frames sent for it, and no other did
	local r d bad=0
	for r in "${!x1[@]}"; do
		[[ $r == drop_* ]] || continue
		d=$((x1[$r] - ${x0[$r]:-0}))
		if [ "$d" -ne "${want_x[$r]:-0}" ]; then
			echo "xdp $r: +$d, want ${want_x[$r]:-0}"; bad=1
		fi
	done
	[ "$bad" -eq 0 ] || fail "XDP drop counters do not match the frames sent"

	# the engine: absolute counts (the legit transfer causes none of these); PSN
	# errors can also come from the transfer's own retransmissions, so at least
	declare -A eng=()
	while read -r _ r n; do eng[$r]=$n; done < <(grep '^ENGINE ' "$srv")
	local malformed=0
	for r in "${!want_e[@]}"; do
		got=${eng[$r]:-missing}
		case $r in
		rx_dup|rx_seq_err) [ "$got" -ge "${want_e[$r]}" ] || { echo "engine $r: $got, want >= ${want_e[$r]}"; bad=1; } ;;
		*) [ "$got" = "${want_e[$r]}" ] || { echo "engine $r: $got, want ${want_e[$r]}"; bad=1; } ;;
		esac
		[[ $r == parse_* && $r != parse_bad_icrc ]] && malformed=$((malformed + want_e[$r]))
	done
	[ "${eng[rx_malformed]}" -eq "$malformed" ] || { echo "engine rx_malformed ${eng[rx_malformed]}, want $malformed"; bad=1; }
	[ "${eng[rx_op_err]}" -eq 0 ] || { echo "engine rx_op_err ${eng[rx_op_err]}"; bad=1; }
	[ "$bad" -eq 0 ] || fail "engine counters do not match the frames sent"

	# the victims: victim 0 NAK'd the gap once and lives on at its PSN; each other one
	# NAK'd its one frame with the syndrome of its kind and went to ERROR
	local vpsn0=${vq[0]##*:}
	[ "${vstate[0]}" = RTS ] && [ "${vnaks[0]}" -eq 1 ] && [ "${vsyn[0]}" = 0x60 ] &&
		[ "${vrx[0]}" -eq $((2 * COUNT)) ] && [ $((vrq[0])) -eq $((vpsn0)) ] ||
		fail "victim 0 (PSNs outside the window): want RTS, one NAK 0x60, $((2 * COUNT)) packets, rq_psn $vpsn0"
	for ((i = 1; i < NVICTIMS; i++)); do
		local syn
		syn=$(sed -nE "s/^SENT .* victim$i\.nak_(0x[0-9a-f]+).*/\1/p" "$htx")
		[ "${vstate[i]}" = ERR ] && [ "${vnaks[i]}" -eq 1 ] && [ "${vsyn[i]}" = "$syn" ] &&
			[ "${vrx[i]}" -eq 1 ] ||
			fail "victim $i: want ERR after one NAK $syn on its one packet"
	done

	echo
	echo "hostile frames sent: $sent (while the transfer ran; it completed intact)"
	printf '%-26s %5s  %s\n' kind frames "counted as"
	printf '%s' "$table"
	echo "xdp deltas:$(for r in "${!want_x[@]}"; do printf ' %s +%d' "$r" $((x1[$r] - ${x0[$r]:-0})); done)"
	echo "engine:$(for r in "${!want_e[@]}" rx_malformed; do printf ' %s %s' "$r" "${eng[$r]}"; done)"

	# at 4096 the multi-buffer path carried them: the HAL gathered at least the hostile
	# frames beyond one buffer that XDP let through (the engine counted each above)
	local mb_up
	mb_up=$(awk '$1 == "SENT" && $2 ~ /^mb_/ && $4 ~ /^engine\./ { n += $3 }
		$1 == "SENT" && ($2 == "payload_at_mr_end" || $2 == "payload_over_mtu") { n += $3 } END { print n + 0 }' "$htx")
	echo "rx_multibuf: +$((mb1 - mb0)) (hostile multi-buffer frames steered: $mb_up)"
	# the HAL drops what is too big to gather (and, on a busy ring, the kernel may
	# drop some of the transfer's own frames: at least)
	local hal_want
	hal_want=$(awk '$1 == "SENT" && $4 == "hal.rx_dropped" { n += $3 } END { print n + 0 }' "$htx")
	echo "rx_dropped: +$((hd1 - hd0)) (hostile frames too big to gather: $hal_want)"
	[ $((hd1 - hd0)) -ge "$hal_want" ] ||
		fail "HAL rx_dropped +$((hd1 - hd0)), want >= $hal_want"
	if [ "$path_mtu" -eq 4096 ]; then
		[ "$mb_up" -gt 0 ] && [ "$hal_want" -gt 0 ] ||
			fail "hostile_tx sent no multi-buffer kinds at MTU 4096"
		[ $((mb1 - mb0)) -ge "$mb_up" ] ||
			fail "rx_multibuf +$((mb1 - mb0)): fewer than the $mb_up multi-buffer frames"
	fi
}

test_hostile_live_qp() {
	hostile_run 1500 1024
}

# the same at path MTU 4096 (netdev MTU 9000), where frames arrive as XDP frags
test_hostile_live_qp_mtu4096() {
	hostile_run 9000 4096
}
