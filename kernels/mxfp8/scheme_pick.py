#!/usr/bin/env python3
"""The model's pick of MXFP8 scheme on the benchmark's six shapes against the measured winner.

For each shape of a bench_gemm.py result, each scheme is predicted (`tilesim whatif`, at the profile's
clock) at the configuration that benchmark run chose for it (ring depth, order, grid mode, transposed
tile), with the spec make_mxfp8_specs.py would write for it; the pick is the fastest prediction, the
winner the fastest measured median. Prints one line a shape and the count of agreements (issue 20's bar:
at least 5 of 6).

    kernels/mxfp8/scheme_pick.py validation/data/h100/mxfp8/wgmma_outside_branch/bench_gemm_run1.json build/sim/tilesim
"""
import json
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "validation" / "measure"))
import make_mxfp8_specs  # noqa: E402  (the dataset's own spec writer)

SCHEMES = ("promote", "dequantize", "transposed", "xpass", "xpass_f16")


def spec_of(record, scheme):
    """make_mxfp8_specs' spec for `record`'s shape at its `<scheme>_config`, e.g. transposed/t128/n128/s3/row_major/persistent
    (xpass's and xpass_f16's tile is written the same way)."""
    parts = record[f"{scheme}_config"].split("/")[1:]
    tile_m, tile_n = 128, 64
    if scheme in ("transposed", "xpass", "xpass_f16"):
        tile_m, parts = int(parts[0][1:]), parts[1:]
        if parts[0].startswith("n"):
            tile_n, parts = int(parts[0][1:]), parts[1:]
    stages, order, grid = int(parts[0][1:]), parts[1], parts[2]
    experts = [record["tokens_per_expert"]] * record["experts"]
    _, spec = make_mxfp8_specs.gemm(record["shape"], experts, record["n"], record["k"], order,
                                    persistent=grid == "persistent", stages=stages, scheme=scheme, tile_m=tile_m,
                                    tile_n=tile_n)
    return spec, order


def predict(tilesim, spec, order, folder):
    path = pathlib.Path(folder) / f"{spec['name']}_{spec['block_scale']['scheme']}.json"
    path.write_text(json.dumps(spec))
    run = subprocess.run([tilesim, "whatif", "--kernel", str(path), "--orders", order, "--threads", "1"], cwd=ROOT,
                         capture_output=True, text=True)
    found = re.search(r"^[\s*]*%s\s+([0-9.]+)" % re.escape(order), run.stdout, re.M)
    if run.returncode != 0 or not found:
        sys.exit(f"scheme_pick.py: tilesim whatif on {spec['name']} ({order}) gave no time: {run.stderr.strip()}")
    return float(found.group(1))


def main(argv):
    if len(argv) != 3:
        sys.exit("usage: scheme_pick.py BENCH_GEMM_JSON TILESIM")
    try:
        records = json.load(open(argv[1]))["records"]
    except (OSError, ValueError, KeyError) as error:
        sys.exit(f"scheme_pick.py: {argv[1]}: not a bench_gemm.py result with 'records' ({error}); give bench_gemm.py's --out file")
    agree = 0
    with tempfile.TemporaryDirectory() as folder:
        for record in records:
            predicted, measured = {}, {}
            for scheme in SCHEMES:
                if f"{scheme}_config" not in record:
                    sys.exit(f"scheme_pick.py: {argv[1]}: shape {record.get('shape')} has no {scheme}_config; give a run of every scheme")
                spec, order = spec_of(record, scheme)
                predicted[scheme] = predict(argv[2], spec, order, folder)
                measured[scheme] = record[f"{scheme}_median_ms"]
            pick, winner = min(predicted, key=predicted.get), min(measured, key=measured.get)
            agree += pick == winner
            print(f"{record['shape']:20s} predicted ms " + " / ".join(f"{predicted[s]:.3f}" for s in SCHEMES) +
                  "  measured " + " / ".join(f"{measured[s]:.3f}" for s in SCHEMES) +
                  f"  ({' / '.join(SCHEMES)}): pick {pick}, winner {winner}")
    print(f"the pick matches the measured winner on {agree} of {len(records)} shapes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
