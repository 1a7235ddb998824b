#!/usr/bin/env python3
"""Where a 224-token prefill K block's consumer warps wait, from Nsight Compute's per-instruction
warp stall samples (SourceCounters; ncu_224_{base,v18}_sass.csv.gz, the source page as CSV).

    ncu_phases.py [DIR]    (default: this script's folder)

The K loop's two halves (one per fragment set) are cut into the same phases in both builds; the
address ranges are those of each build's SASS (cuobjdump of the carried mixed_input_bench), and
the instruction at each range's start is printed so that the cut can be checked against the CSV.
Prints each phase's share of the loop's samples, its samples, and its leading stall reasons.
"""
import collections
import csv
import gzip
import os
import sys

# (phase, [(start, end) of fragment set 0, of set 1]) as byte offsets into the kernel's code.
PHASES = {
    "base": [
        ("loop head to the first LDS (stage address, full-barrier wait)", [(0x4900, 0x4B20), (0x55D0, 0x57B0)]),
        ("the 16 LDS of W and the group-scale address", [(0x4B20, 0x4CD0), (0x57B0, 0x59C0)]),
        ("the 16 flips (waiting for the LDS)", [(0x4CD0, 0x4E30), (0x59C0, 0x5AB0)]),
        ("the conversion (PRMT, FADD, pack)", [(0x4E30, 0x5340), (0x5AB0, 0x5FC0)]),
        ("wgmma fence and the 4 HGMMA", [(0x5340, 0x55D0), (0x5FC0, 0x6250)]),
        ("wait for the previous block's wgmma, release", [(0x6250, 0x6340)]),
    ],
    "v18": [
        ("loop head to the first LDS (stage address, full-barrier wait)", [(0x4900, 0x4B20), (0x5920, 0x5B00)]),
        ("the 16 LDS of W and the group-scale address", [(0x4B20, 0x4D00), (0x5B00, 0x5CE0)]),
        ("the selector and the conversion (PRMT, 2 LOP3, HADD2; waiting for the LDS)", [(0x4D00, 0x5150), (0x5CE0, 0x6130)]),
        ("uint8's path (not executed for int8)", [(0x5150, 0x5680), (0x6130, 0x6660)]),
        ("wgmma fence and the 4 HGMMA", [(0x5680, 0x5920), (0x6660, 0x68F0)]),
        ("wait for the previous block's wgmma, release", [(0x68F0, 0x69E0)]),
    ],
}


def load(path):
    rows = list(csv.reader(gzip.open(path, "rt")))
    header, data = rows[1], [r for r in rows[2:] if len(r) == len(rows[1])]
    col = {h: i for i, h in enumerate(header)}
    reasons = [h for h in header if h.startswith("stall_") and "(Not Issued)" not in h]
    origin = int(data[0][col["Address"]], 16)
    out = {}
    for r in data:
        stalls = collections.Counter({h[6:]: int(r[col[h]] or 0) for h in reasons})
        out[int(r[col["Address"]], 16) - origin] = (r[col["Source"]].strip(), int(r[col["Warp Stall Sampling (All Samples)"]] or 0), stalls)
    return out


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    for build, phases in PHASES.items():
        code = load(os.path.join(folder, f"ncu_224_{build}_sass.csv.gz"))
        kernel = sum(s for _, s, _ in code.values())
        loop = sum(s for a, (_, s, _) in code.items() if 0x4900 <= a < phases[-1][1][-1][1])
        print(f"{build}: {kernel} samples in the kernel, {loop} in the K loop ({100 * loop / kernel:.1f}%)")
        for name, ranges in phases:
            samples, stalls = 0, collections.Counter()
            for lo, hi in ranges:
                for a, (_, s, st) in code.items():
                    if lo <= a < hi:
                        samples += s
                        stalls.update(st)
            lead = ", ".join(f"{k} {100 * v / samples:.0f}%" for k, v in stalls.most_common(4) if v) if samples else ""
            starts = " / ".join(code[lo][0].split(",")[0] for lo, _ in ranges)
            print(f"  {100 * samples / loop:5.1f}% {samples:5d}  {name}  [{lead}]  (starts: {starts})")


if __name__ == "__main__":
    main()
