#!/usr/bin/env bash
# Where a GEMM tile's time goes beyond its MMAs (validation/NOTES.md, issue 16): the grouped GEMM
# kernel itself, dense 8192 x 8192, grouped_m:8, clusters of two, traced (every tile's start and
# end on its SM, kernels/common/tile_trace.h) at K = 1024 ... 8192, persistent and not, both
# tiles. A tile's duration against its K steps splits into what every K step costs (the slope)
# and what every tile costs once (the intercept: the epilogue, the wgmma drain, the accumulators'
# zeroing); the gap between a persistent CTA's tiles is the consumers' own tile scheduler call.
#
# Usage: validation/microbench/tile_phase_probe.sh MEASURE_BINARY OUT_DIR
# Writes OUT_DIR/specs/*.json and OUT_DIR/results/*.json (tilesim.result/1 with tiles).
set -euo pipefail
measure=$1
out=$2
mkdir -p "$out/specs" "$out/results"
python3 - "$out/specs" <<'PY'
import json, sys
out = sys.argv[1]
cases = [(True, 256, k) for k in (1024, 2048, 4096, 8192)] + [(True, 128, k) for k in (1024, 4096, 8192)] + \
        [(False, 256, k) for k in (1024, 8192)] + [(False, 128, k) for k in (1024, 4096)]
for persistent, tile_n, k in cases:
    name = f"dense8192_k{k}_t128x{tile_n}_{'p' if persistent else 'np'}_grouped_m8"
    spec = {"name": name, "dtype": "bf16", "kind": "gemm", "m": 8192, "n": 8192, "k": k,
            "layout": {"a": "row", "b": "col"}, "tile": {"m": 128, "n": tile_n, "k": 64},
            "stages": 4 if tile_n == 256 else 6, "warps": 12, "load": "tma", "persistent": persistent,
            "cluster": 2, "order": "grouped_m:8",
            "command": "validation/microbench/tile_phase_probe.sh (writes this spec and measures it)"}
    json.dump(spec, open(f"{out}/{name}.json", "w"))
PY
for spec in "$out"/specs/*_p_*.json "$out"/specs/*_np_*.json; do
  id=$(basename "$spec" .json)
  "$measure" --kernel "$spec" --runs 10 --warmup 3 --counter-launches 3 --trace --out "$out/results/$id.json" >/dev/null ||
    echo "FAILED $id"
  echo "$id done"
done
