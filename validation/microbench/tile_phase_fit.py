#!/usr/bin/env python3
"""What validation/microbench/tile_phase_probe.sh's traces say a GEMM tile and a CTA cost beyond
their K steps, in SM cycles at each run's own measured clock (extra.sm_clock_mhz).

- Per tile (the epilogue): a persistent 128x256 CTA's tile lasts from its consumers' start (after
  their tile scheduler call) to its last TMA store's issue; beyond K steps x the wgmma time (1024
  cycles each at 4096 FLOP per SM cycle, validation/data/h100/microbench/wgmma_throughput.json) and
  the accumulators' zeroing (one move each, 128 per SM cycle), that is the epilogue. Only the runs
  whose operands stay in L2 (K <= 4096: 64 MB or less) are used, so that DRAM waits do not enter.
- Per CTA: between a non-persistent CTA's last store issue and the next CTA's first tile on its SM
  lie the CTA's exit, the block scheduler's refill and the next CTA's start and tile scheduler
  call; beyond the refill and the call (the profile's own figures), that is the CTA's start and exit.

Usage: tile_phase_fit.py RESULTS_DIR [PROFILE]   (default profile: models/gpus/h100_sxm.json)
"""
import json
import os
import statistics
import sys
from collections import defaultdict


def value(section, key):
    return section[key]["value"]


def tiles_by_sm(result):
    by_sm = defaultdict(list)
    for t in result["tiles"]:
        by_sm[t["sm"]].append(t)
    for tiles in by_sm.values():
        tiles.sort(key=lambda t: t["start_ns"])
    return by_sm


def main():
    results_dir = sys.argv[1]
    profile = json.load(open(sys.argv[2] if len(sys.argv) > 2 else "models/gpus/h100_sxm.json"))
    rate = value(profile["tensor_flops_per_cycle_per_sm"], "bf16")
    issue = 32 * value(profile["sm"], "warp_schedulers")
    refill = value(profile["launch"], "cta_launch_cycles")
    grouped_m_call = profile["tile_scheduler"]["grouped_m"]["cycles_per_call"]["value"]
    epilogue_per_kib, cta_costs = [], []
    for name in sorted(os.listdir(results_dir)):
        if not name.endswith(".json") or name.endswith(".pred.json"):
            continue
        r = json.load(open(os.path.join(results_dir, name)))
        k = r["kernel"]
        clock_ghz = r["extra"]["sm_clock_mhz"] / 1000.0
        tile_m, tile_n = k["tile"]["m"], k["tile"]["n"]
        steps = k["k"] // k["tile"]["k"]
        mma = 2.0 * tile_m * tile_n * k["tile"]["k"] / rate
        by_sm = tiles_by_sm(r)
        duration = statistics.median((t["end_ns"] - t["start_ns"]) * clock_ghz for t in r["tiles"])
        gap = statistics.median((b["start_ns"] - a["end_ns"]) * clock_ghz
                                for tiles in by_sm.values() for a, b in zip(tiles, tiles[1:]))
        beyond = duration - steps * mma - tile_m * tile_n / issue
        line = f"{name[:-5]:42s} clock {r['extra']['sm_clock_mhz']:6.0f} MHz  tile {duration:8.0f} cycles, {beyond:6.0f} beyond its K steps and zeroing;  gap {gap:6.0f}"
        if k["persistent"] and tile_n == 256 and k["k"] <= 4096:
            epilogue_per_kib.append(beyond / (tile_m * tile_n * 2 / 1024))
            line += "  -> epilogue"
        if not k["persistent"]:
            cta_costs.append(gap - refill - 2 * grouped_m_call)
            line += f"  -> CTA start and exit {cta_costs[-1]:.0f}"
        print(line)
    print(f"epilogue: {statistics.mean(epilogue_per_kib):.1f} cycles per KiB of output tile (mean of {len(epilogue_per_kib)}: "
          + ", ".join(f"{x:.1f}" for x in epilogue_per_kib) + ")")
    print(f"CTA start and exit: {statistics.mean(cta_costs):.0f} cycles (mean of {len(cta_costs)}: "
          + ", ".join(f"{x:.0f}" for x in cta_costs) + ")")


if __name__ == "__main__":
    main()
