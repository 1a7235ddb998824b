#!/usr/bin/env bash
# v17's one device call (issue 14; kernels/mixed_input/NOTES.md v17: the arithmetic and the rule,
# committed before the call). Two builds of the same tree, carried as .carry/mixed3/bins.tar.xz ({base,ahead}/):
# base, the committed kernel; ahead, mixed_input_gemm.cu compiled with
# -DTILESIM_MIXED_INPUT_W_AHEAD=1 (128-channel tiles load block k + 1's W words before converting
# block k; every 64-channel kernel is the same SASS). Quick check of both, full check and
# compute-sanitizer memcheck of ahead, registers and spills, the bench four times alternating
# base / ahead (cuBLAS bf16 interleaved inside each, queued from a cold L2), the K-block rate of
# the 128-channel tiles (base twice, ahead three times, alternating), the rule (v17_rule.py)
# read here, then the 32 prefill dataset configurations on 224- and 256-token tiles with the
# winning build's tilesim-measure, each element-store configuration followed by its TMA-store twin.
# Everything goes into one archive, out.tgz.
set -u -o pipefail
C=/tmp/bins; mkdir -p $C && tar xJf .carry/mixed3/bins.tar.xz -C $C # base/ and ahead/, stripped
HERE=validation/data/h100/mixed_input/w_ahead_v17
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/lib:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}"
export PATH="/usr/local/cuda/bin:$PATH"
R=/tmp/out; mkdir -p $R/measured
driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
  echo "== registers and spills (ahead) $(date -u +%T)"
  cuobjdump --dump-resource-usage $C/ahead/mixed_input_check 2>&1 | grep -A1 mixed_input_gemm_kernel | grep -o "_Z[A-Za-z0-9_]*\|REG:[0-9]*\|STACK:[0-9]*\|LOCAL:[0-9]*" | paste - - - - >$R/resource_usage_ahead.txt
  cat $R/resource_usage_ahead.txt
  ok=1
  for v in base ahead; do
    echo "== quick check $v $(date -u +%T)"
    timeout 120 $C/$v/mixed_input_check --quick >$R/check_quick_$v.log 2>&1; rc=$?
    echo "check $v exit $rc"; grep FAIL $R/check_quick_$v.log | head -5; tail -n 1 $R/check_quick_$v.log
    [ $rc -eq 0 ] || ok=0
  done
  echo "== full check ahead $(date -u +%T)"
  timeout 240 $C/ahead/mixed_input_check >$R/check_full_ahead.log 2>&1; rc=$?
  echo "full check ahead exit $rc"; grep FAIL $R/check_full_ahead.log | head -5; tail -n 1 $R/check_full_ahead.log
  [ $rc -eq 0 ] || ok=0
  echo "== compute-sanitizer memcheck, ahead mixed_input_check --quick $(date -u +%T)"
  timeout 240 compute-sanitizer --tool memcheck $C/ahead/mixed_input_check --quick >$R/sanitizer_ahead.log 2>&1
  echo "sanitizer exit $?; $(grep -c 'ERROR SUMMARY: 0 errors' $R/sanitizer_ahead.log) clean summary line(s)"; tail -n 2 $R/sanitizer_ahead.log
  winner=base
  if [ $ok -eq 1 ]; then
    for run in 1 2; do
      for v in base ahead; do
        echo "== bench $v run $run $(date -u +%T)"
        timeout 200 $C/$v/mixed_input_bench --out $R/bench_${v}_run$run.json --reps 30 --driver "$driver" \
          --command "mixed_input_bench --reps 30 ($v build: kernels/mixed_input v17, W one K block ahead on 128-channel tiles $([ $v = ahead ] && echo on || echo off); runs alternate base, ahead, base, ahead)" \
          >$R/bench_${v}_run$run.log 2>&1
        echo "bench exit $?"; grep prefill $R/bench_${v}_run$run.log
      done
    done
    for v in base ahead ahead base ahead; do
      n=$(ls $R/block_rate_${v}_*.json 2>/dev/null | wc -l); n=$((n + 1))
      echo "== block rate $v $n $(date -u +%T)"
      timeout 120 $C/$v/mixed_input_block_rate --tiles 128,224,256 --reps 50 >$R/block_rate_${v}_$n.json 2>$R/block_rate_${v}_$n.err
      echo "block rate exit $?"; grep -o '"tile_m": [0-9]*\|"conversion": "[a-z]*"\|"weight": "[a-z0-9]*"\|"ns_per_block": [0-9.]*' $R/block_rate_${v}_$n.json | paste - - - - | head -12
    done
    echo "== rule $(date -u +%T)"
    python3 $HERE/v17_rule.py $R/bench_base_run1.json $R/bench_ahead_run1.json $R/bench_base_run2.json \
      $R/bench_ahead_run2.json | tee $R/rule.txt
    winner=$(tail -n 1 $R/rule.txt)
  else
    echo "a check failed: no bench, the dataset with the base build"
  fi
  echo "== dataset with $winner $(date -u +%T)"
  start=$(date +%s) good=0 failed=0
  for spec in validation/data/h100/mixed_input/specs/pre*_t2[25][46]_*.json; do
    case $spec in *_tma.json) continue ;; esac
    for id in "$(basename "$spec" .json)" "$(basename "$spec" .json)_tma"; do
      if timeout 60 $C/$winner/tilesim-measure --kernel "validation/data/h100/mixed_input/specs/$id.json" \
           --out "$R/measured/$id.json" --runs 25 >"$R/measured/$id.log" 2>&1; then
        good=$((good + 1))
      else
        failed=$((failed + 1)); echo "FAILED $id: $(tail -n 1 "$R/measured/$id.log")"
      fi
    done
  done
  echo "dataset: $good measured, $failed failed in $(( $(date +%s) - start )) s"
  echo "== done $(date -u +%T)"
} 2>&1 | tee $R/call.log
tar czf $OUT/out.tgz -C $R .
