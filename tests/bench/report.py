#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""make bench's report: reads the "key value" figures compare.sh collected and prints the
figures and the ratio table against the issue's targets; writes both to
OUT/results.md and OUT/results.json.

Usage: report.py FIGURES OUT
Units in the figures file: iperf3 Gbit/s; blue bandwidth bytes/s; message and frame
rates per second; latencies usec (ping-pong programs: round trip; blue_write_lat: round
trip / 2); CPU in cores. A value "n/a: reason" marks a case that could not run.

Every timed case ran several times (round-robin, BENCH_REPS): a key may come several
times. The median repetition counts, with the spread (min-max) beside it: on a shared
machine one lucky run says little, and the spread says how far to trust the figure. Its
companions (KEY.cpu_client, KEY.cpu_server, KEY.frame, KEY.msg_rate) are taken from the
same repetition.
"""
import json
import sys

ROCE_OVERHEAD = 14 + 20 + 8 + 12 + 4   # Eth + IPv4 + UDP + BTH + ICRC


LOWER_IS_BETTER = ("tcp_pp_", "raw_pp_", "write_lat_", "ir_")


def num(v, nd=3):
    if v is None:
        return "-"
    if abs(v) >= 1000:
        return "%.0f" % v
    return ("%%.%df" % nd) % v


def load(path):
    vals, na = {}, {}
    for line in open(path):
        key, _, val = line.strip().partition(" ")
        if not key:
            continue
        if val.startswith("n/a"):
            na[key] = val[len("n/a: "):] or "not measured"
            continue
        try:
            vals.setdefault(key, []).append(float(val))
        except ValueError:
            na[key] = "no figure (%r)" % val
    fig, runs = {}, {}
    for key, v in vals.items():
        if "." in key:
            continue
        # the median repetition itself (the lower middle of an even count, ranked from
        # the better end), so its companions come from one run
        low = key.startswith(LOWER_IS_BETTER)
        ranked = sorted(range(len(v)), key=lambda i: v[i] if low else -v[i])
        mid = ranked[(len(v) - 1) // 2]
        fig[key] = v[mid]
        runs[key] = v
        for ckey, cv in vals.items():
            if ckey.startswith(key + "."):
                fig[ckey] = cv[mid] if mid < len(cv) else cv[-1]
    for key, v in vals.items():     # companions without a main key
        fig.setdefault(key, v[-1])
    for key in list(na):
        if key in fig:              # one repetition failed, another ran: use that
            del na[key]
    return fig, na, runs


def main():
    fig, na, runs = load(sys.argv[1])
    out = sys.argv[2]

    def get(k):
        return fig.get(k)

    def why(k):
        return na.get(k, "not measured (its program failed: see the log)")

    def raw_goodput(size):
        """Gbit/s of RoCE payload the raw flood's frames carry (frame - headers)."""
        pps, flen = get("raw_flood_%d" % size), get("raw_flood_%d.frame" % size)
        if pps is None or flen is None:
            return None
        return pps * (flen - ROCE_OVERHEAD) * 8 / 1e9

    def gbps(k):
        v = get(k)
        return None if v is None else v * 8 / 1e9

    def half(k):
        v = get(k)
        return None if v is None else v / 2

    # (what, value, unit, key for CPU/na, how)
    rows = []

    def row(what, val, unit, key, note=""):
        cpu = ""
        if get(key + ".cpu_client") is not None:
            cpu = "%.2f / %.2f" % (get(key + ".cpu_client"), get(key + ".cpu_server"))
        rv = runs.get(key, [])
        rows.append({"what": what, "value": val, "unit": unit, "cpu": cpu,
                     "na": None if val is not None else why(key), "note": note,
                     "runs": rv})
        # the spread in the row's own unit: every row's value is its key's figure times a
        # constant (bytes/s to Gbit/s, RTT to RTT/2, ...)
        if len(rv) > 1 and val is not None and fig.get(key):
            k = val / fig[key]
            spread = "median of %d (%s-%s)" % (len(rv), num(min(rv) * k), num(max(rv) * k))
            rows[-1]["spread"] = [min(rv) * k, max(rv) * k]
            rows[-1]["note"] = spread + ("; " + note if note else "")

    row("TCP iperf3, 1 stream", get("tcp_1"), "Gbit/s", "tcp_1")
    row("TCP iperf3, 2 streams", get("tcp_2"), "Gbit/s", "tcp_2")
    row("TCP iperf3, 1 stream, link MTU 4200", get("tcp_1_mtu4200"), "Gbit/s",
        "tcp_1_mtu4200")
    row("TCP 8 B ping-pong, blocking, p50", half("tcp_pp_block"), "usec RTT/2",
        "tcp_pp_block")
    row("TCP 8 B ping-pong, busy-poll, p50", half("tcp_pp_busy"), "usec RTT/2",
        "tcp_pp_busy")
    for s in (64, 1024, 4096):
        k = "raw_flood_%d" % s
        v = get(k)
        row("AF_XDP flood, %d B frames" % s, None if v is None else v / 1e6, "Mpps", k)
        if s > 64:
            row("AF_XDP flood, %d B frames, payload goodput" % s, raw_goodput(s), "Gbit/s",
                k, "frames/s x (frame - %d B headers)" % ROCE_OVERHEAD)
    for s in (64, 1024, 4096):
        k = "raw_pp_%d" % s
        row("AF_XDP ping-pong, %d B frames, p50" % s, half(k), "usec RTT/2", k)
    row("blue_write_bw 1 MiB, path MTU 1024", gbps("write_1m_1024"), "Gbit/s",
        "write_1m_1024")
    row("blue_write_bw 1 MiB, path MTU 4096", gbps("write_1m_4096"), "Gbit/s",
        "write_1m_4096")
    row("blue_read_bw 1 MiB, path MTU 1024", gbps("read_1m_1024"), "Gbit/s", "read_1m_1024")
    v = get("write_64.msg_rate")
    row("blue_write_bw 64 B, -t 128 -l 16", None if v is None else v / 1e6, "Mmsg/s",
        "write_64")
    row("blue_write_lat 8 B, p50 (t_typical)", get("write_lat_8"), "usec RTT/2",
        "write_lat_8")

    def scale(k, one, how):
        a, b = get(k), get(one)
        return "" if a is None or b is None or b == 0 else "%.2f x %s" % (a / b, how)

    v = get("write_64_64qp.msg_rate")
    row("blue_write_bw 64 B, -t 128 -l 16, 64 QPs", None if v is None else v / 1e6,
        "Mmsg/s", "write_64_64qp", scale("write_64_64qp.msg_rate", "write_64.msg_rate",
                                         "one QP"))
    two = "one queue; two process pairs, BLUE_QUEUE 0 and 1"
    for k in ("write_64_ev", "write_64_ev_q2"):
        v = get(k + ".msg_rate")
        row("blue_write_bw 64 B, -t 128 -l 16, event mode, %s" %
            ("2 queues at once" if k.endswith("q2") else "1 queue"),
            None if v is None else v / 1e6, "Mmsg/s", k,
            scale(k + ".msg_rate", "write_64_ev.msg_rate", two) if k.endswith("q2") else "")
    for k in ("write_1m_1024_ev", "write_1m_1024_ev_q2"):
        row("blue_write_bw 1 MiB, path MTU 1024, event mode, %s" %
            ("2 queues at once" if k.endswith("q2") else "1 queue"), gbps(k), "Gbit/s", k,
            scale(k, "write_1m_1024_ev", two) if k.endswith("q2") else "")
    for side in ("client", "server"):
        k = "ir_write_4k." + side
        row("instructions per 4 KiB WRITE, %s (requester)" % side if side == "client" else
            "instructions per 4 KiB WRITE, %s (responder)" % side, get(k), "instr", k,
            "callgrind: (least total at N2 - least at N1) / (N2 - N1) WRITEs; blue_write_bw "
            "-s 4096 -t 16, path MTU 1024 (4 packets each); counted side with -e (sleeps "
            "when idle: no empty polls counted)")

    # the targets (issue 6)
    ratios = []

    def ratio(what, a, akey, b, bkey, target, ge, ref_what):
        r = {"what": what, "figure": a, "reference": b, "reference_is": ref_what,
             "target": ("≥ %.2f" if ge else "≤ %.2f") % target}
        if a is None or b is None or b == 0:
            r["ratio"] = None
            r["met"] = "n/a: " + (why(akey) if a is None else why(bkey))
        else:
            r["ratio"] = a / b
            r["met"] = "yes" if (r["ratio"] >= target if ge else r["ratio"] <= target) else "no"
        ratios.append(r)

    ratio("WRITE 1 MiB MTU 1024 goodput / raw AF_XDP 1 KiB goodput (Gbit/s)",
          gbps("write_1m_1024"), "write_1m_1024", raw_goodput(1024), "raw_flood_1024",
          0.8, True, "AF_XDP flood, 1 KiB frames, payload")
    tcp_ref, tcp_key = get("tcp_1"), "tcp_1"
    if get("tcp_1_mtu4200") is not None and (tcp_ref is None or get("tcp_1_mtu4200") > tcp_ref):
        tcp_ref, tcp_key = get("tcp_1_mtu4200"), "tcp_1_mtu4200"
    ratio("WRITE 1 MiB MTU 4096 / iperf3 1 stream (Gbit/s)", gbps("write_1m_4096"),
          "write_1m_4096", tcp_ref, tcp_key, 1.0, True,
          "iperf3 1 stream, the better of link MTU 1500 and 4200")
    ratio("64 B WRITE msg rate / raw AF_XDP 64 B pps (M/s)",
          None if get("write_64.msg_rate") is None else get("write_64.msg_rate") / 1e6,
          "write_64", None if get("raw_flood_64") is None else get("raw_flood_64") / 1e6,
          "raw_flood_64", 0.7, True, "AF_XDP flood, 64 B frames")
    ratio("8 B WRITE lat p50 / raw AF_XDP ping-pong p50 (usec, RTT/2)", get("write_lat_8"),
          "write_lat_8", half("raw_pp_64"), "raw_pp_64", 1.3, False,
          "AF_XDP ping-pong, 64 B frames")
    ratio("8 B WRITE lat p50 / TCP busy-poll p50 (usec, RTT/2)", get("write_lat_8"),
          "write_lat_8", half("tcp_pp_busy"), "tcp_pp_busy", 0.7, False,
          "TCP 8 B ping-pong, busy-poll")
    ratio("READ 1 MiB / WRITE 1 MiB (Gbit/s, path MTU 1024)", gbps("read_1m_1024"),
          "read_1m_1024", gbps("write_1m_1024"), "write_1m_1024", 0.85, True,
          "blue_write_bw 1 MiB, MTU 1024")

    md = ["# make bench: libblue against TCP and raw AF_XDP", "",
          "One veth pair between two namespaces, blue attached natively on both ends "
          "(AF_XDP copy mode). Latency rows are round trip / 2 (blue_write_lat reports it "
          "so, as perftest does; the ping-pong programs' round trips are halved here). "
          "CPU: cores used by client / server (utime+stime over wall time). Each timed case ran "
          "several times, round-robin with the others; the median run counts, its spread (min-max) in the note (every run is in "
          "results.json, \"runs\"). Machine load average (1 min) at the start and the end: "
          "%s and %s on %s cores: a busy-polling side that shows well under 1.0 core was "
          "sharing its core." % (num(get("load.start"), 2), num(get("load.end"), 2),
                                 num(get("ncpu"), 0)), "",
          "## Figures", "",
          "| case | figure | unit | CPU client / server | note |",
          "|---|---:|---|---|---|"]
    for r in rows:
        val = num(r["value"]) if r["value"] is not None else "n/a: " + r["na"]
        md.append("| %s | %s | %s | %s | %s |" % (r["what"], val, r["unit"], r["cpu"],
                                                 r["note"]))
    md += ["", "## Ratios against the targets (issue 6)", "",
           "| ratio | figure | reference | ratio | target | met |",
           "|---|---:|---:|---:|---|---|"]
    for r in ratios:
        md.append("| %s | %s | %s | %s | %s | %s |" % (
            r["what"], num(r["figure"]), num(r["reference"]),
            num(r["ratio"], 2), r["target"], r["met"]))
    text = "\n".join(md) + "\n"
    with open(out + "/results.md", "w") as f:
        f.write(text)
    with open(out + "/results.json", "w") as f:
        json.dump({"figures": fig, "runs": runs, "not_available": na, "rows": rows,
                   "ratios": ratios},
                  f, indent=2, ensure_ascii=False)
        f.write("\n")

    # stdout: the same, as aligned plain text
    print()
    print("load average %s at the start, %s at the end, %s cores; median of the repetitions"
          % (num(get("load.start"), 2), num(get("load.end"), 2), num(get("ncpu"), 0)))
    print("%-58s %12s  %-11s %-13s %s" % ("case", "figure", "unit", "CPU cli/srv", "note"))
    for r in rows:
        if r["value"] is None:
            print("%-58s %s" % (r["what"], "n/a: " + r["na"]))
        else:
            print("%-58s %12s  %-11s %-13s %s" % (r["what"], num(r["value"]), r["unit"],
                                                   r["cpu"], r["note"]))
    print()
    print("%-66s %10s %10s %7s %7s  %s" % ("ratio (target)", "figure", "reference", "ratio",
                                          "target", "met"))
    for r in ratios:
        print("%-66s %10s %10s %7s %7s  %s" % (r["what"], num(r["figure"]),
                                              num(r["reference"]), num(r["ratio"], 2),
                                              r["target"], r["met"]))
    print()
    print("written: %s/results.md, %s/results.json" % (out, out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
