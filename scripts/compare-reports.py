#!/usr/bin/env python3
"""Compare two files of verifier reports, one per line, as written by
`cargo bench -p schedra-verify --bench pairs -- DIR` (`NNNNN {json}`; a
line without the number prefix is numbered by its position).

Usage: scripts/compare-reports.py OLD.jsonl NEW.jsonl

Checks (exit 1 if either fails):
  1. both files hold the same reports, each with the same verdict;
  2. every report with violations has the same FIRST violation: same kind,
     block and bundle, and the same rule shape of its message (the fuzzer's
     finding signature is the first violation's kind and rule shape).
Then lists, for information, every report whose set of violations changed
(compared by kind, block, bundle and rule shape) and counts the reports that
differ at all (byte-wise), in their messages with digits stripped, and in
their obligation counts.

The rule shape follows `schedra_fuzz::oracle::rule_shape`, slightly
stricter: the message before "e.g.", without anything in brackets or
parentheses, keeping only words of lowercase letters and '-' (opcode names
outside brackets are kept here, the fuzzer drops them). So term and symbol
numbers, sample values, registers, cycles and the order of commutative
arguments do not count; the rule, kind and place do.
"""

import json
import re
import sys


def load(path):
    """Reports by id (the line's number prefix, else its position)."""
    out = {}
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f):
            line = line.rstrip("\n")
            if not line:
                continue
            m = re.match(r"^(\S+) (\{.*)$", line)
            key, text = (m.group(1), m.group(2)) if m else (f"{i:05}", line)
            out[key] = (line, json.loads(text))
    return out


def rule_shape(message):
    head = message.split("e.g.")[0]
    depth, flat = 0, []
    for c in head:
        if c in "([":
            depth += 1
        elif c in ")]":
            depth = max(depth - 1, 0)
        elif depth == 0:
            flat.append(c)
    words = [w.strip(",;:.") for w in "".join(flat).split()]
    words = [w for w in words if w and all(c.islower() or c == "-" for c in w) and w.isascii()]
    return " ".join(words[:16])


def sig(v):
    """A violation's signature: kind, block, bundle, rule shape."""
    return (v.get("kind"), v.get("block"), v.get("bundle"), rule_shape(v.get("message", "")))


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    old, new = load(argv[1]), load(argv[2])
    failures = []
    if old.keys() != new.keys():
        failures.append(f"report ids differ: only old {sorted(old.keys() - new.keys())[:10]}, only new {sorted(new.keys() - old.keys())[:10]}")
    keys = sorted(old.keys() & new.keys())
    changed_bytes = changed_sets = changed_msgs = changed_obl = with_violations = 0
    for k in keys:
        (lo, a), (ln, b) = old[k], new[k]
        if lo != ln:
            changed_bytes += 1
        if a.get("verdict") != b.get("verdict"):
            failures.append(f"{k}: verdict {a.get('verdict')} -> {b.get('verdict')}")
        va, vb = a.get("violations", []), b.get("violations", [])
        if va or vb:
            with_violations += 1
            if not va or not vb or sig(va[0]) != sig(vb[0]):
                failures.append(f"{k}: first violation {sig(va[0]) if va else None} -> {sig(vb[0]) if vb else None}")
        strip = lambda vs: [re.sub(r"\d+", "#", v.get("message", "")) for v in vs]
        if strip(va) != strip(vb):
            changed_msgs += 1
        if a.get("obligations") != b.get("obligations"):
            changed_obl += 1
            print(f"{k}: obligations {a.get('obligations')} -> {b.get('obligations')}")
        sa, sb = [sig(v) for v in va], [sig(v) for v in vb]
        if sorted(sa, key=repr) != sorted(sb, key=repr):
            changed_sets += 1
            print(f"{k}: violations changed ({len(sa)} -> {len(sb)})")
            for s in sa:
                if s not in sb:
                    print(f"    - {s}")
            for s in sb:
                if s not in sa:
                    print(f"    + {s}")
    print(f"{len(keys)} reports, {with_violations} with violations; byte-different {changed_bytes}, "
          f"messages different with digits stripped {changed_msgs}, obligations different {changed_obl}, "
          f"violation sets different {changed_sets}")
    for f in failures:
        print(f"FAIL {f}")
    print("checks 1 (verdicts) and 2 (first violations): " + ("FAIL" if failures else "ok"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
