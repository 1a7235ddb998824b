#!/usr/bin/env bash
# Run C3 (kernels/elementwise/NOTES.md, "Run C3"), one H100 device call: elementwise_check,
# libtilesim_elementwise_capi.so and tilesim-measure built here from the commit that pre-registered
# C3 (carried in .carry/elementwise/bin/); compute-sanitizer memcheck on the quick check (the new
# tail, the three candidates), the quick check, the pre-registered benchmark at 0.5M-4M and
# 1,000,003 (16 placements x 50 rounds, Triton), the range run from 1,000 elements to 4 GB (4
# placements x 30 rounds, Triton, torch, copy), and tilesim-measure on the 41 element-wise dataset
# configurations.
set -u -o pipefail
d=.carry/elementwise/bin
o="$OUT/c3"
mkdir -p "$o"
ours=b256v4u1_grid,b256v4u1_grid_committed,b128v4u2_grid,b128v4u2_grid_committed,b64v4u4_grid,b64v4u4_grid_committed
ours+=,b128v4u2_grid_l2ef,b128v4u4_grid_bulk
bench() { # the C2 way: a 70 MiB tensor held first, so that no placement repeats an earlier run's
  PYTHONUNBUFFERED=1 timeout "$1" python3 -c 'import runpy,sys,torch; pad=torch.empty(70<<20,dtype=torch.uint8,device="cuda"); sys.argv=sys.argv[1:]; runpy.run_path(sys.argv[0],run_name="__main__")' \
    kernels/elementwise/bench_baselines.py --lib "$d/libtilesim_elementwise_capi.so" --ours "$ours" \
    --reference b256v4u1_grid_committed "${@:2}"
}
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
  echo "== compute-sanitizer memcheck: elementwise_check --quick"
  timeout 150 compute-sanitizer --tool memcheck --print-limit 5 "$d/elementwise_check" --quick | grep -vE "^ok " | tail -n 6
  echo "== elementwise_check --quick"
  timeout 60 "$d/elementwise_check" --quick | grep -vE "^ok "
  echo "== run C3: 0.5M-4M and 1,000,003 against Triton"
  bench 180 --out "$o/bench_c3.json" --asm-dir "$o/asm" --baselines triton --placements 16 --reps 50 \
    --sizes 524288,786432,1048576,1310720,2097152,4194304,1000003 --trace-max 1048576 --trace-keep 1048576
  date -u
  echo "== run C3, range: 1,000 elements to 4 GB against Triton, torch, copy"
  bench 150 --out "$o/bench_c3_range.json" --placements 4 --reps 30 --trace-max 0 \
    --sizes 1000,1024,16384,262144,1048576,16777216,67108864,268435456,1073741824,1000003,10000001,16777217
  date -u
  echo "== dataset: the 41 element-wise configurations"
  bash kernels/elementwise/run_device.sh dataset "$d" "$o/dataset" 90 '^ew_'
  nvidia-smi --query-gpu=clocks.sm,temperature.gpu --format=csv
  date -u
} 2>&1 | tee "$o/c3.log"
tar -czf "$OUT/c3.tgz" -C "$OUT" c3
