#!/usr/bin/env bash
# The device call of the cluster pairs (issue 14, v13): 64-channel tiles may run in clusters of two
# CTAs that share their X (or W) tile by TMA multicast. Quick check (clusters of 1 and 2),
# compute-sanitizer memcheck on it, register and spill counts of every instantiation, the SASS of
# this build and of v12's (.carry/mixed3's check, for the unchanged cluster-of-one kernels), the
# benchmark twice (every tile_k, ring depth and cluster size interleaved with cuBLAS bf16, queued
# from a cold L2), the K-block microbenchmark three runs on 16-, 32- and 64-token tiles alone and in
# clusters of two, the full check, and the 25 decode configurations of the dataset on 16-, 32- and
# 64-token tiles alone (the committed specs) and in clusters of two (specs_c2/: the same with
# "cluster": 2 and "_c2" after the name), interleaved spec by spec.
# Binaries built on the development machine (build-mixed) and carried in .carry/mixed4.
set -u -o pipefail
B=.carry/mixed4
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/lib:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}"
export PATH="/usr/local/cuda/bin:$PATH"
mkdir -p /tmp/r /tmp/c1 /tmp/c2
specs=validation/data/h100/mixed_input/specs
driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
rate() { python3 -c "import json,sys;d=json.load(open(sys.argv[1]));print(' '.join('%d%s%s/%d/s%d/c%d:%.1f'%(c['tile_m'],c['conversion'][0],'g' if c['scale_group'] else '',c['tile_k'],c['stages'],c['cluster'],c['ns_per_block']) for c in d['configs']))" "$1"; }
measure() {
  local ok=0 failed=0 start; start=$(date +%s)
  for spec in $B/specs_c2/*.json; do
    id="$(basename "$spec" _c2.json)"
    for v in c1 c2; do
      src=$specs/$id.json; [ $v = c2 ] && src=$spec
      if $B/tilesim-measure --kernel "$src" --out "/tmp/$v/$(basename "$src")" --runs 25 >"/tmp/$v/$(basename "$src" .json).log" 2>&1; then ok=$((ok + 1))
      else failed=$((failed + 1)); echo "FAILED $v $id: $(tail -n 1 "/tmp/$v/$(basename "$src" .json).log")"; fi
    done
  done
  echo "dataset: $ok measured, $failed failed in $(( $(date +%s) - start )) s"
}
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
  echo "== quick check $(date -u +%T)"
  timeout 120 $B/mixed_input_check --quick >/tmp/r/check_quick.log 2>&1; check_rc=$?
  echo "check exit $check_rc"; grep "^FAIL" /tmp/r/check_quick.log | head; tail -n 1 /tmp/r/check_quick.log
  echo "== registers and spills $(date -u +%T)"
  cuobjdump --dump-resource-usage $B/mixed_input_check 2>&1 | grep -A1 mixed_input_gemm_kernel | grep -o "_Z[A-Za-z0-9_]*\|REG:[0-9]*\|STACK:[0-9]*\|LOCAL:[0-9]*" | paste - - - - >/tmp/r/resource_usage.txt
  cat /tmp/r/resource_usage.txt
  cuobjdump -sass -fun mixed_input_gemm_kernel $B/mixed_input_check 2>/dev/null | gzip >/tmp/r/sass_v13.txt.gz
  cuobjdump -sass $B/v12_mixed_input_check 2>/dev/null | gzip >/tmp/r/sass_v12.txt.gz
  ls -la /tmp/r/*.gz
  if [ $check_rc -eq 0 ]; then
    for run in 1 2; do
      echo "== bench run $run $(date -u +%T)"
      timeout 200 $B/mixed_input_bench --out /tmp/r/bench_cluster_run$run.json --reps 30 --driver "$driver" \
        --command "mixed_input_bench --reps 30 (kernels/mixed_input v13: 64-channel tiles alone and in clusters of two)" >/tmp/r/bench_run$run.log 2>&1
      cat /tmp/r/bench_run$run.log
    done
    for run in 1 2 3; do
      for c in 1 2; do
        echo "== block rate run $run cluster $c $(date -u +%T)"
        timeout 60 $B/mixed_input_block_rate --reps 50 --tiles 16,32,64 --cluster $c >/tmp/r/block_rate_c${c}_run$run.json
        rate /tmp/r/block_rate_c${c}_run$run.json
      done
    done
    echo "== compute-sanitizer memcheck, mixed_input_check --quick $(date -u +%T)"
    timeout 150 compute-sanitizer --tool memcheck $B/mixed_input_check --quick >/tmp/r/sanitizer.log 2>&1
    echo "sanitizer exit $?; $(grep -c 'ERROR SUMMARY: 0 errors' /tmp/r/sanitizer.log) clean summary line(s)"; tail -n 2 /tmp/r/sanitizer.log
    echo "== full check $(date -u +%T)"
    timeout 200 $B/mixed_input_check >/tmp/r/check_full.log 2>&1; echo "full check exit $?"; grep "^FAIL" /tmp/r/check_full.log | head; tail -n 1 /tmp/r/check_full.log
    echo "== dataset $(date -u +%T)"
    measure
  fi
  echo "== done $(date -u +%T)"
} 2>&1 | tee $OUT/call.log
cp /tmp/r/* $OUT/ 2>/dev/null
tar czf $OUT/dataset.tgz -C /tmp c1 c2 2>/dev/null
