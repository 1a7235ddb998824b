#!/usr/bin/env bash
# The device call of v19 (issue 14): 64-token tiles of 128 channels whose K halves run on the two
# CTAs of a cluster (v14's structure), two K blocks a ring stage, each stage released once its own
# wgmma are done (kernels/mixed_input/NOTES.md, v19: the prediction and the rule, written before this
# call). Quick check, registers and spills, full check, compute-sanitizer memcheck on the quick check
# (the new kernels run in it), the benchmark twice (interleaved with cuBLAS bf16, queued from a cold
# L2), the 64-token K-block microbenchmark (both 64-token tiles), the decision (decide.py), a per-tile
# trace of the N = K = 8192 decode on the new tile, and, only if adopted, the dataset's 7 64-token
# configurations at their committed specs and on the new tile (specs/).
# Run from the repository root over binaries built on the development machine (build-decode) and
# carried in .carry/decode. Every output goes into one archive, $OUT/out.tgz.
set -u -o pipefail
B=.carry/decode
H=validation/data/h100/mixed_input
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/lib:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}"
export PATH="/usr/local/cuda/bin:$PATH"
R=/tmp/out; mkdir -p $R/measured $R/measured_n128 $R/trace
driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
rate() { python3 -c "import json,sys;d=json.load(open(sys.argv[1]));print(' '.join('%dx%d%s%s/%d/s%d:%.1f'%(c['tile_m'],c['tile_n'],c['conversion'][0],'g' if c['scale_group'] else '',c['tile_k'],c['stages'],c['ns_per_block']) for c in d['configs']))" "$1"; }
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
  echo "== quick check $(date -u +%T)"
  timeout 120 $B/mixed_input_check --quick >$R/check_quick.log 2>&1; check_rc=$?
  echo "check exit $check_rc"; grep "^FAIL" $R/check_quick.log | head; grep -c "64x128x256" $R/check_quick.log; tail -n 1 $R/check_quick.log
  echo "== registers and spills $(date -u +%T)"
  cuobjdump --dump-resource-usage $B/mixed_input_check 2>&1 | grep -A1 mixed_input_gemm_kernel | grep -o "_Z[A-Za-z0-9_]*\|REG:[0-9]*\|STACK:[0-9]*\|LOCAL:[0-9]*" | paste - - - - >$R/resource_usage.txt
  cat $R/resource_usage.txt
  cuobjdump -sass $B/mixed_input_check 2>/dev/null | gzip >$R/sass.txt.gz
  echo "== full check $(date -u +%T)"
  timeout 240 $B/mixed_input_check >$R/check_full.log 2>&1; full_rc=$?
  echo "full check exit $full_rc"; grep "^FAIL" $R/check_full.log | head; grep -c "64x128x256" $R/check_full.log; tail -n 1 $R/check_full.log
  echo "== compute-sanitizer memcheck, mixed_input_check --quick $(date -u +%T)"
  timeout 200 compute-sanitizer --tool memcheck $B/mixed_input_check --quick >$R/sanitizer.log 2>&1
  echo "sanitizer exit $?; $(grep -c 'ERROR SUMMARY: 0 errors' $R/sanitizer.log) clean summary line(s)"; tail -n 2 $R/sanitizer.log
  if [ $check_rc -eq 0 ] && [ $full_rc -eq 0 ]; then
    for run in 1 2; do
      echo "== bench run $run $(date -u +%T)"
      timeout 200 $B/mixed_input_bench --out $R/bench_run$run.json --reps 30 --driver "$driver" \
        --command "mixed_input_bench --reps 30 (kernels/mixed_input v19: 64x128 tiles, K halves on a cluster's two CTAs, 2 K blocks a stage)" >$R/bench_run$run.log 2>&1
      cat $R/bench_run$run.log
    done
    echo "== block rate, 64-token tiles $(date -u +%T)"
    timeout 90 $B/mixed_input_block_rate --reps 50 --tiles 64 >$R/block_rate_t64.json 2>$R/block_rate_t64.err
    rate $R/block_rate_t64.json; cat $R/block_rate_t64.err
    echo "== decision $(date -u +%T)"
    python3 $H/cluster_split_v19/decide.py $R/bench_run1.json $R/bench_run2.json $H/stage_fragments/bench_run1.json \
      $H/stage_fragments/bench_run2.json | tee $R/decision.txt; adopted=$((1 - ${PIPESTATUS[0]}))
    echo "== trace, N = K = 8192 decode on 64 x 128 x 256 s3 $(date -u +%T)"
    id=dec64_8192_int8_prmt_t64n128_p_row_major
    $B/tilesim-measure --kernel "$H/cluster_split_v19/specs/$id.json" --out "$R/trace/$id.json" --runs 10 --trace --trace-out "$R/trace/$id.timeline.json" >"$R/trace/$id.log" 2>&1 || echo "FAILED trace $id: $(tail -n 1 "$R/trace/$id.log")"
    if [ $adopted -eq 1 ]; then
      echo "== dataset, 64-token configurations: committed specs, then the 64 x 128 tile $(date -u +%T)"
      for spec in $H/specs/dec64_*.json $H/specs/zipf64_*.json $H/cluster_split_v19/specs/*.json; do
        id="$(basename "$spec" .json)"
        case "$spec" in *cluster_split_v19*) dir=$R/measured_n128 ;; *) dir=$R/measured ;; esac
        $B/tilesim-measure --kernel "$spec" --out "$dir/$id.json" --runs 25 >"$dir/$id.log" 2>&1 || echo "FAILED $id: $(tail -n 1 "$dir/$id.log")"
      done
      python3 - $R <<'PY'
import glob, json, sys
for d in ("measured", "measured_n128"):
    for p in sorted(glob.glob(sys.argv[1] + "/" + d + "/*.json")):
        r = json.load(open(p))
        print(d, p.split("/")[-1], "%.2f us" % (1e3 * r["time_ms"]), "dram %.1f MB" % (r["dram_read_bytes"] / 1e6))
PY
    fi
  fi
  echo "== done $(date -u +%T)"
} 2>&1 | tee $R/call.log
tar czf $OUT/out.tgz -C $R .
