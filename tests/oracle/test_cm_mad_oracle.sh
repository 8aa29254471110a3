# shellcheck shell=bash
# Oracle for the IB CM MAD codec (runtime/cm_mad.c): Wireshark's InfiniBand dissector must
# read back every field that blue__ibcm_encode() was given.
#   bash tests/lib/runner.sh tests/oracle/test_cm_mad_oracle.sh [test_name...]
# $B/tests/oracle/gen_cm_mads writes RoCEv2 UD SEND_ONLY frames to QP1 (DETH Q_Key
# 0x80010000) carrying a REQ (with the IP CM header), REP, RTU, REJ, DREQ and DREP, and
# the expected "<frame> <tshark field> <value>" lines; tshark -T fields is compared to them.

GEN=$B/tests/oracle/gen_cm_mads

_need() {
	[ -x "$GEN" ] || fail "$GEN not built (make B=$B $GEN)"
	command -v tshark >/dev/null || skip "tshark not installed (apt-get install tshark)"
}

# _compare PCAP EXPECT: 0 if tshark shows every expected value; prints each mismatch.
_compare() {
	local pcap=$1 exp=$2 n fields vals bad=0 i want got
	for n in $(cut -d' ' -f1 "$exp" | sort -un); do
		mapfile -t fields < <(awk -v n="$n" '$1 == n { print $2 }' "$exp")
		mapfile -t want < <(awk -v n="$n" '$1 == n { print $3 }' "$exp")
		vals=$(timeout 60 tshark -r "$pcap" -Y "frame.number == $n" -T fields \
			$(printf -- '-e %s ' "${fields[@]}") 2>/dev/null) || { echo "tshark failed"; return 1; }
		IFS=$'\t' read -r -a got <<<"$vals"
		for i in "${!fields[@]}"; do
			if [[ ${want[$i]} == *[.:]* ]]; then
				[ "${got[$i]:-}" = "${want[$i]}" ] && continue
			elif [[ ${got[$i]:-} =~ ^(0x[0-9a-fA-F]+|[0-9]+)$ ]] &&
				[ $((got[i])) -eq $((want[i])) ]; then
				continue
			fi
			echo "frame $n ${fields[$i]}: tshark '${got[$i]:-}', encoded ${want[$i]}"
			bad=1
		done
	done
	return $bad
}

_gen() {
	T=$(mktemp -d /tmp/blue-cm-mad-oracle.XXXXXX)
	on_exit rm -rf "$T"
	timeout 30 "$GEN" "$T/cm.pcap" "$T/cm.expect"
	[ -s "$T/cm.pcap" ] && [ -s "$T/cm.expect" ] || fail "gen_cm_mads wrote nothing"
}

test_tshark_reads_cm_mads() {
	_need
	_gen
	# every frame is dissected as a CM MAD at all
	[ "$(tshark -r "$T/cm.pcap" -Y 'infiniband.mad.mgmtclass == 7' 2>/dev/null | wc -l)" -eq 6 ] ||
		fail "tshark does not see 6 CM MADs: $(tshark -r "$T/cm.pcap" 2>&1 | head)"
	_compare "$T/cm.pcap" "$T/cm.expect"
	echo "$(wc -l <"$T/cm.expect") fields agree"
}

# The oracle must be able to fail: a wrong expected QPN, and a damaged QPN on the wire.
test_oracle_detects_damage() {
	_need
	_gen
	sed 's/^1 infiniband.cm.req.localqpn .*/1 infiniband.cm.req.localqpn 11259374/' \
		"$T/cm.expect" >"$T/bad.expect"
	cmp -s "$T/cm.expect" "$T/bad.expect" && fail "could not edit the expectation"
	if _compare "$T/cm.pcap" "$T/bad.expect" >"$T/out"; then
		fail "a wrong expected QPN was accepted"
	fi
	grep -q 'infiniband.cm.req.localqpn' "$T/out" || fail "wrong blame: $(cat "$T/out")"
	# frame 1's REQ local QPN: pcap 24 + record 16 + Ethernet 14 + IPv4 20 + UDP 8 +
	# BTH 12 + DETH 8 + MAD header 24 + 32
	cp "$T/cm.pcap" "$T/bad.pcap"
	printf '\x5a' | dd of="$T/bad.pcap" bs=1 seek=158 conv=notrunc status=none
	if _compare "$T/bad.pcap" "$T/cm.expect" >"$T/out"; then
		fail "a damaged QPN on the wire was accepted"
	fi
	grep -q 'infiniband.cm.req.localqpn' "$T/out" || fail "wrong blame: $(cat "$T/out")"
}
