#!/usr/bin/python3
"""Malformed SIDR_REQs at a UD listener (tests/compat/test_rdmacm_ud.sh): RoCEv2 UD SEND
Only frames to QP1 (built as tests/compat/cm_hostile.py builds them), each a SIDR_REQ
(IBA 12.11.1) for a listened service whose IP CM header (the first 36 bytes of its
private data, annex A11) rdma_cm must refuse; the IB CM decodes them (a SIDR_REQ's
private data is opaque to it), rdma_cm answers "service ID not supported" and counts
each under sidr bad_ip_hdr:

  ip_cm_version   IP CM header version 5 (not 0)
  ip_version      IP version nibble 7 (neither 4 nor 6)

Usage: sidr_hostile.py IFACE SRC_IP DST_IP DST_MAC PORT COUNT [KIND...]
Prints "sent KIND N" per kind.
"""
import ipaddress
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cm_hostile import frame, mad  # noqa: E402
from scapy.all import conf, sendp  # noqa: E402

ATTR_SIDR_REQ = 0x0017
PS_UDP = 0x0111


def sidr_req(req_id, port, src, dst, cm_version=0, ip_version=4):
    ip_hdr = struct.pack("!BBH", cm_version, ip_version << 4, 40000)
    ip_hdr += b"\0" * 12 + ipaddress.IPv4Address(src).packed
    ip_hdr += b"\0" * 12 + ipaddress.IPv4Address(dst).packed
    body = struct.pack("!IHHQ", req_id, 0xffff, 0, (PS_UDP << 16) | port) + ip_hdr
    return mad(attr=ATTR_SIDR_REQ, tid=0x5100 + req_id, data=body)


def main():
    iface, src, dst, dmac, port, count = sys.argv[1:7]
    kinds = sys.argv[7:] or ["ip_cm_version", "ip_version"]
    conf.verb = 0
    psn, req = 1, 0x7000
    for kind in kinds:
        frames = []
        for _ in range(int(count)):
            req += 1
            if kind == "ip_cm_version":
                payload = sidr_req(req, int(port), src, dst, cm_version=5)
            elif kind == "ip_version":
                payload = sidr_req(req, int(port), src, dst, ip_version=7)
            else:
                sys.exit("unknown kind " + kind)
            frames.append(frame(src, dst, dmac, psn, payload))
            psn += 1
        sendp(frames, iface=iface, verbose=False)
        print("sent %s %d" % (kind, len(frames)), flush=True)


if __name__ == "__main__":
    main()
