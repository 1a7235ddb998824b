#!/usr/bin/env bash
# The device call of v13 (issue 14): on 64-token tiles, whose ring stages carry 2 or 4 K blocks, a
# consumer converts block j + 1 into a second fragment set while block j's wgmma run (one set and a
# wait after every block before). Quick check, full check, compute-sanitizer memcheck on the quick
# check, register and spill counts, the benchmark twice (interleaved with cuBLAS bf16, queued from a
# cold L2), the K-block microbenchmark three runs on 64-token tiles at 2 and 4 blocks a stage, the 7
# dataset configurations on 64-token tiles (dec64_*, zipf64_*) at their committed specs, and a
# per-tile trace of the N = K = 8192 decode at 16 and 64 tokens (tilesim-measure --trace).
# Binaries built on the development machine (build-mixed) and carried in .carry/mixed5. Every
# output goes into one archive, out.tgz.
set -u -o pipefail
B=.carry/mixed5
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/lib:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}"
export PATH="/usr/local/cuda/bin:$PATH"
R=/tmp/out; mkdir -p $R/measured $R/trace
specs=validation/data/h100/mixed_input/specs
driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
rate() { python3 -c "import json,sys;d=json.load(open(sys.argv[1]));print(' '.join('%d%s%s/%d/s%d:%.1f'%(c['tile_m'],c['conversion'][0],'g' if c['scale_group'] else '',c['tile_k'],c['stages'],c['ns_per_block']) for c in d['configs']))" "$1"; }
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
  echo "== quick check $(date -u +%T)"
  timeout 120 $B/mixed_input_check --quick >$R/check_quick.log 2>&1; check_rc=$?
  echo "check exit $check_rc"; grep "^FAIL" $R/check_quick.log | head; tail -n 1 $R/check_quick.log
  echo "== registers and spills $(date -u +%T)"
  cuobjdump --dump-resource-usage $B/mixed_input_check 2>&1 | grep -A1 mixed_input_gemm_kernel | grep -o "_Z[A-Za-z0-9_]*\|REG:[0-9]*\|STACK:[0-9]*\|LOCAL:[0-9]*" | paste - - - - >$R/resource_usage.txt
  cat $R/resource_usage.txt
  cuobjdump -sass $B/mixed_input_check 2>/dev/null | gzip >$R/sass.txt.gz
  if [ $check_rc -eq 0 ]; then
    for run in 1 2; do
      echo "== bench run $run $(date -u +%T)"
      timeout 200 $B/mixed_input_bench --out $R/bench_run$run.json --reps 30 --driver "$driver" \
        --command "mixed_input_bench --reps 30 (kernels/mixed_input v13: two fragment sets in 64-token stages of 2 or 4 K blocks)" >$R/bench_run$run.log 2>&1
      cat $R/bench_run$run.log
    done
    for run in 1 2 3; do
      for sb in 2 4; do
        echo "== block rate run $run stage_blocks $sb $(date -u +%T)"
        timeout 60 $B/mixed_input_block_rate --reps 50 --tiles 64 --stage-blocks $sb >$R/block_rate_sb${sb}_run$run.json
        rate $R/block_rate_sb${sb}_run$run.json
      done
    done
    echo "== compute-sanitizer memcheck, mixed_input_check --quick $(date -u +%T)"
    timeout 150 compute-sanitizer --tool memcheck $B/mixed_input_check --quick >$R/sanitizer.log 2>&1
    echo "sanitizer exit $?; $(grep -c 'ERROR SUMMARY: 0 errors' $R/sanitizer.log) clean summary line(s)"; tail -n 2 $R/sanitizer.log
    echo "== full check $(date -u +%T)"
    timeout 200 $B/mixed_input_check >$R/check_full.log 2>&1; echo "full check exit $?"; grep "^FAIL" $R/check_full.log | head; tail -n 1 $R/check_full.log
    echo "== dataset, 64-token configurations $(date -u +%T)"
    for spec in $specs/dec64_*.json $specs/zipf64_*.json; do
      id="$(basename "$spec" .json)"
      $B/tilesim-measure --kernel "$spec" --out "$R/measured/$id.json" --runs 25 >"$R/measured/$id.log" 2>&1 || echo "FAILED $id: $(tail -n 1 "$R/measured/$id.log")"
    done
    ls $R/measured/*.json | wc -l
    echo "== traces $(date -u +%T)"
    for id in dec16_8192_int8_prmt_t16_p_row_major dec64_8192_int8_prmt_t64_p_row_major; do
      $B/tilesim-measure --kernel "$specs/$id.json" --out "$R/trace/$id.json" --runs 10 --trace --trace-out "$R/trace/$id.timeline.json" >"$R/trace/$id.log" 2>&1 || echo "FAILED trace $id: $(tail -n 1 "$R/trace/$id.log")"
    done
  fi
  echo "== done $(date -u +%T)"
} 2>&1 | tee $R/call.log
tar czf $OUT/out.tgz -C $R .
