#!/usr/bin/env bash
# Run C5 (kernels/elementwise/NOTES.md, "Run C5"), one H100 device call, on C4's binaries (carried in
# .carry/elementwise2/): c4/ holds libtilesim_elementwise_capi.so, elementwise_check and
# tilesim-measure with C3's step; committed/ the committed kernel's library (79882c6).
# compute-sanitizer memcheck on the quick check, the quick check, then 256 x 4 and 64 x 4 x 4, each
# with C3's step and the committed one, against Triton, interleaved, a 61 MiB tensor held first:
# 786,432, 1,048,576 and 1,000,003 at 16 placements x 50 rounds; 4 KB to 64M and the odd sizes at
# 4 x 30; 256M and 4 GB at 4 x 25. The launcher rules L1 and L2 are read against the pre-registered
# decision (c5_rule.py); where one is adopted, tilesim-measure runs the 41 element-wise dataset
# configurations with C3's step, and 64 x 4 x 4 at 1,048,576 and 1,000,003.
set -u -o pipefail
c=.carry/elementwise2/committed
d=.carry/elementwise2/c4
o="$OUT/c5"
here=validation/data/h100/elementwise/repeats
mkdir -p "$o"
bench() {
  PYTHONUNBUFFERED=1 timeout "$1" python3 kernels/elementwise/bench_baselines.py --lib "$d/libtilesim_elementwise_capi.so" \
    --alt-lib "committed=$c/libtilesim_elementwise_capi.so" --hold-mib 61 --baselines triton \
    --ours b256v4u1_grid,b256v4u1_grid_committed,b64v4u4_grid,b64v4u4_grid_committed \
    --reference b256v4u1_grid_committed,b64v4u4_grid_committed "${@:2}"
}
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
  echo "== compute-sanitizer memcheck: elementwise_check --quick"
  timeout 150 compute-sanitizer --tool memcheck --print-limit 5 "$d/elementwise_check" --quick | grep -vE "^ok " | tail -n 6
  echo "== elementwise_check --quick"
  timeout 60 "$d/elementwise_check" --quick | grep -vE "^ok "
  echo "== run C5: 786,432, 1,048,576 and 1,000,003, 16 placements x 50 rounds"
  bench 150 --out "$o/bench_c5.json" --placements 16 --reps 50 --sizes 786432,1048576,1000003 --trace-max 0
  date -u
  echo "== run C5: 4 KB to 4 GB, 4 placements x 30 rounds (x 25 from 2^28 up)"
  bench 240 --out "$o/bench_c5_range.json" --placements 4 --reps 30 --large-placements 4 --large-reps 25 \
    --sizes 1000,1024,16384,65536,262144,524288,4194304,16777216,67108864,10000001,16777217,268435456,1073741824 \
    --trace-max 0
  date -u
  echo "== the pre-registered decision"
  if python3 "$here/c5_rule.py" "$o/bench_c5.json" "$o/bench_c5_range.json"; then
    echo "== dataset: the 41 element-wise configurations with C3's step"
    bash kernels/elementwise/run_device.sh dataset "$d" "$o/dataset" 100 '^ew_'
    echo "== 64 x 4 x 4 at 1,048,576 and 1,000,003 (the launcher's picks)"
    mkdir -p "$o/picks/specs" "$o/picks/measured"
    for n in 1048576 1000003; do
      id="ew_add_fp32_n${n}_b64u4_g"
      printf '{"name": "%s", "kind": "elementwise", "op": "add", "elements": %s, "dtype": "fp32", "block": 64, "unroll": 4, "persistent": false, "command": "written by %s/c5_call.sh"}\n' \
        "$id" "$n" "$here" > "$o/picks/specs/$id.json"
      timeout 60 "$d/tilesim-measure" --kernel "$o/picks/specs/$id.json" --runs 25 --warmup 3 \
        --out "$o/picks/measured/$id.json" && echo "ok $id" || echo "FAILED $id"
    done
  fi
  nvidia-smi --query-gpu=clocks.sm,temperature.gpu --format=csv
  date -u
} 2>&1 | tee "$o/c5.log"
tar -czf "$OUT/c5.tgz" -C "$OUT" c5
