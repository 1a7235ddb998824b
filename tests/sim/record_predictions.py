#!/usr/bin/env python3
"""Records the predictions tests/sim/recorded_predictions_test.cpp checks against.

Run from the repository root with the tilesim binary to record from, e.g. a build of the commit
whose predictions are the reference:
    python3 tests/sim/record_predictions.py BUILD/sim/tilesim > tests/sim/recorded_predictions.json
Each configuration's spec is stored inline, so later edits to the spec files do not move it.
"""
import json
import subprocess
import sys
import tempfile

# (gpu, spec file, kernel field of a result file or None): one of each kind of run the Hopper
# GEMM model makes. No Blackwell: its kernel model is being replaced on purpose.
CONFIGURATIONS = [
    ("h100", "models/kernels/dense_8192.json", None),  # the tilesim_bench replay: cluster 1, persistent
    ("h100", "models/kernels/default.json", None),  # the default what-if: E=256, cluster 1
    ("h100", "validation/data/h100/specs/e64x512_t128x128_p_grouped_m8.json", None),  # E=64, cluster 2
    ("h100", "validation/data/h100/specs/zipf64_t128x256_p_hilbert.json", None),  # Zipf routing
    ("h100", "validation/data/h100/specs/e8x2048_t128x256_p_grouped_n8.json", None),  # cluster 2, W shared
    ("h100", "validation/data/h100/specs/dense4096_t128x128_np_row_major.json", None),  # non-persistent
    ("h100", "validation/data/h100/specs/e128x128_t128x256_np_interleaved.json", None),  # non-persistent MoE
    ("a100", "validation/data/a100/mamf_v1_bf16_6912x2048x16384.json", "kernel"),  # A100, cp.async
]

SPEC_KEYS_DROPPED = ("command",)  # notes beside a dataset spec, not part of the kernel


def main():
    tilesim = sys.argv[1]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=None).stdout.strip()
    out = {
        "about": "Predictions of the simulator at the commit named below, for tests/sim/recorded_predictions_test.cpp: "
                 "a speed-up of the replay must leave them within tolerance (issue 13).",
        "command": "python3 tests/sim/record_predictions.py " + tilesim,
        "commit": commit,
        "tolerance": {"time_ms": 0.005, "dram_read_bytes": 0.005, "dram_write_bytes": 0.005, "l2_hit_rate_points": 0.5},
        "configurations": [],
    }
    for gpu, path, field in CONFIGURATIONS:
        with open(path) as f:
            spec = json.load(f)
        if field:
            spec = spec[field]
        for key in SPEC_KEYS_DROPPED:
            spec.pop(key, None)
        with tempfile.NamedTemporaryFile("w", suffix=".json") as spec_file, \
                tempfile.NamedTemporaryFile("r", suffix=".json") as result_file:
            json.dump(spec, spec_file)
            spec_file.flush()
            subprocess.run([tilesim, "simulate", "--gpu", gpu, "--kernel", spec_file.name, "--out", result_file.name],
                           check=True, stdout=subprocess.DEVNULL)
            r = json.load(open(result_file.name))
        out["configurations"].append({
            "from": path, "gpu": gpu, "spec": spec,
            "time_ms": r["time_ms"], "dram_read_bytes": r["dram_read_bytes"],
            "dram_write_bytes": r["dram_write_bytes"], "l2_hit_rate": r["l2_hit_rate"],
        })
        print(f"{gpu} {path}: {r['time_ms']:.4f} ms", file=sys.stderr)
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
