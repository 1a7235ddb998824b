#!/usr/bin/env python3
"""Where the H100 GEMM model's signed time error (its bias) sits, by regime (issue 16,
validation/NOTES.md, "The bias, decomposed").

Replays every configuration of the given datasets at the SM clock its measurement recorded (as
`tilesim validate --clock measured` does) with `tilesim simulate`, and splits the signed time error
of the part asked for by:

- what binds in the model: the busiest of its tensor cores, its L2 server and its DRAM server
  (`extra.tensor_busy_fraction`, `l2_bandwidth_busy_fraction`, `dram_busy_fraction`);
- persistent against one CTA per tile; 128x128 against 128x256 tiles;
- the recorded clock against the profile's (below 1550, 1550-1750, above 1750 MHz);
- the first dataset against the new shapes;
- whether the model's DRAM reads are within 15% of the GPU's (the slow mode is where they are not).

Each group prints its count, its mean signed time error and its share of the part's summed signed
error (the share of the bias it carries). Held-back configurations are only ever scored: use the
calibration part to diagnose.

Usage: bias_decomposition.py TILESIM PROFILE PART DATASET [DATASET ...]
  PART: calibration, held-back or all; each DATASET a folder of measured tilesim.result/1 files.
"""
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
import tempfile


def held_back(stem):
    """README's split rule, as validation/compare/fidelity.cpp's is_held_back (its constants)."""
    h = 1469598103934665603
    for byte in stem.encode():
        h ^= byte
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h % 3 == 0


def simulate(tilesim, profile, measured_path, workdir):
    """The prediction of one measured configuration at its recorded clock."""
    measured = json.load(open(measured_path))
    stem = os.path.splitext(os.path.basename(measured_path))[0]
    gpu = json.loads(json.dumps(profile))
    gpu["sm"]["clock_mhz"]["value"] = measured["extra"]["sm_clock_mhz"]
    gpu_path = os.path.join(workdir, stem + ".gpu.json")
    spec_path = os.path.join(workdir, stem + ".spec.json")
    out_path = os.path.join(workdir, stem + ".pred.json")
    json.dump(gpu, open(gpu_path, "w"))
    spec = {k: v for k, v in measured["kernel"].items() if k not in ("grid", "tiles")}
    json.dump(spec, open(spec_path, "w"))
    subprocess.run([tilesim, "simulate", "--gpu", gpu_path, "--kernel", spec_path, "--out", out_path],
                   check=True, stdout=subprocess.DEVNULL)
    predicted = json.load(open(out_path))
    return stem, measured, predicted


def row_of(dataset, measured, predicted):
    k = measured["kernel"]
    x = predicted["extra"]
    busy = {"tensor": x["tensor_busy_fraction"], "L2": x["l2_bandwidth_busy_fraction"], "DRAM": x["dram_busy_fraction"]}
    clock = measured["extra"]["sm_clock_mhz"]
    dram_m = measured["dram_read_bytes"]
    return {
        "time_error": predicted["time_ms"] / measured["time_ms"] - 1,
        "dram_error": predicted["dram_read_bytes"] / dram_m - 1 if dram_m > 0 else 0.0,
        "bound": max(busy, key=busy.get),
        "busy": busy,
        "launch": "persistent" if k["persistent"] else "one CTA per tile",
        "tile": f"{k['tile']['m']}x{k['tile']['n']}",
        "clock": "< 1550 MHz" if clock < 1550 else "> 1750 MHz" if clock > 1750 else "1550-1750 MHz",
        "dataset": dataset,
    }


def report(rows, key, label):
    total = sum(r["time_error"] for r in rows)
    print(f"\nby {label}:")
    for value in sorted({key(r) for r in rows}):
        group = [r for r in rows if key(r) == value]
        signed = sum(r["time_error"] for r in group)
        print(f"  {value:28s} {len(group):4d} configurations  mean {100 * signed / len(group):+6.1f}%  "
              f"MAPE {100 * statistics.mean(abs(r['time_error']) for r in group):5.1f}%  "
              f"share of the bias {100 * signed / total:5.1f}%")


def main():
    if len(sys.argv) < 5:
        sys.exit("usage: bias_decomposition.py TILESIM PROFILE PART DATASET [DATASET ...]")
    tilesim, profile_path, part = sys.argv[1], sys.argv[2], sys.argv[3]
    if part not in ("calibration", "held-back", "all"):
        sys.exit(f"{part}: PART must be calibration, held-back or all")
    profile = json.load(open(profile_path))
    jobs = []
    for folder in sys.argv[4:]:
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".json"):
                continue
            stem = name[:-5]
            if part != "all" and held_back(stem) != (part == "held-back"):
                continue
            jobs.append((os.path.basename(os.path.normpath(folder)), os.path.join(folder, name)))
    rows = []
    with tempfile.TemporaryDirectory() as workdir, concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:
        futures = [(dataset, pool.submit(simulate, tilesim, profile, path, workdir)) for dataset, path in jobs]
        for dataset, future in futures:
            stem, measured, predicted = future.result()
            row = row_of(dataset, measured, predicted)
            row["id"] = stem
            rows.append(row)
    print(f"{part}: {len(rows)} configurations of {', '.join(sys.argv[4:])}, each at its recorded clock; "
          f"bias {100 * statistics.mean(r['time_error'] for r in rows):+.1f}%, "
          f"time MAPE {100 * statistics.mean(abs(r['time_error']) for r in rows):.1f}%")
    report(rows, lambda r: r["bound"], "what binds in the model (busiest server)")
    report(rows, lambda r: r["launch"], "launch")
    report(rows, lambda r: r["tile"], "tile")
    report(rows, lambda r: f"{r['launch']}, {r['tile']}", "launch and tile")
    report(rows, lambda r: r["clock"], "recorded clock")
    report(rows, lambda r: r["dataset"], "dataset")
    report(rows, lambda r: "DRAM within 15%" if abs(r["dram_error"]) <= 0.15 else
           "DRAM > 15% low" if r["dram_error"] < 0 else "DRAM > 15% high", "the model's DRAM reads")
    report(rows, lambda r: f"{r['launch']}, {r['tile']}, " + ("DRAM ok" if abs(r["dram_error"]) <= 0.15 else "DRAM off"),
           "launch, tile and DRAM")
    print("\nper configuration (time error, DRAM read error, tensor / L2 / DRAM busy in the model):")
    for r in sorted(rows, key=lambda r: r["time_error"]):
        b = r["busy"]
        print(f"  {r['id']:52s} {100 * r['time_error']:+6.1f}%  DRAM {100 * r['dram_error']:+6.1f}%  "
              f"busy {b['tensor']:.2f} / {b['L2']:.2f} / {b['DRAM']:.2f}")


if __name__ == "__main__":
    main()
