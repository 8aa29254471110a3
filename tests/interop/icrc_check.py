#!/usr/bin/python3
"""Check the ICRC of every RoCEv2 packet in a capture, independently of blue's code.

Usage: icrc_check.py PCAP
       icrc_check.py --mutate PCAP
For each frame to UDP port 4791 (Ethernet, optional 802.1Q tag, IPv4): recompute the
ICRC with zlib's CRC-32 as IBA annex A17.8 / A17.3.3 defines it for RoCEv2 over IPv4 --
8 bytes of 0xff, then the IPv4 header with TOS, TTL and header checksum masked to ones,
the UDP header with its checksum masked to ones, the BTH with byte 4 (FECN, BECN,
resv6a) masked to ones, the rest of the packet up to the ICRC -- and compare it with the
4 bytes after the payload, which are stored little-endian. The IPv4 header checksum is
verified too (a receiver drops a packet whose checksum is wrong before it looks at the
ICRC), and a frame truncated by the capture is an error.

Prints one line per (source, destination) pair:
  pair SRC DST packets N icrc_ok N icrc_bad N ipcsum_bad N resent N opcodes OP:COUNT,...
(resent: request packets whose destination QP and PSN were seen before, i.e. resends)
and a closing "total N bad N". Exit 0 when at least one RoCEv2 packet was seen and every
one passed; 1 otherwise (the first mismatches are printed).

--mutate checks the checker on the same capture: in every RoCEv2 frame whose ICRC holds,
a bit flipped in a covered byte (the BTH opcode, the destination QP, the last byte before
the ICRC, the IP source) must break the ICRC, and a bit flipped in a masked one (TOS,
TTL, the UDP checksum, BTH byte 4) must not. Exit 0 when all of that holds for at least one
frame.
"""
import struct
import sys
import zlib

ROCE_PORT = 4791


def frames(path):
	"""Classic pcap (either byte order, us or ns); yields (caplen, origlen, bytes)."""
	with open(path, "rb") as f:
		d = f.read()
	if len(d) < 24:
		raise SystemExit("%s: too short for a pcap file" % path)
	magic = struct.unpack("<I", d[:4])[0]
	if magic in (0xA1B2C3D4, 0xA1B23C4D):
		e = "<"
	elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
		e = ">"
	else:
		raise SystemExit("%s: not a classic pcap file" % path)
	linktype = struct.unpack(e + "I", d[20:24])[0]
	if linktype != 1:
		raise SystemExit("%s: link type %d, want Ethernet (1)" % (path, linktype))
	off = 24
	while off + 16 <= len(d):
		incl, orig = struct.unpack(e + "II", d[off + 8:off + 16])
		off += 16
		yield incl, orig, d[off:off + incl]
		off += incl


def ip_csum_ok(hdr):
	s = sum(struct.unpack("!%dH" % (len(hdr) // 2), hdr))
	while s >> 16:
		s = (s & 0xffff) + (s >> 16)
	return s == 0xffff


def icrc(ip_pkt, ihl):
	"""(computed, stored) ICRC of an IPv4 RoCEv2 packet (IP header to ICRC inclusive)."""
	m = bytearray(ip_pkt[:-4])
	m[1] = 0xff				# TOS: DSCP and ECN may change in flight
	m[8] = 0xff				# TTL
	m[10:12] = b"\xff\xff"			# IPv4 header checksum
	m[ihl + 6:ihl + 8] = b"\xff\xff"	# UDP checksum
	m[ihl + 8 + 4] = 0xff			# BTH byte 4: FECN, BECN, resv6a
	return zlib.crc32(b"\xff" * 8 + bytes(m)) & 0xffffffff, struct.unpack("<I", ip_pkt[-4:])[0]


def roce_packets(path):
	"""(IP packet, IHL) of every IPv4 RoCEv2 frame captured whole."""
	for incl, orig, fr in frames(path):
		l3 = 18 if fr[12:14] == b"\x81\x00" else 14
		if fr[l3 - 2:l3] != b"\x08\x00" or incl < orig:
			continue
		ihl = (fr[l3] & 0xf) * 4
		if fr[l3 + 9] != 17 or fr[l3 + ihl + 2:l3 + ihl + 4] != b"\x12\xb7":
			continue
		tot = struct.unpack("!H", fr[l3 + 2:l3 + 4])[0]
		yield fr[l3:l3 + tot], ihl


def mutate(path):
	n = wrong = 0
	for pkt, ihl in roce_packets(path):
		want, got = icrc(pkt, ihl)
		if want != got:
			continue
		n += 1
		covered = {"opcode": ihl + 8, "destqp": ihl + 8 + 7, "last": len(pkt) - 5,
			   "ip.src": 15}
		masked = {"tos": 1, "ttl": 8, "udp.csum": ihl + 6, "bth4": ihl + 8 + 4}
		for what, off in list(covered.items()) + list(masked.items()):
			m = bytearray(pkt)
			m[off] ^= 0x10
			w, g = icrc(bytes(m), ihl)
			if (w == g) != (what in masked):
				wrong += 1
				print("mutate: flip in %s %s" % (what, "broke the ICRC"
				      if what in masked else "went unnoticed"))
	print("mutate: %d frames, %d wrong verdicts" % (n, wrong))
	sys.exit(0 if n and not wrong else 1)


def main():
	if len(sys.argv) == 3 and sys.argv[1] == "--mutate":
		mutate(sys.argv[2])
	if len(sys.argv) != 2:
		raise SystemExit(__doc__)
	pairs = {}
	bad = 0
	total = 0
	for no, (incl, orig, fr) in enumerate(frames(sys.argv[1]), 1):
		l3 = 14
		etype = fr[12:14]
		if etype == b"\x81\x00":
			l3 = 18
			etype = fr[16:18]
		if etype != b"\x08\x00" or len(fr) < l3 + 20:
			continue
		ihl = (fr[l3] & 0xf) * 4
		if fr[l3 + 9] != 17 or len(fr) < l3 + ihl + 8:
			continue
		dport = struct.unpack("!H", fr[l3 + ihl + 2:l3 + ihl + 4])[0]
		if dport != ROCE_PORT:
			continue
		total += 1
		src = ".".join(str(b) for b in fr[l3 + 12:l3 + 16])
		dst = ".".join(str(b) for b in fr[l3 + 16:l3 + 20])
		p = pairs.setdefault((src, dst), {"n": 0, "ok": 0, "bad": 0, "csum": 0, "ops": {},
							       "seen": set(), "resent": 0})
		p["n"] += 1
		tot = struct.unpack("!H", fr[l3 + 2:l3 + 4])[0]
		if incl < orig or len(fr) < l3 + tot or tot < ihl + 8 + 12 + 4:
			p["bad"] += 1
			bad += 1
			print("frame %d: truncated (captured %d of %d, IP total length %d)"
			      % (no, incl, orig, tot))
			continue
		ip_pkt = fr[l3:l3 + tot]
		op = ip_pkt[ihl + 8]
		p["ops"][op] = p["ops"].get(op, 0) + 1
		if not 0x0d <= op <= 0x12:	# a request, not a response: count resends
			key = ip_pkt[ihl + 8 + 5:ihl + 8 + 8] + ip_pkt[ihl + 8 + 9:ihl + 8 + 12]
			if key in p["seen"]:
				p["resent"] += 1
			p["seen"].add(key)
		if not ip_csum_ok(ip_pkt[:ihl]):
			p["csum"] += 1
			bad += 1
			print("frame %d: %s -> %s: bad IPv4 header checksum" % (no, src, dst))
		want, got = icrc(ip_pkt, ihl)
		if want == got:
			p["ok"] += 1
		else:
			p["bad"] += 1
			bad += 1
			if p["bad"] <= 10:
				print("frame %d: %s -> %s opcode 0x%02x: ICRC on the wire 0x%08x, "
				      "computed 0x%08x" % (no, src, dst, op, got, want))
	for (src, dst), p in sorted(pairs.items()):
		ops = ",".join("0x%02x:%d" % (o, c) for o, c in sorted(p["ops"].items()))
		print("pair %s %s packets %d icrc_ok %d icrc_bad %d ipcsum_bad %d resent %d opcodes %s"
		      % (src, dst, p["n"], p["ok"], p["bad"], p["csum"], p["resent"], ops))
	print("total %d bad %d" % (total, bad))
	sys.exit(0 if total and not bad else 1)


if __name__ == "__main__":
	main()
