#!/usr/bin/env python3
"""Is a tile's K step bound by the whole L2 or by each SM? (issue 16, validation/NOTES.md, "The
128x128 K step in nanoseconds")

For each traced configuration given (a measured tilesim.result/1 file with `tiles`), replays it at
its recorded clock (drift_compare.replay) and, on the GPU and in the model, gives every tile the
mean number of tiles in flight while it ran, sorts the tiles by it and splits them into five equal
groups. Per group: that mean, the median tile in ns, the operand bytes a tile reads over it (each
SM's rate) and that rate times the tiles in flight (what the L2 then serves). If one server for the
whole L2 binds, each SM's rate falls as more tiles run; if something per SM binds, it does not.
The rate counts the whole tile (its epilogue too), so it understates the K steps' own rate alike
on both sides.

Operand bytes a tile reads: tile.m x tile.k (A) plus tile.n x tile.k (B), two bytes an element
(bf16), B halved in a cluster of two (each CTA loads half and multicasts it).

Usage: sm_read_rate.py TILESIM PROFILE.json RESULT.json...
"""
import bisect
import json
import os
import statistics
import sys
import tempfile

from drift_compare import replay

GROUPS = 5


def tile_bytes(kernel):
    t = kernel["tile"]
    b_share = 2 if kernel.get("cluster", 1) == 2 else 1
    return (t["m"] * t["k"] + t["n"] * t["k"] // b_share) * 2 * (kernel["k"] // t["k"])


def in_flight_groups(tiles):
    """(mean tiles in flight, median tile ns) for GROUPS equal groups of tiles, fewest in flight first."""
    events = sorted([(t["start_ns"], 1) for t in tiles] + [(t["end_ns"], -1) for t in tiles])
    times, counts, running = [], [], 0
    for when, step in events:
        running += step
        times.append(when)
        counts.append(running)
    points = []
    for t in tiles:
        begin, end = t["start_ns"], t["end_ns"]
        weighted = 0.0
        for i in range(bisect.bisect_left(times, begin), bisect.bisect_left(times, end)):
            upto = min(times[i + 1], end) if i + 1 < len(times) else end
            weighted += counts[i] * (upto - max(times[i], begin))
        if end > begin:
            points.append((weighted / (end - begin), end - begin))
    points.sort()
    n = len(points)
    groups = [points[g * n // GROUPS:(g + 1) * n // GROUPS] for g in range(GROUPS)]
    return [(statistics.mean(p for p, _ in g), statistics.median(d for _, d in g)) for g in groups if g]


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__.strip().splitlines()[-1])
    tilesim, profile = sys.argv[1], sys.argv[2]
    print("tiles grouped by how many ran beside them; per group: tiles in flight, median tile ns, each SM's operand")
    print("read rate over its tile (B/ns), that rate x tiles in flight (TB/s)")
    with tempfile.TemporaryDirectory() as folder:
        for path in sys.argv[3:]:
            measured = json.load(open(path))
            if not measured.get("tiles"):
                sys.exit(f"{path}: tiles: no per-tile trace; give a traced configuration (validation/microbench/tile_phase_probe.sh)")
            predicted = replay(tilesim, profile, measured, folder)
            size = tile_bytes(measured["kernel"])
            print(f"\n{os.path.basename(path)[:-5]}  (clock {measured['extra']['sm_clock_mhz']:.0f} MHz, {size} operand bytes a tile)")
            for side, tiles in (("GPU", measured["tiles"]), ("model", predicted["tiles"])):
                for flight, tile_ns in in_flight_groups(tiles):
                    rate = size / tile_ns
                    print(f"  {side:5s} in flight {flight:6.1f}  tile {tile_ns:8.0f} ns  {rate:5.1f} B/ns an SM  {rate * flight / 1000:5.2f} TB/s")


if __name__ == "__main__":
    main()
