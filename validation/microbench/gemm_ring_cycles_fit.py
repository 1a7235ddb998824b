#!/usr/bin/env python3
"""The grouped GEMM's K step in SM cycles, from each tile's own cycle counts (issue 16,
validation/NOTES.md, "The K step in cycles, one tile at a time").

Reads gemm_ring_by_sms's runs whose trace records carry the SM's clock64 at the tile's start, after
its first and its last K step's stage landed, and at its end (validation/microbench/
gemm_ring_by_sms.cu, kernels/common/tile_trace.h). A tile's K step is (last - first) / (K steps - 1):
one tile, one launch, one clock, so the clock's fall between launches that the ns slopes of
gemm_ring_by_sms_fit.py hold drops out. That ratio reads a little low: the consumer stamps step k
as its stage lands, when only the wgmma groups before k - 1 are sure to be done, so last - first
spans about K steps - 2 groups. The slope of the median (last - first) from K = 1024 to 2048
(4096 x 4096, each tile in its own cycles) is the step without that offset, and is given per tile
shape and SM count. For each configuration: the median tile's step in cycles and against the
wgmma's (2 x 128 x N x 64 FLOP at 4096 FLOP an SM cycle: 512 for 128x128, 1024 for
128x256), the first stage's wait (start to first landing), the tail (last landing to end: the last
wgmma and the epilogue), the tiles' own clock (cycles over ns, start to end) and, on 66 and 132
SMs, the median step per GPC (PROFILE.json's sm.gpc map) with its SMs.

Usage: gemm_ring_cycles_fit.py PROFILE.json RUN.json...
"""
import json
import statistics
import sys

WGMMA_FLOP_PER_SM_CYCLE = 4096  # validation/data/h100/microbench/wgmma_throughput.json: 4095.4 measured


def wgmma_cycles(tile_n):
    return 2 * 128 * tile_n * 64 / WGMMA_FLOP_PER_SM_CYCLE


def tile_figures(record, k_steps):
    """(step cycles, first-stage wait, tail, clock MHz) of one trace record."""
    _, _, start_ns, end_ns, first, last, end = record
    return (last - first) / (k_steps - 1), first, end - last, 1e3 * end / (end_ns - start_ns)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    gpc_of_sm = json.load(open(sys.argv[1]))["sm"]["gpc"]["value"]
    for path in sys.argv[2:]:
        spans = {}
        data = json.load(open(path))
        bad = [c for c in data["configs"] if c["check"] != "pass" or len(c["trace"][0]) != 7]
        if bad:
            sys.exit(f"{path}: configs: {len(bad)} failed their output check or carry no cycle counts; measure again "
                     "with this tree's gemm_ring_by_sms")
        print(f"{path} ({data['gpu']}, driver {data['driver']}, {data['date']})")
        for c in data["configs"]:
            tile_n, k_steps = c["tile"][1], c["k"] // 64
            figures = [tile_figures(r, k_steps) for r in c["trace"]]
            step, first, tail, mhz = (statistics.median(f[i] for f in figures) for i in range(4))
            spans[(tile_n, c["sms_given"], c["m"], k_steps)] = statistics.median(r[5] - r[4] for r in c["trace"])
            print(f"  {c['m']}x{c['n']}x{c['k']:<5d} 128x{tile_n} on {c['sms_given']:3d} SMs: K step {step:6.1f} cycles "
                  f"({step / wgmma_cycles(tile_n):.3f}x the wgmma's {wgmma_cycles(tile_n):.0f}; p10 / p90 "
                  f"{statistics.quantiles([f[0] for f in figures], n=10)[0]:.0f} / "
                  f"{statistics.quantiles([f[0] for f in figures], n=10)[-1]:.0f}), first stage {first:5.0f}, "
                  f"tail {tail:5.0f}, tile clock {mhz:4.0f} MHz (stamped {c['sm_clock_mhz']:.0f}), "
                  f"{c['median_ms']:.4f} ms")
            if c["sms_given"] > 2:
                by_gpc = {}
                for r, f in zip(c["trace"], figures):
                    by_gpc.setdefault(gpc_of_sm[r[1]], ([], set()))[0].append(f[0])
                    by_gpc[gpc_of_sm[r[1]]][1].add(r[1])
                print("    by GPC (SMs: K step cycles): " + "  ".join(
                    f"{g} ({len(sms)}: {statistics.median(steps):.0f})" for g, (steps, sms) in sorted(by_gpc.items())))
        for (tile_n, sms, m, k_steps), span in sorted(spans.items()):
            longer = spans.get((tile_n, sms, m, 2 * k_steps))
            if m == 4096 and longer is not None:
                slope = (longer - span) / k_steps
                print(f"  128x{tile_n} on {sms:3d} SMs, K {64 * k_steps} -> {128 * k_steps}: K step {slope:6.1f} cycles "
                      f"({slope / wgmma_cycles(tile_n):.3f}x the wgmma's), the slope of the median first-to-last span")


if __name__ == "__main__":
    main()
