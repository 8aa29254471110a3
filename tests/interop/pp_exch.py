#!/usr/bin/env python3
"""Play the client side of ibv_rc_pingpong's out-of-band exchange, without verbs.

The stock rc_pingpong (rdma-core libibverbs/examples) trades connection data over TCP
(port 18515 by default) before any RoCE packet flows:

  client -> server  "LLLL:QQQQQQ:PPPPPP:GGGG...G" + NUL   (52 bytes: %04x:%06x:%06x:%s)
  server            parses it, moves its QP to RTR (dest QPN, rq_psn = our PSN, dgid = our
                    GID at the -g index) and RTS (sq_psn = its PSN)
  server -> client  its own 52-byte string
  client -> server  "done" + NUL

LID is 0 on RoCE. The GID is 32 hex digits: the 16 GID bytes in wire order (rc_pingpong
prints each 32-bit word with htobe32). An IPv4 RoCEv2 GID is ::ffff:a.b.c.d. The server
reads each message with ONE read() and requires the full 52 bytes, so the string must
go out in one write (one segment). It replies only if the QP transitions succeeded.

Usage: pp_exch.py SERVER_IP OUR_IP [--port P] [--qpn N] [--psn N] [--timeout S]
       pp_exch.py --serve - OUR_IP [...]   (the server's side: listen, take the client's
                                          string, answer with ours, take "done")
Prints the parsed reply (the client's string with --serve) as "reply lid=... qpn=...
psn=... gid=..." and exits 0 if it is well formed; prints why and exits 1 otherwise.
OUR_IP may be an IPv6 address: the GID is then the address itself.
"""
import argparse
import ipaddress
import re
import socket
import sys
import time

MSG_LEN = len("0000:000000:000000:00000000000000000000000000000000") + 1
REPLY_RE = re.compile(rb"^([0-9a-f]{4}):([0-9a-f]{6}):([0-9a-f]{6}):([0-9a-f]{32})\0$")


def wire_gid_of_ipv4(ip):
	"""::ffff:a.b.c.d as rc_pingpong's 32 hex digits."""
	return (b"\0" * 10 + b"\xff\xff" + ipaddress.IPv4Address(ip).packed).hex()


def wire_gid_of(ip):
	"""rc_pingpong's 32 hex digits of the RoCEv2 GID of an IPv4 or IPv6 address."""
	a = ipaddress.ip_address(ip)
	return a.packed.hex() if a.version == 6 else wire_gid_of_ipv4(ip)


def gid_text(wire):
	a = ipaddress.IPv6Address(bytes.fromhex(wire))
	return f"::ffff:{a.ipv4_mapped}" if a.ipv4_mapped else str(a)


def connect(server, port, deadline):
	# the server listens only once ibv_rc_pingpong has opened rxe0: retry refusals
	while True:
		left = deadline - time.monotonic()
		if left <= 0:
			raise TimeoutError(f"no listener on {server}:{port}")
		try:
			return socket.create_connection((server, port), timeout=min(left, 2.0))
		except (ConnectionRefusedError, socket.timeout, OSError):
			time.sleep(0.2)


def recv_exact(sock, n, deadline):
	buf = b""
	while len(buf) < n:
		left = deadline - time.monotonic()
		if left <= 0:
			break
		sock.settimeout(left)
		try:
			chunk = sock.recv(n - len(buf))
		except socket.timeout:
			break
		if not chunk:
			break
		buf += chunk
	return buf


def exchange(server, port, lid, qpn, psn, wire_gid, deadline):
	"""Send our string, return the server's as a dict (None, with a reason printed,
	if it never comes or is malformed), then send "done"."""
	ours = "%04x:%06x:%06x:%s" % (lid, qpn & 0xFFFFFF, psn & 0xFFFFFF, wire_gid)
	msg = ours.encode() + b"\0"
	assert len(msg) == MSG_LEN
	try:
		s = connect(server, port, deadline)
	except TimeoutError as e:
		print(f"pp_exch: {e}")
		return None
	with s:
		s.sendall(msg)
		print(f"sent  {ours}")
		reply = recv_exact(s, MSG_LEN, deadline)
		m = REPLY_RE.match(reply)
		if not m:
			print(f"pp_exch: malformed or short reply ({len(reply)}/{MSG_LEN} bytes): {reply!r}")
			return None
		s.sendall(b"done\0")
	lid, rqpn, rpsn, gid = (g.decode() for g in m.groups())
	print(f"reply {reply[:-1].decode()}")
	print(f"reply lid={lid} qpn=0x{rqpn} psn=0x{rpsn} gid={gid_text(gid)}")
	return {"lid": int(lid, 16), "qpn": int(rqpn, 16), "psn": int(rpsn, 16),
		"wire_gid": gid, "gid": gid_text(gid)}


def serve(port, lid, qpn, psn, wire_gid, deadline):
	"""The server's side of the exchange: the client's string (as a dict, None with a
	reason printed), answered with ours."""
	ours = "%04x:%06x:%06x:%s" % (lid, qpn & 0xFFFFFF, psn & 0xFFFFFF, wire_gid)
	with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as ls:
		ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
		ls.bind(("0.0.0.0", port))
		ls.listen(1)
		ls.settimeout(max(deadline - time.monotonic(), 0.1))
		try:
			s, _ = ls.accept()
		except socket.timeout:
			print(f"pp_exch: no client on port {port}")
			return None
	with s:
		msg = recv_exact(s, MSG_LEN, deadline)
		m = REPLY_RE.match(msg)
		if not m:
			print(f"pp_exch: malformed or short client string ({len(msg)}/{MSG_LEN} bytes): {msg!r}")
			return None
		s.sendall(ours.encode() + b"\0")
		print(f"sent  {ours}")
		recv_exact(s, 5, deadline)
	lid, rqpn, rpsn, gid = (g.decode() for g in m.groups())
	print(f"reply lid={lid} qpn=0x{rqpn} psn=0x{rpsn} gid={gid_text(gid)}")
	return {"lid": int(lid, 16), "qpn": int(rqpn, 16), "psn": int(rpsn, 16),
		"wire_gid": gid, "gid": gid_text(gid)}


def main():
	ap = argparse.ArgumentParser()
	ap.add_argument("server")
	ap.add_argument("our_ip")
	ap.add_argument("--port", type=int, default=18515)
	ap.add_argument("--qpn", type=lambda s: int(s, 0), default=0x0000B1)
	ap.add_argument("--psn", type=lambda s: int(s, 0), default=0x123456)
	ap.add_argument("--timeout", type=float, default=20.0)
	ap.add_argument("--serve", action="store_true")
	a = ap.parse_args()
	deadline = time.monotonic() + a.timeout
	if a.serve:
		r = serve(a.port, 0, a.qpn, a.psn, wire_gid_of(a.our_ip), deadline)
	else:
		r = exchange(a.server, a.port, 0, a.qpn, a.psn, wire_gid_of(a.our_ip), deadline)
	return 0 if r else 1


if __name__ == "__main__":
	sys.exit(main())
