#!/usr/bin/env bash
# Issue 20, the MXFP8 stage with the whole chip busy (kernels/mxfp8/NOTES.md, "The stage with the whole chip busy"):
# the H100 device call. From the repository root, with mxfp8_stage_rate built here carried in BIN_DIR:
#   validation/data/h100/mxfp8/chip_stage/device_call.sh BIN_DIR OUT_DIR
# Steps: the stage rate as the profile's figures were taken (--ctas few, 16 CTAs of 128 x 128, event times), then
# twice with one tile on every SM (--ctas chip; the second run also counts each launch's SM cycles and clock with
# CUPTI, 5 launches a depth). OUT_DIR/all.tgz holds it all.
set -u -o pipefail
bin="$(cd "${1:?usage: device_call.sh BIN_DIR OUT_DIR}" && pwd)"
out="${2:?usage: device_call.sh BIN_DIR OUT_DIR}"
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}:$bin"
run="$out/run"
mkdir -p "$run"
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
  sha256sum "$bin"/mxfp8_stage_rate
} > "$run/call.log" 2>&1
step() { # name, then the stage rate's arguments
  local name=$1; shift
  local t0=$(date +%s)
  timeout 150 "$bin/mxfp8_stage_rate" "$@" > "$run/$name.json" 2> "$run/$name.err"
  echo "$name ($*): exit $?, $(( $(date +%s) - t0 )) s" | tee -a "$run/call.log"
}
step stage_few --reps 50 --counted 0 --ctas few
step stage_chip_run1 --reps 50 --counted 0 --ctas chip
step stage_chip_run2 --reps 50 --counted 5 --ctas chip
date -u >> "$run/call.log"
for f in "$run"/stage_*.json; do echo "== $(basename "$f")"; grep -o '"scheme[^}]*ns_per_stage": [0-9.]*' "$f" |
  sed -E 's/"tile_k[^}]*"ctas"/ ctas/; s/"k1.*"ns_per_stage"/ ns/'; done
tar -czf "$out/all.tgz" -C "$out" run
