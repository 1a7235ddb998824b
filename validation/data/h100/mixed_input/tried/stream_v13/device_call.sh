#!/usr/bin/env bash
# Where the decode kernel's time goes in the DRAM-bound run (issue 14, v13): the benchmark's
# N = K = 8192 decode at 16 and 64 tokens, with the committed v13 kernel and with three ablated
# copies of it (tried/ablation_v10/make_ablation.py; built by build_bench_variant.sh): idle (each
# consumer waits for its stage and releases it: the load path alone), noconv (no conversion),
# nomma (no wgmma). The ablated outputs are wrong (the bench reports them FAILED); only their times
# count. Then Nsight Compute on the committed kernel's dec16 and dec64 dataset specs.
# Binaries built on the development machine and carried in .carry/mixed6. One archive, out.tgz.
set -u -o pipefail
B=.carry/mixed6
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/lib:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}"
export PATH="/usr/local/cuda/bin:$PATH"
R=/tmp/out; mkdir -p $R
specs=validation/data/h100/mixed_input/specs
driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
  for shape in decode_m16 decode_m64; do
    for v in v13 idle noconv nomma v13; do
      echo "== bench $v $shape $(date -u +%T)"
      timeout 100 $B/bench_$v --only $shape --out $R/bench_${v}_${shape}_$(date +%s).json --reps 30 --driver "$driver" \
        --command "mixed_input_bench --only $shape --reps 30 (kernel: $v)" 2>&1 | grep -v "^ *events around"
    done
  done
  echo "== ncu $(date -u +%T)"
  which ncu || ls /usr/local/cuda/bin | grep -i nsight
  for id in dec16_8192_int8_prmt_t16_p_row_major dec64_8192_int8_prmt_t64_p_row_major; do
    timeout 120 ncu --target-processes all -k regex:mixed_input_gemm_kernel -c 1 \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy \
      $B/tilesim-measure --kernel $specs/$id.json --launch-only --runs 1 --warmup 0 >$R/ncu_$id.txt 2>&1
    echo "ncu $id exit $?"; grep -E "DRAM Throughput|Memory Throughput|L2 Cache Throughput|Duration|Issued Warp|No Eligible|Stall|Warp Cycles Per Issued|Achieved Occupancy|Compute \(SM\)" $R/ncu_$id.txt | head -30
  done
  echo "== done $(date -u +%T)"
} 2>&1 | tee $R/call.log
tar czf $OUT/out.tgz -C $R .
