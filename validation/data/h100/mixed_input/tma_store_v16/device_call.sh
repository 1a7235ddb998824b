#!/usr/bin/env bash
# A device call for v16 (issue 14, prepared, not yet run): 128-channel (prefill) tiles whose
# consumers write their tile transposed into shared memory (stmatrix .trans, 128B-swizzled) and
# store it with one TMA store they do not wait for, where the committed kernel stores each element
# with a 2-byte global store (kernels/mixed_input/NOTES.md, v16: the arithmetic and the decision
# rule, written before any call). Quick check, registers and spills, full check, compute-sanitizer
# memcheck on the quick check, the benchmark twice (every shape; prefill with either epilogue, each
# in grouped_m:8 and row-major order, interleaved with cuBLAS bf16, queued from a cold L2), and
# Nsight Compute's throughput sections and warp stall reasons on the 224-token tile with either
# epilogue.
# Binaries built on the development machine from the tree with tma_store_epilogue.patch applied
# (build-mixed: mixed_input_check, mixed_input_bench; CUDA 13.0, sm_90a), carried in .carry/mixed.
# Every output goes into one archive, out.tgz.
set -u -o pipefail
B=.carry/mixed
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/lib:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}"
export PATH="/usr/local/cuda/bin:$PATH"
R=/tmp/out; mkdir -p $R
driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
  echo "== quick check $(date -u +%T)"
  timeout 180 $B/mixed_input_check --quick >$R/check_quick.log 2>&1; check_rc=$?
  echo "check exit $check_rc"; grep "FAIL" $R/check_quick.log | head; tail -n 1 $R/check_quick.log
  echo "== registers and spills $(date -u +%T)"
  cuobjdump --dump-resource-usage $B/mixed_input_check 2>&1 | grep -A1 mixed_input_gemm_kernel | grep -o "_Z[A-Za-z0-9_]*\|REG:[0-9]*\|STACK:[0-9]*\|LOCAL:[0-9]*" | paste - - - - >$R/resource_usage.txt
  cat $R/resource_usage.txt
  echo "== full check $(date -u +%T)"
  timeout 300 $B/mixed_input_check >$R/check_full.log 2>&1; full_rc=$?
  echo "full check exit $full_rc"; grep "FAIL" $R/check_full.log | head; tail -n 1 $R/check_full.log
  echo "== compute-sanitizer memcheck, mixed_input_check --quick $(date -u +%T)"
  timeout 300 compute-sanitizer --tool memcheck $B/mixed_input_check --quick >$R/sanitizer.log 2>&1
  echo "sanitizer exit $?; $(grep -c 'ERROR SUMMARY: 0 errors' $R/sanitizer.log) clean summary line(s)"; tail -n 2 $R/sanitizer.log
  if [ $check_rc -eq 0 ] && [ $full_rc -eq 0 ]; then
    for run in 1 2; do
      echo "== bench run $run $(date -u +%T)"
      timeout 300 $B/mixed_input_bench --out $R/bench_run$run.json --reps 30 --driver "$driver" \
        --command "mixed_input_bench --reps 30 (kernels/mixed_input v16: 128-channel tiles with element stores or the TMA-store epilogue)" >$R/bench_run$run.log 2>&1
      cat $R/bench_run$run.log
    done
    echo "== Nsight Compute, 224-token tile, s4, row-major: element stores (b0), TMA store (b1) $(date -u +%T)"
    if command -v ncu >/dev/null; then
      for b in 0 1; do
        # Launch order in the bench's int8 prefill record: at s4 the grouped_m:8 candidate's check
        # run, then the row-major one's: skip 1 is the row-major call.
        timeout 150 ncu --kernel-name-base mangled -k "regex:Li224ELi128ELi1ELNS0_7dequant10ConversionE0ELb${b}E" \
          --launch-skip 1 --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis \
          --section WarpStateStats --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" \
          $B/mixed_input_bench --only prefill --reps 1 --out /tmp/ncu_bench.json >$R/ncu_224_b$b.txt 2>&1
        echo "ncu b$b exit $?"; grep -i "duration\|Elapsed Cycles\|L2 Cache Throughput\|Issue Slots Busy\|highest-utilized" $R/ncu_224_b$b.txt | head -8
      done
    else
      echo "no ncu on this machine"
    fi
  fi
  echo "== done $(date -u +%T)"
} 2>&1 | tee $R/call.log
tar czf $OUT/out.tgz -C $R .
