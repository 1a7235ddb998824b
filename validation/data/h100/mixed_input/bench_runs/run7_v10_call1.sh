#!/usr/bin/env bash
# Device call 1 (issue 14): the trimmed K block (v10) checked and benchmarked, and the K-block
# ablations (committed kernel, trimmed, no wgmma, no conversion, SS wgmma with and without the
# conversion), two interleaved rounds. Binaries built on the development machine from the working
# tree (build-mixed) and carried.
set -u -o pipefail
B=.carry/mixed
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/lib:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}"
mkdir -p /tmp/r
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
  echo "== quick check (trimmed) $(date -u +%T)"
  $B/mixed_input_check --quick; check_rc=$?
  echo "check exit $check_rc"
  for round in 1 2; do
    for v in head d1 nomma noconv ss ss_noconv; do
      bin=$B/rate_$v; [ $v = d1 ] && bin=$B/mixed_input_block_rate
      echo "== block rate $v round $round $(date -u +%T)"
      $bin --reps 30 --tiles 16,64,224 --prmt-only >/tmp/r/rate_${v}_r$round.json
      python3 -c "import json,sys;d=json.load(open(sys.argv[1]));print(' '.join('%d:%.1f'%(c['tile_m'],c['ns_per_block']) for c in d['configs']))" /tmp/r/rate_${v}_r$round.json
    done
  done
  if (( check_rc == 0 )); then
    echo "== bench (trimmed) $(date -u +%T)"
    driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
    $B/mixed_input_bench --out /tmp/r/bench_v10.json --reps 30 --driver "$driver" \
      --command "mixed_input_bench --reps 30 (kernels/mixed_input at the v10 trim, device call 1)"
    echo "== full check (trimmed) $(date -u +%T)"
    timeout 200 $B/mixed_input_check; echo "full check exit $?"
  fi
  echo "== done $(date -u +%T)"
} 2>&1 | tee $OUT/call1.log
tar czf $OUT/call1.tgz -C /tmp r
