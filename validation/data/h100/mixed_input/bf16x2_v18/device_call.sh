#!/usr/bin/env bash
# v18's one device call (issue 14; kernels/mixed_input/NOTES.md v18: the arithmetic and the rule,
# committed before the call). Two builds of one tree, carried as .carry/prefill/bins.tar.xz
# ({base,v18}/): base, the committed kernel; v18, the same sources with
# TILESIM_MIXED_INPUT_BF16X2_INT8 = 1 (prefill tiles convert int8 as packed bf16 and uint8 without
# the flip; every other kernel is the same SASS). Quick check of both, full check and
# compute-sanitizer memcheck of v18, the bench four times alternating base / v18 (cuBLAS bf16
# interleaved inside each, queued from a cold L2), the K-block rate of the 128-channel tiles (base
# twice, v18 three times, alternating), Nsight Compute's per-instruction stall samples of the
# 224-token int8 kernel in both builds, the rule (v17's rule script: its "ahead" is the variant)
# read here, then, if v18 wins, the 30 prefill dataset configurations that use the prmt
# conversion measured with v18's tilesim-measure. Everything goes into one archive, out.tgz.
set -u -o pipefail
C=/tmp/bins; mkdir -p $C && tar xJf .carry/prefill/bins.tar.xz -C $C # base/ and v18/, stripped
RULE=validation/data/h100/mixed_input/w_ahead_v17/v17_rule.py
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/lib:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}"
export PATH="/usr/local/cuda/bin:$PATH"
R=/tmp/out; mkdir -p $R/measured
driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
  ok=1
  for v in base v18; do
    echo "== quick check $v $(date -u +%T)"
    timeout 120 $C/$v/mixed_input_check --quick >$R/check_quick_$v.log 2>&1; rc=$?
    echo "check $v exit $rc"; grep FAIL $R/check_quick_$v.log | head -5; grep -c "^PASS" $R/check_quick_$v.log
    [ $rc -eq 0 ] || ok=0
  done
  echo "== full check v18 $(date -u +%T)"
  timeout 240 $C/v18/mixed_input_check >$R/check_full_v18.log 2>&1; rc=$?
  echo "full check v18 exit $rc"; grep FAIL $R/check_full_v18.log | head -5; grep "bf16x2" $R/check_full_v18.log
  [ $rc -eq 0 ] || ok=0
  echo "== compute-sanitizer memcheck, v18 mixed_input_check --quick $(date -u +%T)"
  timeout 240 compute-sanitizer --tool memcheck $C/v18/mixed_input_check --quick >$R/sanitizer_v18.log 2>&1
  echo "sanitizer exit $?; $(grep -c 'ERROR SUMMARY: 0 errors' $R/sanitizer_v18.log) clean summary line(s)"; tail -n 2 $R/sanitizer_v18.log
  winner=base
  if [ $ok -eq 1 ]; then
    for run in 1 2; do
      for v in base v18; do
        echo "== bench $v run $run $(date -u +%T)"
        timeout 200 $C/$v/mixed_input_bench --out $R/bench_${v}_run$run.json --reps 30 --driver "$driver" \
          --command "mixed_input_bench --reps 30 ($v build: kernels/mixed_input v18, int8 as packed bf16 on 128-channel tiles $([ $v = v18 ] && echo on || echo off); runs alternate base, v18, base, v18)" \
          >$R/bench_${v}_run$run.log 2>&1
        echo "bench exit $?"; grep prefill $R/bench_${v}_run$run.log
      done
    done
    for v in base v18 v18 base v18; do
      n=$(ls $R/block_rate_${v}_*.json 2>/dev/null | wc -l); n=$((n + 1))
      echo "== block rate $v $n $(date -u +%T)"
      timeout 120 $C/$v/mixed_input_block_rate --tiles 128,224,256 --reps 50 >$R/block_rate_${v}_$n.json 2>$R/block_rate_${v}_$n.err
      echo "block rate exit $?"; grep -o '"tile_m": [0-9]*\|"conversion": "[a-z]*"\|"weight": "[a-z0-9]*"\|"ns_per_block": [0-9.]*' $R/block_rate_${v}_$n.json | paste - - - - | head -12
    done
    echo "== Nsight Compute per-instruction stall samples, 224-token int8 prmt, s4, TMA store, row-major $(date -u +%T)"
    if command -v ncu >/dev/null; then
      for v in base v18; do
        # The bench's int8 prefill record at s4 with the TMA store: the grouped_m:8 candidate's
        # check run, then the row-major one's: skip 1 is the row-major call (as v16's reading).
        timeout 150 ncu --kernel-name-base mangled -k "regex:Li224ELi128ELi1ELNS0_7dequant10ConversionE0ELb1E" \
          --launch-skip 1 --launch-count 1 --section WarpStateStats --section SourceCounters --import-source no \
          -o $R/ncu_224_$v $C/$v/mixed_input_bench --only prefill --reps 1 --out /tmp/ncu_bench.json >$R/ncu_224_$v.log 2>&1
        echo "ncu $v exit $?"
        timeout 60 ncu --import $R/ncu_224_$v.ncu-rep --page source --print-source sass --csv >$R/ncu_224_${v}_sass.csv 2>&1
        echo "ncu source page $v exit $?, $(wc -l <$R/ncu_224_${v}_sass.csv) lines"
        timeout 60 ncu --import $R/ncu_224_$v.ncu-rep --page details >$R/ncu_224_${v}_details.txt 2>&1
      done
    else
      echo "no ncu on this machine"
    fi
    echo "== rule $(date -u +%T)"
    python3 $RULE $R/bench_base_run1.json $R/bench_v18_run1.json $R/bench_base_run2.json $R/bench_v18_run2.json | tee $R/rule.txt
    [ "$(tail -n 1 $R/rule.txt)" = ahead ] && winner=v18
  else
    echo "a check failed: no bench, no dataset"
  fi
  if [ $winner = v18 ]; then
    echo "== dataset with v18 $(date -u +%T)"
    start=$(date +%s) good=0 failed=0
    for spec in validation/data/h100/mixed_input/specs/pre*_prmt_*.json; do
      id="$(basename "$spec" .json)"
      if timeout 60 $C/v18/tilesim-measure --kernel "$spec" --out "$R/measured/$id.json" --runs 25 >"$R/measured/$id.log" 2>&1; then
        good=$((good + 1))
      else
        failed=$((failed + 1)); echo "FAILED $id: $(tail -n 1 "$R/measured/$id.log")"
      fi
    done
    echo "dataset: $good measured, $failed failed in $(( $(date +%s) - start )) s"
  else
    echo "== winner $winner: the dataset stays as measured"
  fi
  echo "== done $(date -u +%T)"
} 2>&1 | tee $R/call.log
tar czf $OUT/out.tgz -C $R .
