#!/usr/bin/env python3
"""The read rate one GPC's port gives the grouped GEMM, from the L2 probe's traces (issue 16,
validation/NOTES.md, "A port per GPC").

In gemm_ring_by_sms's launches with operands in L2 (4096 x 4096, K = 1024 and 2048, 128x128 tiles,
cluster pairs: each SM asks the L2 for its 16 KB A box and half of the multicast 16 KB B box,
24,576 bytes a K step), a GPC whose SMs take at least 2% longer than the median GPC's is held by
something its emptier neighbours are not: on 66 SMs the full GPC 0 (16 SMs) beside GPCs of 6-8, on
132 the 18-SM GPCs 6 and 7. Two readings of what such a GPC draws:

- over its tiles' K loops (its SMs x 24,576 bytes over its median K step in ns, each tile's step in
  its own cycles over its own clock, gemm_ring_cycles_fit.py's figures, divided by how low the span
  ratio reads on the 2-SM launch of the same K and run); a GPC counts as lagging by its step;
- over its SMs' tile periods (its SMs x 24,576 bytes x K steps over the median time from one
  tile's start to the next on an SM, the first tile left out): what a port passes when it binds
  continuously, since the producer fills the next tile's stages during the epilogue and the ring
  carries bytes between K loops too; a GPC counts as lagging by its period.

Prints every lagging GPC's figure of both and the median of each; the port's rate is the median
over the tile periods (the loop reading is kept beside it: validation/NOTES.md says why it was
the wrong one).

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


def period_ns(records):
    """Median over an SM's tiles of the time from one tile's start to the next's, the first tile left out."""
    starts = sorted(r[2] for r in records)
    return (starts[-1] - starts[1]) / (len(starts) - 2)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    gpc_of_sm = json.load(open(sys.argv[1]))["sm"]["gpc"]["value"]
    loop_rates, period_rates = [], []
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
            if c["sms_given"] == 2:
                continue
            k_steps = c["k"] // 64
            lone = [tile_figures(r, k_steps)[0] for r in next(
                d for d in l2_resident if d["sms_given"] == 2 and d["k"] == c["k"])["trace"]]
            reads_low = statistics.median(lone) / lone_slope
            steps, by_sm = {}, {}
            for r in c["trace"]:
                steps.setdefault(gpc_of_sm[r[1]], []).append(step_ns(r, k_steps) / reads_low)
                by_sm.setdefault(r[1], []).append(r)
            periods = {}
            for sm, records in by_sm.items():
                if len(records) >= 3:
                    periods.setdefault(gpc_of_sm[sm], []).append(period_ns(records))
            step = {g: statistics.median(v) for g, v in steps.items()}
            period = {g: statistics.median(v) for g, v in periods.items()}
            for g in sorted(step):
                sms = len({r[1] for r in c["trace"] if gpc_of_sm[r[1]] == g})
                loop_lags = step[g] >= LAGGING * statistics.median(step.values())
                period_lags = g in period and period[g] >= LAGGING * statistics.median(period.values())
                if not (loop_lags or period_lags):
                    continue
                line = f"  K {c['k']:4d} on {c['sms_given']:3d} SMs: GPC {g} ({sms} SMs)"
                if loop_lags:
                    loop_rates.append(sms * ASKED_BYTES_PER_SM_STEP / step[g] * 1e-3)
                    line += (f"; K step {step[g]:6.1f} ns, {step[g] / statistics.median(step.values()):.3f}x the median "
                             f"GPC's: {loop_rates[-1]:.3f} TB/s over its K loops")
                if period_lags:
                    period_rates.append(sms * ASKED_BYTES_PER_SM_STEP * k_steps / period[g] * 1e-3)
                    line += (f"; tile period {period[g]:7.0f} ns, {period[g] / statistics.median(period.values()):.3f}x "
                             f"the median GPC's: {period_rates[-1]:.3f} TB/s over its tile periods")
                print(line)
    if not period_rates:
        sys.exit("no GPC lagged: no port rate can be read from these runs")
    print(f"over the K loops: median of {len(loop_rates)} lagging GPCs {statistics.median(loop_rates):.3f} TB/s "
          f"(range {min(loop_rates):.3f}-{max(loop_rates):.3f})")
    print(f"port rate, over the tile periods: median of {len(period_rates)} lagging GPCs "
          f"{statistics.median(period_rates):.3f} TB/s (range {min(period_rates):.3f}-{max(period_rates):.3f})")


if __name__ == "__main__":
    main()
