#!/usr/bin/env python3
"""The 224-token prefill kernel's K loop from Nsight Compute's per-instruction samples
(ncu_224_{base,v20}_sass.csv.gz: the source page as CSV, --clock-control none), both builds.

    ncu_loop.py [DIR]    (default: this script's folder)

The K loop is taken as the instructions a consumer warp runs once a K block: executed at least
half as often as the kernel's HGMMA instructions and placed between the first and the last of them
(less the loop head before the first HGMMA's block: its start is the first instruction so executed
after the previous block's back branch). Each is put in a phase by its opcode: the shared-memory
loads of W (LDS), the barrier wait (SYNCS), the fence and the HGMMA, and everything else in the
block (addresses, conversion, release). Prints per build: the loop's samples and share of the
kernel's, and per phase its samples, share and leading stall reasons, then the LDS instructions'
shared-memory wavefronts against the ideal (bank conflicts).
"""
import collections
import csv
import gzip
import os
import sys


def load(path):
    rows = list(csv.reader(gzip.open(path, "rt")))
    header, data = rows[1], [r for r in rows[2:] if len(r) == len(rows[1])]
    col = {h: i for i, h in enumerate(header)}
    reasons = [h for h in header if h.startswith("stall_") and "(Not Issued)" not in h]
    out = []
    for r in data:
        stalls = collections.Counter({h[6:]: int(r[col[h]] or 0) for h in reasons})
        out.append({"sass": r[col["Source"]].strip(), "samples": int(r[col["Warp Stall Sampling (All Samples)"]] or 0),
                    "executed": int(r[col["Instructions Executed"]] or 0), "stalls": stalls,
                    "wavefronts": int(r[col["L1 Wavefronts Shared"]] or 0),
                    "ideal": int(r[col["L1 Wavefronts Shared Ideal"]] or 0)})
    return out


def phase(sass):
    op = sass.split()[0] if not sass.startswith("@") else sass.split()[1]
    if op.startswith("LDS"):
        return "LDS of W"
    if op.startswith("SYNCS.PHASECHK"):
        return "full-barrier wait"
    if op.startswith(("HGMMA", "WARPGROUP.ARRIVE")):
        return "fence and HGMMA"
    if op.startswith("WARPGROUP.DEPBAR"):
        return "wait for the previous block's wgmma"
    return "other (addresses, conversion, release, loop)"


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    for build in ("base", "v20"):
        code = load(os.path.join(folder, f"ncu_224_{build}_sass.csv.gz"))
        kernel = sum(i["samples"] for i in code)
        hgmma = [n for n, i in enumerate(code) if i["sass"].startswith("HGMMA")]
        per_block = max(code[n]["executed"] for n in hgmma)
        loop = [i for i in code[hgmma[0] - 400:hgmma[-1] + 40] if i["executed"] >= per_block // 2]
        total = sum(i["samples"] for i in loop)
        print(f"{build}: {kernel} samples in the kernel, {total} in the K loop ({100 * total / kernel:.1f}%), "
              f"{len(loop)} loop instructions executed >= {per_block // 2} times")
        groups = collections.defaultdict(lambda: [0, collections.Counter(), 0])
        for i in loop:
            g = groups[phase(i["sass"])]
            g[0] += i["samples"]
            g[1] += i["stalls"]
            g[2] += 1
        for name, (samples, stalls, count) in sorted(groups.items(), key=lambda kv: -kv[1][0]):
            top = ", ".join(f"{k} {100 * v / max(samples, 1):.0f}%" for k, v in stalls.most_common(4))
            print(f"  {100 * samples / total:5.1f}% {samples:6d}  {name} ({count} instructions)  [{top}]")
        lds = [i for i in loop if phase(i["sass"]) == "LDS of W"]
        ex = sum(i["executed"] for i in lds)
        print(f"  LDS: {len(lds)} instructions, {ex} warp executions, shared wavefronts {sum(i['wavefronts'] for i in lds)}"
              f" (ideal {sum(i['ideal'] for i in lds)}), {sum(i['wavefronts'] for i in lds) / max(ex, 1):.2f} a warp load")


if __name__ == "__main__":
    main()
