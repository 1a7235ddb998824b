#!/usr/bin/env bash
# Issue 20, the MXFP8 stage in cycles (kernels/mxfp8/NOTES.md, "The stage in cycles"): the H100 device call.
# From the repository root, with mxfp8_stage_rate built here (it links CUPTI through tilesim_measure) carried
# in BIN_DIR:
#   validation/data/h100/mxfp8/stage_cycles/device_call.sh BIN_DIR OUT_DIR
# Three runs of the stage rate, every variant, each with its launches' SM cycles and clock from CUPTI;
# nvidia-smi's clocks before and after. OUT_DIR/all.tgz holds it all.
set -u -o pipefail
bin="$(cd "${1:?usage: device_call.sh BIN_DIR OUT_DIR}" && pwd)"
out="${2:?usage: device_call.sh BIN_DIR OUT_DIR}"
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}:$bin"
run="$out/run"
mkdir -p "$run"
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
  for r in 1 2 3; do
    timeout 75 "$bin/mxfp8_stage_rate" --reps 50 --counted 11 > "$run/stage_cycles_run$r.json"
    echo "run $r exit $?"
    date -u
  done
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
} > "$run/call.log" 2>&1
cat "$run/call.log"
grep -h '"scheme"' "$run"/stage_cycles_run*.json | sed 's/"ms_k1.*ns_per_stage/ns/' | cut -c1-260
tar -czf "$out/all.tgz" -C "$run" .
