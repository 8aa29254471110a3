#!/usr/bin/env python3
"""A minimal RoCEv2 RC peer, built from raw frames, that plays ibv_rc_pingpong's client
against a stock ibv_rc_pingpong server (here: Linux rxe in the QEMU guest).

It exists to prove the interop harness end to end before blue can be the peer: the TCP
exchange (pp_exch.py), then ROUNDS rounds of
    we -> SEND_ONLY (AckReq, PSN = ours + i)     guest -> ACK for it
    guest -> SEND_ONLY (echo of our bytes)        we -> ACK for it
rc_pingpong receives into and sends from the same buffer, so the guest's SEND carries
back exactly the bytes we sent: the payload comparison is an end-to-end data check.

Frames are written by hand on an AF_PACKET socket (no scapy: it costs seconds to
import). Every frame received from the guest must carry a valid ICRC (RoCEv2 annex A17.8:
CRC-32 over 8 bytes of 1s, the IPv4 header with TOS, TTL and checksum set to 1s, the UDP
header with checksum set to 1s, and the BTH with its resv8a byte set to 1s, then the
payload; stored little-endian).

Usage: roce_pingpong.py SERVER_IP OUR_IP IFACE PEER_MAC [--rounds N] [--size N]
Exit 0 = every round completed with the bytes echoed; 1 = anything else (says why).
"""
import argparse
import os
import socket
import struct
import sys
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pp_exch  # noqa: E402

ROCE_PORT = 4791
OP_SEND_ONLY = 0x04
OP_ACK = 0x11
ETH_P_IP = 0x0800
PMTU = 1024		# rxe's active_mtu on a 1500-byte netdev
AETH_ACK_NO_CREDIT = 0x1f	# ACK syndrome with "credits invalid", as rxe sends it


def icrc(ip_pkt):
	"""ICRC of an IPv4 RoCEv2 packet given without its trailing ICRC."""
	ihl = (ip_pkt[0] & 0xf) * 4
	ip = bytearray(ip_pkt[:ihl])
	ip[1] = 0xff				# TOS (DSCP, ECN)
	ip[8] = 0xff				# TTL
	ip[10:12] = b"\xff\xff"			# header checksum
	udp = bytearray(ip_pkt[ihl:ihl + 8])
	udp[6:8] = b"\xff\xff"			# UDP checksum
	bth = bytearray(ip_pkt[ihl + 8:])
	bth[4] = 0xff				# resv8a
	crc = zlib.crc32(b"\xff" * 8 + bytes(ip) + bytes(udp) + bytes(bth))
	return struct.pack("<I", crc & 0xffffffff)


def ip_csum(hdr):
	s = sum(struct.unpack("!%dH" % (len(hdr) // 2), hdr))
	while s >> 16:
		s = (s & 0xffff) + (s >> 16)
	return (~s) & 0xffff


class Peer:
	def __init__(self, iface, our_ip, peer_ip, peer_mac):
		self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_IP))
		self.sock.bind((iface, ETH_P_IP))
		self.our_mac = self.sock.getsockname()[4]
		self.peer_mac = bytes.fromhex(peer_mac.replace(":", ""))
		self.our_ip = socket.inet_aton(our_ip)
		self.peer_ip = socket.inet_aton(peer_ip)
		self.ip_id = 1
		# a bound UDP socket keeps our kernel from answering the guest's RoCE
		# packets with ICMP port unreachable
		self.hush = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
		self.hush.bind((our_ip, ROCE_PORT))

	def send(self, opcode, dqpn, psn, ackreq, body):
		pad = (-len(body)) % 4 if opcode != OP_ACK else 0
		bth = struct.pack("!BBHBBHI", opcode, pad << 4, 0xffff, 0,
				  (dqpn >> 16) & 0xff, dqpn & 0xffff,
				  ((1 if ackreq else 0) << 31) | (psn & 0xffffff))
		roce = bth + body + b"\0" * pad
		udp_len = 8 + len(roce) + 4
		udp = struct.pack("!HHHH", 0xc000 | (dqpn & 0x3fff), ROCE_PORT, udp_len, 0)
		hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, self.ip_id, 0x4000,
				  64, socket.IPPROTO_UDP, 0, self.our_ip, self.peer_ip)
		self.ip_id = (self.ip_id + 1) & 0xffff
		hdr = hdr[:10] + struct.pack("!H", ip_csum(hdr)) + hdr[12:]
		pkt = hdr + udp + roce
		pkt += icrc(pkt)
		self.sock.send(self.peer_mac + self.our_mac + struct.pack("!H", ETH_P_IP) + pkt)

	def recv(self, deadline):
		"""Next RoCEv2 packet from the peer as a dict, or None at the deadline."""
		while True:
			left = deadline - time.monotonic()
			if left <= 0:
				return None
			self.sock.settimeout(left)
			try:
				frame = self.sock.recv(4096)
			except socket.timeout:
				return None
			pkt = frame[14:]
			if len(pkt) < 20 or pkt[0] >> 4 != 4 or pkt[9] != socket.IPPROTO_UDP:
				continue
			if pkt[12:16] != self.peer_ip or pkt[16:20] != self.our_ip:
				continue
			ihl = (pkt[0] & 0xf) * 4
			tot = struct.unpack("!H", pkt[2:4])[0]
			pkt = pkt[:tot]
			if struct.unpack("!H", pkt[ihl + 2:ihl + 4])[0] != ROCE_PORT:
				continue
			roce = pkt[ihl + 8:]
			if len(roce) < 16:
				raise ValueError(f"runt RoCE packet ({len(roce)} bytes)")
			if icrc(pkt[:-4]) != pkt[-4:]:
				raise ValueError(f"bad ICRC from peer: {roce[:12].hex()}")
			opcode, flags = roce[0], roce[1]
			dqpn = int.from_bytes(roce[5:8], "big")
			w = struct.unpack("!I", roce[8:12])[0]
			body = roce[12:-4]
			pad = (flags >> 4) & 3
			return {"op": opcode, "dqpn": dqpn, "ackreq": w >> 31,
				"psn": w & 0xffffff, "body": body[:len(body) - pad]}


def main():
	ap = argparse.ArgumentParser()
	ap.add_argument("server")
	ap.add_argument("our_ip")
	ap.add_argument("iface")
	ap.add_argument("peer_mac")
	ap.add_argument("--port", type=int, default=18515)
	ap.add_argument("--qpn", type=lambda s: int(s, 0), default=0x0000B1)
	ap.add_argument("--psn", type=lambda s: int(s, 0), default=0x123456)
	ap.add_argument("--rounds", type=int, default=10)
	ap.add_argument("--size", type=int, default=64)
	ap.add_argument("--timeout", type=float, default=30.0)
	a = ap.parse_args()
	if not 0 < a.size <= PMTU:
		print(f"roce_pingpong: --size {a.size}: only single-packet SENDs (1..{PMTU})")
		return 1
	deadline = time.monotonic() + a.timeout
	peer = Peer(a.iface, a.our_ip, a.server, a.peer_mac)

	r = pp_exch.exchange(a.server, a.port, 0, a.qpn, a.psn,
			     pp_exch.wire_gid_of_ipv4(a.our_ip), deadline)
	if r is None:
		return 1
	gqpn, gpsn = r["qpn"], r["psn"]
	print(f"exchange: guest QPN 0x{gqpn:06x} PSN 0x{gpsn:06x} GID {r['gid']}")

	extra = 0	# retransmissions seen (the guest's timer fired before our ACK)
	for i in range(a.rounds):
		mine = bytes(((i * 37 + k) & 0xff) for k in range(a.size))
		psn = (a.psn + i) & 0xffffff
		want = (gpsn + i) & 0xffffff
		peer.send(OP_SEND_ONLY, gqpn, psn, True, mine)
		acked = echoed = False
		while not (acked and echoed):
			p = peer.recv(deadline)
			if p is None:
				print(f"round {i}: timeout (acked={acked}, echoed={echoed})")
				return 1
			if p["dqpn"] != a.qpn:
				print(f"round {i}: packet for QPN 0x{p['dqpn']:06x}, not ours")
				return 1
			if p["op"] == OP_ACK:
				syn = p["body"][0]
				if syn >> 5 != 0:
					print(f"round {i}: NAK/RNR syndrome 0x{syn:02x} at PSN 0x{p['psn']:06x}")
					return 1
				acked = acked or p["psn"] == psn
			elif p["op"] == OP_SEND_ONLY:
				if p["psn"] != want:
					extra += 1	# a retransmit of an earlier one: ACK again
				elif p["body"] != mine:
					print(f"round {i}: echo differs: sent {mine[:16].hex()}..., "
					      f"got {p['body'][:16].hex()}... ({len(p['body'])} bytes)")
					return 1
				else:
					echoed = True
				peer.send(OP_ACK, gqpn, p["psn"], False,
					  struct.pack("!I", (AETH_ACK_NO_CREDIT << 24) | ((i + 1) & 0xffffff)))
			else:
				print(f"round {i}: unexpected opcode 0x{p['op']:02x}")
				return 1
	print(f"pingpong: {a.rounds} rounds of {a.size} bytes echoed intact, "
	      f"{extra} retransmissions")
	return 0


if __name__ == "__main__":
	sys.exit(main())
