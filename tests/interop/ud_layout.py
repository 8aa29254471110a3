#!/usr/bin/python3
"""Compare blue's UD frames with rxe's in one capture of the same tools run both ways.

Usage: ud_layout.py [--mutate] PCAP BLUE_IP RXE_IP
The capture holds the UD frames (BTH opcode 0x60-0x7f) of the rxe interop matrix, where
every UD tool ran once with blue sending and once with rxe sending, with the same
arguments. So each header field that does not name an endpoint must take the same set of
values in blue's frames as in rxe's: the opcodes, BTH's SE, M, pad count, transport
version, P_Key, the reserved bits beside FECN/BECN and the A bit, the DETH Q_Key and its reserved byte, the IP version, TOS,
TTL and DF bit, and the frame lengths. Fields that name an endpoint are checked by rule:
the UDP source port is in 0xC000-0xFFFF (RoCEv2's flow-entropy range, where rxe puts it)
and constant per source QP (DETH's source QPN). Prints one "field NAME blue {...} rxe {...} same|DIFFERENT"
line per field and the rule checks, and exits 0 only when every one holds and both sides
sent frames. The ICRC is icrc_check.py's job (run on the same file).

--mutate checks the checker: it reads blue's frames with the Q_Key's low bit flipped and
the TTL one lower, and exits 0 only when both come out DIFFERENT.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from icrc_check import roce_packets  # noqa: E402

UD_OPS = range(0x60, 0x80)


def fields(pkt, ihl):
	"""the endpoint-free fields of one UD packet (IP header to ICRC), and the rule inputs"""
	udp = pkt[ihl:ihl + 8]
	bth = pkt[ihl + 8:ihl + 20]
	deth = pkt[ihl + 20:ihl + 28]
	f = {
		"ip.ver_ihl": pkt[0],
		"ip.tos": pkt[1],
		"ip.ttl": pkt[8],
		"ip.df": (pkt[6] >> 6) & 1,
		"frame.ip_len": len(pkt),
		"bth.opcode": bth[0],
		"bth.se": bth[1] >> 7,
		"bth.m": (bth[1] >> 6) & 1,
		"bth.padcnt": (bth[1] >> 4) & 3,
		"bth.tver": bth[1] & 0xf,
		"bth.pkey": struct.unpack("!H", bth[2:4])[0],
		"bth.resv6": bth[4] & 0x3f,	# below FECN and BECN
		"bth.a": bth[8] >> 7,
		"deth.qkey": struct.unpack("!I", deth[0:4])[0],
		"deth.resv": deth[4],
	}
	rule = {
		"sport": struct.unpack("!H", udp[0:2])[0],
		"srcqp": struct.unpack("!I", deth[4:8])[0] & 0xffffff,
	}
	return f, rule


def main():
	mutate = len(sys.argv) == 5 and sys.argv[1] == "--mutate"
	if len(sys.argv) != 4 + mutate:
		raise SystemExit(__doc__)
	path, blue, rxe = sys.argv[1 + mutate:]
	want = {blue: "blue", rxe: "rxe"}
	seen = {"blue": {}, "rxe": {}}
	sport = {"blue": {}, "rxe": {}}
	count = {"blue": 0, "rxe": 0}
	bad = 0
	for pkt, ihl in roce_packets(path):
		src = ".".join(str(b) for b in pkt[12:16])
		if src not in want or pkt[ihl + 8] not in UD_OPS:
			continue
		who = want[src]
		count[who] += 1
		f, r = fields(pkt, ihl)
		if mutate and who == "blue":
			f["deth.qkey"] ^= 1
			f["ip.ttl"] -= 1
		for k, v in f.items():
			seen[who].setdefault(k, set()).add(v)
		sport[who].setdefault(r["srcqp"], set()).add(r["sport"])
		if r["sport"] < 0xc000:
			bad += 1
			print("%s: UDP source port 0x%04x is below 0xC000" % (who, r["sport"]))
	print("frames blue %d rxe %d" % (count["blue"], count["rxe"]))
	if not count["blue"] or not count["rxe"]:
		print("one side sent no UD frame: nothing to compare")
		sys.exit(1)
	diff = set()
	for k in seen["rxe"]:
		b, x = seen["blue"].get(k, set()), seen["rxe"][k]
		same = b == x
		if not same:
			diff.add(k)
		bad += not same
		fmt = (lambda s: "{" + ",".join("0x%x" % v for v in sorted(s)) + "}")
		print("field %s blue %s rxe %s %s" % (k, fmt(b), fmt(x), "same" if same else "DIFFERENT"))
	for who in ("blue", "rxe"):
		multi = {qp: p for qp, p in sport[who].items() if len(p) > 1}
		print("rule %s udp.sport constant per source QP (%d QPs): %s"
		      % (who, len(sport[who]), "yes" if not multi else "NO %r" % multi))
		bad += bool(multi)
	if mutate:
		caught = {"deth.qkey", "ip.ttl"} <= diff
		print("ud_layout --mutate: %s" % ("both changes caught" if caught else "MISSED"))
		sys.exit(0 if caught else 1)
	print("ud_layout: %s" % ("blue's UD frames are laid out as rxe's" if not bad
				 else "%d difference(s)" % bad))
	sys.exit(1 if bad else 0)


if __name__ == "__main__":
	main()
