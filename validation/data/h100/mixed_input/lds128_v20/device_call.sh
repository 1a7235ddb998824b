#!/usr/bin/env bash
# v20's one device call (issue 14; kernels/mixed_input/NOTES.md v20: the arithmetic and the rule,
# committed before the call). Two builds carried as .carry/prefill2/bins.tar.xz ({base,v20}/):
# base, the committed kernel (v18's base binaries: ec4793e's tree with its variant off, every
# kernel 4a609c3's SASS, which is HEAD's); v20, this tree with TILESIM_MIXED_INPUT_PREFILL_V20 = 1
# (the six prmt kernels of 128-channel tiles take the 16-byte-unit K loop; every other kernel the
# same SASS). Quick check of both, full check and compute-sanitizer memcheck of v20, the bench
# twice alternating base / v20 (cuBLAS bf16 interleaved inside each, queued from a cold L2), the
# prefill records alone once a build with the SM clock sampled by nvidia-smi every 100 ms, the
# K-block rate of the 128-channel tiles (base twice, v20 three times, alternating), Nsight
# Compute's per-instruction stall samples of the 224-token int8 kernel in both builds at the
# bench's own clock (--clock-control none), the rule (v17's rule script: its "ahead" is the
# variant) read here, then, if v20 wins, the 30 prefill dataset configurations that use the prmt
# conversion measured with v20's tilesim-measure. Everything goes into one archive, out.tgz.
set -u -o pipefail
C=/tmp/bins; mkdir -p $C && tar xJf .carry/prefill2/bins.tar.xz -C $C # base/ and v20/, stripped
RULE=validation/data/h100/mixed_input/w_ahead_v17/v17_rule.py
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/lib:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}"
export PATH="/usr/local/cuda/bin:$PATH"
R=/tmp/out; mkdir -p $R/measured
driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
clock_query=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
  ok=1
  for v in base v20; do
    echo "== quick check $v $(date -u +%T)"
    timeout 120 $C/$v/mixed_input_check --quick >$R/check_quick_$v.log 2>&1; rc=$?
    echo "check $v exit $rc"; grep FAIL $R/check_quick_$v.log | head -5; grep -c "^PASS" $R/check_quick_$v.log
    [ $rc -eq 0 ] || ok=0
  done
  echo "== full check v20 $(date -u +%T)"
  timeout 240 $C/v20/mixed_input_check >$R/check_full_v20.log 2>&1; rc=$?
  echo "full check v20 exit $rc"; grep FAIL $R/check_full_v20.log | head -5; grep -c "^PASS" $R/check_full_v20.log
  [ $rc -eq 0 ] || ok=0
  echo "== compute-sanitizer memcheck, v20 mixed_input_check --quick $(date -u +%T)"
  timeout 240 compute-sanitizer --tool memcheck $C/v20/mixed_input_check --quick >$R/sanitizer_v20.log 2>&1
  echo "sanitizer exit $?; $(grep -c 'ERROR SUMMARY: 0 errors' $R/sanitizer_v20.log) clean summary line(s)"; tail -n 2 $R/sanitizer_v20.log
  winner=base
  if [ $ok -eq 1 ]; then
    for run in 1 2; do
      for v in base v20; do
        echo "== bench $v run $run $(date -u +%T)"
        timeout 200 $C/$v/mixed_input_bench --out $R/bench_${v}_run$run.json --reps 30 --driver "$driver" \
          --command "mixed_input_bench --reps 30 ($v build: kernels/mixed_input v20, the prefill K loop from 16-byte W units $([ $v = v20 ] && echo on || echo off); runs alternate base, v20, base, v20)" \
          >$R/bench_${v}_run$run.log 2>&1
        echo "bench exit $?"; grep prefill $R/bench_${v}_run$run.log
      done
    done
    for v in base v20; do
      echo "== prefill records alone, $v, SM clock sampled every 100 ms $(date -u +%T)"
      nvidia-smi --query-gpu=$clock_query --format=csv -lms 100 >$R/clocks_prefill_$v.csv 2>&1 &
      sampler=$!
      timeout 120 $C/$v/mixed_input_bench --only prefill --reps 30 --out $R/bench_prefill_$v.json --driver "$driver" \
        --command "mixed_input_bench --only prefill --reps 30 ($v build, nvidia-smi sampling the SM clock)" >$R/bench_prefill_$v.log 2>&1
      echo "bench exit $?"; kill $sampler; wait $sampler 2>/dev/null
      grep prefill $R/bench_prefill_$v.log
      awk -F', ' 'NR > 1 && $2 + 0 > 0 {print $2 + 0}' $R/clocks_prefill_$v.csv | sort -n | \
        awk '{a[NR] = $1} END {if (NR) print "SM clock samples: " NR ", min " a[1] ", median " a[int((NR + 1) / 2)] ", max " a[NR] " MHz"}'
    done
    for v in base v20 v20 base v20; do
      n=$(ls $R/block_rate_${v}_*.json 2>/dev/null | wc -l); n=$((n + 1))
      echo "== block rate $v $n $(date -u +%T)"
      timeout 120 $C/$v/mixed_input_block_rate --tiles 128,224,256 --reps 50 >$R/block_rate_${v}_$n.json 2>$R/block_rate_${v}_$n.err
      echo "block rate exit $?"; grep -o '"tile_m": [0-9]*\|"conversion": "[a-z]*"\|"weight": "[a-z0-9]*"\|"ns_per_block": [0-9.]*' $R/block_rate_${v}_$n.json | paste - - - - | head -12
    done
    echo "== Nsight Compute per-instruction stall samples, 224-token int8 prmt, s4, TMA store, row-major, bench clock $(date -u +%T)"
    if command -v ncu >/dev/null; then
      for v in base v20; do
        # The bench's int8 prefill record at s4 with the TMA store: the grouped_m:8 candidate's
        # check run, then the row-major one's: skip 1 is the row-major call (as v16's and v18's).
        timeout 150 ncu --clock-control none --kernel-name-base mangled -k "regex:Li224ELi128ELi1ELNS0_7dequant10ConversionE0ELb1E" \
          --launch-skip 1 --launch-count 1 --section WarpStateStats --section SourceCounters --import-source no \
          -o $R/ncu_224_$v $C/$v/mixed_input_bench --only prefill --reps 1 --out /tmp/ncu_bench.json >$R/ncu_224_$v.log 2>&1
        echo "ncu $v exit $?"
        timeout 60 ncu --import $R/ncu_224_$v.ncu-rep --page source --print-source sass --csv >$R/ncu_224_${v}_sass.csv 2>&1
        echo "ncu source page $v exit $?, $(wc -l <$R/ncu_224_${v}_sass.csv) lines"
        timeout 60 ncu --import $R/ncu_224_$v.ncu-rep --page details >$R/ncu_224_${v}_details.txt 2>&1
        rm -f $R/ncu_224_$v.ncu-rep
      done
    else
      echo "no ncu on this machine"
    fi
    echo "== rule $(date -u +%T)"
    python3 $RULE $R/bench_base_run1.json $R/bench_v20_run1.json $R/bench_base_run2.json $R/bench_v20_run2.json | tee $R/rule.txt
    [ "$(tail -n 1 $R/rule.txt)" = ahead ] && winner=v20
  else
    echo "a check failed: no bench, no dataset"
  fi
  if [ $winner = v20 ] && [ -x $C/v20/tilesim-measure ]; then
    echo "== dataset with v20 $(date -u +%T)"
    start=$(date +%s) good=0 failed=0
    for spec in validation/data/h100/mixed_input/specs/pre*_prmt_*.json; do
      id="$(basename "$spec" .json)"
      if timeout 60 $C/v20/tilesim-measure --kernel "$spec" --out "$R/measured/$id.json" --runs 25 >"$R/measured/$id.log" 2>&1; then
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
