#!/usr/bin/env python3
"""The L2 probe's launches replayed by the model (issue 16, validation/NOTES.md, "The L2 probe: the
K step with 2 to 132 SMs").

For each launch of a gemm_ring_by_sms run (validation/microbench/gemm_ring_by_sms.cu), simulates the
same dense grouped_m:8 GEMM on the SMs the GPU ran it on, at the SM clock stamped around it: a copy
of the profile (in a temporary folder) that keeps only those SMs (their GPC, L2 partition, service
factors and dispatch orders, renumbered in order) and takes that clock, and optionally another L2
bandwidth. Each launch's trace span (first tile start to last tile end) is given beside its time:
the CUDA events around one launch also hold its launch (~4 us,
validation/data/h100/microbench/launch_overhead.json), which the model's time, like the dataset's
CUPTI durations, does not. Where the trace records carry each tile's cycle counts (runs of this
tree's gemm_ring_by_sms), the clock is the tiles' own instead (their cycles over their ns, start to
end): the stamped one reads up to 14% high where most SMs idle. Prints the GPU's and the model's
median tile and launch time, the model's L2 server busy fraction and the share of the read sectors
the SMs asked for (promoted ones included) that its request coalescer merged, and per SM count the K
step (the median tile from K = 1024 to 2048 over 16 steps, ns), the model's also per GPC
(gemm_ring_by_sms_fit.py gives the GPU's); for the dense 8192³ launches, the standard deviation of
each wave's tile start times (drift_compare.py's waves) on the GPU and in the model.

Usage: ring_by_sms_replay.py TILESIM PROFILE.json RUN.json [L2_BYTES_PER_S]
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

from drift_compare import start_spread_us

STEPS_BETWEEN = (2048 - 1024) // 64


def profile_on(base, sms, clock_mhz, l2_bytes_per_s):
    """The profile restricted to `sms` (sorted SM ids), at `clock_mhz`."""
    gpu = json.loads(json.dumps(base))
    renumber = {sm: i for i, sm in enumerate(sms)}
    gpu["sm"]["count"]["value"] = len(sms)
    for section, key in (("sm", "gpc"), ("l2", "sm_service_factor"), ("l2", "sm_partition"), ("dram", "sm_service_factor")):
        if key in gpu[section]:
            gpu[section][key]["value"] = [gpu[section][key]["value"][sm] for sm in sms]
    for key in ("dispatch_order", "cluster_dispatch_order"):
        if key in gpu["sm"]:
            gpu["sm"][key]["value"] = [renumber[sm] for sm in gpu["sm"][key]["value"] if sm in renumber]
    gpu["sm"]["clock_mhz"]["value"] = clock_mhz
    if l2_bytes_per_s:
        gpu["l2"]["bandwidth_bytes_per_s"]["value"] = l2_bytes_per_s
    return gpu


def median_tile_ns(tiles):
    return statistics.median(t[1] for t in tiles)


def trace_span_us(starts_ends):
    starts, ends = zip(*starts_ends)
    return (max(ends) - min(starts)) / 1e3


def launch_clock_mhz(config):
    """The tiles' own clock where the trace has their cycles (7 fields a record): all their cycles over
    all their ns, the one clock that keeps the launch's cycles where the clock moves inside it (as
    CUPTI's sm__cycles_elapsed.avg.per_second averages); else the stamped one."""
    if len(config["trace"][0]) == 7:
        return 1e3 * sum(r[6] for r in config["trace"]) / sum(r[3] - r[2] for r in config["trace"])
    return config["sm_clock_mhz"]


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__.strip().splitlines()[-1])
    tilesim, base = sys.argv[1], json.load(open(sys.argv[2]))
    run = json.load(open(sys.argv[3]))
    l2 = float(sys.argv[4]) if len(sys.argv) == 5 else None
    print(f"{sys.argv[3]}: GPU / model (L2 {l2 or base['l2']['bandwidth_bytes_per_s']['value']:.4g} B/s)")
    medians, gpc_medians = {}, {}
    with tempfile.TemporaryDirectory() as folder:
        for c in run["configs"]:
            sms = sorted({t[1] for t in c["trace"]})
            gpu_path, spec_path, out_path = (os.path.join(folder, f) for f in ("gpu.json", "spec.json", "out.json"))
            clock = launch_clock_mhz(c)
            json.dump(profile_on(base, sms, clock, l2), open(gpu_path, "w"))
            json.dump({"name": "gemm_ring_by_sms", "kind": "gemm", "dtype": "bf16", "m": c["m"], "n": c["n"], "k": c["k"],
                       "layout": {"a": "row", "b": "col"}, "tile": {"m": 128, "n": c["tile"][1], "k": 64},
                       "stages": c["stages"], "warps": 12, "load": "tma", "persistent": True, "cluster": 2,
                       "order": "grouped_m:8"}, open(spec_path, "w"))
            subprocess.run([tilesim, "simulate", "--gpu", gpu_path, "--kernel", spec_path, "--out", out_path], check=True,
                           stdout=subprocess.DEVNULL)
            model = json.load(open(out_path))
            gpu_tile = median_tile_ns([(0, r[3] - r[2]) for r in c["trace"]])
            model_tile = median_tile_ns([(0, t["end_ns"] - t["start_ns"]) for t in model["tiles"]])
            extra = model["extra"]
            spans = (trace_span_us([(r[2], r[3]) for r in c["trace"]]),
                     trace_span_us([(t["start_ns"], t["end_ns"]) for t in model["tiles"]]))
            span = f"trace span {spans[0]:.1f} / {spans[1]:.1f} us ({100 * (spans[1] / spans[0] - 1):+5.1f}%)"
            if c["m"] != 4096:  # the calibration configuration, fed from DRAM: its drift, not its K step
                gpu_tiles = [{"linear": r[0], "sm": r[1], "start_ns": r[2], "end_ns": r[3]} for r in c["trace"]]
                gpu_spread, model_spread = start_spread_us(gpu_tiles), start_spread_us(model["tiles"])
                print(f"  {c['m']}x{c['n']}x{c['k']} 128x{c['tile'][1]} on {len(sms):3d} SMs at {clock:.0f} MHz: "
                      f"launch {c['median_ms']:.4f} / {model['time_ms']:.4f} ms "
                      f"({100 * (model['time_ms'] / c['median_ms'] - 1):+5.1f}%), {span}, start spread us "
                      + "  ".join(f"w{w} {gpu_spread[w]:.1f} / {model_spread.get(w, float('nan')):.1f}" for w in gpu_spread))
                continue
            asked = model["l2_read_sectors"] + extra["l2_coalesced_read_sectors"]
            medians[(c["tile"][1], len(sms), c["k"])] = (gpu_tile, model_tile)
            # The model's median tile per GPC (its SM i is the GPU's sms[i]).
            per_gpc = {}
            for t in model["tiles"]:
                per_gpc.setdefault(base["sm"]["gpc"]["value"][sms[t["sm"]]], []).append(t["end_ns"] - t["start_ns"])
            gpc_medians[(c["tile"][1], len(sms), c["k"])] = {g: statistics.median(v) for g, v in per_gpc.items()}
            print(f"  128x{c['tile'][1]} K {c['k']} on {len(sms):3d} SMs at {clock:.0f} MHz: median tile "
                  f"{gpu_tile:6.0f} / {model_tile:6.0f} ns, launch {c['median_ms']:.4f} / {model['time_ms']:.4f} ms "
                  f"({100 * (model['time_ms'] / c['median_ms'] - 1):+5.1f}%), {span}; model L2 server "
                  f"{100 * extra['l2_bandwidth_busy_fraction']:3.0f}% busy, coalescer "
                  f"{100 * extra['l2_coalesced_read_sectors'] / asked:4.1f}% of the read sectors asked")
    for (tile_n, sms, k), (gpu_short, model_short) in sorted(medians.items()):
        if k == 1024 and (tile_n, sms, 2048) in medians:
            gpu_long, model_long = medians[(tile_n, sms, 2048)]
            print(f"  128x{tile_n} on {sms:3d} SMs: K step {(gpu_long - gpu_short) / STEPS_BETWEEN:4.0f} / "
                  f"{(model_long - model_short) / STEPS_BETWEEN:4.0f} ns")
            short, long = gpc_medians[(tile_n, sms, 1024)], gpc_medians[(tile_n, sms, 2048)]
            print("    the model's K step by GPC, ns: " +
                  "  ".join(f"{g} {(long[g] - short[g]) / STEPS_BETWEEN:.0f}" for g in sorted(short)))


if __name__ == "__main__":
    main()
