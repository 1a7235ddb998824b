#!/usr/bin/env python3
"""Run C5's pre-registered decision (kernels/elementwise/NOTES.md, "Run C5") read from the bench's records.

For each launcher rule, L1 (64 x 4 x 4 for 540,673 <= n <= 1,081,344, else 256 x 4) and L2 (the same
only where n is a multiple of 1024), with C3's step against the committed 256 x 4:
  (a) at 1,048,576 the new default's Triton / ours interval lies above 1.0000;
  (b) at every size, committed default / new default has its interval's upper end >= 0.998, and at
      2^28 and 2^30 so does each shape's committed step over C3's (256 x 4 and 64 x 4 x 4);
  (c) from 1,000,003 to 67,108,864 the new default's Triton / ours interval's upper end >= 1.
Prints every cell, then the rule adopted (L1 if it passes, else L2 if it passes, else none); exits 0
when one is adopted, 1 when none is. Usage: c5_rule.py BENCH.json [BENCH.json ...]
"""
import json
import sys

COMMITTED = "b256v4u1_grid_committed"
MARGIN = 0.998


def pick(rule, n):
    in_range = 540673 <= n <= 1081344
    if rule == "L2":
        in_range = in_range and n % 1024 == 0
    return "b64v4u4_grid" if in_range else "b256v4u1_grid"


def cell(row, name, ref):
    key = f"ours_{name}_speedup_over_{ref}"
    lo, hi = row[key + "_ci95"]
    return row[key], lo, hi


def passes(rule, rows):
    ok = True
    for row in rows:
        n = row["elements"]
        new = pick(rule, n)
        checks = [("b", f"{COMMITTED} / {new}", cell(row, new, COMMITTED), lambda lo, hi: hi >= MARGIN)]
        if n >= 1 << 28:
            for shape in ("b256v4u1_grid", "b64v4u4_grid"):
                checks.append(("b", f"{shape} committed / C3's step", cell(row, shape, shape + "_committed"),
                               lambda lo, hi: hi >= MARGIN))
        if n == 1 << 20:
            checks.append(("a", f"Triton / {new}", cell(row, new, "triton"), lambda lo, hi: lo > 1.0))
        if 1000003 <= n <= 1 << 26:
            checks.append(("c", f"Triton / {new}", cell(row, new, "triton"), lambda lo, hi: hi >= 1.0))
        for part, what, (ratio, lo, hi), test in checks:
            held = test(lo, hi)
            ok = ok and held
            print(f"{rule} ({part}) n={n:>10} {what:<44} {ratio:.4f} [{lo:.4f}, {hi:.4f}] "
                  f"{'holds' if held else 'FAILS'}")
    return ok


def main():
    rows = sorted((row for path in sys.argv[1:] for row in json.load(open(path))["sizes"]),
                  key=lambda row: row["elements"])
    for row in rows:
        if "failed" in row:
            print(f"n={row['elements']}: a configuration failed its check: {row['failed']}; nothing adopted")
            return 1
    results = {rule: passes(rule, rows) for rule in ("L1", "L2")}
    adopted = next((rule for rule in ("L1", "L2") if results[rule]), None)
    print(", ".join(f"{rule} {'passes' if held else 'fails'}" for rule, held in results.items())
          + f"; adopted: {adopted or 'none'}")
    return 0 if adopted else 1


if __name__ == "__main__":
    sys.exit(main())
