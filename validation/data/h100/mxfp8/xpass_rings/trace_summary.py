#!/usr/bin/env python3
"""Per-tile reading of the two E = 128 x 128 xpass traces of this call (trace_e128x128_{base,var}.json,
tilesim-measure --trace of specs/g_e128x128_s4_p_row_major_xp.json): the GEMM's span, tiles per SM, each SM's
first tile and its later tiles (median and 5th/95th percentiles), the median gap between an SM's tiles (the
epilogue and the next tile's start), and the later tiles' median over their 56 stages.
  python3 validation/data/h100/mxfp8/xpass_rings/trace_summary.py > validation/data/h100/mxfp8/xpass_rings/trace_summary.txt
"""
import json
import pathlib
import statistics

HERE = pathlib.Path(__file__).resolve().parent
STAGES_PER_TILE = 7168 // 128


def percentiles(values):
    q = statistics.quantiles(values, n=20)
    return f"{q[0] / 1e3:.1f} / {statistics.median(values) / 1e3:.1f} / {q[18] / 1e3:.1f} us"


for variant in ("base", "var"):
    tiles = json.load(open(HERE / f"trace_e128x128_{variant}.json"))["tiles"]
    by_sm = {}
    for t in tiles:
        by_sm.setdefault(t["sm"], []).append(t)
    first, later, gaps = [], [], []
    for sm_tiles in by_sm.values():
        sm_tiles.sort(key=lambda t: t["start_ns"])
        first.append(sm_tiles[0]["end_ns"] - sm_tiles[0]["start_ns"])
        for a, b in zip(sm_tiles, sm_tiles[1:]):
            later.append(b["end_ns"] - b["start_ns"])
            gaps.append(b["start_ns"] - a["end_ns"])
    counts = sorted(len(v) for v in by_sm.values())
    ends = sorted(max(t["end_ns"] for t in v) for v in by_sm.values())
    span = max(t["end_ns"] for t in tiles) - min(t["start_ns"] for t in tiles)
    print(f"{variant}: {len(tiles)} tiles on {len(by_sm)} SMs ({counts[0]}-{counts[-1]} each), span {span / 1e3:.1f} us; "
          f"SMs end at {ends[0] / 1e3:.1f} (first) / {statistics.median(ends) / 1e3:.1f} (median) / {ends[-1] / 1e3:.1f} us (last)")
    print(f"  first tile p5/p50/p95 {percentiles(first)}; later tiles {percentiles(later)}; "
          f"gap between tiles median {statistics.median(gaps):.0f} ns; "
          f"later tiles' stage {statistics.median(later) / STAGES_PER_TILE:.1f} ns")
