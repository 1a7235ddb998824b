#!/usr/bin/env bash
# Issue 20, scheme xpass (kernels/mxfp8/NOTES.md, "X dequantised once"): the H100 device call that checks
# and measures it. From the repository root, with the binaries built here carried in BIN_DIR
# (mxfp8_gemm_check, mxfp8_stage_rate, tilesim-measure, libtilesim_mxfp8_capi.so,
# libtilesim_grouped_gemm_capi.so):
#   validation/data/h100/mxfp8/xpass/device_call.sh BIN_DIR OUT_DIR
# Every step runs whatever the one before found, so that a failure comes back with everything else: the
# quick check, compute-sanitizer memcheck of it, the full check (the 10 xpass cases among them), resources
# and SASS with sass_wgmma_branches.py; the stage rate twice; the benchmark of every scheme with our bf16
# and torch._scaled_mm interleaved, twice; then the pre-registered rule (xpass the fastest scheme on some
# shape in both runs), and only if it holds, the 9 xpass dataset configurations (tilesim-measure, 25
# runs, 3 warm-up). OUT_DIR/all.tgz holds it all.
set -u -o pipefail
bin="$(cd "${1:?usage: device_call.sh BIN_DIR OUT_DIR}" && pwd)"
out="${2:?usage: device_call.sh BIN_DIR OUT_DIR}"
here=validation/data/h100/mxfp8/xpass
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}:$bin"
run="$out/run"
mkdir -p "$run/measured"
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
  echo "== mxfp8_gemm_check --quick"
  timeout 90 "$bin/mxfp8_gemm_check" --quick; echo "exit $?"
  echo "== compute-sanitizer memcheck: mxfp8_gemm_check --quick"
  timeout 200 compute-sanitizer --tool memcheck --print-limit 5 "$bin/mxfp8_gemm_check" --quick | tail -n 3
  echo "== mxfp8_gemm_check (full)"
  timeout 150 "$bin/mxfp8_gemm_check"; echo "exit $?"
  echo "== resources"
  cuobjdump --dump-resource-usage "$bin/mxfp8_gemm_check" | grep -A1 'transposed_wide\|transposed_xpass'
  date -u
} > "$run/checks.log" 2>&1
grep -E "^(FAIL|PASS)|^exit|ERROR SUMMARY|REG:|xpass" "$run/checks.log" | head -40
cuobjdump -sass "$bin/mxfp8_gemm_check" > "$run/gemm_check.sass" 2>&1
python3 kernels/mxfp8/sass_wgmma_branches.py "$run/gemm_check.sass" > "$run/sass_wgmma_branches.txt" 2>&1
echo "sass_wgmma_branches exit $?: $(tail -n 1 "$run/sass_wgmma_branches.txt")"
gzip -9 "$run/gemm_check.sass"
for r in 1 2; do timeout 150 "$bin/mxfp8_stage_rate" --reps 50 > "$run/mxfp8_stage_rate_run$r.json"; done
grep -h '"tile_n": 128' "$run"/mxfp8_stage_rate_run*.json
for r in 1 2; do
  PYTHONUNBUFFERED=1 timeout 300 python3 kernels/mxfp8/bench_gemm.py --mxfp8-lib "$bin/libtilesim_mxfp8_capi.so" \
    --bf16-lib "$bin/libtilesim_grouped_gemm_capi.so" --out "$run/bench_gemm_run$r.json" --reps 30 \
    --command "$here/device_call.sh BIN_DIR OUT_DIR: python3 kernels/mxfp8/bench_gemm.py --reps 30 (run $r of 2)" \
    > "$run/bench_run$r.log" 2>&1
  tail -n 7 "$run/bench_run$r.log"
done
# The rule: xpass's median below every other scheme's on at least one shape, in both runs.
python3 - "$run/bench_gemm_run1.json" "$run/bench_gemm_run2.json" > "$run/rule.txt" 2>&1 <<'EOF'
import json, sys
wins = []
for path in sys.argv[1:]:
    records = json.load(open(path))["records"]
    won = {r["shape"] for r in records
           if all(r["xpass_median_ms"] < r[f"{s}_median_ms"] for s in ("promote", "dequantize", "transposed"))}
    for r in records:
        print(path.split("/")[-1], r["shape"], "xpass", r["xpass_median_ms"], "gemm only", r["xpass_gemm_only_ms"],
              "promote", r["promote_median_ms"], "transposed", r["transposed_median_ms"], "bf16", r["bf16_median_ms"],
              "xpass/bf16", r["xpass_vs_bf16"])
    wins.append(won)
both = sorted(wins[0] & wins[1]) if len(wins) == 2 else []
print("xpass fastest in both runs on:", both)
print("KEPT" if both else "NOT KEPT")
EOF
cat "$run/rule.txt"
if grep -q '^KEPT' "$run/rule.txt"; then
  {
    for spec in validation/data/h100/mxfp8/specs/g_*_xp.json; do
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
tar -czf "$out/all.tgz" -C "$out" run
