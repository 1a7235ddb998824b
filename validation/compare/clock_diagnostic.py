#!/usr/bin/env python3
"""Does the SM clock explain the H100 GEMM model's time errors? (issue 16, validation/NOTES.md)

Compares two `tilesim validate --json` score files of the same datasets, one predicted at each
configuration's own measured clock (`--clock measured`, extra.sm_clock_mhz from the counter pass)
and one at the profile's single clock (`--clock profile`, what simulate and whatif predict at),
and checks the measured clocks against the per-tile traces:

- errors at both clocks, per part: if the bias left at each configuration's own clock is as large
  as at one clock, the clock does not explain it (the simulator's cycles do);
- how the error at the measured clock goes with the clock (configurations that run cooler clock
  higher, so the two are confounded with what limits them);
- the recommended order's regret at both clocks: at the measured clocks, orders of one shape are
  predicted at clocks the GPU chose after running them, which the model cannot know;
- for each traced persistent 128x256 configuration, its median tile in SM cycles at the recorded
  clock against the wgmma floor (K steps x 1024 cycles): a recorded clock above the clock the
  tiles ran at would put tiles below the floor.

Usage: clock_diagnostic.py MEASURED_CLOCK.json PROFILE_CLOCK.json DATASET_DIR...
"""
import json
import os
import statistics
import sys
from collections import defaultdict


def load_results(dirs):
    results = {}
    for d in dirs:
        for name in os.listdir(d):
            if name.endswith(".json"):
                results[name[:-5]] = json.load(open(os.path.join(d, name)))
    return results


def shape_of(row):
    return row["id"].replace("_" + row["order"].replace(":", ""), "")


def regret(rows):
    by_shape = defaultdict(list)
    for r in rows:
        by_shape[shape_of(r)].append(r)
    out = {}
    for shape, group in by_shape.items():
        if len(group) < 2:
            continue
        best = min(r["measured_time_ms"] for r in group)
        pick = min(group, key=lambda r: r["predicted_time_ms"])
        out[shape] = (pick["measured_time_ms"] / best - 1, pick["order"])
    return out


def summary(rows):
    errors = [r["time_error"] for r in rows]
    return statistics.mean(abs(e) for e in errors), statistics.mean(errors)


def main():
    at_measured = json.load(open(sys.argv[1]))
    at_profile = json.load(open(sys.argv[2]))
    results = load_results(sys.argv[3:])
    print(f"scores: {sys.argv[1]} (clock {at_measured['clock']}) and {sys.argv[2]} (clock {at_profile['clock']})")
    for part, held in (("calibration", False), ("held back", True)):
        rows_m = [r for r in at_measured["rows"] if r["held_back"] == held]
        rows_p = [r for r in at_profile["rows"] if r["held_back"] == held]
        for label, rows in (("measured clocks", rows_m), ("profile clock  ", rows_p)):
            mape, bias = summary(rows)
            reg = regret(rows)
            worst = max(reg.items(), key=lambda kv: kv[1][0])
            print(f"{part:11s} {label} ({len(rows)} configurations): time MAPE {100 * mape:5.1f}%, bias {100 * bias:+5.1f}%, "
                  f"regret mean {100 * statistics.mean(v[0] for v in reg.values()):4.1f}%, worst {100 * worst[1][0]:4.1f}% "
                  f"({worst[0]}, picks {worst[1][1]}) over {len(reg)} shapes")

    rows = at_measured["rows"]
    clocks = [results[r["id"]]["extra"]["sm_clock_mhz"] for r in rows]
    errors = [r["time_error"] for r in rows]
    fit = statistics.linear_regression(clocks, errors)
    print(f"\nmeasured clocks {min(clocks):.0f}-{max(clocks):.0f} MHz (median {statistics.median(clocks):.0f}); "
          f"time error at the measured clock against it: correlation {statistics.correlation(clocks, errors):+.2f}, "
          f"{100 * fit.slope * 100:+.1f} points per 100 MHz")
    for lo, hi in ((0, 1550), (1550, 1650), (1650, 1750), (1750, 10000)):
        band = [e for c, e in zip(clocks, errors) if lo <= c < hi]
        if band:
            print(f"  {lo:5d}-{hi:5d} MHz: {len(band):3d} configurations, mean error {100 * statistics.mean(band):+5.1f}%")

    print("\ntraced persistent 128x256 tiles at the recorded clock against the wgmma floor (K steps x 1024 cycles):")
    for rid in sorted(results):
        r = results[rid]
        k = r["kernel"]
        if not r.get("tiles") or not k.get("persistent") or k["tile"]["n"] != 256:
            continue
        clock = r["extra"]["sm_clock_mhz"]
        floor = (k["k"] // k["tile"]["k"]) * 2 * k["tile"]["m"] * k["tile"]["n"] * k["tile"]["k"] / 4096
        durations = sorted((t["end_ns"] - t["start_ns"]) * clock / 1000 for t in r["tiles"])
        below = sum(d < floor for d in durations) / len(durations)
        print(f"  {rid:40s} {clock:6.0f} MHz: median tile {statistics.median(durations) / floor:6.3f} of the floor, "
              f"10th percentile {durations[len(durations) // 10] / floor:6.3f}, {100 * below:4.1f}% of tiles below it")


if __name__ == "__main__":
    main()
