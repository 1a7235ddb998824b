#!/usr/bin/env bash
# Issue 20: the 6 dataset configurations of xpass_f16's 128 x 256 tile (validation/data/h100/mxfp8/specs/g_*_xw.json,
# 3 stages) measured on the H100, the first measurements the model's time for that tile is scored against.
# From the repository root, with tilesim-measure and mxfp8_gemm_check built from that tree carried in BIN_DIR:
#   validation/data/h100/mxfp8/xpass_f16_wide/dataset_call.sh BIN_DIR OUT_DIR
# Steps: the quick check (the 128 x 256 cases among them); the 6 configurations with the dataset's own flags
# (tilesim-measure --runs 25 --warmup 3), whose files go to measured/; then each of the 6 again beside its 128 x 128
# twin (specs/*_xh.json), alternating, kept only as run-to-run spread and a same-run comparison of the two tiles.
# OUT_DIR/all.tgz holds it all.
set -u -o pipefail
bin="$(cd "${1:?usage: dataset_call.sh BIN_DIR OUT_DIR}" && pwd)"
out="${2:?usage: dataset_call.sh BIN_DIR OUT_DIR}"
specs=validation/data/h100/mxfp8/specs
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}:$bin"
run="$out/run"
mkdir -p "$run/measured" "$run/repeat"
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.limit --format=csv
  sha256sum "$bin"/*
  echo "== mxfp8_gemm_check --quick"
  timeout 90 "$bin/mxfp8_gemm_check" --quick; echo "exit $?"
  date -u
} > "$run/checks.log" 2>&1
grep -E "^(FAIL|exit)|128x256" "$run/checks.log" | head -20
measure() {  # $1: spec, $2: folder under $run
  local id
  id=$(basename "$1" .json)
  if timeout 60 "$bin/tilesim-measure" --kernel "$1" --runs 25 --warmup 3 --out "$run/$2/$id.json" 2>"$run/$2/$id.log"; then
    echo "ok $id $(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['time_ms'], r['tflops'], r['dram_read_bytes'], r['l2_hit_rate'], r['extra']['sm_clock_mhz'])" "$run/$2/$id.json")"
    rm -f "$run/$2/$id.log"
  else
    echo "FAILED $id: $(tail -n 1 "$run/$2/$id.log")"
  fi
}
if grep -q '^exit 0' "$run/checks.log"; then
  {
    date -u
    echo "== dataset: id time_ms tflops dram_read_bytes l2_hit_rate sm_clock_mhz"
    for spec in "$specs"/g_*_xw.json; do measure "$spec" measured; done
    date -u
    echo "== repeat (spread only): each 128 x 256 configuration, then its 128 x 128 twin"
    for spec in "$specs"/g_*_xw.json; do
      measure "$spec" repeat
      base=$(basename "$spec" _xw.json)
      measure "$(ls "$specs/${base/_s3_/_s4_}_xh.json" "$specs/${base}_xh.json" 2>/dev/null | head -n 1)" repeat
    done
    date -u
  } > "$run/dataset.log" 2>&1
  cat "$run/dataset.log"
else
  echo "quick check failed: nothing measured"
fi
tar -czf "$out/all.tgz" -C "$out" run
