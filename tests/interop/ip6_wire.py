#!/usr/bin/python3
"""RoCEv2 over IPv6 in a capture, checked independently of blue's code.

Usage: ip6_wire.py PCAP
       ip6_wire.py --mutate PCAP
For each Ethernet (optionally 802.1Q) / IPv6 / UDP to port 4791 frame: the ICRC is
recomputed with zlib's CRC-32 as IBA annex A17.8 defines it for IPv6 -- 8 bytes of 0xff,
then the IPv6 header with traffic class, flow label and hop limit masked to ones, the UDP
header with its checksum masked to ones, the BTH with byte 4 masked to ones, the rest up
to the ICRC -- and compared with the 4 bytes after the payload (little-endian). The UDP
checksum must be 0 or right (rxe's UDP tunnel socket takes a zero one on IPv6; a wrong
non-zero one is dropped by the receiver's UDP layer before rxe sees it), and the IPv6
payload length and the UDP length must match the frame.

Prints one line per (source, destination) pair:
  pair SRC DST packets N icrc_ok N icrc_bad N udp_csum zero:N ok:N bad:N len_bad N
       tclass V,... flow V,... hop V,... opcodes OP:COUNT,...
and a closing "total N bad N". Exit 0 when at least one such frame was seen and every one
passed; 1 otherwise (the first mismatches are printed).

--mutate checks the checker on the same capture: in every frame whose ICRC holds, a bit
flipped in a covered byte (BTH opcode, destination QP, the last byte before the ICRC, the
IPv6 source) must break the ICRC, and one in a masked field (traffic class, flow label,
hop limit, UDP checksum, BTH byte 4) must not. Exit 0 when that holds for at least one
frame.
"""
import ipaddress
import struct
import sys
import zlib

from icrc_check import frames

ROCE_PORT = 4791
IP6 = 40


def icrc(pkt):
	"""(computed, stored) ICRC of an IPv6 RoCEv2 packet (IPv6 header to ICRC inclusive)."""
	m = bytearray(pkt[:-4])
	m[0] |= 0x0f			# traffic class, high nibble
	m[1:4] = b"\xff\xff\xff"	# traffic class, low nibble, and the flow label
	m[7] = 0xff			# hop limit
	m[IP6 + 6:IP6 + 8] = b"\xff\xff"	# UDP checksum
	m[IP6 + 8 + 4] = 0xff		# BTH byte 4: FECN, BECN, resv6a
	return zlib.crc32(b"\xff" * 8 + bytes(m)) & 0xffffffff, struct.unpack("<I", pkt[-4:])[0]


def udp6_csum(pkt):
	"""The UDP checksum the packet should carry (RFC 8200 8.1 pseudo-header)."""
	udp = bytearray(pkt[IP6:])
	udp[6:8] = b"\x00\x00"
	ph = pkt[8:40] + struct.pack("!IxxxB", len(udp), 17)
	d = ph + bytes(udp) + (b"\x00" if len(udp) % 2 else b"")
	s = sum(struct.unpack("!%dH" % (len(d) // 2), d))
	while s >> 16:
		s = (s & 0xffff) + (s >> 16)
	s = ~s & 0xffff
	return s or 0xffff


def roce6(path):
	"""(frame number, IPv6 packet or None if truncated) of every RoCEv2-over-IPv6 frame."""
	for no, (incl, orig, fr) in enumerate(frames(path), 1):
		l3 = 18 if fr[12:14] == b"\x81\x00" else 14
		if fr[l3 - 2:l3] != b"\x86\xdd" or len(fr) < l3 + IP6 + 8:
			continue
		if fr[l3 + 6] != 17 or struct.unpack("!H", fr[l3 + IP6 + 2:l3 + IP6 + 4])[0] != ROCE_PORT:
			continue
		plen = struct.unpack("!H", fr[l3 + 4:l3 + 6])[0]
		if incl < orig or len(fr) < l3 + IP6 + plen or plen < 8 + 12 + 4:
			yield no, None, fr[l3:]
			continue
		yield no, fr[l3:l3 + IP6 + plen], None


def mutate(path):
	n = wrong = 0
	for _, pkt, _ in roce6(path):
		if pkt is None or icrc(pkt)[0] != icrc(pkt)[1]:
			continue
		n += 1
		covered = {"opcode": IP6 + 8, "destqp": IP6 + 8 + 7, "last": len(pkt) - 5, "ip6.src": 23}
		masked = {"tclass.hi": 0, "tclass.lo": 1, "flow": 3, "hop": 7, "udp.csum": IP6 + 6,
			  "bth4": IP6 + 8 + 4}
		for what, off in list(covered.items()) + list(masked.items()):
			m = bytearray(pkt)
			m[off] ^= 0x01 if what == "tclass.hi" else 0x10
			w, g = icrc(bytes(m))
			if (w == g) != (what in masked):
				wrong += 1
				print("mutate: flip in %s %s" % (what, "broke the ICRC" if what in masked
								   else "went unnoticed"))
	print("mutate: %d frames, %d wrong verdicts" % (n, wrong))
	sys.exit(0 if n and not wrong else 1)


def main():
	if len(sys.argv) == 3 and sys.argv[1] == "--mutate":
		mutate(sys.argv[2])
	if len(sys.argv) != 2:
		raise SystemExit(__doc__)
	pairs = {}
	total = bad = 0
	for no, pkt, raw in roce6(sys.argv[1]):
		total += 1
		hdr = pkt if pkt is not None else raw
		src = str(ipaddress.IPv6Address(bytes(hdr[8:24])))
		dst = str(ipaddress.IPv6Address(bytes(hdr[24:40])))
		p = pairs.setdefault((src, dst), {"n": 0, "ok": 0, "bad": 0, "zero": 0, "csum_ok": 0,
						  "csum_bad": 0, "len": 0, "tc": set(), "fl": set(),
						  "hop": set(), "ops": {}})
		p["n"] += 1
		if pkt is None:
			p["bad"] += 1
			bad += 1
			print("frame %d: truncated" % no)
			continue
		ver_tc_fl = struct.unpack("!I", pkt[:4])[0]
		p["tc"].add("0x%02x" % (ver_tc_fl >> 20 & 0xff))
		p["fl"].add("0x%05x" % (ver_tc_fl & 0xfffff))
		p["hop"].add(str(pkt[7]))
		op = pkt[IP6 + 8]
		p["ops"][op] = p["ops"].get(op, 0) + 1
		if struct.unpack("!H", pkt[IP6 + 4:IP6 + 6])[0] != len(pkt) - IP6:
			p["len"] += 1
			bad += 1
			print("frame %d: %s -> %s: UDP length %d, IPv6 payload %d" % (
				no, src, dst, struct.unpack("!H", pkt[IP6 + 4:IP6 + 6])[0], len(pkt) - IP6))
		csum = struct.unpack("!H", pkt[IP6 + 6:IP6 + 8])[0]
		if csum == 0:
			p["zero"] += 1
		elif csum == udp6_csum(pkt):
			p["csum_ok"] += 1
		else:
			p["csum_bad"] += 1
			bad += 1
			if p["csum_bad"] <= 5:
				print("frame %d: %s -> %s: UDP checksum 0x%04x, want 0x%04x or 0" % (
					no, src, dst, csum, udp6_csum(pkt)))
		want, got = icrc(pkt)
		if want == got:
			p["ok"] += 1
		else:
			p["bad"] += 1
			bad += 1
			if p["bad"] <= 10:
				print("frame %d: %s -> %s opcode 0x%02x: ICRC on the wire 0x%08x, computed 0x%08x"
				      % (no, src, dst, op, got, want))
	for (src, dst), p in sorted(pairs.items()):
		print("pair %s %s packets %d icrc_ok %d icrc_bad %d udp_csum zero:%d ok:%d bad:%d "
		      "len_bad %d tclass %s flow %s hop %s opcodes %s" % (
			      src, dst, p["n"], p["ok"], p["bad"], p["zero"], p["csum_ok"], p["csum_bad"],
			      p["len"], ",".join(sorted(p["tc"])), ",".join(sorted(p["fl"])[:8]),
			      ",".join(sorted(p["hop"])),
			      ",".join("0x%02x:%d" % (o, c) for o, c in sorted(p["ops"].items()))))
	print("total %d bad %d" % (total, bad))
	sys.exit(0 if total and not bad else 1)


if __name__ == "__main__":
	main()
