#!/usr/bin/env bash
# Run LP (issue 14): the decode load path alone over load-path structures (load_path_sweep, built by
# build.sh), between two runs of the committed kernel's loads-only ablation (stream_v13's bench_idle,
# the same binary) as the anchor. Binaries carried in .carry/mixed2/sweep. One archive, out.tgz.
set -u -o pipefail
B=.carry/mixed2/sweep
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}"
R=/tmp/out; mkdir -p $R
driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
  for pass in 1 2; do
    for shape in decode_m16 decode_m64; do
      echo "== bench_idle $shape pass $pass $(date -u +%T)"
      timeout 100 $B/bench_idle --only $shape --out $R/bench_idle_${shape}_$pass.json --reps 30 --driver "$driver" \
        --command "mixed_input_bench --only $shape --reps 30 (kernel: idle)" 2>&1 | grep -v "^ *events around"
    done
    if [ $pass = 1 ]; then
      echo "== load_path_sweep $(date -u +%T)"
      timeout 240 $B/load_path_sweep 40 >$R/load_path_sweep.json 2>$R/load_path_sweep.log
      echo "exit $?"; cat $R/load_path_sweep.log
    fi
  done
  echo "== done $(date -u +%T)"
} 2>&1 | tee $R/call.log
tar czf $OUT/out.tgz -C $R .
