#!/usr/bin/env python3
"""Compare the two post-RA modes of a target with encoded waits (kepler),
shader-db style: for every shader, compile it with `--post list` and with
`--post peephole` and read the shader-db line of `--stats`.

Usage: scripts/compare-post.py [--bin SCHEDRA] FILE...
       (default binary: target/release/schedra, else $CARGO_TARGET_DIR's)

Prints one row per shader (cycles, issued1, issued2, stall-cycles in each
mode), then for each statistic the totals, the change from the peephole
(the baseline, nouveau's PostRADualIssue) to the list scheduler, and the
shaders helped and HURT (fewer is better, except for issued2), as Mesa's
shader-db report does.
Exit 1 if a compile fails.
"""

import os
import re
import subprocess
import sys

STATS = ["cycles", "issued1", "issued2", "stall-cycles"]


def binary(args):
    if "--bin" in args:
        i = args.index("--bin")
        return args[i + 1], args[:i] + args[i + 2:]
    for b in ["target/release/schedra", os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"), "release/schedra")]:
        if os.access(b, os.X_OK):
            return b, args
    return "target/release/schedra", args


def stats(bin_, path, post):
    out = subprocess.run([bin_, "compile", path, "--post", post, "--stats", "-o", os.devnull], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{path} --post {post}: {out.stderr.strip()}")
    line = out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.stdout.strip().splitlines()[-1]
    found = {name: int(v) for v, name in re.findall(r"(\d+) ([a-z0-9-]+)", line)}
    return {s: found.get(s, 0) for s in STATS}


def main():
    bin_, files = binary(sys.argv[1:])
    if not files:
        sys.exit(__doc__)
    rows = [(f, stats(bin_, f, "peephole"), stats(bin_, f, "list")) for f in files]
    print("| shader | " + " | ".join(f"{s} peephole → list" for s in STATS) + " |")
    print("| --- |" + " --- |" * len(STATS))
    for f, p, l in rows:
        print(f"| {os.path.basename(f)} | " + " | ".join(f"{p[s]} → {l[s]}" for s in STATS) + " |")
    print()
    print("| statistic | peephole | list | change | helped | HURT |")
    print("| --- | --- | --- | --- | --- | --- |")
    for s in STATS:
        a = sum(p[s] for _, p, _ in rows)
        b = sum(l[s] for _, _, l in rows)
        pct = f"{100.0 * (b - a) / a:+.2f}%" if a else "n/a"
        better = (lambda x, y: x > y) if s == "issued2" else (lambda x, y: x < y)
        helped = sum(1 for _, p, l in rows if better(l[s], p[s]))
        hurt = sum(1 for _, p, l in rows if better(p[s], l[s]))
        print(f"| {s} | {a} | {b} | {pct} | {helped} | {hurt} |")


if __name__ == "__main__":
    main()
