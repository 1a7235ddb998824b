#!/usr/bin/env bash
# Issue 20: the 9 xpass dataset configurations (validation/data/h100/mxfp8/specs/g_*_xp.json) measured again
# with the kernel of 5de35a4 ("xpass's W as 16-byte units"); their earlier files held 9c81b8e's kernel.
# From the repository root, with tilesim-measure and mxfp8_gemm_check built from that tree carried in BIN_DIR:
#   validation/data/h100/mxfp8/xpass_remeasure/device_call.sh BIN_DIR OUT_DIR
# Steps: the quick check (every scheme's cases, xpass's among them); the 9 configurations with the dataset's
# own flags (tilesim-measure --runs 25 --warmup 3), whose files replace those under measured/; then the
# same 9 once more in the same process order, kept only as a measure of run-to-run spread.
# OUT_DIR/all.tgz holds it all.
set -u -o pipefail
bin="$(cd "${1:?usage: device_call.sh BIN_DIR OUT_DIR}" && pwd)"
out="${2:?usage: device_call.sh BIN_DIR OUT_DIR}"
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
grep -E "^(FAIL|exit)|xpass" "$run/checks.log" | head -20
measure_all() {  # $1: folder under $run
  for spec in validation/data/h100/mxfp8/specs/g_*_xp.json; do
    id=$(basename "$spec" .json)
    if timeout 60 "$bin/tilesim-measure" --kernel "$spec" --runs 25 --warmup 3 --out "$run/$1/$id.json" 2>"$run/$1/$id.log"; then
      echo "ok $id $(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['time_ms'], r['tflops'], r['dram_read_bytes'], r['l2_hit_rate'], r['extra']['sm_clock_mhz'])" "$run/$1/$id.json")"
      rm -f "$run/$1/$id.log"
    else
      echo "FAILED $id: $(tail -n 1 "$run/$1/$id.log")"
    fi
  done
}
if grep -q '^exit 0' "$run/checks.log"; then
  {
    date -u
    echo "== dataset: id time_ms tflops dram_read_bytes l2_hit_rate sm_clock_mhz"
    measure_all measured
    date -u
    echo "== repeat (spread only)"
    measure_all repeat
    date -u
  } > "$run/dataset.log" 2>&1
  cat "$run/dataset.log"
else
  echo "quick check failed: nothing measured"
fi
tar -czf "$out/all.tgz" -C "$out" run
