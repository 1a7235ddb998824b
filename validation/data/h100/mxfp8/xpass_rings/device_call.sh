#!/usr/bin/env bash
# Issue 20, xpass at its stage rate (kernels/mxfp8/NOTES.md, "xpass inside the GEMM"): the H100 device call
# that diagnoses E = 128 x 128's xpass GEMM and measures the split-ring variant against the committed kernel.
# From the repository root, with two builds carried: BASE_DIR (the committed xpass kernel) and VAR_DIR (the
# split rings), each holding mxfp8_gemm_check, mxfp8_stage_rate, tilesim-measure,
# libtilesim_mxfp8_capi.so and libtilesim_grouped_gemm_capi.so:
#   validation/data/h100/mxfp8/xpass_rings/device_call.sh BASE_DIR VAR_DIR OUT_DIR
# Steps: the variant's quick check, compute-sanitizer memcheck of it, its full check, resources and
# sass_wgmma_branches.py; the stage rate base/variant interleaved, twice; the benchmark of every scheme
# with our bf16 interleaved, base, variant, base, variant; Nsight Compute on one E = 128 x 128 xpass GEMM
# launch of each (boost clock left alone); tilesim-measure --trace of E = 128 x 128 with each; the
# pre-registered rule; the 9 xpass dataset configurations with the variant only if the rule adopts it.
# OUT_DIR/all.tgz holds it all.
set -u -o pipefail
base="$(cd "${1:?usage: device_call.sh BASE_DIR VAR_DIR OUT_DIR}" && pwd)"
var="$(cd "${2:?usage: device_call.sh BASE_DIR VAR_DIR OUT_DIR}" && pwd)"
out="${3:?usage: device_call.sh BASE_DIR VAR_DIR OUT_DIR}"
here=validation/data/h100/mxfp8/xpass_rings
cuda_libs="/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}"
run="$out/run"
mkdir -p "$run/measured"
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
  echo "== variant: mxfp8_gemm_check --quick"
  timeout 90 env LD_LIBRARY_PATH="$cuda_libs:$var" "$var/mxfp8_gemm_check" --quick; echo "exit $?"
  echo "== variant: compute-sanitizer memcheck mxfp8_gemm_check --quick"
  timeout 200 env LD_LIBRARY_PATH="$cuda_libs:$var" compute-sanitizer --tool memcheck --print-limit 5 "$var/mxfp8_gemm_check" --quick | tail -n 3
  echo "== variant: mxfp8_gemm_check (full)"
  timeout 150 env LD_LIBRARY_PATH="$cuda_libs:$var" "$var/mxfp8_gemm_check"; echo "exit $?"
  echo "== variant: resources"
  cuobjdump --dump-resource-usage "$var/mxfp8_gemm_check" | grep -A1 'transposed_xpass'
  date -u
} > "$run/checks.log" 2>&1
grep -E "^(FAIL|PASS)|^exit|ERROR SUMMARY|REG:" "$run/checks.log" | head -20
cuobjdump -sass "$var/mxfp8_gemm_check" > "$run/gemm_check.sass" 2>&1
python3 kernels/mxfp8/sass_wgmma_branches.py "$run/gemm_check.sass" > "$run/sass_wgmma_branches.txt" 2>&1
echo "sass_wgmma_branches exit $?: $(tail -n 1 "$run/sass_wgmma_branches.txt")"
rm -f "$run/gemm_check.sass"
for r in 1 2; do
  for v in base var; do
    d=$base; [ $v = var ] && d=$var
    timeout 150 env LD_LIBRARY_PATH="$cuda_libs:$d" "$d/mxfp8_stage_rate" --reps 50 > "$run/stage_rate_${v}_run$r.json"
    echo "stage $v run $r: $(grep -h '"xpass"' "$run/stage_rate_${v}_run$r.json" | tr -s ' ' | cut -c1-220)"
  done
done
for r in 1 2; do
  for v in base var; do
    d=$base; [ $v = var ] && d=$var
    PYTHONUNBUFFERED=1 LD_LIBRARY_PATH="$cuda_libs:$d" timeout 200 python3 kernels/mxfp8/bench_gemm.py --mxfp8-lib "$d/libtilesim_mxfp8_capi.so" \
      --bf16-lib "$d/libtilesim_grouped_gemm_capi.so" --out "$run/bench_${v}_run$r.json" --reps 30 \
      --command "$here/device_call.sh BASE_DIR VAR_DIR OUT_DIR: python3 kernels/mxfp8/bench_gemm.py --reps 30 ($v, run $r of 2)" \
      > "$run/bench_${v}_run$r.log" 2>&1
    echo "bench $v run $r exit $?"; tail -n 7 "$run/bench_${v}_run$r.log"
  done
done
for v in base var; do
  d=$base; [ $v = var ] && d=$var
  timeout 150 env LD_LIBRARY_PATH="$cuda_libs:$d" ncu --target-processes all --clock-control none -k regex:transposed_xpass_kernel -c 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
    --section LaunchStats --section Occupancy --page details \
    python3 kernels/mxfp8/bench_gemm.py --mxfp8-lib "$d/libtilesim_mxfp8_capi.so" \
    --bf16-lib "$d/libtilesim_grouped_gemm_capi.so" --out "$run/ncu_bench_$v.json" --reps 1 --warmup 0 \
    --shapes moe_e128x128 --command "ncu of one xpass launch" > "$run/ncu_e128x128_$v.txt" 2>&1
  echo "ncu $v exit $?: $(grep -c . "$run/ncu_e128x128_$v.txt") lines"
  timeout 120 env LD_LIBRARY_PATH="$cuda_libs:$d" "$d/tilesim-measure" --kernel "$here/../specs/g_e128x128_s4_p_row_major_xp.json" --runs 5 \
    --warmup 2 --trace --out "$run/trace_e128x128_$v.json" > "$run/trace_e128x128_$v.log" 2>&1
  echo "trace $v exit $?"
done
# The rule (NOTES): adopted only if xpass (pass + GEMM) is faster with the variant than with the base in
# both runs on moe_e128x128, and slower in both runs on no shape.
python3 - "$run" > "$run/rule.txt" 2>&1 <<'PY'
import json, sys
run = sys.argv[1]
rec = {(v, r): {x["shape"]: x for x in json.load(open(f"{run}/bench_{v}_run{r}.json"))["records"]}
       for v in ("base", "var") for r in (1, 2)}
faster, slower = {}, {}
for shape in rec[("base", 1)]:
    for r in (1, 2):
        b, v = rec[("base", r)][shape], rec[("var", r)][shape]
        print(f"run {r} {shape:20} xpass base {b['xpass_median_ms']:.4f} var {v['xpass_median_ms']:.4f} "
              f"({v['xpass_median_ms'] / b['xpass_median_ms']:.3f}); gemm only {b['xpass_gemm_only_ms']:.4f} "
              f"{v['xpass_gemm_only_ms']:.4f}; bf16 {b['bf16_median_ms']:.4f} {v['bf16_median_ms']:.4f}; "
              f"xpass/bf16 {b['xpass_vs_bf16']:.3f} {v['xpass_vs_bf16']:.3f}")
        faster.setdefault(shape, []).append(v["xpass_median_ms"] < b["xpass_median_ms"])
        slower.setdefault(shape, []).append(v["xpass_median_ms"] > b["xpass_median_ms"])
losing = [s for s, l in slower.items() if all(l)]
print("faster in both runs:", [s for s, f in faster.items() if all(f)])
print("slower in both runs:", losing)
print("ADOPTED" if all(faster["moe_e128x128"]) and not losing else "NOT ADOPTED")
PY
cat "$run/rule.txt"
if grep -q '^ADOPTED' "$run/rule.txt"; then
  {
    for spec in validation/data/h100/mxfp8/specs/g_*_xp.json; do
      id=$(basename "$spec" .json)
      if timeout 60 env LD_LIBRARY_PATH="$cuda_libs:$var" "$var/tilesim-measure" --kernel "$spec" --runs 25 --warmup 3 --out "$run/measured/$id.json" 2>"$run/measured/$id.log"; then
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
