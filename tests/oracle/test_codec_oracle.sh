# shellcheck shell=bash
# Oracles for the RoCEv2 codec (runtime/codec.c): independent code must agree with it.
#   bash tests/lib/runner.sh tests/oracle/test_codec_oracle.sh [test_name...]
# $B/tests/oracle/gen_packets writes one frame per opcode built by blue_pkt_build() plus
# a JSON description; tests/oracle/codec_oracle.py checks them against scapy's
# scapy.contrib.roce (bytes and ICRC), tshark's dissector (every decoded field), and the
# rxe captures against a zlib ICRC. Python is Debian's /usr/bin/python3 (it has scapy).

PY=/usr/bin/python3
ORACLE=tests/oracle/codec_oracle.py
GEN=$B/tests/oracle/gen_packets

_need_gen() {
	[ -x "$GEN" ] || fail "$GEN not built (make B=$B $GEN)"
}

_need_scapy() {
	timeout 60 "$PY" -c 'import scapy.contrib.roce' 2>/dev/null ||
		skip "$PY cannot import scapy.contrib.roce (apt-get install python3-scapy)"
}

_need_tshark() {
	command -v tshark >/dev/null || skip "tshark not installed (apt-get install tshark)"
}

# Generate into a fresh temp dir; sets $T.
_gen_frames() {
	T=$(mktemp -d /tmp/blue-codec-oracle.XXXXXX)
	on_exit rm -rf "$T"
	timeout 30 "$GEN" "$T/codec.pcap" "$T/codec.json"
	[ -s "$T/codec.pcap" ] && [ -s "$T/codec.json" ] || fail "gen_packets wrote nothing"
}

test_scapy_matches_codec() {
	_need_gen
	_need_scapy
	_gen_frames
	timeout 120 "$PY" "$ORACLE" scapy "$T/codec.pcap" "$T/codec.json"
}

test_tshark_dissects_codec() {
	_need_gen
	_need_tshark
	_gen_frames
	timeout 120 "$PY" "$ORACLE" tshark "$T/codec.pcap" "$T/codec.json"
}

test_icrc_matches_rxe_vectors() {
	_need_gen
	[ -d "$VECTORS" ] || skip "rxe vectors not found at $VECTORS (set BLUE_VECTORS)"
	timeout 120 "$PY" "$ORACLE" rxe-icrc "$VECTORS" "$GEN"
}

# The oracles themselves must be able to fail: damage one payload byte (scapy must see
# different bytes) and one described PSN (tshark must disagree).
test_oracles_detect_damage() {
	_need_gen
	_need_scapy
	_need_tshark
	_gen_frames
	cp "$T/codec.pcap" "$T/bad.pcap"
	# the first frame's payload: pcap header 24 + record header 16 + 14 + 20 + 8 + BTH 12
	printf '\xa5' | dd of="$T/bad.pcap" bs=1 seek=94 conv=notrunc status=none
	if timeout 120 "$PY" "$ORACLE" scapy "$T/bad.pcap" "$T/codec.json" >"$T/out" 2>&1; then
		cat "$T/out"
		fail "scapy oracle accepted a damaged payload"
	fi
	grep -q 'frame 1 ' "$T/out" || fail "scapy oracle blamed the wrong frame: $(cat "$T/out")"
	sed 's/"psn": 16777200,/"psn": 16777201,/' "$T/codec.json" >"$T/bad.json"
	cmp -s "$T/codec.json" "$T/bad.json" && fail "could not edit the description"
	if timeout 120 "$PY" "$ORACLE" tshark "$T/codec.pcap" "$T/bad.json" >"$T/out" 2>&1; then
		cat "$T/out"
		fail "tshark oracle accepted a wrong PSN"
	fi
	grep -q 'infiniband.bth.psn' "$T/out" || fail "tshark oracle: $(cat "$T/out")"
}
