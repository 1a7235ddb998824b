#!/usr/bin/env python3
"""What binds the grouped GEMM's K step: the whole L2 or each SM? (issue 16, validation/NOTES.md,
"The L2 probe: the K step with 2 to 132 SMs")

Reads gemm_ring_by_sms's runs (validation/microbench/gemm_ring_by_sms.cu): for each tile shape and
SM count, the K step is the median tile's growth from K = 1024 to K = 2048 (4096 x 4096, operands
resident in L2) over the 16 steps between them, in ns. Each SM asks the L2 for its own A box and half of the multicast B box every step (128x128:
16 + 8 KB; 128x256: 16 + 16 KB): that over the step is its read rate, and times the SMs what the
L2 serves. The step is also given in cycles, each launch's median tile at its own clock, with the
per-tile part that leaves at K = 1024: the clock falls in the longer launches at 110 and 132 SMs,
and the ns slope then holds that fall too. The last line is the ns-slope aggregate at every SM, the
mean over the runs (the pre-registered decision (a) reads it; NOTES says what it is worth).

Per GPC (PROFILE.json's sm.gpc map), the 128x128 K step of its SMs' median tile: which GPCs' SMs
lag. The GPCs of one line ran in the same two launches, so they compare with each other whatever
the clocks did; where the clocks differ, the absolute step holds the clock's change too.

Usage: gemm_ring_by_sms_fit.py PROFILE.json RUN.json...
"""
import json
import statistics
import sys

STEPS_SHORT = 1024 // 64  # K steps of the shorter launch's tiles
STEPS_BETWEEN = (2048 - 1024) // 64


def step_bytes(tile_n):
    return (128 * 64 + tile_n * 64 // 2) * 2


def median_tile_ns(config):
    return statistics.median(r[3] - r[2] for r in config["trace"])


def by_gpc_step(short, long, gpc_of_sm):
    """{gpc: (SMs, K step ns of its SMs' median tile)} over the two launches."""
    medians = []
    for config in (short, long):
        tiles = {}
        for _, sm, start, end, *_ in config["trace"]:
            tiles.setdefault(gpc_of_sm[sm], {}).setdefault(sm, []).append(end - start)
        medians.append({g: (len(sms), statistics.median([d for v in sms.values() for d in v])) for g, sms in tiles.items()})
    return {g: (medians[0][g][0], (medians[1][g][1] - medians[0][g][1]) / STEPS_BETWEEN) for g in sorted(medians[0])}


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    gpc_of_sm = json.load(open(sys.argv[1]))["sm"]["gpc"]["value"]
    at_all = []
    for path in sys.argv[2:]:
        data = json.load(open(path))
        if any(c["check"] != "pass" for c in data["configs"]):
            sys.exit(f"{path}: configs: a configuration failed its output check; measure again")
        by_key = {(c["m"], c["k"], c["tile"][1], c["sms_given"]): c for c in data["configs"]}
        print(f"{path} ({data['gpu']}, driver {data['driver']}, {data['date']})")
        for tile_n in (128, 256):
            for sms in sorted({s for (m, k, t, s) in by_key if m == 4096 and t == tile_n}):
                short, long = by_key[(4096, 1024, tile_n, sms)], by_key[(4096, 2048, tile_n, sms)]
                step_ns = (median_tile_ns(long) - median_tile_ns(short)) / STEPS_BETWEEN
                rate = step_bytes(tile_n) / step_ns
                # The same growth in SM cycles, each launch's median tile at its own clock: where the two
                # launches ran at different clocks, the ns slope holds the clock's change too.
                cycles = [median_tile_ns(c) * c["sm_clock_mhz"] / 1e3 for c in (short, long)]
                step_cycles = (cycles[1] - cycles[0]) / STEPS_BETWEEN
                print(f"  128x{tile_n} on {sms:3d} SMs: K step {step_ns:5.0f} ns ({rate:5.1f} B/ns an SM, "
                      f"{rate * sms / 1e3:5.2f} TB/s over the SMs); in cycles {step_cycles:5.0f} a step + "
                      f"{cycles[0] - STEPS_SHORT * step_cycles:5.0f} a tile (clocks {short['sm_clock_mhz']:.0f} / "
                      f"{long['sm_clock_mhz']:.0f} MHz)")
                if tile_n == 128 and sms == data["sms"]:
                    at_all.append(rate * sms * 1e9)
                if tile_n == 128 and sms > 2:
                    steps = by_gpc_step(short, long, gpc_of_sm)
                    print("    by GPC (SMs: K step ns, TB/s asked): " + "  ".join(
                        f"{g} ({n}: {step:.0f}, {n * step_bytes(tile_n) / step / 1e3:.2f})" for g, (n, step) in steps.items()))
        for (m, k, t, sms), c in sorted(by_key.items()):
            if m == 8192:
                print(f"  {m}x{m}x{k} 128x{t} on {sms:3d} SMs: {c['median_ms']:.4f} ms at {c['sm_clock_mhz']:.0f} MHz, "
                      f"median tile {median_tile_ns(c):.0f} ns")
    print(f"L2 rate at every SM (128x128 K step, mean of {len(at_all)} runs): {statistics.mean(at_all):.4g} B/s")


if __name__ == "__main__":
    main()
