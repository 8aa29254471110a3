#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""make bench BENCH=cc's report: the figures of every run tests/bench/cc.sh made, the
median repetition of each case with its min-max, the issue's targets beside them, the
chart's data, OUT/results.md and OUT/results.json.

Usage: cc_report.py LOGDIR OUT
       cc_report.py --goodput RUNDIR    (the sum of one run's goodputs, bit/s)

LOGDIR has one directory per run, CASE.ALGO.rN/, with
  meta          "key value" lines: case, algo, rep, rate_bps (bottleneck), buffer, kmin,
                kmax, pmax_pct, size (message bytes), kind (incast | qps64 | joinleave)
  flows_S.csv   per sender process S: t_us,qp,qpn,bytes (blue_write_bw
                --report-interval-us; t_us CLOCK_MONOTONIC)
  queue.csv     the switch's queue record: time_us,depth_bytes (max depth per slot)
  switch.txt    the switch's counters after the run ("key value"; reset before it)
  qps_NS.jsonl  `bluectl qp list --json` snapshots taken during the run and its linger,
                one per line, NS = sender or receiver namespace tag
  status        "ok", or why the run failed
and pacing/ the one-flow cost-of-pacing runs ("key value" figures, as compare.sh's).

Definitions (what the table calls them):
  goodput      a flow's payload bytes completed in the measuring window / its length.
               The window is the stretch every flow of the run was active, less its first
               20 % (the start: slow start and the senders' processes starting one
               after the other), from the per-flow CSVs.
  utilization  sum of goodputs / bottleneck rate (the issue's definition). A frame of
               path MTU 1024 carries 58 B of headers (Ethernet 14, IPv4 20, UDP 8, BTH
               12, ICRC 4; tbf and the switch meter these), so this is at most ~0.94 for
               4 KiB messages: "of payload max" divides by that ceiling instead.
  Jain         (sum x)^2 / (n sum x^2) over the flows' goodputs.
  queue delay  each record slot's maximum depth / rate, p50 and p99 over the slots of the
               window (slots in which no packet arrived have no record: the queue only
               drained then, so the percentiles lean high, never low).
  convergence  (joinleave) after a flow joins, or leaves: the time until every active
               flow's rate, over a sliding 2 ms window, is within 10 % of the fair share
               (capacity / active flows) and stays so for 1 ms; "not within the run"
               when it never does.
"""
import glob
import json
import math
import os
import sys

HDR = 14 + 20 + 8 + 12 + 4      # Ethernet, IPv4, UDP, BTH, ICRC per packet
RETH = 16                        # once per WRITE message
PMTU = 1024
SMOOTH_US = 2000                 # convergence: rate window
HOLD_US = 1000                   # ... held this long
FAIR_TOL = 0.10


def kv(path):
    d = {}
    if os.path.exists(path):
        for line in open(path):
            k, _, v = line.strip().partition(" ")
            if k:
                d[k] = v
    return d


def payload_frac(size):
    pkts = max(1, math.ceil(size / PMTU))
    return size / (size + pkts * HDR + RETH)


def read_flows(run):
    """{flow name: sorted [(t_us, bytes)]}"""
    flows = {}
    for f in sorted(glob.glob(os.path.join(run, "flows_*.csv"))):
        sender = os.path.basename(f)[len("flows_"):-len(".csv")]
        for line in open(f).readlines()[1:]:
            p = line.strip().split(",")
            if len(p) != 4:
                continue
            flows.setdefault("%s.q%s" % (sender, p[1]), []).append((int(p[0]), int(p[3])))
    for v in flows.values():
        v.sort()
    return flows


def read_queue(run, t0_us):
    """[(t_us CLOCK_MONOTONIC, depth)]: the record's times are from the switch's reset,
    whose CLOCK_MONOTONIC time cc.sh wrote to meta as queue_t0_us"""
    q = []
    path = os.path.join(run, "queue.csv")
    if os.path.exists(path):
        for line in open(path):
            p = line.strip().split(",")
            if len(p) == 2 and p[0].isdigit():
                q.append((int(p[0]) + t0_us, int(p[1])))
    q.sort()
    return q


def bytes_between(rows, a, b):
    """Bytes retired in (a, b]: a row's bytes belong to the interval that ends at it;
    a row straddling an edge counts in proportion."""
    tot, prev = 0.0, None
    for t, n in rows:
        if prev is not None and n:
            lo, hi = max(prev, a), min(t, b)
            if hi > lo:
                tot += n * (hi - lo) / (t - prev) if t > prev else n
        prev = t
    return tot


def percentile(v, p):
    if not v:
        return None
    v = sorted(v)
    k = (len(v) - 1) * p / 100.0
    lo = int(math.floor(k))
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def jain(x):
    if not x or sum(y * y for y in x) == 0:
        return None
    return sum(x) ** 2 / (len(x) * sum(y * y for y in x))


def qp_counters(run):
    """{ns: {qpn: {field: max over the snapshots}}}"""
    out = {}
    for f in glob.glob(os.path.join(run, "qps_*.jsonl")):
        ns = os.path.basename(f)[len("qps_"):-len(".jsonl")]
        d = out.setdefault(ns, {})
        for line in open(f):
            try:
                snap = json.loads(line)
            except ValueError:
                continue
            for q in snap.get("qps", []):
                c = d.setdefault(q["qpn"], {})
                for k, v in q.items():
                    if isinstance(v, (int, float)):
                        c[k] = max(c.get(k, v), v)
                c.setdefault("min_rate_mbps", q.get("rate_mbps", 0))
                if q.get("rate_mbps"):
                    c["min_rate_mbps"] = min(c["min_rate_mbps"] or q["rate_mbps"],
                                             q["rate_mbps"])
    return out


def rate_series(rows, t0, t1, step=1000, win=SMOOTH_US):
    """[(t, bit/s over (t - win, t])] every step us in [t0 + win, t1]"""
    out, t = [], t0 + win
    while t <= t1:
        out.append((t, bytes_between(rows, t - win, t) * 8e6 / win))
        t += step
    return out


def convergence_us(flows, active, t_event, t_end, capacity):
    """First time after t_event at which every flow in active is within FAIR_TOL of
    capacity / len(active) and stays so for HOLD_US; None when it never does."""
    fair = capacity / len(active)
    series = {f: dict(rate_series(flows[f], t_event - SMOOTH_US, t_end)) for f in active}
    times = sorted(set.intersection(*(set(s) for s in series.values())))
    held_since = None
    for t in times:
        if t < t_event:
            continue
        ok = all(abs(series[f][t] - fair) <= FAIR_TOL * fair for f in active)
        if ok:
            if held_since is None:
                held_since = t
            if t - held_since >= HOLD_US:
                return held_since - t_event
        else:
            held_since = None
    return None


def analyse(run):
    meta = kv(os.path.join(run, "meta"))
    r = {"case": meta.get("case"), "algo": meta.get("algo"), "rep": meta.get("rep"),
         "kind": meta.get("kind"), "status": open(os.path.join(run, "status")).read().strip()
         if os.path.exists(os.path.join(run, "status")) else "no status"}
    rate = float(meta.get("rate_bps", 0))
    size = int(meta.get("size", 4096))
    frac = payload_frac(size)
    flows = read_flows(run)
    queue = read_queue(run, int(meta.get("queue_t0_us", 0)))
    sw = kv(os.path.join(run, "switch.txt"))
    qc = qp_counters(run)
    r["nflows"] = len(flows)
    for k in ("dropped", "marked", "pkts"):
        if k in sw:
            r["switch_" + k] = int(sw[k])
    snd = {q: c for ns, d in qc.items() if ns.startswith("s") for q, c in d.items()}
    rcv = {q: c for ns, d in qc.items() if ns.startswith("r") for q, c in d.items()}
    r["cnp_sent"] = sum(c.get("cnp_sent", 0) for c in rcv.values())
    r["cnp_rcvd"] = sum(c.get("cnp_rcvd", 0) for c in snd.values())
    r["retx_pkts"] = sum(c.get("retx_pkts", 0) for c in snd.values())
    r["timeouts"] = sum(c.get("retransmits", 0) for c in snd.values())
    if not flows or rate <= 0:
        return r
    starts = {f: v[0][0] for f, v in flows.items()}
    ends = {f: v[-1][0] for f, v in flows.items()}
    r["t0_us"] = min(starts.values())
    if r["kind"] == "joinleave":
        return analyse_joinleave(r, flows, queue, starts, ends, rate, frac)
    a, b = max(starts.values()), min(ends.values())
    if b <= a:
        r["status"] = "the flows were never all active at once"
        return r
    a += (b - a) * 0.2
    gp = [bytes_between(v, a, b) * 8e6 / (b - a) for v in flows.values()]
    r["window_s"] = (b - a) / 1e6
    r["goodput_bps"] = sum(gp)
    r["util"] = sum(gp) / rate
    r["util_payload"] = sum(gp) / (rate * frac)
    r["jain"] = jain(gp)
    r["flow_min_bps"], r["flow_max_bps"] = min(gp), max(gp)
    qd = [d * 8e6 / rate for t, d in queue if a <= t <= b]
    r["qdelay_p50_us"] = percentile(qd, 50)
    r["qdelay_p99_us"] = percentile(qd, 99)
    r["qdelay_max_us"] = max(qd) if qd else None
    return r


def analyse_joinleave(r, flows, queue, starts, ends, rate, frac):
    """Two flows: the long one (earliest start) and the one that joins and leaves."""
    names = sorted(flows, key=lambda f: starts[f])
    if len(names) != 2:
        r["status"] = "joinleave needs 2 flows, found %d" % len(names)
        return r
    long_f, short_f = names
    cap = rate * frac
    t_join, t_leave = starts[short_f], ends[short_f]
    r["join_us"] = convergence_us(flows, names, t_join, t_leave, cap)
    r["leave_us"] = convergence_us(flows, [long_f], t_leave, ends[long_f], cap)
    both = bytes_between(flows[long_f], t_join, t_leave), \
        bytes_between(flows[short_f], t_join, t_leave)
    r["jain"] = jain(list(both))
    qd = [d * 8e6 / rate for t, d in queue if t_join <= t <= t_leave]
    r["qdelay_p99_us"] = percentile(qd, 99)
    r["chart"] = {"t0": min(starts.values()), "t1": ends[long_f],
                  "flows": {f: rate_series(flows[f], starts[f], ends[f], 1000, 5000)
                            for f in names},
                  "queue": queue}
    return r


# every figure a case reports, in table order: (key, heading, format, higher is better)
FIGS = [("util", "utilization", "%.3f", True), ("util_payload", "of payload max", "%.3f", True),
        ("jain", "Jain", "%.3f", True), ("qdelay_p50_us", "q delay p50 us", "%.0f", False),
        ("qdelay_p99_us", "q delay p99 us", "%.0f", False),
        ("switch_dropped", "drops", "%d", False), ("switch_marked", "CE marks", "%d", None),
        ("cnp_sent", "CNPs sent", "%d", None), ("cnp_rcvd", "CNPs rcvd", "%d", None),
        ("retx_pkts", "retx pkts", "%d", False), ("join_us", "join: converge us", "%.0f", False),
        ("leave_us", "leave: converge us", "%.0f", False)]


def median_run(runs, key, better):
    """The median repetition by key (lower middle from the better end), its value, the
    min and max."""
    have = [x for x in runs if x.get(key) is not None]
    if not have:
        return None, None, None
    rank = sorted(have, key=lambda x: x[key], reverse=bool(better))
    return rank[(len(rank) - 1) // 2][key], min(x[key] for x in have), \
        max(x[key] for x in have)


def fmt(f, v):
    if v is None:
        return "-"
    return f % v


def main():
    if sys.argv[1] == "--goodput":     # cc.sh's calibration: one run's goodput sum, bit/s
        r = analyse(sys.argv[2])
        print("%.0f" % r.get("goodput_bps", 0))
        return 0
    logdir, out = sys.argv[1], sys.argv[2]
    runs = [analyse(d) for d in sorted(glob.glob(os.path.join(logdir, "*.r*")))
            if os.path.isdir(d)]
    meta0 = kv(os.path.join(sorted(glob.glob(os.path.join(logdir, "*.r*")))[0], "meta")) \
        if runs else {}
    order = ["incast2", "incast4", "incast8", "qps64", "joinleave"]
    algos = ["none", "dcqcn", "window"]
    cases = sorted(set((x["case"], x["algo"]) for x in runs),
                   key=lambda k: (order.index(k[0]) if k[0] in order else 99,
                                  algos.index(k[1]) if k[1] in algos else 99, k))
    table = []
    for case, algo in cases:
        rs = [x for x in runs if x["case"] == case and x["algo"] == algo]
        ok = [x for x in rs if x["status"] == "ok"]
        row = {"case": case, "algo": algo, "runs": len(rs), "ok": len(ok),
               "failed": [x["status"] for x in rs if x["status"] != "ok"]}
        for key, _, _, better in FIGS:
            m, lo, hi = median_run(ok, key, True if better is None else better)
            row[key] = m
            row[key + "_range"] = [lo, hi]
        table.append(row)

    def get(case, algo, key):
        for row in table:
            if row["case"] == case and row["algo"] == algo:
                return row.get(key)
        return None

    rate = float(meta0.get("rate_bps", 0) or 0)
    calib = kv(os.path.join(logdir, "calibration"))
    kmax_us = float(meta0.get("kmax", 0) or 0) * 8e6 / rate if rate else None
    targets = []

    def target(what, val, ok):
        targets.append({"what": what, "value": val,
                        "met": "n/a" if val is None else ("yes" if ok else "no")})

    for algo in ("dcqcn", "window"):
        for case in [c for c, a in cases if a == algo and c.startswith("incast")]:
            u = get(case, algo, "util_payload")
            target("%s %s: utilization (of payload max) >= 0.95" % (algo, case), u,
                   u is not None and u >= 0.95)
            d = get(case, algo, "switch_dropped")
            target("%s %s: zero drops" % (algo, case), d, d == 0)
            p = get(case, algo, "qdelay_p99_us")
            target("%s %s: p99 queue delay <= 2 x Kmax delay (%s us)" %
                   (algo, case, fmt("%.0f", kmax_us and 2 * kmax_us)), p,
                   p is not None and kmax_us is not None and p <= 2 * kmax_us)
        j = get("incast8", algo, "jain")
        target("%s incast8: Jain >= 0.95" % algo, j, j is not None and j >= 0.95)
        for key in ("join_us", "leave_us"):
            c = get("joinleave", algo, key)
            target("%s joinleave: %s <= 10 ms" % (algo, key), c, c is not None and c <= 10000)
        n = get("qps64", algo, "util")
        target("%s qps64: completes" % algo, "yes" if n is not None else None, n is not None)
    for case in [c for c, a in cases if a == "window" and c.startswith("incast")]:
        uw, ud = get(case, "window", "util_payload"), get(case, "dcqcn", "util_payload")
        pw, pd = get(case, "window", "qdelay_p99_us"), get(case, "dcqcn", "qdelay_p99_us")
        target("window %s: utilization >= DCQCN's (%s)" % (case, fmt("%.3f", ud)), uw,
               None not in (uw, ud) and uw >= ud)
        target("window %s: p99 queue delay <= half DCQCN's (%s us)" % (case, fmt("%.0f", pd)),
               pw, None not in (pw, pd) and pw <= pd / 2)

    pacing = kv(os.path.join(logdir, "pacing", "figures"))
    pace_rows = []
    for k in sorted(set(k.rsplit(".", 1)[0] for k in pacing if k.endswith(".none"))):
        vn, vd = pacing.get(k + ".none"), pacing.get(k + ".default")
        try:
            n, d = [sorted(float(x) for x in v.split(","))[len(v.split(",")) // 2]
                    for v in (vn, vd)]
            pace_rows.append({"case": k, "none": n, "default": d, "ratio": d / n if n else None,
                              "none_runs": vn, "default_runs": vd})
        except (AttributeError, ValueError):
            pace_rows.append({"case": k, "none": None, "default": None, "ratio": None})

    md = ["# make bench BENCH=cc: congestion control through a bottleneck switch", ""]
    if calib.get("sustained_bps"):
        md.append("What this machine sustained through the switch without a bottleneck "
                  "(two flows, none): %s Mbit/s of goodput; the bottleneck is the issue's "
                  "1 Gbit/s, or 15 %% of that when less (tests/bench/cc.sh says why)." %
                  fmt("%.0f", float(calib["sustained_bps"]) / 1e6))
        md.append("")
    if calib.get("tune"):
        md.append("Parameters for this machine (bluectl set on the senders; tests/bench/cc.sh "
                  "says why): %s." % calib["tune"])
        md.append("")
    md.append("Bottleneck %s Mbit/s, buffer %s KB, ECN marking Kmin %s KB / Kmax %s KB / "
              "Pmax %s %% (Kmax = %s us of queue at the rate); messages %s B, path MTU "
              "1024; median of %s repetitions, min-max beside it. Definitions: "
              "tests/bench/cc_report.py." % (
                  fmt("%.0f", rate / 1e6), fmt("%.0f", float(meta0.get("buffer", 0)) / 1024),
                  fmt("%.0f", float(meta0.get("kmin", 0)) / 1024),
                  fmt("%.0f", float(meta0.get("kmax", 0)) / 1024), meta0.get("pmax_pct", "-"),
                  fmt("%.0f", kmax_us), meta0.get("size", "-"), meta0.get("reps", "-")))
    md += ["", "| case | algo | " + " | ".join(h for _, h, _, _ in FIGS) + " | runs |",
           "|---|---|" + "---:|" * len(FIGS) + "---|"]
    for row in table:
        cells = []
        for key, _, f, _ in FIGS:
            lo, hi = row[key + "_range"]
            c = fmt(f, row[key])
            if row[key] is not None and row["ok"] > 1 and lo != hi:
                c += " (%s-%s)" % (fmt(f, lo), fmt(f, hi))
            cells.append(c)
        note = "%d/%d ok" % (row["ok"], row["runs"])
        if row["failed"]:
            note += "; " + "; ".join(sorted(set(row["failed"])))
        md.append("| %s | %s | %s | %s |" % (row["case"], row["algo"], " | ".join(cells), note))
    md += ["", "## Targets (reported, never asserted)", "", "| target | value | met |",
           "|---|---:|---|"]
    for t in targets:
        v = t["value"]
        md.append("| %s | %s | %s |" % (t["what"], v if isinstance(v, str) else
                                         fmt("%.3f" if isinstance(v, float) and v < 10 else
                                             "%.0f", v), t["met"]))
    md += ["", "## The cost of pacing: one flow, no bottleneck (BLUE_CC=none against the "
           "default, same run; blue_write_bw busy-polling as compare.sh runs it; 1 MiB: "
           "bytes/s, 64 B: messages/s; median, every run beside it)", "",
           "| case | none | default | default / none | runs none | runs default |",
           "|---|---:|---:|---:|---|---|"]
    for p in pace_rows:
        md.append("| %s | %s | %s | %s | %s | %s |" % (
            p["case"], fmt("%.0f", p["none"]), fmt("%.0f", p["default"]),
            fmt("%.3f", p["ratio"]), p.get("none_runs", "-"), p.get("default_runs", "-")))
    text = "\n".join(md) + "\n"
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({"calibration": calib, "table": table, "targets": targets, "pacing": pace_rows,
                   "runs": [{k: v for k, v in x.items() if k != "chart"} for x in runs]},
                  f, indent=2)
        f.write("\n")
    write_chart_data(runs, out)
    print(text)
    return 0


def write_chart_data(runs, out):
    """For each algorithm, the joinleave run of the median join time: per-flow rate
    (Mbit/s, 5 ms window) and queue depth (KB) over time, ms from its start."""
    for algo in ("none", "dcqcn", "window"):
        jl = [x for x in runs if x["kind"] == "joinleave" and x["algo"] == algo and
              x.get("chart") and x["status"] == "ok"]
        if not jl:
            continue
        jl.sort(key=lambda x: x.get("join_us") if x.get("join_us") is not None else 1e12)
        ch = jl[(len(jl) - 1) // 2]["chart"]
        t0 = ch["t0"]
        with open(os.path.join(out, "chart_%s_flows.dat" % algo), "w") as f:
            for i, (name, s) in enumerate(sorted(ch["flows"].items())):
                f.write("# flow %s\n" % name)
                for t, bps in s:
                    f.write("%.3f %.1f\n" % ((t - t0) / 1000, bps / 1e6))
                f.write("\n\n")
        with open(os.path.join(out, "chart_%s_queue.dat" % algo), "w") as f:
            for t, d in ch["queue"]:
                if ch["t0"] <= t <= ch["t1"]:
                    f.write("%.3f %.2f\n" % ((t - t0) / 1000, d / 1024))


if __name__ == "__main__":
    sys.exit(main())
