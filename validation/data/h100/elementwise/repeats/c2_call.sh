#!/usr/bin/env bash
# Run C2 (kernels/elementwise/NOTES.md, "All loads first"), one H100 device call: the quick check
# of elementwise_check and libtilesim_elementwise_capi.so built from a015eb4 plus
# repeats/c2_loads_first.patch (carried in .carry/elementwise3/), the pre-registered benchmark and
# compute-sanitizer memcheck on the quick check.
set -u -o pipefail
d=.carry/elementwise3
o="$OUT/c2"
mkdir -p "$o"
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
  echo "== elementwise_check --quick"
  timeout 120 "$d/elementwise_check" --quick | grep -vE "^ok "
  echo "== run C2: vector add against Triton"
  PYTHONUNBUFFERED=1 timeout 300 python3 -c 'import runpy,sys,torch; pad=torch.empty(70<<20,dtype=torch.uint8,device="cuda"); sys.argv=sys.argv[1:]; runpy.run_path(sys.argv[0],run_name="__main__")' \
    kernels/elementwise/bench_baselines.py --lib "$d/libtilesim_elementwise_capi.so" --out "$o/bench_c2.json" \
    --sizes 1024,262144,524288,786432,1048576,1310720,1572864,2097152,4194304,16777216,67108864,268435456,1073741824,1000003,10000001,16777217 \
    --ours b256v4u1_grid,b64v4u4_grid,b128v4u4_grid,b256v4u4_grid,b128v4u2_grid --reference b256v4u1_grid \
    --baselines triton --placements 16 --reps 50 --trace-max 1048576 --trace-keep 1048576
  date -u
  echo "== compute-sanitizer memcheck: elementwise_check --quick"
  timeout 150 compute-sanitizer --tool memcheck --print-limit 5 "$d/elementwise_check" --quick | grep -vE "^ok " | tail -n 6
  nvidia-smi --query-gpu=clocks.sm,temperature.gpu --format=csv
  date -u
} 2>&1 | tee "$o/c2.log"
