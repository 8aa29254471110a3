#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Independent oracles for the RoCEv2 codec (runtime/codec.c).

Run by tests/oracle/test_codec_oracle.sh with /usr/bin/python3 (Debian's, which has scapy).

  scapy  PCAP JSON         build every frame described in JSON with scapy (scapy.contrib.roce
                           for BTH/AETH/CNP and its ICRC; the other extended headers are
                           declared here from IBA 9.3) and require our bytes == scapy's bytes;
                           also let scapy recompute the ICRC of our exact bytes.
  tshark PCAP JSON         dissect PCAP with tshark -T json and compare every field tshark
                           decodes with the description; no malformed/error expert info.
  rxe-icrc DIR GEN         for every frame of DIR/*.pcap: a zlib CRC-32 over the masked
                           pseudo-header must equal the wire ICRC and blue_icrc() (from
                           `GEN --icrc FILE`).

Exit status 0 when every check holds; each failure prints one line naming frame and field.
"""
import glob
import json
import os
import struct
import subprocess
import sys
import zlib

fails = 0


def fail(msg):
    global fails
    fails += 1
    if fails <= 40:
        print("MISMATCH: " + msg)


def read_pcap(path):
    """Classic pcap, either byte order; returns the list of frames."""
    with open(path, "rb") as f:
        d = f.read()
    magic = struct.unpack("<I", d[:4])[0]
    if magic in (0xA1B2C3D4, 0xA1B23C4D):
        e = "<"
    elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
        e = ">"
    else:
        raise SystemExit("%s: not a pcap file" % path)
    off, out = 24, []
    while off < len(d):
        incl = struct.unpack(e + "I", d[off + 8:off + 12])[0]
        off += 16
        out.append(d[off:off + incl])
        off += incl
    return out


# ---------------------------------------------------------------------------- scapy
def scapy_layers():
    from scapy.packet import Packet
    from scapy.fields import XLongField, XIntField, IntField, LongField, ByteField, \
        X3BytesField

    # IBA vol. 1, 9.3: extended transport headers scapy.contrib.roce does not declare
    class RETH(Packet):
        name = "RETH"
        fields_desc = [XLongField("va", 0), XIntField("rkey", 0), IntField("dmalen", 0)]

    class AtomicETH(Packet):
        name = "AtomicETH"
        fields_desc = [XLongField("va", 0), XIntField("rkey", 0),
                       LongField("swap_add", 0), LongField("compare", 0)]

    class AtomicAckETH(Packet):
        name = "AtomicAckETH"
        fields_desc = [LongField("orig", 0)]

    class ImmDt(Packet):
        name = "ImmDt"
        fields_desc = [XIntField("imm", 0)]

    class IETH(Packet):
        name = "IETH"
        fields_desc = [XIntField("rkey", 0)]

    class DETH(Packet):
        name = "DETH"
        fields_desc = [XIntField("qkey", 0), ByteField("resv", 0), X3BytesField("sqpn", 0)]

    # IBA 1.5 (annex A19): the FLUSH extended transport header, before the RETH
    class FETH(Packet):
        name = "FETH"
        fields_desc = [XIntField("bits", 0)]

    return RETH, AtomicETH, AtomicAckETH, ImmDt, IETH, DETH, FETH


# IBA table 36, written out independently of include/blue/wire.h: headers in wire order.
def iba_headers(op):
    low, tr = op & 0x1F, op & 0xE0
    if op == 0x81:
        return ["CNP"]
    if tr == 0x60:  # UD
        return {0x04: ["DETH"], 0x05: ["DETH", "ImmDt"]}[low]
    table = {
        0x00: [], 0x01: [], 0x02: [], 0x03: ["ImmDt"], 0x04: [], 0x05: ["ImmDt"],
        0x06: ["RETH"], 0x07: [], 0x08: [], 0x09: ["ImmDt"], 0x0A: ["RETH"],
        0x0B: ["RETH", "ImmDt"], 0x0C: ["RETH"], 0x0D: ["AETH"], 0x0E: [], 0x0F: ["AETH"],
        0x10: ["AETH"], 0x11: ["AETH"], 0x12: ["AETH", "AtomicAckETH"],
        0x13: ["AtomicETH"], 0x14: ["AtomicETH"], 0x16: ["IETH"], 0x17: ["IETH"],
        # IBA 1.5: FLUSH (FETH then RETH, as rxe lays it out), ATOMIC WRITE (8 bytes)
        0x1C: ["FETH", "RETH"], 0x1D: ["RETH"],
    }
    return table[low]


def scapy_frame(d, L):
    from scapy.layers.l2 import Ether, Dot1Q
    from scapy.layers.inet import IP, UDP
    from scapy.packet import Raw
    from scapy.contrib.roce import BTH, AETH, CNPPadding
    RETH, AtomicETH, AtomicAckETH, ImmDt, IETH, DETH, FETH = L

    pkt = Ether(dst=d["dst_mac"], src=d["src_mac"])
    if d["has_vlan"]:
        t = d["vlan_tci"]
        pkt = pkt / Dot1Q(prio=t >> 13, id=(t >> 12) & 1, vlan=t & 0xFFF)
    if d["ipv6"]:
        from scapy.layers.inet6 import IPv6
        pkt = pkt / IPv6(src=d["saddr6"], dst=d["daddr6"], tc=d["tos"], fl=d["flow_label"],
                         hlim=d["ttl"], nh=17)
    else:
        pkt = pkt / IP(src=d["saddr"], dst=d["daddr"], tos=d["tos"], ttl=d["ttl"],
                       id=d["ip_id"], flags="DF" if d["ip_df"] else 0, proto=17)
    pkt = pkt / UDP(sport=d["sport"], dport=4791, chksum=0)
    pkt = pkt / BTH(opcode=d["opcode"], solicited=d["se"], migreq=d["mig"],
                    padcount=d["pad"], version=d["tver"], pkey=d["pkey"],
                    fecn=d["fecn"], becn=d["becn"], dqpn=d["dqpn"],
                    ackreq=d["ackreq"], psn=d["psn"])
    for h in iba_headers(d["opcode"]):
        if h == "RETH":
            pkt = pkt / RETH(va=d["reth"][0], rkey=d["reth"][1], dmalen=d["reth"][2])
        elif h == "AETH":
            pkt = pkt / AETH(syndrome=d["aeth"][0], msn=d["aeth"][1])
        elif h == "AtomicETH":
            a = d["atmeth"]
            pkt = pkt / AtomicETH(va=a[0], rkey=a[1], swap_add=a[2], compare=a[3])
        elif h == "AtomicAckETH":
            pkt = pkt / AtomicAckETH(orig=d["atmack"])
        elif h == "ImmDt":
            pkt = pkt / ImmDt(imm=d["imm"])
        elif h == "IETH":
            pkt = pkt / IETH(rkey=d["ieth"])
        elif h == "FETH":
            pkt = pkt / FETH(bits=d["feth"])
        elif h == "DETH":
            pkt = pkt / DETH(qkey=d["deth"][0], sqpn=d["deth"][1])
        elif h == "CNP":
            pkt = pkt / CNPPadding()
    data = bytes.fromhex(d["payload"]) + b"\0" * d["pad"]
    if data:
        pkt = pkt / Raw(data)
    if d["ipv6"]:
        pkt[BTH].icrc = ipv6_icrc(pkt)
    return pkt


def ipv6_icrc(pkt):
    """scapy.contrib.roce computes no ICRC over IPv6 ("TODO support IPv6"), so do what
    it does for IPv4 with scapy's own IPv6 fields: annex A17.8 masks the traffic class,
    flow label and hop limit to ones, the UDP checksum and BTH byte 4 as for IPv4."""
    from scapy.compat import raw
    from scapy.layers.inet import UDP
    from scapy.layers.inet6 import IPv6
    from scapy.contrib.roce import BTH
    m = pkt[IPv6].copy()
    m.tc, m.fl, m.hlim = 0xFF, 0xFFFFF, 0xFF
    m[UDP].chksum = 0xFFFF
    m[BTH].fecn, m[BTH].becn, m[BTH].resv6 = 1, 1, 0x3F
    m[BTH].icrc = 0
    crc = zlib.crc32(b"\xff" * 8 + raw(m)[:-4]) & 0xFFFFFFFF
    # the wire holds it little-endian; scapy's icrc field is big-endian (its pack_icrc)
    return struct.unpack(">I", struct.pack("<I", crc))[0]


def cmd_scapy(pcap, desc):
    from scapy.compat import raw
    from scapy.layers.l2 import Ether
    from scapy.contrib.roce import BTH

    L = scapy_layers()
    frames = read_pcap(pcap)
    descs = json.load(open(desc))
    if len(frames) != len(descs):
        fail("%d frames but %d descriptions" % (len(frames), len(descs)))
    for i, (ours, d) in enumerate(zip(frames, descs)):
        tag = "frame %d (opcode 0x%02x)" % (i + 1, d["opcode"])
        theirs = raw(scapy_frame(d, L))
        if theirs[:-4] != ours[:-4]:
            at = next((k for k in range(min(len(ours), len(theirs)))
                       if ours[k] != theirs[k]), min(len(ours), len(theirs)))
            fail("%s: bytes differ from scapy's at offset %d (ours %d bytes, scapy %d)"
                 % (tag, at, len(ours), len(theirs)))
            continue
        if theirs[-4:] != ours[-4:]:
            fail("%s: ICRC ours %s, scapy %s" % (tag, ours[-4:].hex(), theirs[-4:].hex()))
        # scapy recomputes the ICRC of our exact bytes
        p = Ether(ours)
        if BTH not in p:
            fail("%s: scapy does not see a BTH" % tag)
            continue
        p[BTH].icrc = ipv6_icrc(p) if d["ipv6"] else None
        if raw(p)[-4:] != ours[-4:]:
            fail("%s: scapy's ICRC of our bytes is %s, ours %s"
                 % (tag, raw(p)[-4:].hex(), ours[-4:].hex()))
        if (p[BTH].opcode, p[BTH].dqpn, p[BTH].psn, p[BTH].padcount) != \
                (d["opcode"], d["dqpn"], d["psn"], d["pad"]):
            fail("%s: scapy dissects BTH as %s" % (tag, p[BTH].summary()))
    print("scapy: %d frames compared, %d mismatches" % (len(frames), fails))


# ---------------------------------------------------------------------------- tshark
# Upper-layer protocols tshark guesses from IB payload bytes; our payloads are arbitrary
# bytes, so their "malformed" verdicts would be about the guess, not about RoCEv2.
PAYLOAD_GUESSERS = ["rpcordma", "smc", "smb_direct", "nvme-rdma", "lnet", "iser",
                    "infiniband.eoib", "infiniband_sdp", "fcoib", "drbd"]


# IBA 1.5 opcodes Wireshark 4.0's InfiniBand dissector does not know (no FETH fields).
TSHARK_UNKNOWN = (0x1C, 0x1D)
TSHARK_VERSION = "4.0"


def tshark_json(pcap):
    known = subprocess.run(["tshark", "-G", "protocols"], capture_output=True, text=True,
                           timeout=60).stdout.split("\n")
    names = {ln.split("\t")[-1] for ln in known if ln}
    args = ["tshark", "-r", pcap, "-T", "json"]
    for p in PAYLOAD_GUESSERS:
        if p in names:
            args += ["--disable-protocol", p]
    out = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if out.returncode:
        raise SystemExit("tshark failed: " + out.stderr)
    return json.loads(out.stdout)


def flatten(obj, acc):
    """All leaf fields of a tshark -T json layer tree, as name -> [values]."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if isinstance(v, (dict, list)):
                flatten(v, acc)
            else:
                acc.setdefault(k, []).append(v)
            if k.startswith("_ws.expert"):
                acc.setdefault("_expert", []).append(json.dumps(v))
    elif isinstance(obj, list):
        for v in obj:
            flatten(v, acc)
    return acc


def num(s):
    return int(s, 0) if isinstance(s, str) and s.startswith("0x") else int(s)


def cmd_tshark(pcap, desc):
    descs = json.load(open(desc))
    frames = read_pcap(pcap)
    pkts = tshark_json(pcap)
    if len(pkts) != len(descs):
        fail("tshark shows %d frames, described %d" % (len(pkts), len(descs)))
    for i, (pk, d) in enumerate(zip(pkts, descs)):
        layers = pk["_source"]["layers"]
        f = flatten(layers, {})
        tag = "frame %d (opcode 0x%02x)" % (i + 1, d["opcode"])
        if d["opcode"] in TSHARK_UNKNOWN:
            # the scapy oracle checks these bytes; tshark has nothing to compare with
            print("tshark: %s not checked: tshark %s has no dissector for IBA 1.5's "
                  "FLUSH/ATOMIC WRITE" % (tag, TSHARK_VERSION))
            continue
        proto = f.get("frame.protocols", [""])[0]
        if "infiniband" not in proto.split(":"):
            fail("%s: tshark does not dissect it as InfiniBand (%s)" % (tag, proto))
            continue
        blob = json.dumps(layers)
        if "Malformed" in blob or "_ws.malformed" in blob or \
                any("Error" in e for e in f.get("_expert", [])):
            fail("%s: tshark reports malformed/error expert info" % tag)

        def want(field, value, idx=0):
            got = f.get(field)
            if got is None or len(got) <= idx:
                fail("%s: tshark has no %s" % (tag, field))
            elif num(got[idx]) != value:
                fail("%s: %s is %s, expected %s" % (tag, field, got[idx], value))

        want("infiniband.bth.opcode", d["opcode"])
        want("infiniband.bth.se", d["se"])
        want("infiniband.bth.m", d["mig"])
        want("infiniband.bth.padcnt", d["pad"])
        want("infiniband.bth.tver", d["tver"])
        want("infiniband.bth.p_key", d["pkey"])
        want("infiniband.bth.destqp", d["dqpn"])
        want("infiniband.bth.a", d["ackreq"])
        want("infiniband.bth.psn", d["psn"])
        # tshark names FECN/BECN only as the "reserved" byte 4 of the BTH
        bth = bytes.fromhex(f["infiniband.bth"][0].replace(":", ""))
        if bth[4] >> 6 != (d["fecn"] << 1 | d["becn"]):
            fail("%s: FECN/BECN bits 0x%02x" % (tag, bth[4]))
        if d["ipv6"]:
            want("ipv6.tclass", d["tos"])
            want("ipv6.flow", d["flow_label"])
            want("ipv6.hlim", d["ttl"])
            want("ipv6.nxt", 17)
            for k, key in (("src", "saddr6"), ("dst", "daddr6")):
                if f.get("ipv6." + k, [""])[0] != d[key]:
                    fail("%s: ipv6.%s %s, expected %s" % (tag, k, f.get("ipv6." + k),
                                                         d[key]))
        else:
            want("ip.dsfield", d["tos"])
            want("ip.ttl", d["ttl"])
            want("ip.id", d["ip_id"])
            want("ip.flags.df", d["ip_df"])
        want("udp.srcport", d["sport"])
        want("udp.dstport", 4791)
        if d["has_vlan"]:
            want("vlan.id", d["vlan_tci"] & 0xFFF)
            want("vlan.priority", d["vlan_tci"] >> 13)
        for h in iba_headers(d["opcode"]):
            if h == "RETH":
                want("infiniband.reth.va", d["reth"][0])
                want("infiniband.reth.r_key", d["reth"][1])
                want("infiniband.reth.dmalen", d["reth"][2])
            elif h == "AETH":
                want("infiniband.aeth.syndrome", d["aeth"][0])
                want("infiniband.aeth.msn", d["aeth"][1])
            elif h == "AtomicETH":
                # tshark 4.0 reuses the RETH field names for AtomicETH's VA and R_Key
                want("infiniband.reth.va", d["atmeth"][0])
                want("infiniband.reth.r_key", d["atmeth"][1])
                want("infiniband.atomiceth.swapdt", d["atmeth"][2])
                want("infiniband.atomiceth.cmpdt", d["atmeth"][3])
            elif h == "AtomicAckETH":
                want("infiniband.atomicacketh.origremdt", d["atmack"])
            elif h == "ImmDt":
                got = f.get("infiniband.immdt", ["?"])[0].replace(":", "")
                if got != "%08x" % d["imm"]:
                    fail("%s: ImmDt %s, expected %08x" % (tag, got, d["imm"]))
            elif h == "IETH":
                got = f.get("infiniband.ieth", ["?"])[0].replace(":", "")
                if num("0x" + got) != d["ieth"]:
                    fail("%s: IETH %s, expected %08x" % (tag, got, d["ieth"]))
            elif h == "DETH":
                want("infiniband.deth.q_key", d["deth"][0])
                want("infiniband.deth.srcqp", d["deth"][1])
        plen = len(d["payload"]) // 2
        if plen:
            # tshark shows the data with the pad bytes
            want("data.len", plen + d["pad"])
            got = f.get("data.data", [""])[0].replace(":", "")
            if got != d["payload"] + "00" * d["pad"]:
                fail("%s: payload bytes differ" % tag)
        elif "data.len" in f:
            fail("%s: tshark sees %s data bytes, expected none" % (tag, f["data.len"][0]))
        # tshark prints the 4 ICRC bytes as they are on the wire (it does not check them)
        icrc = f.get("infiniband.invariant.crc", ["none"])[0]
        if d["opcode"] == 0x81:
            # tshark 4.0 has no CNP: "Unknown (129)", the rest shown as vendor bytes,
            # which must be the 16 reserved zero bytes and then the ICRC
            vend = f.get("infiniband.vendor", [""])[-1].replace(":", "")
            if vend[:32] != "00" * 16:
                fail("%s: CNP reserved bytes %s" % (tag, vend[:32]))
            icrc = "0x" + vend[32:]
        if icrc != "0x" + frames[i][-4:].hex():
            fail("%s: tshark ICRC %s, frame ends %s" % (tag, icrc, frames[i][-4:].hex()))
    print("tshark: %d frames compared, %d mismatches" % (len(pkts), fails))


# ---------------------------------------------------------------------------- rxe ICRC
def zlib_icrc(frame):
    """Annex A17.3.3 by hand: IPv4 only, the header found behind any VLAN tag."""
    l3 = 18 if frame[12:14] == b"\x81\x00" else 14
    tot = struct.unpack(">H", frame[l3 + 2:l3 + 4])[0]
    m = bytearray(frame[l3:l3 + tot - 4])
    m[1] = 0xFF                 # TOS
    m[8] = 0xFF                 # TTL
    m[10:12] = b"\xff\xff"      # IP checksum
    m[26:28] = b"\xff\xff"      # UDP checksum
    m[32] = 0xFF                # BTH byte 4: FECN, BECN, reserved
    wire = struct.unpack("<I", frame[l3 + tot - 4:l3 + tot])[0]
    return zlib.crc32(b"\xff" * 8 + bytes(m)) & 0xFFFFFFFF, wire


def cmd_rxe_icrc(vdir, gen):
    files = sorted(glob.glob(os.path.join(vdir, "*.pcap")))
    if not files:
        raise SystemExit("no pcap files in " + vdir)
    n = 0
    for path in files:
        ours = subprocess.run([gen, "--icrc", path], capture_output=True, text=True,
                              timeout=60)
        if ours.returncode:
            fail("%s: %s" % (path, ours.stderr.strip()))
            continue
        lines = ours.stdout.split()
        frames = read_pcap(path)
        if len(lines) != 2 * len(frames):
            fail("%s: gen_packets printed %d values for %d frames"
                 % (path, len(lines), len(frames)))
            continue
        for i, fr in enumerate(frames):
            ref, wire = zlib_icrc(fr)
            gw, gb = int(lines[2 * i], 16), int(lines[2 * i + 1], 16)
            tag = "%s #%d" % (os.path.basename(path), i + 1)
            if ref != wire:
                fail("%s: zlib 0x%08x, wire 0x%08x" % (tag, ref, wire))
            if gw != wire:
                fail("%s: codec read the wire ICRC as 0x%08x, it is 0x%08x" % (tag, gw, wire))
            if gb != ref:
                fail("%s: blue_icrc 0x%08x, zlib 0x%08x" % (tag, gb, ref))
            n += 1
    print("rxe-icrc: %d frames in %d files, %d mismatches" % (n, len(files), fails))


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "scapy":
        cmd_scapy(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "tshark":
        cmd_tshark(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "rxe-icrc":
        cmd_rxe_icrc(sys.argv[2], sys.argv[3])
    else:
        raise SystemExit(__doc__)
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
