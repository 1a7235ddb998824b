// Per-CTA timestamps of an element-wise kernel run (the traced instantiations only): where a small
// kernel's time goes between the first CTA's start, the data's arrival and the last CTA's end.
// %globaltimer ticks every 32 ns on the H100 (validation/data/h100/microbench/launch_overhead.json).
#pragma once

#include <cstdint>

#include "kernels/common/ptx_wrappers.cuh"
#include "kernels/elementwise/elementwise.h"

namespace tilesim::kernels {

__device__ __forceinline__ void trace_cta_start(CtaTrace* trace) {
  if (threadIdx.x == 0) {
    trace[blockIdx.x].start_ns = ptx::global_timer_ns();
    trace[blockIdx.x].sm = ptx::sm_id();
  }
}

// After thread 0's first stores (which wait for its loads), once per CTA.
__device__ __forceinline__ void trace_first_data(CtaTrace* trace, bool& recorded) {
  if (threadIdx.x == 0 && !recorded) trace[blockIdx.x].first_data_ns = ptx::global_timer_ns();
  recorded = true;
}

__device__ __forceinline__ void trace_cta_end(CtaTrace* trace) {
  __syncthreads();
  if (threadIdx.x == 0) trace[blockIdx.x].end_ns = ptx::global_timer_ns();
}

} // namespace tilesim::kernels
