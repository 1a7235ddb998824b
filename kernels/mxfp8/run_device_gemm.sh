#!/usr/bin/env bash
# Issue 20's GEMM device session (H100), one call: the MXFP8 GEMM's quick check, every scheme
# (nothing else runs if it fails), compute-sanitizer memcheck once, the full check, its SASS and
# resources per scheme, the stage-rate microbenchmark (where BIN_DIR has it), the benchmark of every
# scheme against our bf16 grouped GEMM and torch._scaled_mm (bench_gemm.py), and the GEMM part of
# the MXFP8 dataset.
#
#   kernels/mxfp8/run_device_gemm.sh BIN_DIR OUT_DIR [SWEEP_SECONDS] [SPEC_GLOB]
#
# BIN_DIR holds mxfp8_gemm_check, tilesim-measure, libtilesim_mxfp8_capi.so,
# libtilesim_grouped_gemm_capi.so and optionally mxfp8_stage_rate. Writes OUT_DIR/gemm_checks.log,
# sass_gemm.txt, mxfp8_stage_rate.json, bench_gemm.json, gemm_dataset.log and gemm_measured.tgz (one
# result per SPEC_GLOB.json spec (default g_*) of validation/data/h100/mxfp8/specs/, same file name,
# each with its exact command in its provenance), starting no configuration after SWEEP_SECONDS
# (default 240).
set -u -o pipefail
bin="$(cd "${1:?usage: run_device_gemm.sh BIN_DIR OUT_DIR [SWEEP_SECONDS]}" && pwd)"
out="${2:?usage: run_device_gemm.sh BIN_DIR OUT_DIR [SWEEP_SECONDS]}"
sweep_seconds="${3:-240}"
spec_glob="${4:-g_*}"
specs=validation/data/h100/mxfp8/specs
mkdir -p "$out/measured"
# BIN_DIR last: a CUDA 13 runtime carried there is used only where the machine has none.
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}:$bin"
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
  echo "== mxfp8_gemm_check --quick (the rest only if it passes)"
  timeout 60 "$bin/mxfp8_gemm_check" --quick || { touch "$out/check_failed"; exit 1; }
  echo "== compute-sanitizer memcheck: mxfp8_gemm_check --quick"
  timeout 150 compute-sanitizer --tool memcheck --print-limit 5 "$bin/mxfp8_gemm_check" --quick | tail -n 3
  echo "== mxfp8_gemm_check (full)"
  timeout 150 "$bin/mxfp8_gemm_check"
  echo "== SASS instruction counts and resources"
  if command -v cuobjdump > /dev/null; then
    cuobjdump -sass "$bin/mxfp8_gemm_check" | awk '/Function :/ {name=$3; scheme=(name ~ /transposed_wide/ ? "transposed_t128n128" : name ~ /transposed_kernelILi/ ? "transposed_t" substr(name, index(name, "ILi") + 3, 3) : name ~ /Dequantize/ ? "dequantize" : "promote")} /^ +\/\*[0-9a-f]+\*\// {split($2, op, "."); if (name ~ /mxfp8_(gemm|transposed)/) count[scheme " " op[1]]++} END {for (o in count) print count[o], o}' |
      sort -k2,2 -k1,1rn | tee "$out/sass_gemm.txt"
    cuobjdump --dump-resource-usage "$bin/mxfp8_gemm_check" | grep -A1 'mxfp8_gemm\|mxfp8_transposed' | tee -a "$out/sass_gemm.txt"
  else
    echo "no cuobjdump"
  fi
  if [ -x "$bin/mxfp8_stage_rate" ]; then
    echo "== stage-rate microbenchmark"
    timeout 120 "$bin/mxfp8_stage_rate" --reps 50 | tee "$out/mxfp8_stage_rate.json"
  fi
  echo "== benchmark"
  PYTHONUNBUFFERED=1 timeout 300 python3 kernels/mxfp8/bench_gemm.py --mxfp8-lib "$bin/libtilesim_mxfp8_capi.so" \
    --bf16-lib "$bin/libtilesim_grouped_gemm_capi.so" --out "$out/bench_gemm.json" --reps 30 \
    --command "kernels/mxfp8/run_device_gemm.sh BIN_DIR OUT_DIR: python3 kernels/mxfp8/bench_gemm.py --reps 30"
  date -u
} 2>&1 | tee "$out/gemm_checks.log"
[ -e "$out/check_failed" ] && exit 1
{
  echo "== GEMM dataset: $(ls $specs/$spec_glob.json | wc -l) configurations"
  start=$(date +%s)
  for spec in $specs/$spec_glob.json; do
    id=$(basename "$spec" .json)
    if (( $(date +%s) - start >= sweep_seconds )); then echo "SKIPPED $id (time)"; continue; fi
    if ! timeout 60 "$bin/tilesim-measure" --kernel "$spec" --runs 25 --warmup 3 --out "$out/measured/$id.json" 2>"$out/measured/$id.log"; then
      echo "FAILED $id: $(tail -n 1 "$out/measured/$id.log")"
    else
      echo "ok $id $(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['time_ms'], r['tflops'], r['dram_read_bytes'], r['l2_hit_rate'])" "$out/measured/$id.json")"
      rm -f "$out/measured/$id.log"
    fi
  done
  echo "dataset took $(( $(date +%s) - start )) s"
  date -u
} 2>&1 | tee "$out/gemm_dataset.log"
tar -czf "$out/gemm_measured.tgz" -C "$out" measured
rm -rf "$out/measured"
