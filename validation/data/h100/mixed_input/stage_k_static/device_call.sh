#!/usr/bin/env bash
# The device call of the compile-time stage K (issue 14): the K blocks a ring stage carries are a
# template parameter (TileShape's StageBlocks), 1, 2 or 4 on 16- and 64-token tiles. Quick check,
# compute-sanitizer memcheck on it, register and spill counts of every instantiation, the
# benchmark (every tile_k and ring depth interleaved with cuBLAS bf16, queued from a cold L2), the
# K-block microbenchmark three runs at 1, 2 and 4 blocks a stage on 16- and 64-token tiles, the full
# check, and the 23 decode configurations of the dataset on 16- and 64-token tiles at tile_k 128
# (the committed specs), 256 (8 stages at 16 tokens, 4 at 64) and 512 (4 stages at 16, 2 at 64),
# interleaved spec by spec.
# Binaries built on the development machine (build-mixed) and carried in .carry/mixed3.
set -u -o pipefail
B=.carry/mixed3
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/lib:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}"
export PATH="/usr/local/cuda/bin:$PATH"
mkdir -p /tmp/r /tmp/m128 /tmp/m256 /tmp/m512
specs=validation/data/h100/mixed_input/specs
driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
rate() { python3 -c "import json,sys;d=json.load(open(sys.argv[1]));print(' '.join('%d%s%s/%d/s%d:%.1f'%(c['tile_m'],c['conversion'][0],'g' if c['scale_group'] else '',c['tile_k'],c['stages'],c['ns_per_block']) for c in d['configs']))" "$1"; }
measure() {
  local ok=0 failed=0 start; start=$(date +%s)
  for spec in $B/specs256/*.json; do
    id="$(basename "$spec" .json)"
    for v in 128 256 512; do
      src=$specs/$id.json; [ $v = 256 ] && src=$spec; [ $v = 512 ] && src=$B/specs512/$id.json
      [ -f "$src" ] || continue
      if $B/tilesim-measure --kernel "$src" --out "/tmp/m$v/$id.json" --runs 25 >"/tmp/m$v/$id.log" 2>&1; then ok=$((ok + 1))
      else failed=$((failed + 1)); echo "FAILED $v $id: $(tail -n 1 "/tmp/m$v/$id.log")"; fi
    done
  done
  echo "dataset: $ok measured, $failed failed in $(( $(date +%s) - start )) s"
}
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
  echo "== quick check $(date -u +%T)"
  $B/mixed_input_check --quick >/tmp/r/check_quick.log 2>&1; check_rc=$?
  echo "check exit $check_rc"; grep "^FAIL" /tmp/r/check_quick.log | head; tail -n 1 /tmp/r/check_quick.log
  echo "== registers and spills $(date -u +%T)"
  cuobjdump --dump-resource-usage $B/mixed_input_check 2>&1 | grep -A1 mixed_input_gemm_kernel | grep -o "_Z[A-Za-z0-9_]*\|REG:[0-9]*\|STACK:[0-9]*\|LOCAL:[0-9]*" | paste - - - - >/tmp/r/resource_usage.txt
  cat /tmp/r/resource_usage.txt
  echo "== bench $(date -u +%T)"
  $B/mixed_input_bench --out /tmp/r/bench_stage_k_static.json --reps 30 --driver "$driver" \
    --command "mixed_input_bench --reps 30 (kernels/mixed_input with tile_k 128/256/512 stages fixed at compile time on 16- and 64-token tiles)" >/tmp/r/bench.log 2>&1
  cat /tmp/r/bench.log
  for run in 1 2 3; do
    for sb in 1 2 4; do
      echo "== block rate run $run stage_blocks $sb $(date -u +%T)"
      $B/mixed_input_block_rate --reps 50 --tiles 16,64 --stage-blocks $sb >/tmp/r/block_rate_sb${sb}_run$run.json
      rate /tmp/r/block_rate_sb${sb}_run$run.json
    done
  done
  echo "== compute-sanitizer memcheck, mixed_input_check --quick $(date -u +%T)"
  timeout 150 compute-sanitizer --tool memcheck $B/mixed_input_check --quick >/tmp/r/sanitizer.log 2>&1
  echo "sanitizer exit $?; $(grep -c 'ERROR SUMMARY: 0 errors' /tmp/r/sanitizer.log) clean summary line(s)"; tail -n 2 /tmp/r/sanitizer.log
  echo "== full check $(date -u +%T)"
  timeout 200 $B/mixed_input_check >/tmp/r/check_full.log 2>&1; echo "full check exit $?"; grep "^FAIL" /tmp/r/check_full.log | head; tail -n 1 /tmp/r/check_full.log
  echo "== dataset $(date -u +%T)"
  measure
  echo "== done $(date -u +%T)"
} 2>&1 | tee $OUT/call.log
tar czf $OUT/call.tgz -C /tmp r m128 m256 m512 2>/dev/null
