// Run C3's candidates for the fp32 add at 1M elements (kernels/elementwise/NOTES.md, "Run C3"),
// beside the kernel they are measured against; grid form, fp32 add, 16-byte vectors, 32-bit index.
//   committed: the kernel as committed before C3, whose tail finished each vector element after
//              element, to time the new tail and its effect on the whole step against;
//   l2_evict_first: every load and store under a createpolicy.fractional.L2::evict_first policy;
//   bulk: each warp moves its slice of 32 x 4 x Unroll elements with two cp.async.bulk copies
//         into shared memory on one mbarrier, adds there and writes the sum back with one bulk
//         store; a slice that crosses the end takes the register path.
// PTX ISA 9.0: 9.7.9.8 ld, 9.7.9.9 st (.L2::cache_hint), 9.7.9.17 createpolicy, 9.7.9.25.4.1
// cp.async.bulk, 9.7.13.15 mbarrier.
#pragma once

#include <cstdint>

#include "kernels/common/ptx_wrappers.cuh"
#include "kernels/elementwise/elementwise.h"
#include "kernels/elementwise/elementwise_kernel.cuh"

namespace tilesim::kernels {

__device__ __forceinline__ std::uint64_t l2_evict_first_policy() {
  std::uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

__device__ __forceinline__ float4 ld_nc_l2_hint(const float* p, std::uint64_t policy) {
  float4 v;
  asm("ld.global.nc.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], %5;"
      : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
      : "l"(p), "l"(policy));
  return v;
}

__device__ __forceinline__ void st_l2_hint(float* p, float4 v, std::uint64_t policy) {
  asm volatile("st.global.L2::cache_hint.v4.f32 [%0], {%1, %2, %3, %4}, %5;" ::"l"(p), "f"(v.x), "f"(v.y), "f"(v.z),
               "f"(v.w), "l"(policy)
               : "memory");
}

// cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes: `bytes` (a multiple of 16,
// both addresses 16-byte aligned) into this CTA's shared memory, counted on `bar`.
__device__ __forceinline__ void bulk_load(void* dst, const void* src, std::uint32_t bytes, std::uint64_t* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   ptx::smem_addr(dst)),
               "l"(src), "r"(bytes), "r"(ptx::smem_addr(bar))
               : "memory");
}

// cp.async.bulk.global.shared::cta.bulk_group: `bytes` from shared memory to global.
__device__ __forceinline__ void bulk_store(void* dst, const void* src, std::uint32_t bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(ptx::smem_addr(src)),
               "r"(bytes)
               : "memory");
}

// The step as committed before C3: a thread with a vector past the end finished all its vectors
// element after element.
template <int Unroll>
__device__ __forceinline__ void committed_step(const float* __restrict__ x, const float* __restrict__ y,
                                               float* __restrict__ out, int elements, int step, int stride) {
  const int first = step * stride * Unroll + static_cast<int>(threadIdx.x) * 4;
  if (first + (Unroll - 1) * stride + 4 <= elements) {
    float4 a[Unroll], b[Unroll];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      a[u] = *reinterpret_cast<const float4*>(x + first + u * stride);
      b[u] = *reinterpret_cast<const float4*>(y + first + u * stride);
    }
#pragma unroll
    for (int u = 0; u < Unroll; ++u)
      *reinterpret_cast<float4*>(out + first + u * stride) =
          make_float4(a[u].x + b[u].x, a[u].y + b[u].y, a[u].z + b[u].z, a[u].w + b[u].w);
  } else {
    for (int u = 0; u < Unroll; ++u) {
      const int begin = first + u * stride;
      for (int i = begin; i < begin + 4 && i < elements; ++i) out[i] = x[i] + y[i];
    }
  }
}

template <int Unroll>
__device__ __forceinline__ void l2_evict_first_step(const float* __restrict__ x, const float* __restrict__ y,
                                                    float* __restrict__ out, int elements, int step, int stride) {
  const int first = step * stride * Unroll + static_cast<int>(threadIdx.x) * 4;
  if (first + (Unroll - 1) * stride + 4 > elements) {
    elementwise_step<float, 4, Unroll, ElementwiseOp::add, int>(x, y, out, elements, step,
                                                                 static_cast<int>(threadIdx.x), stride);
    return;
  }
  const std::uint64_t policy = l2_evict_first_policy();
  float4 a[Unroll], b[Unroll];
#pragma unroll
  for (int u = 0; u < Unroll; ++u) {
    a[u] = ld_nc_l2_hint(x + first + u * stride, policy);
    b[u] = ld_nc_l2_hint(y + first + u * stride, policy);
  }
#pragma unroll
  for (int u = 0; u < Unroll; ++u)
    st_l2_hint(out + first + u * stride, make_float4(a[u].x + b[u].x, a[u].y + b[u].y, a[u].z + b[u].z, a[u].w + b[u].w),
               policy);
}

// Warp w of CTA c owns elements [(c * warps + w) * S, + S), S = 32 * 4 * Unroll, lane l the vectors
// l, l + 32, ... of it (the grid form's layout with 32-thread steps). Shared memory: per warp x's
// and y's slice (the sum is written over x's) and one mbarrier.
template <int Unroll>
__device__ __forceinline__ void bulk_warp_slice(const float* __restrict__ x, const float* __restrict__ y,
                                                float* __restrict__ out, int elements, float* smem, std::uint64_t* bars) {
  constexpr int kSlice = 32 * 4 * Unroll;
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int slice = static_cast<int>(blockIdx.x) * static_cast<int>(blockDim.x / 32) + warp;
  const int first = slice * kSlice;
  if (first >= elements) return;
  if (first + kSlice > elements) { // the slice that crosses the end: registers, the tail as committed now
    elementwise_step<float, 4, Unroll, ElementwiseOp::add, int>(x, y, out, elements, slice, lane, 32 * 4);
    return;
  }
  float* sx = smem + warp * 2 * kSlice;
  float* sy = sx + kSlice;
  std::uint64_t* bar = bars + warp;
  constexpr std::uint32_t kBytes = kSlice * sizeof(float);
  if (lane == 0) {
    ptx::mbarrier_init(bar, 1);
    ptx::fence_barrier_init();
    ptx::mbarrier_arrive_expect_tx(bar, 2 * kBytes);
    bulk_load(sx, x + first, kBytes, bar);
    bulk_load(sy, y + first, kBytes, bar);
  }
  __syncwarp();
  ptx::mbarrier_wait(bar, 0);
#pragma unroll
  for (int u = 0; u < Unroll; ++u) {
    float4* px = reinterpret_cast<float4*>(sx) + u * 32 + lane;
    const float4 a = *px, b = reinterpret_cast<const float4*>(sy)[u * 32 + lane];
    *px = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
  }
  ptx::fence_proxy_async_shared(); // this lane's shared stores, visible to the bulk store
  __syncwarp();
  if (lane == 0) {
    bulk_store(out + first, sx, kBytes);
    ptx::bulk_commit_group();
    ptx::bulk_wait_group_read<0>(); // the CTA's shared memory must outlive the store's reads
  }
}

template <int Unroll, ElementwiseVariant Variant>
__global__ void elementwise_tried_kernel(const float* __restrict__ x, const float* __restrict__ y,
                                         float* __restrict__ out, int elements) {
  const int stride = static_cast<int>(blockDim.x) * 4;
  if constexpr (Variant == ElementwiseVariant::committed) {
    committed_step<Unroll>(x, y, out, elements, static_cast<int>(blockIdx.x), stride);
  } else if constexpr (Variant == ElementwiseVariant::l2_evict_first) {
    l2_evict_first_step<Unroll>(x, y, out, elements, static_cast<int>(blockIdx.x), stride);
  } else {
    extern __shared__ __align__(128) unsigned char bulk_smem[];
    const int warps = static_cast<int>(blockDim.x / 32);
    float* slices = reinterpret_cast<float*>(bulk_smem);
    auto* bars = reinterpret_cast<std::uint64_t*>(slices + warps * 2 * 32 * 4 * Unroll);
    bulk_warp_slice<Unroll>(x, y, out, elements, slices, bars);
  }
}

// Dynamic shared memory of the bulk variant: per warp two slices and an mbarrier.
constexpr int bulk_shared_bytes(int block, int unroll) {
  return (block / 32) * (2 * 32 * 4 * unroll * 4 + 8);
}

} // namespace tilesim::kernels
