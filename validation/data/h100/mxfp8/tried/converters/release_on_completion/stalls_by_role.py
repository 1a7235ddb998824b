#!/usr/bin/env python3
"""Nsight Compute's warp-stall samples of one kernel, summed per role of its warps.

A kernel whose warpgroups play different roles (here: MMA warps, converter warps) gets one set of
stall figures from ncu's WarpStateStats, averaged over every warp; the roles' own figures come from the
source page's per-instruction samples, summed over the SASS address ranges each role's loop occupies.
Input: `ncu --import R.ncu-rep --page source --csv --print-source sass` (optionally gzipped) and one
ROLE=LO-HI[,LO-HI...] argument per role (hex SASS offsets, low 20 bits of the address, HI excluded;
read the ranges off the same CSV: a role's loop is where its execution count is its warps x stages).
Output: per role, the samples, the warp instructions executed, and each stall reason's share.
Usage: stalls_by_role.py SOURCE.csv[.gz] ROLE=LO-HI[,LO-HI] ...
"""
import collections
import csv
import gzip
import sys


def parse_role(arg):
    name, _, spans = arg.partition("=")
    if not name or not spans:
        sys.exit(f"stalls_by_role.py: role argument '{arg}': expected ROLE=LO-HI[,LO-HI], e.g. mma=0x73230-0x73a00")
    ranges = []
    for span in spans.split(","):
        lo, _, hi = span.partition("-")
        try:
            ranges.append((int(lo, 16), int(hi, 16)))
        except ValueError:
            sys.exit(f"stalls_by_role.py: role '{name}': range '{span}' is not LO-HI in hex; fix it, e.g. 0x677f0-0x6f1b0")
    return name, ranges


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: stalls_by_role.py SOURCE.csv[.gz] ROLE=LO-HI[,LO-HI] ...")
    path = sys.argv[1]
    roles = [parse_role(a) for a in sys.argv[2:]]
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        reader = csv.reader(f)
        next(reader)  # the kernel's name
        header = next(reader)
        rows = list(reader)
    col = header.index
    reasons = [h for h in header if h.startswith("stall_") and "Not Issued" not in h]
    samples = {name: collections.Counter() for name, _ in roles}
    executed = collections.Counter()
    for row in rows:
        offset = int(row[0], 16) & 0xFFFFF
        for name, ranges in roles:
            if any(lo <= offset < hi for lo, hi in ranges):
                for r in reasons:
                    samples[name][r[len("stall_"):]] += int(row[col(r)])
                executed[name] += int(row[col("Instructions Executed")])
    total = sum(int(row[col("Warp Stall Sampling (All Samples)")]) for row in rows)
    print(f"{path}: {total} samples in all")
    for name, ranges in roles:
        n = sum(samples[name].values())
        spans = ",".join(f"{lo:#x}-{hi:#x}" for lo, hi in ranges)
        print(f"{name} ({spans}): {n} samples, {executed[name]} warp instructions executed")
        for reason, count in samples[name].most_common():
            if count:
                print(f"  {reason:20s} {count:5d} {100 * count / max(n, 1):5.1f}%")


if __name__ == "__main__":
    main()
