#!/usr/bin/env bash
# Issue 18's whole device session (H100): compute-sanitizer once on each new kernel (the
# element-wise kernel, the GEMM's fused epilogues), the correctness checks, the vector-add
# benchmark against Triton, torch and the device copy, and the element-wise/fused dataset.
#
#   kernels/elementwise/run_device.sh checks BIN_DIR OUT_DIR [SIZES]
#   kernels/elementwise/run_device.sh dataset BIN_DIR OUT_DIR [SWEEP_SECONDS] [FILTER]
#   kernels/elementwise/run_device.sh fused BIN_DIR OUT_DIR [ROUNDS] [SHAPES]
#   kernels/elementwise/run_device.sh microbench BIN_DIR OUT_DIR
#   kernels/elementwise/run_device.sh bench BIN_DIR OUT_DIR [OURS] [SIZES] [FILTER]
#   kernels/elementwise/run_device.sh sweep BIN_DIR OUT_DIR [FILTER] [SWEEP_OURS] [RANGE_OURS] [SWEEP_SIZES]
#
# BIN_DIR holds tilesim-measure, elementwise_check, grouped_gemm_check and
# libtilesim_elementwise_capi.so. `checks` writes OUT_DIR/checks.log and bench_elementwise.json;
# `dataset` writes dataset.log and measured.tgz (one result per spec of
# validation/data/h100/elementwise/specs/ whose id matches FILTER, same file name, each with its
# exact command in its provenance), starting no configuration after SWEEP_SECONDS (default 480).
# `checks` benchmarks the vector add at SIZES (comma-separated element counts; default: the
# benchmark's own list). `fused` measures the fused configurations of SHAPES (default: the four)
# in ROUNDS rounds (default 2), each round none, bias_relu, bias_gelu of each shape in turn
# (interleaved: the H100's clock drifts with temperature), into OUT_DIR/fused/run<r>/.
# `microbench` writes OUT_DIR/kernel_start_drain.json (validation/microbench/kernel_start_drain.py)
# and l2_counter_background.json (a one-element add through tilesim-measure).
# `bench`: the quick check, the vector-add benchmark of the configurations OURS names (default: the
# benchmark's own) at SIZES with per-CTA traces at 1M elements and the Triton/ours listings
# (OUT_DIR/asm/), and tilesim-measure on the element-wise dataset specs whose ids FILTER finds
# (default: none), written by make_elementwise_specs.py, into measured.tgz; log in OUT_DIR/bench.log.
# `sweep` (issue 18's launch sweep at 1M): the vector add at SWEEP_SIZES (default 0.5M-2M) with the
# configurations SWEEP_OURS names (default: blocks 32-1024 x 1, 2, 4 vectors) against Triton (8
# placements x 50 rounds, per-CTA traces up to 1M, the Triton/ours listings), RANGE_OURS (default
# 256 x 4 x 1, x 4, 128 x 4 x 4) against Triton, torch and the copy from 4 KB to 4 GB (4 placements
# x 30 rounds), then tilesim-measure on the dataset specs FILTER finds (default none); writes
# sweep.log, bench_sweep.json, bench_range.json, asm/ and measured.tgz.
# Each mode fits in one device call (at most 10 minutes).
set -u -o pipefail
mode="${1:?usage: run_device.sh checks|dataset|fused|microbench|bench|sweep BIN_DIR OUT_DIR [...] (see the header)}"
bin="$(cd "$2" && pwd)"
out="${3:?usage: run_device.sh checks|dataset|fused|microbench|bench|sweep BIN_DIR OUT_DIR [...] (see the header)}"
sweep_seconds="${4:-480}"
filter="${5:-.}"
sizes="${4:-}"
specs=validation/data/h100/elementwise/specs
mkdir -p "$out/measured"
# tilesim-measure on every spec make_elementwise_specs.py wrote into OUT_DIR/specs (bench, sweep).
measure_written_specs() {
  for spec in "$out"/specs/*.json; do
    [ -e "$spec" ] || continue
    id=$(basename "$spec" .json)
    if timeout 60 "$bin/tilesim-measure" --kernel "$spec" --runs 25 --warmup 3 --out "$out/measured/$id.json" \
         2>"$out/measured/$id.log"; then
      echo "ok $id $(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['time_ms'], r['dram_read_bytes'], r['dram_write_bytes'], r['l2_hit_rate'])" "$out/measured/$id.json")"
      rm -f "$out/measured/$id.log"
    else
      echo "FAILED $id: $(tail -n 1 "$out/measured/$id.log")"
    fi
  done
}
if [ "$mode" = checks ]; then
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
  echo "== compute-sanitizer memcheck: element-wise kernel (quick cases)"
  timeout 100 compute-sanitizer --tool memcheck --print-limit 5 "$bin/elementwise_check" --quick | tail -n 4
  echo "== compute-sanitizer memcheck: fused epilogues (grouped_gemm_check --quick --order row_major)"
  timeout 100 compute-sanitizer --tool memcheck --print-limit 5 "$bin/grouped_gemm_check" --quick --order row_major |
    grep -E "fused|ERROR|SUMMARY|failure"
  echo "== elementwise_check --quick"
  timeout 60 "$bin/elementwise_check" --quick | grep -vE "^ok "
  echo "== grouped_gemm_check --quick"
  timeout 90 "$bin/grouped_gemm_check" --quick | grep -E "FAIL|fused|ALL PASS|FAILED"
  echo "== vector add against Triton, torch, copy"
  PYTHONUNBUFFERED=1 timeout 200 python3 kernels/elementwise/bench_baselines.py \
    --lib "$bin/libtilesim_elementwise_capi.so" --out "$out/bench_elementwise.json" ${sizes:+--sizes "$sizes"}
  date -u
} 2>&1 | tee "$out/checks.log"
exit 0
fi
if [ "$mode" = bench ]; then
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
  echo "== elementwise_check --quick"
  timeout 90 "$bin/elementwise_check" --quick | grep -vE "^ok "
  echo "== vector add against Triton, torch, copy; traces; listings"
  PYTHONUNBUFFERED=1 timeout 200 python3 kernels/elementwise/bench_baselines.py \
    --lib "$bin/libtilesim_elementwise_capi.so" --out "$out/bench_elementwise.json" --asm-dir "$out/asm" \
    --trace-max 1048576 ${4:+--ours "$4"} ${5:+--sizes "$5"}
  echo "== dataset: the configurations FILTER finds"
  python3 validation/measure/make_elementwise_specs.py --specs "$out/specs" --filter "${6:-^$}"
  measure_written_specs
  date -u
} 2>&1 | tee "$out/bench.log"
tar -czf "$out/measured.tgz" -C "$out" measured
rm -rf "$out/measured" "$out/specs"
exit 0
fi
if [ "$mode" = sweep ]; then
sweep_ours=b32v4u2_grid,b32v4u4_grid,b64v4u1_grid,b64v4u2_grid,b64v4u4_grid
sweep_ours+=,b128v4u1_grid,b128v4u2_grid,b128v4u4_grid,b256v4u1_grid,b256v4u2_grid,b256v4u4_grid
sweep_ours+=,b512v4u1_grid,b512v4u2_grid,b512v4u4_grid,b1024v4u1_grid,b1024v4u2_grid,b1024v4u4_grid
range_ours=b256v4u1_grid,b256v4u4_grid,b128v4u4_grid
sweep_ours="${5:-$sweep_ours}"
range_ours="${6:-$range_ours}"
sweep_sizes="${7:-524288,786432,1048576,1572864,2097152}"
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
  echo "== launch sweep at 0.5M-2M elements against Triton"
  PYTHONUNBUFFERED=1 timeout 200 python3 kernels/elementwise/bench_baselines.py \
    --lib "$bin/libtilesim_elementwise_capi.so" --out "$out/bench_sweep.json" --asm-dir "$out/asm" \
    --sizes "$sweep_sizes" --ours "$sweep_ours" --baselines triton \
    --placements 8 --reps 50 --trace-max 1048576
  echo "== the candidates from 4 KB to 4 GB against Triton, torch, copy"
  PYTHONUNBUFFERED=1 timeout 200 python3 kernels/elementwise/bench_baselines.py \
    --lib "$bin/libtilesim_elementwise_capi.so" --out "$out/bench_range.json" --ours "$range_ours" \
    --sizes 1024,16384,262144,1048576,1000003,4194304,16777216,67108864,268435456,1073741824,10000001,16777217 \
    --placements 4 --reps 30 --trace-max 0
  echo "== dataset: the configurations FILTER finds"
  python3 validation/measure/make_elementwise_specs.py --specs "$out/specs" --filter "${4:-^$}"
  measure_written_specs
  nvidia-smi --query-gpu=clocks.sm,temperature.gpu --format=csv
  date -u
} 2>&1 | tee "$out/sweep.log"
tar -czf "$out/measured.tgz" -C "$out" measured
rm -rf "$out/measured" "$out/specs"
exit 0
fi
if [ "$mode" = microbench ]; then
{
  echo "== kernel start and drain (CUPTI)"
  PYTHONUNBUFFERED=1 timeout 60 python3 validation/microbench/kernel_start_drain.py --out "$out/kernel_start_drain.json"
  echo "== L2 counter background: a one-element add through tilesim-measure"
  timeout 60 "$bin/tilesim-measure" --kernel validation/microbench/l2_counter_background_spec.json --runs 25 \
    --warmup 3 --out "$out/l2_counter_background.json" | tail -n 2
} 2>&1 | tee "$out/microbench.log"
exit 0
fi
if [ "$mode" = fused ]; then
rounds="${4:-2}"
shapes="${5:-dense8192 e8x2048 e64x512 e128x128}"
{
  start=$(date +%s)
  for r in $(seq 1 "$rounds"); do
    mkdir -p "$out/fused/run$r"
    for shape in $shapes; do
      for epilogue in none bias_relu bias_gelu; do
        id="fused_${shape}_${epilogue}"
        if timeout 60 "$bin/tilesim-measure" --kernel "$specs/$id.json" --runs 25 --warmup 3 \
             --out "$out/fused/run$r/$id.json" 2>"$out/fused/run$r/$id.log"; then
          echo "ok run$r $id $(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['time_ms'], r['dram_read_bytes'], r['dram_write_bytes'], r['l2_hit_rate'])" "$out/fused/run$r/$id.json")"
          rm -f "$out/fused/run$r/$id.log"
        else
          echo "FAILED run$r $id: $(tail -n 1 "$out/fused/run$r/$id.log")"
        fi
      done
    done
  done
  echo "fused rounds took $(( $(date +%s) - start )) s"
  date -u
} 2>&1 | tee -a "$out/fused.log"
exit 0
fi
{
  echo "== dataset: $(ls $specs | grep -cE "$filter") configurations"
  start=$(date +%s)
  for spec in $(ls $specs/ew_*.json; ls $specs/fused_*.json); do
    id=$(basename "$spec" .json)
    echo "$id" | grep -qE "$filter" || continue
    if (( $(date +%s) - start >= sweep_seconds )); then echo "SKIPPED $id (time)"; continue; fi
    if ! "$bin/tilesim-measure" --kernel "$spec" --runs 25 --warmup 3 --out "$out/measured/$id.json" 2>"$out/measured/$id.log"; then
      echo "FAILED $id: $(tail -n 1 "$out/measured/$id.log")"
    else
      echo "ok $id $(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['time_ms'], r['dram_read_bytes'], r['dram_write_bytes'], r['l2_hit_rate'])" "$out/measured/$id.json")"
      rm -f "$out/measured/$id.log"
    fi
  done
  echo "dataset took $(( $(date +%s) - start )) s"
  date -u
} 2>&1 | tee "$out/dataset.log"
tar -czf "$out/measured.tgz" -C "$out" measured
rm -rf "$out/measured"
