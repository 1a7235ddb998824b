// The element-wise kernel. In the grid form CTA c runs step c straight through (load, compute,
// store, exit: no loop, as the Triton tutorial's compiled add_kernel); in the persistent form the
// grid is what fits on the GPU at once and CTA c strides over steps c, c + gridDim.x, ... A step
// is blockDim.x * Vector * Unroll elements: thread t owns Unroll vectors of Vector consecutive
// elements, blockDim.x * Vector apart, so that each load instruction of a warp reads one contiguous
// run and a thread has all its loads in flight before it computes. Whole vectors move as one
// 16-byte (or narrower) load and store; a vector that crosses the end is finished element by
// element. Index is 32-bit where the launcher can (fewer instructions per step), 64-bit beyond 2^31
// elements.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/common/activations.cuh"
#include "kernels/elementwise/elementwise_trace.cuh"
#include "models/kernel_spec.h"

namespace tilesim::kernels {

__host__ __device__ __forceinline__ float to_float(float v) { return v; }
__host__ __device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__host__ __device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
template <typename T> __host__ __device__ __forceinline__ T from_float(float v);
template <> __host__ __device__ __forceinline__ float from_float<float>(float v) { return v; }
template <> __host__ __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
template <> __host__ __device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }

// Host-callable for add and mul only (relu and gelu use device intrinsics).
template <ElementwiseOp Op> __host__ __device__ __forceinline__ float apply(float a, float b) {
  if constexpr (Op == ElementwiseOp::add) return a + b;
  if constexpr (Op == ElementwiseOp::mul) return a * b;
  if constexpr (Op == ElementwiseOp::relu) return relu(a);
  if constexpr (Op == ElementwiseOp::gelu) return gelu_tanh(a);
}

__host__ __device__ constexpr bool is_binary(ElementwiseOp op) { return op == ElementwiseOp::add || op == ElementwiseOp::mul; }

// Vector consecutive elements, aligned so that one instruction moves them.
template <typename T, int Vector> struct alignas(sizeof(T) * Vector) Pack {
  T v[Vector];
};

template <typename T, int Vector, ElementwiseOp Op>
__host__ __device__ __forceinline__ Pack<T, Vector> apply_pack(const Pack<T, Vector>& a, const Pack<T, Vector>& b) {
  Pack<T, Vector> r;
#pragma unroll
  for (int i = 0; i < Vector; ++i) r.v[i] = from_float<T>(apply<Op>(to_float(a.v[i]), to_float(b.v[i])));
  return r;
}

// One CTA step of thread `thread`: its Unroll vectors, all loads issued before the first use. In
// the step that holds the end, the vectors before the end still move whole and only the one that
// crosses it goes element by element, its loads issued together. Finished element after element,
// the tail cost up to Unroll + Vector - 1 dependent trips. Runs C3-C5 (kernels/elementwise/NOTES.md)
// timed this form 0-3% faster up to 4M elements and within 0.1% from 16M up.
// Host-callable, so that elementwise_tail_check runs every thread of a grid on the CPU.
template <typename T, int Vector, int Unroll, ElementwiseOp Op, typename Index>
__host__ __device__ __forceinline__ void elementwise_step(const T* __restrict__ x, const T* __restrict__ y,
                                                          T* __restrict__ out, Index elements, Index step, Index thread,
                                                          Index stride) {
  using V = Pack<T, Vector>;
  const Index first = step * stride * Unroll + thread * Vector;
  V a[Unroll], b[Unroll];
  if (first + (Unroll - 1) * stride + Vector <= elements) {
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      a[u] = *reinterpret_cast<const V*>(x + first + u * stride);
      if constexpr (is_binary(Op)) b[u] = *reinterpret_cast<const V*>(y + first + u * stride);
    }
#pragma unroll
    for (int u = 0; u < Unroll; ++u) *reinterpret_cast<V*>(out + first + u * stride) = apply_pack<T, Vector, Op>(a[u], b[u]);
    return;
  }
  // The last step, one vector after another: whole vectors whole, the one crossing the end with its
  // elements' loads issued together. (All of the step's loads first would take the tail's
  // registers past the whole step's, 34 to 48 for 4 fp32 vectors, and ptxas then reschedules the
  // whole step too: one of C2's losing kernels.)
#pragma unroll
  for (int u = 0; u < Unroll; ++u) {
    const Index begin = first + u * stride;
    if (begin + Vector <= elements) {
      a[u] = *reinterpret_cast<const V*>(x + begin);
      if constexpr (is_binary(Op)) b[u] = *reinterpret_cast<const V*>(y + begin);
      *reinterpret_cast<V*>(out + begin) = apply_pack<T, Vector, Op>(a[u], b[u]);
    } else if (begin < elements) {
#pragma unroll
      for (int i = 0; i < Vector; ++i) {
        a[u].v[i] = begin + i < elements ? x[begin + i] : T{};
        if constexpr (is_binary(Op)) b[u].v[i] = begin + i < elements ? y[begin + i] : T{};
      }
      const V r = apply_pack<T, Vector, Op>(a[u], b[u]);
#pragma unroll
      for (int i = 0; i < Vector; ++i)
        if (begin + i < elements) out[begin + i] = r.v[i];
    }
  }
}

// Strided: the persistent form, CTAs loop over steps blockIdx.x, + gridDim.x, ...; otherwise the
// grid form, gridDim.x = steps and CTA b runs step b once. Run once, the loop's setup, bound check
// and back edge (44 instructions per warp against 22 for one vector) cost the grid form 1-4 points
// against Triton from 4 KB to 4 MB per array and within a point from 16 MB up
// (validation/data/h100/elementwise/bench_vector_add_straight.json), so the grid form has none.
// Traced: thread 0 of every CTA records when it started, when its first step's loads had returned
// and when the CTA ended (elementwise_trace.cuh); otherwise `trace` is unused.
template <typename T, int Vector, int Unroll, ElementwiseOp Op, typename Index, bool Traced, bool Strided>
__global__ void elementwise_kernel(const T* __restrict__ x, const T* __restrict__ y, T* __restrict__ out,
                                   Index elements, Index steps, CtaTrace* trace) {
  if constexpr (Traced) trace_cta_start(trace);
  [[maybe_unused]] bool traced_first = false;
  const Index stride = static_cast<Index>(blockDim.x) * Vector; // between a thread's vectors
  const Index thread = static_cast<Index>(threadIdx.x);
  if constexpr (Strided) {
    for (Index step = blockIdx.x; step < steps; step += gridDim.x) {
      elementwise_step<T, Vector, Unroll, Op, Index>(x, y, out, elements, step, thread, stride);
      if constexpr (Traced) trace_first_data(trace, traced_first);
    }
  } else {
    elementwise_step<T, Vector, Unroll, Op, Index>(x, y, out, elements, static_cast<Index>(blockIdx.x), thread, stride);
    if constexpr (Traced) trace_first_data(trace, traced_first);
  }
  if constexpr (Traced) trace_cta_end(trace);
}

} // namespace tilesim::kernels
