#!/usr/bin/env python3
"""Kernel start and drain as CUPTI times them: what a kernel's duration holds beyond its CTAs' work.

launch_overhead.cu times kernels from inside (%globaltimer: first CTA start to last CTA end) and
back to back (the gap between one kernel's last CTA and the next one's first, 1.66 us), but not
how much of that CUPTI's kernel record (the `time_ms` of every measured result) counts. Here one
thread spins for a set number of SM cycles (torch.cuda._sleep: a single-CTA kernel whose work is
that many cycles and nothing else), each launch after the previous has finished, and
torch.profiler collects the CUPTI activity records (CONCURRENT_KERNEL, as tilesim-measure and
kernels/elementwise/bench_baselines.py use). A straight line through duration against cycles gives
the SM clock (its slope) and the duration of a kernel with no work (its intercept): the start and
drain that the simulator adds to its CTAs' span (`launch.kernel_start_drain_ns` in the profiles).

  python3 validation/microbench/kernel_start_drain.py --out kernel_start_drain.json
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import tempfile

import torch

SPINS = [0, 2000, 20000, 200000]


def durations(spin, launches):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(launches):
            torch.cuda._sleep(spin)
            torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        events = json.load(open(path))["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    if len(kernels) != launches:
        raise RuntimeError(f"spin {spin}: {len(kernels)} kernel records for {launches} launches: "
                           f"{sorted({e['name'] for e in kernels})}")
    return [e["dur"] * 1e3 for e in kernels]  # ns (the trace's microseconds, to the ns)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--launches", type=int, default=200)
    args = parser.parse_args()
    torch.cuda._sleep(1000)  # the first launch loads the module
    torch.cuda.synchronize()
    rows = []
    for spin in SPINS:
        ns = durations(spin, args.launches)
        rows.append({"spin_cycles": spin, "median_ns": statistics.median(ns), "min_ns": min(ns), "max_ns": max(ns),
                     "all_ns": ns})
        print(f"spin {spin:>7} cycles: median {rows[-1]['median_ns']:.0f} ns (min {min(ns):.0f}, max {max(ns):.0f})",
              flush=True)
    xs = [r["spin_cycles"] for r in rows]
    ys = [r["median_ns"] for r in rows]
    mx, my = statistics.mean(xs), statistics.mean(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    intercept = my - slope * mx
    print(f"fit: {intercept:.0f} ns + cycles x {slope:.5f} ns (SM clock {1e3 / slope:.0f} MHz)")
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    record = {"what": "CUPTI durations (torch.profiler) of a one-thread kernel spinning N SM cycles "
                      "(torch.cuda._sleep), each launched after the previous finished; least-squares line "
                      "through the medians",
              "command": f"python3 validation/microbench/kernel_start_drain.py --out {args.out} "
                         f"--launches {args.launches}",
              "gpu": torch.cuda.get_device_name(0), "nvidia_smi": smi, "torch": torch.__version__,
              "cuda": torch.version.cuda,
              "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "spins": rows, "fit_intercept_ns": intercept, "fit_ns_per_cycle": slope,
              "fit_sm_clock_mhz": 1e3 / slope}
    with open(args.out, "w") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
