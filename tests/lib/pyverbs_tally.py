#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Tally a verbose unittest log of rdma-core's test suite and judge it.

Usage: pyverbs_tally.py LOG RULES MD

LOG    what `python3 run_tests.py ... -v` printed (stdout and stderr together)
RULES  one rule a line, "KIND<TAB>REGEX<TAB>WHY": KIND is "required" (a skip whose reason
       matches fails the run: blue must support it) or "allowed" (an accepted skip); a
       skip reason matching neither is new and fails the run, so that it is looked at
MD     where the markdown table goes (counts, then each skip reason with its count)

Prints the counts and every verdict; exits 1 when the run fails: any FAIL or ERROR, a
required or unknown skip, or a log whose lines do not add up to unittest's own summary
("Ran N tests", "FAILED (failures=..)"), which would mean outcomes went uncounted.

The verbose format (Python's unittest.TextTestResult): a test's line is
"NAME (MODULE.CLASS.NAME)", then, when the test has a docstring, its first line on the
next line; then " ... " and the outcome: "ok", "FAIL", "ERROR", "skipped 'REASON'",
"expected failure", "unexpected success". A class or module fixture that skips or fails
prints "setUpClass (MODULE.CLASS) ... ". Messages the library writes to stderr while a
test runs land between " ... " and the outcome, so an outcome may start a later line.
"""
import re
import sys
from collections import Counter

OUTCOME = re.compile(r"^(ok|FAIL|ERROR|expected failure|unexpected success|"
                     r"skipped (?P<q>['\"])(?P<reason>.*)(?P=q))$")
TEST_ID = re.compile(r"^(?P<name>\w+) \((?P<where>[\w.]+)\)")
RAN = re.compile(r"^Ran (\d+) tests? in ")
FIXTURES = ("setUpClass", "tearDownClass", "setUpModule", "tearDownModule")
SUMMARY = re.compile(r"^(OK|FAILED)( \((?P<what>[^)]*)\))?$")


def parse(lines):
    """Return (results, ran, summary): results is a list of (test, outcome, reason)."""
    results, ran, summary = [], None, None
    test, pending = None, False
    for line in lines:
        line = line.rstrip("\n")
        m = TEST_ID.match(line)
        if m and not pending:
            test = f"{m.group('where')}.{m.group('name')}" \
                if not m.group('where').endswith(m.group('name')) else m.group('where')
        rest = None
        if " ... " in line and test and not pending:
            rest = line.split(" ... ", 1)[1]
            pending = True
        elif pending:
            rest = line
        if pending and rest is not None:
            o = OUTCOME.match(rest.strip())
            if o:
                kind = o.group(1)
                if kind.startswith("skipped"):
                    results.append((test, "skip", o.group("reason")))
                else:
                    results.append((test, kind, None))
                test, pending = None, False
                continue
        m = RAN.match(line)
        if m:
            ran = int(m.group(1))
        m = SUMMARY.match(line)
        if m and ran is not None:
            summary = {"status": m.group(1)}
            for part in (m.group("what") or "").split(","):
                if "=" in part:
                    k, v = part.strip().split("=")
                    summary[k] = int(v)
    return results, ran, summary


def load_rules(path):
    rules = []
    for n, line in enumerate(open(path), 1):
        if not line.strip() or line.startswith("#"):
            continue
        kind, rx, why = line.rstrip("\n").split("\t")
        if kind not in ("required", "allowed"):
            raise SystemExit(f"{path}:{n}: rule kind {kind!r} is neither required nor allowed")
        rules.append((kind, re.compile(rx), why))
    return rules


def judge(reason, rules):
    for kind, rx, why in rules:
        if rx.search(reason):
            return kind, why
    return "unknown", "not on the allow list: look at it, then list it"


def main():
    log, rules_path, md = sys.argv[1:4]
    results, ran, summary = parse(open(log, errors="replace"))
    rules = load_rules(rules_path)
    counts = Counter(r[1] for r in results)
    bad = []
    if ran is None or summary is None:
        bad.append("no unittest summary (\"Ran N tests\", OK/FAILED): the suite did not finish")
    else:
        # fixtures (setUpClass) print a line and count in the summary, not in "Ran"
        fixtures = sum(1 for r in results if r[0].rsplit(".", 1)[-1] in FIXTURES)
        want = {"FAIL": summary.get("failures", 0), "ERROR": summary.get("errors", 0),
                "skip": summary.get("skipped", 0)}
        for k, v in want.items():
            if counts[k] != v:
                bad.append(f"the log shows {counts[k]} {k} lines, unittest's summary {v}")
        if len(results) - fixtures != ran:
            bad.append(f"{len(results) - fixtures} test outcomes in the log, unittest ran {ran}")
    for test, kind, _ in results:
        if kind in ("FAIL", "ERROR", "unexpected success"):
            bad.append(f"{kind}: {test}")
    # a verdict per skipped test (a rule may name the test), rows per reason and verdict
    rows = Counter()
    for test, kind, reason in results:
        if kind != "skip":
            continue
        verdict, why = judge(f"{test}: {reason}", rules)
        rows[(reason, verdict, why)] += 1
        if verdict != "allowed":
            bad.append(f"{verdict} skip '{reason}': {why}: {test}")
    order = sorted(rows.items(), key=lambda kv: (-kv[1], kv[0]))
    with open(md, "w") as f:
        f.write("| ran | ok | fail | error | skip |\n|---|---|---|---|---|\n")
        f.write(f"| {ran if ran is not None else '-'} | {counts['ok']} | {counts['FAIL']} | "
                f"{counts['ERROR']} | {counts['skip']} |\n\n")
        f.write("| skip reason | tests | verdict | why |\n|---|---|---|---|\n")
        for (reason, verdict, why), n in order:
            f.write(f"| {reason.replace('|', '/')} | {n} | {verdict} | {why} |\n")
    print(f"pyverbs: ran {ran}, ok {counts['ok']}, fail {counts['FAIL']}, "
          f"error {counts['ERROR']}, skip {counts['skip']}")
    for (reason, verdict, why), n in order:
        print(f"  skip {n:3d}  [{verdict}] {reason}  ({why})")
    for b in bad:
        print(f"pyverbs: {b}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
