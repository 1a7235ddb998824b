#!/usr/bin/env bash
# Device call 2 (issue 14): the v10 kernel (commit 77cdd9b) under compute-sanitizer, its K-block
# microbenchmark (three runs, the profile's mixed_input_k_block_cycles), a third round of the
# ablations, the benchmark against cuBLAS bf16 and our bf16 grouped GEMM, and the 53 dataset
# configurations. Binaries built on the development machine (build-mixed, build-mixed2) and carried.
set -u -o pipefail
B=.carry/mixed
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/lib:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}"
export PATH="/usr/local/cuda/bin:$PATH"
mkdir -p /tmp/r /tmp/measured
specs=validation/data/h100/mixed_input/specs
driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
  echo "== compute-sanitizer memcheck, mixed_input_check --quick $(date -u +%T)"
  timeout 180 compute-sanitizer --tool memcheck $B/mixed_input_check --quick >/tmp/r/sanitizer.log 2>&1
  echo "sanitizer exit $?; $(grep -c 'ERROR SUMMARY: 0 errors' /tmp/r/sanitizer.log) clean summary line(s)"; tail -n 2 /tmp/r/sanitizer.log
  echo "== compute-sanitizer memcheck, mixed_input_bench --only decode_m1 $(date -u +%T)"
  timeout 120 compute-sanitizer --tool memcheck $B/mixed_input_bench --only decode_m1 --reps 2 --out /tmp/bs.json >/tmp/r/bench_sanitizer.log 2>&1
  echo "sanitizer exit $?; $(grep -c 'ERROR SUMMARY: 0 errors' /tmp/r/bench_sanitizer.log) clean summary line(s)"
  for run in 1 2 3; do
    echo "== mixed_input_block_rate run $run $(date -u +%T)"
    $B/mixed_input_block_rate --reps 50 >/tmp/r/block_rate_run$run.json
    python3 -c "import json,sys;d=json.load(open(sys.argv[1]));print(' '.join('%d%s%s:%.1f'%(c['tile_m'],c['conversion'][0],'g' if c['scale_group'] else '',c['ns_per_block']) for c in d['configs']))" /tmp/r/block_rate_run$run.json
  done
  for v in head d1 nomma noconv ss ss_noconv idle; do
    bin=$B/rate_$v; [ $v = d1 ] && bin=$B/mixed_input_block_rate
    echo "== ablation $v round 3 $(date -u +%T)"
    $bin --reps 30 --tiles 16,64,224 --prmt-only >/tmp/r/rate_${v}_r3.json
    python3 -c "import json,sys;d=json.load(open(sys.argv[1]));print(' '.join('%d:%.1f'%(c['tile_m'],c['ns_per_block']) for c in d['configs']))" /tmp/r/rate_${v}_r3.json
  done
  echo "== mixed_input_bench $(date -u +%T)"
  $B/mixed_input_bench --out /tmp/r/bench_mixed_input.json --reps 30 --driver "$driver" \
    --command "mixed_input_bench --reps 30 (kernels/mixed_input at 77cdd9b, the v10 K block; device call 2 of issue 14's session 4)"
  echo "== dataset $(date -u +%T)"
  start=$(date +%s) ok=0 failed=0
  for spec in $specs/*.json; do
    id="$(basename "$spec" .json)"
    if $B/tilesim-measure --kernel "$specs/$id.json" --out "/tmp/measured/$id.json" --runs 25 >/tmp/measured/"$id".log 2>&1; then
      ok=$((ok + 1))
    else
      failed=$((failed + 1)); echo "FAILED $id: $(tail -n 1 /tmp/measured/"$id".log)"
    fi
  done
  echo "dataset: $ok measured, $failed failed in $(( $(date +%s) - start )) s"
  echo "== done $(date -u +%T)"
} 2>&1 | tee $OUT/call2.log
tar czf $OUT/call2_runs.tgz -C /tmp r
tar czf $OUT/measured.tgz -C /tmp measured
