#!/usr/bin/env python3
"""The read rate one GPC's port gives the grouped GEMM, from the L2 probe's per-tile cycle counts
(issue 16, validation/NOTES.md, "A port per GPC").

In gemm_ring_by_sms's launches with operands in L2 (4096 x 4096, K = 1024 and 2048, 128x128 tiles,
cluster pairs: each SM asks the L2 for its 16 KB A box and half of the multicast 16 KB B box,
24,576 bytes a K step), a GPC whose median K step is at least 2% longer than the median GPC's is
held by something its emptier neighbours are not: on 66 SMs the full GPC 0 (16 SMs) beside GPCs of
6-8, on 132 the 18-SM GPCs 6 and 7. Such a GPC draws (its SMs x 24,576 bytes) over its step in ns,
each tile's step in its own cycles over its own clock (gemm_ring_cycles_fit.py's figures). The span
ratio each step rests on covers about K steps - 2 wgmma groups (gemm_ring_cycles_fit.py), so it
reads low by what the 2-SM launch of the same K and run shows against the slope of its spans (the
wgmma's step where nothing is shared); each step is divided by that ratio. Prints every lagging
GPC's figure and their median, the port's rate.

Usage: gpc_port_rate.py PROFILE.json RUN.json...
"""
import json
import statistics
import sys

from gemm_ring_cycles_fit import tile_figures

ASKED_BYTES_PER_SM_STEP = 16384 + 8192  # the A box and half of the multicast B box (128x128, bf16, k 64)
LAGGING = 1.02


def step_ns(record, k_steps):
    step, _, _, mhz = tile_figures(record, k_steps)
    return 1e3 * step / mhz


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    gpc_of_sm = json.load(open(sys.argv[1]))["sm"]["gpc"]["value"]
    rates = []
    for path in sys.argv[2:]:
        data = json.load(open(path))
        l2_resident = [c for c in data["configs"] if c["m"] == 4096 and c["tile"][1] == 128]
        if any(c["check"] != "pass" or len(c["trace"][0]) != 7 for c in l2_resident):
            sys.exit(f"{path}: configs: a 128x128 launch failed its check or carries no cycle counts; "
                     "measure again with this tree's gemm_ring_by_sms")
        spans = {(c["sms_given"], c["k"]): statistics.median(r[5] - r[4] for r in c["trace"]) for c in l2_resident}
        lone_slope = (spans[(2, 2048)] - spans[(2, 1024)]) / 16
        print(f"{path} ({data['gpu']}, driver {data['driver']}, {data['date']})")
        for c in l2_resident:
            k_steps = c["k"] // 64
            lone = [tile_figures(r, k_steps)[0] for r in next(
                d for d in l2_resident if d["sms_given"] == 2 and d["k"] == c["k"])["trace"]]
            reads_low = statistics.median(lone) / lone_slope
            if c["sms_given"] == 2:
                continue
            by_gpc = {}
            for r in c["trace"]:
                by_gpc.setdefault(gpc_of_sm[r[1]], ([], set()))[0].append(step_ns(r, k_steps) / reads_low)
                by_gpc[gpc_of_sm[r[1]]][1].add(r[1])
            medians = {g: statistics.median(steps) for g, (steps, _) in by_gpc.items()}
            typical = statistics.median(medians.values())
            for g, step in sorted(medians.items()):
                if step < LAGGING * typical:
                    continue
                sms = len(by_gpc[g][1])
                rate = sms * ASKED_BYTES_PER_SM_STEP / step * 1e-3  # TB/s
                rates.append(rate)
                print(f"  K {c['k']:4d} on {c['sms_given']:3d} SMs: GPC {g} ({sms} SMs) steps {step:6.1f} ns, "
                      f"{step / typical:.3f}x the median GPC's; draws {rate:.3f} TB/s "
                      f"(span ratio read low by {reads_low:.4f})")
    if not rates:
        sys.exit("no GPC lagged: no port rate can be read from these runs")
    print(f"port rate: median of {len(rates)} lagging GPCs {statistics.median(rates):.3f} TB/s "
          f"(range {min(rates):.3f}-{max(rates):.3f})")


if __name__ == "__main__":
    main()
