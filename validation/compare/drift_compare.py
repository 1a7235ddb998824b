#!/usr/bin/env python3
"""Do the model's persistent CTAs drift apart as the GPU's do? (issue 16, validation/NOTES.md)

For each traced persistent configuration given (a measured tilesim.result/1 file whose `tiles`
hold the GPU's per-tile start times), replays its kernel with `tilesim simulate` at the SM clock
its counter pass recorded (extra.sm_clock_mhz: a copy of the profile with only sm.clock_mhz
changed, in a temporary folder) and prints, wave by wave (a wave is one tile of every CTA, by
linear tile index), the standard deviation of the tiles' start times on the GPU and in the model,
beside the time and DRAM reads of both. The slow mode is persistent CTAs drifting apart until
they no longer share the operands they read; if the model's drift is the GPU's, the drift is not
what it misses.

Usage: drift_compare.py TILESIM PROFILE.json RESULT.json...
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

WAVES = (5, 10, 25, 40, 50)


def start_spread_us(tiles):
    """Standard deviation of the start times (us) of each wave in WAVES that the launch has."""
    ctas = len({t["sm"] for t in tiles})
    ordered = sorted(tiles, key=lambda t: t["linear"])
    spread = {}
    for wave in WAVES:
        starts = [t["start_ns"] for t in ordered[wave * ctas:(wave + 1) * ctas]]
        if len(starts) == ctas:
            spread[wave] = statistics.pstdev(starts) / 1000
    return spread


def replay(tilesim, profile, measured, folder):
    gpu = json.load(open(profile))
    gpu["sm"]["clock_mhz"]["value"] = measured["extra"]["sm_clock_mhz"]
    gpu_path = os.path.join(folder, "gpu.json")
    spec_path = os.path.join(folder, "spec.json")
    out_path = os.path.join(folder, "predicted.json")
    json.dump(gpu, open(gpu_path, "w"))
    # The result's copy of the spec adds what the launch derived from it: its grid and tile count.
    json.dump({k: v for k, v in measured["kernel"].items() if k not in ("grid", "tiles")}, open(spec_path, "w"))
    subprocess.run([tilesim, "simulate", "--gpu", gpu_path, "--kernel", spec_path, "--out", out_path],
                   check=True, stdout=subprocess.DEVNULL)
    return json.load(open(out_path))


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__.strip().splitlines()[-1])
    tilesim, profile = sys.argv[1], sys.argv[2]
    print("start-time standard deviation of each wave's tiles, us: GPU / model (each at its recorded clock)")
    with tempfile.TemporaryDirectory() as folder:
        for path in sys.argv[3:]:
            measured = json.load(open(path))
            if not measured.get("tiles") or not measured["kernel"].get("persistent"):
                sys.exit(f"{path}: tiles: no per-tile trace of a persistent launch; give a traced persistent configuration")
            predicted = replay(tilesim, profile, measured, folder)
            gpu, model = start_spread_us(measured["tiles"]), start_spread_us(predicted["tiles"])
            waves = "  ".join(f"w{w} {gpu[w]:5.1f}/{model[w]:5.1f}" for w in gpu if w in model)
            print(f"{os.path.basename(path)[:-5]:44s} {measured['extra']['sm_clock_mhz']:5.0f} MHz  "
                  f"time {measured['time_ms']:.3f}/{predicted['time_ms']:.3f} ms  "
                  f"DRAM read {measured['dram_read_bytes'] / 1e9:5.2f}/{predicted['dram_read_bytes'] / 1e9:5.2f} GB  {waves}")


if __name__ == "__main__":
    main()
