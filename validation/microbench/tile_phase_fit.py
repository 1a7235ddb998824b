#!/usr/bin/env python3
"""What validation/microbench/tile_phase_probe.sh's traces say a GEMM tile and a CTA cost beyond
their K steps, in SM cycles at each run's own measured clock (extra.sm_clock_mhz).

- Per tile (the epilogue): a persistent 128x256 CTA's tile lasts from its consumers' start (after
  their tile scheduler call) to its last TMA store's issue; beyond K steps x the wgmma time (1024
  cycles each at 4096 FLOP per SM cycle, validation/data/h100/microbench/wgmma_throughput.json) and
  the accumulators' zeroing (one move each, 128 per SM cycle), that is the epilogue. Only the runs
  whose operands stay in L2 (K <= 4096: 64 MB or less) are used, so that DRAM waits do not enter.
- Per tile, after its last store (the epilogue's tail): a persistent CTA's tiles lie apart by its
  consumers' two tile scheduler calls (the profile's grouped_m figure; a dense grouped_m walk makes
  no loop trip) and what the epilogue still does after issuing the last store; the mean over the
  persistent runs, less the calls, is that tail.
- Per CTA: between a non-persistent CTA's last store issue and the next CTA's first tile on its SM
  lie the epilogue's tail, the CTA's exit, the block scheduler's refill and the next CTA's start
  and tile scheduler call; beyond the tail, the refill and the call, that is the CTA's start and exit.

- Per CTA, its first tile (with --model TILESIM): each one-CTA-per-tile run is replayed at its clock
  with the profile's cta_first_load_cycles set to 0, and its median tile set against the GPU's;
  per tile shape a line through the runs' K steps splits the GPU's excess into a part per K step
  and a part per tile, what a fresh CTA's first loads take beyond the simulator's first-box
  latency (a persistent CTA's later tiles have their loads issued during the previous epilogue).

Usage: tile_phase_fit.py RESULTS_DIR [PROFILE] [--model TILESIM]   (default profile: models/gpus/h100_sxm.json)
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
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


def model_tile(tilesim, profile, result, workdir):
    """The simulator's median tile, in cycles, for a measured run replayed at its clock without
    the first-load cost."""
    gpu = json.loads(json.dumps(profile))
    gpu["sm"]["clock_mhz"]["value"] = result["extra"]["sm_clock_mhz"]
    gpu["tiled_gemm"].pop("cta_first_load_cycles", None)
    paths = [os.path.join(workdir, n) for n in ("gpu.json", "spec.json", "predicted.json")]
    json.dump(gpu, open(paths[0], "w"))
    json.dump({k: v for k, v in result["kernel"].items() if k not in ("grid", "tiles")}, open(paths[1], "w"))
    subprocess.run([tilesim, "simulate", "--gpu", paths[0], "--kernel", paths[1], "--out", paths[2]],
                   check=True, stdout=subprocess.DEVNULL)
    predicted = json.load(open(paths[2]))
    clock_ghz = result["extra"]["sm_clock_mhz"] / 1000.0
    return statistics.median((t["end_ns"] - t["start_ns"]) * clock_ghz for t in predicted["tiles"])


def first_load(tilesim, profile, runs):
    """runs: (tile shape, K steps, GPU median tile) of the one-CTA-per-tile runs."""
    by_shape = defaultdict(list)
    with tempfile.TemporaryDirectory() as workdir:
        for shape, steps, gpu_tile, result in runs:
            by_shape[shape].append((steps, gpu_tile - model_tile(tilesim, profile, result, workdir)))
    per_tile = []
    for shape, points in sorted(by_shape.items()):
        if len(points) < 2:
            continue
        (s0, e0), (s1, e1) = min(points), max(points)
        per_step = (e1 - e0) / (s1 - s0)
        per_tile.append(e0 - per_step * s0)
        print(f"{shape}: the GPU's tile exceeds the model's by " + ", ".join(f"{e:.0f} at {s} K steps" for s, e in sorted(points))
              + f": {per_step:.1f} a K step, {per_tile[-1]:.0f} a tile")
    print(f"a fresh CTA's first loads: {statistics.mean(per_tile):.0f} cycles (mean of {len(per_tile)})")


def main():
    args = sys.argv[1:]
    tilesim = None
    if "--model" in args:
        i = args.index("--model")
        tilesim = args[i + 1]
        del args[i:i + 2]
    results_dir = args[0]
    profile = json.load(open(args[1] if len(args) > 1 else "models/gpus/h100_sxm.json"))
    np_runs = []
    rate = value(profile["tensor_flops_per_cycle_per_sm"], "bf16")
    issue = 32 * value(profile["sm"], "warp_schedulers")
    refill = value(profile["launch"], "cta_launch_cycles")
    grouped_m_call = profile["tile_scheduler"]["grouped_m"]["cycles_per_call"]["value"]
    epilogue_per_kib, np_gaps, p_gaps = [], [], []
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
        (p_gaps if k["persistent"] else np_gaps).append(gap)
        if not k["persistent"]:
            np_runs.append((f"{tile_m}x{tile_n}", steps, duration, r))
        print(line)
    print(f"epilogue: {statistics.mean(epilogue_per_kib):.1f} cycles per KiB of output tile (mean of {len(epilogue_per_kib)}: "
          + ", ".join(f"{x:.1f}" for x in epilogue_per_kib) + ")")
    tail = statistics.mean(p_gaps) - 2 * grouped_m_call
    print(f"epilogue tail: {tail:.0f} cycles (persistent gaps {min(p_gaps):.0f}-{max(p_gaps):.0f}, mean of {len(p_gaps)} "
          f"{statistics.mean(p_gaps):.0f}, less 2 x {grouped_m_call:.0f})")
    cta_costs = [gap - tail - refill - 2 * grouped_m_call for gap in np_gaps]
    print(f"CTA start and exit: {statistics.mean(cta_costs):.0f} cycles (mean of {len(cta_costs)}: "
          + ", ".join(f"{x:.0f}" for x in cta_costs) + ")")
    if tilesim:
        first_load(tilesim, profile, np_runs)


if __name__ == "__main__":
    main()
