#!/usr/bin/env python3
"""Are the SMs the model serves slowly the ones whose tiles the GPU runs slowly? (issue 16,
validation/NOTES.md)

The profile's per-SM service factors (l2/dram.sm_service_factor, microbench/gpc_speed.json: every
SM reading L2 with plain loads, all at once) are what make the model's persistent CTAs drift
apart. For each traced persistent configuration given, this replays it at its recorded clock
(drift_compare.replay) and compares each SM's mean tile time over the mean of all, on the GPU and
in the model: their spread, how the two go together, and how each goes with the L2 factor. When
the traces of several runs are given, the GPU's per-SM figures of every pair of runs are
correlated too: an SM that is slow in every run is slow by what it is, not by the tiles it drew.

Usage: sm_tile_speed.py TILESIM PROFILE.json RESULT.json...
"""
import json
import os
import statistics
import sys
import tempfile

from drift_compare import replay


def per_sm_tile_ratio(tiles, sms):
    """Each SM's mean tile time over the mean tile time of the launch."""
    by_sm = {}
    for t in tiles:
        by_sm.setdefault(t["sm"], []).append(t["end_ns"] - t["start_ns"])
    mean = statistics.mean(d for times in by_sm.values() for d in times)
    return [statistics.mean(by_sm[sm]) / mean for sm in range(sms)]


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__.strip().splitlines()[-1])
    tilesim, profile_path = sys.argv[1], sys.argv[2]
    profile = json.load(open(profile_path))
    sms = profile["sm"]["count"]["value"]
    l2_factor = profile["l2"]["sm_service_factor"]["value"]
    corr = statistics.correlation
    print("each SM's mean tile time over the launch's mean: spread (standard deviation) on the GPU and in the model,")
    print("correlation GPU-model, and of each with the profile's L2 service factor")
    gpu_runs = {}
    with tempfile.TemporaryDirectory() as folder:
        for path in sys.argv[3:]:
            measured = json.load(open(path))
            if not measured.get("tiles") or not measured["kernel"].get("persistent"):
                sys.exit(f"{path}: tiles: no per-tile trace of a persistent launch; give a traced persistent configuration")
            name = os.path.basename(path)[:-5]
            gpu = per_sm_tile_ratio(measured["tiles"], sms)
            model = per_sm_tile_ratio(replay(tilesim, profile_path, measured, folder)["tiles"], sms)
            gpu_runs[name] = gpu
            print(f"{name:42s} spread GPU {100 * statistics.pstdev(gpu):4.2f}% model {100 * statistics.pstdev(model):4.2f}%  "
                  f"GPU-model {corr(gpu, model):+.2f}  GPU-L2 factor {corr(gpu, l2_factor):+.2f}  "
                  f"model-L2 factor {corr(model, l2_factor):+.2f}")
    names = list(gpu_runs)
    if len(names) > 1:
        print("\nthe GPU's per-SM figures, run against run (correlation):")
        for a in names:
            print(f"{a:42s} " + " ".join(f"{corr(gpu_runs[a], gpu_runs[b]):+.2f}" for b in names))


if __name__ == "__main__":
    main()
