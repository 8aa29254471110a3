#!/usr/bin/python3
"""Hostile MADs at a CM agent's QP1 (tests/compat/test_cm_agent.sh): RoCEv2 UD SEND Only
frames to BTH dqpn 1 (P_Key 0xffff, DETH Q_Key 0x80010000, source QP 1, as a kernel CM
sends them), each carrying a MAD that the agent or its IB CM must drop and count:

  hdr_short      16 bytes, no whole MAD header          agent rx_short
  mad_short      100 bytes of a REQ                     ibcm decode.short
  base_version   BaseVersion 2                          ibcm decode.base_version
  mgmt_class     MgmtClass 0x03 (SA), not the CM's      ibcm decode.mgmt_class
  class_version  ClassVersion 1                         ibcm decode.class_version
  unknown_attr   AttributeID 0x0099                     ibcm decode.unknown_attr
  rep_no_conn    a REP whose comm IDs name no record    ibcm no_conn
  oversized      a 512-byte datagram                    agent rx_long
  jumbo          an 8000-byte datagram (only if named; a 9000-byte link): longer than
                 QP1's receive buffers, its receive fails and QP1 goes to ERROR, which
                 the agent undoes                        agent rx_err, qp_resets
  req            an all-zero REQ (service ID 0; only if named): answered REJ 8, which
                 with SRC_IP spoofed finds no neighbour  agent ah_err, ibcm no_listener

Usage: cm_hostile.py IFACE SRC_IP DST_IP DST_MAC COUNT [KIND...]   (default: all but jumbo)
Prints "sent KIND N" per kind. Frames are built with scapy (its BTH computes the ICRC).
"""
import struct
import sys

from scapy.all import Ether, IP, UDP, Raw, sendp, conf  # noqa: E402
from scapy.contrib.roce import BTH  # noqa: E402

UD_SEND_ONLY = 0x64
GSI_QKEY = 0x80010000


def mad(base=1, mclass=0x07, cver=2, method=0x03, attr=0x0010, tid=0x1234, data=b""):
    hdr = struct.pack("!BBBBHHQHHI", base, mclass, cver, method, 0, 0, tid, attr, 0, 0)
    return (hdr + data).ljust(256, b"\0")


def rep_no_conn():
    # REP (IBA 12.6.8): local comm ID, remote comm ID, then fields the codec accepts
    # as zero; no record has these IDs
    return mad(attr=0x0013, data=struct.pack("!II", 0xdeadbeef, 0x0badcafe))


KINDS = [
    ("hdr_short", mad()[:16]),
    ("mad_short", mad()[:100]),
    ("base_version", mad(base=2)),
    ("mgmt_class", mad(mclass=0x03)),
    ("class_version", mad(cver=1)),
    ("unknown_attr", mad(attr=0x0099)),
    ("rep_no_conn", rep_no_conn()),
    ("oversized", mad() + b"\0" * 256),
]
EXTRA = {"jumbo": mad() + b"\0" * (8000 - 256),
         "req": mad(attr=0x0010, tid=0x4242)}


def frame(src_ip, dst_ip, dst_mac, psn, payload):
    deth = struct.pack("!II", GSI_QKEY, 1)
    return (Ether(dst=dst_mac) /
            IP(src=src_ip, dst=dst_ip, flags="DF", ttl=64) /
            UDP(sport=49152, dport=4791, chksum=0) /
            BTH(opcode=UD_SEND_ONLY, pkey=0xffff, dqpn=1, psn=psn) /
            Raw(deth + payload))	# BTH's icrc field (last) is computed


def main():
    iface, src, dst, dmac, count = sys.argv[1:6]
    kinds = KINDS
    if len(sys.argv) > 6:
        table = dict(KINDS, **EXTRA)
        kinds = [(k, table[k]) for k in sys.argv[6:]]
    conf.verb = 0
    psn = 1
    for name, payload in kinds:
        frames = []
        for _ in range(int(count)):
            frames.append(frame(src, dst, dmac, psn, payload))
            psn += 1
        sendp(frames, iface=iface, verbose=False)
        print("sent %s %d" % (name, len(frames)), flush=True)


if __name__ == "__main__":
    main()
