#!/usr/bin/env bash
# Device call 3 (issue 14): is the decode K block's load path bound by latency (time falls with
# the ring's depth) or by a per-stage cost (flat)? The v10 kernel and its load path alone (the
# idle ablation) at ring depths 4-16 (16-token tiles) and 2-8 (64-token tiles), two rounds.
set -u -o pipefail
B=.carry/mixed
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}"
mkdir -p /tmp/r
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
  for round in 1 2; do
    for v in d1 idle; do
      bin=$B/rate_$v; [ $v = d1 ] && bin=$B/mixed_input_block_rate
      for st in 4 8 12 16; do
        $bin --reps 30 --tiles 16 --prmt-only --stages $st >/tmp/r/depth_${v}_t16_s${st}_r$round.json
        echo "$v t16 stages $st round $round: $(python3 -c "import json,sys;print(json.load(open(sys.argv[1]))['configs'][0]['ns_per_block'])" /tmp/r/depth_${v}_t16_s${st}_r$round.json) ns"
      done
      for st in 2 4 8; do
        $bin --reps 30 --tiles 64 --prmt-only --stages $st >/tmp/r/depth_${v}_t64_s${st}_r$round.json
        echo "$v t64 stages $st round $round: $(python3 -c "import json,sys;print(json.load(open(sys.argv[1]))['configs'][0]['ns_per_block'])" /tmp/r/depth_${v}_t64_s${st}_r$round.json) ns"
      done
    done
  done
  date -u +%FT%TZ
} 2>&1 | tee $OUT/call3.log
tar czf $OUT/call3_runs.tgz -C /tmp r
