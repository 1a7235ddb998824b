#!/usr/bin/env bash
# v21's landing call (issue 14; kernels/mixed_input/NOTES.md "v21 landed?": the rule, committed
# before the call). The binaries v21's call ran (../decode_units_v21/device_call.sh), carried as
# .carry/decode4/bins.tar.xz ({base,v21}/, the same archive by sha256): base, every mixed-input
# kernel 8a62a9c's SASS; v21, the 64-token prmt kernels of one and two K blocks a stage from
# 16-byte W units. Quick check of both and the full check of v21 (memcheck of these v21 binaries:
# ../decode_units_v21/sanitizer_v21.log, 0 errors), the bench twice alternating base / v21 (cuBLAS
# bf16 interleaved inside each), the 64-token K-block rate of the two-block stage at 4 stages and
# of the one-block stage at 8 (base, v21, base, v21, v21 each), the rule read here by
# land_rule.py (adoption as an improvement; the 1.6x bar reported apart), then, if v21 wins, the
# dataset's 64-token specs measured with v21's tilesim-measure: the 5 prmt ones as they are (tile
# k 256, 4 stages) into measured/, and all 7 (cvt too) as the one-block stage at 8 stages (tile k
# 128) into measured_s8/. One archive, out.tgz.
set -u -o pipefail
D=validation/data/h100/mixed_input
C=/tmp/bins; mkdir -p $C && tar xJf .carry/decode4/bins.tar.xz -C $C
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/lib:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}"
export PATH="/usr/local/cuda/bin:$PATH"
R=/tmp/out; mkdir -p $R/measured $R/measured_s8 $R/specs_s8
driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
  sha256sum .carry/decode4/bins.tar.xz
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
  winner=base
  if [ $ok -eq 1 ]; then
    for run in 1 2; do
      for v in base v21; do
        echo "== bench $v run $run $(date -u +%T)"
        timeout 200 $C/$v/mixed_input_bench --out $R/bench_${v}_run$run.json --reps 30 --driver "$driver" \
          --command "mixed_input_bench --reps 30 ($v build: kernels/mixed_input v21, the 64-token decode K loop from 16-byte W units $([ $v = v21 ] && echo on || echo off); v21's landing call, runs alternate base, v21, base, v21)" \
          >$R/bench_${v}_run$run.log 2>&1
        echo "bench exit $?"; grep "decode_m64" $R/bench_${v}_run$run.log
      done
    done
    for sb in 2 1; do
      extra=""; [ $sb = 1 ] && extra="--stage-blocks 1 --stages 8"
      for v in base v21 base v21 v21; do
        n=$(ls $R/block_rate_sb${sb}_${v}_*.json 2>/dev/null | wc -l); n=$((n + 1))
        echo "== block rate sb$sb $v $n $(date -u +%T)"
        timeout 120 $C/$v/mixed_input_block_rate --tiles 64 --reps 50 $extra >$R/block_rate_sb${sb}_${v}_$n.json 2>$R/block_rate_sb${sb}_${v}_$n.err
        echo "block rate exit $?"; grep -o '"tile_k": [0-9]*\|"stages": [0-9]*\|"conversion": "[a-z]*"\|"weight": "[a-z0-9]*"\|"ns_per_block": [0-9.]*' $R/block_rate_sb${sb}_${v}_$n.json | paste - - - - - | head -8
      done
    done
    echo "== rule $(date -u +%T)"
    python3 $D/decode_units_v21_land/land_rule.py $R/bench_base_run1.json $R/bench_v21_run1.json $R/bench_base_run2.json $R/bench_v21_run2.json | tee $R/rule.txt
    [ "$(tail -n 1 $R/rule.txt)" = v21 ] && winner=v21
  else
    echo "a check failed: no bench, no dataset"
  fi
  if [ $winner = v21 ]; then
    echo "== dataset with v21 $(date -u +%T)"
    start=$(date +%s) good=0 failed=0
    python3 - "$D/specs" "$R" <<'PY'
import glob, json, os, sys
specs, out = sys.argv[1:]
for f in sorted(glob.glob(specs + '/*.json')):
    s = json.load(open(f))
    if s['tile']['m'] != 64:
        continue
    name = os.path.basename(f)
    if s['quant']['conversion'] == 'prmt':
        open(out + '/as_is.txt', 'a').write(f + '\n')
    s['tile']['k'], s['stages'] = 128, 8  # the one-block stage at 8 stages
    s['command'] += "; tile k 128 and 8 stages set by v21's landing call (decode_units_v21_land/device_call.sh)"
    json.dump(s, open(out + '/specs_s8/' + name, 'w'), indent=1)
PY
    for spec in $(cat $R/as_is.txt) $R/specs_s8/*.json; do
      id="$(basename "$spec" .json)"; dir=measured; case $spec in $R/specs_s8/*) dir=measured_s8 ;; esac
      if timeout 60 $C/v21/tilesim-measure --kernel "$spec" --out "$R/$dir/$id.json" --runs 25 >"$R/$dir/$id.log" 2>&1; then
        good=$((good + 1))
      else
        failed=$((failed + 1)); echo "FAILED $dir/$id: $(tail -n 1 "$R/$dir/$id.log")"
      fi
    done
    echo "dataset: $good measured, $failed failed in $(( $(date +%s) - start )) s"
  else
    echo "== winner $winner: the dataset stays as measured"
  fi
  echo "== done $(date -u +%T)"
} 2>&1 | tee $R/call.log
tar czf $OUT/out.tgz -C $R .
