#!/usr/bin/env bash
# Run C4 (kernels/elementwise/NOTES.md, "Run C4"), one H100 device call. Binaries built here
# (carried in .carry/elementwise2/): committed/ holds libtilesim_elementwise_capi.so of the committed
# kernel (79882c6); c4/ holds libtilesim_elementwise_capi.so, elementwise_check and tilesim-measure
# with C3's step (the elementwise_kernel.cuh of repeats/c3_tail_and_candidates.patch, nothing else of
# it). compute-sanitizer memcheck on the quick check, the quick check, then 256 x 4 and 64 x 4 x 4,
# each with C3's step and the committed one, against Triton, interleaved: 786,432 and 1,048,576 at 16
# placements x 50 rounds, 268,435,456 and 1,073,741,824 at 4 placements x 25, a 53 MiB tensor held
# first (38 and 70 MiB were used before). Rule 1 is read from the large sizes here; where it holds,
# tilesim-measure runs the 41 element-wise dataset configurations with C3's step.
set -u -o pipefail
c=.carry/elementwise2/committed
d=.carry/elementwise2/c4
o="$OUT/c4"
mkdir -p "$o"
bench() {
  PYTHONUNBUFFERED=1 timeout "$1" python3 kernels/elementwise/bench_baselines.py --lib "$d/libtilesim_elementwise_capi.so" \
    --alt-lib "committed=$c/libtilesim_elementwise_capi.so" --hold-mib 53 --baselines triton \
    --ours b256v4u1_grid,b256v4u1_grid_committed,b64v4u4_grid,b64v4u4_grid_committed \
    --reference b256v4u1_grid_committed,b64v4u4_grid_committed,b256v4u1_grid "${@:2}"
}
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
  echo "== compute-sanitizer memcheck: elementwise_check --quick"
  timeout 150 compute-sanitizer --tool memcheck --print-limit 5 "$d/elementwise_check" --quick | grep -vE "^ok " | tail -n 6
  echo "== elementwise_check --quick"
  timeout 60 "$d/elementwise_check" --quick | grep -vE "^ok "
  echo "== run C4: 786,432 and 1,048,576, 16 placements x 50 rounds"
  bench 150 --out "$o/bench_c4.json" --asm-dir "$o/asm" --placements 16 --reps 50 --sizes 786432,1048576 \
    --trace-max 1048576 --trace-keep 1048576
  date -u
  echo "== run C4: 268,435,456 and 1,073,741,824, 4 placements x 25 rounds"
  bench 150 --out "$o/bench_c4_large.json" --large-placements 4 --large-reps 25 --sizes 268435456,1073741824 \
    --trace-max 0
  date -u
  echo "== rule 1: at 256M and 4 GB, neither shape's committed / new time below 1 outside its interval"
  if python3 - "$o/bench_c4_large.json" <<'EOF'
import json, sys
holds = True
for row in json.load(open(sys.argv[1]))["sizes"]:
    for shape in ("b256v4u1_grid", "b64v4u4_grid"):
        key = f"ours_{shape}_speedup_over_{shape}_committed"
        lo, hi = row[key + "_ci95"]
        print(f"n={row['elements']} {shape}: committed/new {row[key]:.4f} [{lo:.4f}, {hi:.4f}]")
        holds = holds and hi >= 1.0
print("rule 1 holds" if holds else "rule 1 fails")
sys.exit(0 if holds else 1)
EOF
  then
    echo "== dataset: the 41 element-wise configurations with C3's step"
    bash kernels/elementwise/run_device.sh dataset "$d" "$o/dataset" 90 '^ew_'
  fi
  nvidia-smi --query-gpu=clocks.sm,temperature.gpu --format=csv
  date -u
} 2>&1 | tee "$o/c4.log"
tar -czf "$OUT/c4.tgz" -C "$OUT" c4
