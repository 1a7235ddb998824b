#!/usr/bin/env bash
# Issue 20, scheme xpass_f16 (kernels/mxfp8/NOTES.md, "f16 with a reference exponent a row"): the H100 device
# call that checks and measures it. From the repository root, with the binaries built here carried in BIN_DIR
# (mxfp8_gemm_check, mxfp8_stage_rate, tilesim-measure, libtilesim_mxfp8_capi.so, libtilesim_grouped_gemm_capi.so,
# and base_mxfp8_gemm_check: HEAD's build of the check, for the SASS comparison):
#   validation/data/h100/mxfp8/xpass_f16/device_call.sh BIN_DIR OUT_DIR
# Steps: quick check, compute-sanitizer memcheck of it, full check, resources; the SASS of every kernel against
# HEAD's build, the xpass_f16 consumer's SASS kept, sass_wgmma_branches.py; the stage rate twice (event times
# only); the benchmark of every scheme with our bf16 and torch._scaled_mm interleaved, twice; the pre-registered
# rule (the fifth call's: narrow_rule.py against call3/); only if it adopts, the 9 xpass_f16 dataset twins
# (tilesim-measure, 25 runs, 3 warm-up).
# OUT_DIR/all.tgz holds it all.
set -u -o pipefail
bin="$(cd "${1:?usage: device_call.sh BIN_DIR OUT_DIR}" && pwd)"
out="${2:?usage: device_call.sh BIN_DIR OUT_DIR}"
here=validation/data/h100/mxfp8/xpass_f16
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}:$bin"
run="$out/run"
mkdir -p "$run/measured"
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
  sha256sum "$bin"/*
  echo "== mxfp8_gemm_check --quick"
  timeout 90 "$bin/mxfp8_gemm_check" --quick; echo "exit $?"
  echo "== compute-sanitizer memcheck: mxfp8_gemm_check --quick"
  timeout 240 compute-sanitizer --tool memcheck --print-limit 5 "$bin/mxfp8_gemm_check" --quick | tail -n 3
  echo "== mxfp8_gemm_check (full)"
  timeout 180 "$bin/mxfp8_gemm_check"; echo "exit $?"
  echo "== resources"
  cuobjdump --dump-resource-usage "$bin/mxfp8_gemm_check" | grep -A1 'transposed_xpass'
  date -u
} > "$run/checks.log" 2>&1
grep -E "^(FAIL|PASS)|^exit|ERROR SUMMARY|REG:|xpass_f16 conversion" "$run/checks.log" | head -30
cuobjdump -sass "$bin/mxfp8_gemm_check" > "$run/gemm_check.sass" 2>&1
cuobjdump -sass "$bin/base_mxfp8_gemm_check" > "$run/base_gemm_check.sass" 2>&1
python3 kernels/mxfp8/sass_wgmma_branches.py "$run/gemm_check.sass" > "$run/sass_wgmma_branches.txt" 2>&1
echo "sass_wgmma_branches exit $?: $(tail -n 1 "$run/sass_wgmma_branches.txt")" | tee -a "$run/checks.log"
python3 "$here/sass_compare.py" "$run/base_gemm_check.sass" "$run/gemm_check.sass" "$run/xpass_f16_kernel.sass" \
  > "$run/sass_compare.txt" 2>&1
cat "$run/sass_compare.txt"
rm -f "$run/gemm_check.sass" "$run/base_gemm_check.sass"
for r in 1 2; do
  timeout 150 "$bin/mxfp8_stage_rate" --reps 50 --counted 0 > "$run/stage_rate_run$r.json"
  echo "stage run $r exit $?"; grep -h '"xpass' "$run/stage_rate_run$r.json" | tr -s ' ' | cut -c1-220
done
for r in 1 2; do
  PYTHONUNBUFFERED=1 timeout 240 python3 kernels/mxfp8/bench_gemm.py --mxfp8-lib "$bin/libtilesim_mxfp8_capi.so" \
    --bf16-lib "$bin/libtilesim_grouped_gemm_capi.so" --out "$run/bench_gemm_run$r.json" --reps 30 \
    --command "$here/device_call.sh BIN_DIR OUT_DIR: python3 kernels/mxfp8/bench_gemm.py --reps 30 (run $r of 2)" \
    > "$run/bench_run$r.log" 2>&1
  echo "bench run $r exit $?"; tail -n 7 "$run/bench_run$r.log"
done
python3 "$here/narrow_rule.py" "$here/call3" "$run" > "$run/rule.txt" 2>&1
cat "$run/rule.txt"
if grep -q '^ADOPTED' "$run/rule.txt"; then
  {
    for spec in validation/data/h100/mxfp8/specs/g_*_xh.json; do
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
fi
date -u >> "$run/checks.log"
tar -czf "$out/all.tgz" -C "$out" run
