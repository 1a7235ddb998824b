#!/usr/bin/env bash
# Issue 20, the 128 x 128 transposed kernel with every wgmma instruction of its stage (wait, fence,
# issue, commit) outside the per-warp one/two-multiply branch (kernels/mxfp8/NOTES.md, "wgmma outside
# the per-warp branch"): the H100 device call that checked and measured it. From the repository root,
# with the binaries built here carried in BIN_DIR (mxfp8_gemm_check, mxfp8_stage_rate, tilesim-measure,
# libtilesim_mxfp8_capi.so, libtilesim_grouped_gemm_capi.so):
#   validation/data/h100/mxfp8/wgmma_outside_branch/device_call.sh BIN_DIR OUT_DIR
# Every step runs whatever the check says, so that a failure comes back with everything else: the
# quick check, compute-sanitizer memcheck of it, the full check (the 128 x 128 cases with NaN codes
# and with persistent CTAs running 2-3 tiles among them), resources; the stage rate 3 times; the
# benchmark of every scheme with our bf16 interleaved, twice (run_device_gemm.sh's way); the 7
# t128n128 dataset configurations (tilesim-measure, 25 runs, 3 warm-up). OUT_DIR/all.tgz holds it all.
set -u -o pipefail
bin="$(cd "${1:?usage: device_call.sh BIN_DIR OUT_DIR}" && pwd)"
out="${2:?usage: device_call.sh BIN_DIR OUT_DIR}"
here=validation/data/h100/mxfp8/wgmma_outside_branch
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}:$bin"
mkdir -p "$out/run/measured"
run="$out/run"
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
  echo "== mxfp8_gemm_check --quick"
  timeout 60 "$bin/mxfp8_gemm_check" --quick; echo "exit $?"
  echo "== compute-sanitizer memcheck: mxfp8_gemm_check --quick"
  timeout 150 compute-sanitizer --tool memcheck --print-limit 5 "$bin/mxfp8_gemm_check" --quick | tail -n 3
  echo "== mxfp8_gemm_check (full)"
  timeout 150 "$bin/mxfp8_gemm_check"; echo "exit $?"
  echo "== resources"
  cuobjdump --dump-resource-usage "$bin/mxfp8_gemm_check" | grep -A1 'transposed_wide'
  date -u
} > "$run/checks.log" 2>&1
grep -E "^(FAIL|PASS)|^exit|ERROR SUMMARY|REG:" "$run/checks.log"
for r in 1 2 3; do timeout 120 "$bin/mxfp8_stage_rate" --reps 50 > "$run/mxfp8_stage_rate_run$r.json"; done
grep -h '"tile_m": 128, "tile_n": 128, "tile_k": 128, "stages": 4' "$run"/mxfp8_stage_rate_run*.json | grep transposed
for r in 1 2; do
  PYTHONUNBUFFERED=1 timeout 240 python3 kernels/mxfp8/bench_gemm.py --mxfp8-lib "$bin/libtilesim_mxfp8_capi.so" \
    --bf16-lib "$bin/libtilesim_grouped_gemm_capi.so" --out "$run/bench_gemm_run$r.json" --reps 30 \
    --command "$here/device_call.sh BIN_DIR OUT_DIR: python3 kernels/mxfp8/bench_gemm.py --reps 30 (run $r of 2)" \
    > "$run/bench_run$r.log" 2>&1
done
tail -n 12 "$run/bench_run1.log"
{
  for spec in validation/data/h100/mxfp8/specs/g_*t128n128*.json; do
    id=$(basename "$spec" .json)
    if timeout 60 "$bin/tilesim-measure" --kernel "$spec" --runs 25 --warmup 3 --out "$run/measured/$id.json" 2>"$run/measured/$id.log"; then
      echo "ok $id $(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['time_ms'], r['tflops'], r['dram_read_bytes'], r['l2_hit_rate'])" "$run/measured/$id.json")"
      rm -f "$run/measured/$id.log"
    else
      echo "FAILED $id: $(tail -n 1 "$run/measured/$id.log")"
    fi
  done
  date -u
} > "$run/dataset.log" 2>&1
cat "$run/dataset.log"
tar -czf "$out/all.tgz" -C "$out" run
