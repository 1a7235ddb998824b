#!/usr/bin/env bash
# v21's one device call (issue 14; kernels/mixed_input/NOTES.md v21: the arithmetic and the rule,
# committed before the call). Two builds carried as .carry/decode2/bins.tar.xz ({base,v21}/):
# base, v20's binaries (every mixed-input kernel the committed SASS); v21, this tree with
# TILESIM_MIXED_INPUT_DECODE_V21 = 1 (the two 64-token prmt kernels of one and two K blocks a stage
# take the 16-byte-unit K loop; every other kernel the same SASS). Quick check of both, full check
# and compute-sanitizer memcheck of v21, the bench twice alternating base / v21 (cuBLAS bf16
# interleaved inside each, queued from a cold L2), the 64-token K-block rate (base twice, v21 three
# times, alternating), the rule read here by v21_rule.py, then, if v21 wins, every dataset
# configuration whose kernel changed (64-token tile, prmt, tile k <= 256: read from the specs)
# measured with v21's tilesim-measure. Everything goes into one archive, out.tgz.
set -u -o pipefail
D=validation/data/h100/mixed_input
C=/tmp/bins; mkdir -p $C && tar xJf .carry/decode2/bins.tar.xz -C $C # base/ and v21/, stripped
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/lib:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}"
export PATH="/usr/local/cuda/bin:$PATH"
R=/tmp/out; mkdir -p $R/measured
driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
  ok=1
  for v in base v21; do
    echo "== quick check $v $(date -u +%T)"
    timeout 120 $C/$v/mixed_input_check --quick >$R/check_quick_$v.log 2>&1; rc=$?
    echo "check $v exit $rc"; grep FAIL $R/check_quick_$v.log | head -5; grep -c "^PASS" $R/check_quick_$v.log
    [ $rc -eq 0 ] || ok=0
  done
  echo "== full check v21 $(date -u +%T)"
  timeout 240 $C/v21/mixed_input_check >$R/check_full_v21.log 2>&1; rc=$?
  echo "full check v21 exit $rc"; grep FAIL $R/check_full_v21.log | head -5; grep -c "^PASS" $R/check_full_v21.log
  [ $rc -eq 0 ] || ok=0
  echo "== compute-sanitizer memcheck, v21 mixed_input_check --quick $(date -u +%T)"
  timeout 240 compute-sanitizer --tool memcheck $C/v21/mixed_input_check --quick >$R/sanitizer_v21.log 2>&1
  rc=$?; echo "sanitizer exit $rc; $(grep -c 'ERROR SUMMARY: 0 errors' $R/sanitizer_v21.log) clean summary line(s)"
  tail -n 2 $R/sanitizer_v21.log
  [ $rc -eq 0 ] || ok=0
  winner=base
  if [ $ok -eq 1 ]; then
    for run in 1 2; do
      for v in base v21; do
        echo "== bench $v run $run $(date -u +%T)"
        timeout 200 $C/$v/mixed_input_bench --out $R/bench_${v}_run$run.json --reps 30 --driver "$driver" \
          --command "mixed_input_bench --reps 30 ($v build: kernels/mixed_input v21, the 64-token decode K loop from 16-byte W units $([ $v = v21 ] && echo on || echo off); runs alternate base, v21, base, v21)" \
          >$R/bench_${v}_run$run.log 2>&1
        echo "bench exit $?"; grep "decode_m64\|prefill" $R/bench_${v}_run$run.log
      done
    done
    for v in base v21 v21 base v21; do
      n=$(ls $R/block_rate_${v}_*.json 2>/dev/null | wc -l); n=$((n + 1))
      echo "== block rate $v $n $(date -u +%T)"
      timeout 120 $C/$v/mixed_input_block_rate --tiles 64 --reps 50 >$R/block_rate_${v}_$n.json 2>$R/block_rate_${v}_$n.err
      echo "block rate exit $?"; grep -o '"tile_m": [0-9]*\|"conversion": "[a-z]*"\|"weight": "[a-z0-9]*"\|"ns_per_block": [0-9.]*' $R/block_rate_${v}_$n.json | paste - - - - | head -8
    done
    echo "== rule $(date -u +%T)"
    python3 $D/decode_units_v21/v21_rule.py $R/bench_base_run1.json $R/bench_v21_run1.json $R/bench_base_run2.json $R/bench_v21_run2.json | tee $R/rule.txt
    [ "$(tail -n 1 $R/rule.txt)" = v21 ] && winner=v21
  else
    echo "a check failed: no bench, no dataset"
  fi
  if [ $winner = v21 ] && [ -x $C/v21/tilesim-measure ]; then
    echo "== dataset with v21 $(date -u +%T)"
    start=$(date +%s) good=0 failed=0
    for spec in $(python3 -c "
import glob, json
for f in sorted(glob.glob('$D/specs/*.json')):
    s = json.load(open(f))
    if s['tile']['m'] == 64 and s['quant']['conversion'] == 'prmt' and s['tile']['k'] <= 256: print(f)"); do
      id="$(basename "$spec" .json)"
      if timeout 60 $C/v21/tilesim-measure --kernel "$spec" --out "$R/measured/$id.json" --runs 25 >"$R/measured/$id.log" 2>&1; then
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
