// The element-wise kernel with bulk copies: each CTA step's slice of every input comes into shared
// memory by one cp.async.bulk per input, issued by one thread, so a CTA asks for all of its
// first `stages` steps as it starts, in a handful of instructions. The threads then compute from
// shared memory and store 16-byte vectors to global memory as the plain kernel does.
//
// CTA c runs steps c, c + gridDim.x, ... (the grid is what fits on the GPU at once); step j of a
// CTA goes to stage j % stages of a ring in dynamic shared memory, with one mbarrier per stage
// that completes when its bytes have landed. After the threads have read a stage, the CTA
// synchronises and thread 0 refills it with step j + stages. Bulk copies move multiples of 16
// bytes: the last few elements when the count is not a multiple of the vector (16 bytes) are read
// from global memory directly, as the plain kernel's masked tail.
#pragma once

#include <cstdint>

#include "kernels/elementwise/elementwise_kernel.cuh"

namespace tilesim::kernels {

// Dynamic shared memory: the stages' mbarriers first, then the stages, each `inputs` slices of a
// step (the slice of x, then of y).
constexpr int kBulkBarrierBytes = 128; // up to 16 stages of one 8-byte mbarrier

template <typename T, int Unroll, ElementwiseOp Op, typename Index, bool Traced>
__global__ void elementwise_bulk_kernel(const T* __restrict__ x, const T* __restrict__ y, T* __restrict__ out,
                                        Index elements, Index steps, int stages, CtaTrace* trace) {
  constexpr int Vector = 16 / sizeof(T);
  constexpr int kInputs = is_binary(Op) ? 2 : 1;
  using V = Pack<T, Vector>;
  extern __shared__ __align__(128) unsigned char shared[];
  auto* full = reinterpret_cast<uint64_t*>(shared);
  T* ring = reinterpret_cast<T*>(shared + kBulkBarrierBytes);
  if constexpr (Traced) trace_cta_start(trace);
  [[maybe_unused]] bool traced_first = false;

  const Index stride = static_cast<Index>(blockDim.x) * Vector; // between a thread's vectors
  const Index step_elements = stride * Unroll;
  const Index bulk_end = elements / Vector * Vector; // what whole 16-byte copies cover
  const Index my_steps = steps > static_cast<Index>(blockIdx.x) ? (steps - 1 - blockIdx.x) / gridDim.x + 1 : 0;

  // Thread 0: step j of this CTA into stage j % stages.
  auto issue = [&](Index j) {
    const int s = static_cast<int>(j % stages);
    const Index first = (blockIdx.x + j * gridDim.x) * step_elements;
    const Index count = bulk_end > first ? (bulk_end - first < step_elements ? bulk_end - first : step_elements) : 0;
    if (count == 0) { // only the unaligned tail: nothing to wait for
      ptx::mbarrier_arrive(&full[s]);
      return;
    }
    const auto bytes = static_cast<uint32_t>(count * sizeof(T));
    ptx::mbarrier_arrive_expect_tx(&full[s], bytes * kInputs);
    T* slice = ring + static_cast<Index>(s) * kInputs * step_elements;
    bulk_copy_global_to_shared(slice, x + first, bytes, &full[s]);
    if constexpr (kInputs == 2) bulk_copy_global_to_shared(slice + step_elements, y + first, bytes, &full[s]);
  };

  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) ptx::mbarrier_init(&full[s], 1);
    ptx::fence_barrier_init();
    for (Index j = 0; j < my_steps && j < stages; ++j) issue(j);
  }
  __syncthreads(); // the barriers are initialised before anyone waits on them

  for (Index j = 0; j < my_steps; ++j) {
    const int s = static_cast<int>(j % stages);
    ptx::mbarrier_wait(&full[s], static_cast<uint32_t>((j / stages) & 1));
    const Index first = (blockIdx.x + j * gridDim.x) * step_elements;
    const T* xs = ring + static_cast<Index>(s) * kInputs * step_elements;
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      const Index local = u * stride + static_cast<Index>(threadIdx.x) * Vector;
      const Index i = first + local;
      if (i + Vector <= bulk_end) {
        const V a = *reinterpret_cast<const V*>(xs + local);
        V b{};
        if constexpr (kInputs == 2) b = *reinterpret_cast<const V*>(xs + step_elements + local);
        *reinterpret_cast<V*>(out + i) = apply_pack<T, Vector, Op>(a, b);
      } else { // the masked tail, from global memory
        for (Index k = i; k < i + Vector && k < elements; ++k)
          out[k] = from_float<T>(apply<Op>(to_float(x[k]), kInputs == 2 ? to_float(y[k]) : 0.0f));
      }
    }
    if constexpr (Traced) trace_first_data(trace, traced_first);
    if (j + stages < my_steps) {
      __syncthreads(); // every thread has read stage s
      if (threadIdx.x == 0) issue(j + stages);
    }
  }
  if constexpr (Traced) trace_cta_end(trace);
}

} // namespace tilesim::kernels
