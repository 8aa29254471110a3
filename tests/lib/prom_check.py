#!/usr/bin/python3
"""Strict check of the Prometheus text exposition format (0.0.4), the rules promtool
and Prometheus's parser apply and a few of promtool's lint rules:

 - each family has one HELP and one TYPE, before its samples, and its samples are
   contiguous; TYPE is counter, gauge, histogram, summary or untyped;
 - sample lines are NAME{LABEL="VALUE",...} VALUE [TIMESTAMP] with valid names, label
   values escaped (backslash, double quote, newline only), a float value;
 - a sample belongs to the family it follows (a histogram's _bucket, _sum, _count);
 - no two samples share a name and label set;
 - counters end in _total and are >= 0; other types do not end in _total;
 - histograms: every label set has buckets with an `le`, cumulative counts that never
   fall, a +Inf bucket equal to its _count, and a _sum.

Usage: prom_check.py FILE   (exit 0 and "ok: N families, M samples", else the errors)
"""
import math
import re
import sys

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r"[a-zA-Z_][a-zA-Z0-9_]*"
SAMPLE = re.compile(r"^(%s)(\{(.*)\})? (\S+)( -?[0-9]+)?$" % NAME)
LABEL_PAIR = re.compile(r'(%s)="((?:[^"\\\n]|\\[\\"n])*)"' % LABEL)
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}


def parse_labels(s, err):
    out, pos = {}, 0
    while pos < len(s):
        m = LABEL_PAIR.match(s, pos)
        if not m:
            err("bad label set {%s}" % s)
            return out
        if m.group(1) in out:
            err("label %s twice" % m.group(1))
        out[m.group(1)] = m.group(2)
        pos = m.end()
        if pos < len(s):
            if s[pos] != ",":
                err("bad label separator in {%s}" % s)
                return out
            pos += 1
    return out


def parse_value(v, err):
    if v in ("+Inf", "-Inf", "NaN"):
        return float(v.replace("Inf", "inf").replace("NaN", "nan"))
    try:
        return float(v)
    except ValueError:
        err("bad value %r" % v)
        return 0.0


def check(text):
    errors = []
    families = {}       # name -> {"type", "help", "done"}
    order = []
    cur = None
    seen = set()
    hist = {}           # (family, labels without le) -> {"buckets": [(le, v)], "sum", "count"}
    nsamples = 0
    for lineno, line in enumerate(text.split("\n"), 1):
        def err(msg, lineno=lineno, line=line):
            errors.append("line %d: %s: %s" % (lineno, msg, line))
        if line == "":
            continue
        if line.startswith("#"):
            m = re.match(r"^# (HELP|TYPE) (%s) ?(.*)$" % NAME, line)
            if not m:
                if line.startswith("# HELP") or line.startswith("# TYPE"):
                    err("bad comment")
                continue
            kind, name, rest = m.groups()
            fam = families.setdefault(name, {"type": None, "help": None, "samples": 0})
            if cur != name:
                if name in order:
                    err("family %s appears twice" % name)
                order.append(name)
                cur = name
            if kind == "HELP":
                if fam["help"] is not None:
                    err("second HELP")
                fam["help"] = rest
            else:
                if fam["type"] is not None:
                    err("second TYPE")
                if fam["samples"]:
                    err("TYPE after samples")
                if rest not in TYPES:
                    err("unknown type %r" % rest)
                fam["type"] = rest
            continue
        m = SAMPLE.match(line)
        if not m:
            err("not a sample line")
            continue
        nsamples += 1
        name, _, lbls, value = m.group(1), m.group(2), m.group(3) or "", m.group(4)
        labels = parse_labels(lbls, err)
        val = parse_value(value, err)
        fam = families.get(cur)
        base = name
        if fam and fam["type"] in ("histogram", "summary"):
            for suf in ("_bucket", "_sum", "_count"):
                if name == cur + suf:
                    base = cur
        if fam is None or base != cur:
            err("sample of %s outside its family (current: %s)" % (name, cur))
            continue
        fam["samples"] += 1
        if fam["help"] is None or fam["type"] is None:
            err("sample before HELP and TYPE of %s" % cur)
        key = (name, tuple(sorted(labels.items())))
        if key in seen:
            err("duplicate sample")
        seen.add(key)
        t = fam["type"]
        if t == "counter":
            if not name.endswith("_total"):
                err("counter name does not end in _total")
            if val < 0 or math.isnan(val):
                err("counter below zero")
        elif name.endswith("_total"):
            err("a %s ends in _total" % t)
        if t == "histogram":
            rest = tuple(sorted((k, v) for k, v in labels.items() if k != "le"))
            h = hist.setdefault((cur, rest), {"buckets": [], "sum": None, "count": None})
            if name.endswith("_bucket"):
                if "le" not in labels:
                    err("bucket without le")
                else:
                    h["buckets"].append((parse_value(labels["le"], err), val))
            elif name.endswith("_sum"):
                h["sum"] = val
            elif name.endswith("_count"):
                h["count"] = val
            else:
                err("histogram sample that is not _bucket, _sum or _count")
        elif "le" in labels:
            err("le label outside a histogram")
    for name in order:
        if families[name]["type"] is None:
            errors.append("family %s has no TYPE" % name)
        if families[name]["help"] is None:
            errors.append("family %s has no HELP" % name)
    for (name, rest), h in hist.items():
        what = "%s%s" % (name, dict(rest))
        les = [le for le, _ in h["buckets"]]
        if les != sorted(les) or len(set(les)) != len(les):
            errors.append("%s: bucket bounds not increasing" % what)
        vals = [v for _, v in h["buckets"]]
        if any(b < a for a, b in zip(vals, vals[1:])):
            errors.append("%s: bucket counts fall" % what)
        if not les or les[-1] != math.inf:
            errors.append("%s: no +Inf bucket" % what)
        elif h["count"] is None or vals[-1] != h["count"]:
            errors.append("%s: +Inf bucket %s != _count %s" % (what, vals[-1], h["count"]))
        if h["sum"] is None:
            errors.append("%s: no _sum" % what)
    return errors, len(order), nsamples


def main():
    text = open(sys.argv[1], encoding="utf-8").read()
    errors, nfam, nsamp = check(text)
    if errors:
        print("\n".join(errors[:50]))
        sys.exit(1)
    if not nsamp:
        print("no samples")
        sys.exit(1)
    print("ok: %d families, %d samples" % (nfam, nsamp))


if __name__ == "__main__":
    main()
